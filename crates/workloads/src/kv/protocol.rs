//! memcached's text protocol: requests written straight into the connection's output
//! buffer, replies parsed in place from its input buffer. A reply is consumed only when
//! it is complete, so a reply split at any byte boundary is simply waited for. The
//! protocol's lines and replies are read by the shared codec (`bakeoff_proto::memcache`).

use super::keys::{parse_key, write_key};
use super::value;
use bakeoff_engine::Outcome;
use bakeoff_proto::decimal::push_decimal;
use bakeoff_proto::memcache::{self, line, Reply};

/// Command indices, as reported in `by_command`: memcached speaks the first five, Redis
/// all of them (add is SET NX, delete DEL, multiget MGET).
pub const COMMANDS: [&str; 10] = [
    "get", "set", "add", "delete", "multiget", "incr", "lpush", "lpop", "hset", "hget",
];
pub const GET: u8 = 0;
pub const SET: u8 = 1;
pub const ADD: u8 = 2;
pub const DELETE: u8 = 3;
pub const MULTIGET: u8 = 4;
pub const INCR: u8 = 5;
pub const LPUSH: u8 = 6;
pub const LPOP: u8 = 7;
pub const HSET: u8 = 8;
pub const HGET: u8 = 9;
/// How many of [`COMMANDS`] memcached's text protocol has.
pub const MEMCACHED_COMMANDS: usize = 5;

/// `get key` or `get k1 k2 ...`.
pub fn write_get(out: &mut Vec<u8>, keys: &[u64]) {
    out.extend_from_slice(b"get");
    for &k in keys {
        out.push(b' ');
        write_key(out, k);
    }
    out.extend_from_slice(b"\r\n");
}

/// `set|add key 0 0 len` and a self-checking value.
pub fn write_store(out: &mut Vec<u8>, verb: &[u8], key: u64, gen: u32, len: usize) {
    out.extend_from_slice(verb);
    out.push(b' ');
    write_key(out, key);
    out.extend_from_slice(b" 0 0 ");
    push_decimal(out, len as u64);
    out.extend_from_slice(b"\r\n");
    value::write(out, key, gen, len);
    out.extend_from_slice(b"\r\n");
}

pub fn write_delete(out: &mut Vec<u8>, key: u64) {
    out.extend_from_slice(b"delete ");
    write_key(out, key);
    out.extend_from_slice(b"\r\n");
}

/// Parses the reply to a storage command or delete: one line.
pub fn parse_simple(buf: &[u8], cmd: u8) -> Result<Option<Outcome>, String> {
    let Some((l, n)) = line(buf, 0) else {
        return Ok(None);
    };
    let mut o = Outcome {
        consumed: n,
        cmd,
        ..Outcome::default()
    };
    match memcache::reply(l) {
        Reply::Stored | Reply::NotStored | Reply::Deleted => {}
        Reply::NotFound => o.misses = 1,
        Reply::Error(k) => o.error = Some(k),
        Reply::End | Reply::Other(_) => return Err(memcache::unexpected(l)),
    }
    Ok(Some(o))
}

