//! `pccx_golden::numerics` against an independent naive reference written
//! in this file, which shares no code with it:
//!
//! - integer rounding (`from_i64`, `round_exact`) by division and remainder
//!   on `u128`, comparing the remainder with its complement;
//! - products by `f64` multiplication, which is exact for BF16 operands
//!   (8-bit x 8-bit significands, exponents far inside the `f64` range);
//! - sums by `f64` addition plus Knuth's TwoSum error term, which together
//!   represent the exact sum;
//! - IEEE special cases (NaN, Inf, signed zeros) taken from the `f64`
//!   hardware rather than from a case table;
//! - rounding of an `f64` to BF16 by choosing the nearer of the two
//!   bracketing BF16 candidates (found with `floor`) by exact distance;
//! - GEMV/GEMM by a plain i64 triple loop, the weight beats by indexing
//!   with division.
//!
//! Why each route is exact is argued next to it.

use pccx_golden::numerics::bf16::{round_exact, Bf16};
use pccx_golden::numerics::w4a8::{self, MatInputs};
use proptest::prelude::*;
use proptest::sample::select;
use std::ops::{Add, Mul, Sub};

// ---------------------------------------------------------------------------
// Reference: integers to BF16 by division and remainder.

/// Bits of the BF16 `(-1)^neg * q * 2^(e - 7)`, `q` in `128..=255`, with the
/// range rules applied to the already rounded value.
fn ref_encode(neg: bool, q: u128, e: i64) -> u16 {
    assert!((128..256).contains(&q));
    let sign = if neg { 0x8000 } else { 0 };
    if e > 127 {
        sign | 0x7F80
    } else if e < -126 {
        sign
    } else {
        sign | (((e + 127) as u16) << 7) | (q as u16 - 128)
    }
}

/// RNE of `(-1)^neg * mag * 2^exp2` by division: `p = 2^s` with the
/// quotient below 256, and the remainder compared with `p - rem`.
fn ref_round_int(neg: bool, mag: u128, exp2: i64) -> u16 {
    if mag == 0 {
        return if neg { 0x8000 } else { 0 };
    }
    let mut s = 0u32;
    while mag / (1u128 << s) >= 256 {
        s += 1;
    }
    let p = 1u128 << s;
    let mut q = mag / p;
    let rem = mag % p;
    if s > 0 {
        let above = p - rem; // distance up to the next multiple of p
        if rem > above || (rem == above && q % 2 == 1) {
            q += 1;
        }
    }
    // Normalise q into 128..=255: e is the exponent of the leading bit.
    let mut e = i64::from(s) + 7 + exp2;
    while q >= 256 {
        q /= 2; // only 256 -> 128 after a carry, exact
        e += 1;
    }
    while q < 128 {
        q *= 2;
        e -= 1;
    }
    ref_encode(neg, q, e)
}

fn ref_from_i64(v: i64) -> u16 {
    let wide = i128::from(v);
    ref_round_int(wide < 0, wide.unsigned_abs(), 0)
}

// ---------------------------------------------------------------------------
// Reference: f64 values.

/// 2^e by repeated exact doubling or halving (no library power function).
fn two_pow(e: i32) -> f64 {
    let mut x = 1.0f64;
    if e >= 0 {
        for _ in 0..e {
            x *= 2.0;
        }
    } else {
        for _ in 0..-e {
            x *= 0.5;
        }
    }
    x
}

/// The operand value of a BF16 pattern as an f64, DAZ applied (subnormal ->
/// zero of its sign). Exact: 8 significant bits, exponents -133..=127.
fn ref_value(bits: u16) -> f64 {
    let neg = bits >> 15 == 1;
    let e = i32::from((bits >> 7) & 0xFF);
    let f = f64::from(bits & 0x7F);
    let mag = match e {
        0 => 0.0,
        255 if f == 0.0 => f64::INFINITY,
        255 => return f64::NAN,
        _ => (128.0 + f) * two_pow(e - 134),
    };
    if neg {
        -mag
    } else {
        mag
    }
}

