//! A campaign: many seeds, one case each, reference against DUT, with a
//! result per seed and a summary that survives an infrastructure failure.

use crate::config::HwConfig;
use crate::regress::steer::{CaseFeedback, CurvePoint, Steer};
use crate::scoreboard::{
    run_case_resident, Mismatch, Outcome, Resident, RetireLatency, TimingMode,
};
use crate::stimulus::{GenOptions, TestCase};
use crate::triage::repro::Artefacts;
use crate::triage::signature::Signature;
use pccx_golden::model::{ModelError, NpuModel};
use pccx_golden::PerEngine;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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
    /// Run only this shard's seeds (`--shard i/n`).
    pub shard: Option<Shard>,
    /// Seeds not to run (those a resumed run's results already hold).
    pub skip: BTreeSet<u64>,
    /// The RTL's state before each reset drawn from the seed (`false`:
    /// zeroed, a plain simulation's); [`GenOptions::random_init`].
    pub random_init: bool,
    /// Cases made from the coverage of the earlier ones (`--steer`,
    /// regress/steer.rs); needs workers that report [`Worker::case_feedback`].
    pub steer: bool,
    /// Keep the coverage-against-programs curve ([`CampaignReport::curve`]).
    pub curve: bool,
}

/// Shard `index` of `count`: the seeds `first_seed + k` with
/// `k mod count == index` (`--shard i/n`, docs/scale-out.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Whether the seed at position `k` of the campaign is this shard's.
    pub fn holds(self, k: u64) -> bool {
        k % self.count == self.index
    }

    /// The shards missing from `given` (the shards of directories being
    /// merged): those of the count every one of them shares that none of
    /// them is. None when some directory is no shard or the counts differ.
    pub fn absent_from(given: &[Option<Shard>]) -> Vec<Shard> {
        let Some(Some(first)) = given.first() else {
            return Vec::new();
        };
        if !given
            .iter()
            .all(|s| s.is_some_and(|s| s.count == first.count))
        {
            return Vec::new();
        }
        (0..first.count)
            .map(|index| Shard {
                index,
                count: first.count,
            })
            .filter(|shard| !given.contains(&Some(*shard)))
            .collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `i/n` with `0 <= i < n`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not a shard: write i/n, as 0/4"))?;
        let number = |t: &str, what: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|e| format!("`{s}`: the shard's {what} `{t}` is not a number: {e}"))
        };
        let (index, count) = (number(i, "index")?, number(n, "count")?);
        if count == 0 || index >= count {
            return Err(format!(
                "`{s}`: a shard index runs from 0 to the count less one (0/{count} .. {}/{count})",
                count.max(1) - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

impl CampaignOptions {
    pub fn gen_options(&self) -> GenOptions {
        GenOptions {
            stall_io: self.stall_io,
            random_init: self.random_init,
            ..GenOptions::for_config(&self.config, self.instrs)
        }
    }

    /// Every seed of the campaign in order, whatever the shard and the
    /// seeds to skip; a seed range that would pass `u64::MAX` ends there.
    pub fn all_seeds(&self) -> impl Iterator<Item = u64> {
        let first = self.first_seed;
        (0..self.count).map_while(move |i| first.checked_add(i))
    }

    /// The seeds this run runs, in order: its shard's, less those to skip.
    pub fn seeds(&self) -> impl Iterator<Item = u64> + '_ {
        let shard = self.shard;
        self.all_seeds()
            .enumerate()
            .filter(move |&(k, _)| shard.is_none_or(|s| s.holds(k as u64)))
            .map(|(_, seed)| seed)
            .filter(|seed| !self.skip.contains(seed))
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
    /// A model failed at this seed, or it ran out of time.
    pub failure: Option<ModelFailure>,
    /// Busy cycles per engine.
    pub engine_busy: PerEngine<u64>,
    /// Latch-to-retire cycles of the DUT's instructions, per engine.
    pub retire_latency: RetireLatency,
    /// The repro and the shrunk program written for a mismatch.
    pub artefacts: Artefacts,
}

/// How a seed ended without a verdict of the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelFailure {
    /// A model error (a watchdog, a backdoor access out of range) or a
    /// panic inside a model: an infrastructure error, which stops the
    /// campaign.
    Error(String),
    /// The seed ran past its wall-clock limit (`--seed-timeout`): what a
    /// timeout's repro records, as a mismatch of kind `timeout`.
    Timeout(Box<Mismatch>),
}

impl ModelFailure {
    pub fn message(&self) -> String {
        match self {
            ModelFailure::Error(m) => m.clone(),
            ModelFailure::Timeout(m) => m.detail(),
        }
    }
}

impl SeedResult {
    /// A mismatch wins over the failure that may have followed it.
    pub fn verdict(&self) -> SeedVerdict {
        match (&self.mismatch, &self.failure) {
            (Some(_), _) => SeedVerdict::Mismatch,
            (None, Some(ModelFailure::Timeout(_))) => SeedVerdict::Timeout,
            (None, Some(ModelFailure::Error(_))) => SeedVerdict::Error,
            (None, None) => SeedVerdict::Match,
        }
    }

    /// What [`Summary::of_seeds`] adds up of this seed.
    pub fn totals(&self) -> SeedTotals<'_> {
        SeedTotals {
            verdict: self.verdict(),
            instructions: self.instructions,
            cycles: self.cycles,
            engine_busy: self.engine_busy,
            retire_latency: &self.retire_latency,
        }
    }

    pub fn signature(&self) -> Option<Signature> {
        self.mismatch.as_ref().map(Signature::of)
    }
}

/// The verdict of one seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeedVerdict {
    /// Reference and DUT agreed on everything.
    Match,
    /// A check failed: `mismatch` and `signature` say which.
    Mismatch,
    /// A model failed (a watchdog, a backdoor access out of range, a
    /// panic): `error` says how. It stops the campaign.
    Error,
    /// The seed ran past `--seed-timeout` of wall time: `error` says where.
    Timeout,
}

