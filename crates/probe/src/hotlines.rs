//! Line-level hotspots: where inside each top function of a [`Profile`] its own samples
//! fell.
//!
//! perf script prints each sample's innermost frame as `symbol+0xoffset`; the offset
//! plus the symbol's address in the binary (`nm`) is the sampled instruction's address
//! in the file. Those addresses go to `addr2line` in one batch per binary; where the
//! binary has line info, samples add up per source line (`file:line`, the file's name
//! without its directory, so that builds in different directories match). Where it has
//! none (`??`), samples add up per instruction and `objdump -d` over the function's hot
//! range gives each one's disassembly; instruction addresses mean nothing across
//! builds, so only lines are compared with the baseline ([`diff_lines`]).
//!
//! Cost: at most [`FUNCTIONS`] functions, one `nm` and one `addr2line` per binary and
//! one `objdump` per function without line info, all within [`BUDGET`]; what is left
//! when the budget runs out keeps its function without lines. The time taken is
//! [`Profile::lines_ms`].

use crate::hotspots::{HotLine, Profile};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Top functions (by self samples) given lines.
pub const FUNCTIONS: usize = 10;
/// Lines (or instructions) kept per function.
pub const LINES: usize = 5;
/// Wall-clock budget for resolving one profile's lines.
pub const BUDGET: Duration = Duration::from_secs(20);

/// Samples of one function by offset into its symbol, and where its binary is.
#[derive(Debug, Clone, Default)]
pub struct Spots {
    /// The binary's path as perf printed it.
    pub path: String,
    pub by_offset: BTreeMap<u64, u64>,
}

/// Gives the first [`FUNCTIONS`] functions of `profile.top` that have `spots` (keyed by
/// function name and dso file name) their hottest lines, within [`BUDGET`].
pub fn resolve(profile: &mut Profile, spots: &HashMap<(String, String), Spots>) {
    let started = Instant::now();
    let deadline = started + BUDGET;
    // Binary path -> indexes into profile.top.
    let mut by_path: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in profile.top.iter().enumerate() {
        if by_path.values().map(Vec::len).sum::<usize>() >= FUNCTIONS {
            break;
        }
        let key = (f.function.clone(), f.dso.clone());
        if let Some(s) = spots.get(&key) {
            if s.path.starts_with('/') && !s.by_offset.is_empty() {
                by_path.entry(s.path.clone()).or_default().push(i);
            }
        }
    }
    for (path, fns) in by_path {
        if Instant::now() >= deadline {
            break;
        }
        let Some(symbols) = symbols(&path, deadline) else {
            continue;
        };
        // Every address of this binary's functions, in one addr2line batch.
        let mut wanted: Vec<(usize, u64, u64)> = Vec::new();
        for &i in &fns {
            let f = &profile.top[i];
            let Some(&base) = symbols.get(&f.function) else {
                continue;
            };
            let s = &spots[&(f.function.clone(), f.dso.clone())];
            for (&off, &n) in &s.by_offset {
                wanted.push((i, base + off, n));
            }
        }
        if wanted.is_empty() {
            continue;
        }
        let addrs: Vec<u64> = wanted.iter().map(|w| w.1).collect();
        let Some(places) = addr2line(&path, &addrs, deadline) else {
            continue;
        };
        let mut per_fn: BTreeMap<usize, Vec<(u64, Option<String>, u64)>> = BTreeMap::new();
        for ((i, addr, n), place) in wanted.into_iter().zip(places) {
            per_fn.entry(i).or_default().push((addr, place, n));
        }
        for (i, hits) in per_fn {
            let total: u64 = hits.iter().map(|h| h.2).sum();
            let lines = if hits.iter().any(|h| h.1.is_some()) {
                top_lines(&hits, total)
            } else {
                top_instructions(&path, &hits, total, deadline)
            };
            profile.top[i].lines = lines;
        }
    }
    profile.lines_ms = started.elapsed().as_millis() as u64;
}

