//! findings: real sanitizer and memcheck output, captured on this machine from tiny C
//! programs (written and compiled in a temp dir), parsed into findings.
//!
//! - asan.txt: `gcc-12 -g -fsanitize=address`, reads one int past a malloc'd array in
//!   `overflow_heap`.
//! - asan_leak.txt: same compiler, `leak_block` drops its only pointer to 64 bytes.
//! - asan_segv.txt: same compiler, `deref_null` reads through a null pointer.
//! - ubsan.txt: `clang-16 -g -fsanitize=undefined`, `add_signed(INT_MAX, 1)`, run with
//!   `UBSAN_OPTIONS=print_stacktrace=1` (and llvm-symbolizer); ubsan_nostack.txt
//!   without a stack, as UBSan prints by default.
//! - memcheck.txt: `gcc -g`, `valgrind --error-exitcode=0 --leak-check=full`,
//!   `read_after_free` reads a freed block.
//! - memcheck_many.txt: same, an invalid write, a branch on uninitialised memory, a
//!   double free and a lost block.
//! - memcheck_segv.txt: same, the null read of asan_segv.txt, which kills the process.
//! - tsan_gcc.txt: race.c.txt (two threads bump a global without a lock, then two take
//!   two mutexes in opposite orders) built with `gcc-12 -g -O1 -fsanitize=thread`;
//!   tsan_clang.txt the same with `clang-16`.
//! - helgrind.txt: race.c.txt built with `gcc-12 -g -O1`, `valgrind --tool=helgrind`.

use bakeoff_probe::findings::{self, Finding};
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/findings")
        .join(name);
    std::fs::read_to_string(path).expect("fixture readable")
}

fn one(name: &str) -> Finding {
    let found = findings::parse(&fixture(name));
    assert_eq!(found.len(), 1, "{name}: {found:#?}");
    found.into_iter().next().expect("one finding")
}

/// The one finding in fixture `name`, which must be `tool`'s, of `kind`.
fn one_of(name: &str, tool: &str, kind: &str) -> Finding {
    let f = one(name);
    assert_eq!((f.tool.as_str(), f.kind.as_str()), (tool, kind), "{name}");
    f
}

fn first_frame(f: &Finding) -> &str {
    f.stack.first().map(String::as_str).unwrap_or("")
}

#[test]
fn asan_heap_buffer_overflow() {
    let f = one("asan.txt");
    assert_eq!(f.tool, "asan");
    assert_eq!(f.kind, "heap-buffer-overflow");
    assert!(f
        .message
        .starts_with("ERROR: AddressSanitizer: heap-buffer-overflow on address 0x"));
    assert!(
        first_frame(&f).starts_with("overflow_heap "),
        "{:?}",
        f.stack
    );
    assert!(first_frame(&f).ends_with("heap.c:6"));
    // The access's stack only, not the allocation's.
    assert_eq!(f.stack.len(), 5, "{:?}", f.stack);
    assert!(f.stack[1].starts_with("main "));
    assert!(f.stack.iter().all(|s| !s.contains("0x5561")));
}

#[test]
fn asan_segv() {
    let f = one_of("asan_segv.txt", "asan", "SEGV");
    assert!(first_frame(&f).starts_with("deref_null "), "{:?}", f.stack);
    assert_eq!(
        f.stack.last().map(String::as_str),
        Some("_start (/tmp/fnd/segv+0x10d0)")
    );
}

#[test]
fn leak_sanitizer() {
    let f = one_of("asan_leak.txt", "asan", "leak");
    assert_eq!(
        f.message,
        "Direct leak of 64 byte(s) in 1 object(s) allocated from:"
    );
    assert!(first_frame(&f).starts_with("__interceptor_malloc "));
    assert!(f.stack[1].starts_with("leak_block "), "{:?}", f.stack);
}

