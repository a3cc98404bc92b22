//! Directed cases for `numerics::w4a8`: lane packing, the weight-beat
//! layout, input checks and small GEMV/GEMM examples worked out by hand.

use pccx_golden::numerics::bf16::Bf16;
use pccx_golden::numerics::w4a8::{self, MatError, MatInputs};

#[test]
fn int4_lanes_two_complement_lowest_first() {
    // Lane 0 = 0x8 (-8), lane 1 = 0x7 (7), lane 2 = 0xF (-1), lane 31 = 0x9.
    let word: u128 = 0x8 | 0x7 << 4 | 0xF << 8 | 0x9 << 124;
    let v = w4a8::unpack_i4(word);
    assert_eq!(&v[..4], &[-8, 7, -1, 0]);
    assert_eq!(v[31], -7);
    assert_eq!(w4a8::pack_i4(&v), word);
}

#[test]
fn int8_and_bf16_lanes() {
    let word: u128 = 0x80 | 0x7F << 8 | 0xFF << 120;
    let v = w4a8::unpack_i8(word);
    assert_eq!(&v[..3], &[-128, 127, 0]);
    assert_eq!(v[15], -1);
    let word: u128 = 0x3F80 | 0x7FC0 << 112;
    let v = w4a8::unpack_bf16(word);
    assert_eq!(v[0], Bf16::ONE);
    assert_eq!(v[7], Bf16::NAN);
    assert_eq!(v[1], Bf16::POS_ZERO);
}

#[test]
fn beat_counts() {
    assert_eq!(w4a8::beat_count(1, 1, false), 1);
    assert_eq!(w4a8::beat_count(1, 1, true), 2);
    assert_eq!(w4a8::beat_count(5, 32, false), 5);
    assert_eq!(w4a8::beat_count(5, 33, false), 10);
    assert_eq!(w4a8::beat_count(5, 33, true), 15); // + ceil(33/8) = 5
    assert_eq!(w4a8::beat_count(65535, 65535, true), 2048 * 65535 + 8192);
}

#[test]
fn weight_beats_tile_order() {
    // K = 2, N = 33: tile 0 rows 0, 1, then tile 1 rows 0, 1 (one live lane
    // each), then 5 scale beats.
    let (k, n) = (2, 33);
    let w: Vec<i8> = (0..k * n).map(|i| (i % 16) as i8 - 8).collect();
    let s: Vec<Bf16> = (0..n).map(|i| Bf16(0x3F80 + i as u16)).collect();
    let beats = w4a8::weight_beats(k, n, &w, Some(&s)).unwrap();
    assert_eq!(beats.len(), 9);
    for row in 0..k {
        let lanes = w4a8::unpack_i4(beats[row]);
        assert_eq!(&lanes[..], &w[row * n..row * n + 32]);
        let lanes = w4a8::unpack_i4(beats[k + row]);
        assert_eq!(lanes[0], w[row * n + 32]);
        assert!(lanes[1..].iter().all(|&x| x == 0));
    }
    for q in 0..4 {
        assert_eq!(
            &w4a8::unpack_bf16(beats[2 * k + q])[..],
            &s[8 * q..8 * q + 8]
        );
    }
    let last = w4a8::unpack_bf16(beats[8]);
    assert_eq!(last[0], s[32]);
    assert!(last[1..].iter().all(|&x| x == Bf16::POS_ZERO));
    let (w2, s2) = w4a8::split_weight_beats(k, n, true, &beats).unwrap();
    assert_eq!(w2, w);
    assert_eq!(s2.unwrap(), s);
    // Without w_scale the same beats minus the scale beats.
    let plain = w4a8::weight_beats(k, n, &w, None).unwrap();
    assert_eq!(&plain[..], &beats[..4]);
}

#[test]
fn input_checks() {
    assert_eq!(w4a8::weight_beats(0, 1, &[], None), Err(MatError::ZeroDim));
    assert_eq!(
        w4a8::weight_beats(1, 2, &[0, 8], None),
        Err(MatError::Int4Range { index: 1, value: 8 })
    );
    assert_eq!(
        w4a8::weight_beats(1, 2, &[0, 1], Some(&[Bf16::ONE])),
        Err(MatError::Length {
            what: "scales",
            expected: 2,
            got: 1
        })
    );
    assert!(matches!(
        w4a8::split_weight_beats(2, 33, true, &[0; 8]),
        Err(MatError::Length { expected: 9, .. })
    ));
    let act = [1i8; 4];
    let w = [1i8; 4];
    let ok = MatInputs {
        m: 2,
        k: 2,
        n: 2,
        act: &act,
        weights: &w,
        scales: None,
        old: None,
    };
    assert!(w4a8::gemm(&ok).is_ok());
    assert_eq!(
        w4a8::gemm(&MatInputs { n: 0, ..ok }),
        Err(MatError::ZeroDim)
    );
    assert!(matches!(
        w4a8::gemm(&MatInputs { k: 1, ..ok }),
        Err(MatError::Length {
            what: "activations",
            ..
        })
    ));
    assert!(matches!(
        w4a8::gemm(&MatInputs {
            weights: &[1, 1, 1, -9],
            ..ok
        }),
        Err(MatError::Int4Range {
            index: 3,
            value: -9
        })
    ));
    assert!(matches!(
        w4a8::gemm(&MatInputs {
            old: Some(&[Bf16::ONE]),
            ..ok
        }),
        Err(MatError::Length { what: "old", .. })
    ));
    assert!(w4a8::pack_activations(1, 17, &[0; 16]).is_err());
    assert!(w4a8::unpack_activations(2, 17, &[0; 3]).is_err());
    assert!(w4a8::pack_output(1, 9, &[Bf16::ONE; 8]).is_err());
}

