//! The machine table: one column per machine of the experiment (this one, then each
//! `[[host]]` by name with its roles), one row per fact, so two machines read across.
//! Any number of hosts are columns; a row none of them has a fact for is left out, and a
//! fact one machine lacks is "-" (never guessed).

use crate::document::{Block, Media, Section};
use crate::model::{Host, HostRecord, Machine, Results};
use crate::table::{Table, Value};

/// The section, when some machine's facts were read (results from before the machine
/// table show the host line of the intro only). With other hosts, the terminal shows a
/// line per machine.
pub fn section(r: &Results) -> Option<Section> {
    let t = table(r)?;
    let mut s = Section::new("machines", "Machines", "Machines").with(Block::Table(t));
    if !r.hosts.is_empty() {
        let (names, machines) = columns(r);
        let lines = names
            .iter()
            .zip(&machines)
            .map(|(n, m)| Block::text(format!("{n}: {}", short(m))))
            .collect();
        s.push(Block::Only(Media::TERMINAL, lines));
    }
    Some(s)
}

/// A machine in one line: CPU, cores and threads, memory, L3, the data folder's
/// filesystem and disks, kernel.
fn short(m: &Machine) -> String {
    let mut parts = Vec::new();
    parts.extend(m.cpu_model.clone());
    match (m.cores, m.threads) {
        (Some(c), Some(t)) => parts.push(format!("{c} cores/{t} threads")),
        (None, Some(t)) => parts.push(format!("{t} threads")),
        _ => {}
    }
    parts.extend(m.memory_bytes.map(binary));
    if let Some(l3) = m.caches.iter().find(|c| c.level == 3) {
        parts.push(format!("L3 {}", binary(l3.bytes)));
    }
    if let Some(f) = &m.filesystem {
        let on: Vec<String> = m
            .disks
            .iter()
            .map(|d| match d.rotational {
                Some(true) => format!("{} rotational", d.name),
                Some(false) => format!("{} non-rotational", d.name),
                None => d.name.clone(),
            })
            .collect();
        if on.is_empty() {
            parts.push(f.clone());
        } else {
            parts.push(format!("{f} on {}", on.join(" + ")));
        }
    }
    parts.extend(m.kernel.as_ref().map(|k| format!("kernel {k}")));
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// The columns: their names and machines, this one first.
fn columns(r: &Results) -> (Vec<String>, Vec<Machine>) {
    let mut names = vec![if r.host.hostname.is_empty() {
        "this machine".to_string()
    } else {
        format!("this machine ({})", r.host.hostname)
    }];
    let mut machines = vec![here(&r.host)];
    for h in &r.hosts {
        names.push(if h.roles.is_empty() {
            h.name.clone()
        } else {
            format!("{} ({})", h.name, h.roles.join(", "))
        });
        machines.push(there(h));
    }
    (names, machines)
}

/// This machine's column: its facts, the older `host` fields filling what they say.
fn here(h: &Host) -> Machine {
    let mut m = h.machine.clone();
    let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
    m.cpu_model = m.cpu_model.or_else(|| text(&h.cpu_model));
    m.memory_bytes = m
        .memory_bytes
        .or_else(|| (h.memory_bytes > 0).then_some(h.memory_bytes));
    m.kernel = m.kernel.or_else(|| text(&h.kernel));
    m.os = m.os.or_else(|| text(&h.os));
    m.filesystem = m.filesystem.or_else(|| h.sandbox_fs.clone());
    m.data_dir = m.data_dir.or_else(|| h.sandbox_dir.clone());
    m
}

/// Another host's column, the same way.
fn there(h: &HostRecord) -> Machine {
    let mut m = h.machine.clone();
    let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
    m.cpu_model = m.cpu_model.or_else(|| text(&h.cpu_model));
    m.kernel = m.kernel.or_else(|| text(&h.kernel));
    m
}

/// Bytes in binary units, as the machine's own tools say them (48 KiB, 2 MiB, 31.2 GiB).
pub fn binary(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if x.fract() == 0.0 || u == 0 {
        format!("{x:.0} {}", UNITS[u])
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// A row: its label, whether its text may wrap, and the fact of one machine.
type Fact = (&'static str, bool, fn(&Machine) -> Option<String>);

const BEFORE_CACHES: &[Fact] = &[
    ("CPU", false, |m| m.cpu_model.clone()),
    ("sockets", false, |m| m.sockets.map(|n| n.to_string())),
    ("cores", false, |m| m.cores.map(|n| n.to_string())),
    ("threads", false, |m| {
        m.threads.map(|n| match m.threads_per_core {
            Some(p) => format!("{n} ({p} per core)"),
            None => n.to_string(),
        })
    }),
];

const AFTER_CACHES: &[Fact] = &[
    ("memory", false, |m| m.memory_bytes.map(binary)),
    ("NUMA nodes", true, numa),
    ("data folder", false, |m| m.data_dir.clone()),
    ("filesystem", false, |m| {
        m.filesystem.as_ref().map(|f| {
            let mut s = f.clone();
            if let Some(p) = &m.mount_point {
                s.push_str(&format!(" on {p}"));
            }
            if let Some(src) = &m.mount_source {
                s.push_str(&format!(" ({src})"));
            }
            s
        })
    }),
    ("mount options", true, |m| m.mount_options.clone()),
    ("block device", true, |m| m.block_device.clone()),
    ("disks", true, disks),
    ("kernel", false, |m| m.kernel.clone()),
    ("OS", false, |m| m.os.clone()),
    ("CPU governor", false, |m| {
        m.governor.as_ref().map(|g| match &m.cpufreq_driver {
            Some(d) => format!("{g} ({d})"),
            None => g.clone(),
        })
    }),
    ("transparent huge pages", false, |m| {
        match (&m.thp_enabled, &m.thp_defrag) {
            (Some(e), Some(d)) => Some(format!("{e} (defrag {d})")),
            (Some(e), None) => Some(e.clone()),
            (None, Some(d)) => Some(format!("defrag {d}")),
            (None, None) => None,
        }
    }),
    ("virtualization", false, virtualization),
    ("system", false, |m| m.system.clone()),
];

fn numa(m: &Machine) -> Option<String> {
    if m.numa.is_empty() {
        return None;
    }
    let nodes: Vec<String> = m
        .numa
        .iter()
        .map(|n| match n.memory_bytes {
            Some(b) => format!("node{} CPUs {} {}", n.node, n.cpus, binary(b)),
            None => format!("node{} CPUs {}", n.node, n.cpus),
        })
        .collect();
    Some(format!("{}: {}", m.numa.len(), nodes.join("; ")))
}

fn disks(m: &Machine) -> Option<String> {
    if m.disks.is_empty() {
        return None;
    }
    let each: Vec<String> = m
        .disks
        .iter()
        .map(|d| {
            let mut about = Vec::new();
            if let Some(r) = d.rotational {
                about.push(if r { "rotational" } else { "non-rotational" }.to_string());
            }
            if let Some(s) = &d.scheduler {
                about.push(format!("scheduler {s}"));
            }
            if let Some(b) = d.size_bytes {
                about.push(binary(b));
            }
            let name = match &d.model {
                Some(model) => format!("{} {model}", d.name),
                None => d.name.clone(),
            };
            if about.is_empty() {
                name
            } else {
                format!("{name} ({})", about.join(", "))
            }
        })
        .collect();
    Some(each.join("; "))
}

/// What runs the machine: the VM and the container, else whether the CPU says it is
/// virtual at all.
fn virtualization(m: &Machine) -> Option<String> {
    let named = |v: &Option<String>| v.clone().filter(|x| x != "none");
    let mut parts = Vec::new();
    if let Some(vm) = named(&m.vm) {
        parts.push(format!("VM: {vm}"));
    }
    if let Some(c) = named(&m.container) {
        parts.push(format!("container: {c}"));
    }
    if !parts.is_empty() {
        return Some(parts.join(", "));
    }
    match (m.hypervisor, m.vm.as_deref()) {
        (Some(true), _) => Some("VM (hypervisor CPU flag)".into()),
        (_, Some("none")) | (Some(false), _) => Some("none".into()),
        _ => None,
    }
}

/// The table: a column per machine, a row per fact any of them has.
pub fn table(r: &Results) -> Option<Table> {
    let read = !r.host.machine.is_empty() || r.hosts.iter().any(|h| !h.machine.is_empty());
    if !read {
        return None;
    }
    let (names, machines) = columns(r);
    let mut columns = vec!["fact"];
    columns.extend(names.iter().map(String::as_str));
    let mut t = Table::new("machines", &columns).note(
        "One column per machine: this one, then each `[[host]]` with its roles. Disks and filesystem are those of the folder that held the sandboxes and data directories there (the block device top down to the whole disks); caches are one CPU's, ×N the instances the machine has. A fact that could not be read is \"-\": no cpufreq (most VMs) leaves no governor.",
    );
    let push = |t: &mut Table, label: String, wraps: bool, values: Vec<Option<String>>| {
        if values.iter().all(Option::is_none) {
            return;
        }
        let mut row: Vec<Value> = vec![label.into()];
        row.extend(values.into_iter().map(|v| {
            let v = v.unwrap_or_else(|| "-".into());
            if wraps {
                Value::Long(v)
            } else {
                Value::Text(v)
            }
        }));
        t.push(row);
    };
    for (label, wraps, f) in BEFORE_CACHES {
        push(
            &mut t,
            label.to_string(),
            *wraps,
            machines.iter().map(f).collect(),
        );
    }
    // Every cache any machine has, in level order: L1d, L1i, L2, L3.
    let mut caches: Vec<(u8, String, String)> = machines
        .iter()
        .flat_map(|m| m.caches.iter().map(|c| (c.level, c.kind.clone(), c.name())))
        .collect();
    caches.sort();
    caches.dedup();
    for (_, _, name) in caches {
        let values = machines
            .iter()
            .map(|m| {
                m.caches
                    .iter()
                    .find(|c| c.name() == name)
                    .map(|c| match c.instances {
                        Some(n) if n > 1 => format!("{} ×{n}", binary(c.bytes)),
                        _ => binary(c.bytes),
                    })
            })
            .collect();
        push(&mut t, format!("{name} cache"), false, values);
    }
    for (label, wraps, f) in AFTER_CACHES {
        push(
            &mut t,
            label.to_string(),
            *wraps,
            machines.iter().map(f).collect(),
        );
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units_as_the_tools_say_them() {
        assert_eq!(binary(48 << 10), "48 KiB");
        assert_eq!(binary(2 << 20), "2 MiB");
        assert_eq!(binary(25_276_510_208), "23.5 GiB");
        assert_eq!(binary(512), "512 B");
    }

    #[test]
    fn virtualization_says_what_it_knows_and_nothing_else() {
        let mut m = Machine::default();
        assert_eq!(virtualization(&m), None);
        m.hypervisor = Some(false);
        assert_eq!(virtualization(&m).as_deref(), Some("none"));
        m.hypervisor = Some(true);
        assert_eq!(
            virtualization(&m).as_deref(),
            Some("VM (hypervisor CPU flag)")
        );
        m.vm = Some("kvm".into());
        m.container = Some("docker".into());
        assert_eq!(
            virtualization(&m).as_deref(),
            Some("VM: kvm, container: docker")
        );
    }

    #[test]
    fn results_from_before_the_machine_table_have_none() {
        assert!(table(&crate::tests::sample()).is_none());
    }
}
