//! redis-benchmark as a kind: its keys (its own option names where it has them) and their
//! checks (the connection sweep `-c`, pipeline `-P`, tests `-t`, key space `-r`, value
//! size `-d`), the targets it fits (RESP), and its workload.

use super::RedisBenchmark;
use crate::kinds::{
    default_connections, installed, keys_from_fields, keys_of, named_with_keys, Kind,
};
use crate::Workload;
use bakeoff_plan::{key, range, Check, Experiment, KindKeys, KindSpec, Loaded, OneOrMany};
use bakeoff_sandbox::{Protocol, Target};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The kind in the registry.
pub struct RedisBenchmarkKind;

impl KindSpec for RedisBenchmarkKind {
    named_with_keys!("redis-benchmark", RedisBenchmarkKeys);

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        match target.protocol() {
            Protocol::Resp => Ok(()),
            _ => Err("redis-benchmark speaks RESP".into()),
        }
    }
}

impl Kind for RedisBenchmarkKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        installed(l, i, super::PROGRAM, "redis-tools")?;
        let w = &l.experiment.workloads[i];
        let k = keys_of::<RedisBenchmarkKeys>(l, i);
        Ok(vec![Box::new(RedisBenchmark::from_plan(w, k))])
    }
}

impl KindKeys for RedisBenchmarkKeys {
    fn check(&self, l: &Loaded, _e: &Experiment, i: usize) -> Check {
        check(l, i, self)
    }

    keys_from_fields!(connections);

    fn windows(&self) -> (Duration, Duration) {
        bakeoff_plan::KV_WINDOWS
    }

    bakeoff_plan::kind_keys_boilerplate!();
}

/// Tests redis-benchmark's `-t` takes (its names, lowercase).
pub const TESTS: [&str; 16] = [
    "ping_inline",
    "ping_mbulk",
    "set",
    "get",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "hset",
    "spop",
    "zadd",
    "zpopmin",
    "lrange",
    "mset",
];

/// A redis-benchmark workload's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RedisBenchmarkKeys {
    /// Parallel connections (`-c`): a number or a sweep.
    #[serde(default = "default_connections")]
    pub connections: OneOrMany,
    /// Requests in flight per connection (`-P`).
    #[serde(default = "one")]
    pub pipeline: usize,
    /// The tests to run (`-t`), comma separated.
    #[serde(default = "default_tests")]
    pub tests: String,
    /// Random keys from this many (`-r`).
    #[serde(default = "default_keys")]
    pub keys: u64,
    /// Bytes per value (`-d`).
    #[serde(default = "default_value_size")]
    pub value_size: usize,
}

fn one() -> usize {
    1
}
fn default_tests() -> String {
    "get,set".into()
}
fn default_keys() -> u64 {
    100_000
}
fn default_value_size() -> usize {
    100
}

impl RedisBenchmarkKeys {
    /// The tests, lowercase, in the order given.
    pub fn test_list(&self) -> Vec<String> {
        self.tests
            .split(',')
            .map(|t| t.trim().to_ascii_lowercase())
            .filter(|t| !t.is_empty())
            .collect()
    }
}

fn check(l: &Loaded, i: usize, w: &RedisBenchmarkKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    range(l, &at("pipeline"), w.pipeline, 1.0, 1024.0, "pipeline")?;
    range(l, &at("keys"), w.keys, 1.0, 1e10, "keys")?;
    range(
        l,
        &at("value_size"),
        w.value_size,
        1.0,
        1_000_000.0,
        "value_size",
    )?;
    let tests = w.test_list();
    if tests.is_empty() {
        return Err(l.error_at(&at("tests"), "tests is empty; give some, e.g. \"get,set\""));
    }
    if let Some(t) = tests.iter().find(|t| !TESTS.contains(&t.as_str())) {
        return Err(l.error_at(
            &at("tests"),
            format!(
                "unknown test {t:?}; redis-benchmark's tests are {}",
                TESTS.join(", ")
            ),
        ));
    }
    Ok(())
}
