//! A variant's system settings (`[[variant]] preload`, `thp`, `defrag`, `sysctl`, `cpus`,
//! `smt`, `env`): their types, the allocators `preload` names, and what a variant asks of
//! the machine as changes `bakeoff_os::system` applies. The checks that read them are
//! `validate/system.rs`'s (the file alone) and the runner's (the machine); a variant's
//! asks as changes are `Variant::machine_changes` and `Variant::system_asked`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `--allow-system-changes`: machine-wide settings (thp, defrag, sysctl, smt)
/// may then be applied.
static ALLOW_SYSTEM_CHANGES: AtomicBool = AtomicBool::new(false);

/// Let variants change machine-wide settings (the user said so on the command line: a
/// file alone never can).
pub fn allow_system_changes(yes: bool) {
    ALLOW_SYSTEM_CHANGES.store(yes, Ordering::Relaxed);
}

/// Whether `--allow-system-changes` was given.
pub fn system_changes_allowed() -> bool {
    ALLOW_SYSTEM_CHANGES.load(Ordering::Relaxed)
}

/// The allocators `preload` names: (name, library file, Debian package).
pub const ALLOCATORS: &[(&str, &str, &str)] = &[
    ("jemalloc", "libjemalloc.so.2", "libjemalloc2"),
    (
        "tcmalloc",
        "libtcmalloc_minimal.so.4",
        "libtcmalloc-minimal4",
    ),
    ("mimalloc", "libmimalloc.so.2", "libmimalloc2.0"),
];

/// Where a named allocator's library is looked for, in order.
const LIBRARY_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
];

/// A `sysctl` value as the file gives it: a number or text (`"4096 131072 6291456"`);
/// a table where the name was written unquoted (`vm.swappiness = 1` is TOML's dotted key).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SysctlValue {
    Int(i64),
    Text(String),
    Table(BTreeMap<String, SysctlValue>),
}

/// `sysctl` as (dotted name, value) pairs, dotted keys joined again.
pub fn sysctl_flat(table: &BTreeMap<String, SysctlValue>) -> Vec<(String, String)> {
    fn walk(prefix: &str, t: &BTreeMap<String, SysctlValue>, out: &mut Vec<(String, String)>) {
        for (k, v) in t {
            let name = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                SysctlValue::Int(n) => out.push((name, n.to_string())),
                SysctlValue::Text(s) => out.push((name, s.clone())),
                SysctlValue::Table(inner) => walk(&name, inner, out),
            }
        }
    }
    let mut out = Vec::new();
    walk("", table, &mut out);
    out
}

/// The library a `preload` value names: a named allocator's installed file, or the path
/// itself (relative paths from the experiment file's folder, through `resolve`). Err: what
/// is wrong and what to do.
pub fn preload_library(asked: &str, resolve: impl Fn(&Path) -> PathBuf) -> Result<PathBuf, String> {
    if let Some((name, file, package)) = ALLOCATORS.iter().find(|(n, _, _)| *n == asked) {
        return LIBRARY_DIRS
            .iter()
            .map(|d| Path::new(d).join(file))
            .find(|p| p.is_file())
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
            .ok_or_else(|| {
                format!("preload {name}: {file} is not installed; run scripts/setup.sh (apt-get install {package})")
            });
    }
    if !asked.contains('/') {
        let names: Vec<&str> = ALLOCATORS.iter().map(|(n, _, _)| *n).collect();
        return Err(format!(
            "preload {asked:?} is not an allocator bakeoff knows; give {} or the path of a shared library",
            names.join(", ")
        ));
    }
    let p = resolve(Path::new(asked));
    match shared_library_problem(&p) {
        None => Ok(std::fs::canonicalize(&p).unwrap_or(p)),
        Some(why) => Err(format!("preload {}: {why}", p.display())),
    }
}

/// Why a file is not a shared library this machine can preload (None: it is one): an
/// ELF file of type `ET_DYN` without a program interpreter (a position-independent
/// program is `ET_DYN` too, and the loader refuses to preload it).
fn shared_library_problem(p: &Path) -> Option<String> {
    // Never opened unless a regular file: a FIFO or a device would block or never end.
    if p.exists() && !p.is_file() {
        return Some("is not a regular file; give the path of a shared library (.so)".into());
    }
    let bytes = match std::fs::File::open(p).and_then(|f| {
        let mut head = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(f, 64 * 1024), &mut head)?;
        Ok(head)
    }) {
        Ok(b) => b,
        Err(e) if p.exists() => return Some(format!("cannot be read as a shared library ({e})")),
        Err(_) => return Some("does not exist; give the path of a shared library (.so)".into()),
    };
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Some("is not a shared library (not an ELF file)".into());
    }
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
    // ELF64, little-endian, as on the machines bakeoff runs on: e_type 3 = ET_DYN.
    if bytes[4] != 2 || bytes[5] != 1 || u16_at(16) != 3 {
        return Some("is an ELF file but not a shared library of this machine (not a 64-bit little-endian ET_DYN)".into());
    }
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().ok()?) as usize;
    let (entsize, count) = (u16_at(0x36) as usize, u16_at(0x38) as usize);
    let interp = (0..count).any(|i| {
        let at = phoff + i * entsize;
        // p_type 3 = PT_INTERP: a program, which names its loader.
        at + 4 <= bytes.len()
            && u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4])) == 3
    });
    if interp {
        return Some("is a program, not a shared library (it names a program interpreter)".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shared_libraries_are_preloaded() {
        let same = |p: &Path| p.to_path_buf();
        let m = preload_library("/etc/passwd", same).unwrap_err();
        assert!(m.contains("not an ELF file"), "{m}");
        let m = preload_library("/bin/sh", same).unwrap_err();
        assert!(m.contains("is a program"), "{m}");
        let m = preload_library("/no/such.so", same).unwrap_err();
        assert!(m.contains("does not exist"), "{m}");
        let m = preload_library("hoard", same).unwrap_err();
        assert!(m.contains("jemalloc, tcmalloc, mimalloc"), "{m}");
        if let Ok(lib) = preload_library("jemalloc", same) {
            assert!(preload_library(&lib.display().to_string(), same).is_ok());
        }
    }
}