/// Samples per source line, largest first (samples without a line are left out of the
/// lines but not of the total).
fn top_lines(hits: &[(u64, Option<String>, u64)], total: u64) -> Vec<HotLine> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, place, n) in hits {
        if let Some(p) = place {
            *counts.entry(p.as_str()).or_default() += n;
        }
    }
    let mut lines: Vec<(&str, u64)> = counts.into_iter().collect();
    lines.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    lines
        .into_iter()
        .take(LINES)
        .map(|(place, n)| HotLine {
            place: place.to_string(),
            instruction: None,
            samples: n,
            pct: share(n, total),
        })
        .collect()
}

/// Samples per instruction, largest first, with objdump's disassembly of each.
fn top_instructions(
    path: &str,
    hits: &[(u64, Option<String>, u64)],
    total: u64,
    deadline: Instant,
) -> Vec<HotLine> {
    let mut by_addr: Vec<(u64, u64)> = hits.iter().map(|h| (h.0, h.2)).collect();
    by_addr.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    by_addr.truncate(LINES);
    let lo = by_addr.iter().map(|a| a.0).min().unwrap_or(0);
    let hi = by_addr.iter().map(|a| a.0).max().unwrap_or(0);
    // x86 instructions are at most 15 bytes: the last hot one is disassembled whole.
    let code = disassemble(path, lo, hi + 16, deadline).unwrap_or_default();
    by_addr
        .into_iter()
        .map(|(addr, n)| HotLine {
            place: format!("{addr:#x}"),
            instruction: Some(code.get(&addr).cloned().unwrap_or_default()),
            samples: n,
            pct: share(n, total),
        })
        .collect()
}

fn share(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 * 100.0 / total as f64
    }
}

/// Runs `cmd` with `input` on stdin until it exits or `deadline` passes: its stdout, or
/// None if it could not start, failed or ran out of time (then it is killed).
fn run_until(mut cmd: Command, input: Option<String>, deadline: Instant) -> Option<String> {
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let writer = child.stdin.take().map(|mut stdin| {
        let input = input.unwrap_or_default();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        })
    });
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    let out = reader.join().ok()?;
    status
        .filter(|s| s.success())
        .map(|_| String::from_utf8_lossy(&out).into_owned())
}

/// Function symbols of the binary at `path`: name -> address (`nm`, else `nm -D` for
/// binaries stripped down to their dynamic symbols), with those of its separate debug
/// file where one is installed (`/usr/lib/debug/.build-id/…`: libc's internal
/// functions, such as `__memmove_avx_unaligned_erms`, are only there).
fn symbols(path: &str, deadline: Instant) -> Option<HashMap<String, u64>> {
    let mut table = HashMap::new();
    for dynamic in [false, true] {
        table = nm(path, dynamic, deadline);
        if !table.is_empty() {
            break;
        }
    }
    if let Some(debug) = debug_file(path, deadline) {
        for (name, addr) in nm(&debug, false, deadline) {
            table.entry(name).or_insert(addr);
        }
    }
    (!table.is_empty()).then_some(table)
}

fn nm(path: &str, dynamic: bool, deadline: Instant) -> HashMap<String, u64> {
    let mut cmd = Command::new("nm");
    cmd.arg("--defined-only");
    if dynamic {
        cmd.arg("-D");
    }
    cmd.arg(path);
    run_until(cmd, None, deadline)
        .map(|text| parse_nm(&text))
        .unwrap_or_default()
}

/// The separate debug file of the binary at `path`, by its build ID (`readelf -n`),
/// where it exists.
fn debug_file(path: &str, deadline: Instant) -> Option<String> {
    let mut cmd = Command::new("readelf");
    cmd.arg("-n").arg(path);
    let notes = run_until(cmd, None, deadline)?;
    let id = build_id(&notes)?;
    let file = format!("/usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]);
    std::path::Path::new(&file).is_file().then_some(file)
}

/// The `Build ID: …` of `readelf -n` output (lowercase hex, at least 4 digits).
pub fn build_id(notes: &str) -> Option<String> {
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))?
        .trim()
        .to_ascii_lowercase();
    (id.len() >= 4 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
}

