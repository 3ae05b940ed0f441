//! Other hosts over ssh, against a real sshd the test starts on 127.0.0.2 (its own host
//! key, an authorized test key, stopped at the end even when the test fails): `bakeoff
//! check` reaches a declared host and prints its facts; a host whose sshd is gone, and a
//! host name nobody declared, are one line and exit 2; `run` with the server placed on a
//! host says that is not built yet, before anything is built or started.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An sshd on 127.0.0.2 that accepts one generated key, running in the foreground as
/// this test's child (killed and reaped when stopped or dropped).
struct Sshd {
    child: std::sync::Mutex<Option<std::process::Child>>,
    port: u16,
    key: PathBuf,
}

impl Sshd {
    fn start(dir: &Path) -> Sshd {
        let dir = dir.join("sshd");
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
        // A free port on 127.0.0.2 (the kernel's pick, released for sshd).
        let port = std::net::TcpListener::bind("127.0.0.2:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "ListenAddress 127.0.0.2:{port}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\nPidFile none\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n",
            d = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).unwrap();
        // sshd's privilege separation dir.
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new("/usr/sbin/sshd")
            .arg("-D")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .arg("-E")
            .arg(dir.join("sshd.log"))
            .spawn()
            .expect("openssh-server (scripts/setup.sh installs it)");
        let s = Sshd {
            child: std::sync::Mutex::new(Some(child)),
            key: dir.join("user_key"),
            port,
        };
        assert!(
            common::wait_for(5.0, || std::net::TcpStream::connect(("127.0.0.2", port))
                .is_ok()),
            "sshd is not listening"
        );
        s
    }

    fn stop(&self) {
        if let Some(mut c) = self.child.lock().unwrap().take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A `[[host]]` table for it.
    fn host(&self, name: &str) -> String {
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        format!(
            "[[host]]\nname = \"{name}\"\nssh = \"{user}@127.0.0.2\"\nport = {}\nidentity = \"{}\"\nssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"]\n",
            self.port,
            self.key.display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

const EXPERIMENT: &str = r#"name = "hosts-e2e"
[target]
kind = "memcached"
HOST_LINE

[[variant]]
name = "installed"
binary = "/usr/bin/memcached"

[[workload]]
kind = "kv"
connections = [4]

[plan]
repetitions = 1
"#;

fn bakeoff(args: &[&str], file: &Path) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn hosts_are_reached_over_ssh_before_anything_runs() {
    let s = Scratch::new();
    let sshd = Sshd::start(s.path());
    let text = EXPERIMENT.replace("HOST_LINE", "host = \"db\"") + &sshd.host("db");
    let f = s.write("hosts.toml", &text);

    let (code, out, err) = bakeoff(&["check"], &f);
    assert_eq!(code, Some(0), "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("host db: "))
        .unwrap_or_else(|| panic!("no host line: {out}"));
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(line.contains(&format!("{cores} cores")), "{line}");
    assert!(line.contains("Linux"), "{line}");

    // Placed on the host: checked, then refused before any build or start.
    let (code, _, err) = bakeoff(&["run", "--out", s.out().to_str().unwrap()], &f);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("hosts.toml:4:") && err.contains("not built yet"),
        "{err}"
    );
    assert!(!s.out().join("results.json").exists());

    // The host's sshd gone: one line naming the host and what ssh said.
    sshd.stop();
    let (code, _, err) = bakeoff(&["check"], &f);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("host db (")
            && err.contains("does not answer: ssh said:")
            && err.contains("refused"),
        "{err}"
    );

    // A host nobody declared.
    let bad = s.write(
        "unknown.toml",
        &EXPERIMENT.replace("HOST_LINE", "host = \"nowhere\""),
    );
    let (code, _, err) = bakeoff(&["check"], &bad);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("unknown.toml:4:") && err.contains("no [[host]] named \"nowhere\""),
        "{err}"
    );
}
