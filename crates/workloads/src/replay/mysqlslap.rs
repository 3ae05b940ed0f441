//! `kind = "mysqlslap"`: Debian's `mariadb-slap` (alias `mysqlslap`) runs a query file
//! against a MariaDB sandbox, as a yardstick for the native `replay` workload on the same
//! file: `--concurrency=N` clients each run every statement of the file once per
//! iteration, `--iterations=I` times, and it reports the average, minimum and maximum
//! seconds one iteration took.
//!
//! The schema survives: without `--create` or `--auto-generate-sql`, mariadb-slap neither
//! creates nor drops the `--create-schema` database (checked on 10.11: the tables and the
//! rows the file updated are still there after the run), and `--no-drop` is given as well
//! so that it never drops it. `--no-defaults` keeps the machine's option files out and
//! `--skip-ssl` keeps TLS off, as bakeoff's own clients have it.
//!
//! mariadb-slap splits the file at every `;`, inside quoted strings too: give it
//! statements without one ([`query_text`] writes such a file from parsed statements, and
//! refuses a statement with a `;`). A statement that fails stops its client with
//! "Cannot run query" on stderr and exit status 0; an unknown database is reported on
//! stderr while a benchmark is still printed. Any such error line fails the run.
//!
//! What the record holds: one average iteration (mariadb-slap reports no more).
//! `elapsed_s` = the average seconds, `ops` = clients x queries per client, `ops_per_s` =
//! ops / average seconds; queries = ops. Response times are unknown (zeros). Client CPU
//! is mariadb-slap's user + system time divided by the iterations.

use super::Statement;
use crate::tool::{self, Finished};
use bakeoff_engine::{Live, LoadError, Phase, RunRecord};
use bakeoff_sqlclient::{Db, Wire};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The program: Debian's mariadb-client package.
pub const PROGRAM: &str = "/usr/bin/mariadb-slap";
/// How long [`run`] lets mariadb-slap run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// What mariadb-slap reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlapResult {
    /// Seconds an iteration took: average, minimum, maximum over the iterations.
    pub avg_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    /// Clients (the concurrency).
    pub clients: u64,
    /// Statements each client ran per iteration, on average.
    pub queries_per_client: u64,
}

/// The mariadb-slap command line for `file` at `connections` clients, `iterations` times.
pub fn command(db: &Db, file: &Path, connections: usize, iterations: u32) -> Command {
    let mut c = Command::new(PROGRAM);
    // --no-defaults must come first.
    c.arg("--no-defaults").arg("--skip-ssl");
    match (&db.socket, db.via_socket) {
        (Some(s), true) => c
            .arg("--protocol=socket")
            .arg(format!("--socket={}", s.display())),
        _ => c
            .arg("--protocol=tcp")
            .arg(format!("--host={}", db.addr.ip()))
            .arg(format!("--port={}", db.addr.port())),
    };
    c.arg(format!("--user={}", db.user))
        .arg(format!("--password={}", db.password))
        .arg(format!("--create-schema={}", db.database))
        .arg("--no-drop")
        .arg(format!("--query={}", file.display()))
        .arg("--delimiter=;")
        .arg(format!("--concurrency={}", connections.max(1)))
        .arg(format!("--iterations={}", iterations.max(1)));
    c
}

/// Parses mariadb-slap's report (its first `Benchmark` block).
pub fn parse(output: &str) -> Result<SlapResult, String> {
    let mut found: [Option<f64>; 5] = [None; 5];
    const LABELS: [&str; 5] = [
        "Average number of seconds to run all queries:",
        "Minimum number of seconds to run all queries:",
        "Maximum number of seconds to run all queries:",
        "Number of clients running queries:",
        "Average number of queries per client:",
    ];
    for line in output.lines().map(str::trim) {
        for (slot, label) in found.iter_mut().zip(LABELS) {
            let Some(rest) = line.strip_prefix(label) else {
                continue;
            };
            let number = rest.split_whitespace().next().unwrap_or("");
            let value = number
                .parse::<f64>()
                .map_err(|_| format!("cannot read '{line}'"))?;
            slot.get_or_insert(value);
        }
    }
    let missing: Vec<&str> = LABELS
        .iter()
        .zip(&found)
        .filter(|(_, v)| v.is_none())
        .map(|(l, _)| l.trim_end_matches(':'))
        .collect();
    if missing.len() == LABELS.len() {
        return Err("mariadb-slap printed no benchmark".into());
    }
    if !missing.is_empty() {
        return Err(format!(
            "mariadb-slap's benchmark lacks: {}",
            missing.join("; ")
        ));
    }
    let v = |i: usize| found[i].unwrap_or(0.0);
    Ok(SlapResult {
        avg_s: v(0),
        min_s: v(1),
        max_s: v(2),
        clients: v(3) as u64,
        queries_per_client: v(4) as u64,
    })
}

