//! Issue 50 at `bakeoff check` (fast: nothing is built or started): settings that open a
//! server's own file writers, point it at files outside the sandbox or make it connect
//! out, and `[tune]` flags that run code, each refused in every spelling with one line
//! and exit status 2; `check` names the variants that build from source.

mod common;

use std::process::Command;

fn bakeoff() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
}

/// `bakeoff check` of `text`: its exit status, stdout and stderr.
fn check(text: &str) -> (Option<i32>, String, String) {
    let s = common::Scratch::new();
    let path = s.path().join("exp.toml");
    std::fs::write(&path, text).unwrap();
    let out = bakeoff().arg("check").arg(&path).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

/// A TOML string.
fn q(s: &str) -> String {
    format!("{s:?}")
}

/// An experiment of `kind` with `[target]` lines `target` and a workload that fits.
fn experiment(kind: &str, binary: &str, target: &str) -> String {
    let workload = match kind {
        "memcached" | "redis" | "valkey" => "kind = \"kv\"\nconnections = [2]\n",
        _ => "kind = \"oltp\"\ntest = \"oltp_point_select\"\ntable_size = 100\nconnections = [2]\n",
    };
    format!(
        "name = \"w\"\n[target]\nkind = \"{kind}\"\n{target}\n[[variant]]\nname = \"a\"\nbinary = \"{binary}\"\n[[workload]]\n{workload}"
    )
}

/// Refused at check: exit 2, one line that names the spelling given.
fn refused(kind: &str, binary: &str, target: &str, names: &str) {
    let (code, _, err) = check(&experiment(kind, binary, target));
    assert_eq!(code, Some(2), "{kind} {target}: {err}");
    assert_eq!(err.lines().count(), 1, "{kind} {target}: {err}");
    assert!(err.contains(names), "{kind} {target}: {err}");
}

/// Upper, lower and mixed case, and `-`/`_` swapped.
fn cases(name: &str) -> Vec<String> {
    let mut out = bakeoff_testkit::spellings(name);
    out.dedup();
    out
}

/// Every spelling of `name` (set to `value`) refused in `kind`'s options and in its
/// arguments, where `arg` writes the inside of the `args` array for a spelling.
fn refused_everywhere(
    kind: &str,
    binary: &str,
    name: &str,
    value: &str,
    arg: impl Fn(&str) -> String,
) {
    for n in cases(name) {
        let options = format!("options = {{ {} = {} }}", q(&n), q(value));
        refused(kind, binary, &options, &n);
        refused(kind, binary, &format!("args = [{}]", arg(&n)), &n);
    }
}

#[test]
fn sql_file_writers_are_refused_at_check() {
    for (kind, binary) in [
        ("mariadb", "/usr/sbin/mariadbd"),
        ("mysql", "/usr/sbin/mysqld"),
    ] {
        for n in cases("secure-file-priv") {
            for lead in ["", "loose-", "loose_"] {
                for name in [format!("{lead}{n}"), format!("{lead}{}", &n[..9])] {
                    for value in ["", "/", "/tmp"] {
                        refused(
                            kind,
                            binary,
                            &format!("options = {{ {} = {} }}", q(&name), q(value)),
                            &name,
                        );
                    }
                    refused(
                        kind,
                        binary,
                        &format!("args = [{}]", q(&format!("--{name}=/tmp"))),
                        &name,
                    );
                }
            }
        }
        for (name, value) in [
            ("early-plugin-load", "keyring_file.so"),
            ("plugin_load_add", "x.so"),
            ("keyring_file_data", "/tmp/k"),
            ("ssl_key", "/etc/shadow"),
            ("ssl-cert", "../../x"),
            ("character_sets_dir", "/tmp"),
            ("basedir", "/tmp"),
            ("lc_messages_dir", "/tmp"),
        ] {
            refused_everywhere(kind, binary, name, value, |n| {
                q(&format!("--loose-{n}={value}"))
            });
        }
    }
    let pg = "/usr/lib/postgresql/15/bin/postgres";
    for (name, value) in [
        ("primary_conninfo", "host=10.0.0.1"),
        ("restore_command", "cp %f %p"),
        ("ssl_key_file", "/etc/shadow"),
        ("ssl_ca_file", "/etc/ssl/x"),
        ("include_dir", "conf.d"),
        ("log_destination", "syslog"),
        ("extension_destdir", "/tmp/ext"),
        ("data_directory", "/tmp"),
        ("hba_file", "/tmp/hba"),
    ] {
        refused_everywhere("postgres", pg, name, value, |n| {
            format!("\"-c\", {}", q(&format!("{n}={value}")))
        });
    }
    for kind in ["redis", "valkey"] {
        let binary = "/usr/bin/redis-server";
        for (name, value) in [
            ("replicaof", "10.0.0.1 6379"),
            ("slaveof", "10.0.0.1 6379"),
            ("enable-debug-command", "yes"),
            ("enable-module-command", "yes"),
            ("enable-protected-configs", "yes"),
            ("rename-command", "CONFIG CONFIG2"),
            ("tls-key-file", "/etc/shadow"),
        ] {
            refused_everywhere(kind, binary, name, value, |n| {
                format!("{}, {}", q(&format!("--{n}")), q(value))
            });
        }
    }
    for item in ["ssl_key", "ssl_chain_cert", "ssl_ca_cert"] {
        for args in [
            format!("\"-o\", \"{item}=/etc/shadow\""),
            format!("\"-o{item}=/etc/shadow\""),
            format!("\"--extended=modern,{item}=../x\""),
        ] {
            refused(
                "memcached",
                "/usr/bin/memcached",
                &format!("args = [{args}]"),
                item,
            );
        }
    }
}

const TUNE_HEAD: &str = "name = \"t\"\n[target]\nkind = \"memcached\"\nsource = { debian = \"memcached\" }\n\n[[variant]]\nname = \"debian\"\nbinary = \"/usr/bin/memcached\"\n\n[[workload]]\nkind = \"kv\"\n\n";

#[test]
fn tune_flags_that_run_code_are_refused_at_check() {
    let mut flags = Vec::new();
    for (name, value) in [
        ("B", "/tmp/evil/"),
        ("specs", "/tmp/x.specs"),
        ("wrapper", "/tmp/w"),
        ("fplugin", "/tmp/p.so"),
        ("fuse-ld", "/tmp/ld"),
        ("ld-path", "/tmp/ld"),
        ("prefix", "/tmp/p"),
    ] {
        for dashes in ["-", "--"] {
            flags.push(format!("{dashes}{name}={value}"));
            flags.push(format!("-O2 {dashes}{name} {value}"));
        }
    }
    flags.extend(
        [
            "-Wl,-plugin,/tmp/p.so",
            "-Xlinker --plugin=/tmp/p.so",
            "-Xclang -load -Xclang /tmp/p.so",
            "-fpass-plugin=/tmp/p.so",
            "-fplugin-arg-x-y=1",
            "@/tmp/args",
            "-Wl,--dynamic-linker=/tmp/ld.so",
        ]
        .map(String::from),
    );
    for f in flags {
        let (code, _, err) = check(&format!("{TUNE_HEAD}[tune]\nflags = [\"\", {}]\n", q(&f)));
        assert_eq!(code, Some(2), "{f}: {err}");
        assert_eq!(err.lines().count(), 1, "{f}: {err}");
        assert!(
            err.contains("exp.toml:") && err.contains("flags"),
            "{f}: {err}"
        );
    }
    for c in ["/usr/bin/gcc", "gcc -B/tmp", "./clang", "gcc-12 -wrapper x"] {
        let (code, _, err) = check(&format!("{TUNE_HEAD}[tune]\ncompiler = [{}]\n", q(c)));
        assert_eq!(code, Some(2), "{c}: {err}");
        assert!(err.contains("gcc-N"), "{c}: {err}");
    }
    let (code, out, err) = check(&format!(
        "{TUNE_HEAD}[tune]\nflags = [\"\", \"-fuse-ld=lld -Wl,-O1\", \"-fno-plt\"]\n"
    ));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("tune: "), "{out}");
}

#[test]
fn check_names_the_variants_that_build() {
    let text = "name = \"b\"\n[target]\nkind = \"memcached\"\nsource = { debian = \"memcached\" }\n[[variant]]\nname = \"built\"\ncompiler = \"gcc\"\n[[variant]]\nname = \"installed\"\nbinary = \"/usr/bin/memcached\"\n[[workload]]\nkind = \"kv\"\n";
    let (code, out, err) = check(text);
    assert_eq!(code, Some(0), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("builds: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("built") && !line.contains("installed"),
        "{line}"
    );
    assert!(line.contains("build scripts"), "{line}");
    let (_, out, _) = check(&experiment("memcached", "/usr/bin/memcached", ""));
    assert!(!out.contains("builds: "), "{out}");
}
