use super::*;
use std::process::Command;

/// A fixture tree: files written under a root, links made inside it.
struct Tree(tempfile::TempDir);

impl Tree {
    fn new() -> Tree {
        Tree(tempfile::tempdir().unwrap())
    }

    fn root(&self) -> &Path {
        self.0.path()
    }

    fn file(&self, path: &str, text: &str) -> &Tree {
        let p = self.root().join(path.trim_start_matches('/'));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
        self
    }

    fn dir(&self, path: &str) -> &Tree {
        fs::create_dir_all(self.root().join(path.trim_start_matches('/'))).unwrap();
        self
    }

    /// `link` pointing at `target`, both paths inside the tree.
    fn link(&self, link: &str, target: &str) -> &Tree {
        let l = self.root().join(link.trim_start_matches('/'));
        fs::create_dir_all(l.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(self.root().join(target.trim_start_matches('/')), l).unwrap();
        self
    }

    /// `n` online CPUs, each with its package and core, L1d/L1i/L2 per core and one L3
    /// per package.
    fn cpus(&self, n: usize, package: impl Fn(usize) -> usize, core: impl Fn(usize) -> usize) {
        self.file("/sys/devices/system/cpu/online", &format!("0-{}\n", n - 1));
        for c in 0..n {
            let base = format!("/sys/devices/system/cpu/cpu{c}");
            self.file(
                &format!("{base}/topology/physical_package_id"),
                &format!("{}\n", package(c)),
            );
            self.file(
                &format!("{base}/topology/core_id"),
                &format!("{}\n", core(c)),
            );
            let siblings: Vec<String> = (0..n)
                .filter(|o| package(*o) == package(c) && core(*o) == core(c))
                .map(|o| o.to_string())
                .collect();
            let in_package: Vec<String> = (0..n)
                .filter(|o| package(*o) == package(c))
                .map(|o| o.to_string())
                .collect();
            for (i, level, kind, size, shared) in [
                (0, "1", "Data", "48K", siblings.join(",")),
                (1, "1", "Instruction", "32K", siblings.join(",")),
                (2, "2", "Unified", "2048K", siblings.join(",")),
                (3, "3", "Unified", "30M", in_package.join(",")),
            ] {
                let d = format!("{base}/cache/index{i}");
                self.file(&format!("{d}/level"), &format!("{level}\n"));
                self.file(&format!("{d}/type"), &format!("{kind}\n"));
                self.file(&format!("{d}/size"), &format!("{size}\n"));
                self.file(&format!("{d}/shared_cpu_list"), &format!("{shared}\n"));
            }
        }
    }

    /// The files every Linux machine has.
    fn basics(&self, flags: &str) {
        self.file(
            "/proc/cpuinfo",
            &format!(
                "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU @ 2.00GHz\nflags\t\t: {flags}\n\nprocessor\t: 1\nmodel name\t: Test CPU @ 2.00GHz\n"
            ),
        );
        self.file(
            "/proc/meminfo",
            "MemTotal:       16384000 kB\nMemFree:         1000 kB\n",
        );
        self.file("/proc/sys/kernel/osrelease", "6.1.0-test-amd64\n");
        self.file(
            "/etc/os-release",
            "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
        );
        self.file(
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "always [madvise] never\n",
        );
        self.file(
            "/sys/kernel/mm/transparent_hugepage/defrag",
            "always defer defer+madvise [madvise] never\n",
        );
    }

    /// A whole disk's folder in sysfs.
    fn disk(&self, dir: &str, model: Option<&str>, rotational: bool, scheduler: &str) {
        if let Some(m) = model {
            self.file(&format!("{dir}/device/model"), &format!("{m}   \n"));
        }
        self.file(
            &format!("{dir}/queue/rotational"),
            if rotational { "1\n" } else { "0\n" },
        );
        self.file(&format!("{dir}/queue/scheduler"), scheduler);
        self.file(&format!("{dir}/size"), "7814037168\n");
    }
}

#[test]
fn a_vm_without_cpufreq_has_no_governor_and_says_its_hypervisor_flag() {
    let t = Tree::new();
    t.basics("fpu sse2 hypervisor avx2");
    t.cpus(2, |_| 0, |c| c);
    t.file("/sys/devices/system/node/node0/cpulist", "0-1\n");
    t.file(
        "/proc/self/mountinfo",
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,errors=remount-ro\n",
    );
    let vda = "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda";
    t.disk(vda, None, true, "none [mq-deadline] kyber bfq\n");
    t.link("/sys/dev/block/254:0", vda);
    let m = collect_under(t.root(), Path::new("/var/tmp/bakeoff"), Some((254, 0)));
    assert_eq!(m.cpu_model.as_deref(), Some("Test CPU @ 2.00GHz"));
    assert_eq!(m.hypervisor, Some(true));
    assert_eq!(m.governor, None);
    assert_eq!(m.cpufreq_driver, None);
    assert_eq!(m.vm, None, "nothing names the hypervisor: not guessed");
    assert_eq!(m.system, None);
    assert_eq!((m.sockets, m.cores, m.threads), (Some(1), Some(2), Some(2)));
    assert_eq!(m.threads_per_core, Some(1));
    let caches: Vec<(String, u64, Option<usize>)> = m
        .caches
        .iter()
        .map(|c| (c.name(), c.bytes, c.instances))
        .collect();
    assert_eq!(
        caches,
        vec![
            ("L1d".into(), 48 << 10, Some(2)),
            ("L1i".into(), 32 << 10, Some(2)),
            ("L2".into(), 2 << 20, Some(2)),
            ("L3".into(), 30 << 20, Some(1)),
        ]
    );
    assert_eq!(m.memory_bytes, Some(16384000 * 1024));
    assert_eq!(m.numa.len(), 1);
    assert_eq!(m.kernel.as_deref(), Some("6.1.0-test-amd64"));
    assert_eq!(m.os.as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
    assert_eq!(m.thp_enabled.as_deref(), Some("madvise"));
    assert_eq!(m.thp_defrag.as_deref(), Some("madvise"));
    assert_eq!(m.filesystem.as_deref(), Some("ext4"));
    assert_eq!(m.mount_point.as_deref(), Some("/"));
    assert_eq!(m.mount_source.as_deref(), Some("/dev/vda"));
    assert_eq!(
        m.mount_options.as_deref(),
        Some("rw,relatime,discard,errors=remount-ro")
    );
    assert_eq!(m.block_device.as_deref(), Some("vda"));
    assert_eq!(
        m.disks,
        vec![Disk {
            name: "vda".into(),
            model: None,
            rotational: Some(true),
            scheduler: Some("mq-deadline".into()),
            size_bytes: Some(7814037168 * 512),
        }]
    );
}

#[test]
fn bare_metal_a_rotational_disk_behind_a_partition() {
    let t = Tree::new();
    t.basics("fpu sse2 avx2");
    t.cpus(4, |_| 0, |c| c % 2);
    for c in 0..4 {
        t.file(
            &format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"),
            "performance\n",
        );
        t.file(
            &format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_driver"),
            "intel_pstate\n",
        );
    }
    t.file("/sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
    t.file("/sys/class/dmi/id/product_name", "PowerEdge R740\n");
    // /data on sda2 under / on sda1: the longer mount point wins.
    t.file(
        "/proc/self/mountinfo",
        "27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n40 27 8:2 / /data rw,noatime shared:5 - xfs /dev/sda2 rw,attr2,inode64,noquota\n",
    );
    let sda = "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
    t.disk(sda, Some("ST4000NM0035-1V4"), true, "[bfq] none\n");
    t.file(&format!("{sda}/sda1/partition"), "1\n");
    t.file(&format!("{sda}/sda2/partition"), "2\n");
    t.link("/sys/dev/block/8:1", &format!("{sda}/sda1"));
    t.link("/sys/dev/block/8:2", &format!("{sda}/sda2"));
    // No device number known: the mount's own is used.
    let m = collect_under(t.root(), Path::new("/data/bakeoff"), None);
    assert_eq!(m.hypervisor, Some(false));
    assert_eq!(m.governor.as_deref(), Some("performance"));
    assert_eq!(m.cpufreq_driver.as_deref(), Some("intel_pstate"));
    assert_eq!(m.system.as_deref(), Some("Dell Inc. PowerEdge R740"));
    assert_eq!((m.sockets, m.cores, m.threads), (Some(1), Some(2), Some(4)));
    assert_eq!(m.threads_per_core, Some(2));
    assert_eq!(m.filesystem.as_deref(), Some("xfs"));
    assert_eq!(m.mount_point.as_deref(), Some("/data"));
    assert_eq!(
        m.mount_options.as_deref(),
        Some("rw,noatime,attr2,inode64,noquota")
    );
    assert_eq!(m.block_device.as_deref(), Some("sda2"));
    assert_eq!(m.disks.len(), 1);
    let d = &m.disks[0];
    assert_eq!(d.name, "sda");
    assert_eq!(d.model.as_deref(), Some("ST4000NM0035-1V4"));
    assert_eq!(d.rotational, Some(true));
    assert_eq!(d.scheduler.as_deref(), Some("bfq"));
}

#[test]
fn numa_two_nodes_with_their_cpus_and_memory() {
    let t = Tree::new();
    t.basics("fpu");
    // 2 packages of 2 cores of 2 threads: cpu c is in package c/4, core (c%4)/2.
    t.cpus(8, |c| c / 4, |c| (c % 4) / 2);
    for (n, cpus) in [(0, "0-3"), (1, "4-7")] {
        t.file(
            &format!("/sys/devices/system/node/node{n}/cpulist"),
            &format!("{cpus}\n"),
        );
        t.file(
            &format!("/sys/devices/system/node/node{n}/meminfo"),
            &format!("Node {n} MemTotal:        8192000 kB\nNode {n} MemFree:  1 kB\n"),
        );
    }
    t.file("/sys/devices/system/node/online", "0-1\n");
    let m = collect_under(t.root(), Path::new("/"), None);
    assert_eq!((m.sockets, m.cores, m.threads), (Some(2), Some(4), Some(8)));
    assert_eq!(m.threads_per_core, Some(2));
    assert_eq!(
        m.numa,
        vec![
            NumaNode {
                node: 0,
                cpus: "0-3".into(),
                memory_bytes: Some(8192000 * 1024),
            },
            NumaNode {
                node: 1,
                cpus: "4-7".into(),
                memory_bytes: Some(8192000 * 1024),
            },
        ]
    );
    // One L3 per package; L2 per core.
    let l3 = m.caches.iter().find(|c| c.name() == "L3").unwrap();
    assert_eq!(l3.instances, Some(2));
    let l2 = m.caches.iter().find(|c| c.name() == "L2").unwrap();
    assert_eq!(l2.instances, Some(4));
    // No mountinfo: no filesystem, no disk.
    assert_eq!((m.filesystem, m.block_device), (None, None));
    assert!(m.disks.is_empty());
}

/// LVM on a RAID1 of two partitions: the whole stack, and both disks.
fn device_mapper_tree() -> Tree {
    let t = Tree::new();
    t.basics("fpu");
    let dm = "/sys/devices/virtual/block/dm-0";
    let md = "/sys/devices/virtual/block/md0";
    let sda = "/sys/devices/pci0000:00/ata1/block/sda";
    let nvme = "/sys/devices/pci0000:00/nvme/nvme0/nvme0n1";
    t.file(&format!("{dm}/dm/name"), "vg0-root\n");
    t.file(&format!("{md}/md/level"), "raid1\n");
    t.disk(sda, Some("Samsung SSD 860"), false, "[mq-deadline] none\n");
    t.disk(
        nvme,
        Some("INTEL SSDPE2KX040T8"),
        false,
        "[none] mq-deadline\n",
    );
    t.file(&format!("{sda}/sda1/partition"), "1\n");
    t.file(&format!("{nvme}/nvme0n1p1/partition"), "1\n");
    t.link(&format!("{dm}/slaves/md0"), md);
    t.link(&format!("{md}/slaves/sda1"), &format!("{sda}/sda1"));
    t.link(
        &format!("{md}/slaves/nvme0n1p1"),
        &format!("{nvme}/nvme0n1p1"),
    );
    t.link("/sys/dev/block/253:0", dm);
    t.link("/sys/class/block/dm-0", dm);
    t.dir("/dev/mapper");
    std::os::unix::fs::symlink("../dm-0", t.root().join("dev/mapper/vg0-root")).unwrap();
    t
}

#[test]
fn device_mapper_on_md_on_two_partitions() {
    let t = device_mapper_tree();
    t.file(
        "/proc/self/mountinfo",
        "27 1 253:0 / / rw,relatime - ext4 /dev/mapper/vg0-root rw,stripe=32\n",
    );
    let m = collect_under(t.root(), Path::new("/var/lib/bakeoff"), Some((253, 0)));
    assert_eq!(
        m.block_device.as_deref(),
        Some("dm-0 (vg0-root) on md0 (raid1) on nvme0n1p1 + sda1")
    );
    type Seen<'a> = (&'a str, Option<&'a str>, Option<bool>, Option<&'a str>);
    let disks: Vec<Seen> = m
        .disks
        .iter()
        .map(|d| {
            (
                d.name.as_str(),
                d.model.as_deref(),
                d.rotational,
                d.scheduler.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        disks,
        vec![
            (
                "nvme0n1",
                Some("INTEL SSDPE2KX040T8"),
                Some(false),
                Some("none")
            ),
            (
                "sda",
                Some("Samsung SSD 860"),
                Some(false),
                Some("mq-deadline")
            ),
        ]
    );
}

#[test]
fn a_device_number_that_names_no_block_device_falls_back_to_the_mount_source() {
    // btrfs and overlay report an anonymous device (0:N); its source still names one.
    let t = device_mapper_tree();
    t.file(
        "/proc/self/mountinfo",
        "27 1 0:33 / / rw,relatime - btrfs /dev/mapper/vg0-root rw,ssd,space_cache=v2\n",
    );
    let m = collect_under(t.root(), Path::new("/srv"), Some((0, 33)));
    assert_eq!(m.filesystem.as_deref(), Some("btrfs"));
    assert!(m
        .block_device
        .as_deref()
        .is_some_and(|b| b.starts_with("dm-0 (vg0-root) on md0")));
    assert_eq!(m.disks.len(), 2);
}

#[test]
fn an_empty_tree_says_nothing() {
    let t = Tree::new();
    let m = collect_under(t.root(), Path::new("/x"), None);
    assert_eq!(
        m,
        Machine {
            data_dir: Some("/x".into()),
            ..Machine::default()
        }
    );
    let json = serde_json::to_string(&Machine::default()).unwrap();
    assert_eq!(json, "{}");
}

#[test]
fn settings_and_lists_parse_as_sysfs_writes_them() {
    assert_eq!(chosen("always [madvise] never").as_deref(), Some("madvise"));
    assert_eq!(chosen("none").as_deref(), Some("none"));
    assert_eq!(chosen("a b"), None);
    assert_eq!(cpu_list("0-2,5,7-8"), vec![0, 1, 2, 5, 7, 8]);
    assert_eq!(size_bytes("48K"), Some(48 << 10));
    assert_eq!(size_bytes("30M"), Some(30 << 20));
    assert_eq!(size_bytes("12Q"), None);
    let mi = "1 0 8:1 / /a\\040b rw - ext4 /dev/x rw\n";
    assert_eq!(
        mount_of(Path::new("/a b/c"), mi).map(|m| m.point),
        Some(PathBuf::from("/a b"))
    );
}

/// A program's output, trimmed; None when it is not installed or fails.
fn said(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn this_machine_agrees_with_nproc_meminfo_findmnt_and_lsblk() {
    let dir = std::env::temp_dir();
    let m = collect(&dir);
    let threads = m.threads.expect("online CPUs read");
    let nproc: usize = said("nproc", &[]).unwrap().parse().unwrap();
    // nproc counts the CPUs this process may use: at most the online ones.
    assert!(nproc <= threads, "nproc {nproc} > {threads} online");
    if let Some(online) = said("getconf", &["_NPROCESSORS_ONLN"]) {
        assert_eq!(online.parse::<usize>().unwrap(), threads);
    }
    let cores = m.cores.expect("topology read");
    let tpc = m.threads_per_core.unwrap();
    assert!(cores <= threads && cores * tpc >= threads);
    assert!(m.sockets.unwrap() >= 1 && m.sockets.unwrap() <= cores);
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert_eq!(m.memory_bytes, Some(kb * 1024));
    assert_eq!(m.kernel, said("uname", &["-r"]));
    assert!(m.caches.iter().any(|c| c.level == 1), "{:?}", m.caches);
    let real = fs::canonicalize(&dir).unwrap();
    if let Some(f) = said(
        "findmnt",
        &[
            "-n",
            "-o",
            "FSTYPE,TARGET,SOURCE,OPTIONS",
            "-T",
            real.to_str().unwrap(),
        ],
    ) {
        let w: Vec<&str> = f.split_whitespace().collect();
        assert_eq!(m.filesystem.as_deref(), Some(w[0]));
        assert_eq!(m.mount_point.as_deref(), Some(w[1]));
        // findmnt shows a bind mount's source as "dev[/path]": the device part.
        let source = w[2].split('[').next().unwrap();
        assert_eq!(m.mount_source.as_deref(), Some(source));
        let ours: BTreeSet<&str> = m.mount_options.as_deref().unwrap().split(',').collect();
        let theirs: BTreeSet<&str> = w[3].split(',').collect();
        assert_eq!(ours, theirs);
        // stat's device is the one the disk was found from.
        let stat = said("stat", &["-c", "%d", real.to_str().unwrap()]).unwrap();
        let (a, b) = device_of(&real).unwrap();
        assert_eq!(stat.parse::<u64>().unwrap(), libc::makedev(a, b));
        if source.starts_with("/dev/") {
            let disks = said("lsblk", &["-nsro", "NAME,TYPE,ROTA", source]);
            if let Some(disks) = disks {
                let want: BTreeSet<(String, bool)> = disks
                    .lines()
                    .map(|l| l.split_whitespace().collect::<Vec<_>>())
                    .filter(|w| w.len() == 3 && w[1] == "disk")
                    .map(|w| (w[0].to_string(), w[2] == "1"))
                    .collect();
                let got: BTreeSet<(String, bool)> = m
                    .disks
                    .iter()
                    .map(|d| (d.name.clone(), d.rotational.unwrap()))
                    .collect();
                assert_eq!(got, want, "lsblk -s {source}: {disks}");
            }
        }
    }
}
