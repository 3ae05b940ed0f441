//! SIGINT/SIGTERM handling: a dedicated thread (signal-hook's iterator) that, on every
//! signal, sets the cancel flag and SIGKILLs every live sandbox of this process. The caller
//! sees the flag and winds down (its results written, exit 130). A signal must always end
//! bakeoff, though: whatever step is running may not look at the flag (a build, a fetch, a
//! blocking read), so when the process is still alive [`GRACE`] after the first signal,
//! or at a second signal, this thread kills the sandboxes again and exits with status 130
//! itself: the one exit below main, since nothing else can end a step that never returns.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::live;

/// How long the process may take to wind down after the first signal before it is
/// ended by the handler thread.
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(10);

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
    try_install_signal_handler().unwrap_or_else(|_| live::cancel_flag())
}

/// [`install_signal_handler`], reporting when the handler thread cannot be set up.
pub fn try_install_signal_handler() -> io::Result<Arc<AtomicBool>> {
    let flag = live::cancel_flag();
    let mut installed = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
    if !*installed {
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let thread_flag = flag.clone();
        std::thread::Builder::new()
            .name("bakeoff-signals".into())
            .spawn(move || {
                let mut seen = 0;
                for _signal in signals.forever() {
                    thread_flag.store(true, Ordering::SeqCst);
                    live::signal_all(libc::SIGKILL);
                    seen += 1;
                    if seen == 1 {
                        let _ = std::thread::Builder::new()
                            .name("bakeoff-grace".into())
                            .spawn(|| {
                                std::thread::sleep(GRACE);
                                end_now(&format!(
                                    "interrupted; the running step did not stop within {} s, so bakeoff ended it (every server stopped; what finished is in the results folder)",
                                    GRACE.as_secs()
                                ));
                            });
                    } else {
                        end_now("interrupted again; bakeoff ended at once (every server stopped; what finished is in the results folder)");
                    }
                }
            })?;
        *installed = true;
    }
    Ok(flag)
}

/// Set once the handler thread has begun ending the process ([`end_now`]).
static ENDING: AtomicBool = AtomicBool::new(false);

/// Waits for the end when the handler thread is ending the process: the step it killed
/// returns with a failure of its own ("configure failed: signal 9"), and the main thread
/// must not exit with that failure's status before the handler's 130 (a race it won on a
/// loaded machine). Returns at once otherwise.
pub fn wait_if_ending() {
    if ENDING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Kills every live sandbox and every other process bakeoff started (a build step, a
/// fetch), says why in one line, and exits with status 130.
fn end_now(why: &str) -> ! {
    ENDING.store(true, Ordering::SeqCst);
    live::signal_all(libc::SIGKILL);
    live::signal_tree(std::process::id() as i32, -1, libc::SIGKILL);
    // A variant's machine settings put back before the exit (their journal says what).
    bakeoff_os::system::restore_now();
    eprintln!("error: {why}");
    std::process::exit(130)
}

/// SIGKILLs every live sandbox of this process and refuses new ones, as a signal would:
/// for a process that learns of its end another way (an agent whose controller is gone).
pub fn kill_all() -> usize {
    live::cancel_flag().store(true, Ordering::SeqCst);
    live::signal_all(libc::SIGKILL)
}
