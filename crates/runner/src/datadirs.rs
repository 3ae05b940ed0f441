//! Prepared data for SQL targets. Each variant gets a pristine data directory once
//! (mariadb-install-db or initdb, with its own login); each distinct table set (tables,
//! table_size, engine, ...) is then loaded once per variant into a copy of it, by a server
//! running on that directory in place and stopped cleanly. Every measured run starts a
//! sandbox on a fresh copy of that prepared directory, so all repetitions begin from the
//! same bytes and a run's writes never leak into the next. The directories live under the
//! sandbox root, or with the server on another host under its agent's data root, made
//! there through a [`DataPlace`]; they go away with the store.

use crate::folder::safe_name;
use crate::observer::Observer;
use crate::options::Options;
use crate::ready::ReadyVariant;
use crate::ready::Workloads;
use bakeoff_plan::Loaded;
use bakeoff_plan::TargetKind;
use bakeoff_report::model::{DataRecord, Results};
use bakeoff_sandbox::{DataSource, Login, Sandbox, SandboxSpec};
use bakeoff_sqlclient::Db;
use bakeoff_workloads::Tables;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// How long a server loading tables may do no work before the load is ended (a stopped
/// or wedged server otherwise holds the experiment before its first run).
pub(crate) const LOAD_IDLE: std::time::Duration = std::time::Duration::from_secs(300);

/// Where data directories are made and the servers that load and verify them run: this
/// machine, or the server's host through its agent (`remote::HostData`). Preparing and
/// verifying go through it alone, so both work the same wherever the server is.
pub trait DataPlace: Send + Sync {
    /// The binary as the server there can run it, made ready under `vdir`.
    fn binary_for(
        &self,
        kind: TargetKind,
        v: &ReadyVariant,
        vdir: &Path,
    ) -> Result<PathBuf, String>;
    /// `Target::data_format` of the binary there, with `v`'s server options and configure
    /// arguments.
    fn data_format(&self, kind: TargetKind, binary: &Path, v: &ReadyVariant) -> Option<String>;
    /// A pristine data directory with bakeoff's login.
    fn init(&self, kind: TargetKind, binary: &Path, dir: &Path) -> Result<(), String>;
    /// `cp -a`, owner and modes kept.
    fn copy(&self, from: &Path, to: &Path) -> Result<(), String>;
    fn bytes(&self, dir: &Path) -> u64;
    fn remove(&self, dir: &Path);
    /// A server on `spec` (its data set), ready for the SQL client.
    fn start(&self, spec: &SandboxSpec) -> Result<Box<dyn DataServer>, String>;
}

/// A server a [`DataPlace`] started.
pub trait DataServer {
    /// What the SQL client connects to.
    fn db(&self) -> Option<Db>;
    /// Its processes, when they run here (a deadline watches them: `deadline::guarded`).
    fn watch(&self) -> Option<bakeoff_sandbox::Watch> {
        None
    }
    /// Stops it cleanly (an unclean stop is an error: the data may be damaged).
    fn stop(self: Box<Self>) -> Result<(), String>;
}

/// This machine.
pub struct Here;

struct HereServer(Sandbox, TargetKind);

impl DataServer for HereServer {
    fn db(&self) -> Option<Db> {
        db_of(&self.0, self.1)
    }

    fn watch(&self) -> Option<bakeoff_sandbox::Watch> {
        Some(self.0.watch())
    }

    fn stop(self: Box<Self>) -> Result<(), String> {
        self.0.stop().map(|_| ()).map_err(|e| e.to_string())
    }
}

impl DataPlace for Here {
    fn binary_for(
        &self,
        kind: TargetKind,
        v: &ReadyVariant,
        vdir: &Path,
    ) -> Result<PathBuf, String> {
        std::fs::create_dir_all(vdir)
            .map_err(|err| format!("cannot create {}: {err}", vdir.display()))?;
        reachable_binary(kind, v, vdir)
    }

