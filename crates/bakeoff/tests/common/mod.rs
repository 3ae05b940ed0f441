//! Helpers for the CLI tests: a temp dir with an experiment file, the shared build cache,
//! and a guard that fails the test if a server it started outlives it.

#![allow(dead_code)]

pub mod chromedriver;
pub mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A variant name made like an HTML injection: every output must show it as text.
pub const NASTY: &str = "<img src=x onerror=alert(1)>";

/// The installed memcached three ways (`first`, Debian's, and one named [`NASTY`] with two
/// threads), the variants of the tests that open bakeoff's pages in a browser.
pub fn memcached_three_ways(first: &str) -> String {
    memcached_installed(first, ARGS_64)
        + &installed("debian", "")
        + &installed(NASTY, "args = [\"-t\", \"2\"]\n")
        + "\n"
}

/// A cache shared by every test run, so memcached's source is fetched and each build made
/// once per checkout rather than once per test: bakeoff's default cache under
/// [`private_home`], so the tests that name it with `--cache` and those that run bakeoff
/// with that home and no `--cache` (the examples, tune) share every fetch and build, and
/// every test's cache is one the unprivileged server user cannot enter, as root's is.
pub fn cache_dir() -> PathBuf {
    private_home().join(".cache").join("bakeoff")
}

/// A home as root's is on a fresh machine (mode 0700: the unprivileged server user cannot
/// enter it), kept between runs of the suite: bakeoff's default cache lies under it
/// (`~/.cache/bakeoff`), so a rerun fetches and builds nothing. Tests that must hold as a
/// user runs bakeoff with its default cache set `HOME` to it ([`with_private_home`]).
pub fn private_home() -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("private-home");
    std::fs::create_dir_all(&home).expect("create the private home");
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700))
        .expect("chmod the private home");
    // Maven's repository is the registry client's, not bakeoff's cache: shared with the
    // user's, so what other tests fetched is not fetched again.
    if let Some(real) = std::env::var_os("HOME") {
        let m2 = home.join(".m2");
        if std::fs::symlink_metadata(&m2).is_err() {
            let _ = std::os::unix::fs::symlink(Path::new(&real).join(".m2"), m2);
        }
    }
    home
}

/// `cmd` with `HOME` at [`private_home`] and no `XDG_CACHE_HOME`: bakeoff's cache at its
/// default place there.
pub fn with_private_home(cmd: &mut Command) -> &mut Command {
    cmd.env("HOME", private_home()).env_remove("XDG_CACHE_HOME")
}

pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// A scratch dir on disk (in the target folder) whatever TMPDIR is: for a test whose
    /// figures come from the disk (fsync waits), since the suite may put TMPDIR on tmpfs.
    /// Mode 0755, like [`sql_scratch`]'s, so SQL servers run as their own user reach it.
    pub fn on_disk() -> Scratch {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        Scratch { dir }
    }

    /// A scratch dir holding work.patch, [`ADDED_WORK`] (what [`three_builds`]'s `work`
    /// variant applies).
    pub fn with_added_work() -> Scratch {
        let s = Scratch::new();
        s.write("work.patch", ADDED_WORK);
        s
    }

    /// Writes `text` as `name` and runs it with `args` beside the [`Hog`] `hog` makes
    /// (stopped once bakeoff exits); no memcached of it left, exit status 0; its stdout.
    pub fn run_beside(
        &self,
        hog: impl FnOnce() -> Hog,
        name: &str,
        text: &str,
        args: &[&str],
    ) -> String {
        let f = self.write(name, text);
        let out = {
            let _hog = hog();
            self.run_cmd(&f).args(args).output().unwrap()
        };
        no_server_left("memcached", self);
        assert_ok(&out)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `bakeoff COMMAND FILE --out OUT` with the shared cache, a private sandbox root and
    /// a private history store.
    pub fn command(&self, command: &str, file: &Path, out: &Path) -> Command {
        let mut c = self.bare_cmd(command, file, out);
        c.arg("--cache")
            .arg(cache_dir())
            .arg("--quiet")
            .env("BAKEOFF_STORE", self.path().join("history.sqlite"));
        c
    }

    /// `bakeoff COMMAND FILE --out OUT --sandbox-dir <scratch>/sandboxes` and nothing
    /// more: the default cache, progress and history.
    pub fn bare_cmd(&self, command: &str, file: &Path, out: &Path) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
        c.arg(command)
            .arg(file)
            .arg("--out")
            .arg(out)
            .arg("--sandbox-dir")
            .arg(self.sandboxes());
        c
    }

    /// `bakeoff run FILE --out <scratch>/out` with the shared cache and a private sandbox root.
    pub fn run_cmd(&self, file: &Path) -> Command {
        self.command("run", file, &self.out())
    }

    /// `bakeoff verify FILE --out <scratch>/<out>`, otherwise like [`Scratch::run_cmd`].
    pub fn verify_cmd(&self, file: &Path, out: &str) -> Command {
        self.command("verify", file, &self.path().join(out))
    }

    /// Writes `text` as `name`, runs it ([`Scratch::run_cmd`]), checks that no `server`
    /// of this scratch dir outlived it and that bakeoff succeeded; its results.json.
    pub fn run_clean(&self, name: &str, text: &str, server: &str) -> serde_json::Value {
        let f = self.write(name, text);
        let out = self.run_cmd(&f).output().expect("run bakeoff");
        no_server_left(server, self);
        assert_ok(&out);
        self.results()
    }

    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    pub fn sandboxes(&self) -> PathBuf {
        self.dir.path().join("sandboxes")
    }

    pub fn results(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.out().join("results.json")).expect("results.json");
        serde_json::from_str(&text).expect("valid json")
    }
}

