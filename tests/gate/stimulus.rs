//! The PRNG against its published reference outputs, and the generator
//! against the coverage it promises (docs/stimulus.md).

use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::stimulus::{fill, GenOptions, Rng, SplitMix64, TestCase};
use pccx_golden::asm::Item;
use pccx_golden::exec::mat::{check_shape, MatEngine, MAT_ACC_WORDS, MAT_L1_WORDS};
use pccx_golden::footprint::{footprint, Footprint, Range};
use pccx_golden::isa::{self, CvoFunc, Decoded, IllegalReason, Instr, MemRoute};
use pccx_golden::model::{reg, ShapeEntry, ShapeTable, HOST_WORDS};
use pccx_golden::tables::{memcpy_words, Tables};
use proptest::prelude::*;
use std::collections::BTreeSet;

// ----- PRNG -------------------------------------------------------------------

/// Vigna's splitmix64.c, seed 1234567 (the sequence Rosetta Code and many
/// ports publish).
#[test]
fn splitmix64_matches_the_reference_from_seed_1234567() {
    let mut sm = SplitMix64::new(1234567);
    let got: Vec<u64> = (0..5).map(|_| sm.next_u64()).collect();
    assert_eq!(
        got,
        [
            6457827717110365317,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821
        ]
    );
}

#[test]
fn splitmix64_matches_the_reference_from_seed_0() {
    let mut sm = SplitMix64::new(0);
    let got: Vec<u64> = (0..5).map(|_| sm.next_u64()).collect();
    assert_eq!(
        got,
        [
            0xe220a8397b1dcdaf,
            0x6e789e6aa1b965f4,
            0x06c45d188009454f,
            0xf88bb8a8724c81ec,
            0x1b39896a51a8749b
        ]
    );
}

/// xoshiro256starstar.c from the state {1, 2, 3, 4} (the vector the
/// reference implementation's ports test against).
#[test]
fn xoshiro256starstar_matches_the_reference_from_state_1_2_3_4() {
    let mut rng = Rng::from_state([1, 2, 3, 4]);
    let got: Vec<u64> = (0..10).map(|_| rng.next_u64()).collect();
    assert_eq!(
        got,
        [
            11520,
            0,
            1509978240,
            1215971899390074240,
            1216172134540287360,
            607988272756665600,
            16172922978634559625,
            8476171486693032832,
            10595114339597558777,
            2904607092377533576
        ]
    );
}

#[test]
fn a_seed_becomes_the_first_four_splitmix64_outputs() {
    let mut seeded = Rng::new(0);
    let mut explicit = Rng::from_state([
        0xe220a8397b1dcdaf,
        0x6e789e6aa1b965f4,
        0x06c45d188009454f,
        0xf88bb8a8724c81ec,
    ]);
    for _ in 0..100 {
        assert_eq!(seeded.next_u64(), explicit.next_u64());
    }
}

#[test]
#[should_panic(expected = "all zero")]
fn the_all_zero_state_is_refused() {
    Rng::from_state([0; 4]);
}

#[test]
fn below_is_uniform_for_a_small_bound() {
    let mut rng = Rng::new(7);
    let mut counts = [0u32; 3];
    for _ in 0..30_000 {
        counts[rng.below(3) as usize] += 1;
    }
    for c in counts {
        assert!((9_500..=10_500).contains(&c), "{counts:?}");
    }
}

/// With n = 3 * 2^62, a plain `draw % n` would hit `0..2^62` twice as
/// often as the rest (half the time instead of a third); rejection (here of
/// a quarter of the draws) removes the bias.
#[test]
fn below_rejects_the_draws_that_would_bias_it() {
    let n = 3u64 << 62;
    let mut rng = Rng::new(11);
    let low = (0..6000).filter(|_| rng.below(n) < 1 << 62).count();
    assert!((1850..=2150).contains(&low), "{low} of 6000 below 2^62");
}

