//! The campaign (`pccx-cosim --seed N ...`, no subcommand): its flags, the run, the per-seed lines.

use clap::builder::PossibleValuesParser;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::{BTreeSet, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::config;
use crate::coverage::rtl as rtl_coverage;
use crate::coverage::Coverage;
use crate::coverage::Probe;
use crate::env::faults::Fault;
use crate::env::models;
use crate::env::models::{DutKind, Setup};
use crate::regress::campaign::{self, CampaignOptions, RunControls, Shard};
use crate::regress::journal::{self, CampaignHeader, Journal, RunIdentity};
use crate::regress::junit;
use crate::regress::results::{CampaignFile, RunFacts, SeedRecord, SeedVerdict};
use crate::regress::steer::{CaseFeedback, CurveFile, CURVE_FORMAT};
use crate::scoreboard::Mismatch;
use crate::scoreboard::TimingMode;
use crate::stimulus::TestCase;
use crate::triage::repro::{Artefacts, Recorder};
use crate::triage::signature::Signature;
use pccx_golden::model::NpuModel;

use super::args::{config_values, hw_config, parse_u64};
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

/// The RTL's state before each case's reset (`--initial-state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum InitialState {
    /// Drawn from the case's seed, as silicon powers up (docs/harness.md).
    Random,
    /// Zero everywhere, as a plain simulation starts.
    Zero,
}

/// The DUT's host I/O (`--io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum IoMode {
    /// Fixed latency, always ready: retire cycles are predicted exactly.
    Ideal,
    /// A seeded schedule of not-ready cycles and extra latency per seed.
    Stall,
}

