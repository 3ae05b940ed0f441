//! MariaDB's and MySQL's own statistics ([`crate::Target::read_stats`]): `SHOW GLOBAL
//! STATUS` always (counters only; a restart shows as `Uptime` going back), and where
//! performance_schema is on (MySQL's default from 5.6; `server_stats = "full"` turns it
//! on in the sandbox) the statement digests of `events_statements_summary_by_digest`
//! (this database's) and the wait summaries of `events_waits_summary_global_by_event_name`
//! as counters `waits.<event>.count` and `waits.<event>.us`. Where the digests miss
//! the load's prepared statements (MariaDB, MySQL 8.0.15: the binary protocol is not
//! digested), `prepared_statements_instances` per connection and statement instead
//! (MySQL 5.7+, MariaDB 10.5+), read while the load's connections are still open (the SQL
//! loads close them only after the window's end hooks) and summed by text
//! ([`Snapshot::instances`]).

use std::net::SocketAddr;

use bakeoff_sqlclient::{Dialect, Rows};

use crate::sqldata::SqlServer;
use crate::stats::{Snapshot, StatsLevel};

/// The statements [`read`] runs, in order.
const STATUS: &str = "SHOW GLOBAL STATUS";
const ENABLED: &str = "SELECT @@performance_schema";
/// Digest, normalised text, calls, microseconds (the timers count picoseconds).
const DIGESTS: &str = "SELECT DIGEST, DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT / 1000000 \
     FROM performance_schema.events_statements_summary_by_digest \
     WHERE SCHEMA_NAME = DATABASE() AND DIGEST IS NOT NULL";
/// Instrumented waits that happened (`idle` is a client's think time, not the server's).
const WAITS: &str = "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT / 1000000 \
     FROM performance_schema.events_waits_summary_global_by_event_name \
     WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'";

/// The load's prepared statements (the binary protocol), which neither MariaDB nor MySQL
/// 8.0.15 digest: per connection and statement, its text, executions and microseconds;
/// only connections on this database, never this read's own.
const PREPARED: &str = "SELECT CONCAT(p.OWNER_THREAD_ID, ':', p.STATEMENT_ID), p.SQL_TEXT, \
     p.COUNT_EXECUTE, p.SUM_TIMER_EXECUTE / 1000000 \
     FROM performance_schema.prepared_statements_instances p \
     JOIN performance_schema.threads t ON t.THREAD_ID = p.OWNER_THREAD_ID \
     WHERE t.PROCESSLIST_DB = DATABASE() AND t.PROCESSLIST_ID <> CONNECTION_ID() \
     AND p.OWNER_OBJECT_TYPE IS NULL";
const PREPARED_TABLE: &str = "performance_schema.prepared_statements_instances";

/// The groups the digests and waits are unavailable under.
const DIGEST_GROUP: &str = "events_statements_summary_by_digest";
/// The wait counters are `waits.*`: one side that could not read them is no change.
const WAIT_GROUP: &str = "waits";
const WAIT_TABLE: &str = "performance_schema.events_waits_summary_global_by_event_name";

/// See the module's documentation.
pub(crate) fn read(
    sql: &SqlServer,
    dialect: Dialect,
    addr: SocketAddr,
    level: StatsLevel,
) -> Snapshot {
    let answers = match crate::settings::sql_rows(
        sql,
        dialect,
        addr,
        &[STATUS, ENABLED, DIGESTS, WAITS, PREPARED],
    ) {
        Ok(a) => a,
        Err(e) => return Snapshot::unavailable("all", e),
    };
    let mut answers = answers.into_iter();
    let mut snap = match answers.next() {
        Some(Ok(rows)) => status(&rows),
        Some(Err(e)) => Snapshot::unavailable(STATUS, e),
        None => Snapshot::unavailable(STATUS, "no answer"),
    };
    let enabled = answers.next().and_then(Result::ok).is_some_and(|r| {
        r.rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("ON"))
    });
    if !enabled {
        // Off is the server's default at "basic" (MariaDB, MySQL 5.5): nothing was asked.
        if level == StatsLevel::Full {
            let why = "performance_schema is OFF in this server (an experiment's own \
                       performance_schema = OFF wins over server_stats = \"full\")";
            snap.unavailable.insert(DIGEST_GROUP.into(), why.into());
            snap.unavailable.insert(WAIT_GROUP.into(), why.into());
        }
        return snap;
    }
    let digests = answers.next();
    let waits = answers.next();
    let prepared = answers.next();
    match digests {
        Some(Ok(rows)) => {
            snap.add_statements(rows.rows.iter().map(|r| r.as_slice()));
            let digested: f64 = snap.statements.values().map(|s| s.calls).sum();
            let executed = snap
                .counters
                .get("Com_stmt_execute")
                .copied()
                .unwrap_or(0.0);
            if executed > digested {
                // MariaDB's performance_schema (and MySQL 8.0.15's) digests text
                // statements only: the load's prepared ones (the binary protocol) are
                // counted per statement instead, while their connection lasts.
                add_prepared(&mut snap, prepared);
            }
        }
        Some(Err(e)) => {
            snap.unavailable.insert(
                DIGEST_GROUP.into(),
                format!(
                    "this version keeps no statement digests (MySQL 5.6 and later, \
                     MariaDB 10.0 and later have them): {e}"
                ),
            );
        }
        None => {}
    }
    match waits {
        Some(Ok(rows)) => add_waits(&mut snap, &rows),
        Some(Err(e)) => {
            snap.unavailable
                .insert(WAIT_GROUP.into(), format!("{WAIT_TABLE}: {e}"));
        }
        None => {}
    }
    snap
}

