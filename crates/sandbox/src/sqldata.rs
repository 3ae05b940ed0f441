//! What SQL servers share: the login a data directory carries, the unprivileged user the
//! server runs as when bakeoff is root, copying and owning data directories, the setup
//! commands that make one, and the lifecycle every SQL target shares ([`SqlServer`]).
//! The one-time initialization of a pristine data directory, which asks the target, is
//! `targets.rs`'s `init_data`.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// How long a SQL server may take to become ready (InnoDB recovery, 1000+ connections).
pub const SQL_READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// How long one readiness attempt may take.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(1500);
/// How long a SQL server may take to shut down cleanly before it is killed.
pub const SQL_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// sun_path is 108 bytes; a PostgreSQL-protocol socket file is `<dir>/.s.PGSQL.<port>`.
const MAX_PG_SOCKET_DIR: usize = 107 - ".s.PGSQL.65535".len() - 1;

/// The sandbox dir as the socket directory of a server speaking PostgreSQL's protocol
/// (PostgreSQL, SQLite's host), unless its path is too long for a unix socket (then the
/// server listens on TCP only).
pub fn pg_socket_dir(workdir: &Path) -> Option<PathBuf> {
    (workdir.as_os_str().len() <= MAX_PG_SOCKET_DIR).then(|| workdir.to_path_buf())
}

/// The file inside a data directory that holds its login (copies carry it along).
pub const LOGIN_FILE: &str = "bakeoff-login.json";

/// How a SQL workload logs in: user `bakeoff`, a random password, database `bakeoff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Login {
    pub user: String,
    pub password: String,
    pub database: String,
}

impl Login {
    /// What a client connects to with this login: the server at `addr` (its unix socket
    /// `socket` where it has one, though TCP is what it uses), speaking `dialect`.
    pub fn db(
        &self,
        dialect: bakeoff_sqlclient::Dialect,
        addr: std::net::SocketAddr,
        socket: Option<PathBuf>,
    ) -> bakeoff_sqlclient::Db {
        bakeoff_sqlclient::Db {
            dialect,
            addr,
            socket,
            user: self.user.clone(),
            password: self.password.clone(),
            database: self.database.clone(),
            via_socket: false,
        }
    }
}

/// Where a SQL sandbox's data directory comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    /// Copied into the sandbox dir at start (`cp -a --reflink=auto`), gone at stop: every
    /// run starts from the same bytes.
    Copy(PathBuf),
    /// Used where it is and kept at stop (to load data once into a prepared directory).
    InPlace(PathBuf),
}

impl DataSource {
    pub fn path(&self) -> &Path {
        match self {
            DataSource::Copy(p) | DataSource::InPlace(p) => p,
        }
    }
}

/// Reads the login stored in a data directory by `init_data`.
pub fn read_login(data_dir: &Path) -> Result<Login, String> {
    let path = data_dir.join(LOGIN_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {}: {e}; the data directory was not made by bakeoff's init_data",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is damaged (line {}, column {}: not the user and password bakeoff wrote); delete the prepared data folder it is in and run again, which makes it anew",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

/// The user a SQL server runs as: None when bakeoff is not root (the server runs as us);
/// else `bakeoff` if that user exists, else `nobody`.
pub fn server_user() -> Option<(u32, u32, String)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    for name in ["bakeoff", "nobody"] {
        let c = std::ffi::CString::new(name).ok()?;
        // SAFETY: getpwnam returns a pointer to static storage or null; we copy out at once.
        let pw = unsafe { libc::getpwnam(c.as_ptr()) };
        if !pw.is_null() {
            // SAFETY: pw is non-null and points to a valid passwd entry.
            let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
            return Some((uid, gid, name.to_string()));
        }
    }
    None
}

/// Makes `cmd` run as the server user (set before exec, so the parent-death signal the
/// spawner arms afterwards survives).
pub fn as_server_user(cmd: &mut Command) {
    if let Some((uid, gid, _)) = server_user() {
        use std::os::unix::process::CommandExt;
        // std drops root's supplementary groups itself when it switches the uid.
        cmd.uid(uid).gid(gid);
        // Our TMPDIR may be a folder only root can write (root's own, mode 0700): the
        // server's temporary files (MariaDB's install and start, MySQL's tmpdir) then
        // failed with "Permission denied". Such a TMPDIR is replaced by /tmp.
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            if !open_to_all(Path::new(&tmp)) {
                cmd.env("TMPDIR", "/tmp");
            }
        }
    }
}

