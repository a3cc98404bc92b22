//! DONE timing to the cycle (docs/timing.md): the golden timing model's
//! predictions against the RTL, and proof that the timing checks bite.
//!
//! - Ideal I/O: random campaigns match exactly (latch, start, retire cycles
//!   and the status register in every cycle) on both configurations.
//! - RTL built with one deliberate extra cycle in one engine (hw/configs/
//!   skew_*.cfg, test-only configurations built on demand the first time
//!   they are opened): functional checks pass, the timing check fails.
//! - Stall I/O: results stay exact and the retire order obeys the ordering
//!   rules; exact timing then (rightly) does not hold.
//! - Injected timing faults fire the timing, status and order checks.

use crate::common;

use pccx_cosim::env::faults::{Fault, Faulty};
use pccx_cosim::env::models;
use pccx_cosim::scoreboard::{run_case_with, CheckKind, Outcome, TimingMode};
use pccx_cosim::stimulus::{GenOptions, OpWeights, TestCase};
use pccx_golden::model::NpuModel;

fn run(config: &str, case: &TestCase, dut: &mut dyn NpuModel, mode: TimingMode) -> Outcome {
    let cfg = common::config(config);
    let mut reference = models::open_reference(&cfg);
    run_case_with(case, &mut *reference, dut, mode).expect("no infrastructure error")
}

fn cases(config: &str, seeds: std::ops::Range<u64>, instrs: usize) -> Vec<TestCase> {
    let options = GenOptions::for_config(&common::config(config), instrs);
    seeds.map(|s| TestCase::generate(s, &options)).collect()
}

#[test]
fn ideal_io_retire_cycles_and_status_match_exactly() {
    for (config, seeds) in [("kv260", 0..60), ("tiny", 0..120)] {
        let mut dut = common::rtl(&common::config(config));
        for case in cases(config, seeds, 60) {
            let outcome = run(config, &case, &mut dut, TimingMode::Exact);
            if let Some(m) = outcome.first_mismatch {
                panic!("{config} seed {}:\n{m}", case.seed);
            }
        }
    }
}

/// The program of a skew test: a random one, with a few compute
/// instructions (GEMV, GEMM, CVO) and illegal words.
fn skew_case(config: &str, seed: u64) -> TestCase {
    let mut options = GenOptions::for_config(&common::config(config), 40);
    options.weights = OpWeights {
        gemv: 5,
        gemm: 5,
        cvo: 5,
        ..OpWeights::SLICE1
    };
    options.illegal_pct = 15;
    TestCase::generate(seed, &options)
}

#[test]
fn a_one_cycle_latency_change_in_any_engine_fails_the_timing_check() {
    for skewed in ["skew_mem", "skew_memset", "skew_compute", "skew_decoder"] {
        let mut dut = common::rtl(&common::config(skewed));
        let mut caught = 0;
        for seed in 0..5 {
            let case = skew_case(skewed, seed);
            let outcome = run(skewed, &case, &mut dut, TimingMode::Exact);
            let m = outcome
                .first_mismatch
                .unwrap_or_else(|| panic!("{skewed} seed {seed}: the extra cycle went unnoticed"));
            // Functionally the skewed RTL is right: only timing may differ.
            assert!(
                matches!(m.kind, CheckKind::Timing | CheckKind::StatusTimeline),
                "{skewed} seed {seed}: expected a timing mismatch, got\n{m}"
            );
            caught += 1;
            // Without the timing check the same run is clean.
            let off = run(skewed, &case, &mut dut, TimingMode::Off);
            assert_eq!(
                off.first_mismatch, None,
                "{skewed} seed {seed} with timing off"
            );
        }
        assert_eq!(caught, 5);
    }
}

#[test]
fn the_unskewed_build_of_the_same_programs_matches() {
    let mut dut = common::rtl(&common::config("tiny"));
    for seed in 0..5 {
        let case = skew_case("tiny", seed);
        let outcome = run("tiny", &case, &mut dut, TimingMode::Exact);
        assert_eq!(outcome.first_mismatch, None, "tiny seed {seed}");
    }
}

