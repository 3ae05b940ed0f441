//! CPU counters of the server's processes with `perf stat` (Debian package
//! `linux-perf`).
//!
//! Throughput says which variant is faster; counters say why: more or fewer
//! instructions per operation, a better or worse IPC, more cache, branch, iTLB or
//! instruction-cache misses per thousand instructions. bakeoff attaches
//! `perf stat -x, -e <events> -p <pids>` to the server for the measured window, stops
//! it with SIGINT and parses its CSV output (`value,unit,event,run_time,pct,...` on
//! stderr). Figures per operation come from [`derive`].
//!
//! Hardware counters are often missing: virtual machines (a KVM guest without PMU
//! passthrough prints `<not supported>` for `cycles`), containers, kernels that forbid
//! perf (`/proc/sys/kernel/perf_event_paranoid`). [`detect`] finds out once which of
//! [`EVENTS`] count here; an event perf prints as `<not supported>` or `<not counted>`
//! is reported as unsupported, never as zero. perf's output, not its exit status, is
//! the truth: it exits non-zero when interrupted but its numbers are good.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The events bakeoff asks for, in perf's names.
pub const EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "L1-icache-load-misses",
    "iTLB-load-misses",
];

/// The message when there is no perf binary.
pub const NOT_INSTALLED: &str =
    "perf is not installed (Debian package linux-perf); counters are off";

/// How long [`Counting::stop`] waits for perf after SIGINT before it kills it.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// How long [`Counting::start`] waits for perf to have its counters open.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(1);

/// What this machine can count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Support {
    pub supported: Vec<String>,
    pub unsupported: Vec<String>,
}

/// Runs `perf stat` on `true` once: which of `EVENTS` count here. Err: one line saying
/// why perf cannot be used at all (missing, or not permitted: perf_event_paranoid).
///
/// An event that comes back `<not counted>` is asked again on its own before it is
/// called unsupported: with more events than the CPU has counters, perf multiplexes
/// them, and `true` may end before a supported event had its turn.
pub fn detect() -> Result<Support, String> {
    let perf = find_perf().ok_or_else(|| NOT_INSTALLED.to_string())?;
    let first = stat_true(&perf, EVENTS)?;
    let mut support = Support::default();
    for (event, value) in first {
        let value = match value {
            EventValue::NotCounted => retry_alone(&perf, &event),
            v => v,
        };
        match value {
            EventValue::Count(_) => support.supported.push(event),
            _ => support.unsupported.push(event),
        }
    }
    Ok(support)
}

/// `event` counted on its own, or NotCounted if that fails too.
fn retry_alone(perf: &PathBuf, event: &str) -> EventValue {
    match stat_true(perf, &[event]) {
        Ok(mut v) if v.len() == 1 => v.remove(0).1,
        _ => EventValue::NotCounted,
    }
}

/// `perf stat -x, -e <events> -- true`: the value of each asked event, in order.
fn stat_true(perf: &PathBuf, events: &[&str]) -> Result<Vec<(String, EventValue)>, String> {
    let output = Command::new(perf)
        .args(["stat", "-x,", "-e", &events.join(","), "--", "true"])
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => NOT_INSTALLED.to_string(),
            _ => format!("cannot run {}: {e}", perf.display()),
        })?;
    let text = String::from_utf8_lossy(&output.stderr);
    let parsed = parse_events(&text, events);
    if parsed.is_empty() {
        return Err(failure_line(&text, Some(output.status)));
    }
    Ok(parsed)
}

/// One line saying why perf printed no counts: not permitted, or perf's own message.
fn failure_line(text: &str, status: Option<ExitStatus>) -> String {
    let denied = ["perf_event_paranoid", "Permission denied", "No permission"];
    if denied.iter().any(|w| text.contains(w)) || text.contains("Access to performance") {
        let level = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        return format!(
            "perf is not permitted to open counters (perf_event_paranoid is {level}; \
             lower /proc/sys/kernel/perf_event_paranoid or run as root); counters are off"
        );
    }
    let message = perf_message(text);
    match (message.is_empty(), status) {
        (false, _) => format!("perf stat failed: {message}"),
        (true, Some(s)) => format!("perf stat printed no counts ({s})"),
        (true, None) => "perf stat printed no counts".into(),
    }
}

