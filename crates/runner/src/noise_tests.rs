//! Scripted noise through the whole analysis (`analyze.rs`): how often one binary
//! compared with itself comes out faster or slower, per metric, over 200 seeds each; and
//! what a busy machine, a saturated load and a saturated server make of a comparison.
//! A module of its own, used by no other, so the modules stay a DAG.
//!
//! The noise is this machine's, measured (docs/ARCHITECTURE.md, bench/RESULTS.md):
//! throughput drifts per round by a few percent for both variants alike, each run adds
//! its own 3%, and one run in twenty is 15% low (a neighbour woke up); instructions per
//! operation move by about 0.5% between runs of one binary (how requests batch per
//! wakeup), with a run in ten off by 1.5%.

use crate::analyze::analyze;
use crate::probes::load_set_the_pace;
use bakeoff_report::model::{
    Cell, InstructionsRecord, OtherProcess, PlanRecord, Results, Run, Verdict, INSTRUCTIONS,
};

// A seeded generator (splitmix64) with normal draws (Box-Muller).
use bakeoff_testkit::noise::SplitMix64 as Noise;

const ROUNDS: usize = 10;
const COUNTED: usize = 8;
const SEEDS: u64 = 200;

/// The stated false rate of throughput verdicts for one binary against itself: the test
/// level. The rank tests hold it by construction; the resolution only lowers it.
const THROUGHPUT_FALSE_RATE: f64 = 0.05;
/// The stated false rate of instruction verdicts for one binary against itself: an
/// estimate must lie beyond 2.5 times the count's run-to-run spread (at least 1.25%) to
/// be faster or slower, about 4 standard errors of the estimate at 8 runs a side.
const INSTRUCTIONS_FALSE_RATE: f64 = 0.005;

fn plan() -> PlanRecord {
    PlanRecord {
        repetitions: Some(ROUNDS),
        warmup_s: 0.0,
        duration_s: Some(1.0),
        seed: 1,
        baseline: "a".into(),
        ..PlanRecord::default()
    }
}

/// Mode both's two cells of one binary under `seed`'s noise; `b_instr` and `b_ops`
/// scale the second one's instructions per op and throughput (1.0: the same binary).
fn experiment(seed: u64, b_ops: f64, b_instr: f64) -> Results {
    let mut n = Noise(seed);
    let drift: Vec<f64> = (0..ROUNDS).map(|_| 0.03 * n.normal()).collect();
    let mut cell = |variant: &str, ops_factor: f64, instr_factor: f64| {
        let mut runs: Vec<Run> = (0..ROUNDS)
            .map(|round| {
                let low = if n.uniform() < 0.05 { 0.85 } else { 1.0 };
                let ops = 100_000.0 * ops_factor * (drift[round] + 0.03 * n.normal()).exp() * low;
                Run {
                    round,
                    ops_per_s: ops,
                    ops: ops as u64,
                    elapsed_s: 1.0,
                    wall_s: Some(1.5),
                    valid: true,
                    ..Run::default()
                }
            })
            .collect();
        runs.extend((0..COUNTED).map(|round| {
            let per_op = instructions_per_op(&mut n, instr_factor);
            Run {
                round,
                instruction_run: true,
                ops_per_s: 2_000.0,
                elapsed_s: 3.0,
                wall_s: Some(6.0),
                valid: true,
                instructions: Some(InstructionsRecord {
                    instructions: (per_op * 6_000.0) as u64,
                    instructions_per_op: per_op,
                    ..Default::default()
                }),
                ..Run::default()
            }
        }));
        Cell::new("kv", variant, 16, runs)
    };
    let a = cell("a", 1.0, 1.0);
    let b = cell("b", b_ops, b_instr);
    analyzed("aa", vec![a, b])
}

/// Instructions per operation of one counted run: 5,000 times `factor`, 0.5% run to run,
/// and one run in ten off by 1.5% either way.
fn instructions_per_op(n: &mut Noise, factor: f64) -> f64 {
    let off = if n.uniform() < 0.1 {
        0.015 * n.normal().signum()
    } else {
        0.0
    };
    5_000.0 * factor * (0.005 * n.normal() + off).exp()
}

/// The experiment `name` of `cells` under [`plan`], analyzed.
fn analyzed(name: &str, cells: Vec<Cell>) -> Results {
    let mut r = Results {
        name: name.into(),
        plan: plan(),
        cells,
        ..Results::default()
    };
    analyze(&mut r);
    r
}

fn verdict(r: &Results, metric: &str) -> Verdict {
    r.comparisons
        .iter()
        .find(|k| k.variant == "b" && k.metric == metric)
        .unwrap_or_else(|| panic!("no {metric} comparison: {:?}", r.comparisons))
        .verdict
}

fn differs(v: Verdict) -> bool {
    matches!(v, Verdict::Faster | Verdict::Slower)
}

