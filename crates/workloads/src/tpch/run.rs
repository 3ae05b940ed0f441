//! One run: the power run (every chosen query once, one connection, in the
//! specification's stream-00 order) or, with `streams = N`, a throughput run (N
//! connections at once, each running every chosen query once in its own order: stream
//! `s` in the specification's stream `s mod 41` order, stream 0 the power order). Each
//! query is timed from sending it to its last row; one that passes `timeout` is stopped
//! by the server's statement timeout (SQLite's: bakeoff-sqlited's `SET
//! statement_timeout`) and recorded as timed out, never as a failure. Plans: `EXPLAIN` of each query with its cost figures stripped.

use super::queries::{self, STREAM_ORDERS};
use bakeoff_sqlclient::{Client, Db, Rows, Setting};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one run asks.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub scale: f64,
    /// The queries chosen (1..=22), each once per stream.
    pub queries: Vec<u8>,
    pub streams: usize,
    pub validation: bool,
    pub timeout: Duration,
}

/// One query's execution.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    pub query: u8,
    pub stream: usize,
    pub seconds: f64,
    pub rows: u64,
    pub timed_out: bool,
    /// Its rows, when asked to keep them.
    pub answer: Option<Rows>,
}

/// The queries of stream `s` in order: the specification's order for stream `s mod 41`
/// (appendix A; stream 0 is the power order), only the chosen ones.
pub fn order(chosen: &[u8], s: usize) -> Vec<u8> {
    STREAM_ORDERS[s % STREAM_ORDERS.len()]
        .iter()
        .copied()
        .filter(|q| chosen.contains(q))
        .collect()
}

/// Runs the spec's streams against `db`; parameters drawn from `seed` (the same for
/// every variant of a round). Err: a query failed (not a timeout) or the login did.
pub fn run(
    db: &Db,
    spec: &RunSpec,
    seed: u64,
    keep_answers: bool,
    cancel: &AtomicBool,
) -> Result<(Vec<Executed>, f64), String> {
    let started = Instant::now();
    let per_stream: Vec<Result<Vec<Executed>, String>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..spec.streams)
            .map(|s| sc.spawn(move || stream(db, spec, s, seed, keep_answers, cancel)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a stream panicked".into())))
            .collect()
    });
    let wall = started.elapsed().as_secs_f64();
    let mut all = Vec::new();
    for r in per_stream {
        all.extend(r?);
    }
    Ok((all, wall))
}

/// A connection with the server's statement timeout set where it has one.
async fn connect(db: &Db, timeout: Duration) -> Result<Client, String> {
    let mut c = Client::connect(db, 0, false)
        .await
        .map_err(|e| format!("login failed: {}", e.message))?;
    if let Some(s) = db
        .dialect
        .sql()
        .session_setting(Setting::StatementTimeoutMs(timeout.as_millis() as u64))
    {
        c.simple(&s)
            .await
            .map_err(|e| format!("{s} failed: {}", e.message))?;
    }
    Ok(c)
}

/// One stream on its own thread and connection.
fn stream(
    db: &Db,
    spec: &RunSpec,
    s: usize,
    seed: u64,
    keep: bool,
    cancel: &AtomicBool,
) -> Result<Vec<Executed>, String> {
    let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
    let sql = db.dialect.sql();
    rt.block_on(async {
        let mut c = Some(connect(db, spec.timeout).await?);
        let mut out = Vec::new();
        for q in order(&spec.queries, s) {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            let text = queries::render(
                q,
                &queries::params(q, spec.scale, spec.validation, seed.wrapping_add(s as u64)),
                sql,
            );
            let conn = match c.as_mut() {
                Some(conn) => conn,
                None => c.insert(connect(db, spec.timeout).await?),
            };
            let started = Instant::now();
            // The client waits a little longer than the server's own timeout.
            let got =
                tokio::time::timeout(spec.timeout + Duration::from_secs(2), conn.rows(&text)).await;
            let seconds = started.elapsed().as_secs_f64();
            let late = seconds >= spec.timeout.as_secs_f64() * 0.98;
            let mut e = Executed {
                query: q,
                stream: s,
                seconds,
                rows: 0,
                timed_out: false,
                answer: None,
            };
            match got {
                Ok(Ok(rows)) => {
                    e.rows = rows.rows.len() as u64;
                    e.answer = keep.then_some(rows);
                }
                Ok(Err(_)) | Err(_) if late => {
                    e.timed_out = true;
                    e.seconds = spec.timeout.as_secs_f64();
                    // The connection may still be busy with it: a fresh one for the next.
                    c = None;
                }
                Ok(Err(err)) => return Err(format!("Q{q} failed: {}", err.message)),
                Err(_) => unreachable!("a client timeout comes after the limit"),
            }
            out.push(e);
        }
        if let Some(conn) = c {
            conn.close().await;
        }
        Ok(out)
    })
}

