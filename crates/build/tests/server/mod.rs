//! Helpers for the integration tests that start a built server: bounded commands, an
//! unprivileged user when the tests run as root, a private copy of an installed tree, and a
//! server process that is started, waited for and stopped within time limits.

#![allow(dead_code)] // each test binary uses its own subset

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run to completion within `limit`, output captured; killed and failed when it takes longer.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let pid = child.id().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for child"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

/// stdout then stderr, as text.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Who runs the server: the current user, or when that is root (which PostgreSQL and MariaDB
/// refuse), `bakeoff` if it exists, else `nobody`.
#[derive(Clone, Copy)]
pub struct RunAs {
    ids: Option<(u32, u32)>,
}

impl RunAs {
    pub fn pick() -> Self {
        let id = |args: &[&str]| -> Option<u32> {
            let out = Command::new("id").args(args).output().ok()?;
            out.status.success().then_some(())?;
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        };
        if id(&["-u"]) != Some(0) {
            return RunAs { ids: None };
        }
        let user = if id(&["-u", "bakeoff"]).is_some() {
            "bakeoff"
        } else {
            "nobody"
        };
        let uid = id(&["-u", user]).expect("uid");
        let gid = id(&["-g", user]).expect("gid");
        RunAs {
            ids: Some((uid, gid)),
        }
    }

    /// `program` run as this user, with `LC_ALL=C`.
    pub fn command(self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("LC_ALL", "C");
        if let Some((uid, gid)) = self.ids {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    /// Create `dir`, owned by this user.
    pub fn own(self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        if let Some((uid, gid)) = self.ids {
            std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
        }
    }
}

/// A world-readable temporary dir holding a `cp -a` copy of an installed tree at `install/`:
/// the build cache may sit under a home only root can enter.
pub struct Scratch {
    pub dir: tempfile::TempDir,
    pub install: PathBuf,
}

impl Scratch {
    pub fn with_copy_of(install: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("bakeoff-server-")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.path().join("install");
        let cp = Command::new("cp")
            .arg("-a")
            .arg(install)
            .arg(&copy)
            .status()
            .unwrap();
        assert!(cp.success(), "cp -a of the installed tree");
        Scratch { dir, install: copy }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A started server; killed on drop, so a hung server cannot outlive a failed test.
pub struct Server {
    child: Child,
    log: PathBuf,
    name: &'static str,
}

impl Server {
    /// Start `cmd` with stdout and stderr into `log`.
    pub fn start(name: &'static str, cmd: &mut Command, log: PathBuf) -> Self {
        let file = File::create(&log).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Server { child, log, name }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Wait until the log contains `line`; fail if the server exits or 60 s pass first.
    pub fn wait_for(&mut self, line: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.log().contains(line) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "{} exited ({status}) before `{line}`:\n{}",
                    self.name,
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{} did not log `{line}` within 60 s:\n{}",
                self.name,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Send `signal` (e.g. `-INT`, `-TERM`) and wait up to 30 s for the server to exit.
    pub fn stop(&mut self, signal: &str) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
            .success());
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "{} did not stop within 30 s",
                self.name
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
