//! The scoreboard: runs one [`TestCase`] on a reference model and a device
//! under test and reports the first place where they differ
//! (docs/harness.md).
//!
//! Both models see exactly the same front-door traffic. After every program
//! item the events of both are collected per sequence number; an
//! instruction is compared once both sides have retired it, because the RTL
//! retires out of order (decoupled engines) while the golden model does not.
//! After the program both are drained, whatever is left is compared, and
//! then the whole architectural state.

pub mod assertions;
mod mismatch;
mod resident;
mod timing;

pub use resident::{Changes, Resident};

pub use mismatch::{
    hex_word, status_fields, CheckKind, Difference, Field, GroupDiff, Memory, Mismatch,
    MismatchRecord, OrderReason, Side, TimedEvent, Unit,
};

use crate::stimulus::TestCase;
use mismatch::{err_name, resp_name, shape, stream_name, table_slot};
use pccx_golden::asm::Item;
use pccx_golden::isa::{Instr, Memcpy, Memset};
use pccx_golden::model::{
    reg, AxiResp, Event, MemoryView, ModelError, NpuModel, Observation, ShapeEntry, ShapeTable,
    Word, HOST_WORDS, SHAPE_ENTRIES, UNATTRIBUTED,
};
use pccx_golden::{Engine, PerEngine};
use std::collections::{BTreeMap, BTreeSet};

/// The result of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Instructions issued (each got a sequence number).
    pub instructions: u32,
    /// The DUT's last retire cycle (else the reference's), when reported.
    pub cycles: Option<u64>,
    pub first_mismatch: Option<Mismatch>,
    /// Cycles each engine spent on the DUT's instructions, start to retire
    /// inclusive, when the DUT reports starts.
    pub engine_busy: PerEngine<u64>,
    /// Latch-to-retire cycles of the DUT's instructions, per engine.
    pub retire_latency: RetireLatency,
}

/// Latch-to-retire latencies per engine, as counts in power-of-two buckets: bucket 0 holds latency 0, bucket `b`
/// latencies `2^(b-1) ..= 2^b - 1`. Trailing empty buckets are left off,
/// so a record stays short and buckets add across seeds whatever their
/// lengths.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct RetireLatency(pub PerEngine<Vec<u64>>);

impl RetireLatency {
    /// The bucket of a latency.
    pub fn bucket(cycles: u64) -> usize {
        (u64::BITS - cycles.leading_zeros()) as usize
    }

    /// The smallest and largest latency of bucket `b`.
    pub fn bucket_range(b: usize) -> (u64, u64) {
        match b {
            0 => (0, 0),
            _ => (1 << (b - 1), (1u64 << b.min(63)) - 1),
        }
    }

    /// Counts one latency of `engine`.
    pub fn add(&mut self, engine: Engine, cycles: u64) {
        let buckets = &mut self.0[engine];
        let b = Self::bucket(cycles);
        if buckets.len() <= b {
            buckets.resize(b + 1, 0);
        }
        buckets[b] += 1;
    }

    /// The bucket counts of `engine` (trailing empty buckets left off).
    pub fn of(&self, engine: Engine) -> &[u64] {
        &self.0[engine]
    }

    /// Adds another histogram's counts to this one.
    pub fn merge(&mut self, other: &RetireLatency) {
        for ((_, mine), theirs) in self.0.iter_mut().zip(other.0.values()) {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.values().all(|b| b.iter().all(|&n| n == 0))
    }
}

impl Outcome {
    /// The outcome of a run that ended in a model error: nothing compared.
    pub fn nothing() -> Outcome {
        Outcome {
            instructions: 0,
            cycles: None,
            first_mismatch: None,
            engine_busy: PerEngine::default(),
            retire_latency: RetireLatency::default(),
        }
    }
}

/// Which timing check a run applies (docs/timing.md).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TimingMode {
    /// Ideal I/O: every latch, start and retire cycle and the status
    /// register in every cycle equal the timing model's prediction.
    Exact,
    /// Stall I/O: results exact, retire order obeys the ordering rules.
    Order,
    /// No timing check.
    Off,
}

impl TimingMode {
    /// Exact under ideal I/O, order under stall I/O.
    pub fn default_for(case: &TestCase) -> TimingMode {
        if case.options.stall_io {
            TimingMode::Order
        } else {
            TimingMode::Exact
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TimingMode::Exact => "exact",
            TimingMode::Order => "order",
            TimingMode::Off => "off",
        }
    }

