//! The CVO domain sweep: directed cases that run every elementwise CVO
//! function, SCALE (multiply and divide) and REDUCE_SUM over all 65,536
//! BF16 inputs on any configuration, the vector cut into chunks that fit
//! its L2. Random programs reach the functions' general paths but not every
//! rounding corner; a datapath mutant that only moves a last bit somewhere
//! survives them. `pccx-cosim mutate` runs the sweep on every mutant the
//! random seeds did not kill (docs/mutation.md); tests/gate/cvo_exhaustive.rs
//! is the same idea on kv260 in one chunk, with `accm` and more scalars.

use pccx_golden::asm::{parse_program, Program};
use pccx_golden::model::Word;

use super::{GenOptions, TestCase};

/// Every BF16 pattern, element `i` = pattern `i`: 8,192 words.
pub fn all_patterns() -> Vec<Word> {
    (0..8192u128)
        .map(|w| (0..8).fold(0, |acc, i| acc | (8 * w + i) << (16 * i)))
        .collect()
}

/// Words kept apart in each case: SCALE's scalar (word 0) and the
/// REDUCE_SUM vectors (the last `REDUCE_WORDS` words).
const REDUCE_WORDS: u32 = 64;

/// The scalar of chunk `k`'s SCALEs: one per chunk, cycling.
const SCALARS: [u16; 5] = [0x3FC0, 0xC0A0, 0x3DCD, 0x7F7F, 0x0080];

/// Values for SCALE's special cases, each also a scalar: signed zeros and
/// infinities, NaN, one, two, a half, the smallest and largest normals, a
/// subnormal (read as zero) and three.
const SPECIALS: [u16; 16] = [
    0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x3F80, 0xBF80, 0x4000, 0x3F00, 0x0080, 0x8080, 0x7F7F,
    0xFF7F, 0x0001, 0x4040, 0xC0A0,
];

/// REDUCE_SUM vectors of their own, each in one word after the exact-sum
/// vector, with their lengths: the near tie 1 + 2^-8 + 2^-60 (only an exact
/// sum sees the 2^-60 and rounds up); 1 + 2^-8 + 2^-133, a tie broken only
/// by the last bit of two cancelling terms of the smallest exponent
/// (0x0081 - 0x8080 = 2^-133); 2^-101 alone, a sum in the lowest
/// binade the rounding of a wide sum must still place; and the exact tie
/// 1 + 2^-8 with nothing below, which rounds to even (down, to 1): a sum
/// that wide keeps 31 of its bits and ORs the rest into the last, and a
/// rounding that sets any other low bit rounds it up.
const REDUCE_SMALL: [(u128, u32); 4] = [
    (0x2180_3B80_3F80, 3),
    (0x8080_0081_3B80_3F80, 4),
    (0x0D00, 1),
    (0x3B80_3F80, 2),
];

/// A vector that REDUCE_SUM must sum exactly: alternating signs, exponents
/// over 2^-20 .. 2^20, pairs that cancel, no special value. Its last word
/// is a near tie instead: 1 + 2^-8 (the midpoint between 1 and 1 + 2^-7)
/// plus 2^-60, which only an exact sum sees (it rounds up).
fn reduce_vector() -> Vec<Word> {
    let exact_words = REDUCE_WORDS as u128 - REDUCE_SMALL.len() as u128;
    (0..REDUCE_WORDS as u128)
        .map(|w| {
            if w >= exact_words {
                return REDUCE_SMALL[(w - exact_words) as usize].0;
            }
            (0..8).fold(0, |acc, i| {
                let k = (8 * w + i) as u16;
                let sign = (k & 1) << 15;
                let exponent = 107 + (k * 7) % 41; // 2^-20 .. 2^20
                let fraction = (k * 37) & 0x7F;
                acc | u128::from(sign | exponent << 7 | fraction) << (16 * i)
            })
        })
        .collect()
}

