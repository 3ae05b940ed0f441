//! The recorder: one per client thread, so recording is a histogram increment with no
//! sharing. Every second the interval histogram is serialized (compressed) and folded
//! into the total; percentiles are computed only when the run is over.

use crate::{Interval, Percentiles};
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::time::Duration;

const MAX_NS: u64 = 60_000_000_000;
const SECOND_NS: u64 = 1_000_000_000;

pub fn histogram() -> Histogram<u64> {
    // Bounds are constants known to be valid.
    Histogram::new_with_bounds(1, MAX_NS, 3)
        .unwrap_or_else(|_| Histogram::new(3).expect("3 sig digits"))
}

/// One second (or the final part of one) of one thread, serialized.
pub struct RawInterval {
    pub start_ns: u64,
    pub len_ns: u64,
    pub ops: u64,
    pub hist: Vec<u8>,
}

pub struct Recorder {
    pub total: Histogram<u64>,
    interval: Histogram<u64>,
    pub service: Option<Histogram<u64>>,
    pub ops: u64,
    interval_ops: u64,
    interval_start_ns: u64,
    pub misses: u64,
    pub verify_failures: u64,
    pub late: u64,
    pub errors: Vec<(&'static str, u64)>,
    pub by_command: Vec<u64>,
    pub intervals: Vec<RawInterval>,
    serializer: V2DeflateSerializer,
}

impl Recorder {
    pub fn new(commands: usize, open_loop: bool) -> Recorder {
        Recorder {
            total: histogram(),
            interval: histogram(),
            service: open_loop.then(histogram),
            ops: 0,
            interval_ops: 0,
            interval_start_ns: 0,
            misses: 0,
            verify_failures: 0,
            late: 0,
            errors: Vec::new(),
            by_command: vec![0; commands],
            intervals: Vec::new(),
            serializer: V2DeflateSerializer::new(),
        }
    }

    /// Starts the measured window at `now_ns`, dropping anything recorded before.
    pub fn start(&mut self, now_ns: u64) {
        let open = self.service.is_some();
        let commands = self.by_command.len();
        *self = Recorder::new(commands, open);
        self.interval_start_ns = now_ns;
    }

    #[inline]
    pub fn record(&mut self, cmd: u8, response_ns: u64, service_ns: u64) {
        self.interval
            .saturating_record(response_ns.clamp(1, MAX_NS));
        if let Some(s) = self.service.as_mut() {
            s.saturating_record(service_ns.clamp(1, MAX_NS));
        }
        self.ops += 1;
        self.interval_ops += 1;
        if let Some(c) = self.by_command.get_mut(cmd as usize) {
            *c += 1;
        }
    }

    pub fn error(&mut self, kind: &'static str) {
        match self.errors.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => self.errors.push((kind, 1)),
        }
    }

    /// Closes the current one-second interval if it is over.
    #[inline]
    pub fn tick(&mut self, now_ns: u64) {
        if now_ns >= self.interval_start_ns + SECOND_NS {
            self.rotate(now_ns);
        }
    }

    fn rotate(&mut self, now_ns: u64) {
        let mut bytes = Vec::new();
        let _ = self.serializer.serialize(&self.interval, &mut bytes);
        let _ = self.total.add(&self.interval);
        self.intervals.push(RawInterval {
            start_ns: self.interval_start_ns,
            len_ns: now_ns.saturating_sub(self.interval_start_ns),
            ops: self.interval_ops,
            hist: bytes,
        });
        self.interval.reset();
        self.interval_ops = 0;
        self.interval_start_ns = now_ns;
    }

    /// Ends the measured window: the last partial interval is kept if it holds anything.
    pub fn finish(&mut self, now_ns: u64) {
        if self.interval_ops > 0 || self.intervals.is_empty() {
            self.rotate(now_ns);
        }
    }
}

pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let us = |ns: u64| ns as f64 / 1000.0;
    if h.is_empty() {
        return Percentiles::default();
    }
    Percentiles {
        p50: us(h.value_at_quantile(0.50)),
        p90: us(h.value_at_quantile(0.90)),
        p99: us(h.value_at_quantile(0.99)),
        p999: us(h.value_at_quantile(0.999)),
        max: us(h.max()),
        mean: h.mean() / 1000.0,
    }
}

