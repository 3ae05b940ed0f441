//! Before anything is built: the inputs that need the machine checked (compilers and
//! checkers installed, binaries that are programs, what a target needs on this machine),
//! and the plan's workloads made (each kind checks its own settings, tools and files).

use crate::error::RunError;
use crate::ready::Workloads;
use bakeoff_build as build;
use bakeoff_plan::{key, Key, Loaded};
use std::path::Path;

/// BOLT's tools (Debian's bolt-16).
pub const PERF2BOLT: &str = "perf2bolt-16";
pub const LLVM_BOLT: &str = "llvm-bolt-16";

/// Bad input at key `at` of the experiment file: the message with its file:line:col.
fn bad_at(l: &Loaded, at: &[Key], message: impl Into<String>) -> RunError {
    RunError::BadInput(l.error_at(at, message).to_string())
}

/// The workloads that are measured: all but those declared only for training.
pub fn measured(l: &Loaded, mut all: Workloads) -> Workloads {
    all.retain(|w| {
        !l.experiment
            .workloads
            .iter()
            .any(|x| x.train_only && x.display_name() == w.name())
    });
    all
}

/// Whether checking may run the programs the file names (a compiler's `--version`):
/// `run` may, `check` may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Programs {
    Run,
    Find,
}

/// Checks what the file alone could not: compilers exist (and answer `--version`, with
/// [`Programs::Run`]), workload settings hold together, the tools a workload runs are
/// installed. Returns what the runner runs, in file order.
pub fn check_inputs(l: &Loaded, programs: Programs) -> Result<Workloads, RunError> {
    let e = &l.experiment;
    crate::system::check(l)?;
    tools_installed(l)?;
    for (i, v) in e.variants.iter().enumerate() {
        if let Some(m) = bakeoff_sandbox::target_for(e.kind_of(v)).missing() {
            let at = match v.kind {
                Some(_) => key!["variant", i, "kind"].to_vec(),
                None => key!["target", "kind"].to_vec(),
            };
            return Err(bad_at(l, &at, m));
        }
    }
    for (i, v) in l.experiment.variants.iter().enumerate() {
        if v.is_build() {
            let found = match programs {
                Programs::Run => build::check_compiler(v.compiler_or_default()).map(|_| ()),
                Programs::Find => build::find_compiler(v.compiler_or_default()).map(|_| ()),
            };
            found.map_err(|e| {
                bad_at(
                    l,
                    &key!["variant", i, "compiler"],
                    format!("variant {:?}: {e}", v.name),
                )
            })?;
        }
    }
    for (i, v) in e.variants.iter().enumerate() {
        let Some(d) = &v.dist else { continue };
        if let Some((k, m)) = crate::dist::missing_client(d) {
            return Err(bad_at(
                l,
                &key!["variant", i, "dist", k],
                format!("variant {:?}: {m}", v.name),
            ));
        }
    }
    open_files(l)?;
    argument_room(l)?;
    binaries_here(l)?;
    workloads(l).map_err(RunError::BadInput)
}

/// The tools the experiment runs are installed: valgrind (instruction counts, a
/// `run_under`), and perf and BOLT's tools for a `bolt` variant, with perf allowed to
/// sample here.
fn tools_installed(l: &Loaded) -> Result<(), RunError> {
    let e = &l.experiment;
    let valgrind_at: Option<Vec<bakeoff_plan::Key>> = if e.plan.mode.counts_instructions() {
        Some(key!["plan", "mode"].to_vec())
    } else {
        e.variants
            .iter()
            .position(|v| v.run_under.is_some())
            .map(|i| key!["variant", i, "run_under"].to_vec())
    };
    if let Some(at) = valgrind_at {
        if bakeoff_os::path::which("valgrind").is_none() {
            return Err(bad_at(
                l,
                &at,
                "valgrind is not installed; run scripts/setup.sh (apt-get install valgrind)",
            ));
        }
    }
    if let Some(i) = e.variants.iter().position(|v| v.bolt.is_some()) {
        for (tool, package) in [
            ("perf", "linux-perf"),
            (PERF2BOLT, "bolt-16"),
            (LLVM_BOLT, "bolt-16"),
        ] {
            if bakeoff_os::path::which(tool).is_none() {
                return Err(bad_at(l, &key!["variant", i, "bolt"],
                        format!("bolt needs {tool}, which is not installed; run scripts/setup.sh (apt-get install {package})")));
            }
        }
        // perf must be allowed to sample here, or the training would end with no profile.
        if let Err(m) = bakeoff_probe::perfstat::detect() {
            return Err(bad_at(
                l,
                &key!["variant", i, "bolt"],
                format!(
                    "bolt trains on perf samples, and {}",
                    m.trim_end_matches("; counters are off")
                ),
            ));
        }
    }
    Ok(())
}