impl SeedVerdict {
    pub fn name(self) -> &'static str {
        match self {
            SeedVerdict::Match => "match",
            SeedVerdict::Mismatch => "mismatch",
            SeedVerdict::Error => "error",
            SeedVerdict::Timeout => "timeout",
        }
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
    /// Seeds with a result (any verdict).
    pub seeds: u64,
    pub matched: u64,
    pub mismatched: u64,
    /// Seeds at which a model failed (at most one: it stops the campaign).
    pub errors: u64,
    /// Seeds that ran past `--seed-timeout`.
    pub timeouts: u64,
    pub instructions: u64,
    /// Sum of the seeds' cycle counts; `None` when no seed reported any
    /// (the golden model has no notion of time).
    pub cycles: Option<u64>,
    pub wall: Duration,
    pub stopped: Option<InfraError>,
    /// Busy cycles per engine, summed.
    pub engine_busy: PerEngine<u64>,
    /// Latch-to-retire cycles per engine, over every seed.
    pub retire_latency: RetireLatency,
}

impl Summary {
    /// The summary of a campaign in which no seed ran (`stopped` says why,
    /// if it stopped).
    pub fn nothing_ran(stopped: Option<InfraError>) -> Summary {
        Summary {
            seeds: 0,
            matched: 0,
            mismatched: 0,
            errors: 0,
            timeouts: 0,
            instructions: 0,
            cycles: None,
            wall: Duration::ZERO,
            stopped,
            engine_busy: PerEngine::default(),
            retire_latency: RetireLatency::default(),
        }
    }

    pub fn cycles_per_second(&self) -> Option<f64> {
        let secs = self.wall.as_secs_f64();
        self.cycles
            .map(|c| if secs > 0.0 { c as f64 / secs } else { 0.0 })
    }

    /// The sums over `seeds` (in order; a campaign's or its records'),
    /// with the run's wall time and why it stopped.
    pub fn of_seeds<'a>(
        seeds: impl IntoIterator<Item = SeedTotals<'a>>,
        wall: Duration,
        stopped: Option<InfraError>,
    ) -> Summary {
        let mut s = Summary {
            wall,
            ..Summary::nothing_ran(stopped)
        };
        for seed in seeds {
            s.seeds += 1;
            *match seed.verdict {
                SeedVerdict::Match => &mut s.matched,
                SeedVerdict::Mismatch => &mut s.mismatched,
                SeedVerdict::Error => &mut s.errors,
                SeedVerdict::Timeout => &mut s.timeouts,
            } += 1;
            s.instructions += u64::from(seed.instructions);
            if let Some(c) = seed.cycles {
                s.cycles = Some(s.cycles.unwrap_or(0) + c);
            }
            s.engine_busy += seed.engine_busy;
            s.retire_latency.merge(seed.retire_latency);
        }
        s
    }
}

