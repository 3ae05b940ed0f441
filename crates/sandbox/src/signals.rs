//! SIGINT/SIGTERM handling: a dedicated thread (signal-hook's iterator) that, on every
//! signal, sets the cancel flag and SIGKILLs every live sandbox of this process. It never
//! exits the process: the caller sees the flag and winds down.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::registry;

/// Whether the handler thread runs already (installing twice is a no-op).
static INSTALLED: Mutex<bool> = Mutex::new(false);

/// Installs the SIGINT/SIGTERM handler (once per process) and returns the cancel flag.
///
/// On each signal the flag is set and all live sandboxes are killed (a second Ctrl-C
/// kills again, including any server started in between); `Sandbox::start` refuses with
/// `SandboxError::Cancelled` once the flag is set. If the handler cannot be installed the
/// default signal behaviour stays: bakeoff dies and the parent-death signal still takes
/// its servers down. Use [`try_install_signal_handler`] to see that error.
pub fn install_signal_handler() -> Arc<AtomicBool> {
    try_install_signal_handler().unwrap_or_else(|_| registry::cancel_flag())
}

/// [`install_signal_handler`], reporting when the handler thread cannot be set up.
pub fn try_install_signal_handler() -> io::Result<Arc<AtomicBool>> {
    let flag = registry::cancel_flag();
    let mut installed = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
    if !*installed {
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let thread_flag = flag.clone();
        std::thread::Builder::new()
            .name("bakeoff-signals".into())
            .spawn(move || {
                for _signal in signals.forever() {
                    thread_flag.store(true, Ordering::SeqCst);
                    registry::signal_all(libc::SIGKILL);
                }
            })?;
        *installed = true;
    }
    Ok(flag)
}

/// SIGKILLs every live sandbox of this process and refuses new ones, as a signal would:
/// for a process that learns of its end another way (an agent whose controller is gone).
pub fn kill_all() -> usize {
    registry::cancel_flag().store(true, Ordering::SeqCst);
    registry::signal_all(libc::SIGKILL)
}
