//! The server's own statistics around a measured window ([`Target::read_stats`], each
//! target's reader in its own module): what one read holds ([`Snapshot`]: counters by
//! name, what could not be read and why), how much of them a plan asks for
//! ([`StatsLevel`]), and the delta of two reads ([`delta`]): only counters that moved
//! forwards; one that went backwards (a wrap, a reset) or a server that restarted between
//! the reads is marked unavailable with the reason, never a negative delta.
//!
//! A statistic that has no cumulative counter (PostgreSQL's wait events) is sampled
//! during the window instead ([`Sampling`], started by [`Target::start_sampling`]): its
//! counts are the window's own, merged into the run's deltas.
//!
//! [`Target::read_stats`]: crate::Target::read_stats
//! [`Target::start_sampling`]: crate::Target::start_sampling

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `[plan] server_stats`: how much of the server's own statistics each run reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StatsLevel {
    /// Nothing read.
    Off,
    /// What costs nothing measurable: the server's global counters (PostgreSQL's
    /// `pg_stat_database`, `pg_stat_bgwriter`, `pg_stat_wal`; `SHOW GLOBAL STATUS`;
    /// Redis's `INFO stats` and `INFO commandstats`; memcached's `stats`), read twice
    /// per run outside the measured window, and PostgreSQL's wait events sampled
    /// through it (a prepared look every 100 ms, about 0.05% of a core).
    #[default]
    Basic,
    /// Basic, plus what the server counts only when asked (memcached's `stats slabs`;
    /// PostgreSQL's `pg_stat_io` where the version has it), and the statement digests
    /// whose bookkeeping costs the server throughput: PostgreSQL's pg_stat_statements
    /// (loaded by bakeoff into the sandbox's server), MariaDB's and MySQL's
    /// performance_schema (turned on in the sandbox); SQLite's statement counters
    /// (bakeoff-sqlited's `--stmt-stats`).
    Full,
}

impl StatsLevel {
    /// Whether anything is read.
    pub fn reads(self) -> bool {
        self != StatsLevel::Off
    }

    /// As the experiment file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            StatsLevel::Off => "off",
            StatsLevel::Basic => "basic",
            StatsLevel::Full => "full",
        }
    }
}

/// One read of a server's statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Cumulative counters by name (gauges and texts left out by the reader).
    pub counters: BTreeMap<String, f64>,
    /// A group of statistics that could not be read (`"pg_stat_wal"`, `"stats"`) and why.
    pub unavailable: BTreeMap<String, String>,
    /// What names this start of the server (a pid and start time, a run id): two reads
    /// with different identities are of two starts, and no delta is taken.
    pub identity: Option<String>,
    /// Seconds since the server started, where it says and no identity does: less in
    /// the after-read than in the before-read means a restart.
    pub uptime_s: Option<f64>,
    /// The server's statement digests (pg_stat_statements, performance_schema's
    /// `events_statements_summary_by_digest`), by digest: cumulative calls and time.
    pub statements: BTreeMap<String, StatementCount>,
    /// Statements the server counts per instance, whose figures go with the connection
    /// that made them (MySQL's and MariaDB's prepared statements in
    /// `prepared_statements_instances`), by an instance key (connection and statement):
    /// taken as deltas per instance and summed by text ([`instance_digest`]).
    pub instances: BTreeMap<String, StatementCount>,
}

/// The digest a run's statement gets from instances of text `text`: `prepared:` and a
/// hash of the text (the servers give these statements no digest of their own).
pub fn instance_digest(text: &str) -> String {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("prepared:{h:016x}")
}

/// One statement digest's cumulative figures as the server keeps them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatementCount {
    /// The server's normalised text (constants as `$1` or `?`).
    pub text: String,
    pub calls: f64,
    /// Time spent executing it, in microseconds.
    pub total_us: f64,
}