    fn data_format(&self, kind: TargetKind, binary: &Path, v: &ReadyVariant) -> Option<String> {
        bakeoff_sandbox::target_for(kind).data_format(binary, &v.options, &v.configure_args)
    }

    fn init(&self, kind: TargetKind, binary: &Path, dir: &Path) -> Result<(), String> {
        bakeoff_sandbox::init_data(kind, binary, dir)
            .map(|_| ())
            .map_err(|err| format!("data directory initialization failed: {err}"))
    }

    fn copy(&self, from: &Path, to: &Path) -> Result<(), String> {
        bakeoff_sandbox::copy_tree(from, to)
    }

    fn bytes(&self, dir: &Path) -> u64 {
        bakeoff_os::file::dir_bytes(dir)
    }

    fn remove(&self, dir: &Path) {
        let _ = bakeoff_os::own::remove_tree(dir);
    }

    fn start(&self, spec: &SandboxSpec) -> Result<Box<dyn DataServer>, String> {
        let sb = Sandbox::start(spec).map_err(|err| format!("server did not start: {err}"))?;
        Ok(Box::new(HereServer(sb, spec.kind)))
    }
}

/// The prepared data directories of one experiment, where they were made; removed on
/// drop.
pub struct DataStore {
    root: PathBuf,
    place: Arc<dyn DataPlace>,
    /// (variant name, workload index) -> prepared data dir.
    prepared: BTreeMap<(String, usize), PathBuf>,
}

impl Drop for DataStore {
    fn drop(&mut self) {
        self.place.remove(&self.root);
    }
}

impl DataStore {
    /// A store with no prepared data (the runner's loop tests run no server).
    #[cfg(test)]
    pub(crate) fn empty(root: PathBuf) -> DataStore {
        DataStore {
            root,
            place: Arc::new(Here),
            prepared: BTreeMap::new(),
        }
    }

    /// The data directory a run of `variant` on workload `w` starts from (a copy of it).
    pub fn source(&self, variant: &str, w: usize) -> Option<DataSource> {
        self.prepared
            .get(&(variant.to_string(), w))
            .map(|p| DataSource::Copy(p.clone()))
    }

    /// Where the data is, to start a server on it.
    pub fn place(&self) -> &dyn DataPlace {
        self.place.as_ref()
    }
}

/// What the SQL workloads connect to, from a running sandbox.
pub fn db_of(sandbox: &Sandbox, kind: bakeoff_plan::TargetKind) -> Option<Db> {
    let login: Login = sandbox.login()?;
    let dialect = bakeoff_sandbox::target_for(kind).dialect()?;
    Some(login.db(dialect, sandbox.addr(), sandbox.socket()))
}

/// Where this machine keeps one experiment's prepared data.
pub fn local_root(opts: &Options) -> PathBuf {
    opts.sandbox_root
        .join(format!("data-{}", std::process::id()))
}

/// Makes this machine's data folder ([`local_root`]) and records it in bakeoff's state
/// ([`bakeoff_sandbox::DATA_PURPOSE`]), so a later run's [`reap_stale`] knows it is
/// bakeoff's. Where that fails, the folder is made but a later run leaves it alone.
pub fn make_local_root(root: &Path) {
    if std::fs::create_dir_all(root).is_ok() {
        let _ = bakeoff_os::own::register(root, bakeoff_sandbox::DATA_PURPOSE);
    }
}

