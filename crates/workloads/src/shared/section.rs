//! What the kinds' report sections share: the variants that ran, and a table's columns
//! from their names.

use bakeoff_report::model::Results;
use bakeoff_report::table::Column;

/// The variants that ran, in results order.
pub fn variants(r: &Results) -> Vec<&str> {
    r.variants
        .iter()
        .filter(|v| v.status == "ok")
        .map(|v| v.name.as_str())
        .collect()
}

/// The values of `items` grouped by their key, the groups in the order their first
/// item came and each group's values in theirs (a kind's cells by workload).
pub fn grouped<K: PartialEq, T>(items: impl IntoIterator<Item = (K, T)>) -> Vec<(K, Vec<T>)> {
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for (k, x) in items {
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, xs)) => xs.push(x),
            None => out.push((k, vec![x])),
        }
    }
    out
}

/// Columns named `names`: those also in `text` hold text, the others figures.
pub fn columns(names: &[&'static str], text: &[&str]) -> Vec<Column> {
    names
        .iter()
        .map(|h| {
            if text.contains(h) {
                Column::text(*h)
            } else {
                Column::figure(*h)
            }
        })
        .collect()
}
