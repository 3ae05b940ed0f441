//! Profiling: one extra run per cell under perf record, after the measured rounds (its
//! figures never enter the statistics: recording costs the server a little), each
//! profile's flamegraph kept, then a diff per cell against the baseline's profile.

use crate::context::{Context, Launch};
use crate::folder::{safe_name, write_results};
use crate::observer::Observer;
use crate::probes;
use crate::schedule::Slot;
use bakeoff_engine::Live;
use bakeoff_probe::profile;
use bakeoff_report::model::Results;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One extra run per cell under perf record, after the measured rounds; its figures
/// never enter the statistics (recording costs the server a little). False if
/// interrupted.
pub(crate) fn profile_cells(
    ctx: &Context<'_>,
    results: &mut Results,
    points: &[(usize, usize)],
    observer: &dyn Observer,
) -> bool {
    ctx.profile_cells(results, points, observer)
}

impl Context<'_> {
    fn profile_cells(
        &self,
        results: &mut Results,
        points: &[(usize, usize)],
        observer: &dyn Observer,
    ) -> bool {
        let mut kept: HashMap<(usize, usize, usize), (profile::Profile, u64)> = HashMap::new();
        let total = points.len() * self.variants.len();
        observer.runs_started(total, self.seconds_per_run());
        let mut i = 0;
        for &(workload, connections) in points {
            for variant in 0..self.variants.len() {
                if self.cancel.load(Ordering::SeqCst) {
                    return false;
                }
                let slot = Slot {
                    round: results.plan.rounds.len(),
                    workload,
                    connections,
                    variant,
                };
                let label = format!("{} (profile)", self.label(&slot));
                let live = Arc::new(Live::default());
                observer.run_started(i, &label, &live);
                let done = self.launch(&slot, &live, Launch::Profiled);
                observer.run_finished(i, &label, &done.run);
                i += 1;
                self.record_findings(results, &slot, done.findings);
                crate::settings::record(self, results, &slot, done.settings, done.run.valid);
                let at = self.cell_index(results, &slot);
                match done.profile {
                    Some(p) => {
                        let file = format!(
                            "profiles/{}+{}+x{connections}.svg",
                            safe_name(&self.variants[variant].name),
                            safe_name(self.configs[workload].name())
                        );
                        let svg = profile::flamegraph(&p.folded, &label);
                        let written = svg.and_then(|b| self.folder.write(&file, &b));
                        let path = if written.is_ok() { file } else { String::new() };
                        results.cells[at].profile =
                            Some(probes::profile_record(&p, path, slot.round));
                        kept.insert((workload, connections, variant), (p, done.run.ops));
                    }
                    None => results.notes.push(format!(
                        "{label}: no profile ({})",
                        no_profile_reason(&done.run)
                    )),
                }
                let _ = write_results(self.folder, results);
            }
        }
        self.profile_diffs(results, &kept);
        true
    }

    /// Each profiled cell against the baseline variant's profile of the same point.
    fn profile_diffs(
        &self,
        results: &mut Results,
        kept: &HashMap<(usize, usize, usize), (profile::Profile, u64)>,
    ) {
        let baseline = &results.plan.baseline;
        let Some(b) = self.variants.iter().position(|v| &v.name == baseline) else {
            return;
        };
        for (&(w, c, v), (p, ops)) in kept {
            let Some((bp, bops)) = kept.get(&(w, c, b)).filter(|_| v != b) else {
                continue;
            };
            let slot = Slot {
                round: 0,
                workload: w,
                connections: c,
                variant: v,
            };
            let at = self.cell_index(results, &slot);
            if let Some(rec) = results.cells[at].profile.as_mut() {
                rec.diff = probes::diff_records(bp, *bops, p, *ops);
                rec.line_diff = probes::line_diff_records(bp, *bops, p, *ops);
            }
        }
    }
}

/// Why a profiling run left no profile: the run's own reason when it was invalid, else
/// what perf said (here or on the server's host), else that perf record failed.
fn no_profile_reason(run: &bakeoff_report::model::Run) -> String {
    if let Some(why) = &run.invalid_reason {
        return why.clone();
    }
    let perf: Vec<&str> = run
        .probe_errors
        .iter()
        .filter(|e| e.starts_with("perf record"))
        .map(String::as_str)
        .collect();
    if perf.is_empty() {
        "perf record failed".to_string()
    } else {
        perf.join("; ")
    }
}
