//! Profile-guided builds (PGO and BOLT), which share one prelude (`Prelude`: the
//! training workload, the cache entry, staging and keeping). PGO: the variant built
//! instrumented, started in a sandbox of its own, driven by the training workload (a seed other than the measured runs'), stopped so it
//! writes its profile; the profile checked (none is an error, not a silent plain build),
//! merged where the compiler needs it, kept in the cache under the instrumented binary and
//! the training spec (so a second run trains nothing), and the final build made with it.
//! BOLT: the build linked with `--emit-relocs` runs under `perf record` (cpu-clock samples:
//! this machine has no LBR, so perf2bolt runs in its no-LBR mode, a weaker profile than
//! branch records), then perf2bolt and llvm-bolt rewrite it; the result is cached the same
//! way and measured and verified like any other variant.

use crate::checks::{LLVM_BOLT, PERF2BOLT};
use crate::options::Options;
use crate::ready::Workloads;
use bakeoff_build::pgo::{self, Profile};
use bakeoff_build::{self as build, BuildInfo, BuildSpec, Cache};
use bakeoff_engine::{Live, Measure, NoHooks, Phases};
use bakeoff_plan::{Loaded, Variant};
use bakeoff_sandbox::{Sandbox, SandboxSpec};
use bakeoff_workloads::workload::{RunContext, Server};
use bakeoff_workloads::Workload;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the final build is made with, and a line for its record.
pub struct Trained {
    pub profile: Profile,
    pub note: String,
}

/// The instrumented build of `spec`, trained as `v.pgo` says.
pub fn train(
    l: &Loaded,
    opts: &Options,
    v: &Variant,
    tree: &build::SourceTree,
    spec: &BuildSpec,
    cache: &Cache,
    workloads: &Workloads,
) -> Result<Trained, String> {
    let Some(t) = &v.pgo else {
        return Err("no pgo training given".into());
    };
    let mut gen = spec.clone();
    gen.variant = format!("{}-instrumented", v.name);
    gen.profile = Some(Profile::Generate);
    let instrumented = build::build(tree, &gen, cache)
        .map_err(|e| format!("the instrumented build failed: {e}"))?;
    let p = Prelude::new(l, t, workloads, "pgo", &instrumented.binary_sha256, cache)?;
    let (w, connections, duration, store) = (p.workload, p.connections, p.duration, &p.store);
    let note = |n: usize, cached: bool| {
        format!(
            "pgo: trained on {} x{connections} for {}, {n} profile file(s){}",
            t.workload,
            t.duration,
            if cached { " (cached)" } else { "" }
        )
    };
    if store.join("done").is_file() {
        let (profile, n) = pgo::collect(&spec.compiler, &store.join("data"))?;
        return Ok(Trained {
            profile,
            note: note(n, true),
        });
    }
    let staging = p.staging()?;
    let data = staging.join("data");
    let build_dir = build_dir_of(l, &instrumented.binary);
    let env_for = |dir: &Path| pgo::server_env(v.compiler_or_default(), &build_dir, dir);
    if l.experiment.kind_of(v).is_sql() {
        let (place, env) = sql_place(l, opts, v, &instrumented.binary, w, &env_for)?;
        let how = Run {
            binary: &place.binary,
            wrapper: Vec::new(),
            env,
            data: Some(place.data.clone()),
        };
        run_training(l, opts, v, &how, w, connections, duration)?;
        bakeoff_sandbox::copy_tree(&place.profile, &data)?;
    } else {
        std::fs::create_dir_all(&data)
            .map_err(|e| format!("cannot create {}: {e}", data.display()))?;
        let how = Run {
            binary: &instrumented.binary,
            wrapper: Vec::new(),
            env: env_for(&data),
            data: None,
        };
        run_training(l, opts, v, &how, w, connections, duration)?;
    }
    // Checked (and, for clang, merged) before it is kept.
    pgo::collect(&spec.compiler, &data)?;
    p.keep(&staging, "the profile")?;
    let (profile, n) = pgo::collect(&spec.compiler, &store.join("data"))?;
    Ok(Trained {
        profile,
        note: note(n, false),
    })
}

