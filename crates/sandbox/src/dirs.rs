//! The sandbox root (a private dir of this user) and the per-sandbox work dirs in it, plus
//! the log-file helpers: the tail of a log for error messages and moving logs out.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::SandboxError;

/// Bytes read from the end of a log for the error tail.
const TAIL_BYTES: u64 = 4096;
/// Lines kept in an error tail.
const TAIL_LINES: usize = 3;
/// Characters kept in an error tail.
const TAIL_CHARS: usize = 400;

static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

/// The longest path a unix socket can be bound at: sun_path holds 108 bytes with the NUL.
pub const MAX_SOCKET_PATH: usize = 107;

/// `workdir/name` when a unix socket fits there, else None: under a deep sandbox root (a
/// user's `--sandbox-dir`) the path is too long for sun_path, and a server told to bind it
/// refuses to start ("socket file path is too long").
pub fn socket_in(workdir: &Path, name: &str) -> Option<PathBuf> {
    let p = workdir.join(name);
    (p.as_os_str().len() <= MAX_SOCKET_PATH).then_some(p)
}

/// `workdir/name` where a unix socket fits, else `/tmp/bakeoff-<hash of workdir>-<name>`:
/// for a server that always binds a socket (MySQL and MariaDB, whose compiled-in default
/// is shared by every server of the machine). The hash is FNV-1a, the same in every
/// process, so the server's configuration and its clients name one file.
pub fn socket_or_short(workdir: &Path, name: &str) -> PathBuf {
    socket_in(workdir, name).unwrap_or_else(|| {
        let hash = workdir
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            });
        PathBuf::from(format!("/tmp/bakeoff-{hash:016x}-{name}"))
    })
}

/// The default sandbox root: `/var/tmp/bakeoff-$UID`, on disk where the system keeps
/// /var/tmp (never `$XDG_RUNTIME_DIR` or a /tmp that may be a RAM-backed tmpfs: there
/// fsync costs nothing and no read touches a disk, so durability settings and I/O-bound
/// loads would compare nothing). Short, so unix socket paths under it fit; reachable by
/// the unprivileged server user (/var/tmp is world-searchable).
pub fn default_root() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    PathBuf::from("/var/tmp").join(format!("bakeoff-{uid}"))
}

/// The filesystem a folder is on: its type as the kernel names it ("ext4", "xfs",
/// "tmpfs", "overlay"), the device or source it was mounted from, where it is mounted,
/// and the bytes free to this user there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filesystem {
    pub fs_type: String,
    pub device: String,
    pub mount_point: PathBuf,
    pub free_bytes: u64,
}

impl Filesystem {
    /// Whether its files live in memory only (fsync costs nothing, reads touch no disk).
    pub fn in_memory(&self) -> bool {
        matches!(self.fs_type.as_str(), "tmpfs" | "ramfs")
    }
}

/// The filesystem `dir` is on (its nearest existing ancestor's when it does not exist
/// yet), from /proc/self/mountinfo and statvfs. None where neither can be read.
pub fn filesystem_of(dir: &Path) -> Option<Filesystem> {
    let mut at = dir.to_path_buf();
    while !at.exists() {
        at = at.parent()?.to_path_buf();
    }
    let real = fs::canonicalize(&at).ok()?;
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let (mount_point, fs_type, device) = mount_of(&real, &mounts)?;
    Some(Filesystem {
        fs_type,
        device,
        mount_point,
        free_bytes: free_bytes(&real).unwrap_or(0),
    })
}

