//! Answers compared: a query's rows against a reference's, in the order its ORDER BY
//! gives (rows whose sort keys tie may come in either order), text with its trailing
//! blanks dropped (PostgreSQL pads `char(n)`), integers exactly and every other number
//! within the precision the specification allows for its columns (clause 2.1.3.5, here
//! tighter: half a hundredth, or one part in 10^9 of a large sum, since the servers add
//! money as decimals or doubles). A mismatch names the query, the column and the first
//! differing row.

use bakeoff_sqlclient::Rows;
use std::cmp::Ordering;

/// Whether two values of one column are the same answer.
pub fn same_value(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            let (a, b) = (a.trim_end(), b.trim_end());
            if a == b {
                return true;
            }
            match (a.parse::<f64>(), b.parse::<f64>()) {
                (Ok(x), Ok(y)) => {
                    let integers = ![a, b].iter().any(|s| s.contains(['.', 'e', 'E']));
                    if integers {
                        return false;
                    }
                    (x - y).abs() <= 0.005_f64.max(1e-9 * x.abs().max(y.abs()))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The first place two rows differ: (row, column), both from 0.
fn first_difference(want: &Rows, got: &Rows) -> Option<(usize, usize)> {
    for (i, (w, g)) in want.rows.iter().zip(&got.rows).enumerate() {
        if w.len() != g.len() {
            return Some((i, w.len().min(g.len())));
        }
        for (j, (x, y)) in w.iter().zip(g).enumerate() {
            if !same_value(x.as_deref(), y.as_deref()) {
                return Some((i, j));
            }
        }
    }
    (want.rows.len() != got.rows.len()).then(|| (want.rows.len().min(got.rows.len()), 0))
}

/// Rows sorted by every column (numbers by value), for answers whose ORDER BY ties.
fn sorted(r: &Rows) -> Rows {
    let mut out = r.clone();
    let key = |v: &Option<String>| -> (Option<f64>, String) {
        let s = v.as_deref().unwrap_or("").trim_end().to_string();
        (s.parse::<f64>().ok(), s)
    };
    out.rows.sort_by(|a, b| {
        for (x, y) in a.iter().zip(b) {
            let (kx, ky) = (key(x), key(y));
            let o = match (kx.0, ky.0) {
                (Some(p), Some(q)) => p.partial_cmp(&q).unwrap_or(Ordering::Equal),
                _ => kx.1.cmp(&ky.1),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    out
}

/// None when `got` is the same answer as `want`; else the first difference in words:
/// `Q3: column revenue, row 4: 123.45, the reference 124.10`.
pub fn compare(q: u8, want: &Rows, got: &Rows) -> Option<String> {
    let (row, col) = first_difference(want, got)?;
    if want.rows.len() == got.rows.len() && first_difference(&sorted(want), &sorted(got)).is_none()
    {
        return None;
    }
    let name = want
        .columns
        .get(col)
        .or_else(|| got.columns.get(col))
        .cloned()
        .unwrap_or_else(|| format!("#{}", col + 1));
    let cell = |r: &Rows| -> String {
        match r.rows.get(row) {
            None => "no such row".into(),
            Some(v) => match v.get(col) {
                Some(Some(s)) => s.trim_end().to_string(),
                Some(None) => "NULL".into(),
                None => "no such column".into(),
            },
        }
    };
    let counts = if want.rows.len() != got.rows.len() {
        format!(
            " ({} rows, the reference {})",
            got.rows.len(),
            want.rows.len()
        )
    } else {
        String::new()
    };
    Some(format!(
        "Q{q}: column {name}, row {}: {}, the reference {}{counts}",
        row + 1,
        cell(got),
        cell(want)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(cols: &[&str], data: &[&[&str]]) -> Rows {
        Rows {
            columns: cols.iter().map(|c| c.to_string()).collect(),
            rows: data
                .iter()
                .map(|r| r.iter().map(|v| Some(v.to_string())).collect())
                .collect(),
            affected: 0,
        }
    }

    #[test]
    fn numbers_within_precision_and_padded_text_are_the_same_answer() {
        let pg = rows(
            &["n_name", "revenue", "n"],
            &[
                &["FRANCE                   ", "1234567.8912", "3"],
                &["GERMANY", "0.0344358900", "2"],
            ],
        );
        let lite = rows(
            &["n_name", "revenue", "n"],
            &[
                &["FRANCE", "1234567.89120001", "3"],
                &["GERMANY", "0.03443589", "2"],
            ],
        );
        assert_eq!(compare(5, &pg, &lite), None);
        let wrong = rows(
            &["n_name", "revenue", "n"],
            &[
                &["FRANCE", "1234567.8912", "3"],
                &["GERMANY", "0.0344358900", "4"],
            ],
        );
        assert_eq!(
            compare(5, &pg, &wrong).unwrap(),
            "Q5: column n, row 2: 4, the reference 2"
        );
        let short = rows(
            &["n_name", "revenue", "n"],
            &[&["FRANCE", "1234567.8912", "3"]],
        );
        let m = compare(5, &pg, &short).unwrap();
        assert!(
            m.starts_with("Q5: column n_name, row 2: no such row"),
            "{m}"
        );
        assert!(!same_value(Some("1234.56"), Some("1234.57")));
        assert!(same_value(Some("1234.565"), Some("1234.5649999")));
    }

    #[test]
    fn ties_in_the_order_may_come_either_way() {
        let a = rows(&["k", "v"], &[&["1", "5.00"], &["2", "5.00"]]);
        let b = rows(&["k", "v"], &[&["2", "5.0"], &["1", "5.0"]]);
        assert_eq!(compare(11, &a, &b), None);
    }
}
