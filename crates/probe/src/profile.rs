//! Hotspots of a server's processes, sampled with `perf record -g`.
//!
//! A [`Recording`] attaches `perf record -g -F 999` to the server's processes (all their
//! threads) for the measured window and writes a `perf.data` file; [`analyze`] reads it
//! back through `perf script` and turns the call stacks into a [`Profile`]: the functions
//! with the most samples of their own (and the share of samples they appear in at all),
//! the split of samples between the server's own binary, the kernel and shared
//! libraries, and folded stacks, from which [`flamegraph`] draws an SVG. [`diff`]
//! compares two profiles per operation.
//!
//! The event sampled is `cycles` where the CPU counts it, else the software event
//! `cpu-clock`: virtual machines (KVM guests without a virtual PMU, most cloud
//! instances) have no hardware counters, and `perf record -e cycles` fails there. The
//! choice is made once per process by `perf stat -x, -e cycles -- true`
//! ([`sampling_event`]). Both sample at a fixed rate, so samples are proportional to
//! CPU time.
//!
//! Where perf has `--control` (5.11 on), it starts with its events disabled (`-D -1`) and
//! [`Recording::start`] enables them through a control fifo and waits for perf's
//! acknowledgement: perf creates its file before it attaches to every thread and writes
//! the processes' maps, which on a loaded machine took longer than a short window, and a
//! recording whose events were enabled after the window held no sample. An older perf is
//! taken as ready once its file exists.
//!
//! perf is started with `PR_SET_PDEATHSIG` so that it dies with bakeoff; the signal
//! follows the *thread* that started it, so start and stop a recording from a thread
//! that outlives it.

pub use crate::hotspots::{FnShare, HotLine, Profile, Split};

use crate::hotlines::Spots;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Sampling frequency, Hz: an odd rate, so as not to run in lockstep with timers.
const FREQUENCY: &str = "999";
/// How long perf gets to write its file after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `start` waits for perf to create its file (and so to be ready for SIGINT),
/// and `stop` waits again before its SIGINT if perf has not yet: on a loaded machine perf
/// took over 3 s to start, and a SIGINT before its handler ended it with no data.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// The lowest kernel address on 64-bit Linux (x86-64 and arm64 put the kernel above).
const KERNEL_START: u64 = 0xffff_8000_0000_0000;
/// What the flamegraph and `dso` call kernel code.
const KERNEL: &str = "[kernel]";
const UNKNOWN: &str = "[unknown]";

/// The event to sample on this machine: "cycles" where the CPU counts it, else
/// "cpu-clock". Decided once per process.
pub fn sampling_event() -> &'static str {
    static EVENT: OnceLock<&'static str> = OnceLock::new();
    EVENT.get_or_init(|| {
        if cycles_supported() {
            "cycles"
        } else {
            "cpu-clock"
        }
    })
}

/// Whether `perf stat` can count cycles (it prints `<not supported>` in most VMs).
fn cycles_supported() -> bool {
    let output = Command::new("perf")
        .args(["stat", "-x,", "-e", "cycles", "--", "true"])
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => counted_cycles(&String::from_utf8_lossy(&out.stderr)),
        _ => false,
    }
}

/// Whether `perf stat -x,` output has a numeric cycles count.
fn counted_cycles(csv: &str) -> bool {
    csv.lines().any(|line| {
        let fields: Vec<&str> = line.split(',').collect();
        fields.len() > 2 && fields[2].contains("cycles") && fields[0].trim().parse::<f64>().is_ok()
    })
}

/// A running perf record.
pub struct Recording {
    child: Option<Child>,
    data: PathBuf,
    log: PathBuf,
    /// perf's control fifos, where perf has them: its events wait for `enable`.
    control: Option<Control>,
}

/// The two fifos of `perf record --control fifo:CTL,ACK`, both ends held open here
/// (read-write, so that opening never blocks on perf).
struct Control {
    ctl: File,
    ack: File,
    paths: [PathBuf; 2],
    /// perf acknowledged `enable`: its events count.
    enabled: bool,
}

impl Control {
    /// Makes the fifos beside `data` (a stale one is replaced).
    fn new(data: &Path) -> io::Result<Control> {
        let paths = [with_suffix(data, ".ctl"), with_suffix(data, ".ack")];
        for p in &paths {
            match std::fs::remove_file(p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
                .map_err(|_| io::Error::other("a NUL in perf's fifo path"))?;
            // SAFETY: mkfifo reads the NUL-terminated path only.
            if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let open = |p: &Path| std::fs::OpenOptions::new().read(true).write(true).open(p);
        Ok(Control {
            ctl: open(&paths[0])?,
            ack: open(&paths[1])?,
            paths,
            enabled: false,
        })
    }

    /// perf's `--control` argument.
    fn arg(&self) -> String {
        format!(
            "fifo:{},{}",
            self.paths[0].display(),
            self.paths[1].display()
        )
    }

    /// Whether perf has acknowledged within `wait` (its answer is `ack`).
    fn acked(&mut self, wait: Duration) -> io::Result<bool> {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: self.ack.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = wait.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one pollfd, valid for the call.
        let n = unsafe { libc::poll(&mut fd, 1, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        if n == 0 {
            return Ok(false);
        }
        let mut buf = [0u8; 64];
        let got = (&self.ack).read(&mut buf)?;
        Ok(buf[..got].windows(3).any(|w| w == b"ack"))
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether this perf can start with its events disabled and enable them on a control
/// fifo's command (`-D -1`, `--control fifo:`): decided once per process from its help.
fn has_control() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let out = Command::new("perf")
            .args(["record", "-h"])
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(out) => {
                let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&out.stderr));
                text.contains("fifo:ctl-fifo") && text.contains("-1: start with events disabled")
            }
            Err(_) => false,
        }
    })
}

