//! `bakeoff tune`: the best build of the server for a workload, searched within the
//! budget. The space is the file's `[tune]` (`bakeoff_plan::Tune`); its candidates, the
//! race and the effects are `bakeoff_tune`'s. Each stage is an ordinary experiment
//! derived from the file (`bakeoff_plan::tune::stage_text`: the file's variants as
//! references, one variant per candidate still in, the race's cell), run by the runner
//! with the experiment's statistics: every variant built first (cached; never beside a
//! measured run), verified, then interleaved rounds. A candidate that fails to build,
//! verify or run is out with the reason. With PGO or BOLT in the space, the winner is
//! then measured on every workload (the overfitting check), and that experiment is the
//! results folder's own; otherwise the last stage's results are. Its results.json gets
//! `tune`, the report its section (`bakeoff_report::tune`).

use crate::cli::RunArgs;
use crate::progress::Bars;
use crate::session::{load, options, progress_mode, read_results, record, Failure};
use bakeoff_plan::tune::{stage_text, Measured, Stage};
use bakeoff_plan::{Loaded, Tune};
use bakeoff_report::tune::{TuneRecord, Winner};
use bakeoff_report::Results;
use bakeoff_runner::RunError;
use bakeoff_sandbox::{target_for, Ask};
use bakeoff_tune::{Candidate, Next, Race, Recipe, Settings, Signal, Space, StageData};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// The most stages a search runs.
const MAX_STAGES: usize = 8;

