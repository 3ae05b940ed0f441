//! Where the server and the load run on this machine. `[plan] cpus` names CPU lists; by
//! default, on machines with enough CPUs ([`bakeoff_os::cpus::SPLIT_FROM`]), whole cores
//! are split in two halves, the server's first, so that a busy load never takes the
//! server's CPUs (nor the server the load's). On smaller machines neither is pinned, as
//! before. Nothing is pinned when the server runs on another host or the load comes from
//! other hosts, unless the experiment says so.
//!
//! The load is pinned by pinning this whole process for the measured rounds (its load
//! threads, the sampler, sysbench and the other tools it starts inherit it); each server
//! is pinned to its set as it starts.

use bakeoff_os::cpus::{self, CpuSet};
use bakeoff_plan::{key, Loaded};

use crate::error::RunError;

/// The CPU sets of one experiment on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub server: CpuSet,
    pub load: CpuSet,
    /// Whether the experiment named them (`[plan] cpus`) or bakeoff split the machine.
    pub asked: bool,
}

/// The experiment's placement on this machine, or None (nothing pinned). A CPU this
/// process may not use, or a side left with none, is bad input at `[plan] cpus`.
pub fn resolve(l: &Loaded) -> Result<Option<Placement>, RunError> {
    let e = &l.experiment;
    let allowed = CpuSet::allowed().map_err(|err| {
        RunError::Failed(format!("cannot read this process's CPU affinity: {err}"))
    })?;
    let Some(c) = &e.plan.cpus else {
        let elsewhere = e.target.host.is_some()
            || e.hosts_as_variants()
            || e.workloads.iter().any(|w| !w.clients.is_empty());
        if elsewhere {
            return Ok(None);
        }
        return Ok(cpus::split(&allowed).map(|(server, load)| Placement {
            server,
            load,
            asked: false,
        }));
    };
    let bad = |side: &'static str, m: String| {
        RunError::BadInput(l.error_at(&key!["plan", "cpus", side], m).to_string())
    };
    let parse = |side: &'static str, text: &Option<String>| -> Result<Option<CpuSet>, RunError> {
        let Some(text) = text else { return Ok(None) };
        let set = CpuSet::parse(text).map_err(|m| bad(side, m))?;
        let outside = set.without(&allowed);
        if !outside.is_empty() {
            return Err(bad(
                side,
                format!(
                    "CPU {outside} is not one this process may run on (it may use {allowed}); name CPUs of that list"
                ),
            ));
        }
        Ok(Some(set))
    };
    let server = parse("server", &c.server)?;
    let load = parse("load", &c.load)?;
    let (server, load) = match (server, load) {
        (Some(s), Some(l)) => (s, l),
        (Some(s), None) => (s.clone(), allowed.without(&s)),
        (None, Some(l)) => (allowed.without(&l), l),
        (None, None) => return Ok(None),
    };
    for (side, set) in [("server", &server), ("load", &load)] {
        if set.is_empty() {
            let other = if side == "server" { "load" } else { "server" };
            return Err(bad(
                other,
                format!(
                    "the {other} takes every CPU this process may use ({allowed}), which leaves the {side} none; name the {side}'s CPUs too, or fewer for the {other}"
                ),
            ));
        }
    }
    Ok(Some(Placement {
        server,
        load,
        asked: true,
    }))
}

/// CPUs the load may keep busy: its pinned set, else half of this machine's.
pub fn load_cpus(p: Option<&Placement>) -> usize {
    p.map_or_else(bakeoff_os::cpus::unpinned_load_cpus, |p| p.load.len())
}

/// This process pinned to the load's CPUs until dropped, when it gets back the CPUs it
/// had.
pub struct Pinned {
    before: CpuSet,
}

impl Placement {
    /// Pins this process (every thread, and what it starts later) to the load's CPUs.
    pub fn pin_load(&self) -> Result<Pinned, RunError> {
        let before = CpuSet::allowed()
            .map_err(|err| RunError::Failed(format!("cannot read the CPU affinity: {err}")))?;
        self.load.pin_process().map_err(|err| {
            RunError::Failed(format!("cannot pin the load to CPUs {}: {err}", self.load))
        })?;
        Ok(Pinned { before })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = self.before.pin_process();
    }
}