/// Each server binary given on this machine runs here and is one its target takes.
fn binaries_here(l: &Loaded) -> Result<(), RunError> {
    let e = &l.experiment;
    // A server on another host is looked up there, once its agent runs.
    let here = e
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| e.server_host(&v.name).is_none());
    for (i, v) in here {
        let library = e.kind_of(v).binary_is_library();
        let target = bakeoff_sandbox::target_for(e.kind_of(v));
        if let Some(b) = &v.binary {
            check_program(&l.resolve(b), library)
                .and_then(|()| match target.refuses_binary(&l.resolve(b)) {
                    Some(why) => Err(format!("binary {} {why}", b.display())),
                    None => Ok(()),
                })
                .map_err(|m| {
                    bad_at(
                        l,
                        &key!["variant", i, "binary"],
                        format!("variant {:?}: {m}", v.name),
                    )
                })?;
        }
    }
    Ok(())
}

/// The plan's workloads, made for each kind of server the variants are (the first
/// variant's kind first).
pub fn workloads(l: &Loaded) -> Result<Workloads, String> {
    let kinds = l.experiment.variant_kinds();
    let mut out: Option<Workloads> = None;
    for kind in kinds {
        let list = if kind == l.experiment.target.kind {
            bakeoff_workloads::from_plan(l)?
        } else {
            bakeoff_workloads::from_plan(&l.for_kind(kind))?
        };
        match &mut out {
            None => out = Some(Workloads::new(kind, list)),
            Some(w) => w.add(kind, list),
        }
    }
    Ok(out.unwrap_or_default())
}

