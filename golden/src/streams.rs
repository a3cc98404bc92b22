//! The two weight streams (CONTRACT section 1): what the host side pushes
//! into the NPU's weight-stream ports, beat by beat.
//!
//! A [`WeightSource`] is the content of both streams for one run: an
//! explicit prefix per stream (directed tests put exact weights there),
//! then an endless run of pseudo-random beats that depend only on (seed,
//! stream, index). The models never run dry: the golden model reads beat
//! `i` of a stream as `beat(stream, i)`; the RTL harness drives the same
//! beats into the ports with valid/ready (and may withhold valid on a stall
//! schedule, which changes timing only). docs/numerics.md section 2.4
//! states the distribution and why.

use crate::word::Word;

/// The matrix stream ("HP0/1"): consumed by GEMM.
pub const MATRIX_STREAM: usize = 0;
/// The vector stream ("HP2/3"): consumed by GEMV.
pub const VECTOR_STREAM: usize = 1;
/// Number of weight streams.
pub const STREAMS: usize = 2;

/// The names reports use, indexed by stream.
pub const STREAM_NAMES: [&str; STREAMS] = ["matrix", "vector"];

/// The content of both weight streams for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightSource {
    /// Seed of the pseudo-random beats after the prefixes.
    pub seed: u64,
    /// `prefix[stream][i]` is beat `i` of that stream, while `i` is inside
    /// the prefix.
    pub prefix: [Vec<Word>; STREAMS],
}

impl Default for WeightSource {
    /// Seed 0, no prefix.
    fn default() -> WeightSource {
        WeightSource::new(0)
    }
}

/// SplitMix64's increment (Steele, Lea, Flood).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (Vigna's `splitmix64.c`): a bijection on
/// `u64` that mixes every input bit into every output bit.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 sequence started at one beat's key.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix64(self.0)
    }
}

impl WeightSource {
    /// Pseudo-random beats from `seed`, no prefix.
    pub fn new(seed: u64) -> WeightSource {
        WeightSource {
            seed,
            prefix: [Vec::new(), Vec::new()],
        }
    }

    /// `matrix` and `vector` first, then the pseudo-random beats of `seed`
    /// (continuing at the index after the prefix: beat `i` past a prefix of
    /// length `p` is the same as without a prefix).
    pub fn with_prefix(seed: u64, matrix: Vec<Word>, vector: Vec<Word>) -> WeightSource {
        WeightSource {
            seed,
            prefix: [matrix, vector],
        }
    }

    /// Beat `index` (from 0 after reset) of `stream`. A stream number past
    /// the two gets generated beats of its own (no prefix); it is never an
    /// error.
    pub fn beat(&self, stream: usize, index: u64) -> Word {
        let from_prefix = self
            .prefix
            .get(stream)
            .and_then(|p| usize::try_from(index).ok().and_then(|i| p.get(i)));
        match from_prefix {
            Some(&beat) => beat,
            None => generated_beat(self.seed, stream as u64, index),
        }
    }

    /// Beats `first .. first + count` of `stream`.
    pub fn beats(&self, stream: usize, first: u64, count: u64) -> Vec<Word> {
        (0..count)
            .map(|i| self.beat(stream, first.wrapping_add(i)))
            .collect()
    }
}

/// The generated beat `index` of `stream` under `seed`: the draws of a
/// SplitMix64 sequence whose state starts at
/// `mix64(mix64(seed ^ mix64(stream + 1)) ^ mix64(index))`.
///
/// Kinds, by the first draw `r % 64`:
/// - 0-43 (69 %): a *scale beat*, eight BF16 lanes from [`scale_lane`];
/// - 44-55 (19 %): 128 random bits;
/// - 56-63 (12.5 %): an *extreme INT4 beat*: each of the 32 nibbles is
///   -8, -1, 0 or 7 (two bits of a draw each).
pub fn generated_beat(seed: u64, stream: u64, index: u64) -> Word {
    let key = mix64(mix64(seed ^ mix64(stream.wrapping_add(1))) ^ mix64(index));
    let mut d = Draws(key);
    match d.next() % 64 {
        0..=43 => (0..8).fold(0, |w, i| w | Word::from(scale_lane(&mut d)) << (16 * i)),
        44..=55 => Word::from(d.next()) | Word::from(d.next()) << 64,
        _ => {
            const NIBBLES: [u128; 4] = [0x8, 0xF, 0x0, 0x7];
            let bits = d.next();
            (0..32).fold(0, |w, i| {
                w | NIBBLES[(bits >> (2 * i)) as usize & 3] << (4 * i)
            })
        }
    }
}

