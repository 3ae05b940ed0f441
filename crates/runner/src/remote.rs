//! Other hosts (`[[host]]`), over OpenSSH: each is reached once before anything is built,
//! with the user's own ssh setup and batch mode (a password prompt fails instead of
//! hanging), and its facts are read. A host that does not answer is bad input, with
//! what ssh said. Running a server or a load there is not built yet: `run` and `verify`
//! say so before they start.

use crate::RunError;
use bakeoff_plan::{key, Host, Loaded};
use std::process::{Command, Stdio};

/// What a host is: one line for `bakeoff check` and the results.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFacts {
    pub name: String,
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
    let out = Command::new("ssh")
        .args(h.ssh_args(identity))
        .arg(FACTS)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run ssh: {e}; install openssh-client"))?;
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
        kernel: lines.next().unwrap_or_default().trim().to_string(),
        cores: lines
            .next()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0),
        cpu: lines.next().unwrap_or_default().trim().to_string(),
    })
}

/// Bad input when the experiment places its server or load on another host: checked and
/// reachable, but not yet run there.
pub fn refuse_placement(l: &Loaded) -> Result<(), RunError> {
    let e = &l.experiment;
    let at = if e.target.host.is_some() {
        Some(key!["target", "host"].to_vec())
    } else {
        e.workloads
            .iter()
            .position(|w| !w.clients.is_empty())
            .map(|i| key!["workload", i, "clients"].to_vec())
    };
    match at {
        Some(at) => Err(RunError::BadInput(
            l.error_at(
                &at,
                "running the server or the load on another host is not built yet: `bakeoff check` reaches the hosts; remove host and clients to run here",
            )
            .to_string(),
        )),
        None => Ok(()),
    }
}
