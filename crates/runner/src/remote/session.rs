//! One agent on one host: a master ssh connection (ControlMaster, its socket private to
//! this process) that every other ssh to the host reuses, bakeoff's own binary copied
//! there once (a file named by its hash, checked by the agent on arrival), and
//! `bakeoff agent` started over it with its stdin and stdout as the protocol's pipe.
//! Every ssh process is spawned as servers are: its own process group and killed when
//! bakeoff dies, which closes the agent's stdin, which stops everything it started.

use bakeoff_agent::protocol::{Event, Hello, Reply, Request, VERSION};
use bakeoff_plan::Host;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why a request got no answer.
#[derive(Debug)]
pub enum CallError {
    /// The agent answered with an error (the request failed there; the host is fine).
    Failed(String),
    /// The connection is gone (ssh dropped, the host went away, the agent died).
    Lost(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            CallError::Failed(m) | CallError::Lost(m) => f.write_str(m),
        }
    }
}

/// A connected agent.
pub struct Session {
    pub host: String,
    master: Child,
    control: PathBuf,
    agent: Child,
    /// None once closed (the agent's signal to stop).
    stdin: Mutex<Option<ChildStdin>>,
    stdout: Mutex<BufReader<ChildStdout>>,
    /// What the agent's ssh wrote on stderr (the last lines), for messages.
    stderr: Arc<Mutex<String>>,
}

/// Quotes `s` for the remote user's shell (ssh passes a command line to it).
fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The last meaningful line ssh wrote.
fn said(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find(|x| !x.trim().is_empty() && !x.starts_with("Warning: Permanently added"))
        .unwrap_or("no message")
        .trim()
        .to_string()
}

/// How long copying bakeoff to a host may take (after the connection is made).
const COPY_LIMIT: Duration = Duration::from_secs(600);

/// How long a started agent may take to say hello beyond the connect deadline: it first
/// removes what killed runs left there (sandboxes, a SQL data folder), which can be large.
const AGENT_START: Duration = Duration::from_secs(120);

/// Runs `cmd` (an ssh) as servers are run (its own process group, killed when bakeoff
/// dies) with its output captured, and waits at most `limit` for it: its output, or None
/// when it was still running then (its whole process group is then killed). A process it
/// left holding its pipes (a helper gone to the background) is not waited for.
pub(crate) fn output_within(mut cmd: Command, limit: Duration) -> std::io::Result<Option<Output>> {
    let deadline = Instant::now() + limit;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = bakeoff_sandbox::spawn_guarded(cmd)?;
    let (tx, rx) = std::sync::mpsc::channel();
    for (i, pipe) in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                // ssh says little; more than this is not worth keeping.
                let _ = p.take(1 << 20).read_to_end(&mut buf);
            }
            let _ = tx.send((i, buf));
        });
    }
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            // SAFETY: kill(2) on the process group the child leads (spawn_guarded made it).
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = [Vec::new(), Vec::new()];
    let drained = Instant::now() + Duration::from_secs(2);
    for _ in 0..2 {
        let left = drained.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, buf)) => out[i] = buf,
            Err(_) => break,
        }
    }
    let [stdout, stderr] = out;
    Ok(Some(Output {
        status,
        stdout,
        stderr,
    }))
}

/// This bakeoff run, as its agents know it: its pid and start time (letters, digits and
/// dashes only).
fn run_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{t}", std::process::id())
    })
}

/// ssh control sockets are `<tmp>/bakeoff-ssh-<bakeoff pid>-<host>-<role>`.
const CONTROL_PREFIX: &str = "bakeoff-ssh-";

/// Removes the ssh control sockets of bakeoffs that are gone (killed before their ssh
/// could remove them; the processes behind them died with bakeoff). One line per socket.
pub fn reap_stale_sockets() -> Vec<String> {
    let dir = std::env::temp_dir();
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix(CONTROL_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive && std::fs::remove_file(e.path()).is_ok() {
            out.push(format!(
                "removed stale ssh control socket {} (bakeoff pid {pid} is gone)",
                e.path().display()
            ));
        }
    }
    out
}

