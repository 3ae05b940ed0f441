//! Memory-error reports in a server's log: AddressSanitizer (and its LeakSanitizer),
//! UndefinedBehaviorSanitizer and valgrind memcheck, as they write them to stderr; and
//! threading errors: ThreadSanitizer's warnings (data races, lock-order inversions...)
//! and valgrind helgrind's (possible data races, lock order violations).
//!
//! Each report becomes one [`Finding`]: its kind, its first line and its stack, the
//! frames of the access (not of the allocation or the free that ASan and memcheck also
//! show). Reads any text without failing: lines that belong to no report are skipped,
//! and a report cut short keeps what it had. Memcheck lines of several processes may
//! be interleaved (a forking server under valgrind): they are told apart by pid.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// At most this many frames are kept per stack, innermost first.
pub const MAX_FRAMES: usize = 20;

/// How many lines of a sanitizer report may stand between its first line and its stack
/// ("READ of size 4 ...", "Hint: ...", symbolizer warnings).
const LINES_BEFORE_STACK: usize = 8;

/// One report: its kind, its first line, and its stack (frames, innermost first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// e.g. "heap-buffer-overflow", "undefined-behavior", "invalid-read", "leak".
    pub kind: String,
    /// Which checker: "asan", "ubsan", "memcheck", "tsan", "helgrind".
    pub tool: String,
    /// The report's first line without the `==PID==` prefix; for UBSan the text after
    /// `runtime error: `; for ThreadSanitizer its SUMMARY line (kind, `file:line`,
    /// function) where the report has one, else its WARNING line.
    pub message: String,
    /// Frames as "function location" with addresses dropped, e.g.
    /// "overflow_heap /src/heap.c:6" (ASan, UBSan) or "read_after_free (uaf.c:7)"
    /// (memcheck). A UBSan report without a stack has its source location as its only
    /// frame; a leak summary without records has none.
    pub stack: Vec<String>,
}

/// Every AddressSanitizer, UndefinedBehaviorSanitizer, ThreadSanitizer, memcheck and
/// helgrind report in `log`.
pub fn parse(log: &str) -> Vec<Finding> {
    let lines: Vec<&str> = log.lines().collect();
    let mut found = Vec::new();
    let mut memcheck = Memcheck::default();
    let mut i = 0;
    while i < lines.len() {
        let next = if let Some(next) = sanitizer_report(&lines, i, &mut found) {
            next
        } else {
            memcheck.line(lines[i], &mut found);
            i + 1
        };
        // Always move on, whatever a report parser returned.
        i = next.max(i + 1);
    }
    found
}

/// If line `i` starts a sanitizer report, adds it and returns the line after it.
fn sanitizer_report(lines: &[&str], i: usize, found: &mut Vec<Finding>) -> Option<usize> {
    let line = lines.get(i)?;
    if let Some(at) = line.find("ERROR: AddressSanitizer: ") {
        let rest = &line[at + "ERROR: AddressSanitizer: ".len()..];
        let (stack, next) = stack_after(lines, i + 1);
        found.push(Finding {
            kind: asan_kind(rest),
            tool: "asan".into(),
            message: line[at..].trim().to_string(),
            stack,
        });
        return Some(next);
    }
    if let Some(at) = line.find("WARNING: ThreadSanitizer: ") {
        return Some(tsan_report(lines, i, &line[at..], found));
    }
    if let Some(at) = line.find("FATAL: ThreadSanitizer: ") {
        found.push(Finding {
            kind: "fatal".into(),
            tool: "tsan".into(),
            message: line[at..].trim().to_string(),
            stack: Vec::new(),
        });
        return Some(i + 1);
    }
    if let Some(at) = line.find("ERROR: LeakSanitizer:") {
        return Some(leak_report(lines, i, line[at..].trim(), found));
    }
    let at = line.find(": runtime error: ")?;
    let location = line[..at].trim();
    let (mut stack, next) = stack_after(lines, i + 1);
    if stack.is_empty() && !location.is_empty() {
        stack.push(location.to_string());
    }
    found.push(Finding {
        kind: "undefined-behavior".into(),
        tool: "ubsan".into(),
        message: line[at + ": runtime error: ".len()..].trim().to_string(),
        stack,
    });
    Some(next)
}

/// Whether a line starts a sanitizer report (so no other report's stack runs into it).
fn starts_sanitizer_report(line: &str) -> bool {
    line.contains("ERROR: AddressSanitizer: ")
        || line.contains("ERROR: LeakSanitizer:")
        || line.contains("WARNING: ThreadSanitizer: ")
        || line.contains(": runtime error: ")
}