#[test]
fn range_covers_both_ends_and_the_full_domain() {
    let mut rng = Rng::new(3);
    let seen: BTreeSet<u64> = (0..200).map(|_| rng.range(5, 8)).collect();
    assert_eq!(seen, BTreeSet::from([5, 6, 7, 8]));
    // The full u64 range has no span that fits in a u64; it must not panic.
    rng.range(0, u64::MAX);
}

#[test]
fn weighted_never_picks_a_zero_weight() {
    let mut rng = Rng::new(5);
    let picks: BTreeSet<usize> = (0..500).map(|_| rng.weighted(&[0, 3, 0, 1])).collect();
    assert_eq!(picks, BTreeSet::from([1, 3]));
}

proptest! {
    #[test]
    fn below_stays_below_its_bound(seed: u64, n in 1u64..) {
        let mut rng = Rng::new(seed);
        for _ in 0..16 {
            prop_assert!(rng.below(n) < n);
        }
    }

    #[test]
    fn bits_stay_within_their_width(seed: u64, width in 0u32..=64) {
        let mut rng = Rng::new(seed);
        let v = rng.bits(width);
        prop_assert!(width == 64 || v >> width == 0);
    }
}

// ----- images ---------------------------------------------------------------------

#[test]
fn fill_draws_each_word_low_half_first_and_is_prefix_stable() {
    let image = fill(42, 3);
    let mut rng = Rng::new(42);
    let (lo, hi) = (rng.next_u64(), rng.next_u64());
    assert_eq!(image[0], (u128::from(hi) << 64) | u128::from(lo));
    assert_eq!(fill(42, 1000)[..3], image[..]);
    assert_ne!(fill(43, 3), image);
}

// ----- generator ------------------------------------------------------------------

fn options(config: &HwConfig, instrs: usize) -> GenOptions {
    GenOptions::for_config(config, instrs)
}

fn kv260() -> HwConfig {
    config::by_name("kv260").unwrap()
}

fn tiny() -> HwConfig {
    config::by_name("tiny").unwrap()
}

#[test]
fn the_same_seed_gives_the_same_case() {
    let o = options(&kv260(), 40);
    assert_eq!(TestCase::generate(17, &o), TestCase::generate(17, &o));
    assert_ne!(
        TestCase::generate(17, &o).program,
        TestCase::generate(18, &o).program
    );
}

#[test]
fn images_cover_the_whole_memories() {
    let case = TestCase::generate(1, &options(&tiny(), 5));
    assert_eq!(case.l2_image().len(), 4096);
    assert_eq!(case.host_image().len(), HOST_WORDS as usize);
    assert_ne!(case.l2_init_seed, case.host_init_seed);
}