/// Merges the threads' intervals by index into the interval series and an HDR interval
/// log, written by hdrhistogram's own interval log writer, so HdrHistogram's tools read it:
/// a line per interval with its start (seconds since the measured window began), length
/// (seconds), max (ms) and the V2 deflate-compressed histogram of response times in ns.
pub fn merge_intervals(threads: &[Vec<RawInterval>], base_ns: u64) -> (Vec<Interval>, String) {
    let n = threads.iter().map(|t| t.len()).max().unwrap_or(0);
    let mut de = Deserializer::new();
    let mut series = Vec::with_capacity(n);
    let mut log = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    // Writing into a Vec does not fail, so neither does this.
    let mut writer = IntervalLogWriterBuilder::new()
        .add_comment("[bakeoff HDR interval log: response times in ns]")
        .add_comment("[per line: start (s), length (s), max (ms), compressed histogram]")
        .with_max_value_divisor(1e6)
        .begin_log_with(&mut log, &mut ser)
        .ok();
    for i in 0..n {
        let mut merged = histogram();
        let (mut ops, mut start, mut len) = (0u64, u64::MAX, 0u64);
        for t in threads.iter().filter_map(|t| t.get(i)) {
            if let Ok(h) = de.deserialize::<u64, _>(&mut t.hist.as_slice()) {
                let _ = merged.add(&h);
            }
            ops += t.ops;
            start = start.min(t.start_ns);
            len = len.max(t.len_ns);
        }
        let secs = (len as f64 / 1e9).max(1e-9);
        let since_base = start.saturating_sub(base_ns);
        series.push(Interval {
            t_s: since_base as f64 / 1e9,
            ops,
            ops_per_s: ops as f64 / secs,
            p50_us: merged.value_at_quantile(0.5) as f64 / 1000.0,
            p99_us: merged.value_at_quantile(0.99) as f64 / 1000.0,
            max_us: merged.max() as f64 / 1000.0,
        });
        if let Some(w) = writer.as_mut() {
            let _ = w.write_histogram(
                &merged,
                Duration::from_nanos(since_base),
                Duration::from_nanos(len.max(1)),
                None,
            );
        }
    }
    drop(writer);
    (series, String::from_utf8_lossy(&log).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_rotate_and_merge() {
        let mut a = Recorder::new(1, false);
        a.start(0);
        for i in 0..1000u64 {
            a.record(0, 10_000 + i, 0);
        }
        a.tick(SECOND_NS + 1);
        for _ in 0..500 {
            a.record(0, 50_000, 0);
        }
        a.finish(SECOND_NS + SECOND_NS / 2);
        assert_eq!(a.intervals.len(), 2);
        assert_eq!(a.total.len(), 1500);
        let (series, log) = merge_intervals(&[a.intervals], 0);
        assert_eq!(series[0].ops, 1000);
        assert!((series[1].ops_per_s - 1000.0).abs() < 1.0);
        assert!((series[1].p50_us - 50.0).abs() < 0.1);
        assert_eq!(log.lines().filter(|l| !l.starts_with('#')).count(), 2);
        let p = percentiles(&{
            let mut h = histogram();
            h.record(2_000).unwrap();
            h
        });
        assert!((p.p50 - 2.0).abs() < 0.01);
    }

    #[test]
    fn the_log_reads_back_with_hdrhistograms_own_reader() {
        use base64::Engine;
        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        // Two threads, three seconds, the second thread one interval short.
        let mut threads = Vec::new();
        for (k, seconds) in [(1u64, 3u64), (7, 2)] {
            let mut r = Recorder::new(1, false);
            r.start(5 * SECOND_NS);
            for s in 0..seconds {
                for i in 0..(100 * k + s) {
                    r.record(0, 1_000 * k + i * 37 + s * 1_000_000, 0);
                }
                r.tick(5 * SECOND_NS + (s + 1) * SECOND_NS);
            }
            r.finish(5 * SECOND_NS + seconds * SECOND_NS);
            threads.push(r.intervals);
        }
        let (series, log) = merge_intervals(&threads, 5 * SECOND_NS);
        assert!(log.starts_with("#[bakeoff HDR interval log"), "{log}");

        let mut de = Deserializer::new();
        let mut read = Vec::new();
        for entry in IntervalLogIterator::new(log.as_bytes()) {
            let LogEntry::Interval(h) = entry.expect("the log parses") else {
                panic!("only intervals are written: {log}");
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .expect("base64");
            let hist: Histogram<u64> = de.deserialize(&mut bytes.as_slice()).expect("histogram");
            read.push((h.start_timestamp(), h.duration(), h.max(), hist));
        }
        assert_eq!(read.len(), 3);
        assert_eq!(read.len(), series.len());
        for (i, (start, length, max_ms, hist)) in read.iter().enumerate() {
            let s = i as u64;
            let want: u64 = threads
                .iter()
                .filter(|t| t.len() > i)
                .map(|t| t[i].ops)
                .sum();
            assert_eq!(hist.len(), want, "interval {i}");
            assert_eq!(series[i].ops, want);
            assert_eq!(*start, Duration::from_secs(s));
            assert_eq!(*length, Duration::from_secs(1));
            assert!((max_ms - hist.max() as f64 / 1e6).abs() < 1e-3, "{max_ms}");
            assert!((series[i].max_us - hist.max() as f64 / 1e3).abs() < 1e-9);
            // The same counts, value by value, as the threads' own intervals merged.
            let mut merged = histogram();
            for t in threads.iter().filter_map(|t| t.get(i)) {
                merged
                    .add(de.deserialize::<u64, _>(&mut t.hist.as_slice()).unwrap())
                    .unwrap();
            }
            assert_eq!(hist, &merged, "interval {i}");
        }
    }
}
