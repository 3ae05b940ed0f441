//! Finding and removing stale sandboxes left by an earlier bakeoff run that was killed:
//! a sandbox dir whose owner process is gone has its surviving server killed and is
//! removed. Sandboxes of a live bakeoff process are never touched. Only a sandbox root
//! bakeoff made and marked is looked at ([`crate::claim_root`]), and in it only real
//! folders on the root's own filesystem, with nothing mounted in them, whose record
//! bakeoff wrote itself: its state recorded the folder with the record's id
//! (`Record::is_ours`). A link, a mount, a folder without a record, or one whose record
//! was planted or copied is never removed, whatever its age. A process is signalled only
//! when it still has the start time bakeoff recorded (or, once the leader is gone,
//! started after it in its group) and carries the sandbox's `BAKEOFF_SANDBOX` tag in its
//! environment: a process bakeoff did not start is never signalled.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::meta::Record;
use crate::procfs;

/// How long to wait for a killed stale server to disappear.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// What `reap_stale` did with one stale sandbox dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleReport {
    /// The sandbox dir.
    pub dir: PathBuf,
    /// The owner bakeoff pid from the record (None when the dir had no record).
    pub owner_pid: Option<i32>,
    /// Server processes that were still running and got SIGKILL.
    pub killed: Vec<i32>,
    /// Killed processes still present after the wait (e.g. stuck in the kernel).
    pub survivors: Vec<i32>,
    /// Why the dir could not be removed, if it could not.
    pub remove_error: Option<String>,
}

impl fmt::Display for StaleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.dir.file_name().unwrap_or_default().to_string_lossy();
        match &self.remove_error {
            None => write!(f, "removed stale sandbox {name} (")?,
            Some(e) => write!(
                f,
                "could not remove stale sandbox {} ({e}; remove it by hand; ",
                self.dir.display()
            )?,
        }
        match self.owner_pid {
            Some(pid) => write!(f, "owner pid {pid} gone")?,
            None => write!(f, "no owner record")?,
        }
        if !self.killed.is_empty() {
            write!(f, "; killed server pid {}", join(&self.killed))?;
        }
        if !self.survivors.is_empty() {
            write!(
                f,
                "; pid {} still alive, kill it by hand",
                join(&self.survivors)
            )?;
        }
        write!(f, ")")
    }
}

