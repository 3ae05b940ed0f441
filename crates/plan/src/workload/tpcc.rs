//! tpcc's keys and their checks: warehouses (a sweep), the mix, think times, the
//! max-W search.

use super::kv::default_connections;
use crate::document::Loaded;
use crate::experiment::{Experiment, OneOrMany, TargetKind, ThinkMode, Transport};
use crate::key;
use crate::validate::{range, Check};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A tpcc workload's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpccKeys {
    #[serde(default = "default_connections")]
    pub connections: OneOrMany,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// Warehouses (W): a number or a sweep, e.g. [1, 2, 5, 10, 20].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<OneOrMany>,
    /// `none` (default: back to back) or `spec` (keying and think times, 10 terminals per
    /// warehouse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<ThinkMode>,
    /// Percent per transaction kind; default the specification's 45/43/4/4/4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<BTreeMap<String, u32>>,
    /// Report the largest W of the sweep whose response times pass (per variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max_w: Option<bool>,
    /// MariaDB storage engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Loader connections working in parallel (default one per core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_connections: Option<usize>,
    /// Retries of a transaction after a deadlock or serialization failure (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
}

impl TpccKeys {
    /// The warehouse counts, in the order given (default [1]).
    pub fn warehouses_swept(&self) -> Vec<usize> {
        self.warehouses
            .as_ref()
            .map_or_else(|| vec![1], OneOrMany::to_vec)
    }
}

/// tpcc: warehouses, the mix, think times and the max-W search.
pub(crate) fn check_tpcc(l: &Loaded, e: &Experiment, i: usize, w: &TpccKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let ws = w.warehouses_swept();
    if ws.is_empty() {
        return Err(l.error_at(
            &at("warehouses"),
            "warehouses is empty; give a number or a sweep such as [1, 2, 5]",
        ));
    }
    if let Some(n) = ws.iter().find(|n| !(1..=10_000).contains(*n)) {
        return Err(l.error_at(
            &at("warehouses"),
            format!("warehouses must be 1..=10000, got {n}; TPC-C needs at least one warehouse"),
        ));
    }
    if let Some(mix) = &w.mix {
        check_tpcc_mix(l, i, mix)?;
    }
    let written = l.keys_in(&key!["workload", i]);
    if w.think == Some(ThinkMode::Spec) && written.iter().any(|k| k == "connections") {
        return Err(l.error_at(
            &at("connections"),
            "with think = \"spec\" every warehouse has 10 terminals, one connection each; remove connections (or use think = \"none\")",
        ));
    }
    if w.find_max_w == Some(true) && ws.len() < 2 {
        return Err(l.error_at(
            &at("find_max_w"),
            "find_max_w searches a sweep of warehouses; give several, e.g. warehouses = [1, 2, 5, 10, 20]",
        ));
    }
    if let Some(n) = w.load_connections {
        range(l, &at("load_connections"), n, 1.0, 64.0, "load_connections")?;
    }
    if let Some(n) = w.max_retries {
        range(l, &at("max_retries"), n, 0.0, 1000.0, "max_retries")?;
    }
    if w.engine.is_some() && e.target.kind != TargetKind::Mariadb {
        return Err(l.error_at(
            &at("engine"),
            "engine (a storage engine) is for mariadb targets only; remove it",
        ));
    }
    Ok(())
}

pub(crate) fn check_tpcc_mix(l: &Loaded, i: usize, mix: &BTreeMap<String, u32>) -> Check {
    let at = key!["workload", i, "mix"];
    if let Some(k) = mix
        .keys()
        .find(|k| !crate::TPCC_KINDS.contains(&k.as_str()))
    {
        return Err(l.error_at(
            &at,
            format!(
                "unknown transaction {k:?} in mix; a tpcc mix weights {}",
                crate::TPCC_KINDS.join(", ")
            ),
        ));
    }
    let total: u64 = mix.values().map(|v| u64::from(*v)).sum();
    if total != 100 {
        return Err(l.error_at(
            &at,
            format!("the tpcc mix adds up to {total}, not 100; its weights are percent (default 45/43/4/4/4)"),
        ));
    }
    if mix.get("new_order").copied().unwrap_or(0) == 0 {
        return Err(l.error_at(
            &at,
            "the tpcc mix has no new_order, so there is no NOTPM to measure; give new_order a share",
        ));
    }
    Ok(())
}
