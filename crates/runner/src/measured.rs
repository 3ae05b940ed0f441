//! Runs that measured nothing are invalid: a run where every operation failed measured
//! how fast the server says no, and one whose reads missed more than
//! `bakeoff_workloads::MISS_SHARE` (1%) of the keys its workload wrote measured a cache
//! that evicts (or lost data), not the workload. Each says why, with the figure.

use bakeoff_report::model::Run;

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
    use std::collections::BTreeMap;

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
            for kind in ["server_error", "out_of_memory", "too_large", "lock_wait_timeout"] {
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