/// The mount holding `path` in a mountinfo text: the longest mount point that contains
/// it (the later line when two are stacked), with its type and source.
fn mount_of(path: &Path, mountinfo: &str) -> Option<(PathBuf, String, String)> {
    let mut best: Option<(PathBuf, String, String)> = None;
    for line in mountinfo.lines() {
        let (head, tail) = line.split_once(" - ")?;
        let mount_point = PathBuf::from(bakeoff_os::file::unescape_mountinfo(
            head.split(' ').nth(4)?,
        ));
        let mut t = tail.split(' ');
        let (fs_type, device) = (
            t.next()?.to_string(),
            bakeoff_os::file::unescape_mountinfo(t.next().unwrap_or("")),
        );
        if !path.starts_with(&mount_point) {
            continue;
        }
        let longer = best
            .as_ref()
            .is_none_or(|b| mount_point.as_os_str().len() >= b.0.as_os_str().len());
        if longer {
            best = Some((mount_point, fs_type, device));
        }
    }
    best
}

fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: c is a valid C string and st a valid out-parameter.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some(st.f_bavail as u64 * st.f_frsize as u64)
    }
}

/// Whether `root` could serve as the sandbox root, without creating anything: a directory
/// of this user that others cannot write and this user can, or (when it does not exist
/// yet) one that could be made in its nearest existing ancestor. Err is the reason, said
/// of the path (e.g. "/x is a file, not a folder"), for a message before anything starts.
pub fn check_root(root: &Path) -> Result<(), String> {
    let mut at = root.to_path_buf();
    loop {
        match fs::symlink_metadata(&at) {
            Ok(_) => break,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                match at.parent() {
                    Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
                    _ => return Ok(()),
                }
            }
            Err(e) => return Err(format!("{} cannot be inspected: {e}", at.display())),
        }
    }
    let exists = at == root;
    refuse_system_folder(root, &at)?;
    if let Some(why) = bakeoff_os::own::place_problem(root) {
        return Err(why);
    }
    let meta = fs::metadata(&at).map_err(|e| format!("{}: {e}", at.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is a file, not a folder", at.display()));
    }
    if exists {
        // The same rules prepare_root applies when the first sandbox starts.
        let own = fs::symlink_metadata(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        if !own.is_dir() {
            return Err(format!("{} is a symlink, not a folder", at.display()));
        }
        // SAFETY: geteuid has no preconditions.
        if own.uid() != unsafe { libc::geteuid() } {
            return Err(format!("{} is owned by another user", at.display()));
        }
        if own.mode() & 0o002 != 0 {
            return Err(format!("{} is writable by every user", at.display()));
        }
        if !bakeoff_os::own::is_marked(&at, ROOT_PURPOSE) {
            if let Some(name) = bakeoff_os::own::foreign_entry(&at, &made_by_bakeoff) {
                return Err(format!(
                    "{} holds {name:?} and other files bakeoff did not make (bakeoff cleans up its sandbox folder, so it only takes an empty folder, a new one, or one it made)",
                    at.display()
                ));
            }
        }
    }
    if !writable(&at) {
        return Err(format!("{} is not writable by this user", at.display()));
    }
    Ok(())
}

/// What the sandbox root's marker says the folder is for.
pub(crate) const ROOT_PURPOSE: &str = "sandbox root";

/// Folders no sandbox root may be (or lie in directly): the system's own.
const SYSTEM_FOLDERS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/local",
    "/var",
    "/var/tmp",
    "/var/lib",
    "/var/log",
];

/// Filesystems that hold no user data and where nothing may be created or removed.
const PSEUDO_FILESYSTEMS: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "configfs",
    "bpf",
    "pstore",
    "efivarfs",
    "fusectl",
    "mqueue",
    "hugetlbfs",
    "binfmt_misc",
    "autofs",
];

