//! SIN and COS: Payne-Hanek range reduction with a 192-bit 2/pi, then a
//! 48-iteration CORDIC in quarter turns (docs/cvo.md section 3.4).

use super::finite;
use super::tables::{CORDIC_ATAN, CORDIC_K, TWO_OVER_PI};
use crate::numerics::bf16::{round_exact, Bf16, Value};

/// Fraction bits of the reduced angle and of the CORDIC coordinates.
const FRAC: u32 = 48;

/// `u * 2/pi` modulo 4 in Q48 for `u = mant * 2^exp`: the quadrant
/// `z >> 48` and the angle left `z & (2^48 - 1)`, in quarter turns.
/// Exposed for the accuracy checks of the reduction itself.
pub fn reduce_quarter_turns(mant: u32, exp: i32) -> u64 {
    // mant * TWO_OVER_PI: 8 x 192 bits, as four 64-bit limbs.
    let mut product = [0u64; 4];
    let mut carry = 0u128;
    for (i, limb) in TWO_OVER_PI.iter().enumerate() {
        let v = u128::from(*limb) * u128::from(mant) + carry;
        product[i] = v as u64;
        carry = v >> 64;
    }
    product[3] = carry as u64;
    let shift = (144 - exp) as u32; // 24..=163 for the exponents that get here
    let (limb, bit) = ((shift / 64) as usize, shift % 64);
    let low = u128::from(product[limb]) | product.get(limb + 1).map_or(0, |&h| u128::from(h) << 64);
    ((low >> bit) as u64) & ((1 << (FRAC + 2)) - 1)
}

/// `(cos theta, sin theta)` in Q48 for `theta = r * pi / 2^49`, `r` the
/// quarter-turn angle in Q48: CORDIC, rotation mode.
fn cordic(r: u64) -> (i64, i64) {
    let (mut xc, mut yc, mut zc) = (CORDIC_K, 0i64, r as i64);
    for (i, &angle) in CORDIC_ATAN.iter().enumerate() {
        let (dx, dy) = (yc >> i, xc >> i);
        if zc >= 0 {
            (xc, yc, zc) = (xc - dx, yc + dy, zc - angle);
        } else {
            (xc, yc, zc) = (xc + dx, yc - dy, zc + angle);
        }
    }
    (xc, yc)
}

#[derive(Clone, Copy)]
enum Which {
    Sin,
    Cos,
}

fn sin_cos(x: Bf16, which: Which) -> Bf16 {
    match x.value() {
        Value::Nan | Value::Inf { .. } => return Bf16::NAN,
        Value::Zero { .. } => {
            return match which {
                Which::Sin => x.canonical(),
                Which::Cos => Bf16::ONE,
            }
        }
        Value::Finite { .. } => {}
    }
    let (negative, mant, e) = finite(x).expect("finite");
    if e < -19 {
        // |x| < 2^-12: sin x = x and cos x = 1, correctly rounded.
        return match which {
            Which::Sin => x,
            Which::Cos => Bf16::ONE,
        };
    }
    let z = reduce_quarter_turns(mant, e);
    let (quadrant, r) = (z >> FRAC, z & ((1 << FRAC) - 1));
    let (c, s) = cordic(r);
    let v = match (which, quadrant) {
        (Which::Sin, 0) | (Which::Cos, 3) => s,
        (Which::Sin, 1) | (Which::Cos, 0) => c,
        (Which::Sin, 2) | (Which::Cos, 1) => -s,
        _ => -c, // (Sin, 3), (Cos, 2)
    };
    let v = match which {
        Which::Sin if negative => -v,
        _ => v,
    };
    round_exact(v < 0, u128::from(v.unsigned_abs()), -(FRAC as i32))
}

/// SIN.
pub fn sin(x: Bf16) -> Bf16 {
    sin_cos(x, Which::Sin)
}

/// COS.
pub fn cos(x: Bf16) -> Bf16 {
    sin_cos(x, Which::Cos)
}