/// RNE to BF16 of the exact value `x + residual`, where `x` is a finite,
/// non-zero, normal f64 and `residual` is either 0 or the exact error of
/// the f64 operation that produced `x` (so `x` is the nearest f64 to
/// `x + residual`).
///
/// The two BF16-grid candidates `lo <= |x| < hi` come from `floor`; their
/// distances to `|x|` are exact f64 differences (Sterbenz: both lie within a
/// factor 2 of `|x|`). Every candidate and every midpoint is an f64, so a
/// non-zero residual cannot move the exact value across one (else that
/// point would be nearer to the exact value than `x`): it only decides when
/// `|x|` is exactly a midpoint.
fn ref_round_f64(x: f64, residual: f64) -> u16 {
    assert!(x.is_finite() && x != 0.0 && x.is_normal());
    let neg = x < 0.0;
    let a = x.abs();
    let r = if neg { -residual } else { residual };
    let e = ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023; // a in [2^e, 2^(e+1))
    let scale = two_pow(7 - e);
    let q = (a * scale).floor(); // exact: power-of-two scaling, then floor
    assert!((128.0..256.0).contains(&q));
    let lo = q / scale;
    let hi = (q + 1.0) / scale;
    let (d_lo, d_hi) = (a - lo, hi - a);
    let up = if d_lo != d_hi {
        d_lo > d_hi
    } else if r != 0.0 {
        r > 0.0
    } else {
        q % 2.0 == 1.0
    };
    let q = q as u128 + u128::from(up);
    let (q, e) = if q == 256 {
        (128, i64::from(e) + 1)
    } else {
        (q, i64::from(e))
    };
    ref_encode(neg, q, e)
}

/// Special results from the f64 hardware: NaN (any), +-Inf, +-0.
fn ref_special(v: f64) -> Option<u16> {
    if v.is_nan() {
        Some(0x7FC0)
    } else if v.is_infinite() {
        Some(if v < 0.0 { 0xFF80 } else { 0x7F80 })
    } else if v == 0.0 {
        Some(if v.is_sign_negative() { 0x8000 } else { 0 })
    } else {
        None
    }
}

/// Product: f64 multiplication is exact (16 significant bits, magnitude
/// within [2^-266, 2^256]); its signs, NaNs and 0 * Inf are IEEE's.
fn ref_mul(a: u16, b: u16) -> u16 {
    let p = ref_value(a) * ref_value(b);
    ref_special(p).unwrap_or_else(|| ref_round_f64(p, 0.0))
}

/// Sum: `s = fl(x + y)` and TwoSum's `err` with `s + err = x + y` exactly
/// (error-free in binary RNE arithmetic without overflow; |sums| <= 2^129
/// never overflow f64). A zero `s` means an exact zero sum, whose sign f64
/// gives by the IEEE rule (x + -x = +0, -0 + -0 = -0).
fn ref_add(a: u16, b: u16) -> u16 {
    let (x, y) = (ref_value(a), ref_value(b));
    let s = x + y;
    if let Some(bits) = ref_special(s) {
        return bits;
    }
    let bv = s - x;
    let av = s - bv;
    let err = (x - av) + (y - bv);
    ref_round_f64(s, err)
}

/// findemax order, written as "is b strictly greater than a".
fn ref_greater(a: u16, b: u16) -> bool {
    let (x, y) = (ref_value(a), ref_value(b));
    if y.is_nan() {
        return !x.is_nan();
    }
    if x.is_nan() {
        return false;
    }
    y > x || (x == 0.0 && y == 0.0 && x.is_sign_negative() && !y.is_sign_negative())
}

// ---------------------------------------------------------------------------
// Reference: W4A8.

#[derive(Clone, Debug)]
struct RefCase {
    m: usize,
    k: usize,
    n: usize,
    act: Vec<i8>,
    w: Vec<i8>,
    scales: Option<Vec<u16>>,
    old: Option<Vec<u16>>,
}

/// Plain i64 triple loop, then the three roundings, then the max.
fn ref_gemm(c: &RefCase) -> (Vec<u16>, u16) {
    let mut out = Vec::new();
    for i in 0..c.m {
        for j in 0..c.n {
            let mut acc: i64 = 0;
            for kk in 0..c.k {
                acc += c.act[i * c.k + kk] as i64 * c.w[kk * c.n + j] as i64;
            }
            let mut r = ref_from_i64(acc);
            if let Some(s) = &c.scales {
                r = ref_mul(r, s[j]);
            }
            if let Some(old) = &c.old {
                r = ref_add(old[i * c.n + j], r);
            }
            out.push(r);
        }
    }
    let mut best = out[0];
    for &v in &out[1..] {
        if ref_greater(best, v) {
            best = v;
        }
    }
    (out, best)
}

