//! What a statement sends and gets back, below both wire clients and [`crate::Client`]:
//! its parameters (and their text form, [`inline`]), the decoded rows, the error it
//! fails with.

/// A statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

/// A failed statement: its kind (for counting and ignore lists) and the server's words.
#[derive(Debug, Clone)]
pub struct DbError {
    pub kind: &'static str,
    pub message: String,
}

/// A decoded result: column names, rows as text (SQL NULL as None), affected rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    pub affected: u64,
}

impl Rows {
    /// The first row's column `i` as an integer (None when absent, NULL or not a number).
    pub fn int(&self, i: usize) -> Option<i64> {
        self.rows.first()?.get(i)?.as_deref()?.trim().parse().ok()
    }

    /// The first row's column `i` as a float.
    pub fn float(&self, i: usize) -> Option<f64> {
        self.rows.first()?.get(i)?.as_deref()?.trim().parse().ok()
    }
}

/// The `key` of a statement always sent as text.
pub const TEXT: usize = usize::MAX;

/// `?` placeholders replaced by literal values (strings quoted, quotes doubled).
pub fn inline(sql: &str, params: &[Param<'_>]) -> String {
    if params.is_empty() {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + params.len() * 16);
    let mut it = params.iter();
    for ch in sql.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match it.next() {
            Some(Param::Int(i)) => out.push_str(&i.to_string()),
            Some(Param::Text(s)) => {
                out.push('\'');
                out.push_str(&s.replace('\'', "''"));
                out.push('\'');
            }
            None => out.push('?'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_quotes_text() {
        assert_eq!(
            inline(
                "UPDATE t SET c=? WHERE id=?",
                &[Param::Text("a'b"), Param::Int(7)]
            ),
            "UPDATE t SET c='a''b' WHERE id=7"
        );
    }
}