/// Whether every user may create files in `dir`: it is a folder that others may write
/// and enter, below folders that others may enter.
fn open_to_all(dir: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(dir) else {
        return false;
    };
    if !meta.is_dir() || meta.permissions().mode() & 0o003 != 0o003 {
        return false;
    }
    dir.ancestors()
        .skip(1)
        .all(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// Gives `path` (recursively) to the server user, when there is one.
pub fn give_to_server_user(path: &Path) -> Result<(), String> {
    let Some((uid, gid, _)) = server_user() else {
        return Ok(());
    };
    let mut chown = Command::new("chown");
    chown.arg("-R").arg(format!("{uid}:{gid}")).arg(path);
    run_tool(chown, || format!("chown of {} failed", path.display()))
}

/// Runs a file tool (`chown`, `cp`) to its end: Err when it cannot run, or with `failed`
/// and what it wrote to stderr when it fails.
fn run_tool(mut cmd: Command, failed: impl FnOnce() -> String) -> Result<(), String> {
    let tool = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {tool}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            failed(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Checks that the server user can reach `dir` (every parent searchable by others).
pub fn check_reachable(dir: &Path) -> Result<(), String> {
    if server_user().is_none() {
        return Ok(());
    }
    let mut p = dir.to_path_buf();
    while let Some(parent) = p.parent().map(Path::to_path_buf) {
        if let Ok(meta) = std::fs::metadata(&parent) {
            if meta.permissions().mode() & 0o001 == 0 {
                return Err(format!(
                    "{} is not searchable by other users (mode {:o}), so the server's unprivileged user cannot reach {}; chmod o+x it or choose another --sandbox-dir",
                    parent.display(),
                    meta.permissions().mode() & 0o777,
                    dir.display()
                ));
            }
        }
        p = parent;
    }
    Ok(())
}

/// `cp -a --reflink=auto FROM TO`: owner, modes and times kept.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let mut cp = Command::new("cp");
    cp.args(["-a", "--reflink=auto"]).arg(from).arg(to);
    run_tool(cp, || {
        format!("copying {} to {} failed", from.display(), to.display())
    })
}

/// 20 random letters and digits from the kernel's generator.
pub fn random_password() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut bytes = [0u8; 20];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !ok {
        // Never reached on Linux; still unpredictable enough for a loopback sandbox.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (t >> (i % 16 * 8)) as u8 ^ (std::process::id() as u8).wrapping_mul(i as u8);
        }
    }
    bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// A program beside `binary` (same dir, `../bin`, `../scripts`), else on PATH.
pub fn companion(binary: &Path, name: &str) -> Option<PathBuf> {
    let dir = binary.parent()?;
    let candidates = [
        dir.join(name),
        dir.join("../bin").join(name),
        dir.join("../scripts").join(name),
    ];
    if let Some(p) = candidates
        .iter()
        .find(|p| bakeoff_os::path::is_executable(p))
    {
        return Some(p.clone());
    }
    bakeoff_os::path::which(name)
}

/// Runs a setup command to completion (stdin from `input`), with its output in the error.
pub fn run_setup(mut cmd: Command, input: Option<&str>, what: &str) -> Result<(), String> {
    use std::io::Write;
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {what}: {e}"))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{what} failed: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Err(format!(
        "{what} failed ({}): {}",
        out.status,
        setup_reason(&text)
    ))
}

