//! A fixed set of random seeds, RTL against golden, on both configurations.
//! The same seeds give the same programs on every machine (the generator's
//! PRNG is portable), so a failure here reproduces with
//! `pccx-cosim --seed N --config C --instrs L`.

mod common;

use pccx_cosim::scoreboard::run_case;
use pccx_cosim::stimulus::{GenOptions, TestCase};

fn seeds_match(config_name: &str, seeds: std::ops::Range<u64>, instrs: usize) {
    let cfg = common::config(config_name);
    let options = GenOptions::for_config(&cfg, instrs);
    let mut reference = common::golden(&cfg);
    let mut dut = common::rtl(&cfg);
    for seed in seeds {
        let case = TestCase::generate(seed, &options);
        let outcome = run_case(&case, &mut reference, &mut dut)
            .unwrap_or_else(|e| panic!("{config_name} seed {seed}: {e}"));
        if let Some(m) = outcome.first_mismatch {
            panic!(
                "{config_name} seed {seed} differs; reproduce with \
                 `pccx-cosim --seed {seed} --config {config_name} --instrs {instrs}`:\n{m}"
            );
        }
        assert_eq!(outcome.instructions as usize, instrs);
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
