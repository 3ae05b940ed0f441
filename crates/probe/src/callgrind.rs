//! Instruction counts with valgrind callgrind: how many instructions the server ran in
//! the measured window, in total and per function.
//!
//! The server runs under [`command_prefix`] with instrumentation off, so start-up, data
//! loading and warm-up cost nothing. At the window's start [`set_instrumentation_all`]
//! turns counting on in every process of the server; at its end it turns it off and
//! asks for a dump, so each `callgrind.out.<pid>.<n>` file written then holds the window
//! only. [`read_dir`] sums those files and the `callgrind.out.<pid>` files processes
//! write when they exit (what they counted since their last dump: nothing, for a
//! process whose counting was turned off; the whole window, for a process forked
//! during it, as a PostgreSQL backend is: it inherits its parent's "on").
//!
//! Instruction counts are close to deterministic: two identical windows of 200
//! memcached commands differed by 0.001 % to 0.2 % here, where wall time varies by far
//! more. The price is speed: callgrind runs the server tens of times slower, so the
//! throughput and latency of such a run mean nothing.
//!
//! callgrind_control reaches a process through valgrind's gdbserver (vgdb): about
//! 0.22 s a call on this machine, so 0.45 s to turn counting off and dump. The calls
//! for the processes of a tree run at once. It exits with status 0 even when it
//! failed, so its words are read.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one callgrind_control call may take (it takes about 0.2 s; a stopped or
/// hung process would make it wait for ever).
const CONTROL_TIMEOUT: Duration = Duration::from_secs(20);

/// The command prefix that runs a server under callgrind with instrumentation off at
/// start, writing `out_dir/callgrind.out.%p`.
pub fn command_prefix(out_dir: &Path) -> Vec<String> {
    let out = out_dir.join("callgrind.out.%p");
    [
        "valgrind",
        "--tool=callgrind",
        // Count nothing until set_instrumentation turns it on at the window's start.
        "--instr-atstart=no",
        // %p is each process's own pid, also in children that fork without exec (a
        // PostgreSQL backend writes callgrind.out.<its pid>), so processes never share
        // a file; dumps add a number: callgrind.out.<pid>.1, .2, ...
        &format!("--callgrind-out-file={}", out.display()),
        // Follow children across exec (pg_ctl -> postgres, mysqld_safe -> mariadbd);
        // forked children stay under callgrind anyway.
        "--trace-children=yes",
        // callgrind_control talks to the process through vgdb: keep it on even if a
        // ~/.valgrindrc or VALGRIND_OPTS turned it off.
        "--vgdb=yes",
        // Per-line costs only: per-instruction costs and jump counts make the files
        // much larger and the run slower, and nothing here reads them.
        "--dump-instr=no",
        "--collect-jumps=no",
        // One file per process and dump, all threads summed (memcached and MariaDB
        // are threaded).
        "--separate-threads=no",
        // Valgrind runs one thread at a time; the default lock can starve threads of
        // a busy threaded server for long stretches. A fair lock where available.
        "--fair-sched=try",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Whether `cmd` is a [`command_prefix`] (a server run under callgrind).
pub fn is_prefix(cmd: &[String]) -> bool {
    cmd.iter().any(|a| a == "--tool=callgrind")
}

/// Turns instrumentation on (measure start) or off and dumps (measure end) for `pid`,
/// with callgrind_control.
///
/// An error of kind `NotFound` when `pid` is not a process under callgrind; any other
/// failure is an error carrying callgrind_control's output.
pub fn set_instrumentation(pid: i32, on: bool) -> std::io::Result<()> {
    for step in steps(on) {
        let answer = control(&[pid], step).pop();
        match answer.unwrap_or_else(|| Err(io::Error::other("no answer"))) {
            Ok(Answer::Done) => {}
            Ok(Answer::NotUnderCallgrind(text)) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("pid {pid} is not under callgrind: {text}"),
                ))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// [`set_instrumentation`] for every pid of a server's process tree, the pids at once.
///
/// Pids that are not under callgrind (a helper process, one that has just exited) are
/// skipped; an error if none of them is. At the end, the processes whose counting was
/// turned off are dumped even if another pid failed; the first failure is returned.
pub fn set_instrumentation_all(pids: &[i32], on: bool) -> std::io::Result<()> {
    if pids.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no pid to control with callgrind_control",
        ));
    }
    let mut targets = pids.to_vec();
    let mut first_error = None;
    for step in steps(on) {
        let answers = control(&targets, step);
        let mut matched = Vec::new();
        let mut skipped = Vec::new();
        for (pid, answer) in targets.iter().zip(answers) {
            match answer {
                Ok(Answer::Done) => matched.push(*pid),
                Ok(Answer::NotUnderCallgrind(text)) => skipped.push(text),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if matched.is_empty() && first_error.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "none of the pids {pids:?} is under callgrind: {}",
                    skipped.join("; ")
                ),
            ));
        }
        targets = matched;
    }
    first_error.map_or(Ok(()), Err)
}

