//! Variants from a distribution's binaries (`[[variant]] dist`): where each came from and
//! what built it, as a table in the Variants section, and a note when the variants differ
//! in version and also in compiler (a version comparison that mixes toolchains).

use crate::document::{Block, Inline};
use crate::model::Results;
use crate::table::{Table, Value};

/// The Distributions blocks: a heading, the table, and the note where it applies.
pub fn blocks(r: &Results) -> Vec<Block> {
    let with: Vec<_> = r.variants.iter().filter(|v| v.dist.is_some()).collect();
    if with.is_empty() {
        return Vec::new();
    }
    let mut t = Table::new(
        "dists",
        &[
            "variant",
            "dist",
            "version",
            "compiler",
            "allocator",
            "sha256",
        ],
    );
    for v in &with {
        let d = v.dist.clone().unwrap_or_default();
        t.push(vec![
            Value::Variant(v.name.clone()),
            d.spec.into(),
            d.version.unwrap_or_default().into(),
            d.compiler.unwrap_or_default().into(),
            d.allocator.unwrap_or_default().into(),
            d.sha256.chars().take(12).collect::<String>().into(),
        ]);
    }
    let mut out = vec![Block::Heading("Distributions".into()), Block::Table(t)];
    if let Some(n) = mixed_note(r) {
        out.push(Block::Text {
            class: "caption",
            text: Inline::from(n),
        });
    }
    out
}

/// When two dist variants differ in version and their compilers differ too.
pub fn mixed_note(r: &Results) -> Option<String> {
    let facts: Vec<(&str, &str, &str)> = r
        .variants
        .iter()
        .filter_map(|v| {
            let d = v.dist.as_ref()?;
            Some((
                v.name.as_str(),
                d.version.as_deref().unwrap_or(""),
                d.compiler.as_deref().unwrap_or(""),
            ))
        })
        .collect();
    for (i, a) in facts.iter().enumerate() {
        for b in &facts[i + 1..] {
            if a.1 != b.1 && a.2 != b.2 {
                return Some(format!(
                    "Note: {} and {} differ in version and were also built by different compilers or flags, so their comparison mixes both; an A/A of one version from two sources measures the toolchain's share.",
                    a.0, b.0
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DistRecord, VariantRecord};

    fn v(name: &str, version: &str, compiler: &str) -> VariantRecord {
        VariantRecord {
            name: name.into(),
            status: "ok".into(),
            dist: Some(DistRecord {
                spec: format!("maven:x:{name}"),
                sha256: "ab".repeat(32),
                version: Some(version.into()),
                compiler: Some(compiler.into()),
                allocator: None,
            }),
            ..VariantRecord::default()
        }
    }

    #[test]
    fn the_note_needs_both_version_and_compiler_to_differ() {
        let mut r = Results {
            variants: vec![v("a", "16.4", "gcc 7"), v("b", "9.6", "gcc 7")],
            ..Results::default()
        };
        assert!(mixed_note(&r).is_none());
        r.variants.push(v("c", "12.1", "gcc 4.4"));
        assert!(mixed_note(&r).unwrap().contains("a and c"));
        assert_eq!(blocks(&r).len(), 3);
    }
}
