//! The experiment file as a document: read (TOML syntax and types first, then the rules
//! between keys) and kept with its text and syntax tree, so every error, now or later,
//! points at `file:line:col` of the key it is about ([`Loaded::error_at`]).

use crate::experiment::Experiment;
use crate::validate;
use std::fmt;
use std::path::{Path, PathBuf};

/// An experiment file that parsed and passed validation, with its text kept so later
/// checks (a compiler missing, say) can still point at the key that named it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub experiment: Experiment,
    /// The file as given on the command line.
    pub path: PathBuf,
    /// The directory relative paths in the file are resolved against.
    pub base_dir: PathBuf,
    /// The file's exact text (kept in the results folder).
    pub text: String,
    doc: Option<toml_edit::ImDocument<String>>,
    /// The workload kinds it was read with.
    kinds: &'static dyn crate::Kinds,
}

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

/// Reads, parses and validates an experiment file; `kinds`: the workload kinds it may
/// name (`bakeoff_workloads::KINDS`).
pub fn load(path: &Path, kinds: &'static dyn crate::Kinds) -> Result<Loaded, PlanError> {
    let text = read_input(path, "experiment file").map_err(|message| PlanError {
        location: path.display().to_string(),
        message,
    })?;
    parse(path, text, kinds)
}

/// Reads an experiment file and applies `--set KEY=VALUE` overrides to its document before
/// anything is validated, so an override is checked exactly like the file's own keys and
/// the resolved experiment (results.json `experiment.text`) shows it. A key is a dotted
/// path (`plan.budget`, `target.args`, `workload.0.connections`: arrays of tables take an
/// index); a value is TOML (`1`, `[1, 16]`, `true`, `"x"`), or else taken as a string
/// (`plan.budget=2m`).
pub fn load_with(
    path: &Path,
    overrides: &[String],
    kinds: &'static dyn crate::Kinds,
) -> Result<Loaded, PlanError> {
    let text = read_input(path, "experiment file").map_err(|message| PlanError {
        location: path.display().to_string(),
        message,
    })?;
    if overrides.is_empty() {
        return parse(path, text, kinds);
    }
    let bad = |message: String| PlanError {
        location: "--set".into(),
        message,
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| PlanError {
            location: path.display().to_string(),
            message: tidy_serde_message(e.message()),
        })?;
    for o in overrides {
        apply_override(&mut doc, o).map_err(|m| bad(format!("{}: {m}", o.escape_debug())))?;
    }
    parse(path, doc.to_string(), kinds).map_err(|e| PlanError {
        location: e.location,
        message: format!("{} (with --set {})", e.message, overrides.join(" --set ")),
    })
}

/// One `KEY=VALUE` into the document.
fn apply_override(doc: &mut toml_edit::DocumentMut, o: &str) -> Result<(), String> {
    let (key, raw) = o
        .split_once('=')
        .ok_or("expected KEY=VALUE, e.g. plan.repetitions=1")?;
    if raw.contains(['\n', '\r']) {
        // Parsed as `v = <raw>`, the lines after the first would be other keys, silently
        // dropped.
        return Err("the value holds a line break; give one TOML value on one line".into());
    }
    let parts: Vec<&str> = key.trim().split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(
            "the key is a dotted path such as plan.budget or workload.0.connections".into(),
        );
    }
    let value: toml_edit::Value = match format!("v = {raw}").parse::<toml_edit::DocumentMut>() {
        Ok(d) => d["v"].as_value().cloned().unwrap_or_else(|| raw.into()),
        Err(_) => raw.trim().into(),
    };
    let (leaf, path) = parts.split_last().ok_or("empty key")?;
    let mut item: &mut toml_edit::Item = doc.as_item_mut();
    let mut i = 0;
    while i < path.len() {
        let name = path[i];
        let table = item
            .as_table_like_mut()
            .ok_or_else(|| format!("{} is not a table", path[..i].join(".")))?;
        if table.get(name).is_none() {
            table.insert(name, toml_edit::Item::Table(toml_edit::Table::new()));
        }
        let next = table.get_mut(name).ok_or("unreachable")?;
        if let Some(array) = next.as_array_of_tables_mut() {
            let len = array.len();
            let index: usize = path
                .get(i + 1)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    format!("{name} is a list of tables: give an index, e.g. {name}.0.<key>")
                })?;
            let t = array.get_mut(index).ok_or_else(|| {
                format!("{name}.{index}: the file has {len} [[{name}]] table(s), counted from 0")
            })?;
            // Step into the indexed table: wrap it as an item view.
            return set_in_table(t, &path[i + 2..], leaf, value);
        }
        item = next;
        i += 1;
    }
    let table = item
        .as_table_like_mut()
        .ok_or_else(|| format!("{} is not a table", path.join(".")))?;
    table.insert(leaf, toml_edit::Item::Value(value));
    Ok(())
}

