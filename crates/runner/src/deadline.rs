//! Every run has a deadline. A server that stops answering (SIGSTOP, a lock, a full
//! disk) would otherwise hold its run, and the experiment, until SIGTERM: a watchdog
//! thread beside each measured run ends it. The rule, with
//! `grace = max(10 s, window / 2)` (10 s for a window with no planned length):
//!
//! - a process of the run's server stopped (SIGSTOP, a tracer) for `grace`: the run fails;
//! - a time window: the run must be over `grace` after the window's end; past that it goes
//!   on only while the server keeps working (at least 5% of a CPU over a second, at least
//!   once per `grace`: a workload's own check on the server the run left, such as TPC-C's
//!   consistency conditions, or a suite whose length is its own);
//! - before its window: the window must begin within warmup + max(grace, 120 s) of the
//!   run's start (the SQL driver's connect allowance; a kv preload of many keys), with the
//!   same extension while the server works;
//! - a window with no planned length (a count of operations, a suite, an external tool):
//!   the run fails when for `grace` neither the server worked nor an operation completed;
//! - nothing extends a run past its deadline by more than max(10 min, 10 x grace); a server
//!   on another host, whose processes are not watched from here, gets only this bound;
//! - a server seen stopped inside the measured window makes the run invalid even when the
//!   window ended on time and the server was continued (a kv load's window ends on its
//!   clock, with a figure from a server that did not run for part of it).
//!
//! When it fires, the run's own cancel flag is raised (the load's coordinator stops) and
//! the server's process group is killed (SIGKILL, which a stopped process receives too),
//! so every client blocked on a reply reads end-of-file. The run is recorded invalid with
//! the reason, and the experiment goes on with the next run. Under valgrind (`slow`) the
//! allowances before the window and the bound are that many times longer.

use bakeoff_engine::{Live, PhaseHooks};
use bakeoff_sandbox::Watch;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The least grace after a window's end.
pub const MIN_GRACE: Duration = Duration::from_secs(10);
/// What a run may take, beyond its warmup, to reach its measured window.
const SETUP: Duration = Duration::from_secs(120);
/// The least a server past its deadline is allowed while it keeps working.
const BOUND: Duration = Duration::from_secs(600);
/// How often the watchdog looks.
const LOOK: Duration = Duration::from_millis(200);
/// How often the server's processes are read, and the span its CPU is compared over.
const SPAN: Duration = Duration::from_secs(1);
/// The share of a CPU over `SPAN` that counts as work (an idle MariaDB's background
/// threads stay below it; a server answering queries is far above).
const BUSY_SHARE: f64 = 0.05;

/// The grace after a window of `window` (None: no planned length): max(10 s, window / 2).
pub fn grace(window: Option<Duration>) -> Duration {
    window.map_or(MIN_GRACE, |w| (w / 2).max(MIN_GRACE))
}

/// A run's plan as the watchdog reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub warmup: Duration,
    /// The measured window's planned length (None: a count of operations, a suite).
    pub window: Option<Duration>,
    pub grace: Duration,
    /// How long a process of the server may be seen stopped.
    pub stopped: Duration,
    /// How many times slower the server runs than plain (valgrind: 12).
    pub slow: u32,
    /// A wait with no window (loading tables, a verification's queries): it is "in its
    /// window" from the start, and ends when the server does no work for `grace`.
    pub open_ended: bool,
}

impl Limits {
    pub fn new(warmup: Duration, window: Option<Duration>, slow: u32) -> Limits {
        let grace = grace(window);
        Limits {
            warmup,
            window,
            grace,
            stopped: grace,
            slow: slow.max(1),
            open_ended: false,
        }
    }

    /// A wait with no window: a server stopped for `MIN_GRACE`, or idle for `idle`, ends it.
    pub fn open_ended(idle: Duration) -> Limits {
        Limits {
            warmup: Duration::ZERO,
            window: None,
            grace: idle,
            stopped: MIN_GRACE,
            slow: 1,
            open_ended: true,
        }
    }

    fn bound(&self) -> Duration {
        (BOUND.max(self.grace * 10)) * self.slow
    }
}

/// What the watchdog has seen at one look, as times since the run's start.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seen {
    pub now: Duration,
    pub window_start: Option<Duration>,
    pub window_end: Option<Duration>,
    /// How long a process of the server has been stopped, without a break.
    pub stopped_for: Duration,
    /// How long since the server last worked or an operation completed.
    pub idle_for: Duration,
}

