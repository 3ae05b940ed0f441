//! YCSB over the load engine: memcached as YCSB's memcached binding (a record is one
//! value, its fields one after another; read is `get`, update `set`s the whole record,
//! insert is `add`; no scans) and Redis as YCSB's redis binding (a hash per record;
//! read is HGETALL, update HSETs one field, insert HSETs every field and adds the key to
//! the sorted set `_indices` scored by the key's Java hash; a scan is ZRANGEBYSCORE from
//! the start key's score, LIMIT 0 n, then HGETALL of each key).
//!
//! Requests are written straight into the connection's output buffer from constant
//! pieces built once per run (`Plan`) and the value pattern: no allocation per
//! operation. A read-modify-write (and a Redis insert, HSET then ZADD) is its requests
//! written together and counted as one operation when its last reply arrives. A Redis
//! scan needs the index's answer before it can ask for the records, and the engine
//! counts every reply as an operation, so it counts twice: `scan_index` (ZRANGEBYSCORE)
//! and `scan` (the HGETALLs, sent together as the connection's next request).
//!
//! A reply is first walked to its end (Ok(None) while it is incomplete), then checked:
//! every field read back must be one bakeoff wrote for that record and field. The
//! protocols' pieces are the shared codecs' (`bakeoff_proto::memcache`, `::resp`).

use super::gen::{key_name, Chooser, Inserts, KeyName};
use super::value;
use super::{Config, COMMANDS, INSERT, READ, RMW, SCAN, SCAN_INDEX, UPDATE};
use bakeoff_engine::rng::Rng;
use bakeoff_engine::{Outcome, Phase, Session, SessionFactory};
use bakeoff_proto::decimal::decimal;
use bakeoff_proto::memcache::{self, Reply};
use bakeoff_proto::resp::{self, array, bulk, bulk_at, Element};
use std::collections::VecDeque;
use std::sync::Arc;

/// The constant pieces of every request, built once per run.
pub struct Plan {
    cfg: Config,
    resp: bool,
    /// memcached: ` 0 0 <record bytes>\r\n`.
    store_tail: Vec<u8>,
    /// RESP: `$<field_length>\r\n`.
    value_head: Vec<u8>,
    /// RESP: each field's name as a bulk string.
    field_names: Vec<Vec<u8>>,
    /// RESP: the array header and verb of an HSET of every field.
    hset_all: Vec<u8>,
}

impl Plan {
    pub fn new(cfg: &Config, resp: bool) -> Plan {
        let len = cfg.field_length;
        let mut hset_all = Vec::new();
        array(&mut hset_all, 2 + 2 * cfg.fields);
        bulk(&mut hset_all, b"HSET");
        Plan {
            cfg: cfg.clone(),
            resp,
            store_tail: format!(" 0 0 {}\r\n", cfg.fields * len).into_bytes(),
            value_head: format!("${len}\r\n").into_bytes(),
            field_names: (0..cfg.fields)
                .map(|f| {
                    let mut b = Vec::new();
                    bulk(&mut b, format!("field{f}").as_bytes());
                    b
                })
                .collect(),
            hset_all,
        }
    }
}

/// Makes a session per connection; everything shared is read-only but the insert counter.
pub struct Factory {
    pub plan: Arc<Plan>,
    pub inserts: Arc<Inserts>,
    pub chooser: Chooser,
}

impl SessionFactory for Factory {
    type S = YcsbSession;

    fn commands(&self) -> &'static [&'static str] {
        &COMMANDS
    }

    fn session(&self, conn: usize, connections: usize, seed: u64) -> YcsbSession {
        YcsbSession {
            plan: self.plan.clone(),
            inserts: self.inserts.clone(),
            chooser: self.chooser.clone(),
            rng: Rng::new(seed),
            pending: VecDeque::with_capacity(64),
            scan_keys: VecDeque::new(),
            follow: Vec::new(),
            preload_next: conn as u64,
            preload_step: connections as u64,
        }
    }
}

/// What an outstanding request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Read,
    Update,
    Insert,
    /// A preload's insert (not counted, not acknowledged).
    Load,
    Rmw,
    /// Redis: ZRANGEBYSCORE on the index.
    Index,
    /// Redis: this many HGETALLs of a scan (their keys in `scan_keys`).
    ScanRead(usize),
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    cmd: u8,
    key: u64,
    /// The key's name, where the reply is checked against it.
    name: KeyName,
    what: What,
}