    pub fn by_name(name: &str) -> Option<TimingMode> {
        [TimingMode::Exact, TimingMode::Order, TimingMode::Off]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// Cycles both models idle after the drain before the last look at their
/// events.
pub const QUIESCENCE_CYCLES: u32 = 16;

/// The deadline a timed reference gives every wait of the DUT: this many times the
/// reference's last retire cycle, plus DEADLINE_SLACK_CYCLES. Generous, so
/// that stalled I/O (slower than the ideal-I/O prediction) never reaches
/// it; an engine stuck in a loop does.
pub const DEADLINE_FACTOR: u64 = 8;
pub const DEADLINE_SLACK_CYCLES: u64 = 200_000;

/// Runs `case` on `reference` and `dut` and compares them.
///
/// Stops issuing at the first difference, drains both (an older instruction
/// may still differ, and its difference is the one reported), and compares
/// the final state only when every instruction matched. A model error
/// (watchdog, backdoor) is returned as `Err`, unless a difference was
/// already found: then the difference is reported and the error noted in
/// its detail, because a hang after a wrong write is the write's fault.
pub fn run_case(
    case: &TestCase,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
) -> Result<Outcome, ModelError> {
    run_case_with(case, reference, dut, TimingMode::default_for(case))
}

/// [`run_case`] with a choice of timing check (docs/timing.md).
pub fn run_case_with(
    case: &TestCase,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    timing: TimingMode,
) -> Result<Outcome, ModelError> {
    run_case_resident(case, reference, dut, timing, &mut Resident::new())
}

/// [`run_case_with`] for the next case of a campaign on the same two
/// models: `resident` says what their memories hold from the case before,
/// so that only the words that differ are loaded, and is brought up to
/// date for the next one (scoreboard/resident.rs).
pub fn run_case_resident(
    case: &TestCase,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    timing: TimingMode,
    resident: &mut Resident,
) -> Result<Outcome, ModelError> {
    let mut run = Run::new(case, reference, dut);
    run.timing = timing;
    let ran = run.execute(resident);
    match ran {
        Ok(()) if !run.has_mismatch() => {
            let (l2, host) = run.reference_writes();
            resident.matched(case, l2, host);
        }
        _ => resident.forget(),
    }
    match ran {
        Ok(()) => {}
        Err(e) if run.has_mismatch() => run.note_after_mismatch(&e),
        Err(e) => return Err(e),
    }
    Ok(run.outcome())
}

/// The checks the scoreboard cannot make on a DUT seen at `level`, in
/// [`CheckKind`] order (docs/dut-contract.md, "What each level checks").
/// Failed assertions are the DUT's own report and count at every level.
pub fn out_of_reach(level: Observation) -> Vec<CheckKind> {
    use CheckKind as K;
    let needs_retire = [
        K::RetireOpcode,
        K::RetireErr,
        K::MissingRetire,
        K::ExtraRetire,
        K::Timing,
        K::RetireOrder,
    ];
    let needs_full = [
        K::Latch,
        K::WriteAfterRetire,
        K::WeightStream,
        K::L2Writes,
        K::ShapeWrites,
        K::EMaxWrites,
        K::FinalTables,
        K::FinalEMax,
        K::StatusTimeline,
    ];
    let mut out: Vec<CheckKind> = match level {
        Observation::Full => Vec::new(),
        Observation::Retire => needs_full.to_vec(),
        Observation::BlackBox => needs_full.into_iter().chain(needs_retire).collect(),
    };
    out.sort();
    out
}

/// What one side reported for one sequence number.
#[derive(Clone, Debug, Default)]
struct Record {
    latches: Vec<u64>,
    latch_cycles: Vec<Option<u64>>,
    start: Option<u64>,
    /// (opcode, err, cycle)
    retires: Vec<(u8, u8, Option<u64>)>,
    l2: Vec<L2Write>,
    host: Vec<(u32, Word)>,
    shape: Vec<(ShapeTable, u8, ShapeEntry)>,
    emax: Vec<u16>,
    /// (stream, beats) of every weight-stream read.
    streams: Vec<(u8, u32)>,
}

impl Record {
    fn retired(&self) -> bool {
        !self.retires.is_empty()
    }

    fn retire_cycle(&self) -> Option<u64> {
        self.retires.first().and_then(|r| r.2)
    }
}

/// An L2 write with the data of disabled elements cleared: only enabled
/// elements are architectural, so only they are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct L2Write {
    addr: u32,
    mask: u8,
    data: Word,
}

impl L2Write {
    fn new(addr: u32, data: Word, mask: u8) -> L2Write {
        L2Write {
            addr,
            mask,
            data: data & element_mask(mask),
        }
    }
}

/// The bits of the BF16 elements that `mask` enables.
fn element_mask(mask: u8) -> Word {
    (0..8)
        .filter(|i| mask & (1 << i) != 0)
        .fold(0, |m, i| m | (0xFFFF << (16 * i)))
}

#[derive(Debug, Default)]
struct Pair {
    r: Record,
    d: Record,
    compared: bool,
}

impl Pair {
    fn side(&mut self, side: Side) -> &mut Record {
        match side {
            Side::Reference => &mut self.r,
            Side::Dut => &mut self.d,
        }
    }
}

struct Run<'a> {
    case: &'a TestCase,
    a: &'a mut dyn NpuModel,
    b: &'a mut dyn NpuModel,
    /// Words issued so far; the index is the sequence number.
    issued: Vec<u64>,
    pairs: BTreeMap<u32, Pair>,
    /// Sequence numbers with events but not compared yet (in flight).
    pending: BTreeSet<u32>,
    /// Every difference found, with its rank: (sequence number, check).
    /// Each difference with its rank: (not first in time, sequence number,
    /// check); the lowest is reported.
    found: Vec<((bool, u32, CheckKind), Mismatch)>,
    last_cycle: [Option<u64>; 2],
    timing: TimingMode,
    /// What the checks may see: the lower of the two models' levels
    /// (docs/dut-contract.md).
    level: Observation,
    /// Below `Full`: the host writes, which no tap attributes to an
    /// instruction, compared for the whole program.
    unattributed: Pair,
    /// Whether the L2 was read back through the models' own MEMCPY (below
    /// `Full`): host memory then holds a copy of it.
    read_back: bool,
}

