//! Waveforms of mismatches: a rerun of the failing case dumps an FST window
//! of the cycles before the first difference, and the window really bounds
//! what is dumped.

use pccx_cosim::config;
use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models;
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::scoreboard::run_case;
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_cosim::triage::wave::{dump_window, viewer_hint};

fn out_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pccx-cosim-wave-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The first seed whose case mismatches under `setup`, with its mismatch.
fn failing_case(setup: &Setup) -> (TestCase, pccx_cosim::scoreboard::Mismatch) {
    let options = GenOptions::for_config(&setup.config, 40);
    for seed in 0..50 {
        let case = TestCase::generate(seed, &options);
        let mut reference = models::open_reference(&setup.config);
        let mut dut = setup.open_dut().unwrap();
        if let Some(m) = run_case(&case, &mut *reference, &mut *dut)
            .unwrap()
            .first_mismatch
        {
            return (case, m);
        }
    }
    panic!("no seed mismatched under {:?}", setup.fault);
}

#[test]
fn a_mismatch_gets_an_fst_window_ending_at_the_first_difference() {
    let setup = Setup::new(
        config::by_name("tiny").unwrap(),
        DutKind::Rtl,
        Some(Fault::by_name("l2-data").unwrap()),
    );
    let (case, mismatch) = failing_case(&setup);
    assert!(
        mismatch.cycle.is_some(),
        "an L2 data difference has a cycle"
    );
    let dir = out_dir("window");
    let small = dump_window(&setup, &case, &mismatch, 10, &dir).expect("a waveform");
    let small_len = std::fs::metadata(&small).unwrap().len();
    let small_copy = dir.join("small.fst");
    std::fs::rename(&small, &small_copy).unwrap();
    let large = dump_window(&setup, &case, &mismatch, 2000, &dir).expect("a waveform");
    let large_len = std::fs::metadata(&large).unwrap().len();
    assert_eq!(
        large.file_name().unwrap(),
        format!("seed-{}.fst", case.seed).as_str()
    );
    assert!(small_len > 200, "the FST file is {small_len} bytes");
    assert!(
        large_len > small_len,
        "a 2000-cycle window ({large_len} bytes) is not larger than a 10-cycle one ({small_len} bytes)"
    );
    assert!(viewer_hint(&large).contains("gtkwave"));
}

#[test]
fn the_golden_model_has_no_waveform_and_says_so() {
    let setup = Setup::new(
        config::by_name("tiny").unwrap(),
        DutKind::Golden,
        Some(Fault::by_name("l2-data").unwrap()),
    );
    let (case, mismatch) = failing_case(&setup);
    let err = dump_window(&setup, &case, &mismatch, 10, &out_dir("golden")).unwrap_err();
    assert!(err.contains("no waveform"), "{err}");
}