/// perf's error text on one line: the lines before its usage help, blank ones left out.
fn perf_message(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty() && parse_line(l).is_none())
        .take(4)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The perf binary: `perf` on PATH, else /usr/bin/perf or /usr/sbin/perf if present.
pub fn find_perf() -> Option<PathBuf> {
    bakeoff_os::path::which("perf").or_else(|| {
        ["/usr/bin/perf", "/usr/sbin/perf"]
            .map(PathBuf::from)
            .into_iter()
            .find(|p| bakeoff_os::path::is_executable(p))
    })
}

/// Counter values of one window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Per asked event name. Counts as perf prints them, except time events perf
    /// prints in `msec` (task-clock, cpu-clock), which are kept in nanoseconds.
    pub values: BTreeMap<String, u64>,
    /// Asked events perf printed as `<not supported>` or `<not counted>`, or not at all.
    pub unsupported: Vec<String>,
}

/// One event's value in perf's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventValue {
    Count(u64),
    NotSupported,
    NotCounted,
}

/// One counter line of `perf stat -x,`: (event name as printed, value), or None for
/// anything else (blank lines, comments, error text).
fn parse_line(line: &str) -> Option<(&str, EventValue)> {
    let mut fields = line.trim().split(',');
    let (value, unit, event) = (fields.next()?, fields.next()?, fields.next()?.trim());
    if event.is_empty() || line.trim_start().starts_with('#') {
        return None;
    }
    let value = match value.trim() {
        "<not supported>" => EventValue::NotSupported,
        "<not counted>" => EventValue::NotCounted,
        v => EventValue::Count(parse_count(v, unit.trim())?),
    };
    Some((event, value))
}

/// A count; a time in msec becomes nanoseconds.
fn parse_count(value: &str, unit: &str) -> Option<u64> {
    if unit != "msec" {
        if let Ok(n) = value.parse::<u64>() {
            return Some(n);
        }
    }
    let f: f64 = value.parse().ok()?;
    if !f.is_finite() || f < 0.0 {
        return None;
    }
    let scaled = if unit == "msec" { f * 1e6 } else { f };
    Some(scaled.round() as u64)
}

/// The asked event a printed name stands for: `cycles:u` and `cpu_core/cycles/` are
/// `cycles`. Names matching nothing asked are kept without their modifiers.
fn normalize(printed: &str, asked: &[&str]) -> String {
    let base = match printed.split_once('/') {
        Some((_pmu, rest)) => rest.split(['/', ',']).next().unwrap_or(rest),
        None => printed.split(':').next().unwrap_or(printed),
    };
    if let Some(a) = asked.iter().find(|a| **a == base || **a == printed) {
        return a.to_string();
    }
    asked
        .iter()
        .filter(|a| printed.contains(**a))
        .max_by_key(|a| a.len())
        .map_or_else(|| base.to_string(), |a| a.to_string())
}

/// Every counter line of `text` under its asked name, lines of the same event summed
/// (a hybrid CPU prints one per core type; one counted line makes the event counted).
/// When perf printed any counter line, an asked event it left out is NotSupported.
fn parse_events(text: &str, asked: &[&str]) -> Vec<(String, EventValue)> {
    let mut out: Vec<(String, EventValue)> = Vec::new();
    for (printed, value) in text.lines().filter_map(parse_line) {
        let name = normalize(printed, asked);
        match out.iter_mut().find(|(n, _)| *n == name) {
            None => out.push((name, value)),
            Some((_, old)) => *old = merge(*old, value),
        }
    }
    if !out.is_empty() {
        for a in asked {
            if !out.iter().any(|(n, _)| n == a) {
                out.push((a.to_string(), EventValue::NotSupported));
            }
        }
    }
    out
}

fn merge(a: EventValue, b: EventValue) -> EventValue {
    use EventValue::*;
    match (a, b) {
        (Count(x), Count(y)) => Count(x.saturating_add(y)),
        (Count(x), _) | (_, Count(x)) => Count(x),
        (NotCounted, _) | (_, NotCounted) => NotCounted,
        _ => NotSupported,
    }
}

/// Parses what `perf stat -x,` printed for the `asked` events. Empty when there is no
/// counter line in `text` at all (perf failed).
pub fn parse_stat_csv<S: AsRef<str>>(text: &str, asked: &[S]) -> Counts {
    let asked: Vec<&str> = asked.iter().map(AsRef::as_ref).collect();
    let mut counts = Counts::default();
    for (name, value) in parse_events(text, &asked) {
        match value {
            EventValue::Count(n) => {
                counts.values.insert(name, n);
            }
            _ => counts.unsupported.push(name),
        }
    }
    counts
}

