//! Folders bakeoff owns: a folder is bakeoff's when bakeoff created it (or found it
//! empty) and left its marker file in it, naming what the folder is for and a random id.
//! Nothing bakeoff removes lies outside a folder that carries its marker: the sandbox
//! root, the cache and results folders are claimed this way before anything is written,
//! and a folder that holds a user's files is refused, never adopted.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The marker's file name inside a folder bakeoff owns.
pub const MARKER: &str = ".bakeoff-owned";

/// Why a folder cannot be claimed.
#[derive(Debug)]
pub enum ClaimError {
    /// It holds an entry bakeoff did not make (the first one found, by name).
    Foreign(String),
    /// It is not a folder: a file, or a symbolic link.
    NotAFolder,
    /// Creating it or its marker failed.
    Io(io::Error),
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::Foreign(name) => write!(
                f,
                "it holds {name:?} and other files bakeoff did not make (bakeoff only uses an empty folder, or one it made)"
            ),
            ClaimError::NotAFolder => write!(f, "it is a file or a symbolic link, not a folder"),
            ClaimError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Whether `dir` carries bakeoff's marker for `purpose` (a regular file, never a link).
pub fn is_marked(dir: &Path, purpose: &str) -> bool {
    let path = dir.join(MARKER);
    match fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() && m.len() < 4096 => fs::read_to_string(&path)
            .is_ok_and(|t| t.lines().next() == Some(&format!("bakeoff {purpose}"))),
        _ => false,
    }
}

/// The first entry of `dir` that is neither the marker nor accepted by `ours`; None when
/// there is none (or `dir` cannot be read).
pub fn foreign_entry(dir: &Path, ours: &dyn Fn(&fs::DirEntry) -> bool) -> Option<String> {
    fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| e.file_name() != MARKER && !ours(e))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// Claims `dir` for `purpose`: creates it (and its parents) when absent; takes it when
/// it is an empty folder, one marked for `purpose` already, or one whose every entry
/// `ours` accepts (a layout an earlier bakeoff made before markers existed). Otherwise
/// refuses it, naming an entry that is not bakeoff's. Never follows a link at `dir`.
pub fn claim(
    dir: &Path,
    purpose: &str,
    ours: &dyn Fn(&fs::DirEntry) -> bool,
) -> Result<(), ClaimError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            create_parents(dir)?;
            match fs::create_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return claim(dir, purpose, ours)
                }
                Err(e) => return Err(ClaimError::Io(e)),
            }
        }
        Err(e) => return Err(ClaimError::Io(e)),
        Ok(m) if !m.is_dir() => return Err(ClaimError::NotAFolder),
        Ok(_) if is_marked(dir, purpose) => return Ok(()),
        Ok(_) => {
            if let Some(name) = foreign_entry(dir, ours) {
                return Err(ClaimError::Foreign(name));
            }
        }
    }
    match write_marker(dir, purpose) {
        Ok(()) => Ok(()),
        // Another bakeoff marked it this instant: the same purpose is fine.
        Err(_) if is_marked(dir, purpose) => Ok(()),
        Err(e) => Err(ClaimError::Io(e)),
    }
}

/// Claims `dir` for one writer only (a results folder): it must be absent or empty, and
/// of two processes claiming the same folder at the same time exactly one succeeds (the
/// marker is created with O_EXCL). `Ok(false)` when it exists and is someone else's.
pub fn claim_fresh(dir: &Path, purpose: &str) -> Result<bool, ClaimError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            create_parents(dir)?;
            match fs::create_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
                Err(e) => return Err(ClaimError::Io(e)),
            }
        }
        Err(e) => return Err(ClaimError::Io(e)),
        Ok(m) if !m.is_dir() => return Err(ClaimError::NotAFolder),
        Ok(_) => {
            if foreign_entry(dir, &|_| false).is_some() || dir.join(MARKER).exists() {
                return Ok(false);
            }
        }
    }
    match write_marker(dir, purpose) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(ClaimError::Io(e)),
    }
    // A file that landed between the look and the marker: not ours alone.
    Ok(foreign_entry(dir, &|_| false).is_none())
}

