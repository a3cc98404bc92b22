//! The observation levels (docs/dut-contract.md) on the RTL: each level
//! passes on clean RTL, makes the checks it lists and no others, and the
//! black box's one view of the L2 (read back through MEMCPY at the end)
//! catches a corrupted word that no instruction wrote.

use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::scoreboard::{run_case, CheckKind, Outcome};
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_golden::model::Observation;

fn tiny() -> HwConfig {
    config::by_name("tiny").unwrap()
}

fn cases(config: &HwConfig, seeds: std::ops::Range<u64>) -> Vec<TestCase> {
    let options = GenOptions::for_config(config, 40);
    seeds.map(|s| TestCase::generate(s, &options)).collect()
}

/// `case` on the RTL seen at `level`, with `fault` around it.
fn run(case: &TestCase, level: Observation, fault: Option<&str>) -> Outcome {
    let mut setup = Setup::new(
        tiny(),
        DutKind::Rtl,
        fault.map(|f| Fault::by_name(f).unwrap()),
    );
    setup.observe = level;
    let mut dut = setup.open_dut().expect("the tiny RTL opens");
    assert_eq!(
        dut.observation(),
        level,
        "the DUT reports the level it is seen at"
    );
    let mut reference = setup.open_reference();
    run_case(case, &mut *reference, &mut *dut).expect("no infrastructure error")
}

#[test]
fn every_level_passes_on_the_rtl() {
    for case in cases(&tiny(), 1..4) {
        for level in Observation::ALL {
            let outcome = run(&case, level, None);
            assert!(
                outcome.first_mismatch.is_none(),
                "seed {} at {level}: {:?}",
                case.seed,
                outcome.first_mismatch
            );
        }
    }
}

/// The first kind each level reports for `fault` on seed 1 (`None`: the
/// level cannot see it).
fn caught_by(fault: &str) -> Vec<Option<CheckKind>> {
    let case = &cases(&tiny(), 1..2)[0];
    Observation::ALL
        .map(|level| run(case, level, Some(fault)).first_mismatch.map(|m| m.kind))
        .to_vec()
}

#[test]
fn each_level_makes_its_checks_and_no_others() {
    use CheckKind as K;
    // [black box, retire, full]
    // A word of L2 no instruction wrote, changed after the drain: only the
    // final comparison sees it, by the back door or by the read back.
    assert_eq!(caught_by("corrupt-l2"), [Some(K::FinalL2); 3]);
    // A retire reported a cycle late: a retire tap is needed.
    assert_eq!(
        caught_by("retire-cycle"),
        [None, Some(K::Timing), Some(K::Timing)]
    );
    // A wrong retire opcode: likewise.
    assert_eq!(
        caught_by("retire-opcode"),
        [None, Some(K::RetireOpcode), Some(K::RetireOpcode)]
    );
    // A latch reported twice, a flipped bit of a reported L2 write: taps
    // only the full level has.
    assert_eq!(caught_by("duplicate-latch"), [None, None, Some(K::Latch)]);
    assert_eq!(caught_by("l2-data"), [None, None, Some(K::L2Writes)]);
    // A host write with a flipped bit is on the bus: every level sees it,
    // below full for the whole program (no tap names the writer).
    assert_eq!(caught_by("host-data"), [Some(K::HostWrites); 3]);
}

#[test]
fn the_black_box_names_the_read_back_in_its_report() {
    let case = &cases(&tiny(), 1..2)[0];
    let m = run(case, Observation::BlackBox, Some("corrupt-l2"))
        .first_mismatch
        .expect("caught");
    assert!(m.dut.contains("(read back)"), "{}", m.dut);
    assert!(m.dut.starts_with("L2[0x00000]"), "{}", m.dut);
}

