//! A campaign: many seeds, one case each, reference against DUT, with a
//! result per seed and a summary that survives an infrastructure failure.

use crate::config::HwConfig;
use crate::regress::results::CampaignFile;
use crate::scoreboard::{run_case_resident, Mismatch, Outcome, Resident, TimingMode};
use crate::stimulus::{GenOptions, TestCase};
use crate::triage::repro::Artefacts;
use crate::triage::signature::Signature;
use pccx_golden::model::NpuModel;
use serde_json::Value;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignOptions {
    pub first_seed: u64,
    /// Seeds `first_seed .. first_seed + count`.
    pub count: u64,
    /// Instructions per program.
    pub instrs: usize,
    pub config: HwConfig,
    /// Stall I/O (`--io stall`) instead of ideal I/O.
    pub stall_io: bool,
    /// The timing check; `None`: exact under ideal I/O, order under stall.
    pub timing: Option<TimingMode>,
}

impl CampaignOptions {
    pub fn gen_options(&self) -> GenOptions {
        GenOptions {
            stall_io: self.stall_io,
            ..GenOptions::for_config(&self.config, self.instrs)
        }
    }

    /// The seeds in order; a seed range that would pass `u64::MAX` ends
    /// there.
    pub fn seeds(&self) -> impl Iterator<Item = u64> {
        let first = self.first_seed;
        (0..self.count).map_while(move |i| first.checked_add(i))
    }
}

/// What one seed did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedResult {
    pub seed: u64,
    pub instructions: u32,
    pub cycles: Option<u64>,
    pub wall: Duration,
    /// `None`: reference and DUT agreed on everything.
    pub mismatch: Option<Mismatch>,
    /// The repro and the shrunk program written for a mismatch.
    pub artefacts: Artefacts,
}

impl SeedResult {
    /// The one-line verdict the CLI prints.
    pub fn line(&self) -> String {
        match &self.mismatch {
            None => {
                let cycles = self
                    .cycles
                    .map(|c| format!(", {c} cycles"))
                    .unwrap_or_default();
                format!(
                    "seed {}: ok, {} instrs{cycles}",
                    self.seed, self.instructions
                )
            }
            Some(m) => {
                let at = m.seq.map(|s| format!(" at seq {s}")).unwrap_or_default();
                let cycle = m.cycle.map(|c| format!(", cycle {c}")).unwrap_or_default();
                format!(
                    "seed {}: MISMATCH {}{at}{cycle}: {}",
                    self.seed,
                    m.kind,
                    m.detail()
                )
            }
        }
    }

    pub fn signature(&self) -> Option<Signature> {
        self.mismatch.as_ref().map(Signature::of)
    }
}

/// Why a campaign stopped before its last seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfraError {
    pub seed: u64,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Seeds that ran to a verdict.
    pub seeds: u64,
    pub matched: u64,
    pub mismatched: u64,
    pub instructions: u64,
    /// Sum of the seeds' cycle counts; `None` when no seed reported any
    /// (the golden model has no notion of time).
    pub cycles: Option<u64>,
    pub wall: Duration,
    pub stopped: Option<InfraError>,
    /// Busy cycles per engine (GEMV, GEMM, MEM, MEMSET, CVO), summed.
    pub engine_busy: [u64; 5],
}

/// Engine names in `engine_busy` order.
pub const ENGINE_NAMES: [&str; 5] = ["GEMV", "GEMM", "MEM", "MEMSET", "CVO"];

impl Summary {
    /// The summary of a campaign in which no seed ran (`stopped` says why,
    /// if it stopped).
    pub fn nothing_ran(stopped: Option<InfraError>) -> Summary {
        Summary {
            seeds: 0,
            matched: 0,
            mismatched: 0,
            instructions: 0,
            cycles: None,
            wall: Duration::ZERO,
            stopped,
            engine_busy: [0; 5],
        }
    }

    pub fn cycles_per_second(&self) -> Option<f64> {
        let secs = self.wall.as_secs_f64();
        self.cycles
            .map(|c| if secs > 0.0 { c as f64 / secs } else { 0.0 })
    }

