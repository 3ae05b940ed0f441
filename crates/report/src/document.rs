//! The report as one document: a title, a few opening paragraphs, and sections of blocks
//! (tables, charts, text, lists, code), built once from the results by
//! [`crate::outline::document`]. report.md, report.html and the terminal summary only
//! render these blocks (`markdown.rs`, `html.rs`, `terminal.rs`), so they show the same
//! sections in the same order under the same titles.
//!
//! A workload kind with figures of its own adds its sections through [`KindSections`]
//! (the workload registry; [`NoKinds`] adds none); the outline places them after the
//! throughput sections without knowing what they hold.
//!
//! A block is shown in report.html and report.md unless it sits in [`Block::Only`], which
//! names the media it is for: the terminal summary shows only blocks marked for it, and a
//! few blocks exist in one format only (the build cards of the page; the per-round ratios
//! the page draws as dots).

use crate::model::{Results, Verdict};
use crate::svg::{BarChart, Interval, LineChart, StackedBars};
use crate::table::Table;

/// Where a block is shown: a set of the three outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Media(u8);

impl Media {
    pub const HTML: Media = Media(1);
    pub const MARKDOWN: Media = Media(2);
    pub const TERMINAL: Media = Media(4);
    /// report.html and report.md: where every block is shown unless it says otherwise.
    pub const PAGE: Media = Media(3);
    /// Every output, the terminal summary included.
    pub const ALL: Media = Media(7);

    /// Whether this set holds `m`.
    pub fn has(self, m: Media) -> bool {
        self.0 & m.0 != 0
    }
}

/// A piece of running text, typed so each output marks it its own way.
#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    Text(String),
    /// Emphasis (bold).
    Strong(String),
    /// Monospace: a name, a path, a command.
    Code(String),
    /// Monospace with a tooltip on the page (a hash shortened, the tooltip in full).
    CodeTip(String, String),
    /// A variant's name (the page: with its colour swatch).
    Variant(String),
    /// Secondary words (the page: greyed).
    Muted(Vec<Span>),
    /// A file in the results folder (or `#id`, a section of the page), with its words.
    Link {
        text: String,
        path: String,
    },
    /// A word in a coloured badge (the page); bold elsewhere. `class`: ok, bad, warn,
    /// baseline or a verdict.
    Badge {
        class: String,
        text: String,
    },
    /// A line break inside one value.
    Break,
}

/// Running text: spans in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inline(pub Vec<Span>);

impl Inline {
    pub fn new() -> Inline {
        Inline(Vec::new())
    }

    /// Adds a span.
    pub fn and(mut self, s: Span) -> Inline {
        self.0.push(s);
        self
    }

    /// Adds words.
    pub fn text(self, s: impl Into<String>) -> Inline {
        self.and(Span::Text(s.into()))
    }

    /// Adds monospace words.
    pub fn code(self, s: impl Into<String>) -> Inline {
        self.and(Span::Code(s.into()))
    }

    /// The words without marks.
    pub fn plain(&self) -> String {
        spans_plain(&self.0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn spans_plain(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(t) | Span::Strong(t) | Span::Code(t) | Span::Variant(t) => t.clone(),
            Span::CodeTip(t, _) => t.clone(),
            Span::Muted(inner) => spans_plain(inner),
            Span::Link { text, .. } | Span::Badge { text, .. } => text.clone(),
            Span::Break => ", ".into(),
        })
        .collect()
}

impl From<String> for Inline {
    fn from(s: String) -> Inline {
        Inline(vec![Span::Text(s)])
    }
}

impl From<&str> for Inline {
    fn from(s: &str) -> Inline {
        Inline(vec![Span::Text(s.to_string())])
    }
}

/// A chart as `svg.rs` draws it (the page only).
#[derive(Debug, Clone)]
pub enum Chart {
    Line(LineChart),
    Bars(BarChart),
    Stacked(StackedBars),
}

/// A group of charts, with a heading and a caption that are shown only when a chart is
/// drawn (report.md and the terminal draw none, so they show neither).
#[derive(Debug, Clone, Default)]
pub struct Charts {
    pub heading: Option<String>,
    pub charts: Vec<Chart>,
    /// Small charts side by side in a grid.
    pub grid: bool,
    pub caption: Option<String>,
}

/// A table whose rows each have an interval drawn in a column of their own on the page
/// (the verdicts: each ratio's 95% CI and per-round ratios on one shared axis).
#[derive(Debug, Clone)]
pub struct IntervalTable {
    pub table: Table,
    /// One per row.
    pub intervals: Vec<Interval>,
    /// The column the intervals are drawn before.
    pub at: usize,
    /// The drawn column's header.
    pub header: String,
    pub axis_label: String,
    pub reference: f64,
    /// One per row: the verdict colouring its ratio.
    pub verdicts: Vec<Verdict>,
    /// One per row: what the row's variant is compared with (shown beside its name).
    pub against: Vec<String>,
}

/// Key-value facts under a caption (a variant's build, the plan, the host).
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    pub caption: Inline,
    pub rows: Vec<(String, Inline)>,
}

