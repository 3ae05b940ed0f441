//! End-to-end: why a variant is faster, on real memcached servers. The /proc sampler on
//! every run, perf counters (or the note that this machine cannot count them), one extra
//! profiled run per cell with a flamegraph and a diff, the instructions mode under
//! callgrind, and AddressSanitizer finding an overflow planted by a patch.

mod common;

use common::Scratch;
use std::path::Path;

fn experiment(variants: &str, plan: &str, measure: &str) -> String {
    common::memcached_source("probes", common::ARGS_64)
        + variants
        + "\n"
        + &common::kv(
            "mixed",
            "4",
            2000,
            "mix = { get = 80, set = 10, delete = 10 }\n",
        )
        + &format!("\n[plan]\n{plan}\n\n[measure]\n{measure}\n")
}

/// Debian's memcached twice: `one-thread` and `two-threads` (`-t 2`).
fn two_binaries() -> String {
    common::installed("one-thread", "")
        + &common::installed("two-threads", "args = [\"-t\", \"2\"]\n")
}

/// Whether perf is missing here, said on stderr: the test that needs it is skipped.
fn perf_missing() -> bool {
    let installed = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!("perf is not installed: skipped");
    }
    !installed
}

fn run_ok(s: &Scratch, file: &Path) -> String {
    common::assert_ok(&s.run_cmd(file).output().expect("run bakeoff"))
}

#[test]
fn sampler_counters_and_profiles_explain_each_cell() {
    if perf_missing() {
        return;
    }
    let s = Scratch::new();
    let f = s.write(
        "p.toml",
        &experiment(
            &two_binaries(),
            "repetitions = 2\nwarmup = \"200ms\"\nduration = \"1500ms\"",
            "interval = \"250ms\"\ncounters = true\nprofile = true",
        ),
    );
    run_ok(&s, &f);
    let r = s.results();
    for cell in r["cells"].as_array().expect("cells") {
        for run in cell["runs"].as_array().expect("runs") {
            let sys = &run["system"];
            let modes: f64 = [
                "cpu_user_pct",
                "cpu_system_pct",
                "cpu_idle_pct",
                "cpu_iowait_pct",
            ]
            .iter()
            .map(|k| sys[*k].as_f64().expect(k))
            .sum();
            assert!((50.0..=100.5).contains(&modes), "cpu modes {modes}: {sys}");
            assert!(
                sys["server_rss_kib_max"].as_u64().unwrap_or(0) > 1000,
                "{sys}"
            );
            assert!(
                sys["ctx_switches_per_op"].as_f64().unwrap_or(0.0) > 0.0,
                "{sys}"
            );
            assert!(
                sys["loopback_bytes_per_op"].as_f64().unwrap_or(0.0) > 20.0,
                "{sys}"
            );
            let series = sys["series"].as_str().expect("series path");
            let samples: serde_json::Value =
                serde_json::from_slice(&std::fs::read(s.out().join(series)).expect("series"))
                    .expect("series json");
            assert!(samples.as_array().map_or(0, |a| a.len()) >= 4, "{samples}");
            // Counters: a figure where the CPU counts, else named as unsupported, or
            // (perf unusable, or no hardware event at all) a note saying counters are off.
            let c = &run["counters"];
            if c.is_null() {
                assert!(
                    r["notes"].to_string().contains("CPU counters"),
                    "{}",
                    r["notes"]
                );
            } else {
                let unsupported = c["unsupported"].as_array().expect("unsupported list");
                let counted = c["instructions_per_op"].as_f64().is_some();
                let named = unsupported.iter().any(|u| u == "instructions");
                assert!(counted != named, "instructions counted or named: {c}");
            }
        }
        let p = &cell["profile"];
        assert!(p["samples"].as_u64().unwrap_or(0) > 50, "{p}");
        let svg = std::fs::read_to_string(s.out().join(p["flamegraph"].as_str().expect("svg")))
            .expect("flamegraph file");
        assert!(svg.contains("<svg") && svg.contains("</svg>"));
        let split = &p["split"];
        let total: f64 = ["server_pct", "kernel_pct", "libraries_pct", "other_pct"]
            .iter()
            .map(|k| split[*k].as_f64().unwrap_or(0.0))
            .sum();
        assert!((total - 100.0).abs() < 0.5, "{split}");
        assert!(split["server_pct"].as_f64().unwrap_or(0.0) > 1.0, "{split}");
        assert!(!p["top"].as_array().expect("top").is_empty());
        // The profiled run is extra: the statistics saw exactly the planned runs.
        assert_eq!(cell["runs"].as_array().map(|a| a.len()), Some(2));
    }
    let other = common::item(&r["cells"], "variant", "two-threads");
    assert!(
        !other["profile"]["diff"]
            .as_array()
            .expect("diff")
            .is_empty(),
        "{}",
        other["profile"]
    );
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    for heading in ["## System during", "## Hotspots"] {
        assert!(md.contains(heading), "report.md lacks {heading}");
    }
    // Counters: a table where something was counted, else the note saying why not.
    let counted = r["cells"][0]["runs"][0]["counters"]["instructions_per_op"].is_number();
    let counters_said = if counted {
        md.contains("## CPU counters")
    } else {
        md.contains("## Not measured on this machine") && md.contains("CPU counters")
    };
    assert!(counters_said, "report.md says nothing about CPU counters");
}

