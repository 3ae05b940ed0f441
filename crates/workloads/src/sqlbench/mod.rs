//! `kind = "sql-bench"`: the real sql-bench (Perl, `sql-bench/` in MariaDB's source tree)
//! run against the sandboxed MariaDB (`--server=mysql`, DBD::MariaDB) or PostgreSQL
//! (`--server=Pg`, DBD::Pg), as a yardstick for `sqlsuite`, bakeoff's own rendering of its
//! groups.
//!
//! Where sql-bench comes from: the `dir` key; else `sql-bench/` of the target's MariaDB
//! source (fetched by the build crate, cached); else (installed MariaDB binaries,
//! PostgreSQL) Debian's `mariadb` source package through the same cached fetch. Its files
//! are templates (`*.sh`, cmake placeholders such as `@PERL@` in older trees): they are
//! configured into a scratch folder ([`configure`]: placeholders substituted, `.sh`
//! dropped, made executable; `Data/` and `limits/` linked), never written in the cache.
//!
//! Each measured run runs the chosen tests (`tests = "all"`: `run-all-tests`, which writes
//! one output file per test into `--dir`; a list: each `test-NAME` on its own, its output
//! kept in the same folder) with `--log`. Perl's Benchmark module is loaded with
//! `:hireswallclock` (`PERL5OPT`): sql-bench's own `--hires` does not reach Benchmark, whose
//! wallclock is otherwise whole seconds. Every `Time for X (N): S wallclock secs` line is
//! an operation X of the test (its group) taking S seconds; an operation named twice in
//! one test (`drop table`) is summed, as sql-bench's own summary does. `Estimated time`
//! lines (a test cut short by `--time-limit`) are estimates, not measurements, and are
//! left out.
//!
//! What the record holds, as for sqlsuite: ops = the operations timed, elapsed = the sum
//! of their wallclock seconds, ops_per_s = operations per second of that wallclock (a
//! rate of sql-bench's named operations, not of statements); queries = the sum of
//! sql-bench's own counts (the first number in each line's parentheses: statements or
//! loops); client CPU = Perl's user + system time.
//!
//! A test fails when it exits non-zero, dies, prints `Got error` or `Error:`, or does not
//! end with its `Total time` line; the run names each failed test and the line that shows
//! why, and is invalid (its other tests' times are kept in the record).

mod kind;
mod workload;

pub use kind::{SqlBenchKeys, SqlBenchKind, Tests};
pub use workload::SqlBench;

use std::path::Path;

/// sql-bench's tests (MariaDB 10.11's `test-*.sh`), for checking `tests` before a source
/// is fetched; a `dir` is checked against its own files.
pub const TESTS: &[&str] = &[
    "alter-table",
    "ATIS",
    "big-tables",
    "connect",
    "create",
    "insert",
    "select",
    "table-elimination",
    "transactions",
    "wisconsin",
];

/// Options bakeoff sets itself (the server, its login, where output goes), refused in
/// `args` under every spelling sql-bench reads (see [`refused_args`]).
pub const OWNED: &[&str] = &[
    "server",
    "host",
    "user",
    "password",
    "socket",
    "database",
    "connect-options",
    "connect-command",
    "dir",
    "log",
    "odbc",
    "tcpip",
    "help",
    "use-old-results",
    "only-missing-tests",
];

/// What an option of sql-bench takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// Nothing (a flag).
    Nothing,
    /// A whole number (`=i`).
    Number,
    /// Text (`=s`) that run-all-tests only quotes for its shell command.
    Text,
    /// Text (`=s`) that run-all-tests puts into a file name of that command, inside
    /// double quotes (`--suffix`, `--machine`, `--cmp`), or into a pattern
    /// (`--skip-test`): a plain name or list of names.
    Name,
}

/// sql-bench's options (bench-init.pl's `GetOptions`, MariaDB 10.11), the owned ones
/// included.
const OPTIONS: &[(&str, Takes)] = &[
    ("skip-test", Takes::Name),
    ("comments", Takes::Text),
    ("cmp", Takes::Name),
    ("server", Takes::Text),
    ("user", Takes::Text),
    ("host", Takes::Text),
    ("database", Takes::Text),
    ("password", Takes::Text),
    ("loop-count", Takes::Number),
    ("row-count", Takes::Number),
    ("skip-create", Takes::Nothing),
    ("skip-delete", Takes::Nothing),
    ("verbose", Takes::Nothing),
    ("fast-insert", Takes::Nothing),
    ("lock-tables", Takes::Nothing),
    ("debug", Takes::Nothing),
    ("fast", Takes::Nothing),
    ("force", Takes::Nothing),
    ("field-count", Takes::Number),
    ("regions", Takes::Number),
    ("groups", Takes::Number),
    ("time-limit", Takes::Number),
    ("log", Takes::Nothing),
    ("use-old-results", Takes::Nothing),
    ("machine", Takes::Name),
    ("dir", Takes::Text),
    ("suffix", Takes::Name),
    ("help", Takes::Nothing),
    ("odbc", Takes::Nothing),
    ("small-test", Takes::Nothing),
    ("small-tables", Takes::Nothing),
    ("small-key-tables", Takes::Nothing),
    ("stage", Takes::Number),
    ("threads", Takes::Number),
    ("random", Takes::Nothing),
    ("old-headers", Takes::Nothing),
    ("die-on-errors", Takes::Nothing),
    ("create-options", Takes::Text),
    ("hires", Takes::Nothing),
    ("tcpip", Takes::Nothing),
    ("silent", Takes::Nothing),
    ("optimization", Takes::Text),
    ("hw", Takes::Text),
    ("socket", Takes::Text),
    ("connect-options", Takes::Text),
    ("connect-command", Takes::Text),
    ("only-missing-tests", Takes::Nothing),
    ("temporary-tables", Takes::Nothing),
];