pub(super) fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    let mut options = CampaignOptions {
        first_seed: args
            .seed
            .expect("clap requires --seed without a subcommand"),
        count: args.count,
        instrs: args.instrs,
        config: hw_config(&args.config),
        stall_io: args.io == IoMode::Stall,
        timing: args.timing,
        shard: args.shard,
        skip: BTreeSet::new(),
        random_init: args.initial_state == InitialState::Random,
        steer: args.steer,
        curve: args.coverage_curve.is_some(),
    };
    if options.count > 0 && options.first_seed.checked_add(options.count - 1).is_none() {
        return Err(Failure::Message(format!(
            "--seed {} --count {}: the seed range passes 2^64 - 1; the last seed is {}",
            options.first_seed,
            options.count,
            u64::MAX
        )));
    }
    // The run's directory first: a report may be asked for inside it.
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| {
            Failure::Message(format!("--out {}: cannot create: {e}", dir.display()))
        })?;
    }
    check_output_paths(args)?;
    if options.steer && args.resume {
        return Err(Failure::Message(
            "--steer cannot --resume: a steered case is made from the coverage of every case \
             before it, which a resumed run no longer has; run the campaign again (or shard \
             it: each shard steers on its own seeds)"
                .into(),
        ));
    }
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
    // A fault counts drains and retires across the seeds of its DUT (the
    // second drain hangs, say), so which seed it hits depends on which
    // seeds one DUT runs: a fault-injecting campaign runs on one worker.
    let jobs = match (&args.inject_fault, args.jobs) {
        (Some(_), Some(n)) if n > 1 => {
            return Err(Failure::Message(format!(
                "--jobs {n} with --inject-fault: a fault counts events across the seeds \
                 of its DUT, so a fault-injecting campaign runs on one worker; drop --jobs"
            )))
        }
        (Some(_), _) => 1,
        (None, given) => super::args::jobs(given)?,
    };
    // Watched from before the directory is written, so that a signal
    // never finds the run half set up.
    let stop = Arc::new(AtomicBool::new(false));
    watch_for_stop_signals(&stop)?;
    // The campaign's directory: its header and records, and what a resumed
    // run has already done.
    let mut store = match &args.out {
        Some(dir) => Some(RunStore::open(
            dir,
            identity(args),
            args.shard,
            args.resume,
        )?),
        None => None,
    };
    let prior: Vec<SeedRecord> = store.as_ref().map_or(Vec::new(), |s| s.prior.clone());
    options.skip = prior.iter().map(|r| r.seed).collect();
    if let Some(store) = &store {
        if !prior.is_empty() {
            let left = options.seeds().count();
            say!(
                "resuming {}: {} seeds recorded, {left} to run",
                store.dir.display(),
                prior.len()
            );
        }
    }
    let mut setup = Setup::new(options.config, args.dut, fault);
    if args.rtl_coverage.is_some() {
        setup.rtl_coverage = true;
        setup.check_rtl_coverage().map_err(Failure::Message)?;
    }
    // Shrinking and waves open DUTs of their own, from the plain build.
    let plain_setup = Setup {
        rtl_coverage: false,
        ..setup.clone()
    };
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("out"));
    let bar = progress_bar(options.seeds().count() as u64);
    let mismatched = AtomicU64::new(0);
    // With several workers each writes its RTL counters to a file of its
    // own; they are summed into --rtl-coverage at the end.
    let rtl_coverage_part = |k: usize| {
        args.rtl_coverage.as_ref().map(|path| {
            if jobs == 1 {
                path.clone()
            } else {
                let mut name = path.as_os_str().to_owned();
                name.push(format!(".worker{k}"));
                PathBuf::from(name)
            }
        })
    };
    let make_worker = |k: usize| -> Result<CampaignWorker, String> {
        // Steering and the curve read the functional bins each case hits.
        let probe = args.coverage.is_some() || options.steer || options.curve;
        let reference = if probe {
            ReferenceModel::Probe(Box::new(Probe::new(models::reference_golden(
                &options.config,
            ))))
        } else {
            ReferenceModel::Plain(models::open_reference(&options.config))
        };
        let dut = setup
            .open_dut()
            .map_err(|e| format!("cannot open the DUT: {e}"))?;
        let mut recorder = Recorder::new(plain_setup.clone(), out_dir.clone(), args.no_shrink);
        recorder.wave_window = args.wave_window;
        Ok(CampaignWorker {
            reference,
            dut,
            recorder,
            bar: bar.clone(),
            mismatched: &mismatched,
            rtl_coverage: rtl_coverage_part(k),
            seed_timeout: args.seed_timeout,
            case_counts: CaseCounts::new(
                (options.steer || options.curve)
                    .then(|| rtl_coverage_part(k))
                    .flatten()
                    .map(|p| {
                        let mut name = p.into_os_string();
                        name.push(".case");
                        PathBuf::from(name)
                    }),
            ),
        })
    };
    // The journal is shared with the timekeeper, which writes the record
    // of a seed stuck for good before it ends the process.
    let journal = store
        .as_mut()
        .map(|s| Arc::new(Mutex::new(s.take_journal())));
    let mut records: Vec<SeedRecord> = Vec::new();
    let mut journal_error: Option<String> = None;
    let mut print = |r: &campaign::SeedResult| {
        let record = SeedRecord::of(r);
        if let Some(journal) = &journal {
            let written = journal
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(&record);
            if let Err(e) = written {
                journal_error.get_or_insert(e);
            }
        }
        match &bar {
            Some(bar) => {
                bar.suspend(|| print_result(r, &options, args));
                bar.inc(1);
            }
            None => print_result(r, &options, args),
        }
        records.push(record);
    };
    let hung_store = store.as_ref().map(|s| (s.dir.clone(), s.header.clone()));
    let on_hung = |seed: u64, message: &str| {
        eprintln!(
            "pccx-cosim: seed {seed} {message}; its record is written, the run ends (exit 4)"
        );
        if let Some(journal) = &journal {
            let mut record = SeedRecord::error(seed, message);
            record.verdict = SeedVerdict::Timeout;
            let _ = journal
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(&record);
        }
        if let Some((dir, header)) = &hung_store {
            let mut header = header.clone();
            if let Some(run) = header.runs.last_mut() {
                run.ended = Some("hung".into());
            }
            let _ = header.write(dir);
        }
        std::process::exit(EXIT_HUNG.into());
    };
    let controls = RunControls {
        stop: Some(&stop),
        seed_timeout: args.seed_timeout,
        on_hung: Some(&on_hung),
    };
    let (report, done) =
        campaign::run_campaign_controlled(&options, jobs, &make_worker, &mut print, controls);
    let mut coverage: Option<Coverage> = None;
    let mut rtl_parts = Vec::new();
    let mut rtl_coverage_written: Option<Result<(), String>> = None;
    for d in done {
        if let Some(c) = d.coverage {
            match coverage.as_mut() {
                Some(total) => total.merge_concurrent(&c),
                None => coverage = Some(c),
            }
        }
        match d.rtl_coverage {
            Some(Ok(part)) => rtl_parts.push(part),
            Some(Err(e)) => rtl_coverage_written = Some(Err(e)),
            None => {}
        }
    }
    if let Some(c) = coverage.as_mut() {
        c.case_number = None;
    }
    if let (Some(path), None) = (&args.rtl_coverage, &rtl_coverage_written) {
        if !rtl_parts.is_empty() {
            rtl_coverage_written = Some(if jobs == 1 {
                Ok(())
            } else {
                rtl_parts.sort();
                let merged = rtl_coverage::merge_files(&rtl_parts, path);
                for part in &rtl_parts {
                    let _ = std::fs::remove_file(part);
                }
                merged
            });
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // The reports are made from the records: this run's and, resumed,
    // those before it.
    let this_run = report.summary.wall.as_secs_f64();
    let earlier_runs = store.as_ref().map_or(0.0, |s| s.header.wall_seconds());
    let new_records = records.len() as u64;
    let mut all = prior;
    all.extend(records);
    let file = CampaignFile::from_records(
        RunFacts {
            config: options.config.name.to_string(),
            first_seed: options.first_seed,
            count: options.count,
            instrs: options.instrs,
            reference: report.reference_model.clone(),
            dut: report.dut_model.clone(),
            shard: args.shard.map(|s| s.to_string()),
            wall_seconds: earlier_runs + this_run,
            stopped: report.summary.stopped.as_ref().map(|e| {
                crate::regress::results::StoppedRecord {
                    seed: e.seed,
                    error: e.message.clone(),
                }
            }),
            interrupted: report.interrupted,
            missing_seeds: Vec::new(),
        },
        all,
    );
    if let Some(store) = &mut store {
        let ended = if report.summary.stopped.is_some() {
            "stopped"
        } else if report.interrupted {
            "interrupted"
        } else {
            "complete"
        };
        store.finish(&report, this_run, new_records, ended, journal.as_deref())?;
    }
    say!("{}", file.summary.text());
    if let Some(text) = file.signature_text() {
        say!("{text}");
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&file).expect("JSON values serialise");
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, junit::render(&file))
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    let curve = CurveFile {
        format: CURVE_FORMAT.into(),
        version: 1,
        config: options.config.name.to_string(),
        first_seed: options.first_seed,
        count: options.count,
        instrs: options.instrs,
        steer: options.steer,
        rtl: args.rtl_coverage.is_some(),
        points: report.curve.clone(),
    };
    if let Some(path) = &args.coverage_curve {
        let text = serde_json::to_string_pretty(&curve).expect("JSON values serialise");
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::Message(format!("--coverage-curve {}: {e}", path.display())))?;
    }
    if let (Some(path), Some(coverage)) = (&args.coverage, &coverage) {
        say!("{}", coverage.text());
        let text =
            serde_json::to_string_pretty(&coverage.to_json()).expect("JSON values serialise");
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let (Some(path), Some(written)) = (&args.rtl_coverage, rtl_coverage_written) {
        written.map_err(Failure::Message)?;
        let summary = rtl_coverage::read(path).map_err(Failure::Message)?;
        say!("{}", summary.text(path));
    }
    if let Some(path) = &args.report {
        // The runs as the directory records them (a resumed campaign has
        // several), else this one.
        let runs = match store.as_ref().map(|s| CampaignHeader::read(&s.dir)) {
            Some(Ok(Some(header))) => header.runs,
            _ => {
                let mut run = journal::this_run();
                run.wall_seconds = Some(this_run);
                run.seeds = Some(new_records);
                vec![run]
            }
        };
        let inputs = crate::report::Inputs {
            campaign: Some(crate::report::CampaignPart {
                file: file.clone(),
                identity: Some(identity(args)),
                runs,
                dirs: vec![out_dir.clone()],
                cluster: None,
            }),
            mutation: None,
            coverage: coverage.as_ref().map(crate::coverage::CoverageFile::of),
            // A steered run samples its curve whether or not it is written.
            curves: (args.coverage_curve.is_some() || !curve.points.is_empty())
                .then_some(curve)
                .into_iter()
                .collect(),
            notes: Vec::new(),
            baseline: None,
        };
        super::report::write(path, &inputs)?;
    }
    if let Some(e) = journal_error {
        return Err(Failure::Message(format!(
            "the results could not all be recorded: {e}"
        )));
    }
    Ok(if let Some(e) = &report.summary.stopped {
        eprintln!(
            "pccx-cosim: infrastructure error at seed {}: {}",
            e.seed, e.message
        );
        ExitCode::from(2)
    } else if report.interrupted {
        let resume = match &args.out {
            Some(dir) => format!("; `--resume --out {}` continues it", dir.display()),
            None => String::new(),
        };
        eprintln!(
            "pccx-cosim: interrupted after {} of {} seeds; the reports hold what finished{resume}",
            file.summary.seeds,
            options.seeds().count() + options.skip.len()
        );
        ExitCode::from(EXIT_INTERRUPTED)
    } else if file.summary.mismatched + file.summary.timeouts > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Exit status of a campaign stopped by SIGTERM or SIGINT (docs/scale-out.md).
pub(super) const EXIT_INTERRUPTED: u8 = 3;
/// Exit status of a campaign ended because a seed was stuck in the
/// simulator past its wall-clock limit (`--seed-timeout`).
pub(super) const EXIT_HUNG: u8 = 4;

/// `--seed-timeout`: a positive number of seconds.
fn parse_seconds(s: &str) -> Result<Duration, String> {
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

/// SIGTERM (what Slurm and CI send at a time limit) and SIGINT set `stop`:
/// no further seed starts, the seeds in flight finish, and the reports
/// are written. A second one ends the process at once.
pub(super) fn watch_for_stop_signals(stop: &Arc<AtomicBool>) -> Result<(), Failure> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for (signal, name, code) in [(SIGTERM, "SIGTERM", 143), (SIGINT, "SIGINT", 130)] {
        // The order matters: the shutdown is armed first, so the first
        // signal only sets the flag and the second finds it set.
        signal_hook::flag::register_conditional_shutdown(signal, code, Arc::clone(stop))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(stop)))
            .map_err(|e| Failure::Message(format!("cannot watch for {name}: {e}")))?;
    }
    Ok(())
}