impl Recording {
    /// Starts `perf record -g` on `pids` into `data`.
    ///
    /// Samples `cycles` or `cpu-clock` ([`sampling_event`]) at 999 Hz. An existing
    /// `data` is removed first; perf's messages go to `data` with the extension `log`.
    /// Returns once perf's events count (where perf has `--control`: it acknowledged
    /// `enable`; else once it has created `data`, by then it handles SIGINT) or after
    /// 10 s, and fails if perf exits before that (no such process, say).
    pub fn start(pids: &[i32], data: &Path) -> std::io::Result<Recording> {
        if pids.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "perf record: no processes to record",
            ));
        }
        match std::fs::remove_file(data) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let log = log_path(data);
        let out = File::create(&log)?;
        let err = out.try_clone()?;
        let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
        let control = if has_control() {
            Some(Control::new(data)?)
        } else {
            None
        };
        let mut cmd = Command::new("perf");
        cmd.args([
            "record",
            "-g",
            "-F",
            FREQUENCY,
            "-e",
            sampling_event(),
            "-p",
            &list.join(","),
            "-o",
        ])
        .arg(data);
        if let Some(c) = &control {
            cmd.args(["-D", "-1", "--control"]).arg(c.arg());
        }
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the closure only makes async-signal-safe calls (prctl, getppid).
        unsafe {
            cmd.pre_exec(move || die_with_parent(parent));
        }
        let child = cmd.spawn().map_err(|e| spawn_error("perf record", e))?;
        let mut recording = Recording {
            child: Some(child),
            data: data.to_path_buf(),
            log,
            control,
        };
        if let Some(c) = recording.control.as_mut() {
            (&c.ctl).write_all(b"enable\n")?;
        }
        recording.wait_ready()?;
        Ok(recording)
    }

    /// Waits until perf's events count (with a control fifo: perf acknowledged
    /// `enable`) or, for an older perf, until it has created its file: by then it
    /// handles SIGINT.
    fn wait_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            match self.control.as_mut() {
                Some(c) if c.enabled => return Ok(()),
                Some(c) => {
                    if c.acked(Duration::from_millis(10))? {
                        c.enabled = true;
                        return Ok(());
                    }
                }
                None if self.data.exists() => return Ok(()),
                None => std::thread::sleep(Duration::from_millis(10)),
            }
            if let Some(child) = self.child.as_mut() {
                if let Some(status) = child.try_wait()? {
                    self.child = None;
                    return Err(self.failure(status));
                }
            }
        }
        Ok(())
    }

    /// Stops perf (SIGINT) and waits for it to write the file.
    ///
    /// Fails if perf had failed (with the last line of its log), did not stop within
    /// 10 s (it is then killed), or left no data.
    pub fn stop(mut self) -> std::io::Result<()> {
        if self.child.is_some() {
            // A perf still starting would die of the SIGINT with nothing written.
            self.wait_ready()?;
        }
        let Some(mut child) = self.child.take() else {
            return Err(io::Error::other("perf record is not running"));
        };
        let status = match child.try_wait()? {
            Some(status) => Some(status),
            None => {
                // SAFETY: kill(2) on our own child, which has not been reaped yet.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
                wait_timeout(&mut child, STOP_TIMEOUT)?
            }
        };
        let Some(status) = status else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "perf record did not stop within {} s of SIGINT; killed it",
                    STOP_TIMEOUT.as_secs()
                ),
            ));
        };
        if !stopped_cleanly(status) {
            return Err(self.failure(status));
        }
        match std::fs::metadata(&self.data) {
            Ok(meta) if meta.len() > 0 => Ok(()),
            _ => Err(io::Error::other(format!(
                "perf record wrote no data to {}: {}",
                self.data.display(),
                last_line(&self.log)
            ))),
        }
    }

    /// The error for perf having exited with `status`.
    fn failure(&self, status: ExitStatus) -> io::Error {
        io::Error::other(format!(
            "perf record failed ({status}): {}",
            last_line(&self.log)
        ))
    }
}

impl Drop for Recording {
    /// A recording dropped without `stop` kills perf.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// In the forked child: die with the parent thread (SIGKILL), or now if it is gone.
fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl and getppid are async-signal-safe and touch no memory of ours.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            return Err(io::Error::other("parent exited"));
        }
    }
    Ok(())
}

