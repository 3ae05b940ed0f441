//! kv's keys (memcached-style load over bakeoff's engine) and their checks: the key
//! space and its distribution, value sizes, the command mix, open or closed loop.

use crate::document::Loaded;
use crate::experiment::{
    Arrival, Experiment, KeyDistribution, OneOrMany, TargetKind, Transport, ValueSize,
};
use crate::validate::{range, Check};
use crate::{key, MIX_COMMANDS, REDIS_MIX_COMMANDS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

pub(crate) fn default_connections() -> OneOrMany {
    OneOrMany::Many(vec![16])
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
pub(crate) fn default_special_pct() -> f64 {
    1.0
}
pub(crate) fn default_special_res() -> f64 {
    75.0
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

pub(crate) fn check_kv(l: &Loaded, e: &Experiment, i: usize, w: &KvKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    range(l, &at("pipeline"), w.pipeline, 1.0, 1024.0, "pipeline")?;
    range(l, &at("keys"), w.keys, 1.0, 1e10, "keys")?;
    if !(w.zipf_theta > 0.0 && w.zipf_theta < 1.0) {
        return Err(l.error_at(
            &at("zipf_theta"),
            format!("zipf_theta must be in (0, 1), got {}", w.zipf_theta),
        ));
    }
    range(
        l,
        &at("special_pct"),
        w.special_pct,
        0.001,
        100.0,
        "special_pct",
    )?;
    range(
        l,
        &at("special_res"),
        w.special_res,
        0.0,
        100.0,
        "special_res",
    )?;
    let size = match w.value_size {
        ValueSize::Fixed(n) | ValueSize::Around { mean: n } => n,
    };
    range(l, &at("value_size"), size, 16.0, 1_000_000.0, "value_size")?;
    check_mix(l, e, i, w)?;
    if w.transport == Some(Transport::Unix) && e.target.kind != TargetKind::Redis {
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

pub(crate) fn check_mix(l: &Loaded, e: &Experiment, i: usize, w: &KvKeys) -> Check {
    let commands: &[&str] = if e.target.kind == TargetKind::Redis {
        &REDIS_MIX_COMMANDS
    } else {
        &MIX_COMMANDS
    };
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