/// The identity of this campaign's records (`campaign.json`).
fn identity(args: &RunArgs) -> RunIdentity {
    RunIdentity {
        config: args.config.clone(),
        first_seed: args.seed.unwrap_or(0),
        count: args.count,
        instrs: args.instrs,
        io: match args.io {
            IoMode::Ideal => "ideal",
            IoMode::Stall => "stall",
        }
        .into(),
        timing: args.timing.map(|t| t.name().to_string()),
        dut: args.dut.name().into(),
        inject_fault: args.inject_fault.clone(),
        initial_state: match args.initial_state {
            InitialState::Random => "random",
            InitialState::Zero => "zero",
        }
        .into(),
        steer: args.steer,
    }
}

/// A campaign's directory while it runs: its header, the records of the
/// runs before this one, and the journal this run appends to.
struct RunStore {
    dir: PathBuf,
    header: CampaignHeader,
    prior: Vec<SeedRecord>,
    journal: Option<Journal>,
}

impl RunStore {
    /// Opens `dir` for a run of `identity` (shard `shard`): with `resume`,
    /// the records there are kept (the identity must be the same); without
    /// it, records there are moved to `results.previous.jsonl`.
    fn open(
        dir: &Path,
        identity: RunIdentity,
        shard: Option<Shard>,
        resume: bool,
    ) -> Result<RunStore, Failure> {
        let message = Failure::Message;
        let (read, notes) =
            journal::read_for_run::<crate::regress::results::SeedRecord>(dir, resume)
                .map_err(message)?;
        let existing = CampaignHeader::read(dir).map_err(message)?;
        let shard_text = shard.map(|s| s.to_string());
        let mut header = match existing {
            Some(h) if resume => {
                if let Some(d) = identity.difference(&h.identity) {
                    return Err(Failure::Message(format!(
                        "--resume: this campaign is not the one in {}: {d}",
                        dir.join(journal::CAMPAIGN_FILE).display()
                    )));
                }
                if h.shard != shard_text {
                    return Err(Failure::Message(format!(
                        "--resume: {} is shard {} and this run shard {}",
                        dir.join(journal::CAMPAIGN_FILE).display(),
                        h.shard.as_deref().unwrap_or("(none)"),
                        shard_text.as_deref().unwrap_or("(none)")
                    )));
                }
                h
            }
            _ => CampaignHeader::new(identity, shard_text),
        };
        for note in &notes {
            eprintln!("pccx-cosim: {note}");
        }
        let journal = Journal::open(dir, read.whole_len).map_err(message)?;
        header.runs.push(journal::this_run());
        header.write(dir).map_err(message)?;
        Ok(RunStore {
            dir: dir.to_path_buf(),
            header,
            prior: read.records,
            journal: Some(journal),
        })
    }

