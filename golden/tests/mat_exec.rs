//! GEMV and GEMM through the golden model's front door: activations in L2,
//! weights and scales in the weight streams, results in L2 and e_max; the
//! events each instruction reports; the error checks (no effect, no beats);
//! overlaps; and the timing formulas of docs/timing.md on worked examples.

use pccx_golden::exec::mat::{MAT_ACC_WORDS, MAT_L1_WORDS};
use pccx_golden::isa::{layout::mat as flag, Instr, MatOp};
use pccx_golden::model::{ErrorCode, Event, NpuModel, ShapeEntry, ShapeTable, Word};
use pccx_golden::numerics::bf16::Bf16;
use pccx_golden::numerics::w4a8::{self, pack_bf16, pack_i4, MatInputs};
use pccx_golden::streams::{WeightSource, MATRIX_STREAM, VECTOR_STREAM};
use pccx_golden::timing::TimingParams;
use pccx_golden::{Golden, GoldenConfig};

const L2: u32 = 4096;
const FMAP: u8 = 1;
const WEIGHT: u8 = 2;

/// A model out of reset whose streams hold `matrix` and `vector` first
/// (then seed 5's beats), L2 filled with a recognisable pattern.
fn model(matrix: Vec<Word>, vector: Vec<Word>) -> Golden {
    let mut g = Golden::new(GoldenConfig { l2_words: L2 });
    g.set_weight_source(WeightSource::with_prefix(5, matrix, vector));
    g.reset().unwrap();
    g.write_l2(0, &background(0, L2 as usize)).unwrap();
    g
}

/// Word i of the initial L2: eight BF16 lanes of small distinct values.
fn background(first: usize, n: usize) -> Vec<Word> {
    (first..first + n)
        .map(|i| {
            let lanes: [Bf16; 8] =
                std::array::from_fn(|l| Bf16::from_i64(((i * 8 + l) % 1000) as i64 + 1));
            pack_bf16(&lanes)
        })
        .collect()
}

/// fmap[1] = (m, k, 0), weight[2] = (k2, n, 0), by backdoor.
fn shapes(g: &mut Golden, m: u16, k: u16, k2: u16, n: u16) {
    g.set_shape_entry(ShapeTable::Fmap, FMAP, ShapeEntry { a: m, b: k, c: 0 })
        .unwrap();
    g.set_shape_entry(ShapeTable::Weight, WEIGHT, ShapeEntry { a: k2, b: n, c: 0 })
        .unwrap();
}

fn op(dest: u32, src: u32, flags: u8, lanes: u8) -> MatOp {
    MatOp {
        dest_reg: dest,
        src_addr: src,
        flags,
        size_ptr_addr: WEIGHT,
        shape_ptr_addr: FMAP,
        parallel_lane: lanes,
        reserved: 0,
    }
}

fn gemv(dest: u32, src: u32, flags: u8) -> u64 {
    Instr::Gemv(op(dest, src, flags, 0)).encode()
}

fn gemm(dest: u32, src: u32, flags: u8) -> u64 {
    Instr::Gemm(op(dest, src, flags, 0)).encode()
}

fn run(g: &mut Golden, word: u64) -> Vec<Event> {
    g.issue(word).unwrap();
    g.take_events()
}

fn l2(g: &mut Golden, addr: u32, n: usize) -> Vec<Word> {
    let mut out = vec![0; n];
    g.read_l2(addr, &mut out).unwrap();
    out
}

fn err_of(events: &[Event]) -> u8 {
    match events.last() {
        Some(Event::Retire { err, .. }) => *err,
        other => panic!("no retire last: {other:?}"),
    }
}

fn l2_writes(events: &[Event]) -> Vec<(u32, Word, u8)> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::L2Write {
                addr, data, mask, ..
            } => Some((addr, data, mask)),
            _ => None,
        })
        .collect()
}

fn values(word: Word) -> [f64; 8] {
    w4a8::unpack_bf16(word).map(Bf16::to_f64)
}

