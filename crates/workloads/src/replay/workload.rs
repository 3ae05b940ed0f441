//! replay and mysqlslap as a [`Workload`]: the log (and its setup script) read and parsed
//! when the experiment is checked, a file that does not parse being bad input naming the
//! file, line and statement; the setup script is the prepared data; the log's statements
//! are the verification query set. A run replays the log with bakeoff's own clients
//! (`replay`: per-class figures, and the plans of the heaviest classes once per cell) or
//! hands the file to Debian's mariadb-slap (`mysqlslap`).

use super::mysqlslap;
use super::records::{ClassRecord, ExplainRecord, ReplayRun};
use super::{LogFormat, ParseError, ReplayConfig, ReplayRecord, Statement};
use crate::verify;
use crate::workload::{
    sql_figures, Cells, Outcome, QuerySet, RunContext, Script, Tables, Workload,
};
use bakeoff_plan::{key, Loaded};
use bakeoff_report::figures::RunFigures;
use bakeoff_sqlclient::Db;
use std::path::PathBuf;

/// What sends the log's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sender {
    /// bakeoff's own clients, a connection per session of the log.
    #[default]
    Native,
    /// Debian's mariadb-slap, its output parsed.
    Mysqlslap,
}

/// A replay or mysqlslap workload of the experiment.
pub struct Replay {
    cells: Cells,
    /// The log as given (mysqlslap reads it itself).
    file: PathBuf,
    statements: Vec<Statement>,
    /// Statements run once into the prepared data, and the file they came from.
    setup: Vec<String>,
    setup_file: Option<PathBuf>,
    iterations: u32,
    client_threads: usize,
    unix_socket: bool,
    /// EXPLAIN the heaviest classes (how many).
    explain: usize,
    sender: Sender,
}

impl Replay {
    /// The `[[workload]]` at index `i`, its files read and parsed.
    pub fn from_plan(
        l: &Loaded,
        i: usize,
        k: &super::ReplayKeys,
        sender: Sender,
    ) -> Result<Replay, String> {
        let w = &l.experiment.workloads[i];
        let read = |k: &'static str, p: &PathBuf| -> Result<(PathBuf, String), String> {
            let path = l.resolve(p);
            let text = bakeoff_plan::read_input(&path, k).map_err(|e| {
                l.error_at(&key!["workload", i, k], format!("{}: {e}", path.display()))
                    .to_string()
            })?;
            Ok((path, text))
        };
        let bad = |k: &'static str, path: &PathBuf, e: ParseError| {
            l.error_at(&key!["workload", i, k], format!("{}: {e}", path.display()))
                .to_string()
        };
        let file = k.file.clone().unwrap_or_default();
        let (path, text) = read("file", &file)?;
        let (format, statements) = super::parse_auto(&text).map_err(|e| bad("file", &path, e))?;
        if sender == Sender::Mysqlslap && format != LogFormat::SqlFile {
            return Err(l
                .error_at(
                    &key!["workload", i, "file"],
                    format!("mariadb-slap reads plain .sql files, and this is a {}; use kind = \"replay\" for logs", format.name()),
                )
                .to_string());
        }
        let (setup, setup_file) = match &k.setup {
            Some(s) => {
                let (spath, stext) = read("setup", s)?;
                let parsed = super::parse(&stext, LogFormat::SqlFile)
                    .map_err(|e| bad("setup", &spath, e))?;
                (parsed.into_iter().map(|s| s.sql).collect(), Some(spath))
            }
            None => (Vec::new(), None),
        };
        Ok(Replay {
            cells: Cells::of(w),
            file: path,
            statements,
            setup,
            setup_file,
            iterations: k.iterations.unwrap_or(1),
            client_threads: k.client_threads.unwrap_or(bakeoff_engine::AUTO_THREADS),
            unix_socket: k.transport == Some(bakeoff_plan::Transport::Unix),
            explain: k.explain.unwrap_or(3),
            sender,
        })
    }

    /// Replays the log natively: per-class figures, and (first round only: the plans
    /// depend on the server, not the round) the plans of the heaviest classes.
    fn replay(&self, ctx: &RunContext, db: &Db) -> Result<Outcome, String> {
        let cfg = ReplayConfig {
            statements: self.statements.clone(),
            connections: ctx.connections,
            iterations: self.iterations,
            client_threads: bakeoff_sqlclient::driver::client_threads_for(
                self.client_threads,
                ctx.connections,
                ctx.load_cpus,
            ),
        };
        let (rec, figures) = super::run(db, &cfg, &ctx.drive()).map_err(|e| e.to_string())?;
        let explains = if ctx.round == 0 && self.explain > 0 {
            super::explain(db, &figures.classes, self.explain)
        } else {
            Vec::new()
        };
        let (classes, explains) = records(&figures, explains);
        let counted = rec.clone();
        Ok(Outcome {
            rec,
            extra: Box::new(move |run| {
                sql_figures(run, &counted, false);
                ReplayRun { classes, explains }.put(run);
            }),
        })
    }

    /// mariadb-slap's whole run is the measured window.
    fn slap(&self, ctx: &RunContext, db: &Db) -> Result<Outcome, String> {
        ctx.hooks.measure_started();
        let got = mysqlslap::run(
            db,
            &self.file,
            ctx.connections,
            self.iterations,
            ctx.live,
            ctx.cancel,
        );
        ctx.hooks.measure_ended();
        let rec = got.map_err(|e| e.to_string())?;
        let counted = rec.clone();
        Ok(Outcome {
            rec,
            extra: Box::new(move |run| sql_figures(run, &counted, false)),
        })
    }
}

impl Workload for Replay {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, _engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(Script {
            file: self.setup_file.clone(),
            statements: self.setup.clone(),
        }))
    }

    fn queries(&self) -> Option<Box<dyn QuerySet>> {
        Some(Box::new(Statements(self.statements.clone())))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let mut db = ctx.server.db()?;
        match self.sender {
            Sender::Native => {
                db.via_socket = self.unix_socket;
                self.replay(ctx, &db)
            }
            Sender::Mysqlslap => self.slap(ctx, &db),
        }
    }
}

/// A list of statements as a verification query set (a replay's log, or `[verify]
/// queries`).
pub struct Statements(pub Vec<Statement>);

impl QuerySet for Statements {
    fn count(&self) -> Option<usize> {
        Some(self.0.len())
    }

    fn run(&self, db: &Db, _engine: Option<&str>) -> Result<Vec<verify::Outcome>, String> {
        verify::run_set(db, &self.0).map_err(|e| e.to_string())
    }
}

fn records(
    r: &ReplayRecord,
    explains: Vec<super::Explain>,
) -> (Vec<ClassRecord>, Vec<ExplainRecord>) {
    let classes = r
        .classes
        .iter()
        .map(|c| ClassRecord {
            fingerprint: c.fingerprint.clone(),
            class: c.class.clone(),
            count: c.count,
            total_s: c.total_s,
            p50_us: c.p50_us,
            p99_us: c.p99_us,
            errors: c.errors,
        })
        .collect();
    let explains = explains
        .into_iter()
        .map(|e| ExplainRecord {
            class: e.class,
            fingerprint: e.fingerprint,
            plan: e.plan,
        })
        .collect();
    (classes, explains)
}
