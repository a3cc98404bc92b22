//! CVO, RTL against golden over the whole BF16 domain (docs/cvo.md
//! section 5): every elementwise function on all 65,536 inputs, with and
//! without `accm`; SCALE (multiply and divide) of all 65,536 inputs by a
//! documented set of scalars; REDUCE_SUM over random and adversarial
//! vectors. Each program runs under the scoreboard, so every instruction's
//! writes, its retire cycle and the final state are compared; the inputs are
//! exact (L2 patches over the seeded image).

use crate::common;

use common::{config, golden, rtl};
use pccx_cosim::scoreboard::run_case;
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_golden::asm::parse_program;
use pccx_golden::model::Word;

/// Every BF16 pattern, element `i` of the vector = pattern `i`: 8,192 words.
fn all_patterns() -> Vec<Word> {
    (0..8192u128)
        .map(|w| (0..8).fold(0, |acc, i| acc | (8 * w + i) << (16 * i)))
        .collect()
}

const INPUT: u32 = 1; // word 0 holds SCALE's scalar
const OUTPUT: u32 = 16_384;
const SCALARS: u32 = 9_000;

/// Runs `program` on kv260 (two uCVO cores) with `patches` over L2.
fn must_match(program: &str, patches: Vec<(u32, Vec<Word>)>) {
    let cfg = config("kv260");
    let parsed = parse_program(program).unwrap_or_else(|e| panic!("bad test program: {e}"));
    let mut case = TestCase::directed(7, &GenOptions::for_config(&cfg, 0), parsed);
    case.l2_patches = patches;
    let (mut reference, mut dut) = (golden(&cfg), rtl(&cfg));
    let outcome = run_case(&case, &mut reference, &mut dut).expect("no infrastructure error");
    if let Some(m) = &outcome.first_mismatch {
        panic!("RTL and golden differ:\n{m}\nprogram:\n{program}");
    }
}

/// The whole domain in two instructions: 65,535 elements (the most one
/// length field holds), then the last word again.
fn whole_domain(op: &str, flags: &str) -> String {
    format!(
        "{op} l2[{OUTPUT}] <- l2[{INPUT}], len=65535{flags}
         {op} l2[{}] <- l2[{}], len=8{flags}\n",
        OUTPUT + 8191,
        INPUT + 8191
    )
}

fn elementwise(func: &str) {
    let op = format!("cvo.{func}");
    let program = whole_domain(&op, "") + &whole_domain(&op, ", accm, async");
    must_match(&program, vec![(INPUT, all_patterns())]);
}

#[test]
fn exp_on_every_input() {
    elementwise("exp");
}

#[test]
fn sqrt_on_every_input() {
    elementwise("sqrt");
}

#[test]
fn gelu_on_every_input() {
    elementwise("gelu");
}

#[test]
fn sin_on_every_input() {
    elementwise("sin");
}

#[test]
fn cos_on_every_input() {
    elementwise("cos");
}

#[test]
fn recip_on_every_input() {
    elementwise("recip");
}

/// The scalars SCALE is checked with, each against all 65,536 inputs: the
/// special values (+-0, +-Inf, NaN, a subnormal), the extremes of the
/// normal range, and values whose products and quotients land on both
/// sides of overflow and underflow and on rounding ties.
const SCALE_BY: [u16; 16] = [
    0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x0001, // specials
    0x3F80, 0xBF80, 0x7F7F, 0x0080, // +-1, max, min normal
    0x3FC0, 0x4040, 0xC0A0, 0x3DCD, 0x5F00, 0x2080, // 1.5, 3, -5, 0.1, 2^63, 2^-62
];

/// Where the last vector word is kept a second time, after a scalar slot,
/// so the second SCALE of each pair has its scalar in front of it.
const TAIL: u32 = 9_100;

/// For each scalar: copy it in front of the vector (word 0) and in front of
/// the tail copy, then SCALE the domain in two instructions.
fn scale_by_each(flags: &str) -> String {
    let mut program = String::from("memset fmap[1] = (8, 1, 1)   ; one word\n");
    for k in 0..SCALE_BY.len() as u32 {
        program += &format!(
            "memcpy l2[0] <- l2[{s}], shape=1
             memcpy l2[{TAIL}] <- l2[{s}], shape=1
             cvo.scale l2[{OUTPUT}] <- l2[0], len=65535{flags}
             cvo.scale l2[{tail_out}] <- l2[{TAIL}], len=8{flags}\n",
            s = SCALARS + k,
            tail_out = OUTPUT + 8191,
        );
    }
    program
}

