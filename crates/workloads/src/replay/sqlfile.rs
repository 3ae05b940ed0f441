//! A `.sql` file split into statements, as the mysql and psql clients split what they
//! read: on `;` outside of quoted text and comments. Understood: single-quoted strings
//! (with `''` and `\'` escapes), double-quoted text and backtick identifiers, `--` and `#`
//! line comments and `/* */` block comments (dropped, except MariaDB's executable
//! `/*! ... */` and `/*M! ... */` ones, which are kept), PostgreSQL's `$$` / `$tag$`
//! dollar-quoted bodies, and the mysql client's `DELIMITER xx` lines, which make `xx` the
//! separator from the next line on. Statements are trimmed and empty ones skipped; the
//! last one needs no separator.

use super::{ParseError, Statement};

/// The statements of a `.sql` file, or the string or comment that is never closed.
pub(super) fn parse(text: &str) -> Result<Vec<Statement>, ParseError> {
    Splitter {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
        delimiter: ";".to_string(),
        current: String::new(),
        current_line: 0,
        out: Vec::new(),
    }
    .run()
}

/// The splitter's position in the text and the statement it is building. Only ASCII
/// bytes have a meaning to it, so it walks bytes and copies slices, which always end on
/// character boundaries.
struct Splitter<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The 1-based line of `pos`.
    line: usize,
    delimiter: String,
    current: String,
    /// The line of the current statement's first token; 0 before it.
    current_line: usize,
    out: Vec<Statement>,
}

impl Splitter<'_> {
    fn run(mut self) -> Result<Vec<Statement>, ParseError> {
        while self.pos < self.bytes.len() {
            let at_line_start = self.pos == 0 || self.bytes[self.pos - 1] == b'\n';
            if at_line_start && self.current.trim().is_empty() && self.delimiter_line()? {
                continue;
            }
            self.step()?;
        }
        self.finish();
        Ok(self.out)
    }

    /// Reads the token at `pos`: a separator, a quoted text, a comment or one character.
    fn step(&mut self) -> Result<(), ParseError> {
        let rest = &self.text[self.pos..];
        if rest.starts_with(self.delimiter.as_str()) {
            self.pos += self.delimiter.len();
            self.finish();
            return Ok(());
        }
        match self.bytes[self.pos] {
            q @ (b'\'' | b'"') => self.quoted(q, true),
            b'`' => self.quoted(b'`', false),
            b'-' if is_dash_comment(rest) => {
                self.skip_line_comment();
                Ok(())
            }
            b'#' if is_hash_comment(rest) => {
                self.skip_line_comment();
                Ok(())
            }
            b'/' if rest.starts_with("/*") => self.block_comment(),
            b'$' => match dollar_tag(self.text, self.pos) {
                Some(tag) => self.dollar_quoted(tag.len()),
                None => {
                    self.take(1);
                    Ok(())
                }
            },
            _ => {
                let width = rest.chars().next().map_or(1, char::len_utf8);
                self.take(width);
                Ok(())
            }
        }
    }

    /// Copies `len` bytes from `pos` into the current statement.
    fn take(&mut self, len: usize) {
        let piece = &self.text[self.pos..self.pos + len];
        if self.current_line == 0 && !piece.trim().is_empty() {
            let leading = piece.len() - piece.trim_start().len();
            self.current_line = self.line + count_newlines(&piece[..leading]);
        }
        self.current.push_str(piece);
        self.line += count_newlines(piece);
        self.pos += len;
    }

    /// Moves past `len` bytes that are not part of the statement (a comment).
    fn skip(&mut self, len: usize) {
        self.line += count_newlines(&self.text[self.pos..self.pos + len]);
        self.pos += len;
    }

    /// Ends the current statement (at a separator or the end of the text).
    fn finish(&mut self) {
        let sql = self.current.trim();
        if !sql.is_empty() {
            self.out.push(Statement {
                sql: sql.to_string(),
                line: self.current_line,
                session: None,
            });
        }
        self.current.clear();
        self.current_line = 0;
    }

    /// At the start of a line between statements: a `DELIMITER xx` line sets the
    /// separator and is consumed (true); any other line is left alone (false).
    fn delimiter_line(&mut self) -> Result<bool, ParseError> {
        let rest = &self.text[self.pos..];
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let line = &rest[..end];
        let mut words = line.split_whitespace();
        let is_delimiter = words
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("delimiter"));
        if !is_delimiter {
            return Ok(false);
        }
        let Some(new) = words.next() else {
            let message =
                "DELIMITER without a delimiter; write e.g. 'DELIMITER //', and 'DELIMITER ;' to go back";
            return Err(ParseError::new(self.line, line, message));
        };
        self.delimiter = new.to_string();
        self.skip(end);
        Ok(true)
    }

    /// A quoted text from `pos` (opened by `quote`), copied whole. A doubled quote stands
    /// for one; so does a backslash-escaped one when `backslash`.
    fn quoted(&mut self, quote: u8, backslash: bool) -> Result<(), ParseError> {
        if let Some(end) = quoted_end(self.bytes, self.pos, quote, backslash) {
            self.take(end - self.pos);
            return Ok(());
        }
        let (what, hint) = match quote {
            b'\'' => ("string", "write a quote inside a string as '' or \\'"),
            b'"' => ("double-quoted text", "write a \" inside it as \"\""),
            _ => ("backtick-quoted identifier", "write a ` inside it as ``"),
        };
        let message = format!(
            "unterminated {what} ({} ... runs to the end of the file); close it ({hint})",
            quote as char
        );
        Err(ParseError::new(self.line, &self.text[self.pos..], message))
    }

    /// A `/* */` comment: dropped (leaving a space between the tokens around it), or kept
    /// whole when it is an executable `/*!` or `/*M!` one.
    fn block_comment(&mut self) -> Result<(), ParseError> {
        let rest = &self.text[self.pos..];
        let Some(end) = rest[2..].find("*/").map(|i| i + 4) else {
            let message =
                "unterminated /* comment (it runs to the end of the file); close it with */";
            return Err(ParseError::new(self.line, rest, message));
        };
        if rest.starts_with("/*!") || rest.starts_with("/*M!") {
            self.take(end);
        } else {
            self.skip(end);
            self.current.push(' ');
        }
        Ok(())
    }

    /// Drops everything up to the end of the line (the newline stays).
    fn skip_line_comment(&mut self) {
        let rest = &self.text[self.pos..];
        self.skip(rest.find('\n').unwrap_or(rest.len()));
    }

    /// A dollar-quoted body opened by the `tag_len` bytes at `pos`, copied whole.
    fn dollar_quoted(&mut self, tag_len: usize) -> Result<(), ParseError> {
        let rest = &self.text[self.pos..];
        let tag = &rest[..tag_len];
        match rest[tag_len..].find(tag) {
            Some(i) => {
                self.take(tag_len + i + tag_len);
                Ok(())
            }
            None => {
                let message = "unterminated dollar-quoted text (its $tag$ ... runs to the end of the file); close it with the same $tag$";
                Err(ParseError::new(self.line, rest, message))
            }
        }
    }
}

