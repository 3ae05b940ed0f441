//! Redis's protocol (RESP2), as Redis and Valkey speak it. Requests are arrays of bulk
//! strings appended to an output buffer; replies are read in place, one element at a
//! time: an element is consumed only when it is complete, so a reply split at any byte
//! boundary is simply waited for (`Ok(None)`), and a reply that is not RESP is an error
//! naming what came.

use crate::decimal::push_decimal;
pub use crate::line::line;

/// One reply element, borrowed from the receive buffer. An array is only its header:
/// its elements follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element<'a> {
    /// `+OK`: the text after the `+`.
    Simple(&'a [u8]),
    /// `-ERR ...`: the message after the `-` (its kind: [`error_kind`]).
    Error(&'a [u8]),
    Integer(i64),
    /// A bulk string's bytes.
    Bulk(&'a [u8]),
    /// A nil bulk string or array (`$-1`, `*-1`).
    Nil,
    /// An array of this many elements, which follow.
    Array(usize),
}

/// Appends an array header of `n` elements.
#[inline]
pub fn array(out: &mut Vec<u8>, n: usize) {
    out.push(b'*');
    push_decimal(out, n as u64);
    out.extend_from_slice(b"\r\n");
}

/// Appends `b` as a bulk string.
#[inline]
pub fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    bulk_header(out, b.len());
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

/// Appends the header of a bulk string of `len` bytes (its bytes and CRLF follow).
#[inline]
pub fn bulk_header(out: &mut Vec<u8>, len: usize) {
    out.push(b'$');
    push_decimal(out, len as u64);
    out.extend_from_slice(b"\r\n");
}

/// Appends a whole command: an array of its words as bulk strings.
pub fn command(out: &mut Vec<u8>, words: &[&[u8]]) {
    array(out, words.len());
    for w in words {
        bulk(out, w);
    }
}

/// A RESP integer or length: an optional minus sign, then at most 18 decimal digits.
#[inline]
pub fn number(s: &[u8]) -> Result<i64, String> {
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 {
        return Err(bad_number(s));
    }
    let mut v = 0i64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(bad_number(s));
        }
        v = v * 10 + i64::from(d - b'0');
    }
    Ok(if neg { -v } else { v })
}

#[cold]
fn bad_number(s: &[u8]) -> String {
    format!("bad number {:?}", String::from_utf8_lossy(s))
}

/// The element at `pos` (an array: its header) and where what follows it starts; `None`
/// while it is incomplete.
#[inline]
pub fn element(buf: &[u8], pos: usize) -> Result<Option<(Element<'_>, usize)>, String> {
    let Some((l, next)) = line(buf, pos) else {
        return Ok(None);
    };
    let (kind, body) = l.split_first().ok_or("an empty reply line (not RESP)")?;
    let e = match kind {
        b'+' => Element::Simple(body),
        b'-' => Element::Error(body),
        b':' => Element::Integer(number(body)?),
        b'*' => match number(body)? {
            n if n < 0 => Element::Nil,
            n => Element::Array(n as usize),
        },
        b'$' => {
            let n = number(body)?;
            if n < 0 {
                Element::Nil
            } else {
                let end = next + n as usize;
                if buf.len() < end + 2 {
                    return Ok(None);
                }
                if &buf[end..end + 2] != b"\r\n" {
                    return Err("a bulk string is not followed by CRLF".into());
                }
                return Ok(Some((Element::Bulk(&buf[next..end]), end + 2)));
            }
        }
        _ => return Err(unexpected(l)),
    };
    Ok(Some((e, next)))
}

#[cold]
fn unexpected(l: &[u8]) -> String {
    format!(
        "unexpected reply {:?}",
        String::from_utf8_lossy(&l[..l.len().min(40)])
    )
}

/// A bulk string at `pos` (an array's element) and where what follows it starts.
#[inline]
pub fn bulk_at(buf: &[u8], pos: usize) -> Result<Option<(&[u8], usize)>, String> {
    match element(buf, pos)? {
        None => Ok(None),
        Some((Element::Bulk(b), next)) => Ok(Some((b, next))),
        Some(_) => Err("an array element that is not a bulk string".into()),
    }
}

/// An error reply's kind: its first word, for the ones a benchmark meets.
#[inline]
pub fn error_kind(msg: &[u8]) -> &'static str {
    match msg.split(|&b| b == b' ').next().unwrap_or_default() {
        b"WRONGTYPE" => "wrongtype",
        b"OOM" => "oom",
        b"BUSY" => "busy",
        b"LOADING" => "loading",
        b"READONLY" => "readonly",
        _ => "error",
    }
}

/// How many complete bulk-string replies `buf` holds, from its start (INFO answers with
/// one each).
pub fn bulk_replies(buf: &[u8]) -> usize {
    let mut pos = 0;
    let mut n = 0;
    while let Ok(Some((Element::Bulk(_), next))) = element(buf, pos) {
        pos = next;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        command(&mut out, &[b"SHUTDOWN", b"NOSAVE"]);
        assert_eq!(out, b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
        out.clear();
        bulk_header(&mut out, 100);
        assert_eq!(out, b"$100\r\n");
    }

    #[test]
    fn elements_split_at_every_byte_are_waited_for() {
        let cases: [(&[u8], Element<'_>); 8] = [
            (b"+PONG\r\n", Element::Simple(b"PONG")),
            (
                b"-LOADING Redis is loading\r\n",
                Element::Error(b"LOADING Redis is loading"),
            ),
            (b":-42\r\n", Element::Integer(-42)),
            (b"$5\r\nab\ncd\r\n", Element::Bulk(b"ab\ncd")),
            (b"$0\r\n\r\n", Element::Bulk(b"")),
            (b"$-1\r\n", Element::Nil),
            (b"*-1\r\n", Element::Nil),
            (b"*3\r\n", Element::Array(3)),
        ];
        for (reply, want) in cases {
            for cut in 0..reply.len() {
                assert_eq!(
                    element(&reply[..cut], 0).unwrap(),
                    None,
                    "{reply:?} cut {cut}"
                );
            }
            assert_eq!(element(reply, 0).unwrap(), Some((want, reply.len())));
        }
        let two = b"$1\r\na\r\n:7\r\n";
        assert_eq!(
            element(two, 7).unwrap(),
            Some((Element::Integer(7), two.len()))
        );
    }

    #[test]
    fn what_is_not_resp_is_an_error() {
        assert!(element(b"?what\r\n", 0).is_err());
        assert!(element(b"\r\n", 0).is_err());
        assert!(element(b":12x\r\n", 0).is_err());
        assert!(element(b"$3\r\nabcde\r\n", 0).is_err());
        assert!(bulk_at(b":1\r\n", 0).is_err());
        assert!(number(b"1234567890123456789").is_err());
    }

    #[test]
    fn error_kinds_and_bulk_replies() {
        assert_eq!(
            error_kind(b"WRONGTYPE Operation against a key"),
            "wrongtype"
        );
        assert_eq!(error_kind(b"READONLY You can't write"), "readonly");
        assert_eq!(error_kind(b"ERR unknown command"), "error");
        assert_eq!(bulk_replies(b"$3\r\nabc\r\n$2\r\nxy"), 1);
        assert_eq!(bulk_replies(b"$3\r\nabc\r\n$2\r\nxy\r\n"), 2);
        assert_eq!(bulk_replies(b"$3\r\nab"), 0);
    }
}