/// A beat holding `w[j]` in INT4 lane j (the rest 0).
fn beat(w: &[i8]) -> Word {
    let mut lanes = [0i8; 32];
    lanes[..w.len()].copy_from_slice(w);
    pack_i4(&lanes)
}

// ----- results ----------------------------------------------------------------

/// acc = [2*1 - 3*7, 2*2 + 0, 2*(-8) - 3*(-1)] = [-19, 4, -13], worked by
/// hand; the last five lanes of the word keep their old values.
#[test]
fn gemv_reads_l2_and_the_vector_stream_and_writes_one_row() {
    let vector = vec![beat(&[1, 2, -8]), beat(&[7, 0, -1])];
    let mut g = model(vec![], vector);
    shapes(&mut g, 1, 2, 2, 3);
    let act = w4a8::pack_activations(1, 2, &[2, -3]).unwrap();
    g.write_l2(100, &act).unwrap();
    let word = gemv(200, 100, 0);
    let events = run(&mut g, word);
    assert!(
        matches!(events[0], Event::Latch { seq: 0, .. }),
        "{events:?}"
    );
    assert_eq!(
        events[1],
        Event::StreamRead {
            seq: 0,
            stream: VECTOR_STREAM as u8,
            beats: 2
        }
    );
    let writes = l2_writes(&events);
    assert_eq!(writes.len(), 1);
    let (addr, data, mask) = writes[0];
    assert_eq!((addr, mask), (200, 0b0000_0111));
    assert_eq!(values(data)[..3], [-19.0, 4.0, -13.0]);
    assert_eq!(events.len(), 4, "latch, stream read, write, retire");
    assert_eq!(err_of(&events), 0);
    let stored = l2(&mut g, 200, 1)[0];
    assert_eq!(values(stored)[..3], [-19.0, 4.0, -13.0]);
    assert_eq!(values(stored)[3..], values(background(200, 1)[0])[3..]);
    assert_eq!(g.weight_beats_consumed(), [0, 2]);
    assert_eq!(g.e_max().unwrap(), 0, "no findemax: e_max untouched");
}

/// Random inputs of a shape with two activation words per row, two output
/// words per row (the last one partial) and two weight tiles: the words
/// written are `w4a8::gemm`'s, row by row at the row strides.
#[test]
fn gemm_uses_the_matrix_stream_and_the_row_strides() {
    let (m, k, n) = (3usize, 17usize, 40usize);
    let mut rng = 0x1234_5678u64;
    let mut next = move |lo: i64, hi: i64| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + ((rng >> 33) as i64).rem_euclid(hi - lo + 1)
    };
    let act: Vec<i8> = (0..m * k).map(|_| next(-128, 127) as i8).collect();
    let w: Vec<i8> = (0..k * n).map(|_| next(-8, 7) as i8).collect();
    let beats = w4a8::weight_beats(k, n, &w, None).unwrap();
    assert_eq!(beats.len(), 2 * k);
    let mut g = model(beats, vec![]);
    shapes(&mut g, m as u16, k as u16, k as u16, n as u16);
    g.write_l2(50, &w4a8::pack_activations(m, k, &act).unwrap())
        .unwrap();
    let events = run(&mut g, gemm(300, 50, 0));
    assert_eq!(err_of(&events), 0);
    let want = w4a8::gemm(&MatInputs {
        m,
        k,
        n,
        act: &act,
        weights: &w,
        scales: None,
        old: None,
    })
    .unwrap();
    let packed = w4a8::pack_output(m, n, &want.out).unwrap();
    let writes = l2_writes(&events);
    let expected: Vec<(u32, Word, u8)> = (300..)
        .zip(&packed)
        .map(|(a, &(d, mk))| (a, d, mk))
        .collect();
    assert_eq!(writes, expected);
    assert_eq!(writes.len(), 3 * 5);
    assert_eq!(writes[4].2, 0xFF, "N = 40 fills its last word");
    assert_eq!(g.weight_beats_consumed(), [2 * k as u64, 0]);
    assert!(events.contains(&Event::StreamRead {
        seq: 0,
        stream: MATRIX_STREAM as u8,
        beats: 2 * k as u32
    }));
}

