//! The server on its host and the load from others, through their agents: built
//! binaries copied to the server's host before the first run (checked there by hash),
//! installed ones looked up there; each run's server started, watched and stopped there;
//! a kv load split across the client hosts, started at one instant on every host's own
//! clock, its records merged from their histograms.

use super::{CallError, Hosts, Role};
use crate::observer::Observer;
use crate::probes::{RemoteProbes, ServerWatch};
use crate::ready::ReadyVariant;
use bakeoff_agent::protocol::{
    self, BuiltThere, Event, Installed, LoadSpec, Request, ServerSpec, Started, Stopped,
};
use bakeoff_engine::{Live, Phase, PhaseHooks};
use bakeoff_plan::Loaded;
use bakeoff_report::model::{ClientRecord, Results, SourceRecord};
use bakeoff_sandbox::{SandboxSpec, Usage};
use bakeoff_workloads::{AgentSpec, Outcome};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A server running on another host.
pub struct RemoteServer {
    hosts: Arc<Hosts>,
    host: String,
    id: u64,
    pub addr: SocketAddr,
    kind: bakeoff_plan::TargetKind,
    /// A SQL server's login.
    login: Option<bakeoff_sandbox::Login>,
}

/// How far ahead of now the hosts' common start is set: time for every host to get its
/// request (ssh round trips are milliseconds; this leaves room for a slow one).
const START_AHEAD_MS: f64 = 300.0;

impl Hosts {
    /// Copies every built binary of `variants` to the server's host (once per hash) and
    /// checks that installed ones exist there; a variant that cannot run there fails with
    /// the host's message.
    pub fn stage(
        &self,
        l: &Loaded,
        variants: &mut Vec<ReadyVariant>,
        results: &mut Results,
        observer: &dyn Observer,
    ) {
        // The A/A variant runs the baseline's binary: staged as the baseline is.
        let aa = l.experiment.aa_variant();
        variants.retain(|v| {
            // Each variant on its server's host: its own `host`, or `[target] host`.
            let Some(host) = l.experiment.server_host(&v.name).map(str::to_string) else {
                return true;
            };
            let name = match &aa {
                Some(aa) if *aa == v.name => l.experiment.baseline(),
                _ => v.name.as_str(),
            };
            let built = l
                .experiment
                .variants
                .iter()
                .find(|p| p.name == name)
                .is_none_or(|p| p.is_build());
            let mut binaries: Vec<&Path> = v.layouts.iter().map(|b| b.binary.as_path()).collect();
            if binaries.is_empty() {
                binaries.push(&v.binary);
            }
            // A build made on the host is there already.
            let there = |b: &Path| {
                self.staged
                    .lock()
                    .is_ok_and(|s| s.contains_key(&(host.clone(), b.to_path_buf())))
            };
            let staged = binaries.iter().try_for_each(|b| {
                match (built, there(b)) {
                    (true, false) => self.put(&host, v.kind, b)?,
                    (true, true) => {}
                    // Described there already (`variants`): it is installed.
                    (false, _) => {}
                }
                // A SQL server starts only on data, made there next: that is its try.
                if v.kind.is_sql() {
                    return Ok(());
                }
                self.try_start(l, v, &host, b)
            });
            match staged {
                Ok(()) => true,
                Err(e) => {
                    observer.notice(&format!("variant {} failed: {e}", v.name));
                    let r = &mut results.variants[v.record];
                    r.status = "failed".into();
                    r.error = Some(e);
                    false
                }
            }
        });
    }

