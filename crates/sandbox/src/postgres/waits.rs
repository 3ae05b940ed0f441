//! PostgreSQL's wait events, sampled from `pg_stat_activity` during the measured window
//! ([`crate::Target::start_sampling`]): PostgreSQL keeps no cumulative count of them,
//! only each backend's wait of the moment. A sampler on its own connection (to the
//! `postgres` database, so that its transactions and statements stay out of the load
//! database's `pg_stat_database` row and pg_stat_statements digests) looks every
//! [`INTERVAL`] and counts each active backend of the load (client backends and their
//! parallel workers; not its own connection, not a background process) by
//! `wait_event_type` and `wait_event`: `waits.<Type>:<Event>.samples`, and
//! `waits.CPU.samples` for an active backend waiting on nothing (on CPU, or in a wait
//! PostgreSQL does not instrument). `waits.ticks` is how many looks the sampler took.
//! A sample times the interval is the time backends spent so: divided by the load's
//! operations, backend-time per operation in each state. The look is prepared once on
//! the connection (`PREPARE`, then `EXECUTE` at each look): about 50 us of server CPU a
//! look here, against about 500 us planned afresh (bench/RESULTS.md).
//!
//! A fault (the login refused, the view or a column missing, the connection lost) makes
//! the whole `waits` group unavailable for the run with the reason: partial counts would
//! read as a change.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use bakeoff_sqlclient::{Client, Db, Dialect, Rows};
use tokio::sync::oneshot;
use tokio::time::MissedTickBehavior;

use crate::sqldata::SqlServer;
use crate::stats::{number, Sampling, Snapshot};

/// How often the sampler looks: 10 times a second.
pub const INTERVAL: Duration = Duration::from_millis(100);
/// The group its counters are unavailable under (`waits.*`).
pub(crate) const GROUP: &str = "waits";
/// The database the sampler logs in to: not the load's.
const DATABASE: &str = "postgres";

/// One look: the active backends of the load by what they wait on. `backend_type` is
/// from PostgreSQL 10 ([`SAMPLE_96`] before: 9.6 shows client backends only).
const SAMPLE: &str = "SELECT wait_event_type, wait_event, count(*) FROM pg_stat_activity \
     WHERE state = 'active' AND pid <> pg_backend_pid() \
     AND backend_type IN ('client backend', 'parallel worker') GROUP BY 1, 2";
const SAMPLE_96: &str = "SELECT wait_event_type, wait_event, count(*) FROM pg_stat_activity \
     WHERE state = 'active' AND pid <> pg_backend_pid() GROUP BY 1, 2";

/// The name the look is prepared under on the sampler's connection.
const LOOK: &str = "bakeoff_waits";

/// Starts the sampler against the server at `addr`, logged in as the sandbox's login.
pub(crate) fn start(sql: &SqlServer, addr: SocketAddr) -> Sampling {
    let db = sql.login.as_ref().map(|login| Db {
        dialect: Dialect::Postgres,
        addr,
        socket: None,
        user: login.user.clone(),
        password: login.password.clone(),
        database: DATABASE.to_string(),
        via_socket: false,
    });
    Sampling::spawn("bakeoff-pg-waits", GROUP, move |stop| match db {
        Some(db) => sample(db, stop),
        None => Snapshot::unavailable(GROUP, "the sandbox has no login to sample with"),
    })
}

/// The sampler's thread: logs in, then looks every [`INTERVAL`] until told to stop.
fn sample(db: Db, mut stop: oneshot::Receiver<()>) -> Snapshot {
    let rt = match bakeoff_sqlclient::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return Snapshot::unavailable(GROUP, format!("cannot start the sampler: {e}")),
    };
    rt.block_on(async move {
        let mut counts = Counts::default();
        let login = tokio::select! {
            biased;
            _ = &mut stop => return Snapshot::unavailable(
                GROUP,
                "the window ended before the sampler had logged in",
            ),
            c = Client::connect_within(&db, crate::settings::READ_TIMEOUT) => c,
        };
        let mut client = match login {
            Ok(c) => c,
            Err(e) => {
                return Snapshot::unavailable(
                    GROUP,
                    format!("the wait-event sampler cannot log in: {}", e.message),
                )
            }
        };
        // Prepared once: planning the view's joins at every look would cost ten times
        // what running it does (bench/pg-wait-sampler.sh).
        let mut prepared = client.simple(&format!("PREPARE {LOOK} AS {SAMPLE}")).await;
        if prepared
            .as_ref()
            .is_err_and(|e| e.message.contains("backend_type"))
        {
            prepared = client
                .simple(&format!("PREPARE {LOOK} AS {SAMPLE_96}"))
                .await;
        }
        if let Err(e) = prepared {
            return Snapshot::unavailable(GROUP, fault(&e.message));
        }
        let query = format!("EXECUTE {LOOK}");
        let mut ticks = tokio::time::interval(INTERVAL);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                _ = &mut stop => break,
                _ = ticks.tick() => {}
            }
            let answer = tokio::select! {
                biased;
                _ = &mut stop => break,
                a = tokio::time::timeout(crate::settings::READ_TIMEOUT, client.rows(&query)) => a,
            };
            match answer {
                Ok(Ok(rows)) => counts.add(&rows),
                Ok(Err(e)) => return Snapshot::unavailable(GROUP, fault(&e.message)),
                Err(_) => {
                    return Snapshot::unavailable(
                        GROUP,
                        format!(
                            "a look at pg_stat_activity took over {} s: the samples would not \
                             be at the fixed rate",
                            crate::settings::READ_TIMEOUT.as_secs()
                        ),
                    )
                }
            }
        }
        // Logged out, so that the server's log holds no lost connection.
        let _ = tokio::time::timeout(INTERVAL, client.close()).await;
        counts.snapshot()
    })
}

