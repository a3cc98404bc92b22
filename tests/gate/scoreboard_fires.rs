//! Every scoreboard check fires on the fault it exists to catch, and stays
//! quiet when the models agree.
//!
//! The checks are written against a DUT *factory*, so that the same table
//! runs with any model inside [`Faulty`]: here the golden model; with the
//! RTL, add a test that calls [`every_fault_fires_its_check`] and the others
//! with an RTL factory.

use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::env::faults::{Fault, Faulty};
use pccx_cosim::env::models;
use pccx_cosim::scoreboard::{run_case, CheckKind, Outcome};
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_golden::asm::{Item, Program};
use pccx_golden::isa::{layout, Instr, MatOp, Memcpy, Memset};
use pccx_golden::model::{reg, ModelError, NpuModel, ShapeTable};
use pccx_golden::{Golden, GoldenConfig};

/// Makes a fresh model of a configuration.
type Factory = dyn Fn(&HwConfig) -> Box<dyn NpuModel>;

fn golden(config: &HwConfig) -> Box<dyn NpuModel> {
    models::open_reference(config)
}

/// The golden model unboxed, for nesting in `Faulty::new`.
fn golden_model(config: &HwConfig) -> Golden {
    Golden::new(GoldenConfig {
        l2_words: config.l2_words,
    })
}

fn tiny() -> HwConfig {
    config::by_name("tiny").unwrap()
}

fn memset(table: ShapeTable, index: u8, (a, b, c): (u16, u16, u16)) -> Item {
    Item::Instr(
        Instr::Memset(Memset {
            dest_cache: table,
            dest_addr: index,
            a_value: a,
            b_value: b,
            c_value: c,
            reserved: 0,
        })
        .encode(),
    )
}

fn memcpy(from_host: bool, to_host: bool, dest: u32, src: u32, shape: u8, async_: bool) -> Item {
    Item::Instr(
        Instr::Memcpy(Memcpy {
            from_device: from_host,
            to_device: to_host,
            dest_addr: dest,
            src_addr: src,
            aux_addr: 0,
            shape_ptr_addr: shape,
            async_,
        })
        .encode(),
    )
}

/// A short program with something for every fault to act on. Sequence
/// numbers, for the expectations below:
///
/// | seq | instruction | reports |
/// |---|---|---|
/// | 0 | MEMSET fmap[1] = (1, 1, 20) | shape write; 3-word copies |
/// | 1 | MEMSET fmap[2] = (1, 3, 3) | shape write; 2-word copies |
/// | 2 | MEMCPY L2[0x10..0x13) <- HOST[0x100..], async | L2 writes 0-2 |
/// | 3 | MEMCPY HOST[0x200..0x202) <- L2[0x10..] | host writes 0-1 |
/// | 4 | MEMCPY L2[0x11..0x14) <- L2[0x10..] (overlapping) | L2 writes 3-5 |
/// | 5 | illegal opcode 5 | err ILLEGAL_OPCODE |
/// | 6 | MEMCPY L2[L2_WORDS - 1..] <- L2[0], 2 words | err L2_RANGE |
/// |   | `.write 0x08` (clear ERR), `.idle 3` | register write 14 |
/// | 7 | MEMSET weight[5] = (7, 8, 9) | shape write |
fn directed_case(config: &HwConfig) -> TestCase {
    let items = vec![
        memset(ShapeTable::Fmap, 1, (1, 1, 20)),
        memset(ShapeTable::Fmap, 2, (1, 3, 3)),
        memcpy(true, false, 0x10, 0x100, 1, true),
        memcpy(false, true, 0x200, 0x10, 2, false),
        memcpy(false, false, 0x11, 0x10, 1, true),
        Item::Instr(layout::OPCODE.put(5) | 0x1234),
        memcpy(false, false, config.l2_words - 1, 0, 2, false),
        Item::RegWrite {
            offset: reg::STATUS,
            value: 0,
        },
        Item::Idle(3),
        memset(ShapeTable::Weight, 5, (7, 8, 9)),
    ];
    TestCase::directed(99, &GenOptions::for_config(config, 0), Program { items })
}

fn mat(gemv: bool, dest: u32, src: u32, flags: u8, fmap: u8, weight: u8) -> Item {
    let op = MatOp {
        dest_reg: dest,
        src_addr: src,
        flags,
        size_ptr_addr: weight,
        shape_ptr_addr: fmap,
        parallel_lane: 3,
        reserved: 0,
    };
    Item::Instr(
        if gemv {
            Instr::Gemv(op)
        } else {
            Instr::Gemm(op)
        }
        .encode(),
    )
}

