//! `pccx-cosim`: random co-simulation campaigns (reference against DUT),
//! and the assembler / disassembler on the command line.
//!
//! Exit status: 0 all seeds matched (or the tool did its job), 1 some seed
//! mismatched (`cvo-accuracy`: some function failed its bound), 2 usage or
//! infrastructure error (the message says which).

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::coverage::rtl as rtl_coverage;
use pccx_cosim::coverage::Probe;
use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models;
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::regress::campaign::{self, CampaignOptions, CampaignReport, InfraError, Summary};
use pccx_cosim::regress::junit;
use pccx_cosim::scoreboard::Mismatch;
use pccx_cosim::scoreboard::TimingMode;
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_cosim::triage::repro::{self, Recorder, Repro, Verdict};
use pccx_cosim::triage::shrink;
use pccx_cosim::triage::signature::Signature;
use pccx_golden::asm::{self, Item};
use pccx_golden::isa::{self, Decoded};
use pccx_golden::model::NpuModel;
use serde_json::json;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `println!` that ends the program quietly when stdout is gone (a closed
/// pipe, as in `pccx-cosim ... | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(141);
        }
    }};
}

#[derive(Parser)]
#[command(
    name = "pccx-cosim",
    version,
    about = "Co-simulates the pccx NPU: the Verilated RTL against the golden model, on seeded random programs",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

/// A campaign: `--seed N [--count C]` runs seeds N..N+C.
#[derive(Args)]
struct RunArgs {
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
    /// Hardware configuration.
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = PossibleValuesParser::new(config::names()))]
    config: String,
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
    #[arg(long, value_name = "FAULT", value_parser = PossibleValuesParser::new(Fault::names()))]
    inject_fault: Option<String>,
    /// Where a mismatching seed's repro file and shrunk program go.
    #[arg(long, value_name = "DIR", default_value = "out")]
    out: PathBuf,
    /// Do not shrink a mismatching case (the repro is written all the same).
    #[arg(long)]
    no_shrink: bool,
    /// Cycles of FST waveform dumped before a mismatch's first difference
    /// (RTL DUT only; 0: no waveform). The hierarchy depth is fixed at build
    /// time by PCCX_TRACE_DEPTH.
    #[arg(long, value_name = "CYCLES", default_value_t = pccx_cosim::triage::wave::DEFAULT_WINDOW)]
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
}

/// The DUT's host I/O (`--io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum IoMode {
    /// Fixed latency, always ready: retire cycles are predicted exactly.
    Ideal,
    /// A seeded schedule of not-ready cycles and extra latency per seed.
    Stall,
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