impl<'a> Run<'a> {
    fn new(case: &'a TestCase, a: &'a mut dyn NpuModel, b: &'a mut dyn NpuModel) -> Run<'a> {
        let level = a.observation().min(b.observation());
        Run {
            case,
            a,
            b,
            issued: Vec::new(),
            pairs: BTreeMap::new(),
            pending: BTreeSet::new(),
            found: Vec::new(),
            last_cycle: [None; 2],
            timing: TimingMode::Exact,
            level,
            unattributed: Pair::default(),
            read_back: false,
        }
    }

    fn has_mismatch(&self) -> bool {
        !self.found.is_empty()
    }

    fn outcome(mut self) -> Outcome {
        self.found.sort_by_key(|(rank, _)| *rank);
        let mut engine_busy = PerEngine::<u64>::default();
        let mut retire_latency = RetireLatency::default();
        for p in self.pairs.values() {
            let retire = p.d.retire_cycle();
            // The engine of the retired opcode; bits no opcode has count
            // nowhere.
            let engine = p.d.retires.first().and_then(|r| Engine::of_bits(r.0));
            if let (Some(start), Some(retire), Some(engine)) = (p.d.start, retire, engine) {
                engine_busy[engine] += retire.saturating_sub(start) + 1;
            }
            let latch = p.d.latch_cycles.first().copied().flatten();
            if let (Some(latch), Some(retire), Some(engine)) = (latch, retire, engine) {
                retire_latency.add(engine, retire.saturating_sub(latch));
            }
        }
        Outcome {
            engine_busy,
            retire_latency,
            instructions: self.issued.len() as u32,
            cycles: self.last_cycle[1].or(self.last_cycle[0]),
            first_mismatch: self.found.into_iter().next().map(|(_, m)| m),
        }
    }

    fn note_after_mismatch(&mut self, e: &ModelError) {
        for (_, m) in &mut self.found {
            // A hang or protocol violation is that error already.
            if !matches!(
                m.kind,
                CheckKind::Hang | CheckKind::BusProtocol | CheckKind::Assertion
            ) {
                m.afterwards = Some(e.to_string());
            }
        }
    }

    /// Calls `f` on the DUT; an error there goes through [`Self::dut_failed`].
    fn on_dut<T>(
        &mut self,
        f: impl FnOnce(&mut dyn NpuModel) -> Result<T, ModelError>,
    ) -> Result<T, ModelError> {
        f(&mut *self.b).map_err(|e| self.dut_failed(e))
    }

    /// An error of the DUT. A hang (past the watchdog, or past the deadline
    /// the reference's retires give), a bus protocol violation or a failed
    /// assertion is the DUT's failure, not the harness's: it is reported as
    /// a mismatch, at the oldest instruction the DUT has not retired and the
    /// cycle it was seen, and the error ends the run (run_case_resident
    /// then returns the outcome with it). Other errors are the harness's.
    ///
    /// A failed assertion is reported first when the scoreboard had found
    /// nothing before the DUT call it failed in returned: the model stops
    /// at the assertion's edge, so what the scoreboard finds now comes from
    /// the same cycles, and the assertion names the fault where it happens.
    fn dut_failed(&mut self, e: ModelError) -> ModelError {
        let (kind, difference) = match &e {
            ModelError::Watchdog { what, .. } => {
                (CheckKind::Hang, Difference::Hang { at: what.clone() })
            }
            ModelError::Protocol(what) => (
                CheckKind::BusProtocol,
                Difference::BusProtocol { what: what.clone() },
            ),
            ModelError::Assertion(a) => match assertions::by_name(&a.name) {
                Some(known) => (
                    CheckKind::Assertion,
                    Difference::Assertion {
                        name: known.name,
                        scope: a.scope.clone(),
                        also: a.also.clone(),
                    },
                ),
                None => {
                    return ModelError::Other(format!(
                        "{}: assertion {} failed, which harness/scoreboard/assertions.rs \
                         does not list: add it there (its name is a signature field)",
                        self.b.name(),
                        a.name
                    ))
                }
            },
            _ => return named(e, self.b.name()),
        };
        let found_before = self.has_mismatch();
        let dut_text = e.to_string();
        self.collect();
        let seq = (0..self.issued.len() as u32)
            .find(|s| self.pairs.get(s).is_none_or(|p| !p.d.retired()));
        let reference = seq
            .and_then(|s| self.pairs.get(&s))
            .map_or_else(|| "-".to_string(), |p| retire_text(&p.r));
        let mut m = self.mismatch(seq, Finding::new(kind, difference, reference, dut_text));
        m.cycle = self.b.clock().and_then(|c| c.cycle_now()).or(m.cycle);
        match &e {
            ModelError::Assertion(a) => {
                m.cycle = Some(a.cycle); // the edge it failed at
                if found_before {
                    self.report(seq.unwrap_or(u32::MAX), m);
                } else {
                    self.report_first(m);
                }
            }
            _ => self.report(seq.unwrap_or(u32::MAX), m),
        }
        named(e, self.b.name())
    }

    /// The word addresses of every L2 and host write the reference made.
    fn reference_writes(&self) -> (Vec<u32>, Vec<u32>) {
        let records = || {
            self.pairs
                .values()
                .map(|p| &p.r)
                .chain([&self.unattributed.r])
        };
        let mut host: Vec<u32> = records().flat_map(|r| r.host.iter().map(|w| w.0)).collect();
        if self.read_back {
            host.extend(0..self.a.l2_words());
        }
        (
            records()
                .flat_map(|r| r.l2.iter().map(|w| w.addr))
                .collect(),
            host,
        )
    }

    fn execute(&mut self, resident: &Resident) -> Result<(), ModelError> {
        self.load(resident)?;
        for item in &self.case.program.items {
            self.apply(item)?;
            self.collect();
            if self.has_mismatch() {
                break;
            }
        }
        call(self.a, |m| m.drain())?;
        self.collect();
        self.on_dut(|m| m.drain())?;
        if let Some(clock) = self.b.clock() {
            clock.set_wait_deadline(None);
        }
        self.collect();
        // Quiescence: a drained NPU must stay silent. Idle a little and look
        // again, so a stray write or a second retire reported after the
        // last instruction finished is still caught.
        call(self.a, |m| m.idle(QUIESCENCE_CYCLES))?;
        self.on_dut(|m| m.idle(QUIESCENCE_CYCLES))?;
        self.collect();
        self.sweep();
        if !self.has_mismatch() {
            self.compare_final_state()?;
        }
        if !self.has_mismatch() {
            self.compare_timing();
        }
        Ok(())
    }

    /// Timing, once everything functional matched: per instruction in
    /// program order, then the status register over time (exact), or the
    /// retire order (order).
    fn compare_timing(&mut self) {
        // A black box shows no instruction (docs/dut-contract.md).
        if self.level == Observation::BlackBox {
            return;
        }
        let cycles: Vec<timing::Cycles> = (0..self.issued.len() as u32)
            .map(|seq| {
                let p = &self.pairs[&seq];
                timing::Cycles::of(&p.r, &p.d)
            })
            .collect();
        let found = match self.timing {
            TimingMode::Off => None,
            // The status timeline is sampled every cycle: a tap of `Full`.
            TimingMode::Exact if self.level < Observation::Full => timing::exact(&cycles),
            TimingMode::Exact => timing::exact(&cycles).or_else(|| {
                let timeline = |m: &mut dyn NpuModel| m.clock().map(|c| c.status_timeline());
                let (ra, rb) = (timeline(&mut *self.a), timeline(&mut *self.b));
                timing::status(ra.as_deref(), rb.as_deref())
            }),
            TimingMode::Order => {
                let shape_writes: Vec<Vec<(ShapeTable, u8, ShapeEntry)>> = (0..self.issued.len()
                    as u32)
                    .map(|seq| self.pairs[&seq].r.shape.clone())
                    .collect();
                timing::order(&self.issued, &shape_writes, &cycles)
            }
        };
        if let Some((seq, f)) = found {
            let m = self.mismatch(seq, f);
            self.report(seq.unwrap_or(u32::MAX), m);
        }
    }

    fn load(&mut self, resident: &Resident) -> Result<(), ModelError> {
        let want = self.case.options.l2_words;
        for m in [&mut *self.a, &mut *self.b] {
            if m.l2_words() != want {
                return Err(ModelError::Other(format!(
                    "{} has {} L2 words but the case was generated for {want}: \
                     reference, DUT and stimulus must use one hardware configuration",
                    m.name(),
                    m.l2_words()
                )));
            }
        }
        // Both images in full unless the models hold the previous case of
        // a campaign (scoreboard/resident.rs).
        let case = self.case;
        let changes = resident.changes(case);
        let full = changes
            .is_none()
            .then(|| (case.l2_image(), case.host_image()));
        let stalls = case.io_stall_seed();
        let weights = case.weight_source();
        for m in [&mut *self.a, &mut *self.b] {
            if let Some(sim) = m.sim_controls() {
                sim.set_io_stalls(stalls);
                sim.set_initial_state(case.initial_state_seed());
            }
            m.set_weight_source(weights.clone());
            call(m, |m| m.reset())?;
            match &full {
                Some((l2, host)) => {
                    call(m, |m| m.write_l2(0, l2))?;
                    call(m, |m| m.write_host(0, host))?;
                }
                None => {
                    if let Some(changes) = &changes {
                        call(m, |m| changes.apply(m))?;
                    }
                }
            }
            // Backdoor writes of the case's own (steered cases), one cycle
            // each on both sides.
            // Each is read back at once: a backdoor that drops or bends a
            // write shows here, not only if a later instruction happens to
            // read the value before it is overwritten.
            // (A model seen below `Full` has no back door to read through.)
            let reads_back = m.observation() == Observation::Full;
            for &(table, index, entry) in &case.preload.tables {
                call(m, |m| m.set_shape_entry(table, index, entry))?;
                if !reads_back {
                    continue;
                }
                let back = call(m, |m| m.shape_entry(table, index))?;
                if back != entry {
                    return Err(ModelError::Backdoor(format!(
                        "{}: shape-table entry {index} of {table:?} reads {back:?} after a backdoor write of {entry:?}",
                        m.name()
                    )));
                }
            }
            if let Some(v) = case.preload.e_max {
                call(m, |m| m.set_e_max(v))?;
            }
            if let Some(v) = case.preload.e_max.filter(|_| reads_back) {
                let back = call(m, |m| m.e_max())?;
                if back != v {
                    return Err(ModelError::Backdoor(format!(
                        "{}: e_max reads {back:#06x} after a backdoor write of {v:#06x}",
                        m.name()
                    )));
                }
            }
            // Drop whatever the reset or the load reported: it belongs to
            // no instruction of this case.
            m.take_events();
        }
        Ok(())
    }

    fn apply(&mut self, item: &Item) -> Result<(), ModelError> {
        match *item {
            Item::Instr(word) => {
                let seq = self.issued.len() as u32;
                self.issued.push(word);
                let ra = call(self.a, |m| m.issue(word))?;
                let rb = self.on_dut(|m| m.issue(word))?;
                if ra != rb {
                    let what = |(lo, hi): (AxiResp, AxiResp)| {
                        format!("0x00 write {}, 0x04 write {}", resp_name(lo), resp_name(hi))
                    };
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(
                            CheckKind::RegResponse,
                            Difference::IssueResponses,
                            what(ra),
                            what(rb),
                        ),
                    );
                    self.report(seq, m);
                }
            }
            Item::Idle(cycles) => {
                call(self.a, |m| m.idle(cycles))?;
                self.on_dut(|m| m.idle(cycles))?;
            }
            Item::RegWrite { offset, value } => {
                let ra = call(self.a, |m| m.reg_write(offset, value))?;
                let rb = self.on_dut(|m| m.reg_write(offset, value))?;
                if ra != rb {
                    // Ranked with the next instruction: it happened before
                    // that one was latched.
                    let seq = self.issued.len() as u32;
                    let m = self.mismatch(
                        None,
                        Finding::new(
                            CheckKind::RegResponse,
                            Difference::WriteResponse {
                                offset,
                                value,
                                before_seq: seq,
                            },
                            resp_name(ra).into(),
                            resp_name(rb).into(),
                        ),
                    );
                    self.report(seq, m);
                }
            }
        }
        Ok(())
    }