/// Parses a get/multiget reply: VALUE blocks then END. `requested` are the key ids asked
/// for; every value must be one bakeoff wrote for a requested key.
pub fn parse_values(buf: &[u8], cmd: u8, requested: &[u64]) -> Result<Option<Outcome>, String> {
    let mut pos = 0;
    let mut found = 0u32;
    let mut o = Outcome {
        cmd,
        ..Outcome::default()
    };
    loop {
        let Some((l, data_start)) = line(buf, pos) else {
            return Ok(None);
        };
        if l == b"END" {
            pos = data_start;
            break;
        }
        if let Some(k) = memcache::error_kind(l) {
            o.error = Some(k);
            o.consumed = data_start;
            return Ok(Some(o));
        }
        let (key, len) = memcache::value_header(l).ok_or_else(|| memcache::unexpected(l))?;
        let key = parse_key(key);
        if buf.len() < data_start + len + 2 {
            return Ok(None);
        }
        let data = &buf[data_start..data_start + len];
        if &buf[data_start + len..data_start + len + 2] != b"\r\n" {
            return Err("a VALUE's data is not followed by CRLF".into());
        }
        let ok = key.is_some_and(|k| requested.contains(&k) && value::check(data, k));
        if !ok {
            o.verify_failures += 1;
        }
        found += 1;
        pos = data_start + len + 2;
    }
    o.misses = (requested.len() as u32).saturating_sub(found);
    o.consumed = pos;
    Ok(Some(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get_reply(key: u64, len: usize) -> Vec<u8> {
        let mut v = Vec::new();
        value::write(&mut v, key, 3, len);
        let mut r = Vec::new();
        r.extend_from_slice(b"VALUE ");
        write_key(&mut r, key);
        r.extend_from_slice(format!(" 0 {len}\r\n").as_bytes());
        r.extend_from_slice(&v);
        r.extend_from_slice(b"\r\nEND\r\n");
        r
    }

    #[test]
    fn get_reply_split_at_every_byte() {
        let r = get_reply(5, 100);
        for cut in 0..r.len() {
            assert_eq!(
                parse_values(&r[..cut], GET, &[5]).unwrap(),
                None,
                "cut {cut}"
            );
        }
        let o = parse_values(&r, GET, &[5]).unwrap().unwrap();
        assert_eq!((o.consumed, o.misses, o.verify_failures), (r.len(), 0, 0));
    }

    #[test]
    fn miss_wrong_key_and_corruption() {
        let o = parse_values(b"END\r\n", GET, &[5]).unwrap().unwrap();
        assert_eq!((o.consumed, o.misses), (5, 1));
        let r = get_reply(6, 50);
        assert_eq!(
            parse_values(&r, GET, &[5])
                .unwrap()
                .unwrap()
                .verify_failures,
            1
        );
        let mut bad = get_reply(5, 50);
        bad[40] ^= 1;
        assert_eq!(
            parse_values(&bad, GET, &[5])
                .unwrap()
                .unwrap()
                .verify_failures,
            1
        );
    }

    #[test]
    fn multiget_counts_misses() {
        let mut r = get_reply(1, 40);
        r.truncate(r.len() - 5);
        r.extend_from_slice(&get_reply(3, 60));
        let o = parse_values(&r, MULTIGET, &[1, 2, 3]).unwrap().unwrap();
        assert_eq!((o.consumed, o.misses, o.verify_failures), (r.len(), 1, 0));
        for cut in 0..r.len() {
            assert_eq!(parse_values(&r[..cut], MULTIGET, &[1, 2, 3]).unwrap(), None);
        }
    }

    #[test]
    fn simple_replies() {
        for (reply, misses, err) in [
            (&b"STORED\r\n"[..], 0, None),
            (b"NOT_STORED\r\n", 0, None),
            (b"DELETED\r\n", 0, None),
            (b"NOT_FOUND\r\n", 1, None),
            (b"ERROR\r\n", 0, Some("error")),
            (b"CLIENT_ERROR bad data chunk\r\n", 0, Some("client_error")),
            (
                b"SERVER_ERROR out of memory storing object\r\n",
                0,
                Some("server_error"),
            ),
        ] {
            for cut in 0..reply.len() {
                assert_eq!(parse_simple(&reply[..cut], SET).unwrap(), None);
            }
            let o = parse_simple(reply, SET).unwrap().unwrap();
            assert_eq!((o.consumed, o.misses, o.error), (reply.len(), misses, err));
        }
        assert!(parse_simple(b"WHAT\r\n", SET).is_err());
        let o = parse_values(b"SERVER_ERROR busy\r\n", GET, &[1])
            .unwrap()
            .unwrap();
        assert_eq!(o.error, Some("server_error"));
    }

    #[test]
    fn requests_are_well_formed() {
        let mut out = Vec::new();
        write_store(&mut out, b"set", 7, 1, 20);
        assert!(out.starts_with(b"set key:0000000007 0 0 20\r\n"));
        assert_eq!(out.len(), "set key:0000000007 0 0 20\r\n".len() + 22);
        out.clear();
        write_get(&mut out, &[1, 2]);
        assert_eq!(out, b"get key:0000000001 key:0000000002\r\n");
        out.clear();
        write_delete(&mut out, 9);
        assert_eq!(out, b"delete key:0000000009\r\n");
    }
}
