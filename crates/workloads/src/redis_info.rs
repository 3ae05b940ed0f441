//! Redis's memory as INFO reports it (used, resident, fragmentation, per key), asked over
//! a short blocking connection of its own at the edges of a run: allocators are compared
//! on memory as much as on speed. The requests and replies are the shared RESP codec's
//! (`bakeoff_proto::resp`).

use crate::workload::Outcome;
use bakeoff_engine::{LoadError, PhaseHooks, RunRecord};
use bakeoff_proto::resp;
use bakeoff_report::model::MemoryRecord;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(2);

/// Runs `run` with hooks that take INFO memory as the measured window starts, then takes
/// it again at the end: both go into the run's record (`memory_at_start`, `memory`).
pub fn around(
    addr: SocketAddr,
    hooks: &dyn PhaseHooks,
    run: impl FnOnce(&dyn PhaseHooks) -> Result<RunRecord, LoadError>,
) -> Result<Outcome, String> {
    let at_start = AtStart {
        inner: hooks,
        addr,
        memory: Mutex::new(None),
    };
    let rec = run(&at_start).map_err(|e| e.to_string())?;
    let start = at_start.memory.lock().ok().and_then(|mut m| m.take());
    let end = memory(addr);
    Ok(Outcome {
        rec,
        extra: Box::new(move |r| {
            r.memory_at_start = start;
            r.memory = end;
        }),
    })
}

/// The run's hooks, and INFO memory when the window starts (before the probes start).
struct AtStart<'a> {
    inner: &'a dyn PhaseHooks,
    addr: SocketAddr,
    memory: Mutex<Option<MemoryRecord>>,
}

impl PhaseHooks for AtStart<'_> {
    fn measure_started(&self) {
        if let Ok(mut m) = self.memory.lock() {
            *m = memory(self.addr);
        }
        self.inner.measure_started();
    }

    fn measure_ended(&self) {
        self.inner.measure_ended();
    }

    fn keep_connections(&self) -> bool {
        self.inner.keep_connections()
    }
}

/// INFO memory and keyspace from the server at `addr`; None when it does not answer.
pub fn memory(addr: SocketAddr) -> Option<MemoryRecord> {
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT).ok()?;
    s.set_read_timeout(Some(TIMEOUT)).ok()?;
    s.set_write_timeout(Some(TIMEOUT)).ok()?;
    let mut request = Vec::new();
    resp::command(&mut request, &[b"INFO", b"memory"]);
    resp::command(&mut request, &[b"INFO", b"keyspace"]);
    s.write_all(&request).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    // Two bulk replies; read until both have arrived.
    while resp::bulk_replies(&buf) < 2 {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    parse(&String::from_utf8_lossy(&buf))
}

/// The record from INFO's `field:value` lines.
pub fn parse(text: &str) -> Option<MemoryRecord> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let num = |name: &str| field(name).and_then(|v| v.parse::<f64>().ok());
    let used = num("used_memory")?;
    let rss = num("used_memory_rss")?;
    let keys: u64 = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("db")?.split_once(':'))
        .filter_map(|(_, v)| v.split(',').find_map(|kv| kv.strip_prefix("keys=")))
        .filter_map(|k| k.parse::<u64>().ok())
        .sum();
    let dataset = num("used_memory_dataset").unwrap_or(used);
    Some(MemoryRecord {
        used_memory: used as u64,
        used_memory_rss: rss as u64,
        fragmentation_ratio: num("mem_fragmentation_ratio").unwrap_or(rss / used.max(1.0)),
        keys,
        bytes_per_key: if keys > 0 { dataset / keys as f64 } else { 0.0 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_info_memory_and_keyspace() {
        let text = "$200\r\n# Memory\r\nused_memory:4740664\r\nused_memory_human:4.52M\r\nused_memory_rss:16445440\r\nused_memory_dataset:2875208\r\nmem_fragmentation_ratio:3.47\r\n\r\n# Keyspace\r\ndb0:keys=10000,expires=0,avg_ttl=0\r\n";
        let m = parse(text).unwrap();
        assert_eq!(m.used_memory, 4_740_664);
        assert_eq!(m.used_memory_rss, 16_445_440);
        assert_eq!(m.fragmentation_ratio, 3.47);
        assert_eq!(m.keys, 10_000);
        assert!((m.bytes_per_key - 287.5208).abs() < 1e-9);
        assert!(parse("garbage").is_none());
    }
}
