//! replay and mysqlslap as kinds: their keys and checks (the log file, its setup script,
//! iterations), the targets they fit, and how a `[[workload]]` becomes a workload.

use super::{Replay, Sender};
use crate::kinds::{installed, keys_from_fields, keys_of, read_keys, speaks_sql, sql_server, Kind};
use crate::Workload;
use bakeoff_plan::{
    fields_of, key, range, Check, Experiment, KindKeys, KindSpec, Loaded, OneOrMany, Transport,
};
use bakeoff_sandbox::Target;
use bakeoff_sqlclient::Wire;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// replay (bakeoff's own clients) or mysqlslap (Debian's mariadb-slap), one struct.
pub struct ReplayKind(Sender);

/// `kind = "replay"`.
pub static REPLAY: ReplayKind = ReplayKind(Sender::Native);
/// `kind = "mysqlslap"`.
pub static MYSQLSLAP: ReplayKind = ReplayKind(Sender::Mysqlslap);

fn kind_name(s: Sender) -> &'static str {
    match s {
        Sender::Native => "replay",
        Sender::Mysqlslap => "mysqlslap",
    }
}

impl KindSpec for ReplayKind {
    fn name(&self) -> &'static str {
        kind_name(self.0)
    }

    fn keys(&self) -> Vec<&'static str> {
        let all = fields_of::<ReplayKeys>().iter().copied();
        match self.0 {
            Sender::Native => all.collect(),
            Sender::Mysqlslap => all.filter(|k| !NOT_MYSQLSLAP.contains(k)).collect(),
        }
    }

    fn read(&self, table: toml_edit::Value) -> Result<Box<dyn KindKeys>, toml_edit::de::Error> {
        let mut k = read_keys::<ReplayKeys>(table)?;
        k.sender = self.0;
        Ok(Box::new(k))
    }

    /// replay: any SQL target (SQLite too); mysqlslap: a SQL server speaking MySQL's
    /// protocol.
    fn fits(&self, target: &dyn Target) -> Result<(), String> {
        match self.0 {
            Sender::Native => speaks_sql(target),
            Sender::Mysqlslap => {
                sql_server(target)?;
                match target.dialect().map(|d| d.wire()) {
                    Some(Wire::Mysql) => Ok(()),
                    _ => Err(
                        "mariadb-slap speaks the MySQL protocol only; use kind = \"replay\" there"
                            .into(),
                    ),
                }
            }
        }
    }
}

impl Kind for ReplayKind {
    fn workloads(&self, l: &Loaded, i: usize) -> Result<Vec<Box<dyn Workload>>, String> {
        if self.0 == Sender::Mysqlslap {
            installed(l, i, "mariadb-slap", "mariadb-client")?;
        }
        let k = keys_of::<ReplayKeys>(l, i);
        Ok(vec![Box::new(Replay::from_plan(l, i, k, self.0)?)])
    }

    /// The per-class table and plans, once for both senders (replay lists them).
    fn sections(&self, r: &bakeoff_report::model::Results) -> Vec<bakeoff_report::Section> {
        match self.0 {
            Sender::Native => super::section::section(r).into_iter().collect(),
            Sender::Mysqlslap => Vec::new(),
        }
    }
}

impl KindKeys for ReplayKeys {
    fn check(&self, l: &Loaded, _e: &Experiment, i: usize) -> Check {
        check_replay(l, i, self)
    }

    fn connections_swept(&self) -> Vec<usize> {
        self.concurrency
            .as_ref()
            .map_or_else(|| vec![1], OneOrMany::to_vec)
    }

    fn connections_key(&self) -> &'static str {
        "concurrency"
    }

    keys_from_fields!(client_threads, transport);

    bakeoff_plan::kind_keys_boilerplate!();
}

/// The keys of a replay or mysqlslap workload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplayKeys {
    /// Who sends the statements: which of the two kinds read these keys.
    #[serde(skip)]
    pub sender: Sender,
    /// The query log to replay (relative to the experiment file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A .sql file run once into the prepared data (tables the log needs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<PathBuf>,
    /// Concurrent connections, a sweep like connections (mysqlslap's --concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<OneOrMany>,
    /// Times each connection replays its statements (mysqlslap's --iterations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// replay only: threads the connections share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<usize>,
    /// replay only: loopback TCP or the server's unix socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// replay only: EXPLAIN the heaviest statement classes (how many; default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<usize>,
}

/// The replay keys mysqlslap (mariadb-slap) has no use for.
pub(crate) const NOT_MYSQLSLAP: &[&str] = &["client_threads", "transport", "explain"];

/// replay and mysqlslap: a file that exists, iterations, and mysqlslap's target.
fn check_replay(l: &Loaded, i: usize, w: &ReplayKeys) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let Some(file) = &w.file else {
        return Err(l.error_at(
            &key!["workload", i],
            format!(
                "a {} workload needs file = \"queries.sql\" (a .sql file, a MariaDB general log or a PostgreSQL csvlog)",
                kind_name(w.sender)
            ),
        ));
    };
    for (k, f) in [("file", Some(file)), ("setup", w.setup.as_ref())] {
        let Some(f) = f else { continue };
        let path = l.resolve(f);
        if !path.is_file() {
            return Err(l.error_at(
                &at(k),
                format!("{} does not exist or is not a file; give a path relative to the experiment file", path.display()),
            ));
        }
    }
    if let Some(n) = w.iterations {
        range(l, &at("iterations"), n, 1.0, 1e6, "iterations")?;
    }
    if let Some(n) = w.explain {
        range(l, &at("explain"), n, 0.0, 50.0, "explain")?;
    }
    Ok(())
}