/// `nm` output: code symbols (types t, T, w, W, i) by name; versioned names
/// (`memcpy@@GLIBC_2.14`) also under their bare name. The first address of a name wins.
pub fn parse_nm(text: &str) -> HashMap<String, u64> {
    let mut table = HashMap::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !matches!(kind, "t" | "T" | "w" | "W" | "i") {
            continue;
        }
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        table.entry(name.to_string()).or_insert(addr);
        if let Some((bare, _)) = name.split_once('@') {
            table.entry(bare.to_string()).or_insert(addr);
        }
    }
    table
}

/// `addr2line -e path` over `addrs` in one batch: each address's `file:line` (the
/// file's name only), or None where the binary has no line for it. None if addr2line
/// failed or did not answer once per address.
fn addr2line(path: &str, addrs: &[u64], deadline: Instant) -> Option<Vec<Option<String>>> {
    let input: String = addrs.iter().map(|a| format!("{a:#x}\n")).collect();
    let mut cmd = Command::new("addr2line");
    cmd.arg("-e").arg(path);
    let out = run_until(cmd, Some(input), deadline)?;
    let places: Vec<Option<String>> = out.lines().map(parse_srcline).collect();
    (places.len() == addrs.len()).then_some(places)
}

/// One line of addr2line's answer (`/dir/items.c:123 (discriminator 2)`) as
/// `items.c:123`; None for `??:0`, `??:?` and the like.
pub fn parse_srcline(line: &str) -> Option<String> {
    let line = line.trim();
    let line = match line.find(" (discriminator") {
        Some(i) => &line[..i],
        None => line,
    };
    let (file, number) = line.rsplit_once(':')?;
    let number: u64 = number.trim().parse().ok()?;
    let file = file.rsplit('/').next().unwrap_or(file);
    if number == 0 || file.is_empty() || file.starts_with("??") {
        return None;
    }
    Some(format!("{file}:{number}"))
}

/// `objdump -d` of `[start, stop)` in the binary at `path`: instruction text by
/// address.
fn disassemble(
    path: &str,
    start: u64,
    stop: u64,
    deadline: Instant,
) -> Option<HashMap<u64, String>> {
    let mut cmd = Command::new("objdump");
    cmd.args(["-d", "--no-show-raw-insn", "-C"])
        .arg(format!("--start-address={start:#x}"))
        .arg(format!("--stop-address={stop:#x}"))
        .arg(path);
    run_until(cmd, None, deadline).map(|t| parse_objdump(&t))
}

/// objdump's instruction lines (`  4a1b2:\tmov    %rdi,%rax`): text by address.
pub fn parse_objdump(text: &str) -> HashMap<u64, String> {
    let mut code = HashMap::new();
    for line in text.lines() {
        let Some((addr, insn)) = line.split_once(":\t") else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let insn = insn.split_whitespace().collect::<Vec<_>>().join(" ");
        if !insn.is_empty() {
            code.insert(addr, insn);
        }
    }
    code
}

/// One source line's cost per operation in two profiles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LineDelta {
    pub function: String,
    /// `file:line`.
    pub place: String,
    /// Samples per million operations; None where that profile did not keep the line
    /// (not among its function's hottest, or the function not among the resolved).
    pub base_per_mop: Option<f64>,
    pub other_per_mop: Option<f64>,
    /// other / base - 1, where both kept the line and the base has samples on it.
    pub change: Option<f64>,
}

