//! A fixed set of random seeds, RTL against golden, on both configurations.
//! The same seeds give the same programs on every machine (the generator's
//! PRNG is portable), so a failure here reproduces with
//! `pccx-cosim --seed N --config C --instrs L`.

use crate::common;

use pccx_cosim::scoreboard::{run_case, CheckKind, Mismatch};
use pccx_cosim::stimulus::{GenOptions, TestCase};

/// Runs the seeds' programs on the timed reference of `config_name` and the
/// RTL built as `dut_config` (the same, or a skewed build of it), with the
/// exact timing check of ideal I/O; the first difference, if any.
fn first_difference(
    config_name: &str,
    dut_config: &str,
    seeds: std::ops::Range<u64>,
    instrs: usize,
) -> Option<(u64, Mismatch)> {
    let cfg = common::config(config_name);
    let options = GenOptions::for_config(&cfg, instrs);
    let mut reference = common::golden(&cfg);
    let mut dut = common::rtl(&common::config(dut_config));
    for seed in seeds {
        let case = TestCase::generate(seed, &options);
        let outcome = run_case(&case, &mut reference, &mut dut)
            .unwrap_or_else(|e| panic!("{config_name} seed {seed}: {e}"));
        if let Some(m) = outcome.first_mismatch {
            return Some((seed, m));
        }
        assert_eq!(outcome.instructions as usize, instrs);
    }
    None
}

fn seeds_match(config_name: &str, seeds: std::ops::Range<u64>, instrs: usize) {
    if let Some((seed, m)) = first_difference(config_name, config_name, seeds, instrs) {
        panic!(
            "{config_name} seed {seed} differs; reproduce with \
             `pccx-cosim --seed {seed} --config {config_name} --instrs {instrs}`:\n{m}"
        );
    }
}

#[test]
fn kv260_fixed_seeds() {
    seeds_match("kv260", 0..200, 60);
}

#[test]
fn tiny_fixed_seeds() {
    seeds_match("tiny", 0..400, 60);
}

#[test]
fn long_programs() {
    seeds_match("kv260", 1000..1010, 400);
    seeds_match("tiny", 1000..1010, 400);
}

/// The random-seed tests check timing: the `skew_*` builds of tiny (one
/// deliberate extra cycle in one engine or the decoder, and otherwise
/// tiny's RTL) fail the same seeds `tiny_fixed_seeds` runs, on a timing
/// check. Against the untimed interpreter (`common::untimed_golden`) the
/// same 400 seeds pass skew_mem: it predicts no cycle.
#[test]
fn the_random_seeds_catch_a_one_cycle_slip() {
    for skewed in ["skew_mem", "skew_memset", "skew_compute", "skew_decoder"] {
        let (seed, m) = first_difference("tiny", skewed, 0..400, 60)
            .unwrap_or_else(|| panic!("{skewed}: 400 random seeds missed its extra cycle"));
        assert!(
            matches!(m.kind, CheckKind::Timing | CheckKind::StatusTimeline),
            "{skewed} seed {seed}: expected a timing mismatch, got\n{m}"
        );
    }
}
