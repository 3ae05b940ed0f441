//! Profile-guided builds: the variant built instrumented, started in a sandbox of its own,
//! driven by the training workload (a seed other than the measured runs'), stopped so it
//! writes its profile; the profile checked (none is an error, not a silent plain build),
//! merged where the compiler needs it, kept in the cache under the instrumented binary and
//! the training spec (so a second run trains nothing), and the final build made with it.

use crate::checks::Workloads;
use crate::Options;
use bakeoff_build::pgo::{self, Profile};
use bakeoff_build::{self as build, BuildInfo, BuildSpec, Cache};
use bakeoff_engine::{Live, Measure, NoHooks, Phases};
use bakeoff_plan::{Loaded, Variant};
use bakeoff_sandbox::{Sandbox, SandboxSpec};
use bakeoff_workloads::workload::{RunContext, Server};
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
    let w = workloads
        .iter()
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
        "pgo\n{}\n{workload_keys}\n{connections}\n{}\n{}",
        instrumented.binary_sha256, t.duration, l.experiment.plan.seed
    ));
    let store = cache.root().join("profiles").join(&id);
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
    let staging = cache
        .root()
        .join("profiles")
        .join(format!("{id}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let data = staging.join("data");
    std::fs::create_dir_all(&data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
    run_training(
        l,
        opts,
        v,
        &instrumented,
        &data,
        w.as_ref(),
        connections,
        duration,
    )?;
    // Checked (and, for clang, merged) before it is kept.
    pgo::collect(&spec.compiler, &data)?;
    std::fs::write(staging.join("done"), b"")
        .map_err(|e| format!("cannot write {}: {e}", staging.display()))?;
    let _ = std::fs::remove_dir_all(&store);
    std::fs::rename(&staging, &store)
        .map_err(|e| format!("cannot keep the profile in {}: {e}", store.display()))?;
    let (profile, n) = pgo::collect(&spec.compiler, &store.join("data"))?;
    Ok(Trained {
        profile,
        note: note(n, false),
    })
}

/// Hex sha256 of `text` (first 32 digits: a cache directory name).
fn sha256_hex(text: &str) -> String {
    build::sha256_hex(text.as_bytes())[..32].to_string()
}

/// Starts the instrumented server with its profile environment, drives it, stops it
/// cleanly (the profile is written at exit).
#[allow(clippy::too_many_arguments)]
fn run_training(
    l: &Loaded,
    opts: &Options,
    v: &Variant,
    instrumented: &BuildInfo,
    data: &Path,
    w: &dyn bakeoff_workloads::Workload,
    connections: usize,
    duration: std::time::Duration,
) -> Result<(), String> {
    let e = &l.experiment;
    let target = bakeoff_sandbox::target_for(e.target.kind);
    let product_depth = target.recipe().product().components().count();
    let build_dir: PathBuf = instrumented
        .binary
        .ancestors()
        .nth(product_depth)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut args = e.target.args.clone();
    args.extend(v.args.iter().cloned());
    let spec = SandboxSpec {
        name: format!("{}-train", v.name),
        kind: e.target.kind,
        binary: instrumented.binary.clone(),
        args,
        root: opts.sandbox_root.clone(),
        ready_timeout: target.ready_timeout(),
        stop_grace: 4 * target.stop_grace(),
        options: e.server_options(v),
        data: None,
        wrapper: Vec::new(),
        env: pgo::server_env(v.compiler_or_default(), &build_dir, data),
    };
    let sandbox = Sandbox::start(&spec)
        .map_err(|err| format!("the instrumented server did not start: {err}"))?;
    let server = Server {
        addr: sandbox.addr(),
        socket: sandbox.socket(),
        db: None,
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
        engine: None,
        phases: &phases,
        // Not the measured runs' seed: the profile must not know their request stream.
        seed: e.plan.seed ^ 0x7472_6169_6e21,
        round: 0,
        hooks: &NoHooks,
        live: &live,
        cancel: &cancel,
    });
    let stopped = sandbox.stop();
    ran.map_err(|err| format!("the training run failed: {err}"))?;
    let report = stopped.map_err(|err| format!("the instrumented server did not stop: {err}"))?;
    if report.outcome == bakeoff_sandbox::StopOutcome::Killed {
        return Err(format!(
            "the instrumented server had to be killed ({}), so it wrote no profile",
            report.status
        ));
    }
    Ok(())
}
