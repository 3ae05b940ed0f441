//! The parsing half of the `replay` workload: turns a query log into the list of
//! statements to send again, each with the line it came from and the connection that sent
//! it. Three inputs are understood: a `.sql` file of statements separated by `;`
//! ([`sqlfile`]), MariaDB's general query log as written with `log_output = FILE`
//! ([`general_log`]) and PostgreSQL's csvlog ([`csvlog`]). [`detect`] tells them apart by
//! their first lines; [`fingerprint`] reduces a statement to its class (literals replaced
//! by `?`) so a replay can report latencies per class. Nothing here talks to a server.

mod csvlog;
mod explain;
mod fingerprint;
mod general_log;
mod kind;
pub mod mysqlslap;
pub mod records;
mod run;
mod section;
mod sqlfile;
mod workload;

/// One statement to replay (the shared type: verification runs the same statements).
pub use crate::verify::Statement;
pub use explain::{explain, explainable, Explain};
pub use fingerprint::{class_id, fingerprint};
pub use kind::{ReplayKeys, ReplayKind, MYSQLSLAP, REPLAY};
pub use records::{ClassRecord, ExplainRecord, ReplayRun};
pub use run::{run, ClassStats, ReplayConfig, ReplayRecord};
pub use workload::{Replay, Sender, Statements};

use std::fmt;

/// The formats [`parse`] reads, as named in error messages.
pub const RECOGNISED_FORMATS: &str =
    ".sql file with statements separated by ';', MariaDB general query log, PostgreSQL csvlog";

/// What a query log is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogFormat {
    /// Plain SQL: statements separated by `;` (or by a `DELIMITER` of the mysql client).
    SqlFile,
    /// MariaDB's (or MySQL's) general query log, `general_log = 1`, `log_output = FILE`.
    MariadbGeneralLog,
    /// PostgreSQL's `log_destination = csvlog`, with `log_statement = all` or
    /// `log_min_duration_statement = 0`.
    PostgresCsvLog,
}

impl LogFormat {
    /// A short name for reports and configuration.
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::SqlFile => "sql",
            LogFormat::MariadbGeneralLog => "mariadb-general-log",
            LogFormat::PostgresCsvLog => "postgres-csvlog",
        }
    }

    /// The format called `name` (see [`LogFormat::name`]).
    pub fn from_name(name: &str) -> Option<LogFormat> {
        [
            LogFormat::SqlFile,
            LogFormat::MariadbGeneralLog,
            LogFormat::PostgresCsvLog,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
}

/// Why an input could not be read, and where. It displays as the line and what is wrong,
/// never the text: the file is whatever the experiment named (`/proc/self/environ`, a
/// key), and nothing of its content may reach a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the offending text.
    pub line: usize,
    /// The first ~80 characters of the offending text, on one line (for tests and
    /// callers that know the file is theirs; never displayed).
    pub statement: String,
    /// What is wrong and what to do about it.
    pub message: String,
}

