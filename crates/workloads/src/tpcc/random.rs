//! The specification's random rules (clauses 2.1.6 and 4.3.2): NURand and its constants,
//! customer last names, random a-strings and n-strings, zip codes, "ORIGINAL" data,
//! credit ratings and the customer permutation of the initial orders.
//!
//! The string generators append bytes to a caller's buffer (the loader builds rows
//! straight into one); `*_string` wrappers return a `String` for the transactions.

use bakeoff_engine::rng::{mix, Rng};

/// The ten syllables of customer last names (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Uniform in [x, y] (the specification's `random(x, y)`); needs x <= y.
pub fn uniform(rng: &mut Rng, x: u64, y: u64) -> u64 {
    x + rng.below(y - x + 1)
}

/// NURand(A, x, y) with run constant `c` (clause 2.1.6):
/// `(((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x`.
pub fn nurand(rng: &mut Rng, a: u64, c: u64, x: u64, y: u64) -> u64 {
    (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
}

/// The C constants of NURand for C_LAST (A = 255), C_ID (A = 1023) and OL_I_ID (A = 8191).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constants {
    pub c_last: u64,
    pub c_id: u64,
    pub ol_i_id: u64,
}

/// The allowed distances |C_run - C_load| for C_LAST (clause 2.1.6.1).
fn c_last_delta_ok(delta: u64) -> bool {
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

impl Constants {
    /// The constants the loader used. Fixed, so that a run in another process (or
    /// against a database loaded earlier) knows C_LOAD for C_LAST.
    pub const LOAD: Constants = Constants {
        c_last: 157,
        c_id: 259,
        ol_i_id: 7911,
    };

    /// Run constants from `seed`: C_LAST differs from the load's by 65..=119 but not 96
    /// or 112 (clause 2.1.6.1); C_ID and OL_I_ID are any value in their range.
    pub fn for_run(seed: u64) -> Constants {
        let mut rng = Rng::new(mix(seed ^ 0x7cc0_c0a5));
        let load = Constants::LOAD.c_last;
        let allowed: Vec<u64> = (0..=255u64)
            .filter(|&c| c_last_delta_ok(c.abs_diff(load)))
            .collect();
        Constants {
            c_last: allowed[rng.below(allowed.len() as u64) as usize],
            c_id: uniform(&mut rng, 0, 1023),
            ol_i_id: uniform(&mut rng, 0, 8191),
        }
    }

    /// A customer last-name number: NURand(255, 0, 999).
    pub fn last_name_number(&self, rng: &mut Rng) -> u64 {
        nurand(rng, 255, self.c_last, 0, 999)
    }

    /// A customer id: NURand(1023, 1, 3000).
    pub fn customer_id(&self, rng: &mut Rng) -> u64 {
        nurand(rng, 1023, self.c_id, 1, 3000)
    }

    /// An item id: NURand(8191, 1, 100000).
    pub fn item_id(&self, rng: &mut Rng) -> u64 {
        nurand(rng, 8191, self.ol_i_id, 1, 100_000)
    }
}

/// Appends the last name for `n` in 0..=999: one syllable per decimal digit (4.3.2.3).
pub fn push_last_name(out: &mut Vec<u8>, n: u64) {
    debug_assert!(n <= 999, "last-name number {n} out of 0..=999");
    for d in [n / 100, n / 10 % 10, n % 10] {
        out.extend_from_slice(SYLLABLES[d as usize].as_bytes());
    }
}

/// The last name for `n` in 0..=999, e.g. 371 -> "PRICALLYOUGHT".
pub fn last_name(n: u64) -> String {
    let mut v = Vec::with_capacity(15);
    push_last_name(&mut v, n);
    String::from_utf8(v).expect("syllables are ASCII")
}

/// Appends `len` random characters of `set`. One 64-bit draw serves several characters:
/// its bits are read as a fraction whose successive base-`set.len()` digits are the
/// characters (8 per draw for 62 symbols leaves 16 bits of precision: the bias is nil).
fn push_chars(rng: &mut Rng, out: &mut Vec<u8>, len: usize, set: &[u8], per_draw: usize) {
    let n = set.len() as u128;
    let mut left = len;
    while left > 0 {
        let mut x = rng.next_u64();
        for _ in 0..left.min(per_draw) {
            let wide = x as u128 * n;
            out.push(set[(wide >> 64) as usize]);
            x = wide as u64;
        }
        left = left.saturating_sub(per_draw);
    }
}

/// Appends a random a-string (alphanumeric) of random length in [x, y] (4.3.2.2).
pub fn push_a_string(rng: &mut Rng, out: &mut Vec<u8>, x: usize, y: usize) {
    let len = uniform(rng, x as u64, y as u64) as usize;
    push_chars(rng, out, len, ALNUM, 8);
}

/// Appends a random n-string (digits) of random length in [x, y] (4.3.2.2).
pub fn push_n_string(rng: &mut Rng, out: &mut Vec<u8>, x: usize, y: usize) {
    let len = uniform(rng, x as u64, y as u64) as usize;
    push_chars(rng, out, len, b"0123456789", 16);
}

/// Appends `len` random upper-case letters (the two letters of a state).
pub fn push_letters(rng: &mut Rng, out: &mut Vec<u8>, len: usize) {
    push_chars(rng, out, len, &ALNUM[10..36], 8);
}

/// Appends a zip code: a random n-string of 4 digits and "11111" (4.3.2.7).
pub fn push_zip(rng: &mut Rng, out: &mut Vec<u8>) {
    push_n_string(rng, out, 4, 4);
    out.extend_from_slice(b"11111");
}

/// Appends I_DATA / S_DATA: an a-string in [x, y]; in 10% of rows "ORIGINAL" replaces
/// eight characters at a random position (4.3.3.1).
pub fn push_data(rng: &mut Rng, out: &mut Vec<u8>, x: usize, y: usize) {
    let start = out.len();
    push_a_string(rng, out, x.max(8), y.max(8));
    if rng.below(10) == 0 {
        let len = out.len() - start;
        let at = start + rng.below((len - 8 + 1) as u64) as usize;
        out[at..at + 8].copy_from_slice(b"ORIGINAL");
    }
}

/// C_CREDIT: "BC" (bad credit) for 10% of customers, else "GC".
pub fn credit(rng: &mut Rng) -> &'static str {
    if rng.below(10) == 0 {
        "BC"
    } else {
        "GC"
    }
}