/// perf's log file beside `data`.
fn log_path(data: &Path) -> PathBuf {
    let log = data.with_extension("log");
    if log == data {
        let mut name = data.as_os_str().to_owned();
        name.push(".log");
        return PathBuf::from(name);
    }
    log
}

/// Polls `child` until it exits or `timeout` passes (None).
fn wait_timeout(child: &mut Child, timeout: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// perf record ends on SIGINT by re-raising it once its file is written.
fn stopped_cleanly(status: ExitStatus) -> bool {
    status.success()
        || status.code() == Some(128 + libc::SIGINT)
        || status.signal() == Some(libc::SIGINT)
}

/// The last non-empty line of the file at `path`, or a note that there is none.
fn last_line(path: &Path) -> String {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return format!("no log ({}: {e})", path.display()),
    };
    last_text_line(&text).unwrap_or_else(|| "no message".to_string())
}

fn last_text_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// An error for a command that could not be started, naming it.
fn spawn_error(what: &str, e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::NotFound {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{what}: perf is not installed (linux-perf)"),
        )
    } else {
        io::Error::new(e.kind(), format!("{what}: {e}"))
    }
}

/// Reads `data` with `perf script`; `server` is the server binary's path (its file name
/// tells the server's own functions from libraries').
///
/// Runs `perf script -F comm,pid,tid,event,ip,sym,symoff,dso --no-inline` (without
/// `--no-inline` where perf lacks it: resolving inlined frames is very slow) and parses
/// its output as it comes, with [`parse_script`]'s rules; then gives the top functions
/// their hottest lines ([`crate::hotlines::resolve`], bounded in time).
pub fn analyze(data: &Path, server: &Path) -> std::io::Result<Profile> {
    // perf names the file the process runs (Debian's redis-server is a link to
    // redis-check-rdb).
    let server = std::fs::canonicalize(server).unwrap_or_else(|_| server.to_path_buf());
    let server_name = file_name(&server.to_string_lossy()).to_string();
    match run_script(data, &server_name, true)? {
        Ok(profile) => Ok(profile),
        Err(stderr) if stderr.contains("no-inline") => match run_script(data, &server_name, false)?
        {
            Ok(profile) => Ok(profile),
            Err(stderr) => Err(script_failed(&stderr)),
        },
        Err(stderr) => Err(script_failed(&stderr)),
    }
}

fn script_failed(stderr: &str) -> io::Error {
    io::Error::other(format!(
        "perf script failed: {}",
        last_text_line(stderr).unwrap_or_else(|| "no message".to_string())
    ))
}

/// Runs perf script over `data`: the profile, or perf's stderr if it failed.
fn run_script(
    data: &Path,
    server_name: &str,
    no_inline: bool,
) -> io::Result<Result<Profile, String>> {
    let mut cmd = Command::new("perf");
    cmd.args(["script", "-F", "comm,pid,tid,event,ip,sym,symoff,dso"]);
    if no_inline {
        cmd.arg("--no-inline");
    }
    cmd.arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| spawn_error("perf script", e))?;
    let stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(mut pipe) = stderr {
            let _ = pipe.read_to_end(&mut text);
        }
        String::from_utf8_lossy(&text).into_owned()
    });
    let mut parser = ScriptParser::new(server_name);
    let read = match child.stdout.take() {
        Some(stdout) => feed(&mut parser, stdout),
        None => Ok(()),
    };
    if read.is_err() {
        let _ = child.kill();
    }
    let status = child.wait()?;
    let stderr = errors.join().unwrap_or_default();
    read?;
    if !status.success() {
        return Ok(Err(format!("{stderr}\n({status})")));
    }
    parser.end_sample();
    let spots = std::mem::take(&mut parser.spots);
    let mut profile = parser.finish();
    crate::hotlines::resolve(&mut profile, &spots);
    Ok(Ok(profile))
}

/// Feeds every line of `input` to `parser` (bytes that are not UTF-8 replaced).
fn feed(parser: &mut ScriptParser, input: impl Read) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        parser.line(&String::from_utf8_lossy(&line));
    }
}

/// Parses the text of `perf script -F comm,pid,tid,event,ip,sym,dso` over a recording
/// made with `-g`; `server_name` is the server binary's file name.
///
/// Samples are separated by blank lines: a header line (`comm pid/tid event:`), then
/// one frame per line, innermost first (`<hex address> <symbol[+0xoff]> (<dso>)`).
/// Lines that fit neither are skipped; samples without frames are not counted.
/// Unknown symbols become `[unknown] (<dso file name>)`. A frame is the kernel's if
/// its dso is `[kernel.kallsyms]` (or another `[kernel…]`), or if its address is in
/// the kernel's half and it lies in the kernel part of the stack (the innermost frames,
/// before the first user frame). In `folded`, kernel frames end in `_[k]` and `;` in
/// names becomes `:`.
pub fn parse_script(text: &str, server_name: &str) -> Profile {
    let mut parser = ScriptParser::new(server_name);
    for line in text.lines() {
        parser.line(line);
    }
    parser.finish()
}

