//! kv's keys (memcached-style load over bakeoff's engine) and their checks: the key
//! space and its distribution, value sizes, the command mix, open or closed loop.

use crate::document::Loaded;
use crate::experiment::{ValueSize, Workload};
use crate::validate::{range, Check};
use crate::{key, MIX_COMMANDS};

/// The keys a kv workload takes (besides `kind` and `name`).
pub(crate) const KEYS: &[&str] = &[
    "connections",
    "client_threads",
    "pipeline",
    "keys",
    "key_distribution",
    "zipf_theta",
    "special_pct",
    "special_res",
    "value_size",
    "mix",
    "multiget_keys",
    "rate",
    "arrival",
    "preload",
];

pub(crate) fn check_kv(l: &Loaded, i: usize, w: &Workload) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    range(
        l,
        &at("pipeline"),
        w.pipeline as f64,
        1.0,
        1024.0,
        "pipeline",
    )?;
    range(l, &at("keys"), w.keys as f64, 1.0, 1e10, "keys")?;
    if !(w.zipf_theta > 0.0 && w.zipf_theta < 1.0) {
        return Err(l.error_at(
            &at("zipf_theta"),
            format!("zipf_theta must be in (0, 1), got {}", w.zipf_theta),
        ));
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
    let size = match w.value_size {
        ValueSize::Fixed(n) | ValueSize::Around { mean: n } => n,
    };
    range(
        l,
        &at("value_size"),
        size as f64,
        16.0,
        1_000_000.0,
        "value_size",
    )?;
    check_mix(l, i, w)?;
    range(
        l,
        &at("multiget_keys"),
        w.multiget_keys as f64,
        1.0,
        100.0,
        "multiget_keys",
    )?;
    if let Some(r) = w.rate {
        range(l, &at("rate"), r, 0.001, 1e9, "rate")?;
    }
    Ok(())
}

pub(crate) fn check_mix(l: &Loaded, i: usize, w: &Workload) -> Check {
    if let Some(k) = w.mix.keys().find(|k| !MIX_COMMANDS.contains(&k.as_str())) {
        return Err(l.error_at(
            &key!["workload", i, "mix"],
            format!(
                "unknown command {k:?} in mix; use {}",
                MIX_COMMANDS.join(", ")
            ),
        ));
    }
    if w.mix.values().map(|v| u64::from(*v)).sum::<u64>() == 0 {
        return Err(l.error_at(
            &key!["workload", i, "mix"],
            "mix weights add up to 0; give at least one command a weight",
        ));
    }
    Ok(())
}