    fn take_journal(&mut self) -> Journal {
        self.journal.take().expect("the journal is taken once")
    }

    /// Records how this run ended in the header, and puts the records on
    /// disk.
    fn finish(
        &mut self,
        report: &campaign::CampaignReport,
        wall_seconds: f64,
        seeds: u64,
        ended: &str,
        journal: Option<&Mutex<Journal>>,
    ) -> Result<(), Failure> {
        if let Some(journal) = journal {
            journal
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .sync()
                .map_err(Failure::Message)?;
        }
        if !report.reference_model.is_empty() {
            self.header.reference_model = Some(report.reference_model.clone());
            self.header.dut_model = Some(report.dut_model.clone());
        }
        if let Some(run) = self.header.runs.last_mut() {
            run.wall_seconds = Some(wall_seconds);
            run.seeds = Some(seeds);
            run.ended = Some(ended.into());
        }
        self.header.write(&self.dir).map_err(Failure::Message)
    }
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
    if args.initial_state == InitialState::Zero {
        flags += " --initial-state zero";
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
        ("--coverage-curve", &args.coverage_curve),
        ("--report", &args.report),
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
    if let (None, Some(campaign::ModelFailure::Timeout(_))) = (&r.mismatch, &r.failure) {
        let c = options.config.name;
        let limit = args.seed_timeout.map_or(0.0, |d| d.as_secs_f64());
        say!(
            "    reproduce: pccx-cosim --seed {} --instrs {} --config {c}{} --seed-timeout {limit}",
            r.seed,
            options.instrs,
            reproduce_flags(args)
        );
        if let Some(path) = &r.artefacts.repro {
            say!(
                "    repro: {}   (replay: pccx-cosim replay {}, under the same limit)",
                path.display(),
                path.display()
            );
        }
        for problem in &r.artefacts.problems {
            say!("    note: {problem}");
        }
    }
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
            say!("    waveform: {}", crate::triage::wave::viewer_hint(path));
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

/// The reference of a campaign worker: the golden model, or the golden
/// model inside the functional-coverage probe (`--coverage`).
enum ReferenceModel {
    Plain(Box<dyn NpuModel>),
    Probe(Box<Probe>),
}

/// One worker of the campaign: its models, its recorder of mismatches.
struct CampaignWorker<'a> {
    reference: ReferenceModel,
    dut: Box<dyn NpuModel>,
    recorder: Recorder<'a>,
    bar: Option<ProgressBar>,
    mismatched: &'a AtomicU64,
    /// Where this worker writes its RTL coverage counters at the end.
    rtl_coverage: Option<PathBuf>,
    /// `--seed-timeout`, which a timeout's repro records.
    seed_timeout: Option<Duration>,
    /// The counts after the last case, which the next case's are compared
    /// with (steering and the curve).
    case_counts: CaseCounts,
}

/// What a worker has counted so far, functional and RTL, so that the bins
/// and points a case moved are those whose counts grew during it.
struct CaseCounts {
    bins: Vec<u64>,
    /// Where the RTL counters are written after each case (with RTL
    /// coverage), and each point's count then.
    rtl_file: Option<PathBuf>,
    rtl: HashMap<String, u64>,
}

impl CaseCounts {
    fn new(rtl_file: Option<PathBuf>) -> CaseCounts {
        CaseCounts {
            bins: Vec::new(),
            rtl_file,
            rtl: HashMap::new(),
        }
    }