/// A query file for mariadb-slap from parsed statements: one statement per line, each
/// ended by `;`. An error naming the line of the first statement that holds a `;` (which
/// mariadb-slap would cut in two).
pub fn query_text(statements: &[Statement]) -> Result<String, String> {
    let mut out = String::new();
    for s in statements {
        if s.sql.contains(';') {
            return Err(format!(
                "line {}: mariadb-slap splits statements at every ';', inside strings too; this statement holds one",
                s.line
            ));
        }
        out.push_str(&s.sql);
        out.push_str(";\n");
    }
    Ok(out)
}

/// Runs mariadb-slap on `file` (see [`command`]) and returns what it measured.
/// mariadb-slap is killed (with its process group) when it runs longer than
/// [`DEFAULT_TIMEOUT`], or when `cancel` is set.
pub fn run(
    db: &Db,
    file: &Path,
    connections: usize,
    iterations: u32,
    live: &Arc<Live>,
    cancel: &AtomicBool,
) -> Result<RunRecord, LoadError> {
    if db.dialect.wire() != Wire::Mysql {
        return Err(LoadError::Settings(
            "mysqlslap runs against MariaDB (or MySQL) only".into(),
        ));
    }
    let cmd = command(db, file, connections, iterations);
    live.set_phase(Phase::Measure);
    live.set_measure_start(1);
    let ran = tool::run(
        cmd,
        cancel,
        DEFAULT_TIMEOUT,
        "mariadb-slap",
        "apt-get install mariadb-client",
    );
    live.set_phase(Phase::Done);
    let Finished {
        out,
        err,
        status,
        cpu_s,
    } = ran?;
    let res = check(&out, &err, &status)?;
    let r = record(&res, connections, iterations, cpu_s)?;
    live.set_progress(r.ops, 1 + (r.elapsed_s * 1e9) as u64);
    Ok(r)
}

/// The report of a run that went well; an error from its status, stderr or output.
fn check(out: &str, err: &str, status: &str) -> Result<SlapResult, LoadError> {
    let failed = err
        .lines()
        .map(str::trim)
        .find(|l| l.contains("Error") || l.contains("ERROR") || l.contains("Cannot "));
    if let Some(line) = failed {
        return Err(LoadError::Sql(format!("mariadb-slap failed: {line}")));
    }
    let first_err = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if status != "exit status 0" {
        return Err(LoadError::Sql(
            format!("mariadb-slap failed ({status}) {first_err}")
                .trim()
                .to_string(),
        ));
    }
    parse(out).map_err(|m| LoadError::Sql(format!("{m} {first_err}").trim().to_string()))
}

