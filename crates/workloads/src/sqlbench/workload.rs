//! sql-bench as a [`Workload`]: it runs on a fresh database (its tests make and drop their
//! own tables); one run is every chosen test, all of it the measured window. The sql-bench
//! is found (and its source fetched) at the first run, then configured once into the
//! workload's scratch folder; each run's output goes into a folder of its own there.

use super::{configure, failure, parse, redact, tests_in, Parsed, SqlBenchKeys, Tests};
use crate::shared::suite::{OperationRecord, SuiteRun};
use crate::tool::{self, Finished};
use crate::workload::{
    invalidate, sql_figures, Cells, Outcome, RunContext, Script, Tables, Workload,
};
use bakeoff_build::{Cache, SourceSpec};
use bakeoff_engine::RunRecord;
use bakeoff_plan::{key, Loaded, TargetKind};
use bakeoff_report::figures::RunFigures;
use bakeoff_sqlclient::{Db, Wire};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How long one test (or run-all-tests) may run before it is stopped.
const TIMEOUT: Duration = Duration::from_secs(4 * 3600);

/// Where the sql-bench comes from.
#[derive(Debug, Clone)]
enum Origin {
    /// A sql-bench folder (`dir`, or a path source's `sql-bench/`).
    Dir(PathBuf),
    /// `sql-bench/` of a source the build crate fetches.
    Source(SourceSpec),
}

/// A sql-bench workload of the experiment.
pub struct SqlBench {
    cells: Cells,
    /// None: run-all-tests.
    tests: Option<Vec<String>>,
    args: Vec<String>,
    origin: Origin,
    scratch: PathBuf,
    bench: OnceLock<Result<PathBuf, String>>,
    /// The build cache sql-bench's source is fetched into (`Workload::use_cache`);
    /// unset, [`Cache::default_root`].
    cache: OnceLock<PathBuf>,
    runs: AtomicUsize,
}

/// Scratch folders made in this process.
static SCRATCH: AtomicUsize = AtomicUsize::new(0);

impl SqlBench {
    /// The `[[workload]]` `w` (number `i`) with its keys `k`; a `dir` is checked here.
    pub fn from_plan(
        l: &Loaded,
        i: usize,
        w: &bakeoff_plan::Workload,
        k: &SqlBenchKeys,
    ) -> Result<SqlBench, String> {
        let e = &l.experiment;
        let origin = match &k.dir {
            Some(d) => {
                let d = l.resolve(d);
                let tests = tests_in(&d);
                let err = |m: String| l.error_at(&key!["workload", i, "dir"], m).to_string();
                if !d.join("run-all-tests.sh").is_file() && !d.join("run-all-tests").is_file() {
                    return Err(err(format!(
                        "{} holds no sql-bench (no run-all-tests.sh); give the sql-bench folder of a MariaDB source",
                        d.display()
                    )));
                }
                if let Some(Tests::List(v)) = &k.tests {
                    if let Some(t) = v.iter().find(|t| !tests.contains(t)) {
                        return Err(l
                            .error_at(
                                &key!["workload", i, "tests"],
                                format!(
                                    "{} has no test {t:?}; its tests are {}",
                                    d.display(),
                                    tests.join(", ")
                                ),
                            )
                            .to_string());
                    }
                }
                Origin::Dir(d)
            }
            None => match (&e.target.kind, &e.target.source) {
                (TargetKind::Mariadb, Some(s)) if s.path.is_some() => Origin::Dir(
                    l.resolve(s.path.as_deref().unwrap_or(".".as_ref()))
                        .join("sql-bench"),
                ),
                (TargetKind::Mariadb, Some(s)) if s.debian.is_some() => {
                    Origin::Source(SourceSpec::Debian {
                        package: s.debian.clone().unwrap_or_default(),
                    })
                }
                (TargetKind::Mariadb, Some(s)) if s.git.is_some() => {
                    let g = s.git.clone().unwrap_or_default();
                    let url = if g.contains("://") || g.contains('@') {
                        g
                    } else {
                        l.resolve(g.as_ref()).display().to_string()
                    };
                    Origin::Source(SourceSpec::Git {
                        url,
                        rev: s.rev.clone().unwrap_or_default(),
                    })
                }
                (TargetKind::Mariadb, Some(s)) if s.tarball.is_some() => {
                    let t = s.tarball.clone().unwrap_or_default();
                    let location = if t.contains("://") {
                        t
                    } else {
                        l.resolve(t.as_ref()).display().to_string()
                    };
                    Origin::Source(SourceSpec::Tarball {
                        location,
                        sha256: s.sha256.clone().unwrap_or_default(),
                    })
                }
                _ => Origin::Source(SourceSpec::Debian {
                    package: "mariadb".into(),
                }),
            },
        };
        let n = SCRATCH.fetch_add(1, Ordering::SeqCst);
        let scratch =
            std::env::temp_dir().join(format!("bakeoff-sql-bench-{}-{n}", std::process::id()));
        Ok(SqlBench {
            cells: Cells::of(w),
            tests: match &k.tests {
                Some(Tests::List(v)) => Some(v.clone()),
                _ => None,
            },
            args: k.args.clone(),
            origin,
            scratch,
            bench: OnceLock::new(),
            cache: OnceLock::new(),
            runs: AtomicUsize::new(0),
        })
    }

