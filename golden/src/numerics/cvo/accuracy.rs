//! The golden CVO functions against the exact functions, over every BF16
//! input (CONTRACT section 7, docs/cvo.md section 6 "Accuracy").
//!
//! The golden model computes each function with the RTL's fixed-point
//! algorithm; this module asks how far that is from the *exact* value
//! rounded once to BF16 (the correctly rounded result, with the DAZ and FTZ
//! rules of docs/numerics.md section 1). Two ways to know the correctly
//! rounded result:
//!
//! - SQRT and RECIP ([`Method::Exact`]): proven with integer arithmetic. A
//!   candidate `q * 2^E` is the correctly rounded result of `v` exactly when
//!   the midpoints to its neighbours bracket `v`; for `v = sqrt(x)` that
//!   compares their squares with `x`, for `v = 1/x` their products with `x`
//!   with 1, all exact in `u128`. The f64 result only proposes the candidate.
//! - EXP, SIN, COS, GELU ([`Method::F64`]): an f64 reference (glibc),
//!   whose error is far below 2^-40 relative, rounded once with
//!   [`round_exact`] after an exact decomposition into significand and
//!   exponent (never through `f32`). It gives the correctly rounded result
//!   unless the exact value is within that error of a rounding boundary; so
//!   each input's *margin* (relative distance of the reference from the
//!   nearest boundary that changes the BF16 result) is computed, and inputs
//!   with a margin below [`AMBIGUOUS_MARGIN`] are counted as *ambiguous*
//!   (none are, for any function: the bound checks below require that).
//!
//! REDUCE_SUM's exact accumulator is checked against an exact sum of its
//! own ([`reduce_sum_report`]), written independently of [`ExactSum`].

use super::ExactSum;
use crate::isa::CvoFunc;
use crate::numerics::bf16::{round_exact, Bf16, Class, Value};
use std::cmp::Ordering;

extern "C" {
    /// glibc's complementary error function. std already links libm on
    /// Linux (its `f64::exp`, `sin`, ... are libm's); Rust's std has no
    /// `erfc`, and no new crate is wanted for one function.
    fn erfc(x: f64) -> f64;
}

/// The elementwise functions this module checks, in the report's order.
pub const FUNCTIONS: [CvoFunc; 6] = [
    CvoFunc::Exp,
    CvoFunc::Sqrt,
    CvoFunc::Gelu,
    CvoFunc::Sin,
    CvoFunc::Cos,
    CvoFunc::Recip,
];

/// A reference whose distance from a rounding boundary is below this
/// (relative) does not decide the correctly rounded result: the library's
/// error could put the exact value on the other side. glibc's error is a
/// few f64 ulps (2^-52 relative each; docs/cvo.md section 6), so 2^-40
/// tolerates a reference 4096 ulps off.
pub const AMBIGUOUS_MARGIN: f64 = 1.0 / (1u64 << 40) as f64;

/// The accuracy bound of CONTRACT section 7, in BF16 steps from the
/// correctly rounded result: 0 (correctly rounded) for SQRT, RECIP and the
/// exactly rounded REDUCE_SUM and SCALE, 1 for EXP, SIN, COS, 2 for GELU.
pub fn bound(func: CvoFunc) -> u32 {
    match func {
        CvoFunc::Sqrt | CvoFunc::Recip | CvoFunc::ReduceSum | CvoFunc::Scale => 0,
        CvoFunc::Exp | CvoFunc::Sin | CvoFunc::Cos => 1,
        CvoFunc::Gelu => 2,
    }
}

/// How the correctly rounded result of a function is known.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Method {
    /// Proven with exact integer comparisons (SQRT, RECIP).
    Exact,
    /// An f64 reference rounded once, with its margin checked (EXP, SIN,
    /// COS, GELU).
    F64,
}

impl Method {
    pub fn of(func: CvoFunc) -> Method {
        match func {
            CvoFunc::Sqrt | CvoFunc::Recip => Method::Exact,
            _ => Method::F64,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::F64 => "f64",
        }
    }
}

/// One input's result.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub input: Bf16,
    pub golden: Bf16,
    /// The correctly rounded result.
    pub reference: Bf16,
    /// The f64 reference value (for SQRT and RECIP the f64 result; it is
    /// only used for `error_ulp` there).
    pub exact: f64,
    /// BF16 steps between `golden` and `reference` ([`steps`]); `None`
    /// when exactly one of them is a NaN.
    pub steps: Option<u32>,
    /// `(golden - exact) / ulp(exact)`, signed, with `ulp(v)` the BF16
    /// spacing in `v`'s binade (`2^(floor(log2 |v|) - 7)`). NaN for a
    /// special-value case (where it means nothing).
    pub error_ulp: f64,
    /// A special-value case: the reference or the golden result is a NaN,
    /// an infinity or a zero (or not a result at all, a subnormal). These
    /// must match bit for bit.
    pub special: bool,
    /// Relative distance of the f64 reference from the nearest rounding
    /// boundary that changes the BF16 result; infinite where no boundary
    /// is near (special values) and for [`Method::Exact`].
    pub margin: f64,
}

impl Record {
    pub fn correctly_rounded(&self) -> bool {
        self.golden == self.reference
    }

    pub fn ambiguous(&self) -> bool {
        self.margin < AMBIGUOUS_MARGIN
    }
}

/// One function over all 65,536 inputs.
#[derive(Clone, Debug)]
pub struct FunctionReport {
    pub func: CvoFunc,
    /// The bound checked against, in steps (normally [`bound`]).
    pub bound: u32,
    pub method: Method,
    pub inputs: usize,
    /// Largest [`Record::steps`], and the first input (in bit-pattern
    /// order) where it occurs.
    pub max_steps: u32,
    pub max_steps_input: Bf16,
    /// Largest `|error_ulp|` over the non-special cases, and its input.
    pub max_error_ulp: f64,
    pub max_error_input: Bf16,
    /// Inputs whose golden result is not the correctly rounded one.
    pub not_correctly_rounded: usize,
    pub special_cases: usize,
    /// Special-value cases where golden and reference differ (inputs).
    pub special_mismatches: Vec<Bf16>,
    /// Inputs further than `bound` steps from the correctly rounded result
    /// (or a NaN against a number).
    pub out_of_bound: Vec<Bf16>,
    /// Inputs whose reference is too close to a rounding boundary to
    /// decide the correctly rounded result.
    pub ambiguous: Vec<Bf16>,
    /// The smallest margin over all inputs, and its input.
    pub min_margin: f64,
    pub min_margin_input: Bf16,
    /// Every input's record, in bit-pattern order.
    pub records: Vec<Record>,
}

