//! `bakeoff bisect`: the first commit of a git source where a cell's figure moved. Each
//! step is an ordinary experiment (the template build at the good revision against the
//! same build at one commit, on one cell, with the experiment's statistics and budget);
//! the steps halve the commits between good and bad until one is left. The search itself
//! (which commit next, what a step's CI says, skips, the conclusion) is
//! `bakeoff_bisect::Search`; this file runs the steps and writes what they found.
//!
//! The budget is the whole bisect's: `[plan] budget` for each step the commits need
//! (the bad revision's and one per halving), shared by `bakeoff_bisect::Budget`. The bad
//! revision's step runs under the plan's own stopping rule; its round spread and pace
//! give the forecast (the smallest change the rest of the budget can localize), printed
//! before the halving starts. Every later step runs under `bakeoff_bisect::StepRule`:
//! rounds are added while its interval straddles the halfway ratio, up to the rounds
//! its share allows, and it stops as soon as the interval lies on one side.

use crate::cli::BisectArgs;
use crate::progress::Bars;
use crate::session::{load, options, progress_mode, read_results, record, Failure};
use bakeoff_bisect::{
    fewest_rounds, short, smallest_change, Budget, Call, Decision, Judgement, Next, NoCommits,
    Outcome, Search, StepRule, MAX_ROUNDS,
};
use bakeoff_plan::derive::{bisect_step, Step};
use bakeoff_plan::Loaded;
use bakeoff_report::model::Verdict;
use bakeoff_report::model::{BuildRecord, Results, Run};
use bakeoff_runner::{Live, Observer, RoundStatus, RunError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// One step's evidence.
#[derive(Debug, Clone, Serialize)]
struct StepRecord {
    commit: String,
    subject: String,
    /// "measured", "does not build", or "failed".
    outcome: String,
    verdict: Option<Verdict>,
    ratio: Option<f64>,
    ci95: Option<[f64; 2]>,
    rounds: Option<usize>,
    /// Standard deviation of one round's log ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    spread: Option<f64>,
    /// Seconds its measured rounds took.
    #[serde(skip_serializing_if = "Option::is_none")]
    rounds_s: Option<f64>,
    /// The most rounds its share of the budget allowed (steps after the bad revision's).
    #[serde(skip_serializing_if = "Option::is_none")]
    cap: Option<usize>,
    /// How the sequential rule judged it: "moved", "did not move" or "inconclusive".
    #[serde(skip_serializing_if = "Option::is_none")]
    judged: Option<String>,
    /// The interval it was judged by and that interval's level (above 95%: it covers
    /// every look the step took, and the bisect's steps together).
    #[serde(skip_serializing_if = "Option::is_none")]
    interval: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<f64>,
    folder: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// What the budget can resolve, said once the bad revision is measured.
#[derive(Debug, Clone, Serialize)]
struct Forecast {
    /// Standard deviation of one round's log ratio in the bad revision's step.
    spread: f64,
    /// Seconds one round took there.
    round_s: f64,
    /// Steps still expected, and the budget left for them.
    steps: usize,
    budget_left_s: Option<f64>,
    /// The most rounds each step can take.
    rounds: usize,
    /// The smallest change (relative) those rounds can place on one side of the halfway
    /// ratio; None when not even the fewest rounds fit.
    smallest: Option<f64>,
    /// The change measured between good and bad (relative).
    measured: f64,
    /// The forecast in words.
    text: String,
}

/// What the search found.
#[derive(Debug, Clone, Serialize)]
struct Found {
    experiment: String,
    good: String,
    bad: String,
    cell: String,
    direction: Option<Verdict>,
    /// The ratio halfway (geometrically) between good and bad: a step whose CI lies past
    /// it moved, one whose CI lies before it did not.
    halfway: Option<f64>,
    /// The first commit where the figure moved, when one is named.
    first: Option<String>,
    /// Otherwise why not, and the commits the change is among.
    unresolved: Option<String>,
    candidates: Vec<String>,
    /// The whole bisect's budget for the measured rounds, seconds (None: no time bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_s: Option<f64>,
    /// What the budget could resolve at the noise of the bad revision's step.
    #[serde(skip_serializing_if = "Option::is_none")]
    forecast: Option<Forecast>,
    steps: Vec<StepRecord>,
}

/// Everything a step needs, resolved once before the first.
struct Setup {
    loaded: Loaded,
    /// The variant built at each commit (the first built from source).
    template: usize,
    workload: usize,
    connections: usize,
    cell_name: String,
    opts: bakeoff_runner::Options,
    /// The repository, checked out at the bad revision.
    repo: PathBuf,
    good: String,
    bad: String,
    /// The commits after good up to bad, oldest first.
    commits: Vec<String>,
    folder: PathBuf,
}

pub fn bisect_cmd(args: &BisectArgs) -> Result<(), Failure> {
    crate::metrics::refuse_on("bisect", &args.run.metrics)?;
    let setup = setup(args)?;
    let cancel = bakeoff_sandbox::install_signal_handler();
    let mut search = Search::new(setup.commits.clone())
        .map_err(|NoCommits| Failure::Failed("bisect: no commit between good and bad".into()))?;
    let stop = setup.loaded.experiment.plan.stopping();
    let per_step = stop.budget.map(|b| b.as_secs_f64());
    let mut budget =
        Budget::new(per_step.map_or(f64::INFINITY, |b| b * search.steps_left() as f64));
    eprintln!(
        "bisect: {} commits from {} to {} on {}{}",
        setup.commits.len(),
        short(&setup.good),
        short(&setup.bad),
        setup.cell_name,
        per_step
            .map(|b| format!(
                "; a budget of {} for ~{} steps ({} a step on average: a step that decides early leaves its time to the rest)",
                seconds_text(budget.total_s()),
                search.steps_left(),
                seconds_text(b)
            ))
            .unwrap_or_default()
    );
    let mut steps: Vec<StepRecord> = Vec::new();
    let mut forecast: Option<Forecast> = None;
    // Seconds per round, from the bad revision's step.
    let mut pace: Option<f64> = None;
    let found = loop {
        let steps_left = search.steps_left();
        let commit = match search.next_step() {
            Next::Measure(commit) => commit.to_string(),
            Next::Done(found) => break found.clone(),
        };
        let most = stop.max_rounds.unwrap_or(MAX_ROUNDS);
        let floor = pace.map_or(0.0, |p| p * fewest_rounds(search.step_alpha()) as f64);
        let share = budget.share_s(steps_left, floor);
        let cap = pace.map_or(most, |p| ((share / p).floor() as usize).min(most));
        let rule = search.rule(cap);
        if rule.as_ref().is_some_and(|r| r.cap() == 0) {
            search.stop(format!(
                "the budget left ({}) allows {cap} round(s) for step {}, fewer than the {} a step needs to be judged; nothing more can be told apart (raise plan.budget)",
                seconds_text(budget.left_s()),
                steps.len() + 1,
                fewest_rounds(search.step_alpha())
            ));
            continue;
        }
        // The rounds are bounded by the cap; the step's time gets one round's slack, so a
        // slow round does not cost the step its last look.
        let share = share
            .is_finite()
            .then_some((share + pace.unwrap_or(0.0), cap));
        let rec = run_step(&setup, args, &commit, share, rule.as_ref(), &cancel)?;
        budget.spend(rec.rounds_s.unwrap_or(0.0));
        search.feed(outcome_of(&rec));
        let first = pace.is_none();
        if first {
            pace = rec
                .rounds_s
                .zip(rec.rounds)
                .filter(|(_, n)| *n > 0)
                .map(|(s, n)| s / n as f64);
        }
        steps.push(rec);
        if first {
            forecast = say_forecast(&search, &budget, &steps[0], pace, most);
            if let Some(f) = forecast.as_ref().filter(|f| f.smallest.is_none()) {
                search.stop(format!(
                    "the budget left ({}) allows {} round(s) a step, fewer than the {} a step needs to be judged: too small to place any commit, so nothing is named (raise plan.budget)",
                    seconds_text(budget.left_s()),
                    f.rounds,
                    fewest_rounds(search.step_alpha())
                ));
            }
        }
    };
    let found = Found {
        experiment: setup.loaded.experiment.name.clone(),
        good: setup.good.clone(),
        bad: setup.bad.clone(),
        cell: setup.cell_name.clone(),
        direction: found.direction,
        halfway: found.halfway,
        first: found.first,
        unresolved: found.unresolved,
        candidates: found.candidates,
        budget_s: budget.total_s().is_finite().then(|| budget.total_s()),
        forecast,
        steps,
    };
    let subject = found
        .first
        .as_ref()
        .and_then(|c| git(&setup.repo, &["log", "-1", "--format=%h %s", c]).ok());
    if let Some(s) = subject {
        eprintln!(
            "bisect: first commit where {} moved: {}",
            setup.cell_name,
            s.trim()
        );
    }
    finish(&setup.folder, &found)
}

/// Once the bad revision is measured: the smallest change the rest of the budget can
/// localize at the noise its step measured, printed and kept for bisect.json/md.
fn say_forecast(
    search: &Search,
    budget: &Budget,
    bad: &StepRecord,
    pace: Option<f64>,
    most: usize,
) -> Option<Forecast> {
    let direction = search.direction()?;
    let spread = bad.spread?;
    let round_s = pace?;
    let steps = search.steps_left().max(1);
    let left = budget.left_s();
    // As the steps will get it: their share, at least the fewest rounds while they last.
    let floor = round_s * fewest_rounds(search.step_alpha()) as f64;
    let rounds = if left.is_finite() {
        ((budget.share_s(steps, floor) / round_s).floor() as usize).min(most)
    } else {
        most
    };
    let smallest = smallest_change(spread, rounds, search.step_alpha(), direction);
    let ratio = bad.ratio?;
    let measured = (ratio - 1.0).abs();
    let how = if direction == Verdict::Faster {
        "faster"
    } else {
        "slower"
    };
    let budget_text = if left.is_finite() {
        format!("the {} left", seconds_text(left))
    } else {
        "the repetitions".to_string()
    };
    let text = match smallest {
        Some(x) => format!(
            "at this noise ({:.1}% per round) {budget_text} over ~{steps} step(s) of up to {rounds} rounds can localize a change of {:.1}% or more; this one measures {:.1}% {how}: {}",
            spread * 100.0,
            x * 100.0,
            measured * 100.0,
            if measured >= x {
                "expect a commit"
            } else {
                "expect a range, not a commit"
            }
        ),
        None => format!(
            "at this noise ({:.1}% per round) {budget_text} over ~{steps} step(s) allows {rounds} round(s) a step, fewer than a step needs to be judged: too small to localize anything",
            spread * 100.0
        ),
    };
    eprintln!("bisect: {text}");
    Some(Forecast {
        spread,
        round_s,
        steps,
        budget_left_s: left.is_finite().then_some(left),
        rounds,
        smallest,
        measured,
        text,
    })
}

/// Seconds as the plan writes durations ("45s", "2m30s").
fn seconds_text(s: f64) -> String {
    let s = s.round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s:02}s"),
    }
}

