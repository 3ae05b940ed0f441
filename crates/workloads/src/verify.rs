//! Result-equivalence verification: a build made with another compiler, other flags or a
//! patch can return wrong answers, so bakeoff runs one query set against every variant's
//! server and compares what each statement returned with the baseline's.
//!
//! [`run_set`] runs the statements in order on one connection and reduces each result to
//! an [`Outcome`]: a hash of its canonical encoding, the row count and a sample. Then,
//! for every table the set writes to (`INSERT INTO t`, `REPLACE INTO t`, `UPDATE t`,
//! `DELETE FROM t`), it appends an outcome of `SELECT * FROM t`, so updates are checked
//! through what they left behind. [`compare`] pairs two runs position by position and
//! lists the statements whose hashes differ, with the first rows that differ.
//!
//! The canonical encoding of a result set:
//! - each value as the text the server sent, NULL as `\N`; a backslash in a value is
//!   doubled and the separators are escaped (`\x1f`, `\x1e`), so no value collides with
//!   the NULL marker or spills into its neighbour;
//! - values joined with `0x1f`, rows with `0x1e`, after the column count;
//! - rows sorted unless the statement has an `ORDER BY` at its top level (outside any
//!   parentheses: see [`has_top_level_order_by`]); then their order counts.
//!
//! Numbers are kept as the server formats them: a decimal returned with another scale
//! (`0.3333` against `0.333333`) or a float printed with other digits is a difference a
//! user wants to see. The one normalization is negative zero (`-0`, `-0.00`, `-0e0`),
//! written without its sign: whether a computation lands on -0 or 0 is a harmless
//! accident of instruction order. A statement without a result set is
//! hashed by its affected-row count (DML), or as done (DDL: `CREATE`, `DROP`, `ALTER`,
//! `TRUNCATE`, `RENAME`, `ANALYZE`, `OPTIMIZE`, whose counts depend on how the engine
//! carries them out). A failed statement is hashed by its error class:
//! its kind and the server's error code or SQLSTATE, not the wording, so the same
//! failure on two variants is the same outcome and a failure on one only is a
//! difference.
//!
//! What this cannot make deterministic is left to the query set: `LIMIT` without an
//! `ORDER BY`, an `ORDER BY` with ties, `NOW()` or `RAND()` differ between any two runs.
//! A lost connection (a server that crashed on a statement) is that statement's error;
//! the next statement reconnects once, and if that fails every remaining statement
//! carries the same error.

use bakeoff_engine::LoadError;
use bakeoff_sqlclient::Db;
use bakeoff_sqlclient::{Client, DbError, Rows};
use sha2::{Digest, Sha256};
use std::cmp::Ordering;
use std::time::Duration;

/// One statement to send: a query log's (replay) or a query set's (verification).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The statement's text, without comments (in a `.sql` file) and surrounding space.
    pub sql: String,
    /// The 1-based line of the input where the statement (or its log entry) starts.
    pub line: usize,
    /// The connection that sent it: the thread id of a general log, the process id of a
    /// csvlog; None for a `.sql` file.
    pub session: Option<u64>,
}

/// How NULL is encoded.
pub const NULL_MARKER: &str = "\\N";
/// Separates values within a row.
pub const VALUE_SEP: char = '\x1f';
/// Separates rows.
pub const ROW_SEP: char = '\x1e';
/// Rows of each outcome kept in [`Outcome::sample`] and shown per side of a
/// [`Difference`].
pub const SAMPLE_ROWS: usize = 5;
/// Results of up to this many rows are kept whole ([`Outcome::kept`]) so a difference
/// can show the rows that differ; beyond it only the hash and the sample are kept.
pub const KEPT_ROWS: usize = 1000;
/// How the follow-up selects are marked in [`Outcome::query`].
pub const AFTER_THE_SET: &str = "-- after the set: ";
/// How long one statement may run before it counts as failed (kind `timeout`).
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(600);

/// What one statement returned, reduced for comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The statement as run (a follow-up select starts with [`AFTER_THE_SET`]).
    pub query: String,
    /// Its line in the query set; 0 for the follow-up selects.
    pub line: usize,
    /// 16 hex digits of the SHA-256 of the canonical result (or of the error class).
    pub hash: String,
    /// Rows returned; for a statement without a result set, rows affected.
    pub rows: u64,
    /// The first [`SAMPLE_ROWS`] canonical rows (after sorting, when order does not
    /// count); see [`display_row`].
    pub sample: Vec<String>,
    /// `kind: message` of a failed statement.
    pub error: Option<String>,
    /// Columns of the result set; 0 for a statement without one (and a failure).
    pub columns: usize,
    /// All canonical rows, as hashed, when there are at most [`KEPT_ROWS`].
    pub kept: Option<Vec<String>>,
    /// Whether the rows' order counted (a top-level ORDER BY).
    pub ordered: bool,
    /// The hash of the rows in the order they arrived (the same as `hash` when order
    /// counts and for a statement without a result set).
    pub arrival_hash: String,
    /// The first [`SAMPLE_ROWS`] canonical rows in the order they arrived.
    pub arrived: Vec<String>,
    /// The hash of the canonical form used between servers of different kinds: every
    /// number by its value ([`canonical_number`]), rows sorted unless order counts.
    pub loose_hash: String,
}

/// A statement whose result differs from the baseline's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub query: String,
    pub line: usize,
    /// This variant's hash ("" when this variant has no outcome at this position).
    pub hash: String,
    pub baseline_hash: String,
    /// Up to [`SAMPLE_ROWS`] canonical rows this variant returned and the baseline did
    /// not (or from the first position where the order differs); for a statement
    /// without a result set, `affected rows: N`.
    pub rows: Vec<String>,
    pub baseline_rows: Vec<String>,
    pub error: Option<String>,
    pub baseline_error: Option<String>,
    /// Why the results count as different (rows, order, errors, counts).
    pub reason: String,
}

/// A statement whose results were not identical, byte for byte and in order, but were
/// treated as equal, and why: rows in another order for a query without ORDER BY, or
/// (between servers of different kinds) numbers printed differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    pub query: String,
    pub line: usize,
    /// Rows of this variant's result where it differed from the baseline's as sent.
    pub rows: Vec<String>,
    pub baseline_rows: Vec<String>,
    pub reason: String,
}

