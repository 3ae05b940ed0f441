//! Folders bakeoff owns. A folder is bakeoff's only when bakeoff made (or took, empty)
//! it on this machine and wrote that down in its own state folder: each claimed folder's
//! device, inode, path and a random id are recorded there ([`register`]), and the marker
//! file left in the folder names the same id. A marker is believed only when it is a
//! plain file with one link, holds exactly what bakeoff writes, and its id is the one
//! recorded for that very folder ([`is_marked`]): a marker or a record a repository
//! carries, a copy of a real one, a hard link to one or a marker with other line ends
//! claims nothing. Nothing bakeoff removes lies outside such a folder: the sandbox root,
//! the cache and results folders are claimed this way before anything is written, and a
//! folder that holds a user's files is refused, never adopted. New folders are made only
//! under the places a user named, never among the system's folders or in the home
//! folder's dot-folders ([`place_problem`]), and a cleanup never removes through a mount
//! ([`is_plain_subfolder`], [`remove_tree`]).

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

/// The marker's file name inside a folder bakeoff owns.
pub const MARKER: &str = ".bakeoff-owned";

/// What a sandbox folder is recorded as (see [`register`]).
pub const SANDBOX_PURPOSE: &str = "sandbox";

/// Why a folder cannot be claimed.
#[derive(Debug)]
pub enum ClaimError {
    /// It holds an entry bakeoff did not make (the first one found, by name).
    Foreign(String),
    /// It is not a folder: a file, or a symbolic link.
    NotAFolder,
    /// It is a place bakeoff makes no folder in (see [`place_problem`]).
    Place(String),
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
            ClaimError::Place(why) => write!(f, "{why}"),
            ClaimError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// bakeoff's state folder on this machine, for this user: `$XDG_STATE_HOME/bakeoff/made`
/// or `~/.local/state/bakeoff/made`, made 0700 when absent. Refused (an error) when it
/// is a link, another user's, or open to others: then nothing can be claimed.
pub fn state_dir() -> io::Result<PathBuf> {
    let dir = state_home()
        .ok_or_else(|| {
            io::Error::other(
                "bakeoff keeps what it made in $XDG_STATE_HOME/bakeoff or ~/.local/state/bakeoff, and neither XDG_STATE_HOME nor HOME is set; set HOME",
            )
        })?
        .join("made");
    if let Some(parent) = dir.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let m = fs::symlink_metadata(&dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !m.is_dir() || m.uid() != me || m.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "bakeoff's state folder {} is not a private folder of this user (mode 700); remove it and run again",
            dir.display()
        )));
    }
    Ok(dir)
}

/// `$XDG_STATE_HOME/bakeoff` or `~/.local/state/bakeoff`, nothing made (None: neither
/// variable is set to an absolute path).
pub fn state_home() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| Path::new(v).is_absolute()) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| Path::new(v).is_absolute())?)
            .join(".local/state"),
    };
    Some(base.join("bakeoff"))
}

/// The state entry of the folder with `meta`: one file per (device, inode).
fn entry_path(state: &Path, meta: &fs::Metadata) -> PathBuf {
    state.join(format!("{:x}-{:x}", meta.dev(), meta.ino()))
}

/// What the state entry of `real` (the folder's canonical path) holds for `purpose`
/// and `id`, byte for byte.
fn entry_text(purpose: &str, id: u64, real: &Path) -> Vec<u8> {
    let mut t = format!("bakeoff {purpose}\nid {id:016x}\npath ").into_bytes();
    t.extend_from_slice(real.as_os_str().as_bytes());
    t.push(b'\n');
    t
}

