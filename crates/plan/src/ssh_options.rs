//! `[[host]] ssh_options`, `identity` and `work_dir`: what an experiment file may ask of
//! ssh. An experiment file is shared and run by CI, so nothing it says may run a program
//! on this machine: ssh options are an allowlist of what a benchmark needs (port, user,
//! identity and known hosts, algorithms, timeouts, compression, logging), read the way
//! ssh reads them (any case, `Key=value`, `Key value`, `"Key" value`, `-o Key=value`) and
//! passed on in one spelling, `Key=value`. Anything else needs `--allow-ssh-commands` on
//! the command line, except the options that would break bakeoff's own use of ssh
//! (a session type, going to the background, a control socket of its own), which are
//! never accepted. The files ssh reads for a host (its identity and known-hosts files)
//! must be regular files of a sane size, so a device or a pipe named there cannot make
//! ssh read forever. This module knows the options and the files; the checks that read a
//! `[[host]]` table and say where it is wrong are `validate/hosts.rs`'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `--allow-ssh-commands`: ssh options off the allowlist are then accepted.
static ALLOW_SSH_COMMANDS: AtomicBool = AtomicBool::new(false);

/// Accept `ssh_options` off the allowlist, which may run a command on this machine or
/// open a port (the user said so on the command line: a file alone never can).
pub fn allow_ssh_commands(yes: bool) {
    ALLOW_SSH_COMMANDS.store(yes, Ordering::Relaxed);
}

/// The ssh options an experiment file may set, as ssh_config(5) spells them. None of
/// them runs a program, loads code, forwards a port or sends this machine's environment.
pub const ALLOWED: &[&str] = &[
    "AddressFamily",
    "BatchMode",
    "BindAddress",
    "BindInterface",
    "CASignatureAlgorithms",
    "CheckHostIP",
    "Ciphers",
    "Compression",
    "ConnectionAttempts",
    "ConnectTimeout",
    "FingerprintHash",
    "GlobalKnownHostsFile",
    "GSSAPIAuthentication",
    "HashKnownHosts",
    "HostKeyAlgorithms",
    "HostKeyAlias",
    "IdentitiesOnly",
    "IdentityFile",
    "IPQoS",
    "KbdInteractiveAuthentication",
    "KexAlgorithms",
    "LogLevel",
    "MACs",
    "NumberOfPasswordPrompts",
    "PasswordAuthentication",
    "Port",
    "PreferredAuthentications",
    "PubkeyAcceptedAlgorithms",
    "PubkeyAcceptedKeyTypes",
    "PubkeyAuthentication",
    "RekeyLimit",
    "RequiredRSASize",
    "ServerAliveCountMax",
    "ServerAliveInterval",
    "StrictHostKeyChecking",
    "TCPKeepAlive",
    "UpdateHostKeys",
    "User",
    "UserKnownHostsFile",
    "VerifyHostKeyDNS",
];

/// Options bakeoff's own ssh sets or depends on: refused even with
/// `--allow-ssh-commands`. (keyword in lowercase, why.)
const NEVER: &[(&str, &str)] = &[
    (
        "sessiontype",
        "changes the session bakeoff runs its commands in (SessionType=none leaves ssh waiting forever)",
    ),
    (
        "forkafterauthentication",
        "sends ssh to the background, where it outlives bakeoff",
    ),
    (
        "controlmaster",
        "changes the one connection bakeoff multiplexes itself",
    ),
    (
        "controlpath",
        "changes the one connection bakeoff multiplexes itself",
    ),
    (
        "controlpersist",
        "keeps ssh running after bakeoff is gone",
    ),
    ("remotecommand", "replaces the command bakeoff runs there"),
    (
        "requesttty",
        "puts a terminal between bakeoff and its agent",
    ),
    ("stdinnull", "cuts bakeoff off from its agent's input"),
];

/// A file ssh reads for a host (identity, known hosts) may be no larger.
pub const MAX_SSH_FILE_BYTES: u64 = 1 << 20;

/// ssh's `ConnectTimeout` when the file gives none, in seconds.
pub const DEFAULT_CONNECT_TIMEOUT: u64 = 10;

/// The longest `ConnectTimeout` a file may give, in seconds.
const MAX_CONNECT_TIMEOUT: u64 = 300;

/// The most `ConnectionAttempts` a file may give.
const MAX_CONNECTION_ATTEMPTS: u64 = 10;