/// Why sampling stopped, in words.
fn fault(error: &str) -> String {
    if error.contains("wait_event") && error.contains("does not exist") {
        format!("this version has no wait events in pg_stat_activity (9.6 and later): {error}")
    } else {
        format!("sampling pg_stat_activity failed: {error}")
    }
}

/// What the sampler counted.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    ticks: u64,
    samples: BTreeMap<String, f64>,
}

impl Counts {
    /// One look's rows (type, event, backends).
    fn add(&mut self, rows: &Rows) {
        self.ticks += 1;
        for row in &rows.rows {
            let cell = |i: usize| row.get(i).and_then(|v| v.as_deref());
            let Some(n) = cell(2).and_then(number) else {
                continue;
            };
            *self.samples.entry(counter(cell(0), cell(1))).or_default() += n;
        }
    }

    fn snapshot(self) -> Snapshot {
        let mut s = Snapshot {
            counters: self.samples,
            ..Snapshot::default()
        };
        s.counters.retain(|_, v| *v > 0.0);
        if self.ticks > 0 {
            s.counters
                .insert(format!("{GROUP}.ticks"), self.ticks as f64);
        }
        s
    }
}

/// The counter of a wait (`waits.LWLock:WALWrite.samples`); no wait is on CPU.
fn counter(kind: Option<&str>, event: Option<&str>) -> String {
    match (kind.filter(|k| !k.is_empty()), event) {
        (None, _) => format!("{GROUP}.CPU.samples"),
        (Some(k), e) => format!("{GROUP}.{k}:{}.samples", e.unwrap_or("")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[(Option<&str>, Option<&str>, &str)]) -> Rows {
        Rows {
            columns: vec![
                "wait_event_type".into(),
                "wait_event".into(),
                "count".into(),
            ],
            rows: r
                .iter()
                .map(|(a, b, n)| {
                    vec![
                        a.map(str::to_string),
                        b.map(str::to_string),
                        Some(n.to_string()),
                    ]
                })
                .collect(),
            affected: 0,
        }
    }

    #[test]
    fn looks_count_backends_by_wait_and_no_wait_is_cpu() {
        let mut c = Counts::default();
        c.add(&rows(&[
            (None, None, "2"),
            (Some("LWLock"), Some("WALWrite"), "1"),
        ]));
        c.add(&rows(&[
            (Some("IO"), Some("WALSync"), "3"),
            (None, None, "1"),
        ]));
        c.add(&rows(&[]));
        let s = c.snapshot();
        assert_eq!(s.counters["waits.CPU.samples"], 3.0);
        assert_eq!(s.counters["waits.LWLock:WALWrite.samples"], 1.0);
        assert_eq!(s.counters["waits.IO:WALSync.samples"], 3.0);
        assert_eq!(s.counters["waits.ticks"], 3.0, "an idle look is a look");
        assert!(s.unavailable.is_empty());
    }

    #[test]
    fn a_count_that_is_not_a_number_is_left_out() {
        let mut c = Counts::default();
        c.add(&rows(&[(Some("Lock"), Some("tuple"), "x")]));
        let s = c.snapshot();
        assert_eq!(s.counters.len(), 1, "{s:?}");
        assert_eq!(s.counters["waits.ticks"], 1.0);
    }

    #[test]
    fn a_version_without_wait_events_says_so() {
        assert!(fault("column \"wait_event_type\" does not exist").contains("9.6"));
        assert!(fault("terminating connection").starts_with("sampling pg_stat_activity failed"));
    }
}