/// w_scale, accm and findemax together, worked by hand: acc = a * w,
/// r = acc * s, then old + r; e_max the largest value written.
#[test]
fn scale_accumulate_and_findemax() {
    // K = 1, N = 10: one weight beat, then two scale beats.
    let w = [1i8, -2, 3, 0, 7, -8, 1, 1, 2, 5];
    let scales = [0.5f32, 2.0, -1.0, 8.0, 0.5, 1.0, 0.0, 1.0, 1.0, 4.0];
    let s: Vec<Bf16> = scales
        .iter()
        .map(|&x| Bf16((x.to_bits() >> 16) as u16))
        .collect();
    let mut s_beats = [Bf16::POS_ZERO; 16];
    s_beats[..10].copy_from_slice(&s);
    // Lanes past N of the last scale beat are ignored, whatever they hold.
    s_beats[10..].copy_from_slice(&[Bf16::NAN; 6]);
    let vector = vec![
        beat(&w),
        pack_bf16(&s_beats[..8].try_into().unwrap()),
        pack_bf16(&s_beats[8..].try_into().unwrap()),
    ];
    let mut g = model(vec![], vector);
    shapes(&mut g, 1, 1, 1, 10);
    g.write_l2(10, &w4a8::pack_activations(1, 1, &[6]).unwrap())
        .unwrap();
    let old = background(20, 2);
    let flags = flag::FLAG_W_SCALE | flag::FLAG_ACCM | flag::FLAG_FINDEMAX;
    let events = run(&mut g, gemv(20, 10, flags));
    assert_eq!(err_of(&events), 0);
    let got: Vec<f64> = l2(&mut g, 20, 2).into_iter().flat_map(values).collect();
    let old_v: Vec<f64> = old.iter().flat_map(|&w| values(w)).collect();
    for n in 0..10 {
        let want = old_v[n] + 6.0 * f64::from(w[n]) * f64::from(scales[n]);
        assert_eq!(got[n], want, "n = {n}");
    }
    assert_eq!(got[10..], old_v[10..], "lanes past N keep their values");
    // old = 161..=170 (background word 20 and 21); each sum is exact in
    // BF16 (8 significant bits); the largest is old[9] + 6 * 5 * 4 = 290.
    let e_max = Bf16::from_i64(290);
    assert_eq!(g.e_max().unwrap(), e_max.0);
    assert_eq!(
        events[events.len() - 2],
        Event::EMaxWrite {
            seq: 0,
            value: e_max.0
        },
        "e_max after the output words"
    );
    assert_eq!(g.weight_beats_consumed(), [0, 3]);
}

#[test]
fn findemax_ranks_nan_above_everything_and_plus_zero_above_minus_zero() {
    // acc = 0 everywhere; scales -1 (gives -0), 1 (+0), NaN.
    let s = [0xBF80u16, 0x3F80, 0x7FC1];
    let cases = [(&s[..2], 0x0000u16), (&s[..1], 0x8000), (&s[..3], 0x7FC0)];
    for (scales, want) in cases {
        let n = scales.len();
        let mut lanes = [Bf16::POS_ZERO; 8];
        for (l, &v) in lanes.iter_mut().zip(scales) {
            *l = Bf16(v);
        }
        let mut g = model(vec![], vec![beat(&[0; 3]), pack_bf16(&lanes)]);
        shapes(&mut g, 1, 1, 1, n as u16);
        g.set_e_max(0x4000).unwrap();
        let flags = flag::FLAG_W_SCALE | flag::FLAG_FINDEMAX;
        assert_eq!(err_of(&run(&mut g, gemv(20, 10, flags))), 0);
        assert_eq!(g.e_max().unwrap(), want, "{scales:x?}");
    }
}

