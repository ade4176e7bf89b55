//! The seeded pseudo-random sequence every draw of bench comes from: SplitMix64 (from
//! rand_xoshiro), the same numbers for the same seed on every machine and every run — the
//! roles' operations and targets, Poisson arrivals, the change points' permutations and the
//! tests' simulated noise. Records name it ([`GENERATOR`]).

use rand_core::{RngCore, SeedableRng};

/// The generator, as records name it beside the seed.
pub const GENERATOR: &str = "SplitMix64";

#[derive(Debug)]
pub struct Rng(rand_xoshiro::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(rand_xoshiro::SplitMix64::seed_from_u64(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in (0, 1): the top 53 bits, centred in their interval (never 0 or 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller, one of the pair: rand_distr's `Normal` draws by the
    /// ziggurat, other numbers from the same seed, so the simulations' figures in
    /// docs/results.md stay reproducible with this).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// Fisher–Yates.
    pub fn shuffle(&mut self, x: &mut [f64]) {
        for i in (1..x.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            x.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64 as Steele, Lea and Flood define it (the reference values for seed 42):
    /// the plans' seeds give the draws they gave before.
    #[test]
    fn the_sequence_is_splitmix64s() {
        let mut r = Rng::new(42);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            first,
            [
                13679457532755275413,
                2949826092126892291,
                5139283748462763858
            ]
        );
        let u = Rng::new(7).uniform();
        assert!(u > 0.0 && u < 1.0);
    }
}