/// A random permutation of 1..=n (O_C_ID of the initial orders).
pub fn permutation(rng: &mut Rng, n: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=n).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

fn to_string(v: Vec<u8>) -> String {
    String::from_utf8(v).expect("generated strings are ASCII")
}

/// A random a-string of length in [x, y].
pub fn a_string(rng: &mut Rng, x: usize, y: usize) -> String {
    let mut v = Vec::with_capacity(y);
    push_a_string(rng, &mut v, x, y);
    to_string(v)
}

/// A random n-string of length in [x, y].
pub fn n_string(rng: &mut Rng, x: usize, y: usize) -> String {
    let mut v = Vec::with_capacity(y);
    push_n_string(rng, &mut v, x, y);
    to_string(v)
}

/// A random zip code.
pub fn zip(rng: &mut Rng) -> String {
    let mut v = Vec::with_capacity(9);
    push_zip(rng, &mut v);
    to_string(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_from_syllables() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(40), "BARPRESBAR");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_in_range_and_skewed() {
        let mut rng = Rng::new(1);
        for (a, c, x, y) in [
            (255, 157, 0, 999),
            (1023, 259, 1, 3000),
            (8191, 7911, 1, 100_000),
        ] {
            let mut counts = vec![0u32; (y - x + 1) as usize];
            let draws = 50 * counts.len() as u32;
            for _ in 0..draws {
                let v = nurand(&mut rng, a, c, x, y);
                assert!((x..=y).contains(&v), "NURand({a},{x},{y}) gave {v}");
                counts[(v - x) as usize] += 1;
            }
            let max = *counts.iter().max().unwrap();
            // Uniform draws would give about 50 per value.
            assert!(max > 150, "NURand({a},{x},{y}) looks uniform: max {max}");
        }
    }

    #[test]
    fn run_constants_follow_clause_2_1_6_1() {
        for seed in 0..2000 {
            let c = Constants::for_run(seed);
            let delta = c.c_last.abs_diff(Constants::LOAD.c_last);
            assert!(c_last_delta_ok(delta), "seed {seed}: C_LAST {}", c.c_last);
            assert!(c.c_last <= 255 && c.c_id <= 1023 && c.ol_i_id <= 8191);
        }
        assert_ne!(Constants::for_run(1), Constants::for_run(2));
    }

    #[test]
    fn strings_have_their_lengths_and_alphabets() {
        let mut rng = Rng::new(7);
        for _ in 0..10_000 {
            let s = a_string(&mut rng, 14, 24);
            assert!((14..=24).contains(&s.len()), "{s}");
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()), "{s}");
            let n = n_string(&mut rng, 16, 16);
            assert!(
                n.len() == 16 && n.bytes().all(|b| b.is_ascii_digit()),
                "{n}"
            );
        }
        let z = zip(&mut rng);
        assert!(z.len() == 9 && z.ends_with("11111"), "{z}");
        let mut both = Vec::new();
        push_letters(&mut rng, &mut both, 2);
        assert!(both.iter().all(|b| b.is_ascii_uppercase()));
    }

    #[test]
    fn original_in_about_ten_percent() {
        let mut rng = Rng::new(3);
        let mut hits = 0;
        for _ in 0..10_000 {
            let mut v = Vec::new();
            push_data(&mut rng, &mut v, 26, 50);
            assert!((26..=50).contains(&v.len()));
            if v.windows(8).any(|w| w == b"ORIGINAL") {
                hits += 1;
            }
        }
        assert!((850..=1150).contains(&hits), "ORIGINAL in {hits} of 10000");
    }

    #[test]
    fn credit_and_permutation() {
        let mut rng = Rng::new(5);
        let bad = (0..10_000).filter(|_| credit(&mut rng) == "BC").count();
        assert!((850..=1150).contains(&bad), "{bad}");
        let mut p = permutation(&mut rng, 3000);
        assert_ne!(p[..10], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<u32>>());
    }
}
