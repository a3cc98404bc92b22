//! BF16 per CONTRACT section 6 and docs/numerics.md: round to nearest, ties
//! to even, overflow to +-Inf, subnormal inputs read as signed zero (DAZ),
//! results below the normal range flushed to signed zero (FTZ), every NaN
//! result the canonical 0x7FC0.
//!
//! Every operation here computes the exact real result and rounds it once
//! ([`round_exact`]); nothing goes through `f32` or `f64`.

use std::cmp::Ordering;

/// A BF16 value, by its bit pattern: sign [15], biased exponent [14:7],
/// fraction [6:0]. Equality is equality of bit patterns.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Bf16(pub u16);

/// Classification of a bit pattern as stored (before DAZ).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Class {
    Nan,
    Inf,
    Zero,
    /// Exponent field 0, fraction non-zero. Read as signed zero (DAZ).
    Subnormal,
    Normal,
}

/// The value a bit pattern stands for as an operand, after DAZ.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Value {
    Nan,
    Inf {
        negative: bool,
    },
    /// Also what a subnormal reads as.
    Zero {
        negative: bool,
    },
    /// `(-1)^negative * mant * 2^exp`, `mant` in `128..=255` (the implicit
    /// bit included), `exp` in `-133..=120`.
    Finite {
        negative: bool,
        mant: u32,
        exp: i32,
    },
}

const SIGN: u16 = 0x8000;
const EXP_MASK: u16 = 0x7F80;
const FRAC_MASK: u16 = 0x007F;
/// Exponent bias of the 8-bit exponent field.
const BIAS: i32 = 127;
/// Fraction bits (the significand has one more, the implicit bit).
const FRAC_BITS: u32 = 7;
/// Unbiased exponent of the largest and smallest normal binade.
const E_MAX: i32 = 127;
const E_MIN: i32 = -126;

impl Bf16 {
    pub const POS_ZERO: Bf16 = Bf16(0x0000);
    pub const NEG_ZERO: Bf16 = Bf16(0x8000);
    pub const ONE: Bf16 = Bf16(0x3F80);
    pub const POS_INF: Bf16 = Bf16(0x7F80);
    pub const NEG_INF: Bf16 = Bf16(0xFF80);
    /// The canonical NaN: every NaN result is exactly this pattern.
    pub const NAN: Bf16 = Bf16(0x7FC0);
    /// Largest finite value, (2 - 2^-7) * 2^127.
    pub const MAX: Bf16 = Bf16(0x7F7F);
    /// Most negative finite value.
    pub const LOWEST: Bf16 = Bf16(0xFF7F);
    /// Smallest positive normal value, 2^-126.
    pub const MIN_POSITIVE: Bf16 = Bf16(0x0080);

    pub const fn from_bits(bits: u16) -> Bf16 {
        Bf16(bits)
    }

    pub const fn to_bits(self) -> u16 {
        self.0
    }

    pub const fn is_sign_negative(self) -> bool {
        self.0 & SIGN != 0
    }

    pub const fn class(self) -> Class {
        let exp = self.0 & EXP_MASK;
        let frac = self.0 & FRAC_MASK;
        if exp == EXP_MASK {
            if frac == 0 {
                Class::Inf
            } else {
                Class::Nan
            }
        } else if exp == 0 {
            if frac == 0 {
                Class::Zero
            } else {
                Class::Subnormal
            }
        } else {
            Class::Normal
        }
    }

    pub const fn is_nan(self) -> bool {
        matches!(self.class(), Class::Nan)
    }

    pub const fn is_inf(self) -> bool {
        matches!(self.class(), Class::Inf)
    }

    /// True for +-0 only (a subnormal is not a zero pattern, though it is
    /// read as one: see [`Bf16::value`]).
    pub const fn is_zero(self) -> bool {
        matches!(self.class(), Class::Zero)
    }

    pub const fn is_subnormal(self) -> bool {
        matches!(self.class(), Class::Subnormal)
    }

    /// The operand value, with DAZ applied.
    pub const fn value(self) -> Value {
        let negative = self.is_sign_negative();
        match self.class() {
            Class::Nan => Value::Nan,
            Class::Inf => Value::Inf { negative },
            Class::Zero | Class::Subnormal => Value::Zero { negative },
            Class::Normal => {
                let biased = ((self.0 & EXP_MASK) >> FRAC_BITS) as i32;
                Value::Finite {
                    negative,
                    mant: (0x80 | (self.0 & FRAC_MASK)) as u32,
                    exp: biased - BIAS - FRAC_BITS as i32,
                }
            }
        }
    }

    /// The pattern an operand is read as: a subnormal becomes the zero of
    /// its sign, any NaN becomes 0x7FC0, everything else is unchanged.
    pub const fn canonical(self) -> Bf16 {
        match self.class() {
            Class::Nan => Bf16::NAN,
            Class::Subnormal => Bf16(self.0 & SIGN),
            _ => self,
        }
    }

