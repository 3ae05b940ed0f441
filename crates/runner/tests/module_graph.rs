//! The runner's modules form a DAG: no module reaches, through `crate::` paths, a module
//! that reaches back to it. A node is a top-level module (a file in src/, or a folder
//! such as remote/ with everything under it) or `lib` (items defined in lib.rs itself).
//! lib.rs is the root that wires the modules; nothing may use an item it defines, or
//! every module that does would sit on a circle through it.
//!
//! A method is an edge no `use` line shows: `execute.rs` calling a method that
//! `one_run.rs` defines on `Context` depends on one_run. So methods other modules call
//! on `Context` live in context.rs, and the other modules' `impl Context` blocks hold
//! private methods only (their entry points are free functions, reached by a path).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source with comments and string literals blanked (a path in a doc comment or a
/// message is no edge).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = src[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
            out.push(' ');
        } else if b[i] == b'"' {
            // Raw strings are not used with `crate::` inside them here; plain ones are.
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 3 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal such as '"' or '\n' (not a lifetime).
            let from = if b[i + 1] == b'\\' { i + 3 } else { i + 2 };
            i = src[from..].find('\'').map_or(b.len(), |e| from + e + 1);
            out.push_str("' '");
        } else {
            let c = src[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The first path segment of every path that follows `crate::`, through `{a, b::c}`
/// groups.
fn crate_paths(code: &str) -> BTreeSet<String> {
    fn ident(s: &str) -> &str {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' || before == '$' {
            continue; // `bakeoff_crate::`, `$crate::`
        }
        let rest = code[at + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split on commas at depth 0.
            let mut depth = 0;
            let mut item_start = 0;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.insert(ident(group[item_start..j].trim()).to_string());
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(group[item_start..j].trim()).to_string());
                        item_start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest).to_string());
        }
    }
    out.remove("");
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Node -> the nodes it uses, for the crate whose sources are under `src`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let node_of = |p: &Path| -> String {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| node_of(p)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = node_of(f);
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let edges = graph.entry(from.clone()).or_default();
        for first in crate_paths(&code) {
            let to = if modules.contains(&first) && first != "lib" {
                first
            } else {
                "lib".to_string()
            };
            if to != from {
                edges.insert(to);
            }
        }
    }
    graph
}

/// The strongly connected components with more than one node (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        let g = t.g;
        for w in g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn the_runners_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    let found = cycles(&graph);
    let uses_lib: Vec<&String> = graph
        .iter()
        .filter(|(from, to)| from.as_str() != "lib" && to.contains("lib"))
        .map(|(from, _)| from)
        .collect();
    assert!(
        found.is_empty() && uses_lib.is_empty(),
        "the runner's modules import each other in a circle: {found:?}; modules that use an item of lib.rs: {uses_lib:?}\n\
         move the shared type into a module of its own that uses neither side\n\
         graph: {graph:#?}"
    );
}

/// `pub` methods in `impl Context` blocks outside context.rs: `file: fn line`.
fn public_context_methods(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut out = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("context.rs")) {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (at, _) in code.match_indices("impl Context") {
            let Some(open) = code[at..].find('{').map(|o| at + o) else {
                continue;
            };
            let mut depth = 0;
            let mut end = code.len();
            for (j, c) in code[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            for line in code[open..end].lines() {
                let t = line.trim_start();
                if t.starts_with("pub") && t.contains("fn ") {
                    out.push(format!("{}: {}", f.display(), t));
                }
            }
        }
    }
    out
}

#[test]
fn other_modules_call_no_method_defined_on_context_outside_context_rs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let public = public_context_methods(&src);
    assert!(
        public.is_empty(),
        "methods on Context that other modules may call must live in context.rs (or be a free function of their module): {public:#?}"
    );
}

#[test]
fn the_parser_finds_groups_and_inline_paths() {
    let code = code_only(
        "use crate::{a::X, b, c::{d, e}};\n// crate::comment\nlet s = \"crate::string\";\nfn f(x: &crate::g::Y) {}\nuse bakeoff_crate::h;",
    );
    let got: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(got, ["a", "b", "c", "g"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
}
