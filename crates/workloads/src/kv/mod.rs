//! The key-value workload: memcached's text protocol or Redis's RESP over the load engine,
//! with a weighted command mix, seeded key and value-size choice, an optional preload that
//! sets every key once, and a check of every value read back.

pub mod kind;
mod protocol;
mod resp;
mod workload;

pub use crate::shared::keys::{KeyChooser, KeyDistribution};

use crate::shared::{keys, value};
pub use kind::{commands_of, KvKeys, KvKind};
pub use protocol::COMMANDS;
pub use workload::Kv;

use bakeoff_engine::rng::Rng;
use bakeoff_engine::{
    Endpoint, Live, LoadError, Outcome, Phase, PhaseHooks, Phases, RunRecord, Schedule, Session,
    SessionFactory,
};
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Bytes per value: fixed, or uniform from mean/2 to 3*mean/2 (like mcb's -l).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueSize {
    Fixed(usize),
    Around { mean: usize },
}

/// Command weights (the last five are Redis's only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mix {
    pub get: u32,
    pub set: u32,
    pub add: u32,
    pub delete: u32,
    pub multiget: u32,
    pub incr: u32,
    pub lpush: u32,
    pub lpop: u32,
    pub hset: u32,
    pub hget: u32,
}

impl Mix {
    fn weights(&self) -> [u32; 10] {
        [
            self.get,
            self.set,
            self.add,
            self.delete,
            self.multiget,
            self.incr,
            self.lpush,
            self.lpop,
            self.hset,
            self.hget,
        ]
    }
}

/// The protocol a kv workload speaks: the target's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// memcached's text protocol.
    #[default]
    Memcached,
    /// Redis's RESP2.
    Resp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KvConfig {
    pub keys: u64,
    pub key_distribution: KeyDistribution,
    pub value_size: ValueSize,
    pub mix: Mix,
    pub multiget_keys: usize,
    pub connections: usize,
    pub client_threads: usize,
    pub schedule: Schedule,
    pub preload: bool,
    pub protocol: Protocol,
}

/// The largest key space a zipfian chooser precomputes (its zeta sum is O(keys)).
pub const MAX_ZIPF_KEYS: u64 = 100_000_000;

impl KvConfig {
    /// memcached's protocol, 90% gets and 10% sets of 100-byte values over `keys` uniform
    /// keys (multigets of 10), preloaded, on `connections` connections from one thread,
    /// closed loop without pipelining: the plainest kv load, for tests and examples.
    pub fn get90_set10(keys: u64, connections: usize) -> KvConfig {
        KvConfig {
            keys,
            key_distribution: KeyDistribution::Uniform,
            value_size: ValueSize::Fixed(100),
            mix: Mix {
                get: 90,
                set: 10,
                ..Mix::default()
            },
            multiget_keys: 10,
            connections,
            client_threads: 1,
            schedule: Schedule::ClosedLoop { pipeline: 1 },
            preload: true,
            protocol: Protocol::Memcached,
        }
    }

    /// One-line messages naming the key at fault.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=bakeoff_max_connections()).contains(&self.connections) {
            return Err(format!(
                "connections must be 1..=1024, got {}",
                self.connections
            ));
        }
        if self.client_threads > self.connections {
            return Err(format!(
                "client_threads must be 1..=connections ({}), got {}",
                self.connections, self.client_threads
            ));
        }
        if self.keys == 0 {
            return Err("keys must be at least 1".into());
        }
        if let KeyDistribution::Zipfian { theta } = self.key_distribution {
            if !(theta > 0.0 && theta < 1.0) {
                return Err(format!("zipf_theta must be in (0, 1), got {theta}"));
            }
            if self.keys > MAX_ZIPF_KEYS {
                return Err(format!(
                    "zipfian keys must be at most {MAX_ZIPF_KEYS}, got {}",
                    self.keys
                ));
            }
        }
        let size = match self.value_size {
            ValueSize::Fixed(n) | ValueSize::Around { mean: n } => n,
        };
        if !(value::HEADER..=1_000_000).contains(&size) {
            return Err(format!(
                "value_size must be {}..=1000000 bytes, got {size}",
                value::HEADER
            ));
        }
        if self
            .mix
            .weights()
            .iter()
            .map(|w| u64::from(*w))
            .sum::<u64>()
            == 0
        {
            return Err("mix weights add up to 0".into());
        }
        if self.protocol == Protocol::Memcached {
            if let Some(i) = self.mix.weights()[protocol::MEMCACHED_COMMANDS..]
                .iter()
                .position(|w| *w > 0)
            {
                return Err(format!(
                    "{} is a Redis command; memcached's mix takes get, set, add, delete, multiget",
                    COMMANDS[protocol::MEMCACHED_COMMANDS + i]
                ));
            }
        }
        if !(1..=100).contains(&self.multiget_keys) {
            return Err(format!(
                "multiget_keys must be 1..=100, got {}",
                self.multiget_keys
            ));
        }
        match self.schedule {
            Schedule::ClosedLoop { pipeline } if !(1..=1024).contains(&pipeline) => {
                Err(format!("pipeline must be 1..=1024, got {pipeline}"))
            }
            Schedule::OpenLoop { rate, .. } if !(rate.is_finite() && rate > 0.0) => Err(format!(
                "rate must be a positive number of ops/s, got {rate}"
            )),
            _ => Ok(()),
        }
    }
}