#[derive(Subcommand)]
enum Command {
    /// Disassemble instruction words: hex words on the command line, or one
    /// file of words (one per line) or of assembler text.
    Disasm {
        /// One JSON object per word (JSON Lines).
        #[arg(long)]
        json: bool,
        #[arg(required = true, value_name = "WORD|FILE")]
        inputs: Vec<String>,
    },
    /// Assemble a file; print its words, one per line.
    Asm { file: PathBuf },
    /// Benchmark: runs the same campaign (RTL against golden) several times
    /// and prints the median simulated cycles per second, with the spread.
    Bench {
        #[arg(long, default_value_t = 1, value_parser = parse_u64)]
        seed: u64,
        #[arg(long, default_value_t = 20)]
        count: u64,
        #[arg(long, default_value_t = 400)]
        instrs: usize,
        /// How many times to run the campaign (the median is reported).
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        #[arg(long, default_value = config::DEFAULT_NAME, value_parser = PossibleValuesParser::new(config::names()))]
        config: String,
        /// Instead of a campaign, time the RTL alone while one engine is
        /// busy on one large instruction: `gemm` (the systolic array),
        /// `gemv` (the vector core) or `cvo` (the uCVO cores: SIN, the
        /// CORDIC's range reduction and 48 iterations, over every BF16 input
        /// that fits).
        #[arg(long, value_name = "ENGINE", value_enum)]
        busy: Option<BusyEngine>,
    },
    /// Mutation testing: build mutants of hw/rtl (one token changed each),
    /// run a bounded campaign on each, and report the kill rate
    /// (docs/mutation.md). Exit 1 with --require-all-killed if one survives.
    Mutate {
        /// How many mutants to sample from all sites (0: every site).
        #[arg(long, default_value_t = 200)]
        sample: usize,
        /// Seed of the sample.
        #[arg(long, default_value_t = 1, value_parser = parse_u64)]
        sample_seed: u64,
        /// Run the mutants listed in FILE (one id per line) instead of a sample.
        #[arg(long, value_name = "FILE")]
        ids: Option<PathBuf>,
        /// Mutants known to be equivalent, with the reason (id # reason).
        #[arg(long, value_name = "FILE", default_value = "hw/mutants/equivalent.txt")]
        equivalent: PathBuf,
        /// Seeds of the campaign per mutant (from 1).
        #[arg(long, default_value_t = 40)]
        seeds: u64,
        /// Instructions per program.
        #[arg(long, default_value_t = 40)]
        instrs: usize,
        /// Wall-clock budget per mutant campaign, in seconds.
        #[arg(long, default_value_t = 120)]
        budget: u64,
        #[arg(long, default_value = "tiny", value_parser = PossibleValuesParser::new(config::names()))]
        config: String,
        /// Where mutants are built.
        #[arg(long, value_name = "DIR", default_value = "target/pccx-mutate")]
        work: PathBuf,
        /// Also write every mutant's result and the summary to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Mutants built and run at once.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Print the mutants that would run, and stop.
        #[arg(long)]
        list: bool,
        /// Exit 1 unless every mutant not listed as equivalent is killed.
        #[arg(long)]
        require_all_killed: bool,
    },
    /// (Internal: one mutant's campaign, in a child process of `mutate`.)
    #[command(hide = true)]
    MutateRun {
        #[arg(long)]
        so: PathBuf,
        #[arg(long, value_parser = PossibleValuesParser::new(config::names()))]
        config: String,
        #[arg(long)]
        seeds: u64,
        #[arg(long)]
        first_seed: u64,
        #[arg(long)]
        instrs: usize,
        #[arg(long)]
        budget: u64,
    },
    /// Run a repro file's case again: exit 1 if it still mismatches, 0 if
    /// reference and DUT now agree, 2 if the file is malformed.
    Replay {
        /// Replay the shrunk program instead of the recorded one.
        #[arg(long)]
        min: bool,
        file: PathBuf,
    },
    /// The golden CVO functions against the exact functions over all 65,536
    /// BF16 inputs, and REDUCE_SUM against an exact sum: max ULP error,
    /// results not correctly rounded, special values, PASS/FAIL against
    /// CONTRACT section 7's bounds (docs/cvo.md section 6). Exit 1 on a FAIL.
    CvoAccuracy {
        /// Also write the results to FILE, as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write one SVG plot per function, DIR/cvo-<func>-ulp.svg (DIR is
        /// created if missing).
        #[arg(long, value_name = "DIR")]
        plots: Option<PathBuf>,
    },
    /// Print the program a seed generates, as assembler text.
    Gen {
        #[arg(long, value_parser = parse_u64)]
        seed: u64,
        #[arg(long, default_value_t = 40)]
        instrs: usize,
        #[arg(long, default_value = config::DEFAULT_NAME, value_parser = PossibleValuesParser::new(config::names()))]
        config: String,
    },
}