    /// The exact value of the stored pattern (subnormals included, not
    /// flushed), for diagnostics and accuracy checks. Every BF16 value is an
    /// `f64` value, so this is exact.
    pub fn to_f64(self) -> f64 {
        let negative = self.is_sign_negative();
        let magnitude = match self.class() {
            Class::Nan => return f64::NAN,
            Class::Inf => f64::INFINITY,
            Class::Zero => 0.0,
            Class::Subnormal => f64::from(self.0 & FRAC_MASK) * pow2(-133),
            Class::Normal => match self.value() {
                Value::Finite { mant, exp, .. } => f64::from(mant) * pow2(exp),
                _ => unreachable!(),
            },
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The findemax key: a total order on the values as read, NaN above
    /// everything, -0 below +0 (see [`Bf16::emax_cmp`]).
    pub const fn emax_key(self) -> i32 {
        let c = self.canonical();
        if c.is_nan() {
            return i32::MAX;
        }
        let magnitude = (c.0 & !SIGN) as i32;
        if c.is_sign_negative() {
            -magnitude - 1
        } else {
            magnitude
        }
    }

    /// The findemax order (CONTRACT section 6): NaN is greater than
    /// everything, -0 < +0, otherwise the numeric order. It orders the
    /// values as read: a subnormal compares equal to the zero of its sign,
    /// all NaNs compare equal.
    pub fn emax_cmp(self, other: Bf16) -> Ordering {
        self.emax_key().cmp(&other.emax_key())
    }

    /// The findemax maximum of two values, as its canonical pattern.
    pub fn emax_max(self, other: Bf16) -> Bf16 {
        if other.emax_cmp(self) == Ordering::Greater {
            other.canonical()
        } else {
            self.canonical()
        }
    }

    /// `bf16(acc)`: the integer rounded once. Zero gives +0.
    pub fn from_i64(acc: i64) -> Bf16 {
        round_exact(acc < 0, u128::from(acc.unsigned_abs()), 0)
    }

    /// Flips the sign bit: exact (the unary `-` operator does the same).
    pub const fn neg(self) -> Bf16 {
        Bf16(self.0 ^ SIGN)
    }
}

/// `bf16(a * b)`: the exact product rounded once.
pub fn mul(a: Bf16, b: Bf16) -> Bf16 {
    use Value::*;
    match (a.value(), b.value()) {
        (Nan, _) | (_, Nan) => Bf16::NAN,
        (Inf { .. }, Zero { .. }) | (Zero { .. }, Inf { .. }) => Bf16::NAN,
        (a, b) => {
            let negative = sign_of(a) != sign_of(b);
            match (a, b) {
                (Inf { .. }, _) | (_, Inf { .. }) => signed_inf(negative),
                (Zero { .. }, _) | (_, Zero { .. }) => signed_zero(negative),
                (
                    Finite {
                        mant: ma, exp: ea, ..
                    },
                    Finite {
                        mant: mb, exp: eb, ..
                    },
                ) => round_exact(negative, u128::from(ma * mb), ea + eb),
                _ => unreachable!(),
            }
        }
    }
}

/// `bf16(a + b)`: the exact sum rounded once. An exact zero sum of
/// non-zero operands is +0; -0 + -0 = -0.
pub fn add(a: Bf16, b: Bf16) -> Bf16 {
    use Value::*;
    match (a.value(), b.value()) {
        (Nan, _) | (_, Nan) => Bf16::NAN,
        (Inf { negative: a }, Inf { negative: b }) => {
            if a == b {
                signed_inf(a)
            } else {
                Bf16::NAN
            }
        }
        (Inf { negative }, _) | (_, Inf { negative }) => signed_inf(negative),
        (Zero { negative: a }, Zero { negative: b }) => signed_zero(a && b),
        // x + 0 = x exactly, and a normal x is its own rounding.
        (Zero { .. }, b @ Finite { .. }) => from_finite(b),
        (a @ Finite { .. }, Zero { .. }) => from_finite(a),
        (
            Finite {
                negative: sa,
                mant: ma,
                exp: ea,
            },
            Finite {
                negative: sb,
                mant: mb,
                exp: eb,
            },
        ) => {
            // (big, small) by exponent; equal exponents in either order.
            let ((sa, ma, ea), (sb, mb, eb)) = if ea >= eb {
                ((sa, ma, ea), (sb, mb, eb))
            } else {
                ((sb, mb, eb), (sa, ma, ea))
            };
            let d = (ea - eb) as u32; // 0..=253
            let (big, small, exp) = if d <= ALIGN_EXACT {
                // Exact: ma << d < 2^(8 + 64), the sum fits easily.
                (u128::from(ma) << d, u128::from(mb), eb)
            } else {
                // The small operand is below 2^(ea - 56): replace it by
                // one unit at 2^(ea - 64), which lies in the same open
                // rounding interval next to the big operand
                // (docs/numerics.md section 1.2).
                (u128::from(ma) << ALIGN_EXACT, 1, ea - ALIGN_EXACT as i32)
            };
            if sa == sb {
                round_exact(sa, big + small, exp)
            } else if big > small {
                round_exact(sa, big - small, exp)
            } else if small > big {
                round_exact(sb, small - big, exp)
            } else {
                Bf16::POS_ZERO
            }
        }
    }
}

/// `bf16(a - b)` = `bf16(a + (-b))`, both exact.
pub fn sub(a: Bf16, b: Bf16) -> Bf16 {
    add(a, b.neg())
}

impl std::ops::Add for Bf16 {
    type Output = Bf16;
    /// [`add`]: one rounding of the exact sum.
    fn add(self, rhs: Bf16) -> Bf16 {
        add(self, rhs)
    }
}

impl std::ops::Sub for Bf16 {
    type Output = Bf16;
    /// [`sub`]: one rounding of the exact difference.
    fn sub(self, rhs: Bf16) -> Bf16 {
        sub(self, rhs)
    }
}

impl std::ops::Mul for Bf16 {
    type Output = Bf16;
    /// [`mul`]: one rounding of the exact product.
    fn mul(self, rhs: Bf16) -> Bf16 {
        mul(self, rhs)
    }
}

impl std::ops::Neg for Bf16 {
    type Output = Bf16;
    /// Flips the sign bit (exact; NaN stays a NaN pattern).
    fn neg(self) -> Bf16 {
        Bf16(self.0 ^ SIGN)
    }
}

/// Exponent differences up to this are aligned exactly on a `u128`.
const ALIGN_EXACT: u32 = 64;

fn sign_of(v: Value) -> bool {
    match v {
        Value::Nan => false,
        Value::Inf { negative } | Value::Zero { negative } | Value::Finite { negative, .. } => {
            negative
        }
    }
}

fn from_finite(v: Value) -> Bf16 {
    match v {
        Value::Finite {
            negative,
            mant,
            exp,
        } => round_exact(negative, u128::from(mant), exp),
        _ => unreachable!(),
    }
}

const fn signed_inf(negative: bool) -> Bf16 {
    if negative {
        Bf16::NEG_INF
    } else {
        Bf16::POS_INF
    }
}

const fn signed_zero(negative: bool) -> Bf16 {
    if negative {
        Bf16::NEG_ZERO
    } else {
        Bf16::POS_ZERO
    }
}

/// 2^e as an `f64`, for `e` in the normal `f64` range (exact).
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// Rounds the exact value `(-1)^negative * mant * 2^exp` once to BF16:
///
/// 1. round to 8 significant bits, to nearest, ties to even, with an
///    unbounded exponent range;
/// 2. if that rounded value is 2^128 or more: +-Inf; if it is below 2^-126
///    (would be subnormal): the zero of the value's sign (FTZ, decided after
///    rounding: docs/numerics.md);
/// 3. `mant = 0` gives the zero of `negative`'s sign.
pub fn round_exact(negative: bool, mant: u128, exp: i32) -> Bf16 {
    if mant == 0 {
        return signed_zero(negative);
    }
    let msb = 127 - mant.leading_zeros(); // position of the leading one
    let (mut sig, mut e) = if msb > FRAC_BITS {
        let shift = msb - FRAC_BITS;
        let q = mant >> shift;
        let rem = mant & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && q & 1 == 1);
        (q + u128::from(up), i64::from(msb) + i64::from(exp))
    } else {
        (mant << (FRAC_BITS - msb), i64::from(msb) + i64::from(exp))
    };
    if sig == 1 << (FRAC_BITS + 1) {
        // Rounding carried into a new binade.
        sig >>= 1;
        e += 1;
    }
    // Now sig in 128..=255 and the rounded value is sig * 2^(e - 7).
    if e > i64::from(E_MAX) {
        return signed_inf(negative);
    }
    if e < i64::from(E_MIN) {
        return signed_zero(negative);
    }
    let biased = (e + i64::from(BIAS)) as u16;
    let sign = if negative { SIGN } else { 0 };
    Bf16(sign | biased << FRAC_BITS | (sig as u16 & FRAC_MASK))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_plus_one_is_two() {
        assert_eq!(Bf16::ONE + Bf16::ONE, Bf16(0x4000));
        assert_eq!(add(Bf16::ONE, Bf16::ONE), Bf16(0x4000));
    }

    #[test]
    fn round_exact_basics() {
        assert_eq!(round_exact(false, 1, 0), Bf16::ONE);
        assert_eq!(round_exact(true, 1, 0), Bf16(0xBF80));
        assert_eq!(round_exact(false, 0, 0), Bf16::POS_ZERO);
        assert_eq!(round_exact(true, 0, 5), Bf16::NEG_ZERO);
        assert_eq!(round_exact(false, 1, 128), Bf16::POS_INF);
        assert_eq!(round_exact(false, 1, 127), Bf16(0x7F00));
        assert_eq!(round_exact(false, 1, -126), Bf16::MIN_POSITIVE);
        assert_eq!(round_exact(true, 1, -127), Bf16::NEG_ZERO);
        assert_eq!(round_exact(false, u128::MAX, i32::MAX), Bf16::POS_INF);
        assert_eq!(round_exact(false, u128::MAX, i32::MIN), Bf16::POS_ZERO);
    }
}
