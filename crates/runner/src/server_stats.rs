//! The server's own statistics around one run's measured window (`[plan] server_stats`):
//! read through the target (`Sandbox::stats`, each target's reader in its module) just
//! before the window opens and after it closes (after the target's settle time), both
//! outside the window, and kept as the run's `server_stats` deltas with what was
//! unavailable and why (`bakeoff_sandbox::stats::delta`: never a negative delta).
//!
//! Reading costs the server work of its own (a login, `SHOW GLOBAL STATUS` writing a
//! temporary table, `INFO` counted among the commands): the after-read is taken twice,
//! the load stopped, and the second's movement (one read's footprint) is taken off the
//! deltas. What the server keeps no counter of (PostgreSQL's wait events) is sampled
//! through the window by the target's sampler (`Sandbox::start_sampling`, started with
//! the before-read and stopped at the window's end), its counts merged as they are.
//! The span from the before-read to the window's end is kept
//! (`server_stats_s`), so a delta can be divided by the operations the load sent in it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use bakeoff_engine::PhaseHooks;
use bakeoff_report::model::{Run, StatementRecord};
use bakeoff_sandbox::stats::{self, Sampling, Snapshot, StatsLevel};
use bakeoff_sandbox::Sandbox;

/// What was read at the edges.
#[derive(Default)]
struct Reads {
    before: Option<(Snapshot, Instant)>,
    /// The window's end (the load stopped).
    end: Option<Instant>,
    after: Option<Snapshot>,
    /// A second after-read: one read's own footprint.
    again: Option<Snapshot>,
    /// The sampler running through the window (`Sandbox::start_sampling`), and then
    /// what it counted: window counts, taken as they are.
    sampling: Option<Sampling>,
    sampled: Option<Snapshot>,
}

/// Reads the statistics at the window's edges: the before-read right before the window
/// opens, after the probes attach (which reads /proc and can take a while on a busy
/// machine, while the warmup's load runs on: read earlier, the counters would hold that
/// load too), except where the probes count instructions (callgrind), whose count must
/// not hold the read: then before they attach. The after-reads come after the probes
/// stop (the load has stopped by then).
pub(crate) struct StatsHooks<'a> {
    inner: &'a dyn PhaseHooks,
    server: Option<&'a Sandbox>,
    level: StatsLevel,
    before_probes: bool,
    /// The run's own stop flag (an interrupt, its deadline, its watchdog): set, the
    /// after-reads are not tried (a stopped server would hold each one for its timeout).
    cancel: &'a AtomicBool,
    reads: Mutex<Reads>,
}

impl<'a> StatsHooks<'a> {
    /// `server`: the run's sandbox here (None: on another host, not read);
    /// `instructions`: the probes count the server's instructions; `cancel`: the run's
    /// stop flag.
    pub fn new(
        inner: &'a dyn PhaseHooks,
        server: Option<&'a Sandbox>,
        level: StatsLevel,
        instructions: bool,
        cancel: &'a AtomicBool,
    ) -> Self {
        StatsHooks {
            inner,
            server,
            level,
            before_probes: instructions,
            cancel,
            reads: Mutex::new(Reads::default()),
        }
    }

    fn read_before(&self) {
        if let Some(s) = self.reading() {
            // The sampler starts first, so that its login overlaps the before-read
            // rather than following it; not where the server's instructions are counted
            // (its looks would be among them).
            let mut sampling = if self.before_probes {
                None
            } else {
                s.start_sampling(self.level)
            };
            let snap = s.stats(self.level);
            // A server that gave nothing is not sampled either.
            if snap.counters.is_empty() {
                sampling = None;
            }
            if let Ok(mut r) = self.reads.lock() {
                r.before = Some((snap, Instant::now()));
                r.sampling = sampling;
            }
        }
    }

    fn reading(&self) -> Option<&Sandbox> {
        self.server.filter(|_| self.level.reads())
    }

