//! A variant's system settings in its runs (`[[variant]] preload`, `thp`, `defrag`,
//! `sysctl`, `cpus`, `smt`, `env`): what the machine must allow, checked before anything
//! runs (root, the control files, a value the kernel takes); the machine-wide ones applied
//! before each of the variant's runs and put back after it (`bakeoff_os::system`, which
//! journals them first); and what the server ran with, read back at the measured window's
//! edges: the allocator mapped in its process, the CPUs it may run on, each machine
//! setting. A setting that did not hold makes the run invalid, with why.

use crate::error::RunError;
use bakeoff_os::cpus::CpuSet;
use bakeoff_os::system::{Applied, Change, Setting};
use bakeoff_plan::system::{preload_library, ALLOCATORS};
use bakeoff_plan::{key, Loaded, Variant};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a variant asks of the machine and of its server's process.
#[derive(Debug, Clone, Default)]
pub struct SystemAsk {
    /// The library preloaded into the server.
    pub preload: Option<PathBuf>,
    /// The CPUs its server runs on, over `[plan] cpus`.
    pub cpus: Option<CpuSet>,
    /// Machine-wide settings for its runs.
    pub changes: Vec<Change>,
    /// The server's own environment (`env`).
    pub env: Vec<(String, String)>,
    /// Why its runs cannot be made as asked (the library went away since the check).
    pub problem: Option<String>,
}

impl SystemAsk {
    pub fn of(l: &Loaded, v: &Variant) -> SystemAsk {
        let mut problem = None;
        let preload = v
            .preload
            .as_ref()
            .and_then(|p| match preload_library(p, |p| l.resolve(p)) {
                Ok(lib) => Some(lib),
                Err(m) => {
                    problem = Some(m);
                    None
                }
            });
        let changes = v.machine_changes();
        if problem.is_none() {
            problem = changes.iter().find_map(unwritable);
        }
        SystemAsk {
            preload,
            cpus: v.cpus.as_deref().and_then(|c| CpuSet::parse(c).ok()),
            changes,
            env: v.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            problem,
        }
    }

    /// The environment its server starts with: `env`, then `LD_PRELOAD`.
    pub fn server_env(&self) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        if let Some(p) = &self.preload {
            env.push(("LD_PRELOAD".into(), p.display().to_string()));
        }
        env
    }

    /// Applies its machine-wide settings (None when it has none); Err: why its run
    /// cannot be made (the machine does not allow one), nothing left changed.
    pub fn apply(&self) -> Result<Option<Applied>, String> {
        if let Some(p) = &self.problem {
            return Err(p.clone());
        }
        if self.changes.is_empty() {
            return Ok(None);
        }
        bakeoff_os::system::apply(&self.changes)
            .map(Some)
            .map_err(|e| e.message)
    }

    /// What the server with `pid` runs with now, as `system_applied` records it, and what
    /// did not hold, one phrase each.
    pub fn read_back(&self, pid: u32) -> (BTreeMap<String, String>, Vec<String>) {
        let mut got = BTreeMap::new();
        let mut wrong = Vec::new();
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        let mapped = allocators_mapped(&maps);
        got.insert(
            "allocator".into(),
            if mapped.is_empty() {
                "glibc".into()
            } else {
                mapped.join(", ")
            },
        );
        if let Some(lib) = &self.preload {
            let here = maps
                .lines()
                .any(|line| line.split_whitespace().nth(5) == Some(&*lib.to_string_lossy()));
            if here {
                got.insert("preload".into(), lib.display().to_string());
            } else {
                got.insert("preload".into(), "not mapped".into());
                wrong.push(format!(
                    "preload {} is not mapped in the server",
                    lib.display()
                ));
            }
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(str::trim)
            .unwrap_or("");
        if let Some(asked) = &self.cpus {
            got.insert("cpus".into(), allowed.to_string());
            if CpuSet::parse(allowed).ok().as_ref() != Some(asked) {
                wrong.push(format!(
                    "cpus: the server may run on {allowed:?}, not {asked}"
                ));
            }
        }
        for c in &self.changes {
            let now = c
                .setting
                .read()
                .unwrap_or_else(|e| format!("unreadable: {e}"));
            if !bakeoff_os::system::holds(&c.value, &now) {
                wrong.push(format!(
                    "{} read {now:?}, not {:?}",
                    c.setting.label(),
                    c.value
                ));
            }
            got.insert(c.setting.label(), now);
        }
        (got, wrong)
    }
}

/// Why this machine does not let a setting be written (a read-only /sys or /proc/sys in
/// a container, no permission), asked of the kernel without writing.
fn unwritable(c: &Change) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let path = c.setting.path();
    let cpath = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid NUL-terminated path; access(2) only reads it.
    if unsafe { libc::access(cpath.as_ptr(), libc::W_OK) } == 0 {
        return None;
    }
    Some(format!(
        "{} = {:?}: this machine does not allow it ({}: {})",
        c.setting.label(),
        c.value,
        path.display(),
        std::io::Error::last_os_error()
    ))
}