impl FunctionReport {
    /// Within the bound, every special value right, every case decided.
    pub fn passed(&self) -> bool {
        self.out_of_bound.is_empty()
            && self.special_mismatches.is_empty()
            && self.ambiguous.is_empty()
    }
}

/// The golden model's function `func` against the exact one, over every
/// BF16 input. Panics for REDUCE_SUM and SCALE (not unary; see
/// [`reduce_sum_report`]).
pub fn report(func: CvoFunc) -> FunctionReport {
    check(func, bound(func), |x| {
        super::unary(func, x).expect("one of the unary functions")
    })
}

/// `implementation` checked as the function `func` against `bound`: the
/// same checker [`report`] uses, open to any implementation so a test can
/// show it catches a wrong one.
pub fn check(func: CvoFunc, bound: u32, implementation: impl Fn(Bf16) -> Bf16) -> FunctionReport {
    assert!(
        FUNCTIONS.contains(&func),
        "{} is not an elementwise function",
        func.name()
    );
    let method = Method::of(func);
    let records: Vec<Record> = (0..=u16::MAX)
        .map(|bits| {
            let input = Bf16(bits);
            record(func, method, input, implementation(input))
        })
        .collect();
    summarize(func, bound, method, records)
}

fn summarize(func: CvoFunc, bound: u32, method: Method, records: Vec<Record>) -> FunctionReport {
    let mut r = FunctionReport {
        func,
        bound,
        method,
        inputs: records.len(),
        max_steps: 0,
        max_steps_input: Bf16(0),
        max_error_ulp: 0.0,
        max_error_input: Bf16(0),
        not_correctly_rounded: 0,
        special_cases: 0,
        special_mismatches: Vec::new(),
        out_of_bound: Vec::new(),
        ambiguous: Vec::new(),
        min_margin: f64::INFINITY,
        min_margin_input: Bf16(0),
        records: Vec::new(),
    };
    for rec in &records {
        if !rec.correctly_rounded() {
            r.not_correctly_rounded += 1;
        }
        if rec.special {
            r.special_cases += 1;
            if !rec.correctly_rounded() {
                r.special_mismatches.push(rec.input);
            }
        } else if rec.error_ulp.abs() > r.max_error_ulp {
            r.max_error_ulp = rec.error_ulp.abs();
            r.max_error_input = rec.input;
        }
        match rec.steps {
            Some(s) if s > r.max_steps => {
                r.max_steps = s;
                r.max_steps_input = rec.input;
            }
            _ => {}
        }
        if rec.steps.is_none_or(|s| s > bound) {
            r.out_of_bound.push(rec.input);
        }
        if rec.ambiguous() {
            r.ambiguous.push(rec.input);
        }
        if rec.margin < r.min_margin {
            r.min_margin = rec.margin;
            r.min_margin_input = rec.input;
        }
    }
    r.records = records;
    r
}

fn record(func: CvoFunc, method: Method, input: Bf16, golden: Bf16) -> Record {
    // DAZ: the functions see a subnormal input as the zero of its sign, so
    // the exact function is taken at that zero.
    let x = input.canonical().to_f64();
    let exact = reference_f64(func, x);
    let (reference, margin) = match (func, input.value()) {
        (
            CvoFunc::Recip,
            Value::Finite {
                negative,
                mant,
                exp,
            },
        ) => (proven_recip(negative, mant, exp, exact), f64::INFINITY),
        (
            CvoFunc::Sqrt,
            Value::Finite {
                negative: false,
                mant,
                exp,
            },
        ) => (proven_sqrt(mant, exp, exact), f64::INFINITY),
        // Every other input of SQRT and RECIP has an IEEE special result
        // (NaN, +-0, +-Inf), which f64 gives exactly.
        _ if method == Method::Exact => (round_f64(exact), f64::INFINITY),
        _ => (round_f64(exact), margin(exact)),
    };
    let special = !is_ordinary(golden) || !is_ordinary(reference);
    let error_ulp = if special {
        f64::NAN
    } else {
        (golden.to_f64() - exact) / ulp(exact)
    };
    Record {
        input,
        golden,
        reference,
        exact,
        steps: steps(golden, reference),
        error_ulp,
        special,
        margin,
    }
}

/// A normal number: not a NaN, an infinity, a zero, or a subnormal (which
/// is never a valid result).
fn is_ordinary(b: Bf16) -> bool {
    b.class() == Class::Normal
}

/// The exact function at `x` in f64 (x is a BF16 value, so exact in f64).
/// IEEE's special cases come out of f64 as the contract wants them:
/// `exp(-Inf) = +0`, `sin(+-Inf) = NaN`, `sqrt(-0) = -0`, `1/+-0 = +-Inf`.
pub fn reference_f64(func: CvoFunc, x: f64) -> f64 {
    match func {
        CvoFunc::Exp => x.exp(),
        CvoFunc::Sin => x.sin(),
        CvoFunc::Cos => x.cos(),
        CvoFunc::Sqrt => x.sqrt(),
        CvoFunc::Recip => 1.0 / x,
        CvoFunc::Gelu => gelu_f64(x),
        CvoFunc::ReduceSum | CvoFunc::Scale => panic!("{} is not unary", func.name()),
    }
}

