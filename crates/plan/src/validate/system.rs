//! The checks of a variant's system settings that the file and the installed libraries
//! answer: `preload` an allocator bakeoff knows or a shared library, `thp`/`defrag`/`smt`
//! values, `sysctl` names on the allowed list, `cpus` a CPU list, `env` without the
//! dynamic loader's variables, machine-wide settings only with `--allow-system-changes`,
//! and none of them for a server on another host. What needs the machine (root, the
//! control files, a value the kernel takes) is the runner's check.

use crate::experiment::{Experiment, Loaded, Variant};
use crate::key;
use crate::located::Check;
use crate::system::{preload_library, sysctl_flat, system_changes_allowed};
use bakeoff_os::system::{
    sysctl_allowed, Setting, DEFRAG_MODES, SYSCTL_OTHERS, SYSCTL_PREFIXES, THP_MODES,
};

pub(crate) fn check(l: &Loaded, e: &Experiment, i: usize, v: &Variant) -> Check {
    check_env(l, i, v)?;
    for (k, value, allowed) in [
        ("thp", &v.thp, THP_MODES),
        ("defrag", &v.defrag, DEFRAG_MODES),
        ("smt", &v.smt, &["on", "off"][..]),
    ] {
        if let Some(x) = value {
            if !allowed.contains(&x.as_str()) {
                return Err(l.error_at(
                    &key!["variant", i, k],
                    format!("{k} {x:?} is not one of {}", allowed.join(", ")),
                ));
            }
        }
    }
    for (name, value) in sysctl_flat(&v.sysctl) {
        if !sysctl_allowed(&name) {
            return Err(l.error_at(
                &key!["variant", i, "sysctl"],
                format!(
                    "sysctl {name:?} is not one a variant may set: only names under {} and {}",
                    SYSCTL_PREFIXES.join(", "),
                    SYSCTL_OTHERS.join(", ")
                ),
            ));
        }
        if value.trim().is_empty() || value.contains(['\n', '\r', '\0']) {
            return Err(l.error_at(
                &key!["variant", i, "sysctl"],
                format!("sysctl {name} = {value:?}: give one line, a number or words"),
            ));
        }
    }
    if let Some(c) = &v.cpus {
        bakeoff_os::cpus::CpuSet::parse(c)
            .map_err(|m| l.error_at(&key!["variant", i, "cpus"], m))?;
    }
    let asks_any = v.asks_system();
    if let Some(host) = v
        .host
        .as_ref()
        .or(e.target.host.as_ref())
        .filter(|_| asks_any)
    {
        return Err(l.error_at(
            &key!["variant", i],
            format!("variant {:?} runs on host {host}, and preload, thp, defrag, sysctl, cpus and smt apply on this machine only; remove them or the host", v.name),
        ));
    }
    if let Some(p) = &v.preload {
        if v.run_under.is_some() || e.plan.mode.counts_instructions() {
            return Err(l.error_at(
                &key!["variant", i, "preload"],
                "preload and valgrind both replace the server's malloc; remove preload or run_under (or mode = \"instructions\"/\"both\")",
            ));
        }
        preload_library(p, |p| l.resolve(p))
            .map_err(|m| l.error_at(&key!["variant", i, "preload"], m))?;
    }
    if let Some(c) = v
        .machine_changes()
        .first()
        .filter(|_| !system_changes_allowed())
    {
        let k = match &c.setting {
            Setting::Sysctl(_) => "sysctl",
            Setting::Thp => "thp",
            Setting::Defrag => "defrag",
            Setting::Smt => "smt",
        };
        return Err(l.error_at(
            &key!["variant", i, k],
            format!(
                "variant {:?} sets {} = {}, which changes the whole machine; pass --allow-system-changes to let bakeoff set it for this variant's runs (and put it back after each)",
                v.name,
                c.setting.label(),
                c.value
            ),
        ));
    }
    Ok(())
}

/// `env`: names a shell could export, not the dynamic loader's (`LD_*`: `preload` is the
/// way) and not bakeoff's own (`BAKEOFF_*` tags its servers).
fn check_env(l: &Loaded, i: usize, v: &Variant) -> Check {
    for (name, value) in &v.env {
        let plain = name
            .bytes()
            .enumerate()
            .all(|(j, b)| b == b'_' || b.is_ascii_alphabetic() || (j > 0 && b.is_ascii_digit()));
        let why = if name.is_empty() || !plain {
            Some(format!(
                "env name {name:?} must be letters, digits and '_', not starting with a digit"
            ))
        } else if name.starts_with("LD_") {
            Some(format!("env {name}: the dynamic loader's variables are not set through env; use preload = \"jemalloc\" (or tcmalloc, mimalloc, a library's path) for an allocator"))
        } else if name.starts_with("BAKEOFF_") {
            Some(format!("env {name}: BAKEOFF_* variables are bakeoff's own (they tag its servers); rename it"))
        } else if value.contains('\0') {
            Some(format!("env {name}: a value cannot hold a NUL character"))
        } else {
            None
        };
        if let Some(m) = why {
            return Err(l.error_at(&key!["variant", i, "env", name.clone()], m));
        }
    }
    Ok(())
}
