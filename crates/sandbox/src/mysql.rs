//! The MySQL target (Oracle's `mysqld`, 5.5 to 8.x): a my.cnf of its own in the sandbox
//! dir (port, 127.0.0.1, socket, data directory, the X plugin off, file imports kept in
//! the sandbox, then the experiment's options), `mysqld --defaults-file=...`, run as the
//! unprivileged server user when bakeoff is root; ready when user `bakeoff` logs in over
//! TCP with the server's default authentication (caching_sha2_password from 8.0) and
//! `SELECT 1` answers.
//!
//! Its data directory is made as each version makes it: `mysqld --initialize-insecure`
//! with an init file that creates the login from 5.7, `mysql_install_db` and a
//! `--bootstrap` run before that. A tree that is not the system's (a distribution's
//! binaries) gets its `basedir`, `lc-messages-dir` and `plugin-dir`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kind::TargetKind;
use crate::mysqld::{login_sql, major_minor, Mysqld};
use crate::sqldata::{self, Login, SqlServer};
use crate::target::{layout, version_line, Ask};
use bakeoff_build::dist::Layout;
use bakeoff_sqlclient::Dialect;

/// Settings the sandbox owns in MySQL beyond the family's, in its `-` spelling: (name,
/// what it sets).
const OWNED: &[(&str, &str)] = &[
    ("mysqlx", "the X protocol listener"),
    ("mysqlx-port", "the X protocol listener"),
    ("mysqlx-bind-address", "the X protocol listener"),
    ("mysqlx-socket", "the X protocol listener"),
    ("admin-address", "the administrative listener"),
    ("admin-port", "the administrative listener"),
];

/// Oracle's MySQL `mysqld`.
#[derive(Debug, Clone, Default)]
pub struct Mysql {
    pub sql: SqlServer,
}

impl Mysqld for Mysql {
    const KIND: TargetKind = TargetKind::Mysql;
    const DIALECT: Dialect = Dialect::Mysql;
    const OWNED: &'static [(&'static str, &'static str)] = OWNED;
    const FORMAT_OPTIONS: &'static [&'static str] = &["innodb_page_size", "lower_case_table_names"];
    /// `mysqld`; no helper is required (8.0 initializes itself; 5.5's MXJ archive ships a
    /// ready data directory instead of `mysql_install_db`).
    const LAYOUT: Layout = layout(&["mysqld"], &[], &["--version"]);
    const DIRS: &'static [&'static str] = &[crate::mysqld::FILES];

    fn sql_server(&self) -> &SqlServer {
        &self.sql
    }

    fn refusal(&self, ask: Ask) -> Option<String> {
        matches!(ask, Ask::Lto | Ask::Pgo | Ask::MakeArgs | Ask::Sanitize).then(|| {
            "MySQL's source is not reachable here: a mysql variant is an installed binary or a dist, not a build"
                .into()
        })
    }

    /// MariaDB's server (its version string says `-MariaDB`) is not MySQL's.
    fn other_server(&self, binary: &Path) -> Option<String> {
        crate::target::file_holds(binary, b"-MariaDB").then(|| {
            "is MariaDB's server, not MySQL's; use [target] kind = \"mariadb\" for it".into()
        })
    }

    fn make_data(&self, binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
        init(binary, dest, login)
    }

    fn group(&self, _binary: &Path) -> &'static str {
        "mysqld"
    }

    fn tree_settings(&self, binary: &Path) -> Option<String> {
        tree_settings(binary)
    }

    /// The X plugin off (`loose-` for what older versions do not know: the X plugin
    /// came with 5.7).
    fn extra_settings(&self, _binary: &Path, _workdir: &Path) -> String {
        "loose-mysqlx = OFF\n".into()
    }
}

/// For a server outside /usr (a distribution's tree): where its error messages and
/// plugins are. Trees put `errmsg.sys` in `share/english/` or `share/mysql/english/`.
fn tree_settings(binary: &Path) -> Option<String> {
    let base = base_of(binary)?;
    let messages = find_near(&base, &|d| d.join("english/errmsg.sys").is_file())?;
    let mut s = format!(
        "basedir = {}\nlc-messages-dir = {}\n",
        base.display(),
        messages.display()
    );
    let plugins = base.join("lib/plugin");
    if plugins.is_dir() {
        s.push_str(&format!("plugin-dir = {}\n", plugins.display()));
    }
    Some(s)
}

/// The installation a binary belongs to (`<base>/bin/mysqld`, `<base>/sbin/mysqld`, or
/// a flat `<base>/mysqld`); None for the system's own /usr.
fn base_of(binary: &Path) -> Option<PathBuf> {
    let dir = binary.parent()?;
    let base = match dir.file_name().and_then(|n| n.to_str()) {
        Some("bin" | "sbin" | "libexec") => dir.parent()?.to_path_buf(),
        _ => dir.to_path_buf(),
    };
    (base != Path::new("/usr")).then_some(base)
}

/// The first folder at or below `base` or its parent (three levels down, links never
/// followed) that `wanted` accepts: where a distribution keeps what the binary needs
/// beside it (`share/english/errmsg.sys`; MySQL 5.5's ready data directory, which the
/// MXJ archive ships as `data_dir.jar` next to the platform folders).
fn find_near(base: &Path, wanted: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    fn walk(dir: &Path, depth: u32, wanted: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
        if wanted(dir) {
            return Some(dir.to_path_buf());
        }
        if depth == 0 {
            return None;
        }
        let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .take(256)
            .collect();
        subs.sort();
        subs.iter().find_map(|d| walk(d, depth - 1, wanted))
    }
    walk(base, 3, wanted).or_else(|| walk(base.parent()?, 3, wanted))
}

