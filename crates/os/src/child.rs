//! Child processes that never outlive bakeoff.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Arms `cmd` to be killed (SIGKILL) when bakeoff dies, and not to run at all when
/// bakeoff died before that took effect (its parent is then another process). The
/// signal is tied to the thread that forks the child: a caller whose spawning thread may
/// end before the child spawns it from a thread that lives as long as bakeoff (the
/// sandbox's spawner does). Register it before any other `pre_exec` step, which then
/// runs only for a live bakeoff.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and makes only async-signal-safe
    // system calls (prctl, getppid); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
