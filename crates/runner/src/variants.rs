//! The variants, before the first run: the source fetched, every variant built or its
//! binary described, and recorded in the results. A variant whose build fails is marked
//! failed; the others go on.

use crate::error::RunError;
use crate::folder::{safe_name, Folder};
use crate::observer::Observer;
use crate::options::Options;
use crate::ready::{LayoutBinary, ReadyVariant, Workloads};
use crate::remote::Hosts;
use bakeoff_build::{self as build, BuildInfo, BuildSpec, Cache, SourceSpec};
use bakeoff_plan::{key, BuildOn, Loaded, Variant};
use bakeoff_report::model::{BuildRecord, LayoutRecord, Results, SourceRecord, VariantRecord};
use std::path::PathBuf;

/// Fetches the source (if any variant is built), builds or describes every variant, and
/// records each in `results.variants`. Returns the variants that can run, in file order.
pub fn variants(
    l: &Loaded,
    opts: &Options,
    workloads: &Workloads,
    folder: &Folder,
    observer: &dyn Observer,
    results: &mut Results,
    remote: &Hosts,
) -> Result<Vec<ReadyVariant>, RunError> {
    let e = &l.experiment;
    let cache = Cache::new(&opts.cache_root);
    workloads
        .every()
        .for_each(|w| w.use_cache(&opts.cache_root));
    let b = Builder {
        l,
        opts,
        workloads,
        cache: &cache,
        folder,
        observer,
        remote: (e.target.build_on == Some(BuildOn::Host))
            .then_some(remote)
            .filter(|r| r.server.is_some()),
        host_source: Default::default(),
    };
    let builds = e.variants.iter().filter(|v| v.is_build()).count();
    let tree = match (&e.target.source, builds) {
        // The host fetches it itself: nothing to fetch here.
        (Some(_), n) if n > 0 && b.remote.is_some() => Some(build::SourceTree {
            dir: PathBuf::new(),
            id: String::new(),
            description: String::new(),
        }),
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
    // Variants that failed on their dist's input (index, message), and whether any failed
    // otherwise: a run left with no variant only by such input is bad input.
    let mut input_failures: Vec<(usize, String)> = Vec::new();
    let mut other_failure = false;
    for (i, v) in e.variants.iter().enumerate() {
        let args = e.server_args(v);
        let mut fetched = None;
        let outcome = match (&tree, &v.binary, &v.rev) {
            (_, Some(b), _) => describe_binary(&l.resolve(b), e.server_host(&v.name), remote),
            (_, None, _) if v.dist.is_some() => {
                observer.notice(&format!("{}: fetching its distribution", v.name));
                let d = v.dist.as_ref().expect("checked");
                let got = crate::dist::fetch(l, e.kind_of(v), d, &cache);
                if let Err(e) = &got {
                    observer.notice(&format!("{}: {e}", v.name));
                    if e.input {
                        input_failures.push((i, e.message.clone()));
                    }
                }
                got.map_err(|e| e.message).map(|f| {
                    let out = (vec![f.binary.clone()], f.build.clone());
                    fetched = Some(f);
                    out
                })
            }
            (Some(t), None, None) => b.variant(v, t),
            (Some(_), None, Some(rev)) => match own_revision(l, rev, &cache) {
                Ok(t) => b.variant(v, &t).map(|(p, mut b)| {
                    b.source = Some(t.description.clone());
                    (p, b)
                }),
                Err(e) => Err(e),
            },
            (None, None, _) => Err("no source to build from".to_string()),
        };
        let mut rec = VariantRecord {
            name: v.name.clone(),
            status: "ok".into(),
            error: None,
            binary: None,
            args: crate::settings::masked_args(&args),
            build: None,
            options: crate::settings::masked_options(e.server_options(v)),
            data: Vec::new(),
            sanitize: v.sanitize.iter().map(|s| s.as_str().to_string()).collect(),
            run_under: v.run_under.map(|r| r.as_str().to_string()),
            memory_errors: Vec::new(),
            anatomy: None,
            layouts: Vec::new(),
            aa: false,
            host: e.server_host(&v.name).map(str::to_string),
            dist: fetched.as_ref().map(|f| f.dist.clone()),
            server_version: None,
            kind: e.mixes_kinds().then(|| e.kind_of(v).as_str().to_string()),
            system: v.system_asked(),
            server_stats: v.server_stats.map(|l| l.as_str().to_string()),
            ..VariantRecord::default()
        };
        // A machine that does not allow what the variant asks fails it, before any run;
        // the others run.
        let system = crate::system::SystemAsk::of(l, v);
        let outcome = match system.problem.clone() {
            Some(why) => outcome.and(Err(why)),
            None => outcome,
        };
        match outcome {
            Ok((layouts, b)) => {
                let binary = layouts[0].binary.clone();
                rec.binary = Some(binary.display().to_string());
                rec.build = Some(b);
                if layouts.len() > 1 {
                    rec.layouts = layouts
                        .iter()
                        .map(|x| LayoutRecord {
                            seed: x.seed.unwrap_or(0),
                            sha256: x.sha256.clone(),
                            path: x.binary.display().to_string(),
                        })
                        .collect();
                } else if e.plan.layouts > 1 {
                    observer.notice(&format!(
                        "{}: an installed binary has one code layout; layouts = {} apply to the build variants",
                        v.name, e.plan.layouts
                    ));
                }
                rec.server_version = match &rec.dist {
                    Some(d) => d.version.clone(),
                    None if e.server_host(&v.name).is_none() => {
                        server_version(e.kind_of(v), &binary)
                    }
                    None => None,
                };
                ready.push(ReadyVariant {
                    name: v.name.clone(),
                    kind: e.kind_of(v),
                    binary,
                    args,
                    options: e.server_options(v),
                    engine: v.engine.clone(),
                    record: results.variants.len(),
                    sanitize: v.sanitize.clone(),
                    run_under: v.run_under,
                    configure_args: v.configure_args.clone(),
                    layouts,
                    env: fetched.map(|f| f.env).unwrap_or_default(),
                    system,
                });
            }
            Err(msg) => {
                other_failure |= input_failures.last().is_none_or(|(at, _)| *at != i);
                rec.status = "failed".into();
                rec.error = Some(msg);
            }
        }
        results.variants.push(rec);
    }
    if let Some(fetched) = b.host_source.lock().ok().and_then(|mut s| s.take()) {
        results.source = Some(fetched);
    }
    if ready.is_empty() && !other_failure {
        if let Some((i, msg)) = input_failures.first() {
            return Err(RunError::BadInput(
                l.error_at(&key!["variant", *i, "dist"], msg.clone())
                    .to_string(),
            ));
        }
    }
    if ready.is_empty() {
        return Err(RunError::Failed(
            "no variant could be built or found; see the errors above".into(),
        ));
    }
    // Only binaries this machine has read: not a server installed on, or built on,
    // another host (its path here could be another file).
    let here: Vec<&ReadyVariant> = ready
        .iter()
        .filter(|v| {
            e.server_host(&v.name).is_none()
                || (b.remote.is_none()
                    && e.variants.iter().any(|p| p.name == v.name && p.is_build()))
        })
        .collect();
    anatomies(e.baseline(), &here, results);
    Ok(ready)
}

/// Each binary's `.text` size and the functions whose size changed most against the
/// baseline's.
fn anatomies(baseline: &str, ready: &[&ReadyVariant], results: &mut Results) {
    use bakeoff_report::model::{AnatomyRecord, FunctionSizeRecord};
    let read: Vec<(usize, &str, Option<build::anatomy::Anatomy>)> = ready
        .iter()
        .map(|v| (v.record, v.name.as_str(), build::anatomy::read(&v.binary)))
        .collect();
    let base = read
        .iter()
        .find(|(_, n, _)| *n == baseline)
        .and_then(|(_, _, a)| a.clone());
    for (record, name, a) in read {
        let Some(a) = a else { continue };
        let vs = base.as_ref().filter(|_| name != baseline);
        results.variants[record].anatomy = Some(AnatomyRecord {
            text_bytes: a.text_bytes,
            baseline_text_bytes: vs.map(|b| b.text_bytes),
            changed: vs
                .map(|b| build::anatomy::changed(b, &a, 10))
                .unwrap_or_default()
                .into_iter()
                .map(|(function, baseline_bytes, bytes)| FunctionSizeRecord {
                    function,
                    baseline_bytes,
                    bytes,
                })
                .collect(),
        });
    }
}

/// The experiment's git source at a variant's own revision.
fn own_revision(l: &Loaded, rev: &str, cache: &Cache) -> Result<build::SourceTree, String> {
    let Some(s) = &l.experiment.target.source else {
        return Err("no source to build from".into());
    };
    match source_spec(l, s) {
        SourceSpec::Git { url, .. } => build::fetch(
            &SourceSpec::Git {
                url,
                rev: rev.to_string(),
            },
            cache,
        )
        .map_err(|e| e.to_string()),
        _ => Err("rev needs a git source".into()),
    }
}

/// A source's `place` as written where it names another machine (`remote`), else
/// resolved against the experiment file's folder.
fn located(l: &Loaded, place: &str, remote: bool) -> String {
    if remote {
        place.to_string()
    } else {
        l.resolve(place.as_ref()).display().to_string()
    }
}

fn source_spec(l: &Loaded, s: &bakeoff_plan::Source) -> SourceSpec {
    if s.bundled {
        SourceSpec::Bundled
    } else if let Some(p) = &s.debian {
        SourceSpec::Debian { package: p.clone() }
    } else if let Some(t) = &s.tarball {
        SourceSpec::Tarball {
            location: located(l, t, t.contains("://")),
            sha256: s.sha256.clone().unwrap_or_default(),
        }
    } else if let Some(g) = &s.git {
        SourceSpec::Git {
            url: located(l, g, g.contains("://") || g.contains('@')),
            rev: s.rev.clone().unwrap_or_default(),
        }
    } else {
        SourceSpec::Path {
            path: l.resolve(s.path.as_deref().unwrap_or(".".as_ref())),
        }
    }
}

/// A built variant: its binary per code layout (one, without `[plan] layouts`) and the
/// record of its first build.
type Built = (Vec<LayoutBinary>, BuildRecord);

#[allow(clippy::too_many_arguments)]
/// What building a variant needs besides the variant: the experiment, the caches, the
/// results folder (build logs), the display, and the server's host when variants are
/// built there (`[target] build_on = "host"`).
struct Builder<'a> {
    l: &'a Loaded,
    opts: &'a Options,
    workloads: &'a Workloads,
    cache: &'a Cache,
    folder: &'a Folder,
    observer: &'a dyn Observer,
    remote: Option<&'a Hosts>,
    /// With builds on the server's host: the source as that host fetched it.
    host_source: std::sync::Mutex<Option<SourceRecord>>,
}