/// What PGO and BOLT training share before and after their own part: the training
/// workload and its connections and duration, the cache entry the result is kept under
/// (named by the binary trained, the workload's keys, the connections, the duration and
/// the plan's seed, so a second run trains nothing), a staging folder beside it, and the
/// staged result kept there whole or not at all.
struct Prelude<'a> {
    workload: &'a dyn Workload,
    connections: usize,
    duration: std::time::Duration,
    /// The cache entry (`<cache>/profiles/<id>` for PGO, `<cache>/bolted/<id>` for BOLT).
    store: PathBuf,
    id: String,
}

impl<'a> Prelude<'a> {
    fn new(
        l: &Loaded,
        t: &bakeoff_plan::Training,
        workloads: &'a Workloads,
        how: &str,
        binary_sha256: &str,
        cache: &Cache,
    ) -> Result<Prelude<'a>, String> {
        // Only variants of `[target] kind` are built, so they train on its workloads.
        let kind = l.experiment.target.kind;
        let w = (0..workloads.len())
            .map(|i| workloads.of_kind(kind, i))
            .find(|w| w.name() == t.workload)
            .ok_or_else(|| format!("no workload {:?} to train on", t.workload))?;
        let connections = t
            .connections
            .or_else(|| w.connections().first().copied())
            .unwrap_or(1);
        let duration = bakeoff_plan::parse_duration(&t.duration)?;
        let workload_keys = l
            .experiment
            .workloads
            .iter()
            .find(|x| x.display_name() == t.workload)
            .and_then(|x| serde_json::to_string(x).ok())
            .unwrap_or_default();
        let id = sha256_hex(&format!(
            "{how}\n{binary_sha256}\n{workload_keys}\n{connections}\n{}\n{}",
            t.duration, l.experiment.plan.seed
        ));
        let folder = if how == "pgo" { "profiles" } else { "bolted" };
        Ok(Prelude {
            workload: w,
            connections,
            duration,
            store: cache.root().join(folder).join(&id),
            id,
        })
    }

    /// A fresh staging folder beside the cache entry, this process's own.
    fn staging(&self) -> Result<PathBuf, String> {
        let staging = self
            .store
            .with_file_name(format!("{}.tmp-{}", self.id, std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging)
            .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
        Ok(staging)
    }

    /// Marks `staging` done and moves it to the cache entry; `what` names it in errors.
    fn keep(&self, staging: &Path, what: &str) -> Result<(), String> {
        std::fs::write(staging.join("done"), b"")
            .map_err(|e| format!("cannot write {}: {e}", staging.display()))?;
        let _ = std::fs::remove_dir_all(&self.store);
        std::fs::rename(staging, &self.store)
            .map_err(|e| format!("cannot keep {what} in {}: {e}", self.store.display()))
    }
}

/// Hex sha256 of `text` (first 32 digits: a cache directory name).
fn sha256_hex(text: &str) -> String {
    build::sha256_hex(text.as_bytes())[..32].to_string()
}

/// The build dir a product of this target's recipe was built in.
fn build_dir_of(l: &Loaded, binary: &Path) -> PathBuf {
    // Only variants of `[target] kind` are built.
    let target = bakeoff_sandbox::target_for(l.experiment.target.kind);
    let depth = target.recipe().product().components().count();
    binary
        .ancestors()
        .nth(depth)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// How a training server runs: its binary, a wrapper before it, its environment, and
/// (SQL targets) the data dir it runs on in place.
struct Run<'a> {
    binary: &'a Path,
    wrapper: Vec<String>,
    env: Vec<(String, String)>,
    data: Option<PathBuf>,
}

/// Where a SQL server trains: a dir under the sandbox root (which the server's own user
/// can enter, unlike the cache), its binary reachable from there, a data dir initialized
/// by it and loaded by it with the training workload's tables (the load is part of what
/// it learns), and a dir it may write its profile to. Removed when dropped.
struct SqlPlace {
    dir: PathBuf,
    binary: PathBuf,
    data: PathBuf,
    profile: PathBuf,
}