/// One frame of a sample, as printed.
#[derive(Debug, PartialEq)]
struct RawFrame<'a> {
    addr: u64,
    sym: &'a str,
    dso: &'a str,
}

/// Which part of the address space a sample's innermost frame is in.
#[derive(Clone, Copy)]
enum Place {
    Server,
    Kernel,
    Library,
    Other,
}

/// Counts for one function (by name and dso).
struct FnStats {
    function: String,
    dso: String,
    self_samples: u64,
    children: u64,
}

/// `perf script` text in, line by line; a [`Profile`] out.
struct ScriptParser {
    server: String,
    in_sample: bool,
    event: Option<String>,
    /// The current sample's frames, innermost first.
    frames: Vec<(u64, String, String)>,
    samples: u64,
    events: BTreeMap<String, u64>,
    ids: HashMap<(String, String), usize>,
    stats: Vec<FnStats>,
    /// Samples by place of the innermost frame: server, kernel, libraries, other.
    places: [u64; 4],
    folded: BTreeMap<String, u64>,
    /// Own samples of each function by offset into its symbol, keyed by function name
    /// and dso file name, with the dso's path.
    spots: HashMap<(String, String), Spots>,
}

impl ScriptParser {
    fn new(server_name: &str) -> ScriptParser {
        ScriptParser {
            server: server_name.to_string(),
            in_sample: false,
            event: None,
            frames: Vec::new(),
            samples: 0,
            events: BTreeMap::new(),
            ids: HashMap::new(),
            stats: Vec::new(),
            places: [0; 4],
            folded: BTreeMap::new(),
            spots: HashMap::new(),
        }
    }

    fn line(&mut self, line: &str) {
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            self.end_sample();
        } else if !self.in_sample {
            self.header(line);
        } else if let Some(frame) = parse_frame(line) {
            self.frames
                .push((frame.addr, frame.sym.to_string(), frame.dso.to_string()));
        } else if !line.starts_with(char::is_whitespace) {
            // A new header without the blank line between samples.
            self.end_sample();
            self.header(line);
        }
    }

    fn header(&mut self, line: &str) {
        self.in_sample = true;
        let (event, rest) = split_header(line);
        self.event = event.map(str::to_string);
        // Without -g, perf prints the one frame on the header line.
        if let Some(frame) = rest.and_then(parse_frame) {
            self.frames
                .push((frame.addr, frame.sym.to_string(), frame.dso.to_string()));
        }
    }

    fn end_sample(&mut self) {
        self.in_sample = false;
        let event = self.event.take();
        if self.frames.is_empty() {
            return;
        }
        let frames = std::mem::take(&mut self.frames);
        self.samples += 1;
        if let Some(event) = event {
            *self.events.entry(event).or_default() += 1;
        }
        self.count_sample(&frames);
    }

    /// Adds one sample's frames (innermost first) to the counts.
    fn count_sample(&mut self, frames: &[(u64, String, String)]) {
        let mut in_kernel = true;
        let mut ids = Vec::with_capacity(frames.len());
        let mut names = Vec::with_capacity(frames.len());
        for (addr, sym, dso) in frames {
            let kernel = is_kernel(*addr, dso, in_kernel);
            in_kernel &= kernel;
            let dso_name = if kernel {
                KERNEL.to_string()
            } else {
                file_name(dso).to_string()
            };
            let function = function_name(sym, &dso_name);
            let mut name = function.replace(';', ":");
            if kernel {
                name.push_str("_[k]");
            }
            names.push(name);
            ids.push(self.id(function, dso_name));
        }
        if let Some((_, sym, dso)) = frames.first() {
            if let Some(off) = symbol_offset(sym) {
                let f = &self.stats[ids[0]];
                if f.dso != KERNEL {
                    let key = (f.function.clone(), f.dso.clone());
                    let spot = self.spots.entry(key).or_default();
                    if spot.path.is_empty() {
                        spot.path = dso.trim().trim_end_matches(" (deleted)").to_string();
                    }
                    *spot.by_offset.entry(off).or_default() += 1;
                }
            }
        }
        let place = self.place(&self.stats[ids[0]].dso);
        self.places[place as usize] += 1;
        self.stats[ids[0]].self_samples += 1;
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            self.stats[id].children += 1;
        }
        names.reverse();
        *self.folded.entry(names.join(";")).or_default() += 1;
    }

    fn id(&mut self, function: String, dso: String) -> usize {
        let next = self.stats.len();
        let key = (function, dso);
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        self.stats.push(FnStats {
            function: key.0.clone(),
            dso: key.1.clone(),
            self_samples: 0,
            children: 0,
        });
        self.ids.insert(key, next);
        next
    }

    fn place(&self, dso_name: &str) -> Place {
        if dso_name == KERNEL {
            Place::Kernel
        } else if !self.server.is_empty() && dso_name == self.server {
            Place::Server
        } else if dso_name.ends_with(".so") || dso_name.contains(".so.") {
            Place::Library
        } else {
            Place::Other
        }
    }

    fn finish(mut self) -> Profile {
        self.end_sample();
        let samples = self.samples;
        let pct = |n: u64| {
            if samples == 0 {
                0.0
            } else {
                n as f64 * 100.0 / samples as f64
            }
        };
        let mut stats: Vec<&FnStats> = self.stats.iter().filter(|s| s.self_samples > 0).collect();
        stats.sort_by(|a, b| {
            (b.self_samples, b.children)
                .cmp(&(a.self_samples, a.children))
                .then_with(|| (&a.function, &a.dso).cmp(&(&b.function, &b.dso)))
        });
        let top = stats
            .iter()
            .map(|s| FnShare {
                function: s.function.clone(),
                dso: s.dso.clone(),
                self_pct: pct(s.self_samples),
                children_pct: pct(s.children),
                self_samples: s.self_samples,
                lines: Vec::new(),
            })
            .collect();
        let [server, kernel, libraries, other] = self.places;
        let split = Split {
            server_pct: pct(server),
            kernel_pct: pct(kernel),
            libraries_pct: pct(libraries),
            other_pct: pct(other),
        };
        let event = most_common(&self.events).unwrap_or_default();
        let folded = self
            .folded
            .iter()
            .map(|(stack, n)| format!("{stack} {n}\n"))
            .collect();
        Profile {
            samples,
            event,
            top,
            split,
            folded,
            lines_ms: 0,
        }
    }
}

