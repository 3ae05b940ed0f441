//! Other hosts (`[[host]]`), over OpenSSH: each is reached once before anything is built,
//! with the user's own ssh setup and batch mode (a password prompt fails instead of
//! hanging), and its facts are read. A host that does not answer is bad input, with
//! what ssh said. Then [`Hosts::connect`] starts an agent on each host the experiment
//! places something on (`session.rs`), built servers are copied there and the server
//! and the load run there (`served.rs`).

mod data;
mod served;
mod session;

pub use served::RemoteServer;
pub use session::{reap_stale_sockets, CallError};

use crate::error::RunError;
use crate::observer::Observer;
use bakeoff_agent::protocol::{Event, Request};
use bakeoff_plan::{key, Host, Loaded};
use session::Session;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// What a host is: one line for `bakeoff check` and the results.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFacts {
    pub name: String,
    /// The ssh command line that reached it, as a shell would take it.
    pub command: String,
    pub kernel: String,
    pub cores: usize,
    pub cpu: String,
}

impl std::fmt::Display for HostFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "host {}: {} cores ({}), {}",
            self.name,
            self.cores,
            if self.cpu.is_empty() {
                "cpu unknown"
            } else {
                &self.cpu
            },
            self.kernel
        )
    }
}

/// The fixed command a host runs to describe itself (nothing of the experiment's text
/// reaches the remote shell).
const FACTS: &str =
    "uname -srm; nproc; sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1";

/// `w` as one shell word: as is when plain, else in single quotes.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Every declared host reached and described, in file order; the first that does not
/// answer is bad input at its table.
pub fn reach(l: &Loaded) -> Result<Vec<HostFacts>, RunError> {
    let mut out = Vec::new();
    for (i, h) in l.experiment.hosts.iter().enumerate() {
        let facts = facts(l, h)
            .map_err(|m| RunError::BadInput(l.error_at(&key!["host", i, "ssh"], m).to_string()))?;
        out.push(facts);
    }
    Ok(out)
}

fn facts(l: &Loaded, h: &Host) -> Result<HostFacts, String> {
    let identity = h.identity.as_deref().map(|p| l.resolve(p));
    let args = h.ssh_args(identity);
    let command = std::iter::once("ssh")
        .chain(args.iter().map(String::as_str))
        .chain([FACTS])
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ");
    let mut ssh = Command::new("ssh");
    ssh.args(&args).arg(FACTS).stdin(Stdio::null());
    let limit = h.connect_deadline();
    let out = session::output_within(ssh, limit)
        .map_err(|e| format!("cannot run ssh: {e}; install openssh-client"))?
        .ok_or_else(|| {
            format!(
                "host {} ({}) did not answer within {} s; check that `ssh {} true` returns",
                h.name,
                h.ssh,
                limit.as_secs(),
                h.ssh
            )
        })?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said
            .lines()
            .rev()
            .find(|x| !x.trim().is_empty() && !x.starts_with("Warning: Permanently added"))
            .unwrap_or("no message")
            .trim()
            .to_string();
        return Err(format!(
            "host {} ({}) does not answer: ssh said: {said}; check that `ssh {} true` works without a password",
            h.name, h.ssh, h.ssh
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    Ok(HostFacts {
        name: h.name.clone(),
        command,
        kernel: lines.next().unwrap_or_default().trim().to_string(),
        cores: lines
            .next()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0),
        cpu: lines.next().unwrap_or_default().trim().to_string(),
    })
}

/// The hosts as results.json keeps them: facts, roles, and a listen address that is
/// not loopback (said in the report).
pub fn records(l: &Loaded, facts: &[HostFacts]) -> Vec<bakeoff_report::model::HostRecord> {
    let e = &l.experiment;
    e.hosts
        .iter()
        .zip(facts)
        .map(|(h, f)| {
            let mut roles = Vec::new();
            let name = Some(h.name.as_str());
            if e.target.host.as_deref() == name
                || e.variants.iter().any(|v| v.host.as_deref() == name)
            {
                roles.push("server".to_string());
            }
            let loads = e.workloads.iter().any(|w| w.clients.contains(&h.name))
                || e.variants.iter().any(|v| {
                    e.workloads
                        .iter()
                        .any(|w| e.load_hosts(&v.name, &w.display_name()).contains(&h.name))
                });
            if loads {
                roles.push("load".to_string());
            }
            bakeoff_report::model::HostRecord {
                name: h.name.clone(),
                ssh: h.ssh.clone(),
                cpu_model: f.cpu.clone(),
                cores: f.cores,
                kernel: f.kernel.clone(),
                roles,
                listen: h.listen.map(|a| a.to_string()),
                machine: Default::default(),
            }
        })
        .collect()
}

/// What an agent is there for: a host that serves and loads has one of each, over the
/// same ssh connection, so a load never waits for the server's probes or the reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Server,
    Load,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Load => "load",
        }
    }
}

