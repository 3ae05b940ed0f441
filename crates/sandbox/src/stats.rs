//! The server's own statistics around a measured window ([`Target::read_stats`], each
//! target's reader in its own module): what one read holds ([`Snapshot`]: counters by
//! name, what could not be read and why), how much of them a plan asks for
//! ([`StatsLevel`]), and the delta of two reads ([`delta`]): only counters that moved
//! forwards; one that went backwards (a wrap, a reset) or a server that restarted between
//! the reads is marked unavailable with the reason, never a negative delta.
//!
//! [`Target::read_stats`]: crate::Target::read_stats

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
    /// per run outside the measured window.
    #[default]
    Basic,
    /// Basic, plus what the server counts only when asked (memcached's `stats slabs`;
    /// PostgreSQL's `pg_stat_io` where the version has it).
    Full,
}

impl StatsLevel {
    /// Whether anything is read.
    pub fn reads(self) -> bool {
        self != StatsLevel::Off
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
    d
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
        }
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