/// Initializes and loads data for every ready variant of a SQL target, in `place` (under
/// `root` there). A variant whose data cannot be made is marked failed in `results` and
/// dropped from `variants`. Variants whose servers read the same files (same version,
/// same file-format options) copy the first one's loaded data instead of loading it
/// again.
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    l: &Loaded,
    opts: &Options,
    specs: &Workloads,
    variants: &mut Vec<ReadyVariant>,
    results: &mut Results,
    observer: &dyn Observer,
    place: Arc<dyn DataPlace>,
    root: PathBuf,
) -> DataStore {
    let mut store = DataStore {
        root: root.clone(),
        place,
        prepared: BTreeMap::new(),
    };
    if l.experiment.target.host.is_none() {
        options_start(l, opts, variants, results, observer);
    }
    if !variants.iter().any(|v| v.kind.is_sql()) {
        return store;
    }
    let sql_load = |v: &ReadyVariant| (0..specs.len()).any(|i| specs.of_kind(v.kind, i).sql());
    if !variants.iter().any(|v| v.kind.is_sql() && sql_load(v)) {
        return store;
    }
    if bakeoff_sandbox::server_user().is_some() {
        // The server's own user must pass through the sandbox root to its data.
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::create_dir_all(&opts.sandbox_root);
        let _ =
            std::fs::set_permissions(&opts.sandbox_root, std::fs::Permissions::from_mode(0o711));
    }
    let mut failed = Vec::new();
    let mut moved = Vec::new();
    let mut loaded = Loads::new();
    for v in variants.iter().filter(|v| v.kind.is_sql()) {
        let prep = Prep {
            l,
            opts,
            place: store.place.as_ref(),
            v,
            observer,
        };
        match prep.variant(&root, specs, &mut loaded) {
            Ok((dirs, records, binary)) => {
                for (w, dir) in dirs {
                    store.prepared.insert((v.name.clone(), w), dir);
                }
                results.variants[v.record].data = records;
                if binary != v.binary {
                    moved.push((v.name.clone(), binary));
                }
            }
            Err(e) => failed.push(fail(v, e, results, observer)),
        }
    }
    variants.retain(|v| !failed.contains(&v.name));
    for v in variants.iter_mut() {
        if let Some((_, b)) = moved.iter().find(|(n, _)| *n == v.name) {
            v.binary = b.clone();
        }
    }
    store
}

/// Loaded data dirs by (file compatibility, data key): the variant that loaded it, the
/// dir and its rows.
type Loads = BTreeMap<(String, String), (String, PathBuf, u64)>;

type Prepared = (Vec<(usize, PathBuf)>, Vec<DataRecord>, PathBuf);

/// One variant's data being made in a place.
struct Prep<'a> {
    l: &'a Loaded,
    opts: &'a Options,
    place: &'a dyn DataPlace,
    v: &'a ReadyVariant,
    observer: &'a dyn Observer,
}