    fn cache(&self) -> Cache {
        Cache::new(
            self.cache
                .get()
                .cloned()
                .unwrap_or_else(Cache::default_root),
        )
    }

    /// The configured sql-bench: found (fetched) and configured at the first call.
    fn bench(&self) -> Result<PathBuf, String> {
        self.bench
            .get_or_init(|| {
                let src = match &self.origin {
                    Origin::Dir(d) => d.clone(),
                    Origin::Source(spec) => {
                        let tree = bakeoff_build::fetch(spec, &self.cache())
                            .map_err(|e| format!("cannot fetch sql-bench's source: {e}"))?;
                        tree.dir.join("sql-bench")
                    }
                };
                let perl = bakeoff_os::path::which("perl")
                    .map_or("/usr/bin/perl".into(), |p| p.display().to_string());
                let into = self.scratch.join("bench");
                configure(&src, &into, &perl)?;
                Ok(into)
            })
            .clone()
    }
}

impl Drop for SqlBench {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// The connection options every sql-bench program gets, and the environment for them.
fn login(db: &Db) -> (Vec<String>, Vec<(String, String)>) {
    let mut args = vec![
        format!("--user={}", db.user),
        format!("--password={}", db.password),
        format!("--database={}", db.database),
    ];
    let mut env = vec![(
        "PERL5OPT".to_string(),
        "-MBenchmark=:hireswallclock".to_string(),
    )];
    match db.dialect.wire() {
        Wire::Mysql => {
            args.push("--server=mysql".into());
            match (&db.socket, db.via_socket) {
                (Some(s), true) => {
                    args.push("--host=localhost".into());
                    args.push(format!("--socket={}", s.display()));
                }
                _ => {
                    args.push(format!("--host={}", db.addr.ip()));
                    args.push(format!("--connect-options=port={}", db.addr.port()));
                }
            }
        }
        Wire::Postgres => {
            // sql-bench's Pg data source names only the database: libpq takes the rest
            // from its environment.
            args.push("--server=Pg".into());
            args.push(format!("--host={}", db.addr.ip()));
            env.push(("PGHOST".into(), db.addr.ip().to_string()));
            env.push(("PGPORT".into(), db.addr.port().to_string()));
        }
    }
    (args, env)
}

/// One test's result: its name, what it printed, and why it failed (if it did).
struct TestRun {
    test: String,
    parsed: Parsed,
    failed: Option<String>,
    cpu_s: f64,
}

impl Workload for SqlBench {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, _engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(Script::EMPTY))
    }

    fn use_cache(&self, root: &Path) {
        let _ = self.cache.set(root.to_path_buf());
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let db = ctx.server.db()?;
        let bench = self.bench()?;
        let out = self.scratch.join(format!(
            "run-{}-{}",
            ctx.round,
            self.runs.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        let (mut common, env) = login(&db);
        common.push(format!("--dir={}", out.display()));
        common.push("--log".into());
        common.extend(self.args.iter().cloned());
        let command = |program: &str| {
            let mut c = Command::new("perl");
            c.arg(program)
                .args(&common)
                .current_dir(&bench)
                .envs(env.iter().map(|(k, v)| (k, v)));
            c
        };
        ctx.hooks.measure_started();
        let ran = match &self.tests {
            Some(tests) => tests
                .iter()
                .map(|t| {
                    let f = tool::run(
                        command(&format!("test-{t}")),
                        ctx.cancel,
                        TIMEOUT,
                        "sql-bench",
                        "apt-get install perl",
                    )
                    .map_err(|e| e.to_string())?;
                    let text = redact(&format!("{}{}", f.out, f.err), &db.password);
                    let _ = std::fs::write(out.join(format!("{t}.log")), &text);
                    Ok(TestRun {
                        test: t.clone(),
                        parsed: parse(&text),
                        failed: failure(&text, &f.status),
                        cpu_s: f.cpu_s,
                    })
                })
                .collect::<Result<Vec<_>, String>>(),
            None => tool::run(
                command("run-all-tests"),
                ctx.cancel,
                TIMEOUT,
                "sql-bench",
                "apt-get install perl",
            )
            .map_err(|e| e.to_string())
            .map(|f| all_tests(&bench, &out, &f)),
        };
        ctx.hooks.measure_ended();
        outcome(ran?, &db.password)
    }
}

/// run-all-tests' results: each test's output file in `out` (`NAME-` + the `RUN-` file's
/// suffix; run-all-tests sends a test's stdout and stderr there, so a test that died has
/// one too); a test without one was skipped (`--skip-test`).
fn all_tests(bench: &Path, out: &Path, f: &Finished) -> Vec<TestRun> {
    let suffix = std::fs::read_dir(out)
        .ok()
        .and_then(|d| {
            d.flatten().find_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_prefix("RUN-").map(str::to_string)
            })
        })
        .unwrap_or_default();
    let mut runs: Vec<TestRun> = tests_in(bench)
        .into_iter()
        .filter_map(|t| {
            let text = std::fs::read_to_string(out.join(format!("{t}-{suffix}"))).ok()?;
            Some(TestRun {
                failed: failure(&text, "exit status 0"),
                parsed: parse(&text),
                test: t,
                cpu_s: 0.0,
            })
        })
        .collect();
    if let Some(first) = runs.first_mut() {
        first.cpu_s = f.cpu_s;
    }
    if suffix.is_empty() || f.status != "exit status 0" {
        let text = format!("{}{}", f.out, f.err);
        let why = failure(&text, &f.status).unwrap_or_else(|| f.status.clone());
        runs.push(TestRun {
            test: "run-all-tests".into(),
            parsed: Parsed::default(),
            failed: Some(why),
            cpu_s: 0.0,
        });
    }
    runs
}