pub struct YcsbSession {
    plan: Arc<Plan>,
    inserts: Arc<Inserts>,
    chooser: Chooser,
    rng: Rng,
    pending: VecDeque<Pending>,
    /// Keys of the outstanding scan reads, oldest first.
    scan_keys: VecDeque<KeyName>,
    /// Keys an index lookup returned, read by the next request.
    follow: Vec<KeyName>,
    preload_next: u64,
    preload_step: u64,
}

impl YcsbSession {
    fn gen(&mut self) -> u16 {
        self.rng.next_u64() as u16
    }

    fn push(&mut self, cmd: u8, key: u64, name: KeyName, what: What) {
        self.pending.push_back(Pending {
            cmd,
            key,
            name,
            what,
        });
    }

    fn write_read(&self, out: &mut Vec<u8>, name: &KeyName) {
        if self.plan.resp {
            out.extend_from_slice(b"*2\r\n$7\r\nHGETALL\r\n");
            bulk(out, name.as_bytes());
        } else {
            out.extend_from_slice(b"get ");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }

    /// memcached: the whole record; Redis: one field, picked here.
    fn write_update(&mut self, out: &mut Vec<u8>, key: u64, name: &KeyName) {
        let gen = self.gen();
        let c = &self.plan.cfg;
        if self.plan.resp {
            let f = self.rng.below(c.fields as u64) as usize;
            out.extend_from_slice(b"*4\r\n$4\r\nHSET\r\n");
            bulk(out, name.as_bytes());
            self.write_field(out, key, f, gen);
        } else {
            self.write_store(out, b"set ", key, name, gen);
        }
    }

    fn write_store(&self, out: &mut Vec<u8>, verb: &[u8], key: u64, name: &KeyName, gen: u16) {
        let c = &self.plan.cfg;
        out.extend_from_slice(verb);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&self.plan.store_tail);
        value::write_record(out, key, c.fields, c.field_length, gen);
        out.extend_from_slice(b"\r\n");
    }

    /// RESP: a field's name and value.
    fn write_field(&self, out: &mut Vec<u8>, key: u64, f: usize, gen: u16) {
        out.extend_from_slice(&self.plan.field_names[f]);
        out.extend_from_slice(&self.plan.value_head);
        value::write_field(out, key, f, gen, self.plan.cfg.field_length);
        out.extend_from_slice(b"\r\n");
    }

    /// memcached: `add`; Redis: HSET of every field, then ZADD to the index.
    fn write_insert(&mut self, out: &mut Vec<u8>, key: u64) -> KeyName {
        let name = key_name(key);
        let gen = self.gen();
        if !self.plan.resp {
            self.write_store(out, b"add ", key, &name, gen);
            return name;
        }
        out.extend_from_slice(&self.plan.hset_all);
        bulk(out, name.as_bytes());
        for f in 0..self.plan.cfg.fields {
            self.write_field(out, key, f, gen);
        }
        out.extend_from_slice(b"*4\r\n$4\r\nZADD\r\n$8\r\n_indices\r\n");
        bulk(out, decimal(&mut [0; 20], i64::from(name.java_hash())));
        bulk(out, name.as_bytes());
        name
    }

    fn write_index_lookup(&self, out: &mut Vec<u8>, name: &KeyName, n: u64) {
        out.extend_from_slice(b"*7\r\n$13\r\nZRANGEBYSCORE\r\n$8\r\n_indices\r\n");
        bulk(out, decimal(&mut [0; 20], i64::from(name.java_hash())));
        out.extend_from_slice(b"$4\r\n+inf\r\n$5\r\nLIMIT\r\n$1\r\n0\r\n");
        bulk(out, decimal(&mut [0; 20], n as i64));
    }

    /// One operation of the run's mix.
    fn issue_op(&mut self, out: &mut Vec<u8>) {
        let op = self.plan.cfg.mix.pick(self.rng.below(1000));
        if op == INSERT {
            let key = self.inserts.take();
            let name = self.write_insert(out, key);
            self.push(INSERT, key, name, What::Insert);
            return;
        }
        let key = self.chooser.next(&mut self.rng, &self.inserts);
        let name = key_name(key);
        match op {
            UPDATE => {
                self.write_update(out, key, &name);
                self.push(UPDATE, key, name, What::Update);
            }
            SCAN if self.plan.resp => {
                let n = 1 + self.rng.below(self.plan.cfg.max_scan_length);
                self.write_index_lookup(out, &name, n);
                self.push(SCAN_INDEX, key, name, What::Index);
            }
            RMW => {
                self.write_read(out, &name);
                self.write_update(out, key, &name);
                self.push(RMW, key, name, What::Rmw);
            }
            // Reads, and scans where the protocol has none (refused by the checks).
            _ => {
                self.write_read(out, &name);
                self.push(READ, key, name, What::Read);
            }
        }
    }
}