/// The prepared statements' executions per instance ([`Snapshot::instances`]), or why
/// they are unavailable: a version without the table (MySQL before 5.7, MariaDB before
/// 10.5), or one that counts no execution (the consumer `events_statements_current`
/// off).
fn add_prepared(snap: &mut Snapshot, answer: Option<Result<Rows, String>>) {
    let why = match answer {
        Some(Ok(rows)) => {
            for row in &rows.rows {
                let cell = |i: usize| row.get(i).and_then(|v| v.as_deref());
                let (Some(key), Some(calls), Some(us)) = (
                    cell(0),
                    cell(2).and_then(crate::stats::number),
                    cell(3).and_then(crate::stats::number),
                ) else {
                    continue;
                };
                snap.instances.insert(
                    key.to_string(),
                    crate::stats::StatementCount {
                        text: cell(1).unwrap_or_default().to_string(),
                        calls,
                        total_us: us,
                    },
                );
            }
            if snap.instances.is_empty() || snap.instances.values().any(|s| s.calls > 0.0) {
                return;
            }
            snap.instances.clear();
            format!(
                "{PREPARED_TABLE} counts no execution of the load's prepared statements \
                 (the consumer events_statements_current is off)"
            )
        }
        Some(Err(e)) => format!(
            "this version has no {PREPARED_TABLE} (MySQL 5.7 and later, MariaDB 10.5 and \
             later have it): {e}"
        ),
        None => "no answer".to_string(),
    };
    snap.unavailable.insert(
        DIGEST_GROUP.into(),
        format!(
            "this server keeps no digest for prepared statements (the binary protocol \
             bakeoff's load uses: its digests count fewer statements than \
             Com_stmt_execute), and {why}"
        ),
    );
}

/// `SHOW GLOBAL STATUS`'s counters.
fn status(rows: &Rows) -> Snapshot {
    let pairs = crate::settings::pairs(rows);
    let mut snap = Snapshot {
        uptime_s: pairs.get("Uptime").and_then(|u| crate::stats::number(u)),
        ..Snapshot::default()
    };
    snap.add_numbers(
        "",
        pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        super::is_status_gauge,
    );
    snap
}

/// Each wait event's count and time as `waits.<event>.count` and `waits.<event>.us`.
fn add_waits(snap: &mut Snapshot, rows: &Rows) {
    for row in &rows.rows {
        let Some(Some(event)) = row.first() else {
            continue;
        };
        let pairs = [("count", row.get(1)), ("us", row.get(2))]
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?.as_deref()?)));
        snap.add_numbers(&format!("waits.{event}."), pairs, |_| false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(rows: &[(&str, &str, &str, &str)]) -> Rows {
        Rows {
            columns: vec!["K".into(), "T".into(), "N".into(), "US".into()],
            rows: rows
                .iter()
                .map(|(k, t, n, us)| [k, t, n, us].iter().map(|v| Some(v.to_string())).collect())
                .collect(),
            affected: 0,
        }
    }

    #[test]
    fn prepared_statements_are_instances_or_unavailable_with_the_reason() {
        let mut snap = Snapshot::default();
        let rows = prepared(&[
            ("12:1", "SELECT c FROM t WHERE id=?", "40", "80.5"),
            ("13:1", "SELECT c FROM t WHERE id=?", "2", "4.0"),
        ]);
        add_prepared(&mut snap, Some(Ok(rows)));
        assert_eq!(snap.instances.len(), 2);
        assert_eq!(snap.instances["12:1"].calls, 40.0);
        assert_eq!(snap.instances["12:1"].total_us, 80.5);
        assert!(snap.unavailable.is_empty());

        // Rows, but no execution counted: the consumer is off.
        let mut snap = Snapshot::default();
        add_prepared(
            &mut snap,
            Some(Ok(prepared(&[("12:1", "SELECT 1", "0", "0")]))),
        );
        assert!(snap.instances.is_empty());
        assert!(snap.unavailable[DIGEST_GROUP].contains("events_statements_current"));

        // A version without the table.
        let mut snap = Snapshot::default();
        add_prepared(
            &mut snap,
            Some(Err("Table doesn't exist (error 1146)".into())),
        );
        let why = &snap.unavailable[DIGEST_GROUP];
        assert!(why.contains("no digest for prepared statements"), "{why}");
        assert!(why.contains("MariaDB 10.5"), "{why}");
    }

    #[test]
    fn waits_are_counters_by_event() {
        let rows = Rows {
            columns: vec!["EVENT_NAME".into(), "COUNT_STAR".into(), "T".into()],
            rows: vec![
                vec![
                    Some("wait/io/file/innodb/innodb_log_file".into()),
                    Some("12".into()),
                    Some("345.5000".into()),
                ],
                vec![None, Some("1".into()), Some("1".into())],
            ],
            affected: 0,
        };
        let mut snap = Snapshot::default();
        add_waits(&mut snap, &rows);
        assert_eq!(
            snap.counters["waits.wait/io/file/innodb/innodb_log_file.count"],
            12.0
        );
        assert_eq!(
            snap.counters["waits.wait/io/file/innodb/innodb_log_file.us"],
            345.5
        );
        assert_eq!(snap.counters.len(), 2);
    }
}
