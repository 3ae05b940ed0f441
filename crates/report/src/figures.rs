//! A workload kind's own figures, kept where results.json has always kept them while the
//! report crate names no kind: on a [`crate::model::Cell`] under the kind's name (a
//! `"<kind>": {...}` object), on a [`crate::model::Run`] as the kind's keys beside the
//! run's own. Each kind reads and writes them as typed records of its own (in its folder
//! of the workloads crate) through [`Figures`], a run's record as a [`RunFigures`] and a
//! cell's as a [`CellFigures`]; the report shows them only through the kind's sections
//! ([`crate::KindSections`]).
//!
//! Reading keeps serde's place in the file: [`Catch`] hands a derived struct the keys it
//! knows straight from the JSON reader (so an error still names
//! `cells[0].runs[1].ops`) and keeps every other key as JSON here.

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A run's record (the model's `Run`), which keeps its kind's keys beside its own.
/// (The model implements it: this module names no record of the model's, which uses it.)
pub trait RunRecord {
    fn figures(&self) -> &Figures;
    fn figures_mut(&mut self) -> &mut Figures;
}

/// A cell's record (the model's `Cell`), which keeps each kind's figures under its name.
pub trait CellRecord {
    fn kinds(&self) -> &Figures;
    fn kinds_mut(&mut self) -> &mut Figures;
}

/// A kind's typed record of one run's figures: its keys beside the run's own.
pub trait RunFigures: Serialize + de::DeserializeOwned + Default {
    /// The run's figures of this kind (empty for another kind's run).
    fn of(run: &impl RunRecord) -> Self {
        run.figures().read()
    }

    /// Writes these figures on the run.
    fn put(&self, run: &mut impl RunRecord) {
        run.figures_mut().write(self);
    }
}

/// A kind's typed record of one cell's figures, under the kind's name.
pub trait CellFigures: Serialize + de::DeserializeOwned {
    /// The cell record's key: the kind's name.
    const KEY: &'static str;

    /// The cell's record of this kind, if it has one.
    fn of(c: &impl CellRecord) -> Option<Self> {
        c.kinds().get(Self::KEY)
    }

    /// Writes this record on the cell.
    fn put(&self, c: &mut impl CellRecord) {
        c.kinds_mut().set(Self::KEY, Some(self));
    }
}

/// The keys of a results record that are no field of its own: a kind's figures, as JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures(pub BTreeMap<String, Value>);

impl Figures {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The record under `key` (a cell's: the kind's name), when there is one that reads as
    /// a `T`.
    pub fn get<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.0.get(key)?).ok()
    }

    /// Puts `value` under `key` (None: removes the key).
    pub fn set<T: Serialize>(&mut self, key: &str, value: Option<&T>) {
        match value.and_then(|v| serde_json::to_value(v).ok()) {
            Some(v) => {
                self.0.insert(key.to_string(), v);
            }
            None => {
                self.0.remove(key);
            }
        }
    }

    /// All the keys read as one `T` (a run's: the kind's keys beside the run's own; `T`
    /// leaves the keys it does not name alone and defaults those absent).
    pub fn read<T: serde::de::DeserializeOwned + Default>(&self) -> T {
        let map = de::value::MapDeserializer::<_, serde_json::Error>::new(
            self.0.iter().map(|(k, v)| (k.as_str(), v)),
        );
        T::deserialize(map).unwrap_or_default()
    }

    /// Writes `value`'s keys (those it serializes) over these.
    pub fn write<T: Serialize>(&mut self, value: &T) {
        if let Ok(Value::Object(m)) = serde_json::to_value(value) {
            self.0.extend(m);
        }
    }

    /// Each key with a number below zero or not finite somewhere in its value, by its place
    /// (`notpm`, `classes[2].total_s`): no kind writes one.
    pub fn negative(&self) -> Option<(String, f64)> {
        fn walk(at: String, v: &Value) -> Option<(String, f64)> {
            match v {
                Value::Number(n) => n
                    .as_f64()
                    .filter(|x| !(x.is_finite() && *x >= 0.0))
                    .map(|x| (at, x)),
                Value::Array(xs) => xs
                    .iter()
                    .enumerate()
                    .find_map(|(i, x)| walk(format!("{at}[{i}]"), x)),
                Value::Object(m) => m.iter().find_map(|(k, x)| walk(format!("{at}.{k}"), x)),
                _ => None,
            }
        }
        self.0.iter().find_map(|(k, v)| walk(k.clone(), v))
    }
}

impl Serialize for Figures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A deserializer of a struct whose keys the struct does not know go to `extra`; the keys
/// it knows (the `fields` serde's derive passes) are read from the underlying reader as if
/// nothing stood between (so serde_json's positions stay right).
pub struct Catch<'a, D> {
    pub inner: D,
    pub extra: &'a mut BTreeMap<String, Value>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Catch<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(v)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_struct(
            name,
            fields,
            Caught {
                inner: v,
                fields,
                extra: self.extra,
            },
        )
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// A struct's reader on its way (`inner`: serde's visitor of the struct, then the map
/// of its keys) with the struct's `fields`: keys not among them go to `extra`.
struct Caught<'a, T> {
    inner: T,
    fields: &'static [&'static str],
    extra: &'a mut BTreeMap<String, Value>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Caught<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Caught {
            inner: map,
            fields: self.fields,
            extra: self.extra,
        })
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(seq)
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Caught<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            match self.inner.next_key_seed(KeyOf(self.fields))? {
                None => return Ok(None),
                Some(Key::Field(f)) => {
                    let d = de::value::BorrowedStrDeserializer::<A::Error>::new(f);
                    return seed.deserialize(d).map(Some);
                }
                Some(Key::Other(key)) => {
                    let value: Value = self.inner.next_value()?;
                    self.extra.insert(key, value);
                }
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }
}

/// A key: one of the struct's fields (no allocation), or another kept by its name.
enum Key {
    Field(&'static str),
    Other(String),
}

struct KeyOf(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeyOf {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyOf {
    type Value = Key;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match self.0.iter().find(|f| **f == v) {
            Some(f) => Key::Field(f),
            None => Key::Other(v.to_string()),
        })
    }
}

/// Reads a struct with derived `deserialize` (serde's `remote = "Self"`), its unknown
/// keys into the figures `put` stores.
pub fn read_with_figures<'de, D, T>(
    d: D,
    derived: impl FnOnce(Catch<'_, D>) -> Result<T, D::Error>,
    put: impl FnOnce(&mut T, Figures),
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let mut extra = BTreeMap::new();
    let mut t = derived(Catch {
        inner: d,
        extra: &mut extra,
    })?;
    put(&mut t, Figures(extra));
    Ok(t)
}

impl<'de> Deserialize<'de> for Figures {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Figures, D::Error> {
        BTreeMap::deserialize(d).map(Figures)
    }
}
