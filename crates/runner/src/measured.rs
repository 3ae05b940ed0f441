//! Runs that measured nothing are invalid: a run where every operation failed measured
//! how fast the server says no, and one whose reads missed more than
//! `bakeoff_workloads::MISS_SHARE` (1%) of the keys its workload wrote measured a cache
//! that evicts (or lost data), not the workload. Each says why, with the figure. And a run
//! measures only the binary its variant was hashed as: one changed since (a cache entry
//! rebuilt by hand, a package upgraded mid-experiment) is not started.

use bakeoff_report::model::Run;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What tells a file's content may have changed without reading it: size, inode, and the
/// modification and change times (a write or a rename over it moves them).
type Stamp = (u64, u64, u64, i64, i64, i64, i64);

/// The binaries hashed so far, with the stamp they had then.
static HASHED: Mutex<BTreeMap<PathBuf, (Stamp, String)>> = Mutex::new(BTreeMap::new());

/// Why `path` is no longer the binary hashed as `sha256` (its hash now differs), if it is
/// not; re-hashed only when its stamp moved since the last look. A binary that cannot be
/// read is left to the server's start to report.
pub(crate) fn binary_changed(path: &Path, sha256: &str) -> Option<String> {
    if sha256.is_empty() {
        return None;
    }
    let m = std::fs::metadata(path).ok()?;
    let stamp = (
        m.len(),
        m.ino(),
        m.dev(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    );
    let mut hashed = HASHED.lock().unwrap_or_else(|p| p.into_inner());
    let now = match hashed.get(path) {
        Some((s, h)) if *s == stamp => h.clone(),
        _ => {
            let (_, h) = bakeoff_build::describe_binary(path).ok()?;
            hashed.insert(path.to_path_buf(), (stamp, h.clone()));
            h
        }
    };
    let short = |h: &str| h.chars().take(12).collect::<String>();
    (now != sha256).then(|| {
        format!(
            "the binary {} changed after it was hashed (sha256 {} then, {} now), so this would measure something the results do not name; run again to build it again (a changed cache entry is rebuilt) or reinstall it",
            path.display(),
            short(sha256),
            short(&now)
        )
    })
}

/// Why a run that completed measured nothing the comparison can use, if it did not.
/// `expected_hits`: the lookups that should have found their key (the workload's
/// `expected_hits`; None when it may miss by design).
pub(crate) fn nothing_measured(run: &Run, expected_hits: Option<u64>) -> Option<String> {
    // A kv load counts a failed request among its operations; a SQL load counts a failed
    // transaction apart from them (so errors beyond the operations, with some completed,
    // are not "every").
    if run.errors > 0 && (run.ops == 0 || run.errors == run.ops) {
        // Kinds only are counted per run: the most frequent one names the failure.
        let first = run
            .errors_by_kind
            .iter()
            .max_by_key(|(_, n)| **n)
            .map_or("an error", |(k, _)| k.as_str());
        return Some(format!(
            "every operation failed: {first} ({} errors, none succeeded)",
            run.errors
        ));
    }
    let reads = expected_hits.filter(|n| *n > 0)?;
    let share = run.misses as f64 / reads as f64;
    (share > bakeoff_workloads::MISS_SHARE).then(|| {
        format!(
            "{:.1}% of the reads missed ({} of {}) where the workload wrote every key it reads (more than {}% allowed): the server evicted or lost data, so this measured another workload; give it more memory (memcached: -m) or use fewer keys",
            share * 100.0,
            run.misses,
            reads,
            bakeoff_workloads::MISS_SHARE * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated: a binary rewritten at its size or not, in place or renamed over: every
    /// change is found; an unchanged one is not re-read.
    #[test]
    fn hostile_changed_binary_is_not_measured() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("server");
        std::fs::write(&bin, b"the binary as built").unwrap();
        let (_, sha) = bakeoff_build::describe_binary(&bin).unwrap();
        assert_eq!(binary_changed(&bin, &sha), None);
        assert_eq!(binary_changed(&bin, ""), None);
        let changes: [&dyn Fn(); 4] = [
            &|| std::fs::write(&bin, b"the binary as BUILT").unwrap(),
            &|| std::fs::write(&bin, b"the binary as built, and more").unwrap(),
            &|| {
                let other = dir.path().join("other");
                std::fs::write(&other, b"another binary here").unwrap();
                std::fs::rename(&other, &bin).unwrap();
            },
            &|| std::fs::write(&bin, b"").unwrap(),
        ];
        for (i, change) in changes.iter().enumerate() {
            change();
            let why = binary_changed(&bin, &sha).unwrap_or_else(|| panic!("change {i}"));
            assert!(why.contains("changed after it was hashed"), "{why}");
            assert!(why.contains(&sha[..12]), "{why}");
            std::fs::write(&bin, b"the binary as built").unwrap();
            assert_eq!(binary_changed(&bin, &sha), None, "restored after {i}");
        }
        // Gone: the server's start says so.
        std::fs::remove_file(&bin).unwrap();
        assert_eq!(binary_changed(&bin, &sha), None);
    }

    fn run(ops: u64, errors: &[(&str, u64)], misses: u64) -> Run {
        Run {
            ops,
            errors: errors.iter().map(|e| e.1).sum(),
            errors_by_kind: errors
                .iter()
                .map(|(k, n)| (k.to_string(), *n))
                .collect::<BTreeMap<_, _>>(),
            misses,
            valid: true,
            ..Run::default()
        }
    }

    /// Generated: operation counts, error kinds and shares.
    #[test]
    fn hostile_every_operation_failed_is_invalid() {
        for ops in [1u64, 7, 1000, 1_000_000] {
            for kind in [
                "server_error",
                "out_of_memory",
                "too_large",
                "lock_wait_timeout",
            ] {
                let why = nothing_measured(&run(ops, &[(kind, ops)], 0), None)
                    .unwrap_or_else(|| panic!("{ops} {kind}"));
                assert!(why.starts_with("every operation failed: "), "{why}");
                assert!(why.contains(kind), "{why}");
                // The most frequent kind is the one named.
                let two = run(ops + 1, &[("a_rare", 1), (kind, ops)], 0);
                assert!(nothing_measured(&two, None).unwrap().contains(kind));
                // One success among them: measured, even if badly.
                if ops > 1 {
                    let one_ok = run(ops, &[(kind, ops - 1)], 0);
                    assert_eq!(nothing_measured(&one_ok, None), None);
                }
            }
            // Errors with no operation completed (a SQL load counts failed transactions
            // apart from its operations).
            let why = nothing_measured(&run(0, &[("deadlock", ops)], 0), None).unwrap();
            assert!(why.contains("deadlock"), "{why}");
        }
        assert_eq!(nothing_measured(&run(0, &[], 0), None), None);
    }

    /// Generated: read counts and miss shares on either side of 1%.
    #[test]
    fn hostile_misses_above_the_share_are_invalid() {
        for reads in [100u64, 1000, 12_345, 1_000_000] {
            for share in [0.0, 0.005, 0.01, 0.0101, 0.02, 0.39, 1.0] {
                let misses = (reads as f64 * share).round() as u64;
                let r = run(reads * 2, &[], misses);
                let got = nothing_measured(&r, Some(reads));
                let over = misses as f64 / reads as f64 > 0.01;
                assert_eq!(got.is_some(), over, "{reads} {share}: {got:?}");
                if let Some(why) = got {
                    assert!(why.contains("of the reads missed"), "{why}");
                    assert!(why.contains(&format!("({misses} of {reads})")), "{why}");
                }
                // A workload that may miss by design: never.
                assert_eq!(nothing_measured(&r, None), None);
            }
        }
        // No reads at all: nothing to judge.
        assert_eq!(nothing_measured(&run(10, &[], 5), Some(0)), None);
    }
}
