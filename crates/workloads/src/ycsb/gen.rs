//! Keys and their choice, as YCSB's `CoreWorkload` makes them.
//!
//! - Key names: `user` and the decimal FNV-1a 64 hash of the key number (YCSB's
//!   `buildKeyName` with `orderedinserts=false` and `Utils.fnvhash64`), written into a
//!   fixed buffer ([`KeyName`]): no allocation.
//! - [`Zipfian`]: Gray et al.'s generator ("Quickly generating billion-record synthetic
//!   databases", SIGMOD 1994) with YCSB's zeta, eta and alpha; it grows its zeta sum
//!   term by term when the item count grows (YCSB's incremental `zeta`).
//! - [`Chooser`]: uniform; scrambled zipfian (YCSB's `ScrambledZipfianGenerator`: a
//!   zipfian draw over 10^10 items with YCSB's precomputed zeta, hashed with FNV-1a 64
//!   onto the records, so hot records are spread over the key space); latest (YCSB's
//!   `SkewedLatestGenerator`: the newest acknowledged record minus a zipfian draw).
//! - [`Inserts`]: the key numbers inserts take (a counter shared by every client thread,
//!   starting at `records`) and the newest acknowledged one (YCSB's
//!   `AcknowledgedCounterGenerator`), which `latest` reads near.

use bakeoff_engine::rng::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the number's 8 bytes, low byte first, then the
/// absolute value as a Java long.
#[inline]
pub fn fnv64(mut v: u64) -> u64 {
    let mut h = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(FNV_PRIME_64);
        v >>= 8;
    }
    (h as i64).wrapping_abs() as u64
}

/// A key name (`user` and up to 20 digits) in a fixed buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct KeyName {
    buf: [u8; 24],
    len: u8,
}

impl KeyName {
    /// No name (a request that names no single key).
    pub const NONE: KeyName = KeyName {
        buf: [0; 24],
        len: 0,
    };

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }

    /// The name as text (it is ASCII).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// A name read back from a server (a scan's keys), if it fits.
    pub fn from_bytes(b: &[u8]) -> Option<KeyName> {
        let mut k = KeyName {
            buf: [0; 24],
            len: b.len() as u8,
        };
        k.buf.get_mut(..b.len())?.copy_from_slice(b);
        Some(k)
    }

    /// Java's `String.hashCode` of the name: the score of its entry in Redis's scan index
    /// (YCSB's redis binding scores keys by `key.hashCode()`).
    pub fn java_hash(&self) -> i32 {
        self.as_bytes()
            .iter()
            .fold(0i32, |h, &c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
    }
}

impl std::fmt::Debug for KeyName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// The name of key number `n`: `user` and `fnv64(n)` in decimal.
#[inline]
pub fn key_name(n: u64) -> KeyName {
    let mut k = KeyName {
        buf: [0; 24],
        len: 0,
    };
    k.buf[..4].copy_from_slice(b"user");
    let mut digits = [0; 20];
    let d = bakeoff_proto::decimal::unsigned_decimal(&mut digits, fnv64(n));
    k.buf[4..4 + d.len()].copy_from_slice(d);
    k.len = (4 + d.len()) as u8;
    k
}

/// YCSB's zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// YCSB's `ScrambledZipfianGenerator`: items of the underlying zipfian, and their zeta
/// for constant 0.99 as YCSB precomputes it.
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// Gray et al.'s zipfian over `0..items`, as YCSB's `ZipfianGenerator`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zipfian {
    items: u64,
    theta: f64,
    zeta2: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    half_pow_theta: f64,
}

/// zeta(n, theta) = sum over i in 1..=n of 1 / i^theta, continued from `start` terms
/// whose sum is `sum` (YCSB's incremental zeta).
fn zeta(start: u64, n: u64, theta: f64, sum: f64) -> f64 {
    (start..n).fold(sum, |s, i| s + 1.0 / ((i + 1) as f64).powf(theta))
}