/// What a summary adds up of one seed.
#[derive(Clone, Copy, Debug)]
pub struct SeedTotals<'a> {
    pub verdict: SeedVerdict,
    pub instructions: u32,
    pub cycles: Option<u64>,
    pub engine_busy: PerEngine<u64>,
    pub retire_latency: &'a RetireLatency,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignReport {
    pub options: CampaignOptions,
    pub reference_model: String,
    pub dut_model: String,
    pub results: Vec<SeedResult>,
    pub summary: Summary,
    /// The run stopped early on request (`RunControls::stop`).
    pub interrupted: bool,
    /// Coverage after each case, in case order, when the options asked for
    /// it or steered (empty otherwise).
    pub curve: Vec<CurvePoint>,
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
    let seeds = SeedRunner::new(options, None);
    let mut tally = Tally::default();
    // The two models are reused from seed to seed; only the words a seed
    // changes are loaded (scoreboard/resident.rs).
    let mut resident = Resident::new();
    for seed in options.seeds() {
        let case = TestCase::generate(seed, &seeds.gen);
        let ran = seeds.start(case, reference, dut, &mut resident);
        let artefacts = match &ran.outcome.first_mismatch {
            Some(m) => on_mismatch(&ran.case, m),
            None => Artefacts::default(),
        };
        let done = ran.finish(artefacts);
        on_result(&done.result);
        let stop = tally.add(done);
        if stop {
            break;
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
    /// Called before the seed at position `case` (from 1) of the whole
    /// campaign (`seed - first_seed + 1`, whatever the shard), for
    /// numbering that must not depend on which worker or shard ran what.
    fn start_case(&mut self, _case: u64) {}
    /// A seed mismatched: write its repro, shrink it, dump its waveform.
    fn on_mismatch(&mut self, _case: &TestCase, _mismatch: &Mismatch) -> Artefacts {
        Artefacts::default()
    }
    /// A seed ran past its wall-clock limit: write what replays it.
    fn on_timeout(&mut self, _case: &TestCase, _timeout: &Mismatch) -> Artefacts {
        Artefacts::default()
    }
    /// What the case just run reached (its functional bins, the RTL points
    /// it moved), for a steered campaign or its curve; nothing by default.
    fn case_feedback(&mut self) -> CaseFeedback {
        CaseFeedback::default()
    }
    fn finish(self) -> Self::Done;
}

/// How a run may be cut short from outside: a stop request and a
/// wall-clock limit per seed.
#[derive(Clone, Copy, Default)]
pub struct RunControls<'a> {
    /// Once set (by a signal handler), no further seed is started; the
    /// seeds in flight finish and are reported.
    pub stop: Option<&'a AtomicBool>,
    /// Wall-clock limit per seed (`--seed-timeout`). Past it the DUT is
    /// told to give up at its next wait (`SimControls::set_abandon_flag`),
    /// and the seed is reported as a timeout.
    pub seed_timeout: Option<Duration>,
    /// Called from the timekeeper's thread with a seed and a message when
    /// the seed has gone on for [`hung_after`] its limit without giving up
    /// (stuck inside the simulator, where no flag is looked at): the
    /// thread cannot be taken back, so this writes what it can and ends
    /// the process.
    pub on_hung: Option<&'a OnHung<'a>>,
}

/// What [`RunControls::on_hung`] is called as: the seed, and why.
pub type OnHung<'a> = dyn Fn(u64, &str) + Sync + 'a;

/// How long after its start a seed that was told to give up at `limit` and
/// did not is taken as hung for good.
pub fn hung_after(limit: Duration) -> Duration {
    limit * 2 + Duration::from_secs(5)
}

/// What a worker sends the thread that reports.
enum Message<D> {
    Opened(Result<(String, String), String>),
    Seed(u64, Box<SeedDone>),
    Finished(D),
}

/// The seed a worker is running and since when, for the timekeeper.
#[derive(Default)]
struct SeedClock {
    running: std::sync::Mutex<Option<(u64, Instant)>>,
    abandon: std::sync::Arc<AtomicBool>,
}

impl SeedClock {
    fn start(&self, seed: u64) {
        self.abandon.store(false, Ordering::SeqCst);
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some((seed, Instant::now()));
    }

    fn stop(&self) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
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
    run_campaign_controlled(
        options,
        jobs,
        make_worker,
        on_result,
        RunControls::default(),
    )
}

