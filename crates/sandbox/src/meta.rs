//! The record each sandbox dir holds (`sandbox.json`): who owns it (bakeoff's pid and
//! start time) and which server runs in it (pid, process group, start time), so a later
//! run can tell a stale sandbox from a live one without ever killing an unrelated process.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::procfs;

/// File name of the record inside a sandbox dir.
pub(crate) const RECORD_FILE: &str = "sandbox.json";

/// Who owns a sandbox dir and which server it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub name: String,
    pub kind: String,
    /// /proc/sys/kernel/random/boot_id when written; pids of another boot are void.
    pub boot_id: Option<String>,
    pub owner_pid: i32,
    /// Owner's start time, clock ticks after boot (/proc/PID/stat field 22).
    pub owner_start: u64,
    pub server_pid: Option<i32>,
    pub server_pgid: Option<i32>,
    pub server_start: Option<u64>,
    pub created_unix_s: u64,
    /// The id bakeoff's state recorded for this folder when it made it
    /// (`bakeoff_os::own::register`), also the server's `BAKEOFF_SANDBOX` tag. A record
    /// without it, or with another id, is not one bakeoff wrote here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_id: Option<String>,
}

impl Record {
    /// A record owned by this process, with no server yet.
    pub fn for_this_process(name: &str, kind: &str) -> Record {
        let me = std::process::id() as i32;
        Record {
            name: name.to_string(),
            kind: kind.to_string(),
            boot_id: procfs::boot_id(),
            owner_pid: me,
            owner_start: procfs::start_ticks(me).unwrap_or(0),
            server_pid: None,
            server_pgid: None,
            server_start: None,
            created_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            claim_id: None,
        }
    }

    /// Whether bakeoff wrote this record for `dir`: its state recorded the folder as a
    /// sandbox with the record's id (a record planted or copied into a folder is not).
    pub fn is_ours(&self, dir: &Path) -> bool {
        let recorded = bakeoff_os::own::registered(dir, bakeoff_os::own::SANDBOX_PURPOSE);
        matches!((recorded, &self.claim_id), (Some(id), Some(c)) if format!("{id:016x}") == *c)
    }

    /// Whether the record was written during an earlier boot (its pids mean nothing now).
    pub fn is_from_other_boot(&self) -> bool {
        match (&self.boot_id, procfs::boot_id()) {
            (Some(then), Some(now)) => *then != now,
            _ => false,
        }
    }

    /// Whether the owning bakeoff process still runs.
    pub fn owner_alive(&self) -> bool {
        !self.is_from_other_boot() && procfs::is_same_process(self.owner_pid, self.owner_start)
    }

    /// Writes the record into `dir` atomically (`bakeoff_os::file::write_atomic`).
    pub fn write(&self, dir: &Path) -> Result<(), SandboxError> {
        let path = dir.join(RECORD_FILE);
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| SandboxError::io("encode", &path, std::io::Error::other(e.to_string())))?;
        bakeoff_os::file::write_atomic(&path, &json)
            .map_err(|e| SandboxError::io("write", &path, e))
    }

    /// Reads the record of `dir`; `None` if it is missing or unreadable.
    pub fn read(dir: &Path) -> Option<Record> {
        let text = fs::read(dir.join(RECORD_FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_owner_liveness() {
        let dir = std::env::temp_dir().join(format!("bakeoff-meta-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut r = Record::for_this_process("gcc-O2", "memcached");
        r.server_pid = Some(42);
        r.write(&dir).unwrap();
        let back = Record::read(&dir).unwrap();
        assert_eq!(back, r);
        assert!(back.owner_alive());
        assert!(!back.is_from_other_boot());
        let mut other = back.clone();
        other.owner_start += 1;
        assert!(!other.owner_alive());
        other.boot_id = Some("not-this-boot".into());
        assert!(other.is_from_other_boot());
        fs::remove_dir_all(&dir).unwrap();
    }
}
