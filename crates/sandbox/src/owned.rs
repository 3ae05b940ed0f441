//! What the sandbox owns (port, listen address, data directory, sockets, daemon mode) found
//! in an experiment's arguments and options under every spelling the server itself accepts:
//! getopt bundles (`-vl0.0.0.0`), unique prefixes of long options (`--list=...`), `_` for
//! `-`, `loose-`, `-c name=value`, any case.
//!
//! This is the check that refuses a file before anything runs. Two more stand behind it:
//! the sandbox puts its own settings last where the server lets the last one win, and it
//! reads what the started server really listens on (see `Sandbox::start_with`).

/// One option as a server's command-line parser sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// A short option's letter, or a long option's full name.
    pub name: String,
    /// Its value, where it took one.
    pub value: Option<String>,
    /// The argument it came from, as written.
    pub spelling: String,
}

/// A long option of a getopt_long parser.
#[derive(Debug, Clone, Copy)]
pub struct Long {
    pub name: &'static str,
    /// Whether it takes a value (`--name=v` or `--name v`).
    pub value: bool,
    /// The short letter it stands for, if any (then [`Parsed::name`] is that letter).
    pub short: Option<char>,
}

/// How a short option takes a value in a getopt string: `x:` always, `x::` only attached.
fn short_takes(short: &str, c: char) -> Option<bool> {
    let mut chars = short.chars().peekable();
    while let Some(o) = chars.next() {
        let mut colons = 0;
        while chars.peek() == Some(&':') {
            chars.next();
            colons += 1;
        }
        if o == c {
            return Some(colons == 1);
        }
    }
    None
}

/// `args` walked the way getopt_long walks them with the option string `short` and the
/// options `long`: short options bundle (`-vl addr`, `-vladdr`), a long option may be any
/// unique prefix of its name, operands are skipped and `--` ends the options. With no
/// `long` table (plain getopt) `--name=value` is read as short options (PostgreSQL's `-`
/// option). A prefix that several options share yields each of them, so a check errs on
/// the side of refusing; an unknown letter is read as one taking no value.
pub fn getopt(args: &[String], short: &str, long: Option<&[Long]>) -> Vec<Parsed> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            break;
        }
        if let Some((body, long)) = arg.strip_prefix("--").zip(long) {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let exact: Vec<&Long> = long.iter().filter(|l| l.name == name).collect();
            let matches = if exact.is_empty() {
                long.iter()
                    .filter(|l| !name.is_empty() && l.name.starts_with(name))
                    .collect()
            } else {
                exact
            };
            let takes_next = attached.is_none() && matches.iter().any(|l| l.value);
            let value = if takes_next {
                let v = args.get(i).cloned();
                i += 1;
                v
            } else {
                attached
            };
            for l in matches {
                out.push(Parsed {
                    name: l.short.map_or(l.name.to_string(), String::from),
                    value: value.clone(),
                    spelling: arg.clone(),
                });
            }
            continue;
        }
        let Some(bundle) = arg.strip_prefix('-').filter(|b| !b.is_empty()) else {
            continue;
        };
        for (at, c) in bundle.char_indices() {
            let rest = &bundle[at + c.len_utf8()..];
            match short_takes(short, c) {
                Some(true) => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(rest.to_string())
                    };
                    let spelling = match (&value, rest.is_empty()) {
                        (Some(v), true) => format!("{arg} {v}"),
                        _ => arg.clone(),
                    };
                    out.push(Parsed {
                        name: c.to_string(),
                        value,
                        spelling,
                    });
                    break;
                }
                Some(false) if short.contains(&format!("{c}::")) => {
                    out.push(Parsed {
                        name: c.to_string(),
                        value: (!rest.is_empty()).then(|| rest.to_string()),
                        spelling: arg.clone(),
                    });
                    break;
                }
                _ => out.push(Parsed {
                    name: c.to_string(),
                    value: None,
                    spelling: arg.clone(),
                }),
            }
        }
    }
    out
}

/// A server setting's name as MariaDB reads it in a my.cnf line or a `--name`: any case,
/// `_` and `-` alike, without `loose-` (and the boolean and limit prefixes `skip-`,
/// `enable-`, `disable-`, `maximum-`).
pub fn mariadb_name(name: &str) -> String {
    let mut n = name.to_ascii_lowercase().replace('_', "-");
    loop {
        let Some(rest) = ["loose-", "skip-", "enable-", "disable-", "maximum-"]
            .iter()
            .find_map(|p| n.strip_prefix(p))
        else {
            return n;
        };
        n = rest.to_string();
    }
}

