//! Module graphs, read from the sources. Three rules:
//!
//! - Every crate of the workspace: its modules form a DAG (code compiled only for tests
//!   aside). The last circles (build, plan, probe, sandbox, sqlclient) went in issue 42.
//! - The workloads crate: kinds import no kinds. A kind folder (a folder under
//!   crates/workloads/src other than `shared/`) names no other kind folder, and no module
//!   but lib.rs (the registry `KINDS`) names a kind folder: the shared load services
//!   (`shared/`, `workload.rs`, `verify.rs`, `tool.rs`, `redis_info.rs`, and the crates
//!   below: proto, engine, sqlclient, os) lie below the kinds.
//! - The runner, as below.
//!
//! The runner's modules form a DAG: no module reaches, through `crate::` paths, a module
//! that reaches back to it. A node is a top-level module (a file in src/, or a folder
//! such as remote/ with everything under it) or `lib` (items defined in lib.rs itself).
//! lib.rs is the root that wires the modules; nothing may use an item it defines, or
//! every module that does would sit on a circle through it. A name lib.rs re-exports
//! (`pub use m::X`) is module `m`'s; lib.rs's own edges are the paths its code names
//! (its `pub use` lines are wiring, not use).
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
    paths_after(code, "crate::")
}

/// The first path segment of every path that follows `prefix` (`crate::`,
/// `bakeoff_workloads::`), through `{a, b::c}` groups.
fn paths_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' || before == '$' {
            continue; // `bakeoff_crate::`, `$crate::`
        }
        let rest = code[at + prefix.len()..].trim_start();
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

/// Whether a graph counts code compiled only for tests (`#[cfg(test)]` items and the
/// modules the crate root declares so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tests {
    Counted,
    Left,
}