/// The key seen most often (the first of those, in order, on a tie).
fn most_common(counts: &BTreeMap<String, u64>) -> Option<String> {
    let mut best: Option<(&String, u64)> = None;
    for (key, &n) in counts {
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((key, n));
        }
    }
    best.map(|(key, _)| key.clone())
}

/// A sample header's event name (without modifiers) and what follows it on the line.
///
/// The event is the first token ending in `:` after the `pid/tid` token (a command
/// name may contain `:` itself).
fn split_header(line: &str) -> (Option<&str>, Option<&str>) {
    let mut seen_pid = false;
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        let tail = &rest[start..];
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let token = &tail[..end];
        rest = &tail[end..];
        if seen_pid && token.ends_with(':') {
            let event = token.split(':').next().filter(|e| !e.is_empty());
            let rest = Some(rest.trim()).filter(|r| !r.is_empty());
            return (event, rest);
        }
        seen_pid |= is_pid_token(token);
    }
    (None, None)
}

/// `1234/1235` (pid/tid) or `1234`.
fn is_pid_token(token: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match token.split_once('/') {
        Some((pid, tid)) => digits(pid) && digits(tid),
        None => digits(token),
    }
}

/// A frame line: `<hex address> <symbol> (<dso>)`.
fn parse_frame(line: &str) -> Option<RawFrame<'_>> {
    let body = line.trim().strip_suffix(')')?;
    // The dso is the parenthesised group at the end; it may hold "(deleted)" itself.
    let mut depth = 1usize;
    let mut open = None;
    for (i, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let dso = body[open + 1..].trim();
    let head = body[..open].trim();
    let (addr, sym) = match head.split_once(char::is_whitespace) {
        Some((addr, sym)) => (addr, sym.trim()),
        None => (head, ""),
    };
    let addr = u64::from_str_radix(addr, 16).ok()?;
    Some(RawFrame { addr, sym, dso })
}

/// Whether a frame is the kernel's (see [`parse_script`]).
fn is_kernel(addr: u64, dso: &str, in_kernel_part: bool) -> bool {
    if dso.starts_with("[kernel") || dso.starts_with("[guest.kernel") {
        return true;
    }
    let bracketed =
        dso.starts_with('[') && !matches!(dso, "[vdso]" | "[vsyscall]" | "[heap]" | "[stack]");
    in_kernel_part && addr >= KERNEL_START && (bracketed || dso.is_empty())
}

/// The file name of a dso path, without perf's " (deleted)".
fn file_name(path: &str) -> &str {
    let path = path.trim().trim_end_matches(" (deleted)");
    if path.starts_with('[') {
        return path;
    }
    path.rsplit('/').next().unwrap_or(path)
}

/// A function's name: the symbol without `+0x…`, or `[unknown] (<dso>)`.
fn function_name(sym: &str, dso_name: &str) -> String {
    let sym = strip_offset(sym.trim());
    if sym.is_empty() || sym == UNKNOWN {
        if dso_name.is_empty() || dso_name == UNKNOWN {
            return UNKNOWN.to_string();
        }
        return format!("{UNKNOWN} ({dso_name})");
    }
    sym.to_string()
}

/// The `0x…` offset of `symbol+0x…`, if the symbol has one.
fn symbol_offset(sym: &str) -> Option<u64> {
    let sym = sym.trim();
    let stripped = strip_offset(sym);
    if stripped.len() == sym.len() {
        return None;
    }
    u64::from_str_radix(&sym[stripped.len() + 3..], 16).ok()
}

