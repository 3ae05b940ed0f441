//! How the registry clients and the unpackers are started: with a parent-death SIGKILL
//! (a bakeoff killed with kill -9 while `tar` runs leaves no `tar` behind), without the
//! capabilities that would let an archive make device nodes, keep a foreign owner or keep
//! set-id bits (dropped from the bounding set, so an unpacker running as root cannot get
//! them back), and with a limit on the size of any file it writes.
//!
//! The spawning thread waits for the child, so the parent-death signal (tied to the
//! thread that forked) fires only when bakeoff itself dies.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// Capabilities an unpacker never needs: making device nodes, giving files away or
/// keeping their owner, setting set-id bits on files it does not own.
/// (`linux/capability.h`: CAP_CHOWN 0, CAP_FOWNER 3, CAP_FSETID 4, CAP_MKNOD 27.)
const DROPPED: &[libc::c_ulong] = &[0, 3, 4, 27];

/// Sets up `cmd` to run confined: its own stdin closed, killed when bakeoff dies, the
/// capabilities above out of reach, no file larger than `max_file_bytes` written.
pub(super) fn confine(cmd: &mut Command, max_file_bytes: Option<u64>) {
    let parent = std::process::id() as libc::pid_t;
    cmd.stdin(Stdio::null());
    // SAFETY: the closure runs between fork and exec and makes only async-signal-safe
    // system calls (prctl, getppid, setrlimit); it allocates nothing.
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
            // bakeoff died before prctl took effect: do not unpack for nobody.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            // Without CAP_SETPCAP (not root) the bounding set cannot change; such a
            // process had none of these capabilities to begin with.
            for cap in DROPPED {
                libc::prctl(libc::PR_CAPBSET_DROP, *cap, 0, 0, 0);
            }
            if let Some(limit) = max_file_bytes {
                let r = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// A child's outcome: its status and what it printed (stdout then stderr).
pub(super) struct Ran {
    pub status: ExitStatus,
    /// Its stdout alone (a listing).
    pub stdout: String,
    /// stdout then stderr.
    pub output: String,
}

impl Ran {
    pub fn ok(&self) -> bool {
        self.status.success()
    }

    /// Killed for writing a file over its size limit (SIGXFSZ).
    pub fn over_file_size(&self) -> bool {
        use std::os::unix::process::ExitStatusExt;
        self.status.signal() == Some(libc::SIGXFSZ)
    }
}

/// Runs `cmd` confined ([`confine`]) to completion, its output captured.
pub(super) fn run(cmd: &mut Command, max_file_bytes: Option<u64>) -> std::io::Result<Ran> {
    confine(cmd, max_file_bytes);
    let out = cmd.output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let output = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    Ok(Ran {
        status: out.status,
        stdout,
        output,
    })
}

/// How often [`run_watched`] adds up what the unpacker wrote.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// [`run`], killing the child once the files under `watch` add up to more than
/// `max_bytes` (a zip whose headers understate its sizes: `unzip` writes what the data
/// holds). The bool says it was killed for that.
pub(super) fn run_watched(
    cmd: &mut Command,
    max_file_bytes: Option<u64>,
    watch: &Path,
    max_bytes: u64,
) -> std::io::Result<(Ran, bool)> {
    confine(cmd, max_file_bytes);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut over = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if !over && bakeoff_os::file::dir_bytes(watch) > max_bytes {
            over = true;
            let _ = child.kill();
        }
        std::thread::sleep(WATCH_EVERY);
    };
    let stdout = out.join().unwrap_or_default();
    let output = format!("{stdout}{}", err.join().unwrap_or_default());
    Ok((
        Ran {
            status,
            stdout,
            output,
        },
        over,
    ))
}
