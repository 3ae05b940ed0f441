//! Out-of-tree builds with a cache. `build` checks the compiler, computes the cache key
//! (see [`crate::key`]), returns the cached entry when there is one, and otherwise, holding the
//! key's lock, prepares the source (patches, autogen), runs the recipe's commands (see
//! [`crate::recipe`]) from a fresh build dir (or from a copy of a configure-less tree), moves an
//! installing recipe's `DESTDIR` tree to `build/install`, and renames the staging dir into
//! `builds/<key>` only when every file the recipe requires exists. A failed attempt is kept,
//! log included, in `builds/<key>.failed`.

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
use crate::prepare::{prepare, read_patches, Layout};
use crate::recipe::Plan;
use crate::source::SourceTree;
use crate::spec::BuildSpec;
use crate::util::{copy_tree, hash_file, remove_tree, tail_file};

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

/// What a build produced; recorded in every results folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    pub compiler: String,
    pub compiler_version: String,
    pub cflags: String,
    pub ldflags: String,
    pub binary: PathBuf,
    /// The installed tree (`<entry>/build/install`) for recipes that install (postgres,
    /// mariadb): `bin/`, `share/`, `lib/` as `make install` laid them out. Relocatable for
    /// PostgreSQL; MariaDB needs `--basedir` pointing here.
    #[serde(default)]
    pub install: Option<PathBuf>,
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
    #[serde(default)]
    install: Option<PathBuf>,
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
    let spec = &spec.resolved().map_err(|detail| BuildError::BadSpec {
        what: "lto, pgo or layouts",
        detail: format!("variant `{}`: {detail}", spec.variant),
    })?;
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
        entry: &entry,
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
    let product = spec.recipe.product();
    if product.as_os_str().is_empty() || product.is_absolute() {
        return Err(bad(format!(
            "variant `{}`: product must be a path relative to the build dir (e.g. `memcached`), got `{}`",
            spec.variant,
            product.display()
        )));
    }
    if spec.env.keys().any(|k| k.is_empty() || k.contains('=')) {
        return Err(bad(format!(
            "variant `{}`: env names must be non-empty and contain no `=`",
            spec.variant
        )));
    }
    spec.recipe.check(spec)
}

/// The cached entry, if it is complete (metadata readable, binary present with the recorded
/// size) and its binary is still the one built: re-hashed, since a binary changed after its
/// build (rebuilt by hand, stripped, copied over) would be measured under the hash of
/// another; such an entry is built again. Paths are recomputed from the entry dir, so a
/// cache can be moved.
fn load_cached(entry: &Path) -> Option<BuildInfo> {
    let meta: EntryMeta = read_json(&entry.join("build.json"))?;
    let binary = entry.join("build").join(&meta.product);
    let size = std::fs::metadata(&binary).ok()?.len();
    if size != meta.info.binary_bytes {
        return None;
    }
    let (_, sha256) = describe_binary(&binary).ok()?;
    (sha256 == meta.info.binary_sha256).then(|| BuildInfo {
        binary,
        install: meta.install.as_ref().map(|i| entry.join("build").join(i)),
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
    let product = job.spec.recipe.product();
    let install = job.spec.recipe.install_dir();
    let (binary_bytes, binary_sha256) = describe_binary(&job.staging.join("build").join(&product))?;
    let info = BuildInfo {
        compiler: job.spec.compiler.clone(),
        compiler_version: job.compiler.version.clone(),
        cflags: job.spec.cflags.clone(),
        ldflags: job.spec.ldflags.clone(),
        binary: entry.join("build").join(&product),
        install: install.as_ref().map(|i| entry.join("build").join(i)),
        binary_sha256,
        binary_bytes,
        seconds,
        cached: false,
        key: key.to_string(),
        log: entry.join("build.log"),
    };
    Ok(EntryMeta {
        info,
        product,
        install,
        source: tree.description.clone(),
        compiler_path: job.compiler.path.clone(),
        inputs: serde_json::to_value(inputs).unwrap_or_default(),
    })
}

/// Why a build attempt failed (before the log has its final path).
enum Failure {
    Step(String),
    /// A file the recipe requires (relative to the build dir) is missing.
    NoProduct(PathBuf),
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
        Failure::NoProduct(product) => BuildError::ProductMissing {
            variant: spec.variant.clone(),
            product,
            log,
        },
        Failure::Step(step) => BuildError::BuildFailed {
            variant: spec.variant.clone(),
            step,
            tail: tail_file(&log, TAIL_LINES),
            log,
        },
        Failure::Io(e) => e,
    })
}