fn strip_offset(sym: &str) -> &str {
    match sym.rfind("+0x") {
        Some(i)
            if i > 0
                && sym[i + 3..].bytes().all(|b| b.is_ascii_hexdigit())
                && sym.len() > i + 3 =>
        {
            &sym[..i]
        }
        _ => sym,
    }
}

/// A flamegraph SVG of `folded` stacks.
///
/// Drawn by inferno with `title`, colours by name (deterministic; kernel frames, `_[k]`,
/// in orange) and its built-in script for zooming and search; nothing is fetched from
/// the network. Fails if there are no samples.
pub fn flamegraph(folded: &str, title: &str) -> std::io::Result<Vec<u8>> {
    use inferno::flamegraph::{color::MultiPalette, from_lines, Options, Palette};
    if folded.lines().all(|l| l.trim().is_empty()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no samples to draw a flamegraph of",
        ));
    }
    let mut options = Options::default();
    options.title = title.to_string();
    options.deterministic = true;
    options.colors = Palette::Multi(MultiPalette::Perl);
    options.count_name = "samples".to_string();
    let mut svg = Vec::new();
    from_lines(&mut options, folded.lines(), &mut svg)?;
    Ok(svg)
}

/// One function's cost per operation in two profiles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FnDelta {
    pub function: String,
    /// Self samples per million operations.
    pub base_per_mop: f64,
    pub other_per_mop: f64,
    /// other / base - 1 (None where the base has no samples).
    pub change: Option<f64>,
}

/// Functions whose cost per operation changed most between `base` (over `base_ops`
/// operations) and `other`, largest absolute change first, at most `limit`.
///
/// Functions are matched by name (the self samples of a name in several dsos add up).
/// Cost is self samples per million operations; ties go by name. Empty if either
/// operation count is 0.
pub fn diff(
    base: &Profile,
    base_ops: u64,
    other: &Profile,
    other_ops: u64,
    limit: usize,
) -> Vec<FnDelta> {
    if base_ops == 0 || other_ops == 0 {
        return Vec::new();
    }
    let base_samples = self_by_function(base);
    let other_samples = self_by_function(other);
    let names: BTreeSet<&str> = base_samples
        .keys()
        .chain(other_samples.keys())
        .copied()
        .collect();
    let per_mop = |samples: u64, ops: u64| samples as f64 * 1e6 / ops as f64;
    let mut deltas: Vec<FnDelta> = names
        .into_iter()
        .map(|name| {
            let base_per_mop = per_mop(base_samples.get(name).copied().unwrap_or(0), base_ops);
            let other_per_mop = per_mop(other_samples.get(name).copied().unwrap_or(0), other_ops);
            let change = (base_per_mop > 0.0).then(|| other_per_mop / base_per_mop - 1.0);
            FnDelta {
                function: name.to_string(),
                base_per_mop,
                other_per_mop,
                change,
            }
        })
        .collect();
    // Stable: equal differences stay in name order.
    deltas.sort_by(|a, b| {
        let da = (a.other_per_mop - a.base_per_mop).abs();
        let db = (b.other_per_mop - b.base_per_mop).abs();
        db.total_cmp(&da)
    });
    deltas.truncate(limit);
    deltas
}

