//! Where in the experiment file a problem is, and how it is said: key paths ([`Key`],
//! the `key!` macro), the one-line [`PlanError`] at `file:line:col`, and the [`Check`]
//! every rule returns. Reading, the types and the rules all use this module; it uses none
//! of them.

use std::fmt;
use std::path::Path;

/// One step of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Name(std::borrow::Cow<'static, str>),
    Index(usize),
}

impl From<&'static str> for Key {
    fn from(s: &'static str) -> Self {
        Key::Name(s.into())
    }
}

impl From<String> for Key {
    fn from(s: String) -> Self {
        Key::Name(s.into())
    }
}

impl From<usize> for Key {
    fn from(i: usize) -> Self {
        Key::Index(i)
    }
}

/// A key path like `variant[1].compiler`, as an owned list.
pub type KeyPath = Vec<Key>;

/// Builds a key path as an array: `key!["variant", 1, "compiler"]`.
#[macro_export]
macro_rules! key {
    ($($k:expr),* $(,)?) => { [$($crate::Key::from($k)),*] };
}

/// Bad input: where it is and what to do. Displays as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    /// `file:line:col`, or just `file` when no position is known.
    pub location: String,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for PlanError {}

/// What a rule returns: nothing, or the error at the key it is about.
pub type Check = Result<(), PlanError>;

/// The keys the document sets in the table at `at` (empty if there is none), in file
/// order.
pub(crate) fn keys_in(doc: &toml_edit::ImDocument<String>, at: &[Key]) -> Vec<String> {
    let mut node = Node::Table(doc.as_table());
    for k in at {
        match node.step(k) {
            Some(next) => node = next,
            None => return Vec::new(),
        }
    }
    match node {
        Node::Table(t) => t.iter().map(|(k, _)| k.to_string()).collect(),
        Node::Item(it) => it
            .as_table_like()
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default(),
    }
}

/// The byte offset of the key `at` in the document, or of the nearest enclosing key it has.
pub(crate) fn offset_of(doc: &toml_edit::ImDocument<String>, at: &[Key]) -> Option<usize> {
    let mut node = Node::Table(doc.as_table());
    let mut best = None;
    for k in at {
        match node.step(k) {
            Some(next) => {
                best = next.start().or(best);
                node = next;
            }
            None => break,
        }
    }
    best
}

/// A place in the parsed document: array-of-tables entries are tables, the rest items.
#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a toml_edit::Item),
    Table(&'a toml_edit::Table),
}

impl<'a> Node<'a> {
    fn step(self, k: &Key) -> Option<Node<'a>> {
        match (self, k) {
            (Node::Table(t), Key::Name(n)) => t.get(n.as_ref()).map(Node::Item),
            (Node::Item(toml_edit::Item::ArrayOfTables(a)), Key::Index(i)) => {
                a.get(*i).map(Node::Table)
            }
            (Node::Item(it), Key::Name(n)) => it.get(n.as_ref()).map(Node::Item),
            (Node::Item(it), Key::Index(i)) => it.get(*i).map(Node::Item),
            (Node::Table(_), Key::Index(_)) => None,
        }
    }

    fn start(self) -> Option<usize> {
        match self {
            Node::Item(it) => it.span().map(|s| s.start),
            Node::Table(t) => t.span().map(|s| s.start),
        }
    }
}

/// `file:line:col` for a byte offset (1-based line and column, columns in characters).
pub(crate) fn locate_offset(path: &Path, text: &str, offset: Option<usize>) -> String {
    let Some(offset) = offset else {
        return path.display().to_string();
    };
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{}:{line}:{col}", path.display())
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// serde's messages are multi-line and name Rust types; keep one plain line.
pub(crate) fn tidy_serde_message(m: &str) -> String {
    // The parser's explanation can take two lines ("invalid table header" then "duplicate
    // key `target` in document root"): keep both, in one line.
    let joined: Vec<&str> = m.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut first = joined.join(": ");
    for (rust, words) in [
        (
            "data did not match any variant of untagged enum OneOrMany",
            "expected a number or a list of numbers",
        ),
        (
            "data did not match any variant of untagged enum ValueSize",
            "expected a size in bytes or { mean = N }",
        ),
        (
            "data did not match any variant of untagged enum OptionValue",
            "expected a string, a number or true/false",
        ),
        ("expected usize", "expected a whole number (0 or more)"),
        ("expected u64", "expected a whole number (0 or more)"),
        ("expected u32", "expected a whole number (0 or more)"),
        ("expected u16", "expected a whole number (0 or more)"),
        ("expected u8", "expected a whole number (0 or more)"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected a list, e.g. [1, 2]"),
        ("expected a map", "expected a table, e.g. { key = value }"),
    ] {
        first = first.replace(rust, words);
    }
    if first.starts_with("unknown field") {
        format!("{first}; remove it or fix its spelling (see docs/experiment-file.md)")
    } else if first.starts_with("missing field") {
        format!("{first}; add it (see docs/experiment-file.md)")
    } else if first.starts_with("invalid type") || first.starts_with("invalid value") {
        format!("{first} (see docs/experiment-file.md for the key's form)")
    } else if first.contains("duplicate key") {
        format!("{first}; give each key, and each [table], once")
    } else if first.starts_with("expected")
        || first.starts_with("invalid")
        || first.starts_with("unclosed")
        || first.starts_with("unexpected")
    {
        format!("{first} (TOML syntax: compare with the files in examples/)")
    } else {
        first
    }
}
