//! The report's tables, each built once from the results as a neutral [`Table`]: verdicts,
//! the system during the runs, CPU counters, instruction counts, hotspots, statements,
//! every run, data loads and server options. report.md and report.html render these same
//! tables (and so say the same words and figures); only the pictures around them differ.

use crate::model::{Cell, CountersRecord, ProfileRecord, Results, Run};
use crate::summary::{self, micros, ops};
use crate::table::{bytes, fixed, opt, pct, Table, Value};

/// The three columns that name a cell.
fn cell_key(c: &Cell) -> [Value; 3] {
    [
        c.workload.clone().into(),
        c.connections.to_string().into(),
        Value::Variant(c.variant.clone()),
    ]
}

/// Each comparison against the baseline: ratio, CI, p-values, rounds, detectable
/// difference and verdict.
pub fn verdicts(r: &Results) -> Option<Table> {
    if r.comparisons.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "verdicts",
        &[
            "workload",
            "conns#",
            "variant",
            "ratio#",
            "CI",
            "p#",
            "p adjusted#",
            "rounds",
            "detectable#",
            "verdict",
        ],
    );
    let index = crate::index::Index::new(r);
    for c in &r.comparisons {
        t.push(vec![
            c.workload.clone().into(),
            c.connections.to_string().into(),
            Value::Variant(c.variant.clone()),
            fixed(c.ratio, 3).into(),
            summary::ratio_ci_text(c).into(),
            fixed(c.p_value, 4).into(),
            fixed(c.p_adjusted, 4).into(),
            match c.layouts {
                Some(k) => format!("{} over {k} layouts", c.rounds),
                None if c.is_capacity() => format!("{} searches (capacity)", c.rounds),
                None => format!(
                    "{} {}",
                    c.rounds,
                    if c.paired { "paired" } else { "unpaired" }
                ),
            }
            .into(),
            c.detectable
                .map(|d| format!("±{:.1}%", d * 100.0))
                .unwrap_or_else(|| "-".into())
                .into(),
            Value::Verdict(
                c.verdict,
                // Mode both: the instruction record is the second line of its comparison.
                if index.is_beside(c) {
                    summary::instructions_text(c)
                } else {
                    crate::aa::verdict_text(c)
                },
            ),
        ]);
    }
    Some(t)
}

/// Per cell, the sampler's means over valid runs, with links to the per-second series.
pub fn system(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "system",
        &[
            "workload",
            "conns#",
            "variant",
            "user %#",
            "system %#",
            "iowait %#",
            "idle %#",
            "server CPU % mean / max#",
            "server RSS MiB#",
            "ctx switches/op#",
            "disk read / write#",
            "disk util % max#",
            "loopback B/op#",
            "series",
        ],
    )
    .note("CPU modes are of the whole machine (all cores = 100%); server CPU is percent of one core, summed over the server's processes; context switches are the whole machine's. Means over valid runs.");
    for c in &r.cells {
        let Some(s) = &c.system else { continue };
        let series: Vec<(String, String)> = c
            .runs
            .iter()
            .filter_map(|run| {
                let p = run.system.as_ref()?.series.as_ref()?;
                Some((format!("r{}", run.round.saturating_add(1)), p.clone()))
            })
            .chain(s.series.iter().map(|p| ("cell".to_string(), p.clone())))
            .collect();
        let mut row = cell_key(c).to_vec();
        row.extend([
            pct(s.cpu_user_pct).into(),
            pct(s.cpu_system_pct).into(),
            pct(s.cpu_iowait_pct).into(),
            pct(s.cpu_idle_pct).into(),
            format!(
                "{} / {}",
                fixed(s.server_cpu_pct_mean, 0),
                fixed(s.server_cpu_pct_max, 0)
            )
            .into(),
            fixed(s.server_rss_kib_max as f64 / 1024.0, 1).into(),
            fixed(s.ctx_switches_per_op, 2).into(),
            format!(
                "{} / {}",
                bytes(s.disk_read_bytes as f64),
                bytes(s.disk_write_bytes as f64)
            )
            .into(),
            pct(s.disk_util_pct_max).into(),
            fixed(s.loopback_bytes_per_op, 0).into(),
            Value::Files(series),
        ]);
        t.push(row);
    }
    (!t.is_empty()).then_some(t)
}

