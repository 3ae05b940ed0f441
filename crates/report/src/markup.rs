//! Markup escaping shared by the HTML report (`html.rs`) and its SVG charts (`svg.rs`):
//! every string from results.json goes through it, in text and attributes alike.

/// `s` with `&`, `<` and `>` as entities, each other character `more` names replaced,
/// and what would not show as itself ([`unseen`]) written as its code (`\u{202e}`).
fn entities(s: &str, more: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match (c, more(c)) {
            (_, Some(r)) => out.push_str(r),
            ('&', _) => out.push_str("&amp;"),
            ('<', _) => out.push_str("&lt;"),
            ('>', _) => out.push_str("&gt;"),
            (c, None) if unseen(c) => out.push_str(&code_of(c)),
            (c, None) => out.push(c),
        }
    }
    out
}

/// A character that shows nothing, or something other than itself, where it is printed
/// (an escape sequence's ESC, a bidirectional override, a zero-width space): every control
/// character but a line break, CR or tab, and [`bakeoff_os::name::hidden`] ones.
fn unseen(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || bakeoff_os::name::hidden(c)
}

/// A character as its code, the way the terminal shows it: `\u{1b}`.
fn code_of(c: char) -> String {
    format!("\\u{{{:x}}}", c as u32)
}

/// `s` with each [`unseen`] character as its code.
fn seen(s: &str) -> String {
    if !s.chars().any(unseen) {
        return s.to_string();
    }
    s.chars()
        .map(|c| if unseen(c) { code_of(c) } else { c.to_string() })
        .collect()
}

/// Text made safe for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    entities(s, |c| match c {
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    })
}

/// Text for report.md outside code, shown as the characters it holds wherever it lands
/// (running text, a heading, a list item; [`md_cell`] in a table): `&`, `<` and `>` as
/// entities, so that no raw HTML (`<script>`, `<svg onload=...>`), comment (an unclosed
/// `<!--` that would hide the rest) or entity reaches a markdown renderer; every character
/// that makes inline markup (`\`, `` ` ``, `*`, `~`, `[`, `]`, `$`, `@`, and `_` except
/// inside a word, where it cannot) behind a backslash, so a name makes no link, image,
/// emphasis, code span or math (parentheses stay as they are: without a `]` before them
/// they make nothing); the `:` of `://` and the `.` of `www.` escaped, so no bare URL
/// becomes a link; a line break or other control character becomes a space, so text
/// cannot start a block of its own ([`md_line`] for text that starts a line).
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    let mut chars = s.chars();
    // The last three characters, for "www." and a word around `_`.
    let mut last = ['\0'; 3];
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '~' | '[' | ']' | '$' | '@' => {
                out.push('\\');
                out.push(c);
            }
            '_' if last[2].is_alphanumeric()
                && chars.clone().next().is_some_and(char::is_alphanumeric) =>
            {
                out.push('_')
            }
            '_' => out.push_str("\\_"),
            // "http://x", "javascript://x": a scheme's colon, escaped.
            ':' if starts_with(chars.clone(), "//") => out.push_str("\\:"),
            // "www.x": the dot, escaped.
            '.' if last.iter().all(|l| l.eq_ignore_ascii_case(&'w')) => out.push_str("\\."),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => out.push(' '),
            c if unseen(c) => out.push_str(&code_of(c)),
            c => out.push(c),
        }
        last = [last[1], last[2], c];
    }
    out
}

/// [`md`] for a table cell or header: a `|` escaped too, so text cannot end its cell.
pub fn md_cell(s: &str) -> String {
    md(s).replace('|', "\\|")
}

/// Whether the characters to come start with `prefix`.
fn starts_with(mut rest: impl Iterator<Item = char>, prefix: &str) -> bool {
    prefix.chars().all(|p| rest.next() == Some(p))
}

/// Markdown that begins a line (a paragraph, a list item): [`md`]'s output with what
/// would open a block there escaped too: a leading `-`, `+`, `=`, `#` or `|` (a list, a
/// heading, a rule, a table row) and the `.` of a leading number ("1. " starts a numbered
/// list); `>`, `[`, `*`, `_` and `` ` `` are [`md`]'s already.
pub fn md_line(rendered: &str) -> String {
    let digits = rendered.bytes().take_while(u8::is_ascii_digit).count();
    match rendered.as_bytes().first() {
        Some(b'-' | b'+' | b'=' | b'#' | b'|') => format!("\\{rendered}"),
        Some(_) if digits > 0 && rendered[digits..].starts_with('.') => {
            format!("{}\\{}", &rendered[..digits], &rendered[digits..])
        }
        _ => rendered.to_string(),
    }
}

/// The longest run of backticks in `s`.
fn longest_backticks(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// A markdown code span holding `s` as it is, whatever backticks it has: delimited by one
/// more backtick than its longest run (CommonMark), so nothing in it ends the span early
/// and nothing in it is read as HTML.
pub fn md_code(s: &str) -> String {
    let s = seen(&s.replace(['\n', '\r', '\u{2028}', '\u{2029}'], " "));
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
    let s = &seen(s);
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