/// The per-run figures results.json carries under `counters`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    pub instructions_per_op: Option<f64>,
    pub cycles_per_op: Option<f64>,
    pub ipc: Option<f64>,
    pub cache_misses_per_kinstr: Option<f64>,
    pub branch_misses_per_kinstr: Option<f64>,
    pub itlb_misses_per_kinstr: Option<f64>,
    pub l1i_misses_per_kinstr: Option<f64>,
    pub unsupported: Vec<String>,
}

/// What perf printed when it ended, and how it ended.
struct Finished {
    output: String,
    status: Option<ExitStatus>,
}

/// A perf stat attached to some processes.
///
/// perf runs as a child of a helper thread that lives as long as perf does, with
/// `PR_SET_PDEATHSIG` = SIGKILL: if bakeoff dies, perf dies with it (the signal is tied
/// to the thread that spawned the child, hence the helper thread).
pub struct Counting {
    perf_pid: i32,
    /// True once the helper thread has reaped perf: its pid must not be signalled then.
    reaped: Arc<Mutex<bool>>,
    done: Receiver<Finished>,
    finished: Option<Finished>,
    events: Vec<String>,
}

impl Counting {
    /// Attaches `perf stat -x,` for `events` to `pids` (all their threads).
    ///
    /// Returns once perf has its counters open (or after a second), so the window
    /// starts when the caller goes on. Err when perf is missing or ends at once (a pid
    /// that does not exist), with perf's message.
    pub fn start(pids: &[i32], events: &[String]) -> std::io::Result<Counting> {
        use std::io::{Error, ErrorKind};
        if pids.is_empty() || events.is_empty() || pids.iter().any(|p| *p <= 0) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "perf stat needs pids and events",
            ));
        }
        let perf = find_perf().ok_or_else(|| Error::new(ErrorKind::NotFound, NOT_INSTALLED))?;
        let pid_list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
        let mut cmd = Command::new(perf);
        cmd.args([
            "stat",
            "-x,",
            "-e",
            &events.join(","),
            "-p",
            &pid_list.join(","),
        ])
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut counting = spawn_on_helper(cmd, events)?;
        if counting.wait_attached() {
            let failed = counting
                .finished
                .as_ref()
                .map(|f| (f.output.clone(), f.status));
            if let Some((output, status)) = failed {
                if parse_events(&output, &[]).is_empty() {
                    return Err(Error::other(failure_line(&output, status)));
                }
            }
        }
        Ok(counting)
    }

    /// Stops perf (SIGINT) and parses what it printed.
    ///
    /// perf gets [`STOP_TIMEOUT`] to print, then SIGKILL. Err with perf's message when
    /// it printed no counts (e.g. a pid vanished before perf could attach).
    pub fn stop(mut self) -> std::io::Result<Counts> {
        if self.finished.is_none() {
            self.signal(libc::SIGINT);
            let finished = match self.done.recv_timeout(STOP_TIMEOUT) {
                Ok(f) => Some(f),
                Err(_) => {
                    self.signal(libc::SIGKILL);
                    self.done.recv_timeout(STOP_TIMEOUT).ok()
                }
            };
            self.finished = finished;
        }
        let Some(finished) = self.finished.take() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "perf stat did not end after SIGINT and SIGKILL",
            ));
        };
        let counts = parse_stat_csv(&finished.output, &self.events);
        if counts.values.is_empty() && counts.unsupported.is_empty() {
            return Err(std::io::Error::other(failure_line(
                &finished.output,
                finished.status,
            )));
        }
        Ok(counts)
    }

    /// Sends `sig` to perf unless the helper thread has reaped it already.
    fn signal(&self, sig: libc::c_int) {
        // The lock is held while signalling: the helper cannot reap perf meanwhile, so
        // the pid still is perf's.
        if let Ok(reaped) = self.reaped.lock() {
            if !*reaped {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(self.perf_pid, sig) };
            }
        }
    }

    /// Waits until perf has opened its counters (its perf_event descriptors stop
    /// growing in number) or has ended. True if it ended.
    fn wait_attached(&mut self) -> bool {
        let fd_dir = format!("/proc/{}/fd", self.perf_pid);
        let deadline = Instant::now() + ATTACH_TIMEOUT;
        let mut last = 0usize;
        while Instant::now() < deadline {
            match self.done.try_recv() {
                Ok(f) => {
                    self.finished = Some(f);
                    return true;
                }
                Err(TryRecvError::Disconnected) => return true,
                Err(TryRecvError::Empty) => {}
            }
            let n = count_perf_event_fds(&fd_dir);
            if n > 0 && n == last {
                return false;
            }
            last = n;
            std::thread::sleep(Duration::from_millis(3));
        }
        false
    }
}

