//! The target's server in an unpacked tree: a file of one of the server's names (in the
//! target's order of preference), an ELF for this machine's architecture, with its helpers
//! beside it (initdb, an install-db script), under `path` where the variant names one; and
//! the bundled library folders (`lib`, `libs`) it needs on the library path. The server,
//! its helpers, its library folders and `path` are each resolved inside the tree, link by
//! link: one that leads out of the tree is refused, never run.

use std::path::{Path, PathBuf};

use super::unpack::resolve_inside;

/// What a target's server looks like in a distribution (from the sandbox's `Target`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// The server's file names, preferred first (`mariadbd` before `mysqld`).
    pub servers: &'static [&'static str],
    /// Helpers the target needs, each one of several names, found beside the server, in
    /// `../bin` or `../scripts`.
    pub helpers: &'static [&'static [&'static str]],
    /// What makes the server print its version (`--version`, `-V`).
    pub version_args: &'static [&'static str],
}

/// The server found.
#[derive(Debug, Clone)]
pub struct Found {
    pub binary: PathBuf,
    /// Bundled library folders next to the server's folder (`../lib`, `../libs`) that hold
    /// shared libraries it names and that its own run path does not reach.
    pub lib_dirs: Vec<PathBuf>,
}

/// Finds the server of `layout` in `tree` (inside `path` when given).
pub fn find_server(tree: &Path, layout: &Layout, path: Option<&Path>) -> Result<Found, String> {
    if layout.servers.is_empty() {
        return Err("this target does not run from a distribution's binaries".into());
    }
    let root = match path {
        Some(p) => {
            let Some(inside) = resolve_inside(tree, p) else {
                return Err(format!(
                    "path {:?} leads out of the unpacked tree (through a link or ..); name a file or folder inside it",
                    p.display().to_string()
                ));
            };
            let r = tree.join(inside);
            if std::fs::symlink_metadata(&r).is_err() {
                return Err(format!(
                    "path {} is not in the unpacked tree ({}); name a file or folder inside it",
                    p.display(),
                    tree.display()
                ));
            }
            r
        }
        None => tree.to_path_buf(),
    };
    let mut candidates: Vec<(usize, PathBuf)> = Vec::new();
    let mut outside: Option<PathBuf> = None;
    let mut consider = |p: &Path| {
        let name = crate::util::name_of(p);
        if let Some(rank) = layout.servers.iter().position(|s| *s == name) {
            if !is_inside(tree, p) {
                outside.get_or_insert_with(|| p.to_path_buf());
            } else if std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
                candidates.push((rank, p.to_path_buf()));
            }
        }
    };
    if std::fs::symlink_metadata(&root).is_ok_and(|m| !m.is_dir()) {
        consider(&root);
    } else {
        super::unpack::walk(&root, &mut |p, _| consider(p));
    }
    if let Some(p) = outside {
        return Err(format!(
            "{} is a link out of the unpacked tree; bakeoff runs only the distribution's own server: give an archive whose server is inside it",
            rel(tree, &p)
        ));
    }
    let names = layout.servers.join(" or ");
    // Scripts and wrappers of the same name (a wheel's entry point) are not the server.
    let mut foreign = None;
    candidates.retain(|(_, p)| match elf_machine(p) {
        Some(m) if m == this_machine() => true,
        Some(m) => {
            foreign = Some((p.clone(), m));
            false
        }
        None => false,
    });
    if candidates.is_empty() {
        if let Some((p, m)) = foreign {
            return Err(format!(
                "{} is built for {}, this machine is {}; pick the package for {}",
                rel(tree, &p),
                machine_name(m),
                std::env::consts::ARCH,
                std::env::consts::ARCH
            ));
        }
        return Err(format!(
            "no {names} for this machine in {}; check that the package holds the server (or set dist.path)",
            tree.display()
        ));
    }
    let best = candidates.iter().map(|(r, _)| *r).min().unwrap_or(0);
    candidates.retain(|(r, _)| *r == best);
    // Two names for one file (a link) are one server.
    candidates.dedup_by(|a, b| same_file(&a.1, &b.1));
    if candidates.len() > 1 {
        let list: Vec<String> = candidates
            .iter()
            .take(4)
            .map(|(_, p)| rel(tree, p))
            .collect();
        return Err(format!(
            "{} servers in the tree ({}); set dist.path to the one to run",
            candidates.len(),
            list.join(", ")
        ));
    }
    let binary = candidates.remove(0).1;
    for group in layout.helpers {
        if !group.iter().any(|h| helper(tree, &binary, h).is_some()) {
            return Err(format!(
                "{} has no {} beside it; this package holds only part of the server (add the package that has it)",
                rel(tree, &binary),
                group.join(" or ")
            ));
        }
    }
    if let (Some(need), Some(have)) = (glibc_needed(&binary), glibc_here()) {
        if need > have {
            return Err(format!(
                "{} needs glibc {}.{}, this machine has {}.{}; pick a build for an older glibc (e.g. another manylinux platform)",
                rel(tree, &binary),
                need.0,
                need.1,
                have.0,
                have.1
            ));
        }
    }
    let mut lib_dirs = lib_dirs(&binary);
    lib_dirs.retain(|d| is_inside(tree, d));
    Ok(Found { binary, lib_dirs })
}