/// Source lines of both profiles, matched by function and `file:line`: those both kept
/// first, by largest absolute change per operation, then those only one kept; at most
/// `limit`.
///
/// Only lines count: instruction addresses (functions without line info) have no
/// honest match across builds. A line missing from one profile's kept lines is not
/// taken as zero (it may just have been below the cut). Empty if either operation
/// count is 0.
pub fn diff_lines(
    base: &Profile,
    base_ops: u64,
    other: &Profile,
    other_ops: u64,
    limit: usize,
) -> Vec<LineDelta> {
    if base_ops == 0 || other_ops == 0 {
        return Vec::new();
    }
    let per_mop = |samples: u64, ops: u64| samples as f64 * 1e6 / ops as f64;
    let lines = |p: &Profile| {
        let mut m: BTreeMap<(String, String), u64> = BTreeMap::new();
        for f in &p.top {
            for l in f.lines.iter().filter(|l| l.instruction.is_none()) {
                *m.entry((f.function.clone(), l.place.clone())).or_default() += l.samples;
            }
        }
        m
    };
    let (b, o) = (lines(base), lines(other));
    let keys: BTreeSet<&(String, String)> = b.keys().chain(o.keys()).collect();
    let mut deltas: Vec<LineDelta> = keys
        .into_iter()
        .map(|k| {
            let base_per_mop = b.get(k).map(|&n| per_mop(n, base_ops));
            let other_per_mop = o.get(k).map(|&n| per_mop(n, other_ops));
            let change = match (base_per_mop, other_per_mop) {
                (Some(x), Some(y)) if x > 0.0 => Some(y / x - 1.0),
                _ => None,
            };
            LineDelta {
                function: k.0.clone(),
                place: k.1.clone(),
                base_per_mop,
                other_per_mop,
                change,
            }
        })
        .collect();
    let both = |d: &LineDelta| d.base_per_mop.is_some() && d.other_per_mop.is_some();
    let size = |d: &LineDelta| match (d.base_per_mop, d.other_per_mop) {
        (Some(x), Some(y)) => (y - x).abs(),
        (x, y) => x.or(y).unwrap_or(0.0),
    };
    // Stable: equal keys stay in (function, line) order.
    deltas.sort_by(|a, b| {
        both(b)
            .cmp(&both(a))
            .then_with(|| size(b).total_cmp(&size(a)))
    });
    deltas.truncate(limit);
    deltas
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotspots::FnShare;

    // Captured here from hot.c (a loop in `spin`), `gcc-12 -g -O1`, and from memcached
    // built with `-O2 -g`.
    const NM: &str = "0000000000003e10 d _DYNAMIC
0000000000002000 R _IO_stdin_used
0000000000004010 B __bss_start
00000000000010e0 t __do_global_dtors_aux
0000000000001168 T _fini
0000000000004000 W data_start
0000000000001155 T main
0000000000004018 B sink
0000000000001129 T spin
000000000001f090 t process_command_ascii.part.0
                 U memcpy@GLIBC_2.14
00000000000a1b20 T memmove@@GLIBC_2.2.5
";

    #[test]
    fn reads_code_symbols_from_nm() {
        let table = parse_nm(NM);
        assert_eq!(table.get("spin"), Some(&0x1129));
        assert_eq!(table.get("main"), Some(&0x1155));
        assert_eq!(table.get("process_command_ascii.part.0"), Some(&0x1f090));
        assert_eq!(table.get("memmove"), Some(&0xa1b20));
        // Data, read-only data and undefined symbols are not code (weak symbols, W,
        // may be either: kept).
        for name in ["sink", "_DYNAMIC", "_IO_stdin_used", "memcpy"] {
            assert!(!table.contains_key(name), "{name}");
        }
    }

    #[test]
    fn reads_the_build_id() {
        // readelf -n /usr/lib/x86_64-linux-gnu/libc.so.6, in part.
        let notes = "
Displaying notes found in: .note.gnu.build-id
  Owner                Data size \tDescription
  GNU                  0x00000014\tNT_GNU_BUILD_ID (unique build ID bitstring)
    Build ID: 93ac61ec5a8eb1396f9fbd350e3169a558528a40
";
        assert_eq!(
            build_id(notes).as_deref(),
            Some("93ac61ec5a8eb1396f9fbd350e3169a558528a40")
        );
        assert_eq!(build_id("no notes"), None);
        assert_eq!(build_id("    Build ID: zz"), None);
    }

    #[test]
    fn reads_addr2line_answers() {
        assert_eq!(
            parse_srcline("/tmp/hotdbg/hot.c:4 (discriminator 3)").as_deref(),
            Some("hot.c:4")
        );
        assert_eq!(
            parse_srcline("/tmp/hotdbg/hot.c:5").as_deref(),
            Some("hot.c:5")
        );
        assert_eq!(
            parse_srcline(
                "/x/bakeoff-cache/sources/debian/memcached/tree/assoc.c:87 (discriminator 1)"
            )
            .as_deref(),
            Some("assoc.c:87")
        );
        for none in ["??:0", "??:?", "", "hot.c", "hot.c:0"] {
            assert_eq!(parse_srcline(none), None, "{none}");
        }
    }

    #[test]
    fn reads_objdump_instructions() {
        let text = "
hot-nolines:     file format elf64-x86-64


Disassembly of section .text:

000000000000113a <spin+0x11>:
    113a:\tmov    %rax,%rdx
    113d:\timul   %rax,%rdx
    1141:\tadd    %rcx,%rdx
    1144:\tmov    %rdx,0x2ecd(%rip)        # 4018 <sink>
    114b:\tadd    $0x1,%rax
";
        let code = parse_objdump(text);
        assert_eq!(code.len(), 5);
        assert_eq!(code[&0x113d], "imul %rax,%rdx");
        assert_eq!(code[&0x1144], "mov %rdx,0x2ecd(%rip) # 4018 <sink>");
    }

    fn with_lines(lines: &[(&str, &str, u64, bool)]) -> Profile {
        let mut top: Vec<FnShare> = Vec::new();
        for &(function, place, samples, instruction) in lines {
            if top.last().is_none_or(|f| f.function != function) {
                top.push(FnShare {
                    function: function.into(),
                    ..FnShare::default()
                });
            }
            top.last_mut().unwrap().lines.push(HotLine {
                place: place.into(),
                instruction: instruction.then(|| "nop".to_string()),
                samples,
                pct: 0.0,
            });
        }
        Profile {
            top,
            ..Profile::default()
        }
    }

    #[test]
    fn diffs_lines_by_function_and_place_never_addresses() {
        // base: 1M ops; other: 2M ops.
        let base = with_lines(&[
            ("assoc_find", "assoc.c:79", 100, false),
            ("assoc_find", "assoc.c:87", 50, false),
            ("memmove", "0x1a2b0", 40, true),
        ]);
        let other = with_lines(&[
            ("assoc_find", "assoc.c:79", 100, false),
            ("assoc_find", "assoc.c:90", 30, false),
            ("memmove", "0x1a2b0", 400, true),
        ]);
        let d = diff_lines(&base, 1_000_000, &other, 2_000_000, 10);
        let places: Vec<&str> = d.iter().map(|d| d.place.as_str()).collect();
        // Both kept first (79: 100 -> 50 per Mop), then one side only, largest first.
        assert_eq!(places, ["assoc.c:79", "assoc.c:87", "assoc.c:90"]);
        assert_eq!(d[0].base_per_mop, Some(100.0));
        assert_eq!(d[0].other_per_mop, Some(50.0));
        assert_eq!(d[0].change, Some(-0.5));
        assert_eq!((d[1].other_per_mop, d[1].change), (None, None));
        assert_eq!((d[2].base_per_mop, d[2].other_per_mop), (None, Some(15.0)));
        assert!(diff_lines(&base, 0, &other, 1, 10).is_empty());
        assert_eq!(diff_lines(&base, 1, &other, 1, 1).len(), 1);
    }
}