/// A system folder, the user's home, or a folder on /proc, /sys and the like is never a
/// sandbox root: its entries are not bakeoff's to clean up. `existing` is the nearest
/// part of `root` that exists (the root itself when it does).
fn refuse_system_folder(root: &Path, existing: &Path) -> Result<(), String> {
    let real = fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    let real_root = match root.strip_prefix(existing) {
        Ok(rest) => real.join(rest),
        Err(_) => real.clone(),
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let is_system = SYSTEM_FOLDERS.iter().any(|s| real_root == Path::new(s))
        || home.is_some_and(|h| fs::canonicalize(&h).unwrap_or(h) == real_root);
    if is_system {
        return Err(format!(
            "{} is a system folder or a home folder",
            real_root.display()
        ));
    }
    if let Some(fs) = filesystem_of(existing) {
        if PSEUDO_FILESYSTEMS.contains(&fs.fs_type.as_str()) {
            return Err(format!(
                "{} is on the kernel's {} filesystem, not on a disk",
                real_root.display(),
                fs.fs_type
            ));
        }
    }
    Ok(())
}

/// What the prepared data folders (`data-<pid>`) in a sandbox root are recorded as in
/// bakeoff's state.
pub const DATA_PURPOSE: &str = "sandbox data";

/// An entry of bakeoff's layout in a sandbox root: a sandbox dir holding a record, or a
/// `data-<pid>` folder. Enough to take a root again whose marker bakeoff's state does not
/// vouch for (one an earlier bakeoff made, with sandboxes of runs still going), never a
/// proof that bakeoff made the entry: the cleanup removes only what the state recorded
/// (`Record::is_ours`, [`DATA_PURPOSE`]).
fn made_by_bakeoff(e: &fs::DirEntry) -> bool {
    let name = e.file_name();
    let name = name.to_string_lossy();
    let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
    is_dir
        && (e.path().join(crate::meta::RECORD_FILE).is_file()
            || name
                .strip_prefix("data-")
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
}

/// Creates the sandbox root when absent and marks it as bakeoff's; refuses a folder that
/// [`check_root`] refuses (a user's files, a system folder). Only a marked root is ever
/// cleaned up ([`crate::reap_stale`]).
pub fn claim_root(root: &Path) -> Result<(), String> {
    check_root(root)?;
    create_private(root)
        .map_err(|e| format!("cannot create the sandbox folder {}: {e}", root.display()))?;
    bakeoff_os::own::claim(root, ROOT_PURPOSE, &made_by_bakeoff)
        .map_err(|e| format!("cannot use {} as the sandbox folder: {e}", root.display()))
}

/// Creates `dir` with mode 0700 when absent; the folders above it that are missing get
/// the usual mode (a server's own user must pass through them to its data, and a path
/// such as `a/../sandboxes` makes `a` on the way).
fn create_private(dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// Whether `root` is a sandbox root bakeoff made (it carries the marker).
pub fn is_our_root(root: &Path) -> bool {
    bakeoff_os::own::is_marked(root, ROOT_PURPOSE)
}

/// access(2) for write and search: false on a read-only filesystem too, even for root.
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid C string.
    unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

/// Creates `root` (mode 0700) if needed and checks that it is a real dir of this user, so
/// nobody else can plant files or symlinks in it (it may live in /tmp).
pub(crate) fn prepare_root(root: &Path) -> Result<(), SandboxError> {
    if let Some(why) = bakeoff_os::own::place_problem(root) {
        return Err(SandboxError::UnsafeRoot {
            path: root.to_path_buf(),
            reason: why,
        });
    }
    create_private(root).map_err(|e| SandboxError::io("create sandbox root", root, e))?;
    let meta = fs::symlink_metadata(root)
        .map_err(|e| SandboxError::io("inspect sandbox root", root, e))?;
    let unsafe_root = |reason: &str| SandboxError::UnsafeRoot {
        path: root.to_path_buf(),
        reason: reason.to_string(),
    };
    if !meta.is_dir() {
        return Err(unsafe_root("not a directory (or a symlink)"));
    }
    // SAFETY: geteuid has no preconditions.
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(unsafe_root("owned by another user"));
    }
    if meta.mode() & 0o002 != 0 {
        return Err(unsafe_root("writable by every user"));
    }
    if !is_our_root(root) {
        bakeoff_os::own::claim(root, ROOT_PURPOSE, &made_by_bakeoff)
            .map_err(|e| unsafe_root(&e.to_string()))?;
    }
    Ok(())
}

/// Keeps `[A-Za-z0-9._-]`, maps the rest to `_`, at most 48 chars; never empty.
pub(crate) fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .take(48)
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "sandbox".to_string()
    } else {
        s
    }
}