const fn bakeoff_max_connections() -> usize {
    1024
}

/// Runs the kv workload against a memcached or Redis at `addr`.
pub fn run(
    addr: impl Into<Endpoint>,
    cfg: &KvConfig,
    phases: &Phases,
    seed: u64,
    hooks: &dyn PhaseHooks,
    live: &Live,
    cancel: &AtomicBool,
) -> Result<RunRecord, LoadError> {
    cfg.validate().map_err(LoadError::Settings)?;
    let factory = Factory {
        cfg: cfg.clone(),
        keys: Arc::new(KeyChooser::new(cfg.keys, cfg.key_distribution)),
        cumulative: cumulative(cfg.mix.weights()),
    };
    let settings = bakeoff_engine::Settings {
        connections: cfg.connections,
        threads: cfg.client_threads,
        schedule: cfg.schedule,
        phases: *phases,
        seed,
        preload: cfg.preload,
    };
    bakeoff_engine::run(addr, &factory, &settings, hooks, live, cancel)
}

fn cumulative(w: [u32; 10]) -> [u64; 10] {
    let mut acc = 0u64;
    w.map(|x| {
        acc += u64::from(x);
        acc
    })
}

struct Factory {
    cfg: KvConfig,
    keys: Arc<KeyChooser>,
    cumulative: [u64; 10],
}

impl SessionFactory for Factory {
    type S = KvSession;

    fn commands(&self) -> &'static [&'static str] {
        &COMMANDS
    }

    fn session(&self, conn: usize, connections: usize, seed: u64) -> KvSession {
        KvSession {
            keys: self.keys.clone(),
            cumulative: self.cumulative,
            protocol: self.cfg.protocol,
            value_size: self.cfg.value_size,
            multiget_keys: self.cfg.multiget_keys,
            rng: Rng::new(seed),
            pending: VecDeque::with_capacity(64),
            requested: VecDeque::with_capacity(64),
            preload_next: conn as u64,
            preload_step: connections as u64,
        }
    }
}

/// What an outstanding request was, to check its reply.
#[derive(Debug, Clone, Copy)]
struct Pending {
    cmd: u8,
    /// How many key ids it pushed onto `requested`.
    keys: usize,
}

pub struct KvSession {
    keys: Arc<KeyChooser>,
    cumulative: [u64; 10],
    protocol: Protocol,
    value_size: ValueSize,
    multiget_keys: usize,
    rng: Rng,
    pending: VecDeque<Pending>,
    requested: VecDeque<u64>,
    preload_next: u64,
    preload_step: u64,
}

impl KvSession {
    fn value_len(&mut self) -> usize {
        match self.value_size {
            ValueSize::Fixed(n) => n,
            ValueSize::Around { mean } => {
                (mean / 2 + self.rng.below(mean as u64 + 1) as usize).max(value::HEADER)
            }
        }
    }

    fn pick_command(&mut self) -> u8 {
        let total = self.cumulative[self.cumulative.len() - 1];
        let x = self.rng.below(total);
        self.cumulative.iter().position(|&c| x < c).unwrap_or(0) as u8
    }

