//! The neutral table every report section is built as, once: a title, columns (which ones
//! hold figures), rows of typed cells and the notes under it. Markdown, HTML and the
//! terminal render the same [`Table`] their own way: a variant's name gets its colour
//! swatch in HTML, a verdict its badge, a file its link; the words and figures are the same
//! everywhere.

use crate::markup::{escape, md, md_cell, md_code, md_line, md_link};
use crate::model::Verdict;

/// One cell, typed so each renderer can show it its own way.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Words or a formatted figure.
    Text(String),
    /// A variant's name (HTML: with its colour swatch).
    Variant(String),
    /// A function name, flags, a command (monospace).
    Code(String),
    /// Files in the results folder, each with the word its link shows.
    Files(Vec<(String, String)>),
    /// A verdict in a few words ("slower -4.8%"), coloured by its kind.
    Verdict(Verdict, String),
    /// Free text that may wrap (flags, reasons).
    Long(String),
    /// The baseline's own place in a verdict column.
    Baseline,
}

impl Value {
    /// The cell as plain text (the terminal; markdown before its own marks).
    pub fn plain(&self) -> String {
        match self {
            Value::Text(s) | Value::Variant(s) | Value::Code(s) | Value::Long(s) => s.clone(),
            Value::Verdict(_, s) => s.clone(),
            Value::Baseline => "baseline".into(),
            Value::Files(f) => f
                .iter()
                .map(|(text, _)| text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

/// A column: its header and whether it holds figures (right-aligned).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub numeric: bool,
}

/// A table as a section shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// HTML class and a stable name for the table.
    pub class: &'static str,
    /// A heading of its own, where a section holds several tables ("" when none).
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
    /// Sentences under the table: what the figures are.
    pub notes: Vec<String>,
}

impl Column {
    /// A column of words.
    pub fn text(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            numeric: false,
        }
    }

    /// A column of figures.
    pub fn figure(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            numeric: true,
        }
    }
}

impl Table {
    /// A table of these columns, rows of words and figures.
    pub fn of(class: &'static str, columns: Vec<Column>, rows: Vec<Vec<String>>) -> Table {
        Table {
            class,
            title: String::new(),
            columns,
            rows: rows
                .into_iter()
                .map(|r| r.into_iter().map(Value::Text).collect())
                .collect(),
            notes: Vec::new(),
        }
    }

