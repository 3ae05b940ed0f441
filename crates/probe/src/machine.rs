//! The machine a run was measured on, as the studies describe theirs: CPU model, sockets,
//! cores and threads, caches, memory and NUMA nodes, the disks behind the folder that
//! holds the data (through partitions, device-mapper and md), that folder's filesystem
//! and mount options, kernel, OS, the CPU frequency governor, transparent huge pages and
//! virtualization. Read from /proc and /sys only (and `systemd-detect-virt` where it is
//! installed), once per host.
//!
//! Every fact is optional: what cannot be read is absent, never guessed (a VM without
//! cpufreq has no governor; a disk without a model file has no model).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One machine's facts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    /// `model name` of /proc/cpuinfo's first processor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// CPU packages (distinct `physical_package_id`s of the online CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<usize>,
    /// Physical cores (distinct package and `core_id` pairs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
    /// Online logical CPUs (hardware threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Hardware threads of the largest core (2 with SMT on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_per_core: Option<usize>,
    /// cpu0's caches, L1d first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<Cache>,
    /// MemTotal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// NUMA nodes (none listed: the kernel shows none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa: Vec<NumaNode>,
    /// The folder the facts of disk and filesystem are about (where the sandboxes and
    /// data directories live).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// The filesystem holding it: type, mount point, source and options (the mount's
    /// and the superblock's, as findmnt shows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// The block device the filesystem is on and what it is made of, top down
    /// ("dm-0 (vg0-root) on sda2").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_device: Option<String>,
    /// The whole disks under it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<Disk>,
    /// /proc/sys/kernel/osrelease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// /etc/os-release's PRETTY_NAME.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The online CPUs' scaling governors, distinct ones joined ("performance"); absent
    /// without cpufreq (most VMs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// The cpufreq driver (intel_pstate, acpi-cpufreq, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpufreq_driver: Option<String>,
    /// Transparent huge pages: the chosen `enabled` and `defrag` settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp_enabled: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp_defrag: Option<String>,
    /// The `hypervisor` CPU flag (absent where /proc/cpuinfo lists no flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<bool>,
    /// The virtual machine (`systemd-detect-virt --vm`, else /sys/hypervisor/type):
    /// "kvm", "xen", "none", ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<String>,
    /// The container (`systemd-detect-virt --container`): "docker", "lxc", "none", ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The DMI system vendor and product ("QEMU Standard PC (Q35 + ICH9, 2009)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// One cache of cpu0.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Cache {
    pub level: u8,
    /// "data", "instruction" or "unified".
    pub kind: String,
    /// The size of one instance.
    pub bytes: u64,
    /// How many instances the online CPUs share out (distinct `shared_cpu_list`s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<usize>,
}

impl Cache {
    /// Its usual name: L1d, L1i, L2, L3.
    pub fn name(&self) -> String {
        match self.kind.as_str() {
            "data" => format!("L{}d", self.level),
            "instruction" => format!("L{}i", self.level),
            _ => format!("L{}", self.level),
        }
    }
}

/// One whole disk behind the data folder.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Disk {
    /// The kernel's name ("sda", "nvme0n1", "vda").
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// queue/rotational: true for a spinning disk (and for many virtual ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// The chosen I/O scheduler ("none", "mq-deadline", "bfq").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
}

/// One NUMA node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NumaNode {
    pub node: usize,
    /// Its CPUs as a list ("0-15,32-47").
    pub cpus: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

impl Machine {
    /// True when nothing was read (results from before these facts).
    pub fn is_empty(&self) -> bool {
        *self == Machine::default()
    }
}