/// What every stage needs.
struct Setup {
    loaded: Loaded,
    tune: Tune,
    space: Space,
    baseline: String,
    /// The race's cell: workload index, its connections key, the count.
    cell: (usize, &'static str, usize),
    cell_name: String,
    folder: PathBuf,
    opts: bakeoff_runner::Options,
}

pub fn tune_cmd(args: &RunArgs) -> Result<(), Failure> {
    crate::metrics::refuse_on("tune", &args.metrics)?;
    let started = Instant::now();
    let (setup, candidates, excluded) = setup(args)?;
    let cancel = bakeoff_sandbox::install_signal_handler();
    let e = &setup.loaded.experiment;
    let settings = Settings {
        equivalence: e.plan.equivalence_band(),
        ..Settings::default()
    };
    let mut race = Race::new(candidates, settings);
    let total = e.plan.stopping().budget.map(|b| b.as_secs_f64());
    let check_overfit = overfit_check_wanted(&setup);
    // The overfitting check's share, kept aside from the start.
    let reserve = total.map_or(0.0, |t| if check_overfit { t / 4.0 } else { 0.0 });
    let mut left = total;
    let mut pace: Option<f64> = None;
    let mut spread: Option<f64> = None;
    eprintln!(
        "tune: {} candidates on {} against {}{}{}",
        race.entries.len(),
        setup.cell_name,
        setup.baseline,
        if excluded.is_empty() {
            String::new()
        } else {
            format!(
                " ({} combinations left out, listed in the report)",
                excluded.len()
            )
        },
        total.map_or(String::new(), |t| format!("; budget {}", seconds_text(t)))
    );
    // The last throughput stage's results and folder.
    let mut last: Option<(Results, PathBuf)> = None;
    let conclusion = loop {
        let names = match race.next() {
            Next::Done(c) => break c,
            Next::Stage(names) => names,
        };
        if race.stages.len() >= MAX_STAGES {
            race.stop(format!("{MAX_STAGES} stages ran"));
            continue;
        }
        let share = left.map(|l| {
            let usable = l - reserve;
            if names.len() > 2 {
                usable / 2.0
            } else {
                usable
            }
        });
        let floor = pace.map_or(10.0, |p| p * bakeoff_plan::DEFAULT_MIN_ROUNDS as f64);
        if share.is_some_and(|s| s < floor) {
            race.stop(format!(
                "the budget is spent (this stage's share is {} of the {} left, a stage needs about {})",
                seconds_text(share.unwrap_or(0.0)),
                seconds_text(left.unwrap_or(0.0) - reserve),
                seconds_text(floor)
            ));
            continue;
        }
        let n = race.stages.len() + 1;
        // With `[plan] mode = "both"`, the first stage screens on instruction counts.
        let signal = if n == 1 && screens(&setup) && names.len() > 1 {
            Signal::Instructions
        } else {
            Signal::Throughput
        };
        let (results, seconds) = run_stage(&setup, args, &race, &names, n, share, signal, &cancel)?;
        if let Some(l) = left.as_mut() {
            *l -= seconds;
        }
        let data = stage_data(&setup, &results, &names, signal);
        let per_round = results
            .comparisons
            .iter()
            .find(|k| names.contains(&k.variant) && !k.round_ratios.is_empty())
            .map(|k| k.round_ratios.len());
        if let Some(r) = per_round.filter(|r| *r > 0 && signal == Signal::Throughput) {
            pace = Some(seconds / r as f64);
        }
        let rec = race.feed(signal, data).clone();
        if let Some(st) = race.stages.last_mut() {
            st.seconds = Some(seconds);
        }
        spread = leader_spread(&race).or(spread);
        progress(&race, &rec, left.map(|l| l - reserve), pace, spread);
        if signal == Signal::Throughput {
            last = Some((results, setup.folder.join(format!("stage-{n}"))));
        }
    };
    let standings = race.standings();
    let effects = race.effects(&setup.space.factors(), 0.95);
    let winner = conclusion.winner.as_ref().and_then(|w| {
        let s = standings.iter().find(|s| &s.name == w)?;
        Some(Winner {
            name: s.name.clone(),
            ratio: s.ratio,
            interval: s.interval,
            verdict: s.verdict,
            variant: variant_block(&setup, &s.name, &s.recipe),
        })
    });
    // The folder's own experiment: the overfitting check, or the last stage.
    let mut overfitting = Vec::new();
    let mut results = match (&winner, check_overfit) {
        (Some(w), true) => {
            let recipe = &race
                .entries
                .iter()
                .find(|e| e.name == w.name)
                .unwrap()
                .recipe;
            let budget = left.map(|l| l.max(reserve).max(pace.unwrap_or(5.0) * 6.0));
            let r = run_final(&setup, args, &w.name, recipe, budget, &cancel)?;
            overfitting = losses(&setup, &r, &w.name);
            Some((r, setup.folder.join("check")))
        }
        _ => last,
    };
    let record_tune = TuneRecord {
        baseline: setup.baseline.clone(),
        cell: setup.cell_name.clone(),
        candidates: standings,
        excluded,
        stages: race.stages.clone(),
        winner,
        effects,
        conclusion: conclusion.clone(),
        overfitting,
        overfitting_checked: check_overfit && conclusion.winner.is_some(),
        seconds: Some(started.elapsed().as_secs_f64()),
    };
    let results = match results.as_mut() {
        Some((r, from)) => {
            r.tune = Some(record_tune);
            copy_runs(from, &setup.folder)?;
            r
        }
        None => {
            return Err(Failure::Failed(format!(
                "tune: nothing was measured: {}",
                conclusion.why
            )))
        }
    };
    write_folder(&setup.folder, results)?;
    let _ = record(args, results, &setup.folder);
    print!(
        "{}",
        bakeoff_report::terminal_with(results, false, &bakeoff_workloads::KINDS)
    );
    println!("\nresults: {}", setup.folder.display());
    match &conclusion.winner {
        Some(_) => Ok(()),
        None => Err(Failure::Failed(format!(
            "tune: no winner: {}",
            conclusion.why
        ))),
    }
}

/// The experiment, its space and candidates, the cell and the folder.
fn setup(args: &RunArgs) -> Result<(Setup, Vec<Candidate>, Vec<bakeoff_tune::Excluded>), Failure> {
    let loaded = load(&args.experiment, &args.set)?;
    let e = &loaded.experiment;
    let file = args.experiment.display().to_string();
    let Some(tune) = e.tune.clone() else {
        return Err(Failure::BadInput(format!(
            "{file}: no [tune] table; add one naming the choices to search, e.g. [tune] opt = [\"-O2\", \"-O3\"]"
        )));
    };
    let space = tune.space(e);
    let baseline = tune.baseline(e).to_string();
    let target = target_for(e.target.kind);
    let (candidates, excluded) = space.candidates(|r| refuses(&*target, r));
    if candidates.is_empty() {
        let why = excluded
            .first()
            .map(|x| x.reason.clone())
            .unwrap_or_default();
        return Err(Failure::BadInput(format!(
            "{file}: no combination of [tune] can be built here (first: {why})"
        )));
    }
    let measured: Vec<usize> = (0..e.workloads.len())
        .filter(|&i| !e.workloads[i].train_only)
        .collect();
    let cell_w = measured
        .iter()
        .copied()
        .find(|&i| Some(e.workloads[i].display_name()) != tune.train)
        .or(measured.first().copied())
        .ok_or_else(|| Failure::BadInput(format!("{file}: no workload is measured")))?;
    let w = &e.workloads[cell_w];
    let conns = w.connections_swept().first().copied().unwrap_or(1);
    let cell_name = format!("{} x{conns}", w.display_name());
    let cell = (cell_w, w.keys.connections_key(), conns);
    let opts = options(args, &loaded);
    let folder = match &args.out {
        Some(out) => out.clone(),
        None => {
            let stamp: String = bakeoff_store::now_utc()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect();
            args.results_dir.join(format!(
                "tune-{}-{stamp}",
                bakeoff_os::path::safe_name(&e.name)
            ))
        }
    };
    std::fs::create_dir_all(&folder)
        .map_err(|err| Failure::Failed(format!("cannot create {}: {err}", folder.display())))?;
    Ok((
        Setup {
            loaded,
            tune,
            space,
            baseline,
            cell,
            cell_name,
            folder,
            opts,
        },
        candidates,
        excluded,
    ))
}

/// What `bakeoff check` says of a file's `[tune]`: the candidates and what is left out.
pub fn check_line(l: &Loaded) -> Option<String> {
    let e = &l.experiment;
    let t = e.tune.as_ref()?;
    let target = target_for(e.target.kind);
    let (ok, out) = t.space(e).candidates(|r| refuses(&*target, r));
    let mut reasons: Vec<&str> = out.iter().map(|x| x.reason.as_str()).collect();
    reasons.sort();
    reasons.dedup();
    Some(format!(
        "tune: {} candidate(s) against {}{}",
        ok.len(),
        t.baseline(e),
        if out.is_empty() {
            String::new()
        } else {
            format!("; {} left out ({})", out.len(), reasons.join("; "))
        }
    ))
}

/// Why this machine or target cannot build a recipe.
fn refuses(target: &dyn bakeoff_sandbox::Target, r: &Recipe) -> Option<String> {
    if bakeoff_os::path::which(&r.compiler).is_none() {
        return Some(format!("{} is not installed", r.compiler));
    }
    if r.lto != bakeoff_tune::Lto::None {
        if let Some(why) = target.refuses(Ask::Lto) {
            return Some(why);
        }
        let lto = match r.lto {
            bakeoff_tune::Lto::Thin => bakeoff_build::Lto::Thin,
            _ => bakeoff_build::Lto::Full,
        };
        if let Err(m) = bakeoff_build::lto::settings(&r.compiler, lto) {
            return Some(m);
        }
    }
    for (on, ask, what) in [(r.pgo, Ask::Pgo, "pgo"), (r.bolt, Ask::Bolt, "bolt")] {
        if !on {
            continue;
        }
        if let Some(why) = target.refuses(ask) {
            return Some(why);
        }
        if let Err(m) =
            bakeoff_build::pgo::flags(&r.compiler, &bakeoff_build::pgo::Profile::Generate)
        {
            return Some(m.replace("pgo", what));
        }
    }
    if r.bolt && bakeoff_os::path::which("llvm-bolt-16").is_none() {
        return Some("BOLT needs llvm-bolt-16, which is not installed".into());
    }
    None
}

/// A screen on instruction counts first: the file asks for them beside wall-clock time
/// (`[plan] mode = "both"`, with its `ops`).
fn screens(s: &Setup) -> bool {
    let e = &s.loaded.experiment;
    e.plan.mode == bakeoff_plan::Mode::Both && e.plan.ops.is_some()
}

/// The overfitting check runs when PGO or BOLT is in the space and another workload
/// than the trained one is measured.
fn overfit_check_wanted(s: &Setup) -> bool {
    let trains = s.space.pgo.contains(&true) || s.space.bolt.contains(&true);
    let e = &s.loaded.experiment;
    let measured = e.workloads.iter().filter(|w| !w.train_only).count();
    trains && s.tune.train.is_some() && measured > 1
}

/// Runs one stage: the candidates still in, against the references, on the cell.
#[allow(clippy::too_many_arguments)]
fn run_stage(
    setup: &Setup,
    args: &RunArgs,
    race: &Race,
    names: &[String],
    n: usize,
    budget_s: Option<f64>,
    signal: Signal,
    cancel: &Arc<AtomicBool>,
) -> Result<(Results, f64), Failure> {
    let candidates: Vec<(String, Recipe)> = names
        .iter()
        .filter_map(|name| race.entries.iter().find(|e| &e.name == name))
        .map(|e| (e.name.clone(), e.recipe.clone()))
        .collect();
    let (w, key, conns) = setup.cell;
    let stage = Stage {
        candidates: &candidates,
        baseline: &setup.baseline,
        measured: Measured::Cell(w, key, conns),
        budget_s,
        mode: match signal {
            Signal::Instructions => "instructions",
            Signal::Throughput => "time",
        },
    };
    let dir = setup.folder.join(format!("stage-{n}"));
    eprintln!(
        "tune: stage {n}: {} candidates{}{}",
        candidates.len(),
        if signal == Signal::Instructions {
            ", screened on instruction counts"
        } else {
            ""
        },
        budget_s.map_or(String::new(), |b| format!(
            ", up to {} of rounds",
            seconds_text(b)
        ))
    );
    run_derived(setup, args, &stage, &dir, cancel)
}

/// The overfitting check: the winner against the references on every workload.
fn run_final(
    setup: &Setup,
    args: &RunArgs,
    name: &str,
    recipe: &Recipe,
    budget_s: Option<f64>,
    cancel: &Arc<AtomicBool>,
) -> Result<Results, Failure> {
    let candidates = vec![(name.to_string(), recipe.clone())];
    let stage = Stage {
        candidates: &candidates,
        baseline: &setup.baseline,
        measured: Measured::All,
        budget_s,
        mode: "time",
    };
    eprintln!("tune: the winner {name} on every workload (the overfitting check)");
    run_derived(setup, args, &stage, &setup.folder.join("check"), cancel).map(|(r, _)| r)
}

/// One derived experiment through the runner: its results and the seconds its rounds
/// took.
fn run_derived(
    setup: &Setup,
    args: &RunArgs,
    stage: &Stage,
    dir: &Path,
    cancel: &Arc<AtomicBool>,
) -> Result<(Results, f64), Failure> {
    let loaded = &setup.loaded;
    let text = stage_text(&loaded.text, &setup.tune, stage)
        .map_err(|m| Failure::Failed(format!("cannot write a stage: {m}")))?;
    let tag = dir
        .file_name()
        .map_or("x".into(), |n| n.to_string_lossy().to_string());
    let stage_loaded = bakeoff_plan::derived::load_derived(
        &loaded.path,
        &format!("tune-{tag}"),
        &text,
        &bakeoff_workloads::KINDS,
    )
    .map_err(|e| match e {
        bakeoff_plan::derived::DerivedError::Write(m) => Failure::Failed(m),
        bakeoff_plan::derived::DerivedError::Load(err) => {
            Failure::Failed(format!("a derived stage does not load: {err}"))
        }
    })?;
    let mut opts = setup.opts.clone();
    opts.out = Some(dir.to_path_buf());
    let bars = Bars::new(progress_mode(args));
    let outcome = bakeoff_runner::run_experiment(&stage_loaded, &opts, &bars, cancel.clone());
    bars.finish();
    match outcome {
        Ok(o) => {
            let secs = o.results.rounds_s.unwrap_or(0.0);
            Ok((o.results, secs))
        }
        Err(RunError::Interrupted(f)) => {
            if let Ok(r) = read_results(&f) {
                let _ = record(args, &r, &f);
            }
            Err(Failure::Interrupted(RunError::Interrupted(f).to_string()))
        }
        Err(RunError::BadInput(m)) => Err(Failure::BadInput(m)),
        Err(err) => match read_results(dir) {
            // Every candidate failed to build, or none ran: the race takes them out.
            Ok(r) => Ok((r, 0.0)),
            Err(_) => Err(Failure::Failed(err.to_string())),
        },
    }
}

/// The stage's per-round throughput ratios of each candidate, and the candidates that
/// failed (build, verification, no valid run) with why.
fn stage_data(setup: &Setup, r: &Results, names: &[String], signal: Signal) -> StageData {
    let mut data = StageData::default();
    for name in names {
        if let Some(v) = r
            .variants
            .iter()
            .find(|v| &v.name == name && v.status != "ok")
        {
            data.failed.push((
                name.clone(),
                v.error.clone().unwrap_or_else(|| v.status.clone()),
            ));
            continue;
        }
        let k = r.comparisons.iter().find(|k| {
            &k.variant == name
                && k.baseline == setup.baseline
                && k.is_instructions() == (signal == Signal::Instructions)
                && !k.is_capacity()
        });
        match k {
            Some(k) if !k.round_ratios.is_empty() => data.ratios.push((
                name.clone(),
                k.round_ratios
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (i, x.ratio))
                    .collect(),
            )),
            _ => data.failed.push((name.clone(), "no valid run".into())),
        }
    }
    data
}

