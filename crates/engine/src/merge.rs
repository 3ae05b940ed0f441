//! One record from the records of several client hosts that loaded the same server over
//! the same window (started at one instant): counts add up, response times are the
//! union of every host's histograms, interval by interval, so percentiles are exact and
//! not an average of percentiles.

use crate::record::{histogram, merge_intervals, percentiles, RawInterval};
use crate::RunRecord;
use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// A histogram as bytes (V2 deflate); empty if it cannot be written.
pub fn serialize_histogram(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut out) {
        Ok(_) => out,
        Err(_) => Vec::new(),
    }
}

/// The intervals of one record's HDR log, as the recorder keeps them.
fn intervals(log: &str) -> Vec<RawInterval> {
    let mut de = Deserializer::new();
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(log.as_bytes()).flatten() {
        let LogEntry::Interval(h) = entry else {
            continue;
        };
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(h.encoded_histogram())
        else {
            continue;
        };
        let ops = de
            .deserialize::<u64, _>(&mut bytes.as_slice())
            .map_or(0, |h| h.len());
        out.push(RawInterval {
            start_ns: h.start_timestamp().as_nanos() as u64,
            len_ns: h.duration().as_nanos() as u64,
            ops,
            hist: bytes,
        });
    }
    out
}

/// One statement kind's figures being merged.
struct KindMerge {
    first: crate::Percentiles,
    count: u64,
    /// The sum of the hosts' histograms, while every host had one.
    hist: Option<Histogram<u64>>,
    /// Every host counted it once per operation.
    whole: bool,
}