/// The first stack at or after line `from`: a few other lines may come first, a blank
/// line or another report before any frame means there is none. Returns the frames
/// and the line after them.
fn stack_after(lines: &[&str], from: usize) -> (Vec<String>, usize) {
    let mut i = from;
    while let Some(line) = lines.get(i) {
        if sanitizer_frame(line).is_some() {
            return frames_from(lines, i);
        }
        if line.trim().is_empty() || starts_sanitizer_report(line) || i >= from + LINES_BEFORE_STACK
        {
            break;
        }
        i += 1;
    }
    (Vec::new(), from)
}

/// The consecutive frames from line `from` on, and the line after them.
fn frames_from(lines: &[&str], from: usize) -> (Vec<String>, usize) {
    let mut stack = Vec::new();
    let mut i = from;
    while let Some(frame) = lines.get(i).and_then(|l| sanitizer_frame(l)) {
        if stack.len() < MAX_FRAMES {
            stack.push(frame);
        }
        i += 1;
    }
    (stack, i)
}

/// `    #3 0x7faa0b045304 in __libc_start_main_impl ../csu/libc-start.c:360` ->
/// "__libc_start_main_impl ../csu/libc-start.c:360"; a frame without a function keeps
/// its module: "(/srv/ub+0x2c7d5)".
fn sanitizer_frame(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix('#')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = rest[digits..].trim_start();
    let rest = rest.strip_prefix("0x")?;
    let rest = rest
        .trim_start_matches(|c: char| c.is_ascii_hexdigit())
        .trim();
    let rest = rest.strip_prefix("in ").unwrap_or(rest);
    let rest = match rest.find(" (BuildId:") {
        Some(at) => &rest[..at],
        None => rest,
    };
    let rest = rest.trim();
    Some(if rest.is_empty() { "??" } else { rest }.to_string())
}

/// A ThreadSanitizer report from line `i` (its WARNING line, `header`): its kind, the
/// first stack (the access, or the first lock acquisition), and its SUMMARY line. The
/// report ends at its SUMMARY, at its `=====` rule or at the next report. Returns the
/// line after it.
fn tsan_report(lines: &[&str], i: usize, header: &str, found: &mut Vec<Finding>) -> usize {
    let rest = header["WARNING: ThreadSanitizer: ".len()..].trim();
    let mut stack = Vec::new();
    let mut summary = None;
    let mut j = i + 1;
    while let Some(line) = lines.get(j) {
        let text = line.trim();
        if starts_sanitizer_report(line) || text.starts_with("=====") {
            break;
        }
        j += 1;
        if let Some(s) = text.strip_prefix("SUMMARY: ") {
            summary = Some(s.to_string());
            break;
        }
        if stack.is_empty() {
            if let Some(frame) = tsan_frame(line) {
                stack.push(frame);
                while let Some(frame) = lines.get(j).and_then(|l| tsan_frame(l)) {
                    if stack.len() < MAX_FRAMES {
                        stack.push(frame);
                    }
                    j += 1;
                }
            }
        }
    }
    found.push(Finding {
        kind: tsan_kind(rest),
        tool: "tsan".into(),
        message: summary.unwrap_or_else(|| header.trim().to_string()),
        stack,
    });
    j
}

/// "data race (pid=12)" -> "data-race"; "lock-order-inversion (potential deadlock)
/// (pid=12)" -> "lock-order-inversion"; "heap-use-after-free (pid=1)" likewise.
fn tsan_kind(rest: &str) -> String {
    let what = rest.split(" (").next().unwrap_or("").trim();
    if what.is_empty() {
        return "unknown".into();
    }
    what.split_whitespace().collect::<Vec<_>>().join("-")
}

/// `    #0 bump /tmp/race.c:6 (race+0x11f7)` -> "bump /tmp/race.c:6": ThreadSanitizer's
/// frames have no address; the module and BuildId in parentheses are dropped unless
/// they are all there is.
fn tsan_frame(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix('#')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !rest[digits..].starts_with(' ') {
        return None;
    }
    let rest = rest[digits..].trim();
    if rest.starts_with("0x") {
        return sanitizer_frame(line);
    }
    let rest = match rest.find(" (BuildId:") {
        Some(at) => &rest[..at],
        None => rest,
    };
    let kept = match rest.rfind(" (") {
        Some(at) if rest.ends_with(')') && at > 0 => &rest[..at],
        _ => rest,
    };
    let kept = kept.trim();
    Some(if kept.is_empty() { "??" } else { kept }.to_string())
}

