//! `[tune]`: the build space `bakeoff tune` searches (each key a list of choices), the
//! variant to beat (`baseline`) and the workload PGO and BOLT train on (`train`). Checked
//! here: every list non-empty and free of repeats, every choice one the key knows, a
//! space of at most `bakeoff_tune::MAX_CANDIDATES`, `train` a workload and `baseline` a
//! variant of the file, and a source to build from.

use crate::document::{Loaded, PlanError};
use crate::experiment::Experiment;
use crate::key;
use bakeoff_tune::{Lto, Space, MAX_CANDIDATES};
use serde::{Deserialize, Serialize};

/// The `[tune]` table as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tune {
    /// Compilers, e.g. `["gcc-12", "clang-16"]` (default the first build variant's, or gcc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<Vec<String>>,
    /// Optimization levels, e.g. `["-O2", "-O3"]` (default `["-O2"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt: Option<Vec<String>>,
    /// `-march=`/`-mtune=`/`-mcpu=` choices, `""` for none (default `[""]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub march: Option<Vec<String>>,
    /// `"none"`, `"thin"`, `"full"` (default `["none"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lto: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgo: Option<Vec<bool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bolt: Option<Vec<bool>>,
    /// Extra flag groups, each a string of flags, `""` for none (default `[""]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    /// The variant to beat (default `[plan] baseline`, else the first variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// The workload PGO and BOLT train on; the other workloads are measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train: Option<String>,
}

impl Tune {
    /// The space the keys describe, defaults filled in (`compiler`: the first build
    /// variant's, or gcc).
    pub fn space(&self, e: &Experiment) -> Space {
        let d = Space::default();
        let compiler = e
            .variants
            .iter()
            .find(|v| v.is_build())
            .map(|v| v.compiler_or_default().to_string())
            .unwrap_or_else(|| "gcc".into());
        Space {
            compiler: self.compiler.clone().unwrap_or_else(|| vec![compiler]),
            opt: self.opt.clone().unwrap_or(d.opt),
            march: self.march.clone().unwrap_or(d.march),
            lto: self
                .lto
                .as_ref()
                .map(|l| l.iter().filter_map(|s| Lto::parse(s)).collect())
                .unwrap_or(d.lto),
            pgo: self.pgo.clone().unwrap_or(d.pgo),
            bolt: self.bolt.clone().unwrap_or(d.bolt),
            flags: self.flags.clone().unwrap_or(d.flags),
            train: self.train.clone(),
        }
    }

    /// The variant to beat.
    pub fn baseline<'a>(&'a self, e: &'a Experiment) -> &'a str {
        self.baseline.as_deref().unwrap_or_else(|| e.baseline())
    }
}

/// What is wrong with one choice of a list, if anything.
type Problem = fn(&str) -> Option<String>;

pub(crate) fn check(l: &Loaded) -> Result<(), PlanError> {
    let e = &l.experiment;
    let Some(t) = &e.tune else { return Ok(()) };
    let strings: [(&str, &Option<Vec<String>>, Problem); 5] = [
        ("compiler", &t.compiler, compiler_problem),
        ("opt", &t.opt, opt_problem),
        ("march", &t.march, march_problem),
        ("lto", &t.lto, lto_problem),
        ("flags", &t.flags, flags_problem),
    ];
    for (k, list, problem) in strings {
        let Some(list) = list else { continue };
        if list.is_empty() {
            return Err(l.error_at(&key!["tune", k], format!("{k} is an empty list; give at least one choice, or drop the key for its default")));
        }
        for (j, choice) in list.iter().enumerate() {
            if let Some(why) = problem(choice) {
                return Err(l.error_at(&key!["tune", k, j], why));
            }
            if list[..j].contains(choice) {
                return Err(l.error_at(
                    &key!["tune", k, j],
                    format!("{choice:?} is listed twice in {k}; list each choice once"),
                ));
            }
        }
    }
    for (k, list) in [("pgo", &t.pgo), ("bolt", &t.bolt)] {
        let Some(list) = list else { continue };
        if list.is_empty() || list.len() > 2 || (list.len() == 2 && list[0] == list[1]) {
            return Err(l.error_at(
                &key!["tune", k],
                format!("{k} takes [false], [true] or [false, true]"),
            ));
        }
    }
    if let Some(w) = &t.train {
        if !e.workloads.iter().any(|x| &x.display_name() == w) {
            let names: Vec<String> = e.workloads.iter().map(|w| w.display_name()).collect();
            return Err(l.error_at(
                &key!["tune", "train"],
                format!(
                    "train {w:?} is not a workload; use one of {}",
                    names.join(", ")
                ),
            ));
        }
    }
    if let Some(b) = &t.baseline {
        if !e.variants.iter().any(|v| &v.name == b) {
            let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
            return Err(l.error_at(
                &key!["tune", "baseline"],
                format!(
                    "baseline {b:?} is not a variant; use one of {}",
                    names.join(", ")
                ),
            ));
        }
    }
    let space = t.space(e);
    if space.size() > MAX_CANDIDATES {
        return Err(l.error_at(
            &key!["tune"],
            format!(
                "the space has {} candidates, more than {MAX_CANDIDATES}; trim flags or other lists",
                space.size()
            ),
        ));
    }
    if e.target.source.is_none() {
        return Err(l.error_at(
            &key!["tune"],
            format!(
                "[tune] builds candidates from source, and [target] has none; add source = {{ debian = \"{}\" }}",
                e.target.kind.as_str()
            ),
        ));
    }
    Ok(())
}