/// The weight seed is the fourth SplitMix64 output of the case's seed (the
/// first three, program, L2 and host, are as before), and the case's
/// streams are that seed's.
#[test]
fn the_weight_seed_is_the_fourth_seed() {
    let o = options(&tiny(), 5);
    let case = TestCase::generate(77, &o);
    let mut sm = SplitMix64::new(77);
    let first: Vec<u64> = (0..4).map(|_| sm.next_u64()).collect();
    assert_eq!(
        [case.l2_init_seed, case.host_init_seed, case.weight_seed],
        first[1..]
    );
    assert_eq!(TestCase::weight_seed_of(77), case.weight_seed);
    assert_eq!(
        case.weight_source(),
        pccx_golden::WeightSource::new(first[3])
    );
    let directed = TestCase::directed(77, &o, Default::default());
    assert_eq!(directed.weight_seed, case.weight_seed);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Register writes never touch 0x00/0x04 (they would latch an
    /// instruction the scoreboard did not issue); gaps are within bounds.
    #[test]
    fn programs_have_exactly_the_instructions_asked_for(seed: u64, instrs in 0usize..80) {
        let o = options(&tiny(), instrs);
        let case = TestCase::generate(seed, &o);
        let mut count = 0;
        for (k, item) in case.program.items.iter().enumerate() {
            match *item {
                Item::Instr(_) => count += 1,
                // Longer only as an edge probe's drain: right before the
                // GEMV/GEMM, whose probe, an async CVO, follows at once.
                Item::Idle(c) if c > o.max_idle => {
                    prop_assert!(c <= pccx_cosim::stimulus::PROBE_DRAIN_MAX);
                    // The j-th instruction after the gap (register writes
                    // may stand between them).
                    let next = |j: usize| {
                        case.program.items[k + 1..]
                            .iter()
                            .filter_map(|i| match i {
                                Item::Instr(w) => Some(pccx_golden::isa::decode(*w)),
                                _ => None,
                            })
                            .nth(j - 1)
                    };
                    prop_assert!(matches!(case.program.items[k + 1], Item::Instr(_)));
                    prop_assert!(matches!(
                        next(1),
                        Some(pccx_golden::isa::Decoded::Legal(
                            pccx_golden::isa::Instr::Gemv(_) | pccx_golden::isa::Instr::Gemm(_)
                        ))
                    ));
                    prop_assert!(matches!(
                        next(2),
                        Some(pccx_golden::isa::Decoded::Legal(pccx_golden::isa::Instr::Cvo(v)))
                            if v.async_
                    ));
                }
                Item::Idle(c) => prop_assert!(c >= 1),
                Item::RegWrite { offset, .. } => {
                    prop_assert!(offset != reg::INSTR_LO && offset != reg::INSTR_HI);
                    prop_assert!(offset < 0x1000);
                }
            }
        }
        prop_assert_eq!(count, instrs);
    }
}

/// Everything the generator promises to produce, found by decoding its
/// programs and replaying the shape table.
#[derive(Default, Debug)]
struct Coverage {
    illegal: BTreeSet<&'static str>,
    routes: BTreeSet<&'static str>,
    sync_and_async: BTreeSet<bool>,
    hazards: BTreeSet<&'static str>,
    table_hazards: BTreeSet<&'static str>,
    edges: BTreeSet<&'static str>,
    l2_self_overlap_up: bool,
    l2_self_overlap_down: bool,
    empty_copy: bool,
    empty_copy_out_of_range: bool,
    not_whole_words: bool,
    long_copy: bool,
    memset_reserved: bool,
    memcpy_aux: bool,
    weight_table: bool,
    longest_burst: usize,
    idle: bool,
    clear_err: bool,
    slverr_write: bool,
    mat: MatCoverage,
}

/// What the generator promises of GEMV and GEMM.
#[derive(Default, Debug)]
struct MatCoverage {
    /// Legal shapes by engine: "gemv", "gemm m=1", "gemm m>1".
    kinds: BTreeSet<&'static str>,
    /// K and N values of legal shapes (all of them, to check the edges).
    k: BTreeSet<u64>,
    n: BTreeSet<u64>,
    /// (findemax, accm, w_scale) of every GEMV/GEMM.
    flags: BTreeSet<(bool, bool, bool)>,
    parallel_lanes: BTreeSet<u8>,
    reserved_bits: bool,
    /// "l1 exact", "acc exact", "l1 one past", "acc one past", "both exact".
    limits: BTreeSet<&'static str>,
    /// "zero dim", "k mismatch", "gemv m!=1".
    bad_shapes: BTreeSet<&'static str>,
    /// L2 range edges, as for MEMCPY, and SHAPE with out-of-range operands.
    edges: BTreeSet<&'static str>,
    /// Destination overlapping the instruction's own source.
    self_overlap: bool,
    /// An L2 hazard between a GEMV/GEMM and another instruction in flight.
    hazards: BTreeSet<&'static str>,
    /// A legal GEMV/GEMM reading what an earlier legal one wrote.
    chain: bool,
    /// GEMV with findemax, then a CVO with sub_emax reading its output.
    softmax_prefix: bool,
    /// GEMV, then a REDUCE_SUM of its output.
    rmsnorm_prefix: bool,
    /// A MEMSET of a shape entry right before the GEMV/GEMM that reads it.
    table_raw: bool,
    /// Largest M * K * N of a legal shape.
    largest: u64,
    /// Legal, in-range GEMV/GEMMs, and those of them with a modest shape
    /// (M <= 8, K <= 96, N <= 80).
    legal: usize,
    modest: usize,
}

/// How far apart two instructions may be and still overlap in flight: the
/// FIFOs are at most 8 deep.
const HAZARD_DISTANCE: usize = 8;

fn overlap(a: &Option<Range>, b: &Option<Range>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.overlaps(b))
}