/// How long a lost host has to answer again before the experiment stops.
const RECONNECT: std::time::Duration = std::time::Duration::from_secs(10);

/// The agents of an experiment (none when everything runs here).
#[derive(Default)]
pub struct Hosts {
    hosts: BTreeMap<String, (Host, Option<PathBuf>)>,
    sessions: BTreeMap<(String, Role), Mutex<Option<Arc<Session>>>>,
    /// This binary and its sha256 (what the hosts run as the agent).
    exe: Option<(PathBuf, String)>,
    /// The hosts lost that did not come back, each with why, the first first: the
    /// experiment stops, and a later call to one of them fails at once (its reconnect
    /// wait already spent).
    gone: Mutex<Vec<(String, String)>>,
    /// Built binaries already on a server's host: (host, local path) to its path there.
    staged: Mutex<HashMap<(String, PathBuf), String>>,
    /// The host that serves (`[target] host`, or the one `host` every variant names),
    /// if not this machine. A variant with a `host` of its own serves there
    /// ([`bakeoff_plan::Experiment::server_host`]).
    pub server: Option<String>,
    /// Each host's machine facts, asked of its first agent once.
    machines: BTreeMap<String, bakeoff_report::model::Machine>,
}

impl Hosts {
    /// Starts an agent for every role the experiment gives a host.
    pub fn connect(l: &Loaded, observer: &dyn Observer) -> Result<Hosts, RunError> {
        let e = &l.experiment;
        let mut want = Vec::new();
        if let Some(h) = &e.target.host {
            want.push((h.clone(), Role::Server));
        }
        for v in &e.variants {
            if let Some(h) = &v.host {
                if !want.contains(&(h.clone(), Role::Server)) {
                    want.push((h.clone(), Role::Server));
                }
            }
        }
        for w in &e.workloads {
            let mut load: Vec<String> = w.clients.clone();
            if !w.train_only {
                for v in &e.variants {
                    load.extend(e.load_hosts(&v.name, &w.display_name()));
                }
            }
            for c in load {
                if !want.contains(&(c.clone(), Role::Load)) {
                    want.push((c, Role::Load));
                }
            }
        }
        // Every variant on one host of their own: that host serves (a SQL target's data
        // is made there).
        let mut placed: Vec<Option<&str>> =
            e.variants.iter().map(|v| e.server_host(&v.name)).collect();
        placed.dedup();
        let server = match placed[..] {
            [Some(h)] => Some(h.to_string()),
            _ => e.target.host.clone(),
        };
        let mut hosts = Hosts {
            server,
            ..Hosts::default()
        };
        if want.is_empty() {
            return Ok(hosts);
        }
        let exe = std::env::current_exe()
            .and_then(|p| std::fs::read(&p).map(|b| (p, b)))
            .map_err(|e| RunError::Failed(format!("cannot read bakeoff's own binary: {e}")))?;
        let exe = (exe.0, bakeoff_build::sha256_hex(&exe.1));
        for h in &e.hosts {
            let identity = h.identity.as_deref().map(|p| l.resolve(p));
            hosts.hosts.insert(h.name.clone(), (h.clone(), identity));
        }
        for (name, role) in want {
            observer.notice(&format!(
                "host {name}: starting the {} agent",
                role.as_str()
            ));
            let (h, identity) = &hosts.hosts[&name];
            // A host that answers ssh but cannot run bakeoff (no space, noexec, another
            // CPU) is as unusable as one that does not answer: bad input at its table.
            let s = Session::connect(h, identity.clone(), &exe, role.as_str()).map_err(|m| {
                let i = e.hosts.iter().position(|x| x.name == name).unwrap_or(0);
                RunError::BadInput(l.error_at(&key!["host", i, "work_dir"], m).to_string())
            })?;
            if !hosts.machines.contains_key(&name) {
                // Facts, not a condition of the run: an agent that cannot say them
                // leaves the host's column empty.
                match s.call_as(&Request::Machine, &mut |_| {}) {
                    Ok(m) => {
                        hosts.machines.insert(name.clone(), m);
                    }
                    Err(e) => observer.notice(&format!(
                        "host {name}: its machine facts were not read: {e}"
                    )),
                }
            }
            hosts
                .sessions
                .insert((name, role), Mutex::new(Some(Arc::new(s))));
        }
        hosts.exe = Some(exe);
        Ok(hosts)
    }