    /// Takes both models' events, files them per sequence number, and
    /// compares every instruction both sides have now retired.
    fn collect(&mut self) {
        let ea = self.a.take_events();
        let eb = self.b.take_events();
        self.ingest(Side::Reference, ea);
        self.ingest(Side::Dut, eb);
        // A timed reference says when everything issued so far retires. A
        // DUT still busy far past that (DEADLINE_FACTOR times, plus
        // DEADLINE_SLACK_CYCLES for stalled I/O), in a drain or while an issue
        // waits for a full FIFO, hangs, even if it keeps showing activity
        // the plain watchdog counts as progress.
        if self.a.clock().is_some_and(|c| c.predicts_timing()) {
            let deadline =
                self.last_cycle[0].unwrap_or(0) * DEADLINE_FACTOR + DEADLINE_SLACK_CYCLES;
            if let Some(clock) = self.b.clock() {
                clock.set_wait_deadline(Some(deadline));
            }
        }
        let ready: Vec<u32> = self
            .pending
            .iter()
            .copied()
            .filter(|seq| {
                let p = &self.pairs[seq];
                p.r.retired() && p.d.retired()
            })
            .collect();
        for seq in ready {
            self.compare_instruction(seq);
        }
    }

    fn ingest(&mut self, side: Side, events: Vec<Event>) {
        // Both sides through the same level, so that the checks compare
        // like with like.
        let level = self.level;
        for event in events.into_iter().filter_map(|e| level.show(e)) {
            if let Event::HostWrite {
                seq: UNATTRIBUTED,
                addr,
                data,
            } = event
            {
                self.unattributed.side(side).host.push((addr, data));
                continue;
            }
            let seq = event.seq();
            let pair = self.pairs.entry(seq).or_default();
            let compared = pair.compared;
            if !compared {
                self.pending.insert(seq);
            }
            let rec = pair.side(side);
            let retired_before = rec.retired();
            match event {
                Event::Latch { word, cycle, .. } => {
                    rec.latches.push(word);
                    rec.latch_cycles.push(cycle);
                }
                Event::Retire {
                    opcode,
                    err,
                    cycle,
                    start,
                    ..
                } => {
                    if rec.retires.is_empty() {
                        rec.start = start;
                    }
                    rec.retires.push((opcode, err, cycle));
                    let i = side as usize;
                    self.last_cycle[i] = self.last_cycle[i].max(cycle);
                }
                Event::L2Write {
                    addr, data, mask, ..
                } => rec.l2.push(L2Write::new(addr, data, mask)),
                Event::HostWrite { addr, data, .. } => rec.host.push((addr, data)),
                Event::ShapeWrite {
                    table,
                    index,
                    entry,
                    ..
                } => rec.shape.push((table, index, entry)),
                Event::EMaxWrite { value, .. } => rec.emax.push(value),
                Event::StreamRead { stream, beats, .. } => rec.streams.push((stream, beats)),
            }
            let retires = rec.retires.len();
            let is_retire = matches!(event, Event::Retire { .. });
            let is_latch = matches!(event, Event::Latch { .. });
            let relatched = (is_latch && compared).then(|| latch_text(&rec.latches));
            let is_write = !is_retire && !is_latch;
            // Events that arrive before the comparison are judged by it;
            // these can only be judged on arrival.
            if is_write && retired_before {
                let (r, d) = side.split(
                    format!("{}, after its retire", describe_write(&event)),
                    "no late write".into(),
                );
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::WriteAfterRetire,
                        Difference::LateWrite { by: side, seq },
                        r,
                        d,
                    ),
                );
                self.report(seq, m);
            } else if is_retire && compared && retires > 1 {
                let (r, d) = side.split(
                    format!("retired seq {seq} {retires} times"),
                    "retired it once".into(),
                );
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::ExtraRetire,
                        Difference::RetiredAgain { by: side, seq },
                        r,
                        d,
                    ),
                );
                self.report(seq, m);
            } else if let Some(latches) = relatched {
                let (r, d) = side.split(latches, "latched it once".into());
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::Latch,
                        Difference::LatchedAgain { by: side, seq },
                        r,
                        d,
                    ),
                );
                self.report(seq, m);
            }
        }
    }

    /// After the drain: whatever was never compared. Every issued
    /// instruction must have retired on both sides.
    fn sweep(&mut self) {
        // A black box reports nothing per instruction.
        if self.level == Observation::BlackBox {
            return;
        }
        let seqs: Vec<u32> = self.pending.iter().copied().collect();
        for seq in seqs {
            let p = &self.pairs[&seq];
            match (p.r.retired(), p.d.retired()) {
                (true, true) => self.compare_instruction(seq),
                (true, false) => {
                    let r = retire_text(&p.r);
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(
                            CheckKind::MissingRetire,
                            Difference::DutNeverRetired { seq },
                            r,
                            "no retire".into(),
                        ),
                    );
                    self.report(seq, m);
                }
                (false, true) => {
                    let d = retire_text(&p.d);
                    let difference = if (seq as usize) < self.issued.len() {
                        Difference::ReferenceNeverRetired { seq }
                    } else {
                        Difference::NeverIssued {
                            seq,
                            issued: self.issued.len(),
                        }
                    };
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(CheckKind::ExtraRetire, difference, "no retire".into(), d),
                    );
                    self.report(seq, m);
                }
                (false, false) if (seq as usize) < self.issued.len() => {
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(
                            CheckKind::MissingRetire,
                            Difference::NeitherRetired { seq },
                            "no retire".into(),
                            "no retire".into(),
                        ),
                    );
                    self.report(seq, m);
                }
                // Events for a sequence number that was never issued (a
                // write with a wrong one, say): compare what there is, so
                // that it shows up under its own kind.
                (false, false) => self.compare_instruction(seq),
            }
        }
        for seq in 0..self.issued.len() as u32 {
            if !self.pairs.contains_key(&seq) {
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::MissingRetire,
                        Difference::NothingReported { seq },
                        "nothing".into(),
                        "nothing".into(),
                    ),
                );
                self.report(seq, m);
            }
        }
    }

    fn compare_instruction(&mut self, seq: u32) {
        let expected = self.issued.get(seq as usize).copied();
        let pair = self
            .pairs
            .get_mut(&seq)
            .expect("compared seqs have records");
        pair.compared = true;
        self.pending.remove(&seq);
        let (r, d) = (&pair.r, &pair.d);
        let found = compare_records(seq, expected, r, d, self.level);
        if let Some(f) = found {
            let m = self.mismatch(Some(seq), f);
            self.report(seq, m);
        }
    }

    fn compare_final_state(&mut self) -> Result<(), ModelError> {
        let checks: &[FinalCheck] = if self.level == Observation::Full {
            &[
                final_l2,
                final_host,
                final_tables,
                final_emax,
                final_weight_stream,
                final_status,
                final_retired,
                final_instr_regs,
            ]
        } else {
            // Below `Full` the host writes were compared for the whole
            // program; the shape tables and e_max have no port to be read
            // by (docs/dut-contract.md, "What each level checks").
            if let Some(f) = compare_host_writes(&self.unattributed.r, &self.unattributed.d) {
                let m = self.mismatch(None, f);
                self.report(u32::MAX, m);
                return Ok(());
            }
            &[
                final_host,
                final_weight_stream,
                final_status,
                final_retired,
                final_instr_regs,
            ]
        };
        for &check in checks {
            // A failed assertion of the DUT during these reads is the DUT's
            // (the reference has none); any other error cannot tell the side.
            let found = match check(&mut *self.a, &mut *self.b) {
                Ok(found) => found,
                Err(e @ ModelError::Assertion(_)) => return Err(self.dut_failed(e)),
                Err(e) => return Err(e),
            };
            if let Some(f) = found {
                let m = self.mismatch(None, f);
                self.report(u32::MAX, m);
                return Ok(());
            }
        }
        if self.level < Observation::Full {
            // Last: the copy overwrites host memory.
            self.read_back = true;
            let words = self.a.l2_words();
            call(self.a, |m| read_back_l2(m, words))?;
            self.on_dut(|m| read_back_l2(m, words))?;
            let read = |m: &mut dyn NpuModel, addr, out: &mut [Word]| m.read_host(addr, out);
            let found = compare_memory(
                CheckKind::FinalL2,
                Memory::Host,
                words,
                &mut *self.a,
                &mut *self.b,
                read,
            )?;
            if let Some(f) = found {
                let m = self.mismatch(None, f.read_back());
                self.report(u32::MAX, m);
            }
        }
        Ok(())
    }

    /// Places a finding at instruction `seq` (`None`: no instruction).
    fn mismatch(&self, seq: Option<u32>, f: Finding) -> Mismatch {
        let word = seq.and_then(|s| self.issued.get(s as usize).copied());
        let cycle = seq.and_then(|s| {
            self.pairs
                .get(&s)
                .and_then(|p| p.d.retire_cycle().or(p.r.retire_cycle()))
        });
        Mismatch {
            kind: f.kind,
            seq,
            word,
            cycle,
            difference: f.difference,
            reference: f.reference,
            dut: f.dut,
            afterwards: None,
            reference_model: self.a.name().to_string(),
            dut_model: self.b.name().to_string(),
        }
    }

    fn report(&mut self, rank_seq: u32, m: Mismatch) {
        self.found.push(((true, rank_seq, m.kind), m));
    }

    /// Reports `m` ahead of every other difference (a failed assertion that
    /// came first in time).
    fn report_first(&mut self, m: Mismatch) {
        self.found.push(((false, 0, m.kind), m));
    }
}

