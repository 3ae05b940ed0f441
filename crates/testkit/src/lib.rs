//! bakeoff-testkit: the helpers the workspace's tests share (a dev-dependency only):
//! where this machine's servers are installed, processes as /proc shows them, and one
//! polling wait. Each crate's `tests/common` keeps only what is its own.

use std::time::{Duration, Instant};

pub mod http;
pub mod noise;

/// Where Debian installs the servers and libraries the tests run (scripts/setup.sh).
pub mod paths {
    pub const MEMCACHED: &str = "/usr/bin/memcached";
    pub const MARIADBD: &str = "/usr/sbin/mariadbd";
    pub const POSTGRES: &str = "/usr/lib/postgresql/15/bin/postgres";
    /// The system's SQLite library (the sqlite target's installed "binary").
    pub const SYSTEM_SQLITE: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";
}

/// The state letter of /proc/PID/stat (after the command's closing parenthesis).
fn state(stat: &str) -> Option<&str> {
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
}

/// Pids of the live (not zombie) processes whose command name is `name`.
pub fn pids_named(name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if comm.trim() == name && state(&stat) != Some("Z") {
            out.push(pid);
        }
    }
    out
}

/// Whether `pid` exists and is neither a zombie nor dead.
pub fn running(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    !matches!(state(&stat), None | Some("Z") | Some("X"))
}

/// When `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat): with the
/// pid, it names one process even after the pid is reused.
pub fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Polls `cond` every 10 ms until it holds (true) or `timeout` passes (false, after one
/// last look).
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The Python the tests make archives with: Debian's own where it is there. A `python3`
/// found first on PATH may be a version manager's shim (pyenv's costs about 0.4 s a start
/// here, against 0.09 s), and the hostile-archive tests start one per archive.
pub fn python3() -> &'static str {
    if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// `name` in lower, upper and mixed case (every other character upper): the spellings a
/// case-blind reader of names must treat alike.
pub fn letter_cases(name: &str) -> Vec<String> {
    let mixed: String = name
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    vec![name.to_string(), name.to_ascii_uppercase(), mixed]
}

/// [`letter_cases`] of `name`, then each of those with `-` and `_` swapped both ways.
pub fn spellings(name: &str) -> Vec<String> {
    let mut out = letter_cases(name);
    out.extend(out.clone().iter().map(|n| n.replace('-', "_")));
    out.extend(out.clone().iter().map(|n| n.replace('_', "-")));
    out
}

/// `tar -czf DIR/NAME -C DIR WHAT`, asserted to succeed; the archive's path.
pub fn tar_gz(dir: &std::path::Path, name: &str, what: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let ok = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(dir)
        .arg(what)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    out
}

/// Runs [`python3`] on `script` with `args`, `lines` joined by newlines on its stdin;
/// whether it succeeded.
pub fn python_fed(script: &str, args: &[&std::ffi::OsStr], lines: &[String]) -> bool {
    use std::io::Write;
    let mut child = std::process::Command::new(python3())
        .args(["-c", script])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    child.wait().unwrap().success()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_running_and_found_by_name() {
        let me = std::process::id();
        assert!(running(me as i32));
        assert!(start_ticks(me as i32).is_some());
        let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert!(pids_named(comm.trim()).contains(&me));
        assert!(!running(i32::MAX));
    }

    #[test]
    fn wait_until_says_whether_the_condition_came() {
        let mut n = 0;
        assert!(wait_until(Duration::from_secs(5), || {
            n += 1;
            n == 3
        }));
        assert!(!wait_until(Duration::from_millis(30), || false));
    }
}
