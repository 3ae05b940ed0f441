//! `bakeoff agent`: the other end of the protocol, on a host bakeoff reached over ssh.
//! It keeps bakeoff's hygiene there: servers in sandboxes of its own (their own process
//! groups, the parent-death signal, stale ones reaped when it starts), and when its stdin
//! closes (bakeoff exited or was killed, ssh dropped) it kills every server it started
//! and exits.

mod data;

use crate::protocol::{
    now_ms, BuiltThere, Event, Hello, Installed, LoadSpec, Loaded, Probed, Reply, Request, Sampled,
    ServerSpec, Started, Stopped, LOG_TAIL, VERSION,
};
use bakeoff_engine::{Live, PhaseHooks};
use bakeoff_probe::others;
use bakeoff_probe::sampler::{Sample, Sampler, Summary};
use bakeoff_sandbox::{DataSource, Sandbox, SandboxSpec, Watch};
use bakeoff_workloads::{RunContext, Server};
use data::{reap_runs, safe_run, RunLock};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Where replies go: one line at a time, from the serving thread or the load's hooks.
type Out = Arc<Mutex<std::io::Stdout>>;

fn send(out: &Out, r: &Reply) {
    let mut line = serde_json::to_string(r).unwrap_or_else(|_| "{\"err\":\"reply\"}".into());
    line.push('\n');
    let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
    // A closed stdout means bakeoff is gone: the reader sees stdin close and ends us.
    let _ = o.write_all(line.as_bytes());
    let _ = o.flush();
}

/// Serves requests from stdin until it closes; `root` holds the agent's store and its
/// sandboxes; `run` names the bakeoff run it serves (its SQL data is that run's, kept
/// for the run's next agent if this one is lost). Returns the process's exit status.
///
/// A relative `root` (a `[[host]]` without `work_dir`: `.cache/bakeoff`, under the ssh
/// user's home) is made absolute against the agent's working directory first: every path
/// the agent hands out (a stored binary, a data dir) then names the same file from a
/// sandbox's own working directory.
pub fn serve(root: &Path, run: &str) -> Result<(), String> {
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let root = root.as_path();
    let sandboxes = root.join("sandboxes");
    // A root it cannot work in is fatal: every request would fail.
    bakeoff_sandbox::check_root(&sandboxes).map_err(|why| {
        format!(
            "bakeoff agent: cannot use --root {}: {why}; give a folder this user can write",
            root.display()
        )
    })?;
    for stale in bakeoff_sandbox::reap_stale(&sandboxes) {
        eprintln!("bakeoff agent: {stale}");
    }
    let data_parent = root.join("data");
    // Only a data folder of bakeoff's own is cleaned up below: claimed (made and marked)
    // first, refused when it holds anything else.
    bakeoff_os::own::claim(&data_parent, "agent data", &|e| {
        e.file_name().to_string_lossy().starts_with("run-")
    })
    .map_err(|why| {
        format!(
            "bakeoff agent: cannot use {}: {why}; give a --root (work_dir) of bakeoff's own",
            data_parent.display()
        )
    })?;
    let data_root = data_parent.join(format!("run-{}", safe_run(run)));
    // Held while this agent lives: the run's data is in use.
    let _held = RunLock::hold(&data_root).map_err(|e| format!("bakeoff agent: {e}"))?;
    for stale in reap_runs(&data_parent, &data_root) {
        eprintln!("bakeoff agent: {stale}");
    }
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Request>();
    let reader_cancel = cancel.clone();
    let reader_out = out.clone();
    let reader_data = data_root.clone();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Request>(&line) {
                Ok(Request::Cancel) => reader_cancel.store(true, Ordering::SeqCst),
                Ok(r) => {
                    if tx.send(r).is_err() {
                        break;
                    }
                }
                Err(e) => send(
                    &reader_out,
                    &Reply::Err(format!(
                        "not a request bakeoff sends (column {}); the agent and this bakeoff must be the same build: run bakeoff again, which copies itself there",
                        e.column()
                    )),
                ),
            }
        }
        // bakeoff is gone: nothing it started may outlive it. Its data stays for the
        // run's next agent (a host that comes back) unless bakeoff removed it; the next
        // agent of another run reaps it once no agent of this run holds its lock.
        bakeoff_sandbox::kill_all();
        if std::fs::remove_dir(&reader_data).is_ok() {
            let _ = std::fs::remove_file(RunLock::path(&reader_data));
        }
        std::process::exit(0);
    });
    let mut agent = Agent {
        root: root.to_path_buf(),
        sandboxes,
        data_root,
        servers: BTreeMap::new(),
        next: 1,
        cancel,
        sampler: None,
        others_from: None,
        binaries: BTreeMap::new(),
        probing: None,
    };
    for req in rx {
        let reply = match agent.handle(req, &out) {
            Ok(v) => Reply::Ok(v),
            Err(e) => Reply::Err(e),
        };
        send(&out, &reply);
    }
    Ok(())
}