/// Each chosen query's plan (`EXPLAIN` in the server's dialect) at the run's parameters,
/// cost figures stripped, as text.
pub fn plans(db: &Db, spec: &RunSpec, seed: u64) -> Result<Vec<(u8, String)>, String> {
    let rt = bakeoff_sqlclient::driver::runtime().map_err(|e| e.to_string())?;
    let sql = db.dialect.sql();
    rt.block_on(async {
        let mut c = connect(db, spec.timeout).await?;
        let mut out = Vec::new();
        for &q in &spec.queries {
            let text = queries::render(
                q,
                &queries::params(q, spec.scale, spec.validation, seed),
                sql,
            );
            match c.rows(&sql.explain(&text)).await {
                Ok(rows) => out.push((q, plan_text(&rows))),
                Err(e) => out.push((q, format!("(no plan: {})", e.message))),
            }
        }
        c.close().await;
        Ok(out)
    })
}

/// Columns of an `EXPLAIN` that hold estimates, not the plan's shape: MySQL's and
/// MariaDB's row estimates and filtered shares, SQLite's node ids.
const ESTIMATES: [&str; 6] = ["rows", "filtered", "cost", "id", "parent", "notused"];

/// A plan's rows as text, estimate columns dropped and PostgreSQL's `(cost=.. rows=..
/// width=..)` cut from each line.
pub fn plan_text(rows: &Rows) -> String {
    let keep: Vec<usize> = (0..rows.columns.len())
        .filter(|&i| !ESTIMATES.contains(&rows.columns[i].to_ascii_lowercase().as_str()))
        .collect();
    rows.rows
        .iter()
        .map(|r| {
            let cells: Vec<String> = keep
                .iter()
                .map(|&i| strip_costs(r.get(i).cloned().flatten().as_deref().unwrap_or("NULL")))
                .collect();
            cells.join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without parenthesized `(cost=...)` groups.
fn strip_costs(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(at) = out.find("(cost=") {
        let end = out[at..].find(')').map_or(out.len(), |e| at + e + 1);
        let before = out[..at].trim_end().to_string();
        out = format!("{before}{}", &out[end..]);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_run_every_chosen_query_once_in_the_specifications_order() {
        let all: Vec<u8> = (1..=22).collect();
        // Stream 00 of appendix A is the power order.
        assert_eq!(
            order(&all, 0),
            vec![14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12]
        );
        assert_eq!(order(&all, 0), crate::tpch::queries::POWER_ORDER.to_vec());
        // Stream 01 and stream 40, the table's second and last rows.
        assert_eq!(
            order(&all, 1),
            vec![21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4]
        );
        assert_eq!(
            order(&all, 40),
            vec![13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19]
        );
        // Past stream 40 the table starts again.
        assert_eq!(order(&all, 41), order(&all, 0));
        assert_eq!(order(&all, 43), order(&all, 2));
        // Every row runs each query exactly once.
        for s in 0..41 {
            let mut sorted = order(&all, s);
            sorted.sort_unstable();
            assert_eq!(sorted, all, "stream {s}");
        }
        // `queries = [...]` keeps the stream's order among the chosen ones.
        assert_eq!(order(&[1, 6, 14], 0), vec![14, 6, 1]);
        assert_eq!(order(&[1, 6, 14], 1), vec![6, 14, 1]);
    }

    #[test]
    fn plans_lose_their_cost_figures() {
        let pg = Rows {
            columns: vec!["QUERY PLAN".into()],
            rows: vec![
                vec![Some("Sort  (cost=10.1..10.2 rows=4 width=8)".into())],
                vec![Some(
                    "  ->  Seq Scan on lineitem  (cost=0.00..1.5 rows=60 width=8)".into(),
                )],
            ],
            affected: 0,
        };
        assert_eq!(plan_text(&pg), "Sort\n  ->  Seq Scan on lineitem");
        let my = Rows {
            columns: vec![
                "id".into(),
                "table".into(),
                "type".into(),
                "rows".into(),
                "filtered".into(),
            ],
            rows: vec![vec![
                Some("1".into()),
                Some("lineitem".into()),
                Some("ALL".into()),
                Some("6001".into()),
                None,
            ]],
            affected: 0,
        };
        assert_eq!(plan_text(&my), "lineitem | ALL");
    }
}
