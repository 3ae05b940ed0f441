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
    let version = version_line(binary, layout.version_args, env);
    let compiler = comment(binary).or_else(|| {
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

/// An ELF whose `.comment` was stripped (Debian's packages): the compiler is not known.
fn elf_has_no_comment(binary: &Path) -> bool {
    super::find::elf_machine(binary).is_some()
}

/// jemalloc or tcmalloc when the binary links one; libc's malloc otherwise.
fn linked_allocator(binary: &Path) -> Option<String> {
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