/// Sets `rest.leaf` inside an array-of-tables entry.
fn set_in_table(
    t: &mut toml_edit::Table,
    rest: &[&str],
    leaf: &str,
    value: toml_edit::Value,
) -> Result<(), String> {
    let mut table: &mut dyn toml_edit::TableLike = t;
    for name in rest {
        if table.get(name).is_none() {
            table.insert(name, toml_edit::Item::Table(toml_edit::Table::new()));
        }
        table = table
            .get_mut(name)
            .and_then(|i| i.as_table_like_mut())
            .ok_or_else(|| format!("{name} is not a table"))?;
    }
    table.insert(leaf, toml_edit::Item::Value(value));
    Ok(())
}

/// The largest input file bakeoff reads whole (an experiment, a query file): 64 MiB.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads a text input file: only a regular file (never a pipe or a device, which could
/// block or never end), at most [`MAX_INPUT_BYTES`], valid UTF-8. The error says what
/// is wrong and what to do.
pub fn read_input(path: &Path, what: &str) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read the {what}: {e}; check the path"))?;
    if !meta.is_file() {
        return Err(format!(
            "the {what} is not a regular file (a directory, pipe or device); give a file"
        ));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "the {what} is {} bytes, more than the {} MiB bakeoff reads; give a smaller file",
            meta.len(),
            MAX_INPUT_BYTES >> 20
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read the {what}: {e}; check its permissions"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "the {what} grew past {} MiB while being read; give a file that is not being written",
            MAX_INPUT_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the {what} is not UTF-8 text (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Parses and validates experiment text as if it came from `path`.
pub fn parse(
    path: &Path,
    text: String,
    kinds: &'static dyn crate::Kinds,
) -> Result<Loaded, PlanError> {
    let base_dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                p.to_path_buf()
            }
        })
        .unwrap_or_else(|| PathBuf::from("."));
    let mut experiment: Experiment = toml::from_str(&text).map_err(|e| PlanError {
        location: locate_offset(path, &text, e.span().map(|r| r.start)),
        message: tidy_serde_message(e.message()),
    })?;
    // SQLite builds come from the amalgamation bakeoff carries unless the file names another.
    let bundled = bakeoff_sandbox::target_for(experiment.target.kind)
        .refuses(bakeoff_sandbox::Ask::BundledSource)
        .is_none();
    if bundled && experiment.target.source.is_none() {
        experiment.target.source = Some(crate::Source {
            bundled: true,
            ..Default::default()
        });
    }
    let doc = toml_edit::ImDocument::parse(text.clone()).ok();
    if let Some(doc) = &doc {
        experiment.workloads = read_workloads(path, &text, doc, kinds)?;
    }
    let loaded = Loaded {
        experiment,
        path: path.to_path_buf(),
        base_dir,
        text,
        doc,
        kinds,
    };
    validate::check(&loaded)?;
    Ok(loaded)
}

/// Each `[[workload]]` table (or inline table of `workload = [...]`), read once its kind
/// is known; an error points at the value at fault, else at the table.
fn read_workloads(
    path: &Path,
    text: &str,
    doc: &toml_edit::ImDocument<String>,
    kinds: &'static dyn crate::Kinds,
) -> Result<Vec<crate::Workload>, PlanError> {
    let tables: Vec<(toml_edit::Value, Option<usize>)> = match doc.get("workload") {
        Some(toml_edit::Item::ArrayOfTables(a)) => a
            .iter()
            .map(|t| {
                let at = t.span().map(|s| s.start);
                (
                    toml_edit::Value::InlineTable(t.clone().into_inline_table()),
                    at,
                )
            })
            .collect(),
        Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a
            .iter()
            .map(|v| (v.clone(), v.span().map(|s| s.start)))
            .collect(),
        _ => Vec::new(),
    };
    tables
        .into_iter()
        .map(|(table, at)| {
            crate::workload::read(table, kinds).map_err(|e| PlanError {
                location: locate_offset(path, text, e.span().map(|s| s.start).or(at)),
                message: tidy_serde_message(e.message()),
            })
        })
        .collect()
}

impl Loaded {
    /// The workload kinds the file was read with.
    pub fn kinds(&self) -> &'static dyn crate::Kinds {
        self.kinds
    }

    /// An error at the key `at` (or at the nearest enclosing key the file has).
    pub fn error_at(&self, at: &[Key], message: impl Into<String>) -> PlanError {
        PlanError {
            location: locate_offset(&self.path, &self.text, self.offset_of(at)),
            message: message.into(),
        }
    }

    /// Resolves a path from the file (patches, sources) against the file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// The keys the file sets in the table at `at` (empty if there is none), in file order.
    pub fn keys_in(&self, at: &[Key]) -> Vec<String> {
        let Some(doc) = self.doc.as_ref() else {
            return Vec::new();
        };
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

    fn offset_of(&self, at: &[Key]) -> Option<usize> {
        let doc = self.doc.as_ref()?;
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
fn locate_offset(path: &Path, text: &str, offset: Option<usize>) -> String {
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
fn tidy_serde_message(m: &str) -> String {
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