pub use bakeoff_testkit::pids_named;

/// Asserts that bakeoff exited 0 (its stderr, then its stdout, in the message); its stdout.
pub fn assert_ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Asserts that bakeoff exited with `code` (its stderr in the message).
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `bakeoff check FILE`, to add arguments or environment to.
pub fn check_cmd(file: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.arg("check").arg(file);
    c
}

/// `bakeoff check FILE`: its exit status and its stderr.
pub fn check(file: &Path) -> (Option<i32>, String) {
    let out = check_cmd(file).output().expect("bakeoff check");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One line on stderr, exit status 2 and no panic; the line.
pub fn one_line_2(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// The item of a results.json list (`r["cells"]`, `r["variants"]`...) whose `key` is
/// `value`; panics, naming both, when there is none.
pub fn item<'a>(list: &'a serde_json::Value, key: &str, value: &str) -> &'a serde_json::Value {
    list.as_array()
        .into_iter()
        .flatten()
        .find(|x| x[key] == value)
        .unwrap_or_else(|| panic!("no {key} = {value:?} in {list}"))
}

/// Every item of a results.json list whose `key` is `value` (`r["cells"]` of one
/// workload...); panics when `list` is no list.
pub fn items<'a>(
    list: &'a serde_json::Value,
    key: &str,
    value: &str,
) -> Vec<&'a serde_json::Value> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .filter(|x| x[key] == value)
        .collect()
}

/// The string `key` of every item of a results.json list; panics when `list` is no
/// list or an item's `key` no string.
pub fn strs<'a>(list: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|x| x[key].as_str().unwrap())
        .collect()
}

/// `sh -ec script` in `dir`, which must succeed (its output in the message).
pub fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{script}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes a named pipe at `path`.
pub fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Writes `<scratch>/<dir>/results.json`, a complete experiment `name` as `report` reads
/// it: kv at `connections`, one cell per variant of `factors` (the first the baseline),
/// each of `rounds` valid runs at `ops(factor, round)` ops/s.
pub fn results_folder(
    s: &Scratch,
    dir: &str,
    name: &str,
    connections: usize,
    factors: &[(&str, f64)],
    rounds: usize,
    ops: impl Fn(f64, usize) -> f64,
) -> PathBuf {
    use bakeoff_report::model::{Cell, PlanRecord, Results, Run, VariantRecord};
    let cell = |v: &str, f: f64| {
        let runs = (0..rounds)
            .map(|round| Run {
                round,
                ops_per_s: ops(f, round),
                valid: true,
                ..Run::default()
            })
            .collect();
        Cell::new("kv", v, connections, runs)
    };
    let r = Results {
        name: name.into(),
        status: "complete".into(),
        plan: PlanRecord {
            repetitions: Some(rounds),
            duration_s: Some(1.0),
            baseline: factors[0].0.into(),
            equivalence: 0.01,
            rounds: vec![Vec::new(); rounds],
            ..PlanRecord::default()
        },
        variants: factors
            .iter()
            .map(|(v, _)| VariantRecord {
                name: (*v).into(),
                status: "ok".into(),
                ..VariantRecord::default()
            })
            .collect(),
        cells: factors.iter().map(|(v, f)| cell(v, *f)).collect(),
        ..Results::default()
    };
    let dir = s.path().join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("results.json"),
        serde_json::to_string_pretty(&r).unwrap(),
    )
    .unwrap();
    dir
}

