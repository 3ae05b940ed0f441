//! The mariadb recipe against the real thing: MariaDB 10.11 from Debian's source
//! (`apt-get source mariadb`), built with gcc-12 `-O1`, then `mariadb-install-db`, a short
//! server start and a query from Debian's client (the build is server-only), as an
//! unprivileged user.
//!
//! Ignored by default: a clean build takes about 13 minutes on 2 cores. Run it with
//! `cargo test -p bakeoff-build --test mariadb -- --ignored`; it needs `cmake
//! libpcre2-dev libfmt-dev libncurses-dev libssl-dev zlib1g-dev` and mariadb-client
//! (scripts/setup.sh installs them). Builds go to the user's
//! cache (`Cache::default_root()`), so a re-run is a cache hit.

mod server;

use std::path::Path;
use std::time::{Duration, Instant};

use bakeoff_build::{build, fetch, BuildSpec, Cache, Recipe, SourceSpec};
use server::{run_bounded, text, RunAs, Scratch, Server};

#[test]
#[ignore = "builds MariaDB from source (about 13 minutes on 2 cores); run with --ignored"]
fn gcc12_builds_mariadb_that_installs_a_datadir_and_starts() {
    let cache = Cache::new(Cache::default_root());
    let source = SourceSpec::Debian {
        package: "mariadb".into(),
    };
    let tree = fetch(&source, &cache).unwrap_or_else(|e| panic!("fetching mariadb: {e}"));
    let spec = BuildSpec {
        variant: "gcc-12 -O1".into(),
        compiler: "gcc-12".into(),
        cflags: "-O1".into(),
        recipe: Recipe::Mariadb,
        ..BuildSpec::default()
    };
    let first = build(&tree, &spec, &cache).unwrap_or_else(|e| panic!("{e}\n{}", e.tail()));
    eprintln!(
        "mariadb: {} (build: {:.0} s, cached: {})",
        first.binary.display(),
        first.seconds,
        first.cached
    );
    assert!(first.binary.ends_with("build/install/bin/mariadbd"));
    let started = Instant::now();
    let second = build(&tree, &spec, &cache).unwrap();
    assert!(second.cached && started.elapsed() < Duration::from_secs(1));
    assert_eq!(second.binary_sha256, first.binary_sha256);
    let log = std::fs::read_to_string(&first.log).unwrap();
    assert!(
        log.contains("-DCMAKE_CXX_COMPILER=g++-12"),
        "C++ compiler matches"
    );

    let out = run_bounded(
        std::process::Command::new(&first.binary).arg("--version"),
        Duration::from_secs(10),
    );
    assert!(text(&out).contains("10.11."), "{}", text(&out));

    let install = first
        .install
        .as_deref()
        .expect("the mariadb recipe installs");
    install_db_and_start(install);
}

fn install_db_and_start(install: &Path) {
    let user = RunAs::pick();
    let scratch = Scratch::with_copy_of(install);
    let tree = &scratch.install;
    let (data, sock) = (scratch.path("data"), scratch.path("sock"));
    user.own(&data);
    user.own(&sock);
    let basedir = format!("--basedir={}", tree.display());
    let datadir = format!("--datadir={}", data.display());

    let out = run_bounded(
        user.command(&tree.join("scripts/mariadb-install-db"))
            .args(["--no-defaults", &basedir, &datadir])
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]),
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "mariadb-install-db failed:\n{}",
        text(&out)
    );

    let socket = sock.join("mariadb.sock");
    let mut server = Server::start(
        "mariadbd",
        user.command(&tree.join("bin/mariadbd"))
            .args(["--no-defaults", &basedir, &datadir])
            .arg(format!(
                "--plugin-dir={}",
                tree.join("lib/plugin").display()
            ))
            .arg(format!(
                "--lc-messages-dir={}",
                tree.join("share").display()
            ))
            .arg(format!("--socket={}", socket.display()))
            .arg("--skip-networking"),
        scratch.path("server.log"),
    );
    server.wait_for("ready for connections");

    let out = run_bounded(
        // The server-only build installs no client: Debian's speaks to it.
        user.command(Path::new("/usr/bin/mariadb"))
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args(["-uroot", "-N", "-B", "-e"])
            .arg("select version(), (select support from information_schema.engines where engine = 'InnoDB')"),
        Duration::from_secs(30),
    );
    let answer = text(&out);
    assert!(
        out.status.success(),
        "client failed:\n{answer}\n{}",
        server.log()
    );
    assert!(
        answer.starts_with("10.11.") && answer.trim_end().ends_with("DEFAULT"),
        "{answer}"
    );

    server.stop("-TERM");
    assert!(
        server.log().contains("Shutdown complete"),
        "{}",
        server.log()
    );
}