impl Drop for Counting {
    /// A Counting dropped without stop(): perf must not outlive it.
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

/// How many of a process's descriptors are perf events.
fn count_perf_event_fds(fd_dir: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(fd_dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|target| target.as_os_str() == "anon_inode:[perf_event]")
        .count()
}

/// Spawns `cmd` from a helper thread that reads its stderr to the end, reaps it and
/// sends what it printed.
fn spawn_on_helper(mut cmd: Command, events: &[String]) -> std::io::Result<Counting> {
    let (pid_tx, pid_rx) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    let reaped = Arc::new(Mutex::new(false));
    let reaped_in_thread = Arc::clone(&reaped);
    std::thread::Builder::new()
        .name("bakeoff-perfstat".into())
        .spawn(move || {
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    let _ = pid_tx.send(Err(e));
                    return;
                }
            };
            let _ = pid_tx.send(Ok(child.id() as i32));
            let mut bytes = Vec::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = stderr.read_to_end(&mut bytes);
            }
            let status = reap(&mut child, &reaped_in_thread);
            let output = String::from_utf8_lossy(&bytes).into_owned();
            let _ = done_tx.send(Finished { output, status });
        })?;
    let perf_pid = match pid_rx.recv() {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::other("perf stat helper thread ended")),
    }
    .map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => std::io::Error::new(e.kind(), NOT_INSTALLED),
        _ => e,
    })?;
    Ok(Counting {
        perf_pid,
        reaped,
        done,
        finished: None,
        events: events.to_vec(),
    })
}

