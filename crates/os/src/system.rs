//! The machine's own settings a variant may ask for, and putting them back: transparent
//! huge pages (`/sys/kernel/mm/transparent_hugepage/{enabled,defrag}`), kernel settings
//! (`/proc/sys/...`) and SMT (`/sys/devices/system/cpu/smt/control`).
//!
//! [`apply`] takes a machine-wide lock (one bakeoff changes the machine at a time), puts
//! back what a dead bakeoff left ([`recover`]), reads the values it is about to change and
//! writes them to a journal in bakeoff's state folder (`<state>/bakeoff/system/`,
//! fsynced) before it writes a single setting; [`Applied::restore`] (or its drop, or
//! [`restore_now`] on the signal path's exit) writes them back, reads them back, and
//! removes the journal only when every one holds. A bakeoff killed with SIGKILL leaves its
//! journal: the next bakeoff start reads it first ([`recover`]) and puts the machine back.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Where transparent huge pages are set.
pub const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
pub const THP_DEFRAG: &str = "/sys/kernel/mm/transparent_hugepage/defrag";
/// Where SMT is turned on and off (absent or `notsupported` where the machine cannot).
pub const SMT_CONTROL: &str = "/sys/devices/system/cpu/smt/control";
/// The modes `thp` takes, and `defrag`.
pub const THP_MODES: &[&str] = &["always", "madvise", "never"];
pub const DEFRAG_MODES: &[&str] = &["always", "defer", "defer+madvise", "madvise", "never"];
/// The kernel settings a variant may set: everything under these prefixes, plus
/// [`SYSCTL_OTHERS`]. Nothing that opens the machine up (no `kernel.modules_disabled`,
/// no `fs.protected_*`) and nothing that outlives a reboot.
pub const SYSCTL_PREFIXES: &[&str] = &["net.", "vm.", "kernel.sched_"];
pub const SYSCTL_OTHERS: &[&str] = &[
    "kernel.numa_balancing",
    "kernel.randomize_va_space",
    "kernel.timer_migration",
];
/// Where the lock every changing bakeoff takes lives (root's: only root changes these).
const LOCK: &str = "/run/lock/bakeoff-system-settings.lock";
const JOURNAL_HEAD: &str = "bakeoff system journal 1";

/// One machine-wide setting.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Setting {
    Thp,
    Defrag,
    Smt,
    /// A kernel setting by its sysctl name (`vm.swappiness`).
    Sysctl(String),
}

impl Setting {
    /// The file it is read and written through.
    pub fn path(&self) -> PathBuf {
        match self {
            Setting::Thp => THP_ENABLED.into(),
            Setting::Defrag => THP_DEFRAG.into(),
            Setting::Smt => SMT_CONTROL.into(),
            Setting::Sysctl(n) => sysctl_path(n),
        }
    }

    /// Its name as the experiment file spells it (`thp`, `sysctl vm.swappiness`).
    pub fn label(&self) -> String {
        match self {
            Setting::Thp => "thp".into(),
            Setting::Defrag => "defrag".into(),
            Setting::Smt => "smt".into(),
            Setting::Sysctl(n) => format!("sysctl {n}"),
        }
    }

    /// Its value now: the bracketed mode of a THP file, the words of any other one
    /// joined by one space.
    pub fn read(&self) -> io::Result<String> {
        Ok(normalize(&fs::read_to_string(self.path())?))
    }

    fn from_path(p: &Path) -> Option<Setting> {
        let s = p.to_str()?;
        match s {
            THP_ENABLED => Some(Setting::Thp),
            THP_DEFRAG => Some(Setting::Defrag),
            SMT_CONTROL => Some(Setting::Smt),
            _ => {
                let name = s.strip_prefix("/proc/sys/")?.replace('/', ".");
                sysctl_allowed(&name).then_some(Setting::Sysctl(name))
            }
        }
    }
}

/// `/proc/sys/vm/swappiness` for `vm.swappiness`.
pub fn sysctl_path(name: &str) -> PathBuf {
    Path::new("/proc/sys").join(name.replace('.', "/"))
}

/// Whether a variant may set this kernel setting: a plain dotted name under
/// [`SYSCTL_PREFIXES`] or in [`SYSCTL_OTHERS`].
pub fn sysctl_allowed(name: &str) -> bool {
    let plain = !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
    plain && (SYSCTL_PREFIXES.iter().any(|p| name.starts_with(p)) || SYSCTL_OTHERS.contains(&name))
}

/// A file's value as compared: the bracketed word where there is one (`always [madvise]
/// never`), else its words joined by one space (`4096\t131072` reads `4096 131072`).
pub fn normalize(raw: &str) -> String {
    if let (Some(a), Some(b)) = (raw.find('['), raw.find(']')) {
        if a < b {
            return raw[a + 1..b].to_string();
        }
    }
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a value read back is the one asked for (words compared, spacing aside).
pub fn holds(asked: &str, read: &str) -> bool {
    normalize(asked) == normalize(read)
}

/// A setting and the value a variant asks of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub setting: Setting,
    pub value: String,
}