/// `code` without its `#[cfg(test)]` items (an item ends at its `;` or its closing brace).
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let semi = item.find(';');
        let open = item.find('{');
        let end = match (semi, open) {
            (Some(s), Some(o)) if s < o => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(o)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (j, c) in item[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The modules a crate root declares `#[cfg(test)] mod x;`.
fn test_modules(root: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in root.match_indices("#[cfg(test)]") {
        let item = root[at + "#[cfg(test)]".len()..].trim_start();
        let item = item.strip_prefix("pub(crate) ").unwrap_or(item);
        let item = item.strip_prefix("pub ").unwrap_or(item);
        if let Some(name) = item.strip_prefix("mod ") {
            let name = ident(name.trim_start());
            if item.find(';') < item.find('{') || !item.contains('{') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The `pub use m::...;` statements of a crate root: each name they make public -> `m`.
/// The same statements, removed from `root`, are returned as its code without them.
fn reexports(root: &str) -> (BTreeMap<String, String>, String) {
    let mut names = BTreeMap::new();
    let mut code = String::with_capacity(root.len());
    let mut rest = root;
    while let Some(at) = rest.find("pub use ") {
        let before = rest[..at].chars().next_back().unwrap_or(' ');
        let end = rest[at..].find(';').map_or(rest.len(), |e| at + e + 1);
        if before.is_alphanumeric() || before == '_' {
            code.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        code.push_str(&rest[..at]);
        let stmt = &rest[at + "pub use ".len()..end];
        let stmt = stmt.strip_prefix("crate::").unwrap_or(stmt);
        let module = ident(stmt).to_string();
        let tail = &stmt[module.len()..];
        for word in tail.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !word.is_empty() && word != "self" && word != "as" {
                names
                    .entry(word.to_string())
                    .or_insert_with(|| module.clone());
            }
        }
        rest = &rest[end..];
    }
    code.push_str(rest);
    (names, code)
}

/// Node -> the nodes it uses, for the crate whose sources are under `src` (its root:
/// lib.rs, else main.rs; `bin/` holds other crates and is left out). A node is a
/// top-level module (a file, or a folder with everything under it) or `lib` (the root).
fn module_graph(src: &Path, tests: Tests) -> BTreeMap<String, BTreeSet<String>> {
    let root_file = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{}: no lib.rs or main.rs", src.display()));
    let root_code = code_only(&std::fs::read_to_string(&root_file).unwrap());
    let root_code = match tests {
        Tests::Counted => root_code,
        Tests::Left => without_test_items(&root_code),
    };
    let (reexported, root_uses) = reexports(&root_code);
    let left_out = match tests {
        Tests::Counted => BTreeSet::new(),
        Tests::Left => test_modules(&code_only(&std::fs::read_to_string(&root_file).unwrap())),
    };
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let node_of = |p: &Path| -> String {
        if p == root_file {
            return "lib".to_string();
        }
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    files.retain(|f| {
        let n = node_of(f);
        n != "bin" && n != "main" && !left_out.contains(&n)
    });
    let modules: BTreeSet<String> = files.iter().map(|p| node_of(p)).collect();
    let resolve = |first: &str| -> String {
        if modules.contains(first) {
            first.to_string()
        } else {
            reexported
                .get(first)
                .filter(|m| modules.contains(*m))
                .cloned()
                .unwrap_or_else(|| "lib".to_string())
        }
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = node_of(f);
        let code = if from == "lib" {
            root_uses.clone()
        } else {
            let code = code_only(&std::fs::read_to_string(f).unwrap());
            match tests {
                Tests::Counted => code,
                Tests::Left => without_test_items(&code),
            }
        };
        let mut to: BTreeSet<String> = crate_paths(&code).iter().map(|p| resolve(p)).collect();
        if from == "lib" {
            // The root names its modules without `crate::`.
            to.extend(modules.iter().filter(|m| names_path(&code, m)).cloned());
        }
        to.remove(&from);
        graph.entry(from).or_default().extend(to);
    }
    graph
}

/// Whether `code` has a path starting `module::` (not `x::module::`).
fn names_path(code: &str, module: &str) -> bool {
    let pat = format!("{module}::");
    code.match_indices(&pat).any(|(at, _)| {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        !(before.is_alphanumeric() || before == '_' || before == ':')
    })
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
    let graph = module_graph(&src, Tests::Counted);
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

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|src| src.join("lib.rs").is_file() || src.join("main.rs").is_file())
        .collect();
    crates.sort();
    assert!(crates.len() > 10, "the workspace's crates were not found");
    let mut problems = Vec::new();
    for src in &crates {
        let name = src.parent().unwrap().file_name().unwrap().to_string_lossy();
        let graph = module_graph(src, Tests::Left);
        for circle in cycles(&graph) {
            let edges: BTreeMap<&String, &BTreeSet<String>> =
                graph.iter().filter(|(m, _)| circle.contains(m)).collect();
            problems.push(format!(
                "crates/{name}/src: the modules {circle:?} import each other in a circle; move what they share into a module of its own that uses neither side. Their imports: {edges:#?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The workloads crate's kind folders (every folder of its src/ but `shared/`).
fn kind_folders(src: &Path) -> BTreeSet<String> {
    let kinds: BTreeSet<String> = std::fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "shared")
        .collect();
    assert!(
        kinds.contains("kv") && kinds.contains("oltp"),
        "no kind folders found under {}",
        src.display()
    );
    kinds
}

#[test]
fn kinds_import_no_kinds() {
    let src = workspace().join("crates/workloads/src");
    let graph = module_graph(&src, Tests::Counted);
    let kinds = kind_folders(&src);
    let wrong: Vec<String> = graph
        .iter()
        .filter(|(from, _)| from.as_str() != "lib")
        .flat_map(|(from, to)| {
            to.iter()
                .filter(|t| kinds.contains(*t))
                .map(move |t| format!("{from} -> {t}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "crates/workloads/src: kinds import no kinds, and shared modules none either, but {wrong:?}; \
         move what both use below the kinds (shared/, or a crate below: proto, engine, sqlclient, os)"
    );
}

/// ARCHITECTURE's rule: the runner never matches on a workload kind. It asks the
/// `Workload` trait and the workloads crate's root, and names no kind's module
/// (`bakeoff_workloads::replay::parse`, `bakeoff_workloads::sqlbench::use_cache` were the
/// last ones).
#[test]
fn the_runner_names_no_workload_kind() {
    let kinds = kind_folders(&workspace().join("crates/workloads/src"));
    let mut files = Vec::new();
    rs_files(&workspace().join("crates/runner/src"), &mut files);
    let wrong: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let code = code_only(&std::fs::read_to_string(f).unwrap());
            paths_after(&code, "bakeoff_workloads::")
                .into_iter()
                .filter(|p| kinds.contains(p))
                .map(move |k| format!("{} names {k}", f.display()))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "the runner names no workload kind; ask the Workload trait or a function of the workloads crate's lib.rs: {wrong:?}"
    );
}

#[test]
fn the_graph_reads_reexports_test_items_and_the_roots_own_paths() {
    let root = code_only(
        "mod a;\n#[cfg(test)]\nmod t;\npub use a::{X, Y as Z};\nuse b::W;\nfn f() { c::go() }\n#[cfg(test)]\nmod inline { use crate::d::Q; }",
    );
    let (names, code) = reexports(&root);
    assert_eq!(names.get("X").map(String::as_str), Some("a"));
    assert_eq!(names.get("Z").map(String::as_str), Some("a"));
    assert!(!code.contains("pub use"));
    assert!(names_path(&code, "b") && names_path(&code, "c") && !names_path(&code, "a"));
    assert_eq!(test_modules(&root), BTreeSet::from(["t".to_string()]));
    let kept = without_test_items(&root);
    assert!(!kept.contains("mod t") && !kept.contains("crate::d") && kept.contains("c::go"));
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
