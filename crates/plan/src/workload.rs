//! What every workload kind shares: reading a `[[workload]]` table once its kind is
//! found in the registry, the keys a kind takes (its struct's fields), the target it fits,
//! connections. Each kind's own keys and checks live in its folder in bakeoff-workloads.

use crate::document::Loaded;
use crate::experiment::{Experiment, Workload, WorkloadHead};
use crate::kind::{fitting_targets, KindSpec, Kinds};
use crate::validate::{range, Check, MAX_SWEEP_POINTS};
use crate::{key, MAX_CONNECTIONS};
use serde::de::{DeserializeOwned, DeserializeSeed, IntoDeserializer};
use serde::Deserialize;
use std::collections::BTreeSet;

/// Reads one `[[workload]]` table: its kind and name, then the kind's keys into the kind's
/// struct. Read from the document (not through serde's flattening), so an error keeps the
/// span of the value at fault.
pub(crate) fn read(
    table: toml_edit::Value,
    kinds: &'static dyn Kinds,
) -> Result<Workload, toml_edit::de::Error> {
    let head = WorkloadHead::deserialize(table.clone().into_deserializer())?;
    let Some(kind) = kinds.find(&head.kind) else {
        let value = table
            .as_inline_table()
            .and_then(|t| t.get("kind"))
            .cloned()
            .unwrap_or_else(|| head.kind.as_str().into());
        return Err(UnknownKind(kinds.names())
            .deserialize(value.into_deserializer())
            .expect_err("an unknown kind is refused"));
    };
    Ok(Workload {
        kind,
        keys: kind.read(table)?,
        name: head.name,
        train_only: head.train_only,
        clients: head.clients,
        slo: head.slo,
    })
}

/// Refuses a kind name as serde refuses an unknown variant, at the value's span.
struct UnknownKind(Vec<&'static str>);

impl<'de> DeserializeSeed<'de> for UnknownKind {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let got = String::deserialize(d)?;
        let names: &'static [&'static str] = Box::leak(self.0.into_boxed_slice());
        Err(serde::de::Error::unknown_variant(&got, names))
    }
}

/// The fields a kind's keys struct reads, as its derived `Deserialize` states them: one
/// list, so the keys a kind accepts can never drift from the keys it reads.
pub fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Probe(&'static [&'static str]);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Probe {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut probe = Probe(&[]);
    let _ = T::deserialize(&mut probe);
    probe.0
}

impl Workload {
    /// The name results use for this workload.
    pub fn display_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.kind.name().to_string())
    }

    /// Its keys as the kind's own struct, when it is that kind's (`w.keys_as::<KvKeys>()`).
    pub fn keys_as<T: 'static>(&self) -> Option<&T> {
        self.keys.as_any().downcast_ref::<T>()
    }

    /// The connection counts this workload opens at each point of its sweep.
    pub fn connections_swept(&self) -> Vec<usize> {
        self.keys.connections_swept()
    }
}

/// "a" or "an" before a kind's name.
pub fn article(name: &str) -> &'static str {
    if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Workload `i`'s keys: those every kind shares, then its kind's own.
pub(crate) fn check(l: &Loaded, e: &Experiment, i: usize, w: &Workload) -> Check {
    check_workload_keys(l, i, w)?;
    check_workload_target(l, e, i, w.kind)?;
    // The kind's own first: it says best why its sweep is out of range (tpcc: warehouses).
    w.keys.check(l, e, i)?;
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

/// The kind fits the target, or the error names what would.
pub(crate) fn check_workload_target(
    l: &Loaded,
    e: &Experiment,
    i: usize,
    kind: &dyn KindSpec,
) -> Check {
    let target = bakeoff_sandbox::target_for(e.target.kind);
    let Err(why) = kind.fits(&*target) else {
        return Ok(());
    };
    let name = kind.name();
    Err(l.error_at(
        &key!["workload", i, "kind"],
        format!(
            "{} {name} workload needs {}, but [target] kind is {} ({why}); change one of them",
            article(name),
            fitting_targets(kind),
            e.target.kind.as_str()
        ),
    ))
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