/// The newest `GLIBC_x.y` symbol version the binary asks for (`readelf -V`).
fn glibc_needed(binary: &Path) -> Option<(u32, u32)> {
    let out = std::process::Command::new("readelf")
        .args(["-V", "-W"])
        .arg(binary)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("GLIBC_"))
        .filter_map(parse_version)
        .max()
}

/// This machine's glibc version.
fn glibc_here() -> Option<(u32, u32)> {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    parse_version(v.to_str().ok()?)
}

fn parse_version(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()
        .map(|m| {
            m.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

/// A helper beside the server, in `../bin` or `../scripts`, inside the tree.
fn helper(tree: &Path, binary: &Path, name: &str) -> Option<PathBuf> {
    let dir = binary.parent()?;
    [
        dir.join(name),
        dir.join("../bin").join(name),
        dir.join("../scripts").join(name),
    ]
    .into_iter()
    .find(|p| is_inside(tree, p) && p.is_file())
}

/// Whether `p` (a path under `tree`) resolves inside `tree`, link by link.
fn is_inside(tree: &Path, p: &Path) -> bool {
    p.strip_prefix(tree)
        .ok()
        .and_then(|rel| resolve_inside(tree, rel))
        .is_some()
}

/// `../lib` and `../libs` beside the server's folder when they hold shared libraries.
fn lib_dirs(binary: &Path) -> Vec<PathBuf> {
    let Some(top) = binary.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    ["libs", "lib"]
        .iter()
        .map(|d| top.join(d))
        .filter(|d| {
            std::fs::read_dir(d).is_ok_and(|rd| {
                rd.flatten()
                    .any(|e| crate::util::name_of(&e.path()).contains(".so"))
            })
        })
        .collect()
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn rel(tree: &Path, p: &Path) -> String {
    p.strip_prefix(tree).unwrap_or(p).display().to_string()
}

/// The ELF `e_machine` of a file, or None when it is not an ELF.
pub(super) fn elf_machine(p: &Path) -> Option<u16> {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(p).ok()?.read_exact(&mut head).ok()?;
    if &head[..4] != b"\x7fELF" {
        return None;
    }
    let m = [head[18], head[19]];
    Some(if head[5] == 2 {
        u16::from_be_bytes(m)
    } else {
        u16::from_le_bytes(m)
    })
}

fn this_machine() -> u16 {
    match std::env::consts::ARCH {
        "x86_64" => 62,
        "aarch64" => 183,
        "x86" => 3,
        "arm" => 40,
        "riscv64" => 243,
        "powerpc64" => 21,
        "s390x" => 22,
        _ => 0,
    }
}

fn machine_name(m: u16) -> String {
    match m {
        62 => "x86_64".into(),
        183 => "aarch64".into(),
        3 => "x86 (32-bit)".into(),
        40 => "arm (32-bit)".into(),
        243 => "riscv".into(),
        21 => "powerpc64".into(),
        22 => "s390x".into(),
        other => format!("ELF machine {other}"),
    }
}

#[cfg(test)]
pub(super) fn this_machine_for_tests() -> u16 {
    this_machine()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_versions_compare() {
        assert_eq!(parse_version("2.36"), Some((2, 36)));
        assert_eq!(parse_version("2.3.4"), Some((2, 3)));
        assert!(glibc_here().is_some());
        let t = std::fs::canonicalize(bakeoff_os::path::which("true").unwrap()).unwrap();
        let need = glibc_needed(&t).unwrap();
        assert!(need <= glibc_here().unwrap(), "{need:?}");
    }
}