/// The sweep's cases for a configuration with `options.l2_words` of L2 (at
/// least 256): each holds one chunk of the patterns from word 1 and its
/// results after them (kv260: 2 cases, tiny: 5); then the SCALE case of
/// [`specials_case`].
pub fn cases(options: &GenOptions) -> Vec<TestCase> {
    let l2 = options.l2_words;
    // At most 4,096 words (32,768 elements) a chunk: a length field holds
    // 65,535 elements, one short of the whole domain.
    let chunk_words = ((l2 - 1 - REDUCE_WORDS) / 2).min(4096) as usize;
    let patterns = all_patterns();
    let reduce_at = l2 - REDUCE_WORDS;
    let exact_words = REDUCE_WORDS - REDUCE_SMALL.len() as u32;
    let mut cases: Vec<TestCase> = patterns
        .chunks(chunk_words)
        .enumerate()
        .map(|(k, chunk)| {
            let len = 8 * chunk.len() as u32;
            let out = 1 + chunk.len() as u32;
            let mut text = String::new();
            for f in ["exp", "sqrt", "gelu", "sin", "cos", "recip"] {
                text += &format!("cvo.{f} l2[{out}] <- l2[1], len={len}\n");
            }
            text += &format!("cvo.scale l2[{out}] <- l2[0], len={len}\n");
            text += &format!("cvo.scale l2[{out}] <- l2[0], len={len}, recip_scale\n");
            text += &format!("cvo.scale l2[{out}] <- l2[0], len={len}, recip_scale, accm\n");
            text += &format!(
                "cvo.reduce_sum l2[{out}] <- l2[{reduce_at}], len={}\n",
                8 * exact_words - 3
            );
            for (i, (_, n)) in REDUCE_SMALL.iter().enumerate() {
                text += &format!(
                    "cvo.reduce_sum l2[{}] <- l2[{}], len={n}\n",
                    out + 1 + i as u32,
                    reduce_at + exact_words + i as u32
                );
            }
            text += &format!("cvo.exp l2[{out}] <- l2[1], len={len}, accm, async\n");
            let program: Program = parse_program(&text).expect("the sweep's program assembles");
            let mut case = TestCase::directed(k as u64 + 1, options, program);
            case.l2_patches = vec![
                (0, vec![u128::from(SCALARS[k % SCALARS.len()])]),
                (1, chunk.to_vec()),
                (reduce_at, reduce_vector()),
            ];
            case
        })
        .collect();
    cases.push(specials_case(options, cases.len() as u64 + 1));
    cases
}

/// Every value of [`SPECIALS`] multiplied and divided by every one, with
/// and without `accm`: the quotient's special cases (0/0, Inf/Inf, x/0,
/// Inf/x, 0/x, NaN either side) and the product's, which the chunks' five
/// finite scalars never reach, and which `accm` would hide (a NaN or
/// infinite product absorbs a wrong value added to it). SCALE reads its
/// scalar from element 0 of the word before the vector, so each scalar
/// has a block of its own: the scalar's word, then the 16 values.
pub fn specials_case(options: &GenOptions, seed: u64) -> TestCase {
    let vector: Vec<Word> = SPECIALS
        .chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0, |acc, (i, &v)| acc | u128::from(v) << (16 * i))
        })
        .collect();
    let block = 1 + vector.len() as u32;
    let out = block * SPECIALS.len() as u32;
    let len = SPECIALS.len();
    let mut text = String::new();
    let mut patches = Vec::new();
    for (b, &scalar) in SPECIALS.iter().enumerate() {
        let at = block * b as u32;
        let mut words = vec![u128::from(scalar)];
        words.extend(&vector);
        patches.push((at, words));
        for flags in ["", ", recip_scale", ", recip_scale, accm", ", accm"] {
            text += &format!("cvo.scale l2[{out}] <- l2[{at}], len={len}{flags}\n");
        }
    }
    let program: Program = parse_program(&text).expect("the specials program assembles");
    let mut case = TestCase::directed(seed, options, program);
    // The accumulating ones add to the values as well.
    patches.push((out, vector));
    case.l2_patches = patches;
    case
}
