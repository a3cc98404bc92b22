//! DUTs other than the repository's own top (docs/dut-contract.md): the
//! wrapper of another team's interface (hw/wrap) seen as a black box, and
//! the test-only DUT whose CVO is approximate by design (hw/approx) with and
//! without its numerics profile. The variants that are built only to fail
//! (a wrapper past its cycle budget, an approximation past its bound) are
//! the second tier's, tests/dut_variants.rs: two model builds fewer on
//! every RTL edit.

use crate::common::{config, on_other_dut, tiny_case as case};
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::env::numerics::NumericsMode;
use pccx_cosim::scoreboard::{CheckKind, Outcome};
use pccx_golden::model::Observation;
use std::process::Command;

/// `case` on the DUT of `manifest`, seen at `level`.
fn run(
    manifest: &str,
    level: Observation,
    numerics: NumericsMode,
    case: &pccx_cosim::stimulus::TestCase,
) -> Outcome {
    on_other_dut(manifest, level, numerics, None, case).expect("no infrastructure error")
}

/// A campaign of seed 1 on tiny's build of hw/wrap/dut.json, with `extra`.
fn cosim(extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .args([
            "--seed",
            "1",
            "--count",
            "1",
            "--config",
            "tiny",
            "--dut-manifest",
            "hw/wrap/dut.json",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_wrapper_matches_as_a_black_box_and_declares_what_it_is() {
    let mut setup = Setup::new(config("tiny"), DutKind::Rtl, None);
    setup.observe = Observation::BlackBox;
    setup.dut_manifest = Some("hw/wrap/dut.json".into());
    let dut = setup.open_dut().expect("the wrapper builds and opens");
    assert_eq!(dut.observation(), Observation::BlackBox);
    assert!(dut.numerics().is_none());
    let budget = dut
        .cycle_budget()
        .expect("hw/wrap/dut.json declares a budget");
    assert_eq!((budget.tolerance_pct, budget.slack_cycles), (50, 512));
    for seed in 1..4 {
        let outcome = run(
            "hw/wrap/dut.json",
            Observation::BlackBox,
            NumericsMode::Declared,
            &case(seed),
        );
        assert!(
            outcome.first_mismatch.is_none(),
            "seed {seed}: {:?}",
            outcome.first_mismatch
        );
        // No retire tap: the program's cycles are the end of its drain.
        assert!(outcome.cycles.is_some_and(|c| c > 0), "seed {seed}");
    }
}

#[test]
fn an_injected_fault_on_the_wrapper_fails_with_repro_waveform_and_shrunk_program() {
    let out = std::env::temp_dir().join(format!("pccx-other-duts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = cosim(&[
        "--observe",
        "black-box",
        "--inject-fault",
        "host-data",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("DUT: pccx-wrap (hw/wrap/dut.json)"), "{text}");
    assert!(text.contains("--dut-manifest hw/wrap/dut.json"), "{text}");
    for file in [
        "repro-tiny-seed1.json",
        "repro-tiny-seed1-min.asm",
        "seed-1.fst",
    ] {
        let f = out.join(file);
        assert!(
            std::fs::metadata(&f).is_ok_and(|m| m.len() > 0),
            "{} was not written: {text}",
            f.display()
        );
    }
    let repro = std::fs::read_to_string(out.join("repro-tiny-seed1.json")).unwrap();
    assert!(
        repro.contains("\"dut_manifest\": \"hw/wrap/dut.json\""),
        "{repro}"
    );
    // The repro judges the DUT it was found on.
    let replay = Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .arg("replay")
        .arg(out.join("repro-tiny-seed1.json"))
        .output()
        .unwrap();
    assert_eq!(
        replay.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_campaign_refuses_a_level_the_dut_does_not_offer() {
    let o = cosim(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("hw/wrap/dut.json declares the black-box level; the campaign asks for full"),
        "{err}"
    );
}

/// Seeds of tiny whose programs run EXP on values the approximate core
/// rounds differently (each fails without the profile below).
const EXP_SEEDS: [u64; 3] = [2, 4, 6];

#[test]
fn an_approximate_cvo_passes_with_its_profile_and_hands_its_values_over() {
    let mut handed = 0;
    for seed in EXP_SEEDS {
        let outcome = run(
            "hw/approx/dut.json",
            Observation::Full,
            NumericsMode::Declared,
            &case(seed),
        );
        assert!(
            outcome.first_mismatch.is_none(),
            "seed {seed}: {:?}",
            outcome.first_mismatch
        );
        handed += outcome.handed_over;
    }
    assert!(handed > 0, "no value was handed over");
}

#[test]
fn an_approximate_cvo_fails_without_its_profile() {
    for seed in EXP_SEEDS {
        let outcome = run(
            "hw/approx/dut.json",
            Observation::Full,
            NumericsMode::Exact,
            &case(seed),
        );
        let m = outcome.first_mismatch.expect("EXP differs by 1 ULP");
        assert_eq!(m.kind, CheckKind::L2Writes, "seed {seed}: {m:?}");
        assert_eq!(outcome.handed_over, 0);
    }
}

#[test]
fn a_numerics_profile_needs_the_l2_write_tap() {
    let e = on_other_dut(
        "hw/approx/dut.json",
        Observation::Retire,
        NumericsMode::Declared,
        None,
        &case(2),
    )
    .unwrap_err();
    assert!(
        e.contains("declares a numerics profile") && e.contains("run it at `full`"),
        "{e}"
    );
}
