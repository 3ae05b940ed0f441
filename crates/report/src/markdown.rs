//! report.md: verdicts first, then the full table, the builds, every run, the plan, and
//! the exact experiment file, so the folder explains itself without bakeoff.

use crate::markup::{md, md_code, md_fence};
use crate::model::Results;
use crate::summary;
use crate::table::{Table, Value};
use std::fmt::Write;

pub fn render(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# bakeoff: {}\n", md(&r.name));
    if let Some(d) = &r.description {
        let _ = writeln!(s, "{}\n", md(d));
    }
    let _ = writeln!(
        s,
        "Status: **{}**. Started {}{}. Host: {} ({} cores, {:.1} GiB), {}, kernel {}.\n",
        md(&r.status),
        md(&r.started_utc),
        r.finished_utc
            .as_deref()
            .map(|f| format!(", finished {}", md(f)))
            .unwrap_or_default(),
        md(&r.host.cpu_model),
        r.host.cores,
        r.host.memory_bytes as f64 / (1u64 << 30) as f64,
        md(&r.host.os),
        md(&r.host.kernel)
    );
    for (what, how) in summary::placement(&r.host) {
        let _ = writeln!(s, "{}: {}.  ", md(what), md(&how));
    }
    s.push('\n');
    warnings(&mut s, r);
    crate::replay::verification_markdown(&mut s, r);
    crate::why::memory_errors(&mut s, r);
    verdicts(&mut s, r);
    let _ = writeln!(s, "## All cells\n");
    s.push_str(&summary::cells_table(r).markdown());
    let _ = writeln!(
        s,
        "\nops/s: median over valid runs with a distribution-free 95% CI; CV: run-to-run coefficient of variation; ratio and verdict: see Verdicts (true coverage in brackets when too few runs allow no 95% interval).\n"
    );
    for sw in crate::sweep::sweeps(r) {
        let _ = writeln!(s, "## {} by connections: {}\n", sw.unit, md(&sw.workload));
        s.push_str(&sw.table.markdown());
        s.push('\n');
    }
    if let Some(t) = crate::sections::history(r) {
        let _ = writeln!(s, "## History of the compared cells\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
    crate::tpcc::markdown(&mut s, r);
    crate::replay::replay_markdown(&mut s, r);
    crate::sqlsuite::markdown(&mut s, r);
    crate::why::instructions(&mut s, r);
    crate::why::system(&mut s, r);
    crate::why::hosts(&mut s, r);
    crate::why::memory(&mut s, r);
    crate::why::counters(&mut s, r);
    crate::why::profiles(&mut s, r);
    crate::why::binaries(&mut s, r);
    crate::why::layouts(&mut s, r);
    crate::why::notes(&mut s, r);
    variants(&mut s, r);
    data(&mut s, r);
    statements(&mut s, r);
    runs(&mut s, r);
    plan(&mut s, r);
    let _ = writeln!(
        s,
        "## Experiment file\n\n{}\n\n{}",
        md_code(&r.experiment.file),
        md_fence("toml", r.experiment.text.trim_end())
    );
    s
}

fn warnings(s: &mut String, r: &Results) {
    if r.warnings.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Warnings\n");
    for w in &r.warnings {
        let _ = writeln!(s, "- **{}**", md(w));
    }
    s.push('\n');
}

fn verdicts(s: &mut String, r: &Results) {
    if r.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## Verdicts (against baseline {})\n",
        md_code(&r.plan.baseline)
    );
    if let Some(t) = crate::sections::verdicts(r) {
        s.push_str(&t.markdown());
    }
    let _ = writeln!(s, "\n{}.\n", md(&summary::stopping_text(r)));
    let mut notes = summary::explanations(r);
    notes.extend(summary::disturbed(r));
    for n in notes {
        let _ = writeln!(s, "- {}", md(&n));
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
            md(&c.workload),
            c.connections,
            md(&c.variant),
            xs.join(" ")
        );
    }
    s.push('\n');
}

fn variants(s: &mut String, r: &Results) {
    let _ = writeln!(s, "## Variants\n");
    let mut t = Table::new(
        "variants",
        &[
            "variant",
            "status",
            "kind",
            "compiler",
            "flags",
            "binary bytes#",
            "sha256",
            "build s#",
            "server args",
        ],
    );
    for v in &r.variants {
        let b = v.build.clone().unwrap_or_default();
        t.push(vec![
            Value::Variant(v.name.clone()),
            (v.status.clone()
                + &v.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default())
                .into(),
            b.kind.clone().into(),
            b.compiler_version.clone().into(),
            format!("{} {}", b.cflags, b.ldflags).trim().into(),
            if b.binary_bytes > 0 {
                b.binary_bytes.to_string()
            } else {
                String::new()
            }
            .into(),
            b.binary_sha256.chars().take(12).collect::<String>().into(),
            if b.kind == "build" {
                format!(
                    "{:.1}{}",
                    b.seconds,
                    if b.cached { " (cached)" } else { "" }
                )
            } else {
                String::new()
            }
            .into(),
            v.args.join(" ").into(),
        ]);
    }
    s.push_str(&t.markdown());
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
        let mut t = Table::new("options", &["variant", "options"]);
        for v in with_opts {
            let opts: Vec<String> = v.options.iter().map(|(k, x)| format!("{k}={x}")).collect();
            t.push(vec![Value::Variant(v.name.clone()), opts.join(" ").into()]);
        }
        s.push_str(&t.markdown());
        s.push('\n');
    }
    if let Some(t) = crate::sections::data_loads(r) {
        let _ = writeln!(s, "## Data loads (once per variant, not measured)\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

/// SQL cells: latency per statement kind, from each cell's median-throughput valid run.
fn statements(s: &mut String, r: &Results) {
    if let Some(t) = crate::sections::statements(r) {
        let _ = writeln!(s, "## Statements (each cell's median-throughput run)\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

fn runs(s: &mut String, r: &Results) {
    if let Some(t) = crate::sections::runs(r) {
        let _ = writeln!(s, "## Runs\n");
        s.push_str(&t.markdown_with_notes());
        s.push('\n');
    }
}

fn plan(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "## Plan\n\n{}; baseline {}. {}.\n",
        md(&crate::summary::plan_text(&r.plan)),
        md_code(&r.plan.baseline),
        md(&crate::summary::stopping_text(r))
    );
    let _ = writeln!(s, "Order of runs (each round shuffled with the seed):\n");
    for (i, round) in r.plan.rounds.iter().enumerate() {
        let _ = writeln!(s, "{}. {}", i + 1, md(&round.join(", ")));
    }
    s.push('\n');
}
