//! A campaign from its request to its outcome: the run's directory and journal, the workers, the per-seed lines, the coverage, the report files and how it ended.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::worker::{CampaignWorker, CaseCounts, ReferenceModel};
use super::{EXIT_ERROR, EXIT_FAILED, EXIT_HUNG, EXIT_INTERRUPTED};
use crate::config::{self, HwConfig};
use crate::coverage::rtl as rtl_coverage;
use crate::coverage::{Coverage, Probe};
use crate::env::models::{self, Setup};
use crate::regress::campaign::{self, CampaignOptions, RunControls, Shard};
use crate::regress::identity::{self, InitialState, IoMode, Rerun, RunEnded, RunIdentity};
use crate::regress::journal::{self, CampaignHeader};
use crate::regress::junit;
use crate::regress::results::{CampaignFile, RunFacts, SeedRecord, SeedVerdict, StoppedRecord};
use crate::regress::steer::{CurveFile, CURVE_FORMAT};
use crate::regress::store::RunStore;
use crate::scoreboard::{self, CheckKind, TimingMode};
use crate::triage::repro::Recorder;
use crate::triage::signature::Signature;
use pccx_golden::model::Observation;

/// Everything a campaign is asked to do, typed (the CLI's flags, parsed).
#[derive(Clone, Debug)]
pub struct CampaignRequest {
    /// What the seeds do; `identity.config` names a configuration.
    pub identity: RunIdentity,
    /// Run only this shard's seeds.
    pub shard: Option<Shard>,
    /// Workers; `None`: one per core (one with a fault).
    pub jobs: Option<usize>,
    /// The run's directory (`--out`): repros, waves, the journal.
    pub out: Option<PathBuf>,
    /// Continue the run whose records `out` holds.
    pub resume: bool,
    /// Take the directory's lock from a holder that cannot be told gone.
    pub break_lock: bool,
    pub seed_timeout: Option<Duration>,
    pub no_shrink: bool,
    /// Cycles of waveform before a mismatch (0: none).
    pub wave_window: u64,
    pub outputs: Outputs,
}

/// The files a campaign writes when asked (each flag's file).
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub coverage: Option<PathBuf>,
    pub rtl_coverage: Option<PathBuf>,
    pub coverage_curve: Option<PathBuf>,
    pub report: Option<PathBuf>,
}

impl Outputs {
    fn named(&self) -> [(&'static str, &Option<PathBuf>); 6] {
        [
            ("--json", &self.json),
            ("--junit", &self.junit),
            ("--coverage", &self.coverage),
            ("--rtl-coverage", &self.rtl_coverage),
            ("--coverage-curve", &self.coverage_curve),
            ("--report", &self.report),
        ]
    }
}

/// How a campaign ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CampaignEnd {
    /// Every seed run matched.
    Matched,
    /// Some seed mismatched or timed out.
    Failed,
    /// A model failed (an infrastructure error); the seeds before it are
    /// recorded.
    Stopped,
    /// SIGTERM or SIGINT; what finished is recorded.
    Interrupted,
}

