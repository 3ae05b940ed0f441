//! Out-of-tree builds with a cache. `build` checks the compiler, computes the cache key
//! (see [`crate::key`]), returns the cached entry when there is one, and otherwise, holding the
//! key's lock, prepares the source (patches, autogen), runs `SRC/configure` from a fresh build
//! dir (or copies a configure-less tree and runs `make` in it), and renames the staging dir
//! into `builds/<key>` only when the product exists. A failed attempt is kept, log included,
//! in `builds/<key>.failed`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::cache::{commit_dir, create_dir_all, read_json, staging_dir, write_json, Cache};
use crate::compiler::{check_compiler, CompilerId};
use crate::error::{BuildError, Result};
use crate::key::KeyInputs;
use crate::prepare::{layout, prepare, read_patches, Layout};
use crate::source::SourceTree;
use crate::util::{copy_tree, hash_file, tail_file};

/// How many log lines a [`BuildError::BuildFailed`] carries.
const TAIL_LINES: usize = 20;

/// Inherited variables that would silently change a build; removed before the variant's own
/// settings are applied (so only what the cache key covers reaches configure and make).
const SCRUBBED_ENV: &[&str] = &[
    "CC",
    "CXX",
    "CPP",
    "CXXCPP",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "LIBS",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "MAKEOVERRIDES",
    "GNUMAKEFLAGS",
    "CARGO_MAKEFLAGS",
];

/// One variant's build recipe.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildSpec {
    /// The variant's name (for messages only; not part of the cache key).
    pub variant: String,
    /// Compiler command or path, e.g. `gcc-12`, `clang-16`, `/opt/x/bin/icx`; becomes `CC`.
    pub compiler: String,
    /// `CFLAGS`; when empty, `CFLAGS` is left unset so the project's default applies.
    pub cflags: String,
    /// `LDFLAGS`; when empty, left unset.
    pub ldflags: String,
    /// Appended to `configure`.
    pub configure_args: Vec<String>,
    /// Appended to `make -j<nproc>`.
    pub make_args: Vec<String>,
    /// Unified diffs applied in order with `patch -p1`.
    pub patches: Vec<PathBuf>,
    /// Extra environment for configure and make (applied last, so it can override `CC` etc.).
    pub env: BTreeMap<String, String>,
    /// The binary, relative to the build dir, e.g. `memcached`.
    pub product: PathBuf,
}

/// What a build produced; recorded in every results folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    pub compiler: String,
    pub compiler_version: String,
    pub cflags: String,
    pub ldflags: String,
    pub binary: PathBuf,
    pub binary_sha256: String,
    pub binary_bytes: u64,
    /// Wall time of configure + make; for a cached build, the original build's time.
    pub seconds: f64,
    pub cached: bool,
    pub key: String,
    pub log: PathBuf,
}

/// What `builds/<key>/build.json` holds.
#[derive(Debug, Serialize, Deserialize)]
struct EntryMeta {
    info: BuildInfo,
    product: PathBuf,
    source: String,
    compiler_path: PathBuf,
    inputs: serde_json::Value,
}

/// Size and sha256 of a binary (for installed-binary variants too).
pub fn describe_binary(path: &Path) -> Result<(u64, String)> {
    hash_file(path).map_err(|e| BuildError::io(format!("cannot read binary {}", path.display()), e))
}

