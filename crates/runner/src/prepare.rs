//! Before the first run: inputs that need the machine checked (compilers, workload
//! settings), the source fetched, every variant built or its binary described. A variant
//! whose build fails is marked failed; the others go on.

use crate::folder::{safe_name, Folder};
use crate::{Observer, Options, RunError};
use bakeoff_build::{self as build, BuildSpec, Cache, SourceSpec};
use bakeoff_load::Schedule;
use bakeoff_plan::{
    key, Arrival, KeyDistribution, Loaded, RowDistribution, ValueSize, Variant, Workload,
    WorkloadKind,
};
use bakeoff_report::model::{BuildRecord, Results, SourceRecord, VariantRecord};
use bakeoff_workloads::{kv, oltp, replay, sqlsuite, tpcc};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A variant that can run: its binary, full server arguments and (SQL) server options.
pub struct ReadyVariant {
    pub name: String,
    pub binary: PathBuf,
    pub args: Vec<String>,
    /// Server options (SQL targets), merged and with bakeoff's defaults.
    pub options: BTreeMap<String, String>,
    /// MariaDB storage engine for this variant's tables, over the workload's.
    pub engine: Option<String>,
    /// Index into `results.variants`.
    pub record: usize,
    /// Sanitizers the build carries (their reports are read from the server's log).
    pub sanitize: Vec<bakeoff_plan::Sanitizer>,
    /// A checker the server runs under.
    pub run_under: Option<bakeoff_plan::RunUnder>,
    /// Build arguments that change the server's file format (page and segment sizes):
    /// data loaded by a variant without the same ones is not shared with it.
    pub format_args: Vec<String>,
}

/// One workload's settings, ready for the load engine (connections filled in per cell).
#[derive(Debug, Clone)]
pub enum WorkloadConfig {
    Kv(kv::KvConfig),
    Oltp(oltp::OltpConfig),
    Sysbench(oltp::OltpConfig),
    Tpcc(TpccSetup),
    Replay(ReplaySetup),
    Mysqlslap(ReplaySetup),
    Sqlsuite(sqlsuite::SuiteConfig),
}

/// A replay or mysqlslap workload: the parsed log, its setup script, how often to run it.
#[derive(Debug, Clone)]
pub struct ReplaySetup {
    /// The log as given (mysqlslap reads it itself).
    pub file: PathBuf,
    pub format: replay::LogFormat,
    pub statements: Vec<replay::Statement>,
    /// Statements run once into the prepared data, and the file they came from.
    pub setup: Vec<String>,
    pub setup_file: Option<PathBuf>,
    pub iterations: u32,
    pub client_threads: usize,
    pub unix_socket: bool,
    /// EXPLAIN the heaviest classes (how many).
    pub explain: usize,
}

/// One point of a tpcc workload's warehouse sweep.
#[derive(Debug, Clone)]
pub struct TpccSetup {
    pub cfg: tpcc::TpccConfig,
    /// The workload's name in the file (the sweep's cells share it).
    pub workload: String,
    pub find_max_w: bool,
    pub unix_socket: bool,
}

impl WorkloadConfig {
    /// The oltp parameters of an oltp or sysbench workload.
    pub fn sql(&self) -> Option<&oltp::OltpConfig> {
        match self {
            WorkloadConfig::Kv(_)
            | WorkloadConfig::Tpcc(_)
            | WorkloadConfig::Replay(_)
            | WorkloadConfig::Mysqlslap(_)
            | WorkloadConfig::Sqlsuite(_) => None,
            WorkloadConfig::Oltp(c) | WorkloadConfig::Sysbench(c) => Some(c),
        }
    }

    /// Whether this workload speaks SQL (its runs carry TPS and per-kind figures).
    pub fn is_sql(&self) -> bool {
        !matches!(self, WorkloadConfig::Kv(_))
    }
}

/// What the runner runs: one entry per workload of the file, except that a tpcc
/// workload with a warehouse sweep becomes one entry per warehouse count (each with its
/// own loaded data), named `<workload>-w<W>`.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    /// The name its cells and files carry.
    pub name: String,
    /// Its cells' connection counts.
    pub connections: Vec<usize>,
    pub config: WorkloadConfig,
}