/// [`run_campaign_jobs`] under `controls`: a stop request ends the run
/// after the seeds in flight (reported as interrupted), and a seed past
/// its wall-clock limit is a timeout, after which the campaign goes on.
pub fn run_campaign_controlled<W: Worker>(
    options: &CampaignOptions,
    jobs: usize,
    make_worker: &(dyn Fn(usize) -> Result<W, String> + Sync),
    on_result: &mut dyn FnMut(&SeedResult),
    controls: RunControls<'_>,
) -> (CampaignReport, Vec<W::Done>) {
    let started = Instant::now();
    let plan: Vec<u64> = options.seeds().collect();
    let count = plan.len() as u64;
    let jobs = jobs.clamp(1, count.max(1).min(usize::MAX as u64) as usize);
    let next = AtomicU64::new(0);
    // The position of the earliest infrastructure error; no seed after it
    // is started.
    let stop_at = AtomicU64::new(u64::MAX);
    let opened = Barrier::new(jobs);
    let open_failed = AtomicBool::new(false);
    let seeds = SeedRunner::new(options, controls.seed_timeout);
    let feedback = (options.steer || options.curve).then(|| {
        Steer::new(
            options.gen_options(),
            options.steer,
            options.timing.is_none(),
        )
    });
    let clocks: Vec<SeedClock> = (0..jobs).map(|_| SeedClock::default()).collect();
    let workers_done = AtomicBool::new(false);
    let stop_requested = || controls.stop.is_some_and(|s| s.load(Ordering::SeqCst));
    let (tx, rx) = mpsc::channel::<Message<W::Done>>();
    let mut tally = Tally::default();
    let mut names: Option<(String, String)> = None;
    let mut open_error: Option<String> = None;
    let mut done = Vec::new();
    std::thread::scope(|scope| {
        if let Some(limit) = controls.seed_timeout {
            let (clocks, workers_done) = (&clocks, &workers_done);
            scope.spawn(move || keep_time(clocks, limit, workers_done, controls.on_hung));
        }
        for (k, clock) in clocks.iter().enumerate() {
            let tx = tx.clone();
            let (next, stop_at, opened, open_failed, seeds, plan, feedback) = (
                &next,
                &stop_at,
                &opened,
                &open_failed,
                &seeds,
                &plan,
                &feedback,
            );
            scope.spawn(move || {
                let worker = catch_unwind(AssertUnwindSafe(|| make_worker(k)))
                    .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_message(&panic))));
                let mut worker = match worker {
                    Ok(mut w) => {
                        let (r, d) = w.models();
                        let names = (r.name().to_string(), d.name().to_string());
                        if controls.seed_timeout.is_some() {
                            if let Some(sim) = d.sim_controls() {
                                sim.set_abandon_flag(Some(clock.abandon.clone()));
                            }
                        }
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
                        if stop_requested() {
                            break;
                        }
                        let index = next.fetch_add(1, Ordering::SeqCst);
                        if index >= count || index > stop_at.load(Ordering::SeqCst) {
                            break;
                        }
                        let seed = plan[index as usize];
                        // A steered case waits for the batches before it.
                        let case = match feedback {
                            Some(f) => match f.case(index, seed) {
                                Some((case, _)) => case,
                                None => break,
                            },
                            None => TestCase::generate(seed, &seeds.gen),
                        };
                        // Numbered by its place in the whole campaign, so
                        // that shards and resumed runs number alike.
                        worker.start_case(seed - options.first_seed + 1);
                        clock.start(seed);
                        let ran = {
                            let (reference, dut) = worker.models();
                            seeds.start(case, reference, dut, &mut resident)
                        };
                        if let Some(f) = feedback {
                            f.feedback(index, &ran.case.program, worker.case_feedback());
                        }
                        // Shrinking and writing a repro are not the seed's
                        // run: they do not count against its limit.
                        clock.stop();
                        let artefacts = match (&ran.outcome.first_mismatch, &ran.failure) {
                            (Some(m), _) => worker.on_mismatch(&ran.case, m),
                            (None, Some(ModelFailure::Timeout(timeout))) => {
                                worker.on_timeout(&ran.case, timeout)
                            }
                            _ => Artefacts::default(),
                        };
                        let seed_done = ran.finish(artefacts);
                        let error =
                            matches!(seed_done.result.failure, Some(ModelFailure::Error(_)));
                        if error {
                            stop_at.fetch_min(index, Ordering::SeqCst);
                        }
                        let _ = tx.send(Message::Seed(index, Box::new(seed_done)));
                        if error {
                            break;
                        }
                    }
                    // A worker leaving early (a stop, a failed model) wakes
                    // the steered cases waiting for feedback that will not
                    // come; one that ran out of seeds leaves the others to
                    // finish theirs.
                    let exhausted = next.load(Ordering::SeqCst) >= count
                        && stop_at.load(Ordering::SeqCst) == u64::MAX
                        && !stop_requested();
                    if let (Some(f), false) = (feedback, exhausted) {
                        f.abandon();
                    }
                }
                let _ = tx.send(Message::Finished(worker.finish()));
            });
        }
        drop(tx);
        // Results arrive in any order; they are reported in seed order, up
        // to and including the first seed at which a model failed.
        let mut waiting: BTreeMap<u64, Box<SeedDone>> = BTreeMap::new();
        let mut reported = 0u64;
        let mut stopped = false;
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
                Message::Finished(d) => {
                    done.push(d);
                    if done.len() == jobs {
                        workers_done.store(true, Ordering::SeqCst);
                    }
                }
            }
            while !stopped {
                let Some(seed_done) = waiting.remove(&reported) else {
                    break;
                };
                on_result(&seed_done.result);
                stopped = tally.add(*seed_done);
                reported += 1;
            }
        }
        workers_done.store(true, Ordering::SeqCst);
    });
    let (reference, dut) = names.unwrap_or_default();
    if let Some(message) = open_error {
        let mut report = tally.report(options, reference, dut, started);
        report.results.clear();
        report.summary = Summary::nothing_ran(Some(InfraError {
            seed: plan.first().copied().unwrap_or(options.first_seed),
            message,
        }));
        return (report, done);
    }
    let mut report = tally.report(options, reference, dut, started);
    report.curve = feedback.map(|f| f.curve()).unwrap_or_default();
    report.interrupted = report.summary.stopped.is_none()
        && (report.results.len() as u64) < count
        && stop_requested();
    (report, done)
}