/// `x * Phi(x) = x * erfc(-x / sqrt 2) / 2`. For negative `x` that is a
/// product of small numbers (erfc of a positive argument), so it keeps its
/// relative accuracy down to the BF16 underflow near -13.2; no `1 - ...`.
fn gelu_f64(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        // The limit: x * Phi(x) -> -0. (-Inf * erfc(+Inf) would be NaN.)
        return -0.0;
    }
    if !x.is_finite() || x == 0.0 {
        return x; // NaN, +Inf, +-0
    }
    // z = -x / sqrt 2 as z_hi + z_lo: the rounding of the argument would
    // otherwise be amplified by erfc's condition number (about 2 z^2, 256
    // at |x| = 16) to 2^-45. 1/sqrt 2 = C_HI + c_lo with c_lo from
    // 2 C_HI^2 = 1 - 4 C_HI c_lo (first order, c_lo ~ 2^-54).
    const C_HI: f64 = std::f64::consts::FRAC_1_SQRT_2;
    let c_lo = (-2.0 * C_HI).mul_add(C_HI, 1.0) * C_HI / 2.0;
    let z_hi = -x * C_HI;
    let z_lo = (-x).mul_add(C_HI, -z_hi) + -x * c_lo;
    // erfc(z_hi + z_lo) = erfc(z_hi) - z_lo * 2/sqrt(pi) * e^(-z_hi^2) + O(z_lo^2)
    // SAFETY: erfc is a pure libm function of one double.
    let tail = unsafe { erfc(z_hi) };
    let tail = tail - z_lo * std::f64::consts::FRAC_2_SQRT_PI * (-z_hi * z_hi).exp();
    x * tail / 2.0
}

/// `v = (-1)^negative * mant * 2^exp` exactly, for a finite non-zero f64.
fn decompose(v: f64) -> (bool, u64, i32) {
    let bits = v.to_bits();
    let negative = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7FF) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if biased == 0 {
        (negative, fraction, -1074) // f64 subnormal
    } else {
        (negative, fraction | 1 << 52, biased - 1075)
    }
}

/// The f64 value rounded once to BF16: exactly decomposed, then
/// [`round_exact`] (so FTZ and overflow are judged as everywhere else).
pub fn round_f64(v: f64) -> Bf16 {
    if v.is_nan() {
        Bf16::NAN
    } else if v.is_infinite() {
        if v > 0.0 {
            Bf16::POS_INF
        } else {
            Bf16::NEG_INF
        }
    } else if v == 0.0 {
        if v.is_sign_negative() {
            Bf16::NEG_ZERO
        } else {
            Bf16::POS_ZERO
        }
    } else {
        let (negative, mant, exp) = decompose(v);
        round_exact(negative, u128::from(mant), exp)
    }
}

/// `2^e` as an f64, `e` in the normal range (exact).
fn pow2(e: i32) -> f64 {
    assert!(
        (-1022..=1023).contains(&e),
        "2^{e} is outside f64's normal range"
    );
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `|v|` truncated to 8 significant bits, `q * 2^e` with `q` in
/// 128..=255, for a finite non-zero `v`.
fn truncate8(v: f64) -> (u64, i32) {
    let (_, mant, exp) = decompose(v);
    let msb = 63 - mant.leading_zeros() as i32;
    if msb >= 7 {
        (mant >> (msb - 7), exp + msb - 7)
    } else {
        (mant << (7 - msb), exp - (7 - msb))
    }
}

/// The magnitude `q * 2^e` (on BF16's 8-bit grid, unbounded exponent) as
/// the BF16 result it stands for.
fn grid(q: u64, e: i32) -> Bf16 {
    round_exact(false, u128::from(q), e)
}

/// The relative distance of `v` from the nearest rounding boundary that
/// changes its BF16 result. The boundaries are the midpoints of the 8-bit
/// grid (with an unbounded exponent, as `round_exact` rounds); one between
/// two grid points that give the same result (both flushed to zero, both
/// overflowed to Inf) is not a boundary.
fn margin(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return f64::INFINITY;
    }
    // t = q * 2^e: v truncated to 8 bits, so t <= |v| < t + 2^e.
    let (q, e) = truncate8(v);
    let magnitude = v.abs();
    let mut best = f64::INFINITY;
    // The midpoint between t and t + 2^e, and the one below t (a quarter
    // step below at the bottom of a binade, where the grid halves).
    let above = (2 * q + 1, e - 1, grid(q + 1, e));
    let below = if q == 128 {
        (511, e - 2, grid(255, e - 1))
    } else {
        (2 * q - 1, e - 1, grid(q - 1, e))
    };
    for (k, j, neighbour) in [above, below] {
        if neighbour != grid(q, e) {
            // Both within a factor 2 of v: the subtraction is exact.
            let distance = (magnitude - k as f64 * pow2(j)).abs();
            best = best.min(distance / magnitude);
        }
    }
    best
}

/// The BF16 spacing in the binade of `v`, with an unbounded exponent.
fn ulp(v: f64) -> f64 {
    let (_, mant, exp) = decompose(v);
    let msb = 63 - mant.leading_zeros() as i32;
    pow2(msb + exp - 7)
}

/// A result's position on the real line among the possible results
/// {-Inf, normals, +-0, normals, +Inf} (subnormals are never results, so
/// 0 and 2^-126 are neighbours; -0 and +0 are one point). `None` for NaN.
fn position(b: Bf16) -> Option<i32> {
    if b.is_nan() {
        return None;
    }
    let magnitude = i32::from(b.0 & 0x7FFF);
    let from_zero = if magnitude < 0x80 {
        0
    } else {
        magnitude - 0x7F
    };
    Some(if b.is_sign_negative() {
        -from_zero
    } else {
        from_zero
    })
}

/// The distance between two results in BF16 steps: how many possible
/// results one passes going from one to the other. Two NaNs are 0 apart;
/// a NaN and a number are not comparable (`None`).
pub fn steps(a: Bf16, b: Bf16) -> Option<u32> {
    match (position(a), position(b)) {
        (Some(x), Some(y)) => Some(x.abs_diff(y)),
        (None, None) => Some(0),
        _ => None,
    }
}

// ----- exact proofs: SQRT and RECIP ---------------------------------------------

