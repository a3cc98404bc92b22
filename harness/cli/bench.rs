//! `pccx-cosim bench`: simulated cycles per second of a campaign, or of the RTL alone with one engine busy.

use clap::Args;
use std::process::ExitCode;

use crate::config::{self, HwConfig};
#[cfg(not(feature = "rtl"))]
use crate::env::models;
#[cfg(feature = "rtl")]
use crate::regress::campaign::CampaignOptions;

use super::args::{config_values, parse_u64};
use super::Failure;

// The flags of `bench` (the subcommand's help is the doc comment of
// `Command::Bench`).
#[derive(Args)]
pub(super) struct BenchArgs {
    #[arg(long, default_value_t = 1, value_parser = parse_u64)]
    seed: u64,
    #[arg(long, default_value_t = 20)]
    count: u64,
    #[arg(long, default_value_t = 400)]
    instrs: usize,
    /// How many times to run each measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Workers of the parallel campaign measured beside the one-worker one
    /// (default: one per core; 1 measures no parallel campaign).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = config_values())]
    config: HwConfig,
    /// Instead of a campaign, time the RTL alone while one engine is
    /// busy on one large instruction: `gemm` (the systolic array),
    /// `gemv` (the vector core) or `cvo` (the uCVO cores: SIN, the
    /// CORDIC's range reduction and 48 iterations, over every BF16 input
    /// that fits).
    #[arg(long, value_name = "ENGINE", value_enum)]
    busy: Option<BusyEngine>,
}

/// The engine `bench --busy` keeps busy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BusyEngine {
    Gemm,
    Gemv,
    Cvo,
}

// Named only by the RTL build's bench.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
impl BusyEngine {
    fn name(self) -> &'static str {
        match self {
            BusyEngine::Gemm => "gemm",
            BusyEngine::Gemv => "gemv",
            BusyEngine::Cvo => "cvo",
        }
    }
}

pub(super) fn bench(args: BenchArgs) -> Result<ExitCode, Failure> {
    let BenchArgs {
        seed,
        count,
        instrs,
        repeat,
        config,
        busy,
        jobs,
    } = args;
    match busy {
        None => bench_campaign(seed, count, instrs, repeat, config, jobs),
        Some(engine) => bench_busy(seed, repeat, config, engine),
    }
}

/// The median of `values` (sorted in place).
#[cfg(feature = "rtl")]
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(feature = "rtl")]
fn bench_campaign(
    seed: u64,
    count: u64,
    instrs: usize,
    repeat: usize,
    config: HwConfig,
    jobs: Option<usize>,
) -> Result<ExitCode, Failure> {
    if repeat == 0 {
        return Err(Failure::Message("--repeat must be at least 1".into()));
    }
    let jobs = crate::session::worker_count(jobs).map_err(Failure::Message)?;
    let options = CampaignOptions {
        first_seed: seed,
        count,
        instrs,
        config,
        stall_io: false,
        timing: None,
        shard: None,
        skip: Default::default(),
        random_init: true,
        steer: false,
        curve: false,
    };
    // In turn within each run, so that a change in the machine's load
    // falls on all three alike; the ratios are taken within a run.
    let (mut alone, mut one, mut many) = (Vec::new(), Vec::new(), Vec::new());
    let (mut campaign_ratio, mut jobs_ratio) = (Vec::new(), Vec::new());
    for run in 1..=repeat {
        let round =
            crate::tools::bench::campaign_round(&options, jobs).map_err(Failure::Message)?;
        let (a, c1) = (round.rtl_alone, round.campaign);
        if round.mismatched > 0 {
            say!(
                "bench: {} seeds mismatched; the figures below still count them",
                round.mismatched
            );
        }
        let mut line = format!(
            "run {run}: {} cycles; RTL alone {a:.0} cycles/s, campaign {c1:.0} \
             ({:.2} x RTL alone)",
            round.cycles,
            c1 / a
        );
        alone.push(a);
        one.push(c1);
        campaign_ratio.push(c1 / a);
        if let Some(cn) = round.parallel {
            line += &format!(", --jobs {jobs} {cn:.0} ({:.2} x --jobs 1)", cn / c1);
            many.push(cn);
            jobs_ratio.push(cn / c1);
        }
        say!("{line}");
    }
    say!(
        "bench: {}, seeds {}, {instrs} instrs, {repeat} runs, medians: \
         RTL alone {:.0} simulated cycles/s; campaign (RTL + golden + scoreboard) --jobs 1 \
         {:.0}, {:.2} x RTL alone",
        config.name,
        crate::regress::merge::span_of(seed, count),
        median(&mut alone),
        median(&mut one),
        median(&mut campaign_ratio)
    );
    if jobs > 1 {
        say!(
            "bench: campaign --jobs {jobs} {:.0} simulated cycles/s, {:.2} x --jobs 1",
            median(&mut many),
            median(&mut jobs_ratio)
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "rtl"))]
fn bench_campaign(
    _: u64,
    _: u64,
    _: usize,
    _: usize,
    _: HwConfig,
    _: Option<usize>,
) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("bench")))
}

#[cfg(feature = "rtl")]
fn bench_busy(
    seed: u64,
    repeat: usize,
    config: HwConfig,
    engine: BusyEngine,
) -> Result<ExitCode, Failure> {
    use crate::tools::bench::{self, busy_run};
    if repeat == 0 {
        return Err(Failure::Message("--repeat must be at least 1".into()));
    }
    let which = match engine {
        BusyEngine::Gemm => bench::BusyEngine::Gemm,
        BusyEngine::Gemv => bench::BusyEngine::Gemv,
        BusyEngine::Cvo => bench::BusyEngine::Cvo,
    };
    let engine = engine.name();
    let mut rates = Vec::new();
    for run in 1..=repeat {
        let r = busy_run(config, which, seed + run as u64).map_err(Failure::Message)?;
        say!(
            "run {run}: {} cycles busy, {:.3} s, {:.0} cycles/s",
            r.cycles,
            r.seconds,
            r.cycles_per_second()
        );
        rates.push(r.cycles_per_second());
    }
    rates.sort_by(f64::total_cmp);
    say!(
        "bench: {}, {engine} busy: median {:.0} simulated cycles/s (RTL alone), \
         min {:.0}, max {:.0}, {repeat} runs",
        config.name,
        rates[rates.len() / 2],
        rates[0],
        rates[rates.len() - 1]
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "rtl"))]
fn bench_busy(_: u64, _: usize, _: HwConfig, _: BusyEngine) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("bench --busy")))
}