/// A usage or infrastructure failure: printed, exit status 2.
enum Failure {
    /// Printed after the program's name.
    Message(String),
    /// `FILE:LINE:COL: message`, printed alone so that editors can jump to
    /// it.
    Located(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Disasm { json, inputs }) => disasm(json, &inputs),
        Some(Command::Asm { file }) => assemble(&file),
        Some(Command::Gen {
            seed,
            instrs,
            config,
        }) => generate(seed, instrs, &config),
        Some(Command::Bench {
            seed,
            count,
            instrs,
            repeat,
            config,
            busy: None,
        }) => bench(seed, count, instrs, repeat, &config),
        Some(Command::Bench {
            seed,
            repeat,
            config,
            busy: Some(engine),
            ..
        }) => bench_busy(seed, repeat, &config, engine),
        Some(Command::Replay { min, file }) => replay(&file, min),
        Some(Command::CvoAccuracy { json, plots }) => {
            cvo_accuracy(json.as_deref(), plots.as_deref())
        }
        Some(Command::MutateRun {
            so,
            config,
            seeds,
            first_seed,
            instrs,
            budget,
        }) => mutate_run(&so, &config, seeds, first_seed, instrs, budget),
        Some(Command::Mutate {
            sample,
            sample_seed,
            ids,
            equivalent,
            seeds,
            instrs,
            budget,
            config,
            work,
            json,
            jobs,
            list,
            require_all_killed,
        }) => mutate(MutateArgs {
            sample,
            sample_seed,
            ids,
            equivalent,
            seeds,
            instrs,
            budget,
            config,
            work,
            json,
            jobs,
            list,
            require_all_killed,
        }),
        None => run(&cli.run),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Message(message)) => {
            eprintln!("pccx-cosim: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Located(message)) => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => s.replace('_', "").parse(),
    };
    parsed.map_err(|e| format!("`{s}` is not a 64-bit number: {e}"))
}

fn hw_config(name: &str) -> HwConfig {
    // clap has already checked the name against config::names().
    config::by_name(name).expect("a configuration clap accepted")
}

// ----- campaign ----------------------------------------------------------------

fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    let options = CampaignOptions {
        first_seed: args
            .seed
            .expect("clap requires --seed without a subcommand"),
        count: args.count,
        instrs: args.instrs,
        config: hw_config(&args.config),
        stall_io: args.io == IoMode::Stall,
        timing: args.timing,
    };
    if options.count > 0 && options.first_seed.checked_add(options.count - 1).is_none() {
        return Err(Failure::Message(format!(
            "--seed {} --count {}: the seed range passes 2^64 - 1; the last seed is {}",
            options.first_seed,
            options.count,
            u64::MAX
        )));
    }
    check_output_paths(args)?;
    if options.stall_io && options.timing == Some(TimingMode::Exact) {
        return Err(Failure::Message(
            "--timing exact needs ideal I/O: with --io stall the cycles depend on the stall \
             schedule, which the timing model does not predict; use --timing order"
                .into(),
        ));
    }
    let fault = args
        .inject_fault
        .as_ref()
        .map(|name| Fault::by_name(name).expect("a fault clap accepted"));
    let mut setup = Setup::new(options.config, args.dut, fault);
    if args.rtl_coverage.is_some() {
        setup.rtl_coverage = true;
        setup.check_rtl_coverage().map_err(Failure::Message)?;
    }
    let mut plain_reference = models::open_reference(&options.config);
    let mut probe = args
        .coverage
        .as_ref()
        .map(|_| Probe::new(models::reference_golden(&options.config)));
    let reference: &mut dyn NpuModel = match probe.as_mut() {
        Some(probe) => probe,
        None => &mut *plain_reference,
    };
    let dut = setup.open_dut();
    let mut rtl_coverage_written = None;
    // Shrinking and waves open DUTs of their own, from the plain build.
    let plain_setup = Setup {
        rtl_coverage: false,
        ..setup.clone()
    };
    let mut recorder = Recorder::new(plain_setup, args.out.clone(), args.no_shrink);
    recorder.wave_window = args.wave_window;
    let bar = progress_bar(options.count);
    let report = match dut {
        Ok(mut dut) => {
            let mut mismatched = 0;
            let mut on_mismatch = |case: &TestCase, m: &Mismatch| {
                mismatched += 1;
                if let Some(bar) = &bar {
                    let what = if recorder.shrink_with.is_some() {
                        "shrinking"
                    } else {
                        "recording"
                    };
                    bar.set_message(format!(
                        "{mismatched} mismatched, {what} seed {}",
                        case.seed
                    ));
                }
                let artefacts = recorder.record(case, m);
                if let Some(bar) = &bar {
                    bar.set_message(format!("{mismatched} mismatched"));
                }
                artefacts
            };
            let mut print = |r: &campaign::SeedResult| match &bar {
                Some(bar) => {
                    bar.suspend(|| print_result(r, &options, args));
                    bar.inc(1);
                }
                None => print_result(r, &options, args),
            };
            let report = campaign::run_campaign_with(
                &options,
                &mut *reference,
                &mut *dut,
                &mut on_mismatch,
                &mut print,
            );
            if let Some(path) = &args.rtl_coverage {
                let name = dut.name().to_string();
                rtl_coverage_written = Some(match dut.sim_controls() {
                    Some(sim) => sim.write_coverage(path),
                    None => Err(format!("the `{name}` model has no coverage counters")),
                });
            }
            report
        }
        Err(message) => unopened_dut_report(&options, reference.name(), message),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    say!("{}", report.summary.text());
    if let Some(text) = report.signature_text() {
        say!("{text}");
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report.to_json()).expect("JSON values serialise");
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, junit::render(&report))
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let (Some(path), Some(probe)) = (&args.coverage, &probe) {
        say!("{}", probe.coverage().text());
        let text = serde_json::to_string_pretty(&probe.coverage().to_json())
            .expect("JSON values serialise");
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let (Some(path), Some(written)) = (&args.rtl_coverage, rtl_coverage_written) {
        written.map_err(Failure::Message)?;
        let summary = rtl_coverage::read(path).map_err(Failure::Message)?;
        say!("{}", summary.text(path));
    }
    Ok(if let Some(e) = &report.summary.stopped {
        eprintln!(
            "pccx-cosim: infrastructure error at seed {}: {}",
            e.seed, e.message
        );
        ExitCode::from(2)
    } else if report.summary.mismatched > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The flags besides seed, instrs and config that change what a seed does,
/// as the `reproduce:` line must repeat them.
fn reproduce_flags(args: &RunArgs) -> String {
    let mut flags = String::new();
    if args.io == IoMode::Stall {
        flags += " --io stall";
    }
    if let Some(timing) = args.timing {
        flags += &format!(" --timing {}", timing.name());
    }
    if args.dut != DutKind::Rtl {
        flags += &format!(" --dut {}", args.dut.name());
    }
    if let Some(fault) = &args.inject_fault {
        flags += &format!(" --inject-fault {fault}");
    }
    flags
}

/// Fails before the first seed if an output file cannot be written, so a
/// bad path does not cost a whole campaign. Each file
/// is opened for appending and removed again if it did not exist; the
/// reports are written in full at the end.
fn check_output_paths(args: &RunArgs) -> Result<(), Failure> {
    let outputs = [
        ("--json", &args.json),
        ("--junit", &args.junit),
        ("--coverage", &args.coverage),
        ("--rtl-coverage", &args.rtl_coverage),
    ];
    for (flag, path) in outputs {
        if let Some(path) = path {
            let existed = path.exists();
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| {
                    Failure::Message(format!("{flag} {}: cannot write: {e}", path.display()))
                })?;
            if !existed {
                // Leave no empty file behind if the campaign fails to start.
                let _ = std::fs::remove_file(path);
            }
        }
    }
    Ok(())
}

fn bench(
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
    use pccx_cosim::tools::bench::{self, busy_run};
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

/// A progress bar for a campaign of `count` seeds, only when stdout is a
/// terminal (never in a pipe, a file or a test) and there is more than one
/// seed.
fn progress_bar(count: u64) -> Option<ProgressBar> {
    if count <= 1 || !std::io::stdout().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(count), ProgressDrawTarget::stdout());
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:24}] {pos}/{len} seeds, eta {eta} {wide_msg}",
    )
    .expect("a valid template")
    .progress_chars("=> ");
    bar.set_style(style);
    Some(bar)
}