    /// The bins and points whose counts grew since the last call.
    fn grown(&mut self, bins: &[u64], dut: &mut dyn NpuModel) -> CaseFeedback {
        let mut feedback = CaseFeedback::default();
        self.bins.resize(bins.len(), 0);
        for (i, (&now, before)) in bins.iter().zip(&mut self.bins).enumerate() {
            if now > *before {
                feedback.bins.push(i);
            }
            *before = now;
        }
        if let (Some(path), Some(sim)) = (&self.rtl_file, dut.sim_controls()) {
            // A point the case moved is one the steering may reward; a
            // counter file that cannot be written or read leaves it to the
            // functional bins (the campaign's own file reports the error).
            let points = sim
                .write_coverage(path)
                .and_then(|()| std::fs::read_to_string(path).map_err(|e| e.to_string()))
                .and_then(|text| rtl_coverage::point_counts(&text));
            if let Ok(points) = points {
                for (key, kind, count) in points {
                    let before = self.rtl.entry(key.clone()).or_insert(0);
                    if count > *before {
                        feedback.rtl.push((key, kind));
                    }
                    *before = count;
                }
            }
            let _ = std::fs::remove_file(path);
        }
        feedback
    }
}

/// What a worker hands back: its functional coverage, and the file its RTL
/// counters went to.
struct WorkerDone {
    coverage: Option<Coverage>,
    rtl_coverage: Option<Result<PathBuf, String>>,
}

impl campaign::Worker for CampaignWorker<'_> {
    type Done = WorkerDone;

