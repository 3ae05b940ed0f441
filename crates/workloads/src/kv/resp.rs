//! Redis's protocol (RESP2): requests written straight into the connection's output buffer
//! as arrays of bulk strings, replies parsed in place from its input buffer. A reply is
//! consumed only when it is complete, so a reply split at any byte boundary is simply
//! waited for. Values are bakeoff's self-checking values ([`super::value`]), checked on
//! every read (GET, MGET, LPOP, HGET) exactly as on memcached. The protocol's elements
//! are written and read by the shared codec (`bakeoff_proto::resp`).

use super::keys::write_key_as;
use super::protocol::{ADD, DELETE, GET, HGET, HSET, INCR, LPOP, LPUSH, MULTIGET, SET};
use super::value;
use bakeoff_engine::Outcome;
use bakeoff_proto::resp::{array, bulk_header, element, error_kind, line, number, Element};

/// The key of each data type: strings `key:N` (as on memcached), counters `ctr:N`, lists
/// `list:N`, hashes `hash:N` (one field, `f`).
const STRING: &[u8] = b"key:";
const COUNTER: &[u8] = b"ctr:";
const LIST: &[u8] = b"list:";
const HASH: &[u8] = b"hash:";

/// A request for command `cmd` on key id `key` (a value of `len` bytes, generation `gen`,
/// where the command stores one). MULTIGET is [`write_mget`]. Everything but the key's
/// digits and the value is a constant.
pub fn write(out: &mut Vec<u8>, cmd: u8, key: u64, gen: u32, len: usize) {
    match cmd {
        SET => {
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
            bulk_key(out, STRING, key);
            bulk_value(out, key, gen, len);
        }
        ADD => {
            out.extend_from_slice(b"*4\r\n$3\r\nSET\r\n");
            bulk_key(out, STRING, key);
            bulk_value(out, key, gen, len);
            out.extend_from_slice(b"$2\r\nNX\r\n");
        }
        DELETE => {
            out.extend_from_slice(b"*2\r\n$3\r\nDEL\r\n");
            bulk_key(out, STRING, key);
        }
        INCR => {
            out.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n");
            bulk_key(out, COUNTER, key);
        }
        LPUSH => {
            out.extend_from_slice(b"*3\r\n$5\r\nLPUSH\r\n");
            bulk_key(out, LIST, key);
            bulk_value(out, key, gen, len);
        }
        LPOP => {
            out.extend_from_slice(b"*2\r\n$4\r\nLPOP\r\n");
            bulk_key(out, LIST, key);
        }
        HSET => {
            out.extend_from_slice(b"*4\r\n$4\r\nHSET\r\n");
            bulk_key(out, HASH, key);
            out.extend_from_slice(b"$1\r\nf\r\n");
            bulk_value(out, key, gen, len);
        }
        HGET => {
            out.extend_from_slice(b"*3\r\n$4\r\nHGET\r\n");
            bulk_key(out, HASH, key);
            out.extend_from_slice(b"$1\r\nf\r\n");
        }
        _ => {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
            bulk_key(out, STRING, key);
        }
    }
}

/// `MGET` of the keys from index `start` of a ring buffer's two slices.
pub fn write_mget(out: &mut Vec<u8>, a: &[u64], b: &[u64], start: usize) {
    let n = (a.len() + b.len()).saturating_sub(start);
    array(out, n + 1);
    out.extend_from_slice(b"$4\r\nMGET\r\n");
    for &k in a.iter().chain(b).skip(start) {
        bulk_key(out, STRING, k);
    }
}

/// Whether `cmd` stores a value (its request carries one).
pub fn stores(cmd: u8) -> bool {
    matches!(cmd, SET | ADD | LPUSH | HSET)
}

/// A key as a bulk string: its prefix is 4 or 5 bytes, then 10 digits.
fn bulk_key(out: &mut Vec<u8>, prefix: &[u8], key: u64) {
    out.extend_from_slice(if prefix.len() == 4 {
        b"$14\r\n"
    } else {
        b"$15\r\n"
    });
    write_key_as(out, prefix, key);
    out.extend_from_slice(b"\r\n");
}

fn bulk_value(out: &mut Vec<u8>, key: u64, gen: u32, len: usize) {
    let len = len.max(value::HEADER);
    bulk_header(out, len);
    value::write(out, key, gen, len);
    out.extend_from_slice(b"\r\n");
}

/// Parses the reply to `cmd` on `requested` (one key id; MGET: all of them).
pub fn parse(buf: &[u8], cmd: u8, requested: &[u64]) -> Result<Option<Outcome>, String> {
    let mut o = Outcome {
        cmd,
        ..Outcome::default()
    };
    if cmd == MULTIGET && buf.first() == Some(&b'*') {
        let Some((l, mut pos)) = line(buf, 0) else {
            return Ok(None);
        };
        let n = number(&l[1..])?;
        if n != requested.len() as i64 {
            return Err(format!(
                "MGET of {} keys answered with {n} elements",
                requested.len()
            ));
        }
        for &key in requested {
            let Some((e, next)) = element(buf, pos)? else {
                return Ok(None);
            };
            read_value(&mut o, e, key)?;
            pos = next;
        }
        o.consumed = pos;
        return Ok(Some(o));
    }
    let Some((e, next)) = element(buf, 0)? else {
        return Ok(None);
    };
    o.consumed = next;
    let key = requested.first().copied().unwrap_or(u64::MAX);
    match (cmd, e) {
        (_, Element::Error(msg)) => o.error = Some(error_kind(msg)),
        (GET | LPOP | HGET, e) => read_value(&mut o, e, key)?,
        (SET, Element::Simple(b"OK")) => {}
        // SET NX that found the key: not stored, as memcached's add says NOT_STORED.
        (ADD, Element::Simple(b"OK") | Element::Nil) => {}
        (DELETE, Element::Integer(n)) => {
            if n == 0 {
                o.misses = 1;
            }
        }
        (INCR | LPUSH | HSET, Element::Integer(_)) => {}
        (_, e) => return Err(format!("unexpected reply {e:?} to command {cmd}")),
    }
    Ok(Some(o))
}

