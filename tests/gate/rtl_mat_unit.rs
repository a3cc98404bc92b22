//! The GEMV and GEMM engines of the RTL against the pure W4A8 reference
//! (`pccx_golden::numerics::w4a8::gemm`), one instruction at a time, with the
//! weight stream driven from an explicit beat list. This checks the engines
//! before (and independently of) the golden interpreter and the scoreboard.

use pccx_cosim::config;
use pccx_cosim::rtl::{HostTiming, RtlModel};
use pccx_golden::exec::mat::MatShape;
use pccx_golden::isa::{Instr, MatOp};
use pccx_golden::model::{Event, NpuModel, ShapeEntry, ShapeTable};
use pccx_golden::numerics::bf16::Bf16;
use pccx_golden::numerics::w4a8::{self, MatInputs};
use pccx_golden::streams::WeightSource;
use pccx_golden::timing;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone, Copy, Debug)]
struct Case {
    gemv: bool,
    m: usize,
    k: usize,
    n: usize,
    findemax: bool,
    accm: bool,
    w_scale: bool,
    lanes: u8,
}

const SRC: u32 = 100;
const DST: u32 = 3000;

fn run(config_name: &str, case: Case, seed: u64) {
    run_with(config_name, case, seed, false)
}

/// `zero_act`: all activations 0 and scales alternating -1 / +1, so every
/// result is a zero, half of them -0.
fn run_with(config_name: &str, case: Case, seed: u64, zero_act: bool) {
    let cfg = config::by_name(config_name).unwrap();
    let mut rtl = RtlModel::open(cfg, HostTiming::default()).unwrap();
    let mut rng = Rng(seed);
    let Case { m, k, n, .. } = case;
    let act: Vec<i8> = (0..m * k)
        .map(|_| if zero_act { 0 } else { rng.next() as i8 })
        .collect();
    let weights: Vec<i8> = (0..k * n).map(|_| (rng.below(16) as i8) - 8).collect();
    let scales: Vec<Bf16> = (0..n)
        .map(|i| {
            let random = Bf16(
                ((rng.below(2) as u16) << 15)
                    | ((118 + rng.below(16) as u16) << 7)
                    | rng.below(128) as u16,
            );
            match (zero_act, i % 2) {
                (true, 0) => Bf16(0xBF80), // -1
                (true, _) => Bf16(0x3F80), // +1
                _ => random,
            }
        })
        .collect();
    let out_words = m * n.div_ceil(8);
    let old_words: Vec<u128> = (0..out_words)
        .map(|_| {
            let mut w = 0u128;
            for i in 0..8 {
                let v = ((rng.below(2) as u128) << 15)
                    | ((120 + rng.below(14) as u128) << 7)
                    | rng.below(128) as u128;
                w |= v << (16 * i);
            }
            w
        })
        .collect();
    let beats = w4a8::weight_beats(k, n, &weights, case.w_scale.then_some(&scales[..])).unwrap();
    let stream = if case.gemv { 1 } else { 0 };
    let mut prefix = [Vec::new(), Vec::new()];
    prefix[stream] = beats.clone();
    rtl.set_weight_source(WeightSource { seed: 1, prefix });
    rtl.reset().unwrap();
    rtl.write_l2(SRC, &w4a8::pack_activations(m, k, &act).unwrap())
        .unwrap();
    rtl.write_l2(DST, &old_words).unwrap();
    rtl.set_shape_entry(
        ShapeTable::Fmap,
        3,
        ShapeEntry {
            a: m as u16,
            b: k as u16,
            c: 0,
        },
    )
    .unwrap();
    rtl.set_shape_entry(
        ShapeTable::Weight,
        5,
        ShapeEntry {
            a: k as u16,
            b: n as u16,
            c: 0,
        },
    )
    .unwrap();
    let flags =
        (u8::from(case.findemax) << 5) | (u8::from(case.accm) << 4) | (u8::from(case.w_scale) << 3);
    let op = MatOp {
        dest_reg: DST,
        src_addr: SRC,
        flags,
        size_ptr_addr: 5,
        shape_ptr_addr: 3,
        parallel_lane: case.lanes,
        reserved: 0,
    };
    let word = if case.gemv {
        Instr::Gemv(op)
    } else {
        Instr::Gemm(op)
    }
    .encode();
    rtl.take_events();
    rtl.issue(word).unwrap();
    rtl.drain().unwrap();
    let events = rtl.take_events();

    let old: Vec<Bf16> = old_words
        .iter()
        .flat_map(|w| w4a8::unpack_bf16(*w))
        .collect::<Vec<_>>()
        .chunks(n.div_ceil(8) * 8)
        .flat_map(|row| row[..n].to_vec())
        .collect();
    let expect = w4a8::gemm(&MatInputs {
        m,
        k,
        n,
        act: &act,
        weights: &weights,
        scales: case.w_scale.then_some(&scales[..]),
        old: case.accm.then_some(&old[..]),
    })
    .unwrap();
    let packed = w4a8::pack_output(m, n, &expect.out).unwrap();
    let mut got = vec![0u128; out_words];
    rtl.read_l2(DST, &mut got).unwrap();
    for (i, ((data, mask), (g, o))) in packed.iter().zip(got.iter().zip(&old_words)).enumerate() {
        for lane in 0..8 {
            let want = if mask & (1 << lane) != 0 {
                (data >> (16 * lane)) as u16
            } else {
                (o >> (16 * lane)) as u16
            };
            let have = (g >> (16 * lane)) as u16;
            assert_eq!(
                have, want,
                "{config_name} {case:?}: word {i} lane {lane}: got {have:#06x}, want {want:#06x}"
            );
        }
    }
    let retire = events.iter().find_map(|e| match e {
        Event::Retire {
            err, cycle, start, ..
        } => Some((*err, cycle.unwrap(), start.unwrap())),
        _ => None,
    });
    let (err, r, s) = retire.expect("retired");
    assert_eq!(err, 0, "{case:?}");
    let reads: u32 = events
        .iter()
        .map(|e| match e {
            Event::StreamRead { beats, .. } => *beats,
            _ => 0,
        })
        .sum();
    assert_eq!(reads as usize, beats.len(), "{case:?}: beats consumed");
    if case.findemax {
        assert_eq!(rtl.e_max().unwrap(), expect.e_max.0, "{case:?}: e_max");
    }
    let busy = if case.gemv {
        gemv_busy(cfg.vector_lanes as usize, case)
    } else {
        gemm_busy(cfg.array_rows as usize, cfg.array_cols as usize, case)
    };
    assert_eq!(
        r - s,
        1 + busy as u64,
        "{config_name} {case:?}: retire - start"
    );
}

