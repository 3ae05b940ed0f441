//! Self-checking values (kv's, and the pattern ycsb's fields are built from). A value is
//! 16 header bytes (the key id in 10 hex digits, a generation in 6) followed by a body
//! that cycles a fixed 251-byte pattern from an offset derived from (key id,
//! generation). Any value bakeoff wrote for a key checks out, even when connections race
//! to set it; a value for another key, a truncated or corrupted one does not. Writing
//! and checking are memcpy/memcmp against the pattern: no allocation.

use bakeoff_engine::rng::mix;
use std::sync::OnceLock;

pub const HEADER: usize = 16;
/// The pattern's period: a body starts at one of this many offsets.
pub(crate) const PERIOD: usize = 251;
const CHUNK: usize = 4096;

fn pattern() -> &'static [u8] {
    static P: OnceLock<Vec<u8>> = OnceLock::new();
    P.get_or_init(|| {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..PERIOD + CHUNK)
            .map(|i| ALPHABET[(i % PERIOD) * 7 % ALPHABET.len()])
            .collect()
    })
}

fn offset(key: u64, gen: u32) -> usize {
    (mix(key ^ (u64::from(gen) << 40)) % PERIOD as u64) as usize
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes `v` into `out` as lowercase hex, as many digits as `out` is long.
pub(crate) fn put_hex(out: &mut [u8], v: u64) {
    let n = out.len();
    for (i, h) in out.iter_mut().enumerate() {
        *h = HEX[((v >> ((n - 1 - i) * 4)) & 15) as usize];
    }
}

/// Appends `body` bytes of the pattern from offset `start` (below [`PERIOD`]).
pub(crate) fn append_body(out: &mut Vec<u8>, start: usize, body: usize) {
    let p = pattern();
    let mut pos = 0;
    while pos < body {
        let o = (start + pos) % PERIOD;
        let n = (body - pos).min(CHUNK);
        out.extend_from_slice(&p[o..o + n]);
        pos += n;
    }
}

/// Whether `body` is the pattern from offset `start`, byte for byte.
pub(crate) fn body_matches(body: &[u8], start: usize) -> bool {
    let p = pattern();
    body.chunks(CHUNK).enumerate().all(|(i, chunk)| {
        let o = (start + i * CHUNK) % PERIOD;
        chunk == &p[o..o + chunk.len()]
    })
}

/// Appends a value of `len` bytes (at least [`HEADER`]) for `key`, generation `gen`.
pub fn write(out: &mut Vec<u8>, key: u64, gen: u32, len: usize) {
    let len = len.max(HEADER);
    let mut head = [0u8; HEADER];
    put_hex(&mut head[..10], key & 0xFF_FFFF_FFFF);
    put_hex(&mut head[10..], u64::from(gen & 0xFF_FFFF));
    out.extend_from_slice(&head);
    append_body(out, offset(key, gen & 0xFF_FFFF), len - HEADER);
}

/// Each byte's value as a lowercase hex digit, 0xFF when it is not one.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut i = 0;
    while i < 16 {
        t[HEX[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// The number `bytes` spell in lowercase hex, without a branch per digit (this runs on
/// every value read back).
pub(crate) fn hex(bytes: &[u8]) -> Option<u64> {
    let mut acc = 0u64;
    let mut bad = 0u8;
    for &b in bytes {
        let d = HEX_VALUE[b as usize];
        bad |= d;
        acc = acc << 4 | u64::from(d & 15);
    }
    (bad & 0x80 == 0).then_some(acc)
}

/// True when `data` is a value bakeoff could have written for `key`.
pub fn check(data: &[u8], key: u64) -> bool {
    if data.len() < HEADER || hex(&data[..10]) != Some(key & 0xFF_FFFF_FFFF) {
        return false;
    }
    let Some(gen) = hex(&data[10..HEADER]) else {
        return false;
    };
    body_matches(&data[HEADER..], offset(key, gen as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_values_check_out_for_their_key_only() {
        for len in [16, 17, 100, 4096 + 16, 10_000] {
            let mut v = Vec::new();
            write(&mut v, 42, 7, len);
            assert_eq!(v.len(), len);
            assert!(check(&v, 42), "len {len}");
            assert!(!check(&v, 43), "len {len}");
        }
    }

    #[test]
    fn corruption_and_truncation_are_caught() {
        let mut v = Vec::new();
        write(&mut v, 9, 1, 500);
        for i in [0, 10, 15, 16, 250, 499] {
            let mut bad = v.clone();
            bad[i] ^= 0x01;
            assert!(!check(&bad, 9), "flip at {i} not caught");
        }
        assert!(!check(&v[..10], 9));
        // Truncating the body keeps a valid prefix: lengths are checked by the protocol.
        let mut other = Vec::new();
        write(&mut other, 9, 2, 500);
        assert!(
            check(&other, 9),
            "another generation of the same key is valid"
        );
        let mut spliced = other[..HEADER].to_vec();
        spliced.extend_from_slice(&v[HEADER..]);
        assert!(
            !check(&spliced, 9),
            "a header from one write and a body from another"
        );
    }
}