impl Session {
    /// Connects to `h` (`identity` resolved against the experiment file), copies bakeoff
    /// there if its copy is missing, and starts the agent. `exe` is this binary and its
    /// sha256.
    pub fn connect(
        h: &Host,
        identity: Option<PathBuf>,
        exe: &(PathBuf, String),
        role: &str,
    ) -> Result<Session, String> {
        let control = std::env::temp_dir().join(format!(
            "{CONTROL_PREFIX}{}-{}-{role}",
            std::process::id(),
            h.name
        ));
        let _ = std::fs::remove_file(&control);
        let args = h.ssh_args(identity);
        let mut master = Command::new("ssh");
        master
            .args(["-M", "-N", "-S"])
            .arg(&control)
            .args([
                "-o",
                "ControlPersist=no",
                "-o",
                "ServerAliveInterval=2",
                "-o",
                "ServerAliveCountMax=3",
            ])
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut master = bakeoff_sandbox::spawn_guarded(master)
            .map_err(|e| format!("cannot run ssh: {e}; install openssh-client"))?;
        let limit = h.connect_deadline();
        let deadline = Instant::now() + limit;
        while !control.exists() {
            if let Ok(Some(_)) = master.try_wait() {
                let mut err = String::new();
                if let Some(mut s) = master.stderr.take() {
                    let _ = s.read_to_string(&mut err);
                }
                return Err(format!(
                    "host {} ({}) does not answer: ssh said: {}",
                    h.name,
                    h.ssh,
                    said(&err)
                ));
            }
            if Instant::now() > deadline {
                let _ = master.kill();
                let _ = master.wait();
                return Err(format!(
                    "host {} ({}): ssh did not connect within {} s; check that `ssh {} true` returns",
                    h.name,
                    h.ssh,
                    limit.as_secs(),
                    h.ssh
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // ssh's own messages after the connection are of no use; keep the pipe drained.
        if let Some(mut s) = master.stderr.take() {
            std::thread::spawn(move || std::io::copy(&mut s, &mut std::io::sink()));
        }
        let ssh = |remote: &str| {
            let mut c = Command::new("ssh");
            c.arg("-S").arg(&control).args(&args).arg(remote);
            c
        };
        let dir = h.dir();
        let remote_exe = format!("{dir}/bin/bakeoff-{}", &exe.1[..16]);
        let silent = || {
            format!(
                "host {} ({}): ssh connected and then did not answer within {} s",
                h.name,
                h.ssh,
                limit.as_secs()
            )
        };
        let mut test = ssh(&format!("test -x {}", sq(&remote_exe)));
        test.stdin(Stdio::null());
        let copied = match output_within(test, limit) {
            Ok(Some(out)) => out.status.success(),
            Ok(None) => return Err(silent()),
            Err(_) => false,
        };
        if !copied {
            copy(ssh, exe, &remote_exe, dir).map_err(|e| format!("host {}: {e}", h.name))?;
        }
        let mut agent = ssh(&format!(
            "{} agent --root={} --run={}",
            sq(&remote_exe),
            sq(dir),
            run_id()
        ));
        agent
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut agent =
            bakeoff_sandbox::spawn_guarded(agent).map_err(|e| format!("cannot run ssh: {e}"))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut s) = agent.stderr.take() {
            let keep = stderr.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut k = keep.lock().unwrap_or_else(|p| p.into_inner());
                    k.push_str(&String::from_utf8_lossy(&buf[..n]));
                    let len = k.len();
                    if len > 8192 {
                        let cut = k.ceil_char_boundary(len - 4096);
                        k.drain(..cut);
                    }
                }
            });
        }
        let (Some(stdin), Some(stdout)) = (agent.stdin.take(), agent.stdout.take()) else {
            return Err("ssh without pipes".into());
        };
        let s = Session {
            host: h.name.clone(),
            master,
            control,
            agent,
            stdin: Mutex::new(Some(stdin)),
            stdout: Mutex::new(BufReader::new(stdout)),
            stderr,
        };
        // The agent's first answer has a deadline too: past it, its ssh is killed, which
        // ends the wait below.
        let hello_limit = limit + AGENT_START;
        // (None: waiting; Some(true): answered in time; Some(false): killed at the deadline.)
        let answered: Arc<Mutex<Option<bool>>> = Arc::new(Mutex::new(None));
        {
            let answered = answered.clone();
            let pgid = s.agent.id() as libc::pid_t;
            std::thread::spawn(move || {
                std::thread::sleep(hello_limit);
                let mut a = answered.lock().unwrap_or_else(|p| p.into_inner());
                if a.is_none() {
                    // SAFETY: kill(2) on the agent ssh's own process group, not yet
                    // reaped: the session cannot drop before `answered` is set.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                    *a = Some(false);
                }
            });
        }
        let hello = s.call_as::<Hello>(&Request::Hello, &mut |_| {});
        let late = {
            let mut a = answered.lock().unwrap_or_else(|p| p.into_inner());
            !*a.get_or_insert(true)
        };
        let hello = hello.map_err(|e| {
            if late {
                format!(
                    "host {}: the agent did not answer within {} s",
                    h.name,
                    hello_limit.as_secs()
                )
            } else {
                format!("host {}: the agent did not start: {e}", h.name)
            }
        })?;
        if hello.version != VERSION {
            return Err(format!(
                "host {}: the agent speaks version {}, this bakeoff {VERSION}",
                h.name, hello.version
            ));
        }
        Ok(s)
    }

