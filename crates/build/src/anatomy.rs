//! What a binary is made of, for comparing builds: its `.text` size (`size -A`) and, where it
//! has symbols, each function's size (`nm -S`). The functions whose size changed most against
//! another build show what a compiler setting did, beside the profiles' hotspot diff.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A binary's code: `.text` bytes and function sizes by name (empty when stripped).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Anatomy {
    pub text_bytes: u64,
    pub functions: BTreeMap<String, u64>,
}

/// What `program args binary` prints in the C locale, when it succeeds.
fn tool_output(program: &str, args: &[&str], binary: &Path) -> Option<String> {
    Command::new(program)
        .args(args)
        .arg(binary)
        .env("LC_ALL", "C")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// `size -A -d` and `nm -S --defined-only` on `binary`; None when `size` cannot read it.
pub fn read(binary: &Path) -> Option<Anatomy> {
    let text_bytes = parse_text_size(&tool_output("size", &["-A", "-d"], binary)?)?;
    let functions = tool_output("nm", &["-S", "--defined-only"], binary)
        .map(|o| parse_functions(&o))
        .unwrap_or_default();
    Some(Anatomy {
        text_bytes,
        functions,
    })
}

/// The code the binary runs: `.text` and its split-off parts (`.text.cold`, `.text.hot`,
/// ...). BOLT keeps the original code as `.bolt.org.text`, which no longer runs: not
/// counted.
fn parse_text_size(size_out: &str) -> Option<u64> {
    let sizes: Vec<u64> = size_out
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?;
            (name == ".text" || name.starts_with(".text.")).then(|| f.next()?.parse().ok())?
        })
        .collect();
    (!sizes.is_empty()).then(|| sizes.iter().sum())
}

/// Code symbols (`t`/`T`, also `w`/`W` weak code) with their sizes.
fn parse_functions(nm_out: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for l in nm_out.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 4 || !matches!(f[2], "t" | "T" | "w" | "W") {
            continue;
        }
        if let Ok(size) = u64::from_str_radix(f[1], 16) {
            // Local symbols of the same name (static functions in several files) add up.
            *out.entry(f[3].to_string()).or_insert(0) += size;
        }
    }
    out
}

/// The `n` functions whose size differs most between `base` and `other` (absolute bytes),
/// as (name, base bytes, other bytes); a function on one side only counts from 0.
pub fn changed(base: &Anatomy, other: &Anatomy, n: usize) -> Vec<(String, u64, u64)> {
    let mut names: Vec<&String> = base
        .functions
        .keys()
        .chain(other.functions.keys())
        .collect();
    names.sort();
    names.dedup();
    let mut rows: Vec<(String, u64, u64)> = names
        .into_iter()
        .map(|k| {
            (
                k.clone(),
                base.functions.get(k).copied().unwrap_or(0),
                other.functions.get(k).copied().unwrap_or(0),
            )
        })
        .filter(|(_, a, b)| a != b)
        .collect();
    rows.sort_by_key(|(name, a, b)| (std::cmp::Reverse(a.abs_diff(*b)), name.clone()));
    rows.truncate(n);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_size_and_nm_output() {
        let size = "x  :\nsection   size   addr\n.init       27   4096\n.text   153159  18640\n";
        assert_eq!(parse_text_size(size), Some(153_159));
        let bolted = ".bolt.org.text 153127 18640\n.text 12823 4194304\n.text.cold 26132 4207168\n";
        assert_eq!(parse_text_size(bolted), Some(12_823 + 26_132));
        let nm = "0000000000012340 0000000000000100 T main\n0000000000012440 0000000000000020 t helper\n0000000000013440 0000000000000010 t helper\n0000000000050000 0000000000004000 b table\n                 U malloc\n";
        let f = parse_functions(nm);
        assert_eq!(f["main"], 256);
        assert_eq!(f["helper"], 48);
        assert!(!f.contains_key("table"));
    }

    #[test]
    fn largest_changes_first() {
        let a = Anatomy {
            text_bytes: 100,
            functions: BTreeMap::from([("f".into(), 100), ("g".into(), 50), ("h".into(), 10)]),
        };
        let b = Anatomy {
            text_bytes: 120,
            functions: BTreeMap::from([("f".into(), 90), ("g".into(), 80), ("k".into(), 5)]),
        };
        let c = changed(&a, &b, 10);
        assert_eq!(c[0], ("g".into(), 50, 80));
        assert_eq!(c[1], ("f".into(), 100, 90));
        assert_eq!(c.len(), 4);
    }
}
