//! Reply lines, as both protocols end them: CRLF (a bare LF is taken too).

/// The line at `pos` (without its line end) and where the next one starts, if complete.
#[inline]
pub fn line(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(pos..)?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let end = if nl > 0 && rest[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    Some((&rest[..end], pos + nl + 1))
}