/// Characters a shell reads inside double quotes or that end single quotes, and the ones
/// that end, chain or redirect a command: never in an argument (run-all-tests quotes
/// each in `'...'`, which holds while none of these is there).
const SHELL: &str = "'\"`$\\;|&<>";

/// The options `name` means to Perl's Getopt::Long as sql-bench calls it: any case, the
/// whole name or else every option it is a prefix of (one: a unique abbreviation).
fn meant(name: &str) -> Vec<(&'static str, Takes)> {
    let name = name.to_ascii_lowercase();
    let exact: Vec<_> = OPTIONS
        .iter()
        .copied()
        .filter(|(o, _)| *o == name)
        .collect();
    if !exact.is_empty() || name.is_empty() {
        return exact;
    }
    OPTIONS
        .iter()
        .copied()
        .filter(|(o, _)| o.starts_with(&name))
        .collect()
}

/// Why `args` cannot be passed to sql-bench, if they cannot: read as Getopt::Long reads
/// them (`--name`, `-name` or `+name`, any case, unique abbreviations, `--name=value` or
/// `--name value`), an option bakeoff owns, one sql-bench does not have, a value of the
/// wrong kind, or text that would reach a shell: run-all-tests builds one shell command
/// per test with every argument in single quotes, and `--suffix`, `--machine` and
/// `--cmp` in a file name in double quotes.
pub fn refused_args(args: &[String]) -> Option<String> {
    for a in args {
        if let Some(c) = a.chars().find(|c| c.is_control() || SHELL.contains(*c)) {
            return Some(format!(
                "{a:?} holds {c:?}, which the shell command run-all-tests builds of every argument would read; remove it"
            ));
        }
    }
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let body = ["--", "-", "+"]
            .iter()
            .find_map(|p| a.strip_prefix(p))
            .filter(|b| !b.is_empty() && !b.starts_with('-'));
        let Some(body) = body else {
            return Some(format!(
                "{a:?} is not a sql-bench option; give options such as \"--small-test\" or \"--fast\""
            ));
        };
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let options = meant(name);
        let (option, takes) = match options[..] {
            [(owned, _)] if OWNED.contains(&owned) => {
                return Some(format!(
                    "{a:?} is sql-bench's --{owned} (it reads options in any case and by unique prefix), which bakeoff sets (the sandbox's server, login and output folder); remove it"
                ))
            }
            [one] => one,
            [] => {
                return Some(format!(
                    "{a:?} is not a sql-bench option; give options such as \"--small-test\" or \"--fast\""
                ))
            }
            _ => {
                let names: Vec<String> = options.iter().map(|(o, _)| format!("--{o}")).collect();
                return Some(format!(
                    "{a:?} is ambiguous in sql-bench: it could be {}; spell the option out",
                    names.join(", ")
                ));
            }
        };
        let value = match (takes, attached) {
            (Takes::Nothing, Some(_)) => {
                return Some(format!(
                    "{a:?}: sql-bench's --{option} takes no value; give \"--{option}\""
                ))
            }
            (Takes::Nothing, None) => continue,
            (_, Some(v)) => v,
            (_, None) => {
                i += 1;
                match args.get(i - 1) {
                    Some(v) => v.as_str(),
                    None => {
                        return Some(format!(
                            "{a:?}: sql-bench's --{option} needs a value, e.g. \"--{option}=...\""
                        ))
                    }
                }
            }
        };
        let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
        let number = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
        let name = value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,".contains(c));
        if takes == Takes::Number && !number {
            return Some(format!(
                "{a:?}: sql-bench's --{option} takes a whole number, got {value:?}"
            ));
        }
        if takes == Takes::Name && !name {
            return Some(format!(
                "{a:?}: sql-bench's --{option} becomes part of a file name in the shell command run-all-tests builds; use letters, digits, '_', '-', '.' and ',' only, got {value:?}"
            ));
        }
    }
    None
}

/// `text` with every occurrence of `secret` (the sandbox's password) replaced, so that
/// no message or log shows it.
pub fn redact(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        text.to_string()
    } else {
        text.replace(secret, "[password]")
    }
}

