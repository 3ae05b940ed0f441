//! The checks every workload kind shares: its keys, the target it fits, its connections
//! and its `slo`; then the kind's own ([`crate::KindKeys::check`]).

use super::{range, MAX_SWEEP_POINTS};
use crate::experiment::{fitting_targets, Experiment, Loaded, Workload};
use crate::key;
use crate::located::Check;
use crate::workload::article;
use crate::MAX_CONNECTIONS;
use std::collections::BTreeSet;

/// Workload `i`'s keys: those every kind shares, then its kind's own.
pub(crate) fn check(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    check_workload_keys(l, i, w)?;
    check_workload_target(l, e, i, w)?;
    // The kind's own first: it says best why its sweep is out of range (tpcc: warehouses).
    // With servers of several kinds, checked as each kind of variant reads the file.
    if e.mixes_kinds() {
        for kind in e.variant_kinds() {
            let lk = l.for_kind(kind);
            w.keys.check(&lk, &lk.experiment, i)?;
        }
    } else {
        w.keys.check(l, e, i)?;
    }
    check_connections(l, i, w)?;
    check_slo(l, i, w)
}

/// The longest latency limit an `slo` may set: a minute (TPC-C's longest response-time
/// limit is 20 s).
pub const SLO_LONGEST: std::time::Duration = std::time::Duration::from_secs(60);

/// `slo`: a percentile the record keeps, a positive limit up to [`SLO_LONGEST`], a kind
/// with an open loop, the load from this machine.
pub(crate) fn check_slo(l: &Loaded, i: usize, w: &Workload) -> Check {
    let Some(slo) = &w.slo else {
        return Ok(());
    };
    let at = |k: &'static str| key!["workload", i, "slo", k];
    if !crate::experiment::SLO_PERCENTILES.contains(&slo.percentile) {
        return Err(l.error_at(
            &at("percentile"),
            format!(
                "slo percentile must be one of 50, 90, 99, 99.9, got {}",
                slo.percentile
            ),
        ));
    }
    match crate::parse_duration(&slo.limit) {
        Err(e) => return Err(l.error_at(&at("limit"), format!("slo limit: {e}"))),
        Ok(d) if d.is_zero() => {
            return Err(l.error_at(
                &at("limit"),
                "slo limit must be above zero; write e.g. \"1ms\"",
            ))
        }
        Ok(d) if d > SLO_LONGEST => {
            return Err(l.error_at(
                &at("limit"),
                format!(
                    "slo limit {} is longer than a minute: no request waits that long, so the search would only find the closed-loop peak at the price of its trials; write e.g. \"10ms\"",
                    slo.limit
                ),
            ))
        }
        Ok(_) => {}
    }
    let name = w.kind.name();
    if !w.kind.open_loop() {
        return Err(l.error_at(
            &key!["workload", i, "slo"],
            format!(
                "slo searches an offered rate, and {} {name} workload has no open loop; use it on a kv or oltp workload, or remove slo",
                article(name)
            ),
        ));
    }
    if !w.clients.is_empty() {
        return Err(l.error_at(
            &key!["workload", i, "slo"],
            "slo runs its trials from this machine; remove clients or slo",
        ));
    }
    Ok(())
}

/// Each kind takes its own keys: a kv key in an oltp workload is a mistake, not a default.
pub(crate) fn check_workload_keys(l: &Loaded, i: usize, w: &Workload) -> Check {
    let allowed = w.kind.keys();
    for k in l.keys_in(&key!["workload", i]) {
        if ["kind", "name", "train_only", "clients", "slo"].contains(&k.as_str())
            || allowed.contains(&k.as_str())
        {
            continue;
        }
        let kinds = l.kinds();
        let owner = kinds.names().into_iter().find(|o| {
            kinds
                .find(o)
                .is_some_and(|o| o.keys().contains(&k.as_str()))
        });
        let hint = match owner {
            Some(o) => format!("{k} is a key of {o} workloads"),
            None => format!("unknown key {k}"),
        };
        let at = key!["workload", i, k.clone()];
        let name = w.kind.name();
        return Err(l.error_at(
            &at,
            format!(
                "{hint}; {} {name} workload takes: {} (see docs/experiment-file.md)",
                article(name),
                allowed.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The kind fits every variant's target, or the error names what would: with one kind
/// of server, `[target] kind`; with several, the first variant it cannot run on.
pub(crate) fn check_workload_target(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    let kind = w.kind;
    let name = kind.name();
    if !e.mixes_kinds() {
        let server = e.variant_kinds()[0];
        let target = bakeoff_sandbox::target_for(server);
        let Err(why) = kind.fits(&*target) else {
            return Ok(());
        };
        let said = if server == e.target.kind {
            format!("[target] kind is {}", server.as_str())
        } else {
            format!("every variant is {}", server.as_str())
        };
        return Err(l.error_at(
            &key!["workload", i, "kind"],
            format!(
                "{} {name} workload needs {}, but {said} ({why}); change one of them",
                article(name),
                fitting_targets(kind),
            ),
        ));
    }
    for v in &e.variants {
        let server = e.kind_of(v);
        let Err(why) = kind.fits(&*bakeoff_sandbox::target_for(server)) else {
            continue;
        };
        return Err(l.error_at(
            &key!["workload", i, "kind"],
            format!(
                "workload {} ({name}) cannot run on variant {}, {} {} server ({why}); {name} takes {}: give the variant another kind, or move the workload to an experiment of its own",
                w.display_name(),
                v.name,
                article(server.as_str()),
                server.as_str(),
                fitting_targets(kind),
            ),
        ));
    }
    Ok(())
}

/// connections and client_threads, for every kind.
pub(crate) fn check_connections(l: &Loaded, i: usize, w: &Workload) -> Check {
    let at = |k: &'static str| key!["workload", i, k];
    let conns = w.connections_swept();
    let field = w.keys.connections_key();
    if conns.is_empty() {
        return Err(l.error_at(
            &at(field),
            "connections is empty; give at least one, e.g. [1, 16, 64]",
        ));
    }
    if let Some(c) = conns.iter().find(|c| !(1..=MAX_CONNECTIONS).contains(*c)) {
        return Err(l.error_at(
            &at(field),
            format!("{field} must be 1..={MAX_CONNECTIONS}, got {c}"),
        ));
    }
    if conns.len() > MAX_SWEEP_POINTS {
        return Err(l.error_at(
            &at(field),
            format!(
                "{field} has {} points; a sweep takes at most {MAX_SWEEP_POINTS}",
                conns.len()
            ),
        ));
    }
    let mut seen = BTreeSet::new();
    if let Some(c) = conns.iter().find(|c| !seen.insert(**c)) {
        return Err(l.error_at(
            &at(field),
            format!("{field} lists {c} twice; each point of a sweep once"),
        ));
    }
    let min_conns = conns.iter().copied().min().unwrap_or(1);
    let Some(threads) = w.keys.client_threads() else {
        return Ok(());
    };
    range(
        l,
        &at("client_threads"),
        threads,
        1.0,
        64.0,
        "client_threads",
    )?;
    if threads > min_conns {
        return Err(l.error_at(
            &at("client_threads"),
            format!("client_threads ({threads}) exceeds the smallest connections value ({min_conns}); lower it"),
        ));
    }
    Ok(())
}