/// "heap-buffer-overflow on address ..." -> "heap-buffer-overflow"; "SEGV on unknown
/// address" -> "SEGV"; "attempting double-free on ..." -> "double-free".
fn asan_kind(rest: &str) -> String {
    let rest = rest.trim();
    if let Some(what) = rest.strip_prefix("attempting ") {
        if what.starts_with("double-free") {
            return "double-free".into();
        }
        if what.starts_with("free on address which was not malloc") {
            return "bad-free".into();
        }
    }
    let word = rest.split_whitespace().next().unwrap_or("");
    let word = word.trim_end_matches([':', ',']);
    if word.is_empty() {
        "unknown".into()
    } else {
        word.to_string()
    }
}

/// A LeakSanitizer report from line `i`: one finding per direct leak (indirect leaks
/// are blocks only the direct ones point to), or one for the report when it lists none.
/// Returns the line after the report.
fn leak_report(lines: &[&str], i: usize, header: &str, found: &mut Vec<Finding>) -> usize {
    let before = found.len();
    let mut j = i + 1;
    while let Some(line) = lines.get(j) {
        if starts_sanitizer_report(line) {
            break;
        }
        j += 1;
        let text = line.trim();
        if text.starts_with("SUMMARY:") {
            break;
        }
        if text.starts_with("Direct leak of") {
            let (stack, next) = stack_after(lines, j);
            found.push(leak("asan", text, stack));
            j = next.max(j);
        }
    }
    if found.len() == before {
        found.push(leak("asan", header, Vec::new()));
    }
    j
}

fn leak(tool: &str, message: &str, stack: Vec<String>) -> Finding {
    Finding {
        kind: "leak".into(),
        tool: tool.into(),
        message: message.to_string(),
        stack,
    }
}

/// `==1234== text` -> ("1234", " text"); None for any other line.
fn valgrind_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("==")?;
    let end = rest.find("==")?;
    let pid = &rest[..end];
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((pid, &rest[end + 2..]))
}

/// Memcheck's reports, read line by line, one open report per process.
#[derive(Default)]
struct Memcheck {
    /// Per pid: the index in the findings of its open report, and whether its stack
    /// is complete (an indented non-frame line came after frames).
    open: HashMap<String, (usize, bool)>,
    /// Pids that reported a definitely lost block with its stack: their leak summary
    /// adds nothing.
    leak_records: HashSet<String>,
    /// Pids running under helgrind (by valgrind's banner), with their reports so far.
    helgrind: HashMap<String, usize>,
}

impl Memcheck {
    fn line(&mut self, line: &str, found: &mut Vec<Finding>) {
        let Some((pid, rest)) = valgrind_line(line) else {
            return;
        };
        // "==12==ERROR: ..." (no space) is a sanitizer's, not memcheck's.
        let Some(body) = rest.strip_prefix(' ') else {
            return;
        };
        let text = body.trim();
        if text.starts_with("Helgrind, a thread error detector") {
            self.helgrind.insert(pid.to_string(), 0);
            return;
        }
        if self.helgrind.contains_key(pid) && self.helgrind_detail(pid, text, found) {
            return;
        }
        if text.is_empty() {
            self.open.remove(pid);
        } else if body.starts_with(' ') {
            self.indented(pid, text, found);
        } else {
            self.open.remove(pid);
            let helgrind = self.helgrind.get_mut(pid);
            let kind = match helgrind {
                Some(_) => helgrind_kind(text),
                None => memcheck_kind(text),
            };
            if let Some(kind) = kind {
                if kind == "leak" {
                    self.leak_records.insert(pid.to_string());
                }
                let tool = match helgrind {
                    Some(n) => {
                        *n += 1;
                        "helgrind"
                    }
                    None => "memcheck",
                };
                found.push(Finding {
                    kind: kind.into(),
                    tool: tool.into(),
                    message: text.to_string(),
                    stack: Vec::new(),
                });
                self.open.insert(pid.to_string(), (found.len() - 1, false));
            }
        }
    }

