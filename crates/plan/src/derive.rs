//! Experiments derived from another by editing its document (comments and every other key
//! kept): a bisect step is the experiment with two variants, the template build at the good
//! revision and at the step's commit, and one cell.
//! `bakeoff check --noise` runs the experiment reduced to its baseline on one point.

use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item};

/// What a bisect step keeps of the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<'a> {
    /// Index of the build variant whose keys both variants take.
    pub template: usize,
    /// The reference revision and the step's, with the names their variants get.
    pub good: (&'a str, &'a str),
    pub candidate: (&'a str, &'a str),
    /// Index of the workload kept.
    pub workload: usize,
    /// Its connections key (`connections`, or `concurrency`) set to this one count.
    pub connections: Option<(&'static str, usize)>,
    /// The step's share of the bisect: `budget` (seconds) and `repetitions` (None: the
    /// file's own).
    pub share: Option<(f64, usize)>,
}

/// Experiment text as an editable document (comments and layout kept).
pub(crate) fn parse_text(text: &str) -> Result<DocumentMut, String> {
    text.parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_string())
}

/// The document's `[[variant]]` tables.
pub(crate) fn variant_tables(doc: &mut DocumentMut) -> Result<&mut ArrayOfTables, String> {
    doc.get_mut("variant")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or_else(|| "the experiment has no [[variant]] tables".to_string())
}

/// The experiment text of a bisect step.
pub fn bisect_step(text: &str, step: &Step) -> Result<String, String> {
    let mut doc = parse_text(text)?;
    let variants = variant_tables(&mut doc)?;
    let template = variants
        .get(step.template)
        .cloned()
        .ok_or("no such variant")?;
    variants.clear();
    for (rev, name) in [step.good, step.candidate] {
        let mut t = template.clone();
        t.insert("name", value(name));
        t.insert("rev", value(rev));
        variants.push(t);
    }
    let workloads = doc
        .get_mut("workload")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or("the experiment has no [[workload]] tables")?;
    let mut kept = workloads
        .get(step.workload)
        .cloned()
        .ok_or("no such workload")?;
    if let Some((key, n)) = step.connections {
        let mut one = Array::new();
        one.push(n as i64);
        kept.insert(key, value(one));
    }
    workloads.clear();
    workloads.push(kept);
    doc["plan"]["baseline"] = value(step.good.1);
    if let Some((budget_s, rounds)) = step.share {
        doc["plan"]["budget"] = value(format!("{budget_s:.3}"));
        doc["plan"]["repetitions"] = value(rounds as i64);
    }
    Ok(doc.to_string())
}

/// What `bakeoff check --noise` keeps of the experiment: the baseline variant alone, on
/// one point, for a fixed number of runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoiseCheck<'a> {
    /// The baseline variant's name.
    pub baseline: &'a str,
    /// Index of the workload measured; workloads only trained on (`train_only`) stay too,
    /// a build may need them.
    pub workload: usize,
    /// Its connections key set to this one count.
    pub connections: Option<(&'static str, usize)>,
    /// Rounds (one run each): `[plan] repetitions`, with no budget, precision, minimum
    /// rounds, A/A twin or profiling runs.
    pub runs: usize,
}

