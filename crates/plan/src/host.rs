//! `[[host]]`: machines other than this one, reached with OpenSSH as the user's own ssh
//! reaches them (keys, agent, `~/.ssh/config`), never with a password on a command line.
//! `[target] host` names the one that serves; `[[workload]] clients` the ones that load.
//! bakeoff copies itself there and runs `bakeoff agent` over one multiplexed ssh
//! connection per host (the runner's `remote` module).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `--allow-ssh-commands`: ssh options that run commands are then accepted.
static ALLOW_SSH_COMMANDS: AtomicBool = AtomicBool::new(false);

/// Accept `ssh_options` that run a command on this machine or open a port (the user said
/// so on the command line: a file alone never can).
pub fn allow_ssh_commands(yes: bool) {
    ALLOW_SSH_COMMANDS.store(yes, Ordering::Relaxed);
}

/// ssh options that run a program on this machine, load code into ssh, or open ports:
/// (keyword in lowercase, what it does).
const UNSAFE_SSH_OPTIONS: &[(&str, &str)] = &[
    ("proxycommand", "runs a command on this machine"),
    ("localcommand", "runs a command on this machine"),
    (
        "permitlocalcommand",
        "lets LocalCommand run a command on this machine",
    ),
    ("knownhostscommand", "runs a command on this machine"),
    ("match", "can run a command on this machine (Match exec)"),
    (
        "include",
        "reads another config file, which can run commands",
    ),
    ("securitykeyprovider", "loads a library into ssh"),
    ("pkcs11provider", "loads a library into ssh"),
    ("remotecommand", "replaces the command bakeoff runs there"),
    ("localforward", "opens a port"),
    ("remoteforward", "opens a port"),
    ("dynamicforward", "opens a port"),
    ("gatewayports", "opens forwarded ports to the network"),
    ("tunnel", "opens a network tunnel"),
];

/// An ssh `-o` option's keyword as ssh reads it: up to the first space or `=`, quotes
/// removed, any case.
fn ssh_keyword(option: &str) -> String {
    option
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == '=')
        .next()
        .unwrap_or_default()
        .replace('"', "")
        .to_ascii_lowercase()
}

/// Why `option` may not be given in a file, if it runs something or opens a port.
fn unsafe_ssh_option(option: &str) -> Option<&'static str> {
    if ALLOW_SSH_COMMANDS.load(Ordering::Relaxed) {
        return None;
    }
    let k = ssh_keyword(option);
    UNSAFE_SSH_OPTIONS
        .iter()
        .find(|(o, _)| *o == k)
        .map(|(_, what)| *what)
}

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
    /// ssh's arguments up to and including the destination: batch mode (a password
    /// prompt is a failure, not a hang), a connect timeout, the host's own options.
    /// `identity` is resolved by the caller against the experiment file's directory.
    pub fn ssh_args(&self, identity: Option<PathBuf>) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "ConnectTimeout=10".into(),
        ];
        if let Some(p) = self.port {
            args.extend(["-p".into(), p.to_string()]);
        }
        if let Some(i) = identity {
            args.extend(["-i".into(), i.display().to_string()]);
        }
        for o in &self.ssh_options {
            args.extend(["-o".into(), o.clone()]);
        }
        args.push("--".into());
        args.push(self.ssh.clone());
        args
    }
}

/// Why a host table cannot be used, or None. An ssh destination or option that starts
/// with `-` would be read by ssh as an option of its own.
pub(crate) fn problem(h: &Host) -> Option<(&'static str, String)> {
    if h.ssh.trim().is_empty() || h.ssh.starts_with('-') || h.ssh.contains(char::is_whitespace) {
        return Some((
            "ssh",
            format!(
                "ssh {:?} is not a destination: give user@host, ssh://user@host:port or a Host from ~/.ssh/config",
                h.ssh
            ),
        ));
    }
    if h.port == Some(0) {
        return Some(("port", "port must be 1 to 65535".into()));
    }
    if let Some(o) = h
        .ssh_options
        .iter()
        .find(|o| o.starts_with('-') || !o.contains('='))
    {
        return Some((
            "ssh_options",
            format!(
                "ssh option {o:?} is not Key=Value (e.g. \"StrictHostKeyChecking=accept-new\")"
            ),
        ));
    }
    if let Some(o) = h
        .ssh_options
        .iter()
        .find(|o| o.chars().any(char::is_control))
    {
        return Some((
            "ssh_options",
            format!("ssh option {o:?} holds a control character; give one Key=Value line"),
        ));
    }
    if let Some((o, what)) = h
        .ssh_options
        .iter()
        .find_map(|o| unsafe_ssh_option(o).map(|w| (o, w)))
    {
        return Some((
            "ssh_options",
            format!(
                "ssh option {o:?} {what}, and an experiment file (shared, run by CI) may not carry one; put it in ~/.ssh/config for this host, or pass --allow-ssh-commands"
            ),
        ));
    }
    None
}
