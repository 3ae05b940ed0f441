//! tpcb as a kind: its keys, named as pgbench's options (`scale`, `connections` as
//! `--client` swept, `builtin` as `-b`, `select_only` as `-S`), their checks, the
//! targets it fits (every SQL target), its workload, its figures and its section.

use super::{figures, section, Builtin, Tpcb};
use crate::kinds::{keys_from_fields, keys_of, named_with_keys, speaks_sql, Kind};
use crate::Workload;
use bakeoff_plan::{key, range, Check, Experiment, KindKeys, KindSpec, Loaded, OneOrMany};
use bakeoff_report::model::Results;
use bakeoff_sandbox::{target_for, Target};
use serde::{Deserialize, Serialize};

/// The kind in the registry.
pub struct TpcbKind;

impl KindSpec for TpcbKind {
    named_with_keys!("tpcb", TpcbKeys);

    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        speaks_sql(target)
    }
}

impl Kind for TpcbKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        let w = &l.experiment.workloads[i];
        Ok(vec![Box::new(Tpcb::new(
            w.display_name(),
            keys_of::<TpcbKeys>(l, i),
        ))])
    }

    fn summarize(&self, r: &mut Results) {
        figures::summarize_cells(r);
    }

    fn sections(&self, r: &Results) -> Vec<bakeoff_report::Section> {
        section::section(r).into_iter().collect()
    }
}

/// A tpcb workload's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TpcbKeys {
    /// Clients (pgbench's `--client`): a number or a sweep; default 1, as pgbench's.
    #[serde(default = "one")]
    pub connections: OneOrMany,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
    /// The scale factor (pgbench's `--scale`): 100,000 accounts, 10 tellers and 1 branch
    /// each; default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<u64>,
    /// The built-in script (pgbench's `--builtin`): tpcb-like (default), simple-update,
    /// select-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<Builtin>,
    /// pgbench's `--select-only`: builtin = "select-only".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select_only: Option<bool>,
    /// MariaDB storage engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

fn one() -> OneOrMany {
    OneOrMany::Many(vec![1])
}

impl TpcbKeys {
    /// The script these keys ask for.
    pub fn script(&self) -> Builtin {
        match (self.select_only, self.builtin) {
            (Some(true), _) => Builtin::SelectOnly,
            (_, Some(b)) => b,
            _ => Builtin::default(),
        }
    }
}

impl KindKeys for TpcbKeys {
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check {
        let at = |k: &'static str| key!["workload", i, k];
        if let Some(s) = self.scale {
            range(l, &at("scale"), s, 1.0, 10_000.0, "scale")?;
        }
        if self.select_only == Some(true) && self.builtin.is_some_and(|b| b != Builtin::SelectOnly)
        {
            return Err(l.error_at(
                &at("select_only"),
                "select_only = true runs the select-only script, but builtin names another; remove one of them",
            ));
        }
        if self.engine.is_some() && !target_for(e.target.kind).has_storage_engines() {
            return Err(l.error_at(
                &at("engine"),
                "engine (a storage engine) is for mariadb targets only; remove it",
            ));
        }
        Ok(())
    }

    keys_from_fields!(connections, client_threads);

    bakeoff_plan::kind_keys_boilerplate!();
}

#[cfg(test)]
mod tests {
    use super::TpcbKeys;
    use crate::KINDS;
    use std::path::Path;

    fn load(target: &str, workload: &str) -> Result<bakeoff_plan::Loaded, String> {
        let text = format!(
            "name = \"t\"\n[target]\nkind = \"{target}\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/true\"\n[[workload]]\nkind = \"tpcb\"\n{workload}\n"
        );
        bakeoff_plan::parse(Path::new("t.toml"), text, &KINDS).map_err(|e| e.to_string())
    }

    #[test]
    fn the_plan_reads_tpcb_through_the_registry() {
        let l = load(
            "postgres",
            "scale = 2\nconnections = [1, 4]\nselect_only = true",
        )
        .unwrap();
        let w = &l.experiment.workloads[0];
        let k = w.keys_as::<TpcbKeys>().unwrap();
        assert_eq!((w.kind.name(), k.scale), ("tpcb", Some(2)));
        assert_eq!(k.script(), super::Builtin::SelectOnly);
        let made = crate::from_plan(&l).unwrap();
        assert_eq!(
            (made[0].name(), made[0].connections()),
            ("tpcb", &[1, 4][..])
        );
        for target in ["mariadb", "mysql", "sqlite"] {
            assert!(load(target, "").is_ok(), "{target}");
        }
        let l = load("postgres", "builtin = \"simple-update\"").unwrap();
        let k = l.experiment.workloads[0].keys_as::<TpcbKeys>().unwrap();
        assert_eq!(k.script(), super::Builtin::SimpleUpdate);
    }

    #[test]
    fn bad_keys_point_at_their_line() {
        let e = load("memcached", "").unwrap_err();
        assert!(e.contains("it speaks SQL"), "{e}");
        let e = load("postgres", "scale = 0").unwrap_err();
        assert!(e.starts_with("t.toml:9:") && e.contains("scale"), "{e}");
        let e = load("postgres", "builtin = \"tpcc\"").unwrap_err();
        assert!(e.starts_with("t.toml:9:"), "{e}");
        let e = load("postgres", "select_only = true\nbuiltin = \"tpcb-like\"").unwrap_err();
        assert!(
            e.contains("select_only = true runs the select-only script"),
            "{e}"
        );
        let e = load("postgres", "engine = \"InnoDB\"").unwrap_err();
        assert!(e.contains("for mariadb targets only"), "{e}");
        let e = load("postgres", "warehouses = 2").unwrap_err();
        assert!(e.contains("a tpcb workload takes"), "{e}");
    }
}