impl CampaignEnd {
    /// The process's exit status (cli/mod.rs lists them).
    pub fn exit_code(self) -> u8 {
        match self {
            CampaignEnd::Matched => 0,
            CampaignEnd::Failed => EXIT_FAILED,
            CampaignEnd::Stopped => EXIT_ERROR,
            CampaignEnd::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

impl CampaignRequest {
    /// A request for the seeds `first_seed ..` of `identity` with every
    /// other setting at the CLI's default.
    pub fn new(identity: RunIdentity) -> CampaignRequest {
        CampaignRequest {
            identity,
            shard: None,
            jobs: None,
            out: None,
            resume: false,
            break_lock: false,
            seed_timeout: None,
            no_shrink: false,
            wave_window: crate::triage::wave::DEFAULT_WINDOW,
            outputs: Outputs::default(),
        }
    }

    /// The configuration the identity names.
    fn config(&self) -> Result<HwConfig, String> {
        config::by_name(&self.identity.config).ok_or_else(|| {
            format!(
                "--config {}: no such configuration (hw/configs has {})",
                self.identity.config,
                config::names().join(", ")
            )
        })
    }

    /// The campaign's options (before the seeds a resumed run skips).
    fn options(&self, config: HwConfig) -> CampaignOptions {
        let id = &self.identity;
        CampaignOptions {
            first_seed: id.first_seed,
            count: id.count,
            instrs: id.instrs,
            config,
            stall_io: id.io == IoMode::Stall,
            timing: id.timing,
            shard: self.shard,
            skip: BTreeSet::new(),
            random_init: id.initial_state == InitialState::Random,
            steer: id.steer,
            curve: self.outputs.coverage_curve.is_some(),
        }
    }

    /// The checks of flags that cannot go together, and the workers: an
    /// error says which flags and why.
    fn check(&self) -> Result<usize, String> {
        let id = &self.identity;
        if id.count > 0 && id.first_seed.checked_add(id.count - 1).is_none() {
            return Err(format!(
                "--seed {} --count {}: the seed range passes 2^64 - 1; the last seed is {}",
                id.first_seed,
                id.count,
                u64::MAX
            ));
        }
        if id.steer && self.resume {
            return Err(
                "--steer cannot --resume: a steered case is made from the coverage of every case \
                 before it, which a resumed run no longer has; run the campaign again (or shard \
                 it: each shard steers on its own seeds)"
                    .into(),
            );
        }
        if id.io == IoMode::Stall && id.timing == Some(TimingMode::Exact) {
            return Err(
                "--timing exact needs ideal I/O: with --io stall the cycles depend on the stall \
                 schedule, which the timing model does not predict; use --timing order"
                    .into(),
            );
        }
        // A fault counts drains and retires across the seeds of its DUT (the
        // second drain hangs, say), so which seed it hits depends on which
        // seeds one DUT runs: a fault-injecting campaign runs on one worker.
        match (id.inject_fault, self.jobs) {
            (Some(_), Some(n)) if n > 1 => Err(format!(
                "--jobs {n} with --inject-fault: a fault counts events across the seeds \
                 of its DUT, so a fault-injecting campaign runs on one worker; drop --jobs"
            )),
            (Some(_), _) => Ok(1),
            (None, given) => super::worker_count(given),
        }
    }

    /// Fails before the first seed if an output file cannot be written, so
    /// a bad path does not cost a whole campaign. Each file is opened for
    /// appending and removed again if it did not exist; the reports are
    /// written in full at the end.
    fn check_output_paths(&self) -> Result<(), String> {
        for (flag, path) in self.outputs.named() {
            if let Some(path) = path {
                let existed = path.exists();
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("{flag} {}: cannot write: {e}", path.display()))?;
                if !existed {
                    // Leave no empty file behind if the campaign fails to start.
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        Ok(())
    }
}

/// Runs the campaign `request`: prints a line per seed (with its reproduce
/// command and files when it fails) and the summary, records every seed in
/// `--out`'s journal as it finishes, writes the files asked for, and says
/// how it ended. `Err` is a usage or infrastructure error before or after
/// the seeds (a bad flag, an unwritable file). A seed stuck for good ends
/// the process with [`EXIT_HUNG`], its record written.
pub fn run(request: &CampaignRequest) -> Result<CampaignEnd, String> {
    let config = request.config()?;
    let mut options = request.options(config);
    // The run's directory first: a report may be asked for inside it.
    if let Some(dir) = &request.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--out {}: cannot create: {e}", dir.display()))?;
    }
    request.check_output_paths()?;
    let jobs = request.check()?;
    let id = &request.identity;
    let outputs = &request.outputs;
    // Watched from before the directory is written, so that a signal
    // never finds the run half set up.
    let stop = Arc::new(AtomicBool::new(false));
    super::watch_for_stop_signals(&stop)?;
    // The campaign's directory: its header and records, and what a resumed
    // run has already done.
    let mut store: Option<RunStore<CampaignHeader, SeedRecord>> = match &request.out {
        Some(dir) => Some(RunStore::open(
            dir,
            CampaignHeader::new(id.clone(), request.shard),
            request.resume,
            request.break_lock,
        )?),
        None => None,
    };
    if let Some(store) = &store {
        store.end_after_stop(Arc::clone(&stop), super::STOP_GRACE, EXIT_INTERRUPTED);
    }
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
    let mut setup = Setup::new(options.config, id.dut, id.inject_fault);
    setup.observe = id.observe;
    setup.dut_manifest = id.dut_manifest.clone();
    setup.numerics = id.numerics;
    if let Some(line) = setup.other_dut()? {
        say!("{line}");
    }
    if id.observe != Observation::Full {
        let unmade: Vec<&str> = scoreboard::out_of_reach(id.observe)
            .into_iter()
            .map(CheckKind::name)
            .collect();
        say!(
            "observation: the DUT is seen at the {} level (docs/dut-contract.md); checks it cannot make: {}",
            id.observe,
            unmade.join(", ")
        );
    }
    if outputs.rtl_coverage.is_some() {
        setup.rtl_coverage = true;
        setup.check_rtl_coverage()?;
    }
    // Shrinking and waves open DUTs of their own, from the plain build.
    let plain_setup = Setup {
        rtl_coverage: false,
        ..setup.clone()
    };
    let out_dir = request.out.clone().unwrap_or_else(|| PathBuf::from("out"));
    let bar = progress_bar(options.seeds().count() as u64);
    let mismatched = AtomicU64::new(0);
    // With several workers each writes its RTL counters to a file of its
    // own; they are summed into --rtl-coverage at the end.
    let rtl_coverage_part = |k: usize| {
        outputs.rtl_coverage.as_ref().map(|path| {
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
        let probe = outputs.coverage.is_some() || options.steer || options.curve;
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
        let mut recorder = Recorder::new(plain_setup.clone(), out_dir.clone(), request.no_shrink);
        recorder.wave_window = request.wave_window;
        Ok(CampaignWorker {
            reference,
            dut,
            recorder,
            bar: bar.clone(),
            mismatched: &mismatched,
            rtl_coverage: rtl_coverage_part(k),
            seed_timeout: request.seed_timeout,
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
    let mut records: Vec<SeedRecord> = Vec::new();
    let mut journal_error: Option<String> = None;
    let mut print = |r: &campaign::SeedResult| {
        let record = SeedRecord::of(r);
        if let Some(store) = &store {
            if let Err(e) = store.append(&record) {
                // Nothing more can be recorded (the lock was taken over,
                // the disk is full): end the run, as a signal would.
                stop.store(true, Ordering::SeqCst);
                journal_error.get_or_insert(e);
            }
        }
        match &bar {
            Some(bar) => {
                bar.suspend(|| print_result(r, request));
                bar.inc(1);
            }
            None => print_result(r, request),
        }
        records.push(record);
    };
    let on_hung = |seed: u64, message: &str| {
        eprintln!(
            "pccx-cosim: seed {seed} {message}; its record is written, the run ends (exit 4)"
        );
        if let Some(store) = &store {
            let mut record = SeedRecord::error(seed, message);
            record.verdict = SeedVerdict::Timeout;
            let _ = store.append(&record);
            let _ = store.write_ended(RunEnded::Hung);
        }
        std::process::exit(EXIT_HUNG.into());
    };
    let controls = RunControls {
        stop: Some(&stop),
        seed_timeout: request.seed_timeout,
        on_hung: Some(&on_hung),
    };
    let (report, done) =
        campaign::run_campaign_controlled(&options, jobs, &make_worker, &mut print, controls);
    let mut coverage_parts = Vec::new();
    let mut rtl_parts = Vec::new();
    let mut rtl_coverage_written: Option<Result<(), String>> = None;
    for d in done {
        coverage_parts.extend(d.coverage);
        match d.rtl_coverage {
            Some(Ok(part)) => rtl_parts.push(part),
            Some(Err(e)) => rtl_coverage_written = Some(Err(e)),
            None => {}
        }
    }
    let mut coverage = Coverage::sum_concurrent(coverage_parts);
    if let Some(c) = coverage.as_mut() {
        c.case_number = None;
    }
    if let (Some(path), None) = (&outputs.rtl_coverage, &rtl_coverage_written) {
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
            shard: request.shard.map(|s| s.to_string()),
            wall_seconds: earlier_runs + this_run,
            stopped: report.summary.stopped.as_ref().map(StoppedRecord::of),
            interrupted: report.interrupted,
            missing_seeds: Vec::new(),
        },
        all,
    );
    let end = if report.summary.stopped.is_some() {
        CampaignEnd::Stopped
    } else if report.interrupted {
        CampaignEnd::Interrupted
    } else if file.summary.mismatched + file.summary.timeouts > 0 {
        CampaignEnd::Failed
    } else {
        CampaignEnd::Matched
    };
    if let Some(store) = &mut store {
        if !report.reference_model.is_empty() {
            store.header.reference_model = Some(report.reference_model.clone());
            store.header.dut_model = Some(report.dut_model.clone());
        }
        let ended = match end {
            CampaignEnd::Stopped => RunEnded::Stopped,
            CampaignEnd::Interrupted => RunEnded::Interrupted,
            CampaignEnd::Matched | CampaignEnd::Failed => RunEnded::Complete,
        };
        store.finish(this_run, new_records, ended)?;
    }
    say!("{}", file.summary.text());
    if let Some(text) = file.signature_text() {
        say!("{text}");
    }
    if let Some(path) = &outputs.json {
        let text = serde_json::to_string_pretty(&file).expect("JSON values serialise");
        super::write_file(path, text + "\n")?;
    }
    if let Some(path) = &outputs.junit {
        super::write_file(path, junit::render(&file))?;
    }
    let curve = CurveFile {
        format: CURVE_FORMAT.into(),
        version: 1,
        config: options.config.name.to_string(),
        first_seed: options.first_seed,
        count: options.count,
        instrs: options.instrs,
        steer: options.steer,
        rtl: outputs.rtl_coverage.is_some(),
        points: report.curve.clone(),
    };
    if let Some(path) = &outputs.coverage_curve {
        let text = serde_json::to_string_pretty(&curve).expect("JSON values serialise");
        super::write_file(path, text + "\n").map_err(|e| format!("--coverage-curve {e}"))?;
    }
    if let (Some(path), Some(coverage)) = (&outputs.coverage, &coverage) {
        say!("{}", coverage.text());
        let text =
            serde_json::to_string_pretty(&coverage.to_json()).expect("JSON values serialise");
        super::write_file(path, text + "\n")?;
    }
    if let (Some(path), Some(written)) = (&outputs.rtl_coverage, rtl_coverage_written) {
        written?;
        let summary = rtl_coverage::read(path)?;
        say!("{}", summary.text(path));
    }
    if let Some(path) = &outputs.report {
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
                identity: Some(id.clone()),
                runs,
                dirs: vec![out_dir.clone()],
                cluster: None,
            }),
            mutation: None,
            coverage: coverage.as_ref().map(crate::coverage::CoverageFile::of),
            // A steered run samples its curve whether or not it is written.
            curves: (outputs.coverage_curve.is_some() || !curve.points.is_empty())
                .then_some(curve)
                .into_iter()
                .collect(),
            notes: Vec::new(),
            baseline: None,
            workload: None,
        };
        super::write_report(path, &inputs)?;
    }
    if let Some(e) = journal_error {
        return Err(format!("the results could not all be recorded: {e}"));
    }
    match end {
        CampaignEnd::Stopped => {
            if let Some(e) = &report.summary.stopped {
                eprintln!(
                    "pccx-cosim: infrastructure error at seed {}: {}",
                    e.seed, e.message
                );
            }
        }
        CampaignEnd::Interrupted => {
            let resume = match &request.out {
                Some(dir) if !id.steer => format!(
                    "; `{}` continues it",
                    identity::command(&Rerun::Campaign {
                        identity: id,
                        shard: request.shard,
                        dir,
                    })
                ),
                _ => String::new(),
            };
            eprintln!(
                "pccx-cosim: interrupted after {} of {} seeds; the reports hold what finished{resume}",
                file.summary.seeds,
                options.seeds().count() + options.skip.len()
            );
        }
        CampaignEnd::Matched | CampaignEnd::Failed => {}
    }
    Ok(end)
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

/// A seed's line, and for a failure its details, its reproduce command and
/// its files.
fn print_result(r: &campaign::SeedResult, request: &CampaignRequest) {
    say!("{}", SeedRecord::of(r).line());
    let reproduce = |seed_timeout: Option<f64>| {
        identity::command(&Rerun::Seed {
            identity: &request.identity,
            shard: request.shard,
            seed: r.seed,
            seed_timeout,
        })
    };
    if let (None, Some(campaign::ModelFailure::Timeout(_))) = (&r.mismatch, &r.failure) {
        let limit = request.seed_timeout.map_or(0.0, |d| d.as_secs_f64());
        say!("    reproduce: {}", reproduce(Some(limit)));
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
        let id = &request.identity;
        let program = if id.steer {
            String::new()
        } else {
            format!(
                "   (program: pccx-cosim gen --seed {} --instrs {} --config {})",
                r.seed, id.instrs, id.config
            )
        };
        say!("    reproduce: {}{program}", reproduce(None));
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
