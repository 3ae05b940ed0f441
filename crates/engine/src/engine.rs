//! The engine: a coordinator (the calling thread) moves every client thread through the
//! phases (connect, preload, warmup, measure, done) with one atomic; each client thread
//! runs a level-triggered epoll loop over its connections.
//!
//! Per readiness a connection costs one read; every reply parsed from it may issue the
//! next request into the connection's output buffer, and each dirty connection gets one
//! write per loop iteration. The clock is read once per ready connection.

use crate::net::{self, Epoll};
use crate::record::{merge_intervals, percentiles, Recorder};
use crate::rng::{mix, Rng};
use crate::{Endpoint, Live, LoadError, Measure, Phase, PhaseHooks, Phases, RunRecord, Schedule};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What parsing one reply found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Bytes of the reply.
    pub consumed: usize,
    /// Index into the factory's command names.
    pub cmd: u8,
    pub misses: u32,
    pub verify_failures: u32,
    /// An error reply (e.g. "server_error"); the reply was still consumed.
    pub error: Option<&'static str>,
}

/// One connection's protocol state, made by the workload.
pub trait Session: Send {
    /// Appends one request to `out`; false when there is nothing to send (in the preload
    /// phase: every key of this connection is set).
    fn issue(&mut self, out: &mut Vec<u8>, phase: Phase) -> bool;
    /// Parses the reply to the oldest outstanding request from the front of `buf`:
    /// Ok(None) when it is not complete yet.
    fn complete(&mut self, buf: &[u8]) -> Result<Option<Outcome>, String>;
}

/// Makes sessions; one per connection.
pub trait SessionFactory: Sync {
    type S: Session;
    /// Command names, indexed by [`Outcome::cmd`].
    fn commands(&self) -> &'static [&'static str];
    /// The session for connection `conn` of `connections`, with its own seed.
    fn session(&self, conn: usize, connections: usize, seed: u64) -> Self::S;
}

/// The engine's settings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub connections: usize,
    pub threads: usize,
    pub schedule: Schedule,
    pub phases: Phases,
    pub seed: u64,
    pub preload: bool,
}

const PRELOAD_DEPTH: usize = 32;
const OPEN_LOOP_CAP: usize = 512;
const STALL_NS: u64 = 5_000_000_000;
const LATE_NS: u64 = 1_000_000;

struct Shared {
    phase: AtomicU8,
    ready: AtomicUsize,
    preloaded: AtomicUsize,
    measured: AtomicUsize,
    abort: AtomicBool,
    epoch: Instant,
    error: Mutex<Option<LoadError>>,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    fn fail(&self, e: LoadError) {
        if let Ok(mut g) = self.error.lock() {
            g.get_or_insert(e);
        }
        self.abort.store(true, Ordering::SeqCst);
    }
}

/// Runs the whole load: connect, preload, warmup, measure. Spawns and joins its threads.
pub fn run<F: SessionFactory>(
    addr: impl Into<Endpoint>,
    factory: &F,
    s: &Settings,
    hooks: &dyn PhaseHooks,
    live: &Live,
    cancel: &AtomicBool,
) -> Result<RunRecord, LoadError> {
    if s.connections == 0 || s.threads == 0 || s.threads > s.connections {
        return Err(LoadError::Settings(format!(
            "need 1 <= client_threads ({}) <= connections ({})",
            s.threads, s.connections
        )));
    }
    let addr: Endpoint = addr.into();
    let addr = &addr;
    net::raise_nofile();
    let shared = Shared {
        phase: AtomicU8::new(Phase::Connect as u8),
        ready: AtomicUsize::new(0),
        preloaded: AtomicUsize::new(0),
        measured: AtomicUsize::new(0),
        abort: AtomicBool::new(false),
        epoch: Instant::now(),
        error: Mutex::new(None),
    };
    let results: Option<Vec<Option<ThreadResult>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..s.threads)
            .map(|t| {
                let shared = &shared;
                scope.spawn(
                    move || match client_thread(t, addr, factory, s, shared, live) {
                        Ok(r) => Some(r),
                        Err(e) => {
                            shared.fail(e);
                            None
                        }
                    },
                )
            })
            .collect();
        let window = coordinate(s, &shared, hooks, live, cancel);
        let out: Vec<Option<ThreadResult>> = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect();
        window.map(|w| out_with_window(out, w))
    });
    if let Some(e) = shared.error.lock().ok().and_then(|mut g| g.take()) {
        return Err(e);
    }
    let Some(results) = results.filter(|_| !cancel.load(Ordering::SeqCst)) else {
        return Err(LoadError::Cancelled);
    };
    let threads: Vec<ThreadResult> = results.into_iter().flatten().collect();
    Ok(summarize(s, factory.commands(), threads, live))
}