impl Drop for SqlPlace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Prepares a [`SqlPlace`] for the instrumented `binary`; with the server environment
/// that sends its profile there.
fn sql_place(
    l: &Loaded,
    opts: &Options,
    v: &Variant,
    binary: &Path,
    w: &dyn bakeoff_workloads::Workload,
    env_for: &dyn Fn(&Path) -> Vec<(String, String)>,
) -> Result<(SqlPlace, Vec<(String, String)>), String> {
    use std::os::unix::fs::PermissionsExt;
    let e = &l.experiment;
    let dir = opts
        .sandbox_root
        .join(format!("data-{}", std::process::id()))
        .join(format!("train-{}", crate::folder::safe_name(&v.name)));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    let _ = std::fs::set_permissions(&opts.sandbox_root, std::fs::Permissions::from_mode(0o711));
    let rv = crate::ready::ReadyVariant {
        name: format!("{}-train", v.name),
        kind: e.kind_of(v),
        binary: binary.to_path_buf(),
        args: e.server_args(v),
        options: e.server_options(v),
        engine: v.engine.clone(),
        record: 0,
        sanitize: Vec::new(),
        run_under: None,
        configure_args: v.configure_args.clone(),
        layouts: Vec::new(),
        env: Vec::new(),
        system: Default::default(),
    };
    let mut place = SqlPlace {
        binary: PathBuf::new(),
        data: dir.join("data"),
        profile: dir.join("profile"),
        dir: dir.clone(),
    };
    place.binary = crate::datadirs::reachable_binary(e.kind_of(v), &rv, &dir)?;
    std::fs::create_dir_all(&place.profile)
        .and_then(|_| {
            std::fs::set_permissions(&place.profile, std::fs::Permissions::from_mode(0o777))
        })
        .map_err(|err| format!("cannot create {}: {err}", place.profile.display()))?;
    let env = env_for(&place.profile);
    bakeoff_sandbox::init_data(e.kind_of(v), &place.binary, &place.data)
        .map_err(|err| format!("the training server's data directory: {err}"))?;
    if let Some(set) = w.tables(v.engine.as_deref()) {
        crate::datadirs::load_with_env(
            l,
            opts,
            &rv,
            &place.binary,
            &place.data,
            set.as_ref(),
            &env,
        )
        .map_err(|err| format!("loading the training data: {err}"))?;
    }
    Ok((place, env))
}

/// Starts the training server, drives it, stops it cleanly (profiles are written at exit).
fn run_training(
    l: &Loaded,
    opts: &Options,
    v: &Variant,
    how: &Run,
    w: &dyn bakeoff_workloads::Workload,
    connections: usize,
    duration: std::time::Duration,
) -> Result<(), String> {
    let e = &l.experiment;
    let target = bakeoff_sandbox::target_for(e.kind_of(v));
    let args = e.server_args(v);
    let spec = SandboxSpec {
        name: format!("{}-train", v.name),
        kind: e.kind_of(v),
        binary: how.binary.to_path_buf(),
        args,
        root: opts.sandbox_root.clone(),
        ready_timeout: 4 * target.ready_timeout(),
        stop_grace: 4 * target.stop_grace(),
        options: e.server_options(v),
        data: how.data.clone().map(bakeoff_sandbox::DataSource::InPlace),
        wrapper: how.wrapper.clone(),
        env: how.env.clone(),
        listen: bakeoff_sandbox::LOOPBACK,
        cpus: None,
        stats: bakeoff_sandbox::stats::StatsLevel::Off,
    };
    let sandbox =
        Sandbox::start(&spec).map_err(|err| format!("the training server did not start: {err}"))?;
    let server = Server {
        addr: sandbox.addr(),
        socket: sandbox.socket(),
        db: how
            .data
            .as_ref()
            .and_then(|_| crate::datadirs::db_of(&sandbox, e.kind_of(v))),
    };
    let live = Arc::new(Live::default());
    let cancel = AtomicBool::new(false);
    let phases = Phases {
        warmup: std::time::Duration::ZERO,
        measure: Measure::Duration(duration),
    };
    let ran = w.run(&RunContext {
        server: &server,
        connections,
        load_cpus: crate::placement::load_cpus(None),
        engine: None,
        phases: &phases,
        // Not the measured runs' seed: the profile must not know their request stream.
        seed: e.plan.seed ^ 0x7472_6169_6e21,
        round: 0,
        hooks: &NoHooks,
        live: &live,
        cancel: &cancel,
        rate: None,
    });
    let stopped = sandbox.stop();
    ran.map_err(|err| format!("the training run failed: {err}"))?;
    let report = stopped.map_err(|err| format!("the training server did not stop: {err}"))?;
    if report.outcome == bakeoff_sandbox::StopOutcome::Killed {
        return Err(format!(
            "the training server had to be killed ({}), so it wrote no profile",
            report.status
        ));
    }
    Ok(())
}

