//! PostgreSQL's csvlog (`log_destination = csvlog`, `logging_collector = on`), with
//! statements logged by `log_statement = all` or `log_min_duration_statement = 0`. It is
//! RFC 4180 CSV: fields separated by commas, quoted ones between double quotes (a quote
//! inside doubled) and free to span lines. PostgreSQL 15 writes 26 columns: log_time,
//! user_name, database_name, process_id, connection_from, session_id, session_line_num,
//! command_tag, session_start_time, virtual_transaction_id, transaction_id,
//! error_severity, sql_state_code, message, detail, hint, internal_query,
//! internal_query_pos, context, query, query_pos, location, application_name,
//! backend_type, leader_pid, query_id (12 writes the first 23, 13 the first 24).
//!
//! A statement is a `message` that reads `statement: SQL`, `execute NAME: SQL` (the
//! extended protocol; the `detail` then lists the parameters, which are put in place of
//! `$1`, `$2`, ...), or either after `duration: X ms  `. The `duration: X ms` records of
//! statements logged already, and the `parse` and `bind` steps, are not statements. The
//! session is the backend's process id.

use super::{ParseError, Statement};

const PROCESS_ID: usize = 3;
const MESSAGE: usize = 13;
const DETAIL: usize = 14;
/// PostgreSQL 12's column count; later versions add columns at the end.
const MIN_FIELDS: usize = 23;

/// The statements of a csvlog, in log order.
pub(super) fn parse(text: &str) -> Result<Vec<Statement>, ParseError> {
    let mut csv = Csv::new(text);
    let mut out = Vec::new();
    while let Some((line, fields)) = csv.record()? {
        if fields.len() < MIN_FIELDS {
            let message = format!(
                "a csvlog record of {} fields; PostgreSQL's csvlog has {MIN_FIELDS} or more (log_destination = csvlog, PostgreSQL 12 or later)",
                fields.len()
            );
            return Err(ParseError::new(line, &fields.join(","), message));
        }
        if let Some(sql) = statement(&fields[MESSAGE], &fields[DETAIL]) {
            out.push(Statement {
                sql,
                line,
                session: fields[PROCESS_ID].parse().ok(),
            });
        }
    }
    Ok(out)
}

/// Whether `text` starts like a csvlog: a first record that starts with a timestamp and
/// has 23 fields or more.
pub(super) fn looks_like(text: &str) -> bool {
    let start = text.len() - text.trim_start().len();
    let text = &text[start..];
    let Some(first) = text.lines().next() else {
        return false;
    };
    let stamp_then_comma = first
        .split_once(',')
        .is_some_and(|(stamp, _)| starts_with_timestamp(stamp));
    if !stamp_then_comma {
        return false;
    }
    matches!(Csv::new(text).record(), Ok(Some((_, f))) if f.len() >= MIN_FIELDS)
}

/// `2026-11-23 10:00:00` (then the milliseconds and zone of a log_time).
pub(super) fn starts_with_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b' '
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
}

/// The SQL a `message` logs, with the parameters of its `detail` in place; None for
/// messages that are not statements.
fn statement(message: &str, detail: &str) -> Option<String> {
    let logged = match message.strip_prefix("duration: ") {
        Some(rest) => rest.split_once(" ms  ")?.1,
        None => message,
    };
    if let Some(sql) = logged.strip_prefix("statement: ") {
        return Some(sql.trim().to_string());
    }
    let (_, sql) = logged.strip_prefix("execute ")?.split_once(": ")?;
    let params = detail
        .strip_prefix("parameters: ")
        .map(parameters)
        .unwrap_or_default();
    Some(substitute(sql.trim(), &params))
}

/// The values of `$1 = '42', $2 = NULL, ...` (the text after `parameters: `), by number
/// (index 0 is unused). Values are SQL literals as PostgreSQL quotes them.
fn parameters(list: &str) -> Vec<Option<String>> {
    let mut values = Vec::new();
    let mut rest = list;
    while let Some(after) = rest.strip_prefix('$') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(n) = after[..digits].parse::<usize>() else {
            break;
        };
        let Some(value) = after[digits..].strip_prefix(" = ") else {
            break;
        };
        let len = literal_len(value);
        if values.len() <= n {
            values.resize(n + 1, None);
        }
        values[n] = Some(value[..len].to_string());
        rest = value[len..].strip_prefix(", ").unwrap_or("");
    }
    values
}

/// The length of the literal at the start of `s`: a quoted string (`''` inside), or a
/// bare word such as NULL.
fn literal_len(s: &str) -> usize {
    if !s.starts_with('\'') {
        return s.find(", $").unwrap_or(s.len());
    }
    super::sqlfile::quoted_end(s.as_bytes(), 0, b'\'', false).unwrap_or(s.len())
}

