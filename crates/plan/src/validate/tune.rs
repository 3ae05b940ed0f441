//! `[tune]`'s checks: every list non-empty and free of repeats, every choice one the key
//! knows, a space of at most `bakeoff_tune::MAX_CANDIDATES`, `train` a workload and
//! `baseline` a variant of the file, and a source to build from.

use crate::experiment::Loaded;
use crate::key;
use crate::located::PlanError;
use bakeoff_tune::{Lto, MAX_CANDIDATES};

/// What is wrong with one choice of a list, if anything.
type Problem = fn(&str) -> Option<String>;

pub(crate) fn check(l: &Loaded) -> Result<(), PlanError> {
    let e = &l.experiment;
    let Some(t) = &e.tune else { return Ok(()) };
    let strings: [(&str, &Option<Vec<String>>, Problem); 5] = [
        ("compiler", &t.compiler, compiler_problem),
        ("opt", &t.opt, opt_problem),
        ("march", &t.march, march_problem),
        ("lto", &t.lto, lto_problem),
        ("flags", &t.flags, flags_problem),
    ];
    for (k, list, problem) in strings {
        let Some(list) = list else { continue };
        if list.is_empty() {
            return Err(l.error_at(&key!["tune", k], format!("{k} is an empty list; give at least one choice, or drop the key for its default")));
        }
        for (j, choice) in list.iter().enumerate() {
            if let Some(why) = problem(choice) {
                return Err(l.error_at(&key!["tune", k, j], why));
            }
            if list[..j].contains(choice) {
                return Err(l.error_at(
                    &key!["tune", k, j],
                    format!("{choice:?} is listed twice in {k}; list each choice once"),
                ));
            }
        }
    }
    for (k, list) in [("pgo", &t.pgo), ("bolt", &t.bolt)] {
        let Some(list) = list else { continue };
        if list.is_empty() || list.len() > 2 || (list.len() == 2 && list[0] == list[1]) {
            return Err(l.error_at(
                &key!["tune", k],
                format!("{k} takes [false], [true] or [false, true]"),
            ));
        }
    }
    if let Some(w) = &t.train {
        if !e.workloads.iter().any(|x| &x.display_name() == w) {
            let names: Vec<String> = e.workloads.iter().map(|w| w.display_name()).collect();
            return Err(l.error_at(
                &key!["tune", "train"],
                format!(
                    "train {w:?} is not a workload; use one of {}",
                    names.join(", ")
                ),
            ));
        }
    }
    if let Some(b) = &t.baseline {
        if !e.variants.iter().any(|v| &v.name == b) {
            let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
            return Err(l.error_at(
                &key!["tune", "baseline"],
                format!(
                    "baseline {b:?} is not a variant; use one of {}",
                    names.join(", ")
                ),
            ));
        }
    }
    let space = t.space(e);
    if space.size() > MAX_CANDIDATES {
        return Err(l.error_at(
            &key!["tune"],
            format!(
                "the space has {} candidates, more than {MAX_CANDIDATES}; trim flags or other lists",
                space.size()
            ),
        ));
    }
    if e.target.source.is_none() {
        return Err(l.error_at(
            &key!["tune"],
            format!(
                "[tune] builds candidates from source, and [target] has none; add source = {{ debian = \"{}\" }}",
                e.target.kind.as_str()
            ),
        ));
    }
    Ok(())
}

