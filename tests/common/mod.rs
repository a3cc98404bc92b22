//! Shared helpers of the RTL-vs-golden integration tests.
#![allow(dead_code)]

use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::env::numerics::NumericsMode;
use pccx_cosim::rtl::{HostTiming, RtlModel};
use pccx_cosim::scoreboard::{run_case, Outcome};
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_golden::asm::parse_program;
use pccx_golden::model::Observation;
use pccx_golden::{Golden, GoldenConfig};

pub fn config(name: &str) -> HwConfig {
    config::by_name(name).unwrap_or_else(|| panic!("no configuration {name}"))
}

/// The reference every RTL-vs-golden test runs against: the campaign's,
/// timed, so that ideal-I/O runs check every latch, start and retire cycle
/// and the status register in every cycle (docs/timing.md). A test that
/// wants the untimed interpreter says why and uses [`untimed_golden`].
pub fn golden(cfg: &HwConfig) -> Golden {
    pccx_cosim::env::models::reference_golden(cfg)
}

/// The golden interpreter without its timing part: it predicts no cycle.
pub fn untimed_golden(cfg: &HwConfig) -> Golden {
    Golden::new(GoldenConfig {
        l2_words: cfg.l2_words,
    })
}

pub fn rtl(cfg: &HwConfig) -> RtlModel {
    RtlModel::open(*cfg, HostTiming::default()).expect("open the Verilated model")
}

/// The directed case of an assembler program (images from seed 7).
pub fn directed_case(cfg: &HwConfig, program: &str) -> TestCase {
    let program = parse_program(program).unwrap_or_else(|e| panic!("bad test program: {e}"));
    TestCase::directed(7, &GenOptions::for_config(cfg, 0), program)
}

/// Runs `program` on golden and RTL; panics with the scoreboard's report on
/// any difference. Returns the outcome and the RTL model for further checks.
pub fn must_match(config_name: &str, program: &str) -> (Outcome, RtlModel) {
    let cfg = config(config_name);
    let case = directed_case(&cfg, program);
    let mut reference = golden(&cfg);
    let mut dut = rtl(&cfg);
    let outcome = run_case(&case, &mut reference, &mut dut).expect("no infrastructure error");
    if let Some(m) = &outcome.first_mismatch {
        panic!("RTL and golden differ on {config_name}:\n{m}\nprogram:\n{program}");
    }
    (outcome, dut)
}

/// Seed `seed`'s program of 40 instructions on tiny.
pub fn tiny_case(seed: u64) -> TestCase {
    TestCase::generate(seed, &GenOptions::for_config(&config("tiny"), 40))
}

/// `case` on tiny's build of the DUT the manifest `manifest` declares
/// (docs/dut-contract.md), seen at `level`, with `fault` around it.
pub fn on_other_dut(
    manifest: &str,
    level: Observation,
    numerics: NumericsMode,
    fault: Option<&str>,
    case: &TestCase,
) -> Result<Outcome, String> {
    let mut setup = Setup::new(
        config("tiny"),
        DutKind::Rtl,
        fault.map(|f| Fault::by_name(f).expect("a fault of --inject-fault")),
    );
    setup.observe = level;
    setup.dut_manifest = Some(manifest.into());
    setup.numerics = numerics;
    let mut dut = setup.open_dut()?;
    let mut reference = setup.open_reference();
    run_case(case, &mut *reference, &mut *dut).map_err(|e| e.to_string())
}