/// The names in a directory (none when it does not exist), bakeoff's folder marker aside.
pub fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".bakeoff-owned")
        .collect()
}

/// Waits up to `secs` for `cond` (`bakeoff_testkit::wait_until` in seconds).
pub fn wait_for(secs: f64, cond: impl FnMut() -> bool) -> bool {
    bakeoff_testkit::wait_until(std::time::Duration::from_secs_f64(secs), cond)
}

/// A scratch dir the SQL servers' unprivileged user can reach (tempdirs are 0700).
/// Every .html file below `dir`, sorted.
pub fn html_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "html") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Records the results folder `folder` (its results.json as it is) in the history store
/// `store`, `times` times.
pub fn record_folder(store: &Path, folder: &Path, times: usize) {
    let text = std::fs::read_to_string(folder.join("results.json")).unwrap();
    let r = bakeoff_report::Results::from_json(&text).unwrap();
    let mut st = bakeoff_store::Store::open(store).unwrap();
    for _ in 0..times {
        st.record(&bakeoff_store::Entry::from_results(&r, folder))
            .unwrap();
    }
}

/// A copy at `to` of tests/data/kinds, the folder of a real run with a kind's figures.
pub fn copy_kinds_data(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kinds");
    for e in std::fs::read_dir(&data).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// `bakeoff site SITE --store STORE`, run in this process's folder with its environment.
pub fn site_output(site: &Path, store: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .arg("site")
        .arg(site)
        .arg("--store")
        .arg(store)
        .output()
        .unwrap()
}

/// The first server named `name` of this scratch's measured sandboxes (not one that loads
/// data) of the variant named `victim`, within `secs`.
pub fn measured_server(name: &str, s: &Scratch, secs: f64) -> Option<u32> {
    let marker = format!("{}/victim-", s.sandboxes().display());
    let mut found = None;
    wait_for(secs, || {
        found = pids_named(name).into_iter().find(|pid| {
            let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default();
            let cwd = cwd.display().to_string();
            (cmd.contains(&marker) || cwd.starts_with(&marker))
                && !cmd.contains("prepare")
                && !cwd.contains("prepare")
        });
        found.is_some()
    });
    found
}

/// An experiment named `name` on the installed MariaDB, one variant (`variant`):
/// oltp_point_select over `rows` rows on 2 connections (then the workload's `extra` keys,
/// whole lines), and the `[plan]` of `plan` (whole lines).
pub fn mariadb_point_select(
    name: &str,
    variant: &str,
    rows: u32,
    extra: &str,
    plan: &str,
) -> String {
    let binary = bakeoff_testkit::paths::MARIADBD;
    format!(
        "name = \"{name}\"\n[target]\nkind = \"mariadb\"\n[[variant]]\nname = \"{variant}\"\nbinary = \"{binary}\"\n[[workload]]\nkind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = {rows}\nconnections = [2]\n{extra}[plan]\n{plan}"
    )
}

/// Sends `signal` (its name: INT, KILL) to `child` and waits for it to end.
pub fn send_and_wait(child: &mut std::process::Child, signal: &str) -> std::process::ExitStatus {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status();
    child.wait().expect("wait")
}

/// Starts `bakeoff run` on `file` (its output folder removed first), sends it `signal`
/// once its own sandbox and `server` process are up, checks its exit status where
/// `expect_exit` says one, and asserts that none of its `server` processes outlive it.
pub fn signal_leaves_no_server(
    s: &Scratch,
    file: &Path,
    server: &str,
    signal: &str,
    expect_exit: Option<i32>,
) {
    let before = pids_named(server);
    let dirs_before = entries(&s.sandboxes());
    let _ = std::fs::remove_dir_all(s.out());
    let mut child = s
        .run_cmd(file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Our own sandbox, not another test's server: then bakeoff is well past installing
    // its signal handler.
    let started = wait_for(20.0, || {
        entries(&s.sandboxes())
            .iter()
            .any(|e| !dirs_before.contains(e))
            && pids_named(server).iter().any(|p| !before.contains(p))
    });
    let ours: Vec<u32> = pids_named(server)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    let status = send_and_wait(&mut child, signal);
    assert!(started, "no server started");
    if let Some(code) = expect_exit {
        assert_eq!(status.code(), Some(code));
    }
    let gone = wait_for(5.0, || ours.iter().all(|p| !pids_named(server).contains(p)));
    assert!(gone, "{server} {ours:?} outlived bakeoff after SIG{signal}");
}

pub fn sql_scratch() -> Scratch {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new();
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    s
}

/// Panics if a `name` process of this test's sandboxes is still alive (tests run in
/// parallel, so other tests' servers are told apart by the scratch path on their command
/// line).
pub fn no_server_left(name: &str, s: &Scratch) {
    let mine = s.path().display().to_string();
    let left: Vec<u32> = pids_named(name)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .unwrap_or_default()
                .contains(&mine)
        })
        .collect();
    assert!(left.is_empty(), "{name} outlived bakeoff: {left:?}");
}

