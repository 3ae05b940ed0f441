//! Small process helpers: picking a free loopback port, and seeing whether a child exited *without reaping it* (waitid with WNOWAIT), so its pid and
//! process group id stay reserved until the sandbox is done with them.

use std::io;
use std::net::{IpAddr, TcpListener};

/// A port that was free on `ip` a moment ago (bind ip:0, read it, close).
pub(crate) fn free_port(ip: IpAddr) -> io::Result<u16> {
    let listener = TcpListener::bind((ip, 0))?;
    Ok(listener.local_addr()?.port())
}

/// How child `pid` ended, if it did, without reaping it. An error means it cannot be
/// waited for (already reaped elsewhere, e.g. SIGCHLD set to SIG_IGN): treat as gone.
pub(crate) fn peek_exit(pid: i32) -> io::Result<Option<String>> {
    // SAFETY: siginfo_t is plain data; all-zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
    let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: after a successful waitid the pid/status fields of `info` are initialised
    // (si_pid stays 0 when the child has not changed state, per WNOHANG).
    let (si_pid, si_status) = unsafe { (info.si_pid(), info.si_status()) };
    if si_pid == 0 {
        return Ok(None);
    }
    Ok(Some(describe_status(info.si_code, si_status)))
}

/// "status 71", "signal 9 (SIGKILL)", "signal 11 (SIGSEGV), core dumped".
pub(crate) fn describe_status(code: i32, status: i32) -> String {
    match code {
        libc::CLD_EXITED => format!("status {status}"),
        libc::CLD_DUMPED => format!("signal {status} ({}), core dumped", signal_name(status)),
        _ => format!("signal {status} ({})", signal_name(status)),
    }
}

/// Describes an std exit status the same way as [`describe_status`].
pub(crate) fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => describe_status(libc::CLD_EXITED, c),
        (None, Some(s)) if status.core_dumped() => describe_status(libc::CLD_DUMPED, s),
        (None, Some(s)) => describe_status(libc::CLD_KILLED, s),
        (None, None) => "unknown status".to_string(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn describes_statuses() {
        assert_eq!(describe_status(libc::CLD_EXITED, 71), "status 71");
        assert_eq!(describe_status(libc::CLD_KILLED, 9), "signal 9 (SIGKILL)");
        assert_eq!(
            describe_status(libc::CLD_DUMPED, 11),
            "signal 11 (SIGSEGV), core dumped"
        );
    }

    #[test]
    fn peeks_without_reaping() {
        let mut c = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let pid = c.id() as i32;
        let mut seen = None;
        for _ in 0..500 {
            seen = peek_exit(pid).unwrap();
            if seen.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(seen.as_deref(), Some("status 3"));
        // Still reapable: WNOWAIT left it alone.
        assert_eq!(describe_exit(c.wait().unwrap()), "status 3");
        assert!(free_port(IpAddr::from([127, 0, 0, 1])).unwrap() > 0);
    }
}