#[test]
fn stall_io_keeps_results_exact_and_the_retire_order_legal() {
    for config in ["kv260", "tiny"] {
        let cfg = common::config(config);
        let options = GenOptions {
            stall_io: true,
            ..GenOptions::for_config(&cfg, 60)
        };
        let mut dut = common::rtl(&cfg);
        let mut stalled_somewhere = false;
        for seed in 0..40 {
            let case = TestCase::generate(seed, &options);
            assert!(case.io_stall_seed().is_some());
            assert_eq!(TimingMode::default_for(&case), TimingMode::Order);
            let outcome = run(config, &case, &mut dut, TimingMode::Order);
            if let Some(m) = outcome.first_mismatch {
                panic!("{config} seed {seed} under stalls:\n{m}");
            }
            // The stalls are real: exact timing no longer holds somewhere.
            let exact = run(config, &case, &mut dut, TimingMode::Exact);
            stalled_somewhere |= exact
                .first_mismatch
                .is_some_and(|m| matches!(m.kind, CheckKind::Timing | CheckKind::StatusTimeline));
        }
        assert!(
            stalled_somewhere,
            "{config}: the stall schedule never changed a cycle"
        );
    }
}

/// A weight stream that runs dry stalls its engine and never corrupts it:
/// under stall I/O both streams leave ready engines waiting, and GEMV/GEMM
/// results still match the golden model exactly.
#[test]
fn empty_weight_streams_stall_the_engines_without_changing_results() {
    let cfg = common::config("tiny");
    let options = GenOptions {
        stall_io: true,
        ..GenOptions::for_config(&cfg, 40)
    };
    let mut dut = common::rtl(&cfg);
    let mut starved = [0u64; 2];
    for seed in 200..230 {
        let case = TestCase::generate(seed, &options);
        let outcome = run("tiny", &case, &mut dut, TimingMode::Order);
        if let Some(m) = outcome.first_mismatch {
            panic!("seed {seed} with empty weight streams:\n{m}");
        }
        for (total, s) in starved.iter_mut().zip(dut.weight_starved_cycles()) {
            *total += s;
        }
    }
    assert!(
        starved[0] > 0 && starved[1] > 0,
        "streams never ran dry: {starved:?}"
    );
}

fn with_fault(config: &str, fault: Fault, mode: TimingMode) -> (Option<CheckKind>, bool) {
    let cfg = common::config(config);
    let case = &cases(config, 3..4, 40)[0];
    let mut dut = Faulty::new(common::rtl(&cfg), fault);
    let outcome = run(config, case, &mut dut, mode);
    (outcome.first_mismatch.map(|m| m.kind), dut.fired())
}

#[test]
fn timing_faults_fire_their_checks() {
    // One cycle late on one retire: exact timing catches it.
    assert_eq!(
        with_fault(
            "tiny",
            Fault::RetireCycle { nth: 5, delta: 1 },
            TimingMode::Exact
        ),
        (Some(CheckKind::Timing), true)
    );
    // A status change one cycle late: the per-cycle status check catches it.
    assert_eq!(
        with_fault("tiny", Fault::StatusDelay { nth: 2 }, TimingMode::Exact),
        (Some(CheckKind::StatusTimeline), true)
    );
    // A retire reported long before it could have happened breaks the order.
    assert_eq!(
        with_fault(
            "tiny",
            Fault::RetireCycle {
                nth: 21,
                delta: -100_000
            },
            TimingMode::Order
        ),
        (Some(CheckKind::RetireOrder), true)
    );
    // A one-cycle shift that breaks no ordering rule passes order mode:
    // order mode checks the rules, not the cycles.
    let (kind, fired) = with_fault(
        "tiny",
        Fault::RetireCycle { nth: 5, delta: 1 },
        TimingMode::Order,
    );
    assert!(fired);
    assert_ne!(kind, Some(CheckKind::Timing));
}
