//! The experiment file as a document: read (TOML syntax and types first, then the rules
//! between keys) into a [`Loaded`], which keeps its text and syntax tree, so every error,
//! now or later, points at `file:line:col` of the key it is about ([`Loaded::error_at`]).

use crate::experiment::{Experiment, Kinds, Loaded};
use crate::located::{locate_offset, tidy_serde_message, PlanError};
use crate::validate;
use std::path::{Path, PathBuf};

/// Reads, parses and validates an experiment file; `kinds`: the workload kinds it may
/// name (`bakeoff_workloads::KINDS`).
pub fn load(path: &Path, kinds: &'static dyn Kinds) -> Result<Loaded, PlanError> {
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
    kinds: &'static dyn Kinds,
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
pub fn parse(path: &Path, text: String, kinds: &'static dyn Kinds) -> Result<Loaded, PlanError> {
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
    kinds: &'static dyn Kinds,
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
