//! Real sshd servers on loopback addresses, standing in for other machines (tests/hosts.rs
//! and the examples test): their own host keys, an authorized test key, stopped (with
//! every session under them) when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// An sshd on `addr` that accepts one generated key, running in the foreground as this
/// test's child (it and every session it forked are killed when stopped or dropped).
pub struct Sshd {
    pub child: std::sync::Mutex<Option<std::process::Child>>,
    pub addr: &'static str,
    pub port: u16,
    pub key: PathBuf,
    pub dir: PathBuf,
}

impl Sshd {
    pub fn start(dir: &Path, addr: &'static str) -> Sshd {
        let dir = dir.join(format!("sshd-{addr}"));
        std::fs::create_dir_all(&dir).unwrap();
        let keygen = |name: &str| {
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(name))
                .status()
                .unwrap()
                .success();
            assert!(ok, "ssh-keygen");
        };
        keygen("host_key");
        keygen("user_key");
        std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
        // A free port there (the kernel's pick, released for sshd).
        let port = std::net::TcpListener::bind((addr, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "ListenAddress {addr}:{port}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\nPidFile none\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nMaxSessions 20\n",
            d = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).unwrap();
        let s = Sshd {
            child: std::sync::Mutex::new(None),
            addr,
            key: dir.join("user_key"),
            port,
            dir,
        };
        s.spawn();
        s
    }

    /// Starts sshd with its config (again, after `stop`: the same port and keys).
    pub fn spawn(&self) {
        // sshd's privilege separation dir.
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new("/usr/sbin/sshd")
            .arg("-D")
            .arg("-f")
            .arg(self.dir.join("sshd_config"))
            .arg("-E")
            .arg(self.dir.join("sshd.log"))
            .spawn()
            .expect("openssh-server (scripts/setup.sh installs it)");
        *self.child.lock().unwrap() = Some(child);
        assert!(
            super::wait_for(5.0, || std::net::TcpStream::connect((self.addr, self.port))
                .is_ok()),
            "sshd is not listening"
        );
    }

    /// Kills sshd and everything under it (its sessions, agents and their servers), as a
    /// host that goes away would.
    pub fn stop(&self) {
        if let Some(mut c) = self.child.lock().unwrap().take() {
            for pid in descendants(c.id()) {
                // SAFETY: plain kill(2) of a process this test started (or its children).
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A `[[host]]` table for it; its files go under `work`.
    pub fn host(&self, name: &str, work: &Path, listen: Option<&str>) -> String {
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        let listen = listen.map_or(String::new(), |a| format!("listen = \"{a}\"\n"));
        format!(
            "[[host]]\nname = \"{name}\"\nssh = \"{user}@{}\"\nport = {}\nidentity = \"{}\"\nwork_dir = \"{}\"\n{listen}ssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"]\n",
            self.addr,
            self.port,
            self.key.display(),
            work.join(name).display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Every process under `root` (children, their children, ...).
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pp) = ppid {
            parent.push((pid, pp));
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parent.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out.remove(0);
    out
}

/// Points an experiment's `[[host]]` tables at `sshd` (the first host at the first sshd,
/// and so on), their files under `work`.
pub fn reach_hosts(doc: &mut toml_edit::DocumentMut, sshd: &[Sshd], work: &Path) {
    let hosts = doc["host"]
        .as_array_of_tables_mut()
        .expect("[[host]] is a list of tables");
    for (i, h) in hosts.iter_mut().enumerate() {
        let name = h["name"].as_str().expect("a host has a name").to_string();
        let text = sshd[i % sshd.len()].host(&name, work, None);
        let fresh: toml_edit::DocumentMut = text.parse().expect("a host table");
        let table = fresh["host"]
            .as_array_of_tables()
            .and_then(|a| a.get(0))
            .expect("host")
            .clone();
        *h = table;
    }
}