/// `a * 2^p` against `b * 2^q`, exactly, for non-zero `a` and `b`.
fn cmp_scaled(a: u128, p: i32, b: u128, q: i32) -> Ordering {
    let top = |v: u128, e: i32| i64::from(128 - v.leading_zeros()) + i64::from(e);
    match top(a, p).cmp(&top(b, q)) {
        Ordering::Equal => {}
        other => return other,
    }
    // Same binade: shifting the one with the larger exponent left by the
    // difference gives it the other's bit length, so it fits.
    if p >= q {
        (a << (p - q)).cmp(&b)
    } else {
        a.cmp(&(b << (q - p)))
    }
}

/// The correctly rounded magnitude of an exact value `v`, given
/// `point(k, j)` = the order of `k * 2^j` against `v` and a first guess
/// `q * 2^e` (q in 128..=255): moves the guess until the midpoints to its
/// neighbours bracket `v`, ties to the even neighbour. The answer depends
/// only on the comparisons, never on the guess.
fn round_proven(point: impl Fn(u128, i32) -> Ordering, mut q: u128, mut e: i32) -> (u128, i32) {
    let down = |q: u128, e: i32| if q == 128 { (255, e - 1) } else { (q - 1, e) };
    let up = |q: u128, e: i32| if q == 255 { (128, e + 1) } else { (q + 1, e) };
    // A tie between `q * 2^e` and a neighbour: the even significand wins.
    let tie = |q: u128, e: i32, neighbour: (u128, i32)| {
        if q.is_multiple_of(2) {
            (q, e)
        } else {
            neighbour
        }
    };
    loop {
        let (below_k, below_j) = if q == 128 {
            (511, e - 2)
        } else {
            (2 * q - 1, e - 1)
        };
        match point(below_k, below_j) {
            Ordering::Greater => {
                (q, e) = down(q, e);
                continue;
            }
            Ordering::Equal => return tie(q, e, down(q, e)),
            Ordering::Less => {}
        }
        match point(2 * q + 1, e - 1) {
            Ordering::Less => (q, e) = up(q, e),
            Ordering::Equal => return tie(q, e, up(q, e)),
            Ordering::Greater => return (q, e),
        }
    }
}

/// A first guess `q * 2^e` on the 8-bit grid near a finite non-zero f64.
fn guess(v: f64) -> (u128, i32) {
    let (q, e) = truncate8(v);
    (u128::from(q), e)
}

/// `sqrt(mant * 2^exp)` correctly rounded, proven: `k * 2^j <= sqrt(x)`
/// exactly when `k^2 * 2^(2j) <= mant * 2^exp`.
fn proven_sqrt(mant: u32, exp: i32, estimate: f64) -> Bf16 {
    let point = |k: u128, j: i32| cmp_scaled(k * k, 2 * j, u128::from(mant), exp);
    let (q0, e0) = guess(estimate);
    let (q, e) = round_proven(point, q0, e0);
    round_exact(false, q, e)
}

/// `1 / (mant * 2^exp)` correctly rounded, proven: `k * 2^j <= 1/x`
/// exactly when `k * mant * 2^(j + exp) <= 1`.
fn proven_recip(negative: bool, mant: u32, exp: i32, estimate: f64) -> Bf16 {
    let point = |k: u128, j: i32| cmp_scaled(k * u128::from(mant), j + exp, 1, 0);
    let (q0, e0) = guess(estimate.abs());
    let (q, e) = round_proven(point, q0, e0);
    round_exact(negative, q, e)
}

// ----- REDUCE_SUM ---------------------------------------------------------------

/// An exact sum of BF16 values, written apart from [`ExactSum`] so the two
/// can check each other: signed 32-bit digits held in `i64`s, carries
/// resolved only at the end (ExactSum keeps two unsigned magnitudes with
/// immediate carries). Units of 2^-133, 10 digits = 320 bits.
struct ReferenceSum {
    digits: [i64; DIGITS],
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
}

const DIGITS: usize = 10;

impl ReferenceSum {
    fn of(terms: &[Bf16]) -> Bf16 {
        let mut s = ReferenceSum {
            digits: [0; DIGITS],
            nan: false,
            pos_inf: false,
            neg_inf: false,
        };
        for &t in terms {
            s.add(t);
        }
        s.round()
    }

    fn add(&mut self, x: Bf16) {
        match x.value() {
            Value::Nan => self.nan = true,
            Value::Inf { negative } => {
                if negative {
                    self.neg_inf = true
                } else {
                    self.pos_inf = true
                }
            }
            Value::Zero { .. } => {}
            Value::Finite {
                negative,
                mant,
                exp,
            } => {
                // mant * 2^exp = mant * 2^(exp + 133) units: at most 39 bits
                // starting in one digit; each digit gains less than 2^32 per
                // term, so 65,535 terms stay far inside i64.
                let shift = (exp + 133) as usize;
                let wide = u64::from(mant) << (shift % 32);
                let sign = if negative { -1 } else { 1 };
                self.digits[shift / 32] += sign * (wide & 0xFFFF_FFFF) as i64;
                self.digits[shift / 32 + 1] += sign * (wide >> 32) as i64;
            }
        }
    }

    fn round(mut self) -> Bf16 {
        if self.nan || (self.pos_inf && self.neg_inf) {
            return Bf16::NAN;
        }
        if self.pos_inf {
            return Bf16::POS_INF;
        }
        if self.neg_inf {
            return Bf16::NEG_INF;
        }
        // Afterwards every digit but the top one is in 0..2^32, and the top
        // one (which no term reaches) has the sign of the whole sum.
        carry(&mut self.digits);
        let negative = self.digits[DIGITS - 1] < 0;
        if negative {
            // The magnitude: every digit negated, carried again.
            for d in &mut self.digits {
                *d = -*d;
            }
            carry(&mut self.digits);
        }
        let magnitude: Vec<u64> = self.digits.iter().map(|&d| d as u64).collect();
        let Some(top) = (0..DIGITS).rev().find(|&i| magnitude[i] != 0) else {
            return Bf16::POS_ZERO; // an exact zero has no sign: +0
        };
        // The top three digits (up to 96 bits) hold every bit that reaches
        // the rounding; anything below only decides a tie, as one sticky bit.
        let low = top.saturating_sub(2);
        let head = (low..=top)
            .rev()
            .fold(0u128, |acc, i| (acc << 32) | u128::from(magnitude[i]));
        let sticky = magnitude[..low].iter().any(|&d| d != 0);
        round_exact(
            negative,
            (head << 1) | u128::from(sticky),
            32 * low as i32 - 133 - 1,
        )
    }
}