impl Side {
    /// (reference text, DUT text) with `this` on this side.
    fn split(self, this: String, other: String) -> (String, String) {
        match self {
            Side::Reference => (this, other),
            Side::Dut => (other, this),
        }
    }
}

/// A failed check, before it is placed at an instruction: which check,
/// what differed, and what each side did (for people).
struct Finding {
    kind: CheckKind,
    difference: Difference,
    reference: String,
    dut: String,
}

impl Finding {
    /// A difference found in host memory after [`read_back_l2`], told as
    /// the L2's: word i of the copy is L2 word i.
    fn read_back(self) -> Finding {
        let Difference::FinalMemory {
            addr,
            reference,
            dut,
            differing,
            ..
        } = self.difference
        else {
            return self;
        };
        let text = |w: Word| format!("L2[0x{addr:05x}] = {} (read back)", hex_word(w));
        Finding::new(
            CheckKind::FinalL2,
            Difference::FinalMemory {
                memory: Memory::L2,
                addr,
                reference,
                dut,
                differing,
            },
            text(reference),
            text(dut),
        )
    }

    fn new(kind: CheckKind, difference: Difference, reference: String, dut: String) -> Finding {
        Finding {
            kind,
            difference,
            reference,
            dut,
        }
    }
}

type Found = Option<Finding>;
type FinalCheck = fn(&mut dyn NpuModel, &mut dyn NpuModel) -> Result<Found, ModelError>;

/// The checks of one instruction, in [`CheckKind`] order; the first that
/// fails is returned.
fn compare_records(
    seq: u32,
    expected: Option<u64>,
    r: &Record,
    d: &Record,
    level: Observation,
) -> Found {
    // Latch: exactly one, of the word the harness issued; none for a
    // sequence number that was never issued.
    let latch_ok = |rec: &Record| match expected {
        Some(word) => rec.latches == [word],
        None => rec.latches.is_empty(),
    };
    // Latches are a tap of `Full`.
    if level == Observation::Full && (!latch_ok(r) || !latch_ok(d)) {
        let wrong = if latch_ok(r) {
            Side::Dut
        } else {
            Side::Reference
        };
        return Some(Finding::new(
            CheckKind::Latch,
            Difference::LatchWord {
                seq,
                issued: expected,
                wrong,
            },
            latch_text(&r.latches),
            latch_text(&d.latches),
        ));
    }
    if let (Some(&(ro, _, _)), Some(&(dop, _, _))) = (r.retires.first(), d.retires.first()) {
        if ro != dop {
            return Some(Finding::new(
                CheckKind::RetireOpcode,
                Difference::RetireOpcode {
                    reference: ro,
                    dut: dop,
                },
                retire_text(r),
                retire_text(d),
            ));
        }
    }
    if let (Some(&(_, re, _)), Some(&(_, de, _))) = (r.retires.first(), d.retires.first()) {
        if re != de {
            return Some(Finding::new(
                CheckKind::RetireErr,
                Difference::RetireErr {
                    reference: re,
                    dut: de,
                },
                retire_text(r),
                retire_text(d),
            ));
        }
    }
    if r.retires.len() > 1 || d.retires.len() > 1 {
        return Some(Finding::new(
            CheckKind::ExtraRetire,
            Difference::RetiredMoreThanOnce { seq },
            retire_text(r),
            retire_text(d),
        ));
    }
    compare_stream_reads(r, d)
        .or_else(|| compare_l2_writes(r, d))
        .or_else(|| compare_host_writes(r, d))
        .or_else(|| compare_shape_writes(r, d))
        .or_else(|| compare_emax_writes(r, d))
}