/// The id in the second line of a marker or state entry (`id <16 hex digits>`).
fn id_in(text: &[u8]) -> Option<u64> {
    let line = text.split(|b| *b == b'\n').nth(1)?;
    let hex = line.strip_prefix(b"id ")?;
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

/// `dir` as a real folder (never a link): its metadata and canonical path.
fn real_folder(dir: &Path) -> Option<(fs::Metadata, PathBuf)> {
    let m = fs::symlink_metadata(dir).ok()?;
    if !m.is_dir() {
        return None;
    }
    Some((m, fs::canonicalize(dir).ok()?))
}

/// Records in bakeoff's state folder that bakeoff made (or took, empty) the folder
/// `dir` for `purpose`: its device, inode and path, with a random id, which is returned.
/// A folder recorded already for the same purpose keeps its id (two bakeoffs claiming
/// one folder at once agree).
pub fn register(dir: &Path, purpose: &str) -> io::Result<u64> {
    let (meta, real) = real_folder(dir)
        .ok_or_else(|| io::Error::other(format!("{} is not a folder", dir.display())))?;
    if let Some(id) = registered(dir, purpose) {
        return Ok(id);
    }
    let state = state_dir()?;
    let id = random_id();
    crate::file::write_atomic(&entry_path(&state, &meta), &entry_text(purpose, id, &real))?;
    Ok(id)
}

/// The id bakeoff recorded when it made the folder `dir` for `purpose`, if it did: the
/// state entry of this folder's device and inode names this purpose and this path.
pub fn registered(dir: &Path, purpose: &str) -> Option<u64> {
    let (meta, real) = real_folder(dir)?;
    let path = entry_path(&state_dir().ok()?, &meta);
    let m = fs::symlink_metadata(&path).ok()?;
    if !m.is_file() || m.nlink() != 1 || m.len() > 8192 {
        return None;
    }
    let text = fs::read(&path).ok()?;
    let id = id_in(&text)?;
    (text == entry_text(purpose, id, &real)).then_some(id)
}

/// Forgets the state entry of `dir` (bakeoff is about to remove the folder).
pub fn forget(dir: &Path) {
    if let (Some((meta, _)), Ok(state)) = (real_folder(dir), state_dir()) {
        let _ = fs::remove_file(entry_path(&state, &meta));
    }
}

/// The marker's text for `purpose` and `id`, byte for byte.
fn marker_text(purpose: &str, id: u64) -> String {
    format!(
        "bakeoff {purpose}\nid {id:016x}\nThis folder was made by bakeoff; its cleanup removes only what it made here.\n"
    )
}

/// Whether `dir` carries bakeoff's marker for `purpose`: a plain file (never a link, one
/// link count) holding exactly what bakeoff writes, whose id is the one bakeoff's state
/// recorded for this folder ([`registered`]).
pub fn is_marked(dir: &Path, purpose: &str) -> bool {
    let path = dir.join(MARKER);
    let ok = match fs::symlink_metadata(&path) {
        Ok(m) => m.is_file() && m.nlink() == 1 && m.len() < 4096,
        Err(_) => false,
    };
    if !ok {
        return false;
    }
    let (Ok(text), Some(id)) = (fs::read(&path), registered(dir, purpose)) else {
        return false;
    };
    id_in(&text) == Some(id) && text == marker_text(purpose, id).as_bytes()
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

/// Folders of the system bakeoff never makes a folder in, nor claims one in.
/// Memory-backed folders inside system folders where users keep their own files (a
/// sandbox on tmpfs): folders below them are a user's, as /tmp's are.
const USER_TMPFS: &[&str] = &["/dev/shm", "/run/user", "/run/shm"];

const SYSTEM: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/snap",
    "/sys",
    "/usr",
    "/var/cache",
    "/var/lib",
    "/var/log",
    "/var/mail",
    "/var/spool",
];

/// `dir` as an absolute path with the part that exists resolved (links followed) and
/// the rest as written, `..` steps taken.
fn resolved(dir: &Path) -> PathBuf {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut existing = abs.clone();
    let mut rest = Vec::new();
    while fs::symlink_metadata(&existing).is_err() {
        match (existing.file_name(), existing.parent()) {
            (Some(n), Some(p)) => {
                rest.push(n.to_os_string());
                existing = p.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = fs::canonicalize(&existing).unwrap_or(existing);
    for n in rest.iter().rev() {
        match Path::new(n).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) => {}
            _ => out.push(n),
        }
    }
    out
}

/// Where bakeoff keeps its own folders in the home folder: its cache and its state.
fn own_places(home: &Path) -> Vec<PathBuf> {
    let mut v = vec![
        home.join(".cache/bakeoff"),
        home.join(".local/state/bakeoff"),
    ];
    for var in ["XDG_CACHE_HOME", "XDG_STATE_HOME"] {
        if let Some(x) = std::env::var_os(var).filter(|x| Path::new(x).is_absolute()) {
            v.push(resolved(&PathBuf::from(x).join("bakeoff")));
        }
    }
    v
}

/// Why bakeoff may not make or claim the folder `dir`, if it may not: a folder among the
/// system's (`/boot`, `/etc`, `/usr`, `/proc`, `/sys`, `/dev`, ...), a `lost+found`, or
/// one in the home folder's dot-folders (`~/.ssh/x`) other than bakeoff's own cache and
/// state (`~/.cache/bakeoff`, `$XDG_CACHE_HOME/bakeoff`, ...). Said of the path, with what
/// to do.
pub fn place_problem(dir: &Path) -> Option<String> {
    let real = resolved(dir);
    let shown = real.display();
    if real.components().any(|c| c.as_os_str() == "lost+found") {
        return Some(format!("{shown} is in a lost+found folder, which belongs to the filesystem's repair tool; name another folder"));
    }
    let user_tmpfs = USER_TMPFS
        .iter()
        .any(|t| real.starts_with(t) && real != Path::new(t));
    if let Some(sys) = SYSTEM.iter().find(|s| real.starts_with(s) && !user_tmpfs) {
        return Some(format!("{shown} is under the system folder {sys}, where bakeoff makes no folders; name a folder of yours"));
    }
    let home = std::env::var_os("HOME").filter(|h| Path::new(h).is_absolute())?;
    let home = fs::canonicalize(&home).unwrap_or_else(|_| PathBuf::from(home));
    let under = real.strip_prefix(&home).ok()?;
    let first = under.components().next()?;
    let dot = first.as_os_str().as_bytes().starts_with(b".");
    if dot && !own_places(&home).iter().any(|p| real.starts_with(p)) {
        return Some(format!("{shown} is in the home folder's {} folder, which belongs to other programs; name a folder of yours", first.as_os_str().to_string_lossy()));
    }
    None
}

/// Claims `dir` for `purpose`: creates it (and its parents) when absent; takes it when
/// it is an empty folder, one bakeoff marked for `purpose` already, or one whose every
/// entry `ours` accepts. Otherwise refuses it, naming an entry that is not bakeoff's. A
/// marker bakeoff's state does not vouch for is replaced, never believed. Never follows
/// a link at `dir`; refuses the places [`place_problem`] names.
pub fn claim(
    dir: &Path,
    purpose: &str,
    ours: &dyn Fn(&fs::DirEntry) -> bool,
) -> Result<(), ClaimError> {
    // Two bakeoffs claiming one new folder at the same instant can each record an id,
    // the later record winning, while the earlier one's marker is already written: the
    // loser's marker write finds a marker its record does not vouch for. Claiming again
    // settles it (that marker is replaced under the record that won, which both then
    // read), so a race costs a retry, never a refusal.
    let mut tries = 0;
    loop {
        match claim_once(dir, purpose, ours) {
            Err(ClaimError::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists && tries < 8 => {
                tries += 1;
            }
            other => return other,
        }
    }
}

fn claim_once(
    dir: &Path,
    purpose: &str,
    ours: &dyn Fn(&fs::DirEntry) -> bool,
) -> Result<(), ClaimError> {
    if let Some(why) = place_problem(dir) {
        return Err(ClaimError::Place(why));
    }
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            create_parents(dir)?;
            match fs::create_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return claim_once(dir, purpose, ours)
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
            // A marker bakeoff's state does not vouch for (planted, copied, linked, edited,
            // or from a bakeoff before the state folder) is replaced: the folder holds
            // nothing else of anyone's.
            match fs::remove_file(dir.join(MARKER)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(ClaimError::Io(e)),
                _ => {}
            }
        }
    }
    let id = register(dir, purpose).map_err(ClaimError::Io)?;
    match write_marker(dir, purpose, id) {
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
    if let Some(why) = place_problem(dir) {
        return Err(ClaimError::Place(why));
    }
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
            if foreign_entry(dir, &|_| false).is_some()
                || fs::symlink_metadata(dir.join(MARKER)).is_ok()
            {
                return Ok(false);
            }
        }
    }
    let id = register(dir, purpose).map_err(ClaimError::Io)?;
    match write_marker(dir, purpose, id) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(ClaimError::Io(e)),
    }
    // A file that landed between the look and the marker: not ours alone.
    Ok(foreign_entry(dir, &|_| false).is_none())
}

