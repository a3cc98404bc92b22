//! REDUCE_SUM's exact accumulator (docs/cvo.md section 3.8): every finite
//! term as an integer multiple of 2^-133, summed without loss, rounded once
//! at the end. The order of the terms and their split between cores cannot
//! change the result.

use crate::numerics::bf16::{round_exact, Bf16, Value};

/// Limbs of 64 bits: 320 bits, more than the 278 a sum of 65,535 BF16 terms
/// can need.
const LIMBS: usize = 5;
/// The weight of the accumulators' last bit: 2^-133.
const LSB_EXP: i32 = -133;

/// An exact sum of BF16 values. The golden model keeps the positive and
/// the negative terms apart as magnitudes; the RTL keeps one signed
/// integer. Both are the same exact number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExactSum {
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
    positive: [u64; LIMBS],
    negative: [u64; LIMBS],
}

impl ExactSum {
    pub fn new() -> ExactSum {
        ExactSum::default()
    }

    /// Adds one term (zeros and subnormals add nothing).
    pub fn add(&mut self, x: Bf16) {
        match x.value() {
            Value::Nan => self.nan = true,
            Value::Inf { negative: false } => self.pos_inf = true,
            Value::Inf { negative: true } => self.neg_inf = true,
            Value::Zero { .. } => {}
            Value::Finite {
                negative,
                mant,
                exp,
            } => {
                let side = if negative {
                    &mut self.negative
                } else {
                    &mut self.positive
                };
                add_shifted(side, mant, (exp - LSB_EXP) as u32);
            }
        }
    }

    /// Merges another core's accumulator into this one, exactly.
    pub fn merge(&mut self, other: &ExactSum) {
        self.nan |= other.nan;
        self.pos_inf |= other.pos_inf;
        self.neg_inf |= other.neg_inf;
        add_limbs(&mut self.positive, &other.positive);
        add_limbs(&mut self.negative, &other.negative);
    }

    /// `bf16(the exact sum)`; an exact zero is +0.
    pub fn round(&self) -> Bf16 {
        if self.nan || (self.pos_inf && self.neg_inf) {
            return Bf16::NAN;
        }
        if self.pos_inf {
            return Bf16::POS_INF;
        }
        if self.neg_inf {
            return Bf16::NEG_INF;
        }
        let (negative, magnitude) = if less(&self.positive, &self.negative) {
            (true, sub_limbs(&self.negative, &self.positive))
        } else {
            (false, sub_limbs(&self.positive, &self.negative))
        };
        let Some(msb) = msb(&magnitude) else {
            return Bf16::POS_ZERO;
        };
        // Keep the top 100 bits; fold everything below into a sticky bit (far
        // below the rounding position, so the rounding is that of the exact
        // value).
        let drop = msb.saturating_sub(99);
        let kept = bits(&magnitude, drop, 100);
        let sticky = drop > 0 && any_below(&magnitude, drop);
        round_exact(
            negative,
            (kept << 1) | u128::from(sticky),
            LSB_EXP + drop as i32 - 1,
        )
    }
}

fn add_shifted(acc: &mut [u64; LIMBS], mant: u32, shift: u32) {
    let mut term = [0u64; LIMBS];
    let (limb, bit) = ((shift / 64) as usize, shift % 64);
    let wide = u128::from(mant) << bit;
    term[limb] = wide as u64;
    if limb + 1 < LIMBS {
        term[limb + 1] = (wide >> 64) as u64;
    }
    add_limbs(acc, &term);
}

fn add_limbs(acc: &mut [u64; LIMBS], other: &[u64; LIMBS]) {
    let mut carry = false;
    for (a, &b) in acc.iter_mut().zip(other) {
        let (s1, c1) = a.overflowing_add(b);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        *a = s2;
        carry = c1 || c2;
    }
    debug_assert!(!carry, "the accumulator has headroom for 2^16 terms");
}

fn sub_limbs(a: &[u64; LIMBS], b: &[u64; LIMBS]) -> [u64; LIMBS] {
    let mut out = [0u64; LIMBS];
    let mut borrow = false;
    for i in 0..LIMBS {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        out[i] = d2;
        borrow = b1 || b2;
    }
    out
}

fn less(a: &[u64; LIMBS], b: &[u64; LIMBS]) -> bool {
    a.iter().rev().cmp(b.iter().rev()) == std::cmp::Ordering::Less
}

fn msb(a: &[u64; LIMBS]) -> Option<u32> {
    (0..LIMBS)
        .rev()
        .find(|&i| a[i] != 0)
        .map(|i| 64 * i as u32 + 63 - a[i].leading_zeros())
}

fn bit(a: &[u64; LIMBS], i: u32) -> bool {
    let limb = (i / 64) as usize;
    limb < LIMBS && (a[limb] >> (i % 64)) & 1 == 1
}

/// `count` (at most 128) bits of `a` from bit `from` up.
fn bits(a: &[u64; LIMBS], from: u32, count: u32) -> u128 {
    (0..count).fold(0u128, |v, k| v | (u128::from(bit(a, from + k)) << k))
}

fn any_below(a: &[u64; LIMBS], to: u32) -> bool {
    (0..to).any(|i| bit(a, i))
}
