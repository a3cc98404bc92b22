//! SQRT, RECIP and the division of SCALE with `recip_scale`, all correctly
//! rounded: an integer root or quotient with enough bits, and a sticky bit
//! for the remainder (docs/cvo.md sections 3.5 and 3.6).

use super::round_sticky;
use crate::numerics::bf16::{Bf16, Value};

/// The floor square root, digit by digit (two bits of the radicand per
/// step), as a hardware unit would compute it.
fn isqrt(radicand: u64) -> u64 {
    let mut root = 0u64;
    let mut rem = radicand;
    let mut bit = 1u64 << 62;
    while bit > radicand {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    root
}

/// SQRT.
pub fn sqrt(x: Bf16) -> Bf16 {
    match x.value() {
        Value::Nan => Bf16::NAN,
        Value::Zero { .. } => x.canonical(),
        Value::Inf { negative: false } => Bf16::POS_INF,
        Value::Inf { negative: true } | Value::Finite { negative: true, .. } => Bf16::NAN,
        Value::Finite {
            negative: false,
            mant,
            exp,
        } => {
            let (m, e) = if exp & 1 != 0 {
                (mant << 1, exp - 1)
            } else {
                (mant, exp)
            };
            let radicand = u64::from(m) << 16;
            let root = isqrt(radicand);
            round_sticky(
                false,
                u128::from(root),
                root * root != radicand,
                (e - 16) / 2,
            )
        }
    }
}

/// `div(a, b)` of two finite non-zero operands.
fn divide_finite(na: bool, ma: u32, ea: i32, nb: bool, mb: u32, eb: i32) -> Bf16 {
    let numerator = u64::from(ma) << 16;
    let quotient = numerator / u64::from(mb);
    let inexact = numerator % u64::from(mb) != 0;
    round_sticky(na != nb, u128::from(quotient), inexact, ea - eb - 16)
}

/// RECIP: `1 / x`.
pub fn recip(x: Bf16) -> Bf16 {
    match x.value() {
        Value::Nan => Bf16::NAN,
        Value::Inf { negative } => signed(negative, Bf16::POS_ZERO),
        Value::Zero { negative } => signed(negative, Bf16::POS_INF),
        Value::Finite {
            negative,
            mant,
            exp,
        } => divide_finite(false, 128, -7, negative, mant, exp),
    }
}

/// `bf16(a / b)`, the exact quotient rounded once, IEEE special cases.
pub fn divide(a: Bf16, b: Bf16) -> Bf16 {
    use Value::*;
    let negative = a.is_sign_negative() != b.is_sign_negative();
    match (a.value(), b.value()) {
        (Nan, _) | (_, Nan) => Bf16::NAN,
        (Zero { .. }, Zero { .. }) | (Inf { .. }, Inf { .. }) => Bf16::NAN,
        (Inf { .. }, _) | (_, Zero { .. }) => signed(negative, Bf16::POS_INF),
        (Zero { .. }, _) | (_, Inf { .. }) => signed(negative, Bf16::POS_ZERO),
        (
            Finite {
                negative: na,
                mant: ma,
                exp: ea,
            },
            Finite {
                negative: nb,
                mant: mb,
                exp: eb,
            },
        ) => divide_finite(na, ma, ea, nb, mb, eb),
    }
}

fn signed(negative: bool, magnitude: Bf16) -> Bf16 {
    if negative {
        magnitude.neg()
    } else {
        magnitude
    }
}