/// The callgrind_control arguments for a window's start or end: off, then a dump, so
/// the dump holds what was counted while on and nothing is left for the next window.
fn steps(on: bool) -> &'static [&'static str] {
    if on {
        &["--instr=on"]
    } else {
        &["--instr=off", "--dump"]
    }
}

/// What callgrind_control said about one pid.
enum Answer {
    Done,
    /// The pid is no process under callgrind (callgrind_control's words).
    NotUnderCallgrind(String),
}

/// Runs `callgrind_control <arg> <pid>` for each pid, all at once, and reads the
/// answers in the order of `pids`. One call a pid: callgrind_control gives up on all
/// its pids when one of them is not under callgrind.
fn control(pids: &[i32], arg: &str) -> Vec<io::Result<Answer>> {
    let children: Vec<io::Result<Child>> =
        pids.iter().map(|pid| spawn_control(*pid, arg)).collect();
    let deadline = Instant::now() + CONTROL_TIMEOUT;
    children
        .into_iter()
        .map(|child| {
            let output = wait_until(child?, deadline)?;
            judge(&output)
        })
        .collect()
}

fn spawn_control(pid: i32, arg: &str) -> io::Result<Child> {
    use std::os::unix::process::CommandExt;
    Command::new("callgrind_control")
        .arg(arg)
        .arg(pid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout ends vgdb too.
        .process_group(0)
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run callgrind_control: {e}")))
}

/// Waits for `child` until `deadline`, then kills its process group.
fn wait_until(mut child: Child, deadline: Instant) -> io::Result<Output> {
    loop {
        if child.try_wait()?.is_some() {
            // Its output is a few lines: it fits in the pipes while we poll.
            return child.wait_with_output();
        }
        if Instant::now() >= deadline {
            let pgid = child.id() as i32;
            // SAFETY: kill(2) on the process group of a child we spawned in its own group.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
            let output = child.wait_with_output()?;
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "callgrind_control took over {} s: {}",
                    CONTROL_TIMEOUT.as_secs(),
                    text_of(&output)
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn text_of(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// callgrind_control exits 0 whether or not it reached the process: its words tell.
/// Its "PID n: <command line>" lines are left out of the judging: a server's command
/// line may well say "error" (mariadbd --log-error=...).
fn judge(output: &Output) -> io::Result<Answer> {
    let text = text_of(output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let words: String = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| !l.starts_with("PID "))
        .collect::<Vec<_>>()
        .join("\n");
    if words.contains("not detected") || words.contains("No active callgrind runs") {
        return Ok(Answer::NotUnderCallgrind(text));
    }
    let failed = !output.status.success()
        || !words.contains("OK.")
        || words.to_ascii_lowercase().contains("error");
    if failed {
        return Err(io::Error::other(format!(
            "callgrind_control failed ({}): {text}",
            output.status
        )));
    }
    Ok(Answer::Done)
}

/// The open-files limit a program sees under valgrind: the hard limit less the few
/// descriptors valgrind keeps for itself (19988 of 20000 here).
///
/// Valgrind refuses any change of the hard limit, and memcached 1.6 sets both limits to
/// its `-c` (max connections) value, so memcached under callgrind exits with "failed to
/// set rlimit for open files" unless `-c` is exactly this number.
pub fn fd_limit_under_valgrind() -> std::io::Result<u64> {
    let output = Command::new("valgrind")
        .args(["-q", "--tool=none", "/bin/sh", "-c", "ulimit -Hn"])
        .stdin(Stdio::null())
        .output()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.trim().parse().map_err(|_| {
        io::Error::other(format!(
            "cannot read the open-files limit under valgrind: {} {}",
            text.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    })
}

/// One function's own instruction count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FnCount {
    /// The function's name; recursion levels (`f'2`) are merged into `f`, and a name
    /// that is only an address (no symbol) is followed by its object: `0x..12640 [memcached]`.
    pub function: String,
    /// Instructions executed in the function itself, not in what it called.
    pub instructions: u64,
}

/// Totals of the callgrind.out files in a directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// All instructions (event `Ir`) executed while instrumentation was on.
    pub instructions: u64,
    /// Functions by own instructions, largest first.
    pub functions: Vec<FnCount>,
}

/// Reads every callgrind.out.* file in `dir` and sums them.
///
/// Empty files (a process killed before it wrote anything) count nothing. Errors: the
/// directory cannot be read, it holds no callgrind.out.* file, or a file's `totals:`
/// line disagrees with its cost lines.
pub fn read_dir(dir: &Path) -> std::io::Result<Counts> {
    let with_dir = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    let mut tally = Tally::default();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).map_err(with_dir)? {
        let entry = entry.map_err(with_dir)?;
        let is_out = entry
            .file_name()
            .to_string_lossy()
            .starts_with("callgrind.out.");
        if !is_out || !entry.file_type().map_err(with_dir)?.is_file() {
            continue;
        }
        let path = entry.path();
        let with_path = |e: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        };
        let bytes = std::fs::read(&path).map_err(|e| with_path(e.to_string()))?;
        tally
            .add(&String::from_utf8_lossy(&bytes))
            .map_err(with_path)?;
        files += 1;
    }
    if files == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no callgrind.out.* file in {}", dir.display()),
        ));
    }
    Ok(tally.finish())
}

