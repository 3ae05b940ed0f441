//! External load tools (mariadb-slap, redis-benchmark) run as child processes in a
//! process group of their own: both pipes read to their end on threads, killed with their
//! group on cancel or timeout, their CPU time taken from wait4.

use bakeoff_engine::LoadError;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a tool printed and how it ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct Finished {
    pub out: String,
    pub err: String,
    /// "exit status N" or "signal N".
    pub status: String,
    /// User + system CPU seconds.
    pub cpu_s: f64,
}

/// Runs `cmd` (`name` in messages, `install` the fix when it cannot start) to its end.
pub(crate) fn run(
    mut cmd: Command,
    cancel: &AtomicBool,
    timeout: Duration,
    name: &str,
    install: &str,
) -> Result<Finished, LoadError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| LoadError::Sql(format!("cannot run {name}: {e}; {install}")))?;
    let readers = [
        reader(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
        reader(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
    ];
    let waited = wait(&child, cancel, timeout, name);
    let [out, err] = readers.map(|r| r.join().unwrap_or_default());
    drop(child);
    let (status, cpu_s) = waited?;
    Ok(Finished {
        out,
        err,
        status,
        cpu_s,
    })
}

/// Reads a pipe to its end on a thread of its own.
fn reader(pipe: Option<Box<dyn Read + Send>>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut p) = pipe {
            let mut bytes = Vec::new();
            let _ = p.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Waits for `child` to end; its exit status text and CPU seconds (user + system). Kills
/// its process group on cancel or timeout.
fn wait(
    child: &Child,
    cancel: &AtomicBool,
    timeout: Duration,
    name: &str,
) -> Result<(String, f64), LoadError> {
    let pid = child.id() as i32;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(done) = reap(pid, false) {
            return Ok(done);
        }
        let cancelled = cancel.load(Ordering::SeqCst);
        if cancelled || Instant::now() >= deadline {
            // SAFETY: the group is the tool's own (process_group(0)), not yet reaped.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = reap(pid, true);
            return Err(if cancelled {
                LoadError::Cancelled
            } else {
                LoadError::Sql(format!(
                    "{name} did not finish in {} s and was stopped",
                    timeout.as_secs()
                ))
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// wait4 on `pid` (blocking or not): its status text and CPU seconds once it ended.
fn reap(pid: i32, block: bool) -> Option<(String, f64)> {
    let mut status = 0i32;
    // SAFETY: an all-zero rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    // SAFETY: wait4 on our own child with valid out-pointers.
    let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
    if rc != pid {
        return (rc < 0).then(|| ("unknown status".into(), 0.0));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let text = if libc::WIFEXITED(status) {
        format!("exit status {}", libc::WEXITSTATUS(status))
    } else {
        format!("signal {}", libc::WTERMSIG(status))
    };
    Some((text, tv(ru.ru_utime) + tv(ru.ru_stime)))
}
