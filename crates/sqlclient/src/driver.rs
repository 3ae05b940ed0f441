//! What the SQL workloads (`oltp`, `tpcc`) share to drive their connections: the state
//! every client thread reads (`Shared`), the coordinator that moves the threads through
//! the phases (connect, warm up, measure) and calls the `PhaseHooks` at the measured
//! window's edges, the client thread (a current-thread tokio runtime with its connections
//! as tasks), its per-thread measurements (`ThreadRec`) and their one-second ticks, and
//! the merge of all threads' measurements into a `RunRecord`. Nothing here is on the hot
//! path except `tick`, and nothing is shared between threads there but the phase.
//! How many client threads a SQL load gets is [`client_threads_for`], the one rule every
//! SQL kind uses (the engine's event loops have theirs, `bakeoff_engine::event_loops_for`).

use crate::client::Client;
use crate::db::Db;
use bakeoff_engine::rng::mix;
use bakeoff_engine::{
    histogram, merge_intervals, percentiles, raise_nofile, KindStats, Live, LoadError, Measure,
    Phase, PhaseHooks, Phases, Recorder, RunRecord, ThreadTime, AUTO_THREADS,
};
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

/// Connections one client thread opens at once (a connect storm of 1024 otherwise times out).
pub const CONNECTS_AT_ONCE: usize = 32;
/// How long all connections may take to open.
const CONNECT_DEADLINE: Duration = Duration::from_secs(120);

/// How many client threads drive `connections` with `load_cpus` CPUs for the load:
/// `asked` if given (at most one per connection), else one thread per connection, each
/// blocking on its socket, up to 8 per load CPU, and above that one event loop per load
/// CPU with the connections as tasks. Measured on MariaDB (bench/RESULTS.md): at 4 and 8
/// connections a blocked thread per connection gives 1.2-1.5x the TPS of one event loop,
/// because the server's threads hand off to a blocked client without sleeping; from 16
/// connections one event loop is as fast and costs less client CPU. (Unpinned on 2
/// cores: load_cpus 1, so up to 8 threads, then 1 loop, as before load_cpus existed.)
pub fn client_threads_for(asked: usize, connections: usize, load_cpus: usize) -> usize {
    let connections = connections.max(1);
    if asked != AUTO_THREADS {
        return asked.min(connections);
    }
    let load_cpus = load_cpus.max(1);
    if connections <= 8 * load_cpus {
        connections
    } else {
        load_cpus
    }
}

/// What the connections of one client thread share: the login, the workload's own
/// read-only plan (`work`), the coordinator's state, the thread's recorder, a gate on
/// concurrent connects, the progress counters.
pub struct Lane<W> {
    pub db: Db,
    pub work: std::sync::Arc<W>,
    pub sh: Arc<Shared>,
    pub st: Rc<RefCell<ThreadRec>>,
    /// Limits concurrent connects (see [`CONNECTS_AT_ONCE`]).
    pub gate: tokio::sync::Semaphore,
    pub live: Arc<Live>,
    /// Thread 0 reports progress.
    pub reporter: bool,
    /// The thread owns one connection, which then uses blocking socket calls and does
    /// the ticker's work itself between transactions.
    pub blocking: bool,
}

impl<W> Lane<W> {
    /// The lane of client thread `t`, owning `owned` connections.
    pub fn new(
        db: &Db,
        work: &std::sync::Arc<W>,
        sh: &Arc<Shared>,
        st: &Rc<RefCell<ThreadRec>>,
        live: &Arc<Live>,
        t: usize,
        owned: usize,
    ) -> Lane<W> {
        Lane {
            db: db.clone(),
            work: work.clone(),
            sh: sh.clone(),
            st: st.clone(),
            gate: tokio::sync::Semaphore::new(CONNECTS_AT_ONCE),
            live: live.clone(),
            reporter: t == 0,
            blocking: owned == 1,
        }
    }

    /// Opens connection `conn` (of `connections`) on this lane, as [`open`] does, with
    /// `statements` statement slots, prepared when `prepared`.
    pub async fn open(
        &self,
        conn: usize,
        connections: usize,
        statements: usize,
        prepared: bool,
    ) -> Option<Client> {
        let (gate, sh) = (&self.gate, &*self.sh);
        open(
            &self.db,
            statements,
            prepared,
            gate,
            sh,
            conn,
            connections,
            self.blocking,
        )
        .await
    }

