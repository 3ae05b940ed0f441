//! `[[host]]` tables' own checks: a destination and port ssh can use, and the settings
//! ssh reads (`identity`, `work_dir`, `ssh_options`), each error at its key.

use crate::experiment::Loaded;
use crate::host::Host;
use crate::located::Key;
use crate::ssh_options::{identity_problem, option_problem, shown, MAX_SSH_FILE_BYTES};

/// Why a host table's destination or port cannot be used, or None. A destination that
/// starts with `-` would be read by ssh as an option of its own. (`identity`, `work_dir`
/// and `ssh_options`: [`ssh_problem`].)
pub(crate) fn destination_problem(h: &Host) -> Option<(&'static str, String)> {
    if h.ssh.trim().is_empty()
        || h.ssh.starts_with('-')
        || h.ssh.contains(char::is_whitespace)
        || h.ssh.contains(char::is_control)
    {
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
    None
}

/// Why a host's ssh settings cannot be used, if they cannot: where (the key path) and
/// what to do. Checks the fields ssh reads: `identity` (resolved against the experiment
/// file), `work_dir` and `ssh_options`.
pub(crate) fn ssh_problem(l: &Loaded, i: usize, h: &Host) -> Option<(Vec<Key>, String)> {
    let at = |k: &'static str| vec![Key::from("host"), Key::from(i), Key::from(k)];
    if h.name.starts_with('-') {
        return Some((
            at("name"),
            format!(
                "host name {:?} starts with - (it goes into ssh's arguments); give a name that starts with a letter or digit",
                shown(&h.name)
            ),
        ));
    }
    if let Some(id) = &h.identity {
        let text = id.to_string_lossy();
        let why = if text.starts_with('-') || text.chars().any(char::is_control) {
            Some(format!(
                "identity {:?} starts with - or holds a control character; give the key file's path (\"./-key\" for a name that starts with -)",
                shown(&text)
            ))
        } else {
            identity_problem(&l.resolve(id)).map(|why| {
                format!(
                    "identity: {why}; give a private key file (a regular file of at most {} MiB)",
                    MAX_SSH_FILE_BYTES >> 20
                )
            })
        };
        if let Some(why) = why {
            return Some((at("identity"), format!("host {}: {why}", h.name)));
        }
    }
    if let Some(dir) = &h.work_dir {
        let why = if dir.trim().is_empty() {
            Some("is empty")
        } else if dir.starts_with('-') {
            Some("starts with - (a command there would read it as an option)")
        } else if dir.chars().any(char::is_control) {
            Some("holds a control character")
        } else {
            None
        };
        if let Some(why) = why {
            return Some((
                at("work_dir"),
                format!(
                    "host {}: work_dir {:?} {why}; give a folder there such as \".cache/bakeoff\" or \"/srv/bakeoff\" (\"./-x\" for a name that starts with -)",
                    h.name,
                    shown(dir)
                ),
            ));
        }
    }
    option_problem(&h.name, &h.ssh_options).map(|(j, m)| {
        let mut k = at("ssh_options");
        k.push(Key::from(j));
        (k, m)
    })
}
