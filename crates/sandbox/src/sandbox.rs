//! One running server: `Sandbox::start` picks a free loopback port, makes a work dir,
//! spawns the server (own process group, parent-death SIGKILL, logs in the dir), waits for
//! the target's readiness probe, and retries on a new port when the server reports that
//! the port was taken. `stop` sends SIGTERM to the group, SIGKILL after a grace period,
//! reaps, and removes the dir; `Drop` kills whatever was not stopped.

use std::fs::File;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::dirs::{self, log_tail};
use crate::error::SandboxError;
use crate::kind::TargetKind;
use crate::meta::Record;
use crate::process::{describe_exit, free_port, peek_exit};
use crate::procfs::Watch;
use crate::procfs::{self, Usage};
use crate::sqldata::{DataSource, Login};
use crate::target::{Launch, Made, Target};
use crate::{live, spawner};
use std::collections::BTreeMap;

/// How many ports to try when the server keeps reporting "address already in use".
const PORT_ATTEMPTS: u32 = 4;
/// How long to wait for a SIGKILLed server to go away before reaping it (blocking).
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Where servers listen unless an experiment serves other hosts.
pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// What to start and where.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSpec {
    /// Names the sandbox dir (sanitized), e.g. the variant name "gcc-O2".
    pub name: String,
    pub kind: TargetKind,
    /// The server binary: a path, or a bare name looked up on $PATH.
    pub binary: PathBuf,
    /// Extra server args (after the ones the target needs for port and address).
    pub args: Vec<String>,
    /// The sandbox root, e.g. [`crate::default_root`].
    pub root: PathBuf,
    /// How long the readiness probe may take in total (default 10 s).
    pub ready_timeout: Duration,
    /// How long `stop` waits after SIGTERM before SIGKILL (default 5 s).
    pub stop_grace: Duration,
    /// SQL targets: server options (my.cnf / postgresql.conf keys).
    pub options: BTreeMap<String, String>,
    /// SQL targets: the data directory to run on (required for them).
    pub data: Option<DataSource>,
    /// A command the server runs under, e.g. `valgrind --tool=memcheck` (empty: none).
    pub wrapper: Vec<String>,
    /// Extra environment for the server (e.g. ASAN_OPTIONS).
    pub env: Vec<(String, String)>,
    /// The address it listens on: 127.0.0.1 unless an experiment serves other hosts
    /// (SQLite's host stays on 127.0.0.1: it serves only the load beside it).
    pub listen: IpAddr,
    /// The CPUs the server may run on (None: those bakeoff's spawner thread has).
    pub cpus: Option<bakeoff_os::cpus::CpuSet>,
    /// `[plan] server_stats` (default "basic"): "full" has the server load or turn on
    /// what its statement digests need.
    pub stats: crate::stats::StatsLevel,
}

impl SandboxSpec {
    /// A spec with no extra args and the default timeouts.
    pub fn new(
        name: impl Into<String>,
        kind: TargetKind,
        binary: impl Into<PathBuf>,
        root: impl Into<PathBuf>,
    ) -> SandboxSpec {
        SandboxSpec {
            name: name.into(),
            kind,
            binary: binary.into(),
            args: Vec::new(),
            root: root.into(),
            ready_timeout: Duration::from_secs(10),
            stop_grace: Duration::from_secs(5),
            options: BTreeMap::new(),
            data: None,
            wrapper: Vec::new(),
            env: Vec::new(),
            listen: LOOPBACK,
            cpus: None,
            stats: Default::default(),
        }
    }
}

/// The [`Target`] for a spec: SQL targets get its options, its data source and the login
/// stored in that data.
pub fn target_for_spec(spec: &SandboxSpec) -> Result<Box<dyn Target>, String> {
    let sql = spec.kind.is_sql();
    let login = match &spec.data {
        Some(d) if sql => Some(crate::sqldata::read_login(d.path())?),
        _ => None,
    };
    if sql && spec.data.is_none() {
        return Err(format!(
            "a {} sandbox needs a data directory (make one with init_data)",
            spec.kind
        ));
    }
    Ok(crate::targets::make(
        spec.kind,
        Made {
            options: spec.options.clone(),
            data: spec.data.clone(),
            login,
        },
    ))
}