/// The experiment, its git source fetched at the bad revision, the commits between good
/// and bad, the cell and the folder.
fn setup(args: &BisectArgs) -> Result<Setup, Failure> {
    let loaded = load(&args.run.experiment, &args.run.set)?;
    let e = &loaded.experiment;
    let bad_input =
        |m: String| Failure::BadInput(format!("{}: {m}", args.run.experiment.display()));
    let url = git_url(&loaded).ok_or_else(|| {
        bad_input(
            "bakeoff bisect needs a git source: [target] source = { git = \"...\", rev = \"...\" }"
                .into(),
        )
    })?;
    let template = e
        .variants
        .iter()
        .position(|v| v.is_build())
        .ok_or_else(|| bad_input("bakeoff bisect builds commits: give a variant built from source (compiler, cflags...)".into()))?;
    let (workload, connections) = cell(&loaded, args.cell.as_deref()).map_err(bad_input)?;
    let cell_name = format!("{} x{connections}", e.workloads[workload].display_name());

    let opts = options(&args.run, &loaded);
    let cache = bakeoff_build::Cache::new(&opts.cache_root);
    let tree = bakeoff_build::fetch(
        &bakeoff_build::SourceSpec::Git {
            url: url.clone(),
            rev: args.bad.clone(),
        },
        &cache,
    )
    .map_err(|err| bad_input(err.to_string()))?;
    let good = rev_parse(&tree.dir, &args.good).map_err(bad_input)?;
    let bad = rev_parse(&tree.dir, &args.bad).map_err(bad_input)?;
    let commits = git(
        &tree.dir,
        &[
            "rev-list",
            "--ancestry-path",
            "--reverse",
            &format!("{good}..{bad}"),
        ],
    )
    .map_err(bad_input)?;
    let commits: Vec<String> = commits.lines().map(str::to_string).collect();
    if commits.is_empty() || commits.last() != Some(&bad) {
        return Err(bad_input(format!(
            "--good {} is not an ancestor of --bad {}: nothing to bisect",
            args.good, args.bad
        )));
    }

    let folder = match &args.run.out {
        Some(out) => out.clone(),
        None => {
            let stamp: String = bakeoff_store::now_utc()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect();
            args.run.results_dir.join(format!(
                "bisect-{}-{stamp}",
                bakeoff_os::path::safe_name(&e.name)
            ))
        }
    };
    std::fs::create_dir_all(&folder)
        .map_err(|err| Failure::Failed(format!("cannot create {}: {err}", folder.display())))?;
    Ok(Setup {
        template,
        workload,
        connections,
        cell_name,
        opts,
        repo: tree.dir,
        good,
        bad,
        commits,
        folder,
        loaded,
    })
}

