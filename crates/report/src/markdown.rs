//! report.md: verdicts first, then the full table, the builds, every run, the plan, and
//! the exact experiment file, so the folder explains itself without bakeoff.

use crate::model::{Cell, Results};
use crate::summary::{self, markdown_table, micros, ops, HEADER};
use std::fmt::Write;

pub fn render(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# bakeoff: {}\n", r.name);
    if let Some(d) = &r.description {
        let _ = writeln!(s, "{d}\n");
    }
    let _ = writeln!(
        s,
        "Status: **{}**. Started {}{}. Host: {} ({} cores, {:.1} GiB), {}, kernel {}.\n",
        r.status,
        r.started_utc,
        r.finished_utc
            .as_deref()
            .map(|f| format!(", finished {f}"))
            .unwrap_or_default(),
        r.host.cpu_model,
        r.host.cores,
        r.host.memory_bytes as f64 / (1u64 << 30) as f64,
        r.host.os,
        r.host.kernel
    );
    warnings(&mut s, r);
    crate::replay::verification_markdown(&mut s, r);
    crate::why::memory_errors(&mut s, r);
    verdicts(&mut s, r);
    let _ = writeln!(s, "## All cells\n");
    let rows: Vec<Vec<String>> = summary::rows(r).into_iter().map(|x| x.cells).collect();
    s.push_str(&markdown_table(&HEADER, &rows));
    let _ = writeln!(
        s,
        "\nops/s: median over valid runs with a distribution-free 95% CI; CV: run-to-run coefficient of variation; ratio and verdict: see Verdicts (true coverage in brackets when too few runs allow no 95% interval).\n"
    );
    for sw in crate::sweep::sweeps(r) {
        let _ = writeln!(s, "## {} by connections: {}\n", sw.unit, sw.workload);
        let header: Vec<&str> = sw.header.iter().map(String::as_str).collect();
        s.push_str(&markdown_table(&header, &sw.rows));
        s.push('\n');
    }
    crate::tpcc::markdown(&mut s, r);
    crate::replay::replay_markdown(&mut s, r);
    crate::sqlsuite::markdown(&mut s, r);
    crate::why::instructions(&mut s, r);
    crate::why::system(&mut s, r);
    crate::why::counters(&mut s, r);
    crate::why::profiles(&mut s, r);
    crate::why::notes(&mut s, r);
    variants(&mut s, r);
    data(&mut s, r);
    statements(&mut s, r);
    runs(&mut s, r);
    plan(&mut s, r);
    let _ = writeln!(
        s,
        "## Experiment file\n\n`{}`\n\n```toml\n{}\n```",
        r.experiment.file,
        r.experiment.text.trim_end()
    );
    s
}

fn warnings(s: &mut String, r: &Results) {
    if r.warnings.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Warnings\n");
    for w in &r.warnings {
        let _ = writeln!(s, "- **{w}**");
    }
    s.push('\n');
}

fn verdicts(s: &mut String, r: &Results) {
    if r.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Verdicts (against baseline `{}`)\n", r.plan.baseline);
    let rows: Vec<Vec<String>> = r
        .comparisons
        .iter()
        .map(|c| {
            vec![
                c.workload.clone(),
                c.connections.to_string(),
                c.variant.clone(),
                format!("{:.3}", c.ratio),
                summary::ci_text(c.ci95, c.ci_coverage),
                format!("{:.4}", c.p_value),
                format!("{:.4}", c.p_adjusted),
                format!(
                    "{} {}",
                    c.rounds,
                    if c.paired { "paired" } else { "unpaired" }
                ),
                c.detectable
                    .map(|d| format!("±{:.1}%", d * 100.0))
                    .unwrap_or_else(|| "-".into()),
                format!("**{}**", summary::verdict_text(c)),
            ]
        })
        .collect();
    s.push_str(&markdown_table(
        &[
            "workload",
            "conns",
            "variant",
            "ratio",
            "95% CI",
            "p",
            "p adjusted",
            "rounds",
            "detectable",
            "verdict",
        ],
        &rows,
    ));
    let _ = writeln!(s, "\n{}.\n", summary::stopping_text(r));
    let mut notes = summary::explanations(r);
    notes.extend(summary::disturbed(r));
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    let _ = writeln!(
        s,
        "\n{} Detectable: the CI's half-width, the smallest difference this comparison could tell from none.\n",
        summary::legend(r)
    );
    round_ratios(s, r);
}

/// Each comparison's per-round ratios: the spread its CI summarizes.
fn round_ratios(s: &mut String, r: &Results) {
    if r.comparisons.iter().all(|c| c.round_ratios.is_empty()) {
        return;
    }
    let _ = writeln!(s, "Per-round ratios (candidate / baseline, same round):\n");
    for c in r.comparisons.iter().filter(|c| !c.round_ratios.is_empty()) {
        let xs: Vec<String> = c
            .round_ratios
            .iter()
            .map(|x| format!("{:.3}", x.ratio))
            .collect();
        let spread = c
            .round_spread
            .map(|d| format!(" (spread ±{:.1}%)", d * 100.0))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "- {} x{} {}: {}{spread}",
            c.workload,
            c.connections,
            c.variant,
            xs.join(" ")
        );
    }
    s.push('\n');
}