/// How a stopped server ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopOutcome {
    /// It exited within the grace period after SIGTERM.
    Terminated,
    /// It ignored SIGTERM for the grace period (or this was a Drop) and got SIGKILL.
    Killed,
    /// It had already exited before `stop` (check `exit_detail` before stopping).
    AlreadyExited,
}

/// The result of [`Sandbox::stop`].
#[derive(Debug, Clone, PartialEq)]
pub struct StopReport {
    pub outcome: StopOutcome,
    /// The server's exit status, e.g. "status 0" or "signal 9 (SIGKILL)".
    pub status: String,
    /// Time from the stop request until the server was reaped.
    pub took: Duration,
    /// Other processes of the sandbox still alive after the server exited, then killed.
    pub leftovers_killed: usize,
    /// The sandbox dir if it was kept (`keep_dir(true)`), else None.
    pub kept_dir: Option<PathBuf>,
}

/// File names of the server's logs inside the sandbox dir.
const STDOUT_FILE: &str = "server.stdout";
const STDERR_FILE: &str = "server.stderr";

/// Why one start attempt failed.
enum Failure {
    Exited { status: String, tail: String },
    Timeout { last: String },
}

/// A running server in its own dir, port and process group.
pub struct Sandbox {
    target: Arc<dyn Target>,
    /// None once reaped.
    child: Option<Child>,
    pid: i32,
    addr: SocketAddr,
    dir: PathBuf,
    live_id: u64,
    /// Set once the server is seen to have exited ("status 0", "signal 9 (SIGKILL)").
    exit_status: Option<String>,
    keep_dir: bool,
    dir_done: bool,
    stop_grace: Duration,
    /// What the ready server listened on ("127.0.0.1:41234/tcp"), read from /proc.
    listens: Vec<String>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("kind", &self.target.kind())
            .field("pid", &self.pid)
            .field("addr", &self.addr)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Sandbox {
    /// Starts the server of `spec.kind` and waits until it is ready. Callable from any
    /// thread: the fork happens on the crate's long-lived spawner thread.
    pub fn start(spec: &SandboxSpec) -> Result<Sandbox, SandboxError> {
        let target = target_for_spec(spec).map_err(|message| SandboxError::Init {
            target: spec.kind,
            dir: spec.root.clone(),
            message,
        })?;
        Sandbox::start_with(spec, target)
    }

    /// [`Sandbox::start`] with an explicit target (`spec.kind` is then ignored); for
    /// targets outside this crate and for tests.
    pub fn start_with(
        spec: &SandboxSpec,
        target: Box<dyn Target>,
    ) -> Result<Sandbox, SandboxError> {
        if live::is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        let library = target.kind().binary_is_library() && spec.binary.is_file();
        let found = if library {
            Some(spec.binary.clone())
        } else {
            bakeoff_os::path::which(&spec.binary)
        };
        let binary = found.ok_or_else(|| SandboxError::BinaryNotFound {
            path: spec.binary.clone(),
        })?;
        // The server starts in its work dir: a relative path would name another file there.
        let binary = std::path::absolute(&binary).unwrap_or(binary);
        let target: Arc<dyn Target> = Arc::from(target);
        dirs::prepare_root(&spec.root)?;
        if target.kind().is_sql() && crate::sqldata::server_user().is_some() {
            // The server's own user must pass through the root (not list or write it).
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&spec.root, std::fs::Permissions::from_mode(0o711)).map_err(
                |e| SandboxError::io("open the sandbox root to the server user", &spec.root, e),
            )?;
        }
        let dir = dirs::create_workdir(&spec.root, &spec.name)?;
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        let mut record = Record::for_this_process(&spec.name, target.kind().as_str());
        let id = bakeoff_os::own::register(&dir, bakeoff_os::own::SANDBOX_PURPOSE)
            .map_err(|e| SandboxError::io("record the sandbox dir in bakeoff's state", &dir, e))?;
        record.claim_id = Some(format!("{id:016x}"));
        record.write(&dir)?;
        if let Err(message) = target.init(&binary, &dir) {
            return Err(SandboxError::Init {
                target: target.kind(),
                dir,
                message,
            });
        }
        let (mut last_port, mut last_tail) = (0, String::new());
        for _ in 0..PORT_ATTEMPTS {
            let mut sb = match Sandbox::spawn(target.clone(), &binary, spec, &dir, &mut record) {
                Ok(sb) => sb,
                Err(e) => {
                    // Nothing ran (or it was killed again at once): no logs worth keeping.
                    let _ = bakeoff_os::own::remove_tree(&dir);
                    return Err(e);
                }
            };
            last_port = sb.addr.port();
            // Kept on failure: for the next attempt, or for the user to read the logs.
            sb.keep_dir = true;
            match sb.wait_ready(spec.ready_timeout) {
                Ok(()) => {
                    sb.keep_dir = false;
                    // Dropped (killed, its dir removed) when it listens where it should not.
                    sb.check_exposure()?;
                    return Ok(sb);
                }
                Err(Failure::Exited { tail, .. }) if target.is_port_clash(&tail) => {
                    last_tail = tail;
                    continue;
                }
                Err(failure) => return Err(sb.start_error(failure, spec.ready_timeout)),
            }
        }
        let _ = bakeoff_os::own::remove_tree(&dir);
        Err(SandboxError::PortBusy {
            target: target.kind(),
            attempts: PORT_ATTEMPTS,
            last_port,
            held: procfs::port_listened(last_port),
            tail: last_tail,
        })
    }