fn join(pids: &[i32]) -> String {
    pids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Removes every stale sandbox under `root` (see the module doc); returns one report per
/// removed (or unremovable) dir. A missing root, or one bakeoff did not mark as its
/// own, is not an error: nothing to do.
pub fn reap_stale(root: &Path) -> Vec<StaleReport> {
    if !crate::is_our_root(root) {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| bakeoff_os::own::is_plain_subfolder(root, &e.path()))
        .filter_map(|e| reap_one(&e.path()))
        .collect()
}

/// Reaps one dir if it is stale: it holds a record whose owner is gone.
fn reap_one(dir: &Path) -> Option<StaleReport> {
    let record = Record::read(dir)?;
    if !record.is_ours(dir) {
        return None;
    }
    let mut report = StaleReport {
        dir: dir.to_path_buf(),
        owner_pid: Some(record.owner_pid),
        killed: Vec::new(),
        survivors: Vec::new(),
        remove_error: None,
    };
    if record.owner_alive() {
        return None;
    }
    if !record.is_from_other_boot() {
        kill_server(&record, &mut report);
    }
    if let Err(e) = bakeoff_os::own::remove_tree(dir) {
        report.remove_error = Some(e.to_string());
    }
    Some(report)
}

/// Kills what is left of the record's server: the server itself if its pid still has the
/// recorded start time, or members left in its process group once the leader is gone
/// (a group id stays reserved while any member lives, so those are ours).
fn kill_server(r: &Record, report: &mut StaleReport) {
    let (Some(pid), Some(start), Some(tag)) = (r.server_pid, r.server_start, &r.claim_id) else {
        return;
    };
    let pgid = r.server_pgid.unwrap_or(pid);
    let stats = procfs::all_stats();
    let leader_exists = stats.iter().any(|s| s.pid == pgid);
    let me = std::process::id() as i32;
    let candidates: Vec<i32> = if procfs::is_same_process(pid, start) {
        procfs::sandbox_members(&stats, pid, pgid)
            .iter()
            .map(|s| s.pid)
            .collect()
    } else if !leader_exists {
        stats
            .iter()
            .filter(|s| s.pgrp == pgid && s.start_ticks >= start && s.state != 'Z')
            .map(|s| s.pid)
            .collect()
    } else {
        Vec::new()
    };
    // Only what carries this sandbox's tag: bakeoff started it.
    let victims: Vec<i32> = candidates
        .into_iter()
        .filter(|&p| p > 1 && p != me && procfs::has_tag(p, tag))
        .collect();
    if victims.is_empty() {
        return;
    }
    let starts: Vec<(i32, u64)> = stats
        .iter()
        .filter(|s| victims.contains(&s.pid))
        .map(|s| (s.pid, s.start_ticks))
        .collect();
    for &(victim, since) in &starts {
        // Still the process that was checked, not one that took its pid since.
        if procfs::is_same_process(victim, since) {
            // SAFETY: kill has no memory preconditions; a vanished pid fails with ESRCH.
            unsafe { libc::kill(victim, libc::SIGKILL) };
        }
    }
    report.killed = victims;
    report.survivors = wait_gone(&starts, KILL_WAIT);
}

/// Waits until none of `procs` (pid, start time) runs any more; returns those that do.
fn wait_gone(procs: &[(i32, u64)], timeout: Duration) -> Vec<i32> {
    let deadline = Instant::now() + timeout;
    loop {
        let alive: Vec<i32> = procs
            .iter()
            .filter(|(pid, start)| procfs::is_same_process(*pid, *start))
            .map(|(pid, _)| *pid)
            .collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    /// Removes the test root and kills the test's child even when an assert fails.
    struct Guard {
        root: PathBuf,
        child: Option<Child>,
    }
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(c) = self.child.as_mut() {
                let _ = c.kill();
                let _ = c.wait();
            }
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    fn test_root(tag: &str) -> Guard {
        let root = std::env::temp_dir().join(format!("bakeoff-stale-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        crate::claim_root(&root).unwrap();
        Guard { root, child: None }
    }

    /// A test root with a sandbox `<name>-1` whose record names a dead owner and a live
    /// server (a `sleep` in its own group, killed with the guard) whose start time is
    /// recorded `skew` ticks off: the guard, the server's pid and the sandbox's folder.
    fn dead_owners_server(tag: &str, name: &str, skew: u64) -> (Guard, i32, PathBuf) {
        let mut g = test_root(tag);
        let dir = g.root.join(format!("{name}-1"));
        fs::create_dir(&dir).unwrap();
        let id = bakeoff_os::own::register(&dir, bakeoff_os::own::SANDBOX_PURPOSE).unwrap();
        let child = Command::new("sleep")
            .arg("30")
            .env(procfs::SANDBOX_TAG, format!("{id:016x}"))
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        g.child = Some(child);
        let mut r = dead_owner_record(name);
        r.claim_id = Some(format!("{id:016x}"));
        r.server_pid = Some(pid);
        r.server_pgid = Some(pid);
        r.server_start = procfs::start_ticks(pid).map(|s| s + skew);
        r.write(&dir).unwrap();
        (g, pid, dir)
    }

    /// A record whose owner is a process that already exited.
    fn dead_owner_record(name: &str) -> Record {
        let mut c = Command::new("true").spawn().unwrap();
        let dead_pid = c.id() as i32;
        c.wait().unwrap();
        let mut r = Record::for_this_process(name, "memcached");
        r.owner_pid = dead_pid;
        r
    }

    #[test]
    fn kills_server_of_dead_owner_and_removes_dir() {
        let (mut g, pid, dir) = dead_owners_server("dead", "gcc-O2", 0);

        let reports = reap_stale(&g.root);
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].killed, vec![pid]);
        assert!(!dir.exists());
        let line = reports[0].to_string();
        assert!(
            line.starts_with("removed stale sandbox gcc-O2-1 (owner pid"),
            "{line}"
        );
        assert!(line.contains(&format!("killed server pid {pid}")), "{line}");
        let status = g.child.as_mut().unwrap().wait().unwrap();
        assert!(!status.success());
    }

    #[test]
    fn never_kills_a_process_with_other_start_time() {
        let (mut g, _, dir) = dead_owners_server("reused", "x", 1);

        let reports = reap_stale(&g.root);
        assert_eq!(reports.len(), 1);
        assert!(reports[0].killed.is_empty());
        assert!(!dir.exists());
        assert!(g.child.as_mut().unwrap().try_wait().unwrap().is_none());
    }

    /// Makes `path` look `age` old.
    fn age(path: &Path, age: Duration) {
        let t = std::time::SystemTime::now() - age;
        fs::File::open(path).unwrap().set_modified(t).unwrap();
    }

    /// Issue 44, class 1: the cleanup deleted a user's folders (`old-project/`, `notes/`,
    /// `.git/`, `photos/`) when `sandbox_dir` pointed at them. Every spelling of that:
    /// an unmarked folder of a user's files of any age, links and unrecorded folders in
    /// a marked root, a record planted behind a link.
    #[test]
    fn hostile_cleanup_never_removes_a_users_folders() {
        let hour = Duration::from_secs(3600);
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        let names = ["old-project", "notes", ".git", "photos", "data-1", "x-1-1"];
        for n in names {
            fs::create_dir_all(victim.join(n).join("inner")).unwrap();
            fs::write(victim.join(n).join("inner/file"), n).unwrap();
            age(&victim.join(n), 24 * hour);
        }
        // Even a user's folder holding a record-like file is not bakeoff's.
        dead_owner_record("x").write(&victim.join("x-1-1")).unwrap();
        let e = crate::check_root(&victim).unwrap_err();
        assert!(e.contains("did not make"), "{e}");
        assert!(crate::claim_root(&victim).is_err());
        assert!(reap_stale(&victim).is_empty());
        for n in names {
            assert!(
                victim.join(n).join("inner/file").is_file(),
                "{n} was touched"
            );
        }
        assert!(!victim.join(bakeoff_os::own::MARKER).exists());

        // In a root of bakeoff's own: old folders without a record stay, links are never
        // followed, not even to a folder with a stale record.
        let g = test_root("hostile");
        let unrecorded = g.root.join("half-made-1-1");
        fs::create_dir(&unrecorded).unwrap();
        age(&unrecorded, 24 * hour);
        let outside = tmp.path().join("outside");
        fs::create_dir(&outside).unwrap();
        dead_owner_record("o").write(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, g.root.join("link-1-1")).unwrap();
        assert!(reap_stale(&g.root).is_empty());
        assert!(unrecorded.is_dir());
        assert!(outside.join(crate::meta::RECORD_FILE).is_file());
    }

    /// Issue 44, class 1: `/`, system folders and folders on /proc or /sys are refused as
    /// the sandbox folder before anything is looked at.
    #[test]
    fn hostile_sandbox_dir_system_folders_are_refused() {
        for dir in [
            "/",
            "/proc",
            "/proc/self",
            "/sys",
            "/sys/kernel",
            "/etc",
            "/usr",
            "/var/tmp",
            "/tmp",
            "/home",
            "/dev",
            "/root",
            "/proc/new-folder",
        ] {
            let e = crate::check_root(Path::new(dir));
            assert!(e.is_err(), "{dir} accepted");
            assert!(reap_stale(Path::new(dir)).is_empty());
        }
    }

    /// A process in a group of its own whose leader has exited (`sh -c 'sleep &'`): the
    /// group id and the live process's pid. Killed by the returned guard's drop.
    fn orphaned_group() -> (i32, Orphan) {
        let out = Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null 2>&1 & echo $!"])
            .process_group(0)
            .output()
            .unwrap();
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let pgid = procfs::read_stat(pid).unwrap().pgrp;
        assert!(
            procfs::read_stat(pgid).is_none(),
            "the group's leader has exited"
        );
        (pgid, Orphan(pid))
    }

    /// Kills the orphaned process (SIGKILL by pid) when the test ends, however it ends.
    struct Orphan(i32);
    impl Orphan {
        fn alive(&self) -> bool {
            procfs::read_stat(self.0).is_some_and(|s| s.state != 'Z')
        }
    }
    impl Drop for Orphan {
        fn drop(&mut self) {
            // SAFETY: kill has no memory preconditions.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }

    /// A record of a dead owner whose server was the orphaned group's leader.
    fn record_naming(pgid: i32, claim_id: Option<String>) -> Record {
        let mut r = dead_owner_record("x");
        r.server_pid = Some(pgid);
        r.server_pgid = Some(pgid);
        r.server_start = Some(0);
        r.claim_id = claim_id;
        r
    }

    /// Issue 50, class 5: a `.bakeoff-owned` marker and a `sandbox.json` record planted
    /// in a user's folder (a repository can carry both) made the cleanup delete the
    /// folder and SIGKILL the record's process group, an unrelated live process whose
    /// group leader had exited. Every spelling: a planted root marker, a planted record
    /// in a real root (with a made-up id, with the id of a real sandbox copied), a copy
    /// of a real sandbox folder, and a real sandbox whose record names a group bakeoff
    /// did not start. Nothing planted is deleted and no process is signalled.
    #[test]
    fn planted_markers_and_records_are_never_trusted() {
        let (pgid, orphan) = orphaned_group();
        let tmp = tempfile::tempdir().unwrap();
        // A user's folder with a planted root marker and planted sandbox records.
        let victim = tmp.path().join("repo");
        for n in ["x-1-1", "src"] {
            fs::create_dir_all(victim.join(n)).unwrap();
            fs::write(victim.join(n).join("keep"), n).unwrap();
        }
        let marker = format!(
            "bakeoff {}\nid 0123456789abcdef\nThis folder was made by bakeoff; its cleanup removes only what it made here.\n",
            crate::dirs::ROOT_PURPOSE
        );
        for text in [marker.clone(), marker.replace('\n', "\r\n")] {
            fs::write(victim.join(bakeoff_os::own::MARKER), &text).unwrap();
            record_naming(pgid, Some("0123456789abcdef".into()))
                .write(&victim.join("x-1-1"))
                .unwrap();
            assert!(!crate::is_our_root(&victim));
            assert!(reap_stale(&victim).is_empty());
            assert!(crate::claim_root(&victim).is_err());
        }
        // A real root holding planted folders.
        let g = test_root("planted");
        let real = g.root.join("real-1-1");
        fs::create_dir(&real).unwrap();
        let real_id = bakeoff_os::own::register(&real, bakeoff_os::own::SANDBOX_PURPOSE).unwrap();
        let real_tag = format!("{real_id:016x}");
        let mut planted = Vec::new();
        for (i, id) in [
            None,
            Some("0123456789abcdef".to_string()),
            Some(real_tag.clone()),
        ]
        .into_iter()
        .enumerate()
        {
            let dir = g.root.join(format!("planted-{i}-1"));
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join("keep"), "mine").unwrap();
            record_naming(pgid, id).write(&dir).unwrap();
            planted.push(dir);
        }
        // A copy of a real sandbox folder (its record and all).
        let copy = g.root.join("copy-1-1");
        fs::create_dir(&copy).unwrap();
        record_naming(pgid, Some(real_tag.clone()))
            .write(&real)
            .unwrap();
        fs::copy(
            real.join(crate::meta::RECORD_FILE),
            copy.join(crate::meta::RECORD_FILE),
        )
        .unwrap();
        fs::write(copy.join("keep"), "mine").unwrap();
        planted.push(copy);
        let reports = reap_stale(&g.root);
        // Only the real sandbox is bakeoff's: removed, and nothing signalled, since the
        // group it names carries no tag of bakeoff's.
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].dir, real);
        assert!(reports[0].killed.is_empty(), "{reports:?}");
        assert!(!real.exists());
        for dir in &planted {
            assert!(dir.join("keep").is_file(), "{} was removed", dir.display());
        }
        assert!(victim.join("x-1-1/keep").is_file() && victim.join("src/keep").is_file());
        std::thread::sleep(Duration::from_millis(100));
        assert!(orphan.alive(), "an unrelated process was signalled");
    }

    #[test]
    fn leaves_live_owner_and_fresh_unrecorded_dirs_alone() {
        let g = test_root("live");
        let mine = g.root.join("mine-1");
        fs::create_dir(&mine).unwrap();
        Record::for_this_process("mine", "memcached")
            .write(&mine)
            .unwrap();
        let fresh = g.root.join("fresh-1");
        fs::create_dir(&fresh).unwrap();
        assert!(reap_stale(&g.root).is_empty());
        assert!(mine.exists() && fresh.exists());
        assert!(reap_stale(&g.root.join("missing")).is_empty());
    }
}
