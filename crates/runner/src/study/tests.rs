//! The real steps against a fake engine that runs nothing: each derived experiment is
//! loaded as the runner would load it, and the engine answers with results made from a
//! script (the candidate's ratio per round), calling the observer after every round as
//! the round loop does. What is checked is this module's own part: the folders it names,
//! the options it sets, the rule's stop through `Observer::enough`, what it reads back
//! into a step's record or a stage's data, and the errors it maps.

use super::*;
use crate::observer::Quiet;
use bakeoff_bisect::{short, Bisect, MAX_ROUNDS};
use bakeoff_report::model::{ComparisonRecord, RoundRatio, Verdict};
use bakeoff_study::drive;
use std::sync::Mutex;

/// What the fake engine saw of each experiment: its folder, its variants, whether every
/// variant's runs are kept, and the rounds it ran.
#[derive(Debug, Clone)]
struct Seen {
    out: PathBuf,
    variants: Vec<String>,
    every_variant: bool,
    rounds: usize,
}

/// Answers every experiment with `ratio` per round for each variant after the first
/// (the baseline), up to `rounds` rounds or until the observer's rule says enough.
struct Fake {
    ratio: f64,
    rounds: usize,
    seen: Mutex<Vec<Seen>>,
    interrupt_at: Option<usize>,
}

impl Fake {
    /// Every run answers `ratio` after `rounds` rounds; the run numbered `interrupt_at`
    /// (from 1), if any, comes back interrupted.
    fn new(ratio: f64, rounds: usize, interrupt_at: Option<usize>) -> Fake {
        Fake {
            ratio,
            rounds,
            seen: Mutex::new(Vec::new()),
            interrupt_at,
        }
    }
}

impl Experiments for Fake {
    fn run(
        &self,
        loaded: &Loaded,
        opts: &Options,
        observer: &dyn Observer,
        _cancel: Arc<AtomicBool>,
    ) -> Result<(Results, PathBuf), RunError> {
        let out = opts.out.clone().expect("a step's folder");
        // The runner makes the folder first (the next step's name counts them).
        std::fs::create_dir_all(&out).unwrap();
        let variants: Vec<String> = loaded
            .experiment
            .variants
            .iter()
            .map(|v| v.name.clone())
            .collect();
        let n = self.seen.lock().unwrap().len() + 1;
        if self.interrupt_at == Some(n) {
            return Err(RunError::Interrupted(out));
        }
        let mut results = crate::folder::initial_results(loaded);
        let base = &variants[0];
        for v in &variants[1..] {
            let k: ComparisonRecord = serde_json::from_value(serde_json::json!({
                "workload": "kv", "connections": 8, "variant": v, "baseline": base,
                "ratio": self.ratio, "ci95": [self.ratio * 0.97, self.ratio * 1.03],
                "p_value": 0.01, "verdict": "slower", "metric": "throughput",
                "round_spread": 0.02,
            }))
            .unwrap();
            results.comparisons.push(k);
        }
        let mut rounds = 0;
        while rounds < self.rounds {
            for (i, k) in results.comparisons.iter_mut().enumerate() {
                // A little spread, the same every run.
                let x = self.ratio * (1.0 + 0.01 * (((rounds + i) % 3) as f64 - 1.0));
                k.round_ratios.push(RoundRatio {
                    round: rounds,
                    ratio: x,
                });
                k.rounds = rounds + 1;
            }
            rounds += 1;
            if observer.own_rule() && observer.enough(&results).is_some() {
                break;
            }
        }
        results.rounds_s = Some(rounds as f64 * 2.0);
        self.seen.lock().unwrap().push(Seen {
            out: out.clone(),
            variants,
            every_variant: opts.every_variant,
            rounds,
        });
        Ok((results, out))
    }
}

/// Shows nothing; counts what it keeps.
#[derive(Default)]
struct Counted {
    kept: Mutex<Vec<PathBuf>>,
}