/// The `--emit-relocs` build `built`, profiled under perf on the variant's `bolt` training
/// and rewritten by llvm-bolt: the BOLTed binary (cached) and a line for its record.
pub fn bolt(
    l: &Loaded,
    opts: &Options,
    v: &Variant,
    built: &BuildInfo,
    cache: &Cache,
    workloads: &Workloads,
) -> Result<(PathBuf, String), String> {
    let Some(t) = &v.bolt else {
        return Err("no bolt training given".into());
    };
    let p = Prelude::new(l, t, workloads, "bolt", &built.binary_sha256, cache)?;
    let (w, connections, duration, store) = (p.workload, p.connections, p.duration, &p.store);
    let name = built
        .binary
        .file_name()
        .map_or("server".into(), |n| n.to_string_lossy().to_string());
    let note = |cached: bool| {
        format!(
            "bolt: trained on {} x{connections} for {} (perf cpu-clock samples, no LBR: perf2bolt -nl, a weaker profile than branch records){}",
            t.workload,
            t.duration,
            if cached { " (cached)" } else { "" }
        )
    };
    let bolted = store.join(format!("{name}.bolt"));
    if store.join("done").is_file() && bolted.is_file() {
        return Ok((bolted, note(true)));
    }
    let staging = p.staging()?;
    let perf_data = staging.join("perf.data");
    let how = Run {
        binary: &built.binary,
        wrapper: vec![
            "perf".into(),
            "record".into(),
            "-e".into(),
            "cpu-clock".into(),
            "-o".into(),
            perf_data.display().to_string(),
            "--".into(),
        ],
        env: Vec::new(),
        data: None,
    };
    run_training(l, opts, v, &how, w, connections, duration)?;
    if !perf_data.is_file() {
        return Err("perf wrote no samples (is perf permitted here? see /proc/sys/kernel/perf_event_paranoid)".into());
    }
    let fdata = staging.join("perf.fdata");
    tool(
        PERF2BOLT,
        &[
            // Debian names it perf2bolt-16, which it does not recognize as perf2bolt.
            "-aggregate-only".into(),
            "-nl".into(),
            "-p".into(),
            perf_data.display().to_string(),
            "-o".into(),
            fdata.display().to_string(),
            built.binary.display().to_string(),
        ],
        &staging,
    )?;
    let out = staging.join(format!("{name}.bolt"));
    tool(
        LLVM_BOLT,
        &[
            built.binary.display().to_string(),
            "-o".into(),
            out.display().to_string(),
            format!("-data={}", fdata.display()),
            "-reorder-blocks=ext-tsp".into(),
            "-reorder-functions=hfsort".into(),
            "-split-functions".into(),
            "-split-all-cold".into(),
            "-dyno-stats".into(),
        ],
        &staging,
    )?;
    if !out.is_file() {
        return Err(format!("{LLVM_BOLT} wrote no binary"));
    }
    p.keep(&staging, "the BOLTed binary")?;
    Ok((bolted, note(false)))
}

/// Runs a BOLT tool in `dir`, its output kept in `<tool>.log` there; an error with its
/// last lines.
fn tool(program: &str, args: &[String], dir: &Path) -> Result<(), String> {
    let out = std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}; run scripts/setup.sh (bolt-16)"))?;
    let mut log = out.stdout.clone();
    log.extend_from_slice(&out.stderr);
    let _ = std::fs::write(dir.join(format!("{program}.log")), &log);
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&log);
    let tail: Vec<&str> = text.lines().rev().take(3).collect();
    Err(format!(
        "{program} failed: {}",
        tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
    ))
}