/// One timed operation of a test's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    pub name: String,
    /// sql-bench's count: the first number in the parentheses (statements or loops).
    pub count: u64,
    /// Wallclock seconds.
    pub seconds: f64,
}

/// What one test printed: its operations (a name timed twice summed, first place kept)
/// and its `Total time` in wallclock seconds, if it got there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub operations: Vec<Timed>,
    pub total_s: Option<f64>,
}

/// The wallclock seconds of `rest` ("0.676 wallclock secs (...)").
fn wallclock(rest: &str) -> Option<f64> {
    let before = rest.split("wallclock").next()?;
    before.trim().parse::<f64>().ok().filter(|s| s.is_finite())
}

/// Parses a test's output (see the module's doc).
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    for line in text.lines().map(str::trim) {
        let lower = line.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("total time:") {
            out.total_s = wallclock(rest);
            continue;
        }
        let Some(body) = ["time for ", "time to "]
            .iter()
            .find_map(|p| lower.starts_with(p).then(|| &line[p.len()..]))
        else {
            continue;
        };
        let Some((head, rest)) = body.split_once("):") else {
            continue;
        };
        let Some((name, counts)) = head.rsplit_once('(') else {
            continue;
        };
        let Some(seconds) = wallclock(rest) else {
            continue;
        };
        let name = name.trim().to_string();
        let count = counts
            .split(':')
            .next()
            .and_then(|c| c.trim().parse::<u64>().ok())
            .unwrap_or(0);
        match out.operations.iter_mut().find(|o| o.name == name) {
            Some(o) => {
                o.seconds += seconds;
                o.count += count;
            }
            None => out.operations.push(Timed {
                name,
                count,
                seconds,
            }),
        }
    }
    out
}

/// Why a test failed, from its exit status and output: the line that shows why; None
/// when it ran to its `Total time`.
pub fn failure(text: &str, status: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // The server's own error first, then what sql-bench could not do, then a die.
    let telling = [
        |l: &str| l.starts_with("Got error") || l.starts_with("Error:"),
        |l: &str| l.starts_with("Can't ") || l.starts_with("DBD::") || l.starts_with("DBI "),
        |l: &str| l.contains(" died") || l.contains(" at ") && l.contains(" line "),
    ]
    .iter()
    .find_map(|f| lines.iter().find(|l| f(l)));
    let ended = lines
        .last()
        .is_some_and(|l| l.to_ascii_lowercase().starts_with("total time:"));
    if status == "exit status 0" && ended && telling.is_none() {
        return None;
    }
    let why = telling
        .or(lines.last())
        .copied()
        .unwrap_or("it printed nothing");
    Some(if status == "exit status 0" {
        why.to_string()
    } else {
        format!("{status}: {why}")
    })
}

/// Configures the sql-bench at `src` into `into` (see the module's doc); `perl` replaces
/// the `@PERL@` placeholders. Files already configured in `src` (an installed
/// sql-bench) are copied as they are, a template winning over its configured copy.
pub fn configure(src: &Path, into: &Path, perl: &str) -> Result<(), String> {
    let fail = |what: &str, p: &Path, e: std::io::Error| format!("{what} {}: {e}", p.display());
    std::fs::create_dir_all(into).map_err(|e| fail("cannot create", into, e))?;
    let entries = std::fs::read_dir(src).map_err(|e| fail("cannot read", src, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if !names
        .iter()
        .any(|n| n == "run-all-tests.sh" || n == "run-all-tests")
    {
        return Err(format!(
            "{} holds no sql-bench (no run-all-tests.sh); give the sql-bench folder of a MariaDB source",
            src.display()
        ));
    }
    for name in &names {
        let from = src.join(name);
        if from.is_dir() {
            let to = into.join(name);
            if !to.exists() {
                std::os::unix::fs::symlink(&from, &to).map_err(|e| fail("cannot link", &to, e))?;
            }
            continue;
        }
        let (target, template) = match name.strip_suffix(".sh") {
            Some(t) => (t.to_string(), true),
            None => (name.clone(), false),
        };
        if !template && names.contains(&format!("{name}.sh")) {
            continue;
        }
        let bytes = std::fs::read(&from).map_err(|e| fail("cannot read", &from, e))?;
        let text = String::from_utf8_lossy(&bytes)
            .replace("@PERL@", perl)
            .replace("@PERL_PATH@", perl);
        let to = into.join(&target);
        std::fs::write(&to, text).map_err(|e| fail("cannot write", &to, e))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| fail("cannot chmod", &to, e))?;
    }
    Ok(())
}

/// The tests a configured sql-bench holds (`test-NAME` files, as run-all-tests finds them).
pub fn tests_in(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let t = n.strip_prefix("test-")?;
                    let t = t.strip_suffix(".sh").unwrap_or(t);
                    (!t.ends_with("-fork")).then(|| t.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests;