/// One statement digest over a window: calls and time in it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatementDelta {
    pub digest: String,
    pub text: String,
    pub calls: f64,
    pub total_us: f64,
}

impl Snapshot {
    /// A snapshot where `group` could not be read because of `why`.
    pub fn unavailable(group: &str, why: impl Into<String>) -> Snapshot {
        let mut s = Snapshot::default();
        s.unavailable.insert(group.to_string(), why.into());
        s
    }

    /// Each numeric value of `pairs` as the counter `prefix + name`, except those
    /// `is_gauge` names (a value that is not a number is left out).
    pub fn add_numbers<'a>(
        &mut self,
        prefix: &str,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        is_gauge: impl Fn(&str) -> bool,
    ) {
        for (k, v) in pairs {
            if is_gauge(k) {
                continue;
            }
            if let Some(x) = number(v) {
                self.counters.insert(format!("{prefix}{k}"), x);
            }
        }
    }
}

impl Snapshot {
    /// Statement digests from rows of (digest, text, calls, microseconds); rows that
    /// share a digest (another user, another schema) are summed; a row without a digest
    /// (performance_schema's overflow row) or a number is left out.
    pub fn add_statements<'a>(&mut self, rows: impl IntoIterator<Item = &'a [Option<String>]>) {
        for row in rows {
            let cell = |i: usize| row.get(i).and_then(|v| v.as_deref());
            let (Some(digest), Some(calls), Some(us)) = (
                cell(0).filter(|d| !d.is_empty()),
                cell(2).and_then(number),
                cell(3).and_then(number),
            ) else {
                continue;
            };
            let e = self
                .statements
                .entry(digest.to_string())
                .or_insert_with(|| StatementCount {
                    text: cell(1).unwrap_or_default().to_string(),
                    ..StatementCount::default()
                });
            e.calls += calls;
            e.total_us += us;
        }
    }
}

/// A sampler running on its own thread during the measured window
/// ([`crate::Target::start_sampling`]): [`Sampling::finish`] stops it and returns what it
/// counted as a [`Snapshot`] of window counts (not cumulative: taken as they are), with
/// what could not be sampled and why (a fault never fails the run).
pub struct Sampling {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The thread, or why it could not start.
    running: Option<Result<std::thread::JoinHandle<Snapshot>, String>>,
    /// The group its counts are unavailable under, should the thread fail.
    group: &'static str,
}

impl Sampling {
    /// Runs `body` on a thread named `name`; `body` samples until its receiver is
    /// told to stop (or its sender is dropped) and returns its counts, `group` being
    /// what they are unavailable under should the thread itself fail.
    pub fn spawn(
        name: &str,
        group: &'static str,
        body: impl FnOnce(tokio::sync::oneshot::Receiver<()>) -> Snapshot + Send + 'static,
    ) -> Sampling {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let running = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || body(rx))
            .map_err(|e| format!("cannot start the sampler's thread: {e}"));
        Sampling {
            stop: Some(tx),
            running: Some(running),
            group,
        }
    }

    /// Stops the sampler and returns its counts.
    pub fn finish(mut self) -> Snapshot {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.running.take() {
            Some(Ok(h)) => h.join().unwrap_or_else(|_| {
                Snapshot::unavailable(self.group, "the sampler's thread panicked")
            }),
            Some(Err(why)) => Snapshot::unavailable(self.group, why),
            None => Snapshot::default(),
        }
    }
}

impl Drop for Sampling {
    /// Told to stop, not waited for.
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// A finite number written plainly (`12`, `0.5`); None for text, timestamps, `inf`.
pub fn number(v: &str) -> Option<f64> {
    let v = v.trim();
    if v.is_empty()
        || !v
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'e' || b == b'+')
        || !v.bytes().any(|b| b.is_ascii_digit())
    {
        return None;
    }
    v.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// What a run keeps of two reads: the counters that moved (deltas, never negative) and
/// what is unavailable for this run with the reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delta {
    pub counters: BTreeMap<String, f64>,
    pub unavailable: BTreeMap<String, String>,
    /// The statements called in the window, by digest.
    pub statements: Vec<StatementDelta>,
}