/// How a variant's outcomes compare with the baseline's: the differences, and the
/// statements treated as equal only in a canonical form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    pub differences: Vec<Difference>,
    pub explained: Vec<Explained>,
}

/// Runs `statements` in order on one connection to `db`, then `SELECT * FROM t` for
/// every table `t` they write to. Fails only when the first connection cannot be
/// opened; a failing statement is an outcome.
pub fn run_set(db: &Db, statements: &[Statement]) -> Result<Vec<Outcome>, LoadError> {
    let rt = crate::shared::runtime()?;
    rt.block_on(async {
        let client = Client::connect(db, 0, false)
            .await
            .map_err(|e| LoadError::Sql(format!("verify: cannot connect: {}", e.message)))?;
        let mut session = Session {
            db,
            client: Some(client),
            dead: None,
        };
        let mut out = Vec::with_capacity(statements.len() + 4);
        for s in statements {
            let ordered = has_top_level_order_by(&s.sql);
            out.push(session.run(&s.sql, s.line, ordered).await);
        }
        for table in written_tables(statements.iter().map(|s| s.sql.as_str())) {
            let sql = format!("SELECT * FROM {table}");
            let mut o = session.run(&sql, 0, false).await;
            o.query = format!("{AFTER_THE_SET}{sql}");
            out.push(o);
        }
        if let Some(c) = session.client.take() {
            c.close().await;
        }
        Ok(out)
    })
}

/// The connection a set runs on, reopened after it was lost.
struct Session<'a> {
    db: &'a Db,
    client: Option<Client>,
    /// Why a reconnect failed: every later statement fails with it.
    dead: Option<DbError>,
}

impl Session<'_> {
    async fn run(&mut self, sql: &str, line: usize, ordered: bool) -> Outcome {
        match self.query(sql).await {
            Ok(rows) => outcome_of_rows(sql, line, &rows, ordered),
            Err(e) => outcome_of_error(sql, line, &e),
        }
    }

    async fn query(&mut self, sql: &str) -> Result<Rows, DbError> {
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        let mut client = match self.client.take() {
            Some(c) => c,
            None => Client::connect(self.db, 0, false).await.map_err(|e| {
                let e = DbError {
                    kind: "lost_connection",
                    message: format!("cannot reconnect: {}", e.message),
                };
                self.dead = Some(e.clone());
                e
            })?,
        };
        match tokio::time::timeout(STATEMENT_TIMEOUT, client.rows(sql)).await {
            Err(_) => Err(DbError {
                kind: "timeout",
                message: format!("no answer in {} s", STATEMENT_TIMEOUT.as_secs()),
            }),
            // The connection's state is unknown after these: open another.
            Ok(Err(e)) if matches!(e.kind, "lost_connection" | "client_error") => Err(e),
            Ok(result) => {
                self.client = Some(client);
                result
            }
        }
    }
}

/// The outcome of one statement run elsewhere (the sqlsuite's capture). Rows count in
/// order only when `by_order` and `sql` has a top-level ORDER BY, as in [`run_set`];
/// without `by_order` a result is compared as a set of rows (for query sets whose ORDER
/// BYs have ties on purpose).
pub fn outcome(sql: &str, line: usize, got: &Result<Rows, DbError>, by_order: bool) -> Outcome {
    match got {
        Ok(rows) => outcome_of_rows(sql, line, rows, by_order && has_top_level_order_by(sql)),
        Err(e) => outcome_of_error(sql, line, e),
    }
}

fn outcome_of_rows(sql: &str, line: usize, rows: &Rows, ordered: bool) -> Outcome {
    let mut o = Outcome {
        query: sql.to_string(),
        line,
        hash: String::new(),
        rows: rows.rows.len() as u64,
        sample: Vec::new(),
        error: None,
        columns: rows.columns.len(),
        kept: Some(Vec::new()),
        ordered,
        arrival_hash: String::new(),
        arrived: Vec::new(),
        loose_hash: String::new(),
    };
    if rows.columns.is_empty() {
        o.hash = if is_ddl(sql) {
            hex16(b"ddl:ok")
        } else {
            o.rows = rows.affected;
            hex16(format!("affected:{}", rows.affected).as_bytes())
        };
        o.arrival_hash = o.hash.clone();
        o.loose_hash = o.hash.clone();
        return o;
    }
    let columns = rows.columns.len();
    let arrived: Vec<String> = rows.rows.iter().map(|r| encode_row(r)).collect();
    o.arrival_hash = hash_encoded(columns, &arrived);
    o.arrived = arrived.iter().take(SAMPLE_ROWS).cloned().collect();
    let mut loose: Vec<String> = arrived.iter().map(|r| loose_row(r)).collect();
    let mut canonical = arrived;
    if !ordered {
        canonical.sort_unstable();
        loose.sort_unstable();
    }
    o.hash = hash_encoded(columns, &canonical);
    o.loose_hash = hash_encoded(columns, &loose);
    o.sample = canonical.iter().take(SAMPLE_ROWS).cloned().collect();
    o.kept = (canonical.len() <= KEPT_ROWS).then_some(canonical);
    o
}

/// Whether `sql` changes the schema (its affected-row count is the engine's business:
/// MariaDB reports a copied table's rows for a MyISAM `CREATE INDEX`, 0 for InnoDB's).
fn is_ddl(sql: &str) -> bool {
    let first = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    [
        "create", "drop", "alter", "truncate", "rename", "analyze", "optimize",
    ]
    .iter()
    .any(|k| first.eq_ignore_ascii_case(k))
}

fn outcome_of_error(sql: &str, line: usize, e: &DbError) -> Outcome {
    let hash = hex16(format!("error:{}", error_class(e)).as_bytes());
    Outcome {
        query: sql.to_string(),
        line,
        rows: 0,
        sample: Vec::new(),
        error: Some(format!("{}: {}", e.kind, e.message)),
        columns: 0,
        kept: None,
        ordered: false,
        arrival_hash: hash.clone(),
        arrived: Vec::new(),
        loose_hash: hash.clone(),
        hash,
    }
}

