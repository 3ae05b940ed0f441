//! The registry: every workload kind, listed once. A kind is one folder behind one trait,
//! [`Kind`] (with the plan's half, [`KindSpec`], as its supertrait): its keys and their
//! checks, the targets it fits, the workloads its `[[workload]]` becomes, what an agent
//! on another host rebuilds, and its own figures over a cell's runs. The list itself,
//! [`KINDS`](crate::KINDS), is in lib.rs, the one module above the kind folders: a kind
//! uses this module's trait and helpers, so this module names no kind.

use crate::workload::Workload;
use bakeoff_plan::OneOrMany;
use bakeoff_plan::{KindSpec, Kinds, Loaded};
use bakeoff_report::model::Results;
use bakeoff_report::{KindSections, Section};
use bakeoff_sandbox::{Ask, Protocol, Target};

/// A workload kind: what the plan asks ([`KindSpec`]) and what the run asks.
pub trait Kind: KindSpec {
    /// The workloads `[[workload]]` number `i` becomes (a tpcc warehouse sweep: one per
    /// W), with what the file alone could not check (tools it runs installed, log files
    /// parsed); an error is one line naming the file, key and fix.
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String>;

    /// The workload an agent on another host rebuilds from [`Workload::agent_spec`]. Only
    /// kinds that [`KindSpec::loads_from_hosts`].
    fn for_agent(&self, _ask: &AgentAsk) -> Result<Box<dyn Workload>, String> {
        Err(format!("a {} load runs only on this machine", self.name()))
    }

    /// Its own figures over its cells' saved runs (tpcc's NOTPM, sqlsuite's operation
    /// times). Pure: results in, results out.
    fn summarize(&self, _r: &mut Results) {}

    /// What a reader must see first about its cells.
    fn warnings(&self, _r: &Results) -> Vec<String> {
        Vec::new()
    }

    /// Its sections of the report (tables, charts, text), placed among the sections
    /// every experiment has; markdown, HTML and the terminal render them alike.
    fn sections(&self, _r: &Results) -> Vec<Section> {
        Vec::new()
    }
}

/// What an agent on another host rebuilds a workload from.
pub struct AgentAsk<'a> {
    /// The workload's [`Workload::agent_spec`].
    pub spec: &'a serde_json::Value,
    /// The target it loads.
    pub target: &'a dyn Target,
    /// A run that only sets every key (the first host's, before the measured load).
    pub preload_only: bool,
}

/// The kinds, as the plan reads a file with them.
pub struct Registry(pub(crate) &'static [&'static dyn Kind]);

impl Registry {
    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&'static dyn Kind> {
        self.0.iter().copied().find(|k| k.name() == name)
    }

    /// Every kind.
    pub fn all(&self) -> &'static [&'static dyn Kind] {
        self.0
    }
}

impl Kinds for Registry {
    fn find(&self, name: &str) -> Option<&dyn KindSpec> {
        self.kind(name).map(|k| k as &dyn KindSpec)
    }

    fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|k| k.name()).collect()
    }
}

/// The report asks every kind for its sections, in the registry's order (a kind with no
/// cells in the results adds none).
impl KindSections for Registry {
    fn sections(&self, r: &Results) -> Vec<Section> {
        self.0.iter().flat_map(|k| k.sections(r)).collect()
    }
}

/// `[[workload]]` `i`'s keys, which its kind read.
pub(crate) fn keys_of<T: 'static>(l: &Loaded, i: usize) -> &T {
    l.experiment.workloads[i]
        .keys_as::<T>()
        .expect("a workload's keys are its kind's")
}

/// A tool a kind runs installed, or the error at `[[workload]]` `i`'s kind.
pub(crate) fn installed(l: &Loaded, i: usize, program: &str, package: &str) -> Result<(), String> {
    if bakeoff_os::path::which(program).is_some() {
        return Ok(());
    }
    Err(l
        .error_at(
            &bakeoff_plan::key!["workload", i, "kind"],
            format!("{program} is not installed; run scripts/setup.sh (apt-get install {package})"),
        )
        .to_string())
}

/// Any SQL target (SQLite too).
pub(crate) fn speaks_sql(target: &dyn Target) -> Result<(), String> {
    match target.protocol() {
        Protocol::Sql => Ok(()),
        _ => Err("it speaks SQL".into()),
    }
}

/// A SQL server that many connections load with transactions (not SQLite).
pub(crate) fn sql_server(target: &dyn Target) -> Result<(), String> {
    speaks_sql(target)?;
    match target.refuses(Ask::ConcurrentSql) {
        Some(why) => Err(format!("it needs concurrent transactions; {why}")),
        None => Ok(()),
    }
}

/// Connections when a kind's sweep is not given: 16.
pub(crate) fn default_connections() -> OneOrMany {
    OneOrMany::Many(vec![16])
}

/// sysbench's rand-spec-pct: the share of keys or rows (percent) that is hot.
pub(crate) fn default_special_pct() -> f64 {
    1.0
}

/// sysbench's rand-spec-res: the share of accesses (percent) that go to the hot ones.
pub(crate) fn default_special_res() -> f64 {
    75.0
}

/// A kind's keys read from its `[[workload]]` table into its struct `T`.
pub(crate) fn read_keys<T: serde::de::DeserializeOwned>(
    table: toml_edit::Value,
) -> Result<T, toml_edit::de::Error> {
    use serde::de::IntoDeserializer;
    T::deserialize(table.into_deserializer())
}

/// sysbench's hot-spot keys (kv and oltp): `special_pct` and `special_res`, percent.
pub(crate) fn check_special(l: &Loaded, i: usize, pct: f64, res: f64) -> bakeoff_plan::Check {
    let at = |k: &'static str| bakeoff_plan::key!["workload", i, k];
    bakeoff_plan::range(l, &at("special_pct"), pct, 0.001, 100.0, "special_pct")?;
    bakeoff_plan::range(l, &at("special_res"), res, 0.0, 100.0, "special_res")
}

/// A [`KindSpec`]'s `name` (`kind = "$name"`), and its `keys` and `read` for a kind
/// whose keys are the struct `$keys`, read as the table has them
/// (`bakeoff_plan::kind_keys_boilerplate!` is the same for `KindKeys`). A macro because
/// both traits are the plan's: a generic impl of them for the kinds here would break the
/// orphan rule.
macro_rules! named_with_keys {
    ($name:literal, $keys:ty) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn keys(&self) -> Vec<&'static str> {
            bakeoff_plan::fields_of::<$keys>().to_vec()
        }

        fn read(
            &self,
            table: toml_edit::Value,
        ) -> Result<Box<dyn bakeoff_plan::KindKeys>, toml_edit::de::Error> {
            Ok(Box::new($crate::kinds::read_keys::<$keys>(table)?))
        }
    };
}
pub(crate) use named_with_keys;

/// `KindKeys` methods that return a field of the same name as it is: `connections`
/// (`connections_swept`), `client_threads`, `transport`. A macro for the reason
/// [`named_with_keys`] is.
macro_rules! keys_from_fields {
    ($($field:ident),+) => {
        $($crate::kinds::keys_from_fields!(@$field);)+
    };
    (@connections) => {
        fn connections_swept(&self) -> Vec<usize> {
            self.connections.to_vec()
        }
    };
    (@client_threads) => {
        fn client_threads(&self) -> Option<usize> {
            self.client_threads
        }
    };
    (@transport) => {
        fn transport(&self) -> Option<bakeoff_plan::Transport> {
            self.transport
        }
    };
}
pub(crate) use keys_from_fields;