/// The mount points of this process's view of the system (/proc/self/mountinfo), bind
/// mounts of the same filesystem included.
pub fn mount_points() -> Vec<PathBuf> {
    let Ok(text) = fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').nth(4))
        .map(|escaped| PathBuf::from(std::ffi::OsStr::from_bytes(&unescape(escaped))))
        .collect()
}

/// A mountinfo field with its octal escapes (`\040` for a blank) undone.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// Whether something is mounted at `dir` or anywhere inside it.
pub fn holds_a_mount(dir: &Path) -> bool {
    let Ok(real) = fs::canonicalize(dir) else {
        return true;
    };
    mount_points().iter().any(|m| m.starts_with(&real))
}

/// Whether `entry`, found in `parent`, is a real folder on `parent`'s own filesystem
/// with nothing mounted at or in it (a bind mount of the same filesystem included): the
/// only kind of entry a cleanup may remove (never a link, never another mount).
pub fn is_plain_subfolder(parent: &Path, entry: &Path) -> bool {
    let (Ok(p), Ok(e)) = (fs::symlink_metadata(parent), fs::symlink_metadata(entry)) else {
        return false;
    };
    e.file_type().is_dir() && e.dev() == p.dev() && !holds_a_mount(entry)
}

/// Removes the folder `dir` and everything in it, never through a mount: refused (an
/// error) when something is mounted at or inside it. Links inside are removed, not
/// followed. Its state entry is forgotten.
pub fn remove_tree(dir: &Path) -> io::Result<()> {
    if holds_a_mount(dir) {
        return Err(io::Error::other(format!(
            "a filesystem is mounted at or inside {}; unmount it, then remove the folder by hand",
            dir.display()
        )));
    }
    forget(dir);
    fs::remove_dir_all(dir)
}