/// The changes of one variant, in force until restored (on drop at the latest).
pub struct Applied {
    journal: PathBuf,
    originals: Originals,
    _lock: File,
    done: bool,
}

/// Settings with the values found before they changed.
type Originals = Vec<(Setting, String)>;

/// Journals of this process in force, for [`restore_now`].
static LIVE: Mutex<Vec<(PathBuf, Originals)>> = Mutex::new(Vec::new());
static SEQ: AtomicU64 = AtomicU64::new(0);

/// Where journals are kept: `<state>/bakeoff/system` (beside the `made` folder of
/// [`crate::own::state_dir`]), made 0700.
pub fn journal_dir() -> io::Result<PathBuf> {
    let made = crate::own::state_dir()?;
    let dir = made
        .parent()
        .map(|p| p.join("system"))
        .ok_or_else(|| io::Error::other("bakeoff's state folder has no parent"))?;
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    Ok(dir)
}

/// Takes the machine-wide lock, waiting for another bakeoff's window to end.
fn lock() -> io::Result<File> {
    let path = if Path::new("/run/lock").is_dir() {
        PathBuf::from(LOCK)
    } else {
        journal_dir()?.join("lock")
    };
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    // SAFETY: flock on a descriptor we own; blocks until the lock is ours.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// The kernel's start time of a process (field 22 of /proc/PID/stat), to tell it from a
/// later process with the same pid.
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn write_value(path: &Path, value: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(value.as_bytes())
}

/// Why [`apply`] changed nothing: the message names the setting; `bad_value` when the
/// kernel refused the value itself (EINVAL: the user's input), not the write (a
/// read-only file in a container, no permission).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyError {
    pub message: String,
    pub bad_value: bool,
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for ApplyError {
    fn from(message: String) -> Self {
        ApplyError {
            message,
            bad_value: false,
        }
    }
}

/// Applies `changes`: the lock taken, a dead bakeoff's changes put back, the values
/// found journalled (fsynced) before anything is written, then each written. A write
/// the machine refuses puts back what was written and says which setting and why.
pub fn apply(changes: &[Change]) -> Result<Applied, ApplyError> {
    let lock = lock().map_err(|e| format!("could not take bakeoff's system-settings lock: {e}"))?;
    for line in recover_locked() {
        eprintln!("bakeoff: {line}");
    }
    let mut originals = Vec::new();
    for c in changes {
        let v = c.setting.read().map_err(|e| {
            format!(
                "{} cannot be read ({}): {e}",
                c.setting.label(),
                c.setting.path().display()
            )
        })?;
        originals.push((c.setting.clone(), v));
    }
    let dir = journal_dir().map_err(|e| format!("bakeoff's state folder: {e}"))?;
    let pid = std::process::id();
    let name = format!(
        "{pid}-{}-{}.journal",
        start_time(pid).unwrap_or(0),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let journal = dir.join(name);
    let mut text = format!("{JOURNAL_HEAD}\n");
    for (s, v) in &originals {
        text.push_str(&format!("{}\t{v}\n", s.path().display()));
    }
    crate::file::write_atomic(&journal, text.as_bytes())
        .map_err(|e| format!("could not write the journal {}: {e}", journal.display()))?;
    // write_atomic leaves the file's mode to the umask: the journal is bakeoff's alone.
    let _ = fs::set_permissions(
        &journal,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    );
    LIVE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((journal.clone(), originals.clone()));
    let mut applied = Applied {
        journal,
        originals,
        _lock: lock,
        done: false,
    };
    for c in changes {
        if let Err(e) = write_value(&c.setting.path(), &c.value) {
            let bad_value =
                e.raw_os_error() == Some(libc::EINVAL) || e.raw_os_error() == Some(libc::ERANGE);
            let message = if bad_value {
                format!(
                    "the kernel refuses {} = {:?} ({e})",
                    c.setting.label(),
                    c.value
                )
            } else {
                format!(
                    "{} = {:?}: this machine does not allow it ({}: {e})",
                    c.setting.label(),
                    c.value,
                    c.setting.path().display()
                )
            };
            let _ = applied.put_back();
            return Err(ApplyError { message, bad_value });
        }
    }
    Ok(applied)
}

impl Applied {
    /// The settings it changed, with the values found before.
    pub fn originals(&self) -> &[(Setting, String)] {
        &self.originals
    }

    /// Puts every value back and reads it back; the journal is removed only when all hold.
    pub fn restore(mut self) -> Result<(), String> {
        self.put_back()
    }

    fn put_back(&mut self) -> Result<(), String> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        let r = restore_entries(&self.journal, &self.originals);
        LIVE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(j, _)| j != &self.journal);
        r
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        if let Err(m) = self.put_back() {
            eprintln!("bakeoff: {m}");
        }
    }
}