/// This machine's facts, its disk and filesystem those of `dir` (or of its nearest
/// existing parent).
pub fn collect(dir: &Path) -> Machine {
    let mut at = dir.to_path_buf();
    while !at.exists() {
        match at.parent() {
            Some(p) => at = p.to_path_buf(),
            None => break,
        }
    }
    let real = fs::canonicalize(&at).unwrap_or(at);
    let mut m = collect_under(Path::new("/"), &real, device_of(&real));
    m.data_dir = Some(dir.display().to_string());
    let detect = |what: &str| {
        let out = std::process::Command::new("systemd-detect-virt")
            .arg(what)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        // It says "none" with exit status 1: still an answer.
        let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!said.is_empty()).then_some(said)
    };
    if let Some(vm) = detect("--vm") {
        m.vm = Some(vm);
    }
    m.container = detect("--container");
    m
}

/// The facts under `root` (a copy of /proc, /sys and /etc, for tests: "/" is this
/// machine), the disk and filesystem those of `dir` as a path under it, on device `dev`
/// (major, minor) when known, else on the device its mount names. Runs nothing.
pub fn collect_under(root: &Path, dir: &Path, dev: Option<(u32, u32)>) -> Machine {
    let at = |p: &str| root.join(p.trim_start_matches('/'));
    let read = |p: &str| read_trim(&at(p));
    let mut m = Machine {
        data_dir: Some(dir.display().to_string()),
        ..Machine::default()
    };
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    m.cpu_model = cpuinfo_field(&cpuinfo, "model name");
    m.hypervisor =
        cpuinfo_field(&cpuinfo, "flags").map(|f| f.split_whitespace().any(|x| x == "hypervisor"));
    cpus(&at("/sys/devices/system/cpu"), &cpuinfo, &mut m);
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    m.memory_bytes = meminfo_kb(&meminfo, "MemTotal:").map(|k| k * 1024);
    m.numa = numa(&at("/sys/devices/system/node"));
    m.kernel = read("/proc/sys/kernel/osrelease");
    m.os = read("/etc/os-release")
        .or_else(|| read("/usr/lib/os-release"))
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|s| s.trim().trim_matches('"').to_string())
        })
        .filter(|s| !s.is_empty());
    m.thp_enabled = read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|s| chosen(&s));
    m.thp_defrag = read("/sys/kernel/mm/transparent_hugepage/defrag").and_then(|s| chosen(&s));
    m.vm = read("/sys/hypervisor/type");
    let vendor = read("/sys/class/dmi/id/sys_vendor");
    let product = read("/sys/class/dmi/id/product_name");
    m.system = match (vendor, product) {
        (Some(v), Some(p)) => Some(format!("{v} {p}")),
        (v, p) => v.or(p),
    };
    if let Some(mountinfo) = read("/proc/self/mountinfo") {
        if let Some(mount) = mount_of(dir, &mountinfo) {
            m.filesystem = Some(mount.fs_type.clone());
            m.mount_point = Some(mount.point.display().to_string());
            m.mount_source = Some(mount.source.clone());
            m.mount_options = Some(mount.options.clone());
            let block = dev
                .and_then(|(a, b)| fs::canonicalize(at(&format!("/sys/dev/block/{a}:{b}"))).ok())
                .or_else(|| {
                    let (a, b) = mount.dev;
                    fs::canonicalize(at(&format!("/sys/dev/block/{a}:{b}"))).ok()
                })
                .or_else(|| by_source(root, &mount.source));
            if let Some(block) = block {
                let mut whole = Vec::new();
                m.block_device = Some(stack(&block, &mut whole, 0));
                let mut seen = BTreeSet::new();
                for w in whole {
                    if seen.insert(w.clone()) {
                        m.disks.push(disk(&w));
                    }
                }
            }
        }
    }
    m
}

/// The device number of the filesystem `path` is on.
fn device_of(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let dev = fs::metadata(path).ok()?.dev();
    Some((libc::major(dev), libc::minor(dev)))
}

fn read_trim(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// The first `key : value` line of /proc/cpuinfo with this key.
fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn meminfo_kb(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        // /proc/meminfo: "MemTotal: N kB"; a node's: "Node 0 MemTotal: N kB".
        while let Some(x) = w.next() {
            if x == key {
                return w.next()?.parse().ok();
            }
        }
        None
    })
}