fn out_with_window(mut out: Vec<Option<ThreadResult>>, w: (u64, u64)) -> Vec<Option<ThreadResult>> {
    for r in out.iter_mut().flatten() {
        r.window = w;
    }
    out
}

/// Sleeps in small steps until `until` says stop; false if aborted or cancelled.
fn wait(
    shared: &Shared,
    cancel: &AtomicBool,
    deadline: Option<Instant>,
    until: impl Fn() -> bool,
) -> bool {
    loop {
        if shared.abort.load(Ordering::SeqCst) {
            return false;
        }
        if cancel.load(Ordering::SeqCst) {
            shared.abort.store(true, Ordering::SeqCst);
            return false;
        }
        if until() || deadline.is_some_and(|d| Instant::now() >= d) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// Moves the threads through the phases; returns the measured window (ns since epoch).
fn coordinate(
    s: &Settings,
    sh: &Shared,
    hooks: &dyn PhaseHooks,
    live: &Live,
    cancel: &AtomicBool,
) -> Option<(u64, u64)> {
    let set = |p: Phase| {
        sh.phase.store(p as u8, Ordering::SeqCst);
        live.phase.store(p as u8, Ordering::Relaxed);
    };
    let all = |c: &AtomicUsize| c.load(Ordering::SeqCst) >= s.threads;
    let ok = wait(sh, cancel, None, || all(&sh.ready));
    if ok && s.preload {
        set(Phase::Preload);
        if !wait(sh, cancel, None, || all(&sh.preloaded)) {
            return stop(sh, live);
        }
    }
    if !ok {
        return stop(sh, live);
    }
    set(Phase::Warmup);
    if !wait(sh, cancel, Some(Instant::now() + s.phases.warmup), || false) {
        return stop(sh, live);
    }
    hooks.measure_started();
    let start = sh.now_ns();
    live.measure_start_ns.store(start.max(1), Ordering::Relaxed);
    set(Phase::Measure);
    let finished = match s.phases.measure {
        Measure::Duration(d) => wait(sh, cancel, Some(Instant::now() + d), || false),
        Measure::Ops(_) => wait(sh, cancel, None, || all(&sh.measured)),
    };
    let end = sh.now_ns();
    set(Phase::Done);
    hooks.measure_ended();
    if !finished {
        return None;
    }
    Some((start, end))
}

fn stop(sh: &Shared, live: &Live) -> Option<(u64, u64)> {
    sh.phase.store(Phase::Done as u8, Ordering::SeqCst);
    live.phase.store(Phase::Done as u8, Ordering::Relaxed);
    None
}

struct ThreadResult {
    rec: Recorder,
    time: net::ThreadTime,
    window: (u64, u64),
}

fn summarize(
    s: &Settings,
    commands: &[&str],
    threads: Vec<ThreadResult>,
    live: &Live,
) -> RunRecord {
    let (start, end) = threads.first().map_or((0, 1), |t| t.window);
    let elapsed_s = (end.saturating_sub(start) as f64 / 1e9).max(1e-9);
    let mut total = crate::record::histogram();
    let mut service = crate::record::histogram();
    let mut r = RunRecord {
        client_threads: s.threads,
        elapsed_s,
        ..RunRecord::default()
    };
    let mut raw = Vec::new();
    for t in threads {
        let _ = total.add(&t.rec.total);
        if let Some(h) = &t.rec.service {
            let _ = service.add(h);
        }
        r.ops += t.rec.ops;
        r.misses += t.rec.misses;
        r.verify_failures += t.rec.verify_failures;
        r.late += t.rec.late;
        r.client_cpu_s += t.time.cpu_s;
        r.client_wait_s += t.time.wait_s;
        for (k, n) in &t.rec.errors {
            *r.errors.entry(k.to_string()).or_default() += n;
        }
        for (i, n) in t.rec.by_command.iter().enumerate() {
            if *n > 0 {
                let name = commands
                    .get(i)
                    .map_or_else(|| i.to_string(), |c| c.to_string());
                *r.by_command.entry(name).or_default() += n;
            }
        }
        raw.push(t.rec.intervals);
    }
    r.ops_per_s = r.ops as f64 / elapsed_s;
    r.queries = r.ops;
    r.latency_us = percentiles(&total);
    let (intervals, log) = merge_intervals(&raw, start);
    r.intervals = intervals;
    r.hdr_log = log;
    r.client_rss_kib = net::peak_rss_kib();
    let cpu_bound = net::load_set_the_pace(r.client_cpu_s, s.threads, elapsed_s);
    if let Schedule::OpenLoop { rate, .. } = s.schedule {
        r.service_us = Some(percentiles(&service));
        r.service_hist = crate::merge::serialize_histogram(&service);
        r.offered_ops_per_s = Some(rate);
        r.client_bound = cpu_bound || r.ops_per_s < 0.95 * rate;
    } else {
        r.client_bound = cpu_bound;
    }
    live.ops.store(r.ops, Ordering::Relaxed);
    r
}

/// One connection: socket, buffers, its session, and the send times of what is in flight.
struct Conn<S> {
    stream: std::os::fd::OwnedFd,
    session: S,
    inbuf: Vec<u8>,
    in_start: usize,
    in_len: usize,
    out: Vec<u8>,
    out_pos: usize,
    dirty: bool,
    writing: bool,
    /// (intended send, actual send) in ns since the epoch, oldest first.
    pending: VecDeque<(u64, u64)>,
    exhausted: bool,
    next_due: u64,
}

/// A client thread's state.
struct Loop<'a, S> {
    conns: Vec<Conn<S>>,
    epoll: Epoll,
    rec: Recorder,
    sh: &'a Shared,
    s: &'a Settings,
    rng: Rng,
    phase: Phase,
    share: u64,
    issued: u64,
    measured_done: bool,
    preload_done: bool,
    dirty: Vec<usize>,
    due: BinaryHeap<Reverse<(u64, usize)>>,
    last_progress: u64,
    in_flight: usize,
    time_start: net::ThreadTime,
    time: net::ThreadTime,
}

fn client_thread<F: SessionFactory>(
    t: usize,
    addr: &Endpoint,
    factory: &F,
    s: &Settings,
    sh: &Shared,
    live: &Live,
) -> Result<ThreadResult, LoadError> {
    let mine: Vec<usize> = (t..s.connections).step_by(s.threads).collect();
    let epoll = Epoll::new(mine.len())?;
    let mut conns = Vec::with_capacity(mine.len());
    for (i, &c) in mine.iter().enumerate() {
        let stream = net::connect(addr).map_err(|cause| LoadError::Connect {
            addr: addr.clone(),
            cause,
        })?;
        epoll.add(stream.as_raw_fd(), i as u64)?;
        conns.push(Conn {
            stream,
            session: factory.session(c, s.connections, mix(s.seed ^ mix(c as u64))),
            inbuf: vec![0; 64 * 1024],
            in_start: 0,
            in_len: 0,
            out: Vec::with_capacity(16 * 1024),
            out_pos: 0,
            dirty: false,
            writing: false,
            pending: VecDeque::with_capacity(64),
            exhausted: false,
            next_due: 0,
        });
    }
    let share = match s.phases.measure {
        Measure::Ops(n) => n / s.threads as u64 + u64::from((t as u64) < n % s.threads as u64),
        Measure::Duration(_) => u64::MAX,
    };
    sh.ready.fetch_add(1, Ordering::SeqCst);
    let mut lp = Loop {
        conns,
        epoll,
        rec: Recorder::new(
            factory.commands().len(),
            matches!(s.schedule, Schedule::OpenLoop { .. }),
        ),
        sh,
        s,
        rng: Rng::new(mix(s.seed ^ 0xC0FFEE ^ t as u64)),
        phase: Phase::Connect,
        share,
        issued: 0,
        measured_done: false,
        preload_done: false,
        dirty: Vec::with_capacity(mine.len()),
        due: BinaryHeap::new(),
        last_progress: sh.now_ns(),
        in_flight: 0,
        time_start: net::ThreadTime::default(),
        time: net::ThreadTime::default(),
    };
    lp.event_loop(t == 0, live)?;
    Ok(ThreadResult {
        rec: lp.rec,
        time: lp.time,
        window: (0, 0),
    })
}

impl<S: Session> Loop<'_, S> {
    fn event_loop(&mut self, reporter: bool, live: &Live) -> Result<(), LoadError> {
        let mut events: Vec<(usize, u32)> = Vec::with_capacity(self.conns.len());
        let mut reported = 0u64;
        loop {
            if self.sh.abort.load(Ordering::Relaxed) {
                return Ok(());
            }
            let now = self.sh.now_ns();
            let p = Phase::from_u8(self.sh.phase.load(Ordering::Acquire));
            if p != self.phase && !self.enter(p, now) {
                return Ok(());
            }
            self.issue_due(now);
            self.flush()?;
            let timeout = self.timeout(now);
            events.clear();
            events.extend(
                self.epoll
                    .wait(timeout)?
                    .iter()
                    .map(|e| (e.u64 as usize, e.events)),
            );
            for &(i, flags) in &events {
                if flags
                    & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32
                    != 0
                {
                    self.readable(i)?;
                }
                if flags & libc::EPOLLOUT as u32 != 0 && !self.conns[i].dirty {
                    self.conns[i].dirty = true;
                    self.dirty.push(i);
                }
            }
            let now = self.sh.now_ns();
            if self.phase == Phase::Measure {
                self.rec.tick(now);
                live.ops
                    .fetch_add(self.rec.ops - reported, Ordering::Relaxed);
                reported = self.rec.ops;
                if reporter {
                    live.now_ns.store(now, Ordering::Relaxed);
                }
            }
            self.check_progress(now)?;
        }
    }

    /// Handles a phase change; false when the thread should end.
    fn enter(&mut self, p: Phase, now: u64) -> bool {
        let prev = self.phase;
        self.phase = p;
        match p {
            Phase::Connect => true,
            Phase::Preload => {
                for i in 0..self.conns.len() {
                    self.fill(i, PRELOAD_DEPTH, now);
                }
                self.check_preloaded();
                true
            }
            Phase::Warmup | Phase::Measure => {
                if matches!(prev, Phase::Connect | Phase::Preload) {
                    self.prime(now);
                }
                if p == Phase::Measure {
                    self.rec.start(now);
                    self.time_start = net::ThreadTime::now();
                    self.check_measured();
                }
                true
            }
            Phase::Done => {
                if prev == Phase::Measure {
                    self.rec.finish(now);
                    self.time = net::ThreadTime::since(self.time_start);
                }
                false
            }
        }
    }

    /// Starts the workload on every connection: fill the pipeline, or schedule sends.
    fn prime(&mut self, now: u64) {
        for c in &mut self.conns {
            c.exhausted = false;
        }
        match self.s.schedule {
            Schedule::ClosedLoop { pipeline } => {
                for i in 0..self.conns.len() {
                    self.fill(i, pipeline.max(1), now);
                }
            }
            Schedule::OpenLoop { rate, .. } => {
                let interval = self.interval_ns(rate);
                let total = self.s.connections as f64;
                for (k, c) in self.conns.iter_mut().enumerate() {
                    let global = k * self.s.threads;
                    c.next_due = now + (interval * global as f64 / total) as u64;
                    self.due.push(Reverse((c.next_due, k)));
                }
            }
        }
    }

    fn interval_ns(&self, rate: f64) -> f64 {
        1e9 * self.s.connections as f64 / rate.max(1e-9)
    }

    /// Issues requests on connection `i` until `depth` are in flight.
    fn fill(&mut self, i: usize, depth: usize, now: u64) {
        while self.conns[i].pending.len() < depth && self.try_issue(i, now, now) {}
    }

    fn try_issue(&mut self, i: usize, intended: u64, now: u64) -> bool {
        let phase = self.phase;
        if phase == Phase::Measure && self.issued >= self.share {
            return false;
        }
        let c = &mut self.conns[i];
        if c.exhausted || !c.session.issue(&mut c.out, phase) {
            c.exhausted = phase == Phase::Preload;
            return false;
        }
        c.pending.push_back((intended, now));
        self.in_flight += 1;
        if !c.dirty {
            c.dirty = true;
            self.dirty.push(i);
        }
        if phase == Phase::Measure {
            self.issued += 1;
        }
        true
    }

    /// Open loop: sends every request whose time has come.
    fn issue_due(&mut self, now: u64) {
        let Schedule::OpenLoop { rate, poisson } = self.s.schedule else {
            return;
        };
        if !matches!(self.phase, Phase::Warmup | Phase::Measure) {
            return;
        }
        let mean = self.interval_ns(rate);
        while let Some(&Reverse((due, i))) = self.due.peek() {
            if due > now {
                break;
            }
            if self.conns[i].pending.len() >= OPEN_LOOP_CAP {
                break;
            }
            self.due.pop();
            if !self.try_issue(i, due, now) {
                continue;
            }
            if now - due > LATE_NS && self.phase == Phase::Measure {
                self.rec.late += 1;
            }
            let gap = if poisson {
                -(1.0 - self.rng.unit()).ln() * mean
            } else {
                mean
            };
            self.conns[i].next_due = due + gap.max(1.0) as u64;
            self.due.push(Reverse((self.conns[i].next_due, i)));
        }
    }

    fn timeout(&self, now: u64) -> u64 {
        const MAX: u64 = 20_000_000;
        match self.due.peek() {
            Some(&Reverse((due, _))) if matches!(self.phase, Phase::Warmup | Phase::Measure) => {
                due.saturating_sub(now).min(MAX)
            }
            _ => MAX,
        }
    }

    /// One write per dirty connection.
    fn flush(&mut self) -> Result<(), LoadError> {
        while let Some(i) = self.dirty.pop() {
            let c = &mut self.conns[i];
            c.dirty = false;
            if c.out_pos < c.out.len() {
                c.out_pos += net::write_once(&c.stream, &c.out[c.out_pos..])?;
            }
            let done = c.out_pos >= c.out.len();
            if done {
                c.out.clear();
                c.out_pos = 0;
            }
            if done == c.writing {
                c.writing = !done;
                self.epoll
                    .want_write(c.stream.as_raw_fd(), i as u64, c.writing)?;
            }
        }
        Ok(())
    }

    /// One read, then every complete reply in the buffer.
    fn readable(&mut self, i: usize) -> Result<(), LoadError> {
        let c = &mut self.conns[i];
        if c.in_len == c.inbuf.len() {
            if c.in_start > 0 {
                c.inbuf.copy_within(c.in_start..c.in_len, 0);
                c.in_len -= c.in_start;
                c.in_start = 0;
            } else {
                let n = c.inbuf.len() * 2;
                c.inbuf.resize(n, 0);
            }
        }
        let n = match net::read_once(&c.stream, &mut c.inbuf[c.in_len..])? {
            None => return Ok(()),
            Some(0) => return Err(LoadError::Closed),
            Some(n) => n,
        };
        c.in_len += n;
        let now = self.sh.now_ns();
        self.last_progress = now;
        self.parse(i, now)
    }

    fn parse(&mut self, i: usize, now: u64) -> Result<(), LoadError> {
        loop {
            let c = &mut self.conns[i];
            if c.in_start == c.in_len {
                c.in_start = 0;
                c.in_len = 0;
                return Ok(());
            }
            if c.pending.is_empty() {
                return Err(unsolicited(&c.inbuf[c.in_start..c.in_len]));
            }
            let Some(o) = c
                .session
                .complete(&c.inbuf[c.in_start..c.in_len])
                .map_err(|m| LoadError::Protocol(format!("{m}; see the server's log")))?
            else {
                return Ok(());
            };
            c.in_start += o.consumed.max(1);
            let (intended, sent) = c.pending.pop_front().unwrap_or((now, now));
            self.in_flight -= 1;
            self.completed(i, &o, intended, sent, now);
        }
    }

    fn completed(&mut self, i: usize, o: &Outcome, intended: u64, sent: u64, now: u64) {
        match self.phase {
            Phase::Measure if !self.measured_done => {
                self.rec.record(
                    o.cmd,
                    now.saturating_sub(intended),
                    now.saturating_sub(sent),
                );
                self.rec.misses += u64::from(o.misses);
                self.rec.verify_failures += u64::from(o.verify_failures);
                if let Some(e) = o.error {
                    self.rec.error(e);
                }
                self.check_measured();
            }
            Phase::Preload => {
                self.fill(i, PRELOAD_DEPTH, now);
                self.check_preloaded();
                return;
            }
            _ => {}
        }
        if let Schedule::ClosedLoop { pipeline } = self.s.schedule {
            if matches!(self.phase, Phase::Warmup | Phase::Measure) {
                self.fill(i, pipeline.max(1), now);
            }
        }
    }

    fn check_preloaded(&mut self) {
        if !self.preload_done
            && self
                .conns
                .iter()
                .all(|c| c.exhausted && c.pending.is_empty())
        {
            self.preload_done = true;
            self.sh.preloaded.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn check_measured(&mut self) {
        if !self.measured_done && self.rec.ops >= self.share {
            self.measured_done = true;
            self.sh.measured.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn check_progress(&mut self, now: u64) -> Result<(), LoadError> {
        if self.in_flight == 0 {
            self.last_progress = now;
        } else if now.saturating_sub(self.last_progress) > STALL_NS {
            return Err(LoadError::Stalled(STALL_NS / 1_000_000_000));
        }
        Ok(())
    }
}

/// Data that arrived with no request outstanding: usually the server turning the
/// connection away (memcached: "ERROR Too many open connections"). Quote it.
fn unsolicited(data: &[u8]) -> LoadError {
    let line = data.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(&line[..line.len().min(80)])
        .trim_end()
        .to_string();
    let hint = if text.contains("Too many open connections") {
        "; raise the server's connection limit (memcached: add \"-c\", \"4096\" to args)"
    } else {
        ""
    };
    LoadError::Protocol(format!(
        "the server sent {text:?} with no request outstanding{hint}"
    ))
}
