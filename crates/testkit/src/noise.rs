//! Seeded noise for simulations in tests (scripted runs, simulated servers and
//! candidates): splitmix64 draws, uniform deviates and normal deviates by Box-Muller.
//! The same seed gives the same stream on every machine.

/// splitmix64: a small seeded generator for simulations.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform deviate in (0, 1): the 53-bit draw's midpoint, never 0 or 1.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A uniform deviate in [0, 1): the 53-bit draw itself.
    pub fn uniform_from_zero(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal deviate from two [`SplitMix64::uniform`] draws.
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        box_muller(u, v)
    }
}

/// The Box-Muller transform's first deviate of two uniform deviates (`u` above 0).
pub fn box_muller(u: f64, v: f64) -> f64 {
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}