/// The bracketed choice of a sysfs setting ("always [madvise] never" is madvise); a lone
/// word is itself.
fn chosen(s: &str) -> Option<String> {
    if let Some((_, rest)) = s.split_once('[') {
        return rest.split_once(']').map(|(c, _)| c.to_string());
    }
    let mut w = s.split_whitespace();
    match (w.next(), w.next()) {
        (Some(one), None) => Some(one.to_string()),
        _ => None,
    }
}

/// A CPU list ("0-3,8") as its members.
fn cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// "48K", "2048K", "32M" in bytes.
fn size_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits.parse().ok()?;
    let mult = match unit.trim() {
        "" => 1,
        "K" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    Some(n * mult)
}

/// Threads, cores, sockets, caches and governors from the cpu folder of sysfs.
fn cpus(dir: &Path, cpuinfo: &str, m: &mut Machine) {
    let mut online = read_trim(&dir.join("online"))
        .map(|s| cpu_list(&s))
        .unwrap_or_default();
    if online.is_empty() {
        // No sysfs: count /proc/cpuinfo's processors.
        let n = cpuinfo
            .lines()
            .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
            .count();
        online = (0..n).collect();
    }
    if !online.is_empty() {
        m.threads = Some(online.len());
    }
    let mut cores: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut packages = BTreeSet::new();
    let mut governors = BTreeSet::new();
    let mut shared: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for cpu in &online {
        let c = dir.join(format!("cpu{cpu}"));
        let pkg = read_trim(&c.join("topology/physical_package_id"));
        let core = read_trim(&c.join("topology/core_id"));
        if let (Some(p), Some(k)) = (pkg, core) {
            packages.insert(p.clone());
            *cores.entry((p, k)).or_default() += 1;
        }
        if let Some(g) = read_trim(&c.join("cpufreq/scaling_governor")) {
            governors.insert(g);
        }
        for index in sorted_dir(&c.join("cache")) {
            if let Some(list) = read_trim(&index.join("shared_cpu_list")) {
                let name = index.file_name().unwrap_or_default().to_string_lossy();
                shared.entry(name.into_owned()).or_default().insert(list);
            }
        }
    }
    if !cores.is_empty() {
        m.sockets = Some(packages.len());
        m.cores = Some(cores.len());
        m.threads_per_core = cores.values().max().copied();
    }
    if !governors.is_empty() {
        m.governor = Some(governors.into_iter().collect::<Vec<_>>().join(", "));
    }
    let first = online.first().copied().unwrap_or(0);
    let c0 = dir.join(format!("cpu{first}"));
    m.cpufreq_driver = read_trim(&c0.join("cpufreq/scaling_driver"));
    for index in sorted_dir(&c0.join("cache")) {
        let level = read_trim(&index.join("level")).and_then(|s| s.parse::<u8>().ok());
        let kind = read_trim(&index.join("type")).map(|s| s.to_lowercase());
        let bytes = read_trim(&index.join("size")).and_then(|s| size_bytes(&s));
        if let (Some(level), Some(kind), Some(bytes)) = (level, kind, bytes) {
            let name = index.file_name().unwrap_or_default().to_string_lossy();
            m.caches.push(Cache {
                level,
                kind,
                bytes,
                instances: shared.get(name.as_ref()).map(|s| s.len()),
            });
        }
    }
    m.caches
        .sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
}

/// A folder's entries, sorted by name (none when it cannot be read).
fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn numa(dir: &Path) -> Vec<NumaNode> {
    let mut out: Vec<NumaNode> = sorted_dir(dir)
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let node: usize = name.strip_prefix("node")?.parse().ok()?;
            Some(NumaNode {
                node,
                cpus: read_trim(&p.join("cpulist")).unwrap_or_default(),
                memory_bytes: read_trim(&p.join("meminfo"))
                    .and_then(|t| meminfo_kb(&t, "MemTotal:"))
                    .map(|k| k * 1024),
            })
        })
        .collect();
    out.sort_by_key(|n| n.node);
    out
}

