//! report.md's "why" sections: memory errors (first, they void a variant), what the
//! system did during the runs (CPU modes, server CPU, context switches, disk, loopback),
//! CPU counters, instruction counts, and hotspot profiles with their diff to the baseline.
//! Each section is left out when the experiment did not produce it.

use crate::markup::{md, md_code};
use crate::model::{Cell, Results};
use crate::sections;
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
            "Variant {} ({}):\n",
            md_code(&v.name),
            md(&if v.sanitize.is_empty() {
                v.run_under.clone().unwrap_or_default()
            } else {
                format!("sanitize = {}", v.sanitize.join(", "))
            })
        );
        for e in &v.memory_errors {
            let _ = writeln!(
                s,
                "- **{}** ({}): {}",
                md(&e.kind),
                md(&e.tool),
                md(&e.message)
            );
            for f in e.stack.iter().take(6) {
                let _ = writeln!(s, "    - {}", md(f));
            }
            if let Some(l) = &e.log {
                let _ = writeln!(s, "    - log: {}", md_code(l));
            }
        }
        s.push('\n');
    }
}

/// Per cell, the sampler's means over valid runs.
pub fn system(s: &mut String, r: &Results) {
    if let Some(t) = sections::system(r) {
        let _ = writeln!(s, "## System during the measured windows\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

/// The other hosts, and each client host's share of the cells loaded from several.
pub fn hosts(s: &mut String, r: &Results) {
    if let Some(t) = sections::hosts(r) {
        let _ = writeln!(s, "## Hosts\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
    if let Some(t) = sections::client_hosts(r) {
        let _ = writeln!(s, "## Load by client host\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

/// Redis cells: INFO memory at the window's start and the run's end.
pub fn memory(s: &mut String, r: &Results) {
    if let Some(t) = sections::memory(r) {
        let _ = writeln!(s, "## Memory (Redis INFO)\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

/// CPU counters per cell: means over valid runs.
pub fn counters(s: &mut String, r: &Results) {
    if let Some(t) = sections::counters(r) {
        let _ = writeln!(s, "## CPU counters (server processes, measured window)\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

/// Instructions per operation (mode = "instructions") and the top functions.
pub fn instructions(s: &mut String, r: &Results) {
    let Some(t) = sections::instructions(r) else {
        return;
    };
    let _ = writeln!(s, "## Instructions per operation (callgrind)\n");
    s.push_str(&t.markdown_with_notes());
    s.push('\n');
    for (_, t) in sections::top_instructions(r) {
        let _ = writeln!(s, "### {}\n", md(&t.title));
        s.push_str(&t.markdown());
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
            "### {} x{} {}\n\n{} samples of {}; server binary {:.1}%, kernel {:.1}%, libraries {:.1}%, other {:.1}%. Flamegraph: {}\n",
            md(&c.workload),
            c.connections,
            md(&c.variant),
            p.samples,
            md(&p.event),
            p.split.server_pct,
            p.split.kernel_pct,
            p.split.libraries_pct,
            p.split.other_pct,
            md_code(&p.flamegraph)
        );
        if let Some(t) = sections::hotspot_top(p) {
            s.push_str(&t.markdown());
        }
        if let Some(t) = sections::hotspot_diff(p, &r.plan.baseline) {
            let _ = writeln!(s, "\n{}:\n", md(&t.title));
            s.push_str(&t.markdown());
        }
        s.push('\n');
    }
}

/// Each binary's code against the baseline's.
pub fn binaries(s: &mut String, r: &Results) {
    if let Some(t) = sections::binaries(r) {
        let _ = writeln!(s, "## What changed in the binaries\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

/// How runs spread between code layouts (`[plan] layouts`).
pub fn layouts(s: &mut String, r: &Results) {
    if let Some(t) = sections::layouts(r) {
        let _ = writeln!(s, "## Code layouts\n");
        s.push_str(&t.markdown_with_notes());
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
        let _ = writeln!(s, "- {}", md(n));
    }
    s.push('\n');
}