/// Build `spec` from `tree`, or return the cached build with the same key (`cached = true`).
/// Safe to call from several threads and processes at once: one builds, the others wait for
/// the key's lock and then get the cached result.
pub fn build(tree: &SourceTree, spec: &BuildSpec, cache: &Cache) -> Result<BuildInfo> {
    validate(spec)?;
    let compiler = check_compiler(&spec.compiler).map_err(|e| e.for_variant(&spec.variant))?;
    let patches = read_patches(&spec.patches)?;
    let inputs = KeyInputs::new(tree, spec, &compiler, &patches);
    let key = inputs.key();
    let entry = cache.dir(&["builds", &key]);
    if let Some(info) = load_cached(&entry) {
        return Ok(info);
    }
    let _lock = cache.lock(&format!("build-{key}"))?;
    if let Some(info) = load_cached(&entry) {
        return Ok(info);
    }
    let src = prepare(tree, &patches, cache)?;
    let staging = staging_dir(&entry)?;
    let job = Job {
        spec,
        compiler: &compiler,
        cxx: inputs.cxx.as_deref(),
        src: &src,
        staging: &staging,
    };
    match job.run() {
        Ok(seconds) => {
            let meta = entry_meta(&job, &inputs, tree, &key, &entry, seconds)?;
            write_json(&staging.join("build.json"), &meta)?;
            commit_dir(&staging, &entry)?;
            Ok(meta.info)
        }
        Err(failure) => Err(keep_failed(&staging, &entry, spec, failure)?),
    }
}

fn validate(spec: &BuildSpec) -> Result<()> {
    let bad = |detail: String| BuildError::BadSpec {
        what: "build spec",
        detail,
    };
    if spec.product.as_os_str().is_empty() || spec.product.is_absolute() {
        return Err(bad(format!(
            "variant `{}`: product must be a path relative to the build dir (e.g. `memcached`), got `{}`",
            spec.variant,
            spec.product.display()
        )));
    }
    if spec.env.keys().any(|k| k.is_empty() || k.contains('=')) {
        return Err(bad(format!(
            "variant `{}`: env names must be non-empty and contain no `=`",
            spec.variant
        )));
    }
    Ok(())
}

/// The cached entry, if it is complete (metadata readable, binary present with the recorded
/// size). Paths are recomputed from the entry dir, so a cache can be moved.
fn load_cached(entry: &Path) -> Option<BuildInfo> {
    let meta: EntryMeta = read_json(&entry.join("build.json"))?;
    let binary = entry.join("build").join(&meta.product);
    let size = std::fs::metadata(&binary).ok()?.len();
    (size == meta.info.binary_bytes).then(|| BuildInfo {
        binary,
        log: entry.join("build.log"),
        cached: true,
        ..meta.info
    })
}

fn entry_meta(
    job: &Job,
    inputs: &KeyInputs,
    tree: &SourceTree,
    key: &str,
    entry: &Path,
    seconds: f64,
) -> Result<EntryMeta> {
    let (binary_bytes, binary_sha256) =
        describe_binary(&job.staging.join("build").join(&job.spec.product))?;
    let info = BuildInfo {
        compiler: job.spec.compiler.clone(),
        compiler_version: job.compiler.version.clone(),
        cflags: job.spec.cflags.clone(),
        ldflags: job.spec.ldflags.clone(),
        binary: entry.join("build").join(&job.spec.product),
        binary_sha256,
        binary_bytes,
        seconds,
        cached: false,
        key: key.to_string(),
        log: entry.join("build.log"),
    };
    Ok(EntryMeta {
        info,
        product: job.spec.product.clone(),
        source: tree.description.clone(),
        compiler_path: job.compiler.path.clone(),
        inputs: serde_json::to_value(inputs).unwrap_or_default(),
    })
}

/// Why a build attempt failed (before the log has its final path).
enum Failure {
    Step(String),
    NoProduct,
    Io(BuildError),
}

/// Move the failed attempt to `<entry>.failed` and turn `failure` into the error to return.
fn keep_failed(
    staging: &Path,
    entry: &Path,
    spec: &BuildSpec,
    failure: Failure,
) -> Result<BuildError> {
    if let Failure::Io(e) = failure {
        let _ = crate::util::remove_tree(staging);
        return Ok(e);
    }
    let failed = entry.with_file_name(format!("{}.failed", crate::util::name_of(entry)));
    commit_dir(staging, &failed)?;
    let log = failed.join("build.log");
    Ok(match failure {
        Failure::Step(step) => BuildError::BuildFailed {
            variant: spec.variant.clone(),
            step,
            tail: tail_file(&log, TAIL_LINES),
            log,
        },
        _ => BuildError::ProductMissing {
            variant: spec.variant.clone(),
            product: spec.product.clone(),
            log,
        },
    })
}

