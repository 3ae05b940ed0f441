//! The results folder: created once, rewritten after every run. Every file is written with
//! `bakeoff_os::file::write_atomic` (a synced temporary name renamed into place), so a
//! crash or kill -9 leaves the previous complete version, never a half-written one.

use crate::error::RunError;
use crate::host;
use crate::options::Options;
use bakeoff_plan::{Loaded, MeasureFor};
use bakeoff_report::model::{ExperimentRecord, PlanRecord, Results, SCHEMA};
use std::path::PathBuf;

/// What a results folder's marker says it is.
pub const PURPOSE: &str = "results";

pub struct Folder {
    pub path: PathBuf,
}

impl Folder {
    /// Creates `--out DIR` (which must be empty or absent) or a new timestamped folder.
    /// Claimed without a race ([`bakeoff_os::own::claim_fresh`]): two runs never share a
    /// folder; a second run started in the same second gets `-2`, `-3`, ... after the
    /// stamp, and a second run given the same `--out` is refused.
    pub fn create(loaded: &Loaded, opts: &Options) -> Result<Folder, RunError> {
        let cannot = |path: &std::path::Path, e: &dyn std::fmt::Display| {
            RunError::BadInput(format!(
                "cannot create results folder {}: {e}; check permissions or pass another --out",
                path.display()
            ))
        };
        let path = match &opts.out {
            Some(p) => match bakeoff_os::own::claim_fresh(p, PURPOSE) {
                Ok(true) => p.clone(),
                Ok(false) => {
                    return Err(RunError::BadInput(format!(
                        "results folder {} already exists and is not empty (or another run took it); choose another --out",
                        p.display()
                    )))
                }
                Err(e) => return Err(cannot(p, &e)),
            },
            None => {
                let stamp: String = now_utc()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect();
                let base = format!("{}-{stamp}", safe_name(&loaded.experiment.name));
                let mut n = 1;
                loop {
                    let name = match n {
                        1 => base.clone(),
                        _ => format!("{base}-{n}"),
                    };
                    let p = opts.results_root.join(name);
                    match bakeoff_os::own::claim_fresh(&p, PURPOSE) {
                        Ok(true) => break p,
                        Ok(false) if n < 10_000 => n += 1,
                        Ok(false) => return Err(cannot(&p, &"every name of this second is taken")),
                        Err(e) => return Err(cannot(&p, &e)),
                    }
                }
            }
        };
        std::fs::create_dir(path.join("logs"))
            .and_then(|_| std::fs::create_dir(path.join("hdr")))
            .map_err(|e| cannot(&path, &e))?;
        Ok(Folder { path })
    }

    /// Writes `bytes` to `rel` inside the folder atomically.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.path.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        bakeoff_os::file::write_atomic(&path, bytes)
    }
}

/// Writes every exporter's file into the folder.
pub fn write_results(folder: &Folder, r: &Results) -> Result<(), RunError> {
    for ex in bakeoff_report::exporters_with(&bakeoff_workloads::KINDS) {
        folder.write(ex.file_name(), &ex.render(r)).map_err(|e| {
            RunError::Failed(format!(
                "cannot write {} in {}: {e}",
                ex.file_name(),
                folder.path.display()
            ))
        })?;
    }
    Ok(())
}

/// Now, as RFC 3339 UTC with seconds.
pub fn now_utc() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub use bakeoff_os::path::safe_name;

/// The results as they stand before anything ran.
pub fn initial_results(l: &Loaded) -> Results {
    let e = &l.experiment;
    let (duration_s, ops) = match e.measure() {
        // In mode both, ops is what each instruction-count run measures.
        MeasureFor::Time(d) => (Some(d.as_secs_f64()), e.instruction_ops()),
        MeasureFor::Ops(n) => (None, Some(n)),
    };
    let stop = e.plan.stopping();
    Results {
        schema: SCHEMA.to_string(),
        name: e.name.clone(),
        description: e.description.clone(),
        status: "running".into(),
        bakeoff_version: env!("CARGO_PKG_VERSION").to_string(),
        started_utc: now_utc(),
        finished_utc: None,
        host: host::facts(),
        experiment: ExperimentRecord {
            file: l.path.display().to_string(),
            text: l.text.clone(),
            resolved: serde_json::to_value(e).unwrap_or_default(),
        },
        plan: PlanRecord {
            repetitions: stop.max_rounds,
            warmup_s: e.warmup().as_secs_f64(),
            duration_s,
            ops,
            seed: e.plan.seed,
            baseline: e.baseline().to_string(),
            budget_s: stop.budget.map(|b| b.as_secs_f64()),
            precision: stop.precision,
            equivalence: e.plan.equivalence_band(),
            pairing: e.plan.pairing,
            min_rounds: stop.min_rounds,
            layouts: e.plan.layouts,
            rounds: Vec::new(),
        },
        ..Results::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(dir: &std::path::Path) -> Loaded {
        let text = "name = \"same-second\"\n[target]\nkind = \"memcached\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/true\"\n[[workload]]\nkind = \"kv\"\n";
        bakeoff_plan::parse(&dir.join("x.toml"), text.into(), &bakeoff_workloads::KINDS).unwrap()
    }

    fn opts(dir: &std::path::Path, out: Option<PathBuf>) -> Options {
        Options {
            out,
            results_root: dir.join("results"),
            cache_root: dir.join("cache"),
            sandbox_root: dir.join("sandboxes"),
            every_variant: false,
        }
    }

    /// Issue 44, class 2: two runs started in the same second shared one results folder.
    /// Many at once: every one gets a folder of its own.
    #[test]
    fn hostile_runs_in_one_second_never_share_a_results_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let l = loaded(tmp.path());
        let o = opts(tmp.path(), None);
        let paths: Vec<PathBuf> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..6)
                .map(|_| s.spawn(|| Folder::create(&l, &o).map(|f| f.path).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), paths.len(), "{paths:?}");
        // One --out for two runs: the second is refused, the first's folder untouched.
        let out = tmp.path().join("out");
        let first = Folder::create(&l, &opts(tmp.path(), Some(out.clone()))).unwrap();
        first.write("results.json", b"{}").unwrap();
        let again = Folder::create(&l, &opts(tmp.path(), Some(out.clone())));
        let Err(RunError::BadInput(m)) = again else {
            panic!("a second run took {}", out.display())
        };
        assert!(m.contains("choose another --out"), "{m}");
        assert_eq!(std::fs::read(out.join("results.json")).unwrap(), b"{}");
        // A user's folder: refused, never written in.
        let mine = tmp.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("thesis.txt"), "mine").unwrap();
        assert!(Folder::create(&l, &opts(tmp.path(), Some(mine.clone()))).is_err());
        assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 1);
    }
}
