//! The sandbox error type: one variant per way a server start, stop or cleanup can fail,
//! each rendered as one line that says what went wrong and what to do next.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::kind::TargetKind;

/// Everything that can go wrong while starting, stopping or cleaning up a sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The server binary does not exist or is not executable.
    #[error("server binary {} not found or not executable; build the variant first or fix its binary path", path.display())]
    BinaryNotFound { path: PathBuf },

    /// The server process exited before it became ready.
    #[error("{target} exited at start with {status}: {tail}; check the variant's args")]
    ExitedAtStart {
        target: TargetKind,
        status: String,
        /// The last lines of the server's stderr (or stdout), joined into one line (the
        /// sandbox dir is removed: nothing is left behind by a failed start).
        tail: String,
    },

    /// The readiness probe did not succeed in time; the server was killed.
    #[error("{target} (pid {pid}) not ready on {addr} after {:.1} s ({last}); it was killed{}; raise ready_timeout or check the variant's args", waited.as_secs_f64(), if tail.is_empty() { String::new() } else { format!("; its log: {tail}") })]
    NotReady {
        target: TargetKind,
        pid: u32,
        addr: SocketAddr,
        waited: Duration,
        /// The outcome of the last probe attempt.
        last: String,
        /// The last lines of the server's log, joined into one line.
        tail: String,
    },

    /// Every attempt hit "address already in use". Another process is blamed only when
    /// one is seen listening on the port bakeoff gave the server.
    #[error("{target} could not listen after {attempts} attempts, each on a free loopback port bakeoff chose (last {last_port}): {}", port_busy_why(*.held, .tail))]
    PortBusy {
        target: TargetKind,
        attempts: u32,
        last_port: u16,
        /// Whether another process was seen listening on `last_port`.
        held: bool,
        /// The last lines of the server's log from the last attempt.
        tail: String,
    },

    /// A filesystem or process operation failed.
    #[error("cannot {action} {}: {source}; check that the path exists and is writable", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The target's one-time preparation of the work dir failed.
    #[error("{target} init of {} failed: {message}; check the server binary and the sandbox root", dir.display())]
    Init {
        target: TargetKind,
        dir: PathBuf,
        message: String,
    },

    /// No loopback port could be bound to find a free one.
    #[error(
        "cannot bind a free port on 127.0.0.1: {source}; check that the loopback interface is up"
    )]
    NoFreePort {
        #[source]
        source: std::io::Error,
    },

    /// The server process could not be spawned at all.
    #[error("cannot start {}: {source}; check that it is an executable for this machine", binary.display())]
    Spawn {
        binary: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The sandbox root is not a private directory of this user.
    #[error("sandbox root {} is unsafe: {reason}; pass a root dir owned by this user", path.display())]
    UnsafeRoot { path: PathBuf, reason: String },

    /// The ready server listened on an address beyond the one asked for (and loopback):
    /// something in the experiment's arguments or options opened it. It was stopped.
    #[error("{target} listened beyond {asked}, on {listens}: an argument or option of the experiment opened it, and bakeoff owns the listen address; the server was stopped and the run is invalid; remove that setting")]
    Exposed {
        target: TargetKind,
        asked: std::net::IpAddr,
        /// "0.0.0.0:11311/udp, [::]:5432/tcp"
        listens: String,
    },

    /// A SIGINT/SIGTERM arrived: no new sandbox is started.
    #[error("bakeoff is shutting down after a signal; no new server was started")]
    Cancelled,
}

fn port_busy_why(held: bool, tail: &str) -> String {
    let log = if tail.is_empty() {
        String::new()
    } else {
        format!(" (its log: {tail})")
    };
    if held {
        format!("another process took that port each time{log}; retry when it is gone")
    } else {
        format!("\"address already in use\", yet no other process was seen on that port, so the server binds an address or port of its own: remove the listen address or port from the experiment's args or options (bakeoff gives the server its port){log}")
    }
}

impl SandboxError {
    /// Shorthand for [`SandboxError::Io`].
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        SandboxError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

// Keeps `Result<_, SandboxError>` small enough for clippy's result_large_err in callers.
const _: () = assert!(std::mem::size_of::<SandboxError>() < 128);