/// Beat `b` of the stream, by division: beats below `tiles * K` are weight
/// beats of tile `b / K`, row `b % K`; the rest are scale beats.
fn ref_beats(k: usize, n: usize, w: &[i8], scales: Option<&[u16]>) -> Vec<u128> {
    let tiles = n.div_ceil(32);
    let total = tiles * k + scales.map_or(0, |_| n.div_ceil(8));
    (0..total)
        .map(|b| {
            let mut word = 0u128;
            if b < tiles * k {
                let (t, row) = (b / k, b % k);
                for lane in 0..32 {
                    let col = 32 * t + lane;
                    if col < n {
                        word += u128::from(w[row * n + col] as u8 & 0xF) << (4 * lane);
                    }
                }
            } else {
                let q = b - tiles * k;
                for lane in 0..8 {
                    if 8 * q + lane < n {
                        word += u128::from(scales.unwrap()[8 * q + lane]) << (16 * lane);
                    }
                }
            }
            word
        })
        .collect()
}

/// INT4 lane by arithmetic shift of the word as an i128.
fn ref_i4(word: u128, lane: usize) -> i8 {
    (((word << (124 - 4 * lane)) as i128) >> 124) as i8
}

fn ref_i8(word: u128, lane: usize) -> i8 {
    (((word << (120 - 8 * lane)) as i128) >> 120) as i8
}

// ---------------------------------------------------------------------------
// Self-checks of the reference against plain facts.

#[test]
fn reference_sanity() {
    assert_eq!(ref_from_i64(1), 0x3F80);
    assert_eq!(ref_from_i64(257), 0x4380); // tie -> even (256)
    assert_eq!(ref_from_i64(259), 0x4382); // tie -> even (260)
    assert_eq!(ref_add(0x3F80, 0x3F80), 0x4000);
    assert_eq!(ref_mul(0x4000, 0x4040), 0x40C0); // 2 * 3 = 6
    assert_eq!(ref_add(0x7F80, 0xFF80), 0x7FC0);
    assert_eq!(ref_mul(0x0000, 0xFF80), 0x7FC0);
    assert_eq!(ref_add(0x8000, 0x8000), 0x8000);
    assert_eq!(ref_add(0x3F80, 0xBF80), 0x0000);
    assert_eq!(ref_add(0x7F7F, 0x7F7F), 0x7F80);
    assert!(ref_greater(0x8000, 0x0000) && !ref_greater(0x0000, 0x8000));
    assert!(ref_greater(0x7F80, 0x7FC1) && !ref_greater(0x7FC1, 0x7F80));
}

// ---------------------------------------------------------------------------
// Exhaustive and dense tests.

/// Operands for the exhaustive pair tests (609 of them): specials, the
/// subnormal and normal edges, three complete binades (the lowest normal
/// one, [1, 2) and [-256, -128)), and a spread sample of every exponent.
fn pair_set() -> Vec<u16> {
    let mut v: Vec<u16> = vec![
        0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F, 0x0040, 0x0080, 0x8080, 0x0081, 0x00FF,
        0x0100, 0x8100, 0x7F7F, 0xFF7F, 0x7F7E, 0x7F00, 0xFF00, 0x7E80, 0x7F80, 0xFF80, 0x7FC0,
        0xFFC0, 0x7F81, 0xFFFF, 0x3F80, 0xBF80, 0x3F81, 0x3F7F, 0x4000, 0x1F80, 0x2000, 0x1FFF,
        0x5F80, 0x5F7F,
    ];
    v.extend(0x0080..=0x00FF); // [2^-126, 2^-125): the FTZ edge
    v.extend(0x3F80..=0x3FFF); // [1, 2)
    v.extend(0xC300..=0xC37F); // [-256, -128)
    v.extend((0..=0xFFFFu32).step_by(331).map(|x| x as u16));
    v.sort_unstable();
    v.dedup();
    assert_eq!(v.len(), 609);
    v
}

#[test]
fn add_exhaustive_against_reference() {
    let set = pair_set();
    for &b in &set {
        for a in 0..=0xFFFFu16 {
            let got = Bf16(a).add(Bf16(b)).0;
            let want = ref_add(a, b);
            assert_eq!(got, want, "add({a:#06x}, {b:#06x})");
            // Commutative, bit for bit.
            assert_eq!(Bf16(b).add(Bf16(a)).0, got, "add({b:#06x}, {a:#06x})");
        }
    }
}