struct Agent {
    root: PathBuf,
    sandboxes: PathBuf,
    /// Where SQL data directories are made (removed when the agent exits).
    data_root: PathBuf,
    servers: BTreeMap<u64, Sandbox>,
    next: u64,
    cancel: Arc<AtomicBool>,
    sampler: Option<Sampler>,
    /// /proc when the sampler started, and the server it watches: who else ran.
    others_from: Option<(others::Snapshot, Watch)>,
    /// Each server's binary (a profile is read against it).
    binaries: BTreeMap<u64, PathBuf>,
    probing: Option<Probing>,
}

/// perf attached to a server over a window.
#[derive(Default)]
struct Probing {
    /// The pids whose callgrind counting was turned on.
    instrumented: Vec<i32>,
    instrument_error: Option<String>,
    counting: Option<Result<bakeoff_probe::perfstat::Counting, String>>,
    recording: Option<Result<(bakeoff_probe::profile::Recording, PathBuf, PathBuf), String>>,
}

fn json<T: serde::Serialize>(v: T) -> Result<serde_json::Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

impl Agent {
    fn handle(&mut self, req: Request, out: &Out) -> Result<serde_json::Value, String> {
        match req {
            Request::Hello => json(Hello {
                version: VERSION,
                pid: std::process::id(),
            }),
            Request::Clock => json(now_ms()),
            Request::Machine => json(bakeoff_probe::machine::collect(&self.sandboxes)),
            Request::Have { sha256, name } => {
                let path = self.stored(&sha256, &name)?;
                let have =
                    std::fs::read(&path).is_ok_and(|b| bakeoff_build::sha256_hex(&b) == sha256);
                json(have.then(|| path.display().to_string()))
            }
            Request::Put { sha256, name, data } => self.put(&sha256, &name, &data),
            Request::Unpack { sha256, name } => self.unpack(&sha256, &name),
            Request::Which { program } => {
                json(bakeoff_os::path::which(Path::new(&program)).and_then(|p| {
                    let (bytes, sha256) = bakeoff_build::describe_binary(&p).ok()?;
                    Some(Installed {
                        path: p.display().to_string(),
                        bytes,
                        sha256,
                    })
                }))
            }
            Request::Build { source, spec } => self.build(&source, &spec),
            Request::Data(op) => self.data(op),
            Request::Start(spec) => self.start(&spec),
            Request::Usage { id } => json(self.server(id)?.usage()),
            Request::SamplerStart { id, interval_ms } => {
                let w = self.server(id)?.watch();
                self.others_from = Some((others::Snapshot::take(&w.pids()), w));
                let server = Box::new(move || {
                    let u = w.usage();
                    (u.cpu_s, u.rss_kib)
                });
                self.sampler = Some(Sampler::start(server, Duration::from_millis(interval_ms)));
                json(())
            }
            Request::SamplerStop => {
                let s = self.sampler.take().ok_or("no sampler runs here")?;
                let (samples, summary) = s.stop();
                // The agent's own tree (the servers it started, a load it runs) is ours.
                let others = self.others_from.take().map(|(a, w)| {
                    let b = others::Snapshot::take(&w.pids());
                    others::between(&a, &b, std::process::id() as i32)
                });
                json(Sampled {
                    samples,
                    summary,
                    others,
                })
            }
            Request::PerfSupport => json(bakeoff_probe::perfstat::detect()?),
            Request::ProbesStart {
                id,
                events,
                profile,
                instrument,
            } => self.probes_start(id, &events, profile, instrument),
            Request::ProbesStop => self.probes_stop(),
            Request::Stop { id } => self.stop(id),
            Request::Load(spec) => self.load(&spec, out),
            Request::Cancel => json(()),
        }
    }