fn print_result(r: &campaign::SeedResult, options: &CampaignOptions, args: &RunArgs) {
    say!("{}", r.line());
    if let Some(m) = &r.mismatch {
        for line in m.to_string().lines() {
            say!("    {line}");
        }
        say!("    signature: {}", Signature::of(m));
        let c = options.config.name;
        say!(
            "    reproduce: pccx-cosim --seed {} --instrs {} --config {c}{}   (program: pccx-cosim gen --seed {} --instrs {} --config {c})",
            r.seed,
            options.instrs,
            reproduce_flags(args),
            r.seed,
            options.instrs
        );
        let a = &r.artefacts;
        if let Some(path) = &a.repro {
            say!(
                "    repro: {}   (replay: pccx-cosim replay {})",
                path.display(),
                path.display()
            );
        }
        if let Some(path) = &a.wave {
            say!(
                "    waveform: {}",
                pccx_cosim::triage::wave::viewer_hint(path)
            );
        }
        if let (Some((before, after, runs)), Some(path)) = (a.shrink, &a.min_asm) {
            say!(
                "    shrunk: {before} -> {after} in {runs} runs: {}",
                path.display()
            );
        }
        for problem in &a.problems {
            say!("    note: {problem}");
        }
    }
}

// ----- replay ----------------------------------------------------------------------

// Read only by the RTL build's `mutate`.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
struct MutateArgs {
    sample: usize,
    sample_seed: u64,
    ids: Option<PathBuf>,
    equivalent: PathBuf,
    seeds: u64,
    instrs: usize,
    budget: u64,
    config: String,
    work: PathBuf,
    json: Option<PathBuf>,
    jobs: usize,
    list: bool,
    require_all_killed: bool,
}

#[cfg(not(feature = "rtl"))]
fn mutate_run(_: &Path, _: &str, _: u64, _: u64, _: usize, _: u64) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("mutate")))
}

#[cfg(feature = "rtl")]
fn mutate_run(
    so: &Path,
    config: &str,
    seeds: u64,
    first_seed: u64,
    instrs: usize,
    budget: u64,
) -> Result<ExitCode, Failure> {
    use pccx_cosim::tools::mutate::{self, build, MutateOptions};
    let model = build::load(so).map_err(Failure::Message)?;
    let options = MutateOptions {
        config: hw_config(config),
        seeds,
        first_seed,
        instrs,
        budget: std::time::Duration::from_secs(budget),
        work_dir: PathBuf::new(),
        root: PathBuf::new(),
    };
    let verdict = mutate::campaign(&options, &model);
    say!("{}", mutate::verdict_json(&verdict));
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "rtl"))]
fn mutate(_: MutateArgs) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("mutation testing")))
}