/// GEMV and GEMM for the faults of their checks:
///
/// | seq | instruction | reports |
/// |---|---|---|
/// | 0 | MEMSET fmap[1] = (1, 40, 0) | GEMV shape: M = 1, K = 40 |
/// | 1 | MEMSET weight[2] = (40, 20, 0) | N = 20 |
/// | 2 | GEMV L2[0x40..0x43) <- L2[0x10..], findemax, w_scale | stream read 0 (vector, 43 beats); L2 writes 0-2; e_max write 0 |
/// | 3 | MEMSET fmap[3] = (3, 40, 0) | GEMM shape: M = 3 |
/// | 4 | GEMM L2[0x50..0x59) <- L2[0x20..], accm | stream read 1 (matrix, 40 beats); L2 writes 3-11 |
/// | 5 | GEMV with the GEMM's shape (M = 3) | err SHAPE, no beats |
/// | 6 | GEMM L2[0x60..] <- L2[0x40..] (the GEMV's output), findemax | stream read 2 (40 beats); L2 writes 12-14; e_max write 1 |
fn mat_case(config: &HwConfig) -> TestCase {
    let fmap = |i, (a, b)| memset(ShapeTable::Fmap, i, (a, b, 0));
    let items = vec![
        fmap(1, (1, 40)),
        memset(ShapeTable::Weight, 2, (40, 20, 0)),
        mat(true, 0x40, 0x10, 0x28, 1, 2),
        fmap(3, (3, 40)),
        Item::Idle(5),
        mat(false, 0x50, 0x20, 0x10, 3, 2),
        mat(true, 0x70, 0x20, 0x00, 3, 2),
        mat(false, 0x60, 0x40, 0x20, 1, 2),
    ];
    TestCase::directed(7, &GenOptions::for_config(config, 0), Program { items })
}

/// The faults of the GEMV/GEMM checks, as [`expectations`].
fn mat_expectations() -> Vec<(Fault, CheckKind, Option<u32>)> {
    use CheckKind as K;
    vec![
        (
            Fault::StreamBeats { nth: 0, delta: 1 },
            K::WeightStream,
            Some(2),
        ),
        (
            Fault::StreamBeats { nth: 1, delta: -1 },
            K::WeightStream,
            Some(4),
        ),
        (
            Fault::StreamBeats {
                nth: 2,
                delta: 1 << 20,
            },
            K::WeightStream,
            Some(6),
        ),
        (Fault::DropStreamRead { nth: 1 }, K::WeightStream, Some(4)),
        (Fault::MatData { nth: 0, bit: 0 }, K::L2Writes, Some(2)),
        (Fault::MatData { nth: 11, bit: 127 }, K::L2Writes, Some(4)),
        (Fault::MatData { nth: 14, bit: 70 }, K::L2Writes, Some(6)),
        (Fault::DropEMax { nth: 0 }, K::EMaxWrites, Some(2)),
        (Fault::DropEMax { nth: 1 }, K::EMaxWrites, Some(6)),
        (
            Fault::EMaxValue {
                nth: 1,
                xor: 0x8000,
            },
            K::EMaxWrites,
            Some(6),
        ),
        (
            Fault::ExtraEMax { seq: 4, value: 0 },
            K::EMaxWrites,
            Some(4),
        ),
        (
            Fault::RetireErr { nth: 5, xor: 5 ^ 6 },
            K::RetireErr,
            Some(5),
        ),
        (
            Fault::BeatsConsumed {
                stream: 0,
                delta: 1,
            },
            K::FinalWeightStream,
            None,
        ),
        (
            Fault::BeatsConsumed {
                stream: 1,
                delta: -43,
            },
            K::FinalWeightStream,
            None,
        ),
    ]
}

/// Every GEMV/GEMM fault fires its check at its sequence number.
pub fn every_mat_fault_fires_its_check(config: &HwConfig, make_dut: &Factory) {
    let case = mat_case(config);
    for (fault, kind, seq) in mat_expectations() {
        let (result, fired) = run_with_fault(&case, config, make_dut, fault);
        assert!(
            fired,
            "{fault:?} found nothing to change in the GEMV/GEMM case"
        );
        let outcome = result.unwrap_or_else(|e| panic!("{fault:?}: model error {e}"));
        let m = outcome
            .first_mismatch
            .unwrap_or_else(|| panic!("{fault:?} went unnoticed"));
        assert_eq!((m.kind, m.seq), (kind, seq), "{fault:?}:\n{m}");
        assert_eq!(m.kind.is_final(), seq.is_none());
    }
}

