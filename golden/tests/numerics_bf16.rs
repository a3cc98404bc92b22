//! Directed cases for `numerics::bf16`: classification, the findemax order,
//! IEEE special cases, signed zeros, rounding ties, overflow and the FTZ
//! boundary (docs/numerics.md). Each expected value is worked out by hand
//! in the comment next to it.

use pccx_golden::numerics::bf16::{round_exact, Bf16, Class, Value};
use std::cmp::Ordering;
use std::ops::{Add, Mul, Sub};

fn b(bits: u16) -> Bf16 {
    Bf16(bits)
}

#[test]
fn classification_counts_over_all_patterns() {
    let mut counts = [0usize; 5];
    for bits in 0..=0xFFFFu16 {
        let i = match b(bits).class() {
            Class::Nan => 0,
            Class::Inf => 1,
            Class::Zero => 2,
            Class::Subnormal => 3,
            Class::Normal => 4,
        };
        counts[i] += 1;
    }
    // 127 non-zero fractions x 2 signs for NaN and for subnormals.
    assert_eq!(counts, [254, 2, 2, 254, 65024]);
}

#[test]
fn classification_examples() {
    assert_eq!(Bf16::NAN.class(), Class::Nan);
    assert_eq!(b(0xFF81).class(), Class::Nan);
    assert_eq!(Bf16::NEG_INF.class(), Class::Inf);
    assert_eq!(Bf16::NEG_ZERO.class(), Class::Zero);
    assert_eq!(b(0x0001).class(), Class::Subnormal);
    assert_eq!(b(0x807F).class(), Class::Subnormal);
    assert_eq!(Bf16::MIN_POSITIVE.class(), Class::Normal);
    assert!(b(0x807F).is_subnormal() && !b(0x807F).is_zero());
    assert_eq!(b(0x807F).value(), Value::Zero { negative: true });
    assert_eq!(b(0x0001).value(), Value::Zero { negative: false });
    assert_eq!(
        Bf16::ONE.value(),
        Value::Finite {
            negative: false,
            mant: 128,
            exp: -7
        }
    );
    assert_eq!(
        Bf16::LOWEST.value(),
        Value::Finite {
            negative: true,
            mant: 255,
            exp: 120
        }
    );
}

#[test]
fn canonical_and_to_f64() {
    for bits in 0..=0xFFFFu16 {
        let x = b(bits);
        let c = x.canonical();
        match x.class() {
            Class::Nan => assert_eq!(c, Bf16::NAN),
            Class::Subnormal => assert_eq!(c.0, bits & 0x8000),
            _ => assert_eq!(c, x),
        }
        let f = x.to_f64();
        if x.is_nan() {
            assert!(f.is_nan());
        } else {
            // BF16 is the top half of an f32, so the f32 route is exact here.
            assert_eq!(
                f.to_bits(),
                f64::from(f32::from_bits(u32::from(bits) << 16)).to_bits()
            );
        }
    }
}

#[test]
fn emax_order_chain() {
    let chain = [
        Bf16::NEG_INF,
        Bf16::LOWEST,
        b(0xBF80), // -1
        Bf16::MIN_POSITIVE.neg(),
        Bf16::NEG_ZERO,
        Bf16::POS_ZERO,
        Bf16::MIN_POSITIVE,
        Bf16::ONE,
        Bf16::MAX,
        Bf16::POS_INF,
        Bf16::NAN,
    ];
    for (i, &x) in chain.iter().enumerate() {
        for (j, &y) in chain.iter().enumerate() {
            assert_eq!(x.emax_cmp(y), i.cmp(&j), "{x:?} vs {y:?}");
        }
    }
    // All NaNs are equal and above everything; subnormals equal their zero.
    assert_eq!(b(0xFFFF).emax_cmp(Bf16::NAN), Ordering::Equal);
    assert_eq!(b(0x7F81).emax_cmp(Bf16::POS_INF), Ordering::Greater);
    assert_eq!(b(0x0001).emax_cmp(Bf16::POS_ZERO), Ordering::Equal);
    assert_eq!(b(0x8001).emax_cmp(Bf16::NEG_ZERO), Ordering::Equal);
    assert_eq!(b(0x8001).emax_cmp(Bf16::POS_ZERO), Ordering::Less);
    // The max is a canonical pattern.
    assert_eq!(Bf16::ONE.emax_max(b(0xFFFF)), Bf16::NAN);
    assert_eq!(Bf16::NEG_ZERO.emax_max(b(0x0001)), Bf16::POS_ZERO);
    assert_eq!(Bf16::NEG_ZERO.emax_max(Bf16::POS_ZERO), Bf16::POS_ZERO);
    assert_eq!(Bf16::NEG_ZERO.emax_max(Bf16::NEG_ZERO), Bf16::NEG_ZERO);
}