/// Merges the records of hosts that ran at once. Throughput adds up (the windows are the
/// same); latency percentiles come from the summed histograms; the client is bound when
/// any host was.
pub fn merge_records(parts: &[RunRecord]) -> RunRecord {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let mut r = RunRecord::default();
    let mut kinds: std::collections::BTreeMap<String, KindMerge> = Default::default();
    let mut threads = Vec::new();
    let mut service: Option<Histogram<u64>> = None;
    let mut de = Deserializer::new();
    for p in parts {
        r.ops += p.ops;
        r.elapsed_s = r.elapsed_s.max(p.elapsed_s);
        r.ops_per_s += p.ops_per_s;
        r.misses += p.misses;
        r.verify_failures += p.verify_failures;
        r.late += p.late;
        r.queries += p.queries;
        r.reconnects += p.reconnects;
        r.client_cpu_s += p.client_cpu_s;
        r.client_wait_s += p.client_wait_s;
        r.client_threads += p.client_threads;
        r.client_rss_kib += p.client_rss_kib;
        r.client_bound |= p.client_bound;
        if let Some(o) = p.offered_ops_per_s {
            *r.offered_ops_per_s.get_or_insert(0.0) += o;
        }
        for (k, n) in &p.errors {
            *r.errors.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &p.by_command {
            *r.by_command.entry(k.clone()).or_default() += n;
        }
        for (k, v) in &p.kinds {
            let kind = kinds.entry(k.clone()).or_insert_with(|| KindMerge {
                first: v.latency_us.clone(),
                count: 0,
                hist: Some(histogram()),
                whole: true,
            });
            kind.count += v.count;
            kind.whole &= v.count == p.ops;
            match de.deserialize::<u64, _>(&mut v.hist.as_slice()) {
                Ok(h) if !v.hist.is_empty() => {
                    if let Some(sum) = kind.hist.as_mut() {
                        let _ = sum.add(&h);
                    }
                }
                _ => kind.hist = None,
            }
        }
        threads.push(intervals(&p.hdr_log));
        if let Ok(h) = de.deserialize::<u64, _>(&mut p.service_hist.as_slice()) {
            let _ = service.get_or_insert_with(histogram).add(&h);
        }
    }
    let mut total = histogram();
    for t in threads.iter().flatten() {
        if let Ok(h) = de.deserialize::<u64, _>(&mut t.hist.as_slice()) {
            let _ = total.add(&h);
        }
    }
    r.latency_us = percentiles(&total);
    for (k, m) in kinds {
        // Exact from the hosts' histograms; a kind that is the whole operation (a
        // transaction) is the run's own response time; else the first host's, counted
        // over all.
        let (latency_us, hist) = match m.hist {
            Some(h) => (percentiles(&h), serialize_histogram(&h)),
            None if m.whole => (r.latency_us.clone(), Vec::new()),
            None => (m.first, Vec::new()),
        };
        r.kinds.insert(
            k,
            crate::KindStats {
                count: m.count,
                latency_us,
                hist,
            },
        );
    }
    let (series, log) = merge_intervals(&threads, 0);
    r.intervals = series;
    r.hdr_log = log;
    if let Some(s) = service {
        r.service_us = Some(percentiles(&s));
        r.service_hist = serialize_histogram(&s);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Recorder;

    /// A record as one host's engine writes it: `n` ops at `us` microseconds over 2 s.
    fn host(n: u64, us: u64) -> RunRecord {
        let mut rec = Recorder::new(1, false);
        rec.start(0);
        for s in 0..2u64 {
            for _ in 0..n / 2 {
                rec.record(0, us * 1000, 0);
            }
            rec.tick((s + 1) * 1_000_000_000);
        }
        rec.finish(2_000_000_000);
        let (intervals, hdr_log) = merge_intervals(&[rec.intervals], 0);
        RunRecord {
            ops: n,
            elapsed_s: 2.0,
            ops_per_s: n as f64 / 2.0,
            latency_us: percentiles(&rec.total),
            intervals,
            hdr_log,
            client_cpu_s: 1.0,
            ..RunRecord::default()
        }
    }

    #[test]
    fn two_hosts_add_up_and_their_percentiles_come_from_the_union() {
        // 900 fast ops on one host, 100 slow ones on the other: the union's p50 is the
        // fast value and its p99 the slow one; an average of percentiles would say neither.
        let m = merge_records(&[host(900, 10), host(100, 1000)]);
        assert_eq!(m.ops, 1000);
        assert!((m.ops_per_s - 500.0).abs() < 1e-9);
        assert!((m.latency_us.p50 - 10.0).abs() < 0.1, "{:?}", m.latency_us);
        assert!(
            (m.latency_us.p99 - 1000.0).abs() < 1.0,
            "{:?}",
            m.latency_us
        );
        assert_eq!(m.intervals.len(), 2);
        assert_eq!(m.intervals[0].ops, 500);
        assert!((m.client_cpu_s - 2.0).abs() < 1e-9);
        assert_eq!(m.hdr_log.lines().filter(|l| !l.starts_with('#')).count(), 2);
    }

    /// A kind of `n` statements at `us` microseconds, with its histogram or without.
    fn kind(n: u64, us: u64, with_hist: bool) -> crate::KindStats {
        let mut h = histogram();
        h.record_n(us * 1000, n).unwrap();
        crate::KindStats {
            count: n,
            latency_us: percentiles(&h),
            hist: if with_hist {
                serialize_histogram(&h)
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn statement_kinds_merge_from_their_histograms() {
        let (mut a, mut b) = (host(900, 10), host(100, 1000));
        // Each host's point selects, with histograms; the transaction, one per op, without.
        a.kinds.insert("point_select".into(), kind(9000, 10, true));
        b.kinds
            .insert("point_select".into(), kind(1000, 1000, true));
        a.kinds.insert("transaction".into(), kind(900, 10, false));
        b.kinds.insert("transaction".into(), kind(100, 1000, false));
        a.kinds.insert("other".into(), kind(5, 10, false));
        b.kinds.insert("other".into(), kind(7, 1000, false));
        let m = merge_records(&[a, b]);
        let ps = &m.kinds["point_select"];
        assert_eq!(ps.count, 10_000);
        assert!(
            (ps.latency_us.p50 - 10.0).abs() < 0.1,
            "{:?}",
            ps.latency_us
        );
        assert!(
            (ps.latency_us.p99 - 1000.0).abs() < 1.0,
            "{:?}",
            ps.latency_us
        );
        assert!(!ps.hist.is_empty(), "merged again later");
        // The whole operation: the run's own merged response times.
        assert_eq!(m.kinds["transaction"].latency_us, m.latency_us);
        assert_eq!(m.kinds["transaction"].count, 1000);
        // Neither: counted over all, times from the first host.
        assert_eq!(m.kinds["other"].count, 12);
        assert!((m.kinds["other"].latency_us.p50 - 10.0).abs() < 0.1);
    }
}
