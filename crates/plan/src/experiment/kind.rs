//! What the plan asks of a workload kind. The plan knows no kind: it reads a
//! `[[workload]]` table's `kind`, finds that kind in the [`Kinds`] it was given (the
//! registry in `bakeoff-workloads`), and lets the kind read and check its own keys. A kind
//! lives in its own folder there; this file is the plan's half of its trait.

use super::{Experiment, Loaded, Transport};
use crate::located::Check;
use bakeoff_sandbox::Target;
use std::any::Any;
use std::fmt::Debug;
use std::time::Duration;

/// A workload kind as the experiment file sees it: its name, its keys, which targets it
/// runs on.
pub trait KindSpec: Sync {
    /// What `kind = "..."` says.
    fn name(&self) -> &'static str;

    /// The keys it takes besides `kind`, `name`, `train_only` and `clients`.
    fn keys(&self) -> Vec<&'static str>;

    /// Reads its keys from the `[[workload]]` table (`table` is the whole table; a key it
    /// does not know is checked by the plan against [`KindSpec::keys`]).
    fn read(&self, table: toml_edit::Value) -> Result<Box<dyn KindKeys>, toml_edit::de::Error>;

    /// Whether it runs on `target`; otherwise what it needs, as the error's end ("needs a
    /// SQL server"). The error names the targets that would fit.
    fn fits(&self, target: &dyn Target) -> Result<(), String>;

    /// Whether its load may come from other hosts (`clients`).
    fn loads_from_hosts(&self) -> bool {
        false
    }

    /// Whether its runs honour an offered rate (`RunContext::rate`: an open loop at that
    /// rate, response times from the intended send times), so `slo` may search it.
    fn open_loop(&self) -> bool {
        false
    }
}

/// The kinds an experiment file may name: the registry.
pub trait Kinds: Sync {
    /// The kind `kind = "name"` names.
    fn find(&self, name: &str) -> Option<&dyn KindSpec>;

    /// Every kind's name, in the registry's order (for "kind must be one of").
    fn names(&self) -> Vec<&'static str>;
}

impl std::fmt::Debug for dyn Kinds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// One `[[workload]]`'s own keys, read by its kind.
pub trait KindKeys: Debug + Send + Sync + Any {
    /// Its checks, past what reading them checked; errors point at a key of
    /// `[[workload]]` number `i` (`l.error_at(&key!["workload", i, "..."], ...)`).
    fn check(&self, l: &Loaded, e: &Experiment, i: usize) -> Check;

    /// The connection counts at each point of its sweep.
    fn connections_swept(&self) -> Vec<usize>;

    /// The key that sets them (`concurrency` for replay).
    fn connections_key(&self) -> &'static str {
        "connections"
    }

    /// Client threads, where the kind takes them.
    fn client_threads(&self) -> Option<usize> {
        None
    }

    /// `transport`, for the kinds that have it.
    fn transport(&self) -> Option<Transport> {
        None
    }

    /// Warmup and measured window when the plan sets none: [`crate::KV_WINDOWS`] for
    /// short key-value runs, [`crate::SQL_WINDOWS`] (the default) where caches warm slowly.
    fn windows(&self) -> (Duration, Duration) {
        crate::SQL_WINDOWS
    }

    /// The names its cells carry, from the workload's `name` (a tpcc warehouse sweep has
    /// one per W).
    fn cell_names(&self, name: &str) -> Vec<String> {
        vec![name.to_string()]
    }

    /// The keys as the file would write them (results.json `experiment`).
    fn to_json(&self) -> serde_json::Value;

    fn clone_box(&self) -> Box<dyn KindKeys>;

    fn as_any(&self) -> &dyn Any;
}

/// The pieces every kind's `KindKeys` impl repeats: cloning, `Any`, the JSON form.
/// `bakeoff_plan::kind_keys_boilerplate!();` inside an `impl KindKeys for T` block, for a `T:
/// Clone + Serialize`.
#[macro_export]
macro_rules! kind_keys_boilerplate {
    () => {
        fn to_json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or_default()
        }
        fn clone_box(&self) -> Box<dyn $crate::KindKeys> {
            Box::new(self.clone())
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    };
}

impl Clone for Box<dyn KindKeys> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The targets (by name) that `kind` fits, for its error: "a memcached or redis target".
pub fn fitting_targets(kind: &dyn KindSpec) -> String {
    let names: Vec<&str> = bakeoff_sandbox::TargetKind::all()
        .filter(|t| kind.fits(&*bakeoff_sandbox::target_for(*t)).is_ok())
        .map(|t| t.as_str())
        .collect();
    match names.as_slice() {
        [] => "no target bakeoff knows".to_string(),
        [one] => format!("a {one} target"),
        [init @ .., last] => format!("a {} or {last} target", init.join(", ")),
    }
}
