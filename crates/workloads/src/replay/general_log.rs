//! MariaDB's general query log as the server writes it with `general_log = 1` and
//! `log_output = FILE`. A log (and every restart appended to it) opens with a header:
//!
//! ```text
//! /usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
//! Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
//! Time                Id Command  Argument
//! ```
//!
//! then one entry per command: `YYMMDD HH:MM:SS<TAB>` (the hour padded with a space) when
//! the second changed since the previous entry, `<TAB><TAB>` when it did not, the thread
//! id right-aligned (6 columns wide in 10.11; any width is read), a space, the command
//! (`Connect`, `Query`, `Init DB`, `Quit`, ...), a tab and the argument. A statement with
//! newlines goes on over the next lines, which start no new entry. MySQL's ISO timestamps
//! (`2023-11-23T10:00:00.123456Z`) are read too. Only `Query` and `Execute` (a prepared
//! statement with its parameters filled in) entries are statements to replay; their
//! session is the thread id.

use super::{ParseError, Statement};

/// The statements of a general log, in log order.
pub(super) fn parse(text: &str) -> Result<Vec<Statement>, ParseError> {
    let mut out = Vec::new();
    let mut pending: Option<Pending> = None;
    let mut header_left = 0;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if is_header_start(line) {
            flush(&mut pending, &mut out);
            header_left = 2;
            continue;
        }
        if header_left > 0 {
            header_left -= 1;
            if is_header_rest(line) {
                continue;
            }
            header_left = 0;
        }
        if let Some(e) = entry(line) {
            flush(&mut pending, &mut out);
            pending = Some(Pending {
                line: i + 1,
                session: e.id,
                keep: matches!(e.command, "Query" | "Execute"),
                sql: e.argument.to_string(),
            });
            continue;
        }
        match pending.as_mut() {
            Some(p) => {
                p.sql.push('\n');
                p.sql.push_str(raw);
            }
            None if line.trim().is_empty() => {}
            None => return Err(ParseError::new(i + 1, line, NOT_AN_ENTRY)),
        }
    }
    flush(&mut pending, &mut out);
    Ok(out)
}

const NOT_AN_ENTRY: &str = "a line before the first entry of the general log; an entry reads 'YYMMDD HH:MM:SS<TAB>   ID Command<TAB>Argument' (give the log from its header or an entry on, or name the format if it is not a general log)";

/// Whether `text` starts like a general log: its header, or an entry.
pub(super) fn looks_like(text: &str) -> bool {
    let Some(first) = text.lines().find(|l| !l.trim().is_empty()) else {
        return false;
    };
    is_header_start(first) || is_header_rest(first) || entry(first).is_some()
}

/// The entry being read: its argument grows with its continuation lines.
struct Pending {
    line: usize,
    session: u64,
    keep: bool,
    sql: String,
}

fn flush(pending: &mut Option<Pending>, out: &mut Vec<Statement>) {
    let Some(p) = pending.take() else { return };
    let sql = p.sql.trim();
    if p.keep && !sql.is_empty() {
        out.push(Statement {
            sql: sql.to_string(),
            line: p.line,
            session: Some(p.session),
        });
    }
}

/// `/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian 12). started with:`
fn is_header_start(line: &str) -> bool {
    line.contains(", Version: ") && line.trim_end().ends_with("started with:")
}

/// The two header lines after the first: `Tcp port: 3306  Unix socket: ...` and
/// `Time<TAB><TAB>    Id Command<TAB>Argument`.
fn is_header_rest(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.starts_with("tcp port: ")
        || (line.starts_with("Time") && line.contains("Id Command") && line.contains("Argument"))
}

/// One entry's fields.
struct Entry<'a> {
    id: u64,
    command: &'a str,
    argument: &'a str,
}

/// The entry that `line` starts, if it starts one.
fn entry(line: &str) -> Option<Entry<'_>> {
    let rest = match line.strip_prefix("\t\t") {
        Some(rest) => rest,
        None => {
            let (time, rest) = line.split_once('\t')?;
            if !is_timestamp(time) {
                return None;
            }
            rest
        }
    };
    let rest = rest.trim_start_matches(' ');
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let id = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(' ')?;
    let (command, argument) = rest.split_once('\t').unwrap_or((rest, ""));
    is_command(command).then_some(Entry {
        id,
        command,
        argument,
    })
}

/// `231123 10:00:00`, `231123  9:05:01` (MariaDB) or `2023-11-23T10:00:00.123456Z`
/// (MySQL 5.7 and later).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    let mariadb = b.len() == 15
        && digits(0..6)
        && b[6] == b' '
        && (b[7] == b' ' || b[7].is_ascii_digit())
        && b[8].is_ascii_digit()
        && b[9] == b':'
        && digits(10..12)
        && b[12] == b':'
        && digits(13..15);
    let iso = b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':';
    mariadb || iso
}