/// One step: the template build at the good revision against the same build at
/// `commit`, on the cell, as an experiment of its own in `step-<n>-<commit>`.
fn run_step(
    setup: &Setup,
    args: &BisectArgs,
    commit: &str,
    share: Option<(f64, usize)>,
    rule: Option<&StepRule>,
    cancel: &Arc<AtomicBool>,
) -> Result<StepRecord, Failure> {
    let loaded = &setup.loaded;
    let n = steps_len_hint(&setup.folder);
    let name = short(commit);
    let connections_key = loaded.experiment.workloads[setup.workload]
        .keys
        .connections_key();
    let text = bisect_step(
        &loaded.text,
        &Step {
            template: setup.template,
            good: (&setup.good, "good"),
            candidate: (commit, &name),
            workload: setup.workload,
            connections: Some((connections_key, setup.connections)),
            share,
        },
    )
    .map_err(|m| Failure::Failed(format!("cannot write step {n}: {m}")))?;
    let dir = setup.folder.join(format!("step-{n}-{name}"));
    let step_loaded = bakeoff_plan::derived::load_derived(
        &loaded.path,
        &format!("bisect-{name}"),
        &text,
        &bakeoff_workloads::KINDS,
    )
    .map_err(crate::session::derived_failure)?;
    let mut step_opts = setup.opts.clone();
    step_opts.out = Some(dir.clone());
    step_opts.every_variant = true;
    let bars = Bars::new(progress_mode(&args.run));
    let watch = StepWatch {
        bars: &bars,
        rule,
        name: name.clone(),
        decision: Mutex::new(None),
    };
    let outcome = bakeoff_runner::run_experiment(&step_loaded, &step_opts, &watch, cancel.clone());
    bars.finish();
    let subject = git(&setup.repo, &["log", "-1", "--format=%s", commit]).unwrap_or_default();
    let mut rec = StepRecord {
        commit: commit.to_string(),
        subject: subject.trim().to_string(),
        outcome: "measured".into(),
        verdict: None,
        ratio: None,
        ci95: None,
        rounds: None,
        spread: None,
        rounds_s: None,
        cap: rule.map(StepRule::cap),
        judged: None,
        interval: None,
        level: None,
        folder: dir.display().to_string(),
        error: None,
    };
    match outcome {
        Ok(o) => {
            let _ = record(&args.run, &o.results, &o.folder);
            rec.rounds_s = o.results.rounds_s;
            match o.results.headline_comparisons().find(|k| k.variant == name) {
                Some(k) => {
                    rec.verdict = Some(k.verdict);
                    rec.ratio = Some(k.ratio);
                    rec.ci95 = Some(k.ci95);
                    rec.rounds = Some(k.rounds);
                    rec.spread = k.round_spread;
                    if let Some(rule) = rule {
                        // Decided after a round, or the budget ended first: its last look.
                        let decided = watch.decision.lock().map(|d| d.clone()).ok().flatten();
                        let d = decided.unwrap_or_else(|| {
                            match rule.call(&ratios(&o.results, &name), true) {
                                Call::Decide(d) => d,
                                Call::More => unreachable!("a last look decides"),
                            }
                        });
                        rec.judged = Some(judged_text(d.judgement).into());
                        rec.interval = d.interval;
                        rec.level = Some(d.level);
                        rec.rounds = Some(d.rounds);
                    }
                }
                None => {
                    rec.outcome = "failed".into();
                    rec.error = Some("no comparison came out of the step".into());
                }
            }
        }
        Err(RunError::Interrupted(f)) => {
            if let Ok(r) = read_results(&f) {
                let _ = record(&args.run, &r, &f);
            }
            return Err(Failure::Interrupted(RunError::Interrupted(f).to_string()));
        }
        Err(RunError::BadInput(m)) => return Err(Failure::BadInput(m)),
        Err(err) => {
            let unbuilt = read_results(&dir).is_ok_and(|r| {
                r.variants
                    .iter()
                    .any(|v| v.name == name && v.status != "ok")
            });
            rec.outcome = if unbuilt { "does not build" } else { "failed" }.into();
            rec.error = Some(err.to_string());
        }
    }
    eprintln!("bisect: {}", step_line(&rec));
    Ok(rec)
}