/// Whether `entry`, found in `parent`, is a real folder on `parent`'s own filesystem: the
/// only kind of entry a cleanup may remove (never a link, never another mount).
pub fn is_plain_subfolder(parent: &Path, entry: &Path) -> bool {
    let (Ok(p), Ok(e)) = (fs::symlink_metadata(parent), fs::symlink_metadata(entry)) else {
        return false;
    };
    e.file_type().is_dir() && e.dev() == p.dev()
}

fn create_parents(dir: &Path) -> Result<(), ClaimError> {
    match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => fs::create_dir_all(p).map_err(ClaimError::Io),
        None => Ok(()),
    }
}

fn write_marker(dir: &Path, purpose: &str) -> io::Result<()> {
    let path: PathBuf = dir.join(MARKER);
    let mut f = File::options().write(true).create_new(true).open(&path)?;
    writeln!(f, "bakeoff {purpose}")?;
    writeln!(
        f,
        "id {:016x}\nThis folder was made by bakeoff; its cleanup removes only what it made here.",
        random_id()
    )?;
    f.sync_all()
}

/// 64 bits from the kernel's random pool (the time and pid where it cannot be read).
fn random_id() -> u64 {
    let mut b = [0u8; 8];
    if fs::File::open("/dev/urandom")
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut b))
        .is_ok()
    {
        return u64::from_le_bytes(b);
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ u64::from(std::process::id()) << 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_absent_and_empty_folders_and_refuses_a_users_files() {
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("a/b/new");
        claim(&fresh, "sandbox root", &|_| false).unwrap();
        assert!(is_marked(&fresh, "sandbox root"));
        assert!(!is_marked(&fresh, "cache"));
        // Again: already ours.
        claim(&fresh, "sandbox root", &|_| false).unwrap();
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        claim(&empty, "cache", &|_| false).unwrap();
        let user = tmp.path().join("user");
        fs::create_dir_all(user.join("photos")).unwrap();
        fs::write(user.join("notes.txt"), "mine").unwrap();
        let e = claim(&user, "sandbox root", &|_| false).unwrap_err();
        assert!(matches!(e, ClaimError::Foreign(_)), "{e}");
        assert!(!user.join(MARKER).exists());
        // A layout of bakeoff's own is adopted.
        let old = tmp.path().join("old");
        fs::create_dir_all(old.join("data-1")).unwrap();
        claim(&old, "sandbox root", &|e| {
            e.file_name().to_string_lossy().starts_with("data-")
        })
        .unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            claim(&file, "cache", &|_| false),
            Err(ClaimError::NotAFolder)
        ));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&empty, &link).unwrap();
        assert!(matches!(
            claim(&link, "cache", &|_| false),
            Err(ClaimError::NotAFolder)
        ));
    }

    #[test]
    fn a_fresh_claim_is_won_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("results/x");
        assert!(claim_fresh(&dir, "results").unwrap());
        assert!(!claim_fresh(&dir, "results").unwrap());
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(claim_fresh(&empty, "results").unwrap());
        assert!(!claim_fresh(&empty, "results").unwrap());
        let full = tmp.path().join("full");
        fs::create_dir(&full).unwrap();
        fs::write(full.join("results.json"), "{}").unwrap();
        assert!(!claim_fresh(&full, "results").unwrap());
        // Many claimants at once: exactly one wins.
        let race = tmp.path().join("race");
        let won: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| claim_fresh(&race, "results").unwrap_or(false)))
                .collect();
            hs.into_iter().map(|h| usize::from(h.join().unwrap())).sum()
        });
        assert_eq!(won, 1);
    }

    #[test]
    fn a_cleanup_sees_only_plain_subfolders() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("d")).unwrap();
        fs::write(tmp.path().join("f"), "").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("d"), tmp.path().join("l")).unwrap();
        assert!(is_plain_subfolder(tmp.path(), &tmp.path().join("d")));
        assert!(!is_plain_subfolder(tmp.path(), &tmp.path().join("f")));
        assert!(!is_plain_subfolder(tmp.path(), &tmp.path().join("l")));
        // /proc is another filesystem than /.
        assert!(!is_plain_subfolder(Path::new("/"), Path::new("/proc")));
    }
}