impl Session for YcsbSession {
    fn issue(&mut self, out: &mut Vec<u8>, phase: Phase) -> bool {
        if phase == Phase::Preload {
            if self.preload_next >= self.plan.cfg.records {
                return false;
            }
            let key = self.preload_next;
            self.preload_next += self.preload_step;
            let name = self.write_insert(out, key);
            self.push(INSERT, key, name, What::Load);
            return true;
        }
        if !self.follow.is_empty() {
            let n = self.follow.len();
            for i in 0..n {
                let name = self.follow[i];
                self.write_read(out, &name);
                self.scan_keys.push_back(name);
            }
            self.follow.clear();
            self.push(SCAN, 0, KeyName::NONE, What::ScanRead(n));
            return true;
        }
        self.issue_op(out);
        true
    }

    fn complete(&mut self, buf: &[u8]) -> Result<Option<Outcome>, String> {
        let p = *self
            .pending
            .front()
            .ok_or("a reply arrived with no request outstanding")?;
        let Some(end) = self.reply(buf, p, None)? else {
            return Ok(None);
        };
        let mut t = Tally::default();
        self.reply(buf, p, Some(&mut t))?;
        self.pending.pop_front();
        if let What::ScanRead(n) = p.what {
            self.scan_keys.drain(..n.min(self.scan_keys.len()));
        }
        if p.what == What::Insert {
            self.inserts.acknowledge(p.key);
        }
        Ok(Some(Outcome {
            consumed: end,
            cmd: p.cmd,
            misses: t.misses,
            verify_failures: t.failures,
            error: t.error,
        }))
    }
}

/// What checking a complete reply found.
#[derive(Debug, Default)]
struct Tally {
    misses: u32,
    failures: u32,
    error: Option<&'static str>,
}

/// Whose record a hash should be.
#[derive(Clone, Copy)]
enum Expect {
    Number(u64),
    Name(KeyName),
}

impl YcsbSession {
    /// Walks the reply to `p` from the front of `buf`: its end, or None while incomplete.
    /// With `t`, also checks it (call only once it is complete).
    fn reply(
        &mut self,
        buf: &[u8],
        p: Pending,
        mut t: Option<&mut Tally>,
    ) -> Result<Option<usize>, String> {
        let c = &self.plan.cfg;
        if !self.plan.resp {
            let name = &p.name;
            return Ok(match p.what {
                What::Read => mc_get(buf, 0, p.key, name, c, t)?,
                What::Rmw => match mc_get(buf, 0, p.key, name, c, t.as_deref_mut())? {
                    Some(next) => mc_stored(buf, next, t)?,
                    None => None,
                },
                _ => mc_stored(buf, 0, t)?,
            });
        }
        Ok(match p.what {
            What::Read => resp_hash(buf, 0, Expect::Number(p.key), c, t)?,
            What::Update => resp_int(buf, 0, t)?,
            What::Insert | What::Load => match resp_int(buf, 0, t.as_deref_mut())? {
                Some(next) => resp_int(buf, next, t)?,
                None => None,
            },
            What::Rmw => match resp_hash(buf, 0, Expect::Number(p.key), c, t.as_deref_mut())? {
                Some(next) => resp_int(buf, next, t)?,
                None => None,
            },
            What::Index => resp_keys(buf, t.map(|t| (t, &mut self.follow)))?,
            What::ScanRead(n) => {
                let mut pos = 0;
                for i in 0..n {
                    let name = self
                        .scan_keys
                        .get(i)
                        .copied()
                        .ok_or("a scan lost its keys")?;
                    match resp_hash(buf, pos, Expect::Name(name), c, t.as_deref_mut())? {
                        Some(next) => pos = next,
                        None => return Ok(None),
                    }
                }
                Some(pos)
            }
        })
    }
}

// ---- memcached's text protocol ----