/// One option split as ssh splits it: the keyword as written (quotes removed) and its
/// value (as written, surrounding space removed). The error says why it is not one.
pub(crate) fn split(option: &str) -> Result<(String, String), String> {
    let not = || {
        format!(
            "ssh option {:?} is not Key=Value (e.g. \"StrictHostKeyChecking=accept-new\")",
            shown(option)
        )
    };
    let mut rest = option.trim_start();
    // `-o Key=value` and `-oKey=value`, as on ssh's command line.
    if let Some(r) = rest.strip_prefix("-o") {
        rest = r.trim_start();
    } else if rest.starts_with('-') {
        return Err(not());
    }
    let (keyword, after) = if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"').ok_or_else(not)?;
        (&q[..end], &q[end + 1..])
    } else {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    let after = after.trim_start();
    let value = after.strip_prefix('=').unwrap_or(after).trim();
    let plain = |c: char| c.is_ascii_alphanumeric();
    if keyword.is_empty() || !keyword.chars().all(plain) || value.is_empty() {
        return Err(not());
    }
    Ok((keyword.to_string(), value.to_string()))
}

/// `option` cut to 80 characters, for messages (which show it with `{:?}`).
pub(crate) fn shown(option: &str) -> String {
    option.chars().take(80).collect()
}

/// The option in the one spelling bakeoff passes to ssh (`Keyword=value`, the keyword
/// as ssh_config(5) spells it when it is on the allowlist), or as written when it does
/// not split (validation refuses those first).
pub fn canonical(option: &str) -> String {
    match split(option) {
        Ok((k, v)) => {
            let k = ALLOWED
                .iter()
                .find(|a| a.eq_ignore_ascii_case(&k))
                .map_or(k, |a| a.to_string());
            format!("{k}={v}")
        }
        Err(_) => option.to_string(),
    }
}

/// The value of the allowed option `keyword` among `options` (ssh takes the first).
pub(crate) fn value_of(options: &[String], keyword: &str) -> Option<String> {
    options
        .iter()
        .filter_map(|o| split(o).ok())
        .find(|(k, _)| k.eq_ignore_ascii_case(keyword))
        .map(|(_, v)| v.trim_matches('"').to_string())
}

/// The words of a value as ssh splits a list of files: on whitespace, a `"..."` one word.
fn words(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value.trim();
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('"') {
            let end = q.find('"').unwrap_or(q.len());
            out.push(q[..end].to_string());
            rest = q.get(end + 1..).unwrap_or("").trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = rest[end..].trim_start();
        }
    }
    out
}

/// What is wrong with `path` as a file ssh reads for a host, if anything: it must be a
/// regular file of at most [`MAX_SSH_FILE_BYTES`] (when `may_be_missing`, it may also not
/// exist yet). Never reads the file: nothing of its content can reach a message.
pub fn file_problem(path: &Path, may_be_missing: bool) -> Option<String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && may_be_missing => return None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!("{} does not exist", path.display()))
        }
        Err(e) => return Some(format!("{} cannot be read ({e})", path.display())),
    };
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let what = if t.is_dir() {
        "a directory"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a pipe"
    } else if t.is_socket() {
        "a socket"
    } else if !t.is_file() {
        "not a regular file"
    } else if meta.len() > MAX_SSH_FILE_BYTES {
        return Some(format!(
            "{} is {} bytes, more than the {} MiB a key or known-hosts file can be",
            path.display(),
            meta.len(),
            MAX_SSH_FILE_BYTES >> 20
        ));
    } else if path.starts_with("/proc") || path.starts_with("/sys") {
        "a kernel file"
    } else {
        return None;
    };
    Some(format!("{} is {what}, not a regular file", path.display()))
}

/// An identity file and the files ssh reads beside it (`.pub`, `-cert.pub`, which may be
/// missing).
pub(crate) fn identity_problem(path: &Path) -> Option<String> {
    file_problem(path, false).or_else(|| {
        ["{}.pub", "{}-cert.pub"].iter().find_map(|f| {
            let beside = PathBuf::from(f.replace("{}", &path.to_string_lossy()));
            file_problem(&beside, true)
        })
    })
}

/// A path given in an ssh option, as ssh will open it: `~/` is the user's home, and
/// anything ssh would expand (`%` tokens, `${VAR}`) or resolve against its working
/// directory is refused, so the file checked is the file ssh reads.
fn option_path(word: &str) -> Result<PathBuf, String> {
    if word.contains('%') || word.contains("${") {
        return Err(format!(
            "{word:?} holds a % token or ${{VARIABLE}}; give the file's plain absolute path"
        ));
    }
    let path = match word.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(rest),
            None => return Err(format!("{word:?} starts with ~/ and HOME is not set")),
        },
        None => PathBuf::from(word),
    };
    if !path.is_absolute() {
        return Err(format!(
            "{word:?} is not an absolute path (ssh would read it from whatever folder bakeoff runs in); give an absolute path or ~/..."
        ));
    }
    Ok(path)
}