/// What a failed setup command said: its first error lines when it marked any (a
/// server's `[ERROR]` or `ERROR:` lines, the reason, not the shutdown that follows),
/// else its last lines.
fn setup_reason(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            (l.contains("[ERROR]") || l.trim_start().starts_with("ERROR"))
                && !l.contains("] Aborting")
        })
        .take(2)
        .collect();
    if errors.is_empty() {
        lines[lines.len().saturating_sub(4)..].join(" | ")
    } else {
        errors.join(" | ")
    }
}

/// The options a SQL server gets, as `key=value` strings in a stable order.
pub fn option_lines(options: &BTreeMap<String, String>) -> Vec<String> {
    // A value is one line whatever it holds (the plan refuses line breaks; `\n` is
    // MariaDB's own escape for one inside a value).
    options
        .iter()
        .map(|(k, v)| format!("{k} = {}", v.replace('\n', "\\n").replace('\r', "\\r")))
        .collect()
}

/// One readiness attempt of a SQL server: log in with `login` over `dialect`'s protocol
/// and run `SELECT 1` (bakeoff's own lean client, as the workloads use).
pub(crate) fn ping(
    addr: std::net::SocketAddr,
    login: &Login,
    dialect: bakeoff_sqlclient::Dialect,
) -> std::io::Result<bool> {
    bakeoff_sqlclient::ping(&login.db(dialect, addr, None), PROBE_TIMEOUT)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tmpdir_the_server_user_cannot_write_is_not_passed_on() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        let closed = d.path().join("closed");
        std::fs::create_dir(&open).unwrap();
        std::fs::create_dir(&closed).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(super::open_to_all(&open));
        assert!(!super::open_to_all(&closed));
        assert!(!super::open_to_all(&d.path().join("missing")));
        // An open folder below one others cannot enter is closed too.
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(!super::open_to_all(&open));
    }

    #[test]
    fn a_setup_failure_quotes_the_servers_error_not_its_shutdown() {
        let log = "261128 17:17:28 InnoDB: Completed initialization of buffer pool\n\
                   ERROR: 1290  The MySQL server is running with the --skip-grant-tables option\n\
                   261128 17:17:33 [ERROR] Aborting\n\n\
                   261128 17:17:33  InnoDB: Starting shutdown...\n\
                   261128 17:17:34 [Note] mysqld: Shutdown complete\n";
        assert_eq!(
            super::setup_reason(log),
            "ERROR: 1290  The MySQL server is running with the --skip-grant-tables option"
        );
        assert_eq!(super::setup_reason("a\nb\n\nc\nd\ne\n"), "b | c | d | e");
    }
}

/// What every SQL target (MariaDB, MySQL, PostgreSQL) holds and does alike: its server
/// options, the prepared data a run starts from, the login; where the data directory is,
/// the sandbox made ready for the server's user, and the readiness probe.
#[derive(Debug, Clone, Default)]
pub struct SqlServer {
    pub options: BTreeMap<String, String>,
    pub data: Option<DataSource>,
    pub login: Option<Login>,
}

impl SqlServer {
    /// The server's data directory: a prepared dir used in place, else the sandbox's copy.
    pub(crate) fn data_dir(&self, workdir: &Path) -> PathBuf {
        match &self.data {
            Some(DataSource::InPlace(p)) => p.clone(),
            _ => workdir.join("data"),
        }
    }

    /// The sandbox made ready: reachable by the server's user, the prepared data copied
    /// in, the folders `dirs` (under the sandbox) made, all given to the server's user.
    pub(crate) fn init(&self, workdir: &Path, dirs: &[&str]) -> Result<(), String> {
        check_reachable(workdir)?;
        if let Some(DataSource::Copy(src)) = &self.data {
            copy_tree(src, &workdir.join("data"))?;
        }
        for d in dirs {
            let dir = workdir.join(d);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        give_to_server_user(workdir)
    }

    /// One readiness attempt over `dialect` with the login (none yet: not ready).
    pub(crate) fn probe(
        &self,
        addr: std::net::SocketAddr,
        dialect: bakeoff_sqlclient::Dialect,
    ) -> std::io::Result<bool> {
        match &self.login {
            Some(login) => ping(addr, login, dialect),
            None => Ok(false),
        }
    }
}