/// Consecutive instructions take consecutive beats; GEMV and GEMM each
/// have their own stream; reset restarts both, with the source set before
/// it.
#[test]
fn each_engine_takes_its_own_stream_in_order_and_reset_restarts_them() {
    let matrix = vec![beat(&[1]), beat(&[2]), beat(&[3])];
    let vector = vec![beat(&[-1]), beat(&[-2])];
    let mut g = model(matrix, vector);
    shapes(&mut g, 1, 1, 1, 1);
    g.write_l2(10, &w4a8::pack_activations(1, 1, &[1]).unwrap())
        .unwrap();
    let first = |g: &mut Golden, word| values(l2_writes(&run(g, word))[0].1)[0];
    assert_eq!(first(&mut g, gemm(20, 10, 0)), 1.0);
    assert_eq!(first(&mut g, gemv(21, 10, 0)), -1.0);
    assert_eq!(first(&mut g, gemm(22, 10, 0)), 2.0);
    assert_eq!(first(&mut g, gemm(23, 10, 0)), 3.0);
    assert_eq!(first(&mut g, gemv(24, 10, 0)), -2.0);
    assert_eq!(g.weight_beats_consumed(), [3, 2]);
    // Past the prefix: the seed's beats, at their own index.
    let beat3 = WeightSource::new(5).beat(MATRIX_STREAM, 3);
    let want = f64::from(w4a8::unpack_i4(beat3)[0]);
    assert_eq!(first(&mut g, gemm(25, 10, 0)), want);

    // A new source takes effect at the next reset, not before.
    g.set_weight_source(WeightSource::with_prefix(9, vec![beat(&[6])], vec![]));
    assert_eq!(g.weight_beats_consumed(), [4, 2]);
    g.reset().unwrap();
    assert_eq!(g.weight_beats_consumed(), [0, 0]);
    shapes(&mut g, 1, 1, 1, 1);
    assert_eq!(first(&mut g, gemm(20, 10, 0)), 6.0);
}

// ----- errors -------------------------------------------------------------------

/// (engine is GEMV, M, K, K', N, src, dest, code)
type ErrorCase = (bool, u16, u16, u16, u16, u32, u32, ErrorCode);

/// Every error: its code, no write, no beat, no e_max, no stream event.
#[test]
fn each_error_has_its_code_and_no_effect() {
    // (engine is GEMV, M, K, K', N, src, dest, code)
    let cases: &[ErrorCase] = &[
        (false, 0, 4, 4, 4, 0, 100, ErrorCode::Shape),
        (false, 2, 0, 0, 4, 0, 100, ErrorCode::Shape),
        (false, 2, 4, 0, 4, 0, 100, ErrorCode::Shape),
        (false, 2, 4, 4, 0, 0, 100, ErrorCode::Shape),
        (false, 2, 4, 5, 4, 0, 100, ErrorCode::Shape),
        (true, 2, 4, 4, 4, 0, 100, ErrorCode::Shape),
        (true, 0, 4, 4, 4, 0, 100, ErrorCode::Shape),
        // L1: 1 * ceil(32769/16) = 2049 words.
        (true, 1, 32769, 32769, 8, 0, 100, ErrorCode::Shape),
        (false, 3, 10913, 10913, 8, 0, 100, ErrorCode::Shape),
        // Accumulators: 1 * ceil(4097/8) = 513, 513 * 1.
        (true, 1, 4, 4, 4097, 0, 100, ErrorCode::Shape),
        (false, 513, 4, 4, 8, 0, 100, ErrorCode::Shape),
        (false, 57, 4, 4, 72, 0, 100, ErrorCode::Shape),
        // SHAPE comes before L2_RANGE.
        (false, 0, 4, 4, 4, 0x1FFFF, 0x1FFFF, ErrorCode::Shape),
        (true, 2, 4, 4, 4, L2, 0, ErrorCode::Shape),
        // Source past the end (by one word), destination past the end.
        (false, 2, 17, 17, 4, L2 - 3, 0, ErrorCode::L2Range),
        (true, 1, 17, 17, 9, 0, L2 - 1, ErrorCode::L2Range),
        (false, 2, 16, 16, 9, 0x1FFFF, 0x1FFFF, ErrorCode::L2Range),
        (true, 1, 1, 1, 1, 0, L2, ErrorCode::L2Range),
    ];
    for &(is_gemv, m, k, k2, n, src, dest, code) in cases {
        let mut g = model(vec![], vec![]);
        shapes(&mut g, m, k, k2, n);
        g.set_e_max(0x1234).unwrap();
        let flags = 0x3F; // findemax, accm, w_scale and the reserved bits
        let word = if is_gemv {
            gemv(dest, src, flags)
        } else {
            gemm(dest, src, flags)
        };
        let events = run(&mut g, word);
        let what = format!("gemv={is_gemv} m={m} k={k} k'={k2} n={n} src={src} dest={dest}");
        assert_eq!(events.len(), 2, "{what}: {events:?}");
        assert_eq!(err_of(&events), code.bits(), "{what}");
        assert_eq!(g.weight_beats_consumed(), [0, 0], "{what}");
        assert_eq!(g.e_max().unwrap(), 0x1234, "{what}");
        assert_eq!(
            l2(&mut g, 0, L2 as usize),
            background(0, L2 as usize),
            "{what}"
        );
    }
}