    /// Helgrind's lines that neither start nor end a report: "Locks held: ..." between
    /// a race's first line and its stack; the blank line and "Observed (incorrect)
    /// order is: ..." between a lock order violation's first line and its stack; and
    /// its ERROR SUMMARY, which becomes a finding of kind "errors" when it counts
    /// errors but none of their reports was read. True if the line was taken.
    fn helgrind_detail(&mut self, pid: &str, text: &str, found: &mut Vec<Finding>) -> bool {
        let awaiting_stack = self
            .open
            .get(pid)
            .and_then(|(index, _)| found.get(*index))
            .filter(|f| f.stack.is_empty());
        if let Some(f) = awaiting_stack {
            let lock_order = f.kind == "lock-order-inversion";
            if text.starts_with("Locks held:")
                || (lock_order
                    && (text.is_empty() || text.starts_with("Observed (incorrect) order")))
            {
                return true;
            }
        }
        if let Some(summary) = text.strip_prefix("ERROR SUMMARY: ") {
            let errors: u64 = summary
                .split_whitespace()
                .next()
                .and_then(|n| n.replace(',', "").parse().ok())
                .unwrap_or(0);
            if errors > 0 && self.helgrind.get(pid) == Some(&0) {
                found.push(Finding {
                    kind: "errors".into(),
                    tool: "helgrind".into(),
                    message: text.to_string(),
                    stack: Vec::new(),
                });
            }
            self.open.remove(pid);
            return true;
        }
        false
    }

    /// A frame, a leak summary's "definitely lost" line, or detail of a report.
    fn indented(&mut self, pid: &str, text: &str, found: &mut Vec<Finding>) {
        if let Some(frame) = memcheck_frame(text) {
            if let Some((index, false)) = self.open.get(pid) {
                if let Some(f) = found.get_mut(*index) {
                    if f.stack.len() < MAX_FRAMES {
                        f.stack.push(frame);
                    }
                }
            }
        } else if let Some(lost) = text.strip_prefix("definitely lost: ") {
            let bytes: String = lost
                .split_whitespace()
                .next()
                .unwrap_or("")
                .chars()
                .filter(|c| *c != ',')
                .collect();
            let lost_some = bytes.parse::<u64>().map(|b| b > 0).unwrap_or(false);
            if lost_some && !self.leak_records.contains(pid) {
                found.push(leak("memcheck", text, Vec::new()));
            }
        } else if let Some((index, done)) = self.open.get_mut(pid) {
            // "Address 0x.. is 4 bytes inside a block ...": the access stack is over;
            // detail before any frame ("Access not within mapped region") is skipped.
            let has_frames = found.get(*index).is_some_and(|f| !f.stack.is_empty());
            *done |= has_frames;
        }
    }
}

/// `at 0x109189: read_after_free (uaf.c:7)` -> "read_after_free (uaf.c:7)".
fn memcheck_frame(text: &str) -> Option<String> {
    let rest = text
        .strip_prefix("at 0x")
        .or_else(|| text.strip_prefix("by 0x"))?;
    let rest = match rest.find(": ") {
        Some(at) => &rest[at + 2..],
        None => rest.trim_start_matches(|c: char| c.is_ascii_hexdigit()),
    };
    let rest = rest.trim();
    Some(if rest.is_empty() { "??" } else { rest }.to_string())
}

/// The kind of a helgrind report from its first line, None for other lines.
fn helgrind_kind(text: &str) -> Option<&'static str> {
    if text.starts_with("Possible data race") {
        return Some("data-race");
    }
    if text.starts_with("Thread #") {
        if text.contains(": lock order ") && text.contains("violated") {
            return Some("lock-order-inversion");
        }
        if text.contains("unlocked")
            || text.contains("still holds")
            || text.contains("dubious")
            || text.contains("'s call to pthread_")
            || text.contains("invalid argument")
        {
            return Some("pthread-misuse");
        }
    }
    None
}

