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
use pccx_golden::model::Observation;

fn run(manifest: &str, level: Observation, seed: u64) -> Outcome {
    on_other_dut(manifest, level, NumericsMode::Declared, None, &case(seed))
        .expect("no infrastructure error")
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