fn survey(config: &HwConfig, seeds: std::ops::Range<u64>) -> Coverage {
    let mut cov = Coverage::default();
    let l2 = u64::from(config.l2_words);
    let host = u64::from(HOST_WORDS);
    for seed in seeds {
        let case = TestCase::generate(seed, &options(config, 40));
        let mut tables = Tables::default();
        // (index in program, footprint) of recent legal instructions.
        let mut recent: Vec<(usize, Footprint, u64)> = Vec::new();
        let mut burst = 0;
        for (i, item) in case.program.items.iter().enumerate() {
            let word = match *item {
                Item::Instr(w) => w,
                Item::Idle(_) => {
                    cov.idle = true;
                    burst = 0;
                    continue;
                }
                Item::RegWrite { offset, .. } => {
                    if offset == reg::STATUS {
                        cov.clear_err = true;
                    } else {
                        cov.slverr_write = true;
                    }
                    burst = 0;
                    continue;
                }
            };
            burst += 1;
            cov.longest_burst = cov.longest_burst.max(burst);
            let instr = match isa::decode(word) {
                Decoded::Illegal { reason, .. } => {
                    cov.illegal.insert(match reason {
                        IllegalReason::Opcode(_) => "opcode",
                        IllegalReason::CvoFunc(_) => "cvo_func",
                        IllegalReason::DestCache(_) => "dest_cache",
                        IllegalReason::Direction => "direction",
                    });
                    continue;
                }
                Decoded::Legal(instr) => instr,
            };
            let fp = footprint(&instr, &tables);
            for (j, older, _) in recent.iter().rev() {
                if i - j > HAZARD_DISTANCE * 2 {
                    break;
                }
                let pairs = [
                    ("l2 raw", &older.l2_write, &fp.l2_read),
                    ("l2 war", &older.l2_read, &fp.l2_write),
                    ("l2 waw", &older.l2_write, &fp.l2_write),
                    ("host raw", &older.host_write, &fp.host_read),
                    ("host war", &older.host_read, &fp.host_write),
                    ("host waw", &older.host_write, &fp.host_write),
                ];
                for (name, a, b) in pairs {
                    if overlap(a, b) {
                        cov.hazards.insert(name);
                    }
                }
                if let Some(entry) = older.table_write {
                    if fp.table_reads.contains(&entry) {
                        cov.table_hazards.insert("raw");
                    }
                    if fp.table_write == Some(entry) {
                        cov.table_hazards.insert("waw");
                    }
                }
                if let Some(entry) = fp.table_write {
                    if older.table_reads.contains(&entry) {
                        cov.table_hazards.insert("war");
                    }
                }
            }
            match instr {
                Instr::Memset(m) => {
                    cov.memset_reserved |= m.reserved != 0;
                    cov.weight_table |= m.dest_cache == ShapeTable::Weight;
                    let entry = ShapeEntry {
                        a: m.a_value,
                        b: m.b_value,
                        c: m.c_value,
                    };
                    tables.set(m.dest_cache, m.dest_addr, entry);
                }
                Instr::Memcpy(m) => {
                    let entry = tables.get(ShapeTable::Fmap, m.shape_ptr_addr);
                    let len = memcpy_words(entry);
                    let elems = u64::from(entry.a) * u64::from(entry.b) * u64::from(entry.c);
                    cov.not_whole_words |= elems % 8 != 0;
                    cov.long_copy |= (100..=l2).contains(&len);
                    cov.memcpy_aux |= m.aux_addr != 0;
                    cov.sync_and_async.insert(m.async_);
                    let route = m.route();
                    cov.routes.insert(match route {
                        MemRoute::HostToL2 => "host->l2",
                        MemRoute::L2ToHost => "l2->host",
                        MemRoute::L2ToL2 => "l2->l2",
                    });
                    let (src, dst) = (u64::from(m.src_addr), u64::from(m.dest_addr));
                    let (src_size, dst_size) = match route {
                        MemRoute::HostToL2 => (host, l2),
                        MemRoute::L2ToHost => (l2, host),
                        MemRoute::L2ToL2 => (l2, l2),
                    };
                    if len == 0 {
                        cov.empty_copy = true;
                        cov.empty_copy_out_of_range |= src >= src_size || dst >= dst_size;
                    } else {
                        let mem = |size| if size == l2 { "l2" } else { "host" };
                        for (role, base, size) in [("src", src, src_size), ("dst", dst, dst_size)] {
                            if base + len == size {
                                cov.edges.insert(match (mem(size), role) {
                                    ("l2", "src") => "l2 src at edge",
                                    ("l2", _) => "l2 dst at edge",
                                    (_, "src") => "host src at edge",
                                    _ => "host dst at edge",
                                });
                            }
                            if base + len == size + 1 {
                                cov.edges.insert(match (mem(size), role) {
                                    ("l2", "src") => "l2 src one past",
                                    ("l2", _) => "l2 dst one past",
                                    (_, "src") => "host src one past",
                                    _ => "host dst one past",
                                });
                            }
                        }
                        if src + len > src_size && dst + len > dst_size {
                            cov.edges.insert("both out of range");
                        }
                        if route == MemRoute::L2ToL2 && src.abs_diff(dst) < len {
                            cov.l2_self_overlap_up |= dst > src;
                            cov.l2_self_overlap_down |= dst < src;
                        }
                    }
                }
                Instr::Gemv(_) | Instr::Gemm(_) => {
                    survey_mat(&mut cov.mat, &instr, &fp, &tables, l2, &recent, i);
                }
                Instr::Cvo(c) => {
                    // Prefixes: a CVO reading the output of a recent GEMV.
                    for (_, older, word) in recent.iter().rev().take(4) {
                        let Decoded::Legal(Instr::Gemv(g)) = isa::decode(*word) else {
                            continue;
                        };
                        if older.l2_write.map(|r| r.start) == Some(u64::from(c.src_addr)) {
                            if c.func == CvoFunc::Exp && c.sub_emax() && g.findemax() {
                                cov.mat.softmax_prefix = true;
                            }
                            if c.func == CvoFunc::ReduceSum {
                                cov.mat.rmsnorm_prefix = true;
                            }
                        }
                    }
                }
            }
            recent.push((i, fp, word));
        }
    }
    cov
}