/// A failure found below `full` is recorded with its level (and its
/// waveform written), and the repro file and its shrunk program replay it
/// at that level.
#[test]
fn a_repro_keeps_its_level_and_replays_at_it() {
    use pccx_cosim::env::models;
    use pccx_cosim::regress::campaign::{run_campaign_with, CampaignOptions};
    use pccx_cosim::triage::repro::{replay, Recorder, Repro, Verdict};

    let dir = std::env::temp_dir().join(format!("pccx-cosim-observe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = tiny();
    let options = CampaignOptions {
        first_seed: 3,
        count: 1,
        instrs: 40,
        config,
        stall_io: false,
        timing: None,
        shard: None,
        skip: Default::default(),
        random_init: true,
        steer: false,
        curve: false,
    };
    let mut setup = Setup::new(config, DutKind::Rtl, Fault::by_name("corrupt-l2"));
    setup.observe = Observation::BlackBox;
    let mut recorder = Recorder::new(setup.clone(), dir.clone(), false);
    let mut reference = models::open_reference(&config);
    let mut dut = setup.open_dut().unwrap();
    let report = run_campaign_with(
        &options,
        &mut *reference,
        &mut *dut,
        &mut |case, m| recorder.record(case, m),
        &mut |_| {},
    );
    assert_eq!(report.summary.mismatched, 1);
    let artefacts = &report.results[0].artefacts;
    assert!(artefacts.problems.is_empty(), "{:?}", artefacts.problems);
    let path = artefacts.repro.clone().expect("a repro");
    assert!(
        artefacts.wave.as_ref().is_some_and(|w| w.exists()),
        "a waveform"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["observe"], "black-box");
    let mut repro = Repro::read(&path).unwrap();
    assert_eq!(repro.setup.observe, Observation::BlackBox);
    for min in [false, true] {
        match replay(&repro, min).unwrap() {
            Verdict::Reproduces(m) => assert!(m.dut.contains("(read back)"), "{}", m.dut),
            other => panic!("min {min}: {other:?}"),
        }
    }
    // The same file judged at `full` finds the word by the back door
    // instead: the level travelled with the file, and is what judged it.
    repro.setup.observe = Observation::Full;
    match replay(&repro, false).unwrap() {
        Verdict::Reproduces(m) => assert!(!m.dut.contains("(read back)"), "{}", m.dut),
        other => panic!("at full: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Below `full` the reference's own shape-table writes still give the
/// order rules each instruction's footprint: a CVO that retires before the
/// asynchronous MEMCPY whose destination it reads breaks a rule only
/// through the table entry that sizes the copy. Golden models on both
/// sides (the DUT with a retire moved 100,000 cycles early).
#[test]
fn the_order_rules_use_the_reference_s_tables_below_full() {
    use pccx_cosim::env::faults::Faulty;
    use pccx_cosim::env::models;
    use pccx_cosim::env::observed::Observed;
    use pccx_cosim::scoreboard::{run_case_with, TimingMode};
    use pccx_golden::asm::{Item, Program};
    use pccx_golden::isa::{Cvo, CvoFunc, Instr, Memcpy, Memset};
    use pccx_golden::model::{NpuModel, ShapeTable};

    let config = tiny();
    let items = [
        // fmap[1] sizes the copy: 8 * 16 elements, 16 words.
        Instr::Memset(Memset {
            dest_cache: ShapeTable::Fmap,
            dest_addr: 1,
            a_value: 8,
            b_value: 16,
            c_value: 1,
            reserved: 0,
        }),
        // L2 0x000.. -> 0x100.., asynchronous: not a barrier.
        Instr::Memcpy(Memcpy {
            from_device: false,
            to_device: false,
            dest_addr: 0x100,
            src_addr: 0x000,
            aux_addr: 0,
            shape_ptr_addr: 1,
            async_: true,
        }),
        // Reads 0x108..: inside the copy's destination.
        Instr::Cvo(Cvo {
            func: CvoFunc::Exp,
            src_addr: 0x108,
            dst_addr: 0x200,
            length: 8,
            flags: 0,
            async_: true,
        }),
    ];
    let program = Program {
        items: items.iter().map(|i| Item::Instr(i.encode())).collect(),
    };
    let case = TestCase::directed(5, &GenOptions::for_config(&config, 0), program);
    let early = Fault::RetireCycle {
        nth: 2,
        delta: -100_000,
    };
    for level in [Observation::Retire, Observation::Full] {
        let dut = Faulty::new(models::reference_golden(&config), early);
        let mut dut: Box<dyn NpuModel> = Box::new(Observed::new(Box::new(dut), level));
        let mut reference = models::open_reference(&config);
        let outcome = run_case_with(&case, &mut *reference, &mut *dut, TimingMode::Order).unwrap();
        let m = outcome.first_mismatch.expect("the early retire is caught");
        assert_eq!(m.kind, CheckKind::RetireOrder, "{level}: {m}");
        assert_eq!(m.seq, Some(2), "{level}: {m}");
    }
}