fn scale_patches() -> Vec<(u32, Vec<Word>)> {
    let patterns = all_patterns();
    let scalars = SCALE_BY
        .iter()
        .map(|&s| u128::from(s) | 0x1234_0000) // element 1 must not matter
        .collect();
    vec![
        (TAIL + 1, vec![patterns[8191]]),
        (INPUT, patterns),
        (SCALARS, scalars),
    ]
}

#[test]
fn scale_multiply_every_input_by_sixteen_scalars() {
    must_match(&scale_by_each(""), scale_patches());
}

#[test]
fn scale_divide_every_input_by_sixteen_scalars() {
    must_match(&scale_by_each(", recip_scale, accm"), scale_patches());
}

/// A small xorshift, so the vectors are fixed by this file alone.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// REDUCE_SUM over vectors that stress the exact sum: random finite values
/// of every exponent, one huge value and many tiny ones, exact
/// cancellation, overflow of the sum, infinities of both signs, NaN; each
/// at a length that ends mid-word, and with `accm`.
#[test]
fn reduce_sum_exact_over_adversarial_vectors() {
    let mut rng = XorShift(0x5EED_CAFE_F00D_0001);
    let finite = |rng: &mut XorShift| loop {
        let b = rng.next() as u16;
        if b & 0x7F80 != 0x7F80 {
            return b;
        }
    };
    let vectors: Vec<Vec<u16>> = vec![
        (0..20_001).map(|_| finite(&mut rng)).collect(),
        // 2^100 then 4,000 ones: the ones survive only in an exact sum.
        std::iter::once(0x7180)
            .chain(std::iter::repeat_n(0x3F80, 4000))
            .collect(),
        // x, -x pairs and one tiny leftover: cancellation to 2^-120.
        (0..1000)
            .flat_map(|i| [0x4000 + i as u16, 0xC000 + i as u16])
            .chain([0x0380])
            .collect(),
        // The largest finite values: their sum overflows to +Inf.
        vec![0x7F7F; 9],
        vec![0x7F80, 0x3F80, 0xFF80], // +Inf + -Inf = NaN
        vec![0xFF80, 0x4000, 0x0001], // -Inf, a subnormal read as zero
        vec![0x4000, 0x7FC1, 0x4000], // NaN
        vec![0x8000, 0x8000, 0x8001], // only negative zeros: +0
        // 1 + 2^-8 is the midpoint between 1 and 1 + 2^-7; 2^-60, far below
        // any 32-bit window, decides the rounding: up to 0x3F81.
        vec![0x3F80, 0x3B80, 0x2180],
        vec![0x3F80, 0x3B80], // the exact tie: to even, 1.0
        (0..65_535).map(|_| finite(&mut rng) & 0x87FF).collect(), // many small terms
    ];
    let mut program = String::new();
    let mut patches = Vec::new();
    let mut at = 0u32;
    for (k, v) in vectors.iter().enumerate() {
        let words: Vec<Word> = v
            .chunks(8)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0, |acc, (i, &e)| acc | u128::from(e) << (16 * i))
            })
            .collect();
        let accm = if k % 2 == 1 { ", accm" } else { "" };
        program += &format!(
            "cvo.reduce_sum l2[{}] <- l2[{at}], len={}{accm}\n",
            OUTPUT + k as u32,
            v.len()
        );
        at += words.len() as u32;
        patches.push((at - words.len() as u32, words));
    }
    must_match(&program, patches);
}

/// The domain sweep `pccx-cosim mutate` runs on surviving mutants: on the
/// four-core tiny (5 chunks) and the one-core small (2 chunks) it covers
/// every pattern exactly once, and RTL equals golden on it (and on its
/// case of SCALE's special values).
#[test]
fn the_mutation_sweep_covers_the_domain_and_matches_on_one_and_four_cores() {
    use pccx_cosim::stimulus::cvo_sweep;
    for name in ["tiny", "small"] {
        let cfg = config(name);
        let cases = cvo_sweep::cases(&GenOptions::for_config(&cfg, 0));
        // The chunks, then the case of SCALE's special values.
        let chunks = &cases[..cases.len() - 1];
        let mut seen: Vec<Word> = chunks
            .iter()
            .flat_map(|c| c.l2_patches[1].1.clone())
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, all_patterns(), "{name}: every pattern once");
        for case in &cases {
            let (mut reference, mut dut) = (golden(&cfg), rtl(&cfg));
            let outcome =
                run_case(case, &mut reference, &mut dut).expect("no infrastructure error");
            if let Some(m) = &outcome.first_mismatch {
                panic!("{name}: RTL and golden differ on the sweep:\n{m}");
            }
        }
    }
}
