//! `bakeoff tune`: the best build of the server for a workload, searched within the
//! budget. The space is the file's `[tune]` (`bakeoff_plan::Tune`); its candidates, the
//! race and the effects are `bakeoff_tune`'s. Each stage is an ordinary experiment
//! derived from the file (`bakeoff_plan::tune::stage_text`: the file's variants as
//! references, one variant per candidate still in, the race's cell), run by the runner
//! (`bakeoff_runner::study::TuneStages`) with the experiment's statistics: every variant built first (cached; never beside a
//! measured run), verified, then interleaved rounds. A candidate that fails to build,
//! verify or run is out with the reason. With PGO or BOLT in the space, the winner is
//! then measured on every workload (the overfitting check), and that experiment is the
//! results folder's own; otherwise the last stage's results are. Its results.json gets
//! `tune`, the report its section (`bakeoff_report::tune`). The decisions between stages
//! (shares of the budget, signals, when to stop) are `bakeoff_tune::Tuning`'s, a
//! `bakeoff_study::Study`; this file reads the arguments, says the progress lines and
//! writes the folder.

use crate::cli::RunArgs;
use crate::session::{load, options, record, Failure, StudyHost};
use bakeoff_plan::{Loaded, Tune};
use bakeoff_report::tune::{TuneRecord, Winner};
use bakeoff_report::Results;
use bakeoff_runner::study::{Deriving, TuneStages};
use bakeoff_sandbox::{target_for, Ask};
use bakeoff_tune::study::seconds_text;
use bakeoff_tune::{Candidate, Race, Recipe, Settings, Space, Tuned, Tuning};
use std::path::{Path, PathBuf};
use std::time::Instant;

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
    let race = Race::new(candidates, settings);
    let total = e.plan.stopping().budget.map(|b| b.as_secs_f64());
    let check_overfit = overfit_check_wanted(&setup);
    say_start(&setup, &race, excluded.len(), total);
    let study = Tuning::new(race, total, check_overfit, screens(&setup), |line: &str| {
        eprintln!("tune: {line}")
    });
    let mut stages = TuneStages {
        deriving: Deriving {
            loaded: &setup.loaded,
            opts: setup.opts.clone(),
            host: &StudyHost(args),
            engine: &bakeoff_runner::Engine,
            cancel,
            folder: setup.folder.clone(),
        },
        tune: &setup.tune,
        baseline: setup.baseline.clone(),
        cell: setup.cell,
        kept: None,
    };
    let Tuned {
        race,
        conclusion,
        overfitting,
        checked,
    } = bakeoff_study::drive(study, &mut stages)?;
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
        overfitting_checked: checked,
        seconds: Some(started.elapsed().as_secs_f64()),
    };
    // The folder's own experiment: the overfitting check, or the last stage.
    let mut kept = stages.kept.take();
    let results = match kept.as_mut() {
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

/// The opening line: the candidates, the cell, the baseline, what was left out, the budget.
fn say_start(setup: &Setup, race: &Race, excluded: usize, total: Option<f64>) {
    eprintln!(
        "tune: {} candidates on {} against {}{}{}",
        race.entries.len(),
        setup.cell_name,
        setup.baseline,
        if excluded == 0 {
            String::new()
        } else {
            format!(
                " ({} combinations left out, listed in the report)",
                excluded
            )
        },
        total.map_or(String::new(), |t| format!("; budget {}", seconds_text(t)))
    );
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
    let folder =
        bakeoff_runner::study::folder(args.out.as_deref(), &args.results_dir, "tune", &e.name)
            .map_err(Failure::Failed)?;
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