/// One block of a section.
#[derive(Debug, Clone)]
pub enum Block {
    /// A heading inside a section (the page: h3; the terminal: a line of its own).
    Heading(Inline),
    /// A paragraph; `class` is a style the page may give it ("caption", "meta", "host").
    Text {
        class: &'static str,
        text: Inline,
    },
    /// A bulleted (or numbered) list.
    List {
        class: &'static str,
        numbered: bool,
        items: Vec<Inline>,
    },
    /// Warnings, each in bold (the terminal: `warning: ...`).
    Warnings(Vec<String>),
    /// The warnings about one comparison under a line naming it (`about`).
    WarningGroup {
        about: String,
        warnings: Vec<String>,
    },
    Table(Table),
    Verdicts(Box<IntervalTable>),
    Charts(Charts),
    /// Preformatted text; `lang` names its language for a markdown fence.
    Pre {
        lang: &'static str,
        text: String,
    },
    /// Blocks behind a summary line (the page: folded).
    Details {
        summary: Inline,
        blocks: Vec<Block>,
    },
    /// Facts side by side.
    Cards(Vec<Card>),
    /// Blocks shown only in these media.
    Only(Media, Vec<Block>),
}

impl Block {
    /// A plain paragraph.
    pub fn text(t: impl Into<Inline>) -> Block {
        Block::Text {
            class: "",
            text: t.into(),
        }
    }

    /// A paragraph that explains the figures above or below it.
    pub fn caption(t: impl Into<Inline>) -> Block {
        Block::Text {
            class: "caption",
            text: t.into(),
        }
    }

    /// A bulleted list.
    pub fn bullets(items: Vec<Inline>) -> Block {
        Block::List {
            class: "",
            numbered: false,
            items,
        }
    }

    /// This block in every output, the terminal summary included.
    pub fn everywhere(self) -> Block {
        Block::Only(Media::ALL, vec![self])
    }

    /// This block in these media only.
    pub fn only(self, m: Media) -> Block {
        Block::Only(m, vec![self])
    }
}

/// How the page frames a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Frame {
    #[default]
    Plain,
    /// A red box: something went wrong.
    Warn,
    /// An amber box: something is missing.
    Note,
}

/// One section: an anchor, its name in the page's navigation (none: left out of it), a
/// title and its blocks. An output leaves a section out when none of its blocks shows
/// anything there.
#[derive(Debug, Clone)]
pub struct Section {
    pub id: &'static str,
    pub nav: Option<&'static str>,
    pub title: Inline,
    pub frame: Frame,
    pub blocks: Vec<Block>,
}

impl Section {
    pub fn new(id: &'static str, nav: &'static str, title: impl Into<Inline>) -> Section {
        Section {
            id,
            nav: Some(nav),
            title: title.into(),
            frame: Frame::Plain,
            blocks: Vec::new(),
        }
    }

    /// Left out of the page's navigation.
    pub fn unlisted(mut self) -> Section {
        self.nav = None;
        self
    }

    pub fn framed(mut self, f: Frame) -> Section {
        self.frame = f;
        self
    }

    pub fn push(&mut self, b: Block) {
        self.blocks.push(b);
    }

    pub fn with(mut self, b: Block) -> Section {
        self.blocks.push(b);
        self
    }
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Document {
    /// "bakeoff: <experiment>".
    pub title: String,
    /// What comes before the first section: the description, status and host.
    pub intro: Vec<Block>,
    pub sections: Vec<Section>,
    /// Variants in colour order: a variant's position is its palette index.
    pub variants: Vec<String>,
    /// Where the document came from (the page's footer).
    pub footer: String,
}

impl Document {
    /// A variant's palette index (0 for a name no variant has).
    pub fn color(&self, v: &str) -> usize {
        self.variants.iter().position(|x| x == v).unwrap_or(0)
    }
}

/// What a workload kind adds to the report: its own sections, placed by the outline
/// after the throughput sections. The workload registry implements this; a kind adds its
/// sections there and the outline stays as it is.
pub trait KindSections {
    fn sections(&self, r: &Results) -> Vec<Section>;
}

/// No kind sections: the report of the figures every experiment has.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKinds;

impl KindSections for NoKinds {
    fn sections(&self, _r: &Results) -> Vec<Section> {
        Vec::new()
    }
}

/// Variants in colour order: the experiment's, then any only named by cells.
pub fn variant_order(r: &Results) -> Vec<String> {
    let mut seen: std::collections::HashSet<&str> =
        r.variants.iter().map(|v| v.name.as_str()).collect();
    let mut out: Vec<String> = r.variants.iter().map(|v| v.name.clone()).collect();
    for c in &r.cells {
        if seen.insert(c.variant.as_str()) {
            out.push(c.variant.clone());
        }
    }
    out
}
