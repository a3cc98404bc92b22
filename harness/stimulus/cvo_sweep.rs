//! The CVO domain sweep: directed cases that run every elementwise CVO
//! function, SCALE (multiply and divide) and REDUCE_SUM over all 65,536
//! BF16 inputs on any configuration, the vector cut into chunks that fit
//! its L2. Random programs reach the functions' general paths but not every
//! rounding corner; a datapath mutant that only moves a last bit somewhere
//! survives them. `pccx-cosim mutate` runs the sweep on every mutant the
//! random seeds did not kill (docs/mutation.md); tests/cvo_exhaustive.rs
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
/// REDUCE_SUM vector (the last `REDUCE_WORDS` words).
const REDUCE_WORDS: u32 = 62;

/// The scalar of chunk `k`'s SCALEs: one per chunk, cycling.
const SCALARS: [u16; 5] = [0x3FC0, 0xC0A0, 0x3DCD, 0x7F7F, 0x0080];

/// A vector that REDUCE_SUM must sum exactly: alternating signs, exponents
/// over 2^-20 .. 2^20, pairs that cancel, no special value. Its last word
/// is a near tie instead: 1 + 2^-8 (the midpoint between 1 and 1 + 2^-7)
/// plus 2^-60, which only an exact sum sees (it rounds up).
fn reduce_vector() -> Vec<Word> {
    (0..REDUCE_WORDS as u128)
        .map(|w| {
            if w == REDUCE_WORDS as u128 - 1 {
                return 0x2180_3B80_3F80;
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
/// results after them (kv260: 2 cases, tiny: 5).
pub fn cases(options: &GenOptions) -> Vec<TestCase> {
    let l2 = options.l2_words;
    // At most 4,096 words (32,768 elements) a chunk: a length field holds
    // 65,535 elements, one short of the whole domain.
    let chunk_words = ((l2 - 1 - REDUCE_WORDS) / 2).min(4096) as usize;
    let patterns = all_patterns();
    let reduce_at = l2 - REDUCE_WORDS;
    patterns
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
            text += &format!("cvo.scale l2[{out}] <- l2[0], len={len}, recip_scale, accm\n");
            text += &format!(
                "cvo.reduce_sum l2[{out}] <- l2[{reduce_at}], len={}\n",
                8 * (REDUCE_WORDS - 1) - 3
            );
            text += &format!(
                "cvo.reduce_sum l2[{}] <- l2[{}], len=3\n",
                out + 1,
                reduce_at + REDUCE_WORDS - 1
            );
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
        .collect()
}