    /// Closes a connection of this lane once the measured window has ended, or, where
    /// the hooks ask ([`PhaseHooks::keep_connections`]), once its end hooks have
    /// returned, so what they read of the server (MySQL's prepared statements, which go
    /// with their connection) still holds every connection's figures.
    pub async fn close(&self, client: Client) {
        self.sh.until_closing().await;
        client.close().await;
    }

    /// Records a measured operation of `command` (its response time `ns`, `queries` sent)
    /// in this thread's measurements and counts it toward the run's operations.
    #[inline]
    pub fn record(&self, command: u8, ns: u64, queries: u64) {
        let mut s = self.st.borrow_mut();
        s.rec.record(command, ns, ns);
        s.queries += queries;
        s.kinds[command as usize].saturating_record(ns.max(1));
        drop(s);
        self.sh.measured.fetch_add(1, Ordering::Relaxed);
    }

    /// [`tick`] for this lane's thread.
    #[inline]
    pub fn tick(&self) -> bool {
        tick(self.reporter, &self.sh, &self.st, &self.live)
    }
}

/// A current-thread tokio runtime with I/O and timers.
pub fn runtime() -> Result<tokio::runtime::Runtime, LoadError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(LoadError::Io)
}

/// State every thread reads; written by the coordinator (phase) and on failure.
pub struct Shared {
    phase: AtomicU8,
    pub connected: AtomicUsize,
    /// Operations completed in the measured window (for `Measure::Ops`).
    pub measured: AtomicU64,
    pub reconnects: AtomicU64,
    pub abort: AtomicBool,
    /// Set once the connections may close: the window ended (or, where the hooks keep
    /// the connections, its end hooks returned), or the run stopped. Until then a
    /// connection that stopped sending stays open ([`Lane::close`]).
    closing: AtomicBool,
    error: Mutex<Option<String>>,
    epoch: Instant,
    /// Wakes `sleep` on every phase change and on failure.
    wake: tokio::sync::Notify,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            phase: AtomicU8::new(Phase::Connect as u8),
            connected: AtomicUsize::new(0),
            measured: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            error: Mutex::new(None),
            epoch: Instant::now(),
            wake: tokio::sync::Notify::new(),
        }
    }
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Connect,
            2 => Phase::Warmup,
            3 => Phase::Measure,
            _ => Phase::Done,
        }
    }
    fn set_phase(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Release);
        self.wake.notify_waiters();
    }
    pub fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    /// Ends the run with `message` (the first failure wins).
    pub fn fail(&self, message: String) {
        if let Ok(mut g) = self.error.lock() {
            g.get_or_insert(message);
        }
        self.abort.store(true, Ordering::SeqCst);
        self.wake.notify_waiters();
    }
    /// Lets the connections close ([`Lane::close`]).
    fn release(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.wake.notify_waiters();
    }

    /// Waits until the connections may close: the window's end hooks have returned, or
    /// the run failed.
    async fn until_closing(&self) {
        loop {
            let mut notified = pin!(self.wake.notified());
            notified.as_mut().enable();
            if self.closing.load(Ordering::SeqCst) || self.abort.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    pub fn stopped(&self) -> bool {
        self.abort.load(Ordering::Relaxed) || self.phase() == Phase::Done
    }
    /// Sleeps `d`, cut short when the run stops meanwhile; false if the run has stopped.
    /// (No polling: the coordinator's phase changes and `fail` wake the sleeper.)
    pub async fn sleep(&self, d: Duration) -> bool {
        let mut notified = pin!(self.wake.notified());
        // Registered before the check, so a stop after it wakes this sleep.
        notified.as_mut().enable();
        if self.stopped() {
            return false;
        }
        let mut timer = pin!(tokio::time::sleep(d));
        loop {
            let woken = poll_fn(|cx| {
                if notified.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(true);
                }
                timer.as_mut().poll(cx).map(|()| false)
            })
            .await;
            if !woken || self.stopped() {
                return !self.stopped();
            }
            // A phase change that is not the end: wait on.
            notified.set(self.wake.notified());
            notified.as_mut().enable();
            if self.stopped() {
                return false;
            }
        }
    }
}