#[test]
fn mul_exhaustive_against_reference() {
    let set = pair_set();
    for &b in &set {
        for a in 0..=0xFFFFu16 {
            let got = Bf16(a).mul(Bf16(b)).0;
            assert_eq!(got, ref_mul(a, b), "mul({a:#06x}, {b:#06x})");
            assert_eq!(Bf16(b).mul(Bf16(a)).0, got, "mul({b:#06x}, {a:#06x})");
        }
    }
}

#[test]
fn sub_is_add_of_negation() {
    let set = pair_set();
    for &b in &set {
        for a in (0..=0xFFFFu16).step_by(7) {
            assert_eq!(
                Bf16(a).sub(Bf16(b)).0,
                ref_add(a, b ^ 0x8000),
                "sub({a:#06x}, {b:#06x})"
            );
        }
    }
}

#[test]
fn from_i64_dense_range() {
    for v in -(1i64 << 20)..=(1i64 << 20) {
        let got = Bf16::from_i64(v).0;
        assert_eq!(got, ref_from_i64(v), "from_i64({v})");
        // Second route: |v| <= 2^53 converts to f64 exactly (53-bit
        // significand), so rounding that f64 once is rounding v once.
        let f = ref_special(v as f64).unwrap_or_else(|| ref_round_f64(v as f64, 0.0));
        assert_eq!(got, f, "from_i64({v}) via f64");
    }
}

#[test]
fn from_i64_powers_ties_and_extremes() {
    let mut vals: Vec<i64> = vec![i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1, 0];
    for k in 0..63 {
        let p = 1i64 << k;
        vals.extend([p, p - 1, p + 1, -p, 1 - p, -p - 1]);
    }
    vals.push(i64::MIN); // -2^63
    for s in 1..=55u32 {
        for q in 128i64..=255 {
            let base = q << s;
            let tie = base + (1i64 << (s - 1));
            for v in [base, tie, tie - 1, tie + 1, base + ((1i64 << s) - 1)] {
                vals.extend([v, -v]);
            }
        }
    }
    for v in vals {
        let got = Bf16::from_i64(v).0;
        assert_eq!(got, ref_from_i64(v), "from_i64({v})");
        if v.unsigned_abs() <= 1u64 << 53 {
            let f = ref_special(v as f64).unwrap_or_else(|| ref_round_f64(v as f64, 0.0));
            assert_eq!(got, f, "from_i64({v}) via f64");
        }
    }
}

#[test]
fn from_i64_zero_is_positive_zero() {
    assert_eq!(Bf16::from_i64(0), Bf16::POS_ZERO);
}

#[test]
fn findemax_order_exhaustive_against_reference() {
    let set = pair_set();
    for &b in &set {
        for a in 0..=0xFFFFu16 {
            let main = Bf16(b).emax_cmp(Bf16(a)) == std::cmp::Ordering::Greater;
            // Subnormals compare as the zero of their sign in both.
            assert_eq!(main, ref_greater(a, b), "emax: {b:#06x} > {a:#06x}");
        }
    }
}

// ---------------------------------------------------------------------------
// Property tests.

const SPECIALS: &[u16] = &[
    0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0,
    0x7F81, 0xFFFF, 0x3F80, 0xBF80, 0x7F00, 0x0100, 0x1FFF, 0x2000,
];

/// BF16 patterns biased toward specials and the range edges.
fn bf16_bits() -> impl Strategy<Value = u16> {
    prop_oneof![
        3 => any::<u16>(),
        2 => select(SPECIALS),
        1 => 0x0080u16..0x0400, // just above the normal floor
        1 => 0x7C00u16..0x7F80, // huge
        1 => 0x8080u16..0x8400,
        1 => 0xFC00u16..0xFF80,
    ]
}

/// Scales: specials, tiny (products flush), huge (products overflow), and
/// values near 1.
fn scale_bits() -> impl Strategy<Value = u16> {
    prop_oneof![
        3 => bf16_bits(),
        1 => 0x3E00u16..0x4100,
        1 => 0xBE00u16..0xC100,
    ]
}

fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![
        1 => Just(1usize),
        3 => select(vec![2usize, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65]),
        2 => 1usize..=70,
    ]
}