/// Records what one GEMV/GEMM covers.
fn survey_mat(
    cov: &mut MatCoverage,
    instr: &Instr,
    fp: &Footprint,
    tables: &Tables,
    l2: u64,
    recent: &[(usize, Footprint, u64)],
    i: usize,
) {
    let (engine, op) = MatEngine::of(instr).unwrap();
    let gemv = engine == MatEngine::Gemv;
    cov.flags.insert((op.findemax(), op.accm(), op.w_scale()));
    cov.parallel_lanes.insert(op.parallel_lane);
    cov.reserved_bits |= op.reserved != 0 && op.flags & 7 != 0;
    let fmap = tables.get(ShapeTable::Fmap, op.shape_ptr_addr);
    let weight = tables.get(ShapeTable::Weight, op.size_ptr_addr);
    let (m, k, k2, n) = (
        u64::from(fmap.a),
        u64::from(fmap.b),
        u64::from(weight.a),
        u64::from(weight.b),
    );
    let (l1, acc) = (m * k.div_ceil(16), m * n.div_ceil(8));
    let dims_ok = m > 0 && k > 0 && n > 0 && k == k2 && (!gemv || m == 1);
    if dims_ok {
        if l1 == MAT_L1_WORDS && acc <= MAT_ACC_WORDS {
            cov.limits.insert("l1 exact");
        }
        if acc == MAT_ACC_WORDS && l1 <= MAT_L1_WORDS {
            cov.limits.insert("acc exact");
        }
        if l1 == MAT_L1_WORDS && acc == MAT_ACC_WORDS {
            cov.limits.insert("both exact");
        }
        if l1 == MAT_L1_WORDS + 1 && acc <= MAT_ACC_WORDS {
            cov.limits.insert("l1 one past");
        }
        if acc == MAT_ACC_WORDS + 1 && l1 <= MAT_L1_WORDS {
            cov.limits.insert("acc one past");
        }
    }
    if m == 0 || k == 0 || k2 == 0 || n == 0 {
        cov.bad_shapes.insert("zero dim");
    } else if k != k2 {
        cov.bad_shapes.insert("k mismatch");
    } else if gemv && m != 1 {
        cov.bad_shapes.insert("gemv m!=1");
    }
    let (src, dest) = (u64::from(op.src_addr), u64::from(op.dest_reg));
    let Ok(shape) = check_shape(engine, op, tables) else {
        if src + l1 > l2 || dest + acc > l2 {
            cov.edges.insert("shape error out of range");
        }
        return;
    };
    for (role, base, len) in [("src", src, l1), ("dest", dest, acc)] {
        if base + len == l2 {
            cov.edges.insert(if role == "src" {
                "src at edge"
            } else {
                "dest at edge"
            });
        }
        if base + len == l2 + 1 {
            cov.edges.insert(if role == "src" {
                "src one past"
            } else {
                "dest one past"
            });
        }
    }
    if src + l1 > l2 && dest + acc > l2 {
        cov.edges.insert("both out of range");
    }
    if src + l1 > l2 || dest + acc > l2 {
        return;
    }
    cov.kinds.insert(match (gemv, shape.m) {
        (true, _) => "gemv",
        (false, 1) => "gemm m=1",
        _ => "gemm m>1",
    });
    cov.k.insert(shape.k);
    cov.n.insert(shape.n);
    cov.largest = cov.largest.max(shape.m * shape.k * shape.n);
    cov.legal += 1;
    cov.modest += usize::from(shape.m <= 8 && shape.k <= 96 && shape.n <= 80);
    cov.self_overlap |= src < dest + acc && dest < src + l1;
    for (j, older, word) in recent.iter().rev() {
        if i - j > HAZARD_DISTANCE * 2 {
            break;
        }
        let pairs = [
            ("raw", &older.l2_write, &fp.l2_read),
            ("war", &older.l2_read, &fp.l2_write),
            ("waw", &older.l2_write, &fp.l2_write),
        ];
        for (name, a, b) in pairs {
            if overlap(a, b) {
                cov.hazards.insert(name);
            }
        }
        let older_mat = matches!(
            isa::decode(*word),
            Decoded::Legal(Instr::Gemv(_) | Instr::Gemm(_))
        );
        if older_mat && older.l2_write.map(|r| r.start) == Some(src) {
            cov.chain = true;
        }
    }
    // The instruction right before (no idle gap or register write needed).
    if let Some((_, prev, _)) = recent.last() {
        if let Some(entry) = prev.table_write {
            cov.table_raw |= fp.table_reads.contains(&entry);
        }
    }
}