    pub fn text(&self) -> String {
        let (cycles, rate) = match (self.cycles, self.cycles_per_second()) {
            (Some(c), Some(r)) => (format!("{c} cycles"), format!("{r:.0} simulated cycles/s")),
            _ => ("no cycles reported".into(), "no simulated cycles/s".into()),
        };
        let mut s = format!(
            "summary: {} seeds, {} matched, {} mismatched, {} instructions, {cycles}, \
             {:.3} s wall, {rate}",
            self.seeds,
            self.matched,
            self.mismatched,
            self.instructions,
            self.wall.as_secs_f64(),
        );
        if let Some(cycles) = self.cycles.filter(|&c| c > 0) {
            let shares: Vec<String> = ENGINE_NAMES
                .iter()
                .zip(self.engine_busy)
                .map(|(name, busy)| format!("{name} {:.1}%", 100.0 * busy as f64 / cycles as f64))
                .collect();
            s.push_str(&format!(
                "\nutilisation (busy cycles / simulated cycles): {}",
                shares.join(", ")
            ));
        }
        if let Some(e) = &self.stopped {
            s.push_str(&format!(
                "\nstopped at seed {} by an infrastructure error: {}",
                e.seed, e.message
            ));
        }
        s
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignReport {
    pub options: CampaignOptions,
    pub reference_model: String,
    pub dut_model: String,
    pub results: Vec<SeedResult>,
    pub summary: Summary,
}

impl CampaignReport {
    /// The results file (`--json`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(CampaignFile::of(self)).expect("campaign reports serialise")
    }

    /// The mismatched seeds grouped by signature: the most frequent
    /// signature first (then the one seen first), seeds in order.
    pub fn failures_by_signature(&self) -> Vec<(Signature, Vec<u64>)> {
        let mut groups: BTreeMap<Signature, Vec<u64>> = BTreeMap::new();
        for r in &self.results {
            if let Some(s) = r.signature() {
                groups.entry(s).or_default().push(r.seed);
            }
        }
        let mut groups: Vec<(Signature, Vec<u64>)> = groups.into_iter().collect();
        groups.sort_by_key(|(_, seeds)| (std::cmp::Reverse(seeds.len()), seeds[0]));
        groups
    }

    /// `failures by signature: l2-writes/MEM/data x3 (seeds 4, 9, 17)`, one
    /// line per signature (the later ones indented under the first);
    /// `None` when nothing mismatched.
    pub fn signature_text(&self) -> Option<String> {
        const SHOWN: usize = 10;
        let lines: Vec<String> = self
            .failures_by_signature()
            .iter()
            .map(|(s, seeds)| {
                let mut list: Vec<String> = seeds.iter().take(SHOWN).map(u64::to_string).collect();
                if seeds.len() > SHOWN {
                    list.push(format!("... {} more", seeds.len() - SHOWN));
                }
                let noun = if seeds.len() == 1 { "seed" } else { "seeds" };
                format!("{s} x{} ({noun} {})", seeds.len(), list.join(", "))
            })
            .collect();
        let head = "failures by signature: ";
        (!lines.is_empty()).then(|| {
            let indent = format!("\n{}", " ".repeat(head.len()));
            format!("{head}{}", lines.join(&indent))
        })
    }
}

/// Runs every seed of `options` on the two models (reset between seeds),
/// calling `on_result` after each. Mismatches do not stop the campaign; an
/// infrastructure error (a model error, or a panic inside a model) does,
/// and is recorded in the summary with everything that ran before it.
pub fn run_campaign(
    options: &CampaignOptions,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    on_result: &mut dyn FnMut(&SeedResult),
) -> CampaignReport {
    run_campaign_with(
        options,
        reference,
        dut,
        &mut |_, _| Artefacts::default(),
        on_result,
    )
}

/// [`run_campaign`], calling `on_mismatch` with the case and its first
/// mismatch before `on_result` for each seed that mismatches (to write a
/// repro and shrink the case: `repro::Recorder::record`).
pub fn run_campaign_with(
    options: &CampaignOptions,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    on_mismatch: &mut dyn FnMut(&TestCase, &Mismatch) -> Artefacts,
    on_result: &mut dyn FnMut(&SeedResult),
) -> CampaignReport {
    let started = Instant::now();
    let seeds = SeedRunner::new(options);
    let mut tally = Tally::default();
    // The two models are reused from seed to seed; only the words a seed
    // changes are loaded (scoreboard/resident.rs).
    let mut resident = Resident::new();
    for seed in options.seeds() {
        let ran = seeds.start(seed, reference, dut, &mut resident).map(|ran| {
            let artefacts = match &ran.outcome.first_mismatch {
                Some(m) => on_mismatch(&ran.case, m),
                None => Artefacts::default(),
            };
            ran.finish(artefacts)
        });
        match ran {
            Ok(done) => {
                on_result(&done.result);
                tally.add(done);
            }
            Err(e) => {
                tally.stopped = Some(e);
                break;
            }
        }
    }
    tally.report(
        options,
        reference.name().to_string(),
        dut.name().to_string(),
        started,
    )
}

/// What a worker of [`run_campaign_jobs`] runs its seeds on: a model pair
/// of its own, made on its thread (a Verilated model lives on the thread
/// that made it), and what it does with a mismatch.
pub trait Worker {
    /// What the worker hands back when the campaign is over (its coverage,
    /// say).
    type Done: Send;
    /// The reference and the DUT.
    fn models(&mut self) -> (&mut dyn NpuModel, &mut dyn NpuModel);
    /// Called before the seed at position `case` (from 1) of the campaign,
    /// for numbering that must not depend on which worker ran what.
    fn start_case(&mut self, _case: u64) {}
    /// A seed mismatched: write its repro, shrink it, dump its waveform.
    fn on_mismatch(&mut self, _case: &TestCase, _mismatch: &Mismatch) -> Artefacts {
        Artefacts::default()
    }
    fn finish(self) -> Self::Done;
}

/// What a worker sends the thread that reports.
enum Message<D> {
    Opened(Result<(String, String), String>),
    Seed(u64, Box<SeedDone>),
    Stopped(u64, InfraError),
    Finished(D),
}

/// [`run_campaign_with`] on `jobs` workers, each with its own models made
/// by `make_worker(k)` for worker k. Seeds are handed out in order, one at
/// a time, to whichever worker is free; `on_result` sees the results in
/// seed order, and the report is the one `jobs = 1` gives in every field
/// but wall times. An infrastructure error at a seed stops the campaign
/// there, as with one worker: later seeds that other workers finished are
/// dropped. A worker that cannot be made stops the campaign before its
/// first seed. Returns the report and what each worker handed back.
pub fn run_campaign_jobs<W: Worker>(
    options: &CampaignOptions,
    jobs: usize,
    make_worker: &(dyn Fn(usize) -> Result<W, String> + Sync),
    on_result: &mut dyn FnMut(&SeedResult),
) -> (CampaignReport, Vec<W::Done>) {
    let started = Instant::now();
    let count = options.seeds().count() as u64;
    let jobs = jobs.clamp(1, count.max(1).min(usize::MAX as u64) as usize);
    let next = AtomicU64::new(0);
    // The position of the earliest infrastructure error; no seed after it
    // is started.
    let stop_at = AtomicU64::new(u64::MAX);
    let opened = Barrier::new(jobs);
    let open_failed = AtomicBool::new(false);
    let seeds = SeedRunner::new(options);
    let (tx, rx) = mpsc::channel::<Message<W::Done>>();
    let mut tally = Tally::default();
    let mut names: Option<(String, String)> = None;
    let mut open_error: Option<String> = None;
    let mut done = Vec::new();
    std::thread::scope(|scope| {
        for k in 0..jobs {
            let tx = tx.clone();
            let (next, stop_at, opened, open_failed, seeds) =
                (&next, &stop_at, &opened, &open_failed, &seeds);
            scope.spawn(move || {
                let worker = catch_unwind(AssertUnwindSafe(|| make_worker(k)))
                    .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_message(&panic))));
                let mut worker = match worker {
                    Ok(mut w) => {
                        let (r, d) = w.models();
                        let names = (r.name().to_string(), d.name().to_string());
                        let _ = tx.send(Message::Opened(Ok(names)));
                        w
                    }
                    Err(e) => {
                        let _ = tx.send(Message::Opened(Err(e)));
                        open_failed.store(true, Ordering::SeqCst);
                        opened.wait();
                        return;
                    }
                };
                opened.wait();
                if !open_failed.load(Ordering::SeqCst) {
                    let mut resident = Resident::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::SeqCst);
                        if index >= count || index > stop_at.load(Ordering::SeqCst) {
                            break;
                        }
                        worker.start_case(index + 1);
                        let seed = options.first_seed + index;
                        let ran = {
                            let (reference, dut) = worker.models();
                            seeds.start(seed, reference, dut, &mut resident)
                        };
                        let ran = ran.map(|ran| {
                            let artefacts = match &ran.outcome.first_mismatch {
                                Some(m) => worker.on_mismatch(&ran.case, m),
                                None => Artefacts::default(),
                            };
                            ran.finish(artefacts)
                        });
                        match ran {
                            Ok(seed_done) => {
                                let _ = tx.send(Message::Seed(index, Box::new(seed_done)));
                            }
                            Err(e) => {
                                stop_at.fetch_min(index, Ordering::SeqCst);
                                let _ = tx.send(Message::Stopped(index, e));
                                break;
                            }
                        }
                    }
                }
                let _ = tx.send(Message::Finished(worker.finish()));
            });
        }
        drop(tx);
        // Results arrive in any order; they are reported in seed order.
        let mut waiting: BTreeMap<u64, Box<SeedDone>> = BTreeMap::new();
        let mut reported = 0u64;
        let mut stopped: Option<(u64, InfraError)> = None;
        for message in rx {
            match message {
                Message::Opened(Ok(pair)) => {
                    names.get_or_insert(pair);
                }
                Message::Opened(Err(e)) => {
                    open_error.get_or_insert(e);
                }
                Message::Seed(index, seed_done) => {
                    waiting.insert(index, seed_done);
                }
                Message::Stopped(index, e) => {
                    if stopped.as_ref().is_none_or(|(at, _)| index < *at) {
                        stopped = Some((index, e));
                    }
                }
                Message::Finished(d) => done.push(d),
            }
            let limit = stopped.as_ref().map_or(u64::MAX, |(at, _)| *at);
            while reported < limit {
                let Some(seed_done) = waiting.remove(&reported) else {
                    break;
                };
                on_result(&seed_done.result);
                tally.add(*seed_done);
                reported += 1;
            }
        }
        if let Some((_, e)) = stopped {
            tally.stopped = Some(e);
        }
    });
    let (reference, dut) = names.unwrap_or_default();
    if let Some(message) = open_error {
        let mut report = tally.report(options, reference, dut, started);
        report.results.clear();
        report.summary = Summary::nothing_ran(Some(InfraError {
            seed: options.first_seed,
            message,
        }));
        return (report, done);
    }
    (tally.report(options, reference, dut, started), done)
}
/// Runs one seed of a campaign: the part every worker shares.
struct SeedRunner {
    gen: GenOptions,
    timing: Option<TimingMode>,
}

