//! "Settings that differ": what each variant's server reported it ran with
//! (`variants[].settings`), where the variants differ (`settings_diff`). The settings
//! that move performance lead (the targets' tables, marked in the diff with what they
//! move), each with the variants whose experiment file set it; the other differences
//! and the names only some variants have follow, folded on the page. The terminal shows
//! the first table and counts the rest. Whether the load used TLS and settings that
//! could not be read are said under them.

use crate::document::{Block, Inline, Media, Section};
use crate::model::{Results, SettingDiff};
use crate::table::{Table, Value};

/// The section, when at least two variants read their settings (or one could not).
pub fn section(r: &Results) -> Option<Section> {
    let with: Vec<&str> = r
        .variants
        .iter()
        .filter(|v| !v.settings.is_empty())
        .map(|v| v.name.as_str())
        .collect();
    let failed: Vec<String> = r
        .variants
        .iter()
        .filter_map(|v| Some(format!("{}: {}", v.name, v.settings_error.as_ref()?)))
        .collect();
    if with.len() < 2 && failed.is_empty() {
        return None;
    }
    let mut s = Section::new("settings", "Settings", "Settings that differ");
    s.push(Block::caption(
        "What each variant's server reported it ran with, read once it was ready and before the load (MariaDB and MySQL: SHOW GLOBAL VARIABLES; PostgreSQL: pg_settings; Redis and Valkey: CONFIG GET *; memcached: stats settings; SQLite: its pragmas and compile options), where the variants differ. Secrets read (masked).",
    ));
    let (moves, rest): (Vec<&SettingDiff>, Vec<&SettingDiff>) =
        r.settings_diff.iter().partition(|d| d.topic.is_some());
    let (others, one_sided): (Vec<&SettingDiff>, Vec<&SettingDiff>) =
        rest.into_iter().partition(|d| !d.only_some);
    if r.settings_diff.is_empty() && with.len() >= 2 {
        s.push(
            Block::text(format!(
                "Settings that differ: none ({} read the same settings).",
                with.join(", ")
            ))
            .everywhere(),
        );
    }
    if !moves.is_empty() {
        let t = table(&with, &moves, true);
        s.push(Block::Heading("Those that move performance".into()).only(Media::PAGE));
        s.push(
            Block::Heading("Settings that differ and move performance".into())
                .only(Media::TERMINAL),
        );
        s.push(Block::Table(t).everywhere());
        s.push(Block::caption(
            "asked by: the variants whose experiment file set it; a difference nobody asked for is a warning above.",
        ));
        if moves.iter().any(|d| d.name.starts_with("system ")) {
            s.push(Block::caption(
                "system rows: what a variant asked of the machine and its server's process (preload, thp, defrag, sysctl, cpus, smt, env), applied for its runs only and read back in each (runs' system_applied); (as found): the machine as it was.",
            ));
        }
    }
    let folded = [
        (others, "other setting differs", "other settings differ"),
        (
            one_sided,
            "setting exists on some variants only",
            "settings exist on some variants only",
        ),
    ];
    let mut counted = Vec::new();
    for (list, one, many) in folded {
        if list.is_empty() {
            continue;
        }
        let words = if list.len() == 1 { one } else { many };
        let summary = format!("{} {words}", list.len());
        counted.push(summary.clone());
        s.push(Block::Details {
            summary: Inline::from(summary),
            blocks: vec![Block::Table(table(&with, &list, false))],
        });
    }
    if !counted.is_empty() {
        s.push(
            Block::text(format!(
                "Settings: {} (report.md and report.html list them).",
                counted.join("; ")
            ))
            .only(Media::TERMINAL),
        );
    }
    let tls: Vec<String> = r
        .variants
        .iter()
        .filter_map(|v| Some((v.name.as_str(), v.tls?)))
        .map(|(n, t)| format!("{n}: {}", if t { "yes" } else { "no" }))
        .collect();
    if !tls.is_empty() {
        s.push(Block::caption(format!(
            "The load's connections used TLS: {} (as bakeoff's clients made them).",
            tls.join(", ")
        )));
    }
    if !failed.is_empty() {
        s.push(Block::caption(format!("Not read: {}.", failed.join("; "))).everywhere());
    }
    Some(s)
}

