//! The build cache and the on-demand configurations (docs/build.md): a
//! test-only configuration that is not linked in is built once and found
//! by every later open; a second open in one process loads nothing again;
//! what it cannot do (waveforms, a build without Verilator or a compiler)
//! is said plainly.

mod common;

use std::path::PathBuf;
use std::process::Command;

use pccx_cosim::rtl::dynamic::{self, Built, Found, OnDemand};
use pccx_cosim::rtl::{built_configs, HostTiming, Origin, RtlModel};
use pccx_golden::model::NpuModel;

/// A fresh directory of this test's own (tests run in parallel).
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pccx-rtl-cache-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_shared_object_is_built_into_an_empty_cache_once_then_found() {
    let cfg = common::config("skew_mem");
    assert!(cfg.test_only);
    let cache = temp_dir("once");
    let builder = OnDemand::new(&dynamic::source_root(), &cache);
    let first = builder
        .shared_object(&cfg)
        .expect("build skew_mem on demand");
    assert_eq!(
        first.found,
        Found::Built,
        "an empty cache has nothing to find"
    );
    let built_at = std::fs::metadata(&first.path).unwrap().modified().unwrap();
    let again = builder.shared_object(&cfg).unwrap();
    assert_eq!(
        again,
        Built {
            path: first.path.clone(),
            found: Found::Cached
        }
    );
    let found_at = std::fs::metadata(&again.path).unwrap().modified().unwrap();
    assert_eq!(found_at, built_at, "the shared object was not rebuilt");
    // The entry holds the shared object and the record of its key's inputs.
    let inputs = std::fs::read_to_string(first.path.with_file_name("inputs.txt")).unwrap();
    assert!(inputs.contains("params: -GARRAY_COLS=4"), "{inputs}");
    assert!(inputs.contains("-GTIMING_SKEW=4"), "{inputs}");
    std::fs::remove_dir_all(&cache).unwrap();
}

#[test]
fn a_second_open_in_one_process_is_the_same_loaded_model() {
    let cfg = common::config("skew_memset");
    if built_configs().contains(&cfg.name) {
        // PCCX_CONFIGS linked it in: then it is never built on demand.
        assert_eq!(common::rtl(&cfg).origin(), Origin::Linked);
        return;
    }
    let first = dynamic::open_ops(&cfg).expect("skew_memset on demand");
    let second = dynamic::open_ops(&cfg).unwrap();
    assert!(std::ptr::eq(first, second), "loaded twice");
    let mut a = common::rtl(&cfg);
    let mut b = common::rtl(&cfg);
    assert_eq!(a.origin(), Origin::OnDemand);
    // Two models of one shared object are independent.
    a.write_l2(7, &[0x1234]).unwrap();
    let mut word = [0u128];
    b.read_l2(7, &mut word).unwrap();
    assert_eq!(word, [0]);
    a.read_l2(7, &mut word).unwrap();
    assert_eq!(word, [0x1234]);
}

#[test]
fn an_on_demand_model_says_why_it_has_no_waveform() {
    let cfg = common::config("skew_decoder");
    let mut dut = RtlModel::open(cfg, HostTiming::default()).expect("skew_decoder");
    if dut.origin() != Origin::OnDemand {
        return; // linked in by PCCX_CONFIGS, with tracing
    }
    let wave = temp_dir("wave").join("w.fst");
    let controls = dut.sim_controls().unwrap();
    controls.set_wave_window(&wave, 0, 10).unwrap();
    dut.idle(20).unwrap();
    let err = dut.sim_controls().unwrap().finish_wave().unwrap_err();
    assert!(
        err.contains("built on demand, without tracing") && err.contains("PCCX_CONFIGS="),
        "{err}"
    );
}

/// `pccx-cosim --config skew_compute` with `env`, in an empty cache: the
/// exit code and stderr.
fn campaign_with(test: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let cache = temp_dir(test);
    let out = Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .args(["--seed", "1", "--count", "1", "--config", "skew_compute"])
        .arg("--out")
        .arg(cache.join("out"))
        .env("PCCX_RTL_CACHE", &cache)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&cache);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn without_verilator_at_run_time_the_error_says_what_to_do() {
    if built_configs().contains(&"skew_compute") {
        return; // linked in: nothing is built at run time
    }
    let (code, err) = campaign_with("no-verilator", &[("VERILATOR", "/nonexistent/verilator")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("building the test-only configuration `skew_compute` on demand needs Verilator at run time")
            && err.contains("bash scripts/setup.sh")
            && err.contains("PCCX_CONFIGS="),
        "{err}"
    );
}

#[test]
fn a_failing_compiler_is_named_with_its_message() {
    if built_configs().contains(&"skew_compute") {
        return;
    }
    // `false` answers `--version` (with nothing) and fails every compile.
    let (code, err) = campaign_with("bad-cxx", &[("CXX", "false")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("building the test-only configuration `skew_compute` on demand")
            // The runtime's files compile in parallel: whichever fails
            // first is named.
            && err.contains("compiling the Verilator runtime: ")
            && err.contains("verilated")
            && err.contains("`false` exited with"),
        "{err}"
    );
}
