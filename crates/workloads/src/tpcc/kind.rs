//! tpcc as a kind: its keys and their checks (warehouses as a sweep, the mix, think
//! times, the max-W search), the targets it fits, one workload per W, and its figures
//! (NOTPM, the response-time check, the largest passing W: `figures.rs`).

use super::{figures, Kind, Tpcc};
use crate::kinds::{
    default_connections, keys_from_fields, keys_of, named_with_keys, sql_server,
    Kind as RegistryKind,
};
use crate::Workload;
use bakeoff_plan::{
    key, range, Check, Experiment, KindKeys, KindSpec, Loaded, OneOrMany, Transport,
    MAX_CONNECTIONS,
};
use bakeoff_report::model::Results;
use bakeoff_sandbox::{target_for, Target};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Terminals per warehouse when tpcc runs with the specification's think times.
pub const TERMINALS_PER_WAREHOUSE: usize = 10;

/// The kind in the registry.
pub struct TpccKind;

impl KindSpec for TpccKind {
    named_with_keys!("tpcc", TpccKeys);

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        sql_server(target)
    }
}

impl RegistryKind for TpccKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        let w = &l.experiment.workloads[i];
        let k = keys_of::<TpccKeys>(l, i);
        Ok(Tpcc::from_plan(w, k)
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Workload>)
            .collect())
    }

    fn summarize(&self, r: &mut Results) {
        figures::summarize_cells(r);
    }

    fn warnings(&self, r: &Results) -> Vec<String> {
        figures::warnings(r)
    }

    fn sections(&self, r: &Results) -> Vec<bakeoff_report::Section> {
        super::section::section(r).into_iter().collect()
    }
}

impl KindKeys for TpccKeys {
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check {
        check_tpcc(l, e, i, self)
    }

    /// 10 terminals per warehouse with the specification's think times.
    fn connections_swept(&self) -> Vec<usize> {
        if self.think == Some(ThinkMode::Spec) {
            self.warehouses_swept()
                .into_iter()
                .map(|w| w.saturating_mul(TERMINALS_PER_WAREHOUSE))
                .collect()
        } else {
            self.connections.to_vec()
        }
    }

    keys_from_fields!(client_threads, transport);

    /// A warehouse sweep's cells: `<name>-w<W>`.
    fn cell_names(&self, name: &str) -> Vec<String> {
        let sweep = self.warehouses_swept();
        if sweep.len() < 2 {
            return vec![name.to_string()];
        }
        sweep.iter().map(|w| format!("{name}-w{w}")).collect()
    }

    bakeoff_plan::kind_keys_boilerplate!();
}

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
fn check_tpcc(l: &Loaded, e: &Experiment, i: usize, w: &TpccKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let ws = w.warehouses_swept();
    if ws.is_empty() {
        return Err(l.error_at(
            &at("warehouses"),
            "warehouses is empty; give a number or a sweep such as [1, 2, 5]",
        ));
    }
    let terminals = |n: &usize| n.saturating_mul(TERMINALS_PER_WAREHOUSE);
    if w.think == Some(ThinkMode::Spec) && ws.iter().any(|n| terminals(n) > MAX_CONNECTIONS) {
        return Err(l.error_at(
            &at("warehouses"),
            format!(
                "with think = \"spec\" each warehouse has {TERMINALS_PER_WAREHOUSE} terminals (connections), so warehouses must be at most {}",
                MAX_CONNECTIONS / TERMINALS_PER_WAREHOUSE
            ),
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
    if w.engine.is_some() && !target_for(e.target.kind).has_storage_engines() {
        return Err(l.error_at(
            &at("engine"),
            "engine (a storage engine) is for mariadb targets only; remove it",
        ));
    }
    Ok(())
}

fn check_tpcc_mix(l: &Loaded, i: usize, mix: &BTreeMap<String, u32>) -> Check {
    let at = key!["workload", i, "mix"];
    if let Some(k) = mix.keys().find(|k| Kind::from_name(k).is_none()) {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        return Err(l.error_at(
            &at,
            format!(
                "unknown transaction {k:?} in mix; a tpcc mix weights {}",
                names.join(", ")
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

/// tpcc keying and think times.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ThinkMode {
    /// Transactions back to back (the throughput test, the common practice).
    None,
    /// The specification's keying and think times, 10 terminals per warehouse.
    Spec,
}