/// CPU counters per cell: means over valid runs. Cells where nothing was counted (no
/// PMU) are left out; the note names the events this machine could not count.
pub fn counters(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "counters",
        &[
            "workload",
            "conns#",
            "variant",
            "instr/op#",
            "cycles/op#",
            "IPC#",
            "cache miss/kinstr#",
            "branch miss/kinstr#",
            "iTLB miss/kinstr#",
            "L1i miss/kinstr#",
        ],
    );
    let mut unsupported: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for c in &r.cells {
        let runs: Vec<&CountersRecord> = c
            .runs
            .iter()
            .filter(|x| x.valid)
            .filter_map(|x| x.counters.as_ref())
            .collect();
        if runs.is_empty() {
            continue;
        }
        for u in runs.iter().flat_map(|x| x.unsupported.iter()) {
            if seen.insert(u.as_str()) {
                unsupported.push(u);
            }
        }
        let mean = |f: fn(&CountersRecord) -> Option<f64>, digits: usize| {
            let v: Vec<f64> = runs.iter().filter_map(|x| f(x)).collect();
            opt(
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
                digits,
            )
        };
        let figures = [
            mean(|x| x.instructions_per_op, 0),
            mean(|x| x.cycles_per_op, 0),
            mean(|x| x.ipc, 2),
            mean(|x| x.cache_misses_per_kinstr, 2),
            mean(|x| x.branch_misses_per_kinstr, 2),
            mean(|x| x.itlb_misses_per_kinstr, 3),
            mean(|x| x.l1i_misses_per_kinstr, 2),
        ];
        // Nothing counted (no PMU): the notes say so; no row of dashes.
        if figures.iter().any(|v| v != "-") {
            let mut row = cell_key(c).to_vec();
            row.extend(figures.into_iter().map(Value::Text));
            t.push(row);
        }
    }
    if t.is_empty() {
        return None;
    }
    t = t.note("Means over valid runs.");
    if !unsupported.is_empty() {
        t = t.note(format!(
            "Not counted on this machine: {}.",
            unsupported.join(", ")
        ));
    }
    Some(t)
}

/// Instructions per operation (mode = "instructions"), against the baseline's.
pub fn instructions(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "instructions",
        &[
            "workload",
            "conns#",
            "variant",
            "instructions/op (median)#",
            "vs baseline#",
        ],
    )
    .note("The server ran under valgrind callgrind, counting only the measured window: counts repeat within a fraction of a percent, so small differences between builds show here that wall-clock noise hides. Throughput figures of these runs are valgrind's, not the server's.");
    let index = crate::index::Index::new(r);
    for c in r.cells.iter().filter(|c| c.instructions_per_op.is_some()) {
        let base = index
            .cell(&c.workload, &r.plan.baseline, c.connections)
            .and_then(|b| b.instructions_per_op);
        let ratio = match (base, c.instructions_per_op) {
            (Some(b), Some(x)) if b > 0.0 => fixed(x / b, 4),
            _ => "-".into(),
        };
        let mut row = cell_key(c).to_vec();
        row.extend([
            c.instructions_per_op.map_or("-".into(), ops).into(),
            ratio.into(),
        ]);
        t.push(row);
    }
    (!t.is_empty()).then_some(t)
}

/// Per cell counted under callgrind, its first valid run's top functions.
pub fn top_instructions(r: &Results) -> Vec<(&Cell, Table)> {
    let mut out = Vec::new();
    for c in &r.cells {
        let Some(run) = c.runs.iter().find(|x| x.valid && x.instructions.is_some()) else {
            continue;
        };
        let Some(i) = &run.instructions else { continue };
        if i.top.is_empty() {
            continue;
        }
        let mut t = Table::new("top", &["function", "instr/op#", "%#"]).titled(format!(
            "{} x{} {}: top functions (round {})",
            c.workload,
            c.connections,
            c.variant,
            run.round.saturating_add(1)
        ));
        for f in i.top.iter().take(10) {
            t.push(vec![
                Value::Code(f.function.clone()),
                fixed(f.instructions_per_op, 0).into(),
                pct(f.pct).into(),
            ]);
        }
        out.push((c, t));
    }
    out
}

