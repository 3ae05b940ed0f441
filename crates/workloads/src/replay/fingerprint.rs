//! Statement classes: a statement's fingerprint is its text with the values taken out, so
//! that `SELECT c FROM sbtest1 WHERE id=42` and `select c from sbtest1 where id = 7` are
//! one class. The text is cut into tokens (comments dropped) and written back with one
//! canonical spacing; on the way numbers (also signed, decimal, exponent and hex ones),
//! quoted strings (with their `N`, `E`, `X`, `B` or `_charset` prefix), dollar-quoted
//! bodies and `?` / `$n` parameters become `?`, an `IN` list of values becomes
//! `in (?+)` whatever its length, and the rows after `VALUES` become `values (?+)`
//! whatever their number. Keywords and identifiers are lowercased, with their digits
//! (`sbtest12` stays `sbtest12`); backtick- and double-quoted identifiers are kept as they
//! are. [`class_id`] names a fingerprint with a short hash.

use super::sqlfile::{dollar_tag, is_dash_comment, is_hash_comment, quoted_end};
use sha2::{Digest, Sha256};

/// `sql` with its values replaced by `?`, lowercased and canonically spaced.
pub fn fingerprint(sql: &str) -> String {
    let mut tokens = Lexer::new(sql).run();
    collapse_lists(&mut tokens);
    while tokens.last() == Some(&Tok::Semi) {
        tokens.pop();
    }
    render(&tokens)
}

