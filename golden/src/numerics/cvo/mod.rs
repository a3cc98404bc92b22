//! The CVO functions, bit for bit as docs/cvo.md section 3 defines them:
//! the same fixed-point widths, iteration counts and tables as the RTL's
//! uCVO cores, written from that page. One small unit per function on the
//! shared helpers below; `golden/src/exec/cvo.rs` runs the instruction on
//! them.
//!
//! Their accuracy against the exact functions is checked separately
//! ([`accuracy`]), over every BF16 input.

pub mod accuracy;
mod exp;
mod recip_sqrt;
mod sum;
pub mod tables;
mod trig;

#[cfg(test)]
mod tests;

use super::bf16::{self, round_exact, Bf16, Value};
use crate::isa::CvoFunc;

pub use exp::{exp, exp2q, gelu};
pub use recip_sqrt::{divide, recip, sqrt};
pub use sum::ExactSum;
pub use trig::{cos, reduce_quarter_turns, sin};

/// The elementwise functions (everything but REDUCE_SUM and SCALE, which
/// take more than one operand): `f(x)`.
pub fn unary(func: CvoFunc, x: Bf16) -> Option<Bf16> {
    Some(match func {
        CvoFunc::Exp => exp(x),
        CvoFunc::Sqrt => sqrt(x),
        CvoFunc::Gelu => gelu(x),
        CvoFunc::Sin => sin(x),
        CvoFunc::Cos => cos(x),
        CvoFunc::Recip => recip(x),
        CvoFunc::ReduceSum | CvoFunc::Scale => return None,
    })
}

/// SCALE of one element: `bf16(x * s)`, or with `recip_scale`
/// `bf16(x / s)` (docs/cvo.md sections 3.6 and 3.7).
pub fn scale(x: Bf16, s: Bf16, recip_scale: bool) -> Bf16 {
    if recip_scale {
        divide(x, s)
    } else {
        bf16::mul(x, s)
    }
}

/// The input of every function: `x' = sub_emax ? bf16(x - e_max) : x`.
pub fn operand(x: Bf16, sub_emax: bool, e_max: Bf16) -> Bf16 {
    if sub_emax {
        bf16::sub(x, e_max)
    } else {
        x
    }
}

/// `round_s(v, sticky, e)` of docs/cvo.md section 2: the value
/// `(2v + sticky) * 2^(e-1)` rounded once, i.e. `v * 2^e` plus something
/// non-zero below its last bit when `sticky` is set.
fn round_sticky(negative: bool, v: u128, sticky: bool, e: i32) -> Bf16 {
    round_exact(negative, (v << 1) | u128::from(sticky), e - 1)
}

/// `fix24(u)`: the magnitude `mant * 2^exp` in Q24, truncated.
fn fix24(mant: u32, exp: i32) -> u64 {
    let shift = exp + 24;
    if shift >= 0 {
        u64::from(mant) << shift
    } else if shift > -32 {
        u64::from(mant) >> -shift
    } else {
        0
    }
}

/// The operand as `(negative, mant, exp)` when it is finite and non-zero.
fn finite(x: Bf16) -> Option<(bool, u32, i32)> {
    match x.value() {
        Value::Finite {
            negative,
            mant,
            exp,
        } => Some((negative, mant, exp)),
        _ => None,
    }
}