impl Prep<'_> {
    fn variant(
        &self,
        root: &Path,
        specs: &Workloads,
        loads: &mut Loads,
    ) -> Result<Prepared, String> {
        let (v, observer, kind) = (self.v, self.observer, self.v.kind);
        let vdir = root.join(safe_name(&v.name));
        let binary = self.place.binary_for(kind, v, &vdir)?;
        // Data is shared only between servers of one kind: the kind leads the key.
        let compat = self
            .place
            .data_format(kind, &binary, v)
            .map(|c| format!("{}:{c}", kind.as_str()));
        // Workloads with the same tables share one load.
        let mut groups: BTreeMap<String, (Box<dyn Tables>, Vec<usize>)> = BTreeMap::new();
        for w in 0..specs.len() {
            let spec = specs.of_kind(kind, w);
            if let Some(set) = spec.tables(v.engine.as_deref()) {
                groups
                    .entry(set.key())
                    .or_insert_with(|| (set, Vec::new()))
                    .1
                    .push(w);
            }
        }
        let mut pristine = None;
        let mut dirs = Vec::new();
        let mut records = Vec::new();
        for (key, (set, ws)) in groups {
            let names: Vec<String> = ws.iter().map(|w| specs[*w].name().to_string()).collect();
            let dir = vdir.join(safe_name(&key));
            let earlier = compat
                .as_ref()
                .and_then(|c| loads.get(&(c.clone(), key.clone())));
            let record = match earlier {
                Some((from, loaded_dir, rows)) => {
                    observer.notice(&format!(
                        "{}: copying {}'s loaded data ({}) for {}: same server version",
                        v.name,
                        from,
                        set.describe(),
                        names.join(", ")
                    ));
                    let mut record = self.copied(&binary, loaded_dir, &dir, *rows)?;
                    record.workloads = names;
                    record.reused_from = Some(from.clone());
                    record
                }
                None => {
                    let pristine = match &pristine {
                        Some(p) => p,
                        None => {
                            let p = vdir.join("pristine");
                            observer.notice(&format!("{}: initializing a data directory", v.name));
                            self.place.init(kind, &binary, &p)?;
                            pristine.insert(p)
                        }
                    };
                    observer.notice(&format!(
                        "{}: loading {} for {}",
                        v.name,
                        set.describe(),
                        names.join(", ")
                    ));
                    self.place.copy(pristine, &dir)?;
                    let (rows, seconds) = self.load(&binary, &dir, set.as_ref(), &[])?;
                    if let Some(c) = &compat {
                        loads.insert((c.clone(), key), (v.name.clone(), dir.clone(), rows));
                    }
                    DataRecord {
                        workloads: names,
                        rows,
                        seconds,
                        bytes: self.place.bytes(&dir),
                        reused_from: None,
                    }
                }
            };
            records.push(record);
            dirs.extend(ws.into_iter().map(|w| (w, dir.clone())));
        }
        Ok((dirs, records, binary))
    }

    /// The variant's server on `dir` in place, to prepare its data.
    fn in_place(&self, binary: &Path, dir: &Path) -> SandboxSpec {
        sql_spec(
            self.l,
            self.opts,
            self.v,
            binary,
            "prepare",
            DataSource::InPlace(dir.to_path_buf()),
        )
    }

    /// `loaded_dir` (another variant's loaded data, `rows` rows) copied to `dir`, and
    /// the variant's server started and stopped on the copy: a bad option or unreadable
    /// files fail the variant here, once, as a load would. Its record, but for whose.
    fn copied(
        &self,
        binary: &Path,
        loaded_dir: &Path,
        dir: &Path,
        rows: u64,
    ) -> Result<DataRecord, String> {
        let started = Instant::now();
        self.place.copy(loaded_dir, dir)?;
        let spec = self.in_place(binary, dir);
        self.place
            .start(&spec)?
            .stop()
            .map_err(|err| format!("the server did not stop cleanly: {err}"))?;
        Ok(DataRecord {
            workloads: Vec::new(),
            rows,
            seconds: started.elapsed().as_secs_f64(),
            bytes: self.place.bytes(dir),
            reused_from: None,
        })
    }

    /// Starts the variant's server on `dir` in place (with `env` in its environment: a
    /// training server writes its profile where that says), loads `set`, stops it
    /// cleanly.
    fn load(
        &self,
        binary: &Path,
        dir: &Path,
        set: &dyn Tables,
        env: &[(String, String)],
    ) -> Result<(u64, f64), String> {
        let mut spec = self.in_place(binary, dir);
        spec.env = env.to_vec();
        let server = self.place.start(&spec)?;
        let db = server
            .db()
            .ok_or_else(|| "the sandbox has no login".to_string())?;
        let started = Instant::now();
        let loaded = crate::deadline::guarded(server.watch(), LOAD_IDLE, || set.load(&db));
        let wall = started.elapsed().as_secs_f64();
        let stopped = server.stop();
        let (rows, seconds) = loaded?;
        stopped.map_err(|err| format!("the server did not stop cleanly after loading: {err}"))?;
        Ok((rows, if seconds > 0.0 { seconds } else { wall }))
    }
}