/// A `get` reply at `pos` for record `key` named `name`: its end.
fn mc_get(
    buf: &[u8],
    mut pos: usize,
    key: u64,
    name: &KeyName,
    c: &Config,
    mut t: Option<&mut Tally>,
) -> Result<Option<usize>, String> {
    let mut found = false;
    loop {
        let Some((l, next)) = memcache::line(buf, pos) else {
            return Ok(None);
        };
        if l == b"END" {
            if !found {
                if let Some(t) = t.as_deref_mut() {
                    t.misses += 1;
                }
            }
            return Ok(Some(next));
        }
        if let Some(e) = memcache::error_kind(l) {
            if let Some(t) = t.as_deref_mut() {
                t.error = Some(e);
            }
            return Ok(Some(next));
        }
        let (got, len) = memcache::value_header(l).ok_or_else(|| memcache::unexpected(l))?;
        let data_end = next + len;
        if buf.len() < data_end + 2 {
            return Ok(None);
        }
        if let Some(t) = t.as_deref_mut() {
            let data = &buf[next..data_end];
            let ok = got == name.as_bytes()
                && &buf[data_end..data_end + 2] == b"\r\n"
                && value::check_record(data, key, c.fields, c.field_length);
            if !ok {
                t.failures += 1;
            }
        }
        found = true;
        pos = data_end + 2;
    }
}

/// A storage command's one-line reply at `pos`: its end.
fn mc_stored(buf: &[u8], pos: usize, t: Option<&mut Tally>) -> Result<Option<usize>, String> {
    let Some((l, next)) = memcache::line(buf, pos) else {
        return Ok(None);
    };
    let error = match memcache::reply(l) {
        Reply::Stored => None,
        Reply::NotStored => Some("not_stored"),
        Reply::Error(e) => Some(e),
        _ => return Err(memcache::unexpected(l)),
    };
    if let (Some(t), Some(e)) = (t, error) {
        t.error = Some(e);
    }
    Ok(Some(next))
}

// ---- RESP ----

/// An integer reply (HSET, ZADD) at `pos`: its end.
fn resp_int(buf: &[u8], pos: usize, t: Option<&mut Tally>) -> Result<Option<usize>, String> {
    let Some((h, next)) = resp::element(buf, pos)? else {
        return Ok(None);
    };
    match (h, t) {
        (Element::Integer(_), _) | (Element::Error(_), None) => {}
        (Element::Error(m), Some(t)) => t.error = Some(resp::error_kind(m)),
        _ => return Err("expected an integer reply".into()),
    }
    Ok(Some(next))
}

/// An HGETALL reply at `pos`: the record `expect` names, every field checked; its end.
fn resp_hash(
    buf: &[u8],
    pos: usize,
    expect: Expect,
    c: &Config,
    t: Option<&mut Tally>,
) -> Result<Option<usize>, String> {
    let Some((h, mut pos)) = resp::element(buf, pos)? else {
        return Ok(None);
    };
    let n = match h {
        Element::Array(n) => n,
        Element::Error(m) => {
            if let Some(t) = t {
                t.error = Some(resp::error_kind(m));
            }
            return Ok(Some(pos));
        }
        _ => return Err("expected an array (HGETALL)".into()),
    };
    if n == 0 {
        if let Some(t) = t {
            t.misses += 1;
        }
        return Ok(Some(pos));
    }
    let mut ok = n == 2 * c.fields;
    let mut key = match expect {
        Expect::Number(k) => Some(k),
        Expect::Name(_) => None,
    };
    for _ in 0..n / 2 {
        let Some((name, next)) = bulk_at(buf, pos)? else {
            return Ok(None);
        };
        let Some((data, next)) = bulk_at(buf, next)? else {
            return Ok(None);
        };
        pos = next;
        if t.is_none() {
            continue;
        }
        let k = *key.get_or_insert_with(|| value::field_key(data).unwrap_or(u64::MAX));
        let field = name
            .strip_prefix(b"field")
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| d.parse::<usize>().ok());
        ok &= field.is_some_and(|f| f < c.fields && value::check_field(data, k, f, c.field_length));
    }
    if n % 2 == 1 {
        return Err("an HGETALL reply with an odd number of elements".into());
    }
    if let Some(t) = t {
        if let (Expect::Name(want), Some(k)) = (expect, key) {
            ok &= key_name(k) == want;
        }
        if !ok {
            t.failures += 1;
        }
    }
    Ok(Some(pos))
}