/// A profile's top functions by self time.
pub fn hotspot_top(p: &ProfileRecord) -> Option<Table> {
    let mut t = Table::new("top", &["function", "where", "self %#", "children %#"]);
    for f in p.top.iter().take(12) {
        t.push(vec![
            Value::Code(f.function.clone()),
            f.dso.clone().into(),
            pct(f.self_pct).into(),
            pct(f.children_pct).into(),
        ]);
    }
    (!t.is_empty()).then_some(t)
}

/// A profile against the baseline's: self samples per million operations.
pub fn hotspot_diff(p: &ProfileRecord, baseline: &str) -> Option<Table> {
    let mut t = Table::new(
        "diff",
        &["function", "baseline#", "this variant#", "change#"],
    )
    .titled(format!(
        "Against {baseline} (self samples per million operations)"
    ));
    for d in p.diff.iter().take(12) {
        t.push(vec![
            Value::Code(d.function.clone()),
            fixed(d.base_per_mop, 0).into(),
            fixed(d.other_per_mop, 0).into(),
            d.change
                .map_or("new".into(), |x| format!("{:+.1}%", 100.0 * x))
                .into(),
        ]);
    }
    (!t.is_empty()).then_some(t)
}

/// A profile's hottest source lines (or instructions) under each of its top functions.
pub fn hotspot_lines(p: &ProfileRecord) -> Option<Table> {
    let mut t = Table::new(
        "lines",
        &["function", "line or instruction", "code", "% of function#"],
    )
    .titled(format!(
        "Hottest lines of the top functions (addr2line; instructions with objdump where the binary has no line info; {} ms to resolve)",
        p.lines_ms
    ));
    for f in p.top.iter().take(12) {
        for l in &f.lines {
            t.push(vec![
                Value::Code(f.function.clone()),
                Value::Code(l.place.clone()),
                l.instruction
                    .as_ref()
                    .map_or(Value::from(String::new()), |i| Value::Code(i.clone())),
                pct(l.pct).into(),
            ]);
        }
    }
    (!t.is_empty()).then_some(t)
}

/// Hot lines against the baseline's, matched by function and `file:line`: samples per
/// million operations, "-" where a profile did not keep the line.
pub fn hotspot_line_diff(p: &ProfileRecord, baseline: &str) -> Option<Table> {
    let mut t = Table::new(
        "line diff",
        &["function", "line", "baseline#", "this variant#", "change#"],
    )
    .titled(format!(
        "Lines against {baseline} (samples per million operations; - where that profile did not keep the line among its function's hottest)"
    ));
    let per_mop = |x: Option<f64>| x.map_or("-".to_string(), |x| fixed(x, 0));
    for d in p.line_diff.iter().take(12) {
        t.push(vec![
            Value::Code(d.function.clone()),
            Value::Code(d.place.clone()),
            per_mop(d.base_per_mop).into(),
            per_mop(d.other_per_mop).into(),
            d.change
                .map_or("-".into(), |x| format!("{:+.1}%", 100.0 * x))
                .into(),
        ]);
    }
    (!t.is_empty()).then_some(t)
}

