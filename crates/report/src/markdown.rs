//! report.md: the report's document ([`crate::document`]) as markdown, so the folder
//! explains itself without bakeoff. Only the rendering of blocks lives here: tables as
//! GitHub tables, text through [`md`], code through [`md_code`] and [`md_fence`]; charts
//! are drawn only on the page, so they show nothing here.

use crate::document::{Block, Document, Inline, KindSections, Media, Span};
use crate::markup::{md, md_code, md_fence, md_line, md_link};
use crate::model::Results;
use crate::table::is_relative;

/// report.md with the built-in kinds' sections.
pub fn render(r: &Results) -> String {
    render_with(r, &crate::NoKinds)
}

/// report.md with `kinds` adding their sections.
pub fn render_with(r: &Results, kinds: &dyn KindSections) -> String {
    render_document(&crate::outline::document(r, kinds))
}

/// A document as markdown.
pub fn render_document(d: &Document) -> String {
    let mut s = format!("# {}\n\n", md_line(&md(&d.title)));
    blocks(&mut s, &d.intro, Media::PAGE);
    for sec in &d.sections {
        let mut body = String::new();
        blocks(&mut body, &sec.blocks, Media::PAGE);
        if body.is_empty() {
            continue;
        }
        s.push_str(&format!("## {}\n\n", md_line(&inline(&sec.title))));
        s.push_str(&body);
    }
    let mut s = s.trim_end().to_string();
    s.push('\n');
    s
}

/// Each block shown in markdown, followed by a blank line.
fn blocks(s: &mut String, bs: &[Block], shown: Media) {
    for b in bs {
        block(s, b, shown);
    }
}

fn block(s: &mut String, b: &Block, shown: Media) {
    if let Block::Only(m, inner) = b {
        return blocks(s, inner, *m);
    }
    if !shown.has(Media::MARKDOWN) {
        return;
    }
    match b {
        Block::Heading(t) => s.push_str(&format!("### {}\n\n", md_line(&inline(t)))),
        Block::Text { text, .. } => s.push_str(&format!("{}\n\n", md_line(&inline(text)))),
        Block::List {
            numbered, items, ..
        } => {
            for (i, it) in items.iter().enumerate() {
                if *numbered {
                    s.push_str(&format!("{}. {}\n", i + 1, md_line(&inline(it))));
                } else {
                    s.push_str(&format!("- {}\n", md_line(&inline(it))));
                }
            }
            s.push('\n');
        }
        Block::Warnings(ws) => {
            for w in ws {
                s.push_str(&format!("- **{}**\n", md(w)));
            }
            s.push('\n');
        }
        Block::WarningGroup { about, warnings } => {
            s.push_str(&format!("{}:\n\n", md_line(&md(about))));
            for w in warnings {
                s.push_str(&format!("- **{}**\n", md(w)));
            }
            s.push('\n');
        }
        Block::Table(t) => {
            s.push_str(&t.markdown_with_notes());
            s.push('\n');
        }
        Block::Verdicts(v) => {
            s.push_str(&v.table.markdown_with_notes());
            s.push('\n');
        }
        Block::Charts(_) => {}
        Block::Pre { lang, text } => {
            s.push_str(&md_fence(lang, text));
            s.push_str("\n\n");
        }
        Block::Details { summary, blocks: b } => {
            s.push_str(&format!("**{}**\n\n", inline(summary)));
            blocks(s, b, shown);
        }
        Block::Cards(cards) => {
            for c in cards {
                s.push_str(&format!("**{}**\n\n", inline(&c.caption)));
                for (k, v) in &c.rows {
                    s.push_str(&format!("- {}: {}\n", md_line(&md(k)), inline(v)));
                }
                s.push('\n');
            }
        }
        Block::Only(..) => {}
    }
}

/// Running text as markdown: every user string through [`md`] or [`md_code`].
pub fn inline(t: &Inline) -> String {
    spans(&t.0)
}

fn spans(ss: &[Span]) -> String {
    ss.iter()
        .map(|sp| match sp {
            Span::Text(t) | Span::Variant(t) => md(t),
            Span::Strong(t) | Span::Badge { text: t, .. } if !t.is_empty() => {
                format!("**{}**", md(t))
            }
            Span::Strong(_) | Span::Badge { .. } => String::new(),
            Span::Code(t) | Span::CodeTip(t, _) => md_code(t),
            Span::Muted(inner) => spans(inner),
            Span::Link { text, path } if path.starts_with('#') => md(text),
            Span::Link { text, path } if is_relative(path) => {
                format!("[{}]({})", md(text), md_link(path))
            }
            Span::Link { path, .. } => md_code(path),
            Span::Break => ", ".into(),
        })
        .collect()
}