/// The counts of one callgrind.out file's text, whatever its `totals:` lines say.
///
/// Own cost per function: cost lines after `fn=` add to that function; the cost line
/// after a `calls=` line is the inclusive cost of the call and is not added. Names may
/// be compressed (`fn=(12) name`, later `fn=(12)`); `fn` and `cfn` share one table,
/// `ob` and `cob` another. Lines that make no sense are skipped.
pub fn parse(text: &str) -> Counts {
    let mut tally = Tally::default();
    Parser::new(&mut tally).run(text);
    tally.finish()
}

/// [`parse`], checked: an error when a part's `totals:` line (written at the end of a
/// complete file) differs from the sum of its cost lines.
///
/// `summary:` lines are not checked: callgrind 3.19 writes `summary: 0` in dumps asked
/// for after instrumentation was turned off, however much the dump holds.
pub fn parse_checked(text: &str) -> Result<Counts, String> {
    let mut tally = Tally::default();
    tally.add(text)?;
    Ok(tally.finish())
}

/// Instructions summed over files.
#[derive(Default)]
struct Tally {
    total: u64,
    own: HashMap<String, u64>,
}

impl Tally {
    /// Adds one file; an error if its totals disagree with its cost lines.
    fn add(&mut self, text: &str) -> Result<(), String> {
        let mut parser = Parser::new(self);
        parser.run(text);
        match parser.mismatch {
            Some((said, summed)) => Err(format!(
                "totals: line says {said} instructions, its cost lines sum to {summed}"
            )),
            None => Ok(()),
        }
    }

    fn finish(self) -> Counts {
        let mut functions: Vec<FnCount> = self
            .own
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(function, instructions)| FnCount {
                function,
                instructions,
            })
            .collect();
        functions.sort_by(|a, b| {
            b.instructions
                .cmp(&a.instructions)
                .then_with(|| a.function.cmp(&b.function))
        });
        Counts {
            instructions: self.total,
            functions,
        }
    }
}

/// The state of reading one file.
struct Parser<'a> {
    tally: &'a mut Tally,
    /// Compressed names: `fn`/`cfn` ids, `ob`/`cob` ids.
    fns: HashMap<u64, String>,
    objects: HashMap<u64, String>,
    /// The column of `Ir` among the events of the current part, if any.
    ir: Option<usize>,
    /// How many subpositions (line, instr) start a cost line.
    positions: usize,
    object: String,
    function: Option<String>,
    /// The next cost line is a call's inclusive cost.
    after_call: bool,
    /// Ir of the current part's cost lines, to check against its `totals:`.
    part_sum: u64,
    /// The first (totals, sum) that disagree.
    mismatch: Option<(u64, u64)>,
}

impl<'a> Parser<'a> {
    fn new(tally: &'a mut Tally) -> Self {
        Parser {
            tally,
            fns: HashMap::new(),
            objects: HashMap::new(),
            ir: None,
            positions: 1,
            object: String::new(),
            function: None,
            after_call: false,
            part_sum: 0,
            mismatch: None,
        }
    }

    fn run(&mut self, text: &str) {
        for line in text.lines() {
            self.line(line.trim_end());
        }
    }

