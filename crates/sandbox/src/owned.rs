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
    use crate::target::{target_for, Target, TargetKind};

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
    fn cases(name: &str) -> Vec<String> {
        let mixed: String = name
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        let mut out = vec![name.to_string(), name.to_ascii_uppercase(), mixed];
        out.extend(out.clone().iter().map(|n| n.replace('-', "_")));
        out.extend(out.clone().iter().map(|n| n.replace('_', "-")));
        out
    }

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