    /// Builds `spec` on the server's host from `source` as that host fetches it: what it
    /// produced (its paths are the host's), the build log, and the source as the host
    /// fetched it.
    pub fn build(
        &self,
        source: &bakeoff_build::SourceSpec,
        spec: &bakeoff_build::BuildSpec,
    ) -> Result<(bakeoff_build::BuildInfo, String, SourceRecord), String> {
        let host = self.server.clone().ok_or("no server host")?;
        let built: BuiltThere = self
            .call_as(
                &host,
                Role::Server,
                &Request::Build {
                    source: source.clone(),
                    spec: spec.clone(),
                },
                &mut |_| {},
            )
            .map_err(|e| format!("building on host {host}: {e}"))?;
        if let Ok(mut s) = self.staged.lock() {
            // Already there: nothing to copy.
            s.insert(
                (host.clone(), built.info.binary.clone()),
                built.info.binary.display().to_string(),
            );
        }
        let log = format!(
            "# built on host {host} from {}\n{}",
            built.source, built.log
        );
        let source = SourceRecord {
            description: format!("{} (fetched on host {host})", built.source),
            id: built.source_id,
        };
        Ok((built.info, log, source))
    }

    /// Copies `binary` into the host's store unless it is there already. A SQL server
    /// built here needs its whole install tree (libraries, share files, initdb): the
    /// tree travels as one tar, stored by its hash and unpacked there once.
    fn put(&self, host: &str, kind: bakeoff_plan::TargetKind, binary: &Path) -> Result<(), String> {
        let tree = install_tree(binary).filter(|_| kind.is_sql());
        let path = match tree {
            Some(tree) => {
                let out = std::process::Command::new("tar")
                    .args(["--sort=name", "-cf", "-", "-C"])
                    .arg(tree)
                    .arg(".")
                    .output()
                    .map_err(|e| format!("cannot run tar: {e}"))?;
                if !out.status.success() {
                    return Err(format!(
                        "tar of {} failed: {}",
                        tree.display(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
                let (sha256, _) = self.store(host, &out.stdout, "install.tar", tree)?;
                let dir: String = self
                    .call_as(
                        host,
                        Role::Server,
                        &Request::Unpack {
                            sha256,
                            name: "install.tar".into(),
                        },
                        &mut |_| {},
                    )
                    .map_err(|e| format!("host {host}: unpacking {}: {e}", tree.display()))?;
                let inside = binary.strip_prefix(tree).unwrap_or(binary);
                Path::new(&dir).join(inside).display().to_string()
            }
            None => {
                let bytes =
                    std::fs::read(binary).map_err(|e| format!("{}: {e}", binary.display()))?;
                let name = binary
                    .file_name()
                    .map_or_else(|| "server".into(), |n| n.to_string_lossy().into_owned());
                self.store(host, &bytes, &bakeoff_os::path::safe_name(&name), binary)?
                    .1
            }
        };
        if let Ok(mut s) = self.staged.lock() {
            s.insert((host.to_string(), binary.to_path_buf()), path);
        }
        Ok(())
    }

    /// `bytes` in the host's store as `name` (sent only when not there already): their
    /// sha256 and their path there.
    fn store(
        &self,
        host: &str,
        bytes: &[u8],
        name: &str,
        what: &Path,
    ) -> Result<(String, String), String> {
        use base64::Engine;
        let sha256 = bakeoff_build::sha256_hex(bytes);
        let have: Option<String> = self
            .call_as(
                host,
                Role::Server,
                &Request::Have {
                    sha256: sha256.clone(),
                    name: name.to_string(),
                },
                &mut |_| {},
            )
            .map_err(|e| format!("host {host}: {e}"))?;
        let path = match have {
            Some(p) => p,
            None => self
                .call_as(
                    host,
                    Role::Server,
                    &Request::Put {
                        sha256: sha256.clone(),
                        name: name.to_string(),
                        data: base64::engine::general_purpose::STANDARD.encode(bytes),
                    },
                    &mut |_| {},
                )
                .map_err(|e| format!("host {host}: copying {}: {e}", what.display()))?,
        };
        Ok((sha256, path))
    }

    /// An installed server on `host` (where its variant serves): its size and sha256
    /// there.
    pub fn describe(&self, host: &str, binary: &Path) -> Result<(u64, String), String> {
        let found: Option<Installed> = self
            .call_as(
                host,
                Role::Server,
                &Request::Which {
                    program: binary.display().to_string(),
                },
                &mut |_| {},
            )
            .map_err(|e| format!("host {host}: {e}"))?;
        match found {
            Some(i) => Ok((i.bytes, i.sha256)),
            None => Err(format!(
                "{} is not installed on host {host}: install it there, or build the variant (bakeoff copies builds)",
                binary.display()
            )),
        }
    }

    /// Starts and stops `binary` once on the server's host: a binary that does not run
    /// there (another libc, another CPU) fails its variant with the host's message
    /// before any run.
    fn try_start(
        &self,
        l: &Loaded,
        v: &ReadyVariant,
        host: &str,
        binary: &Path,
    ) -> Result<(), String> {
        let _ = l;
        let kind = v.kind;
        let target = bakeoff_sandbox::target_for(kind);
        let mut spec = SandboxSpec::new(format!("{}-try", v.name), kind, binary, "");
        spec.args = v.args.clone();
        spec.options = v.options.clone();
        spec.ready_timeout = target.ready_timeout();
        spec.stop_grace = target.stop_grace();
        let started: Started = self
            .call_as(
                host,
                Role::Server,
                &self.start_request(host, &spec),
                &mut |_| {},
            )
            .map_err(|e| format!("it does not start on host {host}: {e}"))?;
        let _: Stopped = self
            .call_as(
                host,
                Role::Server,
                &Request::Stop { id: started.id },
                &mut |_| {},
            )
            .map_err(|e| format!("host {host}: {e}"))?;
        Ok(())
    }

    /// Which perf stat events count on `host` (one that serves).
    pub fn perf_support(&self, host: &str) -> Result<bakeoff_probe::perfstat::Support, String> {
        self.call_as(host, Role::Server, &Request::PerfSupport, &mut |_| {})
            .map_err(|e| format!("host {host}: {e}"))
    }

    /// Where `binary` (a path here) is on `host`: its copy in the store, or the same
    /// path (an installed program, a build made there).
    pub(crate) fn path_there(&self, host: &str, binary: &Path) -> String {
        self.staged
            .lock()
            .ok()
            .and_then(|s| s.get(&(host.to_string(), binary.to_path_buf())).cloned())
            .unwrap_or_else(|| binary.display().to_string())
    }

    /// The agent's request for `spec`, a server described as it would run here.
    fn start_request(&self, host: &str, spec: &SandboxSpec) -> Request {
        let binary = self.path_there(host, &spec.binary);
        let listen = self
            .host(host)
            .and_then(|h| h.listen)
            .unwrap_or(bakeoff_sandbox::LOOPBACK);
        Request::Start(ServerSpec {
            name: spec.name.clone(),
            kind: spec.kind,
            binary,
            args: spec.args.clone(),
            options: spec.options.clone(),
            env: spec.env.clone(),
            listen,
            ready_timeout_ms: spec.ready_timeout.as_millis() as u64,
            stop_grace_ms: spec.stop_grace.as_millis() as u64,
            data: spec.data.clone(),
            // Callgrind's files go to a dir of the agent's; memcheck's wrapper has no path.
            callgrind: bakeoff_probe::callgrind::is_prefix(&spec.wrapper),
            wrapper: if bakeoff_probe::callgrind::is_prefix(&spec.wrapper) {
                Vec::new()
            } else {
                spec.wrapper.clone()
            },
        })
    }

    /// Starts the run's server on the server's host (`[target] host`), as `spec`
    /// describes it here.
    pub fn start(self: &Arc<Self>, spec: &SandboxSpec) -> Result<RemoteServer, String> {
        let host = self.server.clone().ok_or("no server host")?;
        self.start_on(&host, spec)
    }

    /// Starts the run's server on `host`, as `spec` describes it here.
    pub fn start_on(
        self: &Arc<Self>,
        host: &str,
        spec: &SandboxSpec,
    ) -> Result<RemoteServer, String> {
        let host = host.to_string();
        let req = self.start_request(&host, spec);
        let started: Started = self
            .call_as(&host, Role::Server, &req, &mut |_| {})
            .map_err(|e| format!("on host {host}: {e}"))?;
        let mut addr = started.addr;
        if addr.ip().is_unspecified() {
            // Listening on every address: the clients reach it at the host's own name.
            addr = SocketAddr::new(self.address_of(&host)?, addr.port());
        }
        Ok(RemoteServer {
            hosts: self.clone(),
            host,
            id: started.id,
            addr,
            kind: spec.kind,
            login: started.login,
        })
    }

    /// The address ssh reaches `host` at (ssh -G resolves aliases from ~/.ssh/config).
    fn address_of(&self, host: &str) -> Result<std::net::IpAddr, String> {
        let h = self.host(host).ok_or("unknown host")?;
        let mut ssh = std::process::Command::new("ssh");
        ssh.arg("-G")
            .args(h.ssh_args(None))
            .stdin(std::process::Stdio::null());
        // ssh -G only reads its configuration; its deadline is the connect deadline all
        // the same (a configuration can make it wait).
        let out = super::session::output_within(ssh, h.connect_deadline())
            .map_err(|e| format!("cannot run ssh -G: {e}"))?
            .ok_or_else(|| format!("ssh -G for host {host} did not finish"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("hostname "))
            .unwrap_or_default()
            .trim()
            .to_string();
        use std::net::ToSocketAddrs;
        (name.as_str(), 0)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .map(|a| a.ip())
            .ok_or_else(|| format!("cannot resolve host {host}'s address {name:?}"))
    }

    /// A load from `clients` against the server on host `server` as `spec` describes it (its server, its connections in all,
    /// its phases and seed): connections split between the hosts (the first hosts get
    /// one more when they do not divide evenly), the preload done once by the first,
    /// every host started at the same instant, the first host's window edges calling
    /// `hooks`, the records merged.
    pub fn load(
        &self,
        (server, clients): (Option<&str>, &[String]),
        workload: &AgentSpec,
        mut spec: LoadSpec,
        hooks: &dyn PhaseHooks,
        live: &Live,
        cancel: &AtomicBool,
    ) -> Result<Outcome, String> {
        let connections = spec.connections;
        let seed = spec.seed;
        let n = clients.len().min(connections).max(1);
        let shares: Vec<(String, usize)> = (0..n)
            .map(|i| {
                (
                    clients[i].clone(),
                    connections / n + usize::from(i < connections % n),
                )
            })
            .collect();
        spec.workload = workload.spec.clone();
        spec.connections = shares[0].1;
        spec.preload_only = true;
        spec.start_at_ms = None;
        spec.events = false;
        let lost = |host: &str, e: CallError| format!("the load on host {host} failed: {e}");
        if workload.preloads {
            self.call(
                &shares[0].0,
                Role::Load,
                &Request::Load(spec.clone()),
                &mut |_| {},
            )
            .map_err(|e| lost(&shares[0].0, e))?;
        }
        spec.preload_only = false;
        let mut offsets = Vec::new();
        for (host, _) in &shares {
            offsets.push(self.offset(host).map_err(|e| lost(host, e))?);
        }
        let start = protocol::now_ms() + START_AHEAD_MS;
        let progress = Progress::new(shares.len(), live);
        let done = AtomicBool::new(false);
        let results: Vec<Result<protocol::Loaded, String>> = std::thread::scope(|scope| {
            let watch = scope.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if cancel.load(Ordering::SeqCst) {
                        for (host, _) in &shares {
                            self.post(host, Role::Load, &Request::Cancel);
                        }
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            let handles: Vec<_> = shares
                .iter()
                .enumerate()
                .map(|(i, (host, c))| {
                    let mut s = spec.clone();
                    s.connections = *c;
                    s.beside_server = server == Some(host.as_str());
                    s.seed = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    s.start_at_ms = Some(start + offsets[i]);
                    s.events = i == 0;
                    let progress = &progress;
                    scope.spawn(move || {
                        let mut on_event = |e: Event| match e {
                            Event::MeasureStarted => hooks.measure_started(),
                            Event::MeasureEnded => hooks.measure_ended(),
                            Event::Progress { phase, ops } => progress.update(i, phase, ops),
                        };
                        self.call_as::<protocol::Loaded>(
                            host,
                            Role::Load,
                            &Request::Load(s),
                            &mut on_event,
                        )
                        .map_err(|e| lost(host, e))
                    })
                })
                .collect();
            let out = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a load thread panicked".into()))
                })
                .collect();
            done.store(true, Ordering::SeqCst);
            let _ = watch.join();
            out
        });
        let mut records = Vec::new();
        let mut per_host = Vec::new();
        let mut extra = None;
        for (r, (host, c)) in results.into_iter().zip(&shares) {
            let mut got = r?;
            // What the workload adds to a run comes from the first host (the same server
            // seen from every host).
            extra.get_or_insert(std::mem::take(&mut got.extra));
            got.rec.hdr_log = got.hdr_log;
            let sys = got.system.unwrap_or_default();
            per_host.push(ClientRecord {
                host: host.clone(),
                connections: *c,
                ops: got.rec.ops,
                ops_per_s: got.rec.ops_per_s,
                client_cpu_s: got.rec.client_cpu_s,
                client_bound: got.rec.client_bound,
                cpu_user_pct: sys.cpu_user_pct,
                cpu_system_pct: sys.cpu_system_pct,
                cpu_softirq_pct: sys.cpu_softirq_pct,
                cpu_idle_pct: sys.cpu_idle_pct,
                interval_ops_per_s: got.rec.intervals.iter().map(|i| i.ops_per_s).collect(),
                cpu_series: crate::probes::cpu_series(&got.samples),
            });
            records.push(got.rec);
        }
        let merged = bakeoff_engine::merge_records(&records);
        Ok(Outcome {
            rec: merged,
            extra: Box::new(move |run| {
                protocol::apply_fields(run, extra.unwrap_or_default());
                run.clients = per_host;
            }),
        })
    }

    /// The host's clock minus this machine's, in ms, from one round trip (its midpoint).
    fn offset(&self, host: &str) -> Result<f64, CallError> {
        let t0 = protocol::now_ms();
        let there: f64 = self.call_as(host, Role::Load, &Request::Clock, &mut |_| {})?;
        let t1 = protocol::now_ms();
        Ok(there - (t0 + t1) / 2.0)
    }
}

/// The install tree a build's binary sits in (`<tree>/bin/<server>`, the tree named
/// `install`), if it does.
fn install_tree(binary: &Path) -> Option<&Path> {
    let tree = binary.parent()?.parent()?;
    (tree.file_name()? == "install").then_some(tree)
}

impl RemoteServer {
    /// Its CPU, memory and host's system, as its agent measures them.
    pub fn watch(&self) -> ServerWatch {
        ServerWatch::Remote(Arc::new(Watched {
            hosts: self.hosts.clone(),
            host: self.host.clone(),
            id: self.id,
        }))
    }

    /// Stops it; its logs are written beside `logs` (`.stdout`, `.stderr`) here. Returns
    /// why it was no longer running before the stop, if it was not.
    /// Under callgrind, its files are written into `callgrind` here.
    pub fn stop_and_collect(self, logs: &Path, callgrind: &Path) -> Result<Option<String>, String> {
        let stopped = self.stopped()?;
        if let Some(dir) = logs.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = |ext: &str| format!("{}.{ext}", logs.display());
        let _ = std::fs::write(file("stdout"), stopped.stdout);
        let _ = std::fs::write(file("stderr"), stopped.stderr);
        for (name, text) in stopped.callgrind {
            let name = bakeoff_os::path::safe_name(&name);
            let _ = std::fs::create_dir_all(callgrind);
            let _ = std::fs::write(callgrind.join(name), text);
        }
        Ok(stopped.died)
    }

    /// Stops it, its logs dropped; why it had ended before, if it had.
    pub fn stop_quietly(self) -> Result<Option<String>, String> {
        Ok(self.stopped()?.died)
    }

    fn stopped(self) -> Result<Stopped, String> {
        self.hosts
            .call_as(
                &self.host,
                Role::Server,
                &Request::Stop { id: self.id },
                &mut |_| {},
            )
            .map_err(|e| format!("on host {}: {e}", self.host))
    }

    /// A SQL server's login.
    pub fn login(&self) -> Option<bakeoff_sandbox::Login> {
        self.login.clone()
    }

    /// What a SQL client connects to: its address as reached from here, its login.
    pub fn db(&self) -> Option<bakeoff_sqlclient::Db> {
        let dialect = bakeoff_sandbox::target_for(self.kind).dialect()?;
        Some(self.login.as_ref()?.db(dialect, self.addr, None))
    }

    pub fn host(&self) -> &str {
        &self.host
    }
}

/// A server on another host, as the probes see it.
struct Watched {
    hosts: Arc<Hosts>,
    host: String,
    id: u64,
}

impl Watched {
    fn ask<T: serde::de::DeserializeOwned>(&self, req: &Request) -> Result<T, String> {
        self.hosts
            .call_as(&self.host, Role::Server, req, &mut |_| {})
            .map_err(|e| e.to_string())
    }
}

impl RemoteProbes for Watched {
    fn usage(&self) -> Usage {
        self.ask(&Request::Usage { id: self.id })
            .unwrap_or_default()
    }

    fn start_sampler(&self, interval: Duration) -> Result<(), String> {
        self.ask(&Request::SamplerStart {
            id: self.id,
            interval_ms: interval.as_millis() as u64,
        })
    }

    fn stop_sampler(&self) -> Result<protocol::Sampled, String> {
        self.ask(&Request::SamplerStop)
    }

    fn start_perf(&self, events: &[String], profile: bool, instrument: bool) -> Result<(), String> {
        self.ask(&Request::ProbesStart {
            id: self.id,
            events: events.to_vec(),
            profile,
            instrument,
        })
    }

    fn stop_perf(&self) -> Result<protocol::Probed, String> {
        self.ask(&Request::ProbesStop)
    }
}

/// The hosts' progress events, summed into the run's live figures for the display.
struct Progress<'a> {
    live: &'a Live,
    per_host: std::sync::Mutex<Vec<(u8, u64)>>,
    measuring_since: std::sync::OnceLock<std::time::Instant>,
}

impl<'a> Progress<'a> {
    fn new(hosts: usize, live: &'a Live) -> Self {
        Progress {
            live,
            per_host: std::sync::Mutex::new(vec![(0, 0); hosts]),
            measuring_since: std::sync::OnceLock::new(),
        }
    }

    fn update(&self, host: usize, phase: u8, ops: u64) {
        let Ok(mut all) = self.per_host.lock() else {
            return;
        };
        if let Some(slot) = all.get_mut(host) {
            *slot = (phase, ops);
        }
        // The run is in the earliest phase any host is in.
        let phase = Phase::from_u8(all.iter().map(|x| x.0).min().unwrap_or(0));
        self.live.set_phase(phase);
        if phase == Phase::Measure {
            let since = self.measuring_since.get_or_init(std::time::Instant::now);
            self.live.set_measure_start(1);
            let total: u64 = all.iter().map(|x| x.1).sum();
            self.live
                .set_progress(total, 1 + since.elapsed().as_nanos() as u64);
        }
    }
}