/// Waits for `child` without blocking while holding `reaped`, then marks it reaped.
fn reap(child: &mut std::process::Child, reaped: &Mutex<bool>) -> Option<ExitStatus> {
    loop {
        let Ok(mut guard) = reaped.lock() else {
            return child.wait().ok();
        };
        match child.try_wait() {
            Ok(Some(status)) => {
                *guard = true;
                return Some(status);
            }
            Ok(None) => {}
            Err(_) => {
                *guard = true;
                return None;
            }
        }
        drop(guard);
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `num / den`, None when either is missing or zero.
fn ratio(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    match (num, den) {
        (Some(n), Some(d)) if n != 0.0 && d != 0.0 => Some(n / d),
        _ => None,
    }
}

/// Per-op and per-1000-instruction figures from `counts` over `ops` operations.
///
/// A figure is None when one of its inputs is missing (unsupported) or zero: a zero
/// counter is taken as not counted rather than as a measurement.
pub fn derive(counts: &Counts, ops: u64) -> Derived {
    let get = |name: &str| counts.values.get(name).map(|v| *v as f64);
    let ops = Some(ops as f64);
    let instructions = get("instructions");
    let kinstr = instructions.map(|i| i / 1000.0);
    let per_kinstr = |name: &str| ratio(get(name), kinstr);
    Derived {
        instructions_per_op: ratio(instructions, ops),
        cycles_per_op: ratio(get("cycles"), ops),
        ipc: ratio(instructions, get("cycles")),
        cache_misses_per_kinstr: per_kinstr("cache-misses"),
        branch_misses_per_kinstr: per_kinstr("branch-misses"),
        itlb_misses_per_kinstr: per_kinstr("iTLB-load-misses"),
        l1i_misses_per_kinstr: per_kinstr("L1-icache-load-misses"),
        unsupported: counts.unsupported.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_values_and_units() {
        let l = parse_line("1204,,context-switches,2503410221,100.00,480.946,/sec");
        assert_eq!(l, Some(("context-switches", EventValue::Count(1204))));
        let l = parse_line("2503.41,msec,task-clock,2503410221,100.00,0.999,CPUs utilized");
        assert_eq!(l, Some(("task-clock", EventValue::Count(2_503_410_000))));
        let l = parse_line("<not supported>,,cycles,0,100.00,,");
        assert_eq!(l, Some(("cycles", EventValue::NotSupported)));
        let l = parse_line("<not counted>,msec,task-clock,0,100.00,,");
        assert_eq!(l, Some(("task-clock", EventValue::NotCounted)));
    }

    #[test]
    fn other_lines_are_not_counters() {
        for line in [
            "",
            "# started on Sun Nov 23 10:27:00 2025",
            "Problems finding threads of monitor",
            "Error: no, not, this",
            "12,,",
            "-5,,cycles,0,100.00,,",
            "NaN,,cycles,0,100.00,,",
        ] {
            assert_eq!(parse_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn printed_names_map_to_asked_ones() {
        for (printed, asked) in [
            ("cycles:u", "cycles"),
            ("cpu_core/instructions/", "instructions"),
            ("cpu_atom/branch-misses/u", "branch-misses"),
            ("iTLB-load-misses", "iTLB-load-misses"),
            ("cache-misses:ukh", "cache-misses"),
            ("L1-icache-load-misses", "L1-icache-load-misses"),
            // Contained, not equal: the longest asked name wins.
            ("armv8_pmuv3_0/branch-misses/", "branch-misses"),
            ("xbranch-missesx", "branch-misses"),
            ("task-clock", "task-clock"),
        ] {
            assert_eq!(normalize(printed, EVENTS), asked, "{printed}");
        }
    }

    #[test]
    fn hybrid_lines_merge() {
        let text = "100,,cpu_core/cycles/,1,100.00,,\n\
                    <not counted>,,cpu_atom/cycles/,0,0.00,,\n\
                    5,,cpu_atom/cycles/,1,1.00,,\n\
                    <not counted>,,cpu_atom/branches/,0,0.00,,\n\
                    <not supported>,,cpu_core/branches/,0,0.00,,\n";
        let got = parse_events(text, &["cycles", "branches", "cache-misses"]);
        assert_eq!(
            got,
            vec![
                ("cycles".to_string(), EventValue::Count(105)),
                ("branches".to_string(), EventValue::NotCounted),
                ("cache-misses".to_string(), EventValue::NotSupported),
            ]
        );
        assert!(parse_events("perf: command not found\n", &["cycles"]).is_empty());
    }

    #[test]
    fn permission_failure_names_paranoid_file() {
        let text = "Error:\nAccess to performance monitoring and observability operations \
                    is limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid \
                    setting to open\nperf_event_paranoid setting is 3:\n";
        let line = failure_line(text, None);
        assert!(
            line.contains("/proc/sys/kernel/perf_event_paranoid"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        let line = failure_line("Error:\nNo permission to enable cycles event.\n", None);
        assert!(line.contains("not permitted"), "{line}");
    }

    #[test]
    fn other_failures_keep_perfs_words() {
        let text = "event syntax error: 'bogus'\n                     \\___ parser error\n\
                    Run 'perf list' for a list of valid events\n\n Usage: perf stat [<options>]\n\n\
                    -e, --event <event>   event selector\n";
        let line = failure_line(text, None);
        assert!(
            line.starts_with("perf stat failed: event syntax error: 'bogus'"),
            "{line}"
        );
        assert!(!line.contains("Usage"), "{line}");
        assert_eq!(failure_line("", None), "perf stat printed no counts");
    }

    #[test]
    fn derive_needs_nonzero_inputs() {
        let mut counts = Counts::default();
        counts.values.insert("instructions".into(), 0);
        counts.values.insert("cycles".into(), 1000);
        counts.values.insert("cache-misses".into(), 10);
        counts.unsupported.push("iTLB-load-misses".into());
        let d = derive(&counts, 10);
        assert_eq!(d.instructions_per_op, None);
        assert_eq!(d.ipc, None);
        assert_eq!(d.cache_misses_per_kinstr, None);
        assert_eq!(d.cycles_per_op, Some(100.0));
        assert_eq!(d.itlb_misses_per_kinstr, None);
        assert_eq!(d.unsupported, ["iTLB-load-misses"]);
        assert_eq!(derive(&counts, 0).cycles_per_op, None);
        assert_eq!(derive(&Counts::default(), 5), Derived::default());
    }
}