/// Moves each digit's excess over 0..2^32 into the next digit up (an
/// arithmetic shift: floor division, right for negative digits too).
fn carry(digits: &mut [i64; DIGITS]) {
    for i in 0..DIGITS - 1 {
        let c = digits[i] >> 32;
        digits[i] -= c << 32;
        digits[i + 1] += c;
    }
}

/// One REDUCE_SUM vector and what was found for it.
#[derive(Clone, Debug)]
pub struct SumCase {
    /// Which generator made it (e.g. `cancel`, `random-band`).
    pub kind: &'static str,
    pub terms: usize,
    /// The exact sum rounded once (the independent reference).
    pub expected: Bf16,
    /// The checked sum in one part, and split into 2 and 4 parts
    /// interleaved (element `i` to part `i mod n`, as the engine gives
    /// elements to cores) and contiguous.
    pub results: Vec<(String, Bf16)>,
}

impl SumCase {
    pub fn exact(&self) -> bool {
        self.results.iter().all(|(_, r)| *r == self.expected)
    }
}

/// REDUCE_SUM over many vectors.
#[derive(Clone, Debug)]
pub struct SumReport {
    pub seed: u64,
    pub vectors: usize,
    pub terms: usize,
    /// Vectors where some split's result differs from the exact sum.
    pub mismatches: Vec<SumCase>,
    /// Vectors where the splits disagree among themselves.
    pub split_disagreements: usize,
    /// The result classes met (so a report shows the adversarial cases
    /// really reached NaN, Inf, zero and FTZ results).
    pub nan_results: usize,
    pub inf_results: usize,
    pub zero_results: usize,
}

impl SumReport {
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty() && self.split_disagreements == 0
    }
}

/// The golden model's REDUCE_SUM ([`ExactSum`], split and merged as the
/// cores would) against the independent exact sum, over the adversarial
/// vectors and `random` seeded random ones.
pub fn reduce_sum_report(seed: u64, random: usize) -> SumReport {
    check_sum(&sum_vectors(seed, random), seed, |terms, parts| {
        let mut total = ExactSum::new();
        for part in parts_of(terms, parts) {
            let mut core = ExactSum::new();
            for x in part {
                core.add(x);
            }
            total.merge(&core);
        }
        total.round()
    })
}

/// How a vector is divided: `(name, parts, interleaved)`.
pub const SPLITS: [(&str, usize, bool); 5] = [
    ("1", 1, false),
    ("2-interleaved", 2, true),
    ("4-interleaved", 4, true),
    ("2-contiguous", 2, false),
    ("4-contiguous", 4, false),
];

/// How a vector is divided between cores: `parts` of them, element `i` to
/// part `i mod parts` (interleaved, as the engine deals elements) or in
/// contiguous chunks.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    pub parts: usize,
    pub interleaved: bool,
}

fn parts_of(terms: &[Bf16], split: Split) -> Vec<Vec<Bf16>> {
    let n = split.parts.max(1);
    if split.interleaved {
        (0..n)
            .map(|k| terms.iter().skip(k).step_by(n).copied().collect())
            .collect()
    } else {
        let size = terms.len().div_ceil(n).max(1);
        let mut parts: Vec<Vec<Bf16>> = terms.chunks(size).map(<[Bf16]>::to_vec).collect();
        parts.resize(n, Vec::new());
        parts
    }
}

