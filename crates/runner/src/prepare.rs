//! Before the first run: inputs that need the machine checked (compilers, workload
//! settings), the source fetched, every variant built or its binary described. A variant
//! whose build fails is marked failed; the others go on.

use crate::folder::{safe_name, Folder};
use crate::{Observer, Options, RunError};
use bakeoff_build::{self as build, BuildSpec, Cache, SourceSpec};
use bakeoff_load::Schedule;
use bakeoff_plan::{key, Arrival, KeyDistribution, Loaded, ValueSize, Variant};
use bakeoff_report::model::{BuildRecord, Results, SourceRecord, VariantRecord};
use bakeoff_workloads::kv;
use std::path::PathBuf;

/// A variant that can run: its binary and full server arguments.
pub struct ReadyVariant {
    pub name: String,
    pub binary: PathBuf,
    pub args: Vec<String>,
}

/// Checks what the file alone could not: compilers exist, workload settings hold together.
/// Returns one kv configuration per workload (connections filled in per cell).
pub fn check_inputs(l: &Loaded) -> Result<Vec<kv::KvConfig>, RunError> {
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
    let mut out = Vec::new();
    for (i, w) in l.experiment.workloads.iter().enumerate() {
        let cfg = kv_config(w);
        for c in w.connections.to_vec() {
            let mut probe = cfg.clone();
            probe.connections = c;
            probe
                .validate()
                .map_err(|m| RunError::BadInput(l.error_at(&key!["workload", i], m).to_string()))?;
        }
        out.push(cfg);
    }
    Ok(out)
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
        client_threads: w.client_threads,
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
            options: Default::default(),
            data: Vec::new(),
        };
        match outcome {
            Ok((binary, b)) => {
                rec.binary = Some(binary.display().to_string());
                rec.build = Some(b);
                ready.push(ReadyVariant {
                    name: v.name.clone(),
                    binary,
                    args,
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
    if let Some(p) = &s.debian {
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
    let spec = BuildSpec {
        variant: v.name.clone(),
        compiler: v.compiler_or_default().to_string(),
        cflags: v.cflags.clone().unwrap_or_default(),
        ldflags: v.ldflags.clone().unwrap_or_default(),
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
