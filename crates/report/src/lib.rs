//! bakeoff-report: the results model ([`model::Results`], i.e. results.json) and the
//! exporters that turn it into files and terminal text. Exporters never run anything:
//! they read saved results and return bytes, so any results folder can be re-rendered
//! offline (`bakeoff report DIR`).

pub mod benchstat;
pub mod csv;
pub mod html;
pub mod markdown;
pub mod markup;
pub mod model;
pub mod replay;
pub mod sections;
pub mod sqlsuite;
pub mod summary;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod tpcc;
pub mod why;

pub use model::Results;

/// Turns results into one file's bytes.
pub trait Exporter {
    /// The file name inside a results folder.
    fn file_name(&self) -> &'static str;
    fn render(&self, r: &Results) -> Vec<u8>;
}

/// results.json, pretty-printed.
pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "results.json"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(r).unwrap_or_default();
        v.push(b'\n');
        v
    }
}

/// report.md.
pub struct Markdown;

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        markdown::render(r).into_bytes()
    }
}

/// report.html: self-contained, charts as inline SVG.
pub struct Html;

impl Exporter for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        html::render(r).into_bytes()
    }
}

/// results.csv: one row per run.
pub struct Csv;

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        "results.csv"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        csv::render(r).into_bytes()
    }
}

/// bench.txt: Go benchmark format, for benchstat.
pub struct Benchstat;

impl Exporter for Benchstat {
    fn file_name(&self) -> &'static str {
        "bench.txt"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        benchstat::render(r).into_bytes()
    }
}

/// Every exporter that writes a file in the results folder.
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(Json),
        Box::new(Markdown),
        Box::new(Html),
        Box::new(Csv),
        Box::new(Benchstat),
    ]
}

/// The terminal summary: warnings first, then the headline table.
pub fn terminal(r: &Results, color: bool) -> String {
    let mut s = String::new();
    for w in &r.warnings {
        s.push_str(&format!("warning: {}\n", summary::printable(w)));
    }
    if !r.warnings.is_empty() {
        s.push('\n');
    }
    s.push_str(&summary::cells_table(r).terminal(color));
    for line in summary::verdict_notes(r).split_inclusive('\n') {
        s.push_str(&summary::printable(line.trim_end_matches('\n')));
        if line.ends_with('\n') {
            s.push('\n');
        }
    }
    for sw in sweep::sweeps(r) {
        s.push_str(&format!("\n{}: {} by connections\n", sw.workload, sw.unit));
        s.push_str(&sw.table.plain());
    }
    if let Some(t) = sections::client_hosts(r) {
        s.push_str("\nload by client host (medians over valid runs)\n");
        s.push_str(&t.plain());
    }
    s.push_str(&tpcc::terminal(r));
    s.push_str(&sqlsuite::terminal(r));
    s
}

#[cfg(test)]
mod tests;
