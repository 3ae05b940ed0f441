//! `bakeoff bisect`: the first commit of a git source where a cell's figure moved. Each
//! step is an ordinary experiment (the template build at the good revision against the
//! same build at one commit, on one cell, with the experiment's statistics and budget);
//! the steps halve the commits between good and bad until one is left. The search itself
//! (which commit next, what a step's CI says, skips, the conclusion) is
//! `bakeoff_bisect::Search`, the decisions between steps `bakeoff_bisect::Bisect` (a
//! `bakeoff_study::Study`), and each step is run by `bakeoff_runner::study::BisectSteps`;
//! this file reads the arguments, says the progress lines and writes what they found.
//!
//! The budget is the whole bisect's: `[plan] budget` for each step the commits need
//! (the bad revision's and one per halving), shared by `bakeoff_bisect::Budget`. The bad
//! revision's step runs under the plan's own stopping rule; its round spread and pace
//! give the forecast (the smallest change the rest of the budget can localize), printed
//! before the halving starts. Every later step runs under `bakeoff_bisect::StepRule`:
//! rounds are added while its interval straddles the halfway ratio, up to the rounds
//! its share allows, and it stops as soon as the interval lies on one side.

use crate::cli::BisectArgs;
use crate::session::{load, options, Failure, StudyHost};
use bakeoff_bisect::{
    seconds_text, short, Bisect, Bisected, Forecast, NoCommits, StepRecord, MAX_ROUNDS,
};
use bakeoff_plan::Loaded;
use bakeoff_report::model::Verdict;
use bakeoff_runner::study::{BisectSteps, Deriving};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Everything the steps need, resolved once before the first.
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
    let stop = setup.loaded.experiment.plan.stopping();
    let per_step = stop.budget.map(|b| b.as_secs_f64());
    let study = Bisect::new(
        setup.commits.clone(),
        per_step,
        stop.max_rounds.unwrap_or(MAX_ROUNDS),
        |line: &str| eprintln!("bisect: {line}"),
    )
    .map_err(|NoCommits| Failure::Failed("bisect: no commit between good and bad".into()))?;
    eprintln!(
        "bisect: {} commits from {} to {} on {}{}",
        setup.commits.len(),
        short(&setup.good),
        short(&setup.bad),
        setup.cell_name,
        per_step
            .map(|b| format!(
                "; a budget of {} for ~{} steps ({} a step on average: a step that decides early leaves its time to the rest)",
                seconds_text(study.budget().total_s()),
                study.search().steps_left(),
                seconds_text(b)
            ))
            .unwrap_or_default()
    );
    let subject =
        |commit: &str| git(&setup.repo, &["log", "-1", "--format=%s", commit]).unwrap_or_default();
    let mut steps = BisectSteps {
        deriving: Deriving {
            loaded: &setup.loaded,
            opts: setup.opts.clone(),
            host: &StudyHost(&args.run),
            engine: &bakeoff_runner::Engine,
            cancel,
            folder: setup.folder.clone(),
        },
        template: setup.template,
        workload: setup.workload,
        connections: setup.connections,
        good: setup.good.clone(),
        subject: &subject,
    };
    let Bisected {
        conclusion: found,
        budget_s,
        forecast,
        steps,
    } = bakeoff_study::drive(study, &mut steps)?;
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
        budget_s,
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

    let folder = bakeoff_runner::study::folder(
        args.run.out.as_deref(),
        &args.run.results_dir,
        "bisect",
        &e.name,
    )
    .map_err(Failure::Failed)?;
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
