//! Bind parameters: a PostgreSQL value (text or binary format, with the type the client
//! declared or was told) turned into an SQLite value, and where PostgreSQL's `$i` lands in
//! an SQLite statement.

use crate::error::PgError;
use crate::ffi::sqlite::{SqlError, Statement};

/// A parameter value as SQLite will get it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Text(&'a [u8]),
    Int(i64),
    Double(f64),
}

const BOOL: u32 = 16;
const INT_TYPES: [u32; 5] = [BOOL, 20, 21, 23, 26]; // bool, int8, int2, int4, oid
const FLOAT_TYPES: [u32; 2] = [700, 701]; // float4, float8
/// text, varchar, bpchar, name, "char", unknown, json: binary format is the bytes.
const TEXT_TYPES: [u32; 7] = [25, 1043, 1042, 19, 18, 705, 114];

/// Decodes one Bind value. `oid` is the parameter's type: declared in Parse, text (25)
/// once Describe reported it so, or 0 (unspecified). Text-format values are bound as text,
/// except for integer and float types, which are parsed. A binary value of unspecified
/// type must be a big-endian integer of 2, 4 or 8 bytes (what bakeoff's own client sends).
pub fn decode(format: i16, oid: u32, raw: Option<&[u8]>) -> Result<Value<'_>, PgError> {
    let Some(raw) = raw else {
        return Ok(Value::Null);
    };
    match format {
        0 => decode_text(oid, raw),
        1 => decode_binary(oid, raw),
        f => Err(PgError::new(
            "08P01",
            format!("unsupported format code: {f}"),
        )),
    }
}

fn decode_text(oid: u32, raw: &[u8]) -> Result<Value<'_>, PgError> {
    let text = || String::from_utf8_lossy(raw).trim().to_string();
    let bad = |what: &str| {
        PgError::new(
            "22P02",
            format!("invalid input syntax for type {what}: \"{}\"", text()),
        )
    };
    if oid == BOOL {
        return match text().to_ascii_lowercase().as_str() {
            "t" | "true" | "1" | "y" | "yes" | "on" => Ok(Value::Int(1)),
            "f" | "false" | "0" | "n" | "no" | "off" => Ok(Value::Int(0)),
            _ => Err(bad("boolean")),
        };
    }
    if INT_TYPES.contains(&oid) {
        return text().parse().map(Value::Int).map_err(|_| bad("integer"));
    }
    if FLOAT_TYPES.contains(&oid) {
        return text()
            .parse()
            .map(Value::Double)
            .map_err(|_| bad("double precision"));
    }
    Ok(Value::Text(raw))
}

/// A big-endian signed integer of 1, 2, 4 or 8 bytes.
fn be_int(raw: &[u8]) -> Option<i64> {
    Some(match raw.len() {
        1 => i64::from(raw[0] as i8),
        2 => i64::from(i16::from_be_bytes(raw.try_into().ok()?)),
        4 => i64::from(i32::from_be_bytes(raw.try_into().ok()?)),
        8 => i64::from_be_bytes(raw.try_into().ok()?),
        _ => return None,
    })
}

fn decode_binary(oid: u32, raw: &[u8]) -> Result<Value<'_>, PgError> {
    let bad = || {
        PgError::new(
            "22P03",
            format!(
                "incorrect binary data format: {} bytes for type oid {oid}",
                raw.len()
            ),
        )
    };
    if oid == 0 {
        return match raw.len() {
            2 | 4 | 8 => Ok(Value::Int(be_int(raw).ok_or_else(bad)?)),
            n => Err(PgError::new(
                "22P03",
                format!("a binary parameter of unspecified type must be a 2, 4 or 8 byte integer, not {n} bytes"),
            )),
        };
    }
    if INT_TYPES.contains(&oid) {
        return be_int(raw).map(Value::Int).ok_or_else(bad);
    }
    if FLOAT_TYPES.contains(&oid) {
        return match raw.len() {
            4 => Ok(Value::Double(f64::from(f32::from_be_bytes(
                raw.try_into().map_err(|_| bad())?,
            )))),
            8 => Ok(Value::Double(f64::from_be_bytes(
                raw.try_into().map_err(|_| bad())?,
            ))),
            _ => Err(bad()),
        };
    }
    if TEXT_TYPES.contains(&oid) {
        return Ok(Value::Text(raw));
    }
    Err(PgError::new(
        "0A000",
        format!("binary parameters of type oid {oid} are not supported; send them as text"),
    ))
}