fn i8_val() -> impl Strategy<Value = i8> {
    prop_oneof![3 => any::<i8>(), 1 => select(vec![-128i8, -127, -1, 0, 1, 126, 127])]
}

fn i4_val() -> impl Strategy<Value = i8> {
    prop_oneof![3 => -8i8..=7, 1 => select(vec![-8i8, 7, -1, 0])]
}

/// A GEMV/GEMM case: shapes, values (sometimes all-extreme, for the largest
/// accumulators), optional scales and optional old destination values.
fn case() -> impl Strategy<Value = RefCase> {
    (
        1usize..=4,
        dim(),
        dim(),
        any::<bool>(),
        any::<bool>(),
        0u8..8,
    )
        .prop_flat_map(|(m, k, n, w_scale, accm, extreme)| {
            let act = if extreme == 0 {
                Just(vec![-128i8; m * k]).boxed()
            } else {
                prop::collection::vec(i8_val(), m * k).boxed()
            };
            let w = if extreme == 0 {
                prop::collection::vec(select(vec![-8i8, 7]), k * n).boxed()
            } else {
                prop::collection::vec(i4_val(), k * n).boxed()
            };
            let scales = if w_scale {
                prop::collection::vec(scale_bits(), n)
                    .prop_map(Some)
                    .boxed()
            } else {
                Just(None).boxed()
            };
            let old = if accm {
                prop::collection::vec(bf16_bits(), m * n)
                    .prop_map(Some)
                    .boxed()
            } else {
                Just(None).boxed()
            };
            (act, w, scales, old).prop_map(move |(act, w, scales, old)| RefCase {
                m,
                k,
                n,
                act,
                w,
                scales,
                old,
            })
        })
}