/// A compiler is a name looked up on PATH: `gcc`, `clang`, `gcc-N` or `clang-N` (N a
/// dotted number), never a path or a name with words after it.
fn compiler_problem(c: &str) -> Option<String> {
    let version_ok = |v: &str| {
        !v.is_empty()
            && v.split('.')
                .all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let ok = ["gcc", "clang"].iter().any(|family| {
        c.strip_prefix(family)
            .is_some_and(|rest| rest.is_empty() || rest.strip_prefix('-').is_some_and(version_ok))
    });
    (!ok).then(|| {
        format!("compiler {:?} is not one bakeoff knows; give a name found on PATH: gcc, gcc-N, clang or clang-N", shown(c))
    })
}

/// At most 80 characters of `s`, for a message.
fn shown(s: &str) -> String {
    s.chars().take(80).collect()
}

fn opt_problem(o: &str) -> Option<String> {
    let known = [
        "", "-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-Og", "-Ofast",
    ];
    (!known.contains(&o)).then(|| format!("opt {o:?} is not an optimization level; use one of -O0, -O1, -O2, -O3, -Os, -Oz, -Og, -Ofast (or \"\")"))
}

fn march_problem(m: &str) -> Option<String> {
    let ok = m.is_empty()
        || (["-march=", "-mtune=", "-mcpu="]
            .iter()
            .any(|p| m.strip_prefix(p).is_some_and(|v| !v.is_empty()))
            && !m.contains(char::is_whitespace));
    (!ok).then(|| {
        format!(
            "march {m:?}: give \"\" or one -march=, -mtune= or -mcpu= flag, e.g. \"-march=native\""
        )
    })
}

fn lto_problem(s: &str) -> Option<String> {
    Lto::parse(s)
        .is_none()
        .then(|| format!("lto {s:?} is not a choice; use \"none\", \"thin\" or \"full\""))
}

fn flags_problem(f: &str) -> Option<String> {
    let words: Vec<&str> = f.split_whitespace().collect();
    if let Some(w) = words
        .iter()
        .find(|w| !w.starts_with('-') || w.contains(['\'', '"', '`', '$', ';', '\\']))
    {
        return Some(format!("flags {:?}: {:?} is not a compiler flag; each group is flags separated by spaces, each starting with - (a response file @FILE is not taken)", shown(f), shown(w)));
    }
    runs_code(&words).map(|(w, what)| {
        format!("flags {:?}: {:?} {what}; bakeoff tune refuses flags that load code or run programs, remove it", shown(f), shown(&w))
    })
}

/// Linkers `-fuse-ld=` may name: a name the compiler looks up itself, never a path.
const LINKERS: &[&str] = &["bfd", "gold", "lld", "mold"];

/// The first of `words` (a flag group split at blanks) that makes the compiler load code
/// or run a program other than its own, in every spelling gcc and clang take: one or two
/// leading dashes, the value attached, after `=` or in the next word, and through
/// `-Wl,`/`-Xlinker` (linker plugins, another dynamic linker, run paths) and `-Xclang`
/// (clang plugins). The flag as written and what it does.
fn runs_code(words: &[&str]) -> Option<(String, &'static str)> {
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        let what = flag_runs_code(w).or_else(|| match one_dash(w).as_str() {
            "-Xlinker" => linker_item_runs_code(next),
            "-Xclang" => clang_item_runs_code(next),
            _ => None,
        });
        if let Some(what) = what {
            let pair = matches!(
                one_dash(w).as_str(),
                "-Xlinker"
                    | "-Xclang"
                    | "-B"
                    | "-wrapper"
                    | "-specs"
                    | "-prefix"
                    | "-gcc-toolchain"
            );
            let written = if pair && !next.is_empty() {
                format!("{w} {next}")
            } else {
                w.to_string()
            };
            return Some((written, what));
        }
    }
    None
}

/// `--name` read as `-name` (gcc and clang take both for these flags).
fn one_dash(w: &str) -> String {
    match w.strip_prefix("--") {
        Some(rest) => format!("-{rest}"),
        None => w.to_string(),
    }
}

/// What one flag does that runs code, if it does.
fn flag_runs_code(w: &str) -> Option<&'static str> {
    let f = one_dash(w);
    let starts = |p: &str| f.starts_with(p);
    if starts("-B") {
        return Some(
            "makes the compiler run its assembler, linker and other programs from another folder",
        );
    }
    if starts("-prefix")
        || starts("-gcc-toolchain")
        || starts("-gcc-install-dir")
        || starts("-ccc-")
    {
        return Some("makes the compiler run programs from another folder");
    }
    if starts("-fplugin") || starts("-fpass-plugin") || starts("-load") {
        return Some("loads a compiler plugin's code");
    }
    if starts("-specs") {
        return Some("reads a specs file, which can run any program");
    }
    if starts("-wrapper") {
        return Some("runs every compiler step under another program");
    }
    if starts("-ld-path") {
        return Some("runs a linker from a path");
    }
    if let Some(ld) = f.strip_prefix("-fuse-ld=") {
        return (!LINKERS.contains(&ld))
            .then_some("runs a linker from a path; -fuse-ld= takes bfd, gold, lld or mold");
    }
    if let Some(items) = f.strip_prefix("-Wl,") {
        return items.split(',').find_map(linker_item_runs_code);
    }
    None
}

/// What one linker argument (`-Wl,` item, `-Xlinker` word) does that runs code.
fn linker_item_runs_code(item: &str) -> Option<&'static str> {
    let f = one_dash(item);
    let starts = |p: &str| f.starts_with(p);
    if starts("-plugin") {
        return Some("loads a linker plugin's code");
    }
    if starts("-dynamic-linker") || f == "-I" || starts("-I/") {
        return Some("makes the server run under another dynamic linker");
    }
    if starts("-rpath") || f == "-R" || starts("-R/") || starts("-R.") {
        return Some("makes the server load libraries from another folder");
    }
    None
}

