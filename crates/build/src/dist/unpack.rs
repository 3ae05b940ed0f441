//! Unpacking, recursively: the fetched archive into the tree (its kind from its name, else
//! from its first bytes), then every archive found inside (by name: .jar, .zip, .whl,
//! .deb, .tar and compressed tars), each into a folder beside it named after it, down
//! to a few levels. `unzip`, `tar` (gz, xz, bz2, zstd) and `dpkg-deb -x` do the work.
//! Zip archives made by Java keep no modes, so ELF files and scripts are made runnable.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::DistError;
use crate::util::run_captured;

/// How deep archives inside archives are unpacked (a txz in a jar is one level).
const MAX_DEPTH: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Zip,
    Tar,
    Deb,
}

const TAR_ENDINGS: &[&str] = &[
    ".tar",
    ".tgz",
    ".txz",
    ".tbz",
    ".tbz2",
    ".tzst",
    ".tar.gz",
    ".tar.xz",
    ".tar.bz2",
    ".tar.zst",
    ".tar.zstd",
];

/// The archive kind a file name says.
pub(super) fn kind_by_name(name: &str) -> Option<Kind> {
    let n = name.to_ascii_lowercase();
    if n.ends_with(".deb") {
        Some(Kind::Deb)
    } else if [".jar", ".zip", ".whl"].iter().any(|e| n.ends_with(e)) {
        Some(Kind::Zip)
    } else if TAR_ENDINGS.iter().any(|e| n.ends_with(e)) {
        Some(Kind::Tar)
    } else {
        None
    }
}

/// The archive kind a file's first bytes say (for a fetched file whose name says none).
fn kind_by_magic(path: &Path) -> Option<Kind> {
    let mut head = [0u8; 512];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .ok()?;
    let h = &head[..n];
    if h.starts_with(b"PK\x03\x04") {
        Some(Kind::Zip)
    } else if h.starts_with(b"!<arch>\ndebian") {
        Some(Kind::Deb)
    } else if h.starts_with(&[0x1f, 0x8b])
        || h.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0])
        || h.starts_with(b"BZh")
        || h.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (n > 262 && &h[257..262] == b"ustar")
    {
        Some(Kind::Tar)
    } else {
        None
    }
}

/// Unpacks the fetched archive `archive` into `dest`.
pub(super) fn unpack_top(archive: &Path, dest: &Path) -> Result<(), DistError> {
    let name = crate::util::name_of(archive);
    let kind = kind_by_name(&name)
        .or_else(|| kind_by_magic(archive))
        .ok_or_else(|| {
            DistError::input(format!(
                "{name} is not an archive bakeoff unpacks (jar, zip, whl, deb, tar with gz, xz, bz2 or zstd); give one of those or a folder"
            ))
        })?;
    unpack(kind, archive, dest)
}

/// Unpacks one archive; a tool's refusal is the archive's fault (input), a missing tool
/// or folder the machine's.
fn unpack(kind: Kind, archive: &Path, dest: &Path) -> Result<(), DistError> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let (tool, mut cmd) = match kind {
        Kind::Zip => {
            let mut c = Command::new("unzip");
            c.args(["-q", "-o"]).arg(archive).arg("-d").arg(dest);
            ("unzip", c)
        }
        Kind::Tar => {
            let mut c = Command::new("tar");
            c.args(["--no-same-owner", "-xf"])
                .arg(archive)
                .arg("-C")
                .arg(dest);
            ("tar", c)
        }
        Kind::Deb => {
            let mut c = Command::new("dpkg-deb");
            c.arg("-x").arg(archive).arg(dest);
            ("dpkg-deb", c)
        }
    };
    if bakeoff_os::path::which(tool).is_none() {
        return Err(format!(
            "`{tool}` is needed to unpack {}: run scripts/setup.sh",
            crate::util::name_of(archive)
        )
        .into());
    }
    let out = run_captured(&mut cmd).map_err(|e| format!("cannot run {tool}: {e}"))?;
    if !out.ok {
        let line = out
            .output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        return Err(DistError::input(format!(
            "cannot unpack {} ({tool}: {line}); check that the archive is whole",
            crate::util::name_of(archive)
        )));
    }
    Ok(())
}

/// Unpacks every archive under `dir` into a folder beside it (its name without the
/// ending), removes the archive, and goes on inside, `MAX_DEPTH` levels at most.
pub(super) fn nested(dir: &Path, depth: usize) -> Result<(), DistError> {
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    for (path, kind) in archives_under(dir) {
        let name = crate::util::name_of(&path);
        let stem = strip_ending(&name);
        let mut dest = path.with_file_name(stem);
        if dest.exists() {
            dest = path.with_file_name(format!("{stem}.unpacked"));
        }
        unpack(kind, &path, &dest)?;
        std::fs::remove_file(&path)
            .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        nested(&dest, depth + 1)?;
    }
    Ok(())
}

fn strip_ending(name: &str) -> &str {
    let lower = name.to_ascii_lowercase();
    let all = TAR_ENDINGS
        .iter()
        .chain([".jar", ".zip", ".whl", ".deb"].iter());
    let longest = all
        .filter(|e| lower.ends_with(*e))
        .map(|e| e.len())
        .max()
        .unwrap_or(0);
    match &name[..name.len() - longest] {
        "" => name,
        s => s,
    }
}

/// Regular files under `dir` (links not followed) whose name says an archive.
fn archives_under(dir: &Path) -> Vec<(PathBuf, Kind)> {
    let mut out = Vec::new();
    walk(dir, &mut |p, meta| {
        if meta.is_file() {
            if let Some(k) = kind_by_name(&crate::util::name_of(p)) {
                out.push((p.to_path_buf(), k));
            }
        }
    });
    out
}

/// Calls `f` on every entry under `dir`, depth first, never following a link.
pub(super) fn walk(dir: &Path, f: &mut dyn FnMut(&Path, &std::fs::Metadata)) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        f(&p, &meta);
        if meta.is_dir() {
            walk(&p, f);
        }
    }
}

/// Makes ELF files and `#!` scripts executable and every file readable (a jar keeps no
/// modes; the server may run as another user).
pub(super) fn make_runnable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    walk(dir, &mut |p, meta| {
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | 0o755));
        } else if meta.is_file() {
            let mut head = [0u8; 4];
            let n = std::fs::File::open(p)
                .and_then(|mut f| f.read(&mut head))
                .unwrap_or(0);
            let runnable = (n == 4 && &head == b"\x7fELF") || (n >= 2 && &head[..2] == b"#!");
            let want = if runnable { mode | 0o755 } else { mode | 0o644 };
            if want != mode {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(want));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_stems() {
        assert_eq!(kind_by_name("postgres-linux-x86_64.txz"), Some(Kind::Tar));
        assert_eq!(kind_by_name("x-1.0.tar.zst"), Some(Kind::Tar));
        assert_eq!(kind_by_name("a.whl"), Some(Kind::Zip));
        assert_eq!(
            kind_by_name("memcached_1.6.18-1_amd64.deb"),
            Some(Kind::Deb)
        );
        assert_eq!(kind_by_name("changelog.Debian.gz"), None);
        assert_eq!(
            strip_ending("postgres-linux-x86_64.txz"),
            "postgres-linux-x86_64"
        );
        assert_eq!(strip_ending("x-1.0.tar.gz"), "x-1.0");
        assert_eq!(strip_ending(".jar"), ".jar");
    }
}
