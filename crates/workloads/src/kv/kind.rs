//! kv as a kind: its keys (memcached-style load over bakeoff's engine) and their checks
//! (the key space and its distribution, value sizes, the command mix, open or closed
//! loop), the targets it fits (memcached's text protocol or Redis's RESP), and how its
//! `[[workload]]` becomes a workload here or on an agent.

use super::protocol::{COMMANDS, MEMCACHED_COMMANDS};
use super::Kv;
use crate::kinds::{
    check_special, default_connections, default_special_pct, default_special_res, keys_from_fields,
    keys_of, named_with_keys, AgentAsk, Kind,
};
use crate::Workload;
use bakeoff_plan::{
    key, range, Check, Experiment, KindKeys, KindSpec, Loaded, OneOrMany, Transport,
};
use bakeoff_sandbox::{target_for, Protocol, Target};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The kind in the registry.
pub struct KvKind;

impl KindSpec for KvKind {
    named_with_keys!("kv", KvKeys);

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        match target.protocol() {
            Protocol::Memcached | Protocol::Resp => Ok(()),
            Protocol::Sql => Err("it speaks memcached's protocol or RESP, not SQL".into()),
        }
    }

    fn loads_from_hosts(&self) -> bool {
        true
    }

    fn open_loop(&self) -> bool {
        true
    }
}

impl Kind for KvKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        let k = keys_of::<KvKeys>(l, i);
        Ok(vec![Box::new(Kv::from_plan(l, i, k)?)])
    }

    fn for_agent(&self, ask: &AgentAsk) -> Result<Box<dyn Workload>, String> {
        let kv = Kv::from_agent(ask.spec, ask.target.protocol())?;
        Ok(Box::new(kv.with_preload(ask.preload_only)))
    }
}

/// The commands a mix may weight over `protocol` (add is SET NX, delete DEL, multiget MGET
/// on Redis, which has five more).
pub fn commands_of(protocol: Protocol) -> &'static [&'static str] {
    match protocol {
        Protocol::Resp => &COMMANDS,
        _ => &COMMANDS[..MEMCACHED_COMMANDS],
    }
}

impl KindKeys for KvKeys {
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check {
        check_kv(l, e, i, self)
    }

    keys_from_fields!(connections, client_threads, transport);

    fn windows(&self) -> (Duration, Duration) {
        bakeoff_plan::KV_WINDOWS
    }

    bakeoff_plan::kind_keys_boilerplate!();
}

/// A kv workload's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KvKeys {
    #[serde(default = "default_connections")]
    pub connections: OneOrMany,
    /// None: one event loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
    /// Redis only: loopback TCP (the default) or the server's unix socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    #[serde(default = "one")]
    pub pipeline: usize,
    #[serde(default = "default_keys")]
    pub keys: u64,
    #[serde(default = "default_distribution")]
    pub key_distribution: KeyDistribution,
    #[serde(default = "default_theta")]
    pub zipf_theta: f64,
    /// sysbench's rand-spec-pct: the share of keys (percent) that is hot.
    #[serde(default = "default_special_pct")]
    pub special_pct: f64,
    /// sysbench's rand-spec-res: the share of accesses (percent) that go to the hot keys.
    #[serde(default = "default_special_res")]
    pub special_res: f64,
    #[serde(default = "default_value_size")]
    pub value_size: ValueSize,
    /// Command weights: get, set, add, delete, multiget.
    #[serde(default = "default_mix")]
    pub mix: BTreeMap<String, u32>,
    #[serde(default = "default_multiget_keys")]
    pub multiget_keys: usize,
    /// Open loop: total ops/s across all connections. Absent: closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    #[serde(default = "default_arrival")]
    pub arrival: Arrival,
    #[serde(default = "yes")]
    pub preload: bool,
}

fn one() -> usize {
    1
}
fn yes() -> bool {
    true
}
fn default_keys() -> u64 {
    100_000
}
fn default_distribution() -> KeyDistribution {
    KeyDistribution::Uniform
}
fn default_theta() -> f64 {
    0.99
}
fn default_value_size() -> ValueSize {
    ValueSize::Fixed(100)
}
fn default_mix() -> BTreeMap<String, u32> {
    BTreeMap::from([("get".to_string(), 90), ("set".to_string(), 10)])
}
fn default_multiget_keys() -> usize {
    10
}
fn default_arrival() -> Arrival {
    Arrival::Uniform
}

fn check_kv(l: &Loaded, e: &Experiment, i: usize, w: &KvKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    range(l, &at("pipeline"), w.pipeline, 1.0, 1024.0, "pipeline")?;
    range(l, &at("keys"), w.keys, 1.0, 1e10, "keys")?;
    if !(w.zipf_theta > 0.0 && w.zipf_theta < 1.0) {
        return Err(l.error_at(
            &at("zipf_theta"),
            format!("zipf_theta must be in (0, 1), got {}", w.zipf_theta),
        ));
    }
    check_special(l, i, w.special_pct, w.special_res)?;
    let size = match w.value_size {
        ValueSize::Fixed(n) | ValueSize::Around { mean: n } => n,
    };
    range(l, &at("value_size"), size, 16.0, 1_000_000.0, "value_size")?;
    check_mix(l, e, i, w)?;
    let target = target_for(e.target.kind);
    if w.transport == Some(Transport::Unix) && target.protocol() != Protocol::Resp {
        return Err(l.error_at(
            &at("transport"),
            "transport = \"unix\" is for redis targets (memcached runs on loopback TCP); remove it",
        ));
    }
    range(
        l,
        &at("multiget_keys"),
        w.multiget_keys,
        1.0,
        100.0,
        "multiget_keys",
    )?;
    if let Some(r) = w.rate {
        range(l, &at("rate"), r, 0.001, 1e9, "rate")?;
    }
    Ok(())
}

fn check_mix(l: &Loaded, e: &Experiment, i: usize, w: &KvKeys) -> Check {
    let commands = commands_of(target_for(e.target.kind).protocol());
    if let Some(k) = w.mix.keys().find(|k| !commands.contains(&k.as_str())) {
        return Err(l.error_at(
            &key!["workload", i, "mix"],
            format!(
                "unknown command {k:?} in mix; a {} mix weights {}",
                e.target.kind.as_str(),
                commands.join(", ")
            ),
        ));
    }
    if w.mix.values().map(|v| u64::from(*v)).sum::<u64>() == 0 {
        return Err(l.error_at(
            &key!["workload", i, "mix"],
            "mix weights add up to 0; give at least one command a weight",
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KeyDistribution {
    Uniform,
    Zipfian,
    Special,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    Uniform,
    Poisson,
}

/// `value_size = 100` (fixed) or `value_size = { mean = 1024 }` (drawn around a mean).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ValueSize {
    Fixed(usize),
    Around { mean: usize },
}