fn create_parents(dir: &Path) -> Result<(), ClaimError> {
    match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => fs::create_dir_all(p).map_err(ClaimError::Io),
        None => Ok(()),
    }
}

fn write_marker(dir: &Path, purpose: &str, id: u64) -> io::Result<()> {
    let path: PathBuf = dir.join(MARKER);
    let mut f = File::options().write(true).create_new(true).open(&path)?;
    f.write_all(marker_text(purpose, id).as_bytes())?;
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

    /// Many bakeoffs claiming one new shared folder (the cache) at once all get it, and
    /// the marker left is one the state vouches for.
    #[test]
    fn a_shared_claim_raced_by_many_is_won_by_all() {
        let tmp = tempfile::tempdir().unwrap();
        for round in 0..20 {
            let dir = tmp.path().join(format!("cache-{round}"));
            let errors: Vec<String> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..8)
                    .map(|_| s.spawn(|| claim(&dir, "cache", &|_| false)))
                    .collect();
                hs.into_iter()
                    .filter_map(|h| h.join().unwrap().err().map(|e| e.to_string()))
                    .collect()
            });
            assert!(errors.is_empty(), "round {round}: {errors:?}");
            assert!(is_marked(&dir, "cache"));
        }
    }

    /// Issue 50: a marker is believed only when bakeoff's state recorded this very folder
    /// with the marker's id: planted markers (any id, any line ends, extra bytes), a copy
    /// of a real one in another folder, a hard link to a real one and a link are not.
    #[test]
    fn planted_markers_are_never_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        claim(&real, "cache", &|_| false).unwrap();
        assert!(is_marked(&real, "cache"));
        let good = fs::read(real.join(MARKER)).unwrap();
        let id = registered(&real, "cache").unwrap();
        let text = String::from_utf8(good.clone()).unwrap();
        let planted = [
            text.clone(),
            text.replace('\n', "\r\n"),
            format!("{text}extra"),
            format!("{text}\n"),
            text.replace("cache", "Cache"),
            marker_text("cache", id ^ 1),
            marker_text("cache", 0),
            "bakeoff cache\n".to_string(),
        ];
        for (i, p) in planted.iter().enumerate() {
            let user = tmp.path().join(format!("user-{i}"));
            fs::create_dir_all(user.join("photos")).unwrap();
            fs::write(user.join(MARKER), p).unwrap();
            assert!(!is_marked(&user, "cache"), "{p:?}");
            assert!(matches!(
                claim(&user, "cache", &|_| false),
                Err(ClaimError::Foreign(_))
            ));
            assert!(user.join("photos").is_dir());
        }
        // The real folder with its marker edited: no longer believed.
        for p in &planted[1..] {
            fs::write(real.join(MARKER), p).unwrap();
            assert!(!is_marked(&real, "cache"), "{p:?}");
        }
        fs::write(real.join(MARKER), &good).unwrap();
        assert!(is_marked(&real, "cache"));
        // A hard link to the real marker, here and elsewhere.
        let linked = tmp.path().join("linked");
        fs::create_dir(&linked).unwrap();
        fs::hard_link(real.join(MARKER), linked.join(MARKER)).unwrap();
        assert!(!is_marked(&linked, "cache"));
        assert!(!is_marked(&real, "cache"), "two links to one marker");
        fs::remove_file(linked.join(MARKER)).unwrap();
        assert!(is_marked(&real, "cache"));
        // A symbolic link as the marker.
        let sym = tmp.path().join("sym");
        fs::create_dir(&sym).unwrap();
        std::os::unix::fs::symlink(real.join(MARKER), sym.join(MARKER)).unwrap();
        assert!(!is_marked(&sym, "cache"));
        // The real folder moved away and a new one in its place: not ours.
        let moved = tmp.path().join("moved");
        fs::rename(&real, &moved).unwrap();
        assert!(!is_marked(&moved, "cache"));
        fs::create_dir(&real).unwrap();
        fs::write(real.join(MARKER), &good).unwrap();
        assert!(!is_marked(&real, "cache"));
        // An empty folder with a planted marker is simply claimed afresh.
        claim(&real, "cache", &|_| false).unwrap();
        assert!(is_marked(&real, "cache"));
        assert_ne!(fs::read(real.join(MARKER)).unwrap(), good);
    }

    /// Issue 50: new folders only where a user would keep them.
    #[test]
    fn folders_are_never_made_in_system_or_home_dot_folders() {
        for dir in [
            "/boot/efi/bakeoff",
            "/lost+found",
            "/lost+found/x",
            "/etc/bakeoff",
            "/usr/local/bakeoff",
            "/proc/x",
            "/sys/x",
            "/dev/shm",
            "/dev/x",
            "/var/lib/x",
            "/tmp/a/lost+found/b",
            "/usr/../etc/x",
        ] {
            let why = place_problem(Path::new(dir)).unwrap_or_else(|| panic!("{dir} passed"));
            assert!(!why.contains('\n'), "{why}");
            assert!(matches!(
                claim(Path::new(dir), "cache", &|_| false),
                Err(ClaimError::Place(_))
            ));
        }
        assert!(!Path::new("/boot/efi/bakeoff").exists());
        // A user's folder on a memory-backed filesystem is the user's (a sandbox on tmpfs).
        for dir in ["/dev/shm/x", "/run/user/0/x"] {
            assert_eq!(place_problem(Path::new(dir)), None, "{dir}");
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
        for dot in [
            ".ssh/bakeoff",
            ".config/x",
            ".cache/other",
            ".local/share/x",
            ".bakeoff",
        ] {
            let p = home.join(dot);
            assert!(place_problem(&p).is_some(), "{}", p.display());
        }
        for ok in [
            ".cache/bakeoff",
            ".cache/bakeoff/sandboxes",
            ".local/state/bakeoff/made",
            "results/x",
        ] {
            let p = home.join(ok);
            assert_eq!(place_problem(&p), None, "{}", p.display());
        }
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(place_problem(&tmp.path().join("a/b")), None);
    }

    /// Issue 50: a cleanup never removes through a mount, a bind mount of the same
    /// filesystem included (checked where this machine lets the test mount).
    #[test]
    fn a_cleanup_never_removes_through_a_bind_mount() {
        assert!(!mount_points().is_empty());
        assert_eq!(unescape(b"/a\\040b"), b"/a b");
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("keep"), "mine").unwrap();
        let sub = tmp.path().join("sub");
        fs::create_dir_all(sub.join("mnt")).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["--bind"])
            .arg(&victim)
            .arg(sub.join("mnt"))
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            eprintln!("skipped the bind mount: this machine does not let the test mount");
            return;
        }
        let at_top = tmp.path().join("top");
        fs::create_dir(&at_top).unwrap();
        let top_mounted = std::process::Command::new("mount")
            .args(["--bind"])
            .arg(&victim)
            .arg(&at_top)
            .status()
            .is_ok_and(|s| s.success());
        let inside = !is_plain_subfolder(tmp.path(), &sub);
        let at = !top_mounted || !is_plain_subfolder(tmp.path(), &at_top);
        let removed = remove_tree(&sub);
        let _ = std::process::Command::new("umount")
            .arg(sub.join("mnt"))
            .status();
        if top_mounted {
            let _ = std::process::Command::new("umount").arg(&at_top).status();
        }
        assert!(inside && at, "a bind mount was taken for a plain folder");
        assert!(removed.is_err());
        assert_eq!(fs::read_to_string(victim.join("keep")).unwrap(), "mine");
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