/// Standard deviation of the leader's per-round log ratios.
fn leader_spread(race: &Race) -> Option<f64> {
    let l = race.leader()?;
    let xs: Vec<f64> = l.throughput.iter().map(|x| x.1).collect();
    if xs.len() < 2 {
        return None;
    }
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    Some((xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt())
}

/// One progress line after a stage: candidates left, the leader, what the rest of the
/// budget can still resolve between two candidates.
fn progress(
    race: &Race,
    st: &bakeoff_tune::StageRecord,
    left: Option<f64>,
    pace: Option<f64>,
    spread: Option<f64>,
) {
    let leader = race.leader().map(|l| {
        let m = l.throughput.iter().map(|x| x.1).sum::<f64>() / l.throughput.len().max(1) as f64;
        format!("{} (ratio {:.3})", l.name, m.exp())
    });
    let resolve = match (left, pace, spread) {
        (Some(l), Some(p), Some(s)) if l > 0.0 && p > 0.0 => {
            let n = (l / p).floor();
            if n >= 2.0 {
                // Two candidates paired by round: sd of a difference ~ sqrt(2) s.
                format!(
                    "; the {} left (~{} rounds) can tell apart candidates about {:.1}% apart",
                    seconds_text(l),
                    n as usize,
                    (2.0 * (2.0f64).sqrt() * s / n.sqrt()) * 100.0
                )
            } else {
                "; the budget allows no more stages".into()
            }
        }
        _ => String::new(),
    };
    eprintln!(
        "tune: stage {} done ({} rounds): {} left, leader {}; dropped {}{}{}",
        st.stage,
        st.rounds,
        race.alive().len(),
        leader.unwrap_or_else(|| "-".into()),
        st.dropped.len(),
        if st.out.is_empty() {
            String::new()
        } else {
            format!(", out {}", st.out.join(", "))
        },
        resolve
    );
}

/// The winner's cells on other workloads where it is slower than the baseline.
fn losses(setup: &Setup, r: &Results, name: &str) -> Vec<String> {
    r.comparisons
        .iter()
        .filter(|k| {
            k.variant == name
                && k.baseline == setup.baseline
                && !k.is_instructions()
                && k.verdict == bakeoff_report::model::Verdict::Slower
        })
        .map(|k| {
            format!(
                "{} x{}: ratio {:.3}, CI [{:.3}, {:.3}], slower than {}",
                k.workload, k.connections, k.ratio, k.ci95[0], k.ci95[1], k.baseline
            )
        })
        .collect()
}

/// The winning recipe as a `[[variant]]` block.
fn variant_block(setup: &Setup, name: &str, r: &Recipe) -> String {
    let mut s = format!(
        "[[variant]]\nname = \"{name}\"\ncompiler = \"{}\"\n",
        r.compiler
    );
    let cflags = r.cflags();
    if !cflags.is_empty() {
        s.push_str(&format!("cflags = {cflags:?}\n"));
    }
    if r.lto != bakeoff_tune::Lto::None {
        s.push_str(&format!("lto = \"{}\"\n", r.lto.as_str()));
    }
    if let Some(t) = &setup.tune.train {
        if r.pgo {
            s.push_str(&format!("pgo = {{ workload = {t:?} }}\n"));
        }
        if r.bolt {
            s.push_str(&format!("bolt = {{ workload = {t:?} }}\n"));
        }
    }
    s
}

/// The runs' files (logs, series, histograms) of the experiment the folder's results are
/// (the overfitting check's or the last stage's), so its reports' links hold.
fn copy_runs(from: &Path, to: &Path) -> Result<(), Failure> {
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(Failure::Failed(format!(
            "cannot copy {} into {}; check the disk and the folder's permissions",
            from.display(),
            to.display()
        )))
    }
}

/// Every report of the folder from `results`.
fn write_folder(dir: &Path, results: &Results) -> Result<(), Failure> {
    for ex in bakeoff_report::exporters_with(&bakeoff_workloads::KINDS) {
        let out = dir.join(ex.file_name());
        bakeoff_os::file::write_atomic(&out, &ex.render(results)).map_err(|e| {
            Failure::Failed(format!(
                "cannot write {}: {e}; check that the folder is writable",
                out.display()
            ))
        })?;
    }
    Ok(())
}

/// Seconds as the plan writes durations ("45s", "2m30s").
fn seconds_text(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s:02}s"),
    }
}