/// One client thread's measurements.
pub struct ThreadRec {
    pub rec: Recorder,
    /// Response times per kind (oltp: statement kinds; tpcc: transaction kinds).
    pub kinds: Vec<Histogram<u64>>,
    /// Counters the workload defines (tpcc: rollbacks, retries, errors per kind).
    pub counters: Vec<u64>,
    pub queries: u64,
    pub measuring: bool,
    time_start: ThreadTime,
    pub time: ThreadTime,
}

impl ThreadRec {
    /// `commands` for the recorder's per-command counts, `kinds` histograms, `counters`.
    pub fn new(commands: usize, kinds: usize, counters: usize) -> ThreadRec {
        ThreadRec {
            rec: Recorder::new(commands, false),
            kinds: (0..kinds).map(|_| histogram()).collect(),
            counters: vec![0; counters],
            queries: 0,
            measuring: false,
            time_start: ThreadTime::default(),
            time: ThreadTime::default(),
        }
    }
}

/// The measured window of a finished run and every thread's measurements.
pub struct Window {
    pub outs: Vec<ThreadRec>,
    /// Start and end of the measured window, ns since the run's epoch.
    pub start: u64,
    pub end: u64,
    pub reconnects: u64,
}

/// What a run is driven through: its phases, the hooks called at the measured window's
/// edges, where its progress goes, and the flag that cancels it.
#[derive(Clone, Copy)]
pub struct Drive<'a> {
    pub phases: &'a Phases,
    pub hooks: &'a dyn PhaseHooks,
    pub live: &'a Arc<Live>,
    pub cancel: &'a AtomicBool,
}

/// Runs `threads` client threads (`thread(t, shared)` each) over `connections`
/// connections through `d`'s phases; their measurements and the measured window, or why
/// the run failed.
pub fn drive<F>(
    connections: usize,
    threads: usize,
    d: &Drive,
    thread: F,
) -> Result<Window, LoadError>
where
    F: Fn(usize, &Arc<Shared>) -> Option<ThreadRec> + Sync,
{
    if connections == 0 || threads == 0 || threads > connections {
        return Err(LoadError::Settings(format!(
            "need 1 <= client_threads ({threads}) <= connections ({connections})"
        )));
    }
    raise_nofile();
    let shared = Arc::new(Shared::new());
    d.live.set_phase(Phase::Connect);
    let (outs, window) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (shared, thread) = (shared.clone(), &thread);
                scope.spawn(move || thread(t, &shared))
            })
            .collect();
        let window = coordinate(connections, d, &shared);
        shared.release();
        let outs: Vec<Option<ThreadRec>> = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect();
        (outs, window)
    });
    d.live.set_phase(Phase::Done);
    if let Some(e) = shared.error.lock().ok().and_then(|mut g| g.take()) {
        return Err(LoadError::Sql(e));
    }
    if d.cancel.load(Ordering::SeqCst) {
        return Err(LoadError::Cancelled);
    }
    let Some((start, end)) = window else {
        return Err(LoadError::Cancelled);
    };
    Ok(Window {
        outs: outs.into_iter().flatten().collect(),
        start,
        end,
        reconnects: shared.reconnects.load(Ordering::SeqCst),
    })
}

/// [`drive`] with each client thread's connections on one [`Lane`] over `work`: thread `t`
/// owns connections `t`, `t + threads`, ... and starts with the measurements `rec(t)`;
/// `connection(i, lane)` is connection `i`'s future.
pub fn drive_lanes<W, R, C, Fut>(
    connections: usize,
    threads: usize,
    d: &Drive,
    db: &Db,
    work: &Arc<W>,
    rec: R,
    connection: C,
) -> Result<Window, LoadError>
where
    W: Send + Sync,
    R: Fn(usize) -> ThreadRec + Sync,
    C: Fn(usize, Rc<Lane<W>>) -> Fut + Sync,
    Fut: Future<Output = ()> + 'static,
{
    drive(connections, threads, d, |t, sh| {
        let owned = (t..connections).step_by(threads).count();
        client_thread(t == 0, sh, d.live, rec(t), |st| {
            let lane = Rc::new(Lane::new(db, work, sh, st, d.live, t, owned));
            (t..connections)
                .step_by(threads)
                .map(|i| connection(i, lane.clone()))
                .collect()
        })
    })
}