/// 200 seeds of one binary against itself: the share of faster or slower answers per
/// metric is at or below its stated rate. Measured (these seeds): throughput 3 of 200
/// (1.5%), instructions 0 of 200; without the resolution margin the same seeds give
/// instructions 6 of 200 (3.0%) and throughput the same 3.
#[test]
fn one_binary_against_itself_stays_within_the_stated_false_rates() {
    let (mut time, mut counted) = (0usize, 0usize);
    for seed in 0..SEEDS {
        let r = experiment(seed, 1.0, 1.0);
        time += usize::from(differs(verdict(&r, "throughput")));
        counted += usize::from(differs(verdict(&r, INSTRUCTIONS)));
    }
    let rate = |n: usize| n as f64 / SEEDS as f64;
    eprintln!(
        "A/A over {SEEDS} seeds: throughput {time} faster/slower ({:.1}%), instructions {counted} ({:.1}%)",
        rate(time) * 100.0,
        rate(counted) * 100.0
    );
    assert!(rate(time) <= THROUGHPUT_FALSE_RATE, "throughput {time}");
    assert!(
        rate(counted) <= INSTRUCTIONS_FALSE_RATE,
        "instructions {counted}"
    );
}

/// Mode instructions alone (no wall-clock runs), one binary against itself over 5,000
/// seeds: the chance the end-to-end tests rely on (an identical build never slower on
/// instructions) is below 1 in 1,000. Measured: 0 of 5,000 (so below 0.06% at 95%
/// confidence, by the rule of three); with twice the spread (at least 1%) as the
/// resolution it was 2 of 5,000, with the spread from each side's median absolute
/// deviation 4 of 5,000.
#[test]
fn identical_instruction_counts_differ_in_fewer_than_one_in_a_thousand() {
    const MANY: u64 = 5_000;
    let mut differ = 0;
    for seed in 0..MANY {
        let mut n = Noise(50_000 + seed);
        let mut cell = |variant: &str| {
            let runs = (0..COUNTED)
                .map(|round| {
                    let per_op = instructions_per_op(&mut n, 1.0);
                    Run {
                        round,
                        ops_per_s: 2_000.0,
                        elapsed_s: 3.0,
                        valid: true,
                        instructions: Some(InstructionsRecord {
                            instructions_per_op: per_op,
                            ..Default::default()
                        }),
                        ..Run::default()
                    }
                })
                .collect();
            Cell::new("kv", variant, 16, runs)
        };
        let (a, b) = (cell("a"), cell("b"));
        let r = analyzed("aa", vec![a, b]);
        differ += usize::from(differs(verdict(&r, INSTRUCTIONS)));
    }
    eprintln!("instructions A/A over {MANY} seeds: {differ} faster/slower");
    assert!(differ as f64 * 1_000.0 < MANY as f64, "{differ} of {MANY}");
}

/// The margin costs little power: 3% more instructions per op is slower in at least 95%
/// of 200 seeds (measured 196), and 10% less throughput is slower in at least 95% of
/// them (measured 197).
#[test]
fn a_real_difference_beyond_the_resolution_is_still_found() {
    let (mut time, mut counted) = (0usize, 0usize);
    for seed in 0..SEEDS {
        let r = experiment(1_000 + seed, 0.9, 1.03);
        time += usize::from(verdict(&r, "throughput") == Verdict::Slower);
        counted += usize::from(verdict(&r, INSTRUCTIONS) == Verdict::Slower);
    }
    eprintln!("power over {SEEDS} seeds: throughput -10% {time}, instructions +3% {counted}");
    assert!(time as f64 >= 0.95 * SEEDS as f64, "{time}");
    assert!(counted as f64 >= 0.95 * SEEDS as f64, "{counted}");
}

/// The issue's case: ratio 0.995 with its CI [0.987, 0.9999] on instructions is a
/// difference within the count's resolution: never slower.
#[test]
fn a_half_percent_instruction_difference_is_not_slower() {
    let r = experiment(7, 1.0, 1.005);
    let k = r
        .comparisons
        .iter()
        .find(|k| k.metric == INSTRUCTIONS)
        .unwrap();
    assert!(!differs(k.verdict), "{k:?}");
    assert!(k.resolution.is_some_and(|x| x >= 0.01), "{k:?}");
}

/// A wall-clock run on 2 CPUs with one load thread: `others` the other processes' share
/// of the machine, the load running `cpu` and waiting `wait` of its 1-second window, the
/// server's busiest thread at `server` percent of a CPU.
fn run(round: usize, ops: f64, others: f64, cpu: f64, wait: f64, server: f64) -> Run {
    Run {
        round,
        ops_per_s: ops,
        ops: ops as u64,
        elapsed_s: 1.0,
        valid: true,
        client_threads: 1,
        client_cpu_s: cpu,
        client_wait_s: wait,
        server_cpu_s: server / 100.0,
        server_thread_max_pct: Some(server),
        server_wait_s: Some(0.0),
        others_cpu_pct: Some(others),
        steal_pct: Some(0.0),
        machine_cpus: Some(2),
        others_top: (others > 1.0)
            .then(|| OtherProcess {
                name: "sh".into(),
                cpu_pct: others - 1.0,
            })
            .into_iter()
            .collect(),
        ..Run::default()
    }
}

