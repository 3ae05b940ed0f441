//! The tar layer of a bundle, as little of the format as a bundle needs: ustar headers
//! of regular files with short names, written; and read back one member at a time with
//! every member that is not a regular file or a folder (a link, a hard link, a device, a
//! FIFO, a GNU or pax extension) refused by kind, before any of its bytes is used.

use std::io::{self, Read, Write};

const BLOCK: usize = 512;

/// Writes one regular file member: its header, its bytes, the padding.
pub fn write_file(out: &mut impl Write, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut h = [0u8; BLOCK];
    let n = name.as_bytes();
    if n.len() > 99 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("member name too long: {name}"),
        ));
    }
    h[..n.len()].copy_from_slice(n);
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], bytes.len() as u64);
    octal(&mut h[136..148], 0);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    octal(&mut h[148..155], sum);
    h[155] = b' ';
    out.write_all(&h)?;
    out.write_all(bytes)?;
    let pad = (BLOCK - bytes.len() % BLOCK) % BLOCK;
    out.write_all(&vec![0u8; pad])
}

/// The two zero blocks that end an archive.
pub fn finish(out: &mut impl Write) -> io::Result<()> {
    out.write_all(&[0u8; BLOCK * 2])
}

/// `v` in octal, zero-padded, NUL-terminated, filling `field`.
fn octal(field: &mut [u8], v: u64) {
    let s = format!("{v:0width$o}\0", width = field.len() - 1);
    field.copy_from_slice(s.as_bytes());
}

/// A member's kind, from its type flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
    /// Anything else: what it is, in words.
    Other(&'static str),
}

/// One member's header.
#[derive(Debug)]
pub struct Header {
    pub name: String,
    pub size: u64,
    pub kind: Kind,
}

/// Reads members one after the other.
pub struct Reader<R: Read> {
    inner: R,
    /// Bytes of the current member not read yet, then its padding.
    left: u64,
    pad: u64,
}

fn field_str(f: &[u8]) -> String {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    String::from_utf8_lossy(&f[..end]).into_owned()
}

fn parse_octal(f: &[u8]) -> Option<u64> {
    let s = field_str(f);
    let s = s.trim_matches(|c: char| c == ' ' || c == '\0');
    if s.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(s, 8).ok()
}

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Self {
        Reader {
            inner,
            left: 0,
            pad: 0,
        }
    }

    /// The next member's header (skipping what was not read of the last one); None at the
    /// end of the archive.
    pub fn next(&mut self) -> io::Result<Option<Header>> {
        let mut skip = self.left + self.pad;
        let mut sink = [0u8; 8192];
        while skip > 0 {
            let n = self.inner.read(&mut sink[..skip.min(8192) as usize])?;
            if n == 0 {
                return Err(truncated());
            }
            skip -= n as u64;
        }
        let mut h = [0u8; BLOCK];
        if let Err(e) = self.inner.read_exact(&mut h) {
            return if e.kind() == io::ErrorKind::UnexpectedEof {
                Ok(None)
            } else {
                Err(e)
            };
        }
        if h.iter().all(|&b| b == 0) {
            return Ok(None);
        }
        let stored = parse_octal(&h[148..156]).ok_or_else(|| bad("a header's checksum"))?;
        let mut sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
        sum = sum - h[148..156].iter().map(|&b| u64::from(b)).sum::<u64>() + 8 * u64::from(b' ');
        if sum != stored {
            return Err(bad("a header whose checksum does not match"));
        }
        let mut name = field_str(&h[0..100]);
        if &h[257..262] == b"ustar" {
            let prefix = field_str(&h[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        let size = parse_octal(&h[124..136]).ok_or_else(|| bad("a member size"))?;
        let kind = match h[156] {
            b'0' | 0 => Kind::File,
            b'5' => Kind::Folder,
            b'1' => Kind::Other("a hard link"),
            b'2' => Kind::Other("a symbolic link"),
            b'3' | b'4' => Kind::Other("a device"),
            b'6' => Kind::Other("a FIFO"),
            b'x' | b'g' => Kind::Other("a pax extended header"),
            b'L' | b'K' => Kind::Other("a GNU long name"),
            _ => Kind::Other("a member of an unknown kind"),
        };
        self.left = size;
        self.pad = (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64;
        Ok(Some(Header { name, size, kind }))
    }

    /// Reads the current member's bytes, at most `buf.len()`; 0 at its end.
    pub fn read_member(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let want = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(truncated());
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn truncated() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the archive ends inside a member",
    )
}

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not a tar archive: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_written_read_back() {
        let mut out = Vec::new();
        write_file(&mut out, "a/b.txt", b"hello").unwrap();
        write_file(&mut out, "empty", b"").unwrap();
        write_file(&mut out, "big", &vec![7u8; 1500]).unwrap();
        finish(&mut out).unwrap();
        let mut r = Reader::new(&out[..]);
        let h = r.next().unwrap().unwrap();
        assert_eq!(
            (h.name.as_str(), h.size, h.kind),
            ("a/b.txt", 5, Kind::File)
        );
        let mut buf = [0u8; 16];
        assert_eq!(r.read_member(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        let h = r.next().unwrap().unwrap();
        assert_eq!((h.name.as_str(), h.size), ("empty", 0));
        // Skipped without reading.
        let h = r.next().unwrap().unwrap();
        assert_eq!((h.name.as_str(), h.size), ("big", 1500));
        assert!(r.next().unwrap().is_none());
    }

    #[test]
    fn a_changed_header_is_refused() {
        let mut out = Vec::new();
        write_file(&mut out, "a", b"x").unwrap();
        out[0] = b'b';
        assert!(Reader::new(&out[..]).next().is_err());
    }
}