    /// One spawn on a fresh port, registered and recorded (not yet ready).
    fn spawn(
        target: Arc<dyn Target>,
        binary: &Path,
        spec: &SandboxSpec,
        dir: &Path,
        record: &mut Record,
    ) -> Result<Sandbox, SandboxError> {
        let ip = spec.listen;
        let port = free_port(ip).map_err(|source| SandboxError::NoFreePort { source })?;
        let log = |name: &str| {
            let path = dir.join(name);
            File::create(&path).map_err(|e| SandboxError::io("create log file", path, e))
        };
        let mut cmd = wrapped(
            target.command(&Launch {
                binary,
                addr: SocketAddr::new(ip, port),
                workdir: dir,
                args: &spec.args,
                stats: spec.stats,
            }),
            &spec.wrapper,
            target.runs_as_server_user(),
        );
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        // The tag a later cleanup checks before it signals anything (after the
        // experiment's env, so the experiment cannot set it).
        if let Some(id) = &record.claim_id {
            cmd.env(procfs::SANDBOX_TAG, id);
        }
        if let Some(set) = &spec.cpus {
            pin_child(&mut cmd, set);
        }
        cmd.current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log(STDOUT_FILE)?)
            .stderr(log(STDERR_FILE)?);
        let child = spawner::spawn(cmd).map_err(|source| SandboxError::Spawn {
            binary: binary.to_path_buf(),
            source,
        })?;
        let pid = child.id() as i32;
        let sb = Sandbox {
            target,
            child: Some(child),
            pid,
            addr: SocketAddr::new(ip, port),
            dir: dir.to_path_buf(),
            live_id: live::register(pid, pid),
            exit_status: None,
            keep_dir: true,
            dir_done: false,
            stop_grace: spec.stop_grace,
            listens: Vec::new(),
        };
        record.server_pid = Some(pid);
        record.server_pgid = Some(pid);
        record.server_start = procfs::start_ticks(pid);
        record.write(dir)?;
        // A signal that came between spawn and register missed this server: Drop kills it.
        if live::is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        Ok(sb)
    }

    /// Polls the target's probe until it succeeds, the server exits, or `timeout` passes.
    fn wait_ready(&mut self, timeout: Duration) -> Result<(), Failure> {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_millis(5);
        let mut last: String;
        loop {
            if let Some(status) = self.poll_exit() {
                let tail = self.log_tail();
                return Err(Failure::Exited { status, tail });
            }
            match self.target.probe(self.addr) {
                Ok(true) if self.listens_itself() => {
                    if self.poll_exit().is_none() {
                        return Ok(());
                    }
                    continue;
                }
                Ok(true) => last = format!("port {} answered by another process", self.addr.port()),
                Ok(false) => last = "the probe got no ready answer".to_string(),
                Err(e) => last = format!("last probe: {e}"),
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Failure::Timeout { last });
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// Records what the server listens on; an error when that goes beyond the address
    /// asked for and loopback (a wildcard, another interface), TCP or UDP.
    fn check_exposure(&mut self) -> Result<(), SandboxError> {
        let pids: Vec<i32> = procfs::sandbox_members(&procfs::all_stats(), self.pid, self.pid)
            .iter()
            .map(|s| s.pid)
            .collect();
        let asked = self.addr.ip();
        let found = procfs::listening_addrs(&pids);
        self.listens = found.iter().map(|(a, p)| format!("{a}/{p}")).collect();
        let beyond: Vec<String> = found
            .into_iter()
            .filter(|(a, _)| !asked.is_unspecified() && a.ip() != asked && !a.ip().is_loopback())
            .map(|(a, proto)| format!("{a}/{proto}"))
            .collect();
        if beyond.is_empty() {
            return Ok(());
        }
        Err(SandboxError::Exposed {
            target: self.target.kind(),
            asked,
            listens: beyond.join(", "),
        })
    }

    /// False only when /proc shows that another process owns the listening socket.
    fn listens_itself(&self) -> bool {
        let pids: Vec<i32> = procfs::sandbox_members(&procfs::all_stats(), self.pid, self.pid)
            .iter()
            .map(|s| s.pid)
            .collect();
        procfs::listener_owned_by(self.addr.port(), &pids) != Some(false)
    }

    /// The error for a failed start, with the log's last lines in it; the server is
    /// killed and reaped when `self` drops, and its dir removed (a failed start leaves
    /// nothing in the sandbox root).
    fn start_error(mut self, failure: Failure, timeout: Duration) -> SandboxError {
        let target = self.target.kind();
        self.keep_dir = false;
        match failure {
            Failure::Exited { status, tail } => SandboxError::ExitedAtStart {
                target,
                status,
                tail,
            },
            Failure::Timeout { last } => SandboxError::NotReady {
                target,
                pid: self.pid as u32,
                addr: self.addr,
                waited: timeout,
                last,
                tail: self.log_tail(),
            },
        }
    }

    /// The loopback address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every address the ready server listened on, TCP and UDP ("127.0.0.1:41234/tcp"),
    /// as /proc showed them (empty where /proc could not tell).
    pub fn listens(&self) -> &[String] {
        &self.listens
    }

    /// The server's pid (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// How SQL workloads log in (SQL targets).
    pub fn login(&self) -> Option<Login> {
        self.target.login()
    }

    /// The settings the ready server runs with ([`Target::read_settings`]), made safe to
    /// keep ([`crate::settings::tidy`]: secrets and the login's password masked, this
    /// sandbox's folder and port written as placeholders, so two runs read alike). Err:
    /// why they could not be read.
    pub fn settings(&self) -> Result<std::collections::BTreeMap<String, String>, String> {
        let raw = self.target.read_settings(self.addr)?;
        let login = self.target.login();
        Ok(crate::settings::tidy(
            raw,
            &self.dir.to_string_lossy(),
            self.addr.port(),
            login.as_ref(),
        ))
    }

    /// The server's own statistics now ([`Target::read_stats`]); nothing when `level` is
    /// off.
    pub fn stats(&self, level: crate::stats::StatsLevel) -> crate::stats::Snapshot {
        if !level.reads() {
            return crate::stats::Snapshot::default();
        }
        self.target.read_stats(self.addr, level)
    }

    /// Starts sampling the server during the measured window
    /// ([`Target::start_sampling`]); nothing when `level` is off, or when
    /// `BAKEOFF_NO_SAMPLING` is set (what bench/server-stats-cost.sh measures the
    /// sampler's cost with).
    pub fn start_sampling(
        &self,
        level: crate::stats::StatsLevel,
    ) -> Option<crate::stats::Sampling> {
        if !level.reads() || std::env::var_os("BAKEOFF_NO_SAMPLING").is_some() {
            return None;
        }
        self.target.start_sampling(self.addr, level)
    }

    /// How long the after-read of the statistics waits for the counters to settle
    /// ([`Target::stats_settle`]).
    pub fn stats_settle(&self) -> std::time::Duration {
        self.target.stats_settle()
    }

    /// Whether reading its statistics after the window needs the load's connections
    /// still open ([`crate::Target::stats_need_connections`]).
    pub fn stats_need_connections(&self) -> bool {
        self.target.stats_need_connections()
    }

    /// The server's unix socket (MariaDB: the socket file; PostgreSQL: its directory).
    pub fn socket(&self) -> Option<PathBuf> {
        self.target.socket(&self.dir)
    }

    /// The kind of server.
    pub fn kind(&self) -> TargetKind {
        self.target.kind()
    }

    /// The sandbox's work dir.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file the server's stdout goes to.
    pub fn stdout_path(&self) -> PathBuf {
        self.dir.join(STDOUT_FILE)
    }

    /// The file the server's stderr goes to.
    pub fn stderr_path(&self) -> PathBuf {
        self.dir.join(STDERR_FILE)
    }

    /// Keep the work dir (and logs) after stop/drop instead of removing it. A kept dir is
    /// removed by the next bakeoff run's `reap_stale`.
    pub fn keep_dir(&mut self, keep: bool) -> &mut Self {
        self.keep_dir = keep;
        self
    }

    /// Whether the server still runs. Does not reap it, so calling it often is cheap
    /// and safe.
    pub fn is_alive(&mut self) -> bool {
        self.poll_exit().is_none()
    }

    /// If the server exited: `memcached exited with status 1: <last stderr lines>`.
    /// After SIGINT/SIGTERM, bakeoff's own SIGKILL ended it, and that is what is said.
    pub fn exit_detail(&mut self) -> Option<String> {
        let status = self.poll_exit()?;
        if live::is_cancelled() {
            return Some(format!(
                "{} was stopped by bakeoff after an interrupt ({status})",
                self.target.kind()
            ));
        }
        Some(format!(
            "{} exited with {status}: {}",
            self.target.kind(),
            self.log_tail()
        ))
    }

    /// A `Send` handle on this sandbox's processes (usage, pids) for probe threads.
    pub fn watch(&self) -> Watch {
        Watch {
            leader: self.pid,
            pgid: self.pid,
        }
    }

    /// CPU and memory of every process of the sandbox now (zero once stopped).
    pub fn usage(&self) -> Usage {
        if self.child.is_none() {
            return Usage::default();
        }
        procfs::sandbox_usage(self.pid, self.pid)
    }

    /// Stops the server (SIGTERM to its group, SIGKILL after the grace period), reaps it,
    /// and removes the dir unless `keep_dir(true)`.
    pub fn stop(mut self) -> Result<StopReport, SandboxError> {
        let mut report = self.stop_server(Some(self.stop_grace));
        report.kept_dir = self.finish_dir()?;
        Ok(report)
    }

    /// [`Sandbox::stop`], first moving the logs to `<dest>.stdout` and `<dest>.stderr`
    /// (`dest` is a path prefix such as `results/logs/gcc-O2-r3`; parent dirs are made).
    pub fn stop_and_collect(mut self, dest: &Path) -> Result<StopReport, SandboxError> {
        let mut report = self.stop_server(Some(self.stop_grace));
        let with_ext = |ext: &str| {
            let mut p = dest.as_os_str().to_owned();
            p.push(ext);
            PathBuf::from(p)
        };
        dirs::move_file(&self.stdout_path(), &with_ext(".stdout"))?;
        dirs::move_file(&self.stderr_path(), &with_ext(".stderr"))?;
        report.kept_dir = self.finish_dir()?;
        Ok(report)
    }

    /// `stop_and_collect(dir.join(prefix))`: logs become `<dir>/<prefix>.stdout|.stderr`.
    pub fn stop_and_collect_into(
        self,
        dir: &Path,
        prefix: &str,
    ) -> Result<StopReport, SandboxError> {
        self.stop_and_collect(&dir.join(prefix))
    }
}

/// Process bookkeeping behind the public methods.
impl Sandbox {
    /// How the server ended, if it did (not reaping it; see `process::peek_exit`).
    fn poll_exit(&mut self) -> Option<String> {
        if self.exit_status.is_none() && self.child.is_some() {
            self.exit_status = match peek_exit(self.pid) {
                Ok(status) => status,
                Err(e) => Some(format!("unknown status ({e})")),
            };
        }
        self.exit_status.clone()
    }

    /// Polls until the server exited or `timeout` passed; true if it exited.
    fn wait_exit(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.poll_exit().is_some() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn log_tail(&self) -> String {
        log_tail(&self.stderr_path(), &self.stdout_path())
    }

    /// Ends the server: SIGTERM to the group and up to `grace` (None: straight SIGKILL),
    /// then SIGKILL to the whole sandbox; kills processes left behind, deregisters, reaps.
    fn stop_server(&mut self, grace: Option<Duration>) -> StopReport {
        let started = Instant::now();
        let mut report = StopReport {
            outcome: StopOutcome::AlreadyExited,
            status: self.exit_status.clone().unwrap_or_default(),
            took: Duration::ZERO,
            leftovers_killed: 0,
            kept_dir: None,
        };
        if self.child.is_none() {
            return report;
        }
        let before = live::snapshot(self.pid, self.pid);
        if self.poll_exit().is_none() {
            report.outcome = StopOutcome::Killed;
            if let Some(grace) = grace {
                if !self.target.request_stop(self.addr()) {
                    let (signal, group) = self.target.stop_signal();
                    // SAFETY: the group is ours: its leader is not reaped yet.
                    unsafe {
                        if group {
                            libc::killpg(self.pid, signal);
                        } else {
                            libc::kill(self.pid, signal);
                        }
                        // A stopped server (SIGSTOP) acts on the signal only once it
                        // runs again: continued, it stops cleanly within the grace.
                        libc::killpg(self.pid, libc::SIGCONT);
                    };
                }
                if self.wait_exit(grace) {
                    report.outcome = StopOutcome::Terminated;
                }
            }
            if report.outcome == StopOutcome::Killed {
                live::signal_tree(self.pid, self.pid, libc::SIGKILL);
                self.wait_exit(KILL_WAIT);
            }
        }
        // The leader is a zombie now, still holding the group id: safe to sweep the group.
        report.leftovers_killed = live::kill_leftovers(self.pid, self.pid, &before);
        live::deregister(self.live_id);
        if let Some(mut child) = self.child.take() {
            let status = child.wait().map(describe_exit);
            let status = status.unwrap_or_else(|e| format!("unknown status ({e})"));
            self.exit_status = Some(status);
        }
        report.status = self.exit_status.clone().unwrap_or_default();
        report.took = started.elapsed();
        report
    }

    /// Removes the dir unless it is to be kept; returns the kept dir.
    fn finish_dir(&mut self) -> Result<Option<PathBuf>, SandboxError> {
        if self.dir_done {
            return Ok(None);
        }
        self.dir_done = true;
        if self.keep_dir {
            return Ok(Some(self.dir.clone()));
        }
        bakeoff_os::own::remove_tree(&self.dir)
            .map_err(|e| SandboxError::io("remove sandbox dir", &self.dir, e))?;
        Ok(None)
    }
}

impl Drop for Sandbox {
    /// Kills the server (SIGKILL to the whole sandbox) if it was not stopped, reaps it,
    /// and removes the dir unless kept.
    fn drop(&mut self) {
        self.stop_server(None);
        let _ = self.finish_dir();
    }
}

/// `cmd` run under `wrapper` (its program and args first, then the server's command line,
/// with the same environment); `server_user`: the server runs as the server user, and so
/// does its wrapper.
fn wrapped(
    cmd: std::process::Command,
    wrapper: &[String],
    server_user: bool,
) -> std::process::Command {
    let Some((program, args)) = wrapper.split_first() else {
        return cmd;
    };
    let mut out = std::process::Command::new(program);
    out.args(args).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => out.env(k, v),
            None => out.env_remove(k),
        };
    }
    if server_user {
        crate::sqldata::as_server_user(&mut out);
    }
    out
}

/// Pins the process `cmd` starts to `set` before it runs anything (its threads inherit it).
fn pin_child(cmd: &mut std::process::Command, set: &bakeoff_os::cpus::CpuSet) {
    use std::os::unix::process::CommandExt;
    let mask = set.to_mask();
    // SAFETY: the closure runs between fork and exec and makes one async-signal-safe
    // system call (sched_setaffinity) on a mask built before the fork; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || bakeoff_os::cpus::pin_mask(0, &mask));
    }
}