/// The progress bars, plus a step's sequential rule: rounds stop once it decides.
struct StepWatch<'a> {
    bars: &'a Bars,
    rule: Option<&'a StepRule>,
    /// The candidate's variant name.
    name: String,
    decision: Mutex<Option<Decision>>,
}

impl Observer for StepWatch<'_> {
    fn notice(&self, line: &str) {
        self.bars.notice(line)
    }
    fn builds_started(&self, total: usize) {
        self.bars.builds_started(total)
    }
    fn build_started(&self, variant: &str) {
        self.bars.build_started(variant)
    }
    fn build_finished(&self, variant: &str, outcome: Result<&BuildRecord, &str>) {
        self.bars.build_finished(variant, outcome)
    }
    fn runs_started(&self, total: usize, seconds_each: f64) {
        self.bars.runs_started(total, seconds_each)
    }
    fn run_started(&self, index: usize, label: &str, live: &Arc<Live>) {
        self.bars.run_started(index, label, live)
    }
    fn run_finished(&self, index: usize, label: &str, run: &Run) {
        self.bars.run_finished(index, label, run)
    }
    fn round_finished(&self, status: &RoundStatus) {
        self.bars.round_finished(status)
    }
    fn own_rule(&self) -> bool {
        self.rule.is_some()
    }
    fn enough(&self, results: &Results) -> Option<String> {
        let Call::Decide(d) = self.rule?.call(&ratios(results, &self.name), false) else {
            return None;
        };
        if let Ok(mut slot) = self.decision.lock() {
            *slot = Some(d);
        }
        Some("decided".into())
    }
}