/// Checks what the file alone could not: compilers exist, workload settings hold together,
/// the tools a workload runs are installed. Returns what the runner runs, in file order.
pub fn check_inputs(l: &Loaded) -> Result<Vec<WorkloadSpec>, RunError> {
    let e = &l.experiment;
    let valgrind_at: Option<Vec<bakeoff_plan::Key>> =
        if e.plan.mode == bakeoff_plan::Mode::Instructions {
            Some(key!["plan", "mode"].to_vec())
        } else {
            e.variants
                .iter()
                .position(|v| v.run_under.is_some())
                .map(|i| key!["variant", i, "run_under"].to_vec())
        };
    if let Some(at) = valgrind_at {
        if bakeoff_os::path::which("valgrind").is_none() {
            return Err(RunError::BadInput(
                l.error_at(
                    &at,
                    "valgrind is not installed; run scripts/setup.sh (apt-get install valgrind)",
                )
                .to_string(),
            ));
        }
    }
    if e.target.kind == bakeoff_plan::TargetKind::Sqlite && bakeoff_sandbox::host_binary().is_none()
    {
        return Err(RunError::BadInput(
            l.error_at(
                &key!["target", "kind"],
                "bakeoff-sqlited (the host a sqlite target runs in) is not beside bakeoff or on PATH; run scripts/setup.sh, which installs both",
            )
            .to_string(),
        ));
    }
    for (i, v) in l.experiment.variants.iter().enumerate() {
        if v.is_build() {
            build::check_compiler(v.compiler_or_default()).map_err(|e| {
                RunError::BadInput(
                    l.error_at(
                        &key!["variant", i, "compiler"],
                        format!("variant {:?}: {e}", v.name),
                    )
                    .to_string(),
                )
            })?;
        }
    }
    let library = e.target.kind == bakeoff_plan::TargetKind::Sqlite;
    for (i, v) in e.variants.iter().enumerate() {
        if let Some(b) = &v.binary {
            check_program(&l.resolve(b), library).map_err(|m| {
                RunError::BadInput(
                    l.error_at(
                        &key!["variant", i, "binary"],
                        format!("variant {:?}: {m}", v.name),
                    )
                    .to_string(),
                )
            })?;
        }
    }
    let mut out = Vec::new();
    for (i, w) in l.experiment.workloads.iter().enumerate() {
        if w.kind == WorkloadKind::Tpcc {
            out.extend(tpcc_specs(l, i, w));
            continue;
        }
        let cfg = match w.kind {
            WorkloadKind::Kv => {
                let cfg = kv_config(w);
                for c in w.connections.to_vec() {
                    let mut probe = cfg.clone();
                    probe.connections = c;
                    probe.validate().map_err(|m| {
                        RunError::BadInput(l.error_at(&key!["workload", i], m).to_string())
                    })?;
                }
                WorkloadConfig::Kv(cfg)
            }
            WorkloadKind::Oltp => WorkloadConfig::Oltp(oltp_config(w)),
            WorkloadKind::Sysbench => {
                if bakeoff_os::path::which("sysbench").is_none() {
                    return Err(RunError::BadInput(
                        l.error_at(
                            &key!["workload", i, "kind"],
                            "sysbench is not installed; run scripts/setup.sh (apt-get install sysbench)",
                        )
                        .to_string(),
                    ));
                }
                WorkloadConfig::Sysbench(oltp_config(w))
            }
            WorkloadKind::Replay => WorkloadConfig::Replay(replay_setup(l, i, w)?),
            WorkloadKind::Mysqlslap => {
                if bakeoff_os::path::which("mariadb-slap").is_none() {
                    return Err(RunError::BadInput(
                        l.error_at(
                            &key!["workload", i, "kind"],
                            "mariadb-slap is not installed; run scripts/setup.sh (apt-get install mariadb-client)",
                        )
                        .to_string(),
                    ));
                }
                let s = replay_setup(l, i, w)?;
                if s.format != replay::LogFormat::SqlFile {
                    return Err(RunError::BadInput(
                        l.error_at(
                            &key!["workload", i, "file"],
                            format!("mariadb-slap reads plain .sql files, and this is a {}; use kind = \"replay\" for logs", s.format.name()),
                        )
                        .to_string(),
                    ));
                }
                WorkloadConfig::Mysqlslap(s)
            }
            WorkloadKind::Sqlsuite => WorkloadConfig::Sqlsuite(sqlsuite::SuiteConfig {
                scale: w.scale.unwrap_or(1.0),
                groups: match &w.groups {
                    Some(g) => g
                        .iter()
                        .filter_map(|n| sqlsuite::Group::from_name(n))
                        .collect(),
                    None => sqlsuite::Group::ALL.to_vec(),
                },
                engine: w.engine.clone(),
            }),
            WorkloadKind::Tpcc => unreachable!("tpcc workloads are expanded above"),
        };
        out.push(WorkloadSpec {
            name: w.display_name(),
            connections: w.connections_swept(),
            config: cfg,
        });
    }
    Ok(out)
}