/// One BF16 lane of a scale beat, from one draw `v`:
/// - `v % 16` in 0-11 (75 %): a moderate value: random sign, exponent field
///   120-135 (magnitudes 2^-7 up to just below 2^9), random fraction;
/// - 12-15 (25 %): one of twelve specials, equally often: +0, -0, +Inf,
///   -Inf, 0x7FC0, a NaN with a random payload and sign, a subnormal of
///   random sign, the largest finite (0x7F7F) and its negative, the
///   smallest normal (0x0080) and its negative, 16 random bits.
fn scale_lane(d: &mut Draws) -> u16 {
    let v = d.next();
    let sign = ((v >> 4) as u16 & 1) << 15;
    let frac = (v >> 16) as u16 & 0x7F;
    if v % 16 < 12 {
        let exp = 120 + ((v >> 8) % 16) as u16;
        return sign | exp << 7 | frac;
    }
    match (v >> 8) % 12 {
        0 => 0x0000,
        1 => 0x8000,
        2 => 0x7F80,
        3 => 0xFF80,
        4 => 0x7FC0,
        5 => sign | 0x7F80 | frac.max(1),
        6 => sign | frac.max(1),
        7 => 0x7F7F,
        8 => 0xFF7F,
        9 => 0x0080,
        10 => 0x8080,
        _ => (v >> 32) as u16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::bf16::{Bf16, Class};

    #[test]
    fn mix64_is_splitmix64s_output_function() {
        // splitmix64.c from state 0: the first output mixes 0 + GAMMA.
        assert_eq!(mix64(GAMMA), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn the_prefix_comes_first_then_the_generated_beats_at_their_own_index() {
        let s = WeightSource::with_prefix(7, vec![1, 2, 3], vec![9]);
        let plain = WeightSource::new(7);
        assert_eq!(s.beats(MATRIX_STREAM, 0, 3), [1, 2, 3]);
        assert_eq!(s.beat(VECTOR_STREAM, 0), 9);
        assert_eq!(s.beat(MATRIX_STREAM, 3), plain.beat(MATRIX_STREAM, 3));
        assert_eq!(s.beat(VECTOR_STREAM, 1), plain.beat(VECTOR_STREAM, 1));
        assert_ne!(plain.beat(MATRIX_STREAM, 0), 1);
    }

    #[test]
    fn beats_depend_on_seed_stream_and_index_only() {
        let a = WeightSource::new(1);
        assert_eq!(a.beat(0, 5), WeightSource::new(1).beat(0, 5));
        assert_ne!(a.beat(0, 5), a.beat(1, 5));
        assert_ne!(a.beat(0, 5), a.beat(0, 6));
        assert_ne!(a.beat(0, 5), WeightSource::new(2).beat(0, 5));
        // Out-of-range streams and indices are not errors.
        let _ = a.beat(usize::MAX, u64::MAX);
        assert_eq!(a.beats(1, u64::MAX, 2).len(), 2);
    }

    /// The distribution promised in the docs, over 4096 beats.
    #[test]
    fn scale_beats_are_mostly_moderate_with_every_special() {
        let s = WeightSource::new(3);
        let (mut moderate, mut lanes) = (0, 0);
        let mut classes = std::collections::BTreeSet::new();
        let mut specials = std::collections::BTreeSet::new();
        let mut extreme_int4 = 0;
        for i in 0..4096 {
            let beat = s.beat(VECTOR_STREAM, i);
            let nibbles: Vec<u128> = (0..32).map(|n| beat >> (4 * n) & 0xF).collect();
            if nibbles.iter().all(|n| [0x8, 0xF, 0x0, 0x7].contains(n)) {
                extreme_int4 += 1;
            }
            for lane in 0..8 {
                let b = Bf16((beat >> (16 * lane)) as u16);
                lanes += 1;
                let exp = (b.0 >> 7) & 0xFF;
                moderate += usize::from((120..=135).contains(&exp));
                classes.insert(format!("{:?}", b.class()));
                if [0x7F7F, 0xFF7F, 0x0080, 0x8080, 0x7FC0, 0x8000].contains(&b.0) {
                    specials.insert(b.0);
                }
            }
        }
        // 69 % scale beats x 75 % moderate lanes, plus a share of the random ones.
        let share = moderate as f64 / lanes as f64;
        assert!((0.48..0.62).contains(&share), "{share}");
        for c in [Class::Nan, Class::Inf, Class::Zero, Class::Subnormal] {
            assert!(classes.contains(&format!("{c:?}")), "{c:?} never drawn");
        }
        assert_eq!(specials.len(), 6, "{specials:x?}");
        // 12.5 % (random beats almost never pass).
        assert!((400..650).contains(&extreme_int4), "{extreme_int4}");
    }
}