/// SQL cells: latency per statement kind, from each cell's median-throughput valid run.
pub fn statements(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "statements",
        &[
            "workload", "conns#", "variant", "round#", "kind", "count#", "p50 us#", "p99 us#",
            "max us#",
        ],
    );
    for c in &r.cells {
        let mut valid: Vec<&Run> = c
            .runs
            .iter()
            .filter(|x| x.valid && !x.statements.is_empty())
            .collect();
        if valid.is_empty() {
            continue;
        }
        valid.sort_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
        let run = valid[valid.len() / 2];
        for (kind, k) in &run.statements {
            let mut row = cell_key(c).to_vec();
            row.extend([
                (run.round.saturating_add(1)).to_string().into(),
                kind.clone().into(),
                ops(k.count as f64).into(),
                micros(k.latency_us.p50).into(),
                micros(k.latency_us.p99).into(),
                micros(k.latency_us.max).into(),
            ]);
            t.push(row);
        }
    }
    (!t.is_empty()).then_some(t)
}

/// Every run: throughput, latency, CPU per operation, errors, flags and its logs.
pub fn runs(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "runs",
        &[
            "workload",
            "conns#",
            "variant",
            "round#",
            "ops/s#",
            "p50 us#",
            "p99 us#",
            "client us/op#",
            "server us/op#",
            "errors#",
            "misses#",
            "verify#",
            "flags",
            "logs",
        ],
    );
    for c in &r.cells {
        for run in &c.runs {
            let mut flags = summary::run_flags(run);
            flags.extend(run.probe_errors.iter().map(|p| format!("probe: {p}")));
            let logs: Vec<(String, String)> = [("server", &run.server_log), ("hdr", &run.hdr_log)]
                .into_iter()
                .filter_map(|(word, path)| Some((word.to_string(), path.clone()?)))
                .collect();
            let mut row = cell_key(c).to_vec();
            row.extend([
                (run.round.saturating_add(1)).to_string().into(),
                ops(run.ops_per_s).into(),
                micros(run.latency_us.p50).into(),
                micros(run.latency_us.p99).into(),
                fixed(run.client_cpu_us_per_op, 2).into(),
                fixed(run.server_cpu_us_per_op, 2).into(),
                run.errors.to_string().into(),
                run.misses.to_string().into(),
                run.verify_failures.to_string().into(),
                Value::Long(flags.join("; ")),
                Value::Files(logs),
            ]);
            t.push(row);
        }
    }
    (!t.is_empty()).then_some(t)
}

/// `bakeoff compare`: each compared cell over the recorded runs of its experiment, with
/// where its median shifted.
pub fn history(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "history",
        &[
            "experiment",
            "workload",
            "conns#",
            "variant",
            "runs#",
            "first ops/s#",
            "last ops/s#",
            "shifts",
        ],
    )
    .note("Every recorded run of the experiment in the history, oldest first: its cell's median ops/s. Shifts: change points found by e-divisive means with a permutation test (a flat series is marked in about 5% of cells), each as the history id of the first run after it and the medians before and after.");
    for h in &r.history {
        let (Some(first), Some(last)) = (h.points.first(), h.points.last()) else {
            continue;
        };
        let shifts: Vec<String> = h
            .changes
            .iter()
            .filter_map(|c| {
                let p = h.points.get(c.index)?;
                Some(format!(
                    "#{} ({}): {} → {} (p {:.3})",
                    p.id,
                    p.time,
                    ops(c.before),
                    ops(c.after),
                    c.p
                ))
            })
            .collect();
        t.push(vec![
            h.experiment.clone().into(),
            h.workload.clone().into(),
            h.connections.to_string().into(),
            Value::Variant(h.variant.clone()),
            h.points.len().to_string().into(),
            ops(first.median_ops_per_s).into(),
            ops(last.median_ops_per_s).into(),
            Value::Long(if shifts.is_empty() {
                "none".into()
            } else {
                shifts.join("; ")
            }),
        ]);
    }
    (!t.is_empty()).then_some(t)
}

