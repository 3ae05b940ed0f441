//! bakeoff-report: the results model ([`model::Results`], i.e. results.json) and the
//! exporters that turn it into files and terminal text. Exporters never run anything:
//! they read saved results and return bytes, so any results folder can be re-rendered
//! offline (`bakeoff report DIR`).

pub mod aa;
pub mod benchstat;
pub mod browser;
pub mod capacity;
pub mod csv;
pub mod dist;
pub mod document;
pub mod facts;
pub mod figures;
pub mod format;
pub mod html;
pub mod index;
pub mod machines;
pub mod markdown;
pub mod markup;
pub mod model;
pub mod outline;
pub mod sections;
pub mod settings;
pub mod summary;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod terminal;
pub mod tune;
pub mod validate;
pub mod verification;
pub mod warning;
pub mod why;

pub use document::{Document, KindSections, NoKinds, Section};
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

/// Where the report gets the workload kinds' sections: the registry, or none (was
/// `Kinds`, a name that said a kind rather than what gives their sections).
pub type SectionSource = &'static (dyn KindSections + Sync);

/// report.md, with the sections of `kinds`.
#[derive(Clone, Copy)]
pub struct Markdown {
    pub kinds: SectionSource,
}

impl Default for Markdown {
    fn default() -> Self {
        Markdown { kinds: &NoKinds }
    }
}

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        markdown::render_with(r, self.kinds).into_bytes()
    }
}

/// report.html: self-contained, charts as inline SVG, with the sections of `kinds`.
#[derive(Clone, Copy)]
pub struct Html {
    pub kinds: SectionSource,
}

impl Default for Html {
    fn default() -> Self {
        Html { kinds: &NoKinds }
    }
}

impl Exporter for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }
    fn render(&self, r: &Results) -> Vec<u8> {
        html::render_with(r, self.kinds).into_bytes()
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

/// Every exporter that writes a file in the results folder, without kind sections.
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    exporters_with(&NoKinds)
}

/// Every exporter that writes a file in the results folder; report.md and report.html
/// show the sections of `kinds`.
pub fn exporters_with(kinds: SectionSource) -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(Json),
        Box::new(Markdown { kinds }),
        Box::new(Html { kinds }),
        Box::new(Csv),
        Box::new(Benchstat),
    ]
}

/// The terminal summary (the document's blocks marked for the terminal): warnings, the
/// headline table and how the rounds ended, each sweep (no kind sections).
pub fn terminal(r: &Results, color: bool) -> String {
    terminal_with(r, color, &NoKinds)
}

/// The terminal summary with `kinds` adding their sections.
pub fn terminal_with(r: &Results, color: bool, kinds: &dyn KindSections) -> String {
    // The answer first: a failed verification (the variants' answers differ, so no
    // speed answers the question), a line per comparison, then the table, then the notes.
    let mut s = String::new();
    use warning::WarningCode::{MemoryErrors, VerifyFailed};
    for w in r
        .coded_warnings()
        .into_iter()
        .filter(|w| matches!(w.code, VerifyFailed | MemoryErrors))
    {
        s.push_str(&format!("warning: {}\n", summary::printable(&w.text)));
    }
    for line in summary::answers(r) {
        s.push_str(&summary::printable(&line));
        s.push('\n');
    }
    if !s.is_empty() {
        s.push('\n');
    }
    s + &terminal::render_document(&outline::document(r, kinds), color)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;