/// At a limit exactly, and at the last word of L2, it works.
#[test]
fn the_limits_and_the_edge_of_l2_are_legal() {
    // (GEMV, M, K, N, src, dest)
    let cases = [
        (false, 128u16, 256u16, 8u16, 0u32, 3000u32),
        (false, 512, 64, 8, 0, 2048),
        (true, 1, 32768, 8, 0, 2048),
        // Both limits at once: 128 tiles of 32768 beats.
        (true, 1, 32768, 4096, 0, 2048),
        (true, 1, 16, 4096, 0, L2 - 512),
        (false, 64, 16, 64, L2 - 64, 0),
        (true, 1, 17, 9, L2 - 2, L2 - 2),
    ];
    for (is_gemv, m, k, n, src, dest) in cases {
        let mut g = model(vec![], vec![]);
        shapes(&mut g, m, k, k, n);
        let (l1, acc) = (
            u64::from(m) * u64::from(k).div_ceil(16),
            u64::from(m) * u64::from(n).div_ceil(8),
        );
        assert!(l1 <= MAT_L1_WORDS && acc <= MAT_ACC_WORDS);
        let word = if is_gemv {
            gemv(dest, src, 0)
        } else {
            gemm(dest, src, 0)
        };
        let events = run(&mut g, word);
        assert_eq!(err_of(&events), 0, "{m} {k} {n}");
        assert_eq!(l2_writes(&events).len() as u64, acc);
        let beats = u64::from(n).div_ceil(32) * u64::from(k);
        let consumed = g.weight_beats_consumed();
        assert_eq!(consumed[usize::from(is_gemv)], beats);
        assert_eq!(consumed[usize::from(!is_gemv)], 0);
    }
}

// ----- overlaps, parallel_lane, reserved bits -------------------------------------

/// The events of `word` on a fresh model of `(m, k, n)` whose L2 holds
/// `act` at `src`, and L2 afterwards.
fn outputs(word: u64, (m, k, n): (u16, u16, u16), src: u32, act: &[i8]) -> (Vec<Event>, Vec<Word>) {
    let mut g = model(vec![], vec![]);
    shapes(&mut g, m, k, k, n);
    g.write_l2(
        src,
        &w4a8::pack_activations(m.into(), k.into(), act).unwrap(),
    )
    .unwrap();
    let events = run(&mut g, word);
    assert_eq!(err_of(&events), 0);
    let after = l2(&mut g, 0, L2 as usize);
    (events, after)
}