/// Redis cells: INFO memory, medians over valid runs, at the start of the measured window
/// and at the end of the run.
pub fn memory(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "memory",
        &[
            "workload",
            "conns#",
            "variant",
            "used MiB at start#",
            "used MiB at end#",
            "RSS MiB at end#",
            "fragmentation#",
            "keys#",
            "bytes/key#",
        ],
    )
    .note("Redis's INFO memory: used is what the allocator handed out, RSS what is resident, fragmentation RSS / used; bytes/key is used_memory_dataset / keys. Medians over valid runs; start is when the measured window began (after the preload and the warmup), end after the run.");
    let mib = |b: f64| fixed(b / 1048576.0, 2);
    for c in &r.cells {
        let valid: Vec<&Run> = c.runs.iter().filter(|x| x.valid).collect();
        let end: Vec<_> = valid.iter().filter_map(|x| x.memory.as_ref()).collect();
        if end.is_empty() {
            continue;
        }
        let start: Vec<f64> = valid
            .iter()
            .filter_map(|x| x.memory_at_start.as_ref())
            .map(|m| m.used_memory as f64)
            .collect();
        let med = |f: &dyn Fn(&crate::model::MemoryRecord) -> f64| {
            median(end.iter().map(|m| f(m)).collect())
        };
        let mut row = cell_key(c).to_vec();
        row.extend([
            if start.is_empty() {
                "-".into()
            } else {
                mib(median(start))
            }
            .into(),
            mib(med(&|m| m.used_memory as f64)).into(),
            mib(med(&|m| m.used_memory_rss as f64)).into(),
            fixed(med(&|m| m.fragmentation_ratio), 2).into(),
            ops(med(&|m| m.keys as f64)).into(),
            fixed(med(&|m| m.bytes_per_key), 1).into(),
        ]);
        t.push(row);
    }
    (!t.is_empty()).then_some(t)
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Each binary's code against the baseline's: `.text` size and the functions whose size
/// changed most.
pub fn binaries(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "binaries",
        &[
            "variant",
            "code bytes#",
            "vs baseline#",
            "functions whose size changed most (baseline → this build)",
        ],
    )
    .note("Sizes from the binaries themselves (size -A, nm -S): code bytes are .text and its split parts (.text.cold...; BOLT's copy of the original code, .bolt.org.text, is not counted); functions are listed where the binaries have symbols. A compiler setting's effect shows here beside the hotspot diff of the profiles.");
    for v in &r.variants {
        let Some(a) = &v.anatomy else { continue };
        let changed: Vec<String> = a
            .changed
            .iter()
            .take(6)
            .map(|f| format!("{} {} → {}", f.function, f.baseline_bytes, f.bytes))
            .collect();
        t.push(vec![
            Value::Variant(v.name.clone()),
            ops(a.text_bytes as f64).into(),
            a.baseline_text_bytes
                .filter(|b| *b > 0)
                .map_or("-".into(), |b| {
                    format!("{:.3}", a.text_bytes as f64 / b as f64)
                })
                .into(),
            Value::Long(if changed.is_empty() {
                "-".into()
            } else {
                changed.join("; ")
            }),
        ]);
    }
    (t.rows.len() > 1).then_some(t)
}

/// `[plan] layouts` above 1: per variant and cell, how the runs spread between runs of one
/// binary and between the variant's code layouts, with each layout's median.
pub fn layouts(r: &Results) -> Option<Table> {
    if r.plan.layouts < 2 {
        return None;
    }
    let mut t = Table::new(
        "layouts",
        &[
            "workload",
            "conns#",
            "variant",
            "layouts#",
            "between runs ±%#",
            "between layouts ±%#",
            "layout range %#",
            "median per layout (ops/s)",
        ],
    )
    .note(format!(
        "Each build variant was built {} times with its functions in another order (the linker's section shuffle, seeded), round r running layout r mod {}, and every server start had its environment padded to a random size. Between runs: the standard deviation of one binary's runs; between layouts: that of the layouts' own levels beyond what the runs explain (random-effects estimate). A comparison against the baseline is made over the layouts (one estimate per layout, Student's t over them), so its CI includes the layouts' luck; a difference no larger than the layout range of either variant is flagged. An installed binary has one layout.",
        r.plan.layouts, r.plan.layouts
    ));
    for c in &r.cells {
        let mut row = cell_key(c).to_vec();
        match &c.layouts {
            Some(l) => row.extend([
                l.layouts.to_string().into(),
                pct(l.between_runs * 100.0).into(),
                pct(l.between_layouts * 100.0).into(),
                pct(l.range * 100.0).into(),
                Value::Long(
                    l.medians
                        .iter()
                        .map(|m| ops(*m))
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            ]),
            None => row.extend([
                "1".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                Value::Long("one binary".into()),
            ]),
        }
        t.push(row);
    }
    (!t.is_empty()).then_some(t)
}

/// SQL variants' data loads: once per variant, before any measured run.
pub fn data_loads(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "data",
        &["variant", "workloads", "rows#", "seconds#", "MiB#"],
    );
    for v in &r.variants {
        for d in &v.data {
            t.push(vec![
                Value::Variant(v.name.clone()),
                d.workloads.join(", ").into(),
                ops(d.rows as f64).into(),
                fixed(d.seconds, 1).into(),
                fixed(d.bytes as f64 / 1048576.0, 1).into(),
            ]);
        }
    }
    (!t.is_empty()).then_some(t)
}