/// A seed that ran to a verdict, before its mismatch (if any) is recorded.
struct Ran {
    case: TestCase,
    outcome: Outcome,
    wall: Duration,
}

/// A seed's result and the busy cycles it adds to the summary.
struct SeedDone {
    result: SeedResult,
    engine_busy: [u64; 5],
}

impl SeedRunner {
    fn new(options: &CampaignOptions) -> SeedRunner {
        SeedRunner {
            gen: options.gen_options(),
            timing: options.timing,
        }
    }

    /// Generates and runs `seed`; an error or a panic in a model is an
    /// infrastructure error at that seed.
    fn start(
        &self,
        seed: u64,
        reference: &mut dyn NpuModel,
        dut: &mut dyn NpuModel,
        resident: &mut Resident,
    ) -> Result<Ran, InfraError> {
        let t0 = Instant::now();
        let case = TestCase::generate(seed, &self.gen);
        let timing = self.timing.unwrap_or(TimingMode::default_for(&case));
        let ran = catch_unwind(AssertUnwindSafe(|| {
            run_case_resident(&case, reference, dut, timing, resident)
        }));
        let outcome = match ran {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => {
                return Err(InfraError {
                    seed,
                    message: e.to_string(),
                })
            }
            Err(panic) => {
                resident.forget();
                return Err(InfraError {
                    seed,
                    message: format!("a model panicked: {}", panic_message(&panic)),
                });
            }
        };
        Ok(Ran {
            case,
            outcome,
            wall: t0.elapsed(),
        })
    }
}

