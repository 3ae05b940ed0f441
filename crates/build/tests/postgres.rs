//! Integration tests for the postgres recipe against the real thing: PostgreSQL 15 from
//! Debian's source (`apt-get source postgresql-15`), built with gcc-12 and clang-16, then
//! `postgres --version`, `initdb` and a short server start from the built tree, as an
//! unprivileged user (`bakeoff` if it exists, else `nobody`) because postgres refuses root.
//!
//! Builds go to the user's build cache (`Cache::default_root()`, i.e. `$BAKEOFF_CACHE` or
//! `~/.cache/bakeoff`), the one bakeoff itself uses, so a re-run is a cache hit; `-O0` keeps a
//! clean-cache run short (about three minutes for both compilers on 2 cores, see the README).

mod server;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use server::{run_bounded, text, RunAs, Scratch, Server};

use bakeoff_build::{build, fetch, BuildError, BuildSpec, Cache, Recipe, SourceSpec, SourceTree};

fn cache() -> Cache {
    Cache::new(Cache::default_root())
}

fn postgres_source() -> &'static SourceTree {
    static TREE: OnceLock<SourceTree> = OnceLock::new();
    TREE.get_or_init(|| {
        let spec = SourceSpec::Debian {
            package: "postgresql-15".into(),
        };
        fetch(&spec, &cache()).unwrap_or_else(|e| panic!("fetching postgresql-15: {e}"))
    })
}

fn spec(compiler: &str, cflags: &str) -> BuildSpec {
    BuildSpec {
        variant: format!("{compiler} {cflags}"),
        compiler: compiler.into(),
        cflags: cflags.into(),
        recipe: Recipe::Postgres,
        ..BuildSpec::default()
    }
}

/// initdb into a private copy of the installed tree, start the server on a private socket,
/// check it answers, stop it.
fn initdb_and_start(install: &Path) {
    let user = RunAs::pick();
    let scratch = Scratch::with_copy_of(install);
    let tree = &scratch.install;
    let (data, sock) = (scratch.path("data"), scratch.path("sock"));
    user.own(&data);
    user.own(&sock);

    let out = run_bounded(
        user.command(&tree.join("bin/initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"])
            .arg("--no-sync"),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "initdb failed:\n{}", text(&out));

    let mut server = Server::start(
        "postgres",
        user.command(&tree.join("bin/postgres"))
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&sock)
            .args(["-c", "listen_addresses=", "-p", "5432"]),
        scratch.path("server.log"),
    );
    server.wait_for("database system is ready to accept connections");

    // Ask the server something, with the distribution's psql when it is installed.
    let psql = Path::new("/usr/lib/postgresql/15/bin/psql");
    if psql.is_file() {
        let out = run_bounded(
            user.command(psql)
                .arg("-h")
                .arg(&sock)
                .args(["-p", "5432", "-U", "postgres", "-d", "postgres", "-Atc"])
                .arg("select version(), (select count(*) from pg_language where lanname = 'plpgsql')"),
            Duration::from_secs(30),
        );
        let answer = text(&out);
        assert!(
            out.status.success(),
            "psql failed:\n{answer}\n{}",
            server.log()
        );
        assert!(
            answer.starts_with("PostgreSQL 15.") && answer.trim_end().ends_with("|1"),
            "{answer}"
        );
    }

    server.stop("-INT");
    assert!(
        server.log().contains("database system is shut down"),
        "{}",
        server.log()
    );
}

fn builds_runs_and_caches(compiler: &str, version_text: &str) {
    let cache = cache();
    let tree = postgres_source();
    let s = spec(compiler, "-O0");
    let started = Instant::now();
    let first = build(tree, &s, &cache).unwrap_or_else(|e| panic!("{e}\n{}", e.tail()));
    eprintln!(
        "{compiler}: {} in {:.0} s (build itself: {:.0} s, cached: {})",
        first.binary.display(),
        started.elapsed().as_secs_f64(),
        first.seconds,
        first.cached
    );
    assert!(first.binary.ends_with("build/install/bin/postgres"));
    let install = first.install.clone().expect("the postgres recipe installs");
    assert_eq!(
        Some(install.as_path()),
        first.binary.parent().and_then(Path::parent)
    );
    assert!(install.join("bin/initdb").is_file());
    assert!(
        first.compiler_version.contains(version_text),
        "{}",
        first.compiler_version
    );
    let log = std::fs::read_to_string(&first.log).unwrap();
    assert!(log.contains("==> configure") && log.contains("==> make -C src/backend install"));
    assert!(
        log.contains(&format!("CC=\"{compiler}\"")),
        "CC is the variant's compiler"
    );
    assert!(log.contains("CFLAGS=\"-O0\""));

    let started = Instant::now();
    let second = build(tree, &s, &cache).unwrap();
    // A cached build re-hashes the install tree (well under a second on a quiet machine;
    // over one under a load of 15); the build itself took 90 s or more.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a cached build is instant"
    );
    assert!(second.cached, "the second build is a cache hit");
    assert_eq!(
        (
            &second.binary,
            &second.binary_sha256,
            &second.key,
            &second.install
        ),
        (
            &first.binary,
            &first.binary_sha256,
            &first.key,
            &first.install
        )
    );

    let out = run_bounded(
        Command::new(&first.binary).arg("--version"),
        Duration::from_secs(10),
    );
    assert!(
        text(&out).starts_with("postgres (PostgreSQL) 15."),
        "{}",
        text(&out)
    );
    initdb_and_start(&install);
}

#[test]
fn gcc12_builds_postgres_that_initdbs_and_starts() {
    builds_runs_and_caches("gcc-12", "12.");
}

#[test]
fn clang16_builds_postgres_that_initdbs_and_starts() {
    builds_runs_and_caches("clang-16", "clang version 16");
}

#[test]
fn failing_postgres_configure_carries_the_log_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let s = spec("gcc-12", "-O0 -include /nonexistent/bakeoff-force-error.h");
    let err = build(postgres_source(), &s, &Cache::new(tmp.path())).unwrap_err();
    let BuildError::BuildFailed { step, log, .. } = &err else {
        panic!("expected BuildFailed, got {err}");
    };
    assert_eq!(step.split(' ').next(), Some("configure"), "{step}");
    assert!(log.is_file());
    assert!(
        err.tail().contains("C compiler cannot create executables"),
        "{}",
        err.tail()
    );
    assert!(!err.to_string().contains('\n'));
}
