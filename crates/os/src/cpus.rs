//! CPU sets: lists as `taskset -c` takes them (`0-3,8,10-11`), the CPUs this process may
//! run on, pinning a thread or a whole process, and the default split of a machine
//! between a server and its load (whole cores on each side, never two hyperthreads of one
//! core on both).

use std::collections::BTreeMap;
use std::fmt;
use std::io;

/// The most CPUs a set may name (glibc's `cpu_set_t`).
pub const MAX_CPUS: usize = 1024;

/// Machines with fewer CPUs than this keep server and load unpinned by default: on 2 or 4
/// CPUs a split would leave one side a single CPU.
pub const SPLIT_FROM: usize = 8;

/// A set of CPU numbers, kept sorted and without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    /// Parses a CPU list: numbers and ranges separated by commas (`0-3,8`), each below
    /// [`MAX_CPUS`]. The message says what is wrong with it.
    pub fn parse(text: &str) -> Result<CpuSet, String> {
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!(
                    "{text:?} is not a CPU list: write CPU numbers and ranges separated by commas, as taskset -c takes them (\"0-3,8\")"
                ));
            }
            let number = |s: &str| -> Result<usize, String> {
                let n: usize = s.trim().parse().map_err(|_| {
                    format!("{s:?} in {text:?} is not a CPU number (write \"0-3,8\")")
                })?;
                if n >= MAX_CPUS {
                    return Err(format!(
                        "CPU {n} in {text:?} is past the last CPU a set can name ({})",
                        MAX_CPUS - 1
                    ));
                }
                Ok(n)
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (number(a)?, number(b)?);
                    if a > b {
                        return Err(format!(
                            "the range {part:?} in {text:?} runs backwards; write {b}-{a}"
                        ));
                    }
                    cpus.extend(a..=b);
                }
                None => cpus.push(number(part)?),
            }
        }
        Ok(CpuSet::from_iter(cpus))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }

    pub fn contains(&self, cpu: usize) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    /// The CPUs of `self` that are not in `other`.
    pub fn without(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.iter().filter(|c| !other.contains(*c)).collect())
    }

    /// The CPUs the calling thread may run on (its affinity mask).
    pub fn allowed() -> io::Result<CpuSet> {
        // SAFETY: a zeroed cpu_set_t is a valid empty set, and sched_getaffinity writes at
        // most its size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(CpuSet(
                (0..MAX_CPUS)
                    .filter(|&c| libc::CPU_ISSET(c, &set))
                    .collect(),
            ))
        }
    }

    /// The set as the kernel takes it; build it before a fork, use it after.
    pub fn to_mask(&self) -> libc::cpu_set_t {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; every CPU is below MAX_CPUS.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in self.iter() {
                libc::CPU_SET(c, &mut set);
            }
            set
        }
    }

    /// Pins task `tid` (0: the calling thread) to this set.
    pub fn pin(&self, tid: libc::pid_t) -> io::Result<()> {
        pin_mask(tid, &self.to_mask())
    }

    /// Pins every thread of this process to this set; threads made later inherit it.
    pub fn pin_process(&self) -> io::Result<()> {
        let mask = self.to_mask();
        for entry in std::fs::read_dir("/proc/self/task")? {
            let Ok(tid) = entry?.file_name().to_string_lossy().parse::<libc::pid_t>() else {
                continue;
            };
            match pin_mask(tid, &mask) {
                // A thread that ended since the listing.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                other => other?,
            }
        }
        Ok(())
    }
}

/// `sched_setaffinity(tid, mask)`: async-signal-safe, so a forked child may call it.
pub fn pin_mask(tid: libc::pid_t, mask: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: mask is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), mask) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> CpuSet {
        let mut v: Vec<usize> = iter.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        CpuSet(v)
    }
}

impl fmt::Display for CpuSet {
    /// The shortest list: runs of three or more as ranges (`0-3,8,10,11`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            match j - i {
                0 => parts.push(self.0[i].to_string()),
                1 => parts.extend([self.0[i].to_string(), self.0[j].to_string()]),
                _ => parts.push(format!("{}-{}", self.0[i], self.0[j])),
            }
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// Which physical core (package, core id) a CPU belongs to; None where sysfs does not say.
fn core_of(cpu: usize) -> Option<(u32, u32)> {
    let read = |what: &str| -> Option<u32> {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some((read("physical_package_id")?, read("core_id")?))
}

/// The default split of `allowed` between a server and its load: None below
/// [`SPLIT_FROM`] CPUs; else whole cores, in (package, core) order, the first half
/// (rounded up) to the server and the rest to the load.
pub fn split(allowed: &CpuSet) -> Option<(CpuSet, CpuSet)> {
    split_by(allowed, core_of)
}

/// CPUs the load may keep busy when nothing pinned it: half of those this process may
/// run on (the server has the other half), at least one. Every kind's thread rule
/// (`bakeoff_engine::event_loops_for`, `bakeoff_sqlclient::driver::client_threads_for`)
/// takes this when the run was not placed on CPUs of its own.
pub fn unpinned_load_cpus() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus / 2).max(1)
}