/// `sql` with each `$n` outside quoted strings replaced by parameter n, if there is one.
fn substitute(sql: &str, params: &[Option<String>]) -> String {
    if params.is_empty() {
        return sql.to_string();
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if b[i] == b'\'' {
            i += literal_len(&sql[i..]);
            continue;
        }
        let after_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i] != b'$' || after_ident {
            i += 1;
            continue;
        }
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let value = sql[i + 1..i + 1 + digits]
            .parse::<usize>()
            .ok()
            .and_then(|n| params.get(n).cloned().flatten());
        if let Some(v) = value {
            out.push_str(&sql[copied..i]);
            out.push_str(&v);
            copied = i + 1 + digits;
        }
        i += 1 + digits;
    }
    out.push_str(&sql[copied..]);
    out
}

/// An RFC 4180 reader that knows the line each record starts on.
struct Csv<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Csv<'a> {
    fn new(text: &'a str) -> Csv<'a> {
        Csv {
            text,
            pos: 0,
            line: 1,
        }
    }

    /// The next record and its first line; None at the end. Blank lines are skipped.
    fn record(&mut self) -> Result<Option<(usize, Vec<String>)>, ParseError> {
        let b = self.text.as_bytes();
        while self.pos < b.len() && (b[self.pos] == b'\n' || b[self.pos] == b'\r') {
            self.line += usize::from(b[self.pos] == b'\n');
            self.pos += 1;
        }
        if self.pos >= b.len() {
            return Ok(None);
        }
        let line = self.line;
        let mut fields = Vec::new();
        loop {
            fields.push(self.field(line)?);
            let rest = &self.text[self.pos..];
            if rest.starts_with(',') {
                self.pos += 1;
            } else if rest.starts_with('\n') || rest.starts_with("\r\n") {
                self.pos += if rest.starts_with('\n') { 1 } else { 2 };
                self.line += 1;
                return Ok(Some((line, fields)));
            } else if rest.is_empty() {
                return Ok(Some((line, fields)));
            } else {
                let message = "text after a quoted field's closing quote; a quote inside a quoted field is written \"\"";
                return Err(ParseError::new(self.line, rest, message));
            }
        }
    }

    /// The field at `pos`, unquoted; `pos` is left on the comma or line end after it.
    fn field(&mut self, record_line: usize) -> Result<String, ParseError> {
        let rest = &self.text[self.pos..];
        if !rest.starts_with('"') {
            let len = rest.find([',', '\n']).unwrap_or(rest.len());
            let value = &rest[..len];
            let at_line_end = rest[len..].starts_with('\n');
            let value = match value.strip_suffix('\r') {
                Some(v) if at_line_end => v,
                _ => value,
            };
            self.pos += value.len();
            return Ok(value.to_string());
        }
        let mut value = String::new();
        let mut from = 1;
        loop {
            let Some(q) = rest[from..].find('"').map(|i| from + i) else {
                let message = "unterminated quoted field (the record runs to the end of the file; was the csvlog cut short?)";
                return Err(ParseError::new(record_line, rest, message));
            };
            value.push_str(&rest[from..q]);
            if rest[q + 1..].starts_with('"') {
                value.push('"');
                from = q + 2;
            } else {
                self.line += rest[..q + 1].matches('\n').count();
                self.pos += q + 1;
                return Ok(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PostgreSQL 15 csvlog: the server starting, a client with `log_statement = all`
    /// running a multi-line statement, a statement with quotes and commas, a prepared
    /// one with parameters, and a `duration` record.
    const LOG: &str = r#"2026-11-23 10:00:00.101 UTC,,,3001,,655f1a2b.bb9,1,,2026-11-23 10:00:00 UTC,,0,LOG,00000,"starting PostgreSQL 15.5 (Debian 15.5-0+deb12u1) on x86_64-pc-linux-gnu",,,,,,,,,"","postmaster",,0
2026-11-23 10:00:00.150 UTC,,,3001,,655f1a2b.bb9,2,,2026-11-23 10:00:00 UTC,,0,LOG,00000,"database system is ready to accept connections",,,,,,,,,"","postmaster",,0
2026-11-23 10:00:01.002 UTC,"bench","bench",3010,"127.0.0.1:50312",655f1a2d.bc2,1,"idle",2026-11-23 10:00:01 UTC,3/2,0,LOG,00000,"statement: SELECT c, pad
FROM sbtest1
WHERE id = 42",,,,,,,,,"bakeoff","client backend",,0
2026-11-23 10:00:01.010 UTC,"bench","bench",3010,"127.0.0.1:50312",655f1a2d.bc2,2,"idle",2026-11-23 10:00:01 UTC,3/3,0,LOG,00000,"statement: INSERT INTO t VALUES ('say ""hi"", then, go')",,,,,,,,,"bakeoff","client backend",,0
2026-11-23 10:00:01.020 UTC,"bench","bench",3011,"127.0.0.1:50314",655f1a2d.bc3,3,"SELECT",2026-11-23 10:00:01 UTC,4/7,0,LOG,00000,"execute S_1: SELECT k FROM t WHERE id = $1 AND c = $2 AND note <> '$1'","parameters: $1 = '7', $2 = 'it''s'",,,,,,,,"bakeoff","client backend",,0
2026-11-23 10:00:01.030 UTC,"bench","bench",3011,"127.0.0.1:50314",655f1a2d.bc3,4,"UPDATE",2026-11-23 10:00:01 UTC,4/8,0,LOG,00000,"duration: 0.213 ms  statement: UPDATE t SET k = k + 1 WHERE id = 9",,,,,,,,,"bakeoff","client backend",,0
2026-11-23 10:00:01.031 UTC,"bench","bench",3011,"127.0.0.1:50314",655f1a2d.bc3,5,"UPDATE",2026-11-23 10:00:01 UTC,4/8,0,LOG,00000,"duration: 0.213 ms",,,,,,,,,"bakeoff","client backend",,0
2026-11-23 10:00:01.040 UTC,"bench","bench",3011,"127.0.0.1:50314",655f1a2d.bc3,6,"SELECT",2026-11-23 10:00:01 UTC,4/9,0,LOG,00000,"duration: 0.050 ms  parse <unnamed>: SELECT 1",,,,,,,,,"bakeoff","client backend",,0
2026-11-23 10:00:01.041 UTC,"bench","bench",3011,"127.0.0.1:50314",655f1a2d.bc3,7,"SELECT",2026-11-23 10:00:01 UTC,4/9,0,LOG,00000,"duration: 0.090 ms  execute <unnamed>: SELECT $1::int","parameters: $1 = NULL",,,,,,,,"bakeoff","client backend",,0
"#;

    #[test]
    fn reads_statements_across_quoted_newlines() {
        let got = parse(LOG).unwrap();
        let rows: Vec<(&str, usize, Option<u64>)> = got
            .iter()
            .map(|s| (s.sql.as_str(), s.line, s.session))
            .collect();
        assert_eq!(
            rows,
            [
                ("SELECT c, pad\nFROM sbtest1\nWHERE id = 42", 3, Some(3010)),
                (
                    "INSERT INTO t VALUES ('say \"hi\", then, go')",
                    6,
                    Some(3010)
                ),
                (
                    "SELECT k FROM t WHERE id = '7' AND c = 'it''s' AND note <> '$1'",
                    7,
                    Some(3011)
                ),
                ("UPDATE t SET k = k + 1 WHERE id = 9", 8, Some(3011)),
                ("SELECT NULL::int", 11, Some(3011)),
            ]
        );
    }

    #[test]
    fn recognises_a_csvlog_by_its_first_record() {
        assert!(looks_like(LOG));
        assert!(looks_like(&format!("\n\n{LOG}")));
        assert!(!looks_like("2026-11-23 10:00:00.101 UTC,short,record\n"));
        assert!(!looks_like(
            "2026-11-23 10:00:00.101 UTC [3001] LOG:  statement: SELECT 1\n"
        ));
        assert!(!looks_like("SELECT '2026-11-23 10:00:00',1;"));
    }

    #[test]
    fn quoted_fields_follow_rfc_4180() {
        let mut csv = Csv::new("a,\"b,\"\"c\"\"\nd\",,e\r\n\n\"x\"\ny\r,z\r\n");
        assert_eq!(
            csv.record().unwrap(),
            Some((
                1,
                vec!["a".into(), "b,\"c\"\nd".into(), "".into(), "e".into()]
            ))
        );
        assert_eq!(csv.record().unwrap(), Some((4, vec!["x".into()])));
        let carriage_return = Some((5, vec!["y\r".into(), "z".into()]));
        assert_eq!(csv.record().unwrap(), carriage_return);
        assert_eq!(csv.record().unwrap(), None);
    }

    #[test]
    fn broken_records_are_errors_with_their_line() {
        let cut = LOG.lines().take(4).collect::<Vec<_>>().join("\n");
        let e = parse(&cut).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.starts_with("unterminated quoted field"), "{e}");
        assert!(e
            .statement
            .starts_with("\"statement: SELECT c, pad FROM sbtest1"));
        let e = parse("2026-11-23 10:00:00.101 UTC,a,b\n").unwrap_err();
        assert!(e.message.contains("23 or more"), "{e}");
        let e = parse("\"a\"b,c\n").unwrap_err();
        assert!(e.message.contains("closing quote"), "{e}");
    }

    #[test]
    fn parameters_are_put_in_place() {
        let p = parameters("$1 = '1', $2 = NULL, $3 = 'a, $2 = ''b'''");
        assert_eq!(
            p,
            [
                None,
                Some("'1'".into()),
                Some("NULL".into()),
                Some("'a, $2 = ''b'''".into())
            ]
        );
        assert_eq!(
            substitute("f($3, $2,$1, $10, x$1)", &p),
            "f('a, $2 = ''b''', NULL,'1', $10, x$1)"
        );
        assert_eq!(substitute("SELECT $1", &[]), "SELECT $1");
    }
}