/// The ssh options' own problem, if any: one that does not split, is off the allowlist
/// (without `--allow-ssh-commands`), is never accepted, names a file that is not a sane
/// regular file, or gives a timeout out of range. (index in `ssh_options`, message.)
pub(crate) fn option_problem(host: &str, options: &[String]) -> Option<(usize, String)> {
    let allow_any = ALLOW_SSH_COMMANDS.load(Ordering::Relaxed);
    for (j, o) in options.iter().enumerate() {
        let at = |m: String| Some((j, format!("host {host}: {m}")));
        if o.chars().any(|c| c.is_control() && c != '\t') {
            return at(format!(
                "ssh option {:?} holds a control character; give one Key=Value line",
                shown(o)
            ));
        }
        let (keyword, value) = match split(o) {
            Ok(kv) => kv,
            Err(m) => return at(m),
        };
        let lower = keyword.to_ascii_lowercase();
        if let Some((_, why)) = NEVER.iter().find(|(n, _)| *n == lower) {
            return at(format!(
                "ssh option {keyword} ({:?}) {why}, and bakeoff runs ssh itself; remove it",
                shown(o)
            ));
        }
        let Some(known) = ALLOWED.iter().find(|a| a.eq_ignore_ascii_case(&keyword)) else {
            if allow_any {
                continue;
            }
            return at(format!(
                "ssh option {keyword} ({:?}) is not one an experiment file may set (they are {}); put it in ~/.ssh/config for this host, or pass --allow-ssh-commands",
                shown(o),
                ALLOWED.join(", ")
            ));
        };
        let number = |max: u64| -> Option<String> {
            match value.trim_matches('"').parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => None,
                _ => Some(format!(
                    "ssh option {known} is {:?}; give a whole number from 1 to {max}",
                    shown(&value)
                )),
            }
        };
        let problem = match *known {
            "ConnectTimeout" => number(MAX_CONNECT_TIMEOUT),
            "ConnectionAttempts" => number(MAX_CONNECTION_ATTEMPTS),
            "IdentityFile" | "UserKnownHostsFile" | "GlobalKnownHostsFile" => {
                let identity = *known == "IdentityFile";
                words(&value).iter().find_map(|w| {
                    if w.eq_ignore_ascii_case("none") || (!identity && w == "/dev/null") {
                        return None;
                    }
                    let why = match option_path(w) {
                        Ok(p) if identity => identity_problem(&p),
                        Ok(p) => file_problem(&p, true),
                        Err(m) => Some(m),
                    }?;
                    Some(format!(
                        "ssh option {known}: {why}; give a {} (a regular file of at most {} MiB)",
                        if identity {
                            "private key file"
                        } else {
                            "known-hosts file"
                        },
                        MAX_SSH_FILE_BYTES >> 20
                    ))
                })
            }
            _ => None,
        };
        if let Some(m) = problem {
            return at(m);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;

    fn host(options: &[&str]) -> Host {
        Host {
            name: "db".into(),
            ssh: "db1".into(),
            port: None,
            identity: None,
            ssh_options: options.iter().map(|o| o.to_string()).collect(),
            work_dir: None,
            listen: None,
        }
    }

    fn options_problem(options: &[&str]) -> Option<(usize, String)> {
        let h = host(options);
        option_problem(&h.name, &h.ssh_options)
    }

    /// Every spelling ssh reads of `key` and `value`: case, `=` or spaces, quotes, `-o`.
    fn spellings(key: &str, value: &str) -> Vec<String> {
        let mut out = Vec::new();
        for k in [
            key.to_string(),
            key.to_ascii_lowercase(),
            key.to_ascii_uppercase(),
            format!("\"{key}\""),
        ] {
            for sep in ["=", " ", " = ", "\t", "  =", "= "] {
                for pre in ["", " ", "-o", "-o ", "-o  "] {
                    out.push(format!("{pre}{k}{sep}{value}"));
                }
            }
        }
        out
    }

    #[test]
    fn hostile_ssh_option_allowlist_splits_as_ssh_does() {
        for o in spellings("ForwardX11", "yes") {
            let (k, v) = split(&o).unwrap_or_else(|e| panic!("{o}: {e}"));
            assert!(k.eq_ignore_ascii_case("forwardx11") && v == "yes", "{o}");
            assert_eq!(
                options_problem(&[&o]).map(|p| p.0),
                Some(0),
                "{o} was accepted"
            );
        }
        // What the attack used and the rest of its class: options that run a program
        // here, load code, forward, send this machine's environment or keys.
        for (k, v) in [
            ("XAuthLocation", "./xauth.sh"),
            ("ProxyCommand", "touch /tmp/x"),
            ("LocalCommand", "touch /tmp/x"),
            ("PermitLocalCommand", "yes"),
            ("KnownHostsCommand", "/bin/true"),
            ("Match", "exec true"),
            ("Include", "/tmp/evil.conf"),
            ("PKCS11Provider", "/tmp/evil.so"),
            ("SecurityKeyProvider", "/tmp/evil.so"),
            ("ProxyJump", "evil"),
            ("ForwardAgent", "yes"),
            ("ForwardX11Trusted", "yes"),
            ("AddKeysToAgent", "ask"),
            ("SendEnv", "*"),
            ("SetEnv", "A=b"),
            ("LocalForward", "8080 localhost:80"),
            ("DynamicForward", "1080"),
            ("Tunnel", "yes"),
            ("IdentityAgent", "/tmp/agent.sock"),
            ("CanonicalizeHostname", "yes"),
            ("Hostname", "evil"),
        ] {
            for o in spellings(k, v) {
                let (_, m) = options_problem(&[&o]).unwrap_or_else(|| panic!("{o}"));
                assert!(
                    m.contains("host db:")
                        && m.to_lowercase().contains(&k.to_lowercase())
                        && m.contains("--allow-ssh-commands"),
                    "{o}: {m}"
                );
            }
        }
        for o in spellings("port", "2222") {
            assert_eq!(canonical(&o), "Port=2222", "{o}");
            assert_eq!(options_problem(&[&o]), None, "{o}");
        }
        for bad in ["-v", "Port", "=22", "Port=", "\"Port", "Po-rt=1", "-", ""] {
            let m = split(bad).unwrap_err();
            assert!(m.contains("not Key=Value"), "{bad}: {m}");
        }
    }

    #[test]
    fn hostile_ssh_option_allowlist_never_accepts_what_breaks_bakeoff() {
        for (k, v) in [
            ("SessionType", "none"),
            ("ForkAfterAuthentication", "yes"),
            ("ControlPath", "/tmp/x"),
            ("ControlPersist", "yes"),
            ("RequestTTY", "force"),
        ] {
            for o in spellings(k, v) {
                let (_, m) = options_problem(&[&o]).expect(&o);
                assert!(m.contains("host db:") && m.contains("remove it"), "{m}");
            }
        }
    }

    #[test]
    fn hostile_ssh_option_allowlist_checks_files_and_timeouts() {
        for o in [
            "IdentityFile=/dev/zero",
            "identityfile \"/dev/zero\"",
            "UserKnownHostsFile=/dev/zero",
            "UserKnownHostsFile /dev/null /dev/zero",
            "GlobalKnownHostsFile=/proc/self/environ",
            "IdentityFile=relative/key",
            "IdentityFile=%d/.ssh/id",
            "IdentityFile=${HOME}/.ssh/id",
            "UserKnownHostsFile=/tmp",
            "ConnectTimeout=0",
            "ConnectTimeout=100000",
            "ConnectTimeout=ten",
            "ConnectionAttempts=1000",
        ] {
            assert!(options_problem(&[o]).is_some(), "{o} was accepted");
        }
        for o in [
            "UserKnownHostsFile=/dev/null",
            "UserKnownHostsFile=/nonexistent/known_hosts",
            "IdentityFile=none",
            "ConnectTimeout=5",
            "ConnectionAttempts=2",
            "StrictHostKeyChecking=accept-new",
        ] {
            assert_eq!(options_problem(&[o]), None, "{o}");
        }
    }

    #[test]
    fn a_file_is_checked_without_reading_it() {
        assert!(file_problem(Path::new("/dev/zero"), false)
            .unwrap()
            .contains("a device"));
        assert!(file_problem(Path::new("/nonexistent"), false).is_some());
        assert!(file_problem(Path::new("/nonexistent"), true).is_none());
        assert!(file_problem(Path::new("/proc/self/environ"), false).is_some());
    }
}