/// The delta from `before` to `after`. Counters that did not move are left out; one
/// the before-read did not have counts from 0 (made at its first event); one that went
/// backwards is unavailable ("went backwards: a counter that wrapped or was
/// reset"); a different identity makes everything unavailable (the server restarted);
/// a group unavailable on either side is unavailable.
pub fn delta(before: &Snapshot, after: &Snapshot) -> Delta {
    let mut d = Delta::default();
    for (g, why) in before.unavailable.iter().chain(&after.unavailable) {
        d.unavailable
            .entry(g.clone())
            .or_insert_with(|| why.clone());
    }
    let new_identity =
        before.identity.is_some() && after.identity.is_some() && before.identity != after.identity;
    let uptime_back = matches!((before.uptime_s, after.uptime_s), (Some(b), Some(a)) if a < b);
    if new_identity || uptime_back {
        d.unavailable.insert(
            "all".into(),
            "the server restarted between the reads (its identity changed); no delta taken".into(),
        );
        return d;
    }
    for (name, a) in &after.counters {
        // A counter the server makes at its first event (Redis's `cmdstat_get`, a
        // memcached slab class) counts from 0.
        let b = before.counters.get(name).unwrap_or(&0.0);
        if a < b {
            d.unavailable.insert(
                name.clone(),
                format!("went backwards ({b} to {a}): a counter that wrapped or was reset"),
            );
        } else if a > b {
            d.counters.insert(name.clone(), a - b);
        }
    }
    d.statements = statement_deltas(before, after, &mut d.unavailable);
    d.statements
        .extend(instance_deltas(before, after, &mut d.unavailable));
    d
}

/// The statements counted per instance ([`Snapshot::instances`]) between the reads,
/// summed by text: an instance the before-read did not have counts from 0 (prepared in
/// the window, or by a connection opened in it). A text of which an instance the
/// before-read had is gone from the after-read (its connection closed in the window,
/// and its executions with it) is left out and marked unavailable as
/// `statements.<digest>`, never undercounted.
fn instance_deltas(
    before: &Snapshot,
    after: &Snapshot,
    unavailable: &mut BTreeMap<String, String>,
) -> Vec<StatementDelta> {
    let gone: std::collections::BTreeSet<&str> = before
        .instances
        .iter()
        .filter(|(k, _)| !after.instances.contains_key(*k))
        .map(|(_, b)| b.text.as_str())
        .collect();
    let zero = StatementCount::default();
    let mut by_text: BTreeMap<&str, StatementDelta> = BTreeMap::new();
    for (key, a) in &after.instances {
        let b = before.instances.get(key).unwrap_or(&zero);
        let e = by_text
            .entry(a.text.as_str())
            .or_insert_with(|| StatementDelta {
                digest: instance_digest(&a.text),
                text: a.text.clone(),
                ..StatementDelta::default()
            });
        e.calls += (a.calls - b.calls).max(0.0);
        e.total_us += (a.total_us - b.total_us).max(0.0);
    }
    let mut out = Vec::new();
    for (text, d) in by_text {
        if gone.contains(text) {
            unavailable.insert(
                format!("statements.{}", d.digest),
                "a connection that had prepared it closed between the reads: its \
                 executions went with it"
                    .into(),
            );
        } else if d.calls > 0.0 {
            out.push(d);
        }
    }
    out
}

