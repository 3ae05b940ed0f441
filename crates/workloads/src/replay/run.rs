//! The running half of the `replay` workload: sends the statements of a query log (see
//! the parent module) again over `connections` connections, like mysqlslap's clients, and
//! measures every statement, overall and per statement class.
//!
//! Who runs what. Statements are grouped by their `session` (the connection of the log
//! that sent them; a `.sql` file is one session).
//! - One session (a `.sql` file, or a log of one connection): every connection runs the
//!   whole list, `iterations` times, as each of mysqlslap's clients runs its query file.
//! - Several sessions (a general log, a csvlog): the sessions, in the order they first
//!   appear, are dealt round-robin to the connections (session k to connection k mod N);
//!   each connection replays its sessions' statements in log order, interleaved as the log
//!   has them, `iterations` times. Sessions that share a connection share its session
//!   state and transactions; connections beyond the number of sessions open and stay idle.
//!
//! Statements are sent as text, one at a time, as fast as the server answers (no think
//! time, no pacing from the log's timestamps). A statement that fails counts as an error
//! of its kind (`deadlock`, `server_error`, ...) and of its class, and the connection goes
//! on with the next one; a lost connection fails the run.
//!
//! The measured window. A run is a fixed amount of work: no warmup and no duration. The
//! window opens once every connection is open (all connections are released at that
//! moment together, woken rather than polling) and closes when the last statement of the
//! last connection answers. `run` takes the `Phases` of the other workloads but does not
//! use them (a warmup pass would replay the log's writes once more); only cancel is
//! honoured. The seed is not used either: a replay is the same every time.
//!
//! What is measured: every statement's response time (from send to its last reply
//! packet), in the shared recorder (overall percentiles, one-second intervals) and in one
//! histogram per class per client thread, merged at the end (per-class percentiles to 2
//! significant digits, 1%, to keep thousands of classes small). A failed statement is
//! measured too: `ops` is every statement executed, failed or not.

use super::{class_id, fingerprint, Statement};
use bakeoff_engine::{
    percentiles, KindStats, LoadError, Measure, Phase, PhaseHooks, Phases, RunRecord,
};
use bakeoff_sqlclient::driver::{self, Drive, ThreadRec, Window};
use bakeoff_sqlclient::Client;
use bakeoff_sqlclient::Db;
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Significant digits of the per-class histograms.
const CLASS_DIGITS: u8 = 2;
/// Longest response time recorded (longer ones count as this), ns.
const MAX_NS: u64 = 60_000_000_000;
/// Counters per class in `ThreadRec::counters`, at `class * PER_CLASS + ...`.
const ERRORS: usize = 0;
const TOTAL_NS: usize = 1;
const PER_CLASS: usize = 2;

/// What to replay and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayConfig {
    /// The statements, in log order (from `parse` or `parse_auto`).
    pub statements: Vec<Statement>,
    /// Connections replaying at once.
    pub connections: usize,
    /// How many times each connection replays its statements.
    pub iterations: u32,
    /// Client threads; `AUTO_THREADS` (0) chooses by connection count, as oltp does.
    pub client_threads: usize,
}

/// What a replay measured per statement class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplayRecord {
    /// Every class replayed, the most total time first.
    pub classes: Vec<ClassStats>,
}

/// One statement class of a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassStats {
    /// The class's id (`class_id` of its fingerprint).
    pub class: String,
    pub fingerprint: String,
    /// The class's first statement as the log has it (for EXPLAIN).
    pub sample: String,
    /// Statements of the class executed, failed ones included.
    pub count: u64,
    /// Of which failed.
    pub errors: u64,
    /// Their response times added up, seconds.
    pub total_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// A statement class before the run.
#[derive(Debug)]
struct Class {
    id: String,
    fingerprint: String,
    sample: String,
}

/// The replay worked out: statements, their classes, each connection's share.
#[derive(Debug)]
struct Plan {
    sql: Vec<Box<str>>,
    /// The class of each statement (index into `classes`).
    class_of: Vec<u32>,
    classes: Vec<Class>,
    /// Per connection: the statements (indices into `sql`) of one pass.
    lanes: Vec<Arc<[u32]>>,
    iterations: u32,
    /// Statements the whole run executes.
    total: u64,
}

