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
pub(crate) fn serialize(h: &Histogram<u64>) -> Vec<u8> {
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

/// Merges the records of hosts that ran at once. Throughput adds up (the windows are the
/// same); latency percentiles come from the summed histograms; the client is bound when
/// any host was.
pub fn merge_records(parts: &[RunRecord]) -> RunRecord {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let mut r = RunRecord::default();
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
            r.kinds.entry(k.clone()).or_insert_with(|| v.clone());
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
    let (series, log) = merge_intervals(&threads, 0);
    r.intervals = series;
    r.hdr_log = log;
    if let Some(s) = service {
        r.service_us = Some(percentiles(&s));
        r.service_hist = serialize(&s);
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
}
