//! Markup escaping shared by the HTML report (`html.rs`) and its SVG charts (`svg.rs`):
//! every string from results.json goes through it, in text and attributes alike.

/// `s` with `&`, `<` and `>` as entities, and each other character `more` names replaced.
fn entities(s: &str, more: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match (c, more(c)) {
            (_, Some(r)) => out.push_str(r),
            ('&', _) => out.push_str("&amp;"),
            ('<', _) => out.push_str("&lt;"),
            ('>', _) => out.push_str("&gt;"),
            (c, None) => out.push(c),
        }
    }
    out
}

/// Text made safe for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    entities(s, |c| match c {
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    })
}

/// Text for report.md outside code: `&`, `<` and `>` as entities, so that no raw HTML
/// (`<script>`, `<svg onload=...>`), comment (an unclosed `<!--` that would hide the rest)
/// or entity from results.json reaches a markdown renderer; a line break becomes a space,
/// so text cannot start a block of its own.
pub fn md(s: &str) -> String {
    entities(s, |c| {
        matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}').then_some(" ")
    })
}

/// The longest run of backticks in `s`.
fn longest_backticks(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// A markdown code span holding `s` as it is, whatever backticks it has: delimited by one
/// more backtick than its longest run (CommonMark), so nothing in it ends the span early
/// and nothing in it is read as HTML.
pub fn md_code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let ticks = "`".repeat(longest_backticks(&s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// A fenced code block holding `s`, its fence longer than any backtick run in it.
pub fn md_fence(info: &str, s: &str) -> String {
    let fence = "`".repeat((longest_backticks(s) + 1).max(3));
    format!("{fence}{info}\n{s}\n{fence}")
}

/// A relative link's destination in report.md: anything but plain path characters
/// percent-encoded, so it cannot end the link or carry markup.
pub fn md_link(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-_./+~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