    /// Sends a request without waiting (a cancel).
    pub fn post(&self, req: &Request) {
        if let Ok(mut line) = serde_json::to_string(req) {
            line.push('\n');
            let mut w = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(w) = w.as_mut() {
                let _ = w.write_all(line.as_bytes()).and_then(|_| w.flush());
            }
        }
    }

    /// One request and its answer; events that come before it go to `on_event`.
    pub fn call(
        &self,
        req: &Request,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<serde_json::Value, CallError> {
        let mut r = self.stdout.lock().unwrap_or_else(|p| p.into_inner());
        let mut line = serde_json::to_string(req).map_err(|e| CallError::Failed(e.to_string()))?;
        line.push('\n');
        {
            let mut w = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
            let w = w
                .as_mut()
                .ok_or_else(|| self.lost("the agent was stopped"))?;
            w.write_all(line.as_bytes())
                .and_then(|_| w.flush())
                .map_err(|e| self.lost(&e.to_string()))?;
        }
        loop {
            let mut got = String::new();
            match r.read_line(&mut got) {
                Ok(0) => return Err(self.lost("the connection closed")),
                Ok(_) => {}
                Err(e) => return Err(self.lost(&e.to_string())),
            }
            match serde_json::from_str::<Reply>(&got) {
                Ok(Reply::Ok(v)) => return Ok(v),
                Ok(Reply::Err(m)) => return Err(CallError::Failed(m)),
                Ok(Reply::Event(e)) => on_event(e),
                Err(_) => {
                    return Err(CallError::Lost(format!(
                        "the agent said something that is not the protocol: {}",
                        got.trim()
                    )))
                }
            }
        }
    }

    /// [`Session::call`] with the answer read as `T`.
    pub fn call_as<T: serde::de::DeserializeOwned>(
        &self,
        req: &Request,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<T, CallError> {
        let v = self.call(req, on_event)?;
        serde_json::from_value(v).map_err(|e| CallError::Failed(format!("a bad answer: {e}")))
    }

    fn lost(&self, what: &str) -> CallError {
        std::thread::sleep(Duration::from_millis(100));
        let err = self.stderr.lock().map(|s| said(&s)).unwrap_or_default();
        CallError::Lost(format!("host {}: {what} (ssh said: {err})", self.host))
    }
}

impl Drop for Session {
    /// Closing the agent's stdin stops it and everything it started; the master goes last.
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        // Closing the pipe is the agent's signal to stop.
        drop(self.stdin.lock().map(|mut w| w.take()));
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.agent.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.agent.kill();
        let _ = self.agent.wait();
        let _ = self.master.kill();
        let _ = self.master.wait();
        let _ = std::fs::remove_file(&self.control);
    }
}

/// Copies `exe` to `to` on the host through `ssh` (a file beside it, then renamed).
fn copy(
    ssh: impl Fn(&str) -> Command,
    exe: &(PathBuf, String),
    to: &str,
    dir: &str,
) -> Result<(), String> {
    let (exe, sha256) = exe;
    let file = std::fs::File::open(exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let tmp = format!("{to}.tmp{}", std::process::id());
    // `--` before every path: a work_dir is checked not to start with `-`, and the
    // commands would not take one for an option even if it did.
    let script = format!(
        "mkdir -p -- {d} && cat > {t} && chmod 755 -- {t} && mv -- {t} {to} && sha256sum -- {to}",
        d = sq(&format!("{dir}/bin")),
        t = sq(&tmp),
        to = sq(to)
    );
    let mut cmd = ssh(&script);
    cmd.stdin(Stdio::from(file));
    let out = output_within(cmd, COPY_LIMIT)
        .map_err(|e| format!("cannot run ssh: {e}"))?
        .ok_or_else(|| {
            format!(
                "copying bakeoff there did not finish within {} s",
                COPY_LIMIT.as_secs()
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "copying bakeoff there failed: {}",
            said(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    let arrived = String::from_utf8_lossy(&out.stdout);
    if !arrived.starts_with(sha256.as_str()) {
        return Err(format!(
            "bakeoff arrived damaged at {to}: sha256 {}, sent {sha256}",
            arrived.split_whitespace().next().unwrap_or("unknown")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(sq("a b"), "'a b'");
        assert_eq!(sq("it's"), "'it'\\''s'");
    }
}
