//! Integration tests against the real thing: memcached's Debian source, gcc-12 and clang-16.
//!
//! The source is fetched (`apt-get source memcached`) once into a shared cache that survives
//! test runs: `$BAKEOFF_TEST_CACHE`, else `<target>/tmp/bakeoff-test-cache`. Builds go to a
//! fresh temporary cache per test, so every run really builds.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bakeoff_build::{
    build, check_compiler, fetch, BuildError, BuildSpec, Cache, Recipe, SourceSpec, SourceTree,
};

fn shared_cache() -> Cache {
    let root = std::env::var_os("BAKEOFF_TEST_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("bakeoff-test-cache"));
    Cache::new(root)
}

fn memcached_source() -> &'static SourceTree {
    static TREE: OnceLock<SourceTree> = OnceLock::new();
    TREE.get_or_init(|| {
        let spec = SourceSpec::Debian {
            package: "memcached".into(),
        };
        fetch(&spec, &shared_cache()).unwrap_or_else(|e| panic!("fetching memcached: {e}"))
    })
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn spec(variant: &str, compiler: &str, cflags: &str) -> BuildSpec {
    BuildSpec {
        variant: variant.into(),
        compiler: compiler.into(),
        cflags: cflags.into(),
        recipe: Recipe::autotools("memcached"),
        ..BuildSpec::default()
    }
}

/// Kills the child on drop, so a hung binary cannot outlive a failed test.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `binary -V`, bounded to 10 s.
fn version_output(binary: &Path) -> String {
    let child = Command::new(binary)
        .arg("-V")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the built memcached");
    let mut guard = KillOnDrop(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while guard.0.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "memcached -V did not exit within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(guard.0.stdout.as_mut().expect("stdout"), &mut out)
        .expect("read");
    out
}

#[test]
fn debian_source_is_fetched_once_then_cached() {
    let tree = memcached_source();
    assert!(
        tree.dir.join("configure").is_file(),
        "{}",
        tree.dir.display()
    );
    assert!(
        tree.description.starts_with("debian memcached 1.6.18"),
        "{}",
        tree.description
    );
    let started = Instant::now();
    let again = fetch(
        &SourceSpec::Debian {
            package: "memcached".into(),
        },
        &shared_cache(),
    )
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "second fetch must be instant"
    );
    assert_eq!(&again, tree);
}

#[test]
fn gcc_build_runs_once_under_concurrency_then_is_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path());
    let tree = memcached_source();
    let s = spec("gcc-O2", "gcc-12", "-O2");
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| build(tree, &s, &cache)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    let built: Vec<_> = results.iter().filter(|i| !i.cached).collect();
    assert_eq!(
        built.len(),
        1,
        "exactly one of two concurrent builds runs: {results:?}"
    );
    let first = built[0];
    assert!(results
        .iter()
        .all(|i| i.binary_sha256 == first.binary_sha256 && i.key == first.key));
    assert!(version_output(&first.binary).starts_with("memcached 1.6.18"));
    assert!(
        first.compiler_version.contains("12."),
        "{}",
        first.compiler_version
    );
    let log = std::fs::read_to_string(&first.log).unwrap();
    assert!(
        log.contains("==> configure") && log.contains("==> make"),
        "{log}"
    );

    let started = Instant::now();
    let cached = build(tree, &s, &cache).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "a cached build is instant"
    );
    assert!(cached.cached);
    assert_eq!(
        cached.seconds, first.seconds,
        "seconds of the original build"
    );
    assert_eq!(
        (cached.binary_sha256.as_str(), cached.binary_bytes),
        (first.binary_sha256.as_str(), first.binary_bytes)
    );
    let (bytes, sha) = bakeoff_build::describe_binary(&cached.binary).unwrap();
    assert_eq!(
        (bytes, sha),
        (first.binary_bytes, first.binary_sha256.clone())
    );
}

#[test]
fn patch_applies_and_changes_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path());
    let tree = memcached_source();
    let plain = build(tree, &spec("plain", "gcc-12", "-O2"), &cache).unwrap();
    let mut patched_spec = spec("patched", "gcc-12", "-O2");
    patched_spec.patches = vec![fixture("memcached-version-tag.patch")];
    let patched = build(tree, &patched_spec, &cache).unwrap();
    assert_ne!(patched.key, plain.key);
    assert_ne!(patched.binary_sha256, plain.binary_sha256);
    assert!(version_output(&patched.binary).contains("(bakeoff-patched)"));
    assert!(!version_output(&plain.binary).contains("(bakeoff-patched)"));
    let original = std::fs::read_to_string(tree.dir.join("memcached.c")).unwrap();
    assert!(
        !original.contains("bakeoff-patched"),
        "the fetched tree is never modified"
    );
}

#[test]
fn patch_that_does_not_apply_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec("bad-patch", "gcc-12", "-O2");
    s.patches = vec![fixture("does-not-apply.patch")];
    let err = build(memcached_source(), &s, &Cache::new(tmp.path())).unwrap_err();
    assert!(matches!(err, BuildError::PatchFailed { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("does-not-apply.patch") && msg.contains("FAILED"),
        "{msg}"
    );
    assert!(
        err.tail().contains("patching file memcached.c"),
        "{}",
        err.tail()
    );
}

#[test]
fn failing_build_carries_log_path_and_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let s = spec(
        "broken",
        "gcc-12",
        "-O2 -include /nonexistent/bakeoff-force-error.h",
    );
    let err = build(memcached_source(), &s, &Cache::new(tmp.path())).unwrap_err();
    let BuildError::BuildFailed { log, step, .. } = &err else {
        panic!("expected BuildFailed, got {err}");
    };
    assert!(step.starts_with("configure"), "{step}");
    assert!(log.is_file(), "log kept at {}", log.display());
    assert!(
        err.tail().contains("C compiler cannot create executables"),
        "{}",
        err.tail()
    );
    assert!(err.tail().lines().count() <= 20);
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn missing_compiler_names_the_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let err = build(
        memcached_source(),
        &spec("x", "gcc-99", "-O2"),
        &Cache::new(tmp.path()),
    )
    .unwrap_err();
    assert!(matches!(err, BuildError::CompilerNotFound { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "compiler `gcc-99` not found on PATH: install it (e.g. apt-get install gcc-99) or fix variant `x`'s compiler"
    );
    assert!(check_compiler("gcc-99").is_err());
}

#[test]
fn clang16_o3_native_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let info = build(
        memcached_source(),
        &spec("clang-O3", "clang-16", "-O3 -march=native"),
        &Cache::new(tmp.path()),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", e.tail()));
    assert!(
        info.compiler_version.contains("clang version 16"),
        "{}",
        info.compiler_version
    );
    assert!(version_output(&info.binary).starts_with("memcached 1.6.18"));
    let log = std::fs::read_to_string(&info.log).unwrap();
    assert!(
        log.contains("CXX=\"clang++-16\""),
        "the matching C++ compiler is set"
    );
}