/// Runs `case` with the reference against `Faulty(dut, fault)`; the
/// outcome, and whether the fault changed anything.
fn run_with_fault(
    case: &TestCase,
    config: &HwConfig,
    make_dut: &Factory,
    fault: Fault,
) -> (Result<Outcome, ModelError>, bool) {
    let mut reference = golden(config);
    let mut dut = Faulty::boxed(make_dut(config), fault);
    let result = run_case(case, &mut *reference, &mut dut);
    (result, dut.fired())
}

/// Each fault with the check it must trip and the sequence number that
/// check must name (`None`: a final-state check, or a `.write` item).
fn expectations(config: &HwConfig) -> Vec<(Fault, CheckKind, Option<u32>)> {
    use CheckKind as K;
    vec![
        (Fault::L2Data { nth: 1, bit: 77 }, K::L2Writes, Some(2)),
        (Fault::L2Mask { nth: 0, xor: 0x80 }, K::L2Writes, Some(2)),
        (Fault::L2Addr { nth: 2, xor: 0x40 }, K::L2Writes, Some(2)),
        (Fault::L2Addr { nth: 4, xor: 0x1 }, K::L2Writes, Some(4)),
        (Fault::DropL2 { nth: 0 }, K::L2Writes, Some(2)),
        (Fault::DropL2 { nth: 5 }, K::L2Writes, Some(4)),
        (Fault::ExtraL2 { seq: 0, addr: 0x30 }, K::L2Writes, Some(0)),
        (Fault::ExtraL2 { seq: 4, addr: 0x11 }, K::L2Writes, Some(4)),
        (Fault::LateL2 { nth: 3 }, K::WriteAfterRetire, Some(4)),
        (Fault::HostData { nth: 1, bit: 127 }, K::HostWrites, Some(3)),
        (Fault::DropHost { nth: 0 }, K::HostWrites, Some(3)),
        (
            Fault::ShapeValue { nth: 0, xor: 1 },
            K::ShapeWrites,
            Some(0),
        ),
        (
            Fault::ShapeValue {
                nth: 2,
                xor: 0x8000,
            },
            K::ShapeWrites,
            Some(7),
        ),
        (
            Fault::ExtraEMax {
                seq: 3,
                value: 0x3f80,
            },
            K::EMaxWrites,
            Some(3),
        ),
        (Fault::RetireErr { nth: 0, xor: 6 }, K::RetireErr, Some(0)),
        // ILLEGAL_OPCODE (1) reported as OK.
        (Fault::RetireErr { nth: 5, xor: 1 }, K::RetireErr, Some(5)),
        (Fault::RetireErr { nth: 6, xor: 0xF }, K::RetireErr, Some(6)),
        (
            Fault::RetireOpcode { nth: 2, xor: 1 },
            K::RetireOpcode,
            Some(2),
        ),
        (Fault::DropRetire { nth: 4 }, K::MissingRetire, Some(4)),
        (
            Fault::DuplicateRetire {
                nth: 1,
                later: false,
            },
            K::ExtraRetire,
            Some(1),
        ),
        // Seen only after seq 1 was compared: judged on arrival.
        (
            Fault::DuplicateRetire {
                nth: 1,
                later: true,
            },
            K::ExtraRetire,
            Some(1),
        ),
        (
            Fault::DuplicateRetire {
                nth: 7,
                later: true,
            },
            K::ExtraRetire,
            Some(7),
        ),
        (
            Fault::DuplicateLatch {
                nth: 2,
                later: false,
            },
            K::Latch,
            Some(2),
        ),
        (
            Fault::DuplicateLatch {
                nth: 2,
                later: true,
            },
            K::Latch,
            Some(2),
        ),
        (
            Fault::LatchWord {
                nth: 3,
                xor: 1 << 40,
            },
            K::Latch,
            Some(3),
        ),
        // Register write 1 is the 0x04 half of seq 0; 14 is the `.write`.
        (Fault::AxiResp { nth: 1 }, K::RegResponse, Some(0)),
        (Fault::AxiResp { nth: 14 }, K::RegResponse, None),
        (Fault::CorruptL2 { addr: 0x12 }, K::FinalL2, None),
        (
            Fault::CorruptL2 {
                addr: config.l2_words - 1,
            },
            K::FinalL2,
            None,
        ),
        (Fault::CorruptHost { addr: 0x1FFFF }, K::FinalHost, None),
        (
            Fault::CorruptTable {
                table: ShapeTable::Weight,
                index: 5,
            },
            K::FinalTables,
            None,
        ),
        (
            Fault::CorruptTable {
                table: ShapeTable::Fmap,
                index: 63,
            },
            K::FinalTables,
            None,
        ),
        (Fault::CorruptEMax, K::FinalEMax, None),
        (Fault::StatusBit { bit: 0 }, K::FinalStatus, None),
        (Fault::StatusBit { bit: 1 }, K::FinalStatus, None),
        (Fault::StatusBit { bit: 2 }, K::FinalStatus, None),
        (Fault::StatusBit { bit: 6 }, K::FinalStatus, None),
        (Fault::RetiredCount { delta: 1 }, K::FinalRetiredCount, None),
        (Fault::InstrLoBit { bit: 3 }, K::FinalInstrRegs, None),
        (Fault::UnmappedReadOkay, K::FinalInstrRegs, None),
        (
            Fault::RetiredCount { delta: u32::MAX },
            K::FinalRetiredCount,
            None,
        ),
    ]
}

