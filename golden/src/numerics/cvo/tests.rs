//! Hand-checked values of each CVO function (the exhaustive checks are the
//! accuracy module's and tests/cvo_exhaustive.rs).

use super::*;

fn b(bits: u16) -> Bf16 {
    Bf16(bits)
}

#[test]
fn values_worked_by_hand() {
    // (function, input, expected): the correctly rounded BF16 of the exact
    // value, worked out with mpmath.
    let cases: &[(CvoFunc, u16, u16)] = &[
        (CvoFunc::Exp, 0x0000, 0x3F80),   // e^0 = 1
        (CvoFunc::Exp, 0x3F80, 0x402E),   // e^1 = 2.71828 -> 2.71875
        (CvoFunc::Exp, 0xBF80, 0x3EBC),   // e^-1 = 0.367879 -> 0.367188
        (CvoFunc::Exp, 0x42B2, 0x7F7F),   // e^89 rounds past max? no: 89 -> Inf
        (CvoFunc::Sqrt, 0x4080, 0x4000),  // sqrt 4 = 2
        (CvoFunc::Sqrt, 0x4000, 0x3FB5),  // sqrt 2 = 1.41421 -> 1.41406
        (CvoFunc::Sqrt, 0x8000, 0x8000),  // sqrt -0 = -0
        (CvoFunc::Sqrt, 0xBF80, 0x7FC0),  // sqrt -1 = NaN
        (CvoFunc::Recip, 0x4040, 0x3EAB), // 1/3 = 0.333333 -> 0.333984
        (CvoFunc::Recip, 0x8000, 0xFF80), // 1/-0 = -Inf
        (CvoFunc::Sin, 0x3F00, 0x3EF5),   // sin 0.5 = 0.479426 -> 0.478516
        (CvoFunc::Cos, 0x3F00, 0x3F61),   // cos 0.5 = 0.877583 -> 0.878906
        (CvoFunc::Sin, 0x7F80, 0x7FC0),   // sin Inf = NaN
        (CvoFunc::Gelu, 0x3F80, 0x3F57),  // gelu 1 = 0.841345 -> 0.839844
        (CvoFunc::Gelu, 0xBF80, 0xBE22),  // gelu -1 = -0.158655 -> -0.158203
        (CvoFunc::Gelu, 0xFF80, 0x8000),  // gelu -Inf = -0
    ];
    for &(func, x, want) in cases {
        if func == CvoFunc::Exp && x == 0x42B2 {
            assert_eq!(unary(func, b(x)), Some(Bf16::POS_INF));
            continue;
        }
        assert_eq!(
            unary(func, b(x)),
            Some(b(want)),
            "{} of {x:#06x}",
            func.name()
        );
    }
}

#[test]
fn division_and_scale() {
    assert_eq!(scale(b(0x4040), b(0x4000), false), b(0x40C0)); // 3 * 2 = 6
    assert_eq!(scale(b(0x3F80), b(0x4040), true), b(0x3EAB)); // 1 / 3
    assert_eq!(scale(b(0x0000), b(0x0000), true), Bf16::NAN); // 0 / 0
    assert_eq!(scale(b(0x3F80), b(0x8000), true), Bf16::NEG_INF); // 1 / -0
    assert_eq!(scale(b(0xBF80), b(0x7F80), true), Bf16::NEG_ZERO); // -1 / Inf
}

#[test]
fn exact_sum_rounds_once() {
    // 256 + 1 + 1 + ... : each 1 alone would be lost against 256 in BF16
    // (ULP 2), but the exact sum keeps them.
    let mut s = ExactSum::new();
    s.add(b(0x4380)); // 256
    for _ in 0..4 {
        s.add(Bf16::ONE);
    }
    assert_eq!(s.round(), b(0x4382)); // 260
                                      // Cancellation to exactly zero gives +0; max + max overflows to Inf.
    let mut z = ExactSum::new();
    z.add(b(0x4380));
    z.add(b(0xC380));
    assert_eq!(z.round(), Bf16::POS_ZERO);
    let mut big = ExactSum::new();
    big.add(Bf16::MAX);
    big.add(Bf16::MAX);
    assert_eq!(big.round(), Bf16::POS_INF);
    let mut inf = ExactSum::new();
    inf.add(Bf16::POS_INF);
    let mut other = ExactSum::new();
    other.add(Bf16::NEG_INF);
    inf.merge(&other);
    assert_eq!(inf.round(), Bf16::NAN);
}
