//! End-to-end LTO: memcached from Debian's source built plain, with gcc-12 full LTO and with
//! clang-16 thin LTO; every object of the LTO builds carries LTO code (the build log says
//! how many), the binaries differ from the plain build, and all of them serve. A thin LTO
//! with gcc is bad input before anything is built.

mod common;

use common::{Scratch, SHORT_KV};

fn experiment() -> String {
    common::memcached_source("lto-e2e", "\"-t\", \"1\"")
        + &common::build("plain", "gcc-12", "-O2", "")
        + &common::build("gcc-lto", "gcc-12", "-O2", "lto = \"full\"\n")
        + &common::build("clang-thin", "clang-16", "-O2", "lto = \"thin\"\n")
        + SHORT_KV
}

#[test]
fn lto_builds_carry_lto_code_and_serve() {
    let s = Scratch::new();
    let r = s.run_clean("lto.toml", &experiment(), "memcached");
    let variants = r["variants"].as_array().unwrap();
    let sha = |name: &str| {
        variants.iter().find(|v| v["name"] == name).unwrap()["build"]["binary_sha256"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for v in variants {
        assert_eq!(v["status"], "ok", "{v}");
    }
    assert_ne!(sha("plain"), sha("gcc-lto"));
    assert_ne!(sha("plain"), sha("clang-thin"));
    for name in ["gcc-lto", "clang-thin"] {
        let log = std::fs::read_to_string(s.out().join(format!("logs/build-{name}.log")))
            .expect("build log");
        let line = log
            .lines()
            .find(|l| l.starts_with("==> lto: "))
            .unwrap_or_else(|| panic!("{name}: no lto line in the build log"));
        let n: Vec<usize> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert!(n.len() == 2 && n[0] > 10 && n[0] == n[1], "{name}: {line}");
    }
    for c in r["cells"].as_array().unwrap() {
        assert!(c["median_ops_per_s"].as_f64().unwrap() > 100.0, "{c}");
    }

    // Thin LTO is clang's: one line at the key, exit 2, nothing built.
    let bad = s.write(
        "thin-gcc.toml",
        &experiment().replace("compiler = \"clang-16\"", "compiler = \"gcc-12\""),
    );
    let (code, err) = common::check(&bad);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("thin-gcc.toml:22:7") && err.contains("clang's"),
        "{err}"
    );
}
