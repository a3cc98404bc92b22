//! The harness's own pseudo-random number generator.
//!
//! A campaign is only worth something if `--seed 17` means the same program
//! on every machine, with every Rust version and every version of every
//! crate. So the generator is written here, from the published algorithms,
//! and never borrowed from a crate whose stream or whose distributions may
//! change between releases:
//!
//! - [`SplitMix64`] (Steele, Lea, Flood 2014; Vigna's `splitmix64.c`) turns a
//!   64-bit seed into well-mixed words. It is used only to expand a seed into
//!   the xoshiro state, as the xoshiro authors recommend.
//! - [`Rng`] is xoshiro256** 1.0 (Blackman, Vigna 2018;
//!   `xoshiro256starstar.c`): 256 bits of state, period 2^256 - 1.
//! - [`Rng::below`] draws an integer uniformly from `0..n` by rejection, so
//!   that no value is more likely than another (no modulo bias).
//!
//! Both are pinned to the reference outputs by tests (tests/gate/stimulus.rs).
//!
//! [`Rng`] also implements the traits of the `rand` ecosystem
//! (`rand_core` 0.10: `TryRng` with no error, which makes it a
//! `rand_core::Rng`, the trait earlier versions called `RngCore`, and
//! `SeedableRng`), so code written against them can draw from it. They
//! only hand on this stream: `next_u64` is the inherent one,
//! `seed_from_u64` is [`Rng::new`].

use rand_core::{Infallible, SeedableRng, TryRng};

/// SplitMix64: a 64-bit counter passed through a mixing function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The golden-ratio increment of the reference implementation.
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256**: the generator every stimulus decision is drawn from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The state is the first four outputs of [`SplitMix64`] seeded with
    /// `seed`. SplitMix64 never yields four zero words in a row from any
    /// seed, so the all-zero state (a fixed point of xoshiro) cannot arise.
    pub fn new(seed: u64) -> Rng {
        let mut sm = SplitMix64::new(seed);
        Rng {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }

    /// A generator with an explicit state, for the reference test vectors.
    ///
    /// # Panics
    /// On the all-zero state, which would emit zero forever.
    pub fn from_state(s: [u64; 4]) -> Rng {
        assert!(s != [0; 4], "xoshiro256** state must not be all zero");
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Two draws: the first is the low half.
    pub fn next_u128(&mut self) -> u128 {
        let lo = self.next_u64();
        let hi = self.next_u64();
        (u128::from(hi) << 64) | u128::from(lo)
    }

    /// Uniform in `0..n`.
    ///
    /// Rejection sampling: of the 2^64 possible draws, the lowest
    /// `2^64 mod n` are thrown away, which leaves a multiple of `n` values,
    /// each residue equally often. At most half the draws are rejected (for
    /// `n` just above 2^63), usually almost none.
    ///
    /// # Panics
    /// If `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0) has no value to return");
        // 2^64 mod n, computed in 64 bits: (2^64 - n) mod n.
        let rejected = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            if x >= rejected {
                return x % n;
            }
        }
    }

    /// Uniform in `lo..=hi`.
    ///
    /// # Panics
    /// If `lo > hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            // The full 64-bit range: every draw is already uniform.
            None => self.next_u64(),
        }
    }

    /// [`range`](Rng::range) for `u32` bounds.
    pub fn range_u32(&mut self, lo: u32, hi: u32) -> u32 {
        self.range(u64::from(lo), u64::from(hi)) as u32
    }

    /// True with probability `pct` percent (0 never, 100 always).
    pub fn percent(&mut self, pct: u32) -> bool {
        self.below(100) < u64::from(pct)
    }

    /// A uniformly chosen element.
    ///
    /// # Panics
    /// If `items` is empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// An index drawn with probability proportional to its weight.
    ///
    /// # Panics
    /// If all weights are zero.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < u64::from(w) {
                return i;
            }
            x -= u64::from(w);
        }
        unreachable!("x < total = sum of the weights")
    }

    /// A value of `bits` random bits (`bits <= 64`).
    pub fn bits(&mut self, bits: u32) -> u64 {
        match bits {
            0 => 0,
            64 => self.next_u64(),
            _ => self.next_u64() >> (64 - bits),
        }
    }
}

/// The `rand_core` view of the same stream: a draw of 64 bits is the
/// inherent [`Rng::next_u64`], one of 32 bits the high half of a draw (as
/// [`Rng::bits`] takes it), bytes the draws' little-endian bytes in order.
impl TryRng for Rng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.bits(32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(Rng::next_u64(self))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        rand_core::utils::fill_bytes_via_next_word(dst, || Ok(Rng::next_u64(self)))
    }
}

impl SeedableRng for Rng {
    /// The state, as four little-endian words.
    type Seed = [u8; 32];

    /// The generator whose state the seed holds, as [`Rng::from_state`];
    /// the all-zero seed, a state xoshiro never leaves, gives the generator
    /// of `seed_from_u64(0)` instead (`from_seed` must not panic).
    fn from_seed(seed: [u8; 32]) -> Rng {
        let state: [u64; 4] = rand_core::utils::read_words(&seed);
        if state == [0; 4] {
            Rng::new(0)
        } else {
            Rng::from_state(state)
        }
    }

    /// [`Rng::new`]: the state is expanded from `seed` by SplitMix64, so a
    /// campaign's seed means the same stream through either interface.
    fn seed_from_u64(seed: u64) -> Rng {
        Rng::new(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `rand_core` methods give the stream the inherent ones do, from
    /// a seed and from an explicit state.
    #[test]
    fn the_rand_core_traits_give_the_inherent_stream() {
        fn draw_u64(rng: &mut impl rand_core::Rng) -> u64 {
            rng.next_u64()
        }
        fn draw_u32(rng: &mut impl rand_core::Rng) -> u32 {
            rng.next_u32()
        }
        fn fill(rng: &mut impl rand_core::Rng, dst: &mut [u8]) {
            rng.fill_bytes(dst)
        }
        for seed in [0, 1, 17, u64::MAX] {
            let (mut inherent, mut traits) = (Rng::new(seed), Rng::seed_from_u64(seed));
            assert_eq!(traits, inherent);
            for _ in 0..64 {
                assert_eq!(draw_u64(&mut traits), inherent.next_u64());
                assert_eq!(u64::from(draw_u32(&mut traits)), inherent.bits(32));
            }
            // 20 bytes: two whole draws and the low four bytes of a third,
            // whose high half is dropped.
            let mut bytes = [0u8; 20];
            fill(&mut traits, &mut bytes);
            let words = [
                inherent.next_u64(),
                inherent.next_u64(),
                inherent.next_u64(),
            ];
            let expected: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(bytes[..], expected[..20]);
            assert_eq!(draw_u64(&mut traits), inherent.next_u64());
        }
        let state = [1, 2, 3, 4];
        let mut seed = [0u8; 32];
        for (chunk, word) in seed.chunks_exact_mut(8).zip(state) {
            chunk.copy_from_slice(&u64::to_le_bytes(word));
        }
        let (mut inherent, mut traits) = (Rng::from_state(state), Rng::from_seed(seed));
        for _ in 0..64 {
            assert_eq!(draw_u64(&mut traits), inherent.next_u64());
        }
        assert_eq!(Rng::from_seed([0; 32]), Rng::new(0));
    }
}