    /// Where a stored file lives: `<root>/bin/<sha256>/<name>`.
    fn stored(&self, sha256: &str, name: &str) -> Result<PathBuf, String> {
        let ok = |s: &str, hex: bool| {
            !s.is_empty()
                && s.len() <= 128
                && s.chars().all(|c| {
                    c.is_ascii_hexdigit()
                        || (!hex && (c.is_ascii_alphanumeric() || "-_.".contains(c)))
                })
                && !s.starts_with('.')
        };
        if !ok(sha256, true) || !ok(name, false) {
            return Err(format!("not a store name: {sha256}/{name}"));
        }
        Ok(self.root.join("bin").join(sha256).join(name))
    }

    fn put(&self, sha256: &str, name: &str, data: &str) -> Result<serde_json::Value, String> {
        use base64::Engine;
        let path = self.stored(sha256, name)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("{name}: not base64: {e}"))?;
        let got = bakeoff_build::sha256_hex(&bytes);
        if got != sha256 {
            return Err(format!(
                "{name} arrived damaged: sha256 {got}, sent as {sha256}"
            ));
        }
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        bakeoff_os::file::write_atomic(&path, &bytes)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        json(path.display().to_string())
    }

    /// The stored tar `<sha256>/<name>` unpacked into `<sha256>/<name without .tar>`
    /// (readable by the server's own user when the agent is root).
    fn unpack(&self, sha256: &str, name: &str) -> Result<serde_json::Value, String> {
        let tar = self.stored(sha256, name)?;
        let dir = tar.with_extension("");
        if dir.is_dir() {
            return json(dir.display().to_string());
        }
        let tmp = tar.with_extension(format!("unpacking-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let run = |cmd: &mut std::process::Command| {
            let out = cmd.output().map_err(|e| format!("cannot run it: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
            }
        };
        run(std::process::Command::new("tar")
            .arg("-xf")
            .arg(&tar)
            .arg("-C")
            .arg(&tmp))
        .map_err(|e| format!("tar -xf {}: {e}", tar.display()))?;
        if bakeoff_sandbox::server_user().is_some() {
            use std::os::unix::fs::PermissionsExt;
            run(std::process::Command::new("chmod")
                .args(["-R", "a+rX"])
                .arg(&tmp))
            .map_err(|e| format!("chmod of {}: {e}", tmp.display()))?;
            let bin = self.root.join("bin");
            for d in [&self.root, &bin, &bin.join(sha256)] {
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o711));
            }
        }
        std::fs::rename(&tmp, &dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        json(dir.display().to_string())
    }

    /// Fetches and builds with the host's own tools, cached under the agent's root.
    fn build(
        &self,
        source: &bakeoff_build::SourceSpec,
        spec: &bakeoff_build::BuildSpec,
    ) -> Result<serde_json::Value, String> {
        let cache = bakeoff_build::Cache::new(self.root.join("cache"));
        let tree = bakeoff_build::fetch(source, &cache).map_err(|e| e.to_string())?;
        let tail = |p: &Path| {
            let b = std::fs::read(p).unwrap_or_default();
            String::from_utf8_lossy(&b[b.len().saturating_sub(LOG_TAIL)..]).into_owned()
        };
        match bakeoff_build::build(&tree, spec, &cache) {
            Ok(info) => json(BuiltThere {
                log: tail(&info.log),
                info,
                source: tree.description,
                source_id: tree.id,
            }),
            Err(e) => {
                let lines: Vec<&str> = e.tail().lines().filter(|l| !l.trim().is_empty()).collect();
                let last = lines[lines.len().saturating_sub(8)..].join("\n    ");
                Err(if last.is_empty() {
                    e.to_string()
                } else {
                    format!("{e}\n    {last}")
                })
            }
        }
    }

    /// Where server `id` writes its callgrind files.
    fn callgrind_dir(&self, id: u64) -> PathBuf {
        self.root
            .join("callgrind")
            .join(format!("{}-{id}", std::process::id()))
    }

    fn probes_start(
        &mut self,
        id: u64,
        events: &[String],
        profile: bool,
        instrument: bool,
    ) -> Result<serde_json::Value, String> {
        let pids = self.server(id)?.watch().pids();
        let binary = self.binaries.get(&id).cloned().unwrap_or_default();
        let mut p = Probing::default();
        if instrument {
            p.instrument_error = bakeoff_probe::callgrind::set_instrumentation_all(&pids, true)
                .err()
                .map(|e| format!("callgrind: cannot start counting: {e}"));
            p.instrumented = pids.clone();
        }
        if !events.is_empty() {
            p.counting = Some(
                bakeoff_probe::perfstat::Counting::start(&pids, events).map_err(|e| e.to_string()),
            );
        }
        if profile {
            let dir = self.root.join("profiles");
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let data = dir.join(format!("{}-{id}.perf.data", std::process::id()));
            p.recording = Some(
                bakeoff_probe::profile::Recording::start(&pids, &data)
                    .map(|r| (r, data, binary))
                    .map_err(|e| e.to_string()),
            );
        }
        self.probing = Some(p);
        json(())
    }

    fn probes_stop(&mut self) -> Result<serde_json::Value, String> {
        let mut p = self.probing.take().ok_or("no probes run here")?;
        if !p.instrumented.is_empty() {
            if let Err(e) =
                bakeoff_probe::callgrind::set_instrumentation_all(&p.instrumented, false)
            {
                p.instrument_error
                    .get_or_insert(format!("callgrind: cannot stop counting: {e}"));
            }
        }
        let counts = p
            .counting
            .map(|c| c.and_then(|c| c.stop().map_err(|e| e.to_string())));
        let profile = p.recording.map(|r| {
            let (rec, data, binary) = r?;
            rec.stop().map_err(|e| e.to_string())?;
            let analyzed = bakeoff_probe::profile::analyze(&data, &binary);
            let _ = std::fs::remove_file(&data);
            let _ = std::fs::remove_file(data.with_extension("log"));
            analyzed.map_err(|e| format!("perf script: {e}"))
        });
        json(Probed {
            counts,
            profile,
            instrument_error: p.instrument_error,
        })
    }

    fn server(&mut self, id: u64) -> Result<&mut Sandbox, String> {
        self.servers
            .get_mut(&id)
            .ok_or_else(|| format!("no server {id} here"))
    }

    fn start(&mut self, s: &ServerSpec) -> Result<serde_json::Value, String> {
        let mut spec = SandboxSpec::new(&s.name, s.kind, &s.binary, &self.sandboxes);
        spec.args = s.args.clone();
        spec.options = s.options.clone();
        spec.env = s.env.clone();
        spec.listen = s.listen;
        spec.ready_timeout = Duration::from_millis(s.ready_timeout_ms);
        spec.stop_grace = Duration::from_millis(s.stop_grace_ms);
        spec.wrapper = s.wrapper.clone();
        let id = self.next;
        if s.callgrind {
            let dir = self.callgrind_dir(id);
            let _ = std::fs::remove_dir_all(&dir);
            bakeoff_os::file::create_shared_dir(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            spec.wrapper = bakeoff_probe::callgrind::command_prefix(&dir);
        }
        spec.data = match &s.data {
            Some(DataSource::Copy(p)) => {
                Some(DataSource::Copy(self.data_path(&p.to_string_lossy())?))
            }
            Some(DataSource::InPlace(p)) => {
                Some(DataSource::InPlace(self.data_path(&p.to_string_lossy())?))
            }
            None => None,
        };
        if let Some(d) = spec.data.as_ref().filter(|d| !d.path().is_dir()) {
            return Err(format!(
                "the prepared data {} is not on this host: it went with the agent that made it (the host was lost and connected again)",
                d.path().display()
            ));
        }
        let sb = Sandbox::start(&spec).map_err(|e| e.to_string())?;
        self.next += 1;
        let addr = sb.addr();
        let login = sb.login();
        self.servers.insert(id, sb);
        self.binaries.insert(id, PathBuf::from(&s.binary));
        json(Started { id, addr, login })
    }

    fn stop(&mut self, id: u64) -> Result<serde_json::Value, String> {
        let mut sb = self
            .servers
            .remove(&id)
            .ok_or_else(|| format!("no server {id} here"))?;
        let died = if sb.is_alive() {
            None
        } else {
            Some(sb.exit_detail().unwrap_or_default())
        };
        let logs = self.root.join("logs");
        std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        let base = logs.join(format!("server-{}-{id}", std::process::id()));
        sb.stop_and_collect(&base).map_err(|e| e.to_string())?;
        let tail = |ext: &str| {
            let p = PathBuf::from(format!("{}.{ext}", base.display()));
            let b = std::fs::read(&p).unwrap_or_default();
            let _ = std::fs::remove_file(&p);
            String::from_utf8_lossy(&b[b.len().saturating_sub(LOG_TAIL)..]).into_owned()
        };
        // Under callgrind: its files, written as it stopped, go back whole.
        let dir = self.callgrind_dir(id);
        let mut callgrind = Vec::new();
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                callgrind.push((e.file_name().to_string_lossy().into_owned(), text));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        json(Stopped {
            died,
            stdout: tail("stdout"),
            stderr: tail("stderr"),
            callgrind,
        })
    }

    fn load(&mut self, spec: &LoadSpec, out: &Out) -> Result<serde_json::Value, String> {
        self.cancel.store(false, Ordering::SeqCst);
        let workload =
            bakeoff_workloads::for_agent(&spec.workload, spec.target, spec.preload_only)?;
        let phases = if spec.preload_only {
            bakeoff_engine::Phases {
                warmup: Duration::ZERO,
                measure: bakeoff_engine::Measure::Ops(spec.connections as u64),
            }
        } else {
            spec.phases()
        };
        if let Some(at) = spec.start_at_ms {
            let wait = at - now_ms();
            if wait > 0.0 {
                std::thread::sleep(Duration::from_secs_f64((wait / 1000.0).min(60.0)));
            }
        }
        let db = spec.login.as_ref().and_then(|login| {
            let dialect = bakeoff_sandbox::target_for(spec.target).dialect()?;
            Some(login.db(dialect, spec.server, None))
        });
        let server = Server {
            addr: spec.server,
            socket: None,
            db,
        };
        let hooks = Events {
            out: out.clone(),
            on: spec.events,
            interval: Duration::from_millis(spec.interval_ms.max(10)),
            sampler: Mutex::new(None),
            summary: Mutex::new(None),
        };
        let live = Arc::new(Live::default());
        let ctx = RunContext {
            server: &server,
            connections: spec.connections,
            // A host that only loads gives the load every CPU it has.
            load_cpus: if spec.beside_server {
                bakeoff_os::cpus::unpinned_load_cpus()
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            },
            engine: spec.engine.as_deref(),
            phases: &phases,
            seed: spec.seed,
            round: 0,
            hooks: &hooks,
            live: &live,
            cancel: &self.cancel,
            rate: None,
        };
        let running = AtomicBool::new(true);
        let outcome = std::thread::scope(|scope| {
            // Progress for bakeoff's display, twice a second, until the run is over.
            scope.spawn(|| {
                while running.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(500));
                    let p = Event::Progress {
                        phase: live.phase() as u8,
                        ops: live.measured_ops(),
                    };
                    send(out, &Reply::Event(p));
                }
            });
            let r = workload.run(&ctx);
            running.store(false, Ordering::SeqCst);
            r
        })?;
        let hdr_log = outcome.rec.hdr_log.clone();
        let (samples, system) = match hooks.summary.lock().ok().and_then(|mut s| s.take()) {
            Some((samples, summary)) => (samples, Some(summary)),
            None => (Vec::new(), None),
        };
        json(Loaded {
            rec: outcome.rec,
            hdr_log,
            system,
            samples,
            extra: crate::protocol::extra_fields(outcome.extra),
        })
    }
}

/// The window's edges, sent to bakeoff as they happen (its probes on the server's host
/// start and stop there), with this host's /proc sampler over the window.
struct Events {
    out: Out,
    on: bool,
    interval: Duration,
    sampler: Mutex<Option<Sampler>>,
    summary: Mutex<Option<(Vec<Sample>, Summary)>>,
}

impl PhaseHooks for Events {
    fn measure_started(&self) {
        if let Ok(mut s) = self.sampler.lock() {
            *s = Some(Sampler::start(Box::new(|| (0.0, 0)), self.interval));
        }
        if self.on {
            send(&self.out, &Reply::Event(Event::MeasureStarted));
        }
    }

    fn measure_ended(&self) {
        if self.on {
            send(&self.out, &Reply::Event(Event::MeasureEnded));
        }
        let stopped = self.sampler.lock().ok().and_then(|mut s| s.take());
        if let (Some(s), Ok(mut out)) = (stopped, self.summary.lock()) {
            *out = Some(s.stop());
        }
    }
}