/// A destination that overlaps the source sees every activation as it was
/// before the instruction, whichever way the overlap goes; accm reads the
/// old destination (here: partly the activations themselves).
#[test]
fn overlapping_source_and_destination_read_before_they_write() {
    let shape = (4u16, 40u16, 24u16); // 3 words a row each way
    let act: Vec<i8> = (0..160).map(|i| (i * 37 % 256 - 128) as i8).collect();
    for flags in [0, flag::FLAG_ACCM] {
        let (apart, _) = outputs(gemm(1000, 100, flags), shape, 100, &act);
        for dest in [100u32, 95, 99, 101, 108, 111] {
            let (overlapped, _) = outputs(gemm(dest, 100, flags), shape, 100, &act);
            let w = |events: &[Event]| -> Vec<Word> {
                l2_writes(events).into_iter().map(|(_, d, _)| d).collect()
            };
            if flags == 0 {
                assert_eq!(w(&overlapped), w(&apart), "dest {dest}");
            } else {
                // old = whatever the destination held: compare with the
                // pure function on those values.
                let mut g = model(vec![], vec![]);
                shapes(&mut g, shape.0, shape.1, shape.1, shape.2);
                let words = w4a8::pack_activations(4, 40, &act).unwrap();
                g.write_l2(100, &words).unwrap();
                let before = l2(&mut g, dest, 12);
                let old: Vec<Bf16> = before.iter().flat_map(|&x| w4a8::unpack_bf16(x)).collect();
                let beats = WeightSource::new(5).beats(MATRIX_STREAM, 0, 40);
                let (weights, _) = w4a8::split_weight_beats(40, 24, false, &beats).unwrap();
                let want = w4a8::gemm(&MatInputs {
                    m: 4,
                    k: 40,
                    n: 24,
                    act: &act,
                    weights: &weights,
                    scales: None,
                    old: Some(&old),
                })
                .unwrap();
                let packed: Vec<Word> = w4a8::pack_output(4, 24, &want.out)
                    .unwrap()
                    .into_iter()
                    .map(|(d, _)| d)
                    .collect();
                assert_eq!(w(&overlapped), packed, "accm dest {dest}");
            }
        }
    }
}

#[test]
fn parallel_lane_and_reserved_bits_change_no_result() {
    let shape = (1u16, 70u16, 45u16);
    let act: Vec<i8> = (0..70).map(|i| (i * 11 % 256 - 128) as i8).collect();
    let w = flag::FLAG_W_SCALE;
    let (gemv_base, gemv_state) = outputs(gemv(500, 100, w), shape, 100, &act);
    let (gemm_base, gemm_state) = outputs(gemm(500, 100, w), shape, 100, &act);
    for lanes in [1u8, 2, 3, 4, 5, 17, 31] {
        for reserved in [0u8, 5, 7] {
            let body = MatOp {
                reserved,
                ..op(500, 100, w | reserved, lanes)
            };
            let (events, after) = outputs(Instr::Gemv(body).encode(), shape, 100, &act);
            assert_eq!(l2_writes(&events), l2_writes(&gemv_base), "gemv {lanes}");
            assert_eq!(after, gemv_state);
            let (events, after) = outputs(Instr::Gemm(body).encode(), shape, 100, &act);
            assert_eq!(l2_writes(&events), l2_writes(&gemm_base), "gemm {lanes}");
            assert_eq!(after, gemm_state);
        }
    }
}

// ----- timing -----------------------------------------------------------------------

fn timed(rows: u32, cols: u32, lanes: u32) -> Golden {
    let mut g = Golden::with_timing(
        GoldenConfig { l2_words: L2 },
        TimingParams {
            fifo_depth: 2,
            host_latency: 4,
            array_rows: rows,
            array_cols: cols,
            vector_lanes: lanes,
            cvo_cores: 2,
        },
    );
    g.reset().unwrap();
    g
}

/// (start, retire) of the retire event.
fn start_retire(events: &[Event]) -> (u64, u64) {
    match events.last() {
        Some(&Event::Retire {
            start: Some(s),
            cycle: Some(r),
            ..
        }) => (s, r),
        other => panic!("{other:?}"),
    }
}

/// The busy cycles (R - S - 1) of one instruction on a fresh timed model.
fn busy(g: &mut Golden, (m, k, k2, n): (u16, u16, u16, u16), word: u64) -> u64 {
    shapes(g, m, k, k2, n);
    let (s, r) = start_retire(&run(g, word));
    r - s - 1
}