/// A value read back: ours for `key` (else a verify failure), or nil (a miss).
fn read_value(o: &mut Outcome, e: Element<'_>, key: u64) -> Result<(), String> {
    match e {
        Element::Bulk(data) => {
            if !value::check(data, key) {
                o.verify_failures += 1;
            }
        }
        Element::Nil => o.misses += 1,
        Element::Error(msg) => o.error = Some(error_kind(msg)),
        e => return Err(format!("expected a value, got {e:?}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk_reply(key: u64, len: usize) -> Vec<u8> {
        let mut v = Vec::new();
        value::write(&mut v, key, 3, len);
        let mut r = format!("${len}\r\n").into_bytes();
        r.extend_from_slice(&v);
        r.extend_from_slice(b"\r\n");
        r
    }

    #[test]
    fn requests_are_resp_arrays() {
        let mut out = Vec::new();
        write(&mut out, GET, 7, 0, 0);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$14\r\nkey:0000000007\r\n");
        out.clear();
        write(&mut out, SET, 7, 1, 20);
        assert!(out.starts_with(b"*3\r\n$3\r\nSET\r\n$14\r\nkey:0000000007\r\n$20\r\n"));
        assert!(out.ends_with(b"\r\n"));
        assert_eq!(out.len(), 34 + 5 + 20 + 2);
        out.clear();
        write(&mut out, HGET, 9, 0, 0);
        assert_eq!(
            out,
            b"*3\r\n$4\r\nHGET\r\n$15\r\nhash:0000000009\r\n$1\r\nf\r\n"
        );
        out.clear();
        write_mget(&mut out, &[1, 2], &[3], 1);
        assert_eq!(
            out,
            b"*3\r\n$4\r\nMGET\r\n$14\r\nkey:0000000002\r\n$14\r\nkey:0000000003\r\n"
        );
    }

    #[test]
    fn value_replies_split_at_every_byte() {
        let r = bulk_reply(5, 100);
        for cut in 0..r.len() {
            assert_eq!(parse(&r[..cut], GET, &[5]).unwrap(), None, "cut {cut}");
        }
        let o = parse(&r, GET, &[5]).unwrap().unwrap();
        assert_eq!((o.consumed, o.misses, o.verify_failures), (r.len(), 0, 0));
        let o = parse(&r, LPOP, &[6]).unwrap().unwrap();
        assert_eq!(o.verify_failures, 1, "another key's value");
        let mut bad = r.clone();
        bad[50] ^= 1;
        assert_eq!(parse(&bad, HGET, &[5]).unwrap().unwrap().verify_failures, 1);
        let o = parse(b"$-1\r\n", GET, &[5]).unwrap().unwrap();
        assert_eq!((o.consumed, o.misses), (5, 1));
    }

    #[test]
    fn mget_checks_each_key_and_counts_misses() {
        let mut r = b"*3\r\n".to_vec();
        r.extend_from_slice(&bulk_reply(1, 40));
        r.extend_from_slice(b"$-1\r\n");
        r.extend_from_slice(&bulk_reply(3, 60));
        for cut in 0..r.len() {
            assert_eq!(parse(&r[..cut], MULTIGET, &[1, 2, 3]).unwrap(), None);
        }
        let o = parse(&r, MULTIGET, &[1, 2, 3]).unwrap().unwrap();
        assert_eq!((o.consumed, o.misses, o.verify_failures), (r.len(), 1, 0));
        let o = parse(&r, MULTIGET, &[1, 2, 4]).unwrap().unwrap();
        assert_eq!(o.verify_failures, 1);
        assert!(parse(&r, MULTIGET, &[1, 2]).is_err());
    }

    #[test]
    fn simple_integer_and_error_replies() {
        for (reply, cmd, misses, err) in [
            (&b"+OK\r\n"[..], SET, 0, None),
            (b"$-1\r\n", ADD, 0, None),
            (b":1\r\n", DELETE, 0, None),
            (b":0\r\n", DELETE, 1, None),
            (b":42\r\n", INCR, 0, None),
            (b":3\r\n", LPUSH, 0, None),
            (b":1\r\n", HSET, 0, None),
            (b"-ERR unknown command\r\n", GET, 0, Some("error")),
            (
                b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
                LPOP,
                0,
                Some("wrongtype"),
            ),
            (b"-OOM command not allowed\r\n", SET, 0, Some("oom")),
        ] {
            for cut in 0..reply.len() {
                assert_eq!(parse(&reply[..cut], cmd, &[1]).unwrap(), None);
            }
            let o = parse(reply, cmd, &[1]).unwrap().unwrap();
            assert_eq!((o.consumed, o.misses, o.error), (reply.len(), misses, err));
        }
        assert!(parse(b"+OK\r\n", GET, &[1]).is_err());
        assert!(parse(b"?what\r\n", SET, &[1]).is_err());
    }
}
