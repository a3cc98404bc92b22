//! The campaign (`pccx-cosim --seed N ...`, no subcommand): its flags, parsed into the session's request.

use crate::env::numerics::NumericsMode;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::config::{self, HwConfig};
use crate::env::faults::Fault;
use crate::env::models::DutKind;
use crate::regress::campaign::Shard;
use crate::regress::identity::{InitialState, IoMode, RunIdentity};
use crate::scoreboard::TimingMode;
use crate::session::campaign::{self, CampaignRequest, Outputs};
use pccx_golden::model::Observation;

use super::args::{config_values, fault_values, observation_values, parse_u64};
use super::Failure;

/// A campaign: `--seed N [--count C]` runs seeds N..N+C.
#[derive(Args)]
pub(super) struct RunArgs {
    /// First seed (decimal, or hex with 0x).
    #[arg(long, required = true, value_parser = parse_u64)]
    seed: Option<u64>,
    /// Number of seeds.
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// Instructions per program.
    #[arg(long, default_value_t = 40)]
    instrs: usize,
    /// Also write the results per seed and the summary to FILE, as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Hardware configuration (hw/configs/; a test-only one is built on
    /// first use).
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = config_values())]
    config: HwConfig,
    /// Host I/O of the DUT: `ideal` (fixed latency, always ready: retire
    /// cycles are predicted exactly) or `stall` (a seeded schedule of
    /// not-ready cycles and extra latency per seed).
    #[arg(long, value_enum, default_value_t = IoMode::Ideal)]
    io: IoMode,
    /// The timing check: `exact` (every latch, start and retire cycle and the
    /// status register per cycle), `order` (retire order obeys the ordering
    /// rules) or `off`. Default: exact with ideal I/O, order with stall I/O.
    #[arg(long, value_enum)]
    timing: Option<TimingMode>,
    /// The device under test: the Verilated RTL, or the golden model itself
    /// (a self-check of the harness, and the only choice in a `--no-default-features` build).
    #[arg(long, value_enum, default_value_t = DutKind::Rtl)]
    dut: DutKind,
    /// Self-check: wrap the DUT in this fault; the campaign must then fail.
    #[arg(long, value_name = "FAULT", value_parser = fault_values())]
    inject_fault: Option<Fault>,
    /// How much of the DUT the checks see (docs/dut-contract.md):
    /// `black-box` (external interfaces only, L2 read back by MEMCPY at the
    /// end), `retire` (plus each retire and its cycle) or `full`.
    #[arg(long, value_name = "LEVEL", default_value = "full", value_parser = observation_values())]
    observe: Observation,
    /// Verify another DUT than the repository's own RTL: the manifest that
    /// declares it (docs/dut-contract.md), relative to the repository this
    /// binary was built from, e.g. `hw/wrap/dut.json`. It is built on
    /// demand (once, into the build cache); `--observe` must be at most
    /// the level it declares.
    #[arg(long, value_name = "FILE")]
    dut_manifest: Option<String>,
    /// `declared`: the numerics profile the DUT's manifest names applies
    /// (results of approximate CVO functions accepted within their bound
    /// and handed to the reference); `exact`: none does, every result must
    /// match bit for bit (docs/dut-contract.md, "Numerics profiles").
    #[arg(long, value_enum, default_value_t = NumericsMode::Declared)]
    numerics: NumericsMode,
    /// The campaign's directory: the repro file, shrunk program and
    /// waveform of each failing seed (default `out`), and, when given,
    /// `campaign.json` and `results.jsonl`, one record per finished seed,
    /// each flushed as its seed finishes (docs/scale-out.md).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Continue the campaign whose records `--out DIR` holds: run only the
    /// seeds its `results.jsonl` does not (the same flags, checked against
    /// its `campaign.json`). Without records there, a fresh start.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Take `--out DIR`'s lock even from a holder that cannot be told gone
    /// (one on another host outside Slurm): only when that writer is known
    /// to have stopped (docs/scale-out.md, "One writer per directory").
    #[arg(long, requires = "out")]
    break_lock: bool,
    /// Run shard I of N: the seeds `seed + k` with `k mod N == I`
    /// (`pccx-cosim merge` puts the shards' directories together).
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Wall-clock limit per seed, in seconds: past it the DUT gives up at
    /// its next cycle and the seed is a `timeout` (the campaign goes on);
    /// a seed stuck where no cycle passes ends the process (exit 4) once
    /// twice the limit and 5 s have passed, its record written.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    seed_timeout: Option<Duration>,
    /// Do not shrink a mismatching case (the repro is written all the same).
    #[arg(long)]
    no_shrink: bool,
    /// Cycles of FST waveform dumped before a mismatch's first difference
    /// (RTL DUT only; 0: no waveform). The hierarchy depth is fixed at build
    /// time by PCCX_TRACE_DEPTH.
    #[arg(long, value_name = "CYCLES", default_value_t = crate::triage::wave::DEFAULT_WINDOW)]
    wave_window: u64,
    /// Also write the results as JUnit XML to FILE (one testcase per seed).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Sample functional coverage on the reference side, print its summary
    /// and holes, and write it to FILE as JSON (docs/coverage.md).
    #[arg(long, value_name = "FILE")]
    coverage: Option<PathBuf>,
    /// Run the DUT from the RTL coverage build (PCCX_COVERAGE=1) and write
    /// its line and toggle coverage over the campaign to FILE (Verilator's
    /// coverage.dat format), with a summary (docs/coverage.md).
    #[arg(long, value_name = "FILE")]
    rtl_coverage: Option<PathBuf>,
    /// Workers, each with its own reference and DUT (default: one per
    /// core; one with --inject-fault). Seeds are handed out in order and
    /// reported in order; the results are those of --jobs 1 in everything
    /// but wall time.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// The RTL's registers, FIFOs and buffers before each case's reset:
    /// `random`, drawn from the seed (everything but L2, which the images
    /// set), or `zero`. Random costs time per seed (docs/harness.md).
    #[arg(long, value_enum, default_value_t = InitialState::Random)]
    initial_state: InitialState,
    /// Steer the stimulus by coverage: after a first batch of the
    /// generator's programs, cases aimed at functional holes, mutants of
    /// the programs that reached new bins or RTL points, and backdoor
    /// preloads, in batches of 4 made from the batches before (the same
    /// programs whatever --jobs; docs/coverage.md, "Steering"). Uses RTL
    /// points too with --rtl-coverage.
    #[arg(long)]
    steer: bool,
    /// Write the coverage after each program (functional bins, and RTL
    /// line, branch and toggle points with --rtl-coverage) to FILE as JSON,
    /// for `pccx-cosim plot-coverage`.
    #[arg(long, value_name = "FILE")]
    coverage_curve: Option<PathBuf>,
    /// Write the morning-after page to FILE: one self-contained HTML file
    /// with the run, its failures grouped by signature and linked to their
    /// files, engine utilisation and latency, and coverage when sampled
    /// (docs/report.md).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