fn assert_covers_everything(config: &HwConfig, cov: &Coverage) {
    let set = |v: &[&'static str]| v.iter().copied().collect::<BTreeSet<_>>();
    assert_eq!(
        cov.illegal,
        set(&["cvo_func", "dest_cache", "direction", "opcode"])
    );
    assert_eq!(cov.routes, set(&["host->l2", "l2->host", "l2->l2"]));
    assert_eq!(cov.sync_and_async, BTreeSet::from([false, true]));
    assert_eq!(
        cov.hazards,
        set(&["host raw", "host war", "host waw", "l2 raw", "l2 war", "l2 waw"])
    );
    assert_eq!(cov.table_hazards, set(&["raw", "war", "waw"]));
    assert_eq!(
        cov.edges,
        set(&[
            "both out of range",
            "host dst at edge",
            "host dst one past",
            "host src at edge",
            "host src one past",
            "l2 dst at edge",
            "l2 dst one past",
            "l2 src at edge",
            "l2 src one past",
        ]),
        "{}",
        config.name
    );
    assert!(
        cov.l2_self_overlap_up && cov.l2_self_overlap_down,
        "{cov:?}"
    );
    assert!(cov.empty_copy && cov.empty_copy_out_of_range, "{cov:?}");
    assert!(cov.not_whole_words && cov.long_copy, "{cov:?}");
    assert!(
        cov.memset_reserved && cov.memcpy_aux && cov.weight_table,
        "{cov:?}"
    );
    assert!(
        cov.longest_burst > config.fifo_depth as usize,
        "longest burst {} with FIFO depth {}",
        cov.longest_burst,
        config.fifo_depth
    );
    assert!(cov.idle && cov.clear_err && cov.slverr_write, "{cov:?}");
    assert_covers_mat(config, &cov.mat);
}

fn assert_covers_mat(config: &HwConfig, cov: &MatCoverage) {
    let set = |v: &[&'static str]| v.iter().copied().collect::<BTreeSet<_>>();
    let name = config.name;
    assert_eq!(cov.kinds, set(&["gemm m=1", "gemm m>1", "gemv"]), "{name}");
    for d in [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65] {
        assert!(cov.k.contains(&d), "{name}: no legal K = {d}");
        assert!(cov.n.contains(&d), "{name}: no legal N = {d}");
    }
    assert_eq!(
        cov.flags.len(),
        8,
        "{name}: flag combinations {:?}",
        cov.flags
    );
    assert!(
        cov.parallel_lanes.len() >= 28,
        "{name}: lanes {:?}",
        cov.parallel_lanes
    );
    assert!(cov.parallel_lanes.contains(&0) && cov.parallel_lanes.contains(&31));
    assert!(cov.reserved_bits, "{name}");
    assert_eq!(
        cov.limits,
        set(&[
            "acc exact",
            "acc one past",
            "both exact",
            "l1 exact",
            "l1 one past"
        ]),
        "{name}"
    );
    assert_eq!(
        cov.bad_shapes,
        set(&["gemv m!=1", "k mismatch", "zero dim"]),
        "{name}"
    );
    assert_eq!(
        cov.edges,
        set(&[
            "both out of range",
            "dest at edge",
            "dest one past",
            "shape error out of range",
            "src at edge",
            "src one past",
        ]),
        "{name}"
    );
    assert_eq!(cov.hazards, set(&["raw", "war", "waw"]), "{name}");
    assert!(
        cov.self_overlap && cov.chain && cov.table_raw,
        "{name}: {cov:?}"
    );
    assert!(cov.softmax_prefix && cov.rmsnorm_prefix, "{name}: {cov:?}");
    // Mostly modest shapes, a few up to the limits.
    assert!(
        cov.legal >= 300,
        "{name}: only {} legal GEMV/GEMM",
        cov.legal
    );
    let modest = cov.modest as f64 / cov.legal as f64;
    assert!((0.9..1.0).contains(&modest), "{name}: {modest} modest");
    assert!(
        cov.largest >= 100_000,
        "{name}: largest M*K*N {}",
        cov.largest
    );
}

#[test]
fn the_generator_covers_every_promised_case_on_kv260() {
    let c = kv260();
    assert_covers_everything(&c, &survey(&c, 0..100));
}

#[test]
fn the_generator_covers_every_promised_case_on_tiny() {
    let c = tiny();
    assert_covers_everything(&c, &survey(&c, 0..100));
}

#[test]
fn non_slice1_kinds_are_emitted_only_when_weighted() {
    let mut o = options(&kv260(), 200);
    o.weights.memset = 0;
    o.weights.memcpy = 0;
    o.weights.gemv = 0;
    o.weights.gemm = 0;
    o.weights.cvo = 1;
    o.illegal_pct = 0;
    let case = TestCase::generate(9, &o);
    let ops: Vec<&str> = case
        .program
        .items
        .iter()
        .filter_map(|item| match *item {
            Item::Instr(w) => Some(isa::op_name(w)),
            _ => None,
        })
        .collect();
    // The prologue's 2 to 4 MEMSETs, then CVOs only.
    let prologue = ops.iter().take_while(|op| **op == "MEMSET").count();
    assert!((2..=4).contains(&prologue), "{ops:?}");
    assert!(ops[prologue..].iter().all(|op| *op == "CVO"), "{ops:?}");
}

/// FNV-1a (64 bit) of a text: a fingerprint that needs no dependency.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Slice-1 weights still give exactly the programs slice 1 generated (the
/// fingerprints of `pccx-cosim gen --seed N` before GEMV/GEMM joined the
/// mix), so old seeds keep their meaning under `OpWeights::SLICE1`.
#[test]
fn slice1_weights_give_the_slice1_programs() {
    use pccx_cosim::stimulus::OpWeights;
    use pccx_golden::asm::format_program;
    let pinned: [(&str, [u64; 6]); 2] = [
        (
            "tiny",
            [
                0x06a4_e1dd_3a44_cb57,
                0xe976_5680_d977_d9fb,
                0x3c38_4512_8ca2_fb9e,
                0xbbff_e397_115a_73af,
                0x8afa_7636_134d_f8ac,
                0xc013_e512_abda_b5eb,
            ],
        ),
        (
            "kv260",
            [
                0x96c3_6347_a7f3_1f84,
                0x0ab5_4f6b_8037_8265,
                0xe42a_9d7b_5eef_fd2d,
                0x1470_2eee_7502_19c2,
                0xb543_dcd4_fe73_20fd,
                0x1ba1_7522_203f_2fe7,
            ],
        ),
    ];
    for (name, prints) in pinned {
        let mut o = options(&config::by_name(name).unwrap(), 40);
        o.weights = OpWeights::SLICE1;
        o.abut_pct = 0;
        o.entry_edge_pct = 0;
        for (seed, want) in prints.into_iter().enumerate() {
            let case = TestCase::generate(seed as u64, &o);
            let got = fnv1a(&format_program(&case.program));
            assert_eq!(got, want, "{name} seed {seed}: {got:#018x}");
        }
    }
}

/// The initial L2 holds every BF16 special value, in about one element in
/// sixteen, and the images stay a function of the case.
#[test]
fn the_l2_image_carries_bf16_special_values() {
    use pccx_cosim::stimulus::BF16_SPECIALS;
    let cfg = config::by_name("tiny").unwrap();
    let case = TestCase::generate(3, &options(&cfg, 10));
    let image = case.l2_image();
    assert_eq!(image, case.l2_image());
    let elements: Vec<u16> = image
        .iter()
        .flat_map(|w| (0..8).map(move |i| (w >> (16 * i)) as u16))
        .collect();
    for special in BF16_SPECIALS {
        let n = elements.iter().filter(|&&e| e == special).count();
        assert!(n > 100, "{special:#06x} appears {n} times");
    }
    let specials = elements
        .iter()
        .filter(|e| BF16_SPECIALS.contains(e))
        .count();
    // One element in 16 outside the moderate blocks, which are half of L2.
    let share = specials as f64 / elements.len() as f64;
    assert!((0.025..0.04).contains(&share), "share of specials {share}");
}

#[test]
fn half_the_l2_blocks_hold_moderate_bf16_values() {
    use pccx_cosim::stimulus::{BF16_SPECIALS, MODERATE_BLOCK_WORDS};
    let cfg = config::by_name("tiny").unwrap();
    let image = TestCase::generate(3, &options(&cfg, 10)).l2_image();
    let moderate = |w: &u128| {
        (0..8).all(|i| {
            let e = (w >> (16 * i)) as u16;
            let exponent = (e >> 7) & 0xFF;
            (121..=134).contains(&exponent) && !BF16_SPECIALS.contains(&e)
        })
    };
    let blocks: Vec<bool> = image
        .chunks(MODERATE_BLOCK_WORDS)
        .map(|b| b.iter().all(moderate))
        .collect();
    let share = blocks.iter().filter(|&&m| m).count() as f64 / blocks.len() as f64;
    assert!(
        (0.4..0.6).contains(&share),
        "share of moderate blocks {share}"
    );
}