impl Builder<'_> {
    /// Builds `v` from `tree`, its start and end shown.
    fn variant(&self, v: &Variant, tree: &build::SourceTree) -> Result<Built, String> {
        self.observer.build_started(&v.name);
        let result = self.layouts(v, tree);
        self.observer.build_finished(
            &v.name,
            result.as_ref().map(|(_, r)| r).map_err(|e| e.as_str()),
        );
        result
    }

    /// Builds `v` once per code layout (`[plan] layouts`), trained first when it asks for
    /// PGO.
    fn layouts(&self, v: &Variant, tree: &build::SourceTree) -> Result<Built, String> {
        let (l, folder) = (self.l, self.folder);
        let (cflags, ldflags) = with_sanitizers(v);
        let mut spec = BuildSpec {
            variant: v.name.clone(),
            compiler: v.compiler_or_default().to_string(),
            cflags,
            ldflags,
            configure_args: v.configure_args.clone(),
            make_args: v.make_args.clone(),
            patches: v.patches.iter().map(|p| l.resolve(p)).collect(),
            env: v.env.clone(),
            recipe: bakeoff_sandbox::target_for(l.experiment.kind_of(v)).recipe(),
            lto: v.lto,
            profile: None,
            layout_seed: None,
        };
        let mut trained = None;
        if v.pgo.is_some() {
            // One training for every layout: the profile is keyed by function, not address.
            let t =
                crate::training::train(l, self.opts, v, tree, &spec, self.cache, self.workloads)
                    .map_err(|e| format!("pgo: {e}"))?;
            spec.profile = Some(t.profile);
            trained = Some(t.note);
        }
        if v.bolt.is_some() {
            for_bolt(&mut spec);
        }
        let count = l.experiment.plan.layouts;
        let seeds: Vec<Option<u64>> = if count > 1 {
            build::layout::seeds(l.experiment.plan.seed, count)
                .into_iter()
                .map(Some)
                .collect()
        } else {
            vec![None]
        };
        let mut binaries = Vec::new();
        let mut first: Option<BuildRecord> = None;
        for (i, seed) in seeds.iter().enumerate() {
            if let Some(s) = seed {
                self.observer.notice(&format!(
                    "{}: layout {} of {count} (seed {s})",
                    v.name,
                    i + 1
                ));
            }
            spec.layout_seed = *seed;
            let log_name = match i {
                0 => format!("logs/build-{}.log", safe_name(&v.name)),
                _ => format!("logs/build-{}-layout-{}.log", safe_name(&v.name), i + 1),
            };
            let (b, note) = self.one(v, &spec, tree, &log_name)?;
            if let Some(twin) = binaries
                .iter()
                .position(|x: &LayoutBinary| x.sha256 == b.binary_sha256)
            {
                return Err(format!(
                    "layouts {} and {} built the same binary: the build did not take the linker's flags (LDFLAGS); layouts need a build that links with them",
                    twin + 1,
                    i + 1
                ));
            }
            binaries.push(LayoutBinary {
                seed: *seed,
                binary: b.binary.clone(),
                sha256: b.binary_sha256.clone(),
            });
            if first.is_none() {
                first = Some(BuildRecord {
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
                    log: folder.path.join(&log_name).exists().then_some(log_name),
                    source: None,
                    profile: note.or(trained.clone()),
                });
            }
        }
        let record = first.ok_or_else(|| "no layout was built".to_string())?;
        Ok((binaries, record))
    }

    /// One build of the spec (BOLTed when the variant asks), its log kept in the results
    /// folder under `log_name`; with the BOLT training's note.
    fn one(
        &self,
        v: &Variant,
        spec: &BuildSpec,
        tree: &build::SourceTree,
        log_name: &str,
    ) -> Result<(BuildInfo, Option<String>), String> {
        let built = match self.remote {
            Some(r) => return self.on_host(r, v, spec, log_name),
            None => build::build(tree, spec, self.cache),
        };
        // The build log goes into the results folder, so the folder explains itself.
        let log = match &built {
            Ok(b) => Some(b.log.clone()),
            Err(e) => e.log().map(|p| p.to_path_buf()),
        };
        if let Some(src) = log {
            let _ = std::fs::copy(&src, self.folder.path.join(log_name));
        }
        let b = built.map_err(|e| with_tail(&e.to_string(), e.tail()))?;
        if v.bolt.is_none() {
            return Ok((b, None));
        }
        let (path, note) =
            crate::training::bolt(self.l, self.opts, v, &b, self.cache, self.workloads)
                .map_err(|e| format!("bolt: {e}"))?;
        let (bytes, sha) = build::describe_binary(&path).map_err(|e| e.to_string())?;
        Ok((
            BuildInfo {
                binary: path,
                binary_bytes: bytes,
                binary_sha256: sha,
                ..b
            },
            Some(note),
        ))
    }

    /// One build on the server's host, from the source as that host fetches it; its log
    /// comes back into the results folder.
    fn on_host(
        &self,
        remote: &Hosts,
        v: &Variant,
        spec: &BuildSpec,
        log_name: &str,
    ) -> Result<(BuildInfo, Option<String>), String> {
        let source = self
            .l
            .experiment
            .target
            .source
            .as_ref()
            .map(|s| source_spec(self.l, s))
            .ok_or("no source to build from")?;
        let source = match (&v.rev, source) {
            (Some(rev), SourceSpec::Git { url, .. }) => SourceSpec::Git {
                url,
                rev: rev.clone(),
            },
            (_, s) => s,
        };
        self.observer.notice(&format!(
            "{}: building on host {}",
            v.name,
            remote.server.as_deref().unwrap_or("?")
        ));
        let (info, log, fetched) = remote.build(&source, spec)?;
        let _ = std::fs::write(self.folder.path.join(log_name), log);
        if let Ok(mut s) = self.host_source.lock() {
            s.get_or_insert(fetched);
        }
        Ok((info, None))
    }
}