fn compiler_problem(c: &str) -> Option<String> {
    bakeoff_build::lto::family(c).is_none().then(|| {
        format!("compiler {c:?} is not one bakeoff knows; use gcc, gcc-N, clang or clang-N")
    })
}

fn opt_problem(o: &str) -> Option<String> {
    let known = [
        "", "-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-Og", "-Ofast",
    ];
    (!known.contains(&o)).then(|| format!("opt {o:?} is not an optimization level; use one of -O0, -O1, -O2, -O3, -Os, -Oz, -Og, -Ofast (or \"\")"))
}

fn march_problem(m: &str) -> Option<String> {
    let ok = m.is_empty()
        || (["-march=", "-mtune=", "-mcpu="]
            .iter()
            .any(|p| m.strip_prefix(p).is_some_and(|v| !v.is_empty()))
            && !m.contains(char::is_whitespace));
    (!ok).then(|| {
        format!(
            "march {m:?}: give \"\" or one -march=, -mtune= or -mcpu= flag, e.g. \"-march=native\""
        )
    })
}

fn lto_problem(s: &str) -> Option<String> {
    Lto::parse(s)
        .is_none()
        .then(|| format!("lto {s:?} is not a choice; use \"none\", \"thin\" or \"full\""))
}

fn flags_problem(f: &str) -> Option<String> {
    f.split_whitespace()
        .find(|w| !w.starts_with('-') || w.contains(['\'', '"', '`', '$', ';']))
        .map(|w| {
            format!("flags {f:?}: {w:?} is not a compiler flag; each group is flags separated by spaces, each starting with -")
        })
}

/// Runs per candidate in a screening stage (instruction counts repeat to a fraction of
/// a percent, so a few suffice).
pub const SCREEN_RUNS: usize = 3;

/// Which workloads a stage of the search measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measured {
    /// The race's cell: this workload at this one connection count (key, count).
    Cell(usize, &'static str, usize),
    /// Every workload (the overfitting check).
    All,
}

impl Measured {
    /// The cell, when the workload table sets its connections key (a kind without a
    /// sweep has none to set).
    fn filter_key(self, t: &toml_edit::Table) -> Measured {
        match self {
            Measured::Cell(w, k, n) if t.contains_key(k) => Measured::Cell(w, k, n),
            _ => Measured::All,
        }
    }
}

/// One stage of `bakeoff tune` as an experiment of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage<'a> {
    /// The candidates, by name, with their recipes.
    pub candidates: &'a [(String, bakeoff_tune::Recipe)],
    pub baseline: &'a str,
    pub measured: Measured,
    /// `[plan] budget` for the stage, seconds (None: the file's own plan).
    pub budget_s: Option<f64>,
    /// `[plan] mode` for the stage ("time" for the race, "instructions" for a screen).
    pub mode: &'a str,
}