    /// Puts what was read into `run`: the deltas, their span and what was unavailable.
    /// Nothing when `server_stats = "off"` or the window never opened.
    pub fn record(&self, run: &mut Run, host: Option<&str>) {
        if !self.level.reads() {
            return;
        }
        if self.server.is_none() {
            run.server_stats_unavailable.insert(
                "all".into(),
                format!(
                    "the server runs on {}: bakeoff reads server statistics on this machine only",
                    host.unwrap_or("another host")
                ),
            );
            return;
        }
        let Ok(mut reads) = self.reads.lock() else {
            return;
        };
        let reads = std::mem::take(&mut *reads);
        let Some((b, at)) = reads.before else {
            return;
        };
        let (Some(end), Some(a)) = (reads.end, reads.after) else {
            // Not read after the window: why it was not, or why the before-read failed.
            run.server_stats_unavailable = b.unavailable;
            if run.server_stats_unavailable.is_empty() {
                run.server_stats_unavailable.insert(
                    "all".into(),
                    "not read after the window (the run was stopped)".into(),
                );
            }
            return;
        };
        let mut d = stats::delta(&b, &a);
        if let Some(again) = &reads.again {
            stats::less_own(&mut d, &stats::delta(&a, again));
        }
        run.server_counters_read = a.counters.keys().cloned().collect();
        run.server_statements = statement_records(std::mem::take(&mut d.statements));
        if let Some(sampled) = reads.sampled {
            with_sampled(&mut d, &mut run.server_counters_read, sampled);
        }
        run.server_stats = d.counters;
        run.server_stats_unavailable = d.unavailable;
        run.server_stats_s = Some(end.saturating_duration_since(at).as_secs_f64());
    }
}

/// The sampler's window counts into the run's deltas, with what it could not sample.
/// A sampled counter exists only once seen, so the server is said to have each sampled
/// family (`waits.*`, from the names' first part): one side that never saw an event
/// saw it 0 times, and it can still be a change.
fn with_sampled(d: &mut stats::Delta, read: &mut Vec<String>, sampled: Snapshot) {
    for name in sampled.counters.keys() {
        if let Some((family, _)) = name.split_once('.') {
            let all = format!("{family}.*");
            if !read.contains(&all) {
                read.push(all);
            }
        }
    }
    d.counters
        .extend(sampled.counters.into_iter().filter(|(_, v)| *v > 0.0));
    d.unavailable.extend(sampled.unavailable);
}

/// The window's statements as a run keeps them, the most time first.
fn statement_records(mut d: Vec<stats::StatementDelta>) -> Vec<StatementRecord> {
    d.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| a.digest.cmp(&b.digest))
    });
    d.into_iter()
        .map(|s| StatementRecord {
            mean_us: s.total_us / s.calls,
            calls: s.calls.round() as u64,
            digest: s.digest,
            text: s.text,
        })
        .collect()
}

impl PhaseHooks for StatsHooks<'_> {
    fn measure_started(&self) {
        if self.before_probes {
            self.read_before();
            self.inner.measure_started();
        } else {
            self.inner.measure_started();
            self.read_before();
        }
    }

    fn keep_connections(&self) -> bool {
        self.inner.keep_connections() || self.reading().is_some_and(|s| s.stats_need_connections())
    }

    fn measure_ended(&self) {
        let end = Instant::now();
        let sampling = self.reads.lock().ok().and_then(|mut r| r.sampling.take());
        let sampled = sampling.map(Sampling::finish);
        // The load has stopped sending when the window closes: the probes stop first,
        // and the after-read waits for the server's counters to settle.
        self.inner.measure_ended();
        // A server that gave nothing before the window is not asked again.
        let answered = self.reads.lock().is_ok_and(|r| {
            r.before
                .as_ref()
                .is_some_and(|(b, _)| !b.counters.is_empty())
        });
        if let Some(s) = self.reading().filter(|_| answered) {
            if self.cancel.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(s.stats_settle());
            let after = s.stats(self.level);
            let again = if after.counters.is_empty() {
                None
            } else {
                Some(s.stats(self.level))
            };
            if let Ok(mut r) = self.reads.lock() {
                r.end = Some(end);
                r.after = Some(after);
                r.again = again;
                r.sampled = sampled;
            }
        }
    }
}