/// One build attempt in a staging dir.
struct Job<'a> {
    spec: &'a BuildSpec,
    compiler: &'a CompilerId,
    cxx: Option<&'a str>,
    src: &'a Path,
    staging: &'a Path,
    /// Where the staging dir will be renamed to (installing recipes compile its path in).
    entry: &'a Path,
}

impl Job<'_> {
    /// Run the recipe's steps; returns the wall time in seconds.
    fn run(&self) -> Result<f64, Failure> {
        let log_path = self.staging.join("build.log");
        let mut log = File::create(&log_path).map_err(|e| {
            Failure::Io(BuildError::io(
                format!("cannot create {}", log_path.display()),
                e,
            ))
        })?;
        let build_dir = self.staging.join("build");
        let recipe = &self.spec.recipe;
        let layout = recipe.layout(self.src).map_err(Failure::Io)?;
        let prefix = self
            .entry
            .join("build")
            .join(recipe.install_dir().unwrap_or_default());
        let destdir = self.staging.join("destdir");
        let cc = cc_value(&self.compiler.command);
        let plan = Plan {
            spec: self.spec,
            layout,
            src: self.src,
            prefix: &prefix,
            destdir: &destdir,
            jobs: jobs(),
            cc: &cc,
            cxx: self.cxx,
        };
        let steps = plan.steps().map_err(Failure::Io)?;
        self.header(&mut log, layout);
        for note in plan.notes() {
            let _ = writeln!(log, "==> {note}");
        }
        let started = Instant::now();
        match layout {
            Layout::Make => copy_tree(self.src, &build_dir).map_err(Failure::Io)?,
            Layout::Autotools | Layout::Cmake | Layout::Amalgamation => {
                create_dir_all(&build_dir).map_err(Failure::Io)?
            }
        }
        // gcc's profiles go beside the objects the build will compile.
        if let Some(crate::pgo::Profile::Use { path, .. }) = &self.spec.profile {
            if path.is_dir() {
                let n = place_profiles(path, &build_dir).map_err(Failure::Io)?;
                let _ = writeln!(log, "==> pgo: {n} profile file(s) from {}", path.display());
            } else {
                let _ = writeln!(log, "==> pgo: profile {}", path.display());
            }
        }
        for s in &steps {
            let mut cmd = self.command(s.program.clone(), &build_dir);
            cmd.args(&s.args);
            step(&mut cmd, &mut log, &s.name)?;
        }
        if let Some(install) = recipe.install_dir() {
            move_installed(&destdir, &prefix, &build_dir.join(install))?;
        }
        // Whole microseconds: a value that survives build.json's text round trip exactly
        // (17-digit floats can come back one bit off), so a cached build reports the same.
        let seconds = (started.elapsed().as_secs_f64() * 1e6).round() / 1e6;
        if let Some(crate::pgo::Profile::Use { path, .. }) = &self.spec.profile {
            if path.is_dir() {
                // Each .gcda is read beside the object of the same name: count the pairs.
                let files = crate::pgo::files_with(path, "gcda");
                let matched = files
                    .iter()
                    .filter(|f| {
                        let rel = f.strip_prefix(path).unwrap_or(f);
                        build_dir.join(rel).with_extension("o").is_file()
                    })
                    .count();
                let _ = writeln!(
                    log,
                    "==> pgo: {matched} of {} profile file(s) match an object of this build",
                    files.len()
                );
                if matched == 0 {
                    let _ = writeln!(
                        log,
                        "==> pgo: no profile matches an object: the profile was not used"
                    );
                    return Err(Failure::Step("pgo check".into()));
                }
            }
        }
        if self.spec.lto.is_some() {
            let (with, total) = crate::lto::objects_with_lto(&build_dir, 20_000);
            let _ = writeln!(
                log,
                "==> lto: {with} of {total} object files carry LTO code"
            );
            if total > 0 && with == 0 {
                let _ = writeln!(
                    log,
                    "==> lto was asked for, but no object carries LTO code: the build ignored CFLAGS"
                );
                return Err(Failure::Step("lto check".into()));
            }
        }
        let required = recipe.required_files();
        if let Some(missing) = required.iter().find(|f| !build_dir.join(f).is_file()) {
            let _ = writeln!(log, "==> missing after the build: {}", missing.display());
            return Err(Failure::NoProduct(missing.clone()));
        }
        let _ = writeln!(log, "==> done in {seconds:.1} s");
        Ok(seconds)
    }

    fn header(&self, log: &mut File, layout: Layout) {
        let _ = writeln!(
            log,
            "==> bakeoff build of variant `{}`\nsource: {}\nrecipe: {}\nlayout: {layout:?}\ncompiler: {} ({})\ncxx: {}",
            self.spec.variant,
            self.src.display(),
            self.spec.recipe.id(),
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

/// Copies the .gcda files under `from` to the same relative paths under `to`.
fn place_profiles(from: &Path, to: &Path) -> Result<usize> {
    let files = crate::pgo::files_with(from, "gcda");
    for f in &files {
        let rel = f.strip_prefix(from).unwrap_or(f);
        let dest = to.join(rel);
        if let Some(parent) = dest.parent() {
            create_dir_all(parent)?;
        }
        std::fs::copy(f, &dest)
            .map_err(|e| BuildError::io(format!("cannot copy {}", f.display()), e))?;
    }
    Ok(files.len())
}

/// Move what `make install DESTDIR=<destdir>` put under `<destdir>/<prefix>` to `to` (the
/// build dir's `install/`, which becomes `prefix` once the staging dir is committed).
fn move_installed(destdir: &Path, prefix: &Path, to: &Path) -> Result<(), Failure> {
    let relative = prefix.strip_prefix("/").unwrap_or(prefix);
    let installed = destdir.join(relative);
    if !installed.is_dir() {
        return Err(Failure::NoProduct(
            Path::new(crate::recipe::INSTALL_DIR).to_path_buf(),
        ));
    }
    std::fs::rename(&installed, to).map_err(|e| {
        Failure::Io(BuildError::io(
            format!("cannot move {} to {}", installed.display(), to.display()),
            e,
        ))
    })?;
    remove_tree(destdir).map_err(Failure::Io)
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

fn jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run one step with stdout and stderr appended to the log.
fn step(cmd: &mut Command, log: &mut File, name: &str) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::Io(BuildError::io(format!("cannot run {name}"), e));
    let _ = writeln!(log, "==> {name}: {cmd:?}");
    let out = log.try_clone().map_err(io)?;
    let err = log.try_clone().map_err(io)?;
    let started = Instant::now();
    let status = cmd.stdin(Stdio::null()).stdout(out).stderr(err).status();
    match status {
        Ok(s) if s.success() => {
            let _ = writeln!(
                log,
                "==> {name}: ok in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
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
    use crate::spec::Recipe;

    fn spec_with(make_args: &[&str]) -> BuildSpec {
        BuildSpec {
            recipe: Recipe::autotools("memcached"),
            make_args: make_args.iter().map(|s| s.to_string()).collect(),
            ..BuildSpec::default()
        }
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
        s.recipe = Recipe::Autotools {
            product: "/usr/bin/memcached".into(),
        };
        assert!(matches!(validate(&s), Err(BuildError::BadSpec { .. })));
        s.recipe = Recipe::default();
        assert!(validate(&s).is_err());
        let mut s = spec_with(&[]);
        s.env.insert("A=B".into(), "1".into());
        assert!(validate(&s).is_err());
        let mut s = spec_with(&["V=1"]);
        assert!(validate(&s).is_ok());
        s.recipe = Recipe::Sqlite;
        let err = validate(&s).unwrap_err();
        assert!(matches!(err, BuildError::BadSpec { .. }), "{err}");
    }

    /// A plain-make tree whose default goal builds `hello` from hello.c.
    const HELLO: [(&str, &str); 2] = [
        ("hello.c", "int main(void) { return 0; }\n"),
        ("Makefile", "hello: hello.c\n\t$(CC) $(CFLAGS) -o $@ $<\n"),
    ];

    /// A path source at `tmp/src` holding `files` (name, text), fetched: (its dir, the tree).
    fn path_source(tmp: &Path, files: &[(&str, &str)]) -> (PathBuf, SourceTree) {
        let src = tmp.join("src");
        std::fs::create_dir_all(&src).unwrap();
        for (name, text) in files {
            std::fs::write(src.join(name), text).unwrap();
        }
        let tree = crate::source::fetch(
            &crate::SourceSpec::Path { path: src.clone() },
            &Cache::new(tmp),
        )
        .unwrap();
        (src, tree)
    }

    /// The [`HELLO`] tree in a fresh temp dir, with a build cache beside it.
    fn hello_tree() -> (tempfile::TempDir, PathBuf, SourceTree, Cache) {
        let tmp = tempfile::tempdir().unwrap();
        let (src, tree) = path_source(tmp.path(), &HELLO);
        let cache = Cache::new(tmp.path().join("cache"));
        (tmp, src, tree, cache)
    }

    /// A gcc-12 build of an autotools or plain-make `product`.
    fn gcc_spec(variant: &str, product: &str, cflags: &str) -> BuildSpec {
        BuildSpec {
            variant: variant.into(),
            compiler: "gcc-12".into(),
            cflags: cflags.into(),
            recipe: Recipe::autotools(product),
            ..BuildSpec::default()
        }
    }

    /// A plain-make tree: the whole pipeline (copy, make, product check, cache hit) without
    /// autotools or network.
    #[test]
    fn plain_make_tree_builds_and_caches() {
        let (_tmp, src, tree, cache) = hello_tree();
        let spec = gcc_spec("plain", "hello", "-O1");
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

    /// A cached binary changed after its build, at its size or not, in several places: the
    /// entry is built again, never handed out under the old hash.
    #[test]
    fn hostile_changed_cached_build_is_rebuilt() {
        let (_tmp, _, tree, cache) = hello_tree();
        let spec = gcc_spec("plain", "hello", "");
        let first = build(&tree, &spec, &cache).unwrap();
        let len = first.binary_bytes as usize;
        for (at, grow) in [(0, false), (len / 2, false), (len - 1, false), (0, true)] {
            let mut bytes = std::fs::read(&first.binary).unwrap();
            bytes[at] ^= 0xff;
            if grow {
                bytes.push(0);
            }
            std::fs::write(&first.binary, &bytes).unwrap();
            let again = build(&tree, &spec, &cache).unwrap();
            assert!(
                !again.cached,
                "changed at {at} (grown: {grow}) but served from the cache"
            );
            assert_eq!(again.binary_sha256, first.binary_sha256);
            let (_, now) = describe_binary(&again.binary).unwrap();
            assert_eq!(now, first.binary_sha256, "the rebuilt binary is the build");
        }
        assert!(build(&tree, &spec, &cache).unwrap().cached);
    }

    #[test]
    fn missing_product_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, tree) = path_source(tmp.path(), &[("Makefile", "all:\n\ttrue\n")]);
        let spec = gcc_spec("v", "nothing", "");
        let err = build(&tree, &spec, &Cache::new(tmp.path().join("cache"))).unwrap_err();
        assert!(matches!(err, BuildError::ProductMissing { .. }), "{err}");
        assert!(err.log().unwrap().is_file());
    }
}
