//! Durable, all-or-nothing file writes, and the few folder helpers the runner and the
//! agent share.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` so that a reader sees either the old file or the new one,
/// never a part, and the new one survives a crash once this returns: the bytes go to a
/// hidden temp file in the same directory (so the rename stays on one filesystem), which
/// is fsynced, renamed over `path`, and then the directory is fsynced so the rename
/// itself is on disk. On failure the temp file is removed and `path` is as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_beside(path)?;
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(parent_of(path))
}

/// Flushes a directory's entries (files created, renamed or removed in it) to disk.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Creates `dir` (and its parents) and opens it to every user (mode 0777): a server that
/// runs as its own unprivileged user writes there (callgrind's output files).
pub fn create_shared_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))
}

/// The bytes of the regular files under `dir`, every level down (0 for what cannot be
/// read); symbolic links count as their own size, never followed.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `.<name>.tmp<pid>-<n>` beside `path`: hidden, and distinct per process and per call,
/// so two writers of one file never share a temp file.
fn temp_beside(path: &Path) -> io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".tmp{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(parent_of(path).join(tmp))
}

/// A field of /proc/self/mountinfo with its octal escapes undone (`\040` for a space).
pub fn unescape_mountinfo(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_bytes_counts_files_at_every_level_and_a_shared_dir_is_open_to_all() {
        use std::os::unix::fs::PermissionsExt;
        let t = std::env::temp_dir().join(format!("bakeoff-os-bytes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        create_shared_dir(&t.join("a/b")).unwrap();
        let mode = std::fs::metadata(t.join("a/b"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o777);
        std::fs::write(t.join("a/one"), b"12345").unwrap();
        std::fs::write(t.join("a/b/two"), b"123").unwrap();
        assert_eq!(dir_bytes(&t), 8);
        assert_eq!(dir_bytes(&t.join("missing")), 0);
        std::fs::remove_dir_all(&t).unwrap();
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_and_replaces_leaving_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("results.json");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_atomic(&p, b"two, longer").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two, longer");
        assert_eq!(entries(dir.path()), ["results.json"]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        write_atomic(&p, b"old").unwrap();
        // A directory where the file should go: the rename fails.
        let blocked = dir.path().join("d");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("inner"), "").unwrap();
        assert!(write_atomic(&blocked, b"new").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(dir.path()), ["d", "x"]);
    }

    #[test]
    fn the_temp_file_is_hidden_beside_the_target() {
        let t = temp_beside(Path::new("/a/b/report.md")).unwrap();
        assert_eq!(t.parent(), Some(Path::new("/a/b")));
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".report.md.tmp"), "{name}");
        assert_ne!(t, temp_beside(Path::new("/a/b/report.md")).unwrap());
        assert_eq!(
            temp_beside(Path::new("bare")).unwrap().parent(),
            Some(Path::new("."))
        );
        assert!(temp_beside(Path::new("/")).is_err());
    }
}