impl Plan {
    fn new(cfg: &ReplayConfig) -> Result<Plan, LoadError> {
        if cfg.statements.is_empty() {
            return Err(LoadError::Settings(
                "replay has no statement to send".into(),
            ));
        }
        if cfg.connections == 0 || cfg.iterations == 0 {
            return Err(LoadError::Settings(format!(
                "replay needs connections >= 1 and iterations >= 1 (got {} and {})",
                cfg.connections, cfg.iterations
            )));
        }
        let (class_of, classes) = classify(&cfg.statements);
        let lanes = deal(&cfg.statements, cfg.connections);
        let pass: u64 = lanes.iter().map(|l| l.len() as u64).sum();
        Ok(Plan {
            sql: cfg
                .statements
                .iter()
                .map(|s| s.sql.as_str().into())
                .collect(),
            class_of,
            classes,
            lanes,
            iterations: cfg.iterations,
            total: pass * u64::from(cfg.iterations),
        })
    }
}

/// Each statement's class, and the classes in order of first appearance.
fn classify(statements: &[Statement]) -> (Vec<u32>, Vec<Class>) {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut classes = Vec::new();
    let class_of = statements
        .iter()
        .map(|s| {
            let fp = fingerprint(&s.sql);
            *ids.entry(fp).or_insert_with_key(|fp| {
                classes.push(Class {
                    id: class_id(fp),
                    fingerprint: fp.clone(),
                    sample: s.sql.clone(),
                });
                (classes.len() - 1) as u32
            })
        })
        .collect();
    (class_of, classes)
}

/// Each connection's statements for one pass (see the module's doc): all of them for
/// every connection when there is one session, else the sessions dealt round-robin.
fn deal(statements: &[Statement], connections: usize) -> Vec<Arc<[u32]>> {
    let mut sessions: HashMap<Option<u64>, usize> = HashMap::new();
    let session_of: Vec<usize> = statements
        .iter()
        .map(|s| {
            let next = sessions.len();
            *sessions.entry(s.session).or_insert(next)
        })
        .collect();
    if sessions.len() == 1 {
        let all: Arc<[u32]> = (0..statements.len() as u32).collect();
        return vec![all; connections];
    }
    (0..connections)
        .map(|c| {
            (0..statements.len())
                .filter(|&i| session_of[i] % connections == c)
                .map(|i| i as u32)
                .collect()
        })
        .collect()
}

/// Releases the connections together when the measured window opens, and notes when
/// the first statement was sent and the last one answered.
struct Gate {
    open: AtomicBool,
    wake: tokio::sync::Notify,
    /// ns since the run's epoch; u64::MAX until the first statement is sent.
    first_ns: AtomicU64,
    last_ns: AtomicU64,
}

/// The caller's hooks, and the gate opened when the measured window starts.
struct GateHooks<'a> {
    inner: &'a dyn PhaseHooks,
    gate: &'a Gate,
}

impl PhaseHooks for GateHooks<'_> {
    fn measure_started(&self) {
        self.inner.measure_started();
        self.gate.open.store(true, Ordering::SeqCst);
        self.gate.wake.notify_waiters();
    }
    fn measure_ended(&self) {
        self.inner.measure_ended();
    }

    fn keep_connections(&self) -> bool {
        self.inner.keep_connections()
    }
}

/// What every connection reads.
struct Run {
    plan: Plan,
    gate: Gate,
}

/// Replays `cfg.statements` against `db` (see the module's doc). The load engine's
/// record (ops = statements executed, `kinds` and `by_command` per class id, errors by
/// kind) and the per-class one (`ReplayRecord`, the most total time first). `d`'s phases
/// are not used: a replay has no warmup and its window is its work (see the module's
/// doc); it takes no seed, being deterministic.
pub fn run(db: &Db, cfg: &ReplayConfig, d: &Drive) -> Result<(RunRecord, ReplayRecord), LoadError> {
    let run = Arc::new(Run {
        plan: Plan::new(cfg)?,
        gate: Gate {
            open: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
            first_ns: AtomicU64::new(u64::MAX),
            last_ns: AtomicU64::new(0),
        },
    });
    let threads = driver::client_threads_for(
        cfg.client_threads,
        cfg.connections,
        bakeoff_os::cpus::unpinned_load_cpus(),
    );
    let window = Phases {
        warmup: Duration::ZERO,
        measure: Measure::Ops(run.plan.total),
    };
    let gated = GateHooks {
        inner: d.hooks,
        gate: &run.gate,
    };
    let gated_drive = Drive {
        phases: &window,
        hooks: &gated,
        ..*d
    };
    let w = driver::drive_lanes(
        cfg.connections,
        threads,
        &gated_drive,
        db,
        &run,
        |_| thread_rec(run.plan.classes.len()),
        |i, lane| async move { connection(i, &lane).await },
    )?;
    let (r, replay) = summarize(w, threads, &run);
    d.live
        .set_progress(r.ops, run.gate.last_ns.load(Ordering::SeqCst));
    Ok((r, replay))
}