/// Connection `conn`'s own seed, drawn from the run's `seed`.
pub fn connection_seed(seed: u64, conn: usize) -> u64 {
    mix(seed ^ mix(conn as u64 + 1))
}

/// [`drive_lanes`] for a load whose operations are `commands` (a histogram each, no
/// counters): connection `i`'s future is `connection(i, lane, connection_seed(seed, i))`.
/// The threads' record merged, with each command that ran and the reconnects.
pub fn drive_commands<W, C, Fut>(
    (connections, threads): (usize, usize),
    d: &Drive,
    db: &Db,
    work: &Arc<W>,
    seed: u64,
    commands: &[&str],
    connection: C,
) -> Result<RunRecord, LoadError>
where
    W: Send + Sync,
    C: Fn(usize, Rc<Lane<W>>, u64) -> Fut + Sync,
    Fut: Future<Output = ()> + 'static,
{
    let n = commands.len();
    let w = drive_lanes(
        connections,
        threads,
        d,
        db,
        work,
        |_| ThreadRec::new(n, n, 0),
        |i, lane| connection(i, lane, connection_seed(seed, i)),
    )?;
    let (mut r, kinds, _) = merge(w.outs, (w.start, w.end), threads, n, 0);
    r.reconnects = w.reconnects;
    record_kinds(&mut r, commands, &kinds);
    d.live.set_progress(r.ops, w.end);
    Ok(r)
}

/// Moves the threads through the phases; the measured window (ns since the epoch).
fn coordinate(connections: usize, d: &Drive, sh: &Shared) -> Option<(u64, u64)> {
    let (phases, hooks, live, cancel) = (d.phases, d.hooks, d.live, d.cancel);
    let wait = |deadline: Option<Instant>, until: &dyn Fn() -> bool| -> bool {
        loop {
            if sh.abort.load(Ordering::SeqCst) {
                return false;
            }
            if cancel.load(Ordering::SeqCst) {
                sh.abort.store(true, Ordering::SeqCst);
                return false;
            }
            if until() {
                return true;
            }
            // Sleep to the deadline in steps of 10 ms (cancel and abort are seen within
            // that); poll every 1 ms when waiting for an op count. Waking the client's
            // cores more often than that costs the run measurably on a small machine.
            let step = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return true;
                    }
                    (d - now).min(Duration::from_millis(10))
                }
                None => Duration::from_millis(1),
            };
            std::thread::sleep(step);
        }
    };
    let set = |p: Phase| {
        sh.set_phase(p);
        live.set_phase(p);
    };
    let connect_by = Instant::now() + CONNECT_DEADLINE;
    let all = || sh.connected.load(Ordering::SeqCst) >= connections;
    if !wait(Some(connect_by), &all) || !all() {
        if !sh.abort.load(Ordering::SeqCst) && !cancel.load(Ordering::SeqCst) {
            sh.fail(format!(
                "only {} of {} connections opened in {} s; the server may limit connections (max_connections) or be overloaded",
                sh.connected.load(Ordering::SeqCst),
                connections,
                CONNECT_DEADLINE.as_secs()
            ));
        }
        set(Phase::Done);
        return None;
    }
    set(Phase::Warmup);
    if !wait(Some(Instant::now() + phases.warmup), &|| false) {
        set(Phase::Done);
        return None;
    }
    hooks.measure_started();
    let start = sh.now_ns();
    live.set_measure_start(start);
    set(Phase::Measure);
    let ok = match phases.measure {
        Measure::Duration(d) => wait(Some(Instant::now() + d), &|| false),
        Measure::Ops(n) => wait(None, &|| sh.measured.load(Ordering::Relaxed) >= n),
    };
    let end = sh.now_ns();
    set(Phase::Done);
    if !hooks.keep_connections() {
        sh.release();
    }
    hooks.measure_ended();
    ok.then_some((start, end))
}

