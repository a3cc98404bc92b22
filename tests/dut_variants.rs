//! The DUT variants built only to show that a check on another DUT fires
//! (docs/dut-contract.md): the wrapper of hw/wrap resting after each
//! command, past the cycle budget it declares, and hw/approx's EXP off by
//! 2 ULP, past the 1 ULP its numerics profile allows. The second tier's
//! (docs/testing.md): each is a model build the RTL gate need not wait for;
//! tests/gate/other_duts.rs has the DUTs that pass.

mod common;

use common::{on_other_dut, tiny_case as case};
use pccx_cosim::env::numerics::NumericsMode;
use pccx_cosim::scoreboard::{CheckKind, Difference, Outcome};
use pccx_golden::asm::Item;
use pccx_golden::isa::{decode, Decoded, Instr};
use pccx_golden::model::Observation;

fn run(manifest: &str, level: Observation, seed: u64) -> Outcome {
    on_other_dut(manifest, level, NumericsMode::Declared, None, &case(seed))
        .expect("no infrastructure error")
}

/// The legal instructions of `case`'s program for which `what` holds.
fn instructions_where(
    case: &pccx_cosim::stimulus::TestCase,
    what: impl Fn(&Instr) -> bool,
) -> usize {
    case.program
        .items
        .iter()
        .filter(|i| matches!(i, Item::Instr(w) if matches!(decode(*w), Decoded::Legal(ref i) if what(i))))
        .count()
}

/// Seeds of tiny whose programs run EXP on values hw/approx's core rounds
/// differently (tests/gate/other_duts.rs: each fails without the profile).
const EXP_SEEDS: [u64; 3] = [2, 4, 6];

#[test]
fn a_dut_slower_than_its_budget_fails_on_timing() {
    // hw/wrap/dut-slow.json: the wrapper with a command master that rests
    // 256 cycles after each command, under hw/wrap/dut.json's budget.
    let outcome = run("hw/wrap/dut-slow.json", Observation::BlackBox, 1);
    let m = outcome.first_mismatch.expect("past its budget");
    assert_eq!(m.kind, CheckKind::Timing, "{m:?}");
    let Difference::CycleBudget {
        reference,
        dut,
        allowed,
        ..
    } = m.difference
    else {
        panic!("{m:?}")
    };
    assert!(
        dut > allowed && allowed == reference * 150 / 100 + 512,
        "{m:?}"
    );
}

#[test]
fn a_bug_past_the_profiles_bound_is_caught() {
    // hw/approx/dut-bug.json: EXP off by 2 ULP, the profile allows 1.
    for seed in EXP_SEEDS {
        let outcome = run("hw/approx/dut-bug.json", Observation::Full, seed);
        let m = outcome.first_mismatch.expect("2 ULP is past the bound");
        assert_eq!(m.kind, CheckKind::L2Writes, "seed {seed}: {m:?}");
    }
}

/// Seeds of tiny whose programs move weights through both streams, under
/// ideal and stalled I/O alike (the case's own I/O seed decides).
const WEIGHT_SEEDS: std::ops::RangeInclusive<u64> = 1..=6;

#[test]
fn weight_ports_of_another_count_and_width_match_through_the_adapter() {
    // hw/wrap/dut-4x64.json: each beat's halves on a stream's two 64-bit
    // ports; hw/wrap/dut-4x128.json: a stream's beats in turn on its two
    // 128-bit ports (the public pccx project's four ports).
    for manifest in ["hw/wrap/dut-4x64.json", "hw/wrap/dut-4x128.json"] {
        let mut weight_instructions = 0;
        for seed in WEIGHT_SEEDS {
            let case = case(seed);
            let outcome = on_other_dut(
                manifest,
                Observation::BlackBox,
                NumericsMode::Declared,
                None,
                &case,
            )
            .expect("no infrastructure error");
            assert!(
                outcome.first_mismatch.is_none(),
                "{manifest}, seed {seed}: {:?}",
                outcome.first_mismatch
            );
            weight_instructions +=
                instructions_where(&case, |i| matches!(i, Instr::Gemv(_) | Instr::Gemm(_)));
        }
        assert!(
            weight_instructions > 0,
            "{manifest}: no GEMV or GEMM ran: the weight ports were not tried"
        );
    }
}

#[test]
fn weight_port_pieces_in_the_wrong_order_are_caught() {
    // hw/wrap/dut-4x64-swapped.json: the gearbox puts each beat's halves
    // the wrong way round; the weights reach the engines corrupted.
    let failed = WEIGHT_SEEDS
        .filter(|&seed| {
            run("hw/wrap/dut-4x64-swapped.json", Observation::BlackBox, seed)
                .first_mismatch
                .is_some()
        })
        .count();
    assert!(failed > 0, "no seed saw the swapped halves");
}

/// Programs of tiny whose copies move host words both ways (with the
/// front-door load and read-back, every case moves some).
const STREAM_SEEDS: std::ops::RangeInclusive<u64> = 1..=6;

#[test]
fn host_memory_as_two_streams_matches_through_the_adapter() {
    // hw/wrap/dut-streams.json: the request port turned into two streams
    // with no addresses; the harness's DMA is programmed from the copies.
    let mut host_copies = 0;
    for seed in STREAM_SEEDS {
        let case = case(seed);
        let outcome = run("hw/wrap/dut-streams.json", Observation::BlackBox, seed);
        assert!(
            outcome.first_mismatch.is_none(),
            "seed {seed}: {:?}",
            outcome.first_mismatch
        );
        host_copies += instructions_where(
            &case,
            |i| matches!(i, Instr::Memcpy(m) if m.from_device != m.to_device),
        );
    }
    assert!(host_copies > 0, "no program copied to or from the host");
}

#[test]
fn a_stream_word_read_twice_is_caught() {
    // hw/wrap/dut-streams-dup.json: every 5th word into the DUT is read
    // without being taken, so its copies end with a host word left over
    // (the adapter's protocol check) or read the wrong words (the data).
    let outcomes: Vec<Outcome> = STREAM_SEEDS
        .map(|seed| run("hw/wrap/dut-streams-dup.json", Observation::BlackBox, seed))
        .collect();
    assert!(
        outcomes.iter().all(|o| o.first_mismatch.is_some()),
        "{:?}",
        outcomes
            .iter()
            .map(|o| &o.first_mismatch)
            .collect::<Vec<_>>()
    );
}