/// The timekeeper of a run with a wall-clock limit per seed: tells a
/// worker's DUT to give up once its seed is past `limit`, and calls
/// `on_hung` for a seed that is still running [`hung_after`] its start.
fn keep_time(
    clocks: &[SeedClock],
    limit: Duration,
    workers_done: &AtomicBool,
    on_hung: Option<&OnHung<'_>>,
) {
    let tick = (limit / 10).clamp(Duration::from_millis(5), Duration::from_millis(200));
    while !workers_done.load(Ordering::SeqCst) {
        std::thread::sleep(tick);
        for clock in clocks {
            let running = *clock.running.lock().unwrap_or_else(|e| e.into_inner());
            let Some((seed, since)) = running else {
                continue;
            };
            let elapsed = since.elapsed();
            if elapsed > limit {
                clock.abandon.store(true, Ordering::SeqCst);
            }
            if elapsed > hung_after(limit) {
                if let Some(on_hung) = on_hung {
                    on_hung(
                        seed,
                        &format!(
                            "ran past --seed-timeout {:.3} s and did not give up within {:.0} s \
                             (stuck inside the simulator)",
                            limit.as_secs_f64(),
                            hung_after(limit).as_secs_f64()
                        ),
                    );
                }
            }
        }
    }
}

/// Runs one seed of a campaign: the part every worker shares.
struct SeedRunner {
    gen: GenOptions,
    timing: Option<TimingMode>,
    /// The wall-clock limit per seed, which a timeout reports.
    seed_timeout: Option<Duration>,
}

/// A seed that ran, before its mismatch (if any) is recorded.
struct Ran {
    case: TestCase,
    outcome: Outcome,
    failure: Option<ModelFailure>,
    wall: Duration,
}

/// A seed's result.
struct SeedDone {
    result: SeedResult,
}

impl SeedRunner {
    fn new(options: &CampaignOptions, seed_timeout: Option<Duration>) -> SeedRunner {
        SeedRunner {
            gen: options.gen_options(),
            timing: options.timing,
            seed_timeout,
        }
    }