#[test]
fn emax_key_is_monotone_over_all_non_nan_patterns() {
    // Ordering the non-NaN patterns by key agrees with the f64 order, with
    // -0 before +0 and subnormals on their zero.
    let mut v: Vec<Bf16> = (0..=0xFFFFu16).map(b).filter(|x| !x.is_nan()).collect();
    v.sort_by_key(|x| x.emax_key());
    for w in v.windows(2) {
        let (x, y) = (w[0].canonical().to_f64(), w[1].canonical().to_f64());
        assert!(x <= y, "{:?} {:?}", w[0], w[1]);
        if x == y && x == 0.0 && w[0].emax_cmp(w[1]) == Ordering::Less {
            assert!(x.is_sign_negative() && !y.is_sign_negative());
        }
    }
}

#[test]
fn ieee_special_cases() {
    let nan = Bf16::NAN;
    let (pi, ni) = (Bf16::POS_INF, Bf16::NEG_INF);
    let (pz, nz) = (Bf16::POS_ZERO, Bf16::NEG_ZERO);
    let one = Bf16::ONE;
    assert_eq!(pi.add(ni), nan); // Inf - Inf
    assert_eq!(ni.add(pi), nan);
    assert_eq!(pi.sub(pi), nan);
    assert_eq!(pi.add(pi), pi);
    assert_eq!(ni.add(ni), ni);
    assert_eq!(pi.add(Bf16::LOWEST), pi);
    assert_eq!(ni.add(Bf16::MAX), ni);
    assert_eq!(pz.mul(pi), nan); // 0 * Inf
    assert_eq!(ni.mul(nz), nan);
    assert_eq!(b(0x0001).mul(pi), nan); // subnormal reads as 0
    assert_eq!(pi.mul(b(0xBF80)), ni);
    assert_eq!(ni.mul(ni), pi);
    assert_eq!(pi.mul(Bf16::MIN_POSITIVE), pi);
    // Any NaN in, the canonical NaN out.
    for f in 1..0x80u16 {
        for sign in [0, 0x8000] {
            let x = b(sign | 0x7F80 | f);
            for y in [one, pz, pi, ni, x] {
                assert_eq!(x.add(y), nan);
                assert_eq!(y.add(x), nan);
                assert_eq!(x.mul(y), nan);
                assert_eq!(y.mul(x), nan);
            }
        }
    }
}

#[test]
fn signed_zeros() {
    let (pz, nz) = (Bf16::POS_ZERO, Bf16::NEG_ZERO);
    let one = Bf16::ONE;
    assert_eq!(nz.add(nz), nz);
    assert_eq!(nz.add(pz), pz);
    assert_eq!(pz.add(nz), pz);
    assert_eq!(pz.add(pz), pz);
    assert_eq!(one.add(one.neg()), pz); // x + (-x) = +0 under RNE
    assert_eq!(one.neg().add(one), pz);
    assert_eq!(Bf16::LOWEST.add(Bf16::MAX), pz);
    assert_eq!(nz.add(b(0x8001)), nz); // -0 + (-subnormal = -0)
    assert_eq!(nz.add(b(0x0001)), pz); // -0 + (+subnormal = +0)
    assert_eq!(nz.add(one), one); // x + 0 = x
    assert_eq!(nz.add(b(0x8001)).0, 0x8000);
    assert_eq!(nz.mul(one), nz);
    assert_eq!(nz.mul(nz), pz);
    assert_eq!(b(0x8001).mul(one), nz);
    assert_eq!(b(0x8001).mul(one.neg()), pz);
    assert_eq!(pz.mul(Bf16::LOWEST), nz);
}

#[test]
fn additions_round_once_ties_to_even() {
    let one = Bf16::ONE;
    assert_eq!(one.add(one), b(0x4000)); // 1 + 1 = 2
                                         // ulp(1) = 2^-7; 2^-8 is half of it.
    let half_ulp = b(0x3B80); // 2^-8
    assert_eq!(one.add(half_ulp), one); // 1 + 2^-8: tie, 1 is even
    assert_eq!(b(0x3F81).add(half_ulp), b(0x3F82)); // odd -> up
    assert_eq!(one.add(b(0x3B81)), b(0x3F81)); // just above the tie
    assert_eq!(one.sub(b(0x3B00)), one); // 1 - 2^-9: tie below 1 -> even (1)
    assert_eq!(one.sub(b(0x3B80)), b(0x3F7F)); // 1 - 2^-8 exact
                                               // Far apart: the small operand only breaks no tie.
    assert_eq!(one.add(Bf16::MIN_POSITIVE), one);
    assert_eq!(one.sub(Bf16::MIN_POSITIVE), one);
    assert_eq!(Bf16::MAX.add(Bf16::MIN_POSITIVE), Bf16::MAX);
    // 3 + 2^-6 ... exactly representable results stay exact.
    assert_eq!(b(0x4040).add(b(0x3C80)), b(0x4041)); // 3 + 1/64 = 3.015625
                                                     // Cancellation: exact.
    assert_eq!(b(0x3F81).sub(one), b(0x3C00)); // 2^-7
}

