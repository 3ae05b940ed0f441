//! How everything was built and run, as the report's last sections: each variant (the
//! page shows a card of its build, text a table of them and of their server options),
//! the plan and the host with the order of runs, and the exact experiment file.

use crate::document::{Block, Card, Inline, Media, Section, Span};
use crate::model::Results;
use crate::summary::{self, ops};
use crate::table::{bytes, Table, Value};

/// Each variant: the page shows a card of its build, text a table of them (and of the
/// server options).
pub fn variants(r: &Results) -> Option<Section> {
    let mut s = Section::new("variants", "Variants", "Variants");
    s.push(Block::Cards(r.variants.iter().map(|v| build_card(r, v)).collect()).only(Media::HTML));
    let mut text = vec![Block::Table(variants_table(r))];
    let with_opts: Vec<_> = r
        .variants
        .iter()
        .filter(|v| !v.options.is_empty())
        .collect();
    if !with_opts.is_empty() {
        let mut t = Table::new("options", &["variant", "options"]);
        for v in with_opts {
            let opts: Vec<String> = v.options.iter().map(|(k, x)| format!("{k}={x}")).collect();
            t.push(vec![Value::Variant(v.name.clone()), opts.join(" ").into()]);
        }
        text.push(Block::Heading("Server options".into()));
        text.push(Block::Table(t));
    }
    s.push(Block::Only(Media::MARKDOWN, text));
    for b in crate::dist::blocks(r) {
        s.push(b);
    }
    Some(s)
}

fn variants_table(r: &Results) -> Table {
    // Machines as variants: which machine each served on, where any ran elsewhere.
    let hosts = r.variants.iter().any(|v| v.host.is_some());
    let mut columns = vec![
        "variant",
        "status",
        "kind",
        "compiler",
        "flags",
        "binary bytes#",
        "sha256",
        "build s#",
        "server args",
    ];
    if hosts {
        columns.insert(1, "host");
    }
    // Servers of several kinds (`[[variant]] kind`): which server each variant is.
    let servers = r.variants.iter().any(|v| v.kind.is_some());
    if servers {
        columns.insert(1, "server");
    }
    // The machine as a variant (`preload`, `thp`, `sysctl`, `cpus`, ...).
    let system = r.variants.iter().any(|v| !v.system.is_empty());
    if system {
        columns.push("system");
    }
    let mut t = Table::new("variants", &columns);
    for v in &r.variants {
        let b = v.build.clone().unwrap_or_default();
        let mut row: Vec<Value> = vec![
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
        ];
        if hosts {
            row.insert(
                1,
                v.host
                    .clone()
                    .unwrap_or_else(|| "this machine".into())
                    .into(),
            );
        }
        if servers {
            row.insert(1, v.kind.clone().unwrap_or_default().into());
        }
        if system {
            row.push(system_items(v).join(" ").into());
        }
        t.push(row);
    }
    t
}

/// A variant's `system` asks, `key=value` each (`preload=jemalloc`, `sysctl
/// vm.swappiness=1`).
fn system_items(v: &crate::model::VariantRecord) -> Vec<String> {
    v.system.iter().map(|(k, x)| format!("{k}={x}")).collect()
}

fn code(s: impl Into<String>) -> Inline {
    Inline(vec![Span::Code(s.into())])
}

/// Code values, one per line.
fn code_lines(items: impl IntoIterator<Item = String>) -> Inline {
    let mut out = Inline::new();
    for (i, s) in items.into_iter().enumerate() {
        if i > 0 {
            out = out.and(Span::Break);
        }
        out = out.code(s);
    }
    out
}

/// One variant's build as facts.
fn build_card(r: &Results, v: &crate::model::VariantRecord) -> Card {
    let mut caption = Inline::new().and(Span::Variant(v.name.clone()));
    if v.name == r.plan.baseline {
        caption = caption.text(" ").and(Span::Badge {
            class: "baseline".into(),
            text: "baseline".into(),
        });
    }
    let mut status = Inline::new().and(Span::Badge {
        class: if v.status == "ok" { "ok" } else { "bad" }.into(),
        text: v.status.clone(),
    });
    if let Some(e) = &v.error {
        status = status.text(format!(" {e}"));
    }
    let mut rows: Vec<(String, Inline)> = vec![("status".into(), status)];
    let mut row = |k: &str, v: Inline| rows.push((k.to_string(), v));
    if let Some(host) = &v.host {
        row("host", host.as_str().into());
    }
    if let Some(bin) = &v.binary {
        row("binary", code(bin.clone()));
    }
    if !v.system.is_empty() {
        row("system", code_lines(system_items(v)));
    }
    if let Some(bd) = &v.build {
        build_rows(bd, &mut row);
    }
    if !v.args.is_empty() {
        row("server args", code(v.args.join(" ")));
    }
    if !v.sanitize.is_empty() {
        row("sanitize", v.sanitize.join(", ").into());
    }
    if let Some(u) = &v.run_under {
        row("run under", u.as_str().into());
    }
    if !v.options.is_empty() {
        row(
            "server options",
            code_lines(v.options.iter().map(|(k, val)| format!("{k}={val}"))),
        );
    }
    if !v.memory_errors.is_empty() {
        row(
            "memory errors",
            Inline(vec![Span::Link {
                text: v.memory_errors.len().to_string(),
                path: "#memory-errors".into(),
            }]),
        );
    }
    Card { caption, rows }
}