/// The first key (in key order) whose group of entries differs between
/// `r` and `d`, with both groups. Each side is sorted first, so the order in
/// which a model reported its writes does not matter.
fn first_differing_group<T: Ord + Clone, K: Ord + Copy>(
    r: &[T],
    d: &[T],
    key: impl Fn(&T) -> K,
) -> Option<(K, Vec<T>, Vec<T>)> {
    // Almost every instruction matches: say so without building groups,
    // in the order reported if both sides agree on it, else sorted.
    if r == d {
        return None;
    }
    if r.len() == d.len() {
        let sorted = |v: &[T]| {
            let mut v = v.to_vec();
            v.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.cmp(b)));
            v
        };
        if sorted(r) == sorted(d) {
            return None;
        }
    }
    let group = |v: &[T]| {
        let mut m: BTreeMap<K, Vec<T>> = BTreeMap::new();
        for x in v {
            m.entry(key(x)).or_default().push(x.clone());
        }
        for g in m.values_mut() {
            g.sort();
        }
        m
    };
    let (gr, gd) = (group(r), group(d));
    let mut keys: Vec<K> = gr.keys().chain(gd.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().find_map(|k| {
        let (a, b) = (
            gr.get(&k).cloned().unwrap_or_default(),
            gd.get(&k).cloned().unwrap_or_default(),
        );
        (a != b).then_some((k, a, b))
    })
}

/// Missing, extra, a different count, or (same count) the first value of
/// each: how two differing groups of writes to one place differ.
fn group_diff<T, V>(r: &[T], d: &[T], value: impl Fn(&T) -> V) -> GroupDiff<V> {
    match (r.len(), d.len()) {
        (_, 0) => GroupDiff::Missing,
        (0, _) => GroupDiff::Extra,
        (a, b) if a != b => GroupDiff::Count {
            reference: a,
            dut: b,
        },
        _ => GroupDiff::Value {
            reference: value(&r[0]),
            dut: value(&d[0]),
        },
    }
}

fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        "no write".into()
    } else {
        items.iter().map(show).collect::<Vec<_>>().join("; ")
    }
}

fn compare_stream_reads(r: &Record, d: &Record) -> Found {
    let (stream, a, b) = first_differing_group(&r.streams, &d.streams, |s| s.0)?;
    let place = stream_name(stream);
    let show = |s: &(u8, u32)| format!("{} beats from the {place}", s.1);
    Some(Finding::new(
        CheckKind::WeightStream,
        Difference::StreamRead {
            stream,
            diff: group_diff(&a, &b, |s| s.1),
        },
        list_reads(&a, show),
        list_reads(&b, show),
    ))
}

fn list_reads<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        "no stream read".into()
    } else {
        items.iter().map(show).collect::<Vec<_>>().join("; ")
    }
}

fn compare_l2_writes(r: &Record, d: &Record) -> Found {
    let (addr, a, b) = first_differing_group(&r.l2, &d.l2, |w| w.addr)?;
    let place = format!("L2[0x{addr:05x}]");
    let show = |w: &L2Write| format!("{place} <- {} mask 0x{:02x}", hex_word(w.data), w.mask);
    Some(Finding::new(
        CheckKind::L2Writes,
        Difference::L2Write {
            addr,
            diff: group_diff(&a, &b, |w| (w.mask, w.data)),
            totals: (r.l2.len(), d.l2.len()),
        },
        list(&a, show),
        list(&b, show),
    ))
}

fn compare_host_writes(r: &Record, d: &Record) -> Found {
    let (addr, a, b) = first_differing_group(&r.host, &d.host, |w| w.0)?;
    let place = format!("HOST[0x{addr:05x}]");
    let show = |w: &(u32, Word)| format!("{place} <- {}", hex_word(w.1));
    Some(Finding::new(
        CheckKind::HostWrites,
        Difference::HostWrite {
            addr,
            diff: group_diff(&a, &b, |w| w.1),
            totals: (r.host.len(), d.host.len()),
        },
        list(&a, show),
        list(&b, show),
    ))
}

fn compare_shape_writes(r: &Record, d: &Record) -> Found {
    // ShapeEntry has no order; compare as (a, b, c) tuples.
    let flat = |v: &[(ShapeTable, u8, ShapeEntry)]| -> Vec<(ShapeTable, u8, (u16, u16, u16))> {
        v.iter().map(|&(t, i, e)| (t, i, (e.a, e.b, e.c))).collect()
    };
    let ((table, index), a, b) =
        first_differing_group(&flat(&r.shape), &flat(&d.shape), |w| (w.0, w.1))?;
    let place = table_slot(table, index);
    let entry = |w: &(ShapeTable, u8, (u16, u16, u16))| {
        let (a, b, c) = w.2;
        ShapeEntry { a, b, c }
    };
    let show = |w: &(ShapeTable, u8, (u16, u16, u16))| format!("{place} <- {}", shape(entry(w)));
    Some(Finding::new(
        CheckKind::ShapeWrites,
        Difference::ShapeWrite {
            table,
            index,
            diff: group_diff(&a, &b, entry),
        },
        list(&a, show),
        list(&b, show),
    ))
}

fn compare_emax_writes(r: &Record, d: &Record) -> Found {
    let ((), a, b) = first_differing_group(&r.emax, &d.emax, |_| ())?;
    let show = |v: &u16| format!("e_max <- 0x{v:04x}");
    Some(Finding::new(
        CheckKind::EMaxWrites,
        Difference::EMaxWrite {
            diff: group_diff(&a, &b, |v| *v),
        },
        list(&a, show),
        list(&b, show),
    ))
}

// ----- final state ---------------------------------------------------------

/// Calls `f` on `m`; an error names the model, so that a report says which
/// side hung.
fn call<T>(
    m: &mut dyn NpuModel,
    f: impl FnOnce(&mut dyn NpuModel) -> Result<T, ModelError>,
) -> Result<T, ModelError> {
    let result = f(&mut *m);
    result.map_err(|e| named(e, m.name()))
}

/// `e` with the model's name in its text.
fn named(e: ModelError, name: &str) -> ModelError {
    match e {
        ModelError::Watchdog { what, cycles } => ModelError::Watchdog {
            what: format!("{what} ({name})"),
            cycles,
        },
        ModelError::Backdoor(m) => ModelError::Backdoor(format!("{name}: {m}")),
        ModelError::Protocol(m) => ModelError::Protocol(format!("{name}: {m}")),
        e @ ModelError::Assertion(_) => e,
        ModelError::Other(m) => ModelError::Other(format!("{name}: {m}")),
        ModelError::Abandoned { what } => ModelError::Abandoned {
            what: format!("{what} ({name})"),
        },
    }
}