/// Loads `set` into `dir` on this machine with `env` in the server's environment (a
/// training server writes its profile where that says).
pub(crate) fn load_with_env(
    l: &Loaded,
    opts: &Options,
    v: &ReadyVariant,
    binary: &Path,
    dir: &Path,
    set: &dyn Tables,
    env: &[(String, String)],
) -> Result<(u64, f64), String> {
    let prep = Prep {
        l,
        opts,
        place: &Here,
        v,
        observer: &crate::observer::Quiet,
    };
    prep.load(binary, dir, set, env)
}

/// A plain SQL sandbox of variant `v` on `data` (no probes, no wrapper), named
/// `<variant>-<role>`.
/// A server without data but with options (Redis's config directives) starts once per
/// variant that has options before any run: an option it does not know fails that
/// variant here, with the server's own message, instead of every run.
fn options_start(
    l: &Loaded,
    opts: &Options,
    variants: &mut Vec<ReadyVariant>,
    results: &mut Results,
    observer: &dyn Observer,
) {
    let mut failed = Vec::new();
    // One on another host was started there once already (`Hosts::stage`).
    let here = |v: &&ReadyVariant| l.experiment.server_host(&v.name).is_none();
    for v in variants
        .iter()
        .filter(|v| v.kind.takes_options() && !v.kind.is_sql())
        .filter(|v| !v.options.is_empty())
        .filter(here)
    {
        let mut spec = sql_spec(
            l,
            opts,
            v,
            &v.binary,
            "options",
            DataSource::Copy(PathBuf::new()),
        );
        spec.data = None;
        let started = Sandbox::start(&spec).and_then(|sb| sb.stop().map(|_| ()));
        if let Err(e) = started {
            let e = format!("server did not start with its options: {e}");
            failed.push(fail(v, e, results, observer));
        }
    }
    variants.retain(|v| !failed.contains(&v.name));
}

/// Marks `v` failed for `e` in the results and says so; returns its name.
fn fail(v: &ReadyVariant, e: String, results: &mut Results, observer: &dyn Observer) -> String {
    observer.notice(&format!("{}: {e}", v.name));
    let rec = &mut results.variants[v.record];
    rec.status = "failed".into();
    rec.error = Some(e);
    v.name.clone()
}

pub fn sql_spec(
    _l: &Loaded,
    opts: &Options,
    v: &ReadyVariant,
    binary: &Path,
    role: &str,
    data: DataSource,
) -> SandboxSpec {
    let target = bakeoff_sandbox::target_for(v.kind);
    SandboxSpec {
        name: format!("{}-{role}", v.name),
        kind: v.kind,
        binary: binary.to_path_buf(),
        args: v.args.clone(),
        root: opts.sandbox_root.clone(),
        ready_timeout: target.ready_timeout(),
        stop_grace: target.stop_grace(),
        options: v.options.clone(),
        data: Some(data),
        wrapper: Vec::new(),
        env: v.env.clone(),
        listen: bakeoff_sandbox::LOOPBACK,
        cpus: None,
        stats: bakeoff_sandbox::stats::StatsLevel::Off,
    }
}

/// The server binary as the server's own user can run it. A build or a distribution's
/// tree lives in the cache under the home of the user running bakeoff, which the
/// unprivileged server user (when bakeoff is root) cannot enter: what the server needs is
/// copied into the store once per experiment, keeping its layout, and the copy's server
/// returned.
pub(crate) fn reachable_binary(
    kind: TargetKind,
    v: &ReadyVariant,
    vdir: &Path,
) -> Result<PathBuf, String> {
    let Some((tree, rel)) = server_tree(&v.binary, kind.binary_is_library()) else {
        return Ok(v.binary.clone());
    };
    let is_build_tree = tree.file_name().is_some_and(|n| n == "install");
    let unreachable = !others_can_enter(&v.binary);
    if bakeoff_sandbox::server_user().is_none() || !(is_build_tree || unreachable) {
        return Ok(v.binary.clone());
    }
    let copy = vdir.join("install");
    let _ = std::fs::remove_dir_all(&copy);
    if tree == v.binary {
        // A library: the one file, under its own name.
        std::fs::create_dir_all(&copy)
            .map_err(|e| format!("cannot create {}: {e}", copy.display()))?;
        link_or_copy(&tree, &copy.join(&rel))?;
    } else {
        link_or_copy(&tree, &copy)?;
    }
    open_to_others(&copy)?;
    Ok(copy.join(rel))
}