/// One past the quote that closes the quoted text opened at `start` (a doubled quote, or
/// a backslash-escaped one when `backslash`, stands for one); None if it is not closed.
pub(super) fn quoted_end(b: &[u8], start: usize, quote: u8, backslash: bool) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        let escaped =
            (backslash && b[i] == b'\\') || (b[i] == quote && b.get(i + 1) == Some(&quote));
        if escaped {
            i += 2;
        } else if b[i] == quote {
            return Some(i + 1);
        } else {
            i += 1;
        }
    }
    None
}

fn count_newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

/// `--` followed by whitespace or the end: a comment for MariaDB and PostgreSQL alike
/// (`5--3` is a subtraction for MariaDB).
pub(super) fn is_dash_comment(rest: &str) -> bool {
    rest.starts_with("--") && rest[2..].chars().next().is_none_or(char::is_whitespace)
}

/// `#` starts a MariaDB comment, unless it is one of PostgreSQL's `#>`, `#>>` and `#-`
/// json operators.
pub(super) fn is_hash_comment(rest: &str) -> bool {
    !(rest.starts_with("#>") || rest.starts_with("#-"))
}

/// The `$tag$` (or `$$`) that opens a dollar-quoted text at `pos`, if there is one: not
/// right after an identifier character (`a$b$` is an identifier), and a tag that does
/// not start with a digit (`$1` is a parameter).
pub(super) fn dollar_tag(text: &str, pos: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    if pos > 0 && ident(bytes[pos - 1]) {
        return None;
    }
    let mut i = pos + 1;
    while i < bytes.len() && bytes[i] != b'$' {
        let b = bytes[i];
        let ok = if i == pos + 1 {
            b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
        } else {
            ident(b)
        };
        if !ok {
            return None;
        }
        i += 1;
    }
    (i < bytes.len()).then(|| &text[pos..=i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqls(text: &str) -> Vec<String> {
        parse(text).unwrap().into_iter().map(|s| s.sql).collect()
    }

    fn lines(text: &str) -> Vec<usize> {
        parse(text).unwrap().into_iter().map(|s| s.line).collect()
    }

    #[test]
    fn splits_on_semicolons_and_trims() {
        assert_eq!(
            sqls("SELECT 1;\n  SELECT 2 ;;\n\nSELECT 3"),
            ["SELECT 1", "SELECT 2", "SELECT 3"]
        );
        assert_eq!(lines("SELECT 1;\n  SELECT 2 ;;\n\nSELECT 3"), [1, 2, 4]);
        assert!(parse("SELECT 1;").unwrap()[0].session.is_none());
        assert_eq!(sqls("  \n ; ;\n"), Vec::<String>::new());
    }

    #[test]
    fn semicolons_in_strings_and_identifiers_do_not_split() {
        let text = "INSERT INTO t VALUES ('a;b', \"c;d\", `e;f`);\nSELECT 1";
        assert_eq!(
            sqls(text),
            ["INSERT INTO t VALUES ('a;b', \"c;d\", `e;f`)", "SELECT 1"]
        );
    }

    #[test]
    fn escaped_quotes_stay_inside_the_string() {
        let text = "SELECT 'it''s; fine';\nSELECT 'back\\'slash; too';\nSELECT \"a\"\"b;\";\nSELECT `x``;`;";
        assert_eq!(
            sqls(text),
            [
                "SELECT 'it''s; fine'",
                "SELECT 'back\\'slash; too'",
                "SELECT \"a\"\"b;\"",
                "SELECT `x``;`"
            ]
        );
        assert_eq!(
            sqls(r"SELECT 'c:\\'; SELECT 2"),
            [r"SELECT 'c:\\'", "SELECT 2"]
        );
    }

    #[test]
    fn comments_are_dropped_with_their_semicolons() {
        let text = "-- a; comment\nSELECT 1 -- trailing; too\n, 2; # hash; comment\n/* block;\n comment */ SELECT/* x; */3;\nSELECT 5--3;";
        assert_eq!(sqls(text), ["SELECT 1 \n, 2", "SELECT 3", "SELECT 5--3"]);
        assert_eq!(lines(text), [2, 5, 6]);
    }

    #[test]
    fn executable_comments_and_json_operators_are_kept() {
        let text =
            "/*!40101 SET NAMES utf8mb4 */;\nSELECT doc #> '{a}' FROM d;\nSELECT doc #- '{a}'";
        assert_eq!(
            sqls(text),
            [
                "/*!40101 SET NAMES utf8mb4 */",
                "SELECT doc #> '{a}' FROM d",
                "SELECT doc #- '{a}'"
            ]
        );
    }

    #[test]
    fn dollar_quoted_bodies_are_one_token() {
        let text = "CREATE FUNCTION f() RETURNS int AS $$\nBEGIN\n  RETURN 1; -- not a comment here\nEND;\n$$ LANGUAGE plpgsql;\nDO $body$ BEGIN PERFORM 'x;$$'; END $body$;\nSELECT $1, a$b$ FROM t;";
        let got = sqls(text);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].ends_with("END;\n$$ LANGUAGE plpgsql"));
        assert!(got[0].contains("-- not a comment here"));
        assert_eq!(got[1], "DO $body$ BEGIN PERFORM 'x;$$'; END $body$");
        assert_eq!(got[2], "SELECT $1, a$b$ FROM t");
    }

    #[test]
    fn delimiter_lines_change_the_separator() {
        let text = "DELIMITER //\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT 2;\nEND//\ndelimiter ;\nCALL p();\nSELECT 3";
        let got = parse(text).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0].sql,
            "CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT 2;\nEND"
        );
        assert_eq!((got[0].line, got[1].line, got[2].line), (2, 8, 9));
        assert_eq!(got[1].sql, "CALL p()");
        let e = parse("DELIMITER\nSELECT 1").unwrap_err();
        assert!(e.message.contains("DELIMITER //"), "{e}");
        assert_eq!(e.line, 1);
    }

    #[test]
    fn delimiter_inside_a_statement_is_text() {
        assert_eq!(
            sqls("SELECT\ndelimiter FROM t;"),
            ["SELECT\ndelimiter FROM t"]
        );
    }

    #[test]
    fn an_unterminated_string_names_its_start_line() {
        let e =
            parse("SELECT 1;\nSELECT 2;\nINSERT INTO t VALUES (1,\n 'never; closed);\nSELECT 3;\n")
                .unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.starts_with("unterminated string"), "{e}");
        assert!(e.message.contains("''"), "{e}");
        assert_eq!(e.statement, "'never; closed); SELECT 3;");
        assert!(e.to_string().starts_with("line 4: unterminated string"));
    }

    #[test]
    fn unterminated_comments_and_bodies_are_errors() {
        let e = parse("SELECT 1;\n/* open\n\nSELECT 2;").unwrap_err();
        assert_eq!((e.line, e.statement.as_str()), (2, "/* open SELECT 2;"));
        let e = parse("SELECT 1;\n\nDO $x$ BEGIN END $y$;").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(
            e.message.contains("dollar-quoted") && !e.message.contains("$x$"),
            "{e}"
        );
        let e = parse("SELECT `a;").unwrap_err();
        assert!(e.message.contains("backtick"), "{e}");
    }

    #[test]
    fn utf8_text_is_copied_whole() {
        assert_eq!(
            sqls("SELECT 'déjà vu'; SELECT ünï"),
            ["SELECT 'déjà vu'", "SELECT ünï"]
        );
    }
}