fn to_bf16(v: &[u16]) -> Vec<Bf16> {
    v.iter().map(|&b| Bf16(b)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn add_mul_random_pairs(a in bf16_bits(), b in bf16_bits()) {
        prop_assert_eq!(Bf16(a).add(Bf16(b)).0, ref_add(a, b));
        prop_assert_eq!(Bf16(a).mul(Bf16(b)).0, ref_mul(a, b));
    }

    #[test]
    fn from_i64_random(v in any::<i64>(), shift in 0u32..64) {
        let v = v >> shift; // all magnitudes, not just huge ones
        prop_assert_eq!(Bf16::from_i64(v).0, ref_from_i64(v));
    }

    #[test]
    fn round_exact_random(
        neg in any::<bool>(),
        mant in any::<u128>(),
        shift in 0u32..128,
        exp in -400i32..300,
    ) {
        let mant = mant >> shift;
        prop_assert_eq!(round_exact(neg, mant, exp).0, ref_round_int(neg, mant, i64::from(exp)));
    }

    #[test]
    fn round_exact_vs_f64(neg in any::<bool>(), mant in 1u64..(1 << 53), exp in -300i32..200) {
        // mant < 2^53 and |mant * 2^exp| within [2^-300, 2^253]: exact in f64.
        let x = mant as f64 * two_pow(exp);
        let x = if neg { -x } else { x };
        prop_assert_eq!(round_exact(neg, u128::from(mant), exp).0, ref_round_f64(x, 0.0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// The pure GEMV/GEMM function against the triple loop.
    #[test]
    fn gemm_against_reference(c in case()) {
        let scales = c.scales.as_deref().map(to_bf16);
        let old = c.old.as_deref().map(to_bf16);
        let inp = MatInputs {
            m: c.m, k: c.k, n: c.n,
            act: &c.act, weights: &c.w,
            scales: scales.as_deref(), old: old.as_deref(),
        };
        let got = w4a8::gemm(&inp).unwrap();
        let (want, want_max) = ref_gemm(&c);
        let got_bits: Vec<u16> = got.out.iter().map(|b| b.0).collect();
        prop_assert_eq!(got_bits, want);
        prop_assert_eq!(got.e_max.0, want_max);
    }

    /// The same through the memory layouts: activations packed into L2
    /// words, weights and scales through the stream beats (built by the
    /// reference), the output packed into masked L2 words.
    #[test]
    fn gemm_through_layouts(c in case()) {
        let beats = ref_beats(c.k, c.n, &c.w, c.scales.as_deref());
        prop_assert_eq!(beats.len(), w4a8::beat_count(c.k, c.n, c.scales.is_some()));
        let words = w4a8::pack_activations(c.m, c.k, &c.act).unwrap();
        let stride = c.k.div_ceil(16);
        prop_assert_eq!(words.len(), c.m * stride);
        for i in 0..c.m {
            for kk in 0..c.k {
                prop_assert_eq!(ref_i8(words[i * stride + kk / 16], kk % 16), c.act[i * c.k + kk]);
            }
        }
        let act = w4a8::unpack_activations(c.m, c.k, &words).unwrap();
        let (w, scales) = w4a8::split_weight_beats(c.k, c.n, c.scales.is_some(), &beats).unwrap();
        let old = c.old.as_deref().map(to_bf16);
        let inp = MatInputs {
            m: c.m, k: c.k, n: c.n,
            act: &act, weights: &w,
            scales: scales.as_deref(), old: old.as_deref(),
        };
        let got = w4a8::gemm(&inp).unwrap();
        let (want, _) = ref_gemm(&c);
        let packed = w4a8::pack_output(c.m, c.n, &got.out).unwrap();
        let ostride = c.n.div_ceil(8);
        prop_assert_eq!(packed.len(), c.m * ostride);
        for i in 0..c.m {
            for q in 0..ostride {
                let (data, mask) = packed[i * ostride + q];
                for lane in 0..8 {
                    let col = 8 * q + lane;
                    let elem = (data >> (16 * lane)) as u16;
                    if col < c.n {
                        prop_assert!(mask & (1 << lane) != 0);
                        prop_assert_eq!(elem, want[i * c.n + col]);
                    } else {
                        prop_assert!(mask & (1 << lane) == 0);
                        prop_assert_eq!(elem, 0);
                    }
                }
            }
        }
    }

    /// Beats: the layout helper equals the reference's, the inverse gives
    /// back W and s, and garbage in lanes past N is ignored.
    #[test]
    fn weight_beats_layout(c in case(), junk in any::<u128>()) {
        let scales = c.scales.as_deref().map(to_bf16);
        let beats = w4a8::weight_beats(c.k, c.n, &c.w, scales.as_deref()).unwrap();
        let want = ref_beats(c.k, c.n, &c.w, c.scales.as_deref());
        prop_assert_eq!(&beats, &want);
        // Lane checks by the i128 route.
        let tiles = c.n.div_ceil(32);
        for (b, &word) in beats[..tiles * c.k].iter().enumerate() {
            for lane in 0..32 {
                let col = 32 * (b / c.k) + lane;
                let want = if col < c.n { c.w[(b % c.k) * c.n + col] } else { 0 };
                prop_assert_eq!(ref_i4(word, lane), want);
            }
        }
        // Dirty the lanes past N, then split.
        let mut dirty = beats.clone();
        let tail = c.n % 32;
        if tail != 0 {
            let keep = (1u128 << (4 * tail)) - 1;
            for t in 0..c.k {
                let i = (tiles - 1) * c.k + t;
                dirty[i] |= junk & !keep;
            }
        }
        if c.scales.is_some() && c.n % 8 != 0 {
            let keep = (1u128 << (16 * (c.n % 8))) - 1;
            let last = dirty.len() - 1;
            dirty[last] |= junk & !keep;
        }
        let (w, s) = w4a8::split_weight_beats(c.k, c.n, c.scales.is_some(), &dirty).unwrap();
        prop_assert_eq!(&w, &c.w);
        prop_assert_eq!(s.map(|v| v.iter().map(|b| b.0).collect::<Vec<_>>()), c.scales.clone());
    }

    /// Lane unpacking against the arithmetic-shift route, and round trips.
    #[test]
    fn unpack_lanes(word in any::<u128>()) {
        let i4 = w4a8::unpack_i4(word);
        let i8s = w4a8::unpack_i8(word);
        for (lane, &v) in i4.iter().enumerate() {
            prop_assert_eq!(v, ref_i4(word, lane));
        }
        for (lane, &v) in i8s.iter().enumerate() {
            prop_assert_eq!(v, ref_i8(word, lane));
        }
        for (lane, v) in w4a8::unpack_bf16(word).iter().enumerate() {
            prop_assert_eq!(v.0, (word >> (16 * lane)) as u16);
        }
        prop_assert_eq!(w4a8::pack_i4(&i4), word);
        prop_assert_eq!(w4a8::pack_i8(&i8s), word);
        prop_assert_eq!(w4a8::pack_bf16(&w4a8::unpack_bf16(word)), word);
    }
}