/// Lets others read every file and enter every folder under `dir` (`chmod -R a+rX`), never
/// through a link, and never changing a file it shares with the cache: a hard-linked file
/// others cannot read is replaced by a copy first (the cache's modes are part of what it
/// verifies before use).
fn open_to_others(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let fail = |p: &Path, e: std::io::Error| {
        format!("cannot open {} to the server user: {e}", p.display())
    };
    let meta = std::fs::symlink_metadata(dir).map_err(|e| fail(dir, e))?;
    let mode = meta.mode() & 0o7777;
    if meta.is_dir() {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o555))
            .map_err(|e| fail(dir, e))?;
        for entry in std::fs::read_dir(dir).map_err(|e| fail(dir, e))?.flatten() {
            open_to_others(&entry.path())?;
        }
    } else if meta.is_file() {
        let exec = if mode & 0o111 != 0 { 0o111 } else { 0 };
        let wanted = mode | 0o444 | exec;
        if wanted == mode {
            return Ok(());
        }
        if meta.nlink() > 1 {
            let tmp = dir.with_extension("bakeoff-copy");
            std::fs::copy(dir, &tmp)
                .and_then(|_| std::fs::rename(&tmp, dir))
                .map_err(|e| fail(dir, e))?;
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(wanted))
            .map_err(|e| fail(dir, e))?;
    }
    Ok(())
}

/// `from` at `to` as hard links where both are on one filesystem (a distribution's tree
/// can be hundreds of megabytes: MySQL's MXJ archive holds every platform), else copied.
/// The links share the cache's files, which [`open_to_others`] never changes.
fn link_or_copy(from: &Path, to: &Path) -> Result<(), String> {
    let linked = std::process::Command::new("cp")
        .arg("-al")
        .arg(from)
        .arg(to)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if linked {
        return Ok(());
    }
    if to.is_dir() {
        let _ = std::fs::remove_dir_all(to);
    } else {
        let _ = std::fs::remove_file(to);
    }
    bakeoff_sandbox::copy_tree(from, to)
}

/// What to copy for the server's user, and where the server lies in it: a library alone
/// (the sandbox's host loads just that file); an installed tree's server
/// (`<tree>/bin/<server>`, also `sbin` and `libexec`) with its tree; a flat server
/// inside a distribution's unpacked tree (`<platform>/<server>`, as MySQL's MXJ archive
/// ships it) with the folder above it, where its shared files and ready data directory
/// lie; any other flat server with its own folder. None for a server in a system folder.
pub(crate) fn server_tree(binary: &Path, library: bool) -> Option<(PathBuf, PathBuf)> {
    let name = binary.file_name()?;
    if library {
        return Some((binary.to_path_buf(), PathBuf::from(name)));
    }
    let dir = binary.parent()?;
    let installed = matches!(
        dir.file_name().and_then(|n| n.to_str()),
        Some("bin" | "sbin" | "libexec")
    );
    let tree = if installed || in_dist_tree(dir) {
        dir.parent()?
    } else {
        dir
    };
    if tree.parent().is_none_or(|p| p.parent().is_none()) {
        // `/x`, `/usr/...`'s own `/usr`: never copy a system folder.
        return None;
    }
    let rel = binary.strip_prefix(tree).ok()?.to_path_buf();
    Some((tree.to_path_buf(), rel))
}

/// Whether `dir` lies inside a distribution's unpacked tree in the cache
/// (`.../dist/<spec>-<sha256>/tree/...`) below the tree's top.
fn in_dist_tree(dir: &Path) -> bool {
    dir.ancestors().skip(1).any(|a| {
        a.file_name().is_some_and(|n| n == "tree")
            && a.parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|n| n == "dist")
    })
}

