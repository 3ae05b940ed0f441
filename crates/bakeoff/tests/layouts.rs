//! End-to-end code layouts: memcached from Debian's source with `[plan] layouts = 3` is
//! built three times with its functions shuffled (three different binaries, each named
//! in results.json with its seed), rounds rotate through them, every layout serves and
//! verifies, each start's environment is padded, and the statistics say how the runs
//! spread within and between layouts. An installed binary beside it keeps its one
//! layout, said once. Layouts on a target that installs a tree, or a count of 0, are bad
//! input.

mod common;

use common::{assert_ok, item, no_server_left, Scratch, SHORT_KV};

fn experiment() -> String {
    common::memcached_source("layouts-e2e", "\"-t\", \"1\"")
        + &common::build("gcc-O2", "gcc-12", "-O2", "")
        + &common::installed("installed", "")
        + &SHORT_KV
            .replace("repetitions = 1\n", "repetitions = 6\nlayouts = 3\n")
            .replace("500ms", "300ms")
}

#[test]
fn three_layouts_three_binaries_all_serving() {
    let s = Scratch::new();
    let f = s.write("layouts.toml", &experiment());
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left("memcached", &s);
    assert_ok(&out);
    let r = s.results();
    assert_eq!(r["plan"]["layouts"], 3);
    let built = item(&r["variants"], "name", "gcc-O2");
    assert_eq!(built["status"], "ok", "{built}");
    let layouts = built["layouts"]
        .as_array()
        .expect("layouts per build variant");
    assert_eq!(layouts.len(), 3, "{built}");
    let mut hashes = std::collections::BTreeSet::new();
    let mut seeds = std::collections::BTreeSet::new();
    for l in layouts {
        let path = std::path::Path::new(l["path"].as_str().unwrap());
        let bytes = std::fs::read(path).expect("the layout's binary exists");
        let sha = l["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64);
        assert!(!bytes.is_empty());
        hashes.insert(sha.to_string());
        seeds.insert(l["seed"].as_u64().unwrap());
    }
    assert_eq!(hashes.len(), 3, "three different binaries: {layouts:?}");
    assert_eq!(seeds.len(), 3);
    assert!(built["build"]["ldflags"]
        .as_str()
        .unwrap()
        .contains("--shuffle-sections="));
    assert!(s.out().join("logs/build-gcc-O2-layout-3.log").exists());

    let installed = item(&r["variants"], "name", "installed");
    assert!(installed.get("layouts").is_none(), "{installed}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("installed: an installed binary has one code layout")
            .count(),
        1,
        "said once: {stderr}"
    );

    let mut pads = std::collections::BTreeSet::new();
    for c in r["cells"].as_array().unwrap() {
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 6, "{c}");
        let mut seen = std::collections::BTreeSet::new();
        for run in runs {
            assert_eq!(run["valid"], true, "{run}");
            assert_eq!(run["verify_failures"], 0, "{run}");
            let round = run["round"].as_u64().unwrap();
            let layout = run["layout"].as_u64().unwrap();
            let pad = run["env_pad"].as_u64().unwrap();
            assert!(pad < 4096);
            pads.insert(pad);
            if c["variant"] == "gcc-O2" {
                assert_eq!(layout, round % 3, "{run}");
            } else {
                assert_eq!(layout, 0);
            }
            seen.insert(layout);
        }
        if c["variant"] == "gcc-O2" {
            assert_eq!(seen.len(), 3, "every layout ran and verified");
            let spread = &c["layouts"];
            assert_eq!(spread["layouts"], 3, "{c}");
            assert_eq!(spread["medians"].as_array().unwrap().len(), 3);
            assert!(spread["between_runs"].as_f64().unwrap() >= 0.0);
        }
    }
    assert!(pads.len() > 6, "environment sizes vary per start: {pads:?}");
    let k = &r["comparisons"][0];
    assert_eq!(k["layouts"], 3, "{k}");
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("## Code layouts"), "{md}");
    assert!(md.contains("over 3 layouts"), "{md}");
}

#[test]
fn layouts_bad_input_is_one_line() {
    let s = Scratch::new();
    let check = |name: &str, text: &str| common::check(&s.write(name, text));
    let (code, err) = check(
        "zero.toml",
        &experiment().replace("layouts = 3", "layouts = 0"),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("zero.toml:") && err.contains("layouts"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let pg = "name = \"pg\"\n[target]\nkind = \"postgres\"\nsource = { debian = \"postgresql-15\" }\n[[variant]]\nname = \"a\"\n[[workload]]\nkind = \"oltp\"\n[plan]\nlayouts = 2\n";
    let (code, err) = check("pg.toml", pg);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("pg.toml:10:") && err.contains("memcached and redis"),
        "{err}"
    );
}
