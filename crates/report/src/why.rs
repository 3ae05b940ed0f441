//! report.md's "why" sections: memory errors (first, they void a variant), what the
//! system did during the runs (CPU modes, server CPU, context switches, disk, loopback),
//! CPU counters, instruction counts, and hotspot profiles with their diff to the baseline.
//! Each section is left out when the experiment did not produce it.

use crate::model::{Cell, Results};
use crate::summary::markdown_table;
use std::fmt::Write;

/// Memory errors per variant, with the first frames of each stack.
pub fn memory_errors(s: &mut String, r: &Results) {
    let bad: Vec<_> = r
        .variants
        .iter()
        .filter(|v| !v.memory_errors.is_empty())
        .collect();
    if bad.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Memory errors (verification failed)\n");
    for v in bad {
        let _ = writeln!(
            s,
            "Variant `{}` ({}):\n",
            v.name,
            if v.sanitize.is_empty() {
                v.run_under.clone().unwrap_or_default()
            } else {
                format!("sanitize = {}", v.sanitize.join(", "))
            }
        );
        for e in &v.memory_errors {
            let _ = writeln!(s, "- **{}** ({}): {}", e.kind, e.tool, e.message);
            for f in e.stack.iter().take(6) {
                let _ = writeln!(s, "    - {f}");
            }
            if let Some(l) = &e.log {
                let _ = writeln!(s, "    - log: `{l}`");
            }
        }
        s.push('\n');
    }
}

fn pct(x: f64) -> String {
    format!("{x:.1}")
}

fn bytes(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} GB", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1} MB", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} kB", x / 1e3)
    } else {
        format!("{x:.0} B")
    }
}