/// Whether every folder above `p` lets other users through (o+x).
fn others_can_enter(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .all(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// Removes the data directories of earlier runs whose bakeoff process is gone (killed
/// before it could clean up). Returns one line per removed directory.
/// Only in a sandbox root bakeoff made and marked, and only real folders on its own
/// filesystem (never a link or a mount) that bakeoff's state recorded as its data
/// folders ([`make_local_root`]): a `data-<pid>` folder anyone else made stays.
pub fn reap_stale(sandbox_root: &Path) -> Vec<String> {
    if !bakeoff_sandbox::is_our_root(sandbox_root) {
        return Vec::new();
    }
    let Ok(rd) = std::fs::read_dir(sandbox_root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in rd.flatten() {
        if !bakeoff_os::own::is_plain_subfolder(sandbox_root, &entry.path()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix("data-")
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if bakeoff_os::own::registered(&entry.path(), bakeoff_sandbox::DATA_PURPOSE).is_none() {
            continue;
        }
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let alive = pid == std::process::id() as i32 || unsafe { libc::kill(pid, 0) } == 0;
        if !alive && bakeoff_os::own::remove_tree(&entry.path()).is_ok() {
            out.push(format!(
                "removed stale data directory {} (bakeoff pid {pid} is gone)",
                entry.path().display()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::server_tree;
    use std::path::{Path, PathBuf};

    fn tree(binary: &str, library: bool) -> Option<(PathBuf, PathBuf)> {
        server_tree(Path::new(binary), library)
    }

    /// Regression (issue 49): a SQLite library copied for the server's user was looked
    /// for under `install/bin/`, where no library is.
    #[test]
    fn a_library_keeps_its_layout_wherever_it_is_copied() {
        let (t, rel) = tree("/root/.cache/bakeoff/builds/k/libsqlite3.so", true).unwrap();
        assert_eq!(t, Path::new("/root/.cache/bakeoff/builds/k/libsqlite3.so"));
        assert_eq!(rel, Path::new("libsqlite3.so"));
    }

    #[test]
    fn an_installed_tree_is_copied_whole_with_the_server_where_it_was() {
        let (t, rel) = tree("/root/.cache/bakeoff/builds/k/install/bin/postgres", false).unwrap();
        assert_eq!(t, Path::new("/root/.cache/bakeoff/builds/k/install"));
        assert_eq!(rel, Path::new("bin/postgres"));
        let (t, rel) = tree("/root/x/sbin/mysqld", false).unwrap();
        assert_eq!(
            (t.as_path(), rel.as_path()),
            (Path::new("/root/x"), Path::new("sbin/mysqld"))
        );
    }

    /// Regression (issue 49): MySQL 5.5's MXJ tree keeps mysqld in a platform folder and
    /// its shared files and ready data directory beside that folder.
    #[test]
    fn a_flat_distribution_server_takes_the_folder_above_it() {
        let b = "/root/.cache/bakeoff/dist/mysql-abc/tree/5-5-9/Linux-x86_64/mysqld";
        let (t, rel) = tree(b, false).unwrap();
        assert_eq!(
            t,
            Path::new("/root/.cache/bakeoff/dist/mysql-abc/tree/5-5-9")
        );
        assert_eq!(rel, Path::new("Linux-x86_64/mysqld"));
        // Outside a distribution's tree, a flat server takes its own folder only.
        let (t, rel) = tree("/root/servers/mysqld", false).unwrap();
        assert_eq!(
            (t.as_path(), rel.as_path()),
            (Path::new("/root/servers"), Path::new("mysqld"))
        );
    }

    #[test]
    fn system_folders_are_never_copied() {
        assert_eq!(tree("/usr/sbin/mariadbd", false), None);
        assert_eq!(tree("/opt/mysqld", false), None);
    }
}