    fn line(&mut self, line: &str) {
        let Some(first) = line.chars().next() else {
            return;
        };
        if first == '#' {
            return;
        }
        if first.is_ascii_digit() || matches!(first, '+' | '-' | '*') {
            self.cost_line(line);
            return;
        }
        let Some(at) = line.find(|c: char| !c.is_ascii_alphabetic()) else {
            return;
        };
        let (key, rest) = line.split_at(at);
        if let Some(value) = rest.strip_prefix('=') {
            self.spec(key, value);
        } else if let Some(value) = rest.strip_prefix(':') {
            self.header(key, value);
        }
    }

    fn cost_line(&mut self, line: &str) {
        if std::mem::take(&mut self.after_call) {
            return; // inclusive cost of the call above: the callee's, not ours
        }
        let Some(ir) = self.ir else {
            return;
        };
        let n = line
            .split_ascii_whitespace()
            .nth(self.positions + ir)
            .and_then(number)
            .unwrap_or(0);
        if n == 0 {
            return;
        }
        self.tally.total = self.tally.total.saturating_add(n);
        self.part_sum = self.part_sum.saturating_add(n);
        let function = self
            .function
            .clone()
            .unwrap_or_else(|| "(unknown)".to_string());
        let own = self.tally.own.entry(function).or_insert(0);
        *own = own.saturating_add(n);
    }

    fn spec(&mut self, key: &str, value: &str) {
        match key {
            "ob" => self.object = resolve(&mut self.objects, value),
            "cob" => {
                resolve(&mut self.objects, value);
            }
            "fn" => {
                let name = resolve(&mut self.fns, value);
                self.function = Some(display_name(&name, &self.object));
            }
            "cfn" => {
                resolve(&mut self.fns, value);
            }
            "calls" => self.after_call = true,
            // fl, fi, fe, cfi, cfl (files), jump, jcnd: nothing to count.
            _ => {}
        }
    }

    fn header(&mut self, key: &str, value: &str) {
        match key {
            "events" => self.ir = value.split_whitespace().position(|e| e == "Ir"),
            "positions" => self.positions = value.split_whitespace().count().max(1),
            "totals" => {
                let said = self
                    .ir
                    .and_then(|ir| value.split_whitespace().nth(ir))
                    .and_then(number);
                if let Some(said) = said {
                    if said != self.part_sum && self.mismatch.is_none() {
                        self.mismatch = Some((said, self.part_sum));
                    }
                }
                self.part_sum = 0;
            }
            _ => {}
        }
    }
}

/// A number of the format: decimal or 0x hexadecimal.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A position name, `name`, `(id) name` (defines id) or `(id)` (uses it).
fn resolve(table: &mut HashMap<u64, String>, value: &str) -> String {
    let value = value.trim();
    let compressed = value.strip_prefix('(').and_then(|rest| {
        let close = rest.find(')')?;
        let id: u64 = rest[..close].parse().ok()?;
        Some((id, rest[close + 1..].trim()))
    });
    match compressed {
        Some((id, "")) => table.get(&id).cloned().unwrap_or_else(|| format!("({id})")),
        Some((id, name)) => {
            table.insert(id, name.to_string());
            name.to_string()
        }
        None => value.to_string(),
    }
}