#[test]
fn activation_and_output_layouts() {
    // M = 2, K = 17: row stride 2 words, lane 1 of each row's second word
    // onwards is zero.
    let act: Vec<i8> = (0..34).map(|i| i as i8 - 17).collect();
    let words = w4a8::pack_activations(2, 17, &act).unwrap();
    assert_eq!(words.len(), 4);
    assert_eq!(w4a8::unpack_i8(words[1])[0], act[16]);
    assert_eq!(w4a8::unpack_i8(words[2])[0], act[17]);
    assert_eq!(words[3] >> 8, 0);
    assert_eq!(w4a8::unpack_activations(2, 17, &words).unwrap(), act);
    // N = 9: two words per row, the second with mask 0x01.
    let out: Vec<Bf16> = (0..18).map(|i| Bf16(0x3F80 + i)).collect();
    let packed = w4a8::pack_output(2, 9, &out).unwrap();
    let masks: Vec<u8> = packed.iter().map(|p| p.1).collect();
    assert_eq!(masks, [0xFF, 0x01, 0xFF, 0x01]);
    assert_eq!(w4a8::unpack_bf16(packed[3].0)[0], out[17]);
    assert_eq!(packed[3].0 >> 16, 0);
}

#[test]
fn gemv_by_hand() {
    // M = 1, K = 3, N = 2: acc = [1*1 + 2*2 + 3*3, 1*-8 + 2*7 + 3*-1] = [14, 3].
    let act = [1i8, 2, 3];
    let w = [1i8, -8, 2, 7, 3, -1];
    let base = MatInputs {
        m: 1,
        k: 3,
        n: 2,
        act: &act,
        weights: &w,
        scales: None,
        old: None,
    };
    let r = w4a8::gemm(&base).unwrap();
    assert_eq!(r.out, [Bf16(0x4160), Bf16(0x4040)]); // 14, 3
    assert_eq!(r.e_max, Bf16(0x4160));
    // w_scale: s = [0.5, -inf] -> [7, -inf].
    let s = [Bf16(0x3F00), Bf16::NEG_INF];
    let r = w4a8::gemm(&MatInputs {
        scales: Some(&s),
        ..base
    })
    .unwrap();
    assert_eq!(r.out, [Bf16(0x40E0), Bf16::NEG_INF]);
    assert_eq!(r.e_max, Bf16(0x40E0));
    // accm on top: old = [+inf, subnormal] -> [inf, -inf].
    let old = [Bf16::POS_INF, Bf16(0x0001)];
    let r = w4a8::gemm(&MatInputs {
        scales: Some(&s),
        old: Some(&old),
        ..base
    })
    .unwrap();
    assert_eq!(r.out, [Bf16::POS_INF, Bf16::NEG_INF]);
    assert_eq!(r.e_max, Bf16::POS_INF);
    // old = [-inf, +inf]: -inf + 7 = -inf, +inf + -inf = NaN, and NaN is
    // the maximum.
    let old = [Bf16::NEG_INF, Bf16::POS_INF];
    let r = w4a8::gemm(&MatInputs {
        scales: Some(&s),
        old: Some(&old),
        ..base
    })
    .unwrap();
    assert_eq!(r.out, [Bf16::NEG_INF, Bf16::NAN]);
    assert_eq!(r.e_max, Bf16::NAN);
}

#[test]
fn zero_accumulators_and_signed_zero_emax() {
    // acc = 0 gives +0; scaled by -1 it is -0; the max of all -0 is -0.
    let act = [0i8; 4];
    let w = [5i8; 6];
    let s = [Bf16(0xBF80); 3];
    let r = w4a8::gemm(&MatInputs {
        m: 2,
        k: 2,
        n: 3,
        act: &act,
        weights: &w,
        scales: Some(&s),
        old: None,
    })
    .unwrap();
    assert!(r.out.iter().all(|&x| x == Bf16::NEG_ZERO));
    assert_eq!(r.e_max, Bf16::NEG_ZERO);
    // Without the scale: +0.
    let r = w4a8::gemm(&MatInputs {
        m: 2,
        k: 2,
        n: 3,
        act: &act,
        weights: &w,
        scales: None,
        old: None,
    })
    .unwrap();
    assert!(r.out.iter().all(|&x| x == Bf16::POS_ZERO));
    assert_eq!(r.e_max, Bf16::POS_ZERO);
}

#[test]
fn largest_accumulator() {
    // K = 65535, every product (-128) * (-8) = 1024: acc = 2^26 - 2^10,
    // which rounds to 2^26; column 1 has (-128) * 7 = -896 per row.
    let k = 65535;
    let act = vec![-128i8; k];
    let w: Vec<i8> = (0..2 * k)
        .map(|i| if i % 2 == 0 { -8 } else { 7 })
        .collect();
    let r = w4a8::gemm(&MatInputs {
        m: 1,
        k,
        n: 2,
        act: &act,
        weights: &w,
        scales: None,
        old: None,
    })
    .unwrap();
    assert_eq!(
        w4a8::accumulate(1, k, 2, &act, &w),
        [67_107_840, -58_719_360]
    );
    assert_eq!(r.out[0], Bf16(0x4C80)); // 2^26
                                        // -58,719,360 = -0x37FFC80: top 8 bits 0xDF, the rest above half -> 0xE0 * 2^18.
    assert_eq!(r.out[1], Bf16(0xCC60));
    assert_eq!(r.e_max, Bf16(0x4C80));
}