fn two_cells(make: impl Fn(usize, f64) -> Run) -> Results {
    let mut n = Noise(3);
    let mut cell = |v: &str| {
        let runs = (0..ROUNDS)
            .map(|i| {
                let mut x = make(i, 100_000.0 * (0.03 * n.normal()).exp());
                x.client_bound = load_set_the_pace(&x);
                x
            })
            .collect();
        Cell::new("kv", v, 16, runs)
    };
    let (a, b) = (cell("a"), cell("b"));
    analyzed("busy", vec![a, b])
}

/// A hog took a CPU's worth while the load waited a third of its window: machine-busy,
/// the hog named in the warnings and in the explanation, with advice that never asks for
/// more client threads.
#[test]
fn a_load_starved_by_another_process_is_machine_busy_and_names_it() {
    let r = two_cells(|i, ops| run(i, ops, 40.0, 0.5, 0.33, 60.0));
    let k = &r.comparisons[0];
    assert_eq!(k.verdict, Verdict::MachineBusy, "{k:?}");
    assert!(r.cells.iter().all(|c| c.client_bound_runs == 0));
    assert_eq!(r.cells[1].machine_busy_runs, ROUNDS);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("disturbed by other processes") && w.contains("sh 39%")),
        "{:?}",
        r.warnings
    );
    let notes = bakeoff_report::summary::explanations(&r);
    let line = notes.iter().find(|l| l.contains("machine-busy")).unwrap();
    assert!(line.contains("sh 39% of the CPUs"), "{line}");
    assert!(
        line.contains("[plan] cpus") && line.contains("more rounds"),
        "{line}"
    );
    assert!(!line.contains("give it more client threads"), "{line}");
    // The terminal opens with the answer in words, then the table, then the warnings.
    let term = bakeoff_report::terminal(&r, false);
    assert!(
        term.starts_with(
            "no answer for b at 16 connections (kv): the machine was busy (sh 39% of the CPUs)"
        ),
        "{term}"
    );
    let table = term.find("workload").unwrap();
    assert!(table < term.find("warning:").unwrap(), "{term}");
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"verdict\":\"machine-busy\""), "{json}");
    assert!(json.contains("\"others_top\":[{\"name\":\"sh\",\"cpu_pct\":39.0}]"));
}

/// Others on a machine with CPUs to spare (no one waited): not disturbed; a quarter of the
/// runs disturbed or fewer: the comparison answers.
#[test]
fn others_that_took_idle_cpus_or_few_runs_do_not_void_the_answer() {
    let r = two_cells(|i, ops| run(i, ops, 40.0, 0.5, 0.0, 60.0));
    assert_ne!(r.comparisons[0].verdict, Verdict::MachineBusy);
    assert_eq!(r.cells[0].machine_busy_runs, 0);
    let r = two_cells(|i, ops| {
        let others = if i < 2 { 40.0 } else { 0.5 };
        run(i, ops, others, 0.5, 0.3, 60.0)
    });
    assert_eq!(r.cells[0].machine_busy_runs, 2);
    assert_ne!(r.comparisons[0].verdict, Verdict::MachineBusy);
}

/// One load thread saturated by its own work beside a server with capacity left:
/// client-bound. The same load beside a server whose worker thread ran 98% of the
/// window: the server set the pace, and the comparison answers.
#[test]
fn client_bound_needs_the_load_saturated_and_the_server_not() {
    let r = two_cells(|i, ops| run(i, ops, 0.5, 0.95, 0.02, 40.0));
    assert_eq!(r.comparisons[0].verdict, Verdict::ClientBound);
    let r = two_cells(|i, ops| run(i, ops, 0.5, 0.95, 0.02, 98.0));
    assert!(r.cells.iter().all(|c| c.client_bound_runs == 0));
    assert!(!matches!(
        r.comparisons[0].verdict,
        Verdict::ClientBound | Verdict::MachineBusy
    ));
}

/// Results written before runs said who else ran (no `others_cpu_pct`) read back and
/// keep their stored client-bound flags.
#[test]
fn runs_without_the_new_fields_keep_their_meaning() {
    let r = two_cells(|i, ops| Run {
        round: i,
        ops_per_s: ops,
        elapsed_s: 1.0,
        valid: true,
        client_bound: true,
        ..Run::default()
    });
    assert_eq!(r.comparisons[0].verdict, Verdict::ClientBound);
    let text = r#"{"round":0,"ops_per_s":1.0,"ops":1,"elapsed_s":1.0,"latency_us":{"p50":1,"p90":1,"p99":1,"p999":1,"max":1},"errors":0,"misses":0,"verify_failures":0,"client_cpu_s":0.5,"client_rss_kib":0,"client_cpu_us_per_op":0,"server_cpu_s":0,"server_rss_kib":0,"server_cpu_us_per_op":0,"client_bound":false,"valid":true}"#;
    let old: Run = serde_json::from_str(text).unwrap();
    assert_eq!((old.others_cpu_pct, old.others_top.len()), (None, 0));
    assert!(old.machine_disturbance().is_none());
}