/// A server binary must be a regular file holding a program: an ELF executable (or a
/// script with `#!`), executable by us; a SQLite variant's is an ELF shared library.
fn check_program(path: &std::path::Path, library: bool) -> Result<(), String> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("binary {shown}: {e}; install the server or fix the path"))?;
    if !meta.is_file() {
        return Err(format!(
            "binary {shown} is not a file; give the server's executable"
        ));
    }
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("binary {shown}: {e}; check its permissions"))?;
    let elf = n == 4 && head == *b"\x7fELF";
    if library {
        return if elf {
            Ok(())
        } else {
            Err(format!(
                "binary {shown} is not a shared library (no ELF header); give a libsqlite3.so"
            ))
        };
    }
    if !(elf || head.starts_with(b"#!")) {
        return Err(format!(
            "binary {shown} is not a program (neither ELF nor a #! script); give the server's executable"
        ));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "binary {shown} is not executable; chmod +x it or give another path"
        ));
    }
    Ok(())
}

/// Reads and parses a replay workload's log and setup file; a file that does not parse is
/// bad input naming the file, line and statement.
fn replay_setup(l: &Loaded, i: usize, w: &Workload) -> Result<ReplaySetup, RunError> {
    let read = |k: &'static str, p: &PathBuf| -> Result<(PathBuf, String), RunError> {
        let path = l.resolve(p);
        let text = bakeoff_plan::read_input(&path, k).map_err(|e| {
            RunError::BadInput(
                l.error_at(&key!["workload", i, k], format!("{}: {e}", path.display()))
                    .to_string(),
            )
        })?;
        Ok((path, text))
    };
    let bad = |k: &'static str, path: &PathBuf, e: replay::ParseError| {
        RunError::BadInput(
            l.error_at(&key!["workload", i, k], format!("{}: {e}", path.display()))
                .to_string(),
        )
    };
    let file = w.file.clone().unwrap_or_default();
    let (path, text) = read("file", &file)?;
    let (format, statements) = replay::parse_auto(&text).map_err(|e| bad("file", &path, e))?;
    let (setup, setup_file) = match &w.setup {
        Some(s) => {
            let (spath, stext) = read("setup", s)?;
            let parsed = replay::parse(&stext, replay::LogFormat::SqlFile)
                .map_err(|e| bad("setup", &spath, e))?;
            (parsed.into_iter().map(|s| s.sql).collect(), Some(spath))
        }
        None => (Vec::new(), None),
    };
    Ok(ReplaySetup {
        file: path,
        format,
        statements,
        setup,
        setup_file,
        iterations: w.iterations.unwrap_or(1),
        client_threads: w.client_threads.unwrap_or(oltp::AUTO_THREADS),
        unix_socket: w.transport == Some(bakeoff_plan::Transport::Unix),
        explain: w.explain.unwrap_or(3),
    })
}