/// Creates a fresh work dir `<root>/<name>-<pid>-<seq>` (mode 0700).
pub(crate) fn create_workdir(root: &Path, name: &str) -> Result<PathBuf, SandboxError> {
    let base = sanitize(name);
    let pid = std::process::id();
    loop {
        let seq = NEXT_SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("{base}-{pid}-{seq}"));
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            // Left by an earlier process with the same pid: take the next number.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(SandboxError::io("create sandbox dir", dir, e)),
        }
    }
}

/// The last few non-empty lines of `stderr` (or, if it has none, of `stdout`), joined
/// into one line with " | ".
pub(crate) fn log_tail(stderr: &Path, stdout: &Path) -> String {
    let tail = tail_lines(stderr);
    let tail = if tail.is_empty() {
        tail_lines(stdout)
    } else {
        tail
    };
    if tail.is_empty() {
        return "no output".to_string();
    }
    let joined = tail.join(" | ");
    match joined.char_indices().nth(TAIL_CHARS) {
        Some((cut, _)) => format!("{}...", &joined[..cut]),
        None => joined,
    }
}

fn tail_lines(path: &Path) -> Vec<String> {
    let mut text = Vec::new();
    if let Ok(mut f) = fs::File::open(path) {
        let len = f.metadata().map_or(0, |m| m.len());
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)));
        let _ = f.read_to_end(&mut text);
    }
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec()
}

