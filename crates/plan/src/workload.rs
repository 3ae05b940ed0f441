//! What every workload kind shares: reading a `[[workload]]` table once its kind is
//! found in the registry, the keys a kind takes (its struct's fields), its name and
//! connections (the checks every kind shares: `validate/workload.rs`). Each kind's own
//! keys and checks live in its folder in bakeoff-workloads.

use crate::experiment::{Kinds, Workload, WorkloadHead};
use serde::de::{DeserializeOwned, DeserializeSeed, IntoDeserializer};
use serde::Deserialize;

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
