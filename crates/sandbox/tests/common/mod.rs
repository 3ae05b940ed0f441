//! Test helpers: a private sandbox root per test, guards that kill what a test started
//! even when an assert fails, and small /proc checks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bakeoff_sandbox::{SandboxSpec, TargetKind};
pub use bakeoff_testkit::paths::MEMCACHED;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A fresh sandbox root, removed on drop.
pub struct TestRoot(pub PathBuf);

impl TestRoot {
    pub fn new(tag: &str) -> TestRoot {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "bakeoff-sandbox-it-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TestRoot(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn memcached_spec(&self, name: &str) -> SandboxSpec {
        let mut spec = SandboxSpec::new(name, TargetKind::Memcached, MEMCACHED, &self.0);
        spec.ready_timeout = Duration::from_secs(10);
        spec.stop_grace = Duration::from_secs(3);
        spec
    }

    /// Names of the entries in the root (bakeoff's folder marker aside).
    pub fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n != ".bakeoff-owned")
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for TestRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// SIGKILLs a process on drop if it is still the one that was recorded.
pub struct PidGuard {
    pub pid: i32,
    start: Option<u64>,
}

impl PidGuard {
    pub fn new(pid: u32) -> PidGuard {
        let pid = pid as i32;
        PidGuard {
            pid,
            start: start_ticks(pid),
        }
    }

    /// Whether the recorded process still runs (zombies count as gone).
    pub fn alive(&self) -> bool {
        self.start.is_some() && running(self.pid) && start_ticks(self.pid) == self.start
    }

    /// Waits up to `timeout` for the process to be gone.
    pub fn gone_within(&self, timeout: Duration) -> bool {
        wait_until(timeout, || !self.alive())
    }
}

impl Drop for PidGuard {
    fn drop(&mut self) {
        if self.alive() {
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }
}

/// Kills and reaps a child process on drop.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub use bakeoff_testkit::{running, start_ticks, wait_until};