/// The experiment text of a stage: the file's variants (the references) and one variant
/// per candidate, each taking the file's first build variant's other keys (configure
/// arguments, patches, env, server arguments and options) with the candidate's compiler,
/// cflags, lto, pgo and bolt; PGO and BOLT train on `[tune] train`, which is then only
/// trained on unless it is the one measured.
pub fn stage_text(text: &str, tune: &Tune, stage: &Stage) -> Result<String, String> {
    use toml_edit::{value, Array, DocumentMut, InlineTable, Item, Table};
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_string())?;
    doc.remove("tune");
    let variants = doc
        .get_mut("variant")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or("the experiment has no [[variant]] tables")?;
    let is_build = |t: &Table| !t.contains_key("binary") && !t.contains_key("dist");
    let template = variants.iter().find(|t| is_build(t)).cloned().map(|mut t| {
        for k in [
            "name",
            "compiler",
            "cflags",
            "lto",
            "pgo",
            "bolt",
            "rev",
            "sanitize",
            "run_under",
        ] {
            t.remove(k);
        }
        t
    });
    let trains = stage.candidates.iter().any(|(_, r)| r.pgo || r.bolt) && tune.train.is_some();
    for (name, r) in stage.candidates {
        let mut t = template.clone().unwrap_or_default();
        t.insert("name", value(name.as_str()));
        t.insert("compiler", value(r.compiler.as_str()));
        let cflags = r.cflags();
        if !cflags.is_empty() {
            t.insert("cflags", value(cflags));
        }
        if r.lto != bakeoff_tune::Lto::None {
            t.insert("lto", value(r.lto.as_str()));
        }
        for (key, on) in [("pgo", r.pgo), ("bolt", r.bolt)] {
            if let (true, Some(w)) = (on, &tune.train) {
                let mut it = InlineTable::new();
                it.insert("workload", w.as_str().into());
                t.insert(key, value(it));
            }
        }
        variants.push(t);
    }
    // Workloads reference variants still train on.
    let mut trained: Vec<String> = variants
        .iter()
        .flat_map(|t| {
            ["pgo", "bolt"].into_iter().filter_map(move |k| {
                t.get(k)
                    .and_then(|p| p.get("workload"))
                    .and_then(|w| w.as_str())
                    .map(str::to_string)
            })
        })
        .collect();
    if trains {
        trained.extend(tune.train.clone());
    }
    let workloads = doc
        .get_mut("workload")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or("the experiment has no [[workload]] tables")?;
    let name_of = |t: &Table| {
        t.get("name")
            .and_then(Item::as_str)
            .or_else(|| t.get("kind").and_then(Item::as_str))
            .unwrap_or("")
            .to_string()
    };
    let file_only = |t: &Table| t.get("train_only").and_then(Item::as_bool) == Some(true);
    // Measured in the stage: the cell's workload, or every workload the file measures
    // except the one trained on (when another is left to measure).
    let measured: Vec<bool> = workloads
        .iter()
        .enumerate()
        .map(|(i, t)| match stage.measured {
            Measured::Cell(w, _, _) => i == w,
            Measured::All => !file_only(t),
        })
        .collect();
    let others = workloads
        .iter()
        .zip(&measured)
        .any(|(t, m)| *m && (!trains || tune.train.as_deref() != Some(&name_of(t))));
    let cell_name = match stage.measured {
        Measured::Cell(w, _, _) => workloads.get(w).map(name_of),
        Measured::All => None,
    };
    let mut at = 0;
    workloads.retain(|t| {
        at += 1;
        measured[at - 1] || trained.contains(&name_of(t))
    });
    for t in workloads.iter_mut() {
        let name = name_of(t);
        let is_train = trains && tune.train.as_deref() == Some(&name);
        let keep_measured = match stage.measured {
            Measured::Cell(..) => cell_name.as_deref() == Some(&name),
            Measured::All => !file_only(t) && (!is_train || !others),
        };
        if keep_measured {
            if let Measured::Cell(_, k, n) = stage.measured.filter_key(t) {
                let mut one = Array::new();
                one.push(n as i64);
                t.insert(k, value(one));
            }
        } else {
            t.insert("train_only", value(true));
        }
    }
    let plan = doc["plan"].or_insert(toml_edit::table());
    if let Some(plan) = plan.as_table_like_mut() {
        plan.insert("baseline", value(stage.baseline));
        plan.remove("aa");
        plan.insert("mode", value(stage.mode));
        if stage.mode == "instructions" {
            // A screen: a few callgrind runs of `ops` each, no wall-clock window.
            for k in ["duration", "budget", "precision", "min_repetitions"] {
                plan.remove(k);
            }
            plan.insert("repetitions", value(SCREEN_RUNS as i64));
        } else if let Some(b) = stage.budget_s {
            plan.insert("budget", value(format!("{b:.3}")));
        }
    }
    if let Some(measure) = doc.get_mut("measure").and_then(Item::as_table_like_mut) {
        measure.remove("profile");
    }
    Ok(doc.to_string())
}