/// The candidate's per-round ratios over good, in round order.
fn ratios(results: &Results, name: &str) -> Vec<f64> {
    results
        .comparisons
        .iter()
        .find(|k| k.variant == name)
        .map(|k| k.round_ratios.iter().map(|r| r.ratio).collect())
        .unwrap_or_default()
}

fn judged_text(j: Judgement) -> &'static str {
    match j {
        Judgement::Moved => "moved",
        Judgement::DidNotMove => "did not move",
        _ => "inconclusive",
    }
}

/// What a step's record tells the search: with a sequential rule, the interval it was
/// judged by; the bad revision's step, its 95% CI.
fn outcome_of(rec: &StepRecord) -> Outcome {
    let error = || rec.error.clone().unwrap_or_default();
    if rec.outcome == "measured" && rec.judged.is_some() {
        return match (rec.verdict, rec.ratio, rec.interval) {
            (Some(verdict), Some(ratio), Some(ci95)) => Outcome::Measured {
                verdict,
                ratio,
                ci95,
            },
            _ => Outcome::Undecided {
                why: format!(
                    "only {} round(s) came within its share of the budget, too few for an interval at {:.1}%",
                    rec.rounds.unwrap_or(0),
                    rec.level.unwrap_or(0.95) * 100.0
                ),
            },
        };
    }
    let fewest = fewest_rounds(bakeoff_bisect::ALPHA);
    if rec.outcome == "measured" && rec.rounds.is_some_and(|n| n < fewest) {
        return Outcome::Undecided {
            why: format!(
                "the bad revision's step fitted {} round(s) in its share of the budget, fewer than the {fewest} a comparison needs to tell it from the good one",
                rec.rounds.unwrap_or(0)
            ),
        };
    }
    match (rec.outcome.as_str(), rec.verdict, rec.ratio, rec.ci95) {
        ("measured", Some(verdict), Some(ratio), Some(ci95)) => Outcome::Measured {
            verdict,
            ratio,
            ci95,
        },
        ("does not build", ..) => Outcome::DoesNotBuild { error: error() },
        _ => Outcome::Failed { error: error() },
    }
}

