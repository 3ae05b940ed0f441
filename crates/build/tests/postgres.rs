//! Integration tests for the postgres recipe against the real thing: PostgreSQL 15 from
//! Debian's source (`apt-get source postgresql-15`), built with gcc-12 and clang-16, then
//! `postgres --version`, `initdb` and a short server start from the built tree, as an
//! unprivileged user (`bakeoff` if it exists, else `nobody`) because postgres refuses root.
//!
//! Builds go to the user's build cache (`Cache::default_root()`, i.e. `$BAKEOFF_CACHE` or
//! `~/.cache/bakeoff`), the one bakeoff itself uses, so a re-run is a cache hit; `-O0` keeps a
//! clean-cache run short (about 4 minutes for both compilers on 2 cores, see the README).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bakeoff_build::{
    build, fetch, recipe_for, BuildError, BuildSpec, Cache, SourceSpec, SourceTree,
};

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
        recipe: recipe_for("postgres"),
        ..BuildSpec::default()
    }
}

/// Kills the child on drop, so a hung server cannot outlive a failed test.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Run to completion within `limit`, output captured; killed and failed when it takes longer.
fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let pid = child.id().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for child"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Who runs the server: the current user, or when that is root, `bakeoff` if it exists,
/// else `nobody`.
#[derive(Clone, Copy)]
struct RunAs {
    ids: Option<(u32, u32)>,
}

impl RunAs {
    fn pick() -> Self {
        let id = |args: &[&str]| -> Option<u32> {
            let out = Command::new("id").args(args).output().ok()?;
            out.status.success().then_some(())?;
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        };
        if id(&["-u"]) != Some(0) {
            return RunAs { ids: None };
        }
        let user = if id(&["-u", "bakeoff"]).is_some() {
            "bakeoff"
        } else {
            "nobody"
        };
        let uid = id(&["-u", user]).expect("uid");
        let gid = id(&["-g", user]).expect("gid");
        RunAs {
            ids: Some((uid, gid)),
        }
    }

    fn command(self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("LC_ALL", "C");
        if let Some((uid, gid)) = self.ids {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    /// A directory the server user owns.
    fn own(self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        if let Some((uid, gid)) = self.ids {
            std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
        }
    }
}

/// Copy the installed tree somewhere the server user can reach (the build cache under a
/// root-only home is not), initdb, start the server on a private socket, check it answers,
/// stop it.
fn initdb_and_start(install: &Path) {
    let user = RunAs::pick();
    let tmp = tempfile::Builder::new()
        .prefix("bakeoff-pg-")
        .tempdir()
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let tree = tmp.path().join("install");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(install)
        .arg(&tree)
        .status()
        .unwrap();
    assert!(cp.success(), "cp -a of the installed tree");
    let (data, sock) = (tmp.path().join("data"), tmp.path().join("sock"));
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

    let log_path = tmp.path().join("server.log");
    let log = File::create(&log_path).unwrap();
    let child = user
        .command(&tree.join("bin/postgres"))
        .arg("-D")
        .arg(&data)
        .arg("-k")
        .arg(&sock)
        .args(["-c", "listen_addresses=", "-p", "5432"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start the built postgres");
    let mut server = KillOnDrop(child);
    let read_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !read_log().contains("database system is ready to accept connections") {
        if let Some(status) = server.0.try_wait().unwrap() {
            panic!(
                "postgres exited ({status}) before it was ready:\n{}",
                read_log()
            );
        }
        assert!(
            Instant::now() < deadline,
            "postgres not ready within 60 s:\n{}",
            read_log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

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
            read_log()
        );
        assert!(
            answer.starts_with("PostgreSQL 15.") && answer.trim_end().ends_with("|1"),
            "{answer}"
        );
    }

    let pid = server.0.id().to_string();
    let stopped = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(stopped.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.0.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "postgres did not stop within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        read_log().contains("database system is shut down"),
        "{}",
        read_log()
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
    assert!(
        started.elapsed() < Duration::from_secs(1),
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