/// The function's name as counted: without callgrind's recursion-level suffix (`f'2`),
/// and with its object's file name when the name is only an address.
fn display_name(name: &str, object: &str) -> String {
    let base = match name.rsplit_once('\'') {
        Some((base, level))
            if !base.is_empty()
                && !level.is_empty()
                && level.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => name,
    };
    if base.starts_with("0x") && !object.is_empty() {
        let file = object.rsplit('/').next().unwrap_or(object);
        format!("{base} [{file}]")
    } else {
        base.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's example with name compression, a header and a totals line, plus a
    /// recursion level, relative positions and an unnamed function.
    const HAND_MADE: &str = "# callgrind format
version: 1
creator: hand
positions: line
events: Ir Dr
summary: 1000

ob=(1) /usr/bin/app
fl=(1) file1.c
fn=(1) main
16 20 3
cfn=(2) func1
calls=1 50
16 400 9
cfi=(2) file2.c
cfn=(3) func2
calls=3 20
+0 400
fn=(2)
51 100
cfi=(2)
cfn=(3)
calls=2 20
51 300
fl=(2)
fn=(3)
20 700
* 5 1
fn=(4) func2'2
-3 7
ob=(2) /lib/libc.so.6
fn=(5) 0x00000000000012ab
0x10 8
totals: 840 4
";

    fn own(c: &Counts, f: &str) -> Option<u64> {
        c.functions
            .iter()
            .find(|x| x.function == f)
            .map(|x| x.instructions)
    }

    #[test]
    fn hand_made_file_own_costs_and_total() {
        let c = parse_checked(HAND_MADE).expect("totals agree");
        assert_eq!(c.instructions, 20 + 100 + 700 + 5 + 7 + 8);
        assert_eq!(own(&c, "main"), Some(20));
        assert_eq!(own(&c, "func1"), Some(100));
        assert_eq!(own(&c, "func2"), Some(712));
        assert_eq!(own(&c, "0x00000000000012ab [libc.so.6]"), Some(8));
        let order: Vec<&str> = c.functions.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(
            order,
            ["func2", "func1", "main", "0x00000000000012ab [libc.so.6]"]
        );
    }

    #[test]
    fn totals_mismatch_is_an_error_but_parse_still_counts() {
        let text = HAND_MADE.replace("totals: 840 4", "totals: 900 4");
        let e = parse_checked(&text).expect_err("mismatch");
        assert!(e.contains("900") && e.contains("840"), "{e}");
        assert_eq!(parse(&text).instructions, 840);
    }

    #[test]
    fn ir_found_by_name_among_events() {
        let text = "events: Dr Ir\nfn=f\n1 5 7\n2 9\n";
        let c = parse(text);
        assert_eq!(c.instructions, 7);
        assert_eq!(own(&c, "f"), Some(7));
    }

    #[test]
    fn instr_positions_shift_the_cost_column() {
        let text = "positions: instr line\nevents: Ir\nfn=f\n0x400 3 11\n+2 * 4\n";
        assert_eq!(parse(text).instructions, 15);
    }

    #[test]
    fn odd_input_neither_panics_nor_counts() {
        for text in [
            "",
            "\n\n",
            "fn=(",
            "fn=(x) y\n1 2",
            "calls=\n",
            "events:\n1 2 3",
            "totals: 5",
            "=\n:\n(\n",
            "events: Ir\nfn=(99)\n1 18446744073709551615\n1 5\n",
        ] {
            let _ = parse(text);
            let _ = parse_checked(text);
        }
        assert_eq!(
            parse("events: Ir\nfn=(99)\n1 3\n").functions[0].function,
            "(99)"
        );
        let big = parse("events: Ir\nfn=f\n1 18446744073709551615\n1 5\n");
        assert_eq!(big.instructions, u64::MAX);
    }

    #[test]
    fn recursion_suffix_and_addresses() {
        assert_eq!(display_name("fib'2", "/x/calls"), "fib");
        assert_eq!(
            display_name("0x00ab'3", "/usr/bin/memcached"),
            "0x00ab [memcached]"
        );
        assert_eq!(display_name("it's", ""), "it's");
        assert_eq!(display_name("'2", ""), "'2");
    }

    fn output(stdout: &str, stderr: &str) -> Output {
        use std::os::unix::process::ExitStatusExt;
        Output {
            status: std::process::ExitStatus::from_raw(0),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    /// callgrind_control's words, as it said them here.
    #[test]
    fn callgrind_control_answers() {
        let ok = output(
            "PID 658: /usr/sbin/mariadbd --log-error=/x/err.log\n  OK.\n",
            "sending command instrumentation on to pid 658\n",
        );
        assert!(matches!(judge(&ok), Ok(Answer::Done)));
        let absent = output(
            "Error: Callgrind task with PID/name '99999' not detected.\nSee '/usr/bin/callgrind_control -h' for help.\n",
            "",
        );
        assert!(matches!(judge(&absent), Ok(Answer::NotUnderCallgrind(_))));
        let none = output("No active callgrind runs detected.\n", "");
        assert!(matches!(judge(&none), Ok(Answer::NotUnderCallgrind(_))));
        let vgdb_failed = output(
            "PID 1536: /usr/bin/memcached\n  OK.\n",
            "syscall failed: Interrupted system call\nerror opening /tmp/vgdb-pipe-to-vgdb-from-1536 read cmd result from pid\n",
        );
        let e = judge(&vgdb_failed).err().expect("an error");
        assert!(e.to_string().contains("error opening"), "{e}");
    }

    #[test]
    fn prefix_has_the_window_flags() {
        let p = command_prefix(Path::new("/tmp/x"));
        assert_eq!(p[0], "valgrind");
        for flag in [
            "--tool=callgrind",
            "--instr-atstart=no",
            "--callgrind-out-file=/tmp/x/callgrind.out.%p",
            "--trace-children=yes",
            "--separate-threads=no",
        ] {
            assert!(p.iter().any(|a| a == flag), "{flag} missing from {p:?}");
        }
    }
}
