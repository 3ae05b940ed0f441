//! The TPC-H-derived kind: its keys (`scale`, `queries`, `streams`, `params`, `timeout`),
//! their checks, the targets it fits (every SQL target), its workload, its figures and
//! its section.

use super::{figures, section, Tpch};
use crate::kinds::{keys_of, named_with_keys, speaks_sql, Kind};
use crate::Workload;
use bakeoff_plan::{key, range, Check, Experiment, KindKeys, KindSpec, Loaded};
use bakeoff_report::model::Results;
use bakeoff_sandbox::Target;
use serde::{Deserialize, Serialize};

/// The kind in the registry.
pub struct TpchKind;

impl KindSpec for TpchKind {
    named_with_keys!("tpch", TpchKeys);

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        speaks_sql(target)
    }
}

impl Kind for TpchKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        let w = &l.experiment.workloads[i];
        Ok(vec![Box::new(Tpch::new(
            w.display_name(),
            keys_of::<TpchKeys>(l, i),
            super::workload::shared_reference(l, i),
        ))])
    }

    fn summarize(&self, r: &mut Results) {
        figures::summarize_cells(r);
    }

    fn sections(&self, r: &Results) -> Vec<bakeoff_report::Section> {
        section::section(r).into_iter().collect()
    }
}

/// Where the substitution parameters come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ParamsFrom {
    /// Drawn per run from the round's seed (every variant of a round gets the same).
    #[default]
    Random,
    /// The specification's validation values.
    Validation,
}

impl ParamsFrom {
    pub fn name(self) -> &'static str {
        match self {
            ParamsFrom::Random => "random",
            ParamsFrom::Validation => "validation",
        }
    }
}

/// A tpch workload's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpchKeys {
    /// The scale factor, 0.01 to 10 (default 0.1): about 1 GB of rows per 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// The queries a run runs (1..22; default all 22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<Vec<i64>>,
    /// Concurrent query streams: 1 (default) is the power run; more, a throughput run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<usize>,
    /// "random" (default) or "validation".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<ParamsFrom>,
    /// Seconds one query may run before it is recorded as timed out (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
}

/// The default scale.
pub const SCALE: f64 = 0.1;
/// The default per-query limit, seconds.
pub const TIMEOUT_S: f64 = 60.0;
/// The most streams a run opens.
pub const MAX_STREAMS: usize = 64;

impl TpchKeys {
    /// The queries chosen, in 1..=22 (checked).
    pub fn chosen(&self) -> Vec<u8> {
        match &self.queries {
            Some(q) => q.iter().map(|&x| x as u8).collect(),
            None => (1..=22).collect(),
        }
    }
}

impl KindKeys for TpchKeys {
    fn check(&self, l: &Loaded, _e: &Experiment, i: usize) -> Check {
        let at = |k: &'static str| key!["workload", i, k];
        if let Some(s) = self.scale {
            range(l, &at("scale"), s, 0.01, 10.0, "scale")?;
        }
        if let Some(qs) = &self.queries {
            if qs.is_empty() {
                return Err(l.error_at(
                    &at("queries"),
                    "queries is empty; leave it out to run all 22",
                ));
            }
            for (j, &q) in qs.iter().enumerate() {
                if !(1..=22).contains(&q) {
                    return Err(l.error_at(
                        &key!["workload", i, "queries", j],
                        format!("there is no query {q}; the TPC-H-derived queries are 1 to 22"),
                    ));
                }
                if qs[..j].contains(&q) {
                    return Err(l.error_at(
                        &key!["workload", i, "queries", j],
                        format!("query {q} is listed twice; each runs once per stream"),
                    ));
                }
            }
        }
        if let Some(n) = self.streams {
            if n == 0 || n > MAX_STREAMS {
                return Err(l.error_at(
                    &at("streams"),
                    format!("streams = {n}: give 1 (the power run) to {MAX_STREAMS}, one connection each"),
                ));
            }
        }
        if let Some(t) = self.timeout {
            range(l, &at("timeout"), t, 0.1, 86_400.0, "timeout (seconds)")?;
        }
        Ok(())
    }

    /// One connection per stream.
    fn connections_swept(&self) -> Vec<usize> {
        vec![self.streams.unwrap_or(1)]
    }

    bakeoff_plan::kind_keys_boilerplate!();
}

#[cfg(test)]
mod tests {
    use super::TpchKeys;
    use crate::KINDS;
    use std::path::Path;

    fn load(target: &str, options: &str, workload: &str) -> Result<bakeoff_plan::Loaded, String> {
        let text = format!(
            "name = \"t\"\n[target]\nkind = \"{target}\"\n{options}\n[[variant]]\nname = \"a\"\nbinary = \"/bin/true\"\n[[workload]]\nkind = \"tpch\"\n{workload}\n"
        );
        bakeoff_plan::parse(Path::new("t.toml"), text, &KINDS).map_err(|e| e.to_string())
    }

    #[test]
    fn the_plan_reads_tpch_through_the_registry() {
        let l = load(
            "postgres",
            "",
            "scale = 0.01\nqueries = [1, 6, 14]\nparams = \"validation\"\ntimeout = 5",
        )
        .unwrap();
        let k = l.experiment.workloads[0].keys_as::<TpchKeys>().unwrap();
        assert_eq!(k.chosen(), vec![1, 6, 14]);
        assert_eq!(k.params, Some(super::ParamsFrom::Validation));
        let made = crate::from_plan(&l).unwrap();
        assert_eq!((made[0].name(), made[0].connections()), ("tpch", &[1][..]));
        for target in ["mariadb", "mysql", "sqlite"] {
            assert!(load(target, "", "streams = 2").is_ok(), "{target}");
        }
    }

    #[test]
    fn bad_keys_point_at_their_line() {
        for target in ["memcached", "redis"] {
            let e = load(target, "", "").unwrap_err();
            assert!(e.contains("it speaks SQL"), "{e}");
        }
        let e = load("postgres", "", "scale = 20").unwrap_err();
        assert!(e.starts_with("t.toml:10:") && e.contains("scale"), "{e}");
        let e = load("postgres", "", "scale = 0.001").unwrap_err();
        assert!(e.contains("scale"), "{e}");
        let e = load("postgres", "", "queries = [1, 23]").unwrap_err();
        assert!(e.contains("there is no query 23"), "{e}");
        let e = load("postgres", "", "queries = [3, 3]").unwrap_err();
        assert!(e.contains("listed twice"), "{e}");
        let e = load("postgres", "", "streams = 100").unwrap_err();
        assert!(e.contains("streams = 100"), "{e}");
        let e = load("postgres", "", "params = \"spec\"").unwrap_err();
        assert!(e.starts_with("t.toml:10:"), "{e}");
        let e = load(
            "postgres",
            "[target.options]\nmax_connections = \"8\"",
            "streams = 10",
        )
        .unwrap_err();
        assert!(
            e.contains("max_connections = 8 is lower than the sweep needs"),
            "{e}"
        );
    }
}