/// The data directory at `dest` as the version makes one, then the login in it.
pub(crate) fn init(binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
    let line = version_line(binary)
        .ok_or_else(|| format!("{} --version printed nothing", binary.display()))?;
    if line.contains("MariaDB") {
        return Err(format!(
            "{} is MariaDB ({}); use kind = \"mariadb\" for it",
            binary.display(),
            line.trim()
        ));
    }
    let (major, minor) =
        major_minor(&line).ok_or_else(|| format!("cannot read a version in {:?}", line.trim()))?;
    let parent = dest.parent().unwrap_or(Path::new("/"));
    let base = base_of(binary);
    let tree: Vec<String> = tree_settings(binary)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(" = ").unwrap_or((l, ""));
            format!("--{k}={v}")
        })
        .collect();
    let user: Vec<String> = sqldata::server_user()
        .map(|(_, _, u)| vec![format!("--user={u}")])
        .unwrap_or_default();
    if (major, minor) >= (5, 7) {
        // The init file runs once the system tables exist; it must be readable by the
        // server's user.
        let file = parent.join(format!(
            ".{}-init.sql",
            dest.file_name().unwrap_or_default().to_string_lossy()
        ));
        std::fs::write(&file, login_sql(login))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let _ = sqldata::give_to_server_user(&file);
        let mut cmd = Command::new(binary);
        cmd.arg("--no-defaults")
            .args(&tree)
            .arg(format!("--datadir={}", dest.display()))
            .arg("--initialize-insecure")
            .arg(format!("--init-file={}", file.display()))
            .args(&user);
        let made = sqldata::run_setup(cmd, None, "mysqld --initialize-insecure");
        let _ = std::fs::remove_file(&file);
        return made;
    }
    // Before 5.7: the distribution's ready data directory where it ships one, else
    // mysql_install_db.
    let ready = base
        .as_deref()
        .and_then(|b| find_near(b, &|d| d.join("mysql/user.frm").is_file()));
    if let Some(ready) = ready {
        sqldata::copy_tree(&ready, dest)?;
        sqldata::give_to_server_user(dest)?;
    } else {
        let install = sqldata::companion(binary, "mysql_install_db").ok_or(
            "neither a ready data directory nor mysql_install_db beside the server (MySQL before 5.7 needs one)",
        )?;
        std::fs::create_dir_all(dest)
            .map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
        sqldata::give_to_server_user(dest)?;
        let mut cmd = Command::new(&install);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", dest.display()))
            .args(&user);
        if let Some(b) = &base {
            cmd.arg(format!("--basedir={}", b.display()));
        }
        sqldata::run_setup(cmd, None, "mysql_install_db")?;
    }
    let mut boot = Command::new(binary);
    boot.arg("--no-defaults")
        .args(&tree)
        .arg(format!("--datadir={}", dest.display()))
        .args(["--bootstrap", "--skip-networking"])
        .args(&user);
    sqldata::run_setup(boot, Some(&login_sql(login)), "mysqld --bootstrap")?;
    if (major, minor) < (5, 6) {
        // Before 5.6 InnoDB refuses redo logs of another size than the server's
        // `innodb_log_file_size` (the engine is then unknown and the server stops), and the
        // bootstrap made them at the default size. After its clean shutdown they can go:
        // the server makes them anew at the size it is given.
        drop_redo_logs(dest)?;
    }
    Ok(())
}

/// Removes InnoDB's redo logs (`ib_logfile*`) from a cleanly shut down data directory.
fn drop_redo_logs(dest: &Path) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dest).map_err(|e| format!("cannot read {}: {e}", dest.display()))?;
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("ib_logfile") {
            std::fs::remove_file(e.path())
                .map_err(|err| format!("cannot remove {}: {err}", e.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mysqld::file_version;
    use crate::target::Target;

    #[test]
    fn versions_and_trees() {
        let line = "/x/bin/mysqld  Ver 8.0.15 for linux-glibc2.12 on x86_64 (MySQL Community Server - GPL)";
        assert_eq!(file_version(line).as_deref(), Some("8.0"));
        assert_eq!(major_minor(line), Some((8, 0)));
        assert_eq!(
            major_minor("mysqld  Ver 5.5.9 for linux2.6 on x86_64 (MySQL Community Server (GPL))"),
            Some((5, 5))
        );
        assert_eq!(base_of(Path::new("/usr/sbin/mysqld")), None);
        assert_eq!(
            base_of(Path::new("/c/t/bin/mysqld")),
            Some(PathBuf::from("/c/t"))
        );
        assert_eq!(
            base_of(Path::new("/c/5-5-9/Linux-x86_64/mysqld")),
            Some(PathBuf::from("/c/5-5-9/Linux-x86_64"))
        );
    }

    #[test]
    fn owned_settings_in_every_spelling() {
        let t = Mysql::default();
        for k in [
            "port",
            "PORT",
            "bind_address",
            "loose-bind-address",
            "mysqlx_port",
            "loose_mysqlx_bind_address",
            "Secure_File_Priv",
            "admin-address",
            "datadir",
            "skip-networking",
            "mysqlx",
        ] {
            assert!(t.owned_option(k).is_some(), "{k}");
        }
        assert!(t.owned_option("max_connections").is_none());
        assert!(t
            .owned_arg(&["--loose-mysqlx-port=33060".to_string()])
            .is_some());
        assert!(t.owned_arg(&["-P3307".to_string()]).is_some());
    }
}