/// A tpcc workload as one spec per warehouse count.
fn tpcc_specs(l: &Loaded, i: usize, w: &Workload) -> Vec<WorkloadSpec> {
    let written = l.keys_in(&key!["workload", i]);
    let mix = if written.iter().any(|k| k == "mix") {
        let get = |k: &str| w.mix.get(k).copied().unwrap_or(0);
        tpcc::Mix {
            new_order: get("new_order"),
            payment: get("payment"),
            order_status: get("order_status"),
            delivery: get("delivery"),
            stock_level: get("stock_level"),
        }
    } else {
        tpcc::Mix::default()
    };
    let spec_think = w.think == Some(bakeoff_plan::ThinkMode::Spec);
    let sweep = w.warehouses_swept();
    let name = w.display_name();
    sweep
        .iter()
        .map(|&wh| {
            let d = tpcc::TpccConfig::default();
            let connections = if spec_think {
                vec![wh * bakeoff_plan::TERMINALS_PER_WAREHOUSE]
            } else {
                w.connections.to_vec()
            };
            let cfg = tpcc::TpccConfig {
                warehouses: wh as u32,
                connections: connections[0],
                think: if spec_think {
                    tpcc::Think::Spec
                } else {
                    tpcc::Think::None
                },
                mix,
                engine: w.engine.clone(),
                max_retries: w.max_retries.unwrap_or(d.max_retries),
                client_threads: w.client_threads.unwrap_or(d.client_threads),
                load_connections: w.load_connections.unwrap_or(d.load_connections),
            };
            WorkloadSpec {
                name: if sweep.len() > 1 {
                    format!("{name}-w{wh}")
                } else {
                    name.clone()
                },
                connections,
                config: WorkloadConfig::Tpcc(TpccSetup {
                    cfg,
                    workload: name.clone(),
                    find_max_w: w.find_max_w == Some(true),
                    unix_socket: w.transport == Some(bakeoff_plan::Transport::Unix),
                }),
            }
        })
        .collect()
}

/// sysbench's defaults (see `oltp::OltpConfig::default`) under the file's keys.
pub fn oltp_config(w: &Workload) -> oltp::OltpConfig {
    let d = oltp::OltpConfig::default();
    let distribution = match w.distribution {
        None | Some(RowDistribution::Special) => oltp::Distribution::Special {
            pct: w.special_pct,
            res: w.special_res,
            iter: w.gaussian_iter.unwrap_or(12),
        },
        Some(RowDistribution::Uniform) => oltp::Distribution::Uniform,
        Some(RowDistribution::Gaussian) => oltp::Distribution::Gaussian {
            iter: w.gaussian_iter.unwrap_or(12),
        },
        Some(RowDistribution::Pareto) => oltp::Distribution::Pareto {
            h: w.pareto_h.unwrap_or(0.2),
        },
        Some(RowDistribution::Zipfian) => oltp::Distribution::Zipfian {
            exp: w.zipfian_exp.unwrap_or(0.8),
        },
    };
    oltp::OltpConfig {
        test: w
            .test
            .as_deref()
            .and_then(oltp::OltpTest::from_name)
            .unwrap_or(d.test),
        tables: w.tables.unwrap_or(d.tables),
        table_size: w.table_size.unwrap_or(d.table_size),
        point_selects: w.point_selects.unwrap_or(d.point_selects),
        simple_ranges: w.simple_ranges.unwrap_or(d.simple_ranges),
        sum_ranges: w.sum_ranges.unwrap_or(d.sum_ranges),
        order_ranges: w.order_ranges.unwrap_or(d.order_ranges),
        distinct_ranges: w.distinct_ranges.unwrap_or(d.distinct_ranges),
        range_size: w.range_size.unwrap_or(d.range_size),
        index_updates: w.index_updates.unwrap_or(d.index_updates),
        non_index_updates: w.non_index_updates.unwrap_or(d.non_index_updates),
        delete_inserts: w.delete_inserts.unwrap_or(d.delete_inserts),
        random_points: w.random_points.unwrap_or(d.random_points),
        skip_trx: w.skip_trx.unwrap_or(d.skip_trx),
        auto_inc: w.auto_inc.unwrap_or(d.auto_inc),
        secondary: w.secondary.unwrap_or(d.secondary),
        create_secondary: w.create_secondary.unwrap_or(d.create_secondary),
        distribution,
        engine: w.engine.clone(),
        prepared: w.prepared.unwrap_or(d.prepared),
        connections: w.connections.to_vec().first().copied().unwrap_or(1),
        client_threads: w.client_threads.unwrap_or(oltp::AUTO_THREADS),
        unix_socket: w.transport == Some(bakeoff_plan::Transport::Unix),
        ignore_errors: w.ignore_errors.clone().unwrap_or(d.ignore_errors),
        max_reconnects: w.max_reconnects.unwrap_or(d.max_reconnects),
    }
}

