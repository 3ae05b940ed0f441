//! Decimal numbers written without allocation.

/// Appends `v` in decimal.
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(unsigned_decimal(&mut [0; 20], v));
}

/// `v` in decimal, at the end of `buf`.
#[inline]
pub fn unsigned_decimal(buf: &mut [u8; 20], mut v: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// `v` in decimal (with a minus sign when negative), in `buf`.
#[inline]
pub fn decimal(buf: &mut [u8; 20], v: i64) -> &[u8] {
    let mut i = buf.len() - unsigned_decimal(buf, v.unsigned_abs()).len();
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_decimal() {
        let mut out = Vec::new();
        for v in [0u64, 7, 10, 1234, u64::MAX] {
            out.clear();
            push_decimal(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
        for v in [0i64, -1, 42, i64::MIN, i64::MAX] {
            assert_eq!(decimal(&mut [0; 20], v), v.to_string().as_bytes());
        }
    }
}
