//! Self-checking field values. A field is a 16-byte header (the record's key number in 10
//! hex digits, the field's index in 2, the write's generation in 4) and a body that
//! cycles a fixed 251-byte pattern from an offset derived from (key number, field,
//! generation): the body is the header's checksum, byte for byte. Any field bakeoff
//! wrote for that record and field checks out, whichever update a read saw; another
//! record's or another field's value, a flipped byte or a header from one write over a
//! body from another does not. Writing is a memcpy from the pattern and checking a
//! memcmp against it: no allocation. The pattern and its hex header are the
//! shared self-checking value's (`shared/value.rs`).

use crate::shared::value::{append_body, body_matches, hex, put_hex, PERIOD};
use bakeoff_engine::rng::mix;

/// The header's bytes: the shortest field.
pub const HEADER: usize = 16;

fn offset(key: u64, field: usize, gen: u16) -> usize {
    (mix(key ^ ((field as u64) << 40) ^ (u64::from(gen) << 48)) % PERIOD as u64) as usize
}

/// Appends field `field` of record `key`, generation `gen`, `len` bytes (at least
/// [`HEADER`]).
pub fn write_field(out: &mut Vec<u8>, key: u64, field: usize, gen: u16, len: usize) {
    let len = len.max(HEADER);
    let mut head = [0u8; HEADER];
    put_hex(&mut head[..10], key & 0xFF_FFFF_FFFF);
    put_hex(&mut head[10..12], field as u64 & 0xFF);
    put_hex(&mut head[12..], u64::from(gen));
    out.extend_from_slice(&head);
    append_body(out, offset(key, field, gen), len - HEADER);
}

/// The key number a field's header names, if it has a header.
pub fn field_key(data: &[u8]) -> Option<u64> {
    hex(data.get(..10)?)
}

/// True when `data` is a value bakeoff could have written as field `field` of record
/// `key`, `len` bytes long.
pub fn check_field(data: &[u8], key: u64, field: usize, len: usize) -> bool {
    if data.len() != len.max(HEADER)
        || hex(&data[..10]) != Some(key & 0xFF_FFFF_FFFF)
        || hex(&data[10..12]) != Some(field as u64 & 0xFF)
    {
        return false;
    }
    let Some(gen) = hex(&data[12..HEADER]) else {
        return false;
    };
    body_matches(&data[HEADER..], offset(key, field, gen as u16))
}

/// Appends a whole record (memcached's value: its fields one after another), every field
/// of generation `gen`.
pub fn write_record(out: &mut Vec<u8>, key: u64, fields: usize, len: usize, gen: u16) {
    for f in 0..fields {
        write_field(out, key, f, gen, len);
    }
}

/// True when `data` is a whole record bakeoff could have written for `key`.
pub fn check_record(data: &[u8], key: u64, fields: usize, len: usize) -> bool {
    let len = len.max(HEADER);
    data.len() == fields * len
        && data
            .chunks(len)
            .enumerate()
            .all(|(f, d)| check_field(d, key, f, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_fields_check_out_for_their_record_and_field_only() {
        for len in [16, 17, 100, 4096 + 16, 10_000] {
            let mut v = Vec::new();
            write_field(&mut v, 42, 3, 7, len);
            assert_eq!(v.len(), len);
            assert!(check_field(&v, 42, 3, len), "len {len}");
            assert!(!check_field(&v, 43, 3, len), "another record, len {len}");
            assert!(!check_field(&v, 42, 4, len), "another field, len {len}");
            assert!(!check_field(&v[..len - 1], 42, 3, len), "truncated");
        }
        let mut a = Vec::new();
        write_field(&mut a, 42, 3, 8, 100);
        assert!(check_field(&a, 42, 3, 100), "any generation is valid");
        assert_eq!(field_key(&a), Some(42));
    }

    #[test]
    fn a_corrupted_field_is_caught() {
        let mut v = Vec::new();
        write_field(&mut v, 9, 1, 1, 100);
        for i in 0..v.len() {
            for flip in [0x01u8, 0x20, 0x80] {
                let mut bad = v.clone();
                bad[i] ^= flip;
                assert!(!check_field(&bad, 9, 1, 100), "flip {flip:#x} at {i}");
            }
        }
        let mut other = Vec::new();
        write_field(&mut other, 9, 1, 2, 100);
        let mut spliced = other[..HEADER].to_vec();
        spliced.extend_from_slice(&v[HEADER..]);
        assert!(
            !check_field(&spliced, 9, 1, 100),
            "a header from one write over the body of another"
        );
    }

    #[test]
    fn records_check_every_field() {
        let mut r = Vec::new();
        write_record(&mut r, 5, 10, 100, 3);
        assert_eq!(r.len(), 1000);
        assert!(check_record(&r, 5, 10, 100));
        assert!(!check_record(&r, 6, 10, 100));
        assert!(!check_record(&r[..900], 5, 10, 100));
        let mut swapped = r.clone();
        swapped[..100].copy_from_slice(&r[100..200]);
        assert!(!check_record(&swapped, 5, 10, 100), "fields swapped");
        let mut bad = r.clone();
        bad[555] ^= 4;
        assert!(!check_record(&bad, 5, 10, 100));
    }
}