/// The folder that holds the sandboxes and SQL data, described for results.json (`host`:
/// its filesystem, device and free space), and checked for room: a SQL target's tables
/// are loaded once per variant (or copied) and each run works on a copy, so the tables'
/// estimated size times (variants + 1) must fit. Too little is bad input before anything
/// is loaded. Nothing to check here when the server (and its data) is on another host.
pub fn sandbox_space(
    l: &Loaded,
    configs: &Workloads,
    root: &std::path::Path,
) -> Result<Option<bakeoff_sandbox::Filesystem>, RunError> {
    let e = &l.experiment;
    if e.variants.iter().all(|v| e.server_host(&v.name).is_some()) {
        return Ok(None);
    }
    let Some(fs) = bakeoff_sandbox::filesystem_of(root) else {
        return Ok(None);
    };
    if !e.variant_kinds().iter().any(|k| k.is_sql()) {
        return Ok(Some(fs));
    }
    let tables: u64 = e
        .variant_kinds()
        .into_iter()
        .filter(|k| k.is_sql())
        .map(|k| {
            (0..configs.len())
                .filter_map(|i| configs.of_kind(k, i).tables(None))
                .map(|t| t.bytes())
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    let need = tables * (e.variants_run() as u64 + 1);
    if fs.free_bytes >= need {
        return Ok(Some(fs));
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let msg = format!(
        "the tables need about {:.1} GiB in {} ({:.1} GiB each for {} variant(s) and a run's copy), and {} ({}) has {:.1} GiB free; choose a folder on a larger disk with sandbox_dir (or --sandbox-dir), or load fewer rows",
        gib(need),
        root.display(),
        gib(tables),
        e.variants_run(),
        fs.mount_point.display(),
        fs.fs_type,
        gib(fs.free_bytes)
    );
    let at = if e.plan.sandbox_dir.is_some() {
        key!["plan", "sandbox_dir"].to_vec()
    } else {
        key!["plan"].to_vec()
    };
    Err(bad_at(l, &at, msg))
}

/// The sandbox folder, before anything starts: a file there, or a folder this user cannot
/// write, would make every run invalid. Bad input, located at `[plan] sandbox_dir` when
/// the root is the file's. Nothing to check when the server runs on another host.
pub fn sandbox_root(l: &Loaded, root: &Path) -> Result<(), RunError> {
    if l.experiment.target.host.is_some() {
        return Ok(());
    }
    let Err(why) = bakeoff_sandbox::check_root(root) else {
        return Ok(());
    };
    sandbox_root_error(l, root, why)
}

/// Claims the sandbox folder (creates it, marks it as bakeoff's) before anything is
/// cleaned up or started in it; refused as [`sandbox_root`] refuses.
pub fn claim_sandbox_root(l: &Loaded, root: &Path) -> Result<(), RunError> {
    if l.experiment.target.host.is_some() {
        return Ok(());
    }
    match bakeoff_sandbox::claim_root(root) {
        Ok(()) => Ok(()),
        Err(why) => sandbox_root_error(l, root, why),
    }
}

/// Claims the build cache folder ([`bakeoff_build::Cache::claim`]) before anything is
/// fetched or built there.
pub fn claim_cache(root: &Path) -> Result<(), RunError> {
    bakeoff_build::Cache::new(root)
        .claim()
        .map_err(|why| RunError::BadInput(format!("{why}; give --cache a new or empty folder")))
}

fn sandbox_root_error(l: &Loaded, root: &Path, why: String) -> Result<(), RunError> {
    let from_file = l
        .experiment
        .plan
        .sandbox_dir
        .as_ref()
        .is_some_and(|d| l.resolve(Path::new(d)) == root);
    let msg = format!(
        "cannot use {} as the sandbox folder: {why}; choose a new or empty folder of this user",
        root.display()
    );
    Err(RunError::BadInput(if from_file {
        l.error_at(
            &key!["plan", "sandbox_dir"],
            format!("{msg} in sandbox_dir"),
        )
        .to_string()
    } else {
        format!("{msg} with --sandbox-dir DIR")
    }))
}

/// Bytes a server's command line may take with the environment (the kernel's ARG_MAX),
/// and the most one argument may hold (MAX_ARG_STRLEN, 32 pages on Linux).
fn exec_limits() -> (usize, usize) {
    // SAFETY: sysconf has no preconditions.
    let arg_max = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    let arg_max = if arg_max > 0 {
        arg_max as usize
    } else {
        128 * 1024
    };
    (arg_max, 32 * 4096)
}

/// Room for what bakeoff adds to a server's command line (its own flags, the port, the
/// work dir, a wrapper such as valgrind).
const OWN_ARG_BYTES: usize = 16 * 1024;

/// A server argument list the kernel would refuse (E2BIG) makes every run invalid; it is
/// bad input before anything starts. Counted as execve counts it: each string with its
/// NUL and its pointer, the environment included.
fn argument_room(l: &Loaded) -> Result<(), RunError> {
    let e = &l.experiment;
    let (arg_max, one_max) = exec_limits();
    let env: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2 + 8)
        .sum();
    for (i, v) in e.variants.iter().enumerate() {
        let args = e.server_args(v);
        let at = if v.args.is_empty() {
            key!["target", "args"].to_vec()
        } else {
            key!["variant", i, "args"].to_vec()
        };
        if let Some(long) = args.iter().find(|a| a.len() + 1 > one_max) {
            return Err(bad_at(l, &at,
                    format!(
                        "variant {:?}: one server argument is {} bytes ({}...), and this system takes at most {} in one argument; shorten it (or put it in a file the server reads)",
                        v.name,
                        long.len(),
                        long.chars().take(24).collect::<String>(),
                        one_max - 1
                    )));
        }
        let need: usize = args.iter().map(|a| a.len() + 1 + 8).sum::<usize>() + env + OWN_ARG_BYTES;
        if need > arg_max {
            return Err(bad_at(l, &at,
                    format!(
                        "variant {:?}: the server's {} arguments and the environment take about {need} bytes, over this system's limit of {arg_max} (getconf ARG_MAX); pass fewer or shorter arguments",
                        v.name,
                        args.len()
                    )));
        }
    }
    Ok(())
}

/// What results.json says of the sandbox folder's filesystem, and this machine's facts
/// (the machine table), its disk and filesystem those of that folder.
pub fn record_sandbox(
    host: &mut bakeoff_report::model::Host,
    root: &std::path::Path,
    fs: Option<bakeoff_sandbox::Filesystem>,
) {
    host.machine = bakeoff_probe::machine::collect(root);
    let Some(fs) = fs else { return };
    host.sandbox_fs = Some(fs.fs_type);
    host.sandbox_dir = Some(root.display().to_string());
    host.sandbox_device = Some(fs.device);
    host.sandbox_free_bytes = Some(fs.free_bytes);
}

/// Descriptors bakeoff itself keeps open besides its connections (logs, /proc files,
/// pipes, the recorder's files).
const OWN_FILES: u64 = 64;

/// The open-files limit must hold the sweep's top: the load engine opens every connection
/// here and a local server accepts them all. Raises the soft limit to the hard one (and
/// the hard one, as root, when it is too low); children inherit it. Too low a hard limit
/// is bad input at the workload that sweeps highest.
fn open_files(l: &Loaded) -> Result<(), RunError> {
    let e = &l.experiment;
    let cap = e
        .variant_kinds()
        .into_iter()
        .map(|k| e.connection_cap_of(k))
        .max()
        .unwrap_or_else(|| e.connection_cap());
    let need = (cap as u64) + OWN_FILES;
    let got = bakeoff_engine::raise_nofile_to(need);
    if got >= need {
        return Ok(());
    }
    let at = e
        .workloads
        .iter()
        .enumerate()
        .max_by_key(|(_, w)| w.connections_swept().into_iter().max().unwrap_or(0))
        .map_or(key!["workload"].to_vec(), |(i, _)| {
            key!["workload", i, "connections"].to_vec()
        });
    Err(bad_at(l, &at,
            format!(
                "{} connections need about {need} open files, and this user may open {got} (ulimit -Hn); raise the hard limit (limits.conf, or run as root) or lower the sweep",
                e.max_connections_swept()
            )))
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