    /// A table with these columns: a name ending in `#` holds figures (the `#` is dropped).
    pub fn new(class: &'static str, columns: &[&str]) -> Table {
        Table {
            class,
            title: String::new(),
            columns: columns
                .iter()
                .map(|c| match c.strip_suffix('#') {
                    Some(name) => Column {
                        name: name.to_string(),
                        numeric: true,
                    },
                    None => Column {
                        name: c.to_string(),
                        numeric: false,
                    },
                })
                .collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn titled(mut self, title: impl Into<String>) -> Table {
        self.title = title.into();
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Table {
        self.notes.push(note.into());
        self
    }

    pub fn push(&mut self, row: Vec<Value>) {
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header names.
    pub fn header(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// Every cell as plain text.
    pub fn plain_rows(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|r| r.iter().map(Value::plain).collect())
            .collect()
    }

    /// A GitHub-flavoured markdown table (no title, no notes): code in backticks, verdicts
    /// in bold, files as relative links; every header and cell is text ([`md_cell`]), whatever
    /// it holds, so a name cannot end a cell, make a link or carry markup.
    pub fn markdown(&self) -> String {
        let esc = md_cell;
        let header: Vec<String> = self.columns.iter().map(|c| esc(&c.name)).collect();
        let mut out = format!("| {} |\n", header.join(" | "));
        out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .map(|v| match v {
                    Value::Code(s) => md_code(&s.replace('|', "\\|")),
                    Value::Verdict(_, s) => format!("**{}**", esc(s)),
                    Value::Files(f) => f
                        .iter()
                        .map(|(text, path)| match is_relative(path) {
                            true => format!("[{}]({})", esc(text), md_link(path)),
                            false => md_code(&path.replace('|', "\\|")),
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    other => esc(&other.plain()),
                })
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }

    /// The table, then its notes as one paragraph, the way report.md shows a section.
    pub fn markdown_with_notes(&self) -> String {
        let mut s = self.markdown();
        if !self.notes.is_empty() {
            s.push('\n');
            s.push_str(&md_line(&md(&self.notes.join(" "))));
            s.push('\n');
        }
        s
    }

    /// An aligned plain-text table for the terminal: figures right-aligned.
    pub fn plain(&self) -> String {
        self.terminal(false)
    }

    /// An aligned plain-text table for the terminal, verdicts in their colours when `color`;
    /// control characters from the results are shown escaped, never sent raw.
    pub fn terminal(&self, color: bool) -> String {
        let header: Vec<String> = self
            .columns
            .iter()
            .map(|c| crate::format::printable(&c.name))
            .collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| crate::format::printable(&v.plain()))
                    .collect()
            })
            .collect();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String], values: Option<&[Value]>| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| {
                    let padded = if self.columns.get(i).is_some_and(|c| c.numeric) {
                        format!("{c:>w$}")
                    } else {
                        format!("{c:<w$}")
                    };
                    match values.and_then(|v| v.get(i)) {
                        Some(Value::Verdict(k, _)) if color => {
                            crate::format::paint(&padded, Some(*k))
                        }
                        _ => padded,
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&header, None);
        out.push_str(&line(
            &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
            None,
        ));
        for (r, v) in rows.iter().zip(&self.rows) {
            out.push_str(&line(r, Some(v)));
        }
        out
    }

    /// An HTML table; `variant` renders a variant's name (with its swatch). Figures
    /// right-aligned, every string escaped, notes as a caption.
    pub fn html(&self, variant: &dyn Fn(&str) -> String) -> String {
        let num = |i: usize| match self.columns.get(i) {
            Some(c) if c.numeric => " class=\"num\"",
            // The answer column stays in view when the table scrolls sideways.
            Some(c) if c.name == "verdict" => " class=\"verdict\"",
            _ => "",
        };
        let mut s = format!(
            "<div class=\"scroll\"><table class=\"{}\"><thead><tr>",
            self.class
        );
        for (i, c) in self.columns.iter().enumerate() {
            s.push_str(&format!("<th{}>{}</th>", num(i), escape(&c.name)));
        }
        s.push_str("</tr></thead><tbody>\n");
        for row in &self.rows {
            s.push_str("<tr>");
            for (i, v) in row.iter().enumerate() {
                s.push_str(&format!("<td{}>{}</td>", num(i), html_value(v, variant)));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table></div>\n");
        if !self.notes.is_empty() {
            s.push_str(&format!(
                "<p class=\"caption\">{}</p>\n",
                escape(&self.notes.join(" "))
            ));
        }
        s
    }
}

/// One cell's HTML.
pub fn html_value(v: &Value, variant: &dyn Fn(&str) -> String) -> String {
    match v {
        Value::Text(s) => escape(s),
        Value::Variant(s) => variant(s),
        Value::Code(s) => code(s),
        Value::Files(f) => f
            .iter()
            .map(|(text, path)| file_link(path, text))
            .collect::<Vec<_>>()
            .join(" "),
        Value::Verdict(k, s) => {
            format!("<span class=\"badge {}\">{}</span>", k.as_str(), escape(s))
        }
        Value::Baseline => "<span class=\"badge baseline\">baseline</span>".into(),
        Value::Long(s) if s.is_empty() => String::new(),
        Value::Long(s) => format!("<span class=\"wrap\">{}</span>", escape(s)),
    }
}

/// Monospace HTML.
pub fn code(s: &str) -> String {
    format!("<code>{}</code>", escape(s))
}

/// A link to a file in the results folder, or plain code when the path is not a plain
/// relative path (nothing that could be a URL with a scheme).
pub fn file_link(path: &str, text: &str) -> String {
    if is_relative(path) {
        format!("<a href=\"{}\">{}</a>", escape(path), escape(text))
    } else {
        code(path)
    }
}

/// Whether `path` is one of our own links: a plain relative path inside the results
/// folder (letters, digits and `-_.+~/` only, no `..` step, not from the root; nothing
/// that could be a URL with a scheme), or `#id`, a section of the page.
pub fn is_relative(path: &str) -> bool {
    let safe = |s: &str, more: &[u8]| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b) || more.contains(&b))
    };
    if let Some(id) = path.strip_prefix('#') {
        return safe(id, b"");
    }
    safe(path, b".+~/") && !path.starts_with('/') && !path.split('/').any(|step| step == "..")
}

/// A figure with `digits` decimals, "-" when there is none.
pub fn fixed(v: f64, digits: usize) -> String {
    if v.is_finite() {
        format!("{v:.digits$}")
    } else {
        "-".into()
    }
}

/// An optional figure, "-" when absent.
pub fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| fixed(v, digits))
}

/// A percentage as the tables show it.
pub fn pct(v: f64) -> String {
    fixed(v, 1)
}

/// Bytes in decimal units.
pub fn bytes(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} GB", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1} MB", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} kB", x / 1e3)
    } else {
        format!("{x:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t =
            Table::new("t", &["variant", "ops/s#", "function", "logs", "verdict"]).note("Medians.");
        t.push(vec![
            Value::Variant("a|b".into()),
            "1,000".into(),
            Value::Code("f<T>".into()),
            Value::Files(vec![("server".into(), "logs/s.log".into())]),
            Value::Verdict(Verdict::Slower, "slower -4.0%".into()),
        ]);
        t
    }

    #[test]
    fn one_table_renders_the_same_words_everywhere() {
        let t = sample();
        assert_eq!(
            t.markdown_with_notes(),
            "| variant | ops/s | function | logs | verdict |\n|---|---|---|---|---|\n| a\\|b | 1,000 | `f<T>` | [server](logs/s.log) | **slower -4.0%** |\n\nMedians.\n"
        );
        let html = t.html(&|v| format!("<i>{}</i>", escape(v)));
        assert!(html.contains("<th class=\"num\">ops/s</th>"), "{html}");
        assert!(html.contains("<td><i>a|b</i></td>"), "{html}");
        assert!(html.contains("<code>f&lt;T&gt;</code>"), "{html}");
        assert!(html.contains("<a href=\"logs/s.log\">server</a>"), "{html}");
        assert!(html.contains("badge slower"), "{html}");
        assert!(html.contains("<p class=\"caption\">Medians.</p>"), "{html}");
        let plain = t.plain();
        assert!(plain.contains("slower -4.0%"), "{plain}");
        assert!(plain.starts_with("variant"), "{plain}");
    }

    #[test]
    fn absolute_paths_are_not_links() {
        assert_eq!(file_link("/etc/passwd", "x"), "<code>/etc/passwd</code>");
        assert_eq!(file_link("http://x", "x"), "<code>http://x</code>");
    }
}