/// Every fault in the table fires, and the scoreboard names exactly its
/// check at exactly its sequence number.
pub fn every_fault_fires_its_check(config: &HwConfig, make_dut: &Factory) {
    let case = directed_case(config);
    for (fault, kind, seq) in expectations(config) {
        let (result, fired) = run_with_fault(&case, config, make_dut, fault);
        assert!(
            fired,
            "{fault:?} found nothing to change in the directed case"
        );
        let outcome = result.unwrap_or_else(|e| panic!("{fault:?}: model error {e}"));
        let m = outcome
            .first_mismatch
            .unwrap_or_else(|| panic!("{fault:?} went unnoticed"));
        assert_eq!((m.kind, m.seq), (kind, seq), "{fault:?}:\n{m}");
        assert_eq!(
            m.kind.is_final(),
            seq.is_none() && kind != CheckKind::RegResponse
        );
    }
}

/// The same faults (those that name their target by position) on random
/// programs: when a fault fires it is caught by its check, when it finds
/// nothing to change the run matches, and each fires on some seed.
pub fn faults_fire_on_generated_cases(config: &HwConfig, make_dut: &Factory) {
    use CheckKind as K;
    let faults = [
        (Fault::L2Data { nth: 0, bit: 3 }, K::L2Writes),
        (Fault::DropL2 { nth: 2 }, K::L2Writes),
        (Fault::HostData { nth: 0, bit: 64 }, K::HostWrites),
        (Fault::ShapeValue { nth: 1, xor: 4 }, K::ShapeWrites),
        (Fault::RetireErr { nth: 9, xor: 2 }, K::RetireErr),
        (Fault::DropRetire { nth: 11 }, K::MissingRetire),
        (Fault::AxiResp { nth: 7 }, K::RegResponse),
        (Fault::CorruptL2 { addr: 5 }, K::FinalL2),
        (Fault::StreamBeats { nth: 0, delta: 1 }, K::WeightStream),
        (Fault::MatData { nth: 2, bit: 21 }, K::L2Writes),
        (Fault::DropEMax { nth: 0 }, K::EMaxWrites),
        (
            Fault::BeatsConsumed {
                stream: 1,
                delta: 1,
            },
            K::FinalWeightStream,
        ),
    ];
    let options = GenOptions::for_config(config, 30);
    for (fault, kind) in faults {
        let mut fired_somewhere = false;
        for seed in 0..12 {
            let case = TestCase::generate(seed, &options);
            let (result, fired) = run_with_fault(&case, config, make_dut, fault);
            let outcome = result.unwrap_or_else(|e| panic!("{fault:?} seed {seed}: {e}"));
            match (fired, outcome.first_mismatch) {
                (true, Some(m)) => assert_eq!(m.kind, kind, "{fault:?} seed {seed}:\n{m}"),
                (true, None) => panic!("{fault:?} fired on seed {seed} unnoticed"),
                (false, Some(m)) => panic!("{fault:?} did not fire on seed {seed}, yet:\n{m}"),
                (false, None) => {}
            }
            fired_somewhere |= fired;
        }
        assert!(fired_somewhere, "{fault:?} never fired in 12 seeds");
    }
}