/// The allocators of [`ALLOCATORS`] mapped in a process, by name, from its maps.
fn allocators_mapped(maps: &str) -> Vec<String> {
    let mut out: Vec<String> = ALLOCATORS
        .iter()
        .filter(|(_, file, _)| {
            let stem = file.split(".so").next().unwrap_or(file);
            maps.lines().any(|l| {
                l.split_whitespace().nth(5).is_some_and(|p| {
                    p.rsplit('/')
                        .next()
                        .is_some_and(|f| f.starts_with(stem) && f[stem.len()..].starts_with(".so"))
                })
            })
        })
        .map(|(n, _, _)| n.to_string())
        .collect();
    out.dedup();
    out
}

/// The checks that need the machine, before anything runs: root for machine-wide
/// settings, their files present (SMT's control supported), `cpus` among the CPUs this
/// process may use, and each kernel setting's value one the kernel takes (written,
/// read back and put back at once, journalled like a run's).
pub fn check(l: &Loaded) -> Result<(), RunError> {
    let bad =
        |at: &[bakeoff_plan::Key], m: String| RunError::BadInput(l.error_at(at, m).to_string());
    for (i, v) in l.experiment.variants.iter().enumerate() {
        if let Some(c) = &v.cpus {
            let asked = CpuSet::parse(c).map_err(|m| bad(&key!["variant", i, "cpus"], m))?;
            if let Ok(allowed) = CpuSet::allowed() {
                if !asked.without(&allowed).is_empty() {
                    return Err(bad(
                        &key!["variant", i, "cpus"],
                        format!("cpus {c:?} names CPUs this machine does not let bakeoff use (it may use {allowed})"),
                    ));
                }
            }
        }
        let changes = v.machine_changes();
        let Some(first) = changes.first() else {
            continue;
        };
        let at = |s: &Setting| -> Vec<bakeoff_plan::Key> {
            let k = match s {
                Setting::Thp => "thp",
                Setting::Defrag => "defrag",
                Setting::Smt => "smt",
                Setting::Sysctl(_) => "sysctl",
            };
            key!["variant", i, k].to_vec()
        };
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        if uid != 0 {
            return Err(bad(
                &at(&first.setting),
                format!(
                    "variant {:?} sets {}, which only root may change (bakeoff runs as uid {uid}); run it as root or remove the setting",
                    v.name,
                    first.setting.label()
                ),
            ));
        }
        for c in &changes {
            let path = c.setting.path();
            let now = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(_) => {
                    return Err(bad(
                        &at(&c.setting),
                        format!(
                            "{} cannot be set on this machine: {} does not exist",
                            c.setting.label(),
                            path.display()
                        ),
                    ))
                }
            };
            if c.setting == Setting::Smt && !["on", "off", "forceoff"].contains(&now.trim()) {
                return Err(bad(
                    &at(&c.setting),
                    format!(
                        "smt cannot be set on this machine: {} reads {:?}; remove smt",
                        path.display(),
                        now.trim()
                    ),
                ));
            }
        }
        let sysctls: Vec<Change> = changes
            .iter()
            .filter(|c| matches!(c.setting, Setting::Sysctl(_)))
            .cloned()
            .collect();
        for c in sysctls {
            trial(&c).map_err(|m| bad(&at(&c.setting), m))?;
        }
    }
    Ok(())
}

/// `check`'s line on what the variants change on the machine, when any does: each
/// variant's machine-wide settings, and where the journal is kept.
pub fn check_line(l: &Loaded) -> Option<String> {
    let asks: Vec<String> = l
        .experiment
        .variants
        .iter()
        .filter_map(|v| {
            let c = v.machine_changes();
            (!c.is_empty()).then(|| {
                let set: Vec<String> = c
                    .iter()
                    .map(|c| format!("{} = {}", c.setting.label(), c.value))
                    .collect();
                format!("{} sets {}", v.name, set.join(", "))
            })
        })
        .collect();
    if asks.is_empty() {
        return None;
    }
    let journal = bakeoff_os::own::state_home()
        .map(|p| p.join("system").display().to_string())
        .unwrap_or_else(|| "bakeoff's state folder".into());
    Some(format!(
        "system: {}, for its runs only; the values found are journalled in {journal} first and put back after each run",
        asks.join("; ")
    ))
}

/// Writes one kernel setting, reads it back and puts it back: Err when the kernel refuses
/// the value or reads another back (bad input). A machine that refuses the write itself
/// (read-only /proc/sys) is not bad input: that variant fails at its runs with why.
fn trial(c: &Change) -> Result<(), String> {
    match bakeoff_os::system::apply(std::slice::from_ref(c)) {
        Ok(applied) => {
            let now = c.setting.read().unwrap_or_default();
            applied.restore()?;
            if bakeoff_os::system::holds(&c.value, &now) {
                Ok(())
            } else {
                Err(format!(
                    "the kernel took {} = {:?} but reads back {now:?}; give a value it keeps",
                    c.setting.label(),
                    c.value
                ))
            }
        }
        Err(e) if e.bad_value => Err(format!("{}; give a value it takes", e.message)),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocators_are_read_from_maps() {
        let maps = "7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n\
                    7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n";
        assert_eq!(allocators_mapped(maps), vec!["jemalloc".to_string()]);
        let maps = "7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.10\n";
        assert_eq!(allocators_mapped(maps), vec!["tcmalloc".to_string()]);
        assert!(allocators_mapped("7f00-7f01 r-xp 0 08:01 2 /usr/lib/libc.so.6\n").is_empty());
    }
}