    fn models(&mut self) -> (&mut dyn NpuModel, &mut dyn NpuModel) {
        let reference: &mut dyn NpuModel = match &mut self.reference {
            ReferenceModel::Plain(m) => &mut **m,
            ReferenceModel::Probe(p) => &mut **p,
        };
        (reference, &mut *self.dut)
    }

    fn start_case(&mut self, case: u64) {
        if let ReferenceModel::Probe(p) = &mut self.reference {
            p.set_case_number(case);
        }
    }

    fn on_mismatch(&mut self, case: &TestCase, m: &Mismatch) -> Artefacts {
        let mismatched = self.mismatched.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            let what = if self.recorder.shrink_with.is_some() {
                "shrinking"
            } else {
                "recording"
            };
            bar.set_message(format!(
                "{mismatched} mismatched, {what} seed {}",
                case.seed
            ));
        }
        let artefacts = self.recorder.record(case, m);
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} mismatched",
                self.mismatched.load(Ordering::Relaxed)
            ));
        }
        artefacts
    }

    fn on_timeout(&mut self, case: &TestCase, timeout: &Mismatch) -> Artefacts {
        self.recorder
            .record_timeout(case, timeout, self.seed_timeout)
    }

    fn case_feedback(&mut self) -> CaseFeedback {
        let bins = match &self.reference {
            ReferenceModel::Probe(p) => p.coverage().counts().to_vec(),
            ReferenceModel::Plain(_) => Vec::new(),
        };
        self.case_counts.grown(&bins, &mut *self.dut)
    }

    fn finish(mut self) -> WorkerDone {
        let rtl_coverage = self.rtl_coverage.take().map(|path| {
            let name = self.dut.name().to_string();
            match self.dut.sim_controls() {
                Some(sim) => sim.write_coverage(&path).map(|()| path),
                None => Err(format!("the `{name}` model has no coverage counters")),
            }
        });
        WorkerDone {
            coverage: match self.reference {
                ReferenceModel::Probe(p) => Some(p.into_coverage()),
                ReferenceModel::Plain(_) => None,
            },
            rtl_coverage,
        }
    }
}
