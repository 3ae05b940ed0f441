//! Key choice: uniform, zipfian (Gray et al.'s generator as YCSB uses it, scrambled so hot
//! keys spread over the key space), or sysbench's "special" hot spot. Keys are written as
//! `key:` and ten digits, so a key names its own id.

use bakeoff_engine::rng::Rng;

/// How keys are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDistribution {
    Uniform,
    /// Skew theta in (0, 1).
    Zipfian {
        theta: f64,
    },
    /// `res` percent of accesses go to `pct` percent of the keys (sysbench
    /// rand-spec-res / rand-spec-pct).
    Special {
        pct: f64,
        res: f64,
    },
}

/// Draws key ids in 0..keys.
#[derive(Debug, Clone)]
pub struct KeyChooser {
    keys: u64,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Uniform,
    Zipf {
        zetan: f64,
        alpha: f64,
        eta: f64,
        half_pow_theta: f64,
        prime: u64,
    },
    Special {
        hot: u64,
        res: f64,
        prime: u64,
    },
}

impl KeyChooser {
    pub fn new(keys: u64, d: KeyDistribution) -> KeyChooser {
        let keys = keys.max(1);
        let prime = scramble_prime(keys);
        let kind = match d {
            KeyDistribution::Uniform => Kind::Uniform,
            KeyDistribution::Zipfian { theta } => {
                let zetan = zeta(keys, theta);
                let zeta2 = zeta(2, theta);
                Kind::Zipf {
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / keys as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                    half_pow_theta: 0.5f64.powf(theta),
                    prime,
                }
            }
            KeyDistribution::Special { pct, res } => Kind::Special {
                hot: ((keys as f64 * pct / 100.0).round() as u64).clamp(1, keys),
                res: res / 100.0,
                prime,
            },
        };
        KeyChooser { keys, kind }
    }

    pub fn keys(&self) -> u64 {
        self.keys
    }

    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let rank = self.next_rank(rng);
        match &self.kind {
            Kind::Uniform => rank,
            Kind::Zipf { prime, .. } | Kind::Special { prime, .. } => {
                scramble(rank, *prime, self.keys)
            }
        }
    }

    /// A draw by popularity rank (0 = the most popular), before keys are scrambled over
    /// the key space: sysbench's generators give the popular ids in id order.
    #[inline]
    pub fn next_rank(&self, rng: &mut Rng) -> u64 {
        match &self.kind {
            Kind::Uniform => rng.below(self.keys),
            Kind::Zipf {
                zetan,
                alpha,
                eta,
                half_pow_theta,
                ..
            } => {
                let u = rng.unit();
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < 1.0 + half_pow_theta {
                    1
                } else {
                    ((self.keys as f64 * (eta * u - eta + 1.0).powf(*alpha)) as u64)
                        .min(self.keys - 1)
                }
            }
            Kind::Special { hot, res, .. } => {
                if rng.unit() < *res || *hot == self.keys {
                    rng.below(*hot)
                } else {
                    hot + rng.below(self.keys - hot)
                }
            }
        }
    }

    /// The key ids of the hot set (special) in rank order; for tests.
    pub fn rank_to_key(&self, rank: u64) -> u64 {
        match &self.kind {
            Kind::Uniform => rank,
            Kind::Zipf { prime, .. } | Kind::Special { prime, .. } => {
                scramble(rank, *prime, self.keys)
            }
        }
    }
}

/// A permutation of 0..n: multiplication by a prime that does not divide n.
fn scramble(rank: u64, prime: u64, n: u64) -> u64 {
    ((rank as u128 * prime as u128) % n as u128) as u64
}

fn scramble_prime(n: u64) -> u64 {
    [1_000_000_007u64, 998_244_353, 2_147_483_647]
        .into_iter()
        .find(|p| !n.is_multiple_of(*p))
        .unwrap_or(1)
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

/// Writes `key:0000001234` for id 1234 into `out`.
#[inline]
pub fn write_key(out: &mut Vec<u8>, id: u64) {
    write_key_as(out, b"key:", id);
}

/// A key id as `prefix` and ten digits (Redis's other types: `list:`, `hash:`, `ctr:`).
pub fn write_key_as(out: &mut Vec<u8>, prefix: &[u8], id: u64) {
    let mut digits = [b'0'; 10];
    let mut v = id;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(prefix);
    out.extend_from_slice(&digits);
}

/// The id a key names, if it is one of ours.
pub fn parse_key(k: &[u8]) -> Option<u64> {
    let digits = k.strip_prefix(b"key:")?;
    if digits.len() != 10 {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, d| {
        d.is_ascii_digit().then(|| acc * 10 + u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(c: &KeyChooser, draws: usize) -> Vec<u32> {
        let mut rng = Rng::new(9);
        let mut v = vec![0u32; c.keys() as usize];
        for _ in 0..draws {
            v[c.next(&mut rng) as usize] += 1;
        }
        v
    }

    #[test]
    fn uniform_covers_the_space() {
        let v = counts(&KeyChooser::new(100, KeyDistribution::Uniform), 100_000);
        assert!(v.iter().all(|&n| (800..1200).contains(&n)), "{v:?}");
    }

    #[test]
    fn zipfian_is_skewed_and_scrambled() {
        let c = KeyChooser::new(1000, KeyDistribution::Zipfian { theta: 0.99 });
        let v = counts(&c, 200_000);
        let top = v[c.rank_to_key(0) as usize] as f64 / 200_000.0;
        // rank 0's share for n=1000, theta 0.99 is 1/zeta(1000) ~ 0.13
        assert!((0.10..0.17).contains(&top), "{top}");
        let mut sorted = v.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = sorted[..10].iter().sum();
        assert!(top10 as f64 / 200_000.0 > 0.3);
        assert_ne!(
            c.rank_to_key(1),
            1,
            "hot keys should be spread, not adjacent"
        );
    }

    #[test]
    fn special_sends_res_percent_to_pct_percent() {
        let c = KeyChooser::new(
            10_000,
            KeyDistribution::Special {
                pct: 1.0,
                res: 75.0,
            },
        );
        let hot: std::collections::HashSet<u64> = (0..100).map(|r| c.rank_to_key(r)).collect();
        let mut rng = Rng::new(1);
        let n = 100_000;
        let hits = (0..n).filter(|_| hot.contains(&c.next(&mut rng))).count();
        let share = hits as f64 / n as f64;
        assert!((0.73..0.77).contains(&share), "{share}");
    }

    #[test]
    fn keys_round_trip() {
        let mut out = Vec::new();
        write_key(&mut out, 1234);
        assert_eq!(out, b"key:0000001234");
        assert_eq!(parse_key(&out), Some(1234));
        assert_eq!(parse_key(b"key:12"), None);
        assert_eq!(parse_key(b"other:0000001234"), None);
    }

    #[test]
    fn seeded_draws_repeat() {
        let c = KeyChooser::new(1000, KeyDistribution::Zipfian { theta: 0.5 });
        let (mut a, mut b) = (Rng::new(3), Rng::new(3));
        let xs: Vec<u64> = (0..100).map(|_| c.next(&mut a)).collect();
        let ys: Vec<u64> = (0..100).map(|_| c.next(&mut b)).collect();
        assert_eq!(xs, ys);
    }
}
