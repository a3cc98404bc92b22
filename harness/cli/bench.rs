//! `pccx-cosim bench`: simulated cycles per second of a campaign, or of the RTL alone with one engine busy.

use clap::Args;
use std::process::ExitCode;

use crate::config;
use crate::env::models;
use crate::env::models::DutKind;
use crate::regress::campaign::{self, CampaignOptions};
use pccx_golden::model::NpuModel;

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
    /// How many times to run each measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Workers of the parallel campaign measured beside the one-worker one
    /// (default: one per core; 1 measures no parallel campaign).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
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
        jobs,
    } = args;
    match busy {
        None => bench_campaign(seed, count, instrs, repeat, &config, jobs),
        Some(engine) => bench_busy(seed, repeat, &config, engine),
    }
}

/// A campaign worker of the benchmark: the reference and the RTL, nothing
/// recorded.
struct BenchWorker {
    reference: Box<dyn NpuModel>,
    dut: Box<dyn NpuModel>,
}

impl campaign::Worker for BenchWorker {
    type Done = ();

    fn models(&mut self) -> (&mut dyn NpuModel, &mut dyn NpuModel) {
        (&mut *self.reference, &mut *self.dut)
    }

    fn finish(self) {}
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(feature = "rtl")]
fn rtl_alone(options: &CampaignOptions) -> Result<(u64, f64), Failure> {
    use crate::stimulus::TestCase;
    let gen = options.gen_options();
    let cases: Vec<TestCase> = options
        .seeds()
        .map(|s| TestCase::generate(s, &gen))
        .collect();
    let mut rtl = models::open_dut(&options.config, DutKind::Rtl).map_err(Failure::Message)?;
    let t = crate::tools::bench::rtl_alone(&mut *rtl, &cases)
        .map_err(|e| Failure::Message(format!("the RTL alone: {e}")))?;
    Ok((t.cycles, t.cycles_per_second()))
}

#[cfg(not(feature = "rtl"))]
fn rtl_alone(_: &CampaignOptions) -> Result<(u64, f64), Failure> {
    Err(Failure::Message(models::no_rtl_error("bench")))
}

/// One campaign of the benchmark on `jobs` workers: (cycles, cycles/s).
fn campaign_rate(options: &CampaignOptions, jobs: usize) -> Result<(u64, f64), Failure> {
    let make = |_: usize| -> Result<BenchWorker, String> {
        Ok(BenchWorker {
            reference: models::open_reference(&options.config),
            dut: models::open_dut(&options.config, DutKind::Rtl)?,
        })
    };
    let (report, _) = campaign::run_campaign_jobs(options, jobs, &make, &mut |_| {});
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
    Ok((s.cycles.unwrap_or(0), s.cycles_per_second().unwrap_or(0.0)))
}

fn bench_campaign(
    seed: u64,
    count: u64,
    instrs: usize,
    repeat: usize,
    config: &str,
    jobs: Option<usize>,
) -> Result<ExitCode, Failure> {
    if repeat == 0 {
        return Err(Failure::Message("--repeat must be at least 1".into()));
    }
    let jobs = super::args::jobs(jobs)?;
    let options = CampaignOptions {
        first_seed: seed,
        count,
        instrs,
        config: hw_config(config),
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
        let (rtl_cycles, a) = rtl_alone(&options)?;
        let (cycles, c1) = campaign_rate(&options, 1)?;
        if cycles != rtl_cycles {
            return Err(Failure::Message(format!(
                "the RTL alone simulated {rtl_cycles} cycles and the campaign {cycles}: \
                 they did not run the same programs"
            )));
        }
        let mut line = format!(
            "run {run}: {cycles} cycles; RTL alone {a:.0} cycles/s, campaign {c1:.0} \
             ({:.2} x RTL alone)",
            c1 / a
        );
        alone.push(a);
        one.push(c1);
        campaign_ratio.push(c1 / a);
        if jobs > 1 {
            let (_, cn) = campaign_rate(&options, jobs)?;
            line += &format!(", --jobs {jobs} {cn:.0} ({:.2} x --jobs 1)", cn / c1);
            many.push(cn);
            jobs_ratio.push(cn / c1);
        }
        say!("{line}");
    }
    say!(
        "bench: {config}, seeds {seed}..{}, {instrs} instrs, {repeat} runs, medians: \
         RTL alone {:.0} simulated cycles/s; campaign (RTL + golden + scoreboard) --jobs 1 \
         {:.0}, {:.2} x RTL alone",
        seed + count,
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