fn gemm_busy(rows: usize, cols: usize, c: Case) -> usize {
    let shape = MatShape {
        m: c.m as u64,
        k: c.k as u64,
        n: c.n as u64,
    };
    timing::gemm_busy_cycles(shape, c.w_scale, rows as u32, cols as u32) as usize
}

fn gemv_busy(lanes: usize, c: Case) -> usize {
    let shape = MatShape {
        m: 1,
        k: c.k as u64,
        n: c.n as u64,
    };
    timing::gemv_busy_cycles(shape, c.w_scale, c.lanes, lanes as u32) as usize
}

fn cases(gemv: bool) -> Vec<Case> {
    let mut v = Vec::new();
    let shapes: &[(usize, usize, usize)] = if gemv {
        &[
            (1, 1, 1),
            (1, 16, 8),
            (1, 17, 33),
            (1, 40, 70),
            (1, 33, 64),
            (1, 7, 9),
        ]
    } else {
        &[
            (1, 1, 1),
            (3, 16, 8),
            (5, 17, 33),
            (2, 40, 70),
            (9, 33, 64),
            (4, 7, 9),
        ]
    };
    for (i, &(m, k, n)) in shapes.iter().enumerate() {
        for flags in 0..8u8 {
            v.push(Case {
                gemv,
                m,
                k,
                n,
                findemax: flags & 4 != 0,
                accm: flags & 2 != 0,
                w_scale: flags & 1 != 0,
                lanes: ((i as u8) * 3 + flags) % 6,
            });
        }
    }
    v
}

/// findemax over results that are all zeros of both signs is +0 (-0 < +0
/// in the findemax order). Zero activations with scales of both signs give
/// exactly that; a surviving mutant (the -0 key one above +0) showed the
/// random programs reach it too rarely.
#[test]
fn e_max_of_signed_zeros_is_plus_zero() {
    for cfg in ["tiny", "kv260"] {
        for gemv in [true, false] {
            let c = Case {
                gemv,
                m: 1,
                k: 16,
                n: 16,
                findemax: true,
                accm: false,
                w_scale: true,
                lanes: 0,
            };
            run_with(cfg, c, 77, true);
        }
    }
}

#[test]
fn gemm_matches_the_reference_on_every_array_shape() {
    for cfg in ["tiny", "small", "kv260"] {
        for (i, c) in cases(false).into_iter().enumerate() {
            run(cfg, c, 1000 + i as u64);
        }
    }
}

#[test]
fn gemv_matches_the_reference_for_every_lane_count() {
    for cfg in ["tiny", "small", "kv260"] {
        for (i, c) in cases(true).into_iter().enumerate() {
            run(cfg, c, 2000 + i as u64);
        }
    }
}