pub(super) fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    let end = campaign::run(&request(args)).map_err(Failure::Message)?;
    Ok(ExitCode::from(end.exit_code()))
}

/// The campaign the flags ask for.
fn request(args: &RunArgs) -> CampaignRequest {
    let identity = RunIdentity {
        config: args.config.name.to_string(),
        first_seed: args
            .seed
            .expect("clap requires --seed without a subcommand"),
        count: args.count,
        instrs: args.instrs,
        io: args.io,
        timing: args.timing,
        dut: args.dut,
        inject_fault: args.inject_fault,
        initial_state: args.initial_state,
        steer: args.steer,
        observe: args.observe,
        dut_manifest: args.dut_manifest.clone(),
        numerics: args.numerics,
    };
    CampaignRequest {
        identity,
        shard: args.shard,
        jobs: args.jobs,
        out: args.out.clone(),
        resume: args.resume,
        break_lock: args.break_lock,
        seed_timeout: args.seed_timeout,
        no_shrink: args.no_shrink,
        wave_window: args.wave_window,
        outputs: Outputs {
            json: args.json.clone(),
            junit: args.junit.clone(),
            coverage: args.coverage.clone(),
            rtl_coverage: args.rtl_coverage.clone(),
            coverage_curve: args.coverage_curve.clone(),
            report: args.report.clone(),
        },
    }
}

/// `--seed-timeout`: a positive number of seconds.
pub(super) fn parse_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|e| format!("`{s}` is not a number of seconds: {e}"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!(
            "`{s}`: a limit must be a positive number of seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}
