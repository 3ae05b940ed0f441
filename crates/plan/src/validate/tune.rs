//! `[tune]`'s checks: every list non-empty and free of repeats, every choice one the key
//! knows, a space of at most `bakeoff_tune::MAX_CANDIDATES`, `train` a workload and
//! `baseline` a variant of the file, and a source to build from.

use crate::experiment::Loaded;
use crate::key;
use crate::located::PlanError;
use bakeoff_tune::{Lto, MAX_CANDIDATES};

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
