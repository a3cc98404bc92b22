//! Numerics profiles (docs/dut-contract.md, "Numerics profiles"): for a DUT
//! whose CVO is approximate by design, the error each function's results
//! may have against this model's, in BF16 ULP. The scoreboard accepts a
//! result within its bound and hands the DUT's value to the reference, so
//! the instructions after it stay comparable bit for bit.

use super::bf16::{Bf16, Class};
use crate::isa::{self, CvoFunc, Decoded, Instr};

/// A DUT's declared error per CVO function; a function with no bound must
/// match exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NumericsProfile {
    /// Where the profile came from, for reports (a file's path).
    pub source: String,
    /// The largest accepted distance in ULP, per function, by
    /// `CvoFunc as usize`.
    pub max_ulp: [Option<u32>; 8],
}

impl NumericsProfile {
    pub fn bound(&self, func: CvoFunc) -> Option<u32> {
        self.max_ulp[func as usize]
    }

    /// The bound of the instruction `word`, when it is a CVO whose function
    /// the profile bounds.
    pub fn bound_of_word(&self, word: u64) -> Option<(CvoFunc, u32)> {
        match isa::decode(word) {
            Decoded::Legal(Instr::Cvo(c)) => self.bound(c.func).map(|b| (c.func, b)),
            _ => None,
        }
    }

    /// Whether the DUT's element `dut` is accepted for the reference's
    /// `reference` under `bound`.
    pub fn accepts(bound: u32, reference: Bf16, dut: Bf16) -> bool {
        ulp_distance(reference, dut).is_some_and(|d| d <= bound)
    }
}

/// The distance of two BF16 values in units in the last place: how many
/// representable values lie between them, plus one (0 for equal values).
/// Both zeros are the same point. `None` when either is a NaN, an infinity
/// or a subnormal pattern (which no result may be, FTZ), unless both
/// patterns are equal: no bound makes a special value approximate.
pub fn ulp_distance(a: Bf16, b: Bf16) -> Option<u32> {
    if a == b {
        return Some(0);
    }
    let key = |x: Bf16| -> Option<i32> {
        match x.class() {
            Class::Zero => Some(0),
            Class::Normal => {
                let magnitude = i32::from(x.0 & 0x7FFF);
                Some(if x.is_sign_negative() {
                    -magnitude
                } else {
                    magnitude
                })
            }
            Class::Nan | Class::Inf | Class::Subnormal => None,
        }
    };
    // A normal magnitude is at least 0x0080 and zero is 0: the subnormal
    // patterns between them are no values (FTZ), so a step from the
    // smallest normal to zero is one ULP.
    let squeeze = |k: i32| {
        if k == 0 {
            0
        } else {
            k - k.signum() * 0x7F
        }
    };
    let (ka, kb) = (squeeze(key(a)?), squeeze(key(b)?));
    Some(ka.abs_diff(kb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulp_distance_counts_representable_steps() {
        let one = Bf16::ONE;
        assert_eq!(ulp_distance(one, one), Some(0));
        assert_eq!(ulp_distance(one, Bf16(0x3F81)), Some(1));
        assert_eq!(ulp_distance(Bf16(0x3F81), one), Some(1));
        // Across a binade: 0x3F7F is the value just below 1.
        assert_eq!(ulp_distance(Bf16(0x3F7F), Bf16(0x3F81)), Some(2));
        // Across zero: the smallest normals are one step from zero each.
        assert_eq!(ulp_distance(Bf16::MIN_POSITIVE, Bf16::POS_ZERO), Some(1));
        assert_eq!(ulp_distance(Bf16(0x8080), Bf16::MIN_POSITIVE), Some(2));
        assert_eq!(ulp_distance(Bf16::POS_ZERO, Bf16::NEG_ZERO), Some(0));
        // Negative values.
        assert_eq!(ulp_distance(Bf16(0xBF80), Bf16(0xBF82)), Some(2));
    }

    #[test]
    fn no_bound_makes_a_special_value_approximate() {
        assert_eq!(ulp_distance(Bf16::POS_INF, Bf16::MAX), None);
        assert_eq!(ulp_distance(Bf16::NAN, Bf16::ONE), None);
        assert_eq!(ulp_distance(Bf16::NAN, Bf16::NAN), Some(0));
        assert_eq!(ulp_distance(Bf16(0x0001), Bf16::POS_ZERO), None);
        assert!(!NumericsProfile::accepts(
            u32::MAX,
            Bf16::POS_INF,
            Bf16::MAX
        ));
    }

    #[test]
    fn a_profile_bounds_only_the_functions_it_names() {
        let mut p = NumericsProfile::default();
        p.max_ulp[CvoFunc::Exp as usize] = Some(1);
        let exp = Instr::Cvo(isa::Cvo {
            func: CvoFunc::Exp,
            src_addr: 0,
            dst_addr: 8,
            length: 8,
            flags: 0,
            async_: false,
        });
        assert_eq!(p.bound_of_word(exp.encode()), Some((CvoFunc::Exp, 1)));
        let mut sin = exp;
        if let Instr::Cvo(c) = &mut sin {
            c.func = CvoFunc::Sin;
        }
        assert_eq!(p.bound_of_word(sin.encode()), None);
        assert!(NumericsProfile::accepts(1, Bf16::ONE, Bf16(0x3F81)));
        assert!(!NumericsProfile::accepts(1, Bf16::ONE, Bf16(0x3F82)));
    }
}