fn variants(s: &mut String, r: &Results) {
    let _ = writeln!(s, "## Variants\n");
    let rows: Vec<Vec<String>> = r
        .variants
        .iter()
        .map(|v| {
            let b = v.build.clone().unwrap_or_default();
            vec![
                v.name.clone(),
                v.status.clone()
                    + &v.error
                        .as_ref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default(),
                b.kind.clone(),
                b.compiler_version.clone(),
                format!("{} {}", b.cflags, b.ldflags).trim().to_string(),
                if b.binary_bytes > 0 {
                    b.binary_bytes.to_string()
                } else {
                    String::new()
                },
                b.binary_sha256.chars().take(12).collect(),
                if b.kind == "build" {
                    format!(
                        "{:.1}{}",
                        b.seconds,
                        if b.cached { " (cached)" } else { "" }
                    )
                } else {
                    String::new()
                },
                v.args.join(" "),
            ]
        })
        .collect();
    s.push_str(&markdown_table(
        &[
            "variant",
            "status",
            "kind",
            "compiler",
            "flags",
            "binary bytes",
            "sha256",
            "build s",
            "server args",
        ],
        &rows,
    ));
    s.push('\n');
}

/// Server options and data loads of SQL variants.
fn data(s: &mut String, r: &Results) {
    let with_opts: Vec<_> = r
        .variants
        .iter()
        .filter(|v| !v.options.is_empty())
        .collect();
    if !with_opts.is_empty() {
        let _ = writeln!(s, "## Server options\n");
        let rows: Vec<Vec<String>> = with_opts
            .iter()
            .map(|v| {
                let opts: Vec<String> = v.options.iter().map(|(k, x)| format!("{k}={x}")).collect();
                vec![v.name.clone(), opts.join(" ")]
            })
            .collect();
        s.push_str(&markdown_table(&["variant", "options"], &rows));
        s.push('\n');
    }
    let loads: Vec<Vec<String>> = r
        .variants
        .iter()
        .flat_map(|v| {
            v.data.iter().map(|d| {
                vec![
                    v.name.clone(),
                    d.workloads.join(", "),
                    ops(d.rows as f64),
                    format!("{:.1}", d.seconds),
                    format!("{:.1}", d.bytes as f64 / 1048576.0),
                ]
            })
        })
        .collect();
    if !loads.is_empty() {
        let _ = writeln!(s, "## Data loads (once per variant, not measured)\n");
        s.push_str(&markdown_table(
            &["variant", "workloads", "rows", "seconds", "MiB"],
            &loads,
        ));
        s.push('\n');
    }
}

/// SQL cells: latency per statement kind, from each cell's median-throughput valid run.
fn statements(s: &mut String, r: &Results) {
    let mut rows = Vec::new();
    for c in &r.cells {
        let mut valid: Vec<&crate::model::Run> = c
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
            rows.push(vec![
                c.workload.clone(),
                c.connections.to_string(),
                c.variant.clone(),
                (run.round + 1).to_string(),
                kind.clone(),
                ops(k.count as f64),
                micros(k.latency_us.p50),
                micros(k.latency_us.p99),
                micros(k.latency_us.max),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Statements (each cell's median-throughput run)\n");
    s.push_str(&markdown_table(
        &[
            "workload", "conns", "variant", "round", "kind", "count", "p50 us", "p99 us", "max us",
        ],
        &rows,
    ));
    s.push('\n');
}

fn runs(s: &mut String, r: &Results) {
    let _ = writeln!(s, "## Runs\n");
    let mut rows = Vec::new();
    for c in &r.cells {
        for run in &c.runs {
            rows.push(run_row(c, run));
        }
    }
    s.push_str(&markdown_table(
        &[
            "workload",
            "conns",
            "variant",
            "round",
            "ops/s",
            "p50 us",
            "p99 us",
            "client us/op",
            "server us/op",
            "errors",
            "misses",
            "verify",
            "flags",
        ],
        &rows,
    ));
    s.push('\n');
}

fn run_row(c: &Cell, run: &crate::model::Run) -> Vec<String> {
    let flags = summary::run_flags(run);
    vec![
        c.workload.clone(),
        c.connections.to_string(),
        c.variant.clone(),
        (run.round + 1).to_string(),
        ops(run.ops_per_s),
        micros(run.latency_us.p50),
        micros(run.latency_us.p99),
        format!("{:.2}", run.client_cpu_us_per_op),
        format!("{:.2}", run.server_cpu_us_per_op),
        run.errors.to_string(),
        run.misses.to_string(),
        run.verify_failures.to_string(),
        flags.join("; "),
    ]
}

fn plan(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "## Plan\n\n{}; baseline `{}`. {}.\n",
        crate::summary::plan_text(&r.plan),
        r.plan.baseline,
        crate::summary::stopping_text(r)
    );
    let _ = writeln!(s, "Order of runs (each round shuffled with the seed):\n");
    for (i, round) in r.plan.rounds.iter().enumerate() {
        let _ = writeln!(s, "{}. {}", i + 1, round.join(", "));
    }
    s.push('\n');
}
