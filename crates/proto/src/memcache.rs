//! memcached's text protocol: reply lines read in place from a receive buffer (`None`
//! while a line is incomplete), what a one-line reply says, a `VALUE` line's key and data
//! length, and the `version` request readiness sends.

/// The request whose answer says the server is up (`VERSION 1.6.18`).
pub const VERSION: &[u8] = b"version\r\n";

/// What a one-line reply says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    Stored,
    NotStored,
    Deleted,
    NotFound,
    /// The end of a retrieval's values.
    End,
    /// `ERROR`, `CLIENT_ERROR ...` or `SERVER_ERROR ...`: its kind.
    Error(&'static str),
    /// Anything else (a `VALUE` line, or no reply memcached sends).
    Other(&'a [u8]),
}

pub use crate::line::line;

/// What the reply line `l` says.
#[inline]
pub fn reply(l: &[u8]) -> Reply<'_> {
    match l {
        b"STORED" => Reply::Stored,
        b"NOT_STORED" => Reply::NotStored,
        b"DELETED" => Reply::Deleted,
        b"NOT_FOUND" => Reply::NotFound,
        b"END" => Reply::End,
        _ => match error_kind(l) {
            Some(k) => Reply::Error(k),
            None => Reply::Other(l),
        },
    }
}

/// An error reply's kind, if `l` is one.
#[inline]
pub fn error_kind(l: &[u8]) -> Option<&'static str> {
    if l == b"ERROR" {
        Some("error")
    } else if l.starts_with(b"CLIENT_ERROR") {
        Some("client_error")
    } else if l.starts_with(b"SERVER_ERROR") {
        Some("server_error")
    } else {
        None
    }
}

/// `VALUE <key> <flags> <bytes> [<cas>]`: the key and the data's length.
#[inline]
pub fn value_header(l: &[u8]) -> Option<(&[u8], usize)> {
    let mut parts = l.split(|&b| b == b' ');
    if parts.next() != Some(b"VALUE") {
        return None;
    }
    let key = parts.next()?;
    let _flags = parts.next()?;
    let len = parts
        .next()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.parse::<usize>().ok())?;
    Some((key, len))
}

/// The message for a reply that is none of those asked for.
#[cold]
pub fn unexpected(l: &[u8]) -> String {
    format!("unexpected reply {:?}", String::from_utf8_lossy(l))
}

/// Whether `reply` answers [`VERSION`].
pub fn is_version(reply: &[u8]) -> bool {
    reply.starts_with(b"VERSION ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_wait_for_their_end() {
        assert_eq!(line(b"STORED\r\nEND", 0), Some((&b"STORED"[..], 8)));
        assert_eq!(line(b"STORED\r\nEND", 8), None);
        assert_eq!(line(b"END\n", 0), Some((&b"END"[..], 4)));
        assert_eq!(line(b"x", 5), None);
    }

    #[test]
    fn replies_and_value_headers() {
        assert_eq!(reply(b"STORED"), Reply::Stored);
        assert_eq!(reply(b"NOT_FOUND"), Reply::NotFound);
        assert_eq!(
            reply(b"SERVER_ERROR out of memory"),
            Reply::Error("server_error")
        );
        assert_eq!(reply(b"VALUE k 0 1"), Reply::Other(b"VALUE k 0 1"));
        assert_eq!(value_header(b"VALUE key:1 0 20"), Some((&b"key:1"[..], 20)));
        assert_eq!(
            value_header(b"VALUE key:1 0 20 77"),
            Some((&b"key:1"[..], 20))
        );
        assert_eq!(value_header(b"VALUE key:1 0"), None);
        assert_eq!(value_header(b"STORED"), None);
        assert!(is_version(b"VERSION 1.6.18\r\n"));
        assert!(!is_version(b"ERROR\r\n"));
    }
}