/// docs/timing.md's GEMM row, worked by hand on an 8 x 4 array for
/// M = 2, K = 10, N = 40, w_scale: A = 2; T = 2 tiles of 32 and 8
/// columns; 2 k-chunks (8 and 2 rows); per tile K + 2 * ceil(cols/4) * (2 +
/// 8 + 4): 10 + 2*8*14 = 234 and 10 + 2*2*14 = 66; scales W = 5; output
/// M*W = 10; 2 pipeline cycles: 2 + 300 + 5 + 10 + 2 = 319.
#[test]
fn gemm_latency_follows_the_formula() {
    let mut g = timed(8, 4, 2);
    let shape = (2, 10, 10, 40);
    assert_eq!(busy(&mut g, shape, gemm(500, 0, flag::FLAG_W_SCALE)), 319);
    // Without scales, 5 fewer; parallel_lane and findemax/accm change nothing.
    let word = Instr::Gemm(op(500, 0, flag::FLAG_ACCM | flag::FLAG_FINDEMAX, 7)).encode();
    assert_eq!(busy(&mut timed(8, 4, 2), shape, word), 314);
    // A 32 x 32 array: 1 chunk; per tile 10 + 1*1*(2 + 64) = 76: 2 + 152 + 10 + 2.
    assert_eq!(busy(&mut timed(32, 32, 4), shape, gemm(500, 0, 0)), 166);
    // A 4 x 4 array, M = 1, K = N = 1: 1 + (1 + 1*1*9) + 1 + 2 = 14.
    assert_eq!(busy(&mut timed(4, 4, 1), (1, 1, 1, 1), gemm(500, 0, 0)), 14);
}

/// docs/timing.md's GEMV row, worked by hand for K = 10, N = 40: A = 1,
/// T = 2, W = 5. Two lanes (P = 2): c(9) = 4*4 + 1 = 17, so 2 * (17 + 6) =
/// 46: 1 + 46 + 5 + 2 = 54 (+ 5 scale beats with w_scale). One lane: c(9)
/// = 36: 1 + 84 + 7 = 92. Four lanes or more in use: c(9) = 9.
#[test]
fn gemv_latency_follows_the_formula() {
    let shape = (1, 10, 10, 40);
    let lanes = |g: &mut Golden, pl: u8, flags: u8| {
        busy(g, shape, Instr::Gemv(op(500, 0, flags, pl)).encode())
    };
    assert_eq!(lanes(&mut timed(8, 4, 2), 0, 0), 54);
    assert_eq!(lanes(&mut timed(8, 4, 2), 0, flag::FLAG_W_SCALE), 59);
    assert_eq!(lanes(&mut timed(8, 4, 2), 2, 0), 54);
    assert_eq!(lanes(&mut timed(8, 4, 2), 3, 0), 54, "3 > 2 lanes: all");
    assert_eq!(lanes(&mut timed(8, 4, 2), 1, 0), 92);
    assert_eq!(lanes(&mut timed(4, 4, 1), 0, 0), 92);
    assert_eq!(lanes(&mut timed(4, 4, 1), 31, 0), 92);
    // Four lanes: c(9) = 9 -> 2 * 15 = 30; three of them: c(9) = 3*4 + 0.
    assert_eq!(lanes(&mut timed(32, 32, 4), 0, 0), 1 + 30 + 7);
    assert_eq!(lanes(&mut timed(32, 32, 4), 3, 0), 1 + 2 * (12 + 6) + 7);
    assert_eq!(lanes(&mut timed(32, 32, 8), 6, 0), 1 + 30 + 7, "P = 6 > 4");
}

#[test]
fn an_instruction_in_error_is_busy_zero_cycles() {
    for word in [gemm(0, 0, 0), gemv(0, 0, 0)] {
        let mut g = timed(8, 4, 2);
        assert_eq!(busy(&mut g, (2, 10, 11, 40), word), 0);
        assert_eq!(g.weight_beats_consumed(), [0, 0]);
    }
}