/// A short, stable name for a fingerprint: the first 16 hex digits of its SHA-256.
pub fn class_id(fp: &str) -> String {
    let digest = Sha256::digest(fp.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A keyword or identifier, lowercased.
    Word(String),
    /// A backtick- or double-quoted identifier, as written.
    Quoted(String),
    /// A value: `?`.
    Value,
    /// A list of values: `?+`.
    Values,
    Op(String),
    Open,
    Close,
    Comma,
    Dot,
    Semi,
}

/// Words after which a `-` or `+` is a sign, and which keep a space before `(`.
const KEYWORDS: &[&str] = &[
    "all",
    "and",
    "any",
    "as",
    "between",
    "by",
    "case",
    "div",
    "else",
    "exists",
    "from",
    "having",
    "in",
    "interval",
    "is",
    "join",
    "like",
    "limit",
    "mod",
    "not",
    "offset",
    "on",
    "or",
    "return",
    "returning",
    "select",
    "set",
    "some",
    "then",
    "union",
    "using",
    "value",
    "values",
    "when",
    "where",
    "with",
    "xor",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'@' || b >= 0x80
}

/// Cuts a statement into [`Tok`]s.
struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    /// Where the last token ended (to tell `N'x'` from `n 'x'`).
    last_end: usize,
    out: Vec<Tok>,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            text,
            b: text.as_bytes(),
            i: 0,
            last_end: usize::MAX,
            out: Vec::new(),
        }
    }

    fn run(mut self) -> Vec<Tok> {
        while self.i < self.b.len() {
            let start = self.i;
            if let Some(tok) = self.token() {
                self.out.push(tok);
                self.last_end = self.i;
            }
            debug_assert!(self.i > start, "the lexer is stuck at {start}");
            if self.i == start {
                self.i += self.text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        self.out
    }

    /// The token at `i` (None for space and comments), moving `i` past it.
    fn token(&mut self) -> Option<Tok> {
        let rest = &self.text[self.i..];
        let c = self.b[self.i];
        match c {
            _ if c.is_ascii_whitespace() => self.i += 1,
            b'-' if is_dash_comment(rest) => self.i += line_len(rest),
            b'#' if is_hash_comment(rest) => self.i += line_len(rest),
            b'/' if rest.starts_with("/*") => {
                self.i += rest[2..].find("*/").map_or(rest.len(), |e| e + 4);
            }
            b'\'' => return Some(self.string()),
            b'"' | b'`' => {
                let len = quoted_len(rest, c, false);
                self.i += len;
                return Some(Tok::Quoted(rest[..len].to_string()));
            }
            b'$' => return Some(self.dollar()),
            b'?' => {
                self.i += 1;
                return Some(Tok::Value);
            }
            b'0'..=b'9' => return Some(self.number_or_word(0)),
            b'.' if self.starts_number(1) && !self.after_name() => {
                return Some(self.number_or_word(0))
            }
            b'-' | b'+' if self.starts_number(1) && self.sign_allowed() => {
                return Some(self.number_or_word(1))
            }
            _ if is_ident_byte(c) => return Some(self.word()),
            _ => return Some(self.punctuation()),
        }
        None
    }

    /// Whether a number starts `skip` bytes after `i`.
    fn starts_number(&self, skip: usize) -> bool {
        let at = |k: usize| self.b.get(self.i + k).copied().unwrap_or(0);
        at(skip).is_ascii_digit() || (at(skip) == b'.' && at(skip + 1).is_ascii_digit())
    }

    /// Whether the last token is a name (so `.5` after it is a member, not a number).
    fn after_name(&self) -> bool {
        self.last_end == self.i && matches!(self.out.last(), Some(Tok::Word(_) | Tok::Quoted(_)))
    }

    /// Whether a `-` or `+` here is a sign: at the start, or after an operator, an
    /// opening parenthesis, a comma or a keyword.
    fn sign_allowed(&self) -> bool {
        match self.out.last() {
            None | Some(Tok::Op(_) | Tok::Open | Tok::Comma | Tok::Semi) => true,
            Some(Tok::Word(w)) => is_keyword(w),
            _ => false,
        }
    }

    /// A quoted string, with the `N`/`E`/`X`/`B`/`_charset` word right before it.
    fn string(&mut self) -> Tok {
        let prefix = match self.out.last() {
            Some(Tok::Word(w)) if self.last_end == self.i => {
                matches!(w.as_str(), "n" | "e" | "x" | "b") || w.starts_with('_')
            }
            _ => false,
        };
        if prefix {
            self.out.pop();
        }
        self.i += quoted_len(&self.text[self.i..], b'\'', true);
        Tok::Value
    }

    /// A dollar-quoted body or a `$n` parameter (both values), or a lone `$`.
    fn dollar(&mut self) -> Tok {
        if let Some(tag) = dollar_tag(self.text, self.i) {
            let body = &self.text[self.i + tag.len()..];
            let end = body.find(tag).map_or(body.len(), |e| e + tag.len());
            self.i += tag.len() + end;
            return Tok::Value;
        }
        let digits = self.b[self.i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        self.i += 1 + digits;
        if digits > 0 {
            Tok::Value
        } else {
            Tok::Op("$".into())
        }
    }

    /// A number from `i + skip` (after a sign), or a word if letters follow its digits
    /// (MariaDB names may start with digits: `2fa_codes`).
    fn number_or_word(&mut self, skip: usize) -> Tok {
        let end = number_end(self.b, self.i + skip);
        if end < self.b.len() && is_ident_byte(self.b[end]) && self.b[self.i].is_ascii_digit() {
            return self.word();
        }
        self.i = end;
        Tok::Value
    }

    fn word(&mut self) -> Tok {
        let len = self.b[self.i..]
            .iter()
            .take_while(|&&c| is_ident_byte(c))
            .count();
        let word = self.text[self.i..self.i + len].to_lowercase();
        self.i += len;
        Tok::Word(word)
    }

    /// Parentheses, comma, dot, semicolon, or an operator: a run of `<>=!|&^~:%*/#`, or
    /// any other single character.
    fn punctuation(&mut self) -> Tok {
        let rest = &self.text[self.i..];
        let tok = match self.b[self.i] {
            b'(' => Tok::Open,
            b')' => Tok::Close,
            b',' => Tok::Comma,
            b'.' => Tok::Dot,
            b';' => Tok::Semi,
            _ => {
                let run = rest
                    .bytes()
                    .take_while(|c| b"<>=!|&^~:%*/#".contains(c))
                    .count();
                let len = run.max(rest.chars().next().map_or(1, char::len_utf8));
                self.i += len;
                return Tok::Op(rest[..len].to_string());
            }
        };
        self.i += 1;
        tok
    }
}

fn line_len(rest: &str) -> usize {
    rest.find('\n').unwrap_or(rest.len())
}

/// The length of the quoted text at the start of `s` (all of `s` if it is not closed).
fn quoted_len(s: &str, quote: u8, backslash: bool) -> usize {
    quoted_end(s.as_bytes(), 0, quote, backslash).unwrap_or(s.len())
}

/// Where the number starting at `i` ends: `0x1f`, `0b101`, `12`, `1.5`, `.5`, `1e-3`.
fn number_end(b: &[u8], mut i: usize) -> usize {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let digits_from = |mut k: usize, ok: fn(&u8) -> bool| {
        while k < b.len() && ok(&b[k]) {
            k += 1;
        }
        k
    };
    if at(i) == b'0' && matches!(at(i + 1), b'x' | b'X') && at(i + 2).is_ascii_hexdigit() {
        return digits_from(i + 2, u8::is_ascii_hexdigit);
    }
    if at(i) == b'0' && matches!(at(i + 1), b'b' | b'B') && matches!(at(i + 2), b'0' | b'1') {
        return digits_from(i + 2, |c| matches!(c, b'0' | b'1'));
    }
    i = digits_from(i, u8::is_ascii_digit);
    if at(i) == b'.' {
        i = digits_from(i + 1, u8::is_ascii_digit);
    }
    if matches!(at(i), b'e' | b'E') {
        let sign = usize::from(matches!(at(i + 1), b'+' | b'-'));
        if at(i + 1 + sign).is_ascii_digit() {
            i = digits_from(i + 1 + sign, u8::is_ascii_digit);
        }
    }
    i
}

/// `in (?, ?, ?)` becomes `in (?+)`; the rows after `values` become `values (?+)` (not
/// MariaDB's `= VALUES(col)` of `ON DUPLICATE KEY UPDATE`).
fn collapse_lists(tokens: &mut Vec<Tok>) {
    let mut k = 0;
    while k + 1 < tokens.len() {
        let end = match &tokens[k] {
            Tok::Word(w) if w == "in" => value_list_end(tokens, k + 1),
            Tok::Word(w) if (w == "values" || w == "value") && !after_op(tokens, k) => {
                rows_end(tokens, k + 1)
            }
            _ => None,
        };
        if let Some(end) = end {
            tokens.splice(k + 1..end, [Tok::Open, Tok::Values, Tok::Close]);
        }
        k += 1;
    }
}

fn after_op(tokens: &[Tok], k: usize) -> bool {
    k > 0 && matches!(tokens[k - 1], Tok::Op(_))
}

/// Where `( value, value, ... )` starting at `k` ends (one past its `)`), if it is one.
fn value_list_end(tokens: &[Tok], k: usize) -> Option<usize> {
    if tokens.get(k) != Some(&Tok::Open) {
        return None;
    }
    let mut j = k + 1;
    loop {
        if !matches!(tokens.get(j), Some(Tok::Value | Tok::Values)) {
            return None;
        }
        match tokens.get(j + 1) {
            Some(Tok::Comma) => j += 2,
            Some(Tok::Close) => return Some(j + 2),
            _ => return None,
        }
    }
}

/// Where the rows `( ... ), ( ... )` starting at `k` end (one past the last `)`).
fn rows_end(tokens: &[Tok], k: usize) -> Option<usize> {
    let mut end = group_end(tokens, k)?;
    while tokens.get(end) == Some(&Tok::Comma) {
        match group_end(tokens, end + 1) {
            Some(next) => end = next,
            None => break,
        }
    }
    Some(end)
}

/// One past the `)` that closes the `(` at `k`.
fn group_end(tokens: &[Tok], k: usize) -> Option<usize> {
    if tokens.get(k) != Some(&Tok::Open) {
        return None;
    }
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(k) {
        match t {
            Tok::Open => depth += 1,
            Tok::Close if depth == 1 => return Some(j + 1),
            Tok::Close => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The tokens as text: one space between them, none inside parentheses, before a comma
/// or around a dot, and none before the `(` of a function call.
fn render(tokens: &[Tok]) -> String {
    let mut out = String::new();
    let mut prev: Option<&Tok> = None;
    for t in tokens {
        if let Some(p) = prev {
            if spaced(p, t) {
                out.push(' ');
            }
        }
        match t {
            Tok::Word(s) | Tok::Quoted(s) | Tok::Op(s) => out.push_str(s),
            Tok::Value => out.push('?'),
            Tok::Values => out.push_str("?+"),
            Tok::Open => out.push('('),
            Tok::Close => out.push(')'),
            Tok::Comma => out.push(','),
            Tok::Dot => out.push('.'),
            Tok::Semi => out.push(';'),
        }
        prev = Some(t);
    }
    out
}

fn spaced(prev: &Tok, next: &Tok) -> bool {
    match (prev, next) {
        (Tok::Open | Tok::Dot, _) => false,
        (_, Tok::Close | Tok::Comma | Tok::Dot | Tok::Semi) => false,
        (Tok::Word(w), Tok::Open) => is_keyword(w),
        (Tok::Quoted(_), Tok::Open) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) {
        assert_eq!(fingerprint(a), fingerprint(b), "{a:?} vs {b:?}");
    }

    #[test]
    fn one_class_whatever_the_values_case_and_spacing() {
        let fp = fingerprint("SELECT c FROM sbtest1 WHERE id=42");
        assert_eq!(fp, "select c from sbtest1 where id = ?");
        same(
            "SELECT c FROM sbtest1 WHERE id=42",
            "select c from sbtest1 where id = 7",
        );
        same(
            "SELECT c FROM sbtest1 WHERE id=42",
            "select  c\n\tFROM sbtest1 WHERE id = 7;",
        );
        assert_ne!(fp, fingerprint("SELECT c FROM sbtest12 WHERE id=42"));
        assert_eq!(
            fingerprint("SELECT c FROM sbtest12 WHERE id=42"),
            "select c from sbtest12 where id = ?"
        );
    }

    #[test]
    fn in_lists_of_any_length_are_one_class() {
        let fp = fingerprint("SELECT * FROM t WHERE id IN (1, 2, 3)");
        assert_eq!(fp, "select * from t where id in (?+)");
        same(
            "SELECT * FROM t WHERE id IN (1, 2, 3)",
            "select * from t where id in (9)",
        );
        same(
            "SELECT * FROM t WHERE id IN (1,2,3)",
            "SELECT * FROM t WHERE id IN ('a','b')",
        );
        assert_eq!(
            fingerprint("SELECT * FROM t WHERE id IN (SELECT id FROM u)"),
            "select * from t where id in (select id from u)"
        );
    }

    #[test]
    fn rows_of_values_are_one_class() {
        let fp = fingerprint("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, NOW())");
        assert_eq!(fp, "insert into t(a, b) values (?+)");
        same(
            "INSERT INTO t (a, b) VALUES (1, 'x')",
            "insert into t(a,b) values(5,'z'),(6,'w')",
        );
        assert_eq!(
            fingerprint("INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE c=VALUES(c)"),
            "insert into t values (?+) on duplicate key update c = values (c)"
        );
    }

    #[test]
    fn signed_decimal_exponent_and_hex_numbers() {
        let fp = fingerprint("SELECT -5, +3.25, .5, 1e10, 2.5E-3, 0x1F, 0b101 FROM t WHERE k=-1.5");
        assert_eq!(fp, "select ?, ?, ?, ?, ?, ?, ? from t where k = ?");
        assert_eq!(
            fingerprint("SELECT a-1, a - 1, (-2)"),
            "select a - ?, a - ?, (?)"
        );
        same(
            "UPDATE t SET k=k+1 WHERE id=3",
            "update t set k = k + 17 where id = -3",
        );
    }

    #[test]
    fn strings_with_escaped_quotes_and_prefixes() {
        let fp = fingerprint("SELECT 'it''s', 'it\\'s', N'x', _utf8mb4'y', E'z\\n' FROM t");
        assert_eq!(fp, "select ?, ?, ?, ?, ? from t");
        same("SELECT 'a;b' -- no\n", "select 'it''s; ok'");
        assert_eq!(
            fingerprint("SELECT $$a 'b' c$$, $tag$x$tag$, $1"),
            "select ?, ?, ?"
        );
        assert_eq!(fingerprint("SELECT ? , ?"), "select ?, ?");
    }

    #[test]
    fn quoted_identifiers_keep_their_case_and_comments_go() {
        assert_eq!(
            fingerprint("SELECT `Col1`, \"Col2\" FROM `My Table` /* hint */ # c\nWHERE x=1"),
            "select `Col1`, \"Col2\" from `My Table` where x = ?"
        );
        assert_eq!(
            fingerprint("select count(*), t.c, max(k) from t group by 1 order by c desc"),
            "select count(*), t.c, max(k) from t group by ? order by c desc"
        );
        assert_eq!(
            fingerprint("SELECT 1 FROM 2fa_codes"),
            "select ? from 2fa_codes"
        );
        assert_eq!(
            fingerprint("SELECT @@version, @x := 1"),
            "select @@version, @x := ?"
        );
        assert_eq!(
            fingerprint("SELECT doc #>> '{a}' FROM d"),
            "select doc #>> ? from d"
        );
    }

    #[test]
    fn class_ids_are_short_stable_hashes() {
        let id = class_id("select ?");
        assert_eq!(id.len(), 16);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(id, class_id("select ?"));
        assert_ne!(id, class_id("select ?, ?"));
        // SHA-256("abc") starts ba7816bf8f01cfea.
        assert_eq!(class_id("abc"), "ba7816bf8f01cfea");
    }
}