/// What one `-Xclang` argument does that runs code.
fn clang_item_runs_code(item: &str) -> Option<&'static str> {
    let f = one_dash(item);
    ["-load", "-plugin", "-add-plugin", "-fpass-plugin"]
        .iter()
        .any(|p| f.starts_with(p))
        .then_some("loads a compiler plugin's code")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling of each flag that runs code: one or two dashes, the value
    /// attached, after `=` or as the next word, alone or among harmless flags.
    fn spellings() -> Vec<String> {
        let mut out = Vec::new();
        let plain = [
            ("B", "/tmp/evil/"),
            ("prefix", "/tmp/evil"),
            ("specs", "/tmp/evil.specs"),
            ("wrapper", "/tmp/w,-v"),
            ("ld-path", "/tmp/ld"),
            ("fuse-ld", "/tmp/ld"),
            ("fuse-ld", "./ld"),
            ("fuse-ld", "lld-evil"),
            ("fplugin", "/tmp/p.so"),
            ("fplugin-arg-p-x", "1"),
            ("fpass-plugin", "/tmp/p.so"),
            ("gcc-toolchain", "/tmp/t"),
            ("gcc-install-dir", "/tmp/t"),
            ("ccc-install-dir", "/tmp/t"),
        ];
        for (name, value) in plain {
            for dashes in ["-", "--"] {
                out.push(format!("{dashes}{name}={value}"));
                if name.len() == 1 || !name.starts_with('f') {
                    out.push(format!("{dashes}{name}{value}"));
                    out.push(format!("{dashes}{name} {value}"));
                }
            }
        }
        for linker in [
            "-plugin,/tmp/p.so",
            "--plugin=/tmp/p.so",
            "-plugin-opt=x",
            "--dynamic-linker=/tmp/ld.so",
            "-dynamic-linker,/tmp/ld.so",
            "-rpath,/tmp/lib",
            "--rpath=/tmp/lib",
            "-R,/tmp/lib",
            "-I,/tmp/ld.so",
        ] {
            out.push(format!("-Wl,{linker}"));
            out.push(format!("-Wl,--as-needed,{linker}"));
            let first = linker.split([',', '=']).next().unwrap();
            out.push(format!("-Xlinker {first} -Xlinker /tmp/x"));
            out.push(format!("--Xlinker {first}"));
        }
        for clang in ["-load", "-plugin", "-add-plugin", "-fpass-plugin=/tmp/p.so"] {
            out.push(format!("-Xclang {clang} -Xclang /tmp/p.so"));
        }
        let mut all = Vec::new();
        for f in out {
            for around in ["{}", "-fno-plt {}", "{} -O2", "-g {} -fomit-frame-pointer"] {
                all.push(around.replace("{}", &f));
            }
        }
        all
    }

    #[test]
    fn tune_flags_that_run_code_are_refused() {
        let all = spellings();
        assert!(all.len() > 300, "{}", all.len());
        for f in &all {
            let why = flags_problem(f).unwrap_or_else(|| panic!("{f:?} passed"));
            assert!(!why.contains('\n'), "{why}");
            assert!(why.starts_with("flags "), "{why}");
        }
        for at in ["@/tmp/args", "-O2 @args", "-O2 \\@args"] {
            assert!(flags_problem(at).is_some(), "{at}");
        }
        for ok in [
            "",
            "-fno-plt",
            "-fuse-ld=lld",
            "-fuse-ld=mold -Wl,--as-needed",
            "-fuse-ld=gold",
            "--fuse-ld=bfd",
            "-Wl,-O1,--sort-common -Wl,-z,relro",
            "-Xlinker --gc-sections",
            "-fomit-frame-pointer -funroll-loops -fno-semantic-interposition",
            "-march=native -mtune=generic",
            "-fprofile-update=atomic",
            "-fbuiltin -fblocks",
        ] {
            assert_eq!(flags_problem(ok), None, "{ok}");
        }
    }

    #[test]
    fn compilers_are_names_never_paths() {
        for ok in ["gcc", "clang", "gcc-12", "clang-16", "clang-19.1", "gcc-11"] {
            assert_eq!(compiler_problem(ok), None, "{ok}");
        }
        for bad in [
            "/usr/bin/gcc",
            "./gcc",
            "gcc -B/tmp",
            "gcc-12 -wrapper x",
            "gcc-",
            "gcc-12/../x",
            "bin/clang",
            "clang-16x",
            " gcc",
            "gcc\t",
            "cc",
            "x86_64-linux-gnu-gcc-12",
            "gcc-1.2.",
            "~/gcc",
        ] {
            let why = compiler_problem(bad).unwrap_or_else(|| panic!("{bad:?} passed"));
            assert!(why.contains("gcc-N"), "{why}");
        }
    }
}
