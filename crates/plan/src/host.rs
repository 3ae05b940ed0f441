//! `[[host]]`: machines other than this one, reached with OpenSSH as the user's own ssh
//! reaches them (keys, agent, `~/.ssh/config`), never with a password on a command line.
//! `[target] host` names the one that serves; `[[workload]] clients` the ones that load.
//! bakeoff copies itself there and runs `bakeoff agent` over one multiplexed ssh
//! connection per host (the runner's `remote` module).

use crate::ssh_options;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// What a host is given beyond ssh's connect timeout to answer (key exchange, login,
/// the first command).
pub const HANDSHAKE_MARGIN: Duration = Duration::from_secs(10);

/// One `[[host]]` table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// How the experiment refers to it (`[target] host`, `clients`).
    pub name: String,
    /// A destination as ssh takes it: `user@host`, `ssh://user@host:port`, or a Host
    /// alias from `~/.ssh/config`.
    pub ssh: String,
    /// ssh's `-p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// A private key file (ssh's `-i`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<PathBuf>,
    /// `-o` options, e.g. `["StrictHostKeyChecking=accept-new"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_options: Vec<String>,
    /// Where bakeoff keeps its files there; default a cache dir under the user's home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<String>,
    /// The address a server on this host listens on, for loads from other hosts (e.g.
    /// "0.0.0.0" or the host's own address). Default: 127.0.0.1, reachable only from the
    /// host itself. Said in the report when it is not loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<std::net::IpAddr>,
}

impl Host {
    /// The directory bakeoff keeps there (relative: under the ssh user's home).
    pub fn dir(&self) -> &str {
        self.work_dir.as_deref().unwrap_or(".cache/bakeoff")
    }
}

impl Host {
    /// How long one ssh to this host may take to connect, shake hands and log in before
    /// bakeoff gives up on it: ssh's own connect timeout for every attempt, plus
    /// [`HANDSHAKE_MARGIN`] (a host that accepts the connection and then says nothing
    /// is stopped here too).
    pub fn connect_deadline(&self) -> Duration {
        let number = |k: &str, default: u64| {
            ssh_options::value_of(&self.ssh_options, k)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(default)
        };
        let timeout = number("ConnectTimeout", ssh_options::DEFAULT_CONNECT_TIMEOUT);
        let attempts = number("ConnectionAttempts", 1).max(1);
        Duration::from_secs(timeout * attempts) + HANDSHAKE_MARGIN
    }

    /// ssh's arguments up to and including the destination: batch mode (a password
    /// prompt is a failure, not a hang), a connect timeout, the host's own options (in
    /// the one spelling `Key=value`; validation let only the allowed ones through).
    /// `identity` is resolved by the caller against the experiment file's directory.
    pub fn ssh_args(&self, identity: Option<PathBuf>) -> Vec<String> {
        let mut args: Vec<String> = vec!["-o".into(), "BatchMode=yes".into()];
        if ssh_options::value_of(&self.ssh_options, "ConnectTimeout").is_none() {
            args.extend([
                "-o".into(),
                format!("ConnectTimeout={}", ssh_options::DEFAULT_CONNECT_TIMEOUT),
            ]);
        }
        if let Some(p) = self.port {
            args.extend(["-p".into(), p.to_string()]);
        }
        if let Some(i) = identity {
            args.extend(["-i".into(), i.display().to_string()]);
        }
        for o in &self.ssh_options {
            args.extend(["-o".into(), ssh_options::canonical(o)]);
        }
        args.push("--".into());
        args.push(self.ssh.clone());
        args
    }
}