impl Host for Counted {
    fn show(&self, f: &mut dyn FnMut(&dyn Observer)) {
        f(&Quiet)
    }
    fn keep(&self, _results: &Results, folder: &Path) {
        self.kept.lock().unwrap().push(folder.to_path_buf());
    }
}

fn bisect_file(dir: &Path) -> Loaded {
    let f = dir.join("bisect.toml");
    std::fs::write(
        &f,
        "name = \"b\"\n[target]\nkind = \"memcached\"\nsource = { git = \"repo\", rev = \"good\" }\n[[variant]]\nname = \"o2\"\ncompiler = \"gcc-12\"\ncflags = \"-O2\"\n[[workload]]\nkind = \"kv\"\nname = \"kv\"\nconnections = [8]\n[plan]\nbudget = \"60s\"\n",
    )
    .unwrap();
    bakeoff_plan::load(&f, &bakeoff_workloads::KINDS).unwrap()
}

fn opts(dir: &Path) -> Options {
    Options {
        out: None,
        results_root: dir.join("results"),
        cache_root: dir.join("cache"),
        sandbox_root: dir.join("sandboxes"),
        every_variant: false,
    }
}

/// The study's deriving side over the fake engine, in `dir`, not cancelled.
fn deriving<'a>(
    loaded: &'a Loaded,
    dir: &std::path::Path,
    host: &'a dyn Host,
    engine: &'a dyn Experiments,
    folder: PathBuf,
) -> Deriving<'a> {
    Deriving {
        loaded,
        opts: opts(dir),
        host,
        engine,
        cancel: Arc::new(AtomicBool::new(false)),
        folder,
    }
}

#[test]
fn bisect_steps_are_named_once_stopped_by_their_rule_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = bisect_file(dir.path());
    let folder = folder(None, &dir.path().join("results"), "bisect", "b 1").unwrap();
    assert!(folder.is_dir());
    let name = folder.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("bisect-b_1-") && name.len() > "bisect-b_1-".len(),
        "{name}"
    );
    let commits: Vec<String> = ["a", "b"].iter().map(|c| c.repeat(40)).collect();
    let engine = Fake::new(0.5, 12, None);
    let host = Counted::default();
    let subject = |c: &str| format!("subject of {}\n", short(c));
    let mut steps = BisectSteps {
        deriving: deriving(&loaded, dir.path(), &host, &engine, folder.clone()),
        template: 0,
        workload: 0,
        connections: 8,
        good: "0".repeat(40),
        subject: &subject,
    };
    let study = Bisect::new(commits.clone(), Some(60.0), MAX_ROUNDS, |_: &str| {}).unwrap();
    let found = drive(study, &mut steps).unwrap();
    assert_eq!(found.conclusion.first.as_deref(), Some(commits[0].as_str()));
    let seen = engine.seen.lock().unwrap().clone();
    // The bad revision, then the one commit left; each its own folder in the study's.
    let bad = short(&commits[1]);
    let first = short(&commits[0]);
    assert_eq!(seen[0].out, folder.join(format!("step-1-{bad}")));
    assert_eq!(seen[1].out, folder.join(format!("step-2-{first}")));
    assert_eq!(seen[0].variants, vec!["good".to_string(), bad.clone()]);
    assert!(seen.iter().all(|s| s.every_variant));
    // The bad revision's step ran under the plan's rule (all 12 rounds); the next one
    // stopped at its rule's first look that lay past the halfway ratio.
    assert_eq!(seen[0].rounds, 12);
    let rec = &found.steps[1];
    assert_eq!(rec.judged.as_deref(), Some("moved"), "{rec:?}");
    assert_eq!(rec.rounds, Some(seen[1].rounds));
    assert!(seen[1].rounds < 12, "{seen:?}");
    assert_eq!(rec.subject, format!("subject of {first}"));
    assert_eq!(rec.verdict, Some(Verdict::Slower));
    assert_eq!(rec.folder, seen[1].out.display().to_string());
    // Every finished step is kept in the history.
    assert_eq!(host.kept.lock().unwrap().len(), 2);
}