/// An error's kind and its server code: `server_error 1146` from MariaDB's "... (error
/// 1146)", `server_error 42P01` from PostgreSQL's "... (SQLSTATE 42P01)"; the kind alone
/// when the message carries no code.
fn error_class(e: &DbError) -> String {
    let code = e
        .message
        .strip_suffix(')')
        .and_then(|m| m.rsplit_once('('))
        .and_then(|(_, tail)| {
            let tail = tail
                .strip_prefix("error ")
                .or(tail.strip_prefix("SQLSTATE "))?;
            tail.chars()
                .all(|c| c.is_ascii_alphanumeric())
                .then_some(tail)
        });
    match code {
        Some(code) => format!("{} {code}", e.kind),
        None => e.kind.to_string(),
    }
}

/// The hash of a result set of `columns` columns, and its canonical rows (sorted unless
/// `ordered`).
pub fn hash_rows(
    columns: usize,
    rows: &[Vec<Option<String>>],
    ordered: bool,
) -> (String, Vec<String>) {
    let mut canonical: Vec<String> = rows.iter().map(|r| encode_row(r)).collect();
    if !ordered {
        canonical.sort_unstable();
    }
    (hash_encoded(columns, &canonical), canonical)
}

/// The hash of encoded rows, in the order given.
fn hash_encoded(columns: usize, rows: &[String]) -> String {
    let mut h = Sha256::new();
    h.update(format!("columns:{columns}{ROW_SEP}").as_bytes());
    for row in rows {
        h.update(row.as_bytes());
        h.update([ROW_SEP as u8]);
    }
    hex(&h.finalize()[..8])
}

/// An encoded row with every value that is a number replaced by [`canonical_number`].
fn loose_row(row: &str) -> String {
    row.split(VALUE_SEP)
        .map(|v| canonical_number(v).unwrap_or_else(|| v.to_string()))
        .collect::<Vec<_>>()
        .join(&VALUE_SEP.to_string())
}

/// Significant digits a number with a fraction or an exponent is compared to between
/// servers of different kinds: a double printed as the shortest text that reads back
/// (17 digits) and one printed with `%.15g` are the same value.
pub const LOOSE_DIGITS: usize = 15;

/// A number's value as text that two spellings of it share: `1.5`, `1.50`, `+1.5` and
/// `15e-1` are all `15e-1`; `1e+06`, `1E6` and `1000000` are `1e6`; `-0.0` is `0`. A
/// number with a fraction or an exponent is rounded to [`LOOSE_DIGITS`] significant
/// digits; an integer is kept exact (a BIGINT has 19). None when `s` is not a number
/// (`inf`, `NaN`, `0x1f`, a date, text).
pub fn canonical_number(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut digits = String::new();
    let mut fraction = 0i64;
    let (mut seen_digit, mut seen_point, mut inexact) = (false, false, false);
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                digits.push(c as char);
                seen_digit = true;
                if seen_point {
                    fraction += 1;
                }
            }
            b'.' if !seen_point => {
                seen_point = true;
                inexact = true;
            }
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    let mut exponent = 0i64;
    if i < b.len() {
        if !matches!(b[i], b'e' | b'E') {
            return None;
        }
        inexact = true;
        let rest = &s[i + 1..];
        let unsigned = rest.strip_prefix(['+', '-']).unwrap_or(rest);
        if unsigned.is_empty() || !unsigned.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        exponent = rest.parse().ok()?;
    }
    exponent -= fraction;
    let mut d: Vec<u8> = digits.trim_start_matches('0').bytes().collect();
    if d.is_empty() {
        return Some("0".into());
    }
    if inexact && d.len() > LOOSE_DIGITS {
        let dropped = d.len() - LOOSE_DIGITS;
        let up = d[LOOSE_DIGITS] >= b'5';
        d.truncate(LOOSE_DIGITS);
        exponent += dropped as i64;
        if up {
            let mut k = d.len();
            loop {
                if k == 0 {
                    d.insert(0, b'1');
                    break;
                }
                k -= 1;
                if d[k] == b'9' {
                    d[k] = b'0';
                } else {
                    d[k] += 1;
                    break;
                }
            }
        }
    }
    while d.len() > 1 && d.last() == Some(&b'0') {
        d.pop();
        exponent += 1;
    }
    Some(format!(
        "{}{}e{exponent}",
        if negative { "-" } else { "" },
        String::from_utf8(d).ok()?
    ))
}

/// One row in the canonical encoding.
fn encode_row(row: &[Option<String>]) -> String {
    let mut out = String::new();
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(VALUE_SEP);
        }
        match v {
            None => out.push_str(NULL_MARKER),
            Some(s) => escape_into(&mut out, without_negative_zero(s)),
        }
    }
    out
}

fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            VALUE_SEP => out.push_str("\\x1f"),
            ROW_SEP => out.push_str("\\x1e"),
            c => out.push(c),
        }
    }
}

/// `-0`, `-0.00`, `-0e0` without the minus; any other text unchanged.
fn without_negative_zero(s: &str) -> &str {
    match s.strip_prefix('-') {
        Some(rest)
            if rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
                && rest.chars().all(|c| "0123456789.eE+-".contains(c))
                && rest.parse::<f64>() == Ok(0.0) =>
        {
            rest
        }
        _ => s,
    }
}

/// A canonical row for people: values separated by ` | ` instead of `0x1f`.
pub fn display_row(row: &str) -> String {
    row.replace(VALUE_SEP, " | ")
}

