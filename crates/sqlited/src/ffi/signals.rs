//! SIGTERM and SIGINT for the binary: blocked in every thread (call [`block_termination`]
//! before spawning any), then taken synchronously by one thread with `sigwait`, so no
//! code runs in signal-handler context.

use std::io;

/// The signal set {SIGTERM, SIGINT}.
fn termination_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before sigaddset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        set
    }
}

/// Restores the default action of SIGTERM and SIGINT (a parent may have ignored them,
/// and sigwait never sees an ignored signal) and blocks both in the calling thread and
/// every thread it spawns afterwards.
pub fn block_termination() -> io::Result<()> {
    let set = termination_set();
    // SAFETY: SIG_DFL is a valid disposition for these signals; set is initialised and
    // pthread_sigmask only reads it.
    let rc = unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Waits for SIGTERM or SIGINT (blocked beforehand by [`block_termination`]) and returns
/// its number.
pub fn wait_for_termination() -> io::Result<i32> {
    let set = termination_set();
    let mut signal = 0;
    // SAFETY: set is initialised; signal is a valid out-pointer.
    let rc = unsafe { libc::sigwait(&set, &mut signal) };
    if rc == 0 {
        Ok(signal)
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}