/// One mount of /proc/self/mountinfo.
struct Mount {
    point: PathBuf,
    dev: (u32, u32),
    fs_type: String,
    source: String,
    /// The mount's options, then the superblock's not already said.
    options: String,
}

/// The mount holding `path`: the longest mount point containing it (the later line when
/// two are stacked).
fn mount_of(path: &Path, mountinfo: &str) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for line in mountinfo.lines() {
        let Some((head, tail)) = line.split_once(" - ") else {
            continue;
        };
        let h: Vec<&str> = head.split(' ').collect();
        let t: Vec<&str> = tail.split(' ').collect();
        if h.len() < 6 || t.is_empty() {
            continue;
        }
        let point = PathBuf::from(bakeoff_os::file::unescape_mountinfo(h[4]));
        if !path.starts_with(&point) {
            continue;
        }
        let dev = h[2]
            .split_once(':')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .unwrap_or((0, 0));
        let mut options: Vec<&str> = h[5].split(',').collect();
        for o in t.get(2).map_or("", |s| s).split(',') {
            if !o.is_empty() && !options.contains(&o) {
                options.push(o);
            }
        }
        let longer = best
            .as_ref()
            .is_none_or(|b| point.as_os_str().len() >= b.point.as_os_str().len());
        if longer {
            best = Some(Mount {
                point,
                dev,
                fs_type: t[0].to_string(),
                source: bakeoff_os::file::unescape_mountinfo(t.get(1).copied().unwrap_or("")),
                options: options.join(","),
            });
        }
    }
    best
}

/// The sysfs folder of a mount source such as /dev/sda1 or /dev/mapper/vg-root (a link
/// to ../dm-0), when the device number led nowhere (btrfs, overlay).
fn by_source(root: &Path, source: &str) -> Option<PathBuf> {
    let rel = source.strip_prefix("/dev/")?;
    let node = root.join("dev").join(rel);
    let name = match fs::read_link(&node) {
        Ok(target) => target.file_name()?.to_string_lossy().into_owned(),
        Err(_) => node.file_name()?.to_string_lossy().into_owned(),
    };
    fs::canonicalize(root.join("sys/class/block").join(name)).ok()
}

/// What a block device is made of, top down ("dm-0 (vg0-root) on md0 (raid1) on sda1 +
/// sdb1"); the whole disks at the bottom go to `whole`.
fn stack(dev: &Path, whole: &mut Vec<PathBuf>, depth: usize) -> String {
    let name = dev
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let mut label = name;
    if let Some(dm) = read_trim(&dev.join("dm/name")) {
        label = format!("{label} ({dm})");
    } else if let Some(level) = read_trim(&dev.join("md/level")) {
        label = format!("{label} ({level})");
    }
    let slaves: Vec<PathBuf> = sorted_dir(&dev.join("slaves"))
        .into_iter()
        .filter_map(|s| fs::canonicalize(s).ok())
        .collect();
    if !slaves.is_empty() && depth < 8 {
        let under: Vec<String> = slaves.iter().map(|s| stack(s, whole, depth + 1)).collect();
        return format!("{label} on {}", under.join(" + "));
    }
    if dev.join("partition").exists() {
        if let Some(parent) = dev.parent() {
            whole.push(parent.to_path_buf());
        }
    } else {
        whole.push(dev.to_path_buf());
    }
    label
}

fn disk(dev: &Path) -> Disk {
    Disk {
        name: dev
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        model: read_trim(&dev.join("device/model")),
        rotational: read_trim(&dev.join("queue/rotational")).map(|s| s == "1"),
        scheduler: read_trim(&dev.join("queue/scheduler")).and_then(|s| chosen(&s)),
        size_bytes: read_trim(&dev.join("size"))
            .and_then(|s| s.parse::<u64>().ok())
            .map(|sectors| sectors * 512),
    }
}

#[cfg(test)]
mod tests;