/// A patch to memcached's delete command that writes one byte past a heap block: what
/// AddressSanitizer must find (the probes and hosts tests share its build).
pub const OVERFLOW: &str = "--- a/proto_text.c
+++ b/proto_text.c
@@ -2131,6 +2131,13 @@
 
     key = tokens[KEY_TOKEN].value;
     nkey = tokens[KEY_TOKEN].length;
+    {
+        /* Planted by bakeoff's tests: writes one byte past a heap block. */
+        char *planted = malloc(nkey);
+        memcpy(planted, key, nkey + 1);
+        if (planted[nkey] == 1) fputc(0, stderr);
+        free(planted);
+    }
 
     if(nkey > KEY_MAX_LENGTH) {
         out_string(c, \"CLIENT_ERROR bad command line format\");
";

/// The run's server listened, and only on loopback (TCP and UDP, as /proc showed it once
/// it was ready): nothing an experiment sets opens it to the network.
pub fn assert_loopback_only(run: &serde_json::Value) {
    let listens = run["listens"]
        .as_array()
        .unwrap_or_else(|| panic!("no listens recorded: {run}"));
    assert!(!listens.is_empty(), "{run}");
    for l in listens {
        let text = l.as_str().unwrap();
        let (addr, proto) = text.rsplit_once('/').unwrap();
        let addr: std::net::SocketAddr = addr.parse().unwrap();
        assert!(addr.ip().is_loopback(), "listened on {text}");
        assert!(proto == "tcp" || proto == "udp", "{text}");
    }
}

/// 20,000 volatile additions per command: several times memcached's own work per request,
/// so the patched server is the bottleneck even against the tests' debug-built load engine
/// (with a smaller patch a client-bound run can even come out faster: a slower server
/// batches more requests per wakeup).
pub const ADDED_WORK: &str = "--- a/proto_text.c\n+++ b/proto_text.c\n@@ -2713,5 +2713,7 @@\n void process_command_ascii(conn *c, char *command) {\n \n+    static volatile unsigned bakeoff_work;\n+    for (unsigned bakeoff_i = 0; bakeoff_i < 20000; bakeoff_i++) bakeoff_work += bakeoff_i;\n     token_t tokens[MAX_TOKENS];\n     size_t ntokens;\n     int comm;\n";

/// The opening of an experiment named `name` on memcached built from Debian's source,
/// with the server's `args` (the inside of a TOML array).
pub fn memcached_source(name: &str, args: &str) -> String {
    format!("name = \"{name}\"\n[target]\nkind = \"memcached\"\nsource = {{ debian = \"memcached\" }}\nargs = [{args}]\n")
}

/// The opening of an experiment named `name` on installed memcached with the server's
/// `args` (the inside of a TOML array).
pub fn memcached_installed(name: &str, args: &str) -> String {
    format!("name = \"{name}\"\n[target]\nkind = \"memcached\"\nargs = [{args}]\n")
}

/// A blank line and a `[[variant]]` built by `compiler` with `cflags`, then `extra` (whole
/// lines).
pub fn build(name: &str, compiler: &str, cflags: &str, extra: &str) -> String {
    format!("\n[[variant]]\nname = \"{name}\"\ncompiler = \"{compiler}\"\ncflags = \"{cflags}\"\n{extra}")
}

/// A blank line and a `[[variant]]` of the installed /usr/bin/memcached, then `extra`
/// (whole lines).
pub fn installed(name: &str, extra: &str) -> String {
    format!("\n[[variant]]\nname = \"{name}\"\nbinary = \"/usr/bin/memcached\"\n{extra}")
}

/// The head of an experiment named `name` on Debian's PostgreSQL 15 source: its name and
/// `[target]`, the variants to follow.
pub fn postgres_debian(name: &str) -> String {
    format!(
        "name = \"{name}\"\n[target]\nkind = \"postgres\"\nsource = {{ debian = \"postgresql-15\" }}\n"
    )
}

/// An oltp_point_select workload (its other keys `extra`, whole lines) over 1,000 rows on
/// 2 connections and a plan of one short round: the tail of an experiment that only needs
/// its variants to run.
pub fn short_point_select(extra: &str) -> String {
    format!(
        "\n[[workload]]\nkind = \"oltp\"\n{extra}test = \"oltp_point_select\"\ntable_size = 1000\nconnections = [2]\n\n[plan]\nrepetitions = 1\nwarmup = \"0s\"\nduration = \"1s\"\n"
    )
}

/// A `[[workload]]` of kind kv named `name` over `connections` (the inside of a TOML
/// array) and `keys` keys, then `extra` (whole lines: a mix...).
pub fn kv(name: &str, connections: &str, keys: u32, extra: &str) -> String {
    format!("[[workload]]\nkind = \"kv\"\nname = \"{name}\"\nconnections = [{connections}]\nkeys = {keys}\n{extra}")
}

/// An experiment named `name` over three gcc-12 -O2 builds of Debian's memcached (`base`,
/// an identical `same`, and `work` with [`ADDED_WORK`] as work.patch) on kv at 8
/// connections, with `plan` as its `[plan]` table: the same builds for every test that
/// uses it, so the shared build cache serves them.
pub fn three_builds(name: &str, plan: &str) -> String {
    let mut text = memcached_source(name, ARGS_64);
    for (variant, extra) in [
        ("base", ""),
        ("same", ""),
        ("work", "patches = [\"work.patch\"]\n"),
    ] {
        text += &build(variant, "gcc-12", "-O2", extra);
    }
    text + "\n" + &kv("kv", "8", 5000, "mix = { get = 90, set = 10 }\n") + "\n[plan]\n" + plan
}

/// memcached's arguments in most tests: one worker thread, 64 MB.
pub const ARGS_64: &str = "\"-t\", \"1\", \"-m\", \"64\"";

/// memcached's arguments of the hostile tests: one thread, 16 MB.
pub const ARGS_16: &str = "\"-t\", \"1\", \"-m\", \"16\"";

/// An experiment for a busy machine, named `name`: installed memcached (`-t 1`) as each
/// of `variants`, kv `get` at 8 connections over 1,000 keys, six rounds of 500 ms, then
/// `plan` (whole lines).
pub fn busy_machine_experiment(name: &str, variants: &[&str], plan: &str) -> String {
    let mut text = memcached_installed(name, "\"-t\", \"1\"");
    for v in variants {
        text += &installed(v, "");
    }
    text + "\n"
        + &kv("get", "8", 1000, "")
        + "\n[plan]\nrepetitions = 6\nwarmup = \"200ms\"\nduration = \"500ms\"\n"
        + plan
}

/// Processes that keep CPUs busy until dropped (killed and reaped even when the test
/// fails, since the guard drops while the panic unwinds). Not bakeoff's: the test starts
/// them, beside the `bakeoff` it runs.
pub struct Hog(Vec<std::process::Child>);

impl Hog {
    /// A busy loop pinned to `cpu`.
    pub fn on(cpu: usize) -> Hog {
        let child = std::process::Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset");
        Hog(vec![child])
    }

    /// `yes > /dev/null`, one per CPU of the machine, wherever the scheduler puts them.
    pub fn everywhere() -> Hog {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut hog = Hog(Vec::new());
        for _ in 0..cpus {
            let child = std::process::Command::new("yes")
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("yes");
            hog.0.push(child);
        }
        hog
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The names in a run's `others_top`.
pub fn others_named(run: &serde_json::Value) -> Vec<String> {
    run["others_top"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| o["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The level at which a test asserts that one binary compared with itself did not come
/// out faster or slower: 1 in 1,000.
pub const FALSE_ANSWER_LEVEL: f64 = 0.001;

/// Whether a comparison of one binary with itself came out faster or slower at
/// [`FALSE_ANSWER_LEVEL`]: its verdict says so and its raw two-sided p-value lies below
/// 0.001. For an identical build the rounds are exchangeable (each round runs the two in
/// a shuffled order), so the test's null distribution holds and that happens in at most
/// 1 in 1,000 comparisons; at the experiment's own 5% level it would happen in 1 in 20,
/// by design, and a test asserting it never does would fail that often. With up to 9
/// pairs the paired test cannot reach it at all (its smallest p is 2/2^n = 0.0039).
pub fn differs_beyond_chance(k: &serde_json::Value) -> bool {
    matches!(k["verdict"].as_str(), Some("faster" | "slower"))
        && k["p_value"]
            .as_f64()
            .is_some_and(|p| p < FALSE_ANSWER_LEVEL)
}

/// The rest of the build tests' experiments (bolt, lto, layouts): kv at 4 connections
/// over 2,000 keys, one short round.
pub const SHORT_KV: &str = "\n[[workload]]\nkind = \"kv\"\nconnections = [4]\nkeys = 2000\n\n[plan]\nrepetitions = 1\nwarmup = \"100ms\"\nduration = \"500ms\"\n";

/// Asserts that a comparison of one binary with itself did not come out faster or
/// slower beyond chance ([`differs_beyond_chance`]).
pub fn assert_not_different(k: &serde_json::Value) {
    assert!(
        !differs_beyond_chance(k),
        "identical builds called different at p < {FALSE_ANSWER_LEVEL}: {k}"
    );
}

/// A results folder `dir` of experiment `name` started at `started` (RFC 3339 UTC), made
/// as a run makes one (analyzed, with its report.html) from scripted figures: each
/// variant of `factors` at `level * factor` ops/s over 5 rounds with a little spread;
/// then recorded in the history store at `store`. Returns the folder. For the tests of
/// what reads the history (site, bundles) without running servers.
pub fn recorded_folder(
    s: &Scratch,
    store: &Path,
    dir: &str,
    name: &str,
    started: &str,
    factors: &[(&str, f64)],
    level: f64,
) -> PathBuf {
    let folder = results_folder(s, dir, name, 16, factors, 5, |f, round| {
        level * f * (1.0 + 0.002 * (round % 3) as f64)
    });
    let text = std::fs::read_to_string(folder.join("results.json")).unwrap();
    let mut r = bakeoff_report::Results::from_json(&text).unwrap();
    r.started_utc = started.into();
    r.finished_utc = Some(started.into());
    r.bakeoff_version = env!("CARGO_PKG_VERSION").into();
    r.host.hostname = "testhost".into();
    r.host.cpu_model = "Test CPU".into();
    r.experiment.resolved = serde_json::json!({"target": {"kind": "memcached"}});
    bakeoff_runner::analyze(&mut r);
    r.status = "complete".into();
    std::fs::write(
        folder.join("results.json"),
        serde_json::to_string_pretty(&r).unwrap(),
    )
    .unwrap();
    std::fs::write(
        folder.join("report.html"),
        bakeoff_report::html::render_with(&r, &bakeoff_workloads::KINDS),
    )
    .unwrap();
    let mut st = bakeoff_store::Store::open(store).unwrap();
    st.record(&bakeoff_store::Entry::from_results(&r, &folder))
        .unwrap();
    folder
}