/// One client thread: a current-thread runtime running the futures `connections` makes
/// (one per connection, given this thread's measurements) and the ticker, until all are
/// done; its measurements. `reporter`: this thread reports progress to `live`.
pub fn client_thread<F, Fut>(
    reporter: bool,
    sh: &Shared,
    live: &Live,
    rec: ThreadRec,
    connections: F,
) -> Option<ThreadRec>
where
    F: FnOnce(&Rc<RefCell<ThreadRec>>) -> Vec<Fut>,
    Fut: Future<Output = ()> + 'static,
{
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            sh.fail(format!("cannot start a client thread: {e}"));
            return None;
        }
    };
    let st = Rc::new(RefCell::new(rec));
    let futures = connections(&st);
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let tasks: Vec<_> = futures.into_iter().map(tokio::task::spawn_local).collect();
        ticker(reporter, sh, &st, live).await;
        for task in tasks {
            let _ = task.await;
        }
    });
    drop(local);
    Rc::try_unwrap(st).ok().map(RefCell::into_inner)
}

/// Opens connection `conn` (of `connections`) with at most `gate`'s permits opening at
/// once, counts it as connected and waits for the warmup; switched to blocking socket
/// calls when `blocking`. None (and the run failed) when it cannot open.
#[allow(clippy::too_many_arguments)]
pub async fn open(
    db: &Db,
    statements: usize,
    prepared: bool,
    gate: &tokio::sync::Semaphore,
    sh: &Shared,
    conn: usize,
    connections: usize,
    blocking: bool,
) -> Option<Client> {
    let opened = {
        let _permit = gate.acquire().await;
        Client::connect(db, statements, prepared).await
    };
    let mut client = match opened {
        Ok(c) => c,
        Err(e) => {
            sh.fail(format!(
                "connection {} of {} could not open: {} ({})",
                conn + 1,
                connections,
                e.message,
                e.kind
            ));
            return None;
        }
    };
    sh.connected.fetch_add(1, Ordering::SeqCst);
    while sh.phase() == Phase::Connect && !sh.abort.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    if blocking {
        if let Err(e) = client.make_blocking() {
            sh.fail(format!("connection {}: {}", conn + 1, e.message));
            return None;
        }
    }
    Some(client)
}