impl Zipfian {
    /// Over `items` items, its zeta summed here (O(items): done once per run).
    pub fn new(items: u64, theta: f64) -> Zipfian {
        Zipfian::with_zetan(items, theta, zeta(0, items, theta, 0.0))
    }

    /// Over `items` items whose zeta is known.
    pub fn with_zetan(items: u64, theta: f64, zetan: f64) -> Zipfian {
        let zeta2 = zeta(0, 2, theta, 0.0);
        let mut z = Zipfian {
            items,
            theta,
            zeta2,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: 0.0,
            half_pow_theta: 0.5f64.powf(theta),
        };
        z.eta = z.eta_for();
        z
    }

    fn eta_for(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    pub fn items(&self) -> u64 {
        self.items
    }

    /// Grows to `items` (never shrinks), adding the new terms to zeta.
    pub fn grow(&mut self, items: u64) {
        if items > self.items {
            self.zetan = zeta(self.items, items, self.theta, self.zetan);
            self.items = items;
            self.eta = self.eta_for();
        }
    }

    /// A draw in `0..items`, 0 the most popular.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_theta {
            return 1.min(self.items.saturating_sub(1));
        }
        let v = self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha);
        (v as u64).min(self.items.saturating_sub(1))
    }
}

/// How a record to read, update or scan from is chosen (one per connection: `Latest`
/// grows with the inserts).
#[derive(Debug, Clone, PartialEq)]
pub enum Chooser {
    Uniform { records: u64 },
    Scrambled { zipf: Zipfian, records: u64 },
    Latest { zipf: Zipfian },
}

impl Chooser {
    /// The chooser for `records` loaded records (latest: its zeta summed once here; every
    /// connection clones it).
    pub fn new(d: super::RequestDistribution, records: u64) -> Chooser {
        let records = records.max(1);
        match d {
            super::RequestDistribution::Uniform => Chooser::Uniform { records },
            super::RequestDistribution::Zipfian => Chooser::Scrambled {
                zipf: Zipfian::with_zetan(SCRAMBLED_ITEMS + 1, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
                records,
            },
            super::RequestDistribution::Latest => Chooser::Latest {
                zipf: Zipfian::new((records - 1).max(1), ZIPFIAN_CONSTANT),
            },
        }
    }

    /// A record number; `inserts` tells `Latest` which record is the newest.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng, inserts: &Inserts) -> u64 {
        match self {
            Chooser::Uniform { records } => rng.below(*records),
            Chooser::Scrambled { zipf, records } => fnv64(zipf.next(rng)) % *records,
            Chooser::Latest { zipf } => {
                // As SkewedLatestGenerator: max - zipfian(max), over max items.
                let max = inserts.latest();
                if max == 0 {
                    return 0;
                }
                zipf.grow(max);
                max - zipf.next(rng).min(max - 1)
            }
        }
    }
}

/// Slots of the acknowledgement window: inserts may complete this far out of order.
const WINDOW: u64 = 1 << 20;

/// The key numbers of a run's inserts, shared by every connection of every client thread.
#[derive(Debug)]
pub struct Inserts {
    next: AtomicU64,
    /// The newest key number below which every insert has completed.
    limit: AtomicU64,
    /// Completed inserts above `limit`, a bit per key number modulo [`WINDOW`].
    done: Box<[AtomicU64]>,
    advancing: Mutex<()>,
}

impl Inserts {
    /// After `records` loaded records (numbers 0..records).
    pub fn new(records: u64) -> Inserts {
        Inserts {
            next: AtomicU64::new(records),
            limit: AtomicU64::new(records.saturating_sub(1)),
            done: (0..WINDOW / 64).map(|_| AtomicU64::new(0)).collect(),
            advancing: Mutex::new(()),
        }
    }