/// The experiment text `bakeoff check --noise` runs.
pub fn noise_check(text: &str, check: &NoiseCheck) -> Result<String, String> {
    let mut doc = parse_text(text)?;
    let variants = variant_tables(&mut doc)?;
    let named = |t: &toml_edit::Table| t.get("name").and_then(Item::as_str) == Some(check.baseline);
    if !variants.iter().any(named) {
        return Err(format!("no [[variant]] is named {:?}", check.baseline));
    }
    variants.retain(named);
    let workloads = doc
        .get_mut("workload")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or("the experiment has no [[workload]] tables")?;
    if check.workload >= workloads.len() {
        return Err("no such workload".into());
    }
    let mut at = 0;
    workloads.retain(|t| {
        let keep =
            at == check.workload || t.get("train_only").and_then(Item::as_bool) == Some(true);
        at += 1;
        keep
    });
    if let Some((key, n)) = check.connections {
        let mut one = Array::new();
        one.push(n as i64);
        if let Some(t) = workloads
            .iter_mut()
            .find(|t| t.get("train_only").and_then(Item::as_bool) != Some(true))
        {
            t.insert(key, value(one));
        }
    }
    let plan = doc["plan"].or_insert(toml_edit::table());
    if let Some(plan) = plan.as_table_like_mut() {
        for key in ["budget", "precision", "min_repetitions", "aa"] {
            plan.remove(key);
        }
        plan.insert("repetitions", value(check.runs as i64));
        plan.insert("baseline", value(check.baseline));
    }
    if let Some(measure) = doc.get_mut("measure").and_then(Item::as_table_like_mut) {
        measure.remove("profile");
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\n[target]\nkind = \"memcached\"\nsource = { git = \"repo\", rev = \"main\" }\n\n[[variant]]\nname = \"debian\"\nbinary = \"/usr/bin/memcached\"\n\n[[variant]]\nname = \"o2\" # the build\ncompiler = \"gcc-12\"\ncflags = \"-O2\"\n\n[[workload]]\nkind = \"kv\"\nname = \"a\"\n\n[[workload]]\nkind = \"kv\"\nname = \"b\"\nconnections = [1, 16]\n\n[plan]\nbudget = \"1m\"\n";

    /// A step from `good` (rev v1) to abc123, both built like variant 1, as a document.
    fn step(
        workload: usize,
        connections: Option<(&'static str, usize)>,
        share: Option<(f64, usize)>,
    ) -> DocumentMut {
        let step = Step {
            template: 1,
            good: ("v1", "good"),
            candidate: ("abc123", "abc123"),
            workload,
            connections,
            share,
        };
        bisect_step(TEXT, &step).unwrap().parse().unwrap()
    }

    /// The document keeps one workload, `b`, at `connections` (as TOML writes the list).
    fn assert_one_point(doc: &DocumentMut, connections: &str) {
        let w = doc["workload"].as_array_of_tables().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w.get(0).unwrap()["name"].as_str(), Some("b"));
        assert_eq!(
            w.get(0).unwrap()["connections"].to_string().trim(),
            connections
        );
    }

    #[test]
    fn a_step_keeps_two_builds_and_one_cell() {
        let doc = step(1, Some(("connections", 16)), None);
        let v = doc["variant"].as_array_of_tables().unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v.get(0).unwrap()["name"].as_str(), Some("good"));
        assert_eq!(v.get(0).unwrap()["rev"].as_str(), Some("v1"));
        assert_eq!(v.get(1).unwrap()["rev"].as_str(), Some("abc123"));
        assert_eq!(v.get(1).unwrap()["cflags"].as_str(), Some("-O2"));
        assert_one_point(&doc, "[16]");
        assert_eq!(doc["plan"]["baseline"].as_str(), Some("good"));
        assert_eq!(doc["plan"]["budget"].as_str(), Some("1m"));
        assert!(doc["plan"].get("repetitions").is_none());
    }

    #[test]
    fn a_step_takes_its_share_of_the_bisect() {
        let doc = step(0, None, Some((12.5, 20)));
        assert_eq!(doc["plan"]["budget"].as_str(), Some("12.500"));
        assert_eq!(doc["plan"]["repetitions"].as_integer(), Some(20));
    }

    #[test]
    fn a_noise_check_keeps_the_baseline_alone_on_one_point() {
        let text = TEXT.replace(
            "budget = \"1m\"",
            "budget = \"1m\"\nprecision = 0.02\nbaseline = \"o2\"",
        );
        let out = noise_check(
            &text,
            &NoiseCheck {
                baseline: "o2",
                workload: 1,
                connections: Some(("connections", 1)),
                runs: 6,
            },
        )
        .unwrap();
        let doc: DocumentMut = out.parse().unwrap();
        let v = doc["variant"].as_array_of_tables().unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v.get(0).unwrap()["name"].as_str(), Some("o2"));
        assert_eq!(v.get(0).unwrap()["cflags"].as_str(), Some("-O2"));
        assert_one_point(&doc, "[1]");
        assert_eq!(doc["plan"]["repetitions"].as_integer(), Some(6));
        assert!(doc["plan"].get("budget").is_none() && doc["plan"].get("precision").is_none());
        assert!(out.contains("# the build"), "comments are kept: {out}");
        assert!(noise_check(
            TEXT,
            &NoiseCheck {
                baseline: "nobody",
                workload: 0,
                connections: None,
                runs: 6
            }
        )
        .is_err());
    }
}