fn hex16(data: &[u8]) -> String {
    hex(&Sha256::digest(data)[..8])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `sql` has an `ORDER BY` outside parentheses (so it orders the statement's own
/// result, not a subquery's or a window's). String literals, quoted identifiers and
/// comments are skipped.
pub fn has_top_level_order_by(sql: &str) -> bool {
    let b = sql.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = skip_quoted(b, i, q),
            b'-' if b.get(i + 1) == Some(&b'-') => i = skip_past(b, i, b"\n"),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_past(b, i + 2, b"*/"),
            b'(' => (depth, i) = (depth + 1, i + 1),
            b')' => (depth, i) = (depth.saturating_sub(1), i + 1),
            c if is_word_byte(c) => {
                let end = word_end(b, i);
                if depth == 0 && b[i..end].eq_ignore_ascii_case(b"order") {
                    let next = skip_space(b, end);
                    let next_end = word_end(b, next);
                    if b[next..next_end].eq_ignore_ascii_case(b"by") {
                        return true;
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    false
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn word_end(b: &[u8], from: usize) -> usize {
    from + b[from..].iter().take_while(|c| is_word_byte(**c)).count()
}

fn skip_space(b: &[u8], from: usize) -> usize {
    from + b[from..]
        .iter()
        .take_while(|c| c.is_ascii_whitespace())
        .count()
}

/// The index after the quoted text that starts at `from` (a doubled quote or a
/// backslash escapes a quote, as in MariaDB).
fn skip_quoted(b: &[u8], from: usize, quote: u8) -> usize {
    let mut i = from + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote != b'`' => i += 2,
            c if c == quote && b.get(i + 1) == Some(&quote) => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index after the first `end` at or after `from` (the end of `b` when none).
fn skip_past(b: &[u8], from: usize, end: &[u8]) -> usize {
    b.get(from..)
        .and_then(|rest| rest.windows(end.len()).position(|w| w == end))
        .map_or(b.len(), |p| from + p + end.len())
}

/// The tables `statements` write to, as written in them, each once (compared without
/// case), in order of first appearance.
pub fn written_tables<'a>(statements: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in statements.into_iter().filter_map(written_table) {
        if !out.iter().any(|o| o.eq_ignore_ascii_case(&t)) {
            out.push(t);
        }
    }
    out
}

/// The table an `INSERT`, `REPLACE`, `UPDATE` or `DELETE` writes to (the first one of a
/// multi-table statement); None for any other statement.
pub fn written_table(sql: &str) -> Option<String> {
    let (first, mut rest) = next_word(skip_leading_comments(sql))?;
    let modifiers: &[&str] = match first.to_ascii_uppercase().as_str() {
        "INSERT" => &["LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", "INTO"],
        "REPLACE" => &["LOW_PRIORITY", "DELAYED", "INTO"],
        "UPDATE" => &["LOW_PRIORITY", "IGNORE", "ONLY"],
        "DELETE" => &["LOW_PRIORITY", "QUICK", "IGNORE", "FROM", "ONLY"],
        _ => return None,
    };
    loop {
        let (word, after) = next_word(rest)?;
        if !modifiers.iter().any(|m| word.eq_ignore_ascii_case(m)) {
            return Some(word.to_string());
        }
        rest = after;
    }
}

fn skip_leading_comments(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if s.starts_with("--") {
            s = s.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return s;
        }
    }
}

/// The next word of `s` (a name, possibly quoted and qualified: `` `db`.`t` ``), and
/// what follows it. A word ends at space, `(`, `)`, `,` or `;` outside quotes.
fn next_word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let mut quote = None;
    let end = s
        .char_indices()
        .find(|&(_, c)| match quote {
            Some(q) if c == q => {
                quote = None;
                false
            }
            Some(_) => false,
            None if c == '`' || c == '"' => {
                quote = Some(c);
                false
            }
            None => c.is_whitespace() || "(),;".contains(c),
        })
        .map_or(s.len(), |(i, _)| i);
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// The statements whose outcomes differ between `baseline` and `other`, position by
/// position; an outcome present in one run only is a difference too. As strict as
/// [`compare_with`] between servers of one kind.
pub fn compare(baseline: &[Outcome], other: &[Outcome]) -> Vec<Difference> {
    compare_with(baseline, other, false).differences
}

/// Why rows in another order are the same answer.
const AS_A_SET: &str = "rows compared as a set: the query has no ORDER BY";
/// Why numbers printed differently are the same answer.
const BY_VALUE: &str = "numbers compared by value (15 significant digits for a fraction or an exponent): the servers print them differently";

/// Compares `other`'s outcomes with the `baseline`'s, position by position. A statement
/// without a top-level ORDER BY is compared as a set of rows (as it always was); one
/// whose rows came in another order is listed in [`Comparison::explained`] with that
/// reason. `across_kinds` (the two servers are of different kinds: MariaDB and MySQL,
/// Redis and Valkey) also compares every number by its value ([`canonical_number`]):
/// `1.5` and `1.50`, `1e+06` and `1000000`; a statement equal only so is explained too.
/// Every other mismatch is a [`Difference`] with its reason; nothing is skipped.
pub fn compare_with(baseline: &[Outcome], other: &[Outcome], across_kinds: bool) -> Comparison {
    let mut c = Comparison::default();
    for i in 0..baseline.len().max(other.len()) {
        match (baseline.get(i), other.get(i)) {
            (Some(b), Some(o)) if b.hash == o.hash => {
                if !o.ordered && b.arrival_hash != o.arrival_hash {
                    c.explained.push(explained(b, o, set_reason(&o.query)));
                }
            }
            (Some(b), Some(o)) if across_kinds && b.loose_hash == o.loose_hash => {
                let reason = if o.ordered {
                    BY_VALUE.to_string()
                } else {
                    format!("{}; {BY_VALUE}", set_reason(&o.query))
                };
                let (rows, baseline_rows) = differing_rows(o, b);
                c.explained.push(Explained {
                    query: o.query.clone(),
                    line: o.line,
                    rows,
                    baseline_rows,
                    reason,
                });
            }
            (Some(b), Some(o)) if across_kinds && o.error.is_none() && b.error.is_none() => {
                match rounding_match(o, b) {
                    Some((rows, baseline_rows)) => c.explained.push(Explained {
                        query: o.query.clone(),
                        line: o.line,
                        rows,
                        baseline_rows,
                        reason: if o.ordered {
                            ROUNDED.to_string()
                        } else {
                            format!("{}; {ROUNDED}", set_reason(&o.query))
                        },
                    }),
                    None => c.differences.push(difference(b, o, across_kinds)),
                }
            }
            (Some(b), Some(o)) => c.differences.push(difference(b, o, across_kinds)),
            (Some(b), None) => c.differences.push(one_sided(b, true)),
            (None, Some(o)) => c.differences.push(one_sided(o, false)),
            (None, None) => {}
        }
    }
    c
}

/// Why numbers printed to other decimals are the same answer.
const ROUNDED: &str = "numbers compared at the fewer decimals either side printed: one server rounds what the other prints in full (MariaDB prints STDDEV and other double aggregates to the argument's decimals plus 4), and the fuller value rounds to the shorter";

/// Whether `mine` and `theirs` (results of servers of different kinds) hold the same rows
/// once every number printed with more decimals on one side than the other is rounded
/// to the fewer: the rows that differed as sent (up to [`SAMPLE_ROWS`] each), or None.
/// Rows pair by position when order counts, else each differing row of one side with
/// one of the other's. Only results kept whole ([`KEPT_ROWS`]) are compared so.
fn rounding_match(mine: &Outcome, theirs: &Outcome) -> Option<(Vec<String>, Vec<String>)> {
    let (a, b) = (mine.kept.as_ref()?, theirs.kept.as_ref()?);
    if a.len() != b.len() || mine.columns != theirs.columns || mine.columns == 0 {
        return None;
    }
    let (only_a, only_b) = if mine.ordered {
        a.iter()
            .zip(b)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| (x.clone(), y.clone()))
            .unzip()
    } else {
        multiset_difference_upto(a, b, usize::MAX)
    };
    if only_a.len() != only_b.len() || only_a.is_empty() {
        return None;
    }
    if mine.ordered {
        if !only_a.iter().zip(&only_b).all(|(x, y)| rows_match(x, y)) {
            return None;
        }
    } else {
        let mut used = vec![false; only_b.len()];
        for x in &only_a {
            let k = (0..only_b.len()).find(|&k| !used[k] && rows_match(x, &only_b[k]))?;
            used[k] = true;
        }
    }
    let first = |v: Vec<String>| v.into_iter().take(SAMPLE_ROWS).collect();
    Some((first(only_a), first(only_b)))
}

/// Two encoded rows whose values are equal, equal numbers, or one number printed with
/// fewer decimals that the other rounds to.
fn rows_match(a: &str, b: &str) -> bool {
    let (va, vb): (Vec<&str>, Vec<&str>) =
        (a.split(VALUE_SEP).collect(), b.split(VALUE_SEP).collect());
    va.len() == vb.len()
        && va.iter().zip(&vb).all(|(x, y)| {
            x == y
                || canonical_number(x).is_some_and(|n| Some(n) == canonical_number(y))
                || rounds_to(x, y)
                || rounds_to(y, x)
        })
}

/// Whether `long`, a plain decimal number with more decimals than `short` (which has at
/// least one), rounds to `short` at `short`'s decimals.
fn rounds_to(short: &str, long: &str) -> bool {
    let decimals = |s: &str| -> Option<usize> {
        canonical_number(s)?;
        if s.contains(['e', 'E']) {
            return None;
        }
        Some(s.split_once('.').map_or(0, |(_, f)| f.len()))
    };
    match (decimals(short), decimals(long), long.parse::<f64>()) {
        (Some(ds), Some(dl), Ok(x)) if ds >= 1 && dl > ds => {
            canonical_number(&format!("{x:.ds$}")) == canonical_number(short)
        }
        _ => false,
    }
}

/// Why a query's rows were compared as a set, naming GROUP BY when it has one (MySQL
/// 8.0 no longer sorts groups; MariaDB still does).
fn set_reason(query: &str) -> String {
    if has_group_by(query) {
        format!("{AS_A_SET} (a GROUP BY without ORDER BY returns its groups in no set order: MySQL 8.0 no longer sorts them)")
    } else {
        AS_A_SET.to_string()
    }
}

fn has_group_by(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    words.windows(2).any(|w| w[0] == "group" && w[1] == "by")
}

/// A statement equal as a set whose rows arrived in another order: the first rows as
/// each side sent them.
fn explained(b: &Outcome, o: &Outcome, reason: String) -> Explained {
    Explained {
        query: o.query.clone(),
        line: o.line,
        rows: o.arrived.clone(),
        baseline_rows: b.arrived.clone(),
        reason,
    }
}

fn difference(b: &Outcome, o: &Outcome, across_kinds: bool) -> Difference {
    let (rows, baseline_rows) = differing_rows(o, b);
    let reason = difference_reason(b, o, across_kinds);
    Difference {
        query: o.query.clone(),
        line: o.line,
        hash: o.hash.clone(),
        baseline_hash: b.hash.clone(),
        rows,
        baseline_rows,
        error: o.error.clone(),
        baseline_error: b.error.clone(),
        reason,
    }
}

/// Why two outcomes of one statement count as different.
fn difference_reason(b: &Outcome, o: &Outcome, across_kinds: bool) -> String {
    let by_value = if across_kinds {
        ", even with numbers compared by value"
    } else {
        ""
    };
    match (&b.error, &o.error) {
        (Some(_), Some(_)) => return "both failed, with different errors".into(),
        (Some(_), None) => return "it failed on the baseline only".into(),
        (None, Some(_)) => return "it failed on this variant only".into(),
        (None, None) => {}
    }
    if b.columns == 0 && o.columns == 0 {
        return "the affected-row counts differ".into();
    }
    if b.columns != o.columns {
        return "the results have different columns".into();
    }
    if o.ordered {
        if let (Some(x), Some(y)) = (&o.kept, &b.kept) {
            let (only_x, only_y) = multiset_difference(x, y);
            let (lx, ly): (Vec<String>, Vec<String>) = (
                x.iter().map(|r| loose_row(r)).collect(),
                y.iter().map(|r| loose_row(r)).collect(),
            );
            let same_loose_set = {
                let (a, b) = multiset_difference(&lx, &ly);
                a.is_empty() && b.is_empty()
            };
            if (only_x.is_empty() && only_y.is_empty()) || (across_kinds && same_loose_set) {
                return format!(
                    "the same rows in another order{by_value}: the query has an ORDER BY, so order counts{}",
                    if across_kinds {
                        " (servers of different kinds may sort ties or collate text differently)"
                    } else {
                        ""
                    }
                );
            }
        }
        return format!("the rows differ{by_value}");
    }
    format!("the rows differ{by_value} (compared as a set: the query has no ORDER BY)")
}

/// A difference for an outcome only one run has (`in_baseline`: the baseline's).
fn one_sided(x: &Outcome, in_baseline: bool) -> Difference {
    let missing = Some("no outcome at this position: the runs have different lengths".into());
    let (mine, theirs) = (x.sample.clone(), Vec::new());
    let mut d = Difference {
        query: x.query.clone(),
        line: x.line,
        hash: x.hash.clone(),
        baseline_hash: String::new(),
        rows: mine,
        baseline_rows: theirs,
        error: x.error.clone(),
        baseline_error: missing,
        reason: "one run has no outcome at this position".into(),
    };
    if in_baseline {
        std::mem::swap(&mut d.hash, &mut d.baseline_hash);
        std::mem::swap(&mut d.rows, &mut d.baseline_rows);
        std::mem::swap(&mut d.error, &mut d.baseline_error);
    }
    d
}

/// Up to [`SAMPLE_ROWS`] rows of `mine` and of `theirs` that tell them apart: the rows
/// one has and the other has not; else (same rows, other order) the rows from the first
/// position that differs; else their shapes. The samples when either was too big to
/// keep.
fn differing_rows(mine: &Outcome, theirs: &Outcome) -> (Vec<String>, Vec<String>) {
    let (Some(a), Some(b)) = (&mine.kept, &theirs.kept) else {
        return (mine.sample.clone(), theirs.sample.clone());
    };
    let (only_a, only_b) = multiset_difference(a, b);
    if !only_a.is_empty() || !only_b.is_empty() {
        return (only_a, only_b);
    }
    if let Some(first) = a.iter().zip(b).position(|(x, y)| x != y) {
        let from = |v: &[String]| v.iter().skip(first).take(SAMPLE_ROWS).cloned().collect();
        return (from(a), from(b));
    }
    (vec![shape(mine)], vec![shape(theirs)])
}

fn shape(o: &Outcome) -> String {
    if o.columns == 0 && o.error.is_none() {
        format!("affected rows: {}", o.rows)
    } else {
        format!("columns: {}, rows: {}", o.columns, o.rows)
    }
}

fn sorted_refs(v: &[String]) -> Vec<&String> {
    let mut v: Vec<&String> = v.iter().collect();
    v.sort_unstable();
    v
}

/// The rows of `a` not in `b` and of `b` not in `a` (counting repeats), up to
/// [`SAMPLE_ROWS`] each, in sorted order.
fn multiset_difference(a: &[String], b: &[String]) -> (Vec<String>, Vec<String>) {
    multiset_difference_upto(a, b, SAMPLE_ROWS)
}

/// The rows of `a` not in `b` and of `b` not in `a` (counting repeats), up to `most`
/// each, in sorted order.
fn multiset_difference_upto(a: &[String], b: &[String], most: usize) -> (Vec<String>, Vec<String>) {
    let (a, b) = (sorted_refs(a), sorted_refs(b));
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while (i < a.len() || j < b.len()) && (only_a.len() < most || only_b.len() < most) {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Equal => (i, j) = (i + 1, j + 1),
            Ordering::Less => {
                if only_a.len() < most {
                    only_a.push(a[i].clone());
                }
                i += 1;
            }
            Ordering::Greater => {
                if only_b.len() < most {
                    only_b.push(b[j].clone());
                }
                j += 1;
            }
        }
    }
    (only_a, only_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(values: &[&[Option<&str>]]) -> Vec<Vec<Option<String>>> {
        values
            .iter()
            .map(|r| r.iter().map(|v| v.map(str::to_string)).collect())
            .collect()
    }

    fn outcome(query: &str, r: &[&[Option<&str>]], ordered: bool) -> Outcome {
        let columns: Vec<String> = (0..r.first().map_or(1, |r| r.len()))
            .map(|i| format!("c{i}"))
            .collect();
        let result = Rows {
            columns,
            rows: rows(r),
            affected: 0,
        };
        outcome_of_rows(query, 1, &result, ordered)
    }

    #[test]
    fn ddl_counts_are_not_compared() {
        let copied = Rows {
            affected: 100,
            ..Rows::default()
        };
        let in_place = Rows::default();
        let ddl = "CREATE INDEX i ON t (a)";
        assert_eq!(
            super::outcome(ddl, 1, &Ok(copied.clone()), true).hash,
            super::outcome(ddl, 1, &Ok(in_place.clone()), true).hash
        );
        let dml = "UPDATE t SET a = 1";
        assert_ne!(
            super::outcome(dml, 1, &Ok(copied), true).hash,
            super::outcome(dml, 1, &Ok(in_place), true).hash
        );
    }

    #[test]
    fn row_order_counts_only_when_ordered() {
        let ab = rows(&[&[Some("a"), Some("1")], &[Some("b"), Some("2")]]);
        let ba = rows(&[&[Some("b"), Some("2")], &[Some("a"), Some("1")]]);
        assert_eq!(hash_rows(2, &ab, false), hash_rows(2, &ba, false));
        assert_ne!(hash_rows(2, &ab, true).0, hash_rows(2, &ba, true).0);
        assert_eq!(hash_rows(2, &ba, false).1[0], "a\x1f1");
    }

    #[test]
    fn order_by_counts_at_the_top_level_only() {
        assert!(has_top_level_order_by("SELECT a FROM t ORDER BY a"));
        assert!(has_top_level_order_by(
            "select a from t order\n  by 1 limit 3"
        ));
        assert!(has_top_level_order_by(
            "(SELECT a FROM t) UNION (SELECT b FROM u) ORDER BY 1"
        ));
        assert!(!has_top_level_order_by(
            "SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 5) x"
        ));
        assert!(!has_top_level_order_by(
            "SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM t"
        ));
        assert!(!has_top_level_order_by(
            "SELECT 'x ORDER BY y', `order by` FROM t -- ORDER BY a"
        ));
        assert!(!has_top_level_order_by("SELECT order_id, border FROM t"));
        assert!(!has_top_level_order_by("SELECT 'it\\'s ) ORDER BY' FROM t"));
    }

    #[test]
    fn null_and_the_string_null_differ() {
        let null = rows(&[&[None]]);
        let text = rows(&[&[Some("NULL")]]);
        let marker = rows(&[&[Some("\\N")]]);
        let (h_null, _) = hash_rows(1, &null, false);
        assert_ne!(h_null, hash_rows(1, &text, false).0);
        assert_ne!(h_null, hash_rows(1, &marker, false).0);
        // Separators inside values cannot fake another row shape.
        let one = rows(&[&[Some("a\x1fb")]]);
        let two = rows(&[&[Some("a"), Some("b")]]);
        assert_ne!(hash_rows(1, &one, false).0, hash_rows(2, &two, false).0);
        assert_ne!(hash_rows(2, &one, false).0, hash_rows(2, &two, false).0);
        assert_ne!(
            hash_rows(1, &[], false).0,
            hash_rows(1, &rows(&[&[Some("")]]), false).0
        );
    }

    #[test]
    fn negative_zero_is_zero_but_scale_counts() {
        let h = |v: &str| hash_rows(1, &rows(&[&[Some(v)]]), false).0;
        assert_eq!(h("-0"), h("0"));
        assert_eq!(h("-0.00"), h("0.00"));
        assert_eq!(h("-0e0"), h("0e0"));
        assert_ne!(h("0.00"), h("0"));
        assert_ne!(h("-0.01"), h("0.01"));
        assert_ne!(h("0.3333"), h("0.333333"));
        assert_eq!(without_negative_zero("-"), "-");
        assert_eq!(without_negative_zero("-inf"), "-inf");
    }

    #[test]
    fn written_tables_are_found_by_a_scan() {
        let set = [
            "CREATE TABLE t1 (a INT)",
            "INSERT INTO t1 VALUES (1)",
            "insert low_priority ignore into `my db`.`t 2`(a) values (2)",
            "UPDATE t3 SET a = 1",
            "update T1 set a = 2",
            "DELETE FROM t4 WHERE a = 1",
            "REPLACE INTO t5 SELECT * FROM t1",
            "/* hint */ DELETE QUICK FROM \"t6\";",
            "SELECT * FROM t7",
            "UPDATE t8, t9 SET t8.a = t9.a",
        ];
        assert_eq!(
            written_tables(set),
            ["t1", "`my db`.`t 2`", "t3", "t4", "t5", "\"t6\"", "t8"]
        );
        assert_eq!(written_table("INSERT"), None);
    }

    #[test]
    fn errors_hash_by_class_not_wording() {
        let e = |kind, message: &str| {
            outcome_of_error(
                "SELECT * FROM gone",
                3,
                &DbError {
                    kind,
                    message: message.into(),
                },
            )
        };
        let a = e("server_error", "Table 'a.gone' doesn't exist (error 1146)");
        let b = e("server_error", "Table 'b.gone' does not exist (error 1146)");
        let c = e("server_error", "Unknown column (error 1054)");
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
        assert!(a
            .error
            .as_deref()
            .unwrap()
            .starts_with("server_error: Table"));
        assert_eq!(
            error_class(&DbError {
                kind: "server_error",
                message: "relation \"gone\" does not exist (SQLSTATE 42P01)".into()
            }),
            "server_error 42P01"
        );
    }

    #[test]
    fn compare_shows_the_rows_that_differ() {
        let base = vec![
            outcome("SELECT 1", &[&[Some("1")]], false),
            outcome(
                "SELECT a FROM t",
                &[&[Some("x")], &[Some("y")], &[Some("z")]],
                false,
            ),
        ];
        let mut other = base.clone();
        assert!(compare(&base, &other).is_empty());
        other[1] = outcome(
            "SELECT a FROM t",
            &[&[Some("z")], &[Some("Y")], &[Some("x")]],
            false,
        );
        let d = compare(&base, &other);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].query.as_str(), d[0].line), ("SELECT a FROM t", 1));
        assert_eq!(
            (d[0].rows.clone(), d[0].baseline_rows.clone()),
            (vec!["Y".to_string()], vec!["y".to_string()])
        );
        let d = compare(&base, &other[..1]);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].hash.as_str(), d[0].line), ("", 1));
        assert_eq!(d[0].baseline_rows, ["x", "y", "z"]);
        assert!(d[0].error.as_deref().unwrap().contains("different lengths"));
    }

    #[test]
    fn compare_shows_where_the_order_differs() {
        let a = outcome(
            "SELECT a FROM t ORDER BY a",
            &[&[Some("1")], &[Some("2")], &[Some("3")]],
            true,
        );
        let b = outcome(
            "SELECT a FROM t ORDER BY a",
            &[&[Some("1")], &[Some("3")], &[Some("2")]],
            true,
        );
        let d = compare(&[a], &[b]);
        assert_eq!(d[0].rows, ["3", "2"]);
        assert_eq!(d[0].baseline_rows, ["2", "3"]);
        let dml = |n| {
            let r = Rows {
                affected: n,
                ..Rows::default()
            };
            outcome_of_rows("DELETE FROM t", 4, &r, false)
        };
        let d = compare(&[dml(2)], &[dml(3)]);
        assert_eq!(d[0].rows, ["affected rows: 3"]);
        assert_eq!(d[0].baseline_rows, ["affected rows: 2"]);
        assert!(compare(&[dml(2)], &[dml(2)]).is_empty());
    }

    #[test]
    fn numbers_have_one_canonical_form() {
        let c = |s: &str| canonical_number(s);
        assert_eq!(c("1.5"), c("1.50"));
        assert_eq!(c("1.5"), c("+1.5"));
        assert_eq!(c("1.5").as_deref(), Some("15e-1"));
        assert_eq!(c("1e+06"), c("1000000"));
        assert_eq!(c("1E6"), c("1000000.000"));
        assert_eq!(c("1e6").as_deref(), Some("1e6"));
        assert_eq!(c("-0.0").as_deref(), Some("0"));
        assert_eq!(c("0").as_deref(), Some("0"));
        assert_eq!(c(".5"), c("0.5"));
        assert_eq!(c("-2.50"), c("-25e-1"));
        assert_ne!(c("1.5"), c("-1.5"));
        assert_ne!(c("1.5"), c("1.6"));
        // A double's 17 digits and its %.15g spelling are one value ...
        assert_eq!(c("0.30000000000000004"), c("0.3"));
        assert_eq!(c("3.14159265358979"), c("3.141592653589793"));
        assert_eq!(c("9.99999999999999999"), c("10"));
        // ... but an integer keeps every digit: a BIGINT is exact.
        assert_ne!(c("12345678901234567891"), c("12345678901234567890"));
        for not_a_number in [
            "",
            "-",
            ".",
            "1e",
            "1e+",
            "2024-01-01",
            "inf",
            "NaN",
            "0x1f",
            "1.2.3",
            "12:00",
            "a1",
            "1 ",
        ] {
            assert_eq!(c(not_a_number), None, "{not_a_number:?}");
        }
    }

    #[test]
    fn same_kind_is_as_strict_as_before_and_says_when_order_differed() {
        let q = "SELECT k, COUNT(*) FROM t GROUP BY k";
        let a = outcome(
            q,
            &[&[Some("1"), Some("2")], &[Some("2"), Some("5")]],
            false,
        );
        let b = outcome(
            q,
            &[&[Some("2"), Some("5")], &[Some("1"), Some("2")]],
            false,
        );
        let c = compare_with(std::slice::from_ref(&a), &[b], false);
        assert!(c.differences.is_empty());
        assert_eq!(c.explained.len(), 1);
        assert!(
            c.explained[0].reason.starts_with(AS_A_SET),
            "{:?}",
            c.explained
        );
        assert!(c.explained[0].reason.contains("GROUP BY"));
        assert_eq!(c.explained[0].rows[0], "2\x1f5");
        assert_eq!(c.explained[0].baseline_rows[0], "1\x1f2");
        // Identical, in the same order: nothing to explain.
        assert_eq!(
            compare_with(std::slice::from_ref(&a), std::slice::from_ref(&a), false),
            Comparison::default()
        );
        // Numbers printed differently are a difference between servers of one kind.
        let f = |v: &str| outcome("SELECT AVG(x) FROM t", &[&[Some(v)]], false);
        let c = compare_with(&[f("1.5")], &[f("1.50")], false);
        assert_eq!(c.differences.len(), 1);
        assert!(c.explained.is_empty());
        assert_eq!(
            c.differences[0].reason,
            "the rows differ (compared as a set: the query has no ORDER BY)"
        );
        assert_eq!(c.differences[0].rows, ["1.50"]);
        assert_eq!(c.differences[0].baseline_rows, ["1.5"]);
    }

    #[test]
    fn across_kinds_numbers_compare_by_value_and_say_so() {
        let f = |v: &str, w: &str| {
            outcome(
                "SELECT a, b FROM t ORDER BY a",
                &[&[Some("x"), Some(v)], &[Some("y"), Some(w)]],
                true,
            )
        };
        let c = compare_with(&[f("1.5", "1e+06")], &[f("1.50", "1000000")], true);
        assert!(c.differences.is_empty(), "{:?}", c.differences);
        assert_eq!(c.explained.len(), 1);
        assert_eq!(c.explained[0].reason, BY_VALUE);
        assert_eq!(c.explained[0].rows, ["x\x1f1.50", "y\x1f1000000"]);
        assert_eq!(c.explained[0].baseline_rows, ["x\x1f1.5", "y\x1f1e+06"]);
        // A value that differs is still a difference, with its reason.
        let c = compare_with(&[f("1.5", "1")], &[f("1.6", "1")], true);
        assert_eq!(c.differences.len(), 1);
        assert_eq!(
            c.differences[0].reason,
            "the rows differ, even with numbers compared by value"
        );
        assert_eq!(c.differences[0].rows, ["x\x1f1.6"]);
        // An ORDER BY's order counts between kinds too.
        let g = |r: &[&[Option<&str>]]| outcome("SELECT a FROM t ORDER BY a", r, true);
        let c = compare_with(
            &[g(&[&[Some("a")], &[Some("B")]])],
            &[g(&[&[Some("B")], &[Some("a")]])],
            true,
        );
        assert_eq!(c.differences.len(), 1);
        assert!(
            c.differences[0]
                .reason
                .starts_with("the same rows in another order"),
            "{}",
            c.differences[0].reason
        );
        // Without ORDER BY: another order and other spellings, both reasons given.
        let h = |r: &[&[Option<&str>]]| outcome("SELECT k, SUM(v) FROM t GROUP BY k", r, false);
        let c = compare_with(
            &[h(&[&[Some("1"), Some("2.0")], &[Some("2"), Some("3")]])],
            &[h(&[&[Some("2"), Some("3.00")], &[Some("1"), Some("2")]])],
            true,
        );
        assert!(c.differences.is_empty());
        assert!(c.explained[0].reason.starts_with(AS_A_SET));
        assert!(c.explained[0].reason.ends_with(BY_VALUE));
        // One server printed a double aggregate to 4 decimals, the other in full.
        let sd = |v: &str| {
            outcome(
                "SELECT AVG(k), STDDEV_POP(k) FROM t",
                &[&[Some("49975.0560"), Some(v)]],
                false,
            )
        };
        let c = compare_with(&[sd("28874.6440")], &[sd("28874.644008265186")], true);
        assert!(c.differences.is_empty(), "{:?}", c.differences);
        assert!(
            c.explained[0].reason.ends_with(ROUNDED),
            "{:?}",
            c.explained
        );
        assert_eq!(c.explained[0].rows, ["49975.0560\x1f28874.644008265186"]);
        // ... but not when the fuller value rounds elsewhere, nor between servers of one kind.
        let c = compare_with(&[sd("28874.6450")], &[sd("28874.644008265186")], true);
        assert_eq!(c.differences.len(), 1);
        let c = compare_with(&[sd("28874.6440")], &[sd("28874.644008265186")], false);
        assert_eq!(c.differences.len(), 1);
        assert!(rounds_to("1.5", "1.4999"));
        assert!(
            !rounds_to("2", "1.5"),
            "an integer is not a rounded fraction"
        );
        assert!(!rounds_to("1.5", "1.5e0"));
        // Errors and counts are never loosened.
        let dml = |n| {
            let r = Rows {
                affected: n,
                ..Rows::default()
            };
            outcome_of_rows("DELETE FROM t", 4, &r, false)
        };
        let c = compare_with(&[dml(2)], &[dml(3)], true);
        assert_eq!(c.differences[0].reason, "the affected-row counts differ");
        let err = outcome_of_error(
            "SELECT x",
            1,
            &DbError {
                kind: "server_error",
                message: "no (error 1054)".into(),
            },
        );
        let c = compare_with(&[err], &[outcome("SELECT x", &[&[Some("1")]], false)], true);
        assert_eq!(c.differences[0].reason, "it failed on the baseline only");
    }
}