/// Words compared at a time: two buffers of this many words stay in the
/// core's cache, so a whole memory is compared without allocating or
/// clearing a copy of it (docs/build.md, "Campaign throughput").
const COMPARE_CHUNK_WORDS: usize = 4096;

/// The memory `m` lends, if it does.
fn lent_memory(m: &dyn NpuModel, memory: Memory) -> Option<MemoryView<'_>> {
    match memory {
        Memory::L2 => m.l2_view(),
        Memory::Host => m.host_view(),
    }
}

/// Compares every word of one memory of the two models: in place where a
/// model lends its memory (a view), else a chunk at a time through the
/// back door (`read`). The first differing word, and how many differ in
/// all.
fn compare_memory(
    kind: CheckKind,
    memory: Memory,
    words: u32,
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
    read: impl Fn(&mut dyn NpuModel, u32, &mut [Word]) -> Result<(), ModelError>,
) -> Result<Found, ModelError> {
    // A view of another length than the memory is read instead.
    let lends =
        |m: &dyn NpuModel| lent_memory(m, memory).is_some_and(|v| v.words() == words as usize);
    let (a_lends, b_lends) = (lends(&*a), lends(&*b));
    let (mut r_buf, mut d_buf) = (Vec::new(), Vec::new());
    let mut first: Option<(u32, Word, Word)> = None;
    let mut differing = 0usize;
    let mut start = 0u32;
    while start < words {
        let n = (words - start).min(COMPARE_CHUNK_WORDS as u32) as usize;
        let range = start as usize..start as usize + n;
        let r = if a_lends {
            lent_memory(&*a, memory).expect("lent").bytes(range.clone())
        } else {
            r_buf.resize(n, 0);
            call(a, |m| read(m, start, &mut r_buf[..n]))?;
            MemoryView::of_words(&r_buf[..n]).bytes(0..n)
        };
        let d = if b_lends {
            lent_memory(&*b, memory).expect("lent").bytes(range)
        } else {
            d_buf.resize(n, 0);
            call(b, |m| read(m, start, &mut d_buf[..n]))?;
            MemoryView::of_words(&d_buf[..n]).bytes(0..n)
        };
        if r != d {
            for (i, (x, y)) in r.chunks_exact(16).zip(d.chunks_exact(16)).enumerate() {
                if x != y {
                    differing += 1;
                    let word = |b: &[u8]| u128::from_le_bytes(b.try_into().expect("16 bytes"));
                    first.get_or_insert((start + i as u32, word(x), word(y)));
                }
            }
        }
        start += n as u32;
    }
    let Some((addr, reference, dut)) = first else {
        return Ok(None);
    };
    let mem = memory.name();
    Ok(Some(Finding::new(
        kind,
        Difference::FinalMemory {
            memory,
            addr,
            reference,
            dut,
            differing,
        },
        format!("{mem}[0x{addr:05x}] = {}", hex_word(reference)),
        format!("{mem}[0x{addr:05x}] = {}", hex_word(dut)),
    )))
}

fn final_l2(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let words = a.l2_words();
    let read = |m: &mut dyn NpuModel, addr, out: &mut [Word]| m.read_l2(addr, out);
    compare_memory(CheckKind::FinalL2, Memory::L2, words, a, b, read)
}

/// Words of L2 one MEMCPY of the read back copies, and the fmap shape
/// entries it uses: (8, READ_BACK_WORDS, 1) is 8 * READ_BACK_WORDS BF16
/// elements, READ_BACK_WORDS words (CONTRACT section 4); the last entry
/// holds a shorter remainder.
const READ_BACK_WORDS: u32 = 4096;
const READ_BACK_SHAPES: [u8; 2] = [SHAPE_ENTRIES as u8 - 1, SHAPE_ENTRIES as u8 - 2];

/// The program that copies L2 words `0..words` to host words `0..words`
/// through the NPU's own MEMCPY (L2 to host), for a model seen below
/// `Full` (docs/dut-contract.md, "Reading L2 back").
pub fn read_back_program(words: u32) -> Vec<u64> {
    let (whole, rest) = (words / READ_BACK_WORDS, words % READ_BACK_WORDS);
    let shape = |index: u8, n: u32| {
        Instr::Memset(Memset {
            dest_cache: ShapeTable::Fmap,
            dest_addr: index,
            a_value: 8,
            b_value: n as u16,
            c_value: 1,
            reserved: 0,
        })
    };
    let copy = |start: u32, index: u8| {
        Instr::Memcpy(Memcpy {
            from_device: false,
            to_device: true,
            dest_addr: start,
            src_addr: start,
            aux_addr: 0,
            shape_ptr_addr: index,
            async_: false,
        })
    };
    let mut program = vec![shape(READ_BACK_SHAPES[0], READ_BACK_WORDS)];
    if rest > 0 {
        program.push(shape(READ_BACK_SHAPES[1], rest));
    }
    program.extend((0..whole).map(|k| copy(k * READ_BACK_WORDS, READ_BACK_SHAPES[0])));
    if rest > 0 {
        program.push(copy(whole * READ_BACK_WORDS, READ_BACK_SHAPES[1]));
    }
    program.iter().map(Instr::encode).collect()
}

/// Runs [`read_back_program`] on `m` to the end; what it reports is not
/// part of the case and is dropped.
fn read_back_l2(m: &mut dyn NpuModel, words: u32) -> Result<(), ModelError> {
    for word in read_back_program(words) {
        m.issue(word)?;
    }
    m.drain()?;
    m.take_events();
    Ok(())
}

fn final_host(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let read = |m: &mut dyn NpuModel, addr, out: &mut [Word]| m.read_host(addr, out);
    compare_memory(CheckKind::FinalHost, Memory::Host, HOST_WORDS, a, b, read)
}

fn final_tables(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let mut differing = Vec::new();
    for table in ShapeTable::ALL {
        for index in 0..SHAPE_ENTRIES as u8 {
            let r = call(a, |m| m.shape_entry(table, index))?;
            let d = call(b, |m| m.shape_entry(table, index))?;
            if r != d {
                differing.push((table, index, r, d));
            }
        }
    }
    Ok(differing.first().map(|&(table, index, r, d)| {
        let place = table_slot(table, index);
        Finding::new(
            CheckKind::FinalTables,
            Difference::FinalTable {
                table,
                index,
                differing: differing.len(),
            },
            format!("{place} = {}", shape(r)),
            format!("{place} = {}", shape(d)),
        )
    }))
}

fn final_emax(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let r = call(a, |m| m.e_max())?;
    let d = call(b, |m| m.e_max())?;
    Ok((r != d).then(|| {
        Finding::new(
            CheckKind::FinalEMax,
            Difference::FinalEMax {
                reference: r,
                dut: d,
            },
            format!("e_max = 0x{r:04x}"),
            format!("e_max = 0x{d:04x}"),
        )
    }))
}