    /// Each host's machine facts into its record (hosts without an agent have none).
    pub fn machines_into(&self, records: &mut [bakeoff_report::model::HostRecord]) {
        for r in records {
            if let Some(m) = self.machines.get(&r.name) {
                r.machine = m.clone();
            }
        }
    }

    /// Why the experiment must stop, if a host was lost for good.
    pub fn gone(&self) -> Option<String> {
        self.gone
            .lock()
            .ok()
            .and_then(|g| g.first().map(|(_, why)| why.clone()))
    }

    /// The agent for `host` in `role`, connected again if it was lost (a host that does
    /// not answer then is gone for good).
    fn session(&self, host: &str, role: Role) -> Result<Arc<Session>, CallError> {
        let slot = self
            .sessions
            .get(&(host.to_string(), role))
            .ok_or_else(|| CallError::Failed(format!("no agent on host {host}")))?;
        let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = s.as_ref() {
            return Ok(s.clone());
        }
        // Gone for good (its other role's agent already waited for it): no second wait.
        if let Some((_, why)) = self
            .gone
            .lock()
            .ok()
            .and_then(|g| g.iter().find(|(h, _)| h == host).cloned())
        {
            return Err(CallError::Lost(why));
        }
        let (h, identity) = &self.hosts[host];
        let exe = self
            .exe
            .as_ref()
            .ok_or_else(|| CallError::Failed("no agent".into()))?;
        // A host that went away briefly (a reboot of sshd, a network blip) is given a few
        // seconds to come back before the experiment stops.
        let deadline = std::time::Instant::now() + RECONNECT;
        loop {
            match Session::connect(h, identity.clone(), exe, role.as_str()) {
                Ok(new) => {
                    let new = Arc::new(new);
                    *s = Some(new.clone());
                    return Ok(new);
                }
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                }
                Err(e) => {
                    let why = format!(
                        "host {host} was lost mid-run and did not come back within {} s: {e}",
                        RECONNECT.as_secs()
                    );
                    if let Ok(mut g) = self.gone.lock() {
                        if !g.iter().any(|(h, _)| h == host) {
                            g.push((host.to_string(), why.clone()));
                        }
                    }
                    return Err(CallError::Lost(why));
                }
            }
        }
    }

    /// One request to `host`'s agent in `role`. A lost connection is dropped, to be made
    /// again by the next request.
    pub fn call(
        &self,
        host: &str,
        role: Role,
        req: &Request,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<serde_json::Value, CallError> {
        let s = self.session(host, role)?;
        let r = s.call(req, on_event);
        if matches!(r, Err(CallError::Lost(_))) {
            if let Some(slot) = self.sessions.get(&(host.to_string(), role)) {
                let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
                if slot.as_ref().is_some_and(|x| Arc::ptr_eq(x, &s)) {
                    *slot = None;
                }
            }
        }
        r
    }

    /// [`Hosts::call`] with the answer read as `T`.
    pub fn call_as<T: serde::de::DeserializeOwned>(
        &self,
        host: &str,
        role: Role,
        req: &Request,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<T, CallError> {
        let v = self.call(host, role, req, on_event)?;
        serde_json::from_value(v).map_err(|e| CallError::Failed(format!("a bad answer: {e}")))
    }

    /// Sends without waiting for an answer (a cancel), if the agent is connected.
    fn post(&self, host: &str, role: Role, req: &Request) {
        let s = self
            .sessions
            .get(&(host.to_string(), role))
            .and_then(|slot| slot.lock().ok().and_then(|s| s.clone()));
        if let Some(s) = s {
            s.post(req);
        }
    }

    /// The `[[host]]` table of `name`.
    fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.get(name).map(|(h, _)| h)
    }
}