impl ParseError {
    /// An error at `line` about `text` (shortened to its first 80 characters).
    pub fn new(line: usize, text: &str, message: impl Into<String>) -> ParseError {
        ParseError {
            line,
            statement: excerpt(text, 80),
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// The first `max` characters of `text` with its whitespace runs collapsed to one space,
/// and "..." when something was cut.
fn excerpt(text: &str, max: usize) -> String {
    let words: Vec<&str> = head(text, max * 4).split_whitespace().collect();
    let one_line = words.join(" ");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &one_line[..cut]),
        None => one_line,
    }
}

/// The first `bytes` bytes of `text` (fewer, to end on a character boundary).
fn head(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The format of `text`, from its first lines: a general log by its header or its first
/// entry, a csvlog by a first record that starts with a timestamp and has 23 or more
/// fields, anything else a `.sql` file. None for an empty input, binary data, and the
/// logs that look like query logs but are not read here (MariaDB's slow query log,
/// PostgreSQL's stderr log).
pub fn detect(text: &str) -> Option<LogFormat> {
    if text.trim().is_empty() || head(text, 64 * 1024).contains('\0') {
        return None;
    }
    if general_log::looks_like(text) {
        return Some(LogFormat::MariadbGeneralLog);
    }
    if csvlog::looks_like(text) {
        return Some(LogFormat::PostgresCsvLog);
    }
    if is_unsupported_log(text) {
        return None;
    }
    Some(LogFormat::SqlFile)
}

/// A slow query log (`# User@Host:` and `# Query_time:` headers) or a PostgreSQL stderr
/// log (lines that start with a timestamp and hold `LOG:  `).
fn is_unsupported_log(text: &str) -> bool {
    let head: Vec<&str> = text.lines().take(50).collect();
    let slow = head.iter().any(|l| l.starts_with("# User@Host:"))
        && head.iter().any(|l| l.starts_with("# Query_time:"));
    let pg_stderr = head
        .iter()
        .any(|l| csvlog::starts_with_timestamp(l) && l.contains(" LOG:  "));
    slow || pg_stderr
}

/// The statements of `text` read as `format`, in input order. An input without any
/// statement is an error too (a log written without statement logging turned on).
pub fn parse(text: &str, format: LogFormat) -> Result<Vec<Statement>, ParseError> {
    let statements = match format {
        LogFormat::SqlFile => sqlfile::parse(text)?,
        LogFormat::MariadbGeneralLog => general_log::parse(text)?,
        LogFormat::PostgresCsvLog => csvlog::parse(text)?,
    };
    if statements.is_empty() {
        let hint = match format {
            LogFormat::SqlFile => "the .sql file holds no statement (only comments or blanks); give it statements separated by ';'",
            LogFormat::MariadbGeneralLog => "the general log holds no Query or Execute entry; log them with general_log = 1 and log_output = FILE while the workload runs",
            LogFormat::PostgresCsvLog => "the csvlog holds no statement; log them with log_statement = 'all' or log_min_duration_statement = 0",
        };
        let first = text.lines().next().unwrap_or("");
        return Err(ParseError::new(1, first, hint));
    }
    Ok(statements)
}

/// [`detect`] then [`parse`]; an input of no recognised format is an error that lists the
/// formats that are.
pub fn parse_auto(text: &str) -> Result<(LogFormat, Vec<Statement>), ParseError> {
    let Some(format) = detect(text) else {
        let (line, first) = text
            .lines()
            .enumerate()
            .find(|(_, l)| !l.trim().is_empty())
            .map_or((1, ""), |(i, l)| (i + 1, l));
        let what = if text.trim().is_empty() {
            "the input is empty"
        } else {
            "the input is not in a format bakeoff can replay"
        };
        let message = format!("{what}; give it one of: {RECOGNISED_FORMATS}");
        return Err(ParseError::new(line, first, message));
    };
    Ok((format, parse(text, format)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERAL: &str = "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:\nTcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n231123 10:00:00\t    5 Connect\troot@localhost on test using Socket\n\t\t    5 Query\tSELECT 1\n";

    const CSV: &str = "2026-11-23 10:00:00.123 UTC,\"bench\",\"bench\",4242,\"127.0.0.1:50000\",655f1a2b.1092,1,\"idle\",2026-11-23 10:00:00 UTC,3/2,0,LOG,00000,\"statement: SELECT 1\",,,,,,,,,\"psql\",\"client backend\",,0\n";

    #[test]
    fn detects_the_three_formats_and_refuses_the_rest() {
        assert_eq!(detect(GENERAL), Some(LogFormat::MariadbGeneralLog));
        assert_eq!(detect(CSV), Some(LogFormat::PostgresCsvLog));
        assert_eq!(detect("SELECT 1;\n"), Some(LogFormat::SqlFile));
        assert_eq!(
            detect("-- nothing but SQL\nselect 2"),
            Some(LogFormat::SqlFile)
        );
        assert_eq!(detect("  \n\n"), None);
        assert_eq!(detect("\u{fe}bin\0log"), None);
        let slow = "# Time: 231123 10:00:00\n# User@Host: root[root] @ localhost []\n# Query_time: 0.1  Lock_time: 0.0\nSELECT 1;\n";
        assert_eq!(detect(slow), None);
        let stderr = "2026-11-23 10:00:00.123 UTC [4242] LOG:  statement: SELECT 1\n";
        assert_eq!(detect(stderr), None);
    }

    #[test]
    fn parse_auto_reads_each_format() {
        let (f, s) = parse_auto(GENERAL).unwrap();
        assert_eq!(f, LogFormat::MariadbGeneralLog);
        assert_eq!(s[0].sql, "SELECT 1");
        assert_eq!(s[0].session, Some(5));
        let (f, s) = parse_auto(CSV).unwrap();
        assert_eq!(f, LogFormat::PostgresCsvLog);
        assert_eq!((s[0].sql.as_str(), s[0].session), ("SELECT 1", Some(4242)));
        let (f, s) = parse_auto("SELECT 2;").unwrap();
        assert_eq!(
            (f, s[0].sql.as_str(), s[0].line),
            (LogFormat::SqlFile, "SELECT 2", 1)
        );
    }

    #[test]
    fn an_unrecognised_input_lists_the_recognised_formats() {
        let e = parse_auto("# Time: 1\n# User@Host: a\n# Query_time: 2\n").unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.starts_with("line 1: the input is not in a format"),
            "{shown}"
        );
        assert!(shown.contains(RECOGNISED_FORMATS), "{shown}");
        assert!(!shown.contains("# Time"), "{shown}");
        let e = parse_auto("\n\n# User@Host: a\n# Query_time: 2\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse_auto("").unwrap_err();
        assert!(e.message.contains("empty") && e.message.contains("PostgreSQL csvlog"));
    }

    #[test]
    fn an_input_without_statements_is_an_error() {
        let e = parse("-- only a comment\n;;\n", LogFormat::SqlFile).unwrap_err();
        assert!(e.message.contains("no statement"), "{e}");
        let header_only = GENERAL.lines().take(4).collect::<Vec<_>>().join("\n");
        let e = parse(&header_only, LogFormat::MariadbGeneralLog).unwrap_err();
        assert!(e.message.contains("general_log = 1"), "{e}");
    }

    #[test]
    fn errors_show_line_and_message_never_the_text() {
        let long = format!("SELECT '{}'\n  FROM t", "x".repeat(200));
        let e = ParseError::new(7, &long, "something is wrong");
        assert_eq!(e.statement.chars().count(), 83);
        assert!(e.statement.ends_with("..."));
        assert_eq!(e.to_string(), "line 7: something is wrong");
        let e = ParseError::new(2, "a\n   b", "m");
        assert_eq!(e.to_string(), "line 2: m");
    }

    #[test]
    fn arbitrary_input_never_panics() {
        let pieces = [
            "'",
            "\"",
            "`",
            "$",
            "$a$",
            "$1",
            "--",
            " ",
            "\n",
            "#",
            "/*",
            "*/",
            ";",
            "\\",
            "a",
            "1",
            "-",
            ".",
            "(",
            ")",
            ",",
            "é",
            "\t",
            "\t\t 5 Query\t",
            "IN",
            "VALUES",
            "DELIMITER ",
            "0x",
            "e",
            "2026-11-23 10:00:00 UTC,",
            "statement: ",
            "\r",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..3000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for k in 0..(seed % 40) {
                text.push_str(pieces[((seed >> (k % 50)) as usize + k as usize) % pieces.len()]);
            }
            let _ = detect(&text);
            let _ = parse_auto(&text);
            for f in [
                LogFormat::SqlFile,
                LogFormat::MariadbGeneralLog,
                LogFormat::PostgresCsvLog,
            ] {
                let _ = parse(&text, f);
            }
            let fp = fingerprint(&text);
            assert_eq!(class_id(&fp).len(), 16);
        }
    }

    #[test]
    fn format_names_round_trip() {
        for f in [
            LogFormat::SqlFile,
            LogFormat::MariadbGeneralLog,
            LogFormat::PostgresCsvLog,
        ] {
            assert_eq!(LogFormat::from_name(f.name()), Some(f));
        }
        assert_eq!(LogFormat::from_name("slowlog"), None);
    }
}

/// The fixtures of `tests/fixtures/replay`: a .sql file, the logs MariaDB and PostgreSQL
/// wrote while running it (see `tests/replay_capture.rs`), and a broken .sql file.
#[cfg(test)]
mod fixture_tests {
    use super::*;
    use std::collections::BTreeSet;

    const SQL: &str = include_str!("../../tests/fixtures/replay/oltp-mix.sql");
    const GENERAL: &str = include_str!("../../tests/fixtures/replay/oltp-mix.general.log");
    const CSV: &str = include_str!("../../tests/fixtures/replay/oltp-mix.csv");
    const UNTERMINATED: &str = include_str!("../../tests/fixtures/replay/unterminated.sql");

    /// What bakeoff's client could send by itself around a session's statements.
    fn is_client_setup(sql: &str) -> bool {
        let upper = sql.to_ascii_uppercase();
        ["SET ", "SHOW ", "SELECT @@"]
            .iter()
            .any(|p| upper.starts_with(p))
    }

    /// The statements of the session that ran the .sql file (the session of the first
    /// statement equal to the file's first), without client setup statements. The
    /// sandbox's readiness probe runs on sessions of its own.
    fn file_session(log: &[Statement], first: &str) -> Vec<Statement> {
        let session = log
            .iter()
            .find(|s| s.sql == first)
            .expect("the file's first statement is in the log")
            .session;
        assert!(session.is_some());
        log.iter()
            .filter(|s| s.session == session && !is_client_setup(&s.sql))
            .cloned()
            .collect()
    }

    fn fingerprints(statements: &[Statement]) -> Vec<String> {
        statements.iter().map(|s| fingerprint(&s.sql)).collect()
    }

    #[test]
    fn the_sql_fixture_splits_into_its_statements() {
        let (format, statements) = parse_auto(SQL).unwrap();
        assert_eq!(format, LogFormat::SqlFile);
        assert_eq!(statements.len(), 44);
        assert_eq!(statements[0].sql, "DROP TABLE IF EXISTS shop_order");
        assert_eq!(statements[0].line, 5);
        let notes: Vec<&Statement> = statements
            .iter()
            .filter(|s| s.sql.contains("'gift; wrap it'") || s.sql.contains("'rush; please'"))
            .collect();
        assert_eq!(notes.len(), 2, "semicolons inside strings do not split");
        let classes: BTreeSet<String> = fingerprints(&statements).into_iter().collect();
        assert!(classes.contains("select name, city from shop_customer where id = ?"));
        assert!(classes.contains("select id, name from shop_customer where id in (?+) order by id"));
        assert_eq!(classes.len(), 31, "{classes:#?}");
    }

    #[test]
    fn real_logs_hold_the_sql_files_statements_and_classes() {
        let file = parse(SQL, LogFormat::SqlFile).unwrap();
        let logs = [
            (GENERAL, LogFormat::MariadbGeneralLog),
            (CSV, LogFormat::PostgresCsvLog),
        ];
        for (text, expected) in logs {
            let (format, all) = parse_auto(text).unwrap();
            assert_eq!(format, expected);
            let ran = file_session(&all, &file[0].sql);
            assert!(
                all.len() > ran.len(),
                "{expected:?}: the probe's statements are in the log too"
            );
            assert_eq!(ran.len(), file.len(), "{expected:?}");
            assert_eq!(fingerprints(&ran), fingerprints(&file), "{expected:?}");
            let ids = |s: &[Statement]| -> BTreeSet<String> {
                s.iter().map(|s| class_id(&fingerprint(&s.sql))).collect()
            };
            assert_eq!(ids(&ran), ids(&file), "{expected:?}");
            for (r, f) in ran.iter().zip(&file) {
                assert_eq!(r.sql, f.sql, "{expected:?}: log line {}", r.line);
            }
        }
    }

    #[test]
    fn the_unterminated_fixture_names_the_line_of_its_open_quote() {
        let e = parse_auto(UNTERMINATED).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.starts_with("unterminated string"), "{e}");
        assert!(
            e.statement.starts_with("'Grace); INSERT INTO people"),
            "{e}"
        );
    }
}
