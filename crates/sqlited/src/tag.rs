//! What a statement's CommandComplete tag says, PostgreSQL style: its leading keywords
//! (`Verb`, read past comments), then `SELECT n`, `INSERT 0 n`, `UPDATE n`, `DELETE n`
//! or the keywords themselves (`BEGIN`, `CREATE TABLE`, ...). Also whether some SQL text
//! is blank (only whitespace, semicolons and comments).

/// The kind of statement, as far as its tag goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    Insert,
    Update,
    Delete,
    /// Anything else; its tag when it returns no columns (e.g. "CREATE TABLE").
    Other(String),
}

/// The words of `sql` uppercased, skipping whitespace, comments and punctuation; a quoted
/// string or identifier ends the scan (keywords of interest come before any).
pub fn words(sql: &str) -> impl Iterator<Item = String> + '_ {
    let mut rest = sql;
    std::iter::from_fn(move || loop {
        rest = skip_blank(rest);
        let c = rest.chars().next()?;
        if c.is_ascii_alphabetic() || c == '_' {
            let n = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let word = rest[..n].to_ascii_uppercase();
            rest = &rest[n..];
            return Some(word);
        }
        if matches!(c, '\'' | '"' | '`' | '[') {
            return None;
        }
        rest = &rest[c.len_utf8()..];
    })
}

/// `sql` after leading whitespace, semicolons and comments.
pub fn skip_blank(mut sql: &str) -> &str {
    loop {
        let t = sql.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(comment) = t.strip_prefix("--") {
            sql = comment.find('\n').map_or("", |n| &comment[n + 1..]);
        } else if let Some(comment) = t.strip_prefix("/*") {
            sql = comment.find("*/").map_or("", |n| &comment[n + 2..]);
        } else {
            return t;
        }
    }
}

/// Whether `sql` holds no statement: only whitespace, semicolons and comments.
pub fn is_blank(sql: &str) -> bool {
    skip_blank(sql).is_empty()
}

/// The statement's verb from its leading keywords.
pub fn verb(sql: &str) -> Verb {
    let mut w = words(sql);
    let first = w.next().unwrap_or_default();
    match first.as_str() {
        "INSERT" | "REPLACE" => Verb::Insert,
        "UPDATE" => Verb::Update,
        "DELETE" => Verb::Delete,
        "WITH" => w
            .find_map(|x| match x.as_str() {
                "INSERT" | "REPLACE" => Some(Verb::Insert),
                "UPDATE" => Some(Verb::Update),
                "DELETE" => Some(Verb::Delete),
                _ => None,
            })
            .unwrap_or(Verb::Other("SELECT".into())),
        "CREATE" | "DROP" | "ALTER" => {
            let object =
                w.find(|x| !matches!(x.as_str(), "TEMP" | "TEMPORARY" | "UNIQUE" | "VIRTUAL"));
            Verb::Other(match object {
                Some(o) => format!("{first} {o}"),
                None => first,
            })
        }
        "END" => Verb::Other("COMMIT".into()),
        "START" => Verb::Other("START TRANSACTION".into()),
        _ => Verb::Other(first),
    }
}

/// The CommandComplete tag: `rows` is how many rows the statement returned, `changes`
/// `sqlite3_changes()` after it. With columns, an INSERT/UPDATE/DELETE (RETURNING)
/// counts the rows it returned and anything else is `SELECT n`.
pub fn command_tag(verb: &Verb, has_columns: bool, rows: u64, changes: u64) -> String {
    let n = if has_columns { rows } else { changes };
    match verb {
        Verb::Insert => format!("INSERT 0 {n}"),
        Verb::Update => format!("UPDATE {n}"),
        Verb::Delete => format!("DELETE {n}"),
        Verb::Other(_) if has_columns => format!("SELECT {rows}"),
        Verb::Other(words) => words.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(sql: &str, has_columns: bool) -> String {
        command_tag(&verb(sql), has_columns, 2, 5)
    }

    #[test]
    fn tags_read_like_postgresql() {
        assert_eq!(tag("select 1", true), "SELECT 2");
        assert_eq!(
            tag(" -- hi\n insert into t values (1)", false),
            "INSERT 0 5"
        );
        assert_eq!(tag("/* x */ UPDATE t SET a=1", false), "UPDATE 5");
        assert_eq!(tag("delete from t returning a", true), "DELETE 2");
        assert_eq!(tag("replace into t values (1)", false), "INSERT 0 5");
        assert_eq!(tag("WITH x AS (SELECT 1) DELETE FROM t", false), "DELETE 5");
        assert_eq!(tag("begin transaction", false), "BEGIN");
        assert_eq!(tag("end", false), "COMMIT");
        assert_eq!(tag("create unique index i on t(a)", false), "CREATE INDEX");
        assert_eq!(tag("CREATE TEMP TABLE x(a)", false), "CREATE TABLE");
        assert_eq!(tag("drop table if exists t", false), "DROP TABLE");
        assert_eq!(tag("pragma journal_mode=wal", true), "SELECT 2");
        assert_eq!(tag("pragma synchronous=off", false), "PRAGMA");
    }

    #[test]
    fn blank_sql_is_only_comments_and_semicolons() {
        assert!(is_blank(""));
        assert!(is_blank(" ;\n-- c\n/* d */ ; "));
        assert!(is_blank("-- no newline"));
        assert!(!is_blank("; select 1"));
    }
}
