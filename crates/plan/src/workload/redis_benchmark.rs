//! redis-benchmark's keys (its own option names where it has them) and their checks: the
//! connection sweep (`-c`), pipeline (`-P`), tests (`-t`), key space (`-r`) and value size
//! (`-d`).

use super::kv::default_connections;
use crate::document::Loaded;
use crate::experiment::{Experiment, OneOrMany};
use crate::validate::{range, Check};
use crate::{key, REDIS_BENCHMARK_TESTS};
use serde::{Deserialize, Serialize};

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

pub(crate) fn check(l: &Loaded, _e: &Experiment, i: usize, w: &RedisBenchmarkKeys) -> Check {
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
    if let Some(t) = tests
        .iter()
        .find(|t| !REDIS_BENCHMARK_TESTS.contains(&t.as_str()))
    {
        return Err(l.error_at(
            &at("tests"),
            format!(
                "unknown test {t:?}; redis-benchmark's tests are {}",
                REDIS_BENCHMARK_TESTS.join(", ")
            ),
        ));
    }
    Ok(())
}