fn kv_config(w: &bakeoff_plan::Workload) -> kv::KvConfig {
    let get = |k: &str| w.mix.get(k).copied().unwrap_or(0);
    kv::KvConfig {
        keys: w.keys,
        key_distribution: match w.key_distribution {
            KeyDistribution::Uniform => kv::KeyDistribution::Uniform,
            KeyDistribution::Zipfian => kv::KeyDistribution::Zipfian {
                theta: w.zipf_theta,
            },
            KeyDistribution::Special => kv::KeyDistribution::Special {
                pct: w.special_pct,
                res: w.special_res,
            },
        },
        value_size: match w.value_size {
            ValueSize::Fixed(n) => kv::ValueSize::Fixed(n),
            ValueSize::Around { mean } => kv::ValueSize::Around { mean },
        },
        mix: kv::Mix {
            get: get("get"),
            set: get("set"),
            add: get("add"),
            delete: get("delete"),
            multiget: get("multiget"),
        },
        multiget_keys: w.multiget_keys,
        connections: w.connections.to_vec().first().copied().unwrap_or(1),
        client_threads: w.client_threads.unwrap_or(1),
        schedule: match w.rate {
            Some(rate) => Schedule::OpenLoop {
                rate,
                poisson: w.arrival == Arrival::Poisson,
            },
            None => Schedule::ClosedLoop {
                pipeline: w.pipeline,
            },
        },
        preload: w.preload,
    }
}

/// Fetches the source (if any variant is built), builds or describes every variant, and
/// records each in `results.variants`. Returns the variants that can run, in file order.
pub fn variants(
    l: &Loaded,
    opts: &Options,
    folder: &Folder,
    observer: &dyn Observer,
    results: &mut Results,
) -> Result<Vec<ReadyVariant>, RunError> {
    let e = &l.experiment;
    let cache = Cache::new(&opts.cache_root);
    let builds = e.variants.iter().filter(|v| v.is_build()).count();
    let tree = match (&e.target.source, builds) {
        (Some(spec), n) if n > 0 => {
            observer.notice("fetching source");
            let spec = source_spec(l, spec);
            let tree = build::fetch(&spec, &cache).map_err(|err| {
                RunError::BadInput(
                    l.error_at(&key!["target", "source"], err.to_string())
                        .to_string(),
                )
            })?;
            observer.notice(&format!("source: {}", tree.description));
            results.source = Some(SourceRecord {
                description: tree.description.clone(),
                id: tree.id.clone(),
            });
            Some(tree)
        }
        _ => None,
    };
    observer.builds_started(builds);
    let mut ready = Vec::new();
    for v in &e.variants {
        let mut args = e.target.args.clone();
        args.extend(v.args.iter().cloned());
        let outcome = match (&tree, &v.binary) {
            (_, Some(b)) => describe_binary(&l.resolve(b)),
            (Some(t), None) => build_variant(l, v, t, &cache, folder, observer),
            (None, None) => Err("no source to build from".to_string()),
        };
        let mut rec = VariantRecord {
            name: v.name.clone(),
            status: "ok".into(),
            error: None,
            binary: None,
            args: args.clone(),
            build: None,
            options: e.server_options(v),
            data: Vec::new(),
            sanitize: v.sanitize.iter().map(|s| s.as_str().to_string()).collect(),
            run_under: v.run_under.map(|_| "memcheck".to_string()),
            memory_errors: Vec::new(),
        };
        match outcome {
            Ok((binary, b)) => {
                rec.binary = Some(binary.display().to_string());
                rec.build = Some(b);
                ready.push(ReadyVariant {
                    name: v.name.clone(),
                    binary,
                    args,
                    options: e.server_options(v),
                    engine: v.engine.clone(),
                    record: results.variants.len(),
                    sanitize: v.sanitize.clone(),
                    run_under: v.run_under,
                    format_args: v
                        .configure_args
                        .iter()
                        .filter(|a| a.contains("blocksize") || a.contains("segsize"))
                        .cloned()
                        .collect(),
                });
            }
            Err(msg) => {
                rec.status = "failed".into();
                rec.error = Some(msg);
            }
        }
        results.variants.push(rec);
    }
    if ready.is_empty() {
        return Err(RunError::Failed(
            "no variant could be built or found; see the errors above".into(),
        ));
    }
    Ok(ready)
}