/// Reference against an unfaulted DUT: no mismatch, every instruction
/// issued.
pub fn agreeing_models_match(config: &HwConfig, make_dut: &Factory, seeds: std::ops::Range<u64>) {
    let options = GenOptions::for_config(config, 40);
    let mut reference = golden(config);
    let mut dut = make_dut(config);
    for seed in seeds {
        let case = TestCase::generate(seed, &options);
        let outcome = run_case(&case, &mut *reference, &mut *dut).unwrap();
        if let Some(m) = &outcome.first_mismatch {
            panic!("seed {seed}:\n{m}");
        }
        assert_eq!(outcome.instructions, 40);
    }
    let outcome = run_case(&directed_case(config), &mut *reference, &mut *dut).unwrap();
    assert_eq!((outcome.instructions, outcome.first_mismatch), (8, None));
    let outcome = run_case(&mat_case(config), &mut *reference, &mut *dut).unwrap();
    assert_eq!((outcome.instructions, outcome.first_mismatch), (7, None));
}

#[test]
fn every_fault_fires_its_check_with_golden_inside() {
    every_fault_fires_its_check(&tiny(), &golden);
    every_fault_fires_its_check(&config::by_name("kv260").unwrap(), &golden);
}

#[test]
fn every_mat_fault_fires_its_check_with_golden_inside() {
    every_mat_fault_fires_its_check(&tiny(), &golden);
    every_mat_fault_fires_its_check(&config::by_name("small").unwrap(), &golden);
}

/// The directed GEMV/GEMM case does what its table says on the reference.
#[test]
fn the_mat_case_reports_what_its_table_says() {
    use pccx_golden::model::Event;
    let config = tiny();
    let case = mat_case(&config);
    let mut g = golden(&config);
    g.set_weight_source(case.weight_source());
    g.reset().unwrap();
    g.write_l2(0, &case.l2_image()).unwrap();
    let mut events = Vec::new();
    for item in &case.program.items {
        match *item {
            Item::Instr(word) => {
                g.issue(word).unwrap();
            }
            Item::Idle(c) => g.idle(c).unwrap(),
            Item::RegWrite { .. } => unreachable!(),
        }
        events.extend(g.take_events());
    }
    let reads: Vec<(u32, u8, u32)> = events
        .iter()
        .filter_map(|e| match *e {
            Event::StreamRead { seq, stream, beats } => Some((seq, stream, beats)),
            _ => None,
        })
        .collect();
    assert_eq!(reads, [(2, 1, 43), (4, 0, 40), (6, 0, 40)]);
    let per_seq = |kind: fn(&Event) -> bool| -> Vec<u32> {
        events.iter().filter(|e| kind(e)).map(Event::seq).collect()
    };
    let l2 = per_seq(|e| matches!(e, Event::L2Write { .. }));
    assert_eq!(l2, [[2; 3].as_slice(), &[4; 9], &[6; 3]].concat());
    assert_eq!(per_seq(|e| matches!(e, Event::EMaxWrite { .. })), [2, 6]);
    let errs: Vec<u8> = events
        .iter()
        .filter_map(|e| match *e {
            Event::Retire { err, .. } => Some(err),
            _ => None,
        })
        .collect();
    assert_eq!(errs, [0, 0, 0, 0, 0, 5, 0]);
    assert_eq!(g.weight_beats_consumed(), [80, 43]);

    // The scoreboard gives both models the case's weight streams: the
    // reference ends where the hand-run model did, and another weight seed
    // gives other results.
    let l2_after = |m: &mut dyn NpuModel| {
        let mut out = vec![0; 0x80];
        m.read_l2(0, &mut out).unwrap();
        out
    };
    let (mut reference, mut dut) = (golden(&config), golden(&config));
    let outcome = run_case(&case, &mut *reference, &mut *dut).unwrap();
    assert_eq!(outcome.first_mismatch, None);
    assert_eq!(l2_after(&mut *reference), l2_after(&mut *g));
    assert_eq!(l2_after(&mut *dut), l2_after(&mut *g));
    let other = TestCase {
        weight_seed: case.weight_seed ^ 1,
        ..case.clone()
    };
    run_case(&other, &mut *reference, &mut *dut).unwrap();
    assert_ne!(l2_after(&mut *reference)[0x40..], l2_after(&mut *g)[0x40..]);
}