/// One build attempt in a staging dir.
struct Job<'a> {
    spec: &'a BuildSpec,
    compiler: &'a CompilerId,
    cxx: Option<&'a str>,
    src: &'a Path,
    staging: &'a Path,
}

impl Job<'_> {
    /// Configure and make; returns the wall time in seconds.
    fn run(&self) -> Result<f64, Failure> {
        let log_path = self.staging.join("build.log");
        let mut log = File::create(&log_path).map_err(|e| {
            Failure::Io(BuildError::io(
                format!("cannot create {}", log_path.display()),
                e,
            ))
        })?;
        let build_dir = self.staging.join("build");
        let layout = layout(self.src).map_err(Failure::Io)?;
        self.header(&mut log, layout);
        let started = Instant::now();
        match layout {
            Layout::Autotools => {
                create_dir_all(&build_dir).map_err(Failure::Io)?;
                let mut configure = self.command(self.src.join("configure"), &build_dir);
                configure.args(&self.spec.configure_args);
                step(&mut configure, &mut log, "configure")?;
            }
            Layout::Make => copy_tree(self.src, &build_dir).map_err(Failure::Io)?,
        }
        let mut make = self.command(PathBuf::from("make"), &build_dir);
        make.arg(format!("-j{}", jobs())).args(&self.spec.make_args);
        if let Some(goal) = make_goal(layout, self.spec) {
            make.arg(goal);
        }
        step(&mut make, &mut log, "make")?;
        let seconds = started.elapsed().as_secs_f64();
        if !build_dir.join(&self.spec.product).is_file() {
            return Err(Failure::NoProduct);
        }
        let _ = writeln!(log, "==> done in {seconds:.1} s");
        Ok(seconds)
    }

    fn header(&self, log: &mut File, layout: Layout) {
        let _ = writeln!(
            log,
            "==> bakeoff build of variant `{}`\nsource: {}\nlayout: {layout:?}\ncompiler: {} ({})\ncxx: {}",
            self.spec.variant,
            self.src.display(),
            self.compiler.path.display(),
            self.compiler.version,
            self.cxx.unwrap_or("(none found)"),
        );
    }

    /// A command with the variant's environment, run in `dir`.
    fn command(&self, program: PathBuf, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir).env("LC_ALL", "C");
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        cmd.env("CC", cc_value(&self.compiler.command));
        if let Some(cxx) = self.cxx {
            cmd.env("CXX", cc_value(cxx));
        }
        if !self.spec.cflags.is_empty() {
            cmd.env("CFLAGS", &self.spec.cflags);
        }
        if !self.spec.ldflags.is_empty() {
            cmd.env("LDFLAGS", &self.spec.ldflags);
        }
        cmd.envs(&self.spec.env);
        cmd
    }
}

/// `CC`'s value: a bare command name stays a name (found on PATH); a path is made absolute
/// (without resolving symlinks: clang picks its driver mode from the name it is called by).
fn cc_value(command: &str) -> String {
    if command.contains('/') {
        if let Ok(abs) = std::path::absolute(command) {
            return abs.display().to_string();
        }
    }
    command.to_string()
}

/// For autotools builds, `make` builds only the product (e.g. `make memcached`), unless the
/// variant's make_args name a goal themselves (an argument that is neither an option nor a
/// `VAR=value`). Building only the product skips test and debug programs: memcached's default
/// goal also links `memcached-debug` with `-fprofile-arcs`, which fails with clang when its
/// profile runtime is not installed. Plain-make trees keep their default goal.
fn make_goal(layout: Layout, spec: &BuildSpec) -> Option<String> {
    let names_goal = spec
        .make_args
        .iter()
        .any(|a| !a.starts_with('-') && !a.contains('='));
    (layout == Layout::Autotools && !names_goal).then(|| spec.product.display().to_string())
}

