//! `[tune]`: the build space `bakeoff tune` searches (each key a list of choices), the
//! variant to beat (`baseline`) and the workload PGO and BOLT train on (`train`), and the
//! experiment text of each stage of the search. Checked in `validate/tune.rs`.

use crate::derive::{parse_text, variant_tables};
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
    use toml_edit::{value, Array, InlineTable, Item, Table};
    let mut doc = parse_text(text)?;
    doc.remove("tune");
    let variants = variant_tables(&mut doc)?;
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
