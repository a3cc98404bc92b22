//! EXP and GELU on the shared power of two `exp2q` (docs/cvo.md sections
//! 3.1 to 3.3).

use super::tables::{EXP2_FRAC, GELU_D, HALF_LOG2E_Q40, INV6_Q32, LN2_Q32, LOG2E_Q40};
use super::{finite, fix24};
use crate::numerics::bf16::{round_exact, Bf16, Value};

const Q32_MASK: i64 = (1 << 32) - 1;

/// Bits of `U` (Q24) below a step of the GELU_D table (every 1/256): the
/// interpolation weight.
pub(super) const GELU_R_BITS: u32 = 16;

/// `2^(t / 2^32) ~= P * 2^(n - 32)`, `P` in `[2^32, 2^33)`: a 64-entry
/// table for the top 6 fraction bits, `e^z` to degree 3 for the rest.
pub fn exp2q(t: i64) -> (i64, u64) {
    let n = t >> 32;
    let f = (t & Q32_MASK) as u64;
    let a = (f >> 26) as usize;
    let b = f & ((1 << 26) - 1);
    let z = (b * LN2_Q32 as u64) >> 32;
    let z2 = (z * z) >> 32;
    let z3 = (((z2 * z) >> 32) * INV6_Q32 as u64) >> 32;
    let poly = (1u64 << 32) + z + (z2 >> 1) + z3;
    let p = (u128::from(EXP2_FRAC[a] as u64) * u128::from(poly)) >> 32;
    (n, p as u64)
}

/// EXP: `e^x`.
pub fn exp(x: Bf16) -> Bf16 {
    let (negative, mant, e) = match x.value() {
        Value::Nan => return Bf16::NAN,
        Value::Inf { negative: false } => return Bf16::POS_INF,
        Value::Inf { negative: true } => return Bf16::POS_ZERO,
        Value::Zero { .. } => return Bf16::ONE,
        Value::Finite {
            negative,
            mant,
            exp,
        } => (negative, mant, exp),
    };
    if e >= 0 {
        // |x| >= 128: far beyond either end of the BF16 range.
        return if negative {
            Bf16::POS_ZERO
        } else {
            Bf16::POS_INF
        };
    }
    let magnitude = fix24(mant, e) as i64;
    let x_q24 = if negative { -magnitude } else { magnitude };
    let t = ((i128::from(x_q24) * i128::from(LOG2E_Q40)) >> 32) as i64;
    let (n, p) = exp2q(t);
    round_exact(false, u128::from(p), (n - 32) as i32)
}

/// GELU: `x * Phi(x)` with `Phi(-u) = 2^-(u^2 log2(e) / 2 + D(u))` and `D`
/// interpolated from a table every 1/256.
pub fn gelu(x: Bf16) -> Bf16 {
    match x.value() {
        Value::Nan => return Bf16::NAN,
        Value::Inf { negative: false } => return Bf16::POS_INF,
        Value::Inf { negative: true } => return Bf16::NEG_ZERO,
        Value::Zero { .. } => return x.canonical(),
        Value::Finite { .. } => {}
    }
    let (negative, mant, e) = finite(x).expect("finite");
    if e >= -3 {
        // |x| >= 16: Phi(x) is 1 or 0 far below the last bit.
        return if negative { Bf16::NEG_ZERO } else { x };
    }
    let u = fix24(mant, e);
    let q = ((u128::from(u) * u128::from(u) * HALF_LOG2E_Q40 as u128) >> 56) as i64;
    let k = (u >> GELU_R_BITS) as usize;
    let r = (u & ((1 << GELU_R_BITS) - 1)) as i64;
    let d = GELU_D[k] + (((GELU_D[k + 1] - GELU_D[k]) * r) >> GELU_R_BITS);
    let (n, p) = exp2q(-(q + d));
    if negative {
        // -u * Phi(-u): a product, so the tail keeps its relative accuracy.
        round_exact(true, u128::from(mant) * u128::from(p), e + (n - 32) as i32)
    } else {
        let right = (-n) as u32;
        let tail = if right >= 128 {
            0
        } else {
            (u128::from(p) << 32) >> right
        };
        let phi = (1u128 << 64) - tail;
        round_exact(false, u128::from(mant) * phi, e - 64)
    }
}
