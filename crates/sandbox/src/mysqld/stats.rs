//! MariaDB's and MySQL's own statistics ([`crate::Target::read_stats`]): `SHOW GLOBAL
//! STATUS` always (counters only; a restart shows as `Uptime` going back), and where
//! performance_schema is on (MySQL's default from 5.6; `server_stats = "full"` turns it
//! on in the sandbox) the statement digests of `events_statements_summary_by_digest`
//! (this database's) and the wait summaries of `events_waits_summary_global_by_event_name`
//! as counters `waits.<event>.count` and `waits.<event>.us`.

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
    let answers =
        match crate::settings::sql_rows(sql, dialect, addr, &[STATUS, ENABLED, DIGESTS, WAITS]) {
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
    match answers.next() {
        Some(Ok(rows)) => {
            snap.add_statements(rows.rows.iter().map(|r| r.as_slice()));
            let digested: f64 = snap.statements.values().map(|s| s.calls).sum();
            let prepared = snap
                .counters
                .get("Com_stmt_execute")
                .copied()
                .unwrap_or(0.0);
            if prepared > digested {
                // MariaDB's performance_schema digests text statements only: the load's
                // prepared ones (the binary protocol) are not among them.
                snap.unavailable.insert(
                    DIGEST_GROUP.into(),
                    "this server keeps no digest for prepared statements (the binary \
                     protocol bakeoff's load uses): its digests count fewer statements \
                     than Com_stmt_execute"
                        .into(),
                );
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
    match answers.next() {
        Some(Ok(rows)) => add_waits(&mut snap, &rows),
        Some(Err(e)) => {
            snap.unavailable
                .insert(WAIT_GROUP.into(), format!("{WAIT_TABLE}: {e}"));
        }
        None => {}
    }
    snap
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