/// Starts and ends this thread's measured window, rotates its intervals every second,
/// and (thread 0) reports progress, until the run is over.
async fn ticker(reporter: bool, sh: &Shared, st: &RefCell<ThreadRec>, live: &Live) {
    while !tick(reporter, sh, st, live) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// One look at the phase: opens, rotates or closes this thread's measured window. True
/// once the run is over. The ticker task calls it every 2 ms; a connection in blocking
/// mode (which starves the ticker) calls it after every transaction.
#[inline]
pub fn tick(reporter: bool, sh: &Shared, st: &RefCell<ThreadRec>, live: &Live) -> bool {
    let phase = sh.phase();
    let now = sh.now_ns();
    {
        let mut s = st.borrow_mut();
        if phase == Phase::Measure && !s.measuring {
            s.rec.start(now);
            for h in &mut s.kinds {
                h.reset();
            }
            s.counters.iter_mut().for_each(|c| *c = 0);
            s.queries = 0;
            s.measuring = true;
            s.time_start = ThreadTime::now();
        } else if s.measuring {
            s.rec.tick(now);
        }
        if phase == Phase::Done || sh.abort.load(Ordering::Relaxed) {
            if s.measuring {
                s.rec.finish(now);
                s.time = ThreadTime::since(s.time_start);
                s.measuring = false;
            }
            return true;
        }
    }
    if reporter && phase == Phase::Measure {
        live.set_progress(sh.measured.load(Ordering::Relaxed), now);
    }
    false
}

/// The threads' measurements merged over the measured window `start..end`: the record
/// (ops, throughput, response times, misses and failed verifications, queries, client
/// CPU, errors, intervals, hdr log),
/// the `n_kinds` per-kind histograms and the `n_counters` counters, summed over threads.
/// The caller fills `kinds` and `by_command`.
pub fn merge(
    outs: Vec<ThreadRec>,
    (start, end): (u64, u64),
    threads: usize,
    n_kinds: usize,
    n_counters: usize,
) -> (RunRecord, Vec<Histogram<u64>>, Vec<u64>) {
    let elapsed_s = (end.saturating_sub(start) as f64 / 1e9).max(1e-9);
    let mut total = histogram();
    let mut kinds: Vec<Histogram<u64>> = (0..n_kinds).map(|_| histogram()).collect();
    let mut counters = vec![0u64; n_counters];
    let mut r = RunRecord {
        client_threads: threads,
        elapsed_s,
        ..RunRecord::default()
    };
    let mut raw = Vec::new();
    for t in outs {
        let _ = total.add(&t.rec.total);
        for (sum, h) in kinds.iter_mut().zip(&t.kinds) {
            let _ = sum.add(h);
        }
        for (sum, c) in counters.iter_mut().zip(&t.counters) {
            *sum += c;
        }
        r.ops += t.rec.ops;
        r.misses += t.rec.misses;
        r.verify_failures += t.rec.verify_failures;
        r.queries += t.queries;
        r.client_cpu_s += t.time.cpu_s;
        r.client_wait_s += t.time.wait_s;
        for (k, n) in &t.rec.errors {
            *r.errors.entry(k.to_string()).or_default() += n;
        }
        raw.push(t.rec.intervals);
    }
    r.ops_per_s = r.ops as f64 / elapsed_s;
    r.latency_us = percentiles(&total);
    let (intervals, log) = merge_intervals(&raw, start);
    r.intervals = intervals;
    r.hdr_log = log;
    r.client_rss_kib = bakeoff_engine::peak_rss_kib();
    r.client_bound = bakeoff_engine::load_set_the_pace(r.client_cpu_s, threads, elapsed_s);
    (r, kinds, counters)
}

/// One kind's figures from its response times: count, percentiles, the histogram.
pub fn kind_stats(h: &Histogram<u64>) -> KindStats {
    KindStats {
        count: h.len(),
        latency_us: percentiles(h),
        hist: bakeoff_engine::serialize_histogram(h),
    }
}

/// Each of `kinds` that ran, named as in `names`, into `r`: its count (`by_command`) and
/// its figures (`kinds`).
pub fn record_kinds(r: &mut RunRecord, names: &[&str], kinds: &[Histogram<u64>]) {
    for (name, h) in names.iter().zip(kinds) {
        if !h.is_empty() {
            r.by_command.insert(name.to_string(), h.len());
            r.kinds.insert(name.to_string(), kind_stats(h));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_end_with_the_run_not_with_other_phase_changes() {
        let sh = Arc::new(Shared::new());
        sh.set_phase(Phase::Warmup);
        let rt = runtime().unwrap();
        let changer = {
            let sh = sh.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                sh.set_phase(Phase::Measure);
                std::thread::sleep(Duration::from_millis(300));
                sh.set_phase(Phase::Done);
            })
        };
        let t0 = Instant::now();
        assert!(rt.block_on(sh.sleep(Duration::from_millis(100))));
        assert!(t0.elapsed() >= Duration::from_millis(100));
        assert!(!rt.block_on(sh.sleep(Duration::from_secs(30))));
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        changer.join().unwrap();
        assert!(
            !rt.block_on(sh.sleep(Duration::from_secs(30))),
            "already over"
        );
        let failed = Shared::new();
        failed.fail("boom".into());
        assert!(!rt.block_on(failed.sleep(Duration::from_secs(30))));
    }

    #[test]
    fn asked_threads_are_kept_but_never_more_than_connections() {
        assert_eq!(client_threads_for(2, 16, 8), 2);
        assert_eq!(client_threads_for(8, 4, 1), 4);
    }

    #[test]
    fn auto_gives_a_thread_per_connection_up_to_eight_per_load_cpu_then_a_loop_per_cpu() {
        // 2 cores, unpinned: one load CPU.
        assert_eq!(client_threads_for(AUTO_THREADS, 1, 1), 1);
        assert_eq!(client_threads_for(AUTO_THREADS, 8, 1), 8);
        assert_eq!(client_threads_for(AUTO_THREADS, 9, 1), 1);
        assert_eq!(client_threads_for(AUTO_THREADS, 1024, 1), 1);
        // 16 cores split in two: 8 load CPUs.
        assert_eq!(client_threads_for(AUTO_THREADS, 64, 8), 64);
        assert_eq!(client_threads_for(AUTO_THREADS, 256, 8), 8);
        assert_eq!(client_threads_for(AUTO_THREADS, 1024, 64), 64);
        assert_eq!(client_threads_for(AUTO_THREADS, 4, 0), 4);
    }
}