/// Binds `v` to SQLite parameter `index` (1-based).
pub fn bind(stmt: &mut Statement, index: usize, v: Value<'_>) -> Result<(), SqlError> {
    match v {
        Value::Null => stmt.bind_null(index),
        Value::Text(t) => stmt.bind_text(index, t),
        Value::Int(i) => stmt.bind_int(index, i),
        Value::Double(d) => stmt.bind_double(index, d),
    }
}

/// Where each PostgreSQL parameter goes: for `$i` (1-based), SQLite's index of the name
/// "$i", or else `i` itself unless SQLite's parameter `i` is some other `$n` (so `?`,
/// `?NNN` and `:name` placeholders bind by position). The result has one entry per
/// PostgreSQL parameter: as many as the highest `$n`/`?NNN` or `declared` types, whichever
/// is more; an entry is 0 when SQLite has no such parameter (its value is then ignored).
pub fn slots(stmt: &Statement, declared: usize) -> Vec<usize> {
    let names: Vec<Option<String>> = (1..=stmt.param_count())
        .map(|j| stmt.param_name(j))
        .collect();
    let dollar = |j: usize| {
        names[j - 1]
            .as_deref()
            .is_some_and(|n| n.starts_with('$') && pg_number(Some(n)).is_some())
    };
    let highest = names
        .iter()
        .enumerate()
        .map(|(j, n)| pg_number(n.as_deref()).unwrap_or(j + 1))
        .max()
        .unwrap_or(0);
    (1..=highest.max(declared))
        .map(|i| match stmt.param_index(&format!("${i}")) {
            0 if i <= names.len() && !dollar(i) => i,
            0 => 0,
            j => j,
        })
        .collect()
}

/// The number in "$7" or "?7"; None for other names (":x", "@x", "$x", a bare `?`).
fn pg_number(name: Option<&str>) -> Option<usize> {
    let digits = name?.strip_prefix(['$', '?'])?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_decode_by_format_and_type() {
        assert_eq!(
            decode(1, 0, Some(&7i32.to_be_bytes())).unwrap(),
            Value::Int(7)
        );
        assert_eq!(
            decode(1, 20, Some(&(-3i64).to_be_bytes())).unwrap(),
            Value::Int(-3)
        );
        assert_eq!(
            decode(1, 21, Some(&5i16.to_be_bytes())).unwrap(),
            Value::Int(5)
        );
        assert_eq!(decode(1, 16, Some(&[1])).unwrap(), Value::Int(1));
        assert_eq!(
            decode(1, 701, Some(&1.5f64.to_be_bytes())).unwrap(),
            Value::Double(1.5)
        );
        assert_eq!(decode(1, 25, Some(b"abcd")).unwrap(), Value::Text(b"abcd"));
        assert_eq!(decode(0, 23, Some(b" 42")).unwrap(), Value::Int(42));
        assert_eq!(decode(0, 25, Some(b"42")).unwrap(), Value::Text(b"42"));
        assert_eq!(decode(0, 0, None).unwrap(), Value::Null);
        assert_eq!(decode(1, 0, Some(b"abc")).unwrap_err().code, "22P03");
        assert_eq!(decode(0, 23, Some(b"x")).unwrap_err().code, "22P02");
        assert_eq!(decode(1, 17, Some(b"x")).unwrap_err().code, "0A000");
    }

    #[test]
    fn pg_numbers_come_from_dollar_and_question_names() {
        assert_eq!(pg_number(Some("$3")), Some(3));
        assert_eq!(pg_number(Some("?12")), Some(12));
        assert_eq!(pg_number(Some(":x")), None);
        assert_eq!(pg_number(None), None);
    }
}
