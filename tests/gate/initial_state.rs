//! Randomized initial state (docs/harness.md, "Initial state"): before each
//! case's reset the RTL's registers, FIFOs and buffers take values drawn
//! from the case's seed, as silicon powers up. A register that must be
//! cleared and is not is then caught; with the zeroed state of a plain
//! simulation it is not. The faulty RTL is a real mutant of
//! pccx_gemv_engine.sv (lane 0 not cleared at the start of a GEMV), built
//! the way `pccx-cosim mutate` builds every mutant.

use std::path::Path;

use pccx_cosim::config;
use pccx_cosim::env::models;
use pccx_cosim::rtl::{HostTiming, RtlModel};
use pccx_cosim::scoreboard::{run_case, Mismatch};
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_cosim::tools::mutate::{all_sites, build, MutantClass};

/// The first seed of `seeds` on which `dut` and the reference differ.
fn first_mismatch(
    dut: &mut RtlModel,
    options: &GenOptions,
    seeds: std::ops::Range<u64>,
) -> Option<(u64, Mismatch)> {
    let cfg = config::by_name("tiny").unwrap();
    let mut reference = models::open_reference(&cfg);
    for seed in seeds {
        let case = TestCase::generate(seed, options);
        let outcome = run_case(&case, &mut *reference, dut).expect("no infrastructure error");
        if let Some(m) = outcome.first_mismatch {
            return Some((seed, m));
        }
    }
    None
}

#[test]
fn a_lane_left_uncleared_is_caught_only_from_a_random_initial_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tiny = config::by_name("tiny").unwrap();
    let sites = all_sites(root).expect("mutation sites of hw/rtl");
    // `for (int l = 0; ...)` -> `l = 1` in the loop that clears the lanes
    // when a GEMV starts (the line before `lane_left[l] = 3'd0;`).
    let source = std::fs::read_to_string(root.join("hw/rtl/pccx_gemv_engine.sv")).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    let mutant = sites
        .iter()
        .find(|m| {
            m.file == "pccx_gemv_engine.sv"
                && m.class == MutantClass::OffByOneConstant
                && (m.original.as_str(), m.replacement.as_str()) == ("0", "1")
                && lines[m.line - 1].contains("for (int l = 0; l < LANES; l++)")
                && lines[m.line].contains("lane_left[l] = 3'd0;")
        })
        .expect("the mutant that skips clearing lane 0");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("initial-state-mutant");
    let builder = build::Builder::new(root, &work, tiny).expect("mutant builder");
    let so = builder
        .build(mutant)
        .unwrap_or_else(|(stage, e)| panic!("{stage}: {e}"));
    let model = build::load(&so).expect("load the mutant");
    let open = || {
        RtlModel::open_with_ops(tiny, model.ops(), HostTiming::default())
            .expect("open the mutant model")
    };
    let random = GenOptions::for_config(&tiny, 40);
    assert!(random.random_init, "on by default");
    let zeroed = GenOptions {
        random_init: false,
        ..random.clone()
    };
    // From zeroed state the lane holds 0 at the first GEMV, and every GEMV
    // clears it when it ends: the mutant passes.
    assert_eq!(
        first_mismatch(&mut open(), &zeroed, 1..41).map(|(s, _)| s),
        None
    );
    // From random state it does not.
    let (seed, m) = first_mismatch(&mut open(), &random, 1..41)
        .expect("a random initial state exposes the uncleared lane");
    // The same seed on a fresh model gives the same state, and the same
    // mismatch: a repro (which records `random_init`) replays exactly.
    let again = first_mismatch(&mut open(), &random, seed..seed + 1).expect("it recurs");
    assert_eq!(again.1.record(), m.record());
    // The real engine clears every lane: the same seeds match.
    let mut good = RtlModel::open(tiny, HostTiming::default()).expect("open tiny");
    assert_eq!(
        first_mismatch(&mut good, &random, 1..41).map(|(s, _)| s),
        None
    );
}
