//! The spawner thread: every server is forked from one long-lived thread of this crate.
//!
//! Linux delivers PR_SET_PDEATHSIG when the *thread* that forked the child exits, not the
//! process. A server spawned from a short-lived worker thread would be SIGKILLed as soon as
//! that thread ends. So all spawns go through a channel to a thread that is started lazily
//! on first use and never returns: the signal then fires only when bakeoff itself dies,
//! whatever thread calls `Sandbox::start`.
//!
//! Each child, before exec: joins a new process group (setpgid(0, 0)), sets
//! PR_SET_PDEATHSIG(SIGKILL), and checks getppid() to close the race where bakeoff died
//! between fork and prctl.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;

/// One spawn request: the command and where to send the outcome.
type Request = (Command, Sender<io::Result<Child>>);

/// The sending end of the spawner thread's queue; once set it is held forever, so the
/// thread never ends.
static SPAWNER: Mutex<Option<Sender<Request>>> = Mutex::new(None);

/// Spawns `cmd` from the crate's long-lived spawner thread, in its own process group and
/// with a parent-death SIGKILL.
pub fn spawn(cmd: Command) -> io::Result<Child> {
    let (reply_tx, reply_rx) = channel();
    {
        let mut queue = SPAWNER.lock().unwrap_or_else(|p| p.into_inner());
        if queue.is_none() {
            *queue = Some(start_thread()?);
        }
        let tx = queue
            .as_ref()
            .ok_or_else(|| io::Error::other("no spawner"))?;
        tx.send((cmd, reply_tx))
            .map_err(|_| io::Error::other("the sandbox spawner thread is gone"))?;
    }
    reply_rx
        .recv()
        .map_err(|_| io::Error::other("the sandbox spawner thread dropped a request"))?
}

fn start_thread() -> io::Result<Sender<Request>> {
    let (tx, rx) = channel::<Request>();
    std::thread::Builder::new()
        .name("bakeoff-spawner".into())
        .spawn(move || {
            // Lives for the whole process: `tx` sits in a static and is never dropped.
            for (cmd, reply) in rx {
                let _ = reply.send(spawn_here(cmd));
            }
        })?;
    Ok(tx)
}

/// Spawns on the current thread with the process group and parent-death settings.
fn spawn_here(mut cmd: Command) -> io::Result<Child> {
    cmd.process_group(0);
    // bakeoff died before the parent-death signal took effect: no orphan server starts.
    bakeoff_os::child::die_with_parent(&mut cmd);
    cmd.spawn()
}