/// Per cell, the sampler's means over valid runs.
pub fn system(s: &mut String, r: &Results) {
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter_map(|c| c.system.as_ref().map(|x| (c, x)))
        .map(|(c, x)| {
            vec![
                c.workload.clone(),
                c.connections.to_string(),
                c.variant.clone(),
                pct(x.cpu_user_pct),
                pct(x.cpu_system_pct),
                pct(x.cpu_iowait_pct),
                pct(x.cpu_idle_pct),
                format!("{:.0} / {:.0}", x.server_cpu_pct_mean, x.server_cpu_pct_max),
                format!("{:.1}", x.server_rss_kib_max as f64 / 1024.0),
                format!("{:.2}", x.ctx_switches_per_op),
                format!(
                    "{} / {}",
                    bytes(x.disk_read_bytes as f64),
                    bytes(x.disk_write_bytes as f64)
                ),
                pct(x.disk_util_pct_max),
                format!("{:.0}", x.loopback_bytes_per_op),
            ]
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "## System during the measured windows\n");
    s.push_str(&markdown_table(
        &[
            "workload",
            "conns",
            "variant",
            "user %",
            "system %",
            "iowait %",
            "idle %",
            "server CPU % mean / max",
            "server RSS MiB",
            "ctx switches/op",
            "disk read / write",
            "disk util % max",
            "loopback B/op",
        ],
        &rows,
    ));
    let _ = writeln!(
        s,
        "\nCPU modes are of the whole machine (all cores = 100%); server CPU is percent of one core, summed over the server's processes; context switches are the whole machine's. Means over valid runs; per-second series in `series/`.\n"
    );
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// CPU counters per cell (medians would hide nothing here: the first valid run's figures
/// are shown per run in results.json; this table gives the means).
pub fn counters(s: &mut String, r: &Results) {
    let mut rows = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    for c in &r.cells {
        let runs: Vec<_> = c
            .runs
            .iter()
            .filter(|x| x.valid)
            .filter_map(|x| x.counters.as_ref())
            .collect();
        if runs.is_empty() {
            continue;
        }
        for u in runs.iter().flat_map(|x| x.unsupported.iter()) {
            if !unsupported.contains(u) {
                unsupported.push(u.clone());
            }
        }
        let mean = |f: fn(&crate::model::CountersRecord) -> Option<f64>| {
            let v: Vec<f64> = runs.iter().filter_map(|x| f(x)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let row = vec![
            c.workload.clone(),
            c.connections.to_string(),
            c.variant.clone(),
            opt(mean(|x| x.instructions_per_op), 0),
            opt(mean(|x| x.cycles_per_op), 0),
            opt(mean(|x| x.ipc), 2),
            opt(mean(|x| x.cache_misses_per_kinstr), 2),
            opt(mean(|x| x.branch_misses_per_kinstr), 2),
            opt(mean(|x| x.itlb_misses_per_kinstr), 3),
            opt(mean(|x| x.l1i_misses_per_kinstr), 2),
        ];
        // Nothing counted (no PMU): the notes say so; no table of dashes.
        if row[3..].iter().any(|v| v != "-") {
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "## CPU counters (server processes, measured window)\n");
    s.push_str(&markdown_table(
        &[
            "workload",
            "conns",
            "variant",
            "instr/op",
            "cycles/op",
            "IPC",
            "cache miss/kinstr",
            "branch miss/kinstr",
            "iTLB miss/kinstr",
            "L1i miss/kinstr",
        ],
        &rows,
    ));
    if !unsupported.is_empty() {
        let _ = writeln!(
            s,
            "\nNot counted on this machine: {}.",
            unsupported.join(", ")
        );
    }
    s.push('\n');
}

/// Instructions per operation (mode = "instructions") and the top functions.
pub fn instructions(s: &mut String, r: &Results) {
    let cells: Vec<&Cell> = r
        .cells
        .iter()
        .filter(|c| c.instructions_per_op.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Instructions per operation (callgrind)\n");
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let base = r.cell(&c.workload, &r.plan.baseline, c.connections);
            let ratio = match (
                base.and_then(|b| b.instructions_per_op),
                c.instructions_per_op,
            ) {
                (Some(b), Some(x)) if b > 0.0 => format!("{:.4}", x / b),
                _ => "-".into(),
            };
            vec![
                c.workload.clone(),
                c.connections.to_string(),
                c.variant.clone(),
                opt(c.instructions_per_op, 0),
                ratio,
            ]
        })
        .collect();
    s.push_str(&markdown_table(
        &[
            "workload",
            "conns",
            "variant",
            "instructions/op (median)",
            "vs baseline",
        ],
        &rows,
    ));
    let _ = writeln!(
        s,
        "\nThe server ran under valgrind callgrind, counting only the measured window: counts repeat within a fraction of a percent, so small differences between builds show here that wall-clock noise hides. Throughput figures of these runs are valgrind's, not the server's.\n"
    );
    for c in cells {
        let Some(run) = c.runs.iter().find(|x| x.valid && x.instructions.is_some()) else {
            continue;
        };
        let Some(i) = &run.instructions else { continue };
        let _ = writeln!(
            s,
            "### {} x{} {}: top functions (round {})\n",
            c.workload,
            c.connections,
            c.variant,
            run.round + 1
        );
        let rows: Vec<Vec<String>> = i
            .top
            .iter()
            .take(10)
            .map(|f| {
                vec![
                    format!("`{}`", f.function.replace('|', "\\|")),
                    format!("{:.0}", f.instructions_per_op),
                    pct(f.pct),
                ]
            })
            .collect();
        s.push_str(&markdown_table(&["function", "instr/op", "%"], &rows));
        s.push('\n');
    }
}

/// Hotspot profiles: where the time went, and what changed against the baseline.
pub fn profiles(s: &mut String, r: &Results) {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.profile.is_some()).collect();
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Hotspots (perf record, one extra run per cell)\n");
    for c in cells {
        let Some(p) = &c.profile else { continue };
        let _ = writeln!(
            s,
            "### {} x{} {}\n\n{} samples of {}; server binary {:.1}%, kernel {:.1}%, libraries {:.1}%, other {:.1}%. Flamegraph: `{}`\n",
            c.workload,
            c.connections,
            c.variant,
            p.samples,
            p.event,
            p.split.server_pct,
            p.split.kernel_pct,
            p.split.libraries_pct,
            p.split.other_pct,
            p.flamegraph
        );
        let rows: Vec<Vec<String>> = p
            .top
            .iter()
            .take(12)
            .map(|f| {
                vec![
                    format!("`{}`", f.function.replace('|', "\\|")),
                    f.dso.clone(),
                    pct(f.self_pct),
                    pct(f.children_pct),
                ]
            })
            .collect();
        s.push_str(&markdown_table(
            &["function", "where", "self %", "children %"],
            &rows,
        ));
        if !p.diff.is_empty() {
            let _ = writeln!(
                s,
                "\nAgainst `{}` (self samples per million operations):\n",
                r.plan.baseline
            );
            let rows: Vec<Vec<String>> = p
                .diff
                .iter()
                .take(12)
                .map(|d| {
                    vec![
                        format!("`{}`", d.function.replace('|', "\\|")),
                        format!("{:.0}", d.base_per_mop),
                        format!("{:.0}", d.other_per_mop),
                        d.change
                            .map_or("new".into(), |x| format!("{:+.1}%", 100.0 * x)),
                    ]
                })
                .collect();
            s.push_str(&markdown_table(
                &["function", "baseline", "this variant", "change"],
                &rows,
            ));
        }
        s.push('\n');
    }
}

/// Notes on what could not be measured here.
pub fn notes(s: &mut String, r: &Results) {
    if r.notes.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Not measured on this machine\n");
    for n in &r.notes {
        let _ = writeln!(s, "- {n}");
    }
    s.push('\n');
}
