//! Repro files on the real RTL: a campaign writes one per mismatching seed,
//! the file rebuilds exactly the case that failed, and replaying it gives
//! the same mismatch (or says that it no longer happens).

use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models;
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::regress::campaign::{run_campaign_with, CampaignOptions};
use pccx_cosim::stimulus::TestCase;
use pccx_cosim::triage::repro::{replay, Recorder, Repro, Verdict};
use pccx_golden::asm::{format_program, parse_program};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn tiny() -> HwConfig {
    config::by_name("tiny").unwrap()
}

fn out_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pccx-cosim-repro-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs seeds `first..first + count` on tiny with `fault` around the RTL,
/// recording into `dir`; returns the campaign's results' repro paths.
fn campaign(dir: &Path, fault: Fault, first: u64, count: u64, shrink: bool) -> Vec<PathBuf> {
    let config = tiny();
    let options = CampaignOptions {
        first_seed: first,
        count,
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
    let setup = Setup::new(config, DutKind::Rtl, Some(fault));
    let mut recorder = Recorder::new(setup.clone(), dir.to_path_buf(), !shrink);
    let mut reference = models::open_reference(&config);
    let mut dut = setup.open_dut().unwrap();
    let report = run_campaign_with(
        &options,
        &mut *reference,
        &mut *dut,
        &mut |case, m| recorder.record(case, m),
        &mut |_| {},
    );
    assert_eq!(report.summary.mismatched, count, "every seed mismatches");
    report
        .results
        .iter()
        .map(|r| {
            assert!(
                r.artefacts.problems.is_empty(),
                "{:?}",
                r.artefacts.problems
            );
            r.artefacts
                .repro
                .clone()
                .expect("a repro for each mismatch")
        })
        .collect()
}

#[test]
fn a_campaign_writes_a_repro_that_rebuilds_the_case_and_replays_its_mismatch() {
    let dir = out_dir("replays");
    let fault = Fault::by_name("l2-data").unwrap();
    let paths = campaign(&dir, fault, 40, 2, true);
    assert_eq!(
        paths,
        [
            dir.join("repro-tiny-seed40.json"),
            dir.join("repro-tiny-seed41.json")
        ]
    );
    for (seed, path) in (40..).zip(&paths) {
        let repro = Repro::read(path).unwrap();
        // The very case the campaign generated, rebuilt from the file.
        let options = pccx_cosim::stimulus::GenOptions::for_config(&tiny(), 40);
        assert_eq!(repro.case, TestCase::generate(seed, &options));
        assert_eq!(repro.setup.fault, Some(fault));
        assert_eq!(repro.setup.host_timing.as_ref().unwrap().latency, 4);
        assert_eq!(repro.signature.text, "l2-writes/MEM/data");
        match replay(&repro, false).unwrap() {
            Verdict::Reproduces(m) => assert_eq!(m.kind, repro.mismatch.kind),
            other => panic!("seed {seed}: {other:?}"),
        }
        // The shrunk program: recorded, written beside the repro, replays.
        let shrunk = repro.shrink.as_ref().expect("shrunk by default");
        assert_eq!(shrunk.before.instructions, 40);
        assert!(shrunk.after.instructions <= 3, "{:?}", shrunk.program);
        let min_asm = std::fs::read_to_string(dir.join(&shrunk.min_asm)).unwrap();
        assert_eq!(parse_program(&min_asm).unwrap(), shrunk.program);
        assert!(matches!(
            replay(&repro, true).unwrap(),
            Verdict::Reproduces(_)
        ));
    }
}

/// What the file says, field by field, for a reader without the code.
#[test]
fn a_repro_file_holds_everything_a_reader_needs() {
    let dir = out_dir("fields");
    let paths = campaign(&dir, Fault::by_name("retire-err").unwrap(), 7, 1, false);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&paths[0]).unwrap()).unwrap();
    assert_eq!(v["format"], "pccx-cosim repro");
    assert_eq!(v["config"]["name"], "tiny");
    assert_eq!(v["config"]["l2_words"], tiny().l2_words);
    assert_eq!(v["seed"], 7);
    for option in [
        "instrs",
        "l2_words",
        "fifo_depth",
        "illegal_pct",
        "range_err_pct",
        "hazard_pct",
        "long_copy_pct",
        "burst_pct",
        "idle_pct",
        "max_idle",
        "clear_err_pct",
        "bad_reg_write_pct",
    ] {
        assert!(v["gen_options"][option].is_u64(), "gen_options.{option}");
    }
    assert_eq!(v["gen_options"]["weights"]["memcpy"], 75);
    let case = Repro::read(&paths[0]).unwrap().case;
    assert_eq!(v["program"]["asm"], format_program(&case.program));
    assert_eq!(
        v["program"]["items"].as_array().unwrap().len(),
        case.program.items.len()
    );
    assert!(v["images"]["l2_init_seed"]
        .as_str()
        .unwrap()
        .starts_with("0x"));
    assert!(v["images"]["fill"].as_str().unwrap().contains("SplitMix64"));
    assert_eq!(v["host_timing"]["latency"], 4);
    assert!(v["host_timing"]["stall_schedule"].is_null());
    assert_eq!(v["mismatch"]["kind"], "retire-err");
    assert_eq!(v["mismatch"]["seq"], 0);
    assert!(v["mismatch"]["word"].as_str().unwrap().starts_with("0x"));
    assert!(v["mismatch"]["cycle"].is_u64());
    assert_eq!(v["signature"]["text"], "retire-err/MEMSET/err");
    assert!(v["shrink"].is_null(), "not shrunk");
    assert!(!dir.join("repro-tiny-seed7-min.asm").exists());
    let p = &v["provenance"];
    // The Verilator the linked models were built with, as build.rs read it.
    let verilator = p["verilator"].as_str().unwrap();
    assert!(
        verilator.starts_with("Verilator 5.") && verilator.contains(" at /"),
        "{verilator}"
    );
    assert!(p["build_profile"] == "debug" || p["build_profile"] == "release");
    assert!(p["git_commit"].is_string() && p["rtl_last_commit"].is_string());
}