fn final_weight_stream(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let (r, d) = (a.weight_beats_consumed(), b.weight_beats_consumed());
    let show = |c: [u64; 2]| {
        (0..2u8)
            .map(|s| format!("{} beats from the {}", c[usize::from(s)], stream_name(s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok((0..2u8)
        .find(|&s| r[usize::from(s)] != d[usize::from(s)])
        .map(|stream| {
            let i = usize::from(stream);
            Finding::new(
                CheckKind::FinalWeightStream,
                Difference::FinalBeats {
                    stream,
                    reference: r[i],
                    dut: d[i],
                },
                show(r),
                show(d),
            )
        }))
}

fn read_reg(m: &mut dyn NpuModel, offset: u32) -> Result<(u32, AxiResp), ModelError> {
    call(m, |m| m.reg_read(offset))
}

fn final_status(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let (r, d) = (read_reg(a, reg::STATUS)?, read_reg(b, reg::STATUS)?);
    Ok((r != d).then(|| {
        let show = |(v, resp): (u32, AxiResp)| {
            format!("0x{v:08x} ({}), {}", status_fields(v), resp_name(resp))
        };
        Finding::new(
            CheckKind::FinalStatus,
            Difference::FinalStatus {
                reference: r.0,
                dut: d.0,
            },
            show(r),
            show(d),
        )
    }))
}

/// 0x00 and 0x04 read back the words last written to them, and an offset
/// the map does not name reads 0 with SLVERR (CONTRACT section 10): read
/// paths the instruction stream alone never exercises. The unmapped ones
/// are the first past the map and the last of the 12-bit space.
fn final_instr_regs(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    for offset in [reg::INSTR_LO, reg::INSTR_HI, UNMAPPED_FIRST, UNMAPPED_LAST] {
        let (r, d) = (read_reg(a, offset)?, read_reg(b, offset)?);
        if r != d {
            let show = |(v, resp): (u32, AxiResp)| {
                format!("0x{offset:02x} = 0x{v:08x}, {}", resp_name(resp))
            };
            return Ok(Some(Finding::new(
                CheckKind::FinalInstrRegs,
                Difference::FinalInstrReg { offset },
                show(r),
                show(d),
            )));
        }
    }
    Ok(None)
}

/// Register offsets no register answers, read at the end of every case.
const UNMAPPED_FIRST: u32 = 0x010;
const UNMAPPED_LAST: u32 = 0xFFC;

fn final_retired(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let (r, d) = (read_reg(a, reg::RETIRED)?, read_reg(b, reg::RETIRED)?);
    Ok((r != d).then(|| {
        let show = |(v, resp): (u32, AxiResp)| format!("{v} retired, {}", resp_name(resp));
        Finding::new(
            CheckKind::FinalRetiredCount,
            Difference::FinalRetired {
                reference: r.0,
                dut: d.0,
            },
            show(r),
            show(d),
        )
    }))
}

// ----- formatting ------------------------------------------------------------

/// A write event as the reports show it.
fn describe_write(event: &Event) -> String {
    match *event {
        Event::L2Write {
            addr, data, mask, ..
        } => format!("L2[0x{addr:05x}] <- {} mask 0x{mask:02x}", hex_word(data)),
        Event::HostWrite { addr, data, .. } => format!("HOST[0x{addr:05x}] <- {}", hex_word(data)),
        Event::ShapeWrite {
            table,
            index,
            entry,
            ..
        } => format!("{} <- {}", table_slot(table, index), shape(entry)),
        Event::EMaxWrite { value, .. } => format!("e_max <- 0x{value:04x}"),
        Event::StreamRead { stream, beats, .. } => {
            format!("{beats} beats from the {}", stream_name(stream))
        }
        Event::Latch { .. } | Event::Retire { .. } => "not a write".into(),
    }
}

fn retire_text(rec: &Record) -> String {
    if rec.retires.is_empty() {
        return "no retire".into();
    }
    rec.retires
        .iter()
        .map(|&(op, err, cycle)| {
            let at = cycle.map(|c| format!(" at cycle {c}")).unwrap_or_default();
            format!("retired opcode 0x{op:x} with err {}{at}", err_name(err))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn latch_text(latches: &[u64]) -> String {
    match latches {
        [] => "no latch".into(),
        _ => latches
            .iter()
            .map(|w| format!("latched 0x{w:016x}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pccx_golden::golden::{Golden, GoldenConfig};

    #[test]
    fn the_read_back_copies_every_l2_word_to_the_same_host_word() {
        // Whole chunks, and a remainder (two shape entries, two lengths).
        for words in [4096, 5000, 114_688] {
            let program = read_back_program(words);
            let copies = words.div_ceil(READ_BACK_WORDS) as usize;
            let shapes = if words % READ_BACK_WORDS == 0 { 1 } else { 2 };
            assert_eq!(program.len(), shapes + copies, "{words} words");
            let mut m = Golden::new(GoldenConfig { l2_words: words });
            let image: Vec<Word> = (0..words).map(|i| Word::from(i) * 0x1_0001 + 7).collect();
            m.write_l2(0, &image).unwrap();
            read_back_l2(&mut m, words).unwrap();
            let mut host = vec![0; words as usize];
            m.read_host(0, &mut host).unwrap();
            assert!(host == image, "{words} words: the copy differs");
            // The word after the copy is untouched.
            let mut next = [1];
            m.read_host(words, &mut next).unwrap();
            assert_eq!(next, [0]);
        }
    }

    #[test]
    fn disabled_elements_do_not_take_part_in_the_comparison() {
        let a = L2Write::new(7, 0x1111_2222_3333_4444_5555_6666_7777_8888, 0b0000_0001);
        let b = L2Write::new(7, 0xffff_ffff_ffff_ffff_ffff_ffff_ffff_8888, 0b0000_0001);
        assert_eq!(a, b);
        let c = L2Write::new(7, 0x8889, 0b0000_0001);
        assert_ne!(a, c);
    }

    #[test]
    fn groups_are_compared_in_key_order_whatever_the_report_order() {
        let r = [(5u32, 1u128), (3, 1), (9, 1)];
        let d = [(9u32, 2u128), (3, 1), (5, 1)];
        let (k, a, b) = first_differing_group(&r, &d, |w| w.0).unwrap();
        assert_eq!((k, a, b), (9, vec![(9, 1)], vec![(9, 2)]));
        assert!(first_differing_group(&r, &[(9, 1), (5, 1), (3, 1)], |w| w.0).is_none());
    }

    #[test]
    fn hex_word_shows_elements_high_first() {
        assert_eq!(
            hex_word(0x0007_0006_0005_0004_0003_0002_0001_0000),
            "0x0007_0006_0005_0004_0003_0002_0001_0000"
        );
    }

    #[test]
    fn status_fields_names_each_field() {
        let v = reg::STATUS_DONE | reg::STATUS_ERR | (6 << reg::STATUS_ERR_CODE_SHIFT);
        assert_eq!(status_fields(v), "BUSY=0 DONE=1 ERR=1 err_code=6 L2_RANGE");
    }
}