/// How many steps the folder holds (names the next one).
fn steps_len_hint(folder: &Path) -> usize {
    std::fs::read_dir(folder)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("step-"))
                .count()
        })
        .unwrap_or(0)
        + 1
}

/// Writes bisect.json and bisect.md, prints the summary; exit 0 when a commit is named.
fn finish(folder: &Path, found: &Found) -> Result<(), Failure> {
    let json = serde_json::to_string_pretty(found)
        .map_err(|e| Failure::Failed(format!("cannot write bisect.json: {e}")))?;
    let md = markdown(found);
    for (name, text) in [("bisect.json", json + "\n"), ("bisect.md", md.clone())] {
        bakeoff_os::file::write_atomic(&folder.join(name), text.as_bytes())
            .map_err(|e| Failure::Failed(format!("cannot write {name}: {e}")))?;
    }
    print!("{md}");
    println!("\nresults: {}", folder.display());
    match (&found.first, &found.unresolved) {
        (Some(_), _) => Ok(()),
        (None, Some(why)) => Err(Failure::Failed(format!("bisect: {why}"))),
        (None, None) => Err(Failure::Failed("bisect: no commit named".into())),
    }
}

fn markdown(f: &Found) -> String {
    let mut s = format!(
        "# bisect: {}\n\nCell {}, good {}, bad {}; direction: {}{}.\n\n",
        f.experiment,
        f.cell,
        short(&f.good),
        short(&f.bad),
        f.direction.map_or("none", |v| v.as_str()),
        f.halfway
            .map(|h| format!("; a commit moved when its ratio's interval lies past {h:.3}, halfway to the bad one's"))
            .unwrap_or_default()
    );
    if let Some(b) = f.budget_s {
        s.push_str(&format!(
            "Budget {} for the whole bisect; each step after the bad revision's adds rounds while its interval straddles the halfway ratio, up to its share.\n\n",
            seconds_text(b)
        ));
    }
    if let Some(fc) = &f.forecast {
        s.push_str(&format!("Forecast: {}.\n\n", fc.text));
    }
    match (&f.first, &f.unresolved) {
        (Some(c), _) => s.push_str(&format!("**First commit where the figure moved: {c}**\n\n")),
        (None, Some(why)) => {
            s.push_str(&format!("**No single commit named**: {why}.\n\n"));
            if !f.candidates.is_empty() {
                let list: Vec<String> = f.candidates.iter().map(|c| short(c)).collect();
                s.push_str(&format!("The change is among: {}.\n\n", list.join(", ")));
            }
        }
        (None, None) => {}
    }
    s.push_str("| step | commit | subject | outcome | ratio | 95% CI | rounds | verdict | judged by |\n|---|---|---|---|---|---|---|---|---|\n");
    for (i, r) in f.steps.iter().enumerate() {
        let judged = match (&r.judged, r.interval, r.level) {
            (Some(j), Some(c), Some(l)) => {
                format!("{j}: [{:.3}, {:.3}] at {:.1}%", c[0], c[1], l * 100.0)
            }
            (Some(j), _, _) => j.clone(),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            short(&r.commit),
            r.subject.replace('|', "\\|"),
            r.outcome,
            r.ratio.map_or("-".into(), |x| format!("{x:.3}")),
            r.ci95
                .map_or("-".into(), |c| format!("[{:.3}, {:.3}]", c[0], c[1])),
            match (r.rounds, r.cap) {
                (Some(n), Some(cap)) => format!("{n} of {cap}"),
                (Some(n), None) => n.to_string(),
                _ => "-".into(),
            },
            r.verdict.map_or("-", |v| v.as_str()),
            judged
        ));
    }
    s
}