/// One table of differences: the setting, what it moves (with `topics`), a column per
/// variant, and who asked for it (with `topics`).
fn table(variants: &[&str], rows: &[&SettingDiff], topics: bool) -> Table {
    let mut cols: Vec<&str> = vec!["setting"];
    if topics {
        cols.push("moves");
    }
    cols.extend(variants.iter().copied());
    if topics {
        cols.push("asked by");
    }
    let mut t = Table::new("settings", &cols);
    for d in rows {
        let mut row = vec![Value::Code(d.name.clone())];
        if topics {
            row.push(d.topic.clone().unwrap_or_default().into());
        }
        for v in variants {
            let cell = match d.values.get(*v) {
                Some(x) if x.is_empty() => "''".to_string(),
                Some(x) => x.clone(),
                None => "-".to_string(),
            };
            row.push(Value::Long(cell));
        }
        if topics {
            let asked = if d.asked_by.is_empty() {
                "nobody".to_string()
            } else {
                d.asked_by.join(", ")
            };
            row.push(asked.into());
        }
        t.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::VariantRecord;
    use std::collections::BTreeMap;

    fn variant(name: &str, settings: &[(&str, &str)]) -> VariantRecord {
        VariantRecord {
            name: name.into(),
            status: "ok".into(),
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tls: Some(false),
            ..VariantRecord::default()
        }
    }

    fn d(name: &str, topic: Option<&str>, values: &[(&str, &str)], only_some: bool) -> SettingDiff {
        SettingDiff {
            name: name.into(),
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            topic: topic.map(str::to_string),
            asked_by: Vec::new(),
            only_some,
        }
    }

    #[test]
    fn the_section_leads_with_what_moves_performance_and_folds_the_rest() {
        let mut r = Results {
            variants: vec![
                variant("a", &[("appendonly", "no")]),
                variant("b", &[("appendonly", "yes")]),
            ],
            ..Results::default()
        };
        assert!(section(&r).is_some(), "two variants with settings");
        r.settings_diff = vec![
            d(
                "appendonly",
                Some("durability"),
                &[("a", "no"), ("b", "yes")],
                false,
            ),
            d("hz", None, &[("a", "10"), ("b", "")], false),
            d("only", None, &[("b", "1")], true),
        ];
        let s = section(&r).unwrap();
        assert_eq!(s.id, "settings");
        let Block::Only(_, first) = &s.blocks[3] else {
            panic!("{:?}", s.blocks[3]);
        };
        let Block::Table(t) = &first[0] else {
            panic!("{first:?}");
        };
        assert_eq!(t.header(), ["setting", "moves", "a", "b", "asked by"]);
        assert_eq!(
            t.plain_rows(),
            [["appendonly", "durability", "no", "yes", "nobody"]]
        );
        let folded: Vec<String> = s
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Details { summary, blocks } => {
                    let Block::Table(t) = &blocks[0] else {
                        return None;
                    };
                    Some(format!("{} {:?}", summary.plain(), t.plain_rows()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            folded,
            [
                "1 other setting differs [[\"hz\", \"10\", \"''\"]]",
                "1 setting exists on some variants only [[\"only\", \"-\", \"1\"]]"
            ]
        );
    }

    /// The report sample with two variants of memcached that read their settings: one
    /// knob nobody asked for, one asked for, one other difference, one name on one side.
    fn sample_with_settings() -> Results {
        let mut r = crate::tests::sample();
        r.variants.push(VariantRecord {
            name: "clang-O3".into(),
            status: "ok".into(),
            ..VariantRecord::default()
        });
        let base = [
            ("maxbytes", "67108864"),
            ("num_threads", "4"),
            ("hashpower_init", "0"),
        ];
        for v in r.variants.iter_mut().filter(|v| v.status == "ok") {
            v.settings = base
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            v.tls = Some(false);
        }
        r.settings_diff = vec![
            SettingDiff {
                asked_by: vec!["clang-O3".into()],
                ..d(
                    "num_threads",
                    Some("threads"),
                    &[("gcc-O2", "4"), ("clang-O3", "1")],
                    false,
                )
            },
            d(
                "lru_crawler",
                Some("background work"),
                &[("gcc-O2", "yes"), ("clang-O3", "no")],
                false,
            ),
            d(
                "hashpower_init",
                None,
                &[("gcc-O2", "0"), ("clang-O3", "16")],
                false,
            ),
            d("ext_path", None, &[("clang-O3", "")], true),
        ];
        r
    }

    /// Issue 51: a performance setting nobody asked for, under the answer it concerns; an
    /// asked one and one outside the tables are not.
    #[test]
    fn an_unasked_difference_is_noted_under_its_variants_answer() {
        let mut r = sample_with_settings();
        let v = r
            .headline_comparisons()
            .next()
            .expect("a comparison")
            .variant
            .clone();
        let base = r.plan.baseline.clone();
        for d in r.settings_diff.iter_mut() {
            if let Some(x) = d.values.remove("clang-O3") {
                d.values.insert(v.clone(), x);
            }
            if d.asked_by.iter().any(|a| a == "clang-O3") {
                d.asked_by = vec![v.clone()];
            }
        }
        let lines = crate::summary::answers(&r);
        let notes: Vec<&String> = lines.iter().filter(|l| l.starts_with("  note:")).collect();
        assert_eq!(notes.len(), 1, "{lines:#?}");
        assert_eq!(
            notes[0],
            &format!("  note: {v} also differs from {base} in settings the file did not ask for: lru_crawler = no (baseline yes)")
        );
        let at = lines.iter().position(|l| l.starts_with("  note:")).unwrap();
        assert!(
            lines[at - 1].starts_with(&v),
            "under its answer: {lines:#?}"
        );
    }

    #[test]
    fn markdown_and_terminal_snapshots() {
        let r = sample_with_settings();
        let md = crate::markdown::render(&r);
        let at = md.find("## Settings that differ").expect("the section");
        let end = md[at + 3..].find("\n## ").map_or(md.len(), |e| at + 3 + e);
        insta::assert_snapshot!("settings_markdown", &md[at..end]);
        let term = crate::terminal(&r, false);
        let at = term
            .find("Settings that differ and move")
            .expect("the terminal's table");
        // The section ends at the next blank lines, or at the warnings under it.
        let end = ["\n\n\n", "\n\nwarning:"]
            .iter()
            .filter_map(|m| term[at..].find(m))
            .min()
            .map_or(term.len(), |e| at + e);
        insta::assert_snapshot!("settings_terminal", &term[at..end]);
    }

    #[test]
    fn no_section_without_settings_and_a_note_when_unreadable() {
        let r = Results {
            variants: vec![variant("a", &[]), variant("b", &[])],
            ..Results::default()
        };
        assert!(section(&r).is_none());
        let mut refused = variant("a", &[]);
        refused.settings_error = Some("CONFIG GET * refused: ERR unknown command".into());
        let r = Results {
            variants: vec![refused],
            ..Results::default()
        };
        let s = section(&r).unwrap();
        let text = format!("{:?}", s.blocks);
        assert!(text.contains("Not read: a: CONFIG GET * refused"), "{text}");
    }
}