/// ZRANGEBYSCORE's reply (the first record is the scan's start): its end; with `t`, the
/// keys go to `follow` for the next request.
fn resp_keys(
    buf: &[u8],
    mut sink: Option<(&mut Tally, &mut Vec<KeyName>)>,
) -> Result<Option<usize>, String> {
    let Some((h, mut pos)) = resp::element(buf, 0)? else {
        return Ok(None);
    };
    let n = match h {
        Element::Array(n) => n,
        Element::Error(m) => {
            if let Some((t, _)) = sink {
                t.error = Some(resp::error_kind(m));
            }
            return Ok(Some(pos));
        }
        _ => return Err("expected an array (ZRANGEBYSCORE)".into()),
    };
    for _ in 0..n {
        let Some((k, next)) = bulk_at(buf, pos)? else {
            return Ok(None);
        };
        pos = next;
        if let Some((t, follow)) = sink.as_mut() {
            match KeyName::from_bytes(k) {
                Some(name) => follow.push(name),
                None => t.failures += 1,
            }
        }
    }
    if n == 0 {
        if let Some((t, _)) = sink {
            t.misses += 1;
        }
    }
    Ok(Some(pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::{CoreWorkload, YcsbKeys};

    fn session(w: CoreWorkload, resp: bool) -> YcsbSession {
        let keys = YcsbKeys {
            workload: w,
            records: 100,
            fields: 3,
            field_length: 20,
            ..YcsbKeys::default()
        };
        let cfg = Config::from_keys(&keys);
        let f = Factory {
            plan: Arc::new(Plan::new(&cfg, resp)),
            inserts: Arc::new(Inserts::new(cfg.records)),
            chooser: Chooser::new(cfg.distribution, cfg.records),
        };
        f.session(0, 1, 1)
    }

    fn mc_value(key: u64, gen: u16) -> Vec<u8> {
        let mut v = Vec::new();
        value::write_record(&mut v, key, 3, 20, gen);
        let mut r = format!("VALUE {:?} 0 {}\r\n", key_name(key), v.len()).into_bytes();
        r.extend_from_slice(&v);
        r.extend_from_slice(b"\r\nEND\r\n");
        r
    }

    fn resp_record(key: u64, gen: u16) -> Vec<u8> {
        let mut r = b"*6\r\n".to_vec();
        for f in 0..3 {
            bulk(&mut r, format!("field{f}").as_bytes());
            let mut v = Vec::new();
            value::write_field(&mut v, key, f, gen, 20);
            bulk(&mut r, &v);
        }
        r
    }

    /// The commands in a RESP request buffer, each as its arguments; panics unless the
    /// buffer is exactly whole arrays of bulk strings (what a server would read).
    fn commands_in(mut b: &[u8]) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let num = |b: &mut &[u8], tag: u8| -> usize {
            assert_eq!(b[0], tag, "{:?}", String::from_utf8_lossy(b));
            let nl = b.iter().position(|&c| c == b'\n').unwrap();
            let n = std::str::from_utf8(&b[1..nl - 1]).unwrap().parse().unwrap();
            *b = &b[nl + 1..];
            n
        };
        while !b.is_empty() {
            let n = num(&mut b, b'*');
            let args = (0..n)
                .map(|_| {
                    let len = num(&mut b, b'$');
                    let a = String::from_utf8_lossy(&b[..len]).to_string();
                    assert_eq!(&b[len..len + 2], b"\r\n");
                    b = &b[len + 2..];
                    a
                })
                .collect();
            out.push(args);
        }
        out
    }

    /// Issues one op of workload C (reads only) and answers it with `reply(key)`.
    fn read_with(resp: bool, reply: impl Fn(u64) -> Vec<u8>) -> Outcome {
        let mut s = session(CoreWorkload::C, resp);
        let mut out = Vec::new();
        assert!(s.issue(&mut out, Phase::Measure));
        let key = s.pending[0].key;
        let r = reply(key);
        for cut in 0..r.len() {
            assert_eq!(s.complete(&r[..cut]).unwrap(), None, "cut {cut}");
        }
        let o = s.complete(&r).unwrap().unwrap();
        assert_eq!(o.consumed, r.len());
        o
    }

    #[test]
    fn memcached_reads_are_checked_and_a_corrupted_reply_is_caught() {
        let good = read_with(false, |k| mc_value(k, 7));
        assert_eq!((good.cmd, good.verify_failures, good.misses), (READ, 0, 0));
        let bad = read_with(false, |k| {
            let mut r = mc_value(k, 7);
            let at = r.len() - 20;
            r[at] ^= 0x01;
            r
        });
        assert_eq!(bad.verify_failures, 1, "a flipped byte");
        let other = read_with(false, |k| mc_value(k + 1, 7));
        assert_eq!(other.verify_failures, 1, "another record");
        let miss = read_with(false, |_| b"END\r\n".to_vec());
        assert_eq!((miss.misses, miss.verify_failures), (1, 0));
    }

    #[test]
    fn redis_reads_are_checked_and_a_corrupted_reply_is_caught() {
        let good = read_with(true, |k| resp_record(k, 3));
        assert_eq!((good.verify_failures, good.misses), (0, 0));
        let bad = read_with(true, |k| {
            let mut r = resp_record(k, 3);
            let at = r.len() - 5;
            r[at] ^= 0x20;
            r
        });
        assert_eq!(bad.verify_failures, 1);
        let short = read_with(true, |k| {
            let mut r = b"*4\r\n".to_vec();
            r.extend_from_slice(&resp_record(k, 3)[4..]);
            let cut = r.len() - (4 + 6 + 2) - (5 + 20 + 2);
            r.truncate(cut);
            r
        });
        assert_eq!(short.verify_failures, 1, "a field missing");
        let miss = read_with(true, |_| b"*0\r\n".to_vec());
        assert_eq!(miss.misses, 1);
    }

    #[test]
    fn replies_that_cannot_be_framed_are_errors_not_waits() {
        let mut s = session(CoreWorkload::C, false);
        s.issue(&mut Vec::new(), Phase::Measure);
        assert!(s.complete(b"VALUES and more\r\n").is_err());
        let mut s = session(CoreWorkload::C, true);
        s.issue(&mut Vec::new(), Phase::Measure);
        assert!(s.complete(b"*2\r\n:1\r\n:2\r\n").is_err());
        assert!(s.complete(b"?\r\n").is_err());
        let o = s.complete(b"-ERR wrong\r\n").unwrap().unwrap();
        assert_eq!(o.error, Some("error"));
    }

    #[test]
    fn requests_are_well_formed() {
        let mut s = session(CoreWorkload::A, false);
        let mut out = Vec::new();
        assert!(s.issue(&mut out, Phase::Preload));
        let name = key_name(0);
        let head = format!("add {name:?} 0 0 60\r\n");
        assert!(out.starts_with(head.as_bytes()));
        assert_eq!(out.len(), head.len() + 60 + 2);
        let mut s = session(CoreWorkload::A, true);
        out.clear();
        assert!(s.issue(&mut out, Phase::Preload));
        let text = String::from_utf8_lossy(&out).to_string();
        assert!(
            text.starts_with(&format!(
                "*8\r\n$4\r\nHSET\r\n${}\r\n{name:?}\r\n$6\r\nfield0\r\n$20\r\n",
                name.as_bytes().len()
            )),
            "{text}"
        );
        assert!(
            text.contains("*4\r\n$4\r\nZADD\r\n$8\r\n_indices\r\n"),
            "{text}"
        );
        assert!(text.ends_with(&format!("{name:?}\r\n")), "{text}");
        let cmds = commands_in(&out);
        assert_eq!(cmds.len(), 2);
        assert_eq!((cmds[0][0].as_str(), cmds[0].len()), ("HSET", 2 + 2 * 3));
        let score = name.java_hash().to_string();
        assert_eq!(cmds[1], ["ZADD", "_indices", score.as_str(), name.as_str()]);
        let o = s.complete(b":3\r\n:1\r\n").unwrap().unwrap();
        assert_eq!(o.consumed, 8);
        out.clear();
        s.pending.clear();
        s.issue(&mut out, Phase::Measure);
        let cmds = commands_in(&out);
        let p = s.pending[0];
        match p.what {
            What::Read => assert_eq!(cmds, [["HGETALL", p.name.as_str()]]),
            What::Update => {
                assert_eq!((cmds.len(), cmds[0].len()), (1, 4));
                assert_eq!(cmds[0][..2], ["HSET", p.name.as_str()]);
            }
            w => panic!("workload A sent {w:?}"),
        }
    }

    #[test]
    fn a_redis_scan_reads_what_the_index_returned() {
        let mut s = session(CoreWorkload::E, true);
        let mut out = Vec::new();
        // Draw until a scan comes up (E is 95% scans).
        loop {
            out.clear();
            assert!(s.issue(&mut out, Phase::Measure));
            if s.pending[0].what == What::Index {
                break;
            }
            let key = s.pending[0].key;
            s.inserts.acknowledge(key);
            s.pending.clear();
        }
        let cmds = commands_in(&out);
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0][0], "ZRANGEBYSCORE");
        assert_eq!(
            cmds[0][1..4],
            [
                "_indices",
                &s.pending[0].name.java_hash().to_string(),
                "+inf"
            ]
        );
        assert_eq!(cmds[0][4..6], ["LIMIT", "0"]);
        let n: u64 = cmds[0][6].parse().unwrap();
        assert!((1..=100).contains(&n));
        let (a, b) = (key_name(4), key_name(9));
        let mut reply = b"*2\r\n".to_vec();
        bulk(&mut reply, a.as_bytes());
        bulk(&mut reply, b.as_bytes());
        let o = s.complete(&reply).unwrap().unwrap();
        assert_eq!((o.cmd, o.consumed), (SCAN_INDEX, reply.len()));
        out.clear();
        assert!(s.issue(&mut out, Phase::Measure));
        assert_eq!(
            commands_in(&out),
            [["HGETALL", a.as_str()], ["HGETALL", b.as_str()]]
        );
        let mut records = resp_record(4, 1);
        records.extend_from_slice(&resp_record(9, 2));
        let o = s.complete(&records).unwrap().unwrap();
        assert_eq!(
            (o.cmd, o.verify_failures, o.consumed),
            (SCAN, 0, records.len())
        );
        // The same scan answered with records in the wrong places.
        out.clear();
        s.follow.extend([a, b]);
        assert!(s.issue(&mut out, Phase::Measure));
        let mut swapped = resp_record(9, 1);
        swapped.extend_from_slice(&resp_record(4, 2));
        assert_eq!(s.complete(&swapped).unwrap().unwrap().verify_failures, 2);
    }

    #[test]
    fn rmw_is_one_operation_of_two_replies() {
        let mut s = session(CoreWorkload::F, false);
        let mut out = Vec::new();
        while {
            out.clear();
            s.pending.clear();
            s.issue(&mut out, Phase::Measure);
            s.pending[0].what != What::Rmw
        } {}
        let key = s.pending[0].key;
        assert!(out.starts_with(format!("get {:?}\r\nset ", key_name(key)).as_bytes()));
        let mut r = mc_value(key, 2);
        r.extend_from_slice(b"STORED\r\n");
        for cut in 0..r.len() {
            assert_eq!(s.complete(&r[..cut]).unwrap(), None);
        }
        let o = s.complete(&r).unwrap().unwrap();
        assert_eq!((o.cmd, o.consumed, o.verify_failures), (RMW, r.len(), 0));
    }

    #[test]
    fn the_mix_follows_the_workload() {
        for (w, want) in [
            (CoreWorkload::A, [0.5, 0.5, 0.0, 0.0, 0.0]),
            (CoreWorkload::B, [0.95, 0.05, 0.0, 0.0, 0.0]),
            (CoreWorkload::C, [1.0, 0.0, 0.0, 0.0, 0.0]),
            (CoreWorkload::D, [0.95, 0.0, 0.05, 0.0, 0.0]),
            (CoreWorkload::E, [0.0, 0.0, 0.05, 0.95, 0.0]),
            (CoreWorkload::F, [0.5, 0.0, 0.0, 0.0, 0.5]),
        ] {
            let mut s = session(w, true);
            let mut counts = [0u32; 6];
            let n = 40_000;
            let mut out = Vec::new();
            for _ in 0..n {
                out.clear();
                s.issue_op(&mut out);
                let p = s.pending.pop_back().unwrap();
                if p.what == What::Insert {
                    s.inserts.acknowledge(p.key);
                }
                counts[p.cmd as usize] += 1;
            }
            counts[SCAN as usize] += counts[SCAN_INDEX as usize];
            for (i, share) in want.iter().enumerate() {
                let got = f64::from(counts[i]) / f64::from(n);
                assert!((got - share).abs() < 0.01, "{w:?} op {i}: {got} vs {share}");
            }
        }
    }
}