#[test]
fn ubsan_signed_overflow() {
    let f = one_of("ubsan.txt", "ubsan", "undefined-behavior");
    assert_eq!(
        f.message,
        "signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'"
    );
    assert_eq!(first_frame(&f), "add_signed /tmp/fnd/ub.c:3:48");
    assert_eq!(f.stack.len(), 5);

    let f = one("ubsan_nostack.txt");
    assert_eq!(f.kind, "undefined-behavior");
    assert_eq!(f.stack, ["ub.c:3:48"]);
}

#[test]
fn memcheck_invalid_read_after_free() {
    let f = one_of("memcheck.txt", "memcheck", "invalid-read");
    assert_eq!(f.message, "Invalid read of size 4");
    // The read's stack, not the free's nor the allocation's.
    assert_eq!(f.stack, ["read_after_free (uaf.c:7)", "main (uaf.c:9)"]);
}

#[test]
fn memcheck_many_kinds() {
    let found = findings::parse(&fixture("memcheck_many.txt"));
    let kinds: Vec<&str> = found.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "invalid-write",
            "uninitialised-value",
            "invalid-free",
            "leak"
        ]
    );
    assert!(found.iter().all(|f| f.tool == "memcheck"));
    assert_eq!(first_frame(&found[0]), "write_past_end (many.c:3)");
    assert_eq!(first_frame(&found[1]), "branch_on_uninit (many.c:4)");
    assert!(first_frame(&found[2]).starts_with("free (in "));
    assert_eq!(found[2].stack[1], "free_twice (many.c:5)");
    assert_eq!(
        found[3].message,
        "100 bytes in 1 blocks are definitely lost in loss record 1 of 1"
    );
    assert_eq!(found[3].stack[1], "lose_block (many.c:6)");
}

#[test]
fn memcheck_fatal_signal() {
    let found = findings::parse(&fixture("memcheck_segv.txt"));
    let kinds: Vec<&str> = found.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["invalid-read", "fatal-signal"]);
    assert_eq!(
        found[1].message,
        "Process terminating with default action of signal 11 (SIGSEGV)"
    );
    assert_eq!(found[1].stack, ["deref_null (segv.c:2)", "main (segv.c:3)"]);
}

#[test]
fn reports_in_a_server_log_among_other_lines() {
    let log = format!(
        "2024-05-01 10:00:00 server starting\nlistening on 127.0.0.1:11211\n{}accepted connection\n{}{}",
        fixture("ubsan_nostack.txt"),
        fixture("asan.txt"),
        fixture("memcheck.txt")
    );
    let kinds: Vec<String> = findings::parse(&log).into_iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        ["undefined-behavior", "heap-buffer-overflow", "invalid-read"]
    );
}

#[test]
fn a_clean_server_log_has_no_findings() {
    let log = "\
2024-05-01 10:00:00.123 UTC [4242] LOG:  database system is ready to accept connections
<30 new auto-negotiating client connection
slab class   1: chunk size        96 perslab   10922
==1234== Memcheck, a memory error detector
==1234== Command: /usr/bin/memcached -p 11211
==1234== 
==1234== HEAP SUMMARY:
==1234==     in use at exit: 0 bytes in 0 blocks
==1234==    definitely lost: 0 bytes in 0 blocks
==1234== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)
runtime error counter: 0
#0 is not a frame here
";
    assert!(findings::parse(log).is_empty());
    assert!(findings::parse("").is_empty());
}

/// Every prefix of the fixtures, and scrambled bytes: no panic.
#[test]
fn no_panic_on_cut_or_scrambled_text() {
    let mut all = String::new();
    for name in [
        "asan.txt",
        "asan_leak.txt",
        "asan_segv.txt",
        "ubsan.txt",
        "memcheck.txt",
        "memcheck_many.txt",
        "memcheck_segv.txt",
    ] {
        all.push_str(&fixture(name));
    }
    for (at, _) in all.char_indices() {
        let _ = findings::parse(&all[..at]);
    }
    let bytes = all.as_bytes();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..200 {
        let mut scrambled = bytes.to_vec();
        for _ in 0..50 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let i = (state >> 33) as usize % scrambled.len();
            scrambled[i] = (state >> 17) as u8;
        }
        let _ = findings::parse(&String::from_utf8_lossy(&scrambled));
    }
}