/// Why the run must end now, if it must.
pub(crate) fn judge(l: &Limits, s: &Seen) -> Option<String> {
    let g = l.grace;
    let ended = if l.open_ended {
        "bakeoff stopped the server"
    } else {
        "the run was ended"
    };
    if s.stopped_for >= l.stopped {
        return Some(format!(
            "the server stopped answering: a process of it was stopped (SIGSTOP or a tracer) for {}; {ended}",
            secs(l.stopped)
        ));
    }
    let start = s.window_start.or(l.open_ended.then_some(Duration::ZERO));
    let (deadline, what) = match (start, s.window_end, l.window) {
        (_, Some(end), _) => (
            end + g,
            format!(
                "the run was not over {} after its measured window ended (the grace is max(10 s, half the window))",
                secs(g)
            ),
        ),
        (Some(start), None, Some(w)) => (
            start + w + g,
            format!(
                "the measured window of {} was not over {} after its planned end (the grace is max(10 s, half the window))",
                secs(w),
                secs(g)
            ),
        ),
        (Some(_), None, None) => {
            let during = if l.open_ended {
                "of the wait"
            } else {
                "of the measured window"
            };
            return (s.idle_for >= g).then(|| {
                format!(
                    "the server stopped answering: for {} {during} no operation completed and the server did no work; {ended}",
                    secs(g)
                )
            });
        }
        (None, _, _) => {
            let allowed = l.warmup + g.max(SETUP) * l.slow;
            (
                allowed,
                format!(
                    "the measured window had not begun {} into the run (warmup plus {} to connect and preload)",
                    secs(allowed),
                    secs(allowed - l.warmup)
                ),
            )
        }
    };
    if s.now < deadline {
        return None;
    }
    // A gap of a grace without work, as a client busy on its own (a Perl suite, a tool)
    // may leave, is not taken for a stop.
    let idle = s.idle_for >= g;
    let bound = s.now >= deadline + l.bound();
    (idle || bound).then(|| {
        let why = if idle {
            "the server did no work"
        } else {
            "the server was still busy"
        };
        format!("the server stopped answering: {what}, and {why}; {ended}")
    })
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// The watchdog beside one run (see the module's doc). Dropped without `finish`, it
/// stops too.
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    /// The run's own cancel flag: the interrupt's, or the deadline's.
    cancel: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    done: bool,
    fired: Option<String>,
    /// How long a process of the server was seen stopped inside the measured window.
    stopped_in_window: Duration,
    window_start: Option<Instant>,
    window_end: Option<Instant>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Watchdog {
    /// Starts watching a run that starts now. `watch`: the server's processes here (None:
    /// on another host); `interrupt`: the experiment's cancel flag, mirrored into the run's.
    pub fn start(
        limits: Limits,
        watch: Option<Watch>,
        live: Arc<Live>,
        interrupt: Arc<AtomicBool>,
    ) -> Watchdog {
        let shared = Arc::new(Shared {
            cancel: AtomicBool::new(interrupt.load(Ordering::SeqCst)),
            state: Mutex::new(State::default()),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("run-deadline".into())
            .spawn(move || watch_run(&s, limits, watch, &live, &interrupt))
            .ok();
        Watchdog { shared, thread }
    }

    /// The flag the run's load reads to stop.
    pub fn cancel(&self) -> &AtomicBool {
        &self.shared.cancel
    }

    /// `inner`, with the window's edges noted for the watchdog.
    pub fn hooks<'a>(&'a self, inner: &'a dyn PhaseHooks) -> Edges<'a> {
        Edges {
            inner,
            shared: &self.shared,
        }
    }

    /// Stops watching; why the run is invalid, if it is: it was ended, or its server was
    /// stopped for part of its window (a window that ends on time measured a server that
    /// did not run; the run says so rather than count its figure).
    pub fn finish(mut self) -> Option<String> {
        self.stop();
        let mut state = self.shared.state();
        state.fired.take().or_else(|| {
            let s = state.stopped_in_window;
            (s > Duration::ZERO).then(|| {
                format!(
                    "the server stopped answering: a process of it was stopped (SIGSTOP or a tracer) for about {:.1} s of the measured window",
                    s.as_secs_f64()
                )
            })
        })
    }

    fn stop(&mut self) {
        self.shared.state().done = true;
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `f`, a wait on a server outside the measured runs (loading its tables, a verification's
/// queries), under a watchdog (`Limits::open_ended(idle)`): a server stopped for 10 s or
/// doing no work for `idle` is killed, so `f` returns, and the reason is the error. With
/// no server to watch here (another host), `f` alone.
pub(crate) fn guarded<T>(
    watch: Option<Watch>,
    idle: Duration,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    let Some(w) = watch else {
        return f();
    };
    let dog = Watchdog::start(
        Limits::open_ended(idle),
        Some(w),
        Arc::new(Live::default()),
        Arc::new(AtomicBool::new(false)),
    );
    let got = f();
    match dog.finish() {
        Some(why) => Err(why),
        None => got,
    }
}

/// The run's phase hooks, noting the window's edges for its watchdog.
pub(crate) struct Edges<'a> {
    inner: &'a dyn PhaseHooks,
    shared: &'a Shared,
}

impl PhaseHooks for Edges<'_> {
    fn measure_started(&self) {
        // The probes attach first: the window begins when they are in place.
        self.inner.measure_started();
        self.shared.state().window_start = Some(Instant::now());
    }

    fn measure_ended(&self) {
        self.shared.state().window_end = Some(Instant::now());
        self.inner.measure_ended();
    }

    fn keep_connections(&self) -> bool {
        self.inner.keep_connections()
    }
}

/// The watchdog's thread: looks every `LOOK` until the run is done or must end.
fn watch_run(
    shared: &Shared,
    limits: Limits,
    watch: Option<Watch>,
    live: &Live,
    interrupt: &AtomicBool,
) {
    let began = Instant::now();
    let mut reference = (began, watch.map_or(0.0, |w| w.pulse().0));
    let mut last_work = began;
    let mut stopped_since: Option<Instant> = None;
    let mut last_ops = live.measured_ops();
    let mut last_edges = (None, None);
    let mut looked = began;
    let mut stopped_now = false;
    loop {
        std::thread::park_timeout(LOOK);
        if interrupt.load(Ordering::SeqCst) {
            // An interrupt ends the run its own way; the deadline says nothing then.
            shared.cancel.store(true, Ordering::SeqCst);
            return;
        }
        let now = Instant::now();
        let before = looked;
        looked = now;
        match watch {
            // /proc is read once a second: the run's own CPUs are what is measured.
            Some(w) if now - reference.0 >= SPAN => {
                let (cpu, stopped) = w.pulse();
                stopped_now = stopped;
                stopped_since = if stopped {
                    stopped_since.or(Some(now))
                } else {
                    None
                };
                let span = (now - reference.0).as_secs_f64();
                if cpu - reference.1 >= BUSY_SHARE * span {
                    last_work = now;
                }
                reference = (now, cpu);
            }
            Some(_) => {}
            // Nothing to watch here: counted as working, so only the bound applies.
            None => last_work = now,
        }
        let ops = live.measured_ops();
        if ops != last_ops {
            last_ops = ops;
            last_work = now;
        }
        let mut state = shared.state();
        if state.done {
            return;
        }
        if stopped_now && state.window_start.is_some() && state.window_end.is_none() {
            state.stopped_in_window += now - before;
        }
        let edges = (state.window_start, state.window_end);
        if edges != last_edges {
            last_edges = edges;
            last_work = now;
        }
        let since = |t: Instant| t.saturating_duration_since(began);
        let seen = Seen {
            now: since(now),
            window_start: state.window_start.map(since),
            window_end: state.window_end.map(since),
            stopped_for: stopped_since.map_or(Duration::ZERO, |t| now - t),
            idle_for: now - last_work,
        };
        if let Some(why) = judge(&limits, &seen) {
            state.fired = Some(why);
            shared.cancel.store(true, Ordering::SeqCst);
            if let Some(w) = watch {
                // Held under the lock: the run cannot be done (and its pids reused) now.
                // SAFETY: kill has no memory preconditions; a negative pid names the
                // sandbox's own process group.
                unsafe {
                    libc::kill(-w.pgid, libc::SIGKILL);
                }
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    fn limits(window: u64) -> Limits {
        Limits::new(Duration::from_millis(500), Some(S(window)), 1)
    }

    #[test]
    fn grace_is_ten_seconds_or_half_the_window() {
        assert_eq!(grace(None), S(10));
        for (w, g) in [(1, 10_000), (20, 10_000), (21, 10_500), (30, 15_000)] {
            assert_eq!(grace(Some(S(w))), Duration::from_millis(g), "window {w} s");
        }
    }

    /// Generated: windows, moments of the stop, how long the server was stopped.
    #[test]
    fn hostile_stopped_server_fails_its_run_after_the_grace() {
        for window in [1, 2, 5, 30, 120] {
            let l = limits(window);
            for at in [0, 1, 3, 100] {
                for stopped in [0, 1, 5, 9, 10, 11, 60, 61] {
                    let seen = Seen {
                        now: S(at + stopped),
                        window_start: Some(S(0)),
                        stopped_for: S(stopped),
                        ..Seen::default()
                    };
                    let fired = judge(&l, &seen);
                    let stopped_long = S(stopped) >= l.grace;
                    if stopped_long {
                        let why = fired.expect("stopped for the grace");
                        assert!(why.contains("stopped (SIGSTOP"), "{why}");
                    } else if seen.now < S(window) + l.grace {
                        assert!(fired.is_none(), "{window} {at} {stopped}: {fired:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_stopped_server_a_time_window_ends_at_its_end_plus_the_grace() {
        for window in [1u64, 2, 10, 40, 300] {
            let l = limits(window);
            let end = S(3 + window) + l.grace;
            let at = |now: Duration, idle: Duration| Seen {
                now,
                window_start: Some(S(3)),
                idle_for: idle,
                ..Seen::default()
            };
            // Idle from the start of the window: nothing before the deadline.
            assert!(judge(&l, &at(end - Duration::from_millis(1), end)).is_none());
            let why = judge(&l, &at(end, end)).expect("past the deadline, idle");
            assert!(
                why.contains("planned end") && why.contains("did no work"),
                "{why}"
            );
            // The server at work past the deadline: allowed, up to the bound.
            assert!(judge(&l, &at(end + S(30), S(0))).is_none());
            let why = judge(&l, &at(end + l.bound(), S(0))).expect("bounded");
            assert!(why.contains("still busy"), "{why}");
            // After the window ended early (a hung join): its end plus the grace.
            let after = Seen {
                now: S(3 + window + 1) + l.grace,
                window_start: Some(S(3)),
                window_end: Some(S(3 + window + 1)),
                idle_for: l.grace,
                ..Seen::default()
            };
            assert!(judge(&l, &after).unwrap().contains("ended"));
            // A client-side gap shorter than the grace is not a stop.
            let gap = Seen {
                idle_for: l.grace - Duration::from_millis(1),
                ..after
            };
            assert!(judge(&l, &gap).is_none());
        }
    }

    #[test]
    fn hostile_stopped_server_before_the_window_gets_setup_time() {
        let l = limits(2);
        let setup = l.warmup + SETUP;
        let at = |now: Duration| Seen {
            now,
            idle_for: now,
            ..Seen::default()
        };
        assert!(judge(&l, &at(setup - Duration::from_millis(1))).is_none());
        let why = judge(&l, &at(setup)).expect("no window after the setup time");
        assert!(why.contains("had not begun"), "{why}");
        // Under valgrind, twelve times the allowance.
        let slow = Limits::new(l.warmup, l.window, 12);
        assert!(judge(&slow, &at(setup)).is_none());
    }

    /// Loading tables or verifying: stopped for 10 s, or idle for the wait's grace.
    #[test]
    fn hostile_stopped_server_an_open_ended_wait_ends() {
        let l = Limits::open_ended(S(300));
        let at = |now: u64, stopped: u64, idle: u64| Seen {
            now: S(now),
            stopped_for: S(stopped),
            idle_for: S(idle),
            ..Seen::default()
        };
        assert!(judge(&l, &at(5000, 0, 299)).is_none());
        assert!(judge(&l, &at(5000, 9, 9)).is_none());
        assert!(judge(&l, &at(20, 10, 10))
            .unwrap()
            .contains("stopped (SIGSTOP"));
        let why = judge(&l, &at(5000, 0, 300)).unwrap();
        assert!(why.contains("300 s of the wait"), "{why}");
    }

    #[test]
    fn hostile_stopped_server_an_untimed_window_ends_when_nothing_moves() {
        let l = Limits::new(S(0), None, 1);
        for idle in [0, 1, 9] {
            let seen = Seen {
                now: S(1000),
                window_start: Some(S(1)),
                idle_for: S(idle),
                ..Seen::default()
            };
            assert!(judge(&l, &seen).is_none(), "{idle}");
        }
        let seen = Seen {
            now: S(1000),
            window_start: Some(S(1)),
            idle_for: S(10),
            ..Seen::default()
        };
        assert!(judge(&l, &seen).unwrap().contains("no operation completed"));
    }
}
