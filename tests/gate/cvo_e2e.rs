//! The seed's softmax and RMSNorm sequences (ISA section 3.4) as directed
//! programs through GEMV and CVO, on RTL and golden under the scoreboard,
//! and their results against softmax / RMSNorm computed in f64 from the
//! GEMV's BF16 outputs (docs/cvo.md section 7 states the tolerances and
//! why they hold).

use crate::common;

use common::{config, golden, rtl};
use pccx_cosim::scoreboard::run_case;
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_golden::asm::parse_program;
use pccx_golden::model::{NpuModel, Word};
use pccx_golden::numerics::Bf16;

const N: usize = 64; // GEMV outputs: the vector softmax and RMSNorm work on
const ACT: u32 = 100; // one INT8 activation word (K = 16)
const OUT: u32 = 201; // GEMV result, 8 words (word 200 is a scalar slot)

/// One activation word: INT8 `a[0] = 1`, `a[1] = 1`, the rest 0, so score
/// `n` is `W[0][n] + W[1][n]`, an integer in [-16, 14]: a spread that
/// gives softmax probabilities from about 1 down to e^-30.
fn activations() -> Word {
    0x0101
}

const GEMV: &str = "memset fmap[1] = (1, 16, 0)      ; M = 1, K = 16
                    memset weight[1] = (16, 64, 0)   ; K = 16, N = 64
                    gemv l2[201] <- l2[100], fmap=1, weight=1, findemax\n";

fn case(program: &str, patches: Vec<(u32, Vec<Word>)>) -> TestCase {
    let cfg = config("kv260");
    let parsed = parse_program(program).unwrap_or_else(|e| panic!("bad test program: {e}"));
    let mut case = TestCase::directed(11, &GenOptions::for_config(&cfg, 0), parsed);
    case.l2_patches = patches;
    case
}

/// Runs the case on golden and RTL, requires them to agree on every
/// instruction, and returns the golden model's L2 words `[addr, addr+n)`.
fn run_both(case: &TestCase, addr: u32, n: usize) -> Vec<Word> {
    let cfg = config("kv260");
    let (mut reference, mut dut) = (golden(&cfg), rtl(&cfg));
    let outcome = run_case(case, &mut reference, &mut dut).expect("no infrastructure error");
    if let Some(m) = &outcome.first_mismatch {
        panic!("RTL and golden differ:\n{m}");
    }
    let mut out = vec![0; n];
    reference.read_l2(addr, &mut out).unwrap();
    out
}

fn elements(words: &[Word]) -> Vec<Bf16> {
    words
        .iter()
        .flat_map(|&w| (0..8).map(move |i| Bf16((w >> (16 * i)) as u16)))
        .collect()
}

fn pack(values: &[Bf16]) -> Vec<Word> {
    values
        .chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0, |acc, (i, v)| acc | u128::from(v.0) << (16 * i))
        })
        .collect()
}

/// The GEMV's scores, by running the GEMV alone (golden and RTL agree on it).
fn scores() -> Vec<f64> {
    let words = run_both(&case(GEMV, vec![(ACT, vec![activations()])]), OUT, N / 8);
    elements(&words).iter().map(|v| v.to_f64()).collect()
}

/// The worst relative error of `got` against `want`, where `want` is not
/// below the smallest normal BF16 (smaller true values may flush to zero).
fn worst_relative_error(got: &[Bf16], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .filter(|(_, w)| w.abs() >= f64::from(f32::MIN_POSITIVE))
        .map(|(g, w)| ((g.to_f64() - w) / w).abs())
        .fold(0.0, f64::max)
}

/// Softmax: GEMV + findemax; EXP with sub_emax; REDUCE_SUM into the scalar
/// slot in front of the exponentials; SCALE with recip_scale.
#[test]
fn softmax_through_gemv_and_cvo_matches_f64() {
    let s = scores();
    let program = format!(
        "{GEMV}\
         cvo.exp l2[301] <- l2[{OUT}], len={N}, sub_emax
         cvo.reduce_sum l2[300] <- l2[301], len={N}
         cvo.scale l2[401] <- l2[300], len={N}, recip_scale\n"
    );
    let got = elements(&run_both(
        &case(&program, vec![(ACT, vec![activations()])]),
        401,
        N / 8,
    ));
    let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = s.iter().map(|x| (x - max).exp()).sum();
    let want: Vec<f64> = s.iter().map(|x| (x - max).exp() / total).collect();
    let err = worst_relative_error(&got, &want);
    println!(
        "softmax: worst relative error {err:.3e} (bound 2^-6 = {:.3e})",
        2f64.powi(-6)
    );
    // Three roundings: exp (at most 1 ULP, 2^-7 relative), the sum (2^-8),
    // the quotient (2^-8); the subtraction of e_max is exact here (integer
    // scores). Sum of the bounds: 2^-6.
    assert!(
        err <= 2f64.powi(-6),
        "softmax relative error {err:e} over 2^-6"
    );
    let sum: f64 = got.iter().map(|v| v.to_f64()).sum();
    assert!((sum - 1.0).abs() < 0.05, "probabilities add up to {sum}");
}

/// RMSNorm: GEMV + findemax gives x; REDUCE_SUM of the squares; the mean
/// (SCALE by 1/N with recip_scale); SQRT then RECIP; SCALE of x by the
/// factor. CVO has no elementwise product of two vectors, so the squares
/// are supplied next to x, as the host would write them (docs/cvo.md
/// section 7).
#[test]
fn rmsnorm_through_gemv_and_cvo_matches_f64() {
    let x = scores();
    let squares: Vec<Bf16> = x
        .iter()
        .map(|v| pccx_golden::numerics::round_exact(false, (v * v) as u128, 0))
        .collect(); // the scores are integers: their squares are exact integers
    let n = pccx_golden::numerics::round_exact(false, N as u128, 0);
    let program = format!(
        "{GEMV}\
         cvo.reduce_sum l2[501] <- l2[600], len={N}   ; sum of squares, after the scalar N
         cvo.scale l2[502] <- l2[500], len=1, recip_scale   ; mean = sum / N
         cvo.sqrt l2[503] <- l2[502], len=1
         cvo.recip l2[200] <- l2[503], len=1           ; the factor, in front of x
         cvo.scale l2[701] <- l2[200], len={N}\n"
    );
    let patches = vec![
        (ACT, vec![activations()]),
        (500, pack(&[n])),
        (600, pack(&squares)),
    ];
    let got = elements(&run_both(&case(&program, patches), 701, N / 8));
    let rms = (x.iter().map(|v| v * v).sum::<f64>() / N as f64).sqrt();
    let want: Vec<f64> = x.iter().map(|v| v / rms).collect();
    let err = worst_relative_error(&got, &want);
    println!(
        "RMSNorm: worst relative error {err:.3e} (bound 2^-5 = {:.3e})",
        2f64.powi(-5)
    );
    // Roundings: the sum (2^-8), the mean (2^-8), the root (2^-8, halved
    // to 2^-9 on the factor's error by the square root), the reciprocal
    // (2^-8), the product (2^-8): under 2^-5.5; the bound asserted is 2^-5.
    assert!(
        err <= 2f64.powi(-5),
        "RMSNorm relative error {err:e} over 2^-5"
    );
}