#[test]
fn instructions_mode_counts_the_same_work_the_same() {
    let s = Scratch::new();
    let variants = common::installed("debian", "");
    let f = s.write(
        "i.toml",
        &experiment(
            &variants,
            "repetitions = 2\nwarmup = \"300ms\"\nops = 3000\nmode = \"instructions\"",
            "",
        ),
    );
    run_ok(&s, &f);
    let r = s.results();
    let runs = r["cells"][0]["runs"].as_array().expect("runs").clone();
    let ipo: Vec<f64> = runs
        .iter()
        .map(|x| {
            assert_eq!(x["valid"], true, "{x}");
            x["instructions"]["instructions_per_op"]
                .as_f64()
                .expect("instructions_per_op")
        })
        .collect();
    assert!(ipo.iter().all(|&x| (1_000.0..1e7).contains(&x)), "{ipo:?}");
    let spread = (ipo[0] - ipo[1]).abs() / ipo[0];
    assert!(spread < 0.05, "instructions per op {ipo:?}");
    let top = runs[0]["instructions"]["top"].as_array().expect("top");
    assert!(!top.is_empty());
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    assert!(md.contains("## Instructions per operation"));
}

#[test]
fn address_sanitizer_finds_a_planted_overflow_and_fails_the_variant() {
    let s = Scratch::new();
    s.write("overflow.patch", common::OVERFLOW);
    let variants = common::build("asan", "gcc-12", "-O1", "sanitize = [\"address\"]\n")
        + &common::build(
            "asan-overflow",
            "gcc-12",
            "-O1",
            "sanitize = [\"address\"]\npatches = [\"overflow.patch\"]\n",
        );
    let f = s.write(
        "a.toml",
        &experiment(
            &variants,
            "repetitions = 1\nwarmup = \"200ms\"\nduration = \"800ms\"",
            "",
        ),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let r = s.results();
    let by = |n: &str| common::item(&r["variants"], "name", n).clone();
    let clean = by("asan");
    assert_eq!(clean["sanitize"][0], "address", "{clean}");
    assert!(clean.get("memory_errors").is_none(), "{clean}");
    let bad = by("asan-overflow");
    let errors = bad["memory_errors"].as_array().expect("memory_errors");
    assert_eq!(errors[0]["kind"], "heap-buffer-overflow", "{bad}");
    assert_eq!(errors[0]["tool"], "asan");
    let stack = errors[0]["stack"].to_string();
    assert!(stack.contains("process_delete_command"), "{stack}");
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("VERIFY FAILED: variant asan-overflow"),
        "{warnings}"
    );
    assert!(stdout.contains("VERIFY FAILED"), "{stdout}");
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    assert!(md.contains("## Memory errors (verification failed)"));
}

#[test]
fn instructions_mode_without_ops_is_refused_with_its_position() {
    let s = Scratch::new();
    let variants = common::installed("debian", "");
    let f = s.write(
        "bad.toml",
        &experiment(&variants, "mode = \"instructions\"\nduration = \"1s\"", ""),
    );
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml:") && err.contains("set [plan] ops"),
        "{err}"
    );
}

#[test]
fn hot_lines_name_memcached_source_lines() {
    if perf_missing() {
        return;
    }
    let s = Scratch::new();
    // The baseline has line info (-g); Debian's binary has none, so its hot spots are
    // instructions, which are never matched against the baseline's lines.
    let variants =
        common::build("debug", "gcc-12", "-O2 -g", "") + &common::installed("debian", "");
    let f = s.write(
        "l.toml",
        &experiment(
            &variants,
            "repetitions = 1\nwarmup = \"200ms\"\nduration = \"1500ms\"",
            "profile = true",
        ),
    );
    let started = std::time::Instant::now();
    run_ok(&s, &f);
    eprintln!("run with profiles: {:?}", started.elapsed());
    common::no_server_left("memcached", &s);
    let r = s.results();
    let cell = |v: &str| common::item(&r["cells"], "variant", v)["profile"].clone();
    let debug = cell("debug");
    eprintln!("lines resolved in {} ms", debug["lines_ms"]);
    let top = debug["top"].as_array().expect("top");
    // A function of memcached's own with lines in one of memcached's source files: the
    // record keeps every function whose lines were resolved, whatever its rank, so this
    // holds on a loaded machine whose kernel and other programs take the top places.
    let with_lines = top
        .iter()
        .find(|f| f["dso"] == "memcached" && f["lines"].as_array().is_some_and(|l| !l.is_empty()))
        .unwrap_or_else(|| panic!("no memcached function with lines: {debug}"));
    let line = &with_lines["lines"][0];
    let place = line["place"].as_str().expect("place");
    let (file, number) = place.rsplit_once(':').expect("file:line");
    assert!(
        file.ends_with(".c") || file.ends_with(".h"),
        "{place} is not a source line"
    );
    assert!(number.parse::<u64>().expect("line number") > 0);
    assert!(line["instruction"].is_null(), "{line}");
    let shares: f64 = with_lines["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["pct"].as_f64().unwrap())
        .sum();
    assert!(shares > 0.0 && shares <= 100.01, "{with_lines}");
    // Debian's stripped binary: its own functions' hot spots are instructions.
    let debian = cell("debian");
    let by_address = debian["top"].as_array().expect("top").iter().any(|f| {
        f["lines"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l["instruction"].is_string()))
    });
    let md = std::fs::read_to_string(s.out().join("report.md")).expect("report.md");
    assert!(md.contains("Hottest lines of the top functions"), "{md}");
    assert!(md.contains(place), "report.md lacks {place}");
    if by_address {
        assert!(md.contains("no honest match across builds"), "{md}");
    }
    // Only lines are ever matched with the baseline's.
    for d in debian["line_diff"].as_array().into_iter().flatten() {
        assert!(!d["place"].as_str().unwrap().starts_with("0x"), "{d}");
    }
    let html = std::fs::read_to_string(s.out().join("report.html")).expect("report.html");
    assert!(html.contains(place), "report.html lacks {place}");
}