/// The load engine's record of one average iteration (see the module's doc).
fn record(
    res: &SlapResult,
    connections: usize,
    iterations: u32,
    cpu_s: f64,
) -> Result<RunRecord, LoadError> {
    if res.avg_s <= 0.0 {
        return Err(LoadError::Sql(
            "mariadb-slap measured 0.000 s per iteration: the query file is too short for its millisecond resolution; give it more statements".into(),
        ));
    }
    let ops = res.clients * res.queries_per_client;
    let elapsed_s = res.avg_s;
    let client_cpu_s = cpu_s / f64::from(iterations.max(1));
    let mut r = RunRecord {
        ops,
        elapsed_s,
        ops_per_s: ops as f64 / elapsed_s,
        queries: ops,
        client_cpu_s,
        client_threads: connections,
        ..RunRecord::default()
    };
    r.by_command.insert("query".into(), ops);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    r.client_bound = client_cpu_s >= 0.9 * cores * elapsed_s;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_sqlclient::Dialect;

    /// Captured from mariadb-slap 10.11.19 (Debian 12), concurrency 2, iterations 2.
    const OUT: &str = "Benchmark\n\tAverage number of seconds to run all queries: 0.004 seconds\n\tMinimum number of seconds to run all queries: 0.003 seconds\n\tMaximum number of seconds to run all queries: 0.006 seconds\n\tNumber of clients running queries: 2\n\tAverage number of queries per client: 3\n\n";

    fn db() -> Db {
        Db {
            dialect: Dialect::Mariadb,
            addr: "127.0.0.1:3399".parse().unwrap(),
            socket: Some("/tmp/sb/mysqld.sock".into()),
            user: "bakeoff".into(),
            password: "pw".into(),
            database: "bench".into(),
            via_socket: false,
        }
    }

    #[test]
    fn parses_a_real_report() {
        let p = parse(OUT).unwrap();
        assert_eq!(
            p,
            SlapResult {
                avg_s: 0.004,
                min_s: 0.003,
                max_s: 0.006,
                clients: 2,
                queries_per_client: 3,
            }
        );
        let r = record(&p, 2, 2, 0.01).unwrap();
        assert_eq!((r.ops, r.queries, r.elapsed_s), (6, 6, 0.004));
        assert!((r.ops_per_s - 1500.0).abs() < 1e-9);
        assert_eq!(r.client_cpu_s, 0.005);
    }

    #[test]
    fn missing_or_broken_reports_are_errors() {
        assert_eq!(parse("").unwrap_err(), "mariadb-slap printed no benchmark");
        let cut: String = OUT.lines().take(3).collect::<Vec<_>>().join("\n");
        let e = parse(&cut).unwrap_err();
        assert!(e.contains("Number of clients running queries"), "{e}");
        let bad = OUT.replace("0.004", "x");
        assert!(parse(&bad).unwrap_err().contains("cannot read"));
        let zero = parse(&OUT.replace("0.004", "0.000")).unwrap();
        assert!(record(&zero, 2, 1, 0.0).is_err());
    }

    #[test]
    fn error_lines_fail_the_run_even_with_a_report() {
        let err = "mariadb-slap: Error when connecting to server: 1049 Unknown database 'x'\n";
        let e = check(OUT, err, "exit status 0").unwrap_err().to_string();
        assert!(e.contains("Unknown database"), "{e}");
        let err = "mariadb-slap: Cannot run query UPDATE t SET v = 'a ERROR : You have an error\n";
        assert!(check("", err, "exit status 0").is_err());
        assert!(check(OUT, "", "exit status 1").is_err());
        assert_eq!(check(OUT, "", "exit status 0").unwrap().clients, 2);
    }

    #[test]
    fn command_line_keeps_the_schema_and_picks_the_transport() {
        let args = |db: &Db| -> Vec<String> {
            command(db, Path::new("/tmp/q.sql"), 4, 3)
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let mut db = db();
        let tcp = args(&db);
        assert_eq!(tcp[0], "--no-defaults");
        for want in [
            "--host=127.0.0.1",
            "--port=3399",
            "--user=bakeoff",
            "--password=pw",
            "--create-schema=bench",
            "--no-drop",
            "--query=/tmp/q.sql",
            "--delimiter=;",
            "--concurrency=4",
            "--iterations=3",
        ] {
            assert!(tcp.iter().any(|a| a == want), "{want} missing from {tcp:?}");
        }
        assert!(!tcp.iter().any(|a| a.starts_with("--create=")));
        db.via_socket = true;
        let unix = args(&db);
        assert!(unix.contains(&"--socket=/tmp/sb/mysqld.sock".to_string()));
        assert!(!unix.iter().any(|a| a.starts_with("--host")));
    }

    #[test]
    fn query_text_refuses_statements_with_a_semicolon() {
        let s = |sql: &str, line| Statement {
            sql: sql.into(),
            line,
            session: None,
        };
        let ok = query_text(&[s("SELECT 1", 1), s("UPDATE t SET a = 2", 2)]).unwrap();
        assert_eq!(ok, "SELECT 1;\nUPDATE t SET a = 2;\n");
        let e = query_text(&[s("SELECT 1", 1), s("SELECT 'a;b'", 7)]).unwrap_err();
        assert!(e.starts_with("line 7:"), "{e}");
    }
}