#[test]
fn overflow_to_infinity() {
    let max = Bf16::MAX; // 255 * 2^120
    assert_eq!(max.add(max), Bf16::POS_INF);
    assert_eq!(Bf16::LOWEST.add(Bf16::LOWEST), Bf16::NEG_INF);
    // Half an ulp of MAX is 2^119: a tie, MAX's significand 255 is odd,
    // so it rounds up to 2^128: Inf.
    assert_eq!(max.add(b(0x7B00)), Bf16::POS_INF);
    // A quarter ulp (2^118) rounds back to MAX.
    assert_eq!(max.add(b(0x7A80)), max);
    assert_eq!(max.mul(b(0x4000)), Bf16::POS_INF);
    assert_eq!(max.mul(b(0xC000)), Bf16::NEG_INF);
    // 2^127 * 1.9921875 = 255 * 2^120 = MAX exactly.
    assert_eq!(b(0x7F00).mul(b(0x3FFF)), max);
}

#[test]
fn ftz_is_decided_after_rounding() {
    // 181 * 181 = 32761 = (1 - 7 * 2^-15) * 2^15. a = 181 * 2^-70,
    // b = 181 * 2^-71: a * b = 32761 * 2^-141, just below 2^-126. Rounded
    // to 8 significant bits it is 2^-126 (the discarded part 0x79 of 0x7FF9
    // is above half of 0x80): a normal number, delivered. (Deciding on the
    // exact value would flush it to zero.)
    let a = b(0x2035); // 1.4140625 * 2^-63
    let c = b(0x1FB5); // 1.4140625 * 2^-64
    assert_eq!(a.mul(c), Bf16::MIN_POSITIVE);
    assert_eq!(a.neg().mul(c), Bf16::MIN_POSITIVE.neg());
    // 2^-63 * (255 * 2^-71) = 255 * 2^-134 = (1 - 2^-8) * 2^-126: exactly
    // representable with 8 bits but below 2^-126, so it would be subnormal:
    // +0. (IEEE gradual underflow would have rounded it up to 2^-126 on the
    // subnormal grid; FTZ has no subnormal grid.)
    assert_eq!(b(0x2000).mul(b(0x1FFF)), Bf16::POS_ZERO);
    assert_eq!(b(0x2000).mul(b(0x9FFF)), Bf16::NEG_ZERO);
    // Half the smallest normal: zero of the product's sign.
    assert_eq!(Bf16::MIN_POSITIVE.mul(b(0x3F00)), Bf16::POS_ZERO);
    assert_eq!(Bf16::MIN_POSITIVE.mul(b(0xBF00)), Bf16::NEG_ZERO);
    // Sums below the normal range: exact multiples of 2^-133, flushed with
    // the sign of the exact value.
    assert_eq!(b(0x0081).sub(Bf16::MIN_POSITIVE), Bf16::POS_ZERO);
    assert_eq!(Bf16::MIN_POSITIVE.sub(b(0x0081)), Bf16::NEG_ZERO);
    // The same rule for round_exact directly: (2^16 - 1) * 2^-142 rounds
    // to 2^-126, (2^8 - 1) * 2^-134 stays below it.
    assert_eq!(round_exact(false, 0xFFFF, -142), Bf16::MIN_POSITIVE);
    assert_eq!(round_exact(true, 0xFF, -134), Bf16::NEG_ZERO);
    // Ties at the boundary: 0x1FF (9 bits) * 2^-135 = (1 - 2^-9) * 2^-126:
    // tie between 255 (odd) and 256 (even) -> 2^-126.
    assert_eq!(round_exact(false, 0x1FF, -135), Bf16::MIN_POSITIVE);
    assert_eq!(round_exact(false, 0x1FD, -135), Bf16::POS_ZERO); // tie -> 254 even
}

#[test]
fn from_i64_examples() {
    assert_eq!(Bf16::from_i64(0), Bf16::POS_ZERO);
    assert_eq!(Bf16::from_i64(1), Bf16::ONE);
    assert_eq!(Bf16::from_i64(-1), b(0xBF80));
    assert_eq!(Bf16::from_i64(255), b(0x437F));
    assert_eq!(Bf16::from_i64(256), b(0x4380));
    assert_eq!(Bf16::from_i64(257), b(0x4380)); // tie -> even 256
    assert_eq!(Bf16::from_i64(258), b(0x4381)); // exact
    assert_eq!(Bf16::from_i64(259), b(0x4382)); // tie -> even 260
    assert_eq!(Bf16::from_i64(-259), b(0xC382));
    assert_eq!(Bf16::from_i64(i64::MIN), b(0xDF00)); // -2^63
    assert_eq!(Bf16::from_i64(i64::MAX), b(0x5F00)); // rounds up to 2^63
                                                     // The largest GEMV/GEMM accumulator: 65535 * 1024 = 2^26 - 2^10 -> 2^26.
    assert_eq!(Bf16::from_i64(65535 * 1024), b(0x4C80));
    // Not through f32: 2^24 + 2^16 + 1 rounds (once) to 2^24 + 2^17; via
    // f32 it would first become 2^24 + 2^16, a tie, then 2^24.
    assert_eq!(Bf16::from_i64((1 << 24) + (1 << 16) + 1), b(0x4B81));
}