fn split_by(
    allowed: &CpuSet,
    core_of: impl Fn(usize) -> Option<(u32, u32)>,
) -> Option<(CpuSet, CpuSet)> {
    if allowed.len() < SPLIT_FROM {
        return None;
    }
    // CPUs sysfs says nothing of count as cores of their own.
    let mut cores: BTreeMap<(u32, u32, usize), Vec<usize>> = BTreeMap::new();
    for c in allowed.iter() {
        let key = match core_of(c) {
            Some((p, k)) => (p, k, usize::MAX),
            None => (u32::MAX, u32::MAX, c),
        };
        cores.entry(key).or_default().push(c);
    }
    if cores.len() < 2 {
        return None;
    }
    let half = cores.len().div_ceil(2);
    let server = cores.values().take(half).flatten().copied().collect();
    let load = cores.values().skip(half).flatten().copied().collect();
    Some((server, load))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unpinned_load_has_at_least_one_cpu() {
        assert!(unpinned_load_cpus() >= 1);
    }

    #[test]
    fn lists_parse_as_taskset_takes_them() {
        assert_eq!(
            CpuSet::parse("0-3,8").unwrap().iter().collect::<Vec<_>>(),
            [0, 1, 2, 3, 8]
        );
        assert_eq!(CpuSet::parse(" 5 , 1-2 ,2").unwrap().to_string(), "1,2,5");
        assert_eq!(
            CpuSet::parse("0-7,9,10-12").unwrap().to_string(),
            "0-7,9-12"
        );
        for bad in ["", "1,", "a", "3-1", "1-", "-1", "0-4096", "1024"] {
            let e = CpuSet::parse(bad).expect_err(bad);
            assert!(
                e.contains(&format!("{bad:?}")) || e.contains("CPU"),
                "{bad}: {e}"
            );
        }
        assert!(CpuSet::parse("3-1").unwrap_err().contains("write 1-3"));
    }

    #[test]
    fn sets_subtract_and_show_short() {
        let all = CpuSet::parse("0-15").unwrap();
        let load = CpuSet::parse("8-15").unwrap();
        assert_eq!(all.without(&load).to_string(), "0-7");
        assert_eq!(CpuSet::parse("16").unwrap().without(&all).to_string(), "16");
        assert!(CpuSet::default().is_empty());
    }

    #[test]
    fn the_split_keeps_hyperthreads_of_a_core_together() {
        // 16 CPUs, 8 cores with siblings n and n+8 (the usual Linux numbering).
        let all = CpuSet::parse("0-15").unwrap();
        let (server, load) = split_by(&all, |c| Some((0, (c % 8) as u32))).unwrap();
        assert_eq!(server.to_string(), "0-3,8-11");
        assert_eq!(load.to_string(), "4-7,12-15");
        // Two packages of 4 cores, no SMT: the server gets the first package.
        let (server, load) = split_by(&CpuSet::parse("0-7").unwrap(), |c| {
            Some(((c / 4) as u32, (c % 4) as u32))
        })
        .unwrap();
        assert_eq!(
            (server.to_string(), load.to_string()),
            ("0-3".into(), "4-7".into())
        );
        // Unknown topology: each CPU a core.
        let (server, load) = split_by(&CpuSet::parse("0-8").unwrap(), |_| None).unwrap();
        assert_eq!((server.len(), load.len()), (5, 4));
    }

    #[test]
    fn small_machines_are_not_split() {
        assert!(split_by(&CpuSet::parse("0-1").unwrap(), |_| None).is_none());
        assert!(split_by(&CpuSet::parse("0-6").unwrap(), |_| None).is_none());
        // 8 CPUs that are one core's hyperthreads cannot be split by core.
        assert!(split_by(&CpuSet::parse("0-7").unwrap(), |_| Some((0, 0))).is_none());
    }

    #[test]
    fn this_thread_may_run_somewhere_and_can_be_pinned_there() {
        let allowed = CpuSet::allowed().unwrap();
        assert!(!allowed.is_empty());
        let first: CpuSet = allowed.iter().take(1).collect();
        std::thread::spawn(move || {
            first.pin(0).unwrap();
            assert_eq!(CpuSet::allowed().unwrap(), first);
        })
        .join()
        .unwrap();
    }
}