#[test]
fn thread_sanitizer_races_and_lock_order_gcc_and_clang() {
    for (name, line) in [
        ("tsan_gcc.txt", "race.c:6"),
        ("tsan_clang.txt", "race.c:6:43"),
    ] {
        let found = findings::parse(&fixture(name));
        assert_eq!(found.len(), 2, "{name}: {found:#?}");
        assert!(found.iter().all(|f| f.tool == "tsan"), "{found:#?}");
        let race = &found[0];
        assert_eq!(race.kind, "data-race");
        // The SUMMARY line: kind, file:line, function.
        assert_eq!(
            race.message,
            format!("ThreadSanitizer: data race /tmp/tsan/{line} in bump")
        );
        assert_eq!(first_frame(race), format!("bump /tmp/tsan/{line}"));
        assert_eq!(race.stack.len(), 1, "only the access's stack: {race:#?}");
        let order = &found[1];
        assert_eq!(order.kind, "lock-order-inversion");
        assert!(
            order
                .message
                .starts_with("ThreadSanitizer: lock-order-inversion"),
            "{order:#?}"
        );
        assert!(
            order.stack.iter().any(|f| f.starts_with("ab ")),
            "{order:#?}"
        );
    }
}

#[test]
fn thread_sanitizer_frames_and_fatal_start() {
    let log = "FATAL: ThreadSanitizer: unexpected memory mapping 0x5f0000000000-0x5f0000001000\n";
    let found = findings::parse(log);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].tool.as_str(), found[0].kind.as_str()),
        ("tsan", "fatal")
    );
    // A report cut short keeps its header and what stack it had.
    let cut = "WARNING: ThreadSanitizer: thread leak (pid=7)\n  Thread T1 (tid=8, finished) created by main thread at:\n    #0 pthread_create x.c:1 (libtsan.so.2+0x5e686)\n";
    let found = findings::parse(cut);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, "thread-leak");
    assert_eq!(
        found[0].message,
        "WARNING: ThreadSanitizer: thread leak (pid=7)"
    );
    assert_eq!(first_frame(&found[0]), "pthread_create x.c:1");
}

#[test]
fn helgrind_races_and_lock_order() {
    let found = findings::parse(&fixture("helgrind.txt"));
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found.iter().all(|f| f.tool == "helgrind"), "{found:#?}");
    let kinds: Vec<&str> = found.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["data-race", "data-race", "lock-order-inversion"]);
    assert!(found[0]
        .message
        .starts_with("Possible data race during read of size 4"));
    // The racing access's stack only, not the conflicting one's.
    assert_eq!(first_frame(&found[0]), "bump (race.c:6)");
    assert_eq!(found[0].stack.len(), 4, "{:#?}", found[0]);
    // The observed (wrong) order's stack.
    assert!(found[2].message.contains("lock order"), "{:#?}", found[2]);
    assert_eq!(
        found[2].stack.get(1).map(String::as_str),
        Some("ba (race.c:10)")
    );
    assert_eq!(found[2].stack.len(), 5, "{:#?}", found[2]);
}

#[test]
fn helgrind_error_summary_without_reports_is_a_finding() {
    let log = "==9== Helgrind, a thread error detector\n==9== \n==9== ERROR SUMMARY: 2 errors from 1 contexts (suppressed: 0 from 0)\n";
    let found = findings::parse(log);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].tool.as_str(), found[0].kind.as_str()),
        ("helgrind", "errors")
    );
    let clean = "==9== Helgrind, a thread error detector\n==9== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)\n";
    assert!(findings::parse(clean).is_empty());
    // Memcheck's summary adds nothing: its reports are read one by one.
    let memcheck = "==9== Memcheck, a memory error detector\n==9== ERROR SUMMARY: 2 errors from 1 contexts (suppressed: 0 from 0)\n";
    assert!(findings::parse(memcheck).is_empty());
}