type Lane = driver::Lane<Run>;

/// A client thread's measurements before its run, over `n` classes.
fn thread_rec(n: usize) -> ThreadRec {
    let mut rec = ThreadRec::new(0, 0, n * PER_CLASS);
    // Grown as needed: small for the classes this thread never sees.
    rec.kinds = (0..n)
        .map(|_| Histogram::new(CLASS_DIGITS).expect("valid significant digits"))
        .collect();
    rec
}

/// Connection `i`: opens, waits for the measured window, replays its share.
async fn connection(i: usize, lane: &Lane) {
    let (sh, plan) = (&*lane.sh, &lane.work.plan);
    let connections = plan.lanes.len();
    let opened = lane.open(i, connections, 0, false);
    let Some(mut client) = opened.await else {
        return;
    };
    let todo = plan.lanes[i].clone();
    if !wait_for_start(lane).await || todo.is_empty() {
        client.close().await;
        return;
    }
    lane.work
        .gate
        .first_ns
        .fetch_min(sh.now_ns(), Ordering::SeqCst);
    'passes: for _ in 0..plan.iterations {
        for &s in todo.iter() {
            if sh.stopped() || !statement(i, lane, &mut client, s).await {
                break 'passes;
            }
            if lane.blocking {
                lane.tick();
            }
        }
    }
    lane.work
        .gate
        .last_ns
        .fetch_max(sh.now_ns(), Ordering::SeqCst);
    client.close().await;
}

/// Waits until the measured window opens and this thread's recorder runs; false if the
/// run stopped first.
async fn wait_for_start(lane: &Lane) -> bool {
    let (sh, gate) = (&*lane.sh, &lane.work.gate);
    loop {
        let mut woken = pin!(gate.wake.notified());
        woken.as_mut().enable();
        if gate.open.load(Ordering::SeqCst) {
            break;
        }
        if sh.stopped() {
            return false;
        }
        // Timed, to see an abort (which does not ring this gate).
        let _ = tokio::time::timeout(Duration::from_millis(10), woken).await;
    }
    // The coordinator sets the phase right after the hook that opened the gate.
    while sh.phase() != Phase::Measure {
        if sh.stopped() {
            return false;
        }
        std::hint::spin_loop();
        tokio::task::yield_now().await;
    }
    // Starts this thread's recorder before its first statement (else the ticker's first
    // look at the window would reset what was recorded).
    lane.tick();
    true
}

/// Sends statement `s` and records it; false (and the run failed) if the connection
/// was lost.
async fn statement(i: usize, lane: &Lane, client: &mut Client, s: u32) -> bool {
    let (sh, plan) = (&*lane.sh, &lane.work.plan);
    let started = Instant::now();
    let result = client.simple(&plan.sql[s as usize]).await;
    let ns = (started.elapsed().as_nanos() as u64).clamp(1, MAX_NS);
    if let Err(e) = &result {
        if e.kind == "lost_connection" {
            if !sh.stopped() {
                sh.fail(format!(
                    "replay connection {} lost its connection at statement {}: {}",
                    i + 1,
                    s + 1,
                    e.message
                ));
            }
            return false;
        }
    }
    let class = plan.class_of[s as usize] as usize;
    {
        let mut st = lane.st.borrow_mut();
        st.rec.record(0, ns, ns);
        st.kinds[class].saturating_record(ns);
        st.counters[class * PER_CLASS + TOTAL_NS] += ns;
        st.queries += 1;
        if let Err(e) = &result {
            st.rec.error(e.kind);
            st.counters[class * PER_CLASS + ERRORS] += 1;
        }
    }
    sh.measured.fetch_add(1, Ordering::Relaxed);
    true
}

