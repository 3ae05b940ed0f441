//! oltp's and sysbench's keys (sysbench's parameter names) and their checks.

use crate::document::Loaded;
use crate::experiment::{Experiment, TargetKind, Workload, WorkloadKind};
use crate::validate::{range, Check};
use crate::{key, OLTP_TESTS};

/// The keys a oltp workload takes (besides `kind` and `name`).
pub(crate) const KEYS: &[&str] = &[
    "connections",
    "client_threads",
    "transport",
    "test",
    "tables",
    "table_size",
    "distribution",
    "special_pct",
    "special_res",
    "zipfian_exp",
    "pareto_h",
    "gaussian_iter",
    "point_selects",
    "simple_ranges",
    "sum_ranges",
    "order_ranges",
    "distinct_ranges",
    "range_size",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
    "random_points",
    "skip_trx",
    "auto_inc",
    "secondary",
    "create_secondary",
    "engine",
    "prepared",
    "ignore_errors",
    "max_reconnects",
];

pub(crate) fn check_sql(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    if let Some(t) = &w.test {
        if !OLTP_TESTS.contains(&t.as_str()) {
            return Err(l.error_at(
                &at("test"),
                format!("unknown test {t:?}; use one of {}", OLTP_TESTS.join(", ")),
            ));
        }
    }
    if let Some(n) = w.tables {
        range(l, &at("tables"), f64::from(n), 1.0, 1000.0, "tables")?;
    }
    if let Some(n) = w.table_size {
        range(l, &at("table_size"), n as f64, 1.0, 1e10, "table_size")?;
    }
    let counts = [
        ("point_selects", w.point_selects),
        ("simple_ranges", w.simple_ranges),
        ("sum_ranges", w.sum_ranges),
        ("order_ranges", w.order_ranges),
        ("distinct_ranges", w.distinct_ranges),
        ("index_updates", w.index_updates),
        ("non_index_updates", w.non_index_updates),
        ("delete_inserts", w.delete_inserts),
    ];
    for (k, v) in counts {
        if let Some(n) = v {
            range(l, &at(k), f64::from(n), 0.0, 1000.0, k)?;
        }
    }
    if let Some(n) = w.range_size {
        range(l, &at("range_size"), f64::from(n), 1.0, 1e7, "range_size")?;
    }
    if let Some(n) = w.random_points {
        range(
            l,
            &at("random_points"),
            f64::from(n),
            1.0,
            1000.0,
            "random_points",
        )?;
    }
    if let Some(x) = w.zipfian_exp {
        range(l, &at("zipfian_exp"), x, 0.01, 0.99, "zipfian_exp")?;
    }
    if w.kind == WorkloadKind::Sysbench {
        if w.distribution == Some(crate::RowDistribution::Zipfian) {
            return Err(l.error_at(
                &at("distribution"),
                "sysbench 1.0.20 has no zipfian distribution; use it with kind = \"oltp\" or choose uniform, gaussian, special or pareto",
            ));
        }
        if e.plan.ops.is_some() {
            return Err(l.error_at(
                &key!["plan", "ops"],
                "a sysbench workload measures by time; use plan.duration instead of ops",
            ));
        }
    }
    if let Some(x) = w.pareto_h {
        range(l, &at("pareto_h"), x, 0.001, 0.999, "pareto_h")?;
    }
    if let Some(n) = w.gaussian_iter {
        range(
            l,
            &at("gaussian_iter"),
            f64::from(n),
            1.0,
            1000.0,
            "gaussian_iter",
        )?;
    }
    range(
        l,
        &at("special_pct"),
        w.special_pct,
        0.001,
        100.0,
        "special_pct",
    )?;
    range(
        l,
        &at("special_res"),
        w.special_res,
        0.0,
        100.0,
        "special_res",
    )?;
    if w.engine.is_some() && e.target.kind != TargetKind::Mariadb {
        return Err(l.error_at(
            &at("engine"),
            "engine (a storage engine) is for mariadb targets only; remove it",
        ));
    }
    Ok(())
}