fn source_spec(l: &Loaded, s: &bakeoff_plan::Source) -> SourceSpec {
    if s.bundled {
        SourceSpec::Bundled
    } else if let Some(p) = &s.debian {
        SourceSpec::Debian { package: p.clone() }
    } else if let Some(t) = &s.tarball {
        let location = if t.contains("://") {
            t.clone()
        } else {
            l.resolve(t.as_ref()).display().to_string()
        };
        SourceSpec::Tarball {
            location,
            sha256: s.sha256.clone().unwrap_or_default(),
        }
    } else if let Some(g) = &s.git {
        let url = if g.contains("://") || g.contains('@') {
            g.clone()
        } else {
            l.resolve(g.as_ref()).display().to_string()
        };
        SourceSpec::Git {
            url,
            rev: s.rev.clone().unwrap_or_default(),
        }
    } else {
        SourceSpec::Path {
            path: l.resolve(s.path.as_deref().unwrap_or(".".as_ref())),
        }
    }
}

fn build_variant(
    l: &Loaded,
    v: &Variant,
    tree: &build::SourceTree,
    cache: &Cache,
    folder: &Folder,
    observer: &dyn Observer,
) -> Result<(PathBuf, BuildRecord), String> {
    observer.build_started(&v.name);
    let (cflags, ldflags) = with_sanitizers(v);
    let spec = BuildSpec {
        variant: v.name.clone(),
        compiler: v.compiler_or_default().to_string(),
        cflags,
        ldflags,
        configure_args: v.configure_args.clone(),
        make_args: v.make_args.clone(),
        patches: v.patches.iter().map(|p| l.resolve(p)).collect(),
        env: v.env.clone(),
        recipe: build::recipe_for(l.experiment.target.kind.as_str()),
    };
    let built = build::build(tree, &spec, cache);
    // The build log goes into the results folder, so the folder explains itself.
    let log = match &built {
        Ok(b) => Some(b.log.clone()),
        Err(e) => e.log().map(|p| p.to_path_buf()),
    };
    let kept = log.and_then(|src| {
        let rel = format!("logs/build-{}.log", safe_name(&v.name));
        std::fs::copy(&src, folder.path.join(&rel))
            .ok()
            .map(|_| rel)
    });
    let result = built.map(|b| {
        let rec = BuildRecord {
            kind: "build".into(),
            compiler: b.compiler.clone(),
            compiler_version: b.compiler_version.clone(),
            cflags: b.cflags.clone(),
            ldflags: b.ldflags.clone(),
            configure_args: v.configure_args.clone(),
            make_args: v.make_args.clone(),
            patches: v.patches.iter().map(|p| p.display().to_string()).collect(),
            binary_sha256: b.binary_sha256.clone(),
            binary_bytes: b.binary_bytes,
            seconds: b.seconds,
            cached: b.cached,
            log: kept.clone(),
        };
        (b.binary, rec)
    });
    let result = result.map_err(|e| with_tail(&e.to_string(), e.tail()));
    observer.build_finished(
        &v.name,
        result.as_ref().map(|(_, r)| r).map_err(|e| e.as_str()),
    );
    result
}

fn describe_binary(path: &std::path::Path) -> Result<(PathBuf, BuildRecord), String> {
    let (bytes, sha) = build::describe_binary(path).map_err(|e| e.to_string())?;
    let rec = BuildRecord {
        kind: "binary".into(),
        binary_sha256: sha,
        binary_bytes: bytes,
        ..BuildRecord::default()
    };
    Ok((path.to_path_buf(), rec))
}

/// The error line, then the last lines of the build log (or patch output) it points to.
fn with_tail(message: &str, tail: &str) -> String {
    let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = &lines[lines.len().saturating_sub(8)..];
    if last.is_empty() {
        message.to_string()
    } else {
        format!("{message}\n    {}", last.join("\n    "))
    }
}

/// The variant's CFLAGS and LDFLAGS with its sanitizers' flags appended (frame pointers
/// and debug lines too, so reports name functions and lines).
pub fn with_sanitizers(v: &Variant) -> (String, String) {
    let mut cflags = v.cflags.clone().unwrap_or_default();
    let mut ldflags = v.ldflags.clone().unwrap_or_default();
    if !v.sanitize.is_empty() {
        let list: Vec<&str> = v.sanitize.iter().map(|s| s.as_str()).collect();
        let flag = format!("-fsanitize={}", list.join(","));
        for (flags, extra) in [
            (&mut cflags, format!("{flag} -fno-omit-frame-pointer -g")),
            (&mut ldflags, flag),
        ] {
            if !flags.is_empty() {
                flags.push(' ');
            }
            flags.push_str(&extra);
        }
    }
    (cflags, ldflags)
}
