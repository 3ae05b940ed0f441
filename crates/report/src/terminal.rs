//! The terminal summary: the blocks of the report's document marked for the terminal
//! (warnings, the headline table and how the rounds ended, each sweep, each client
//! host's share, the kinds' own summaries), as aligned plain text. Every string from the
//! results is shown through [`printable`], so nothing in a name reaches the terminal raw.

use crate::document::{Block, Document, Inline, Media};
use crate::summary::printable;

/// The blocks of `d` shown in the terminal, verdicts coloured when `color`.
/// The table of every cell with its verdict (then the notes under it) comes before every
/// other section, warnings included: the answer first.
pub fn render_document(d: &Document, color: bool) -> String {
    let mut s = String::new();
    let first = |sec: &&crate::document::Section| sec.id == "cells";
    for sec in d.sections.iter().filter(first) {
        blocks(&mut s, &sec.blocks, Media::PAGE, color);
    }
    for sec in d.sections.iter().filter(|x| !first(x)) {
        if !s.is_empty() && !s.ends_with("\n\n") {
            s.push('\n');
        }
        blocks(&mut s, &sec.blocks, Media::PAGE, color);
    }
    s
}

fn blocks(s: &mut String, bs: &[Block], shown: Media, color: bool) {
    for b in bs {
        block(s, b, shown, color);
    }
}

fn block(s: &mut String, b: &Block, shown: Media, color: bool) {
    if let Block::Only(m, inner) = b {
        return blocks(s, inner, *m, color);
    }
    if !shown.has(Media::TERMINAL) {
        return;
    }
    let text = |t: &Inline| printable(&t.plain());
    match b {
        Block::Heading(t) => s.push_str(&format!("\n{}\n", text(t))),
        Block::Text { text: t, .. } => s.push_str(&format!("{}\n", text(t))),
        Block::List {
            numbered, items, ..
        } => {
            for (i, it) in items.iter().enumerate() {
                if *numbered {
                    s.push_str(&format!("{}. {}\n", i + 1, text(it)));
                } else {
                    s.push_str(&format!("- {}\n", text(it)));
                }
            }
        }
        Block::Warnings(ws) => {
            for w in ws {
                s.push_str(&format!("warning: {}\n", printable(w)));
            }
            s.push('\n');
        }
        Block::WarningGroup { about, warnings } => {
            s.push_str(&format!("{}:\n", printable(about)));
            for w in warnings {
                s.push_str(&format!("  warning: {}\n", printable(w)));
            }
            s.push('\n');
        }
        Block::Table(t) => s.push_str(&t.terminal(color)),
        Block::Verdicts(v) => s.push_str(&v.table.terminal(color)),
        Block::Pre { text: t, .. } => {
            for line in t.split('\n') {
                s.push_str(&printable(line));
                s.push('\n');
            }
        }
        Block::Details {
            summary,
            blocks: inner,
        } => {
            s.push_str(&format!("\n{}\n", text(summary)));
            blocks(s, inner, shown, color);
        }
        Block::Cards(cards) => {
            for c in cards {
                s.push_str(&format!("\n{}\n", text(&c.caption)));
                for (k, v) in &c.rows {
                    s.push_str(&format!("  {}: {}\n", printable(k), text(v)));
                }
            }
        }
        Block::Charts(_) | Block::Only(..) => {}
    }
}