#[test]
fn an_interrupted_step_stops_the_study_and_keeps_nothing_unwritten() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = bisect_file(dir.path());
    let folder = folder(Some(&dir.path().join("out")), dir.path(), "bisect", "b").unwrap();
    assert_eq!(folder, dir.path().join("out"));
    let engine = Fake::new(0.5, 12, Some(2));
    let host = Counted::default();
    let subject = |_: &str| String::new();
    let mut steps = BisectSteps {
        deriving: deriving(&loaded, dir.path(), &host, &engine, folder),
        template: 0,
        workload: 0,
        connections: 8,
        good: "0".repeat(40),
        subject: &subject,
    };
    let commits: Vec<String> = ["a", "b", "c"].iter().map(|c| c.repeat(40)).collect();
    let study = Bisect::new(commits, Some(60.0), MAX_ROUNDS, |_: &str| {}).unwrap();
    let err = drive(study, &mut steps).unwrap_err();
    assert!(
        matches!(&err, StudyError::Interrupted(m) if m.starts_with("interrupted; the runs that finished are in ")),
        "{err:?}"
    );
    // The first step was kept; the interrupted one wrote no results.json to keep.
    assert_eq!(host.kept.lock().unwrap().len(), 1);
}

#[test]
fn tune_stages_are_named_once_read_into_stage_data_and_the_last_kept() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("tune.toml");
    std::fs::write(
        &f,
        "name = \"t\"\n[target]\nkind = \"memcached\"\nsource = { debian = \"memcached\" }\n[[variant]]\nname = \"base\"\ncompiler = \"gcc-12\"\ncflags = \"-O2\"\n[[workload]]\nkind = \"kv\"\nname = \"kv\"\nconnections = [8]\n[plan]\nbudget = \"60s\"\n[tune]\ncompiler = [\"gcc-12\"]\nopt = [\"-O1\", \"-O2\"]\nbaseline = \"base\"\n",
    )
    .unwrap();
    let loaded = bakeoff_plan::load(&f, &bakeoff_workloads::KINDS).unwrap();
    let tune = loaded.experiment.tune.clone().unwrap();
    let (candidates, _) = tune.space(&loaded.experiment).candidates(|_| None);
    let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
    let folder = folder(None, dir.path(), "tune", "t").unwrap();
    let engine = Fake::new(1.2, 8, None);
    let host = Counted::default();
    let mut stages = TuneStages {
        deriving: deriving(&loaded, dir.path(), &host, &engine, folder.clone()),
        tune: &tune,
        baseline: "base".into(),
        cell: (0, "connections", 8),
        kept: None,
    };
    let race = bakeoff_tune::Race::new(candidates, bakeoff_tune::Settings::default());
    let study = bakeoff_tune::Tuning::new(race, Some(60.0), false, false, |_: &str| {});
    let tuned = drive(study, &mut stages).unwrap();
    let seen = engine.seen.lock().unwrap().clone();
    assert_eq!(seen[0].out, folder.join("stage-1"));
    assert_eq!(seen[0].variants[0], "base");
    assert_eq!(&seen[0].variants[1..], &names[..]);
    assert!(seen.iter().all(|s| !s.every_variant && s.rounds == 8));
    // Each candidate's eight rounds fed the race; its seconds are the stage's.
    let st = &tuned.race.stages[0];
    assert_eq!((st.entered, st.rounds, st.seconds), (2, 8, Some(16.0)));
    assert!(tuned.race.entries.iter().all(|e| e.throughput.len() >= 8));
    // The folder is made of the last throughput stage's results; stages are not kept in
    // the history (the search's folder is, by the command).
    let (_, from) = stages.kept.as_ref().expect("kept");
    assert_eq!(from, &seen.last().unwrap().out);
    assert!(host.kept.lock().unwrap().is_empty());
}
