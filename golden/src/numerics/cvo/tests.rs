//! Hand-checked values of each CVO function (the exhaustive checks are the
//! accuracy module's and tests/gate/cvo_exhaustive.rs).

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

// ---- the tables ------------------------------------------------------------------

/// Every `name = value` of the generated SV package: scalars as hex, arrays
/// as their decimal entries.
fn sv_rom() -> std::collections::HashMap<String, Vec<i128>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../hw/rtl/pccx_cvo_rom_pkg.sv");
    let text = std::fs::read_to_string(path).expect("hw/rtl/pccx_cvo_rom_pkg.sv is readable");
    let mut rom = std::collections::HashMap::new();
    for item in text.split("localparam").skip(1) {
        let (head, body) = item.split_once('=').expect("name = value");
        let name = head
            .split_whitespace()
            .find(|w| {
                w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    && w.len() > 1
            })
            .expect("a constant name")
            .to_string();
        let values = if let Some((_, hex)) = body.split_once("'h") {
            let digits: String = hex.chars().take_while(char::is_ascii_hexdigit).collect();
            vec![i128::from_str_radix(&digits[digits.len().saturating_sub(31)..], 16).unwrap()]
        } else {
            body.split("64'sd")
                .skip(1)
                .map(|v| {
                    v.chars()
                        .take_while(|c| c.is_ascii_digit())
                        .collect::<String>()
                        .parse()
                        .unwrap()
                })
                .collect()
        };
        rom.insert(name, values);
    }
    rom
}

/// The SV package and the Rust tables hold the same contents (both come
/// from scripts/gen_cvo_tables.py; this catches an edit of one of them).
#[test]
fn the_rtl_rom_and_the_golden_tables_agree() {
    use super::tables::*;
    let rom = sv_rom();
    let arrays: [(&str, &[i64]); 3] = [
        ("CORDIC_ATAN", &CORDIC_ATAN),
        ("EXP2_FRAC", &EXP2_FRAC),
        ("GELU_D", &GELU_D),
    ];
    for (name, table) in arrays {
        let sv: Vec<i64> = rom[name].iter().map(|&v| v as i64).collect();
        assert_eq!(sv, table, "{name}");
    }
    for (name, value) in [
        ("CORDIC_K", CORDIC_K),
        ("LOG2E_Q40", LOG2E_Q40),
        ("HALF_LOG2E_Q40", HALF_LOG2E_Q40),
        ("LN2_Q32", LN2_Q32),
        ("INV6_Q32", INV6_Q32),
    ] {
        assert_eq!(rom[name], vec![i128::from(value)], "{name}");
    }
    // 2/pi: the SV literal's low 124 bits against the Rust limbs.
    let low = u128::from(TWO_OVER_PI[0]) | u128::from(TWO_OVER_PI[1]) << 64;
    assert_eq!(rom["TWO_OVER_PI"][0] as u128, low & ((1u128 << 124) - 1));
}

extern "C" {
    fn erfc(x: f64) -> f64;
}

/// Every entry recomputed in f64 (independent of the 400-bit generator),
/// within one unit of its last place: f64 carries more than 53 bits of
/// each value's ~33-49, so a larger difference is a wrong table.
#[test]
fn every_table_entry_matches_an_f64_recomputation() {
    use super::tables::*;
    use std::f64::consts::{FRAC_2_PI, LN_2, LOG2_E, SQRT_2};
    let near = |name: &str, i: usize, table: i64, exact: f64| {
        assert!(
            (table as f64 - exact).abs() <= 1.0,
            "{name}[{i}] = {table}, f64 gives {exact}"
        );
    };
    let q = |bits: i32| 2f64.powi(bits);
    for (i, &v) in CORDIC_ATAN.iter().enumerate() {
        near(
            "CORDIC_ATAN",
            i,
            v,
            (q(-(i as i32))).atan() * FRAC_2_PI * q(48),
        );
    }
    let gain: f64 = (0..48).map(|i| 1.0 / (1.0 + q(-2 * i)).sqrt()).product();
    near("CORDIC_K", 0, CORDIC_K, gain * q(48));
    for (a, &v) in EXP2_FRAC.iter().enumerate() {
        near("EXP2_FRAC", a, v, (a as f64 / 64.0).exp2() * q(32));
    }
    near("LOG2E_Q40", 0, LOG2E_Q40, LOG2_E * q(40));
    near("HALF_LOG2E_Q40", 0, HALF_LOG2E_Q40, LOG2_E / 2.0 * q(40));
    near("LN2_Q32", 0, LN2_Q32, LN_2 * q(32));
    near("INV6_Q32", 0, INV6_Q32, q(32) / 6.0);
    for (k, &v) in GELU_D.iter().enumerate() {
        // One step of the table is 2^GELU_R_BITS units of U (Q24).
        let u = k as f64 / f64::from(1u32 << (24 - super::exp::GELU_R_BITS));
        let tail = unsafe { erfc(u / SQRT_2) } / 2.0; // Phi(-u)
        let d = -tail.log2() - u * u * LOG2_E / 2.0;
        // The subtraction loses up to 2^-44 relative of u^2 log2(e)/2 <=
        // 185: allow the f64 rounding of that on top of one unit.
        assert!(
            (v as f64 - d * q(32)).abs() <= 2.0,
            "GELU_D[{k}] = {v}, f64 gives {}",
            d * q(32)
        );
    }
    // 2/pi's top 53 bits.
    let top = (TWO_OVER_PI[2] >> 11) as f64;
    assert!(
        (top - FRAC_2_PI * q(53)).abs() <= 1.0,
        "TWO_OVER_PI's top bits"
    );
}
