//! The agent's SQL data: directories under the run's data root, which every agent of
//! a bakeoff run holds a lock on (a lost agent's data waits for the run's next one),
//! reaped by the next agent of another run once no agent holds it.

use super::{json, Agent};
use crate::protocol::DataOp;
use std::path::{Path, PathBuf};

impl Agent {
    /// `dir` under the data root.
    pub(super) fn data_path(&self, dir: &str) -> Result<PathBuf, String> {
        under(&self.data_root, dir)
    }

    pub(super) fn data(&self, op: DataOp) -> Result<serde_json::Value, String> {
        match op {
            DataOp::Init { kind, binary, dir } => {
                let dest = self.data_path(&dir)?;
                self.open_data_root()?;
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("{}: {e}", parent.display()))?;
                }
                bakeoff_sandbox::init_data(kind, Path::new(&binary), &dest)
                    .map_err(|e| format!("data directory initialization failed: {e}"))?;
                json(())
            }
            DataOp::Copy { from, to } => {
                let (from, to) = (self.data_path(&from)?, self.data_path(&to)?);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("{}: {e}", parent.display()))?;
                }
                json(bakeoff_sandbox::copy_tree(&from, &to)?)
            }
            DataOp::Bytes { dir } => json(bakeoff_os::file::dir_bytes(&self.data_path(&dir)?)),
            DataOp::Format {
                kind,
                binary,
                options,
                configure_args,
            } => json(bakeoff_sandbox::target_for(kind).data_format(
                Path::new(&binary),
                &options,
                &configure_args,
            )),
            DataOp::Remove { dir } => {
                let _ = std::fs::remove_dir_all(self.data_path(&dir)?);
                json(())
            }
        }
    }

    /// The data root, passable by the server's own user when the agent is root (it may
    /// read only its own data under it).
    fn open_data_root(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.data_root)
            .map_err(|e| format!("{}: {e}", self.data_root.display()))?;
        // Recorded in bakeoff's state, so a later agent's `reap_runs` knows it made it.
        bakeoff_os::own::register(&self.data_root, RUN_PURPOSE)
            .map_err(|e| format!("{}: {e}", self.data_root.display()))?;
        if bakeoff_sandbox::server_user().is_some() {
            use std::os::unix::fs::PermissionsExt;
            for dir in [
                &self.root,
                &self.sandboxes,
                &self.root.join("data"),
                &self.data_root,
            ] {
                let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711));
            }
        }
        Ok(())
    }
}

/// The run's name as a file name.
pub(super) fn safe_run(run: &str) -> String {
    run.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A shared flock on `<data root>.lock`: every agent of a run holds one while it lives.
pub(super) struct RunLock {
    _file: std::fs::File,
}

impl RunLock {
    pub(super) fn path(data_root: &Path) -> PathBuf {
        data_root.with_extension("lock")
    }

    pub(super) fn hold(data_root: &Path) -> Result<RunLock, String> {
        let path = RunLock::path(data_root);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) } != 0 {
            return Err(format!(
                "cannot lock {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(RunLock { _file: f })
    }

    /// Whether no agent holds `data_root`'s lock (its run is over).
    fn free(data_root: &Path) -> bool {
        let Ok(f) = std::fs::File::open(RunLock::path(data_root)) else {
            return true;
        };
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this function owns; released when f closes.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    }
}

/// What a run's data folder is recorded as in bakeoff's state.
const RUN_PURPOSE: &str = "agent run data";

/// Removes the SQL data of runs no agent serves any more (bakeoff killed before it could
/// remove it), except `own`'s: only folders an agent made and recorded in bakeoff's
/// state, never through a mount. One line per removed directory.
pub(super) fn reap_runs(parent: &Path, own: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("run-") {
            continue;
        }
        let dir = parent.join(name.trim_end_matches(".lock"));
        if dir == own || !RunLock::free(&dir) {
            continue;
        }
        if !dir.is_dir() {
            // A lock whose run left no data.
            let _ = std::fs::remove_file(RunLock::path(&dir));
            continue;
        }
        if !bakeoff_os::own::is_plain_subfolder(parent, &dir)
            || bakeoff_os::own::registered(&dir, RUN_PURPOSE).is_none()
        {
            continue;
        }
        if bakeoff_os::own::remove_tree(&dir).is_ok() {
            let _ = std::fs::remove_file(RunLock::path(&dir));
            out.push(format!(
                "removed the data of a run that is over: {}",
                dir.display()
            ));
        }
    }
    out
}

/// `dir` under `root`; refused when it is empty, absolute or climbs out with `..`.
fn under(root: &Path, dir: &str) -> Result<PathBuf, String> {
    use std::path::Component;
    let p = Path::new(dir);
    if dir.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(format!("not a data directory name: {dir}"));
    }
    Ok(root.join(p))
}

#[cfg(test)]
mod tests {
    use super::{reap_runs, under, RunLock, RUN_PURPOSE};
    use std::path::Path;

    #[test]
    fn only_the_data_of_runs_no_agent_serves_is_reaped() {
        let t = tempfile::tempdir().unwrap();
        let (live, over, own, planted) = (
            t.path().join("run-1"),
            t.path().join("run-2"),
            t.path().join("run-3"),
            t.path().join("run-4"),
        );
        for d in [&live, &over, &own, &planted] {
            std::fs::create_dir_all(d.join("prepared")).unwrap();
        }
        for d in [&live, &over, &own] {
            bakeoff_os::own::register(d, RUN_PURPOSE).unwrap();
        }
        let _live = RunLock::hold(&live).unwrap();
        let _own = RunLock::hold(&own).unwrap();
        // The run that is over left its lock file behind, unheld; a folder no agent
        // recorded (planted, with a lock beside it) is never removed.
        drop(RunLock::hold(&over).unwrap());
        drop(RunLock::hold(&planted).unwrap());
        let said = reap_runs(t.path(), &own);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(live.is_dir() && own.is_dir() && !over.exists());
        assert!(planted.join("prepared").is_dir());
        assert!(!RunLock::path(&over).exists());
    }

    #[test]
    fn data_directories_stay_under_the_data_root() {
        let root = Path::new("/w/data/data-7");
        assert_eq!(
            under(root, "prepared/a/pristine").unwrap(),
            root.join("prepared/a/pristine")
        );
        for bad in ["", "/etc", "prepared/../../bin", "..", "./x"] {
            assert!(under(root, bad).is_err(), "{bad}");
        }
    }
}