    fn store(&mut self, out: &mut Vec<u8>, verb: &[u8], cmd: u8, key: u64) {
        let len = self.value_len();
        let gen = self.rng.next_u64() as u32 & 0xFF_FFFF;
        protocol::write_store(out, verb, key, gen, len);
        self.requested.push_back(key);
        self.pending.push_back(Pending { cmd, keys: 1 });
    }

    /// A multi-key get of `key` and `multiget_keys - 1` keys more, written by `write`
    /// (the keys from an index of the ring buffer's two slices).
    #[inline]
    fn multiget(
        &mut self,
        out: &mut Vec<u8>,
        cmd: u8,
        key: u64,
        write: impl FnOnce(&mut Vec<u8>, &[u64], &[u64], usize),
    ) {
        let start = self.requested.len();
        self.requested.push_back(key);
        for _ in 1..self.multiget_keys {
            let k = self.keys.next(&mut self.rng);
            self.requested.push_back(k);
        }
        let (a, b) = self.requested.as_slices();
        write(out, a, b, start);
        self.pending.push_back(Pending {
            cmd,
            keys: self.multiget_keys,
        });
    }

    /// One Redis request (MGET included).
    fn issue_resp(&mut self, out: &mut Vec<u8>, cmd: u8, key: u64) {
        if cmd == protocol::MULTIGET {
            self.multiget(out, cmd, key, resp::write_mget);
            return;
        }
        let (gen, len) = if resp::stores(cmd) {
            (self.rng.next_u64() as u32 & 0xFF_FFFF, self.value_len())
        } else {
            (0, 0)
        };
        resp::write(out, cmd, key, gen, len);
        self.requested.push_back(key);
        self.pending.push_back(Pending { cmd, keys: 1 });
    }
}

impl Session for KvSession {
    fn issue(&mut self, out: &mut Vec<u8>, phase: Phase) -> bool {
        if phase == Phase::Preload {
            if self.preload_next >= self.keys.keys() {
                return false;
            }
            let key = self.preload_next;
            self.preload_next += self.preload_step;
            match self.protocol {
                Protocol::Memcached => self.store(out, b"set", protocol::SET, key),
                Protocol::Resp => self.issue_resp(out, protocol::SET, key),
            }
            return true;
        }
        let cmd = self.pick_command();
        let key = self.keys.next(&mut self.rng);
        if self.protocol == Protocol::Resp {
            self.issue_resp(out, cmd, key);
            return true;
        }
        match cmd {
            protocol::SET => self.store(out, b"set", cmd, key),
            protocol::ADD => self.store(out, b"add", cmd, key),
            protocol::DELETE => {
                protocol::write_delete(out, key);
                self.requested.push_back(key);
                self.pending.push_back(Pending { cmd, keys: 1 });
            }
            protocol::MULTIGET => {
                self.multiget(out, cmd, key, write_multi);
            }
            _ => {
                protocol::write_get(out, &[key]);
                self.requested.push_back(key);
                self.pending.push_back(Pending {
                    cmd: protocol::GET,
                    keys: 1,
                });
            }
        }
        true
    }

    fn complete(&mut self, buf: &[u8]) -> Result<Option<Outcome>, String> {
        let p = *self
            .pending
            .front()
            .ok_or("a reply arrived with no request outstanding")?;
        // One key (all but multiget): no need to make the ring contiguous.
        let one;
        let keys: &[u64] = if p.keys == 1 {
            one = [*self.requested.front().ok_or("no key outstanding")?];
            &one
        } else {
            self.requested.make_contiguous();
            &self.requested.as_slices().0[..p.keys]
        };
        let outcome = match (self.protocol, p.cmd) {
            (Protocol::Resp, _) => resp::parse(buf, p.cmd, keys)?,
            (_, protocol::GET | protocol::MULTIGET) => protocol::parse_values(buf, p.cmd, keys)?,
            _ => protocol::parse_simple(buf, p.cmd)?,
        };
        if outcome.is_some() {
            self.pending.pop_front();
            self.requested.drain(..p.keys);
        }
        Ok(outcome)
    }
}

/// Writes `get` for the keys from index `start` of a ring buffer's two slices.
fn write_multi(out: &mut Vec<u8>, a: &[u64], b: &[u64], start: usize) {
    out.extend_from_slice(b"get");
    for &k in a.iter().chain(b).skip(start) {
        out.push(b' ');
        keys::write_key(out, k);
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests;