#[cfg(feature = "rtl")]
fn mutate(a: MutateArgs) -> Result<ExitCode, Failure> {
    use pccx_cosim::tools::mutate::{self, build::Builder, MutateOptions, Verdict};
    let root = std::env::current_dir().map_err(|e| Failure::Message(e.to_string()))?;
    if !root.join("hw/rtl/manifest.txt").exists() {
        return Err(Failure::Message(
            "run mutate from the repository root (no hw/rtl/manifest.txt here)".into(),
        ));
    }
    let sites = mutate::all_sites(&root).map_err(Failure::Message)?;
    let mut chosen = match &a.ids {
        Some(file) => {
            let ids = mutate::read_id_list(file).map_err(Failure::Message)?;
            let mut out = Vec::new();
            for id in ids.keys() {
                out.push(mutate::by_id(&sites, id).cloned().ok_or_else(|| {
                    Failure::Message(format!(
                        "{}: mutant `{id}` is not a site of hw/rtl any more (the line moved?)",
                        file.display()
                    ))
                })?);
            }
            out
        }
        None if a.sample == 0 => sites.clone(),
        None => mutate::sample(&sites, a.sample, a.sample_seed),
    };
    let equivalent = if a.equivalent.exists() {
        mutate::read_id_list(&a.equivalent).map_err(Failure::Message)?
    } else {
        Default::default()
    };
    say!(
        "mutate: {} sites in hw/rtl; running {} mutants on {} ({} seeds x {} instrs each, {} s budget)",
        sites.len(),
        chosen.len(),
        a.config,
        a.seeds,
        a.instrs,
        a.budget
    );
    if a.list {
        for m in &chosen {
            say!("{}  {}", m.id(), m.describe());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let options = MutateOptions {
        config: hw_config(&a.config),
        seeds: a.seeds,
        first_seed: 1,
        instrs: a.instrs,
        budget: std::time::Duration::from_secs(a.budget),
        work_dir: a.work.clone(),
        root: root.clone(),
    };
    let builder = Builder::new(&root, &a.work, options.config).map_err(Failure::Message)?;
    let exe = std::env::current_exe().map_err(|e| Failure::Message(e.to_string()))?;
    let total = chosen.len();
    let queue = std::sync::Mutex::new(std::mem::take(&mut chosen).into_iter().enumerate());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.max(1) {
            scope.spawn(|| loop {
                let next = queue.lock().unwrap().next();
                let Some((n, m)) = next else { break };
                let mut r = mutate::run_mutant(&options, &builder, &m, &exe);
                r.equivalent = equivalent.get(&m.id()).cloned();
                let extra = match &r.verdict {
                    Verdict::Killed {
                        seed, seconds, by, ..
                    } => {
                        format!("by {by} at seed {seed} after {seconds:.2} s")
                    }
                    Verdict::NotCompiling { stage, .. } => format!("({stage})"),
                    _ if r.equivalent.is_some() => "(listed as equivalent)".into(),
                    _ => String::new(),
                };
                say!(
                    "[{}/{total}] {:<13} {}  {extra}",
                    n + 1,
                    r.verdict.name(),
                    m.describe()
                );
                results.lock().unwrap().push((n, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(n, _)| *n);
    let results: Vec<_> = results.into_iter().map(|(_, r)| r).collect();
    let summary = mutate::summarize(&results);
    let survivors: Vec<_> = results
        .iter()
        .filter(|r| {
            r.equivalent.is_none()
                && matches!(
                    r.verdict,
                    Verdict::Survived { .. } | Verdict::TimedOut { .. }
                )
        })
        .collect();
    for class in mutate::MutantClass::ALL {
        let of: Vec<_> = results
            .iter()
            .filter(|r| r.mutant.class == class)
            .cloned()
            .collect();
        let s = mutate::summarize(&of);
        let rate = s
            .kill_rate
            .map_or("n/a".into(), |r| format!("{:.1}%", 100.0 * r));
        say!(
            "  {:<20} {:>4} mutants: {:>4} killed, {:>3} survived, {:>3} timed out, {:>3} not compiling, {:>3} equivalent; kill rate {rate}",
            class.name(),
            s.total,
            s.killed,
            s.survived,
            s.timed_out,
            s.not_compiling,
            s.equivalent
        );
    }
    if !survivors.is_empty() {
        say!(
            "survivors (examine each: an equivalent mutant goes into {} with its reason):",
            a.equivalent.display()
        );
        for r in &survivors {
            say!("  {}  {}", r.mutant.id(), r.mutant.describe());
        }
    }
    say!("{}", summary.text());
    if let Some(path) = &a.json {
        let doc = serde_json::json!({
            "config": a.config,
            "seeds": a.seeds,
            "instrs": a.instrs,
            "sites": sites.len(),
            "summary": mutate::summary_json(&summary),
            "mutants": results.iter().map(mutate::result_json).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap())
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    let all_killed = summary.killed + summary.equivalent + summary.not_compiling == summary.total
        && summary.not_compiling == 0;
    Ok(if a.require_all_killed && !all_killed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn replay(file: &Path, min: bool) -> Result<ExitCode, Failure> {
    let repro = Repro::read(file).map_err(Failure::Message)?;
    let (case, expected) = repro
        .case_to_replay(min)
        .map_err(|e| Failure::Message(format!("{}: {e}", file.display())))?;
    let s = &repro.setup;
    let fault = s
        .fault
        .map(|f| format!(" with fault {}", f.name()))
        .unwrap_or_default();
    say!(
        "replaying {}{}: seed {}, {}, on {} against the {} DUT{fault}",
        file.display(),
        if min { " (shrunk program)" } else { "" },
        case.seed,
        shrink::ProgramSize::of(&case.program),
        s.config.name,
        s.dut.name(),
    );
    let p = &repro.provenance;
    let text = |key: &str| match &p[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "unknown".into(),
        other => other.to_string(),
    };
    say!(
        "recorded by pccx-cosim {} ({}), git {}, hw/rtl last changed in {}, uncommitted RTL changes: {}",
        text("pccx_cosim_version"),
        text("build_profile"),
        text("git_commit"),
        text("rtl_last_commit"),
        text("rtl_dirty")
    );
    let verdict = repro::replay(&repro, min).map_err(|e| {
        Failure::Message(format!(
            "infrastructure error replaying {}: {e}",
            file.display()
        ))
    })?;
    let indent = |m: &dyn std::fmt::Display| {
        m.to_string()
            .lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok(match verdict {
        Verdict::Reproduces(m) => {
            say!("reproduces: the same mismatch ({})", Signature::of(&m));
            say!("{}", indent(&m));
            ExitCode::from(1)
        }
        Verdict::Differs(m) => {
            say!(
                "mismatches, but differently: now {} ({}), recorded {} ({})",
                m.kind,
                Signature::of(&m),
                expected.kind,
                repro.signature
            );
            say!("  now:\n{}", indent(&m));
            say!("  recorded:\n{}", indent(expected));
            ExitCode::from(1)
        }
        Verdict::NoLongerReproduces => {
            say!(
                "no longer reproduces: reference and DUT agree (recorded: {} {})",
                expected.kind,
                expected.detail
            );
            ExitCode::SUCCESS
        }
    })
}

/// The report of a campaign that could not start: no DUT.
fn unopened_dut_report(
    options: &CampaignOptions,
    reference: &str,
    message: String,
) -> CampaignReport {
    CampaignReport {
        options: options.clone(),
        reference_model: reference.to_string(),
        dut_model: String::new(),
        results: Vec::new(),
        summary: Summary::nothing_ran(Some(InfraError {
            seed: options.first_seed,
            message: format!("cannot open the DUT: {message}"),
        })),
    }
}

// ----- cvo-accuracy ----------------------------------------------------------------

fn cvo_accuracy(json: Option<&Path>, plots: Option<&Path>) -> Result<ExitCode, Failure> {
    use pccx_cosim::tools::cvo_accuracy::{self, Accuracy};
    // Check the outputs before the measurement, so a bad path fails at once.
    if let Some(dir) = plots {
        cvo_accuracy::prepare_plot_dir(dir).map_err(Failure::Message)?;
    }
    let json_file = json
        .map(|path| {
            std::fs::File::create(path).map_err(|e| {
                Failure::Message(format!("--json {}: cannot write: {e}", path.display()))
            })
        })
        .transpose()?;
    let accuracy = Accuracy::measure();
    say!("{}", accuracy.text());
    if let (Some(path), Some(mut file)) = (json, json_file) {
        use std::io::Write as _;
        let text =
            serde_json::to_string_pretty(&accuracy.to_json()).expect("JSON values serialise");
        writeln!(file, "{text}")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(dir) = plots {
        let written = cvo_accuracy::write_plots(dir, &accuracy).map_err(Failure::Message)?;
        say!("plots: {} files in {}", written.len(), dir.display());
    }
    Ok(if accuracy.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn generate(seed: u64, instrs: usize, config: &str) -> Result<ExitCode, Failure> {
    let case = TestCase::generate(seed, &GenOptions::for_config(&hw_config(config), instrs));
    print!("{}", asm::format_program(&case.program));
    Ok(ExitCode::SUCCESS)
}

// ----- disasm / asm --------------------------------------------------------------

/// A `0x` word of hex digits too many for 64 bits (leading zeros aside).
fn is_wide_hex(s: &str) -> bool {
    let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) else {
        return false;
    };
    let digits = hex.replace('_', "");
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_hexdigit())
        && digits.trim_start_matches('0').len() > 16
}

fn parse_word(s: &str) -> Option<u64> {
    let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(&hex.replace('_', ""), 16).ok()
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Message(format!("cannot read {}: {e}", path.display())))
}

/// A program from assembler text, or the `FILE:LINE:COL: message` failure.
fn parse(path: &Path, text: &str) -> Result<asm::Program, Failure> {
    asm::parse_program(text).map_err(|e| {
        Failure::Located(format!(
            "{}:{}:{}: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })
}

/// The words of a file: one hex word per line (blank lines and `#` or `;`
/// comments allowed, as `asm` prints them), else assembler text.
fn words_of_file(path: &Path) -> Result<Vec<u64>, Failure> {
    let text = read(path)?;
    let plain: Option<Vec<u64>> = text
        .lines()
        .map(|line| line.split(['#', ';']).next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(parse_word)
        .collect();
    match plain {
        Some(words) => Ok(words),
        None => Ok(parse(path, &text)?
            .items
            .iter()
            .filter_map(|item| match item {
                Item::Instr(word) => Some(*word),
                _ => None,
            })
            .collect()),
    }
}

fn disasm(json: bool, inputs: &[String]) -> Result<ExitCode, Failure> {
    let words: Vec<u64> = match inputs
        .iter()
        .map(|s| parse_word(s))
        .collect::<Option<Vec<_>>>()
    {
        Some(words) => words,
        None => {
            if let Some(wide) = inputs.iter().find(|s| is_wide_hex(s)) {
                return Err(Failure::Message(format!(
                    "`{wide}` does not fit in a 64-bit instruction word (at most 16 hex digits)"
                )));
            }
            if inputs.len() != 1 {
                return Err(Failure::Message(format!(
                    "disasm takes hex words (0x...) or exactly one file, not: {}",
                    inputs.join(" ")
                )));
            }
            words_of_file(Path::new(&inputs[0]))?
        }
    };
    for word in words {
        if json {
            say!("{}", word_json(word));
        } else {
            say!("0x{word:016x}  {}", asm::disasm(word));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `{"word", "op", "fields"}` as in shared/vectors, plus `"illegal"` (the
/// error code's name) and `"reason"` for a word the decoder rejects. The
/// opcode is `op`, so it is not repeated among the fields. Keys are written
/// in that order, fields in bit order from the top: serde_json's map would
/// sort them.
fn word_json(word: u64) -> String {
    let fields: Vec<(&str, String)> = isa::fields(word)
        .into_iter()
        .filter(|(name, _)| *name != "opcode")
        .map(|(name, value)| (name, value.to_string()))
        .collect();
    let mut pairs = vec![
        ("word", json!(format!("0x{word:016x}")).to_string()),
        ("op", json!(isa::op_name(word)).to_string()),
        ("fields", ordered_object(&fields)),
    ];
    if let Decoded::Illegal { reason, .. } = isa::decode(word) {
        pairs.push(("illegal", json!(reason.error_code().name()).to_string()));
        pairs.push(("reason", json!(reason.to_string()).to_string()));
    }
    ordered_object(&pairs)
}

/// A JSON object with its keys in the given order; the values are JSON
/// text already.
fn ordered_object(pairs: &[(&str, String)]) -> String {
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}:{v}", json!(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn assemble(path: &Path) -> Result<ExitCode, Failure> {
    let program = parse(path, &read(path)?)?;
    for item in &program.items {
        match item {
            Item::Instr(word) => say!("0x{word:016x}"),
            Item::Idle(cycles) => say!("# .idle {cycles}"),
            Item::RegWrite { offset, value } => say!("# .write 0x{offset:02x}, 0x{value:08x}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