/// A build's rows of its variant's card: kind, compiler, flags, patches, the binary's
/// size and hash, the build's time and log.
fn build_rows(bd: &crate::model::BuildRecord, row: &mut dyn FnMut(&str, Inline)) {
    row("kind", bd.kind.as_str().into());
    let compiler = if bd.compiler_version.is_empty() {
        bd.compiler.clone()
    } else if bd.compiler.is_empty() || bd.compiler_version.contains(&bd.compiler) {
        bd.compiler_version.clone()
    } else {
        format!("{} ({})", bd.compiler, bd.compiler_version)
    };
    if !compiler.is_empty() {
        row("compiler", compiler.into());
    }
    if !bd.cflags.is_empty() {
        row("cflags", code(bd.cflags.clone()));
    }
    if !bd.ldflags.is_empty() {
        row("ldflags", code(bd.ldflags.clone()));
    }
    if !bd.configure_args.is_empty() {
        row("configure", code(bd.configure_args.join(" ")));
    }
    if !bd.make_args.is_empty() {
        row("make", code(bd.make_args.join(" ")));
    }
    if !bd.patches.is_empty() {
        row("patches", code_lines(bd.patches.iter().cloned()));
    }
    if bd.binary_bytes > 0 {
        row(
            "binary bytes",
            format!(
                "{} ({})",
                ops(bd.binary_bytes as f64),
                bytes(bd.binary_bytes as f64)
            )
            .into(),
        );
    }
    if !bd.binary_sha256.is_empty() {
        let short: String = bd.binary_sha256.chars().take(12).collect();
        row(
            "sha256",
            Inline(vec![Span::CodeTip(short, bd.binary_sha256.clone())]),
        );
    }
    if bd.kind == "build" {
        row(
            "build time",
            format!(
                "{:.1} s{}",
                bd.seconds,
                if bd.cached { " (cached)" } else { "" }
            )
            .into(),
        );
    }
    if let Some(l) = &bd.log {
        row(
            "build log",
            Inline(vec![Span::Link {
                text: l.clone(),
                path: l.clone(),
            }]),
        );
    }
}

/// The plan, the host and the order of runs.
pub fn plan(r: &Results) -> Option<Section> {
    let p = &r.plan;
    let h = &r.host;
    let measure = match (p.duration_s, p.ops) {
        (Some(d), Some(n)) => format!("{d} s; instruction-count runs {} ops", ops(n as f64)),
        (_, Some(n)) => format!("{} ops", ops(n as f64)),
        (Some(d), None) => format!("{d} s"),
        _ => "?".into(),
    };
    let plan = Card {
        caption: "Plan".into(),
        rows: vec![
            ("plan".into(), summary::plan_text(p).into()),
            ("stopped".into(), summary::stopping_text(r).into()),
            ("measure".into(), measure.into()),
            (
                "baseline".into(),
                Inline(vec![Span::Variant(p.baseline.clone())]),
            ),
        ],
    };
    let mut host: Vec<(String, Inline)> = vec![
        ("CPU".into(), h.cpu_model.as_str().into()),
        ("cores".into(), h.cores.to_string().into()),
        (
            "memory".into(),
            format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64).into(),
        ),
        ("OS".into(), h.os.as_str().into()),
        ("kernel".into(), h.kernel.as_str().into()),
    ];
    if !h.hostname.is_empty() {
        host.push(("hostname".into(), h.hostname.as_str().into()));
    }
    host.extend(
        summary::placement(h)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into())),
    );
    let mut s =
        Section::new("settings", "Plan and host", "Plan and host").with(Block::Cards(vec![
            plan,
            Card {
                caption: "Host".into(),
                rows: host,
            },
        ]));
    if !p.rounds.is_empty() {
        s.push(Block::text(
            "Order of runs (each round shuffled with the seed):",
        ));
        s.push(Block::List {
            class: "",
            numbered: true,
            items: p
                .rounds
                .iter()
                .map(|round| {
                    let mut line = Inline::new();
                    for (i, v) in round.iter().enumerate() {
                        if i > 0 {
                            line = line.text(", ");
                        }
                        line = line.and(Span::Variant(v.clone()));
                    }
                    line
                })
                .collect(),
        });
    }
    Some(s)
}

/// The exact experiment file.
pub fn experiment(r: &Results) -> Option<Section> {
    let e = &r.experiment;
    Some(
        Section::new("experiment", "Experiment file", "Experiment file")
            .with(Block::text(code(e.file.clone())))
            .with(Block::Pre {
                lang: "toml",
                text: e.text.trim_end().to_string(),
            }),
    )
}