/// The run's record from its tests (see the module's doc); every failed test named in
/// the run's invalid reason, with the sandbox's `password` blanked out of it (sql-bench
/// prints it when a login fails). An error when no operation was timed at all.
fn outcome(runs: Vec<TestRun>, password: &str) -> Result<Outcome, String> {
    let failed: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            r.failed.as_ref().map(|why| {
                redact(
                    &format!("sql-bench test {} failed: {why}", r.test),
                    password,
                )
            })
        })
        .collect();
    let operations: Vec<OperationRecord> = runs
        .iter()
        .flat_map(|r| {
            r.parsed.operations.iter().map(|o| OperationRecord {
                group: r.test.clone(),
                name: o.name.clone(),
                seconds: o.seconds,
            })
        })
        .collect();
    if operations.is_empty() {
        return Err(if failed.is_empty() {
            "sql-bench timed no operation".into()
        } else {
            failed.join("; ")
        });
    }
    let elapsed_s: f64 = operations.iter().map(|o| o.seconds).sum();
    let rec = RunRecord {
        ops: operations.len() as u64,
        elapsed_s,
        ops_per_s: operations.len() as f64 / elapsed_s.max(1e-9),
        queries: runs
            .iter()
            .flat_map(|r| r.parsed.operations.iter().map(|o| o.count))
            .sum(),
        client_cpu_s: runs.iter().map(|r| r.cpu_s).sum(),
        client_threads: 1,
        ..RunRecord::default()
    };
    let counted = rec.clone();
    Ok(Outcome {
        rec,
        extra: Box::new(move |run| {
            sql_figures(run, &counted, false);
            SuiteRun { operations }.put(run);
            if !failed.is_empty() {
                invalidate(run, failed.join("; "));
            }
        }),
    })
}