/// `sum(terms, split)` checked against the exact sum for each vector and
/// split; open to any summation so a test can show a wrong one is caught.
pub fn check_sum(
    vectors: &[(&'static str, Vec<Bf16>)],
    seed: u64,
    sum: impl Fn(&[Bf16], Split) -> Bf16,
) -> SumReport {
    let mut report = SumReport {
        seed,
        vectors: vectors.len(),
        terms: 0,
        mismatches: Vec::new(),
        split_disagreements: 0,
        nan_results: 0,
        inf_results: 0,
        zero_results: 0,
    };
    for (kind, terms) in vectors {
        report.terms += terms.len();
        let expected = ReferenceSum::of(terms);
        let results: Vec<(String, Bf16)> = SPLITS
            .iter()
            .map(|&(name, parts, interleaved)| {
                (name.to_string(), sum(terms, Split { parts, interleaved }))
            })
            .collect();
        match expected.class() {
            Class::Nan => report.nan_results += 1,
            Class::Inf => report.inf_results += 1,
            Class::Zero => report.zero_results += 1,
            _ => {}
        }
        if results.iter().any(|(_, r)| *r != results[0].1) {
            report.split_disagreements += 1;
        }
        let case = SumCase {
            kind,
            terms: terms.len(),
            expected,
            results,
        };
        if !case.exact() {
            report.mismatches.push(case);
        }
    }
    report
}

/// The most terms one REDUCE_SUM can have (`length` is 16 bits).
pub const MAX_TERMS: usize = 65_535;

/// xorshift64*: a small seeded generator (golden has no `rand`).
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        // Any non-zero state; spread the seed so nearby seeds differ.
        XorShift((seed ^ 0x9E37_79B9_7F4A_7C15).max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bits(&mut self) -> u16 {
        (self.next() >> 48) as u16
    }

    /// A finite non-zero BF16 with biased exponent in `lo..=hi`.
    fn finite(&mut self, lo: u16, hi: u16) -> Bf16 {
        let exp = lo + self.below(u64::from(hi - lo + 1)) as u16;
        let sign = (self.bits() & 1) << 15;
        Bf16(sign | exp << 7 | (self.bits() & 0x7F))
    }

    fn shuffle(&mut self, v: &mut [Bf16]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

fn bf(bits: u16) -> Bf16 {
    Bf16(bits)
}

/// The adversarial vectors, then `random` seeded random ones.
pub fn sum_vectors(seed: u64, random: usize) -> Vec<(&'static str, Vec<Bf16>)> {
    let mut rng = XorShift::new(seed);
    let max = Bf16::MAX;
    let min = Bf16::MIN_POSITIVE;
    let one = Bf16::ONE;
    let mut v: Vec<(&'static str, Vec<Bf16>)> = vec![
        // Massive cancellation: huge terms cancel exactly, leaving a tiny one.
        ("cancel", vec![max, -max, min]),
        ("cancel", vec![max, min, -max]),
        ("cancel", vec![min, max, -max, max, -max]),
        ("cancel", vec![bf(0x7E80), one, bf(0xFE80)]),
        ("cancel-to-zero", vec![one, -one]),
        ("cancel-to-zero", vec![max, -max, -one, one]),
        // Zeros (of both signs) and subnormals (read as zeros): +0.
        ("zeros", vec![Bf16::NEG_ZERO, Bf16::NEG_ZERO]),
        ("zeros", vec![Bf16::NEG_ZERO]),
        (
            "subnormals",
            (1..0x80).map(bf).chain((0x8001..0x8080).map(bf)).collect(),
        ),
        ("subnormals", vec![one, bf(0x0001), bf(0x807F)]),
        // Specials.
        ("inf", vec![Bf16::POS_INF, one, -max]),
        ("inf", vec![Bf16::NEG_INF, max, max]),
        ("inf", vec![Bf16::POS_INF, Bf16::NEG_INF]),
        (
            "inf",
            vec![one, Bf16::POS_INF, two(1), two(2), Bf16::NEG_INF],
        ),
        ("nan", vec![one, bf(0xFFC1), Bf16::POS_INF]),
        ("nan", vec![bf(0x7F81)]),
        // Overflow of the sum (judged after rounding).
        ("overflow", vec![max, max]),
        ("overflow", vec![Bf16::LOWEST, Bf16::LOWEST]),
        ("overflow", vec![max, two(119)]), // MAX + half its ulp: a tie, to even = 2^128
        ("overflow", vec![max, two(118)]), // below the tie: MAX
        ("overflow", vec![max, max, -max]),
        ("overflow", vec![max; MAX_TERMS]),
        // FTZ: exact sums of normals below 2^-126 (multiples of 2^-133).
        ("ftz", vec![bf(0x0081), bf(0x8080)]), // 2^-133: +0
        ("ftz", vec![bf(0x8081), bf(0x0080)]), // -2^-133: -0
        ("ftz", vec![bf(0x00FF), bf(0x8080), bf(0x0080)]),
        // Ties to even.
        ("tie", vec![bf(0x4380), one]),      // 256 + 1 = 257: to 256
        ("tie", vec![bf(0x4380), one, min]), // just above the tie: 258
        ("tie", vec![bf(0x4381), one]),      // 258 + 1 = 259: to 260
        // Every binade at once, alternating signs.
        (
            "spread",
            (-126..=127)
                .map(|k| if k % 2 == 0 { two(k) } else { -two(k) })
                .collect(),
        ),
        // The longest vectors: the sum of ones is exactly 65535 (rounds to
        // 65536); smallest normals; one huge term and many tiny ones.
        ("long", vec![one; MAX_TERMS]),
        ("long", vec![min; MAX_TERMS]),
        (
            "long",
            std::iter::once(two(20))
                .chain(std::iter::repeat_n(one, MAX_TERMS - 1))
                .collect(),
        ),
    ];
    // Long random vectors in a narrow exponent band (a lot of rounding) and
    // over the whole range.
    v.push((
        "long-random",
        (0..MAX_TERMS).map(|_| rng.finite(120, 134)).collect(),
    ));
    v.push((
        "long-random",
        (0..MAX_TERMS).map(|_| rng.finite(1, 254)).collect(),
    ));
    for i in 0..random {
        let len = 1 + match i % 4 {
            0 => rng.below(8),
            1 => rng.below(64),
            2 => rng.below(512),
            _ => rng.below(4096),
        } as usize;
        let (kind, terms): (&'static str, Vec<Bf16>) = match i % 5 {
            0 => ("random-bits", (0..len).map(|_| bf(rng.bits())).collect()),
            1 => (
                "random-band",
                (0..len).map(|_| rng.finite(120, 134)).collect(),
            ),
            2 => (
                "random-range",
                (0..len).map(|_| rng.finite(1, 254)).collect(),
            ),
            3 => {
                // x, -x pairs and a few small terms, shuffled.
                let mut t = Vec::new();
                while t.len() < len {
                    let x = rng.finite(1, 254);
                    t.push(x);
                    t.push(-x);
                    if rng.below(4) == 0 {
                        t.push(rng.finite(1, 40));
                    }
                }
                rng.shuffle(&mut t);
                ("random-cancel", t)
            }
            _ => {
                // Tiny terms near the FTZ boundary, some cancelling.
                ("random-tiny", (0..len).map(|_| rng.finite(1, 3)).collect())
            }
        };
        v.push((kind, terms));
    }
    v
}

/// `2^k` as a BF16 (normal `k`).
fn two(k: i32) -> Bf16 {
    round_exact(false, 1, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_within_bound(func: CvoFunc) -> FunctionReport {
        let r = report(func);
        assert_eq!(r.inputs, 65_536);
        assert!(
            r.special_mismatches.is_empty(),
            "{}: special-value mismatches at {:04x?}",
            func.name(),
            &r.special_mismatches[..r.special_mismatches.len().min(16)]
        );
        assert!(
            r.ambiguous.is_empty(),
            "{}: ambiguous references at {:04x?}",
            func.name(),
            &r.ambiguous[..r.ambiguous.len().min(16)]
        );
        assert!(
            r.out_of_bound.is_empty(),
            "{}: {} inputs beyond {} ULP, the first {:04x?}; max {} at {:#06x}",
            func.name(),
            r.out_of_bound.len(),
            r.bound,
            &r.out_of_bound[..r.out_of_bound.len().min(16)],
            r.max_steps,
            r.max_steps_input.0
        );
        assert!(r.passed());
        r
    }

    #[test]
    fn sqrt_is_correctly_rounded_everywhere() {
        let r = assert_within_bound(CvoFunc::Sqrt);
        assert_eq!(r.method, Method::Exact);
        assert_eq!(r.not_correctly_rounded, 0);
        assert_eq!(r.max_steps, 0);
    }

    #[test]
    fn recip_is_correctly_rounded_everywhere() {
        let r = assert_within_bound(CvoFunc::Recip);
        assert_eq!(r.method, Method::Exact);
        assert_eq!(r.not_correctly_rounded, 0);
        assert_eq!(r.max_steps, 0);
    }

    #[test]
    fn exp_within_one_ulp() {
        assert_within_bound(CvoFunc::Exp);
    }

    #[test]
    fn sin_within_one_ulp() {
        assert_within_bound(CvoFunc::Sin);
    }

    #[test]
    fn cos_within_one_ulp() {
        assert_within_bound(CvoFunc::Cos);
    }

    #[test]
    fn gelu_within_two_ulp() {
        assert_within_bound(CvoFunc::Gelu);
    }

    #[test]
    fn reduce_sum_is_exact() {
        let r = reduce_sum_report(1, 300);
        assert!(
            r.passed(),
            "{:?}",
            &r.mismatches[..r.mismatches.len().min(4)]
        );
        // The adversarial vectors reached every result class.
        assert!(r.nan_results > 0 && r.inf_results > 0 && r.zero_results > 0);
    }

    /// The checker on a deliberately wrong EXP: golden's result with its
    /// last bit flipped on the inputs in [1, 2) (128 of them). Golden's EXP
    /// is correctly rounded there, so each flipped result is one step off:
    /// counted as not correctly rounded, within EXP's bound of 1, beyond a
    /// bound of 0. Two bits flipped (two steps) break the bound of 1.
    #[test]
    fn a_wrong_exp_is_caught() {
        let flipped = |mask: u16| {
            move |x: Bf16| {
                let y = super::super::exp(x);
                if (0x3F80..0x4000).contains(&x.0) {
                    Bf16(y.0 ^ mask)
                } else {
                    y
                }
            }
        };
        let in_range = |inputs: &[Bf16]| inputs.iter().all(|x| (0x3F80..0x4000).contains(&x.0));
        let r = check(CvoFunc::Exp, 1, flipped(1));
        assert_eq!(r.not_correctly_rounded, 128);
        assert_eq!(r.max_steps, 1);
        assert!(r.passed());
        let strict = check(CvoFunc::Exp, 0, flipped(1));
        assert_eq!(strict.out_of_bound.len(), 128);
        assert!(in_range(&strict.out_of_bound));
        assert!(!strict.passed());
        let two = check(CvoFunc::Exp, 1, flipped(2));
        assert_eq!(two.out_of_bound.len(), 128);
        assert!(in_range(&two.out_of_bound));
        assert_eq!(two.max_steps, 2);
        assert!(two.max_error_ulp > 1.5);
        assert!(!two.passed());
    }

    /// A last bit flipped in SQRT is caught by the exact proof; a wrong
    /// special value is caught even where the steps are small.
    #[test]
    fn wrong_sqrt_and_specials_are_caught() {
        let flipped = |x: Bf16| {
            let y = super::super::sqrt(x);
            if x.0 == 0x4000 {
                Bf16(y.0 ^ 1)
            } else {
                y
            }
        };
        let r = check(CvoFunc::Sqrt, 0, flipped);
        assert_eq!(r.out_of_bound, [Bf16(0x4000)]);
        assert_eq!(r.not_correctly_rounded, 1);
        assert!(!r.passed());

        // exp(-Inf) = -0 instead of +0: zero steps apart, still wrong.
        let signed = |x: Bf16| {
            if x == Bf16::NEG_INF {
                Bf16::NEG_ZERO
            } else {
                super::super::exp(x)
            }
        };
        let r = check(CvoFunc::Exp, 1, signed);
        assert_eq!(r.special_mismatches, [Bf16::NEG_INF]);
        assert!(!r.passed());
    }

    /// A naive REDUCE_SUM (BF16 additions in order, each rounded) is caught.
    #[test]
    fn a_rounding_sum_is_caught() {
        let vectors = sum_vectors(1, 50);
        let r = check_sum(&vectors, 1, |terms, _| {
            terms.iter().fold(Bf16::POS_ZERO, |a, &b| a + b)
        });
        assert!(!r.passed());
        assert!(r.mismatches.iter().any(|c| c.kind == "cancel"));
    }

    /// The f64 reference against mpmath at 256 bits
    /// (scripts/cvo_reference_mpmath.py, whose output file is named by
    /// PCCX_CVO_MPMATH): the same correctly rounded result on every input.
    /// Ignored by default (it needs python3 with mpmath and minutes).
    #[test]
    #[ignore]
    fn mpmath_agrees() {
        let path = std::env::var("PCCX_CVO_MPMATH")
            .expect("PCCX_CVO_MPMATH names the output of scripts/cvo_reference_mpmath.py");
        let text = std::fs::read_to_string(&path).expect("read the mpmath results");
        let mut reports = std::collections::HashMap::new();
        let mut checked = 0;
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            let (Some(name), Some(input), Some(want)) =
                (fields.next(), fields.next(), fields.next())
            else {
                panic!("malformed line `{line}`");
            };
            let func = CvoFunc::from_name(name).expect("a function name");
            let input = u16::from_str_radix(input, 16).expect("hex input");
            let want = u16::from_str_radix(want, 16).expect("hex result");
            let r = reports.entry(func).or_insert_with(|| report(func));
            let rec = &r.records[usize::from(input)];
            assert_eq!(
                rec.reference.0, want,
                "{name}({input:#06x}): reference {:#06x}, mpmath {want:#06x}",
                rec.reference.0
            );
            checked += 1;
        }
        assert_eq!(checked, FUNCTIONS.len() * 65_536);
    }

    #[test]
    fn steps_between_results() {
        assert_eq!(steps(Bf16::POS_ZERO, Bf16::NEG_ZERO), Some(0));
        assert_eq!(steps(Bf16::POS_ZERO, Bf16::MIN_POSITIVE), Some(1));
        assert_eq!(steps(Bf16::NEG_ZERO, Bf16::MIN_POSITIVE), Some(1));
        assert_eq!(steps(-Bf16::MIN_POSITIVE, Bf16::MIN_POSITIVE), Some(2));
        assert_eq!(steps(Bf16::MAX, Bf16::POS_INF), Some(1));
        assert_eq!(steps(Bf16(0x3F7F), Bf16::ONE), Some(1));
        assert_eq!(steps(Bf16::NAN, Bf16(0xFFC1)), Some(0));
        assert_eq!(steps(Bf16::NAN, Bf16::ONE), None);
    }

    #[test]
    fn f64_rounding_is_one_rounding() {
        // 1 + 2^-8 + 2^-30: just above the midpoint of 1 and 1 + 2^-7.
        let v = 1.0 + 2f64.powi(-8) + 2f64.powi(-30);
        assert_eq!(round_f64(v), Bf16(0x3F81));
        assert_eq!(round_f64(1.0 + 2f64.powi(-8)), Bf16::ONE); // tie: even
        assert_eq!(round_f64(-0.0), Bf16::NEG_ZERO);
        // FTZ as round_exact: just below 2^-126 but rounding to it.
        assert_eq!(
            round_f64(2f64.powi(-126) * (1.0 - 2f64.powi(-10))),
            Bf16::MIN_POSITIVE
        );
        assert_eq!(round_f64(-2f64.powi(-127)), Bf16::NEG_ZERO);
        // Overflow judged after rounding.
        assert_eq!(
            round_f64(2f64.powi(128) * (1.0 - 2f64.powi(-10))),
            Bf16::POS_INF
        );
        assert_eq!(round_f64(3.0e38), Bf16(0x7F62));
    }

    #[test]
    fn margins() {
        assert!(margin(1.0 + 2f64.powi(-8)) == 0.0);
        let m = margin(1.0 + 2f64.powi(-8) + 2f64.powi(-30));
        assert!((m - 2f64.powi(-30) / (1.0 + 2f64.powi(-8) + 2f64.powi(-30))).abs() < 1e-25);
        // Far below the FTZ boundary no midpoint changes the result.
        assert_eq!(margin(3.0 * 2f64.powi(-140)), f64::INFINITY);
        // The boundary between the flush and 2^-126 does.
        assert!(margin(2f64.powi(-126) - 2f64.powi(-135)) == 0.0);
        assert!(margin(1.0) == 2f64.powi(-9));
    }

    #[test]
    fn exact_proofs_agree_with_f64_where_f64_decides() {
        // sqrt 2 = 1.41421...: 0x3FB5. 1/3 = 0.33398 (0x3EAB).
        assert_eq!(proven_sqrt(128, -6, 2f64.sqrt()), Bf16(0x3FB5));
        assert_eq!(proven_recip(false, 192, -6, 1.0 / 3.0), Bf16(0x3EAB));
        // A bad guess does not change a proof's answer.
        assert_eq!(proven_sqrt(128, -6, 1.0), Bf16(0x3FB5));
        assert_eq!(proven_recip(true, 192, -6, 100.0), Bf16(0xBEAB));
        // 1/MAX is below 2^-126: FTZ, by the same rule as round_exact.
        assert_eq!(
            proven_recip(false, 255, 120, 1.0 / Bf16::MAX.to_f64()),
            Bf16::POS_ZERO
        );
    }

    /// Ties go to the even significand, whichever side the guess starts
    /// on (SQRT and RECIP never tie, so only this test reaches the path).
    #[test]
    fn proven_rounding_ties_to_even() {
        let exactly = |k: u128, j: i32| move |pk: u128, pj: i32| cmp_scaled(pk, pj, k, j);
        // 1 + 2^-8: between 1 (q = 128) and 1 + 2^-7 (q = 129).
        assert_eq!(round_proven(exactly(257, -8), 128, -7), (128, -7));
        assert_eq!(round_proven(exactly(257, -8), 129, -7), (128, -7));
        // 1 + 3 * 2^-8: between q = 129 and q = 130.
        assert_eq!(round_proven(exactly(259, -8), 129, -7), (130, -7));
        assert_eq!(round_proven(exactly(259, -8), 131, -7), (130, -7));
        // 1 - 2^-9: between 255 * 2^-8 and 1, a quarter step below 1.
        assert_eq!(round_proven(exactly(511, -9), 128, -7), (128, -7));
        assert_eq!(round_proven(exactly(511, -9), 254, -8), (128, -7));
        // Just above and below that midpoint.
        assert_eq!(round_proven(exactly(1021, -10), 128, -7), (255, -8));
        assert_eq!(round_proven(exactly(1021, -10), 128, -30), (255, -8));
        assert_eq!(round_proven(exactly(1023, -10), 200, 10), (128, -7));
        assert_eq!(round_proven(exactly(1023, -10), 254, -8), (128, -7));
    }

    #[test]
    fn reference_sum_basics() {
        assert_eq!(ReferenceSum::of(&[Bf16::ONE, Bf16::ONE]), Bf16(0x4000));
        assert_eq!(ReferenceSum::of(&[Bf16::ONE, -Bf16::ONE]), Bf16::POS_ZERO);
        assert_eq!(ReferenceSum::of(&[-Bf16::ONE, -Bf16::ONE]), Bf16(0xC000));
        assert_eq!(ReferenceSum::of(&[bf(0x4380), Bf16::ONE]), bf(0x4380));
        assert_eq!(
            ReferenceSum::of(&[bf(0x4380), Bf16::ONE, Bf16::MIN_POSITIVE]),
            bf(0x4381)
        );
        assert_eq!(
            ReferenceSum::of(&[Bf16::MAX, -Bf16::MAX, Bf16::MIN_POSITIVE]),
            Bf16::MIN_POSITIVE
        );
        assert_eq!(ReferenceSum::of(&[Bf16::MAX, Bf16::MAX]), Bf16::POS_INF);
        assert_eq!(ReferenceSum::of(&[bf(0x8081), bf(0x0080)]), Bf16::NEG_ZERO);
        assert_eq!(ReferenceSum::of(&vec![Bf16::ONE; MAX_TERMS]), bf(0x4780));
    }
}
