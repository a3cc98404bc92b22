//! `pccx-cosim bench`: simulated cycles per second of a campaign, or of the RTL alone with one engine busy.

use clap::Args;
use std::process::ExitCode;

use crate::config;
use crate::env::models;
use crate::env::models::DutKind;
use crate::regress::campaign::{self, CampaignOptions};

use super::args::{config_values, hw_config, parse_u64};
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
    /// How many times to run the campaign (the median is reported).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = config_values())]
    config: String,
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
    } = args;
    match busy {
        None => bench_campaign(seed, count, instrs, repeat, &config),
        Some(engine) => bench_busy(seed, repeat, &config, engine),
    }
}

fn bench_campaign(
    seed: u64,
    count: u64,
    instrs: usize,
    repeat: usize,
    config: &str,
) -> Result<ExitCode, Failure> {
    if repeat == 0 {
        return Err(Failure::Message("--repeat must be at least 1".into()));
    }
    let options = CampaignOptions {
        first_seed: seed,
        count,
        instrs,
        config: hw_config(config),
        stall_io: false,
        timing: None,
    };
    let mut reference = models::open_reference(&options.config);
    let mut dut = models::open_dut(&options.config, DutKind::Rtl).map_err(Failure::Message)?;
    let mut rates = Vec::new();
    for run in 1..=repeat {
        let report = campaign::run_campaign(&options, &mut *reference, &mut *dut, &mut |_| {});
        let s = &report.summary;
        if let Some(e) = &s.stopped {
            return Err(Failure::Message(format!(
                "infrastructure error at seed {}: {}",
                e.seed, e.message
            )));
        }
        if s.mismatched > 0 {
            say!(
                "bench: {} seeds mismatched; the figures below still count them",
                s.mismatched
            );
        }
        let rate = s.cycles_per_second().unwrap_or(0.0);
        say!(
            "run {run}: {} cycles, {} instructions, {:.3} s, {rate:.0} cycles/s",
            s.cycles.unwrap_or(0),
            s.instructions,
            s.wall.as_secs_f64()
        );
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    say!(
        "bench: {config}, seeds {seed}..{}, {instrs} instrs: median {:.0} simulated cycles/s \
         (RTL + golden + scoreboard, images included), min {:.0}, max {:.0}, {repeat} runs",
        seed + count,
        rates[rates.len() / 2],
        rates[0],
        rates[rates.len() - 1]
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "rtl")]
fn bench_busy(
    seed: u64,
    repeat: usize,
    config: &str,
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
        let r = busy_run(hw_config(config), which, seed + run as u64).map_err(Failure::Message)?;
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
        "bench: {config}, {engine} busy: median {:.0} simulated cycles/s (RTL alone), \
         min {:.0}, max {:.0}, {repeat} runs",
        rates[rates.len() / 2],
        rates[0],
        rates[rates.len() - 1]
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "rtl"))]
fn bench_busy(_: u64, _: usize, _: &str, _: BusyEngine) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("bench --busy")))
}
