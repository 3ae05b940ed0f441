//! A SQL target's prepared data on the server's host: `datadirs` makes it there through
//! the agent (init, copies, sizes, the servers that load and verify it), the tables
//! loaded over the network by the workload's own loader from here, as sysbench prepares
//! from its client host. Paths are relative to the agent's data root.

use super::{Hosts, RemoteServer, Role};
use crate::datadirs::{DataPlace, DataServer};
use crate::ready::ReadyVariant;
use bakeoff_agent::protocol::{DataOp, Request};
use bakeoff_plan::TargetKind;
use bakeoff_sandbox::SandboxSpec;
use bakeoff_sqlclient::Db;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The server's host, as a place for data.
pub struct HostData {
    hosts: Arc<Hosts>,
    host: String,
}

impl Hosts {
    /// Where a SQL target's data is made when the server is on a host: that host, and
    /// the directory under its agent's data root.
    pub fn data_place(self: &Arc<Self>) -> Option<(Arc<dyn DataPlace>, PathBuf)> {
        let host = self.server.clone()?;
        let place = HostData {
            hosts: self.clone(),
            host,
        };
        Some((Arc::new(place), PathBuf::from("prepared")))
    }
}

impl HostData {
    fn data<T: serde::de::DeserializeOwned>(&self, op: DataOp) -> Result<T, String> {
        self.hosts
            .call_as(&self.host, Role::Server, &Request::Data(op), &mut |_| {})
            .map_err(|e| format!("on host {}: {e}", self.host))
    }
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

impl DataPlace for HostData {
    fn binary_for(
        &self,
        _kind: TargetKind,
        v: &ReadyVariant,
        _vdir: &Path,
    ) -> Result<PathBuf, String> {
        Ok(v.binary.clone())
    }

    fn data_format(&self, kind: TargetKind, binary: &Path, v: &ReadyVariant) -> Option<String> {
        self.data(DataOp::Format {
            kind,
            binary: self.hosts.path_there(&self.host, binary),
            options: v.options.clone(),
            configure_args: v.configure_args.clone(),
        })
        .ok()
        .flatten()
    }

    fn init(&self, kind: TargetKind, binary: &Path, dir: &Path) -> Result<(), String> {
        self.data(DataOp::Init {
            kind,
            binary: self.hosts.path_there(&self.host, binary),
            dir: text(dir),
        })
    }

    fn copy(&self, from: &Path, to: &Path) -> Result<(), String> {
        self.data(DataOp::Copy {
            from: text(from),
            to: text(to),
        })
    }

    fn bytes(&self, dir: &Path) -> u64 {
        self.data(DataOp::Bytes { dir: text(dir) }).unwrap_or(0)
    }

    fn remove(&self, dir: &Path) {
        let _: Result<(), String> = self.data(DataOp::Remove { dir: text(dir) });
    }

    fn start(&self, spec: &SandboxSpec) -> Result<Box<dyn DataServer>, String> {
        let server = self
            .hosts
            .start(spec)
            .map_err(|e| format!("server did not start {e}"))?;
        Ok(Box::new(server))
    }
}

impl DataServer for RemoteServer {
    fn db(&self) -> Option<Db> {
        RemoteServer::db(self)
    }

    fn stop(self: Box<Self>) -> Result<(), String> {
        match self.stop_quietly()? {
            None => Ok(()),
            Some(died) => Err(format!("it had exited: {died}")),
        }
    }
}