/// A command name as the server prints it: `Query`, `Init DB`, `Close stmt`,
/// `Bulk_execute`: a capital, then letters, spaces and underscores.
fn is_command(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 24
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|&c| c.is_ascii_alphabetic() || c == b' ' || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What MariaDB 10.11 writes for a client that connects, runs a few statements (one
    /// of them over several lines, one prepared) and quits, with the server's own
    /// startup entries before it.
    const SESSION: &str =
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time\t\t    Id Command\tArgument
231123  9:59:59\t     3 Connect\troot@localhost on  using Socket
\t\t     3 Query\tSELECT @@version_comment LIMIT 1
231123 10:00:02\t     3 Init DB\tshop
\t\t     3 Query\tSELECT id, name
FROM customer
WHERE city = 'Paris'
ORDER BY name
231123 10:00:03\t     3 Prepare\tSELECT name FROM customer WHERE id = ?
\t\t     3 Execute\tSELECT name FROM customer WHERE id = 42
\t\t     3 Close stmt\t
\t\t     3 Quit\t
";

    /// Two clients interleaved, ids of more than five digits, and the server restarted
    /// in the middle of the file (a second header).
    const INTERLEAVED: &str =
        "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (MariaDB Server). started with:
Tcp port: 3306  Unix socket: /tmp/mysql.sock
Time\t\t    Id Command\tArgument
231123 10:00:00\t   11 Connect\tbench@127.0.0.1 on bench using TCP/IP
\t\t   12 Connect\tbench@127.0.0.1 on bench using TCP/IP
\t\t   11 Query\tBEGIN
\t\t   12 Query\tUPDATE t SET k = k + 1
WHERE id = 7
231123 10:00:01\t   11 Query\tCOMMIT
\t\t   12 Quit\t
/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (MariaDB Server). started with:
Tcp port: 3306  Unix socket: /tmp/mysql.sock
Time\t\t    Id Command\tArgument
231123 10:05:00\t123456 Query\tSELECT 'a\tb'
";

    #[test]
    fn keeps_queries_and_executes_with_their_lines_and_sessions() {
        let got = parse(SESSION).unwrap();
        let sqls: Vec<&str> = got.iter().map(|s| s.sql.as_str()).collect();
        assert_eq!(
            sqls,
            [
                "SELECT @@version_comment LIMIT 1",
                "SELECT id, name\nFROM customer\nWHERE city = 'Paris'\nORDER BY name",
                "SELECT name FROM customer WHERE id = 42",
            ]
        );
        let lines: Vec<usize> = got.iter().map(|s| s.line).collect();
        assert_eq!(lines, [5, 7, 12]);
        assert!(got.iter().all(|s| s.session == Some(3)));
    }

    #[test]
    fn continuation_lines_sessions_and_restarts() {
        let got = parse(INTERLEAVED).unwrap();
        let rows: Vec<(&str, Option<u64>, usize)> = got
            .iter()
            .map(|s| (s.sql.as_str(), s.session, s.line))
            .collect();
        assert_eq!(
            rows,
            [
                ("BEGIN", Some(11), 6),
                ("UPDATE t SET k = k + 1\nWHERE id = 7", Some(12), 7),
                ("COMMIT", Some(11), 9),
                ("SELECT 'a\tb'", Some(123456), 14),
            ]
        );
    }

    #[test]
    fn reads_mysql_iso_timestamps() {
        let text = "2023-11-23T10:00:00.123456Z\t    8 Query\tSELECT 1\n2023-11-23T10:00:00.223456Z\t    8 Quit\t\n";
        let got = parse(text).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].sql.as_str(), got[0].session), ("SELECT 1", Some(8)));
    }

    #[test]
    fn recognises_a_log_by_its_header_or_first_entry() {
        assert!(looks_like(SESSION));
        assert!(looks_like("\n\t\t    5 Query\tSELECT 1\n"));
        assert!(looks_like(
            "231123 10:00:00\t    5 Connect\tx@y on  using TCP/IP\n"
        ));
        assert!(!looks_like("SELECT 1;\n"));
        assert!(!looks_like("231123 10:00:00 5 Query SELECT 1\n"));
        assert!(!looks_like("\t\t    5 query\tSELECT 1\n"));
    }

    #[test]
    fn text_before_the_first_entry_is_an_error() {
        let e = parse("SELECT 1\n\t\t    5 Query\tSELECT 2\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("YYMMDD HH:MM:SS"), "{e}");
        assert_eq!(parse("\n\n\t\t    5 Query\tSELECT 2\n").unwrap()[0].line, 3);
    }

    #[test]
    fn commands_are_told_from_query_text() {
        assert!(is_command("Init DB") && is_command("Bulk_execute") && is_command("Query"));
        assert!(!is_command("") && !is_command("select") && !is_command("Query;"));
        assert!(is_timestamp("231123  9:05:01") && is_timestamp("231123 19:05:01"));
        assert!(!is_timestamp("2311231 9:05:01") && !is_timestamp("SELECT 1"));
    }
}