    /// A new key number to insert.
    #[inline]
    pub fn take(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The newest record every insert before which has completed.
    #[inline]
    pub fn latest(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Insert `n` completed (failed or not, as YCSB counts it): move `latest` past every
    /// completed number in a row. Whoever holds the lock advances for everyone.
    pub fn acknowledge(&self, n: u64) {
        let slot = n % WINDOW;
        self.done[(slot / 64) as usize].fetch_or(1 << (slot % 64), Ordering::AcqRel);
        let Ok(_held) = self.advancing.try_lock() else {
            return;
        };
        let mut at = self.limit.load(Ordering::Acquire) + 1;
        loop {
            let s = at % WINDOW;
            let bit = 1u64 << (s % 64);
            let word = &self.done[(s / 64) as usize];
            if word.load(Ordering::Acquire) & bit == 0 {
                break;
            }
            word.fetch_and(!bit, Ordering::AcqRel);
            self.limit.store(at, Ordering::Release);
            at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::RequestDistribution;

    #[test]
    fn fnv_and_key_names_are_ycsbs() {
        // FNV-1a 64 over bytes (test vector: "a" -> 0xaf63dc4c8601ec8c); YCSB's hashes
        // the number's 8 bytes low byte first and takes the absolute value.
        let bytes = |b: &[u8]| {
            b.iter().fold(FNV_OFFSET_BASIS_64, |h, &c| {
                (h ^ u64::from(c)).wrapping_mul(FNV_PRIME_64)
            })
        };
        assert_eq!(bytes(b"a"), 0xaf63_dc4c_8601_ec8c);
        for n in [0u64, 1, 255, 256, 123_456_789, u64::MAX / 3] {
            let h = bytes(&n.to_le_bytes()) as i64;
            assert_eq!(fnv64(n), h.wrapping_abs() as u64, "{n}");
        }
        let k = key_name(0);
        assert_eq!(k.as_bytes(), format!("user{}", fnv64(0)).as_bytes());
        assert_eq!(
            key_name(12345).as_bytes(),
            format!("user{}", fnv64(12345)).as_bytes()
        );
        assert_ne!(fnv64(1), fnv64(2));
        assert!(fnv64(u64::MAX) <= i64::MAX as u64 + 1);
        // Java: "abc".hashCode() == 96354.
        let n = KeyName::from_bytes(b"abc").unwrap();
        assert_eq!(n.java_hash(), 96354);
        assert!(KeyName::from_bytes(&[b'x'; 25]).is_none());
    }

    #[test]
    fn zipfian_is_skewed_and_in_range() {
        let z = Zipfian::new(1000, ZIPFIAN_CONSTANT);
        let mut rng = Rng::new(1);
        let mut counts = vec![0u32; 1000];
        let n = 200_000;
        for _ in 0..n {
            let v = z.next(&mut rng);
            assert!(v < 1000);
            counts[v as usize] += 1;
        }
        // Rank 0's share is 1/zeta(1000, 0.99) ~ 0.134; rank 1 about half of it.
        let share0 = f64::from(counts[0]) / f64::from(n);
        assert!((0.12..0.15).contains(&share0), "{share0}");
        let ratio = f64::from(counts[0]) / f64::from(counts[1]);
        assert!((1.7..2.3).contains(&ratio), "{ratio}");
        assert!(counts[0] > counts[10] && counts[10] > counts[500]);
        let top10: u32 = counts[..10].iter().sum();
        assert!(f64::from(top10) / f64::from(n) > 0.35, "{top10}");
    }

    #[test]
    fn zipfian_grows_like_a_fresh_one() {
        let mut grown = Zipfian::new(500, ZIPFIAN_CONSTANT);
        grown.grow(1000);
        let fresh = Zipfian::new(1000, ZIPFIAN_CONSTANT);
        assert!((grown.zetan - fresh.zetan).abs() < 1e-9);
        assert!((grown.eta - fresh.eta).abs() < 1e-12);
        assert_eq!(grown.items(), 1000);
        grown.grow(10);
        assert_eq!(grown.items(), 1000, "never shrinks");
    }

    #[test]
    fn scrambled_zipfian_spreads_hot_records() {
        let inserts = Inserts::new(10_000);
        let mut c = Chooser::new(RequestDistribution::Zipfian, 10_000);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; 10_000];
        let n = 300_000;
        for _ in 0..n {
            let v = c.next(&mut rng, &inserts);
            counts[v as usize] += 1;
        }
        // The hottest record is the scrambled rank 0: fnv64(0) mod records.
        let hottest = (0..10_000).max_by_key(|&i| counts[i]).unwrap() as u64;
        assert_eq!(hottest, fnv64(0) % 10_000);
        let share = f64::from(counts[hottest as usize]) / f64::from(n);
        // Rank 0 of 10^10 items: 1/26.47 ~ 0.038 (plus collisions of the hash).
        assert!((0.03..0.05).contains(&share), "{share}");
        // Skewed, but spread: the 1% hottest records take a big share, and are not
        // neighbours of each other.
        let mut sorted = counts.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top100: u32 = sorted[..100].iter().sum();
        assert!(f64::from(top100) / f64::from(n) > 0.15, "{top100}");
        assert!(counts.iter().filter(|&&c| c > 0).count() > 5_000);
        let second = (0..10_000u64)
            .filter(|&i| i != hottest)
            .max_by_key(|&i| counts[i as usize])
            .unwrap();
        assert!(second.abs_diff(hottest) > 1, "hot records are scattered");
    }

    #[test]
    fn uniform_covers_the_records() {
        let inserts = Inserts::new(100);
        let mut c = Chooser::new(RequestDistribution::Uniform, 100);
        let mut rng = Rng::new(3);
        let mut counts = [0u32; 100];
        for _ in 0..100_000 {
            counts[c.next(&mut rng, &inserts) as usize] += 1;
        }
        assert!(counts.iter().all(|&n| (800..1200).contains(&n)));
    }

    #[test]
    fn latest_reads_near_the_newest_and_follows_inserts() {
        let inserts = Inserts::new(1000);
        let mut c = Chooser::new(RequestDistribution::Latest, 1000);
        let mut rng = Rng::new(5);
        let draws: Vec<u64> = (0..50_000).map(|_| c.next(&mut rng, &inserts)).collect();
        assert!(draws.iter().all(|&d| d <= 999));
        let newest = draws.iter().filter(|&&d| d == 999).count() as f64 / 50_000.0;
        assert!(newest > 0.1, "{newest}");
        let near = draws.iter().filter(|&&d| d >= 990).count() as f64 / 50_000.0;
        assert!(near > 0.3, "{near}");
        // 200 inserts complete (out of order): reads move up with them.
        let taken: Vec<u64> = (0..200).map(|_| inserts.take()).collect();
        assert_eq!(taken[0], 1000);
        for &n in taken.iter().rev() {
            inserts.acknowledge(n);
        }
        assert_eq!(inserts.latest(), 1199);
        let draws: Vec<u64> = (0..10_000).map(|_| c.next(&mut rng, &inserts)).collect();
        assert!(draws.iter().all(|&d| d <= 1199));
        assert!(draws.iter().filter(|&&d| d == 1199).count() > 900);
    }

    #[test]
    fn acknowledged_counter_waits_for_gaps() {
        let i = Inserts::new(10);
        assert_eq!(i.latest(), 9);
        let (a, b, c) = (i.take(), i.take(), i.take());
        i.acknowledge(b);
        i.acknowledge(c);
        assert_eq!(i.latest(), 9, "10 is still in flight");
        i.acknowledge(a);
        assert_eq!(i.latest(), 12);
    }

    #[test]
    fn draws_repeat_with_the_seed() {
        let inserts = Inserts::new(5000);
        for d in [
            RequestDistribution::Zipfian,
            RequestDistribution::Uniform,
            RequestDistribution::Latest,
        ] {
            let mut a = Chooser::new(d, 5000);
            let mut b = a.clone();
            let (mut ra, mut rb) = (Rng::new(9), Rng::new(9));
            let xs: Vec<u64> = (0..100).map(|_| a.next(&mut ra, &inserts)).collect();
            let ys: Vec<u64> = (0..100).map(|_| b.next(&mut rb, &inserts)).collect();
            assert_eq!(xs, ys);
        }
    }
}
