//! A small random number generator (SplitMix64), seeded from the OS through std, so
//! the sample needs no extra crate.

use std::hash::{BuildHasher, RandomState};

/// SplitMix64: fast, good enough for picking moves; not for secrets.
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator with a fresh seed from the OS random source.
    pub fn from_entropy() -> Self {
        Rng::with_seed(RandomState::new().hash_one(std::process::id()))
    }

    /// A generator that repeats the same sequence for the same seed.
    pub fn with_seed(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n > 0), by Lemire's multiply-and-reject.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        let n = n as u64;
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if (product as u64) >= threshold {
                return (product >> 64) as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Rng::with_seed(7);
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            seen[rng.below(5)] += 1;
        }
        assert!(
            seen.iter().all(|&count| (800..1200).contains(&count)),
            "{seen:?}"
        );
    }

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (Rng::with_seed(1), Rng::with_seed(1));
        assert!((0..10).all(|_| a.next_u64() == b.next_u64()));
    }
}