    /// Runs `case`. An error or a panic in a model is a
    /// failure at that seed; so is a run the DUT abandoned at its
    /// wall-clock limit (a timeout). After either, the next seed loads
    /// both models in full.
    fn start(
        &self,
        case: TestCase,
        reference: &mut dyn NpuModel,
        dut: &mut dyn NpuModel,
        resident: &mut Resident,
    ) -> Ran {
        let t0 = Instant::now();
        let timing = self.timing.unwrap_or(TimingMode::default_for(&case));
        let ran = catch_unwind(AssertUnwindSafe(|| {
            run_case_resident(&case, reference, dut, timing, resident)
        }));
        let (outcome, failure) = match ran {
            Ok(Ok(outcome)) => (outcome, None),
            Ok(Err(e)) => {
                resident.forget();
                let failure = match e {
                    ModelError::Abandoned { what } => ModelFailure::Timeout(Box::new(
                        Mismatch::timeout(self.seed_timeout, what, reference.name(), dut.name()),
                    )),
                    e => ModelFailure::Error(e.to_string()),
                };
                (Outcome::nothing(), Some(failure))
            }
            Err(panic) => {
                resident.forget();
                let message = format!("a model panicked: {}", panic_message(&panic));
                (Outcome::nothing(), Some(ModelFailure::Error(message)))
            }
        };
        Ran {
            case,
            outcome,
            failure,
            wall: t0.elapsed(),
        }
    }
}

impl Ran {
    fn finish(self, artefacts: Artefacts) -> SeedDone {
        SeedDone {
            result: SeedResult {
                seed: self.case.seed,
                instructions: self.outcome.instructions,
                cycles: self.outcome.cycles,
                wall: self.wall,
                mismatch: self.outcome.first_mismatch,
                failure: self.failure,
                engine_busy: self.outcome.engine_busy,
                retire_latency: self.outcome.retire_latency,
                artefacts,
            },
        }
    }
}

/// The results of a campaign so far, in seed order.
#[derive(Default)]
struct Tally {
    results: Vec<SeedResult>,
    stopped: Option<InfraError>,
}

impl Tally {
    /// Adds a seed's result; `true` if a model failed at it, which stops
    /// the campaign.
    fn add(&mut self, done: SeedDone) -> bool {
        let r = done.result;
        let stop = match &r.failure {
            Some(ModelFailure::Error(message)) => {
                self.stopped = Some(InfraError {
                    seed: r.seed,
                    message: message.clone(),
                });
                true
            }
            _ => false,
        };
        self.results.push(r);
        stop
    }

    fn report(
        self,
        options: &CampaignOptions,
        reference_model: String,
        dut_model: String,
        started: Instant,
    ) -> CampaignReport {
        let results = self.results;
        let summary = Summary::of_seeds(
            results.iter().map(SeedResult::totals),
            started.elapsed(),
            self.stopped,
        );
        CampaignReport {
            options: options.clone(),
            reference_model,
            dut_model,
            results,
            summary,
            interrupted: false,
            curve: Vec::new(),
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
    use crate::regress::results::CampaignFile;
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
            failure: None,
            engine_busy: PerEngine::default(),
            retire_latency: Default::default(),
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
                shard: None,
                skip: BTreeSet::new(),
                random_init: true,
                steer: false,
                curve: false,
            },
            reference_model: "golden".into(),
            dut_model: "rtl".into(),
            results,
            summary: Summary::nothing_ran(None),
            interrupted: false,
            curve: Vec::new(),
        }
    }

    #[test]
    fn shards_parse_and_refuse_what_is_no_shard() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { index: 2, count: 8 }));
        for bad in ["8/8", "1/0", "3", "a/2", "1/b"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
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
        let text = CampaignFile::of(&report(results)).signature_text().unwrap();
        assert_eq!(
            text,
            "failures by signature: retire-err/decoder/err x13 \
             (seeds 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... 3 more)\n\
             \x20                      retire-opcode/decoder/opcode x1 (seed 1)"
        );
        let shards: Vec<Vec<u64>> = (0..3)
            .map(|index| {
                let options = CampaignOptions {
                    shard: Some(Shard { index, count: 3 }),
                    skip: [7].into(),
                    ..report(Vec::new()).options
                };
                CampaignOptions {
                    first_seed: 5,
                    count: 8,
                    ..options
                }
                .seeds()
                .collect()
            })
            .collect();
        assert_eq!(shards, [vec![5, 8, 11], vec![6, 9, 12], vec![10]]);
        let shard = |index, count| Some(Shard { index, count });
        assert_eq!(
            Shard::absent_from(&[shard(0, 4), shard(2, 4)]),
            [Shard { index: 1, count: 4 }, Shard { index: 3, count: 4 }]
        );
        assert_eq!(Shard::absent_from(&[shard(0, 4), shard(1, 3)]), []);
        assert_eq!(Shard::absent_from(&[shard(0, 2), None]), []);
        assert_eq!(
            CampaignFile::of(&report(vec![result(0, None)])).signature_text(),
            None
        );
    }
}