/// The statements that were called between the reads. One whose figures went backwards
/// (the server evicted its entry and made it again, or was reset) is left out and
/// marked unavailable as `statements.<digest>`, never a negative delta.
fn statement_deltas(
    before: &Snapshot,
    after: &Snapshot,
    unavailable: &mut BTreeMap<String, String>,
) -> Vec<StatementDelta> {
    let zero = StatementCount::default();
    let mut out = Vec::new();
    for (digest, a) in &after.statements {
        let b = before.statements.get(digest).unwrap_or(&zero);
        if a.calls < b.calls || a.total_us < b.total_us {
            unavailable.insert(
                format!("statements.{digest}"),
                format!(
                    "went backwards ({} to {} calls): the server evicted or reset the entry",
                    b.calls, a.calls
                ),
            );
        } else if a.calls > b.calls {
            out.push(StatementDelta {
                digest: digest.clone(),
                text: a.text.clone(),
                calls: a.calls - b.calls,
                total_us: a.total_us - b.total_us,
            });
        }
    }
    out
}

/// `d` less `own` (one read's footprint, the delta of two reads taken back to back):
/// counters and statements that did not move beyond it are left out.
pub fn less_own(d: &mut Delta, own: &Delta) {
    d.counters.retain(|name, v| {
        *v -= own.counters.get(name).copied().unwrap_or(0.0);
        *v > 0.0
    });
    d.statements.retain_mut(|s| {
        if let Some(o) = own.statements.iter().find(|o| o.digest == s.digest) {
            s.calls -= o.calls;
            s.total_us = (s.total_us - o.total_us).max(0.0);
        }
        s.calls > 0.0
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(kv: &[(&str, f64)], id: Option<&str>) -> Snapshot {
        Snapshot {
            counters: kv.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            unavailable: BTreeMap::new(),
            identity: id.map(str::to_string),
            uptime_s: None,
            statements: BTreeMap::new(),
            instances: BTreeMap::new(),
        }
    }

    fn stmt(text: &str, calls: f64, total_us: f64) -> StatementCount {
        StatementCount {
            text: text.into(),
            calls,
            total_us,
        }
    }

    #[test]
    fn statements_keep_what_was_called_and_one_that_went_backwards_is_unavailable() {
        let mut b = snap(&[], Some("x"));
        b.statements
            .insert("1".into(), stmt("SELECT $1", 10.0, 100.0));
        b.statements.insert("2".into(), stmt("COMMIT", 50.0, 500.0));
        b.statements.insert("3".into(), stmt("idle", 5.0, 5.0));
        let mut a = snap(&[], Some("x"));
        a.statements
            .insert("1".into(), stmt("SELECT $1", 30.0, 400.0));
        a.statements.insert("2".into(), stmt("COMMIT", 7.0, 70.0));
        a.statements.insert("3".into(), stmt("idle", 5.0, 5.0));
        a.statements.insert("4".into(), stmt("new", 2.0, 8.0));
        let mut d = delta(&b, &a);
        let got: Vec<(&str, f64, f64)> = d
            .statements
            .iter()
            .map(|s| (s.digest.as_str(), s.calls, s.total_us))
            .collect();
        assert_eq!(got, vec![("1", 20.0, 300.0), ("4", 2.0, 8.0)]);
        assert!(d.unavailable["statements.2"].contains("went backwards"));
        // One read's own footprint taken off: the statement it ran alone is gone.
        let own = Delta {
            statements: vec![StatementDelta {
                digest: "4".into(),
                text: "new".into(),
                calls: 2.0,
                total_us: 9.0,
            }],
            ..Delta::default()
        };
        less_own(&mut d, &own);
        assert_eq!(d.statements.len(), 1);
        assert_eq!(d.statements[0].digest, "1");
    }

    #[test]
    fn instances_are_summed_by_text_and_a_closed_connection_leaves_its_text_out() {
        let with = |rows: &[(&str, &str, f64, f64)]| {
            let mut s = snap(&[], Some("x"));
            for (id, text, calls, us) in rows {
                s.instances.insert(id.to_string(), stmt(text, *calls, *us));
            }
            s
        };
        let b = with(&[
            ("1:1", "SELECT ?", 10.0, 100.0),
            ("2:1", "SELECT ?", 5.0, 50.0),
            ("1:2", "UPDATE ?", 3.0, 30.0),
            ("3:2", "UPDATE ?", 1.0, 10.0),
        ]);
        // 4:1 was prepared in the window (counted from 0); connection 3 closed, and its
        // UPDATE's executions are gone.
        let a = with(&[
            ("1:1", "SELECT ?", 30.0, 300.0),
            ("2:1", "SELECT ?", 15.0, 150.0),
            ("4:1", "SELECT ?", 2.0, 20.0),
            ("1:2", "UPDATE ?", 9.0, 90.0),
        ]);
        let d = delta(&b, &a);
        assert_eq!(d.statements.len(), 1, "{d:?}");
        let s = &d.statements[0];
        assert_eq!(
            (s.text.as_str(), s.calls, s.total_us),
            ("SELECT ?", 32.0, 320.0)
        );
        assert_eq!(s.digest, instance_digest("SELECT ?"));
        let why = &d.unavailable[&format!("statements.{}", instance_digest("UPDATE ?"))];
        assert!(why.contains("closed"), "{why}");
    }

    #[test]
    fn a_delta_keeps_what_moved_and_never_goes_negative() {
        let b = snap(
            &[("a", 10.0), ("b", 5.0), ("c", 7.0), ("gone", 1.0)],
            Some("x"),
        );
        let a = snap(
            &[("a", 25.0), ("b", 5.0), ("c", 3.0), ("new", 4.0)],
            Some("x"),
        );
        let d = delta(&b, &a);
        assert_eq!(
            d.counters,
            [("a".to_string(), 15.0), ("new".to_string(), 4.0)]
                .into_iter()
                .collect()
        );
        assert!(d.unavailable["c"].contains("went backwards"), "{d:?}");
        assert!(d.counters.values().all(|v| *v > 0.0));
    }

    #[test]
    fn a_restart_between_the_reads_takes_no_delta() {
        let d = delta(
            &snap(&[("a", 10.0)], Some("1")),
            &snap(&[("a", 99.0)], Some("2")),
        );
        assert!(d.counters.is_empty());
        assert!(d.unavailable["all"].contains("restarted"));
        let mut b = snap(&[("a", 10.0)], None);
        b.uptime_s = Some(100.0);
        let mut a = snap(&[("a", 99.0)], None);
        a.uptime_s = Some(3.0);
        assert!(delta(&b, &a).unavailable["all"].contains("restarted"));
        a.uptime_s = Some(103.0);
        assert_eq!(delta(&b, &a).counters["a"], 89.0);
    }

    #[test]
    fn an_unavailable_group_on_either_side_is_kept_with_its_reason() {
        let mut b = snap(&[("a", 1.0)], None);
        b.unavailable
            .insert("pg_stat_wal".into(), "no such view".into());
        let mut a = snap(&[("a", 2.0)], None);
        a.unavailable.insert("stats slabs".into(), "refused".into());
        let d = delta(&b, &a);
        assert_eq!(d.unavailable.len(), 2);
        assert_eq!(d.counters["a"], 1.0);
    }

    #[test]
    fn numbers_are_plain_numbers_only() {
        assert_eq!(number("12"), Some(12.0));
        assert_eq!(number(" 0.25 "), Some(0.25));
        for t in [
            "",
            "ON",
            "2026-11-29 10:00:00+00",
            "inf",
            "NaN",
            "1.2.3",
            "-",
            "e",
        ] {
            assert_eq!(number(t), None, "{t}");
        }
    }

    #[test]
    fn gauges_and_text_are_left_out_of_a_snapshot() {
        let mut s = Snapshot::default();
        s.add_numbers(
            "",
            [("cmd_get", "5"), ("curr_items", "3"), ("version", "1.6.18")],
            |k| k == "curr_items",
        );
        assert_eq!(s.counters.len(), 1);
        assert_eq!(s.counters["cmd_get"], 5.0);
    }
}