/// The run's records from the threads' measurements: the window runs from the first
/// statement sent to the last one answered.
fn summarize(mut w: Window, threads: usize, run: &Run) -> (RunRecord, ReplayRecord) {
    let gate = &run.gate;
    let start = w.start.min(gate.first_ns.load(Ordering::SeqCst));
    let last = gate.last_ns.load(Ordering::SeqCst);
    let end = if last > start { last } else { w.end };
    let hists: Vec<Vec<Histogram<u64>>> = w
        .outs
        .iter_mut()
        .map(|t| std::mem::take(&mut t.kinds))
        .collect();
    let n = run.plan.classes.len();
    let (mut r, _, counters) = driver::merge(w.outs, (start, end), threads, 0, n * PER_CLASS);
    let mut classes = Vec::new();
    for (c, class) in run.plan.classes.iter().enumerate() {
        let h = merged(c, &hists);
        if h.is_empty() {
            continue;
        }
        let latency_us = percentiles(&h);
        classes.push(ClassStats {
            class: class.id.clone(),
            fingerprint: class.fingerprint.clone(),
            sample: class.sample.clone(),
            count: h.len(),
            errors: counters[c * PER_CLASS + ERRORS],
            total_s: counters[c * PER_CLASS + TOTAL_NS] as f64 / 1e9,
            p50_us: latency_us.p50,
            p99_us: latency_us.p99,
            max_us: latency_us.max,
        });
        r.by_command.insert(class.id.clone(), h.len());
        let count = h.len();
        let hist = bakeoff_engine::serialize_histogram(&h);
        r.kinds.insert(
            class.id.clone(),
            KindStats {
                count,
                latency_us,
                hist,
            },
        );
    }
    classes.sort_by(|a, b| b.total_s.total_cmp(&a.total_s).then(a.class.cmp(&b.class)));
    (r, ReplayRecord { classes })
}

/// Class `c`'s histogram, merged over the threads.
fn merged(c: usize, hists: &[Vec<Histogram<u64>>]) -> Histogram<u64> {
    let mut sum = Histogram::new(CLASS_DIGITS).expect("valid significant digits");
    for t in hists {
        if let Some(h) = t.get(c) {
            let _ = sum.add(h);
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(sql: &str, session: Option<u64>) -> Statement {
        Statement {
            sql: sql.into(),
            line: 1,
            session,
        }
    }

    fn cfg(statements: Vec<Statement>, connections: usize, iterations: u32) -> ReplayConfig {
        ReplayConfig {
            statements,
            connections,
            iterations,
            client_threads: 0,
        }
    }

    #[test]
    fn one_session_runs_everything_on_every_connection() {
        let s = vec![
            st("SELECT 1", None),
            st("SELECT 2", None),
            st("BEGIN", None),
        ];
        let p = Plan::new(&cfg(s, 3, 2)).unwrap();
        assert_eq!(p.lanes.len(), 3);
        assert!(p.lanes.iter().all(|l| l[..] == [0, 1, 2]));
        assert_eq!(p.total, 3 * 3 * 2);
        assert_eq!(
            p.class_of,
            vec![0, 0, 1],
            "SELECT 1 and SELECT 2 are one class"
        );
        assert_eq!(p.classes[0].fingerprint, "select ?");
        assert_eq!(p.classes[0].sample, "SELECT 1");
        assert_eq!(p.classes[0].id, class_id("select ?"));
    }

    #[test]
    fn sessions_are_dealt_round_robin_in_log_order() {
        let s = vec![
            st("a", Some(9)),
            st("b", Some(4)),
            st("c", Some(9)),
            st("d", Some(7)),
            st("e", Some(4)),
            st("f", Some(7)),
        ];
        let p = Plan::new(&cfg(s.clone(), 2, 3)).unwrap();
        // Sessions 9, 4, 7 go to connections 0, 1, 0.
        assert_eq!(&p.lanes[0][..], [0, 2, 3, 5]);
        assert_eq!(&p.lanes[1][..], [1, 4]);
        assert_eq!(p.total, 6 * 3);
        let p = Plan::new(&cfg(s, 4, 1)).unwrap();
        assert!(
            p.lanes[3].is_empty(),
            "more connections than sessions: idle"
        );
        assert_eq!(p.total, 6);
    }

    #[test]
    fn empty_or_zero_settings_are_refused() {
        assert!(Plan::new(&cfg(vec![], 1, 1)).is_err());
        assert!(Plan::new(&cfg(vec![st("SELECT 1", None)], 0, 1)).is_err());
        assert!(Plan::new(&cfg(vec![st("SELECT 1", None)], 1, 0)).is_err());
    }
}
