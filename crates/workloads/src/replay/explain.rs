//! The plans of a replay's heaviest statement classes: `EXPLAIN <sample>` for the classes
//! that took the most total time, on one fresh connection after the run.
//!
//! Only statements a plan says something about are explained: SELECT (also `WITH ...`
//! and a parenthesized SELECT), UPDATE, DELETE, and INSERT or REPLACE ... SELECT; DDL,
//! transaction control, SET and the rest are skipped. Plain `EXPLAIN` only, never
//! `EXPLAIN ANALYZE`, which would execute the statement (and its writes).
//!
//! The plan is the EXPLAIN's rows as text lines: PostgreSQL's single `QUERY PLAN` column
//! line by line; a tabular result (MariaDB's id, select_type, table, type, ...) one row per
//! line as `column=value` pairs (NULL as `NULL`). An EXPLAIN that fails gives the server's
//! error as the plan: a sample with session state it depends on (temporary tables,
//! variables) or with bind parameters of the log (`$1`) cannot be explained on its own.

use super::ClassStats;
use bakeoff_sqlclient::Db;
use bakeoff_sqlclient::{Client, Rows};
use std::time::Duration;

/// The longest an EXPLAIN (or the connect) may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The plan of one statement class.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explain {
    /// The class's id (as in `ClassStats::class`).
    pub class: String,
    pub fingerprint: String,
    /// The plan as text lines, or why there is none.
    pub plan: String,
}

/// Whether a statement of fingerprint `fp` (lowercased, comments dropped) is one EXPLAIN
/// is asked of.
pub fn explainable(fp: &str) -> bool {
    let fp = fp.trim_start_matches(|c: char| c == '(' || c.is_whitespace());
    let first = fp.split_whitespace().next().unwrap_or("");
    match first {
        "select" | "with" | "update" | "delete" => true,
        "insert" | "replace" => fp
            .split_whitespace()
            .any(|w| w == "select" || w == "(select"),
        _ => false,
    }
}

/// The plans of the `top` classes with the most total time among `classes` whose
/// statements can be explained (see the module's doc), the most total time first.
pub fn explain(db: &Db, classes: &[ClassStats], top: usize) -> Vec<Explain> {
    let mut chosen: Vec<&ClassStats> = classes
        .iter()
        .filter(|c| explainable(&c.fingerprint))
        .collect();
    chosen.sort_by(|a, b| b.total_s.total_cmp(&a.total_s));
    chosen.truncate(top);
    if chosen.is_empty() {
        return Vec::new();
    }
    let plans = match bakeoff_sqlclient::driver::runtime() {
        Ok(rt) => rt.block_on(plans(db, &chosen)),
        Err(e) => vec![format!("cannot start a client runtime: {e}"); chosen.len()],
    };
    chosen
        .iter()
        .zip(plans)
        .map(|(c, plan)| Explain {
            class: c.class.clone(),
            fingerprint: c.fingerprint.clone(),
            plan,
        })
        .collect()
}

/// The plan text of each class's sample, in order, over one connection (opened again
/// after an EXPLAIN that timed out).
async fn plans(db: &Db, chosen: &[&ClassStats]) -> Vec<String> {
    let mut out = Vec::with_capacity(chosen.len());
    let mut client: Option<Client> = None;
    for c in chosen {
        if client.is_none() {
            match connect(db).await {
                Ok(opened) => client = Some(opened),
                Err(e) => {
                    out.push(e);
                    continue;
                }
            }
        }
        let Some(conn) = client.as_mut() else {
            continue;
        };
        let sql = db.dialect.sql().explain(&c.sample);
        match tokio::time::timeout(TIMEOUT, conn.rows(&sql)).await {
            Ok(Ok(rows)) => out.push(render(&rows)),
            Ok(Err(e)) => out.push(format!("EXPLAIN failed: {} ({})", e.message, e.kind)),
            Err(_) => {
                out.push(format!("EXPLAIN did not answer in {} s", TIMEOUT.as_secs()));
                client = None;
            }
        }
    }
    if let Some(c) = client {
        c.close().await;
    }
    out
}

async fn connect(db: &Db) -> Result<Client, String> {
    match tokio::time::timeout(TIMEOUT, Client::connect(db, 0, false)).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(format!(
            "cannot connect to explain: {} ({})",
            e.message, e.kind
        )),
        Err(_) => Err(format!(
            "cannot connect to explain in {} s",
            TIMEOUT.as_secs()
        )),
    }
}

/// EXPLAIN's rows as text: one column's values line by line, several columns as
/// `column=value` pairs, one row per line.
fn render(rows: &Rows) -> String {
    let value = |v: &Option<String>| v.clone().unwrap_or_else(|| "NULL".into());
    let lines: Vec<String> = rows
        .rows
        .iter()
        .map(|row| {
            if rows.columns.len() <= 1 {
                return row.iter().map(value).collect::<Vec<_>>().join(" ");
            }
            rows.columns
                .iter()
                .zip(row)
                .map(|(col, v)| format!("{col}={}", value(v)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fingerprint;

    #[test]
    fn only_plannable_statements_are_explained() {
        for yes in [
            "SELECT 1",
            "  (SELECT a FROM t) UNION (SELECT b FROM u)",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "UPDATE t SET a = 1 WHERE id = 2",
            "DELETE FROM t WHERE id = 3",
            "INSERT INTO t SELECT * FROM u",
            "INSERT INTO t (a) (SELECT a FROM u)",
            "/* app */ select c from t",
        ] {
            assert!(explainable(&fingerprint(yes)), "{yes}");
        }
        for no in [
            "INSERT INTO t VALUES (1, 'select')",
            "CREATE TABLE t (id INT)",
            "DROP TABLE t",
            "BEGIN",
            "COMMIT",
            "SET autocommit = 0",
            "EXPLAIN ANALYZE SELECT 1",
            "SHOW TABLES",
            "",
        ] {
            assert!(!explainable(&fingerprint(no)), "{no}");
        }
    }

    #[test]
    fn tabular_rows_become_pairs_and_single_columns_lines() {
        let my = Rows {
            columns: vec!["id".into(), "table".into(), "key".into()],
            rows: vec![
                vec![Some("1".into()), Some("t".into()), None],
                vec![Some("2".into()), Some("u".into()), Some("PRIMARY".into())],
            ],
            affected: 0,
        };
        assert_eq!(
            render(&my),
            "id=1 table=t key=NULL\nid=2 table=u key=PRIMARY"
        );
        let pg = Rows {
            columns: vec!["QUERY PLAN".into()],
            rows: vec![
                vec![Some(
                    "Seq Scan on t  (cost=0.00..1.01 rows=1 width=4)".into(),
                )],
                vec![Some("  Filter: (id = 1)".into())],
            ],
            affected: 0,
        };
        assert_eq!(
            render(&pg),
            "Seq Scan on t  (cost=0.00..1.01 rows=1 width=4)\n  Filter: (id = 1)"
        );
        assert_eq!(render(&Rows::default()), "");
    }
}