#[test]
fn a_repro_whose_bug_is_gone_no_longer_reproduces() {
    let dir = out_dir("fixed");
    let paths = campaign(&dir, Fault::by_name("drop-l2").unwrap(), 3, 1, false);
    let mut repro = Repro::read(&paths[0]).unwrap();
    assert!(matches!(
        replay(&repro, false).unwrap(),
        Verdict::Reproduces(_)
    ));
    // The "fix": no fault around the RTL.
    repro.setup.fault = None;
    assert_eq!(replay(&repro, false).unwrap(), Verdict::NoLongerReproduces);
    // Another fault: a mismatch, but not the recorded one.
    repro.setup.fault = Some(Fault::by_name("retire-err").unwrap());
    match replay(&repro, false).unwrap() {
        Verdict::Differs(m) => assert_eq!(m.kind.name(), "retire-err"),
        other => panic!("{other:?}"),
    }
    // Without a shrunk program, --min has nothing to replay.
    let e = replay(&repro, true).unwrap_err();
    assert!(e.contains("no shrunk program"), "{e}");
}

/// A repro written by the tool before its file format became serde types
/// (tests/fixtures/repro-v1-tiny-seed7.json, from the hand-written JSON
/// writer) still reads, replays its mismatch, and replays its shrunk
/// program; written again, it reads back as the same repro.
#[test]
fn a_repro_written_before_the_serde_format_still_replays() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/repro-v1-tiny-seed7.json");
    let repro = Repro::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(repro.case.seed, 7);
    assert_eq!(repro.signature.text, "l2-writes/MEM/data");
    for min in [false, true] {
        match replay(&repro, min).unwrap() {
            Verdict::Reproduces(m) => assert_eq!(m.record(), {
                let (_, expected) = repro.case_to_replay(min).unwrap();
                expected.clone()
            }),
            other => panic!("min={min}: {other:?}"),
        }
    }
    let back = Repro::from_json(&repro.to_json()).unwrap();
    assert_eq!(back, repro);
}

/// A version-3 file drew the RTL's initial state with Verilator's generator,
/// which the shim's own replaced: it cannot replay that case exactly, and
/// says so, naming the field and the seed to run again. The same file
/// from zeroed state (random_init false) still reads.
#[test]
fn a_version_3_file_with_a_drawn_initial_state_is_refused_by_name() {
    let dir = out_dir("v3");
    let paths = campaign(&dir, Fault::by_name("retire-err").unwrap(), 7, 1, false);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&paths[0]).unwrap()).unwrap();
    assert_eq!(v["version"], 5);
    assert_eq!(v["gen_options"]["random_init"], true);
    v["version"] = 3.into();
    let e = Repro::from_json(&v).unwrap_err();
    assert_eq!(e.field, "gen_options.random_init", "{e}");
    assert!(e.message.contains("run seed 7 again"), "{e}");
    v["gen_options"]["random_init"] = false.into();
    let repro = Repro::from_json(&v).unwrap_or_else(|e| panic!("{e}"));
    assert!(!repro.case.options.random_init);
}