/// Writes the originals back in reverse order, reads each back, and removes the journal
/// when every one holds (else it stays for the next start to try again).
fn restore_entries(journal: &Path, originals: &[(Setting, String)]) -> Result<(), String> {
    let mut failed = Vec::new();
    for (s, v) in originals.iter().rev() {
        let back = write_value(&s.path(), v).and_then(|_| s.read());
        match back {
            Ok(now) if holds(v, &now) => {}
            Ok(now) => failed.push(format!("{} reads {now:?} after writing {v:?}", s.label())),
            Err(e) => failed.push(format!("{} could not be put back to {v:?}: {e}", s.label())),
        }
    }
    if failed.is_empty() {
        let _ = fs::remove_file(journal);
        Ok(())
    } else {
        Err(format!(
            "the machine is not as it was: {}; its journal {} stays, and the next bakeoff tries again",
            failed.join("; "),
            journal.display()
        ))
    }
}

/// On the way out of a signal: puts back every change of this process still in force.
pub fn restore_now() {
    let live: Vec<_> = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|p| p.into_inner()));
    for (journal, originals) in live {
        if let Err(m) = restore_entries(&journal, &originals) {
            eprintln!("bakeoff: {m}");
        }
    }
}

/// A journal's process: (pid, start time) from its name.
fn owner(name: &str) -> Option<(u32, u64)> {
    let stem = name.strip_suffix(".journal")?;
    let mut parts = stem.split('-');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Journals left by bakeoffs that are no longer running.
fn dead_journals() -> Vec<PathBuf> {
    let Some(dir) = crate::own::state_home().map(|p| p.join("system")) else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut dead: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            match owner(&name) {
                Some((pid, start)) => start_time(pid) != Some(start),
                None => false,
            }
        })
        .map(|e| e.path())
        .collect();
    dead.sort();
    dead
}

/// What a journal says to put back: only the settings this module writes.
fn read_journal(path: &Path) -> Vec<(Setting, String)> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    if lines.next() != Some(JOURNAL_HEAD) {
        return Vec::new();
    }
    lines
        .filter_map(|l| {
            let (p, v) = l.split_once('\t')?;
            Some((Setting::from_path(Path::new(p))?, v.to_string()))
        })
        .collect()
}

/// Puts back what bakeoffs killed before they could (a journal whose process is gone):
/// read first thing at every start. One line per setting put back, or why it could not.
pub fn recover() -> Vec<String> {
    if dead_journals().is_empty() {
        return Vec::new();
    }
    match lock() {
        Ok(_held) => recover_locked(),
        Err(e) => vec![format!(
            "a killed bakeoff left machine settings to put back, and the lock could not be taken: {e}"
        )],
    }
}

fn recover_locked() -> Vec<String> {
    let mut said = Vec::new();
    for j in dead_journals() {
        let entries = read_journal(&j);
        let now: Vec<String> = entries
            .iter()
            .map(|(s, _)| s.read().unwrap_or_else(|_| "?".into()))
            .collect();
        match restore_entries(&j, &entries) {
            Ok(()) => {
                for ((s, v), was) in entries.iter().zip(now) {
                    if !holds(v, &was) {
                        said.push(format!(
                            "put back {} = {v} (a killed bakeoff had left {was})",
                            s.label()
                        ));
                    }
                }
                let _ = fs::remove_file(&j);
            }
            Err(m) => said.push(m),
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_compared_by_their_words() {
        assert_eq!(normalize("always [madvise] never\n"), "madvise");
        assert_eq!(normalize("4096\t131072\t6291456\n"), "4096 131072 6291456");
        assert!(holds("4096 131072 6291456", "4096\t131072\t6291456\n"));
        assert!(!holds("10", "60\n"));
    }

    #[test]
    fn only_listed_kernel_settings_are_allowed() {
        assert!(sysctl_allowed("vm.swappiness"));
        assert!(sysctl_allowed("net.core.somaxconn"));
        assert!(sysctl_allowed("kernel.sched_autogroup_enabled"));
        assert!(sysctl_allowed("kernel.numa_balancing"));
        assert!(!sysctl_allowed("kernel.modules_disabled"));
        assert!(!sysctl_allowed("fs.protected_symlinks"));
        assert!(!sysctl_allowed("vm..swappiness"));
        assert!(!sysctl_allowed("vm/../../etc"));
        assert!(!sysctl_allowed("vm.swap piness"));
    }

    #[test]
    fn a_journal_names_only_settings_it_may_write() {
        assert_eq!(
            Setting::from_path(Path::new("/proc/sys/vm/swappiness")),
            Some(Setting::Sysctl("vm.swappiness".into()))
        );
        assert_eq!(
            Setting::from_path(Path::new(THP_ENABLED)),
            Some(Setting::Thp)
        );
        assert_eq!(Setting::from_path(Path::new("/etc/passwd")), None);
        assert_eq!(
            Setting::from_path(Path::new("/proc/sys/kernel/modprobe")),
            None
        );
        assert_eq!(owner("12-345-0.journal"), Some((12, 345)));
        assert_eq!(owner("lock"), None);
    }
}
