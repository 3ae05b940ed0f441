//! The live sandboxes of this process (server pid and process group, until reaped), the
//! process-wide cancel flag, and signalling a whole sandbox (group plus descendants).
//!
//! A sandbox stays registered until its server has been reaped, and its server is reaped
//! only after it left this list: while listed, the (possibly zombie) server holds
//! its pid and so its process group id, which therefore cannot name an unrelated group.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::procfs;

/// One registered server.
#[derive(Debug, Clone, Copy)]
struct Live {
    pid: i32,
    pgid: i32,
}

static LIVE: Mutex<BTreeMap<u64, Live>> = Mutex::new(BTreeMap::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static CANCEL: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn live() -> MutexGuard<'static, BTreeMap<u64, Live>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records a started server; returns the key for [`deregister`].
pub(crate) fn register(pid: i32, pgid: i32) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    live().insert(id, Live { pid, pgid });
    id
}

/// Forgets a server; after this no signal from this list reaches its group.
pub(crate) fn deregister(id: u64) {
    live().remove(&id);
}

/// Sends `sig` to every registered sandbox; returns how many there were.
pub(crate) fn signal_all(sig: libc::c_int) -> usize {
    let live = live();
    for l in live.values() {
        signal_tree(l.pid, l.pgid, sig);
    }
    live.len()
}

/// The flag set when SIGINT/SIGTERM arrived (shared with `install_signal_handler`).
pub(crate) fn cancel_flag() -> Arc<AtomicBool> {
    CANCEL
        .get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

/// Whether bakeoff is shutting down after a signal.
pub(crate) fn is_cancelled() -> bool {
    CANCEL.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// Sends `sig` to the process group `pgid` and to every descendant of `leader`, never to
/// bakeoff's own process or group. Returns how many live (non-zombie) processes were
/// signalled.
pub(crate) fn signal_tree(leader: i32, pgid: i32, sig: libc::c_int) -> usize {
    let me = std::process::id() as i32;
    // SAFETY: getpgid(0) has no preconditions.
    let my_group = unsafe { libc::getpgid(0) };
    let pgid = if pgid > 1 && pgid != my_group {
        pgid
    } else {
        -1
    };
    let members = procfs::sandbox_members(&procfs::all_stats(), leader, pgid);
    let mut n = 0;
    for m in members
        .iter()
        .filter(|m| m.pid != me && m.pid > 1 && m.state != 'Z')
    {
        // SAFETY: kill has no memory preconditions; a vanished pid just fails with ESRCH.
        if unsafe { libc::kill(m.pid, sig) } == 0 {
            n += 1;
        }
    }
    if pgid > 1 {
        // SAFETY: as above.
        unsafe { libc::killpg(pgid, sig) };
    }
    n
}

/// The other processes of a sandbox now, as (pid, start time), to find them again once
/// the leader is gone and they may have been reparented out of its tree.
pub(crate) fn snapshot(leader: i32, pgid: i32) -> Vec<(i32, u64)> {
    procfs::sandbox_members(&procfs::all_stats(), leader, pgid)
        .iter()
        .filter(|m| m.pid != leader && m.state != 'Z')
        .map(|m| (m.pid, m.start_ticks))
        .collect()
}

/// After the leader exited (and before it is reaped): SIGKILLs what is left of the
/// sandbox, i.e. live members of its group and descendants, plus processes of `earlier`
/// (a [`snapshot`]) that still run with the same start time. Returns how many.
pub(crate) fn kill_leftovers(leader: i32, pgid: i32, earlier: &[(i32, u64)]) -> usize {
    let stats = procfs::all_stats();
    let me = std::process::id() as i32;
    let mut pids: BTreeSet<i32> = procfs::sandbox_members(&stats, leader, pgid)
        .iter()
        .filter(|m| m.state != 'Z' && m.pid != leader)
        .map(|m| m.pid)
        .collect();
    pids.extend(earlier.iter().filter_map(|&(pid, start)| {
        let alive = stats
            .iter()
            .any(|s| s.pid == pid && s.start_ticks == start && s.state != 'Z');
        alive.then_some(pid)
    }));
    pids.retain(|&p| p != me && p > 1);
    for &pid in &pids {
        // SAFETY: kill has no memory preconditions; a vanished pid just fails with ESRCH.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    pids.len()
}