/// Whether MariaDB would read `name` (normalised by [`mariadb_name`]) as `owned`: the
/// whole name, or a prefix of it (MariaDB accepts unique prefixes of option names).
pub fn mariadb_means(name: &str, owned: &str) -> bool {
    let owned = owned.replace('_', "-");
    !name.is_empty() && owned.starts_with(name)
}

/// The first owned setting among `parsed` options, by `owned(name, value)`.
pub fn first_owned(
    parsed: Vec<Parsed>,
    owned: impl Fn(&str, Option<&str>) -> Option<&'static str>,
) -> Option<(String, &'static str)> {
    parsed
        .into_iter()
        .find_map(|p| owned(&p.name, p.value.as_deref()).map(|what| (p.spelling, what)))
}

/// What a server setting does that an experiment file may not ask for, beyond taking over
/// what the sandbox owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    /// It names a file or folder the server writes (or reads): refused when the path
    /// leaves the sandbox (absolute, `~`, or a `..` step). The text says what a relative
    /// path is relative to.
    Path(&'static str),
    /// It runs a command, loads code or opens a port: refused unless empty. The text
    /// says what it does.
    Runs(&'static str),
    /// It sends something out of the sandbox when its value holds one of these words
    /// (any case, in a list): refused then. The text says what it does.
    Words(&'static [&'static str], &'static str),
}

/// The first piece of `value` that leads out of a folder: an absolute path, a home
/// folder (`~`) or a `..` step, read through the quotes and escapes a config file
/// removes and in each item of a list (`a;b`, `a,b`, `path:size`, words).
pub fn path_outside(value: &str) -> Option<String> {
    let plain: String = value
        .chars()
        .filter(|c| !matches!(c, '"' | '\'' | '\\'))
        .collect();
    plain
        .split(|c: char| matches!(c, ';' | ',' | ':' | '=') || c.is_whitespace())
        .map(str::trim)
        .find(|p| p.starts_with('/') || p.starts_with('~') || p.split('/').any(|s| s == ".."))
        .map(str::to_string)
}

/// Why `value` may not be given to a setting with `risk`, as a phrase that follows the
/// setting's name ("option log_error names ..."); None: it may.
pub fn refusal(risk: Risk, value: &str) -> Option<String> {
    match risk {
        Risk::Path(base) => path_outside(value).map(|p| {
            format!("names {p:?}, outside the sandbox; give a path relative to {base} without \"..\", or remove it")
        }),
        Risk::Words(words, what) => {
            let lower = value.to_ascii_lowercase();
            let hit = lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .find(|w| words.contains(w))?;
            Some(format!("names {hit:?}, which {what}; remove it"))
        }
        Risk::Runs(what) => {
            let empty = value
                .chars()
                .all(|c| c.is_whitespace() || c == '"' || c == '\'');
            (!empty).then(|| {
                format!("{what}: bakeoff refuses settings that run commands, load code or open ports; remove it")
            })
        }
    }
}

/// The risk of setting `name` (normalised by [`mariadb_name`]) in MariaDB, among `rules`
/// (names in MariaDB's `-` spelling; one ending in `*` covers every name it starts):
/// the name itself or a prefix of one (MariaDB's unique prefixes).
pub fn mariadb_risk(name: &str, rules: &[(&str, Risk)]) -> Option<Risk> {
    rules.iter().find_map(|(rule, risk)| {
        let hit = match rule.strip_suffix('*') {
            Some(family) => name.starts_with(family),
            None => mariadb_means(name, rule),
        };
        hit.then_some(*risk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    const LONG: &[Long] = &[
        Long {
            name: "listen",
            value: true,
            short: Some('l'),
        },
        Long {
            name: "listen-backlog",
            value: true,
            short: Some('b'),
        },
        Long {
            name: "verbose",
            value: false,
            short: Some('v'),
        },
    ];

    fn names(a: &[&str]) -> Vec<(String, Option<String>)> {
        getopt(&args(a), "vl:b:t:o::", Some(LONG))
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect()
    }

    #[test]
    fn bundles_attached_and_separate_values() {
        let l = |v: &str| ("l".to_string(), Some(v.to_string()));
        let v = ("v".to_string(), None);
        assert_eq!(names(&["-vl0.0.0.0"]), vec![v.clone(), l("0.0.0.0")]);
        assert_eq!(names(&["-vl", "0.0.0.0"]), vec![v.clone(), l("0.0.0.0")]);
        assert_eq!(names(&["-t", "-l"]), vec![("t".into(), Some("-l".into()))]);
        assert_eq!(names(&["-o"]), vec![("o".into(), None)]);
        assert_eq!(names(&["-ol"]), vec![("o".into(), Some("l".into()))]);
        assert_eq!(names(&["--", "-l", "x"]), vec![]);
        assert_eq!(names(&["operand", "-l", "x"]), vec![l("x")]);
    }

    #[test]
    fn long_options_by_unique_prefix_and_both_when_shared() {
        let n = |a: &[&str]| names(a).into_iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(n(&["--listen=x"]), vec!["l"]);
        assert_eq!(n(&["--lis", "x"]), vec!["l", "b"]);
        assert_eq!(n(&["--listen-b=3"]), vec!["b"]);
        assert_eq!(n(&["--listen", "x"]), vec!["l"]);
        assert_eq!(n(&["--verb", "-l", "y"]), vec!["v", "l"]);
        // No long table: `--name=value` is the short option `-`.
        let pg = getopt(&args(&["--listen_addresses=*"]), "c:-:", None);
        assert_eq!(pg[0].name, "-");
        assert_eq!(pg[0].value.as_deref(), Some("listen_addresses=*"));
    }

    #[test]
    fn mariadb_spellings() {
        for n in [
            "bind-address",
            "BIND_ADDRESS",
            "loose-bind-address",
            "loose_bind_addr",
        ] {
            assert!(mariadb_means(&mariadb_name(n), "bind-address"), "{n}");
        }
        assert!(!mariadb_means(&mariadb_name("port-open-timeout"), "port"));
        assert!(!mariadb_means("", "port"));
    }
}

/// Generated spellings of every owned setting, per server: each must be refused; and
/// ordinary arguments next to them must not be.
#[cfg(test)]
mod spellings {
    use crate::kind::TargetKind;
    use crate::target::Target;
    use crate::targets::target_for;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn refused(t: &dyn Target, args: &[String]) {
        assert!(t.owned_arg(args).is_some(), "{}: {args:?} passed", t.kind());
    }

    fn passed(t: &dyn Target, args: &[&str]) {
        let got = t.owned_arg(&v(args));
        assert!(got.is_none(), "{}: {args:?} refused as {got:?}", t.kind());
    }

    /// Upper, lower and mixed case, and `-`/`_` swapped.
    pub(super) use bakeoff_testkit::spellings as cases;

    /// Harmless arguments an owned one may hide behind.
    const BEFORE: &[&[&str]] = &[&[], &["-t", "4"], &["-v"], &["operand"]];

    #[test]
    fn memcached_every_bundle_and_long_prefix() {
        let t = target_for(TargetKind::Memcached);
        let owned = [
            ('p', Some("11311"), "port"),
            ('l', Some("0.0.0.0"), "listen"),
            ('U', Some("11311"), "udp-port"),
            ('s', Some("/tmp/m.sock"), "unix-socket"),
            ('a', Some("777"), "unix-mask"),
            ('d', None, "daemon"),
            ('P', Some("/tmp/pid"), "pidfile"),
        ];
        for before in BEFORE {
            for (c, value, long) in owned {
                for bundle in ["", "v", "vv", "Mk", "vL"] {
                    let mut forms = vec![vec![format!("-{bundle}{c}{}", value.unwrap_or(""))]];
                    if let Some(val) = value {
                        forms.push(vec![format!("-{bundle}{c}"), val.to_string()]);
                    }
                    for f in forms {
                        refused(&*t, &[v(before), f].concat());
                    }
                }
                for end in 1..=long.len() {
                    let p = &long[..end];
                    // A prefix memcached would reject as ambiguous still counts.
                    let form = match value {
                        Some(val) => vec![format!("--{p}={val}")],
                        None => vec![format!("--{p}")],
                    };
                    refused(&*t, &[v(before), form].concat());
                }
            }
        }
        passed(&*t, &["-t", "4", "-m", "64", "-c", "4096", "-vv"]);
        passed(&*t, &["-t", "-l"]);
        passed(
            &*t,
            &["-o", "modern,no_lru_crawler", "--threads=4", "-uroot"],
        );
        passed(&*t, &["--conn-limit=100", "--memory-limit", "64"]);
    }

    #[test]
    fn redis_directives_in_any_case_and_one_argument() {
        let t = target_for(TargetKind::Redis);
        for d in [
            "bind",
            "port",
            "dir",
            "daemonize",
            "pidfile",
            "logfile",
            "unixsocket",
            "include",
        ] {
            for n in cases(d) {
                refused(&*t, &v(&[&format!("--{n}"), "x"]));
                refused(&*t, &v(&["--io-threads", "2", &format!("--{n} 0.0.0.0")]));
                assert!(t.owned_option(&n).is_some(), "option {n}");
            }
        }
        passed(
            &*t,
            &["--io-threads", "2", "--maxmemory", "1gb", "--save", ""],
        );
        assert!(t.owned_option("maxclients").is_none());
    }

    #[test]
    fn mariadb_case_dashes_loose_and_prefixes() {
        let t = target_for(TargetKind::Mariadb);
        for name in ["bind-address", "port", "datadir", "socket", "pid-file"] {
            for n in cases(name) {
                for lead in ["", "loose-", "loose_", "LOOSE-"] {
                    for end in (name.len().saturating_sub(4).max(1))..=n.len() {
                        let spelled = format!("{lead}{}", &n[..end]);
                        refused(&*t, &v(&[&format!("--{spelled}=0.0.0.0")]));
                        refused(
                            &*t,
                            &v(&["--innodb-buffer-pool-size=1G", &format!("--{spelled}"), "x"]),
                        );
                        assert!(t.owned_option(&spelled).is_some(), "option {spelled}");
                    }
                }
            }
        }
        for short in [
            &["-P3307"][..],
            &["-P", "3307"],
            &["-vP3307"],
            &["-h/elsewhere"],
            &["-ah", "/x"],
        ] {
            refused(&*t, &v(short));
        }
        passed(
            &*t,
            &[
                "--innodb-buffer-pool-size=1G",
                "--port-open-timeout=3",
                "-uroot",
            ],
        );
        passed(&*t, &["--skip-log-bin", "--max-connections=300"]);
        for ok in [
            "innodb_buffer_pool_size",
            "max_connections",
            "skip_log_bin",
            "skip-name-resolve",
        ] {
            assert!(t.owned_option(ok).is_none(), "{ok}");
        }
        assert!(t.owned_option("skip_networking").is_some());
    }

    #[test]
    fn postgres_getopt_bundles_and_settings_in_every_spelling() {
        let t = target_for(TargetKind::Postgres);
        for a in [
            &["-i"][..],
            &["-Fi"],
            &["-h", "*"],
            &["-Fh0.0.0.0"],
            &["-p5433"],
            &["-D", "/x"],
            &["-k/tmp"],
            &["-B", "100", "-i"],
        ] {
            refused(&*t, &v(a));
        }
        for name in [
            "listen_addresses",
            "port",
            "unix_socket_directories",
            "config_file",
            "hba_file",
        ] {
            for n in cases(name) {
                refused(&*t, &v(&["-c", &format!("{n}=x")]));
                refused(&*t, &v(&[&format!("-c{n}=x")]));
                refused(&*t, &v(&[&format!("--{n}=x")]));
                refused(&*t, &v(&["-B", "100", "-Fc", &format!("{n}=x")]));
                assert!(t.owned_option(&n).is_some(), "option {n}");
            }
        }
        passed(
            &*t,
            &[
                "-c",
                "shared_buffers=128MB",
                "--work_mem=4MB",
                "-N",
                "100",
                "-B",
                "-i",
            ],
        );
        assert!(t.owned_option("shared_buffers").is_none());
    }
}

/// Issue 44, class 4: settings that write outside the sandbox, run a command, load code or
/// open a port, refused in every spelling each server reads (generated), and the
/// harmless neighbours of each still passed.
#[cfg(test)]
mod hostile {
    use super::spellings::cases;
    use crate::kind::TargetKind;
    use crate::target::Target;
    use crate::targets::target_for;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// Paths that leave the folder they are relative to.
    const OUTSIDE: &[&str] = &[
        "/tmp/x",
        "../x",
        "../../../../tmp/x",
        "a/../../x",
        "~/x",
        "\"/tmp/x\"",
        "'/tmp/x'",
        " /tmp/x",
        "x;/tmp/y",
        "d:t:o,/tmp/trace",
    ];

    /// Paths that stay in it (and values that name none).
    const INSIDE: &[&str] = &["x.log", "logs/x.log", "./x", "a..b", "ON", "1", ""];

    fn arg_refused(t: &dyn Target, args: &[String]) {
        let owned = t.owned_arg(args).is_some();
        assert!(
            owned || t.refused_arg(args).is_some(),
            "{}: {args:?} passed",
            t.kind()
        );
    }

    fn arg_passed(t: &dyn Target, args: &[String]) {
        let got = t
            .refused_arg(args)
            .or(t.owned_arg(args).map(|(a, w)| (a, w.into())));
        assert!(got.is_none(), "{}: {args:?} refused: {got:?}", t.kind());
    }

    fn setting_refused(t: &dyn Target, key: &str, value: &str) {
        let why = t.refused_setting(key, value);
        assert!(
            why.is_some(),
            "{}: option {key} = {value:?} passed",
            t.kind()
        );
    }

    fn setting_passed(t: &dyn Target, key: &str, value: &str) {
        let why = t.refused_setting(key, value);
        assert!(
            why.is_none(),
            "{}: {key} = {value:?} refused: {why:?}",
            t.kind()
        );
    }

    #[test]
    fn hostile_injection_mariadb_paths_commands_and_galera() {
        let t = target_for(TargetKind::Mariadb);
        let paths = [
            "log-error",
            "general-log-file",
            "slow-query-log-file",
            "log-bin",
            "log-bin-index",
            "relay-log",
            "tmpdir",
            "innodb-data-home-dir",
            "innodb-log-group-home-dir",
            "aria-log-dir-path",
            "character-sets-dir",
            "keyring-file-data",
            "ssl-key",
            "ssl-cert",
            "ssl-ca",
        ];
        let runs = [
            "init-file",
            "plugin-load",
            "plugin-load-add",
            "plugin-dir",
            "early-plugin-load",
            "wsrep-on",
            "wsrep-provider",
            "wsrep-cluster-address",
            "wsrep-node-address",
            "wsrep-notify-cmd",
            "wsrep-sst-method",
        ];
        for name in paths.iter().chain(&runs) {
            let risky_value = |n: &str| {
                if paths.contains(&n) {
                    OUTSIDE
                } else {
                    &["ON", "/usr/lib/galera/libgalera_smm.so", "gcomm://"][..]
                }
            };
            let leads = ["", "loose-", "LOOSE_", "enable-", "skip-loose-"];
            for (i, n) in cases(name).iter().enumerate() {
                for (j, lead) in leads.iter().enumerate() {
                    // The whole name and the prefixes MariaDB takes for it; every value
                    // as an option, one of them (in turn) on the command line.
                    for end in (name.len() - 2)..=n.len() {
                        let spelled = format!("{lead}{}", &n[..end]);
                        let values = risky_value(name);
                        for value in values {
                            setting_refused(&*t, &spelled, value);
                        }
                        let value = values[(i + j + end) % values.len()];
                        arg_refused(&*t, &v(&[&format!("--{spelled}={value}")]));
                        arg_refused(
                            &*t,
                            &v(&["--max-connections=9", &format!("--{spelled}"), value]),
                        );
                    }
                }
                if paths.contains(name) {
                    for value in INSIDE {
                        setting_passed(&*t, n, value);
                        arg_passed(&*t, &v(&[&format!("--{n}={value}")]));
                    }
                }
            }
        }
        for short in [
            &["-t/tmp"][..],
            &["-t", "/tmp"],
            &["-vt", "../x"],
            &["-r", "/"],
            &["-#d:t:o,/tmp/trace"],
        ] {
            arg_refused(&*t, &v(short));
        }
        for (k, val) in [
            ("innodb_buffer_pool_size", "1G"),
            ("general_log", "1"),
            ("slow_query_log", "on"),
            ("skip_log_bin", "on"),
            ("log_bin_trust_function_creators", "1"),
            ("init_connect", "SET NAMES utf8mb4"),
            ("tmp_table_size", "64M"),
            ("plugin_maturity", "stable"),
            ("archive_command", "/bin/true"),
        ] {
            setting_passed(&*t, k, val);
        }
        arg_passed(&*t, &v(&["-t", "tmp", "--skip-log-bin", "--general-log"]));
    }

    #[test]
    fn hostile_injection_postgres_logs_commands_and_libraries() {
        let t = target_for(TargetKind::Postgres);
        let paths = ["log_directory", "log_filename", "stats_temp_directory"];
        let runs = [
            "archive_command",
            "restore_command",
            "archive_cleanup_command",
            "recovery_end_command",
            "ssl_passphrase_command",
            "archive_library",
            "shared_preload_libraries",
            "local_preload_libraries",
            "session_preload_libraries",
            "dynamic_library_path",
            "jit_provider",
        ];
        for name in paths.iter().chain(&runs) {
            let values = if paths.contains(name) {
                OUTSIDE
            } else {
                &["touch /tmp/pwned", "pg_stat_statements", "$libdir"][..]
            };
            for n in cases(name) {
                for value in values {
                    setting_refused(&*t, &n, value);
                    let set = format!("{n}={value}");
                    for a in [
                        v(&["-c", &set]),
                        v(&[&format!("-c{set}")]),
                        v(&[&format!("--{set}")]),
                        v(&["-B", "100", "-Fc", &set]),
                    ] {
                        arg_refused(&*t, &a);
                    }
                }
            }
            if paths.contains(name) {
                for value in INSIDE {
                    setting_passed(&*t, name, value);
                }
            }
        }
        setting_passed(&*t, "log_filename", "postgresql-%Y-%m-%d_%H%M%S.log");
        setting_passed(&*t, "archive_command", "");
        setting_passed(&*t, "shared_buffers", "128MB");
        for a in [
            &["--single"][..],
            &["--boot"],
            &["--forkbackend"],
            &["--describe-config"],
            &["-r", "/tmp/out"],
            &["-r../out"],
        ] {
            arg_refused(&*t, &v(a));
        }
        arg_passed(&*t, &v(&["-c", "log_directory=log", "-N", "100"]));
    }

    #[test]
    fn hostile_injection_memcached_memory_file_extstore_and_proxy() {
        let t = target_for(TargetKind::Memcached);
        for value in OUTSIDE.iter().filter(|p| !p.starts_with('d')) {
            let ext = format!("ext_path={value}:64m");
            for a in [
                v(&["-e", value]),
                v(&[&format!("-e{value}")]),
                v(&[&format!("-vve{value}")]),
                v(&[&format!("--memory-file={value}")]),
                v(&[&format!("--memory-f={value}")]),
                v(&["-o", &ext]),
                v(&["-o", &format!("modern,{ext}")]),
                v(&[&format!("-o{ext}")]),
                v(&[&format!("--extended={ext}")]),
                v(&[&format!("--ext={ext}")]),
                v(&["-t", "4", "-vo", &ext]),
            ] {
                arg_refused(&*t, &a);
            }
        }
        arg_refused(&*t, &v(&["-o", "proxy_config=/tmp/x.lua"]));
        arg_refused(&*t, &v(&["-o", "modern,proxy_config=routes.lua"]));
        arg_passed(
            &*t,
            &v(&["-e", "memfile", "-o", "modern,ext_path=ext:64m", "-t", "4"]),
        );
    }

    #[test]
    fn hostile_injection_redis_quoted_directives_files_and_modules() {
        let t = target_for(TargetKind::Redis);
        // The attack's own: owned directives with their names quoted.
        for d in [
            "dir",
            "logfile",
            "include",
            "unixsocket",
            "pidfile",
            "bind",
            "port",
        ] {
            for n in cases(d) {
                for quoted in [
                    format!("--\"{n}\""),
                    format!("--'{n}'"),
                    format!("--\"{n}\" /tmp/x"),
                    format!("--'{n}' /tmp/x"),
                    format!("-- \"{n}\""),
                ] {
                    for before in [&[][..], &["--io-threads", "2"], &["--save", ""]] {
                        let a = [v(before), vec![quoted.clone(), "/tmp/x".into()]].concat();
                        arg_refused(&*t, &a);
                    }
                }
            }
        }
        // Escapes inside double quotes, and a leading word Redis reads as a directive.
        for a in [
            &["--\"d\\x69r\"", "/tmp"][..],
            &["--\"\\x64ir\"", "/tmp"],
            &["dir", "/tmp"],
            &["LogFile", "/tmp/x.log"],
        ] {
            arg_refused(&*t, &v(a));
        }
        // Files outside `dir`, and module code.
        for d in [
            "dbfilename",
            "appendfilename",
            "appenddirname",
            "aclfile",
            "cluster-config-file",
        ] {
            for n in cases(d) {
                for value in OUTSIDE {
                    setting_refused(&*t, &n, value);
                    arg_refused(&*t, &v(&[&format!("--{n}"), value]));
                    arg_refused(&*t, &v(&[&format!("--\"{n}\""), value]));
                }
                setting_passed(&*t, &n, "dump.rdb");
                arg_passed(&*t, &v(&[&format!("--{n}"), "dump.rdb"]));
            }
        }
        for n in cases("loadmodule") {
            setting_refused(&*t, &n, "/tmp/evil.so");
            arg_refused(&*t, &v(&[&format!("--'{n}'"), "/tmp/evil.so"]));
        }
        arg_passed(
            &*t,
            &v(&["--io-threads", "2", "--save", "", "--maxmemory 1gb"]),
        );
    }

    #[test]
    fn hostile_injection_sqlite_temp_store_directory() {
        let t = target_for(TargetKind::Sqlite);
        for n in cases("temp_store_directory") {
            for value in OUTSIDE {
                setting_refused(&*t, &n, value);
                setting_refused(&*t, &format!("main.{n}"), value);
                let set = format!("{n}={value}");
                arg_refused(&*t, &v(&["--pragma", &set]));
                arg_refused(&*t, &v(&[&format!("--pragma={set}")]));
            }
        }
        setting_passed(&*t, "temp_store_directory", "tmp");
        setting_passed(&*t, "cache_size", "-64000");
    }

    /// Issue 50: the settings that make a server connect out, point it at files outside
    /// the sandbox (keys, includes, character sets, its own tree) or open its file
    /// writers, refused in every spelling its parser takes.
    #[test]
    fn sql_file_writers_and_connect_out_settings_are_refused_in_every_spelling() {
        let my = target_for(TargetKind::Mariadb);
        let mysql = target_for(TargetKind::Mysql);
        for t in [&my, &mysql] {
            for name in ["secure-file-priv", "basedir", "no-defaults"] {
                for n in cases(name) {
                    for lead in ["", "loose-", "LOOSE_", "enable-"] {
                        for end in (name.len() - 3)..=n.len() {
                            let spelled = format!("{lead}{}", &n[..end]);
                            assert!(t.owned_option(&spelled).is_some(), "{spelled}");
                            for value in ["", "/", "/tmp", "files"] {
                                arg_refused(&**t, &v(&[&format!("--{spelled}={value}")]));
                            }
                        }
                    }
                }
            }
            for name in [
                "character-sets-dir",
                "lc-messages-dir",
                "keyring-file-data",
                "ssl-key",
                "ssl-capath",
                "tls-key",
            ] {
                for n in cases(name) {
                    setting_refused(&**t, &n, "/etc/shadow");
                    setting_refused(&**t, &format!("loose_{n}"), "../../x");
                    arg_refused(&**t, &v(&[&format!("--{n}=/etc/shadow")]));
                }
            }
            for n in cases("early-plugin-load") {
                setting_refused(&**t, &n, "keyring_file.so");
                setting_refused(&**t, &format!("loose-{n}"), "x.so");
            }
        }
        let redis = target_for(TargetKind::Redis);
        let valkey = target_for(TargetKind::Valkey);
        for t in [&redis, &valkey] {
            for d in [
                "replicaof",
                "slaveof",
                "enable-protected-configs",
                "enable-debug-command",
                "enable-module-command",
                "rename-command",
            ] {
                for n in cases(d) {
                    assert!(t.owned_option(&n).is_some(), "{n}");
                    arg_refused(&**t, &v(&[&format!("--{n}"), "10.0.0.1", "6379"]));
                    arg_refused(&**t, &v(&[&format!("--\"{n}\""), "yes"]));
                    arg_refused(&**t, &v(&["--save", "", &format!("--{n} yes")]));
                }
            }
            for d in ["tls-key-file", "tls-cert-file", "tls-ca-cert-dir"] {
                for n in cases(d) {
                    setting_refused(&**t, &n, "/etc/shadow");
                    arg_refused(&**t, &v(&[&format!("--{n}"), "/etc/shadow"]));
                }
                setting_passed(&**t, d, "tls/key.pem");
            }
        }
        let pg = target_for(TargetKind::Postgres);
        for (name, value) in [
            ("primary_conninfo", "host=10.0.0.1"),
            ("restore_command", "cp x y"),
            ("ssl_key_file", "/etc/shadow"),
            ("ssl_cert_file", "../x"),
            ("ssl_ca_file", "/etc/ssl/x"),
            ("include", "x.conf"),
            ("include_dir", "conf.d"),
            ("include_if_exists", "/tmp/x"),
            ("extension_destdir", "/tmp/ext"),
            ("log_destination", "syslog"),
            ("log_destination", "stderr,SysLog"),
            ("log_destination", "csvlog, eventlog"),
        ] {
            for n in cases(name) {
                setting_refused(&*pg, &n, value);
                arg_refused(&*pg, &v(&["-c", &format!("{n}={value}")]));
                arg_refused(&*pg, &v(&[&format!("--{n}={value}")]));
            }
        }
        for name in ["data_directory", "hba_file", "config_file"] {
            for n in cases(name) {
                assert!(pg.owned_option(&n).is_some(), "{n}");
            }
        }
        setting_passed(&*pg, "log_destination", "stderr,csvlog");
        let mc = target_for(TargetKind::Memcached);
        for item in ["ssl_key", "ssl_chain_cert", "ssl_ca_cert"] {
            for value in OUTSIDE
                .iter()
                .filter(|p| !p.starts_with('d') && !p.contains(';'))
            {
                let o = format!("{item}={value}");
                for a in [
                    v(&["-o", &o]),
                    v(&[&format!("-o{o}")]),
                    v(&["-t", "4", "-vo", &format!("modern,{o}")]),
                    v(&[&format!("--extended={o}")]),
                    v(&[&format!("--ext={o}")]),
                ] {
                    arg_refused(&*mc, &a);
                }
            }
            arg_passed(&*mc, &v(&["-o", &format!("{item}=tls/key.pem")]));
        }
        for a in [
            &["-Y", "/etc/shadow"][..],
            &["-Y/etc/shadow"],
            &["--auth-file=/etc/shadow"],
        ] {
            arg_refused(&*mc, &v(a));
        }
    }

    /// CHANGE MASTER's settings as options (where and as whom a replica connects), and
    /// the statements a replica runs, refused in every spelling on both servers.
    #[test]
    fn mariadb_master_options_are_refused_in_every_spelling() {
        for t in [
            target_for(TargetKind::Mariadb),
            target_for(TargetKind::Mysql),
        ] {
            for name in [
                "master-host",
                "master-user",
                "master-password",
                "master-port",
                "master-connect-retry",
                "master-ssl",
                "master-ssl-ca",
                "master-ssl-verify-server-cert",
                "init-slave",
                "init-replica",
            ] {
                for n in cases(name) {
                    setting_refused(&*t, &n, "10.0.0.1");
                    setting_refused(&*t, &format!("loose_{n}"), "3306");
                    arg_refused(&*t, &v(&[&format!("--{n}=10.0.0.1")]));
                    arg_refused(&*t, &v(&[&format!("--loose-{n}=x")]));
                }
            }
            setting_passed(&*t, "master-retry-count", "10");
        }
    }

    #[test]
    fn hostile_injection_redis_words_split_as_redis_splits_them() {
        use crate::redis::split_words;
        let w = |s: &str| split_words(s).map(|v| v.join("|"));
        assert_eq!(w("a  b").as_deref(), Some("a|b"));
        assert_eq!(w("\"d\\x69r\" x").as_deref(), Some("dir|x"));
        assert_eq!(w("'it\\'s' x").as_deref(), Some("it's|x"));
        assert_eq!(w("\"a\\\"b\"").as_deref(), Some("a\"b"));
        assert_eq!(w("\"dir\"x"), None);
        assert_eq!(w("\"open"), None);
    }
}