/// Moves `from` to `to` (rename, or copy + remove across file systems). A missing `from`
/// is not an error.
pub(crate) fn move_file(from: &Path, to: &Path) -> Result<(), SandboxError> {
    if !from.exists() {
        return Ok(());
    }
    if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| SandboxError::io("create log dir", parent, e))?;
    }
    if fs::rename(from, to).is_ok() {
        return Ok(());
    }
    fs::copy(from, to).map_err(|e| SandboxError::io("copy log to", to, e))?;
    fs::remove_file(from).map_err(|e| SandboxError::io("remove log", from, e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_socket_under_a_deep_root_goes_where_it_fits() {
        let short = Path::new("/var/tmp/bakeoff-0/a-1");
        assert_eq!(
            super::socket_in(short, "redis.sock"),
            Some(short.join("redis.sock"))
        );
        assert_eq!(
            super::socket_or_short(short, "mysqld.sock"),
            short.join("mysqld.sock")
        );
        let deep = PathBuf::from(format!(
            "/home/{}/sandboxes/mysql-8.0-prepare-1-2",
            "x".repeat(80)
        ));
        assert_eq!(super::socket_in(&deep, "redis.sock"), None);
        let other = deep.with_file_name("mysql-8.0-prepare-1-3");
        let (a, b) = (
            super::socket_or_short(&deep, "mysqld.sock"),
            super::socket_or_short(&other, "mysqld.sock"),
        );
        assert!(
            a.starts_with("/tmp") && a.as_os_str().len() <= super::MAX_SOCKET_PATH,
            "{a:?}"
        );
        assert_ne!(a, b, "two sandboxes, two sockets");
        assert_eq!(
            a,
            super::socket_or_short(&deep, "mysqld.sock"),
            "the same each time"
        );
    }

    #[test]
    fn the_mount_holding_a_path_is_the_longest_that_contains_it() {
        let info = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 0:25 / /run rw,nosuid shared:5 - tmpfs tmpfs rw,size=2400k\n\
                    31 30 0:26 / /run/user/0 rw shared:6 - tmpfs tmpfs rw\n\
                    40 22 0:30 / /srv/my\\040data rw - xfs /dev/sdb1 rw\n";
        let at =
            |p: &str| mount_of(Path::new(p), info).map(|m| (m.0.display().to_string(), m.1, m.2));
        for (path, (mount, fs, device)) in [
            ("/var/tmp/bakeoff-0", ("/", "ext4", "/dev/vda")),
            ("/run/user/0/bakeoff", ("/run/user/0", "tmpfs", "tmpfs")),
            ("/runx", ("/", "ext4", "/dev/vda")),
            ("/srv/my data/x", ("/srv/my data", "xfs", "/dev/sdb1")),
        ] {
            assert_eq!(
                at(path),
                Some((mount.into(), fs.into(), device.into())),
                "{path}"
            );
        }
    }

    #[test]
    fn regression_a_sandbox_root_that_is_a_file_is_found_before_anything_starts() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = check_root(&file).unwrap_err();
        assert!(e.contains("is a file, not a folder"), "{e}");
        // Below a file: the folder could never be made.
        let e = check_root(&file.join("sandboxes")).unwrap_err();
        assert!(e.contains(&format!("{} is a file", file.display())), "{e}");
        // Absent below a folder of ours, or an empty folder of ours: fine.
        assert_eq!(check_root(&tmp.path().join("a/b")), Ok(()));
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(check_root(&empty), Ok(()));
        use std::os::unix::fs::PermissionsExt;
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_root(&open).unwrap_err();
        assert!(e.contains("writable by every user"), "{e}");
    }

    #[test]
    fn this_machines_folders_have_a_filesystem() {
        let fs = filesystem_of(Path::new("/var/tmp/no-such-folder/below")).expect("a filesystem");
        assert!(!fs.fs_type.is_empty());
        assert!(fs.free_bytes > 0);
        let shm = filesystem_of(Path::new("/dev/shm"));
        assert!(shm.as_ref().is_none_or(|f| f.in_memory()), "{shm:?}");
    }
    use super::*;

    #[test]
    fn sanitizes_names() {
        assert_eq!(sanitize("gcc-O2"), "gcc-O2");
        assert_eq!(sanitize("clang -O3/flto"), "clang_-O3_flto");
        assert_eq!(sanitize("../x"), "_x");
        assert_eq!(sanitize(""), "sandbox");
        assert_eq!(sanitize(&"a".repeat(100)).len(), 48);
    }

    #[test]
    fn tails_stderr_then_stdout() {
        let dir = std::env::temp_dir().join(format!("bakeoff-tail-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (err, out) = (dir.join("e"), dir.join("o"));
        fs::write(&out, "hello\n").unwrap();
        assert_eq!(log_tail(&err, &out), "hello");
        fs::write(&err, "a\nb\n\nc\nd\n").unwrap();
        assert_eq!(log_tail(&err, &out), "b | c | d");
        fs::write(&err, "x".repeat(1000)).unwrap();
        assert!(log_tail(&err, &out).ends_with("..."));
        fs::write(&err, "").unwrap();
        fs::remove_file(&out).unwrap();
        assert_eq!(log_tail(&err, &out), "no output");
        move_file(&err, &dir.join("sub/moved")).unwrap();
        assert!(dir.join("sub/moved").exists() && !err.exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn root_checks() {
        let root = std::env::temp_dir().join(format!("bakeoff-root-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        prepare_root(&root).unwrap();
        let a = create_workdir(&root, "gcc O2").unwrap();
        let b = create_workdir(&root, "gcc O2").unwrap();
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("gcc_O2-"));
        let file = root.join("file");
        fs::write(&file, "").unwrap();
        assert!(matches!(
            prepare_root(&file),
            Err(SandboxError::UnsafeRoot { .. })
        ));
        fs::remove_dir_all(&root).unwrap();
        assert!(default_root().is_absolute());
    }
}