/// Self samples by function name.
fn self_by_function(profile: &Profile) -> BTreeMap<&str, u64> {
    let mut samples = BTreeMap::new();
    for share in &profile.top {
        *samples.entry(share.function.as_str()).or_default() += share.self_samples;
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/fixtures/profile/script.txt");

    #[test]
    fn parses_frames() {
        let frame = parse_frame(
            "\t          166d00 __strchr_evex+0x40 (/usr/lib/x86_64-linux-gnu/libc.so.6)",
        );
        assert_eq!(
            frame,
            Some(RawFrame {
                addr: 0x166d00,
                sym: "__strchr_evex+0x40",
                dso: "/usr/lib/x86_64-linux-gnu/libc.so.6"
            })
        );
        let cpp = parse_frame(
            "\t 10 std::vector<int>::at(unsigned long) const (/opt/x/server (deleted))",
        );
        assert_eq!(
            cpp.map(|f| (f.sym, f.dso)),
            Some((
                "std::vector<int>::at(unsigned long) const",
                "/opt/x/server (deleted)"
            ))
        );
        assert_eq!(
            parse_frame("\tffffffff821ed4e6 do_syscall_64 ([kernel.kallsyms])").map(|f| f.sym),
            Some("do_syscall_64")
        );
        assert_eq!(parse_frame("sh  2326/2326  cpu-clock: "), None);
        assert_eq!(parse_frame("\tnothex foo (bar)"), None);
        assert_eq!(parse_frame(")"), None);
        assert_eq!(parse_frame("(x)"), None);
    }

    #[test]
    fn keeps_each_functions_own_samples_by_offset() {
        assert_eq!(symbol_offset("spin+0x22"), Some(0x22));
        assert_eq!(symbol_offset("spin"), None);
        assert_eq!(symbol_offset("[unknown]"), None);
        // Captured with -F comm,pid,tid,event,ip,sym,symoff,dso from hot.c's loop.
        let text = "hot  2686/2686  cpu-clock:pppH: \n\t            114b spin+0x22 (/tmp/hotdbg/hot)\n\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\nhot  2686/2686  cpu-clock:pppH: \n\t            113a spin+0x11 (/tmp/hotdbg/hot)\n\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\nhot  2686/2686  cpu-clock:pppH: \n\t            113a spin+0x11 (/tmp/hotdbg/hot)\n\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n";
        let mut parser = ScriptParser::new("hot");
        for line in text.lines() {
            parser.line(line);
        }
        parser.end_sample();
        let spot = &parser.spots[&("spin".to_string(), "hot".to_string())];
        assert_eq!(spot.path, "/tmp/hotdbg/hot");
        assert_eq!(spot.by_offset.get(&0x11), Some(&2));
        assert_eq!(spot.by_offset.get(&0x22), Some(&1));
        // Only innermost frames count: the caller has no spots.
        assert_eq!(parser.spots.len(), 1);
        assert_eq!(parser.finish().top[0].function, "spin");
    }

    #[test]
    fn names_functions_and_dsos() {
        assert_eq!(strip_offset("main+0x1f"), "main");
        assert_eq!(strip_offset("a+b"), "a+b");
        assert_eq!(strip_offset("x+0x"), "x+0x");
        assert_eq!(function_name("[unknown]", "dash"), "[unknown] (dash)");
        assert_eq!(function_name("[unknown]", "[unknown]"), "[unknown]");
        assert_eq!(
            file_name("/usr/lib/x86_64-linux-gnu/libc.so.6"),
            "libc.so.6"
        );
        assert_eq!(file_name("/opt/memcached (deleted)"), "memcached");
        assert_eq!(file_name("[vdso]"), "[vdso]");
    }

    #[test]
    fn splits_headers() {
        assert_eq!(
            split_header("sh  2326/2326  cpu-clock: "),
            (Some("cpu-clock"), None)
        );
        assert_eq!(
            split_header("kworker/0:1 12/12 cycles:P: "),
            (Some("cycles"), None)
        );
        assert_eq!(
            split_header("a b 5/5 cycles:  10 main (/bin/x)"),
            (Some("cycles"), Some("10 main (/bin/x)"))
        );
        assert_eq!(split_header("garbage"), (None, None));
        assert_eq!(split_header(""), (None, None));
    }

    #[test]
    fn detects_cycles_support() {
        assert!(!counted_cycles("<not supported>,,cycles,0,100.00,,\n"));
        assert!(counted_cycles("1234567,,cycles,1000,100.00,,\n"));
        assert!(counted_cycles(
            "<not counted>,,cpu_atom/cycles/,0,0.00,,\n99,,cpu_core/cycles/,10,100.00,,\n"
        ));
        assert!(!counted_cycles(""));
    }

    #[test]
    fn parses_a_hand_made_script() {
        let text = "srv 1/1 cycles: \n\
            \tffffffff81000001 do_syscall_64+0x5 ([kernel.kallsyms])\n\
            \t1000 handle;request (/opt/srv)\n\
            \t2000 main (/opt/srv)\n\
            \n\
            srv 1/2 cycles: \n\
            \t3000 memcpy (/usr/lib/libc.so.6)\n\
            \t1000 handle;request (/opt/srv)\n\
            \t2000 main (/opt/srv)\n\
            \n\
            srv 1/2 cycles: \n\
            \t1000 handle;request (/opt/srv)\n\
            \t2000 main (/opt/srv)\n\
            \tfffffffefffffffe [unknown] ([unknown])\n\
            srv 1/2 cycles: \n\
            \t5 [unknown] ([vdso])\n\
            odd line\n\
            \n\
            srv 1/1 cycles: \n";
        let p = parse_script(text, "srv");
        assert_eq!(p.samples, 4);
        assert_eq!(p.event, "cycles");
        let top: Vec<(&str, &str, u64, f64)> = p
            .top
            .iter()
            .map(|f| {
                (
                    f.function.as_str(),
                    f.dso.as_str(),
                    f.self_samples,
                    f.children_pct,
                )
            })
            .collect();
        assert_eq!(
            top,
            vec![
                ("handle;request", "srv", 1, 75.0),
                ("[unknown] ([vdso])", "[vdso]", 1, 25.0),
                ("do_syscall_64", "[kernel]", 1, 25.0),
                ("memcpy", "libc.so.6", 1, 25.0),
            ]
        );
        assert_eq!(
            p.split,
            Split {
                server_pct: 25.0,
                kernel_pct: 25.0,
                libraries_pct: 25.0,
                other_pct: 25.0
            }
        );
        assert_eq!(
            p.folded,
            "[unknown] ([vdso]) 1\n\
             [unknown];main;handle:request 1\n\
             main;handle:request;do_syscall_64_[k] 1\n\
             main;handle:request;memcpy 1\n"
        );
    }

    #[test]
    fn parses_the_fixture() {
        let p = parse_script(FIXTURE, "dash");
        assert_eq!(p.samples, 76);
        assert_eq!(p.event, "cpu-clock");
        assert!(!p.top.is_empty());
        let self_sum: f64 = p.top.iter().map(|f| f.self_pct).sum();
        assert!((self_sum - 100.0).abs() < 1e-6, "{self_sum}");
        assert_eq!(p.top.iter().map(|f| f.self_samples).sum::<u64>(), 76);
        for pair in p.top.windows(2) {
            assert!(pair[0].self_samples >= pair[1].self_samples);
        }
        for f in &p.top {
            assert!(
                f.children_pct >= f.self_pct && f.children_pct <= 100.0,
                "{f:?}"
            );
        }
        let s = &p.split;
        let split_sum = s.server_pct + s.kernel_pct + s.libraries_pct + s.other_pct;
        assert!((split_sum - 100.0).abs() < 1e-6, "{split_sum}");
        assert!(
            s.kernel_pct > 0.0 && s.libraries_pct > 0.0 && s.server_pct > 0.0,
            "{s:?}"
        );
        let kernel = p
            .top
            .iter()
            .find(|f| f.function == "do_syscall_64")
            .map(|f| f.dso.as_str());
        assert_eq!(kernel, Some(KERNEL));
        assert!(p
            .top
            .iter()
            .any(|f| f.function == "[unknown] (dash)" && f.dso == "dash"));
        assert!(p.top.iter().all(|f| !f.function.contains("+0x")));
        let mut folded_total = 0;
        for line in p.folded.lines() {
            let (stack, count) = line.rsplit_once(' ').expect("a count");
            folded_total += count.parse::<u64>().expect("a number");
            assert!(
                !stack.is_empty() && stack.split(';').all(|f| !f.is_empty()),
                "{line}"
            );
        }
        assert_eq!(folded_total, 76);
        assert!(p
            .folded
            .contains("entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k]"));
    }

    #[test]
    fn parses_nothing() {
        assert_eq!(parse_script("", "x"), Profile::default());
        let junk = parse_script("\n\n\t)(\n(((\n\u{0}\n  x 1/1 e: \n\t zz (y)\n", "x");
        assert_eq!(junk.samples, 0);
    }

    fn profile(fns: &[(&str, u64)]) -> Profile {
        let top = fns
            .iter()
            .map(|&(function, self_samples)| FnShare {
                function: function.to_string(),
                self_samples,
                ..FnShare::default()
            })
            .collect();
        Profile {
            top,
            ..Profile::default()
        }
    }

    #[test]
    fn diffs_per_operation() {
        // base: 2M ops; other: 1M ops.
        let base = profile(&[("a", 200), ("b", 100), ("c", 40), ("d", 10)]);
        let other = profile(&[("a", 100), ("b", 200), ("e", 30), ("d", 5), ("d", 5)]);
        let d = diff(&base, 2_000_000, &other, 1_000_000, 10);
        let got: Vec<(&str, f64, f64, Option<f64>)> = d
            .iter()
            .map(|x| {
                (
                    x.function.as_str(),
                    x.base_per_mop,
                    x.other_per_mop,
                    x.change,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("b", 50.0, 200.0, Some(3.0)),
                ("e", 0.0, 30.0, None),
                ("c", 20.0, 0.0, Some(-1.0)),
                ("d", 5.0, 10.0, Some(1.0)),
                ("a", 100.0, 100.0, Some(0.0)),
            ]
        );
        let top2 = diff(&base, 2_000_000, &other, 1_000_000, 2);
        assert_eq!(
            top2.iter().map(|x| x.function.as_str()).collect::<Vec<_>>(),
            ["b", "e"]
        );
    }

    #[test]
    fn diff_ties_go_by_name_and_zero_ops_give_nothing() {
        let base = profile(&[("z", 10), ("y", 10)]);
        let other = profile(&[("y", 20), ("z", 20)]);
        let d = diff(&base, 1_000_000, &other, 1_000_000, 5);
        assert_eq!(
            d.iter().map(|x| x.function.as_str()).collect::<Vec<_>>(),
            ["y", "z"]
        );
        assert_eq!(d[0].change, Some(1.0));
        assert!(diff(&base, 0, &other, 1, 5).is_empty());
        assert!(diff(&base, 1, &other, 1, 0).is_empty());
    }

    #[test]
    fn draws_flamegraphs() {
        let folded = "main;work 3\nmain;syscall_[k] 1\n";
        let svg = flamegraph(folded, "bakeoff test").expect("svg");
        let text = String::from_utf8_lossy(&svg);
        assert!(text.contains("<svg") && text.contains("bakeoff test"));
        assert_eq!(flamegraph(folded, "bakeoff test").expect("svg"), svg);
        let err = flamegraph(" \n", "t").expect_err("no samples");
        assert!(err.to_string().contains("no samples"));
    }
}
