//! oltp and sysbench as kinds: their keys (sysbench's parameter names) and checks, the
//! targets they fit (SQL servers), and how a `[[workload]]` becomes a workload.

use super::{Oltp, OltpTest, Sender};
use crate::kinds::{
    check_special, default_connections, default_special_pct, default_special_res, installed,
    keys_from_fields, keys_of, read_keys, sql_server, AgentAsk, Kind,
};
use crate::Workload;
use bakeoff_plan::{
    fields_of, key, range, Check, Experiment, KindKeys, KindSpec, Loaded, OneOrMany, Transport,
};
use bakeoff_sandbox::{target_for, Target};
use serde::{Deserialize, Serialize};

/// oltp (bakeoff's own clients) or sysbench (the real one), one struct.
pub struct OltpKind(Sender);

/// `kind = "oltp"`.
pub static OLTP: OltpKind = OltpKind(Sender::Native);
/// `kind = "sysbench"`.
pub static SYSBENCH: OltpKind = OltpKind(Sender::Sysbench);

impl KindSpec for OltpKind {
    fn name(&self) -> &'static str {
        match self.0 {
            Sender::Native => "oltp",
            Sender::Sysbench => "sysbench",
        }
    }

    fn keys(&self) -> Vec<&'static str> {
        fields_of::<OltpKeys>().to_vec()
    }

    fn read(&self, table: toml_edit::Value) -> Result<Box<dyn KindKeys>, toml_edit::de::Error> {
        let mut k = read_keys::<OltpKeys>(table)?;
        k.sender = self.0;
        Ok(Box::new(k))
    }

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        sql_server(target)
    }

    fn loads_from_hosts(&self) -> bool {
        self.0 == Sender::Native
    }

    /// bakeoff's own clients keep a schedule (`OltpConfig::rate`); the real sysbench's
    /// `--rate` is not given one.
    fn open_loop(&self) -> bool {
        self.0 == Sender::Native
    }
}

impl Kind for OltpKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        if self.0 == Sender::Sysbench {
            installed(l, i, "sysbench", "sysbench")?;
        }
        let w = &l.experiment.workloads[i];
        let k = keys_of::<OltpKeys>(l, i);
        Ok(vec![Box::new(Oltp::from_plan(w, k, self.0))])
    }

    fn for_agent(&self, ask: &AgentAsk) -> Result<Box<dyn Workload>, String> {
        Ok(Box::new(Oltp::from_agent(ask.spec)?))
    }
}

impl KindKeys for OltpKeys {
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check {
        check_sql(l, e, i, self)
    }

    keys_from_fields!(connections, client_threads, transport);

    bakeoff_plan::kind_keys_boilerplate!();
}

/// The keys of an oltp or sysbench workload: sysbench's parameter names (dashes as
/// underscores); absent keys take sysbench 1.0.20's defaults (docs/experiment-file.md).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OltpKeys {
    /// Who sends the transactions: which of the two kinds read these keys.
    #[serde(skip)]
    pub sender: Sender,
    #[serde(default = "default_connections")]
    pub connections: OneOrMany,
    /// None: picked per connection count (see the oltp docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
    /// How clients reach the server (loopback TCP, or its unix socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// oltp_read_only, oltp_read_write, ...; default oltp_read_write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u64>,
    /// Row id choice; default special (sysbench's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<RowDistribution>,
    /// sysbench's rand-spec-pct: the share of rows (percent) that is hot.
    #[serde(default = "default_special_pct")]
    pub special_pct: f64,
    /// sysbench's rand-spec-res: the share of accesses (percent) that go to the hot rows.
    #[serde(default = "default_special_res")]
    pub special_res: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zipfian_exp: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pareto_h: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaussian_iter: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_selects: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simple_ranges: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_ranges: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_ranges: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_ranges: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_updates: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_index_updates: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_inserts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_points: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_trx: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_inc: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_secondary: Option<bool>,
    /// MariaDB storage engine: InnoDB, MyISAM, Aria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Prepared statements (default true, like sysbench's --db-ps-mode=auto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepared: Option<bool>,
    /// Error kinds counted and retried rather than fatal (sysbench's --mysql-ignore-errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_errors: Option<Vec<String>>,
    /// Lost connections per run above which the run is invalid (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reconnects: Option<u64>,
}

fn check_sql(l: &Loaded, e: &Experiment, i: usize, w: &OltpKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    if let Some(t) = &w.test {
        if OltpTest::from_name(t).is_none() {
            let names: Vec<&str> = OltpTest::ALL.iter().map(|t| t.name()).collect();
            return Err(l.error_at(
                &at("test"),
                format!("unknown test {t:?}; use one of {}", names.join(", ")),
            ));
        }
    }
    if let Some(n) = w.tables {
        range(l, &at("tables"), n, 1.0, 1000.0, "tables")?;
    }
    if let Some(n) = w.table_size {
        range(l, &at("table_size"), n, 1.0, 1e10, "table_size")?;
    }
    let counts = [
        ("point_selects", w.point_selects),
        ("simple_ranges", w.simple_ranges),
        ("sum_ranges", w.sum_ranges),
        ("order_ranges", w.order_ranges),
        ("distinct_ranges", w.distinct_ranges),
        ("index_updates", w.index_updates),
        ("non_index_updates", w.non_index_updates),
        ("delete_inserts", w.delete_inserts),
    ];
    for (k, v) in counts {
        if let Some(n) = v {
            range(l, &at(k), n, 0.0, 1000.0, k)?;
        }
    }
    if let Some(n) = w.range_size {
        range(l, &at("range_size"), n, 1.0, 1e7, "range_size")?;
    }
    if let Some(n) = w.random_points {
        range(l, &at("random_points"), n, 1.0, 1000.0, "random_points")?;
    }
    if let Some(x) = w.zipfian_exp {
        range(l, &at("zipfian_exp"), x, 0.01, 0.99, "zipfian_exp")?;
    }
    if w.sender == Sender::Sysbench {
        if w.distribution == Some(RowDistribution::Zipfian) {
            return Err(l.error_at(
                &at("distribution"),
                "sysbench 1.0.20 has no zipfian distribution; use it with kind = \"oltp\" or choose uniform, gaussian, special or pareto",
            ));
        }
        if e.plan.ops.is_some() {
            return Err(l.error_at(
                &key!["plan", "ops"],
                "a sysbench workload measures by time; use plan.duration instead of ops",
            ));
        }
    }
    if let Some(x) = w.pareto_h {
        range(l, &at("pareto_h"), x, 0.001, 0.999, "pareto_h")?;
    }
    if let Some(n) = w.gaussian_iter {
        range(l, &at("gaussian_iter"), n, 1.0, 1000.0, "gaussian_iter")?;
    }
    check_special(l, i, w.special_pct, w.special_res)?;
    if w.engine.is_some() && !target_for(e.target.kind).has_storage_engines() {
        return Err(l.error_at(
            &at("engine"),
            "engine (a storage engine) is for mariadb targets only; remove it",
        ));
    }
    Ok(())
}

/// How oltp row ids are drawn (sysbench's --rand-type).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RowDistribution {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}