#[test]
fn faults_fire_on_generated_cases_with_golden_inside() {
    faults_fire_on_generated_cases(&tiny(), &golden);
}

/// The same tables with the Verilated RTL inside `Faulty`: the checks fire
/// on what the real RTL reports, not only on what the golden model does.
#[cfg(feature = "rtl")]
fn rtl(config: &HwConfig) -> Box<dyn NpuModel> {
    models::open_dut(config, models::DutKind::Rtl).expect("the RTL model of this configuration")
}

#[cfg(feature = "rtl")]
#[test]
fn every_fault_fires_its_check_with_rtl_inside() {
    every_fault_fires_its_check(&tiny(), &rtl);
    every_fault_fires_its_check(&config::by_name("kv260").unwrap(), &rtl);
}

#[cfg(feature = "rtl")]
#[test]
fn every_mat_fault_fires_its_check_with_rtl_inside() {
    every_mat_fault_fires_its_check(&tiny(), &rtl);
}

#[cfg(feature = "rtl")]
#[test]
fn faults_fire_on_generated_cases_with_rtl_inside() {
    faults_fire_on_generated_cases(&tiny(), &rtl);
}

#[test]
fn golden_matches_golden() {
    agreeing_models_match(&tiny(), &golden, 0..25);
    agreeing_models_match(&config::by_name("kv260").unwrap(), &golden, 100..110);
}

/// A DUT that hangs fails as the DUT: a mismatch of kind `hang` at the
/// oldest instruction it has not retired, its signature `hang/ENGINE/stuck`.
/// A hang of the reference is the harness's: a model error.
#[test]
fn a_hang_of_the_dut_is_a_mismatch_and_of_the_reference_an_error() {
    let config = tiny();
    let case = directed_case(&config);
    let (result, fired) = run_with_fault(&case, &config, &golden, Fault::Hang { nth_drain: 0 });
    assert!(fired);
    let m = result
        .expect("a DUT's hang is no model error")
        .first_mismatch
        .expect("a DUT's hang is a mismatch");
    assert_eq!(m.kind, CheckKind::Hang, "{m}");
    assert_eq!(m.difference.field().to_string(), "stuck");
    assert!(
        m.detail().contains("golden+hang hangs: draining"),
        "{}",
        m.detail()
    );
    assert!(
        m.afterwards.is_none(),
        "the hang is not its own aftermath: {m:?}"
    );
    let mut reference = Faulty::boxed(golden(&config), Fault::Hang { nth_drain: 0 });
    let mut dut = golden(&config);
    match run_case(&case, &mut reference, &mut *dut) {
        Err(ModelError::Watchdog { what, .. }) => assert!(what.contains("golden+hang"), "{what}"),
        other => panic!("expected the reference's watchdog error, got {other:?}"),
    }
}

/// The difference with the lowest sequence number wins, even when a
/// younger instruction's difference is seen first: here seq 4's error code
/// differs as soon as it retires, while seq 2's retire is missing, which
/// only the sweep after the drain can tell.
#[test]
fn the_lowest_sequence_number_is_reported() {
    let config = tiny();
    let case = directed_case(&config);
    let mut reference = golden(&config);
    let inner = Faulty::new(golden_model(&config), Fault::DropRetire { nth: 2 });
    // After the drop, the outer wrapper's retire 3 is seq 4.
    let mut dut = Faulty::new(inner, Fault::RetireErr { nth: 3, xor: 1 });
    let m = run_case(&case, &mut *reference, &mut dut)
        .unwrap()
        .first_mismatch
        .unwrap();
    assert_eq!((m.kind, m.seq), (CheckKind::MissingRetire, Some(2)), "{m}");
}

/// A report names the check, the instruction (word and disassembly), what
/// each side did and where they first differ.
#[test]
fn a_report_reads_like_a_diagnosis() {
    let config = tiny();
    let (result, _) = run_with_fault(
        &directed_case(&config),
        &config,
        &golden,
        Fault::L2Data { nth: 1, bit: 16 },
    );
    let text = result.unwrap().first_mismatch.unwrap().to_string();
    for expected in [
        "MISMATCH l2-writes at seq 2",
        "instruction: 0x",
        "memcpy l2[16] <- host[256], shape=1, async",
        "reference (golden)",
        "dut (golden+l2-data)",
        "L2[0x00011]",
        "data differs in e1",
    ] {
        assert!(text.contains(expected), "no `{expected}` in:\n{text}");
    }
}
