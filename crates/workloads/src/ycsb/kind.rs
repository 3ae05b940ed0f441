//! ycsb as a kind: the plan's half (its name, its keys read and checked, the targets it
//! fits) and the run's (its workload here or on an agent).

use super::{check, Protocol, Ycsb, YcsbKeys};
use crate::kinds::{keys_from_fields, keys_of, named_with_keys, AgentAsk, Kind};
use crate::Workload;
use bakeoff_plan::{key, Check, Experiment, KindKeys, KindSpec, Loaded};
use bakeoff_sandbox::{target_for, Target};
use std::time::Duration;

/// The kind in the registry.
pub struct YcsbKind;

impl KindSpec for YcsbKind {
    named_with_keys!("ycsb", YcsbKeys);

    /// Every protocol bakeoff speaks: memcached's, RESP and SQL.
    fn fits(&self, _target: &dyn Target) -> Result<(), String> {
        Ok(())
    }

    fn loads_from_hosts(&self) -> bool {
        true
    }
}

impl Kind for YcsbKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        let w = &l.experiment.workloads[i];
        let protocol = Protocol::for_target(target_for(l.experiment.target.kind).protocol());
        let keys = keys_of::<YcsbKeys>(l, i);
        Ok(vec![Box::new(Ycsb::new(w.display_name(), keys, protocol))])
    }

    fn for_agent(&self, ask: &AgentAsk) -> Result<Box<dyn Workload>, String> {
        Ok(Box::new(
            Ycsb::from_agent(ask.spec)?.with_preload(ask.preload_only),
        ))
    }
}

impl KindKeys for YcsbKeys {
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check {
        let protocol = Protocol::for_target(target_for(e.target.kind).protocol());
        check(self, protocol.scans()).map_err(|(k, m)| l.error_at(&key!["workload", i, k], m))
    }

    keys_from_fields!(connections, client_threads);

    /// kv's short windows: the records sit in memory and are loaded before the runs.
    fn windows(&self) -> (Duration, Duration) {
        bakeoff_plan::KV_WINDOWS
    }

    bakeoff_plan::kind_keys_boilerplate!();
}

#[cfg(test)]
mod tests {
    use crate::KINDS;
    use std::path::Path;

    fn file(target: &str, workload: &str) -> String {
        format!(
            "name = \"y\"\n[target]\nkind = \"{target}\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/true\"\n[[workload]]\nkind = \"ycsb\"\n{workload}\n"
        )
    }

    fn load(target: &str, workload: &str) -> Result<bakeoff_plan::Loaded, String> {
        bakeoff_plan::parse(Path::new("y.toml"), file(target, workload), &KINDS)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_plan_reads_ycsb_through_the_registry() {
        let l = load("redis", "workload = \"e\"\nrecords = 500\nfields = 2").unwrap();
        let w = &l.experiment.workloads[0];
        let k = w.keys_as::<super::YcsbKeys>().unwrap();
        assert_eq!((w.kind.name(), k.records, k.fields), ("ycsb", 500, 2));
        assert_eq!(
            l.experiment.measure(),
            bakeoff_plan::MeasureFor::Time(bakeoff_plan::KV_WINDOWS.1)
        );
        assert!(load("postgres", "workload = \"a\"").is_ok());
        assert_eq!(crate::from_plan(&l).unwrap()[0].name(), "ycsb");
    }

    #[test]
    fn bad_keys_point_at_their_line() {
        let e = load("memcached", "workload = \"e\"").unwrap_err();
        assert!(
            e.starts_with("y.toml:9:") && e.contains("pick a, b, c, d or f"),
            "{e}"
        );
        let e = load("redis", "workload = \"g\"").unwrap_err();
        assert!(
            e.starts_with("y.toml:9:") && e.contains("unknown variant"),
            "{e}"
        );
        let e = load("redis", "records = 0").unwrap_err();
        assert!(
            e.starts_with("y.toml:9:") && e.contains("records must be"),
            "{e}"
        );
        let e = load("redis", "pipeline = 4").unwrap_err();
        assert!(
            e.contains("pipeline is a key of kv workloads") && e.contains("a ycsb workload takes"),
            "{e}"
        );
        let e = load("redis", "distribution = \"normal\"").unwrap_err();
        assert!(e.starts_with("y.toml:9:"), "{e}");
    }
}