/// The other hosts (`[[host]]`): what each is and does.
pub fn hosts(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "hosts",
        &["host", "ssh", "roles", "cores#", "cpu", "kernel", "listen"],
    )
    .note("As each host described itself when bakeoff reached it over ssh. A server listening on another address than loopback is reachable from the host's network while the experiment runs.");
    for h in &r.hosts {
        t.push(vec![
            h.name.clone().into(),
            h.ssh.clone().into(),
            h.roles.join(", ").into(),
            h.cores.to_string().into(),
            h.cpu_model.clone().into(),
            h.kernel.clone().into(),
            // Where its server listens; a host that only loads serves nothing.
            if h.roles.iter().any(|r| r == "server") {
                h.listen.clone().unwrap_or_else(|| "127.0.0.1".into())
            } else {
                String::new()
            }
            .into(),
        ]);
    }
    (!t.is_empty()).then_some(t)
}

/// Cells loaded from several hosts: each host's share, medians over valid runs.
pub fn client_hosts(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "client-hosts",
        &[
            "workload",
            "conns#",
            "variant",
            "client host",
            "its conns#",
            "ops/s#",
            "client CPU µs/op#",
            "host CPU busy %#",
            "client-bound runs#",
        ],
    )
    .note("Each client host's part of the cell's runs, medians over valid runs: its connections, the ops/s it completed, its load engine's CPU per operation, and how busy its CPUs were over the measured window (100 - idle, from its /proc sampler). A client-bound host limits the cell's throughput: add hosts or connections elsewhere.");
    for c in &r.cells {
        let valid: Vec<&Run> = c.runs.iter().filter(|x| x.valid).collect();
        let Some(first) = valid.iter().find(|x| !x.clients.is_empty()) else {
            continue;
        };
        for (i, h) in first.clients.iter().enumerate() {
            let parts: Vec<&crate::model::ClientRecord> =
                valid.iter().filter_map(|x| x.clients.get(i)).collect();
            let med = |f: &dyn Fn(&crate::model::ClientRecord) -> f64| {
                median(parts.iter().map(|p| f(p)).collect())
            };
            let mut row = cell_key(c).to_vec();
            row.extend([
                h.host.clone().into(),
                h.connections.to_string().into(),
                ops(med(&|p| p.ops_per_s)).into(),
                if parts.iter().all(|p| p.ops > 0) {
                    fixed(med(&|p| p.client_cpu_s * 1e6 / p.ops as f64), 2)
                } else {
                    "-".into()
                }
                .into(),
                if parts.iter().all(|p| p.cpu_idle_pct + p.cpu_user_pct > 0.0) {
                    fixed(med(&|p| 100.0 - p.cpu_idle_pct), 1)
                } else {
                    "-".into()
                }
                .into(),
                parts
                    .iter()
                    .filter(|p| p.client_bound)
                    .count()
                    .to_string()
                    .into(),
            ]);
            t.push(row);
        }
    }
    (!t.is_empty()).then_some(t)
}
