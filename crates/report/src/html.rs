//! report.html (skeleton: to be filled in).

use crate::model::Results;

/// The self-contained HTML report.
pub fn render(r: &Results) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>bakeoff: {}</title></head><body></body></html>\n",
        escape(&r.name)
    )
}

/// Text made safe for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