impl Ran {
    fn finish(self, artefacts: Artefacts) -> SeedDone {
        SeedDone {
            engine_busy: self.outcome.engine_busy,
            result: SeedResult {
                seed: self.case.seed,
                instructions: self.outcome.instructions,
                cycles: self.outcome.cycles,
                wall: self.wall,
                mismatch: self.outcome.first_mismatch,
                artefacts,
            },
        }
    }
}

/// The results of a campaign so far, in seed order.
#[derive(Default)]
struct Tally {
    results: Vec<SeedResult>,
    engine_busy: [u64; 5],
    stopped: Option<InfraError>,
}

impl Tally {
    fn add(&mut self, done: SeedDone) {
        for (total, busy) in self.engine_busy.iter_mut().zip(done.engine_busy) {
            *total += busy;
        }
        self.results.push(done.result);
    }

    fn report(
        self,
        options: &CampaignOptions,
        reference_model: String,
        dut_model: String,
        started: Instant,
    ) -> CampaignReport {
        let results = self.results;
        let mismatched = results.iter().filter(|r| r.mismatch.is_some()).count() as u64;
        let summary = Summary {
            seeds: results.len() as u64,
            matched: results.len() as u64 - mismatched,
            mismatched,
            instructions: results.iter().map(|r| u64::from(r.instructions)).sum(),
            cycles: results.iter().filter_map(|r| r.cycles).reduce(|a, b| a + b),
            wall: started.elapsed(),
            stopped: self.stopped,
            engine_busy: self.engine_busy,
        };
        CampaignReport {
            options: options.clone(),
            reference_model,
            dut_model,
            results,
            summary,
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoreboard::{CheckKind, Difference};

    fn result(seed: u64, kind: Option<CheckKind>) -> SeedResult {
        SeedResult {
            seed,
            instructions: 1,
            cycles: None,
            wall: Duration::ZERO,
            mismatch: kind.map(|kind| Mismatch {
                kind,
                seq: Some(0),
                word: Some(0x5000_0000_0000_0000),
                cycle: None,
                difference: match kind {
                    CheckKind::RetireOpcode => Difference::RetireOpcode {
                        reference: 7,
                        dut: 0,
                    },
                    _ => Difference::RetireErr {
                        reference: 1,
                        dut: 0,
                    },
                },
                reference: String::new(),
                dut: String::new(),
                afterwards: None,
                reference_model: "golden".into(),
                dut_model: "rtl".into(),
            }),
            artefacts: Artefacts::default(),
        }
    }

    fn report(results: Vec<SeedResult>) -> CampaignReport {
        CampaignReport {
            options: CampaignOptions {
                first_seed: 0,
                count: results.len() as u64,
                instrs: 1,
                config: crate::config::default_config(),
                stall_io: false,
                timing: None,
            },
            reference_model: "golden".into(),
            dut_model: "rtl".into(),
            results,
            summary: Summary::nothing_ran(None),
        }
    }

    #[test]
    fn failures_are_grouped_by_signature_most_frequent_first() {
        use CheckKind as K;
        let mut results = vec![
            result(1, Some(K::RetireOpcode)),
            result(2, None),
            result(3, Some(K::RetireErr)),
        ];
        results.extend((4..16).map(|seed| result(seed, Some(K::RetireErr))));
        let text = report(results).signature_text().unwrap();
        assert_eq!(
            text,
            "failures by signature: retire-err/decoder/err x13 \
             (seeds 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... 3 more)\n\
             \x20                      retire-opcode/decoder/opcode x1 (seed 1)"
        );
        assert_eq!(report(vec![result(0, None)]).signature_text(), None);
    }
}
