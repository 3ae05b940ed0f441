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

/// Why a file is not a shared library this machine can preload (None: it is one).
fn shared_library_problem(p: &Path) -> Option<String> {
    let mut head = [0u8; 18];
    let read =
        std::fs::File::open(p).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
    if let Err(e) = read {
        return Some(if p.exists() {
            format!("cannot be read as a shared library ({e})")
        } else {
            "does not exist; give the path of a shared library (.so)".into()
        });
    }
    if &head[..4] != b"\x7fELF" {
        return Some("is not a shared library (not an ELF file)".into());
    }
    // e_type, little-endian on the machines bakeoff runs on: 3 = ET_DYN.
    if u16::from_le_bytes([head[16], head[17]]) != 3 {
        return Some("is an ELF file but not a shared library (not ET_DYN)".into());
    }
    None
}
