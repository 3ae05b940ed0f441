//! The server's own statistics around one run's measured window (`[plan] server_stats`):
//! read through the target (`Sandbox::stats`, each target's reader in its module) just
//! before the window opens and after it closes (after the target's settle time), both
//! outside the window, and kept as the run's `server_stats` deltas with what was
//! unavailable and why (`bakeoff_sandbox::stats::delta`: never a negative delta).

use std::sync::Mutex;

use bakeoff_engine::PhaseHooks;
use bakeoff_report::model::Run;
use bakeoff_sandbox::stats::{self, Snapshot, StatsLevel};
use bakeoff_sandbox::Sandbox;

/// Reads the statistics at the window's edges: the before-read after `inner`'s start
/// (the probes attach first, which reads /proc and can take a while under load, so the
/// read sits next to the window while the warmup's load still runs), the after-read
/// after `inner`'s end (the load has stopped by then).
pub(crate) struct StatsHooks<'a> {
    inner: &'a dyn PhaseHooks,
    server: Option<&'a Sandbox>,
    level: StatsLevel,
    before: Mutex<Option<Snapshot>>,
    after: Mutex<Option<Snapshot>>,
}

impl<'a> StatsHooks<'a> {
    /// `server`: the run's sandbox here (None: on another host, not read).
    pub fn new(inner: &'a dyn PhaseHooks, server: Option<&'a Sandbox>, level: StatsLevel) -> Self {
        StatsHooks {
            inner,
            server,
            level,
            before: Mutex::new(None),
            after: Mutex::new(None),
        }
    }

    /// Puts what was read into `run`: the deltas and what was unavailable. Nothing when
    /// `server_stats = "off"` or the window never opened.
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
        let before = self.before.lock().ok().and_then(|mut b| b.take());
        let after = self.after.lock().ok().and_then(|mut a| a.take());
        let (Some(b), Some(a)) = (before, after) else {
            return;
        };
        let d = stats::delta(&b, &a);
        run.server_stats = d.counters;
        run.server_stats_unavailable = d.unavailable;
    }
}

impl PhaseHooks for StatsHooks<'_> {
    fn measure_started(&self) {
        // Read as close to the window as possible: after the probes are in place (their
        // start reads /proc and can take a while under load), just before it opens.
        self.inner.measure_started();
        if let (Some(s), true) = (self.server, self.level.reads()) {
            let snap = s.stats(self.level);
            if let Ok(mut b) = self.before.lock() {
                *b = Some(snap);
            }
        }
    }

    fn measure_ended(&self) {
        // The load has stopped sending when the window closes: the probes stop first,
        // and the after-read waits for the server's counters to settle.
        self.inner.measure_ended();
        if let (Some(s), true) = (self.server, self.level.reads()) {
            std::thread::sleep(s.stats_settle());
            let snap = s.stats(self.level);
            if let Ok(mut a) = self.after.lock() {
                *a = Some(snap);
            }
        }
    }
}
