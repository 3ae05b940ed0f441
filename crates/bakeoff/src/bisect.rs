//! `bakeoff bisect`: the first commit of a git source where a cell's figure moved. Each
//! step is an ordinary experiment (the template build at the good revision against the
//! same build at one commit, on one cell, with the experiment's statistics and budget);
//! the steps halve the commits between good and bad until one is left. The search itself
//! (which commit next, what a step's CI says, skips, the conclusion) is
//! `bakeoff_bisect::Search`; this file runs the steps and writes what they found.

use crate::app::{load, options, progress_mode, read_results, record, Failure};
use crate::cli::BisectArgs;
use crate::progress::Bars;
use bakeoff_bisect::{short, Next, NoCommits, Outcome, Search};
use bakeoff_plan::derive::{bisect_step, Step};
use bakeoff_plan::Loaded;
use bakeoff_report::model::Verdict;
use bakeoff_runner::RunError;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
    folder: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
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
    let setup = setup(args)?;
    eprintln!(
        "bisect: {} commits from {} to {} on {}",
        setup.commits.len(),
        short(&setup.good),
        short(&setup.bad),
        setup.cell_name
    );
    let cancel = bakeoff_sandbox::install_signal_handler();
    let mut search = Search::new(setup.commits.clone())
        .map_err(|NoCommits| Failure::Failed("bisect: no commit between good and bad".into()))?;
    let mut steps: Vec<StepRecord> = Vec::new();
    let found = loop {
        let commit = match search.next_step() {
            Next::Measure(commit) => commit.to_string(),
            Next::Done(found) => break found.clone(),
        };
        let rec = run_step(&setup, args, &commit, &cancel)?;
        search.feed(outcome_of(&rec));
        steps.push(rec);
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
        },
    )
    .map_err(|m| Failure::Failed(format!("cannot write step {n}: {m}")))?;
    let dir = setup.folder.join(format!("step-{n}-{name}"));
    // The step's file sits beside the original, so its relative paths (patches,
    // files, a local git source) resolve the same.
    let path = loaded.path.with_file_name(format!(
        ".bakeoff-bisect-{}-{name}.toml",
        std::process::id()
    ));
    std::fs::write(&path, &text)
        .map_err(|err| Failure::Failed(format!("cannot write {}: {err}", path.display())))?;
    let step_loaded = bakeoff_plan::load(&path, &bakeoff_workloads::KINDS);
    let _ = std::fs::remove_file(&path);
    let step_loaded = step_loaded.map_err(|err| Failure::BadInput(err.to_string()))?;
    let mut step_opts = setup.opts.clone();
    step_opts.out = Some(dir.clone());
    step_opts.every_variant = true;
    let bars = Bars::new(progress_mode(&args.run));
    let outcome = bakeoff_runner::run_experiment(&step_loaded, &step_opts, &bars, cancel.clone());
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
        folder: dir.display().to_string(),
        error: None,
    };
    match outcome {
        Ok(o) => {
            let _ = record(&args.run, &o.results, &o.folder);
            match o.results.headline_comparisons().find(|k| k.variant == name) {
                Some(k) => {
                    rec.verdict = Some(k.verdict);
                    rec.ratio = Some(k.ratio);
                    rec.ci95 = Some(k.ci95);
                    rec.rounds = Some(k.rounds);
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

/// What a step's record tells the search.
fn outcome_of(rec: &StepRecord) -> Outcome {
    let error = || rec.error.clone().unwrap_or_default();
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
            .map(|h| format!("; a commit moved when its ratio's 95% CI lies past {h:.3}, halfway to the bad one's"))
            .unwrap_or_default()
    );
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
    s.push_str("| step | commit | subject | outcome | ratio | 95% CI | rounds | verdict |\n|---|---|---|---|---|---|---|---|\n");
    for (i, r) in f.steps.iter().enumerate() {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            short(&r.commit),
            r.subject.replace('|', "\\|"),
            r.outcome,
            r.ratio.map_or("-".into(), |x| format!("{x:.3}")),
            r.ci95
                .map_or("-".into(), |c| format!("[{:.3}, {:.3}]", c[0], c[1])),
            r.rounds.map_or("-".into(), |n| n.to_string()),
            r.verdict.map_or("-", |v| v.as_str())
        ));
    }
    s
}

fn step_line(r: &StepRecord) -> String {
    match (r.verdict, r.ratio) {
        (Some(v), Some(x)) => format!(
            "{} {}: ratio {x:.3}, {}",
            short(&r.commit),
            r.subject,
            v.as_str()
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