fn jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run one step with stdout and stderr appended to the log.
fn step(cmd: &mut Command, log: &mut File, name: &str) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::Io(BuildError::io(format!("cannot run {name}"), e));
    let _ = writeln!(log, "==> {name}: {cmd:?}");
    let out = log.try_clone().map_err(io)?;
    let err = log.try_clone().map_err(io)?;
    let status = cmd.stdin(Stdio::null()).stdout(out).stderr(err).status();
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => {
            let _ = writeln!(log, "==> {name} failed: {s}");
            Err(Failure::Step(format!("{name} ({s})")))
        }
        Err(e) => {
            let _ = writeln!(log, "==> cannot start {name}: {e}");
            Err(Failure::Step(format!("{name} (cannot start: {e})")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_with(make_args: &[&str]) -> BuildSpec {
        BuildSpec {
            product: "memcached".into(),
            make_args: make_args.iter().map(|s| s.to_string()).collect(),
            ..BuildSpec::default()
        }
    }

    #[test]
    fn goal_is_the_product_unless_make_args_name_one() {
        assert_eq!(
            make_goal(Layout::Autotools, &spec_with(&[])).as_deref(),
            Some("memcached")
        );
        assert_eq!(
            make_goal(Layout::Autotools, &spec_with(&["V=1", "-k"])).as_deref(),
            Some("memcached")
        );
        assert_eq!(make_goal(Layout::Autotools, &spec_with(&["all"])), None);
        assert_eq!(make_goal(Layout::Make, &spec_with(&[])), None);
    }

    #[test]
    fn cc_value_keeps_names_and_absolutizes_paths() {
        assert_eq!(cc_value("gcc-12"), "gcc-12");
        assert_eq!(cc_value("/usr/bin/clang-16"), "/usr/bin/clang-16");
        assert!(cc_value("./bin/cc").starts_with('/'));
    }

    #[test]
    fn invalid_specs_are_rejected() {
        let mut s = spec_with(&[]);
        s.product = "/usr/bin/memcached".into();
        assert!(matches!(validate(&s), Err(BuildError::BadSpec { .. })));
        s.product = PathBuf::new();
        assert!(validate(&s).is_err());
        let mut s = spec_with(&[]);
        s.env.insert("A=B".into(), "1".into());
        assert!(validate(&s).is_err());
    }

    /// A plain-make tree: the whole pipeline (copy, make, product check, cache hit) without
    /// autotools or network.
    #[test]
    fn plain_make_tree_builds_and_caches() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("hello.c"), "int main(void) { return 0; }\n").unwrap();
        std::fs::write(
            src.join("Makefile"),
            "hello: hello.c\n\t$(CC) $(CFLAGS) -o $@ $<\n",
        )
        .unwrap();
        let tree = crate::source::fetch(
            &crate::SourceSpec::Path { path: src.clone() },
            &Cache::new(tmp.path()),
        )
        .unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let spec = BuildSpec {
            variant: "plain".into(),
            compiler: "gcc-12".into(),
            cflags: "-O1".into(),
            product: "hello".into(),
            ..BuildSpec::default()
        };
        let first = build(&tree, &spec, &cache).unwrap();
        assert!(!first.cached);
        assert!(first.binary.is_file());
        let log = std::fs::read_to_string(&first.log).unwrap();
        assert!(log.contains("gcc-12 -O1 -o hello hello.c"), "{log}");
        let second = build(&tree, &spec, &cache).unwrap();
        assert!(second.cached);
        assert_eq!(second.binary_sha256, first.binary_sha256);
        assert_eq!(second.seconds, first.seconds);
        assert!(
            !src.join("hello").exists(),
            "the path source is not built in place"
        );
    }

    #[test]
    fn missing_product_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("Makefile"), "all:\n\ttrue\n").unwrap();
        let tree = crate::source::fetch(
            &crate::SourceSpec::Path { path: src },
            &Cache::new(tmp.path()),
        )
        .unwrap();
        let spec = BuildSpec {
            variant: "v".into(),
            compiler: "gcc-12".into(),
            product: "nothing".into(),
            ..BuildSpec::default()
        };
        let err = build(&tree, &spec, &Cache::new(tmp.path().join("cache"))).unwrap_err();
        assert!(matches!(err, BuildError::ProductMissing { .. }), "{err}");
        assert!(err.log().unwrap().is_file());
    }
}