fn step_line(r: &StepRecord) -> String {
    match (r.verdict, r.ratio) {
        (Some(v), Some(x)) => format!(
            "{} {}: ratio {x:.3}, {}{}",
            short(&r.commit),
            r.subject,
            v.as_str(),
            match (&r.judged, r.interval, r.rounds) {
                (Some(j), Some(c), Some(n)) => format!(
                    "; {j} after {n} round(s) of up to {} ([{:.3}, {:.3}] at {:.1}%)",
                    r.cap.unwrap_or(n),
                    c[0],
                    c[1],
                    r.level.unwrap_or(0.95) * 100.0
                ),
                (Some(j), _, Some(n)) => format!("; {j} after {n} round(s)"),
                _ => String::new(),
            }
        ),
        _ => format!(
            "{} {}: {} ({})",
            short(&r.commit),
            r.subject,
            r.outcome,
            r.error.as_deref().unwrap_or("")
        ),
    }
}

/// The experiment's git source as a URL or path git can clone.
fn git_url(l: &Loaded) -> Option<String> {
    let g = l.experiment.target.source.as_ref()?.git.as_ref()?;
    Some(if g.contains("://") || g.contains('@') {
        g.clone()
    } else {
        l.resolve(g.as_ref()).display().to_string()
    })
}

/// `--cell WORKLOAD[:CONNS]`: the workload's index and connection count (default the
/// first workload at its first count).
fn cell(l: &Loaded, arg: Option<&str>) -> Result<(usize, usize), String> {
    let ws = &l.experiment.workloads;
    let names: Vec<String> = ws.iter().map(|w| w.display_name()).collect();
    let Some(arg) = arg else {
        let first = ws[0].connections_swept().first().copied().unwrap_or(1);
        return Ok((0, first));
    };
    let (name, conns) = match arg.rsplit_once(':') {
        Some((n, c)) => (
            n,
            Some(c.parse::<usize>().map_err(|_| {
                format!("--cell {arg}: {c:?} is not a connection count (WORKLOAD:CONNS)")
            })?),
        ),
        None => (arg, None),
    };
    let i = names.iter().position(|n| n == name).ok_or_else(|| {
        format!(
            "--cell {arg}: no workload {name:?}; the experiment has {}",
            names.join(", ")
        )
    })?;
    let swept = ws[i].connections_swept();
    let c = match conns {
        Some(c) if !swept.contains(&c) => {
            return Err(format!(
                "--cell {arg}: {name} runs at {swept:?} connections, not {c}"
            ))
        }
        Some(c) => c,
        None => swept.first().copied().unwrap_or(1),
    };
    Ok((i, c))
}

fn rev_parse(repo: &Path, rev: &str) -> Result<String, String> {
    if rev.starts_with('-') || rev.trim().is_empty() {
        return Err(format!("{rev:?} is not a revision"));
    }
    git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map(|s| s.trim().to_string())
    .map_err(|_| format!("revision {rev:?} is not in the repository"))
}

fn git(repo: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