/// The kind of a memcheck report from its first line, None for other lines.
fn memcheck_kind(text: &str) -> Option<&'static str> {
    const KINDS: [(&str, &str); 12] = [
        ("Invalid read of size", "invalid-read"),
        ("Invalid write of size", "invalid-write"),
        ("Invalid free()", "invalid-free"),
        ("Mismatched free()", "mismatched-free"),
        ("Mismatched new/delete size", "mismatched-size"),
        (
            "Conditional jump or move depends on uninitialised",
            "uninitialised-value",
        ),
        ("Use of uninitialised value", "uninitialised-value"),
        ("Source and destination overlap", "overlap"),
        ("Jump to the invalid address", "invalid-jump"),
        ("Invalid alignment value", "invalid-alignment"),
        (
            "Process terminating with default action of signal",
            "fatal-signal",
        ),
        ("Stack overflow in thread", "stack-overflow"),
    ];
    if let Some((_, kind)) = KINDS.iter().find(|(p, _)| text.starts_with(p)) {
        return Some(kind);
    }
    if text.starts_with("Syscall param ") {
        return Some(if text.contains("uninitialised") {
            "uninitialised-value"
        } else {
            "invalid-syscall-param"
        });
    }
    if text.starts_with("Argument '") && text.contains("fishy") {
        return Some("fishy-value");
    }
    if text.contains("are definitely lost in loss record") {
        return Some("leak");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_drop_addresses() {
        assert_eq!(
            sanitizer_frame("    #0 0x5561e6d04212 in overflow_heap /tmp/fnd/heap.c:6"),
            Some("overflow_heap /tmp/fnd/heap.c:6".into())
        );
        assert_eq!(
            sanitizer_frame("    #0 0x55f42339f7d5  (/tmp/fnd/ub+0x2c7d5) (BuildId: 2545)"),
            Some("(/tmp/fnd/ub+0x2c7d5)".into())
        );
        assert_eq!(sanitizer_frame("    #x 0x1 in f"), None);
        assert_eq!(sanitizer_frame("#12"), None);
        assert_eq!(
            memcheck_frame("by 0x10922A: main (many.c:7)"),
            Some("main (many.c:7)".into())
        );
        assert_eq!(memcheck_frame("Address 0x4a40048 is 0 bytes after"), None);
    }

    #[test]
    fn asan_kinds() {
        assert_eq!(
            asan_kind("heap-use-after-free on address 0x6"),
            "heap-use-after-free"
        );
        assert_eq!(asan_kind("SEGV on unknown address 0x000000000000"), "SEGV");
        assert_eq!(
            asan_kind("attempting double-free on 0x6 in thread T0:"),
            "double-free"
        );
        assert_eq!(asan_kind(""), "unknown");
    }

    #[test]
    fn interleaved_processes_keep_their_own_stacks() {
        let log = "==10== Invalid read of size 4
==11== Invalid write of size 8
==10==    at 0x1: reader (a.c:1)
==11==    at 0x2: writer (b.c:2)
==10==    by 0x3: main (a.c:9)
==10== 
==11== 
";
        let f = parse(log);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].stack, ["reader (a.c:1)", "main (a.c:9)"]);
        assert_eq!(f[1].kind, "invalid-write");
        assert_eq!(f[1].stack, ["writer (b.c:2)"]);
    }

    #[test]
    fn leak_summary_counts_only_without_records_and_when_not_zero() {
        let summary = |n: &str| {
            format!("==5== LEAK SUMMARY:\n==5==    definitely lost: {n} bytes in 2 blocks\n")
        };
        assert!(parse(&summary("0")).is_empty());
        let f = parse(&summary("1,024"));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].kind.as_str(), f[0].tool.as_str()),
            ("leak", "memcheck")
        );
        assert_eq!(f[0].message, "definitely lost: 1,024 bytes in 2 blocks");
        let with_record = format!(
            "==5== 8 bytes in 1 blocks are definitely lost in loss record 1 of 1\n==5==    at 0x1: malloc (in vg.so)\n==5== \n{}",
            summary("8")
        );
        assert_eq!(parse(&with_record).len(), 1);
    }

    #[test]
    fn ubsan_without_stack_keeps_its_location() {
        let f = parse("x.c:12:5: runtime error: signed integer overflow: 1 + 2\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "signed integer overflow: 1 + 2");
        assert_eq!(f[0].stack, ["x.c:12:5"]);
    }

    #[test]
    fn stacks_are_capped() {
        let mut log = String::from("==1==ERROR: AddressSanitizer: stack-overflow on address 0x1\n");
        for n in 0..50 {
            log.push_str(&format!("    #{n} 0x1 in recurse r.c:{n}\n"));
        }
        let f = parse(&log);
        assert_eq!(f[0].stack.len(), MAX_FRAMES);
        assert_eq!(f[0].stack[0], "recurse r.c:0");
    }

    #[test]
    fn odd_input_does_not_panic() {
        for log in [
            "",
            "====",
            "==1==",
            "== 1== Invalid read",
            "==1== ",
            "==1==    at 0x",
            "#",
            "    #0 0x",
            "==1==ERROR: AddressSanitizer: ",
            "ERROR: LeakSanitizer:",
            ": runtime error: ",
            "==é==ERROR: AddressSanitizer: é\n    #0 0xé in é",
        ] {
            let _ = parse(log);
        }
    }
}