/// An installed server: here, or on its variant's server host when it runs there.
fn describe_binary(
    path: &std::path::Path,
    host: Option<&str>,
    remote: &Hosts,
) -> Result<Built, String> {
    let (bytes, sha) = match host {
        Some(h) => remote.describe(h, path)?,
        None => build::describe_binary(path).map_err(|e| e.to_string())?,
    };
    let rec = BuildRecord {
        kind: "binary".into(),
        binary_sha256: sha.clone(),
        binary_bytes: bytes,
        ..BuildRecord::default()
    };
    let one = LayoutBinary {
        seed: None,
        binary: path.to_path_buf(),
        sha256: sha,
    };
    Ok((vec![one], rec))
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

/// The version line a local server binary prints (as its target asks for it), with the
/// environment the variant runs it with; None for a library (SQLite) or when it prints
/// nothing in time.
fn server_version(kind: bakeoff_plan::TargetKind, binary: &std::path::Path) -> Option<String> {
    if kind.binary_is_library() {
        return None;
    }
    let layout = bakeoff_sandbox::target_for(kind).dist_layout();
    bakeoff_build::dist::version(binary, &layout, &[])
}

/// A build BOLT can rewrite: linked with its relocations, and (gcc) without its own
/// hot/cold split, since BOLT lays out hot and cold code itself.
fn for_bolt(spec: &mut BuildSpec) {
    spec.ldflags = format!("{} -Wl,--emit-relocs", spec.ldflags)
        .trim()
        .to_string();
    if matches!(
        build::lto::family(&spec.compiler),
        Some(build::lto::Family::Gcc(_))
    ) {
        spec.cflags = format!("{} -fno-reorder-blocks-and-partition", spec.cflags)
            .trim()
            .to_string();
    }
}
