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

mod timing;

use crate::stimulus::TestCase;
use pccx_golden::asm::{disasm, Item};
use pccx_golden::model::{
    reg, AxiResp, ErrorCode, Event, ModelError, NpuModel, ShapeEntry, ShapeTable, Word, HOST_WORDS,
    SHAPE_ENTRIES,
};
use pccx_golden::streams::STREAM_NAMES;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Which check found a difference. The order is the order in which the
/// checks of one instruction run: when two checks fail for the same
/// sequence number, the earlier one is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckKind {
    /// Latch events: one per instruction, with the issued word.
    Latch,
    /// AXI-Lite write responses (issue and `.write` items).
    RegResponse,
    /// Retire trace opcode.
    RetireOpcode,
    /// Retire trace error code.
    RetireErr,
    /// The reference retired an instruction the DUT did not.
    MissingRetire,
    /// The DUT retired an instruction the reference did not, or twice.
    ExtraRetire,
    /// A write reported after the writer's retire.
    WriteAfterRetire,
    /// Weight-stream reads: which stream, how many beats (GEMV, GEMM).
    WeightStream,
    /// L2 write set: address, mask, data under mask; missing and extra.
    L2Writes,
    /// Host write set.
    HostWrites,
    /// Shape-table writes.
    ShapeWrites,
    /// e_max writes.
    EMaxWrites,
    FinalL2,
    FinalHost,
    FinalTables,
    FinalEMax,
    /// Beats taken from each weight stream since reset, after the drain.
    FinalWeightStream,
    /// Status register (0x08) after the drain.
    FinalStatus,
    /// Retired-instruction count (0x0C) after the drain.
    FinalRetiredCount,
    /// The held instruction words (0x00, 0x04) read back after the drain.
    FinalInstrRegs,
    /// Exact timing (ideal I/O): an instruction's latch, start or retire
    /// cycle differs from the timing model's prediction.
    Timing,
    /// Exact timing: the status register (BUSY, DONE, ERR, err_code)
    /// sampled every cycle differs from the prediction.
    StatusTimeline,
    /// Order timing (stall I/O): the DUT retired an instruction before one
    /// it must wait for (docs/semantics.md section 8).
    RetireOrder,
}

impl CheckKind {
    pub const ALL: [CheckKind; 23] = [
        CheckKind::Latch,
        CheckKind::RegResponse,
        CheckKind::RetireOpcode,
        CheckKind::RetireErr,
        CheckKind::MissingRetire,
        CheckKind::ExtraRetire,
        CheckKind::WriteAfterRetire,
        CheckKind::WeightStream,
        CheckKind::L2Writes,
        CheckKind::HostWrites,
        CheckKind::ShapeWrites,
        CheckKind::EMaxWrites,
        CheckKind::FinalL2,
        CheckKind::FinalHost,
        CheckKind::FinalTables,
        CheckKind::FinalEMax,
        CheckKind::FinalWeightStream,
        CheckKind::FinalStatus,
        CheckKind::FinalRetiredCount,
        CheckKind::FinalInstrRegs,
        CheckKind::Timing,
        CheckKind::StatusTimeline,
        CheckKind::RetireOrder,
    ];

    /// The name reports and JSON use.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Latch => "latch",
            CheckKind::RegResponse => "reg-response",
            CheckKind::RetireOpcode => "retire-opcode",
            CheckKind::RetireErr => "retire-err",
            CheckKind::MissingRetire => "missing-retire",
            CheckKind::ExtraRetire => "extra-retire",
            CheckKind::WriteAfterRetire => "write-after-retire",
            CheckKind::WeightStream => "weight-stream",
            CheckKind::L2Writes => "l2-writes",
            CheckKind::HostWrites => "host-writes",
            CheckKind::ShapeWrites => "shape-writes",
            CheckKind::EMaxWrites => "emax-writes",
            CheckKind::FinalL2 => "final-l2",
            CheckKind::FinalHost => "final-host",
            CheckKind::FinalTables => "final-tables",
            CheckKind::FinalEMax => "final-emax",
            CheckKind::FinalWeightStream => "final-weight-stream",
            CheckKind::FinalStatus => "final-status",
            CheckKind::FinalRetiredCount => "final-retired-count",
            CheckKind::FinalInstrRegs => "final-instr-regs",
            CheckKind::Timing => "timing",
            CheckKind::StatusTimeline => "status-timeline",
            CheckKind::RetireOrder => "retire-order",
        }
    }

    /// Whether the check compares end-of-program state (it then has no
    /// sequence number).
    pub fn is_final(self) -> bool {
        (CheckKind::FinalL2..=CheckKind::FinalInstrRegs).contains(&self)
            || self == CheckKind::StatusTimeline
    }
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One difference between the reference and the DUT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub kind: CheckKind,
    /// The instruction it concerns; `None` for final-state checks and for
    /// `.write` items.
    pub seq: Option<u32>,
    /// That instruction's word.
    pub word: Option<u64>,
    pub disasm: Option<String>,
    /// The DUT's retire cycle of that instruction (the reference's if the
    /// DUT has none), when the model reports cycles.
    pub cycle: Option<u64>,
    /// The first differing word or field, in words.
    pub detail: String,
    /// What the reference did.
    pub reference: String,
    /// What the DUT did.
    pub dut: String,
    pub reference_model: String,
    pub dut_model: String,
}

impl Mismatch {
    /// The mismatch as the campaign report and the repro file write it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": self.kind.name(),
            "seq": self.seq,
            "word": self.word.map(|w| format!("0x{w:016x}")),
            "disasm": self.disasm,
            "cycle": self.cycle,
            "detail": self.detail,
            "reference": self.reference,
            "dut": self.dut,
            "reference_model": self.reference_model,
            "dut_model": self.dut_model,
        })
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MISMATCH {}", self.kind)?;
        if let Some(seq) = self.seq {
            write!(f, " at seq {seq}")?;
        }
        if let Some(cycle) = self.cycle {
            write!(f, ", cycle {cycle}")?;
        }
        writeln!(f)?;
        if let Some(word) = self.word {
            write!(f, "  instruction: 0x{word:016x}")?;
            if let Some(text) = &self.disasm {
                write!(f, "  {text}")?;
            }
            writeln!(f)?;
        }
        let rl = format!("reference ({})", self.reference_model);
        let dl = format!("dut ({})", self.dut_model);
        let width = rl.len().max(dl.len());
        writeln!(f, "  {rl:<width$}: {}", self.reference)?;
        writeln!(f, "  {dl:<width$}: {}", self.dut)?;
        write!(f, "  detail: {}", self.detail)
    }
}

/// The result of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Instructions issued (each got a sequence number).
    pub instructions: u32,
    /// The DUT's last retire cycle (else the reference's), when reported.
    pub cycles: Option<u64>,
    pub first_mismatch: Option<Mismatch>,
    /// Cycles each engine (GEMV, GEMM, MEM, MEMSET, CVO) spent on the DUT's
    /// instructions, start to retire inclusive, when the DUT reports starts.
    pub engine_busy: [u64; 5],
}

/// Which timing check a run applies (docs/timing.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
    let mut run = Run::new(case, reference, dut);
    run.timing = timing;
    match run.execute() {
        Ok(()) => {}
        Err(e) if run.has_mismatch() => run.note_after_mismatch(&e),
        Err(e) => return Err(e),
    }
    Ok(run.outcome())
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Reference,
    Dut,
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
    found: Vec<((u32, CheckKind), Mismatch)>,
    last_cycle: [Option<u64>; 2],
    timing: TimingMode,
}

impl<'a> Run<'a> {
    fn new(case: &'a TestCase, a: &'a mut dyn NpuModel, b: &'a mut dyn NpuModel) -> Run<'a> {
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
        }
    }

    fn has_mismatch(&self) -> bool {
        !self.found.is_empty()
    }

    fn outcome(mut self) -> Outcome {
        self.found.sort_by_key(|(rank, _)| *rank);
        let mut engine_busy = [0u64; 5];
        for p in self.pairs.values() {
            if let (Some(start), Some(retire), Some(&(opcode, _, _))) =
                (p.d.start, p.d.retire_cycle(), p.d.retires.first())
            {
                if let Some(busy) = engine_busy.get_mut(usize::from(opcode)) {
                    *busy += retire.saturating_sub(start) + 1;
                }
            }
        }
        Outcome {
            engine_busy,
            instructions: self.issued.len() as u32,
            cycles: self.last_cycle[1].or(self.last_cycle[0]),
            first_mismatch: self.found.into_iter().next().map(|(_, m)| m),
        }
    }

    fn note_after_mismatch(&mut self, e: &ModelError) {
        for (_, m) in &mut self.found {
            m.detail.push_str(&format!(" (afterwards: {e})"));
        }
    }

    fn execute(&mut self) -> Result<(), ModelError> {
        self.load()?;
        for item in &self.case.program.items {
            self.apply(item)?;
            self.collect();
            if self.has_mismatch() {
                break;
            }
        }
        call(self.a, |m| m.drain())?;
        self.collect();
        call(self.b, |m| m.drain())?;
        self.b.set_wait_deadline(None);
        self.collect();
        // Quiescence: a drained NPU must stay silent. Idle a little and look
        // again, so a stray write or a second retire reported after the
        // last instruction finished is still caught.
        call(self.a, |m| m.idle(QUIESCENCE_CYCLES))?;
        call(self.b, |m| m.idle(QUIESCENCE_CYCLES))?;
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
        let cycles: Vec<timing::Cycles> = (0..self.issued.len() as u32)
            .map(|seq| {
                let p = &self.pairs[&seq];
                timing::Cycles::of(&p.r, &p.d)
            })
            .collect();
        let found = match self.timing {
            TimingMode::Off => None,
            TimingMode::Exact => timing::exact(&cycles).or_else(|| {
                let (ra, rb) = (self.a.status_timeline(), self.b.status_timeline());
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
        if let Some(f) = found {
            let m = self.mismatch(f.kind, f.seq, f.detail, f.reference, f.dut);
            self.report(f.seq.unwrap_or(u32::MAX), m);
        }
    }

    fn load(&mut self) -> Result<(), ModelError> {
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
        let (l2, host) = (self.case.l2_image(), self.case.host_image());
        let stalls = self.case.io_stall_seed();
        let weights = self.case.weight_source();
        for m in [&mut *self.a, &mut *self.b] {
            m.set_io_stalls(stalls);
            m.set_weight_source(weights.clone());
            call(m, |m| m.reset())?;
            call(m, |m| m.write_l2(0, &l2))?;
            call(m, |m| m.write_host(0, &host))?;
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
                let rb = call(self.b, |m| m.issue(word))?;
                if ra != rb {
                    let what = |(lo, hi): (AxiResp, AxiResp)| {
                        format!("0x00 write {}, 0x04 write {}", resp_name(lo), resp_name(hi))
                    };
                    let m = self.mismatch(
                        CheckKind::RegResponse,
                        Some(seq),
                        "the write responses of the instruction issue differ".into(),
                        what(ra),
                        what(rb),
                    );
                    self.report(seq, m);
                }
            }
            Item::Idle(cycles) => {
                call(self.a, |m| m.idle(cycles))?;
                call(self.b, |m| m.idle(cycles))?;
            }
            Item::RegWrite { offset, value } => {
                let ra = call(self.a, |m| m.reg_write(offset, value))?;
                let rb = call(self.b, |m| m.reg_write(offset, value))?;
                if ra != rb {
                    // Ranked with the next instruction: it happened before
                    // that one was latched.
                    let seq = self.issued.len() as u32;
                    let m = self.mismatch(
                        CheckKind::RegResponse,
                        None,
                        format!(
                            ".write 0x{offset:02x}, 0x{value:08x} (before seq {seq} was issued) \
                             answered differently"
                        ),
                        resp_name(ra).into(),
                        resp_name(rb).into(),
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
        if self.a.predicts_timing() {
            let deadline =
                self.last_cycle[0].unwrap_or(0) * DEADLINE_FACTOR + DEADLINE_SLACK_CYCLES;
            self.b.set_wait_deadline(Some(deadline));
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
        for event in events {
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
                let who = self.model_name(side).to_string();
                let (r, d) = side.split(
                    format!("{}, after its retire", describe_write(&event)),
                    "no late write".into(),
                );
                let m = self.mismatch(
                    CheckKind::WriteAfterRetire,
                    Some(seq),
                    format!("{who} reported a write of seq {seq} after retiring it"),
                    r,
                    d,
                );
                self.report(seq, m);
            } else if is_retire && compared && retires > 1 {
                let (r, d) = side.split(
                    format!("retired seq {seq} {retires} times"),
                    "retired it once".into(),
                );
                let m = self.mismatch(
                    CheckKind::ExtraRetire,
                    Some(seq),
                    format!("{} retired seq {seq} again", self.model_name(side)),
                    r,
                    d,
                );
                self.report(seq, m);
            } else if let Some(latches) = relatched {
                let (r, d) = side.split(latches, "latched it once".into());
                let m = self.mismatch(
                    CheckKind::Latch,
                    Some(seq),
                    format!(
                        "{} latched seq {seq} again after retiring it",
                        self.model_name(side)
                    ),
                    r,
                    d,
                );
                self.report(seq, m);
            }
        }
    }

    /// After the drain: whatever was never compared. Every issued
    /// instruction must have retired on both sides.
    fn sweep(&mut self) {
        let seqs: Vec<u32> = self.pending.iter().copied().collect();
        for seq in seqs {
            let p = &self.pairs[&seq];
            match (p.r.retired(), p.d.retired()) {
                (true, true) => self.compare_instruction(seq),
                (true, false) => {
                    let r = retire_text(&p.r);
                    let m = self.mismatch(
                        CheckKind::MissingRetire,
                        Some(seq),
                        format!("the DUT never retired seq {seq} (checked after the drain)"),
                        r,
                        "no retire".into(),
                    );
                    self.report(seq, m);
                }
                (false, true) => {
                    let d = retire_text(&p.d);
                    let detail = if (seq as usize) < self.issued.len() {
                        format!("the reference never retired seq {seq}")
                    } else {
                        format!(
                            "seq {seq} was never issued ({} instructions were)",
                            self.issued.len()
                        )
                    };
                    let m = self.mismatch(
                        CheckKind::ExtraRetire,
                        Some(seq),
                        detail,
                        "no retire".into(),
                        d,
                    );
                    self.report(seq, m);
                }
                (false, false) if (seq as usize) < self.issued.len() => {
                    let m = self.mismatch(
                        CheckKind::MissingRetire,
                        Some(seq),
                        format!("neither model retired seq {seq} (checked after the drain)"),
                        "no retire".into(),
                        "no retire".into(),
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
                    CheckKind::MissingRetire,
                    Some(seq),
                    format!("neither model reported anything for seq {seq}"),
                    "nothing".into(),
                    "nothing".into(),
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
        let found = compare_records(seq, expected, r, d);
        if let Some((kind, detail, rt, dt)) = found {
            let m = self.mismatch(kind, Some(seq), detail, rt, dt);
            self.report(seq, m);
        }
    }

    fn compare_final_state(&mut self) -> Result<(), ModelError> {
        let checks: [FinalCheck; 8] = [
            final_l2,
            final_host,
            final_tables,
            final_emax,
            final_weight_stream,
            final_status,
            final_retired,
            final_instr_regs,
        ];
        for check in checks {
            let found = check(&mut *self.a, &mut *self.b)?;
            if let Some((kind, detail, r, d)) = found {
                let m = self.mismatch(kind, None, detail, r, d);
                self.report(u32::MAX, m);
                return Ok(());
            }
        }
        Ok(())
    }

    fn model_name(&self, side: Side) -> &str {
        match side {
            Side::Reference => self.a.name(),
            Side::Dut => self.b.name(),
        }
    }

    fn mismatch(
        &self,
        kind: CheckKind,
        seq: Option<u32>,
        detail: String,
        reference: String,
        dut: String,
    ) -> Mismatch {
        let word = seq.and_then(|s| self.issued.get(s as usize).copied());
        let cycle = seq.and_then(|s| {
            self.pairs
                .get(&s)
                .and_then(|p| p.d.retire_cycle().or(p.r.retire_cycle()))
        });
        Mismatch {
            kind,
            seq,
            word,
            disasm: word.map(disasm),
            cycle,
            detail,
            reference,
            dut,
            reference_model: self.a.name().to_string(),
            dut_model: self.b.name().to_string(),
        }
    }

    fn report(&mut self, rank_seq: u32, m: Mismatch) {
        self.found.push(((rank_seq, m.kind), m));
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

type Found = Option<(CheckKind, String, String, String)>;
type FinalCheck = fn(&mut dyn NpuModel, &mut dyn NpuModel) -> Result<Found, ModelError>;

/// The checks of one instruction, in [`CheckKind`] order; the first that
/// fails is returned as (kind, detail, reference text, DUT text).
fn compare_records(seq: u32, expected: Option<u64>, r: &Record, d: &Record) -> Found {
    // Latch: exactly one, of the word the harness issued; none for a
    // sequence number that was never issued.
    let latch_ok = |rec: &Record| match expected {
        Some(word) => rec.latches == [word],
        None => rec.latches.is_empty(),
    };
    if !latch_ok(r) || !latch_ok(d) {
        let want = match expected {
            Some(w) => format!("seq {seq} was issued as 0x{w:016x}"),
            None => format!("seq {seq} was never issued"),
        };
        let bad = if latch_ok(r) { "DUT" } else { "reference" };
        return Some((
            CheckKind::Latch,
            format!("{want}; the {bad} latched otherwise"),
            latch_text(&r.latches),
            latch_text(&d.latches),
        ));
    }
    if let (Some(&(ro, _, _)), Some(&(dop, _, _))) = (r.retires.first(), d.retires.first()) {
        if ro != dop {
            return Some((
                CheckKind::RetireOpcode,
                format!("retire opcode 0x{ro:x} vs 0x{dop:x}"),
                retire_text(r),
                retire_text(d),
            ));
        }
    }
    if let (Some(&(_, re, _)), Some(&(_, de, _))) = (r.retires.first(), d.retires.first()) {
        if re != de {
            return Some((
                CheckKind::RetireErr,
                format!("error code {} vs {}", err_name(re), err_name(de)),
                retire_text(r),
                retire_text(d),
            ));
        }
    }
    if r.retires.len() > 1 || d.retires.len() > 1 {
        return Some((
            CheckKind::ExtraRetire,
            format!("seq {seq} retired more than once"),
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

/// Missing, extra or different: how two groups of writes to one place
/// differ, in words.
fn group_verdict<T>(r: &[T], d: &[T], place: &str) -> Option<String> {
    match (r.len(), d.len()) {
        (_, 0) => Some(format!(
            "missing write to {place}: the DUT did not write it"
        )),
        (0, _) => Some(format!(
            "extra write to {place}: the reference did not write it"
        )),
        (a, b) if a != b => Some(format!(
            "{place} written {a} times by the reference, {b} times by the DUT"
        )),
        _ => None,
    }
}

fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        "no write".into()
    } else {
        items.iter().map(show).collect::<Vec<_>>().join("; ")
    }
}

/// The name of weight stream `stream` in reports.
fn stream_name(stream: u8) -> String {
    match STREAM_NAMES.get(usize::from(stream)) {
        Some(name) => format!("{name} stream"),
        None => format!("stream {stream}"),
    }
}

fn compare_stream_reads(r: &Record, d: &Record) -> Found {
    let (stream, a, b) = first_differing_group(&r.streams, &d.streams, |s| s.0)?;
    let place = stream_name(stream);
    let detail = match (a.len(), b.len()) {
        (_, 0) => format!("missing stream read: the DUT took no beats from the {place}"),
        (0, _) => format!("extra stream read: the reference took no beats from the {place}"),
        (x, y) if x != y => {
            format!("{place} read reported {x} times by the reference, {y} times by the DUT")
        }
        _ => format!("{place}: {} beats vs {}", a[0].1, b[0].1),
    };
    let show = |s: &(u8, u32)| format!("{} beats from the {place}", s.1);
    Some((
        CheckKind::WeightStream,
        detail,
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
    let detail = group_verdict(&a, &b, &place).unwrap_or_else(|| {
        let (x, y) = (a[0], b[0]);
        if x.mask != y.mask {
            format!("{place}: element mask 0x{:02x} vs 0x{:02x}", x.mask, y.mask)
        } else {
            format!("{place}: {}", element_diff(x.data, y.data))
        }
    });
    let show = |w: &L2Write| format!("{place} <- {} mask 0x{:02x}", hex_word(w.data), w.mask);
    Some((
        CheckKind::L2Writes,
        format!(
            "{detail} ({} vs {} L2 writes in all)",
            r.l2.len(),
            d.l2.len()
        ),
        list(&a, show),
        list(&b, show),
    ))
}

fn compare_host_writes(r: &Record, d: &Record) -> Found {
    let (addr, a, b) = first_differing_group(&r.host, &d.host, |w| w.0)?;
    let place = format!("HOST[0x{addr:05x}]");
    let detail = group_verdict(&a, &b, &place)
        .unwrap_or_else(|| format!("{place}: {}", element_diff(a[0].1, b[0].1)));
    let show = |w: &(u32, Word)| format!("{place} <- {}", hex_word(w.1));
    Some((
        CheckKind::HostWrites,
        format!(
            "{detail} ({} vs {} host writes in all)",
            r.host.len(),
            d.host.len()
        ),
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
    let detail =
        group_verdict(&a, &b, &place).unwrap_or_else(|| format!("{place}: different value"));
    let show = |w: &(ShapeTable, u8, (u16, u16, u16))| {
        let (a, b, c) = w.2;
        format!("{place} <- {}", shape(ShapeEntry { a, b, c }))
    };
    Some((
        CheckKind::ShapeWrites,
        detail,
        list(&a, show),
        list(&b, show),
    ))
}

fn compare_emax_writes(r: &Record, d: &Record) -> Found {
    let ((), a, b) = first_differing_group(&r.emax, &d.emax, |_| ())?;
    let detail = group_verdict(&a, &b, "e_max").unwrap_or_else(|| "e_max: different value".into());
    let show = |v: &u16| format!("e_max <- 0x{v:04x}");
    Some((
        CheckKind::EMaxWrites,
        detail,
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
    let name = m.name();
    result.map_err(|e| match e {
        ModelError::Watchdog { what, cycles } => ModelError::Watchdog {
            what: format!("{what} ({name})"),
            cycles,
        },
        ModelError::Backdoor(m) => ModelError::Backdoor(format!("{name}: {m}")),
        ModelError::Protocol(m) => ModelError::Protocol(format!("{name}: {m}")),
        ModelError::Other(m) => ModelError::Other(format!("{name}: {m}")),
    })
}

/// The first differing word of two whole memories.
fn memory_diff(kind: CheckKind, mem: &str, r: &[Word], d: &[Word]) -> Found {
    let first = r.iter().zip(d).position(|(x, y)| x != y)?;
    let count = r.iter().zip(d).filter(|(x, y)| x != y).count();
    Some((
        kind,
        format!(
            "{mem}[0x{first:05x}]: {}; {count} word(s) of {mem} differ",
            element_diff(r[first], d[first])
        ),
        format!("{mem}[0x{first:05x}] = {}", hex_word(r[first])),
        format!("{mem}[0x{first:05x}] = {}", hex_word(d[first])),
    ))
}

fn read_all(
    m: &mut dyn NpuModel,
    words: u32,
    read: impl Fn(&mut dyn NpuModel, &mut [Word]) -> Result<(), ModelError>,
) -> Result<Vec<Word>, ModelError> {
    let mut out = vec![0; words as usize];
    call(m, |m| read(m, &mut out))?;
    Ok(out)
}

fn final_l2(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let words = a.l2_words();
    let read = |m: &mut dyn NpuModel, out: &mut [Word]| m.read_l2(0, out);
    let (r, d) = (read_all(a, words, read)?, read_all(b, words, read)?);
    Ok(memory_diff(CheckKind::FinalL2, "L2", &r, &d))
}

fn final_host(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let read = |m: &mut dyn NpuModel, out: &mut [Word]| m.read_host(0, out);
    let (r, d) = (
        read_all(a, HOST_WORDS, read)?,
        read_all(b, HOST_WORDS, read)?,
    );
    Ok(memory_diff(CheckKind::FinalHost, "HOST", &r, &d))
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
        (
            CheckKind::FinalTables,
            format!(
                "{place} differs; {} entr(y/ies) differ in all",
                differing.len()
            ),
            format!("{place} = {}", shape(r)),
            format!("{place} = {}", shape(d)),
        )
    }))
}

fn final_emax(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let r = call(a, |m| m.e_max())?;
    let d = call(b, |m| m.e_max())?;
    Ok((r != d).then(|| {
        (
            CheckKind::FinalEMax,
            format!("e_max 0x{r:04x} vs 0x{d:04x}"),
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
        .map(|s| {
            let i = usize::from(s);
            (
                CheckKind::FinalWeightStream,
                format!(
                    "beats consumed from the {} since reset: {} vs {}",
                    stream_name(s),
                    r[i],
                    d[i]
                ),
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
        let detail = if r.0 != d.0 {
            format!("status bits 0x{:08x} differ", r.0 ^ d.0)
        } else {
            "status read response differs".into()
        };
        (CheckKind::FinalStatus, detail, show(r), show(d))
    }))
}

/// 0x00 and 0x04 read back the words last written to them (CONTRACT
/// section 10): a read path the instruction stream alone never exercises.
fn final_instr_regs(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    for (offset, name) in [(reg::INSTR_LO, "0x00"), (reg::INSTR_HI, "0x04")] {
        let (r, d) = (read_reg(a, offset)?, read_reg(b, offset)?);
        if r != d {
            let show =
                |(v, resp): (u32, AxiResp)| format!("{name} = 0x{v:08x}, {}", resp_name(resp));
            return Ok(Some((
                CheckKind::FinalInstrRegs,
                format!("register {name} reads differ"),
                show(r),
                show(d),
            )));
        }
    }
    Ok(None)
}

fn final_retired(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let (r, d) = (read_reg(a, reg::RETIRED)?, read_reg(b, reg::RETIRED)?);
    Ok((r != d).then(|| {
        let show = |(v, resp): (u32, AxiResp)| format!("{v} retired, {}", resp_name(resp));
        (
            CheckKind::FinalRetiredCount,
            format!("retired count (0x0C) {} vs {}", r.0, d.0),
            show(r),
            show(d),
        )
    }))
}

// ----- formatting ------------------------------------------------------------

/// A 128-bit word as its eight BF16 elements, element 7 first (so the
/// digits read like the hex of the whole word).
pub fn hex_word(w: Word) -> String {
    let elems: Vec<String> = (0..8)
        .rev()
        .map(|i| format!("{:04x}", (w >> (16 * i)) as u16))
        .collect();
    format!("0x{}", elems.join("_"))
}

/// Which elements of two words differ, with both values.
fn element_diff(r: Word, d: Word) -> String {
    let diffs: Vec<String> = (0..8)
        .filter(|i| (r >> (16 * i)) as u16 != (d >> (16 * i)) as u16)
        .map(|i| {
            format!(
                "e{i} 0x{:04x} vs 0x{:04x}",
                (r >> (16 * i)) as u16,
                (d >> (16 * i)) as u16
            )
        })
        .collect();
    format!("data differs in {}", diffs.join(", "))
}

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

fn table_slot(table: ShapeTable, index: u8) -> String {
    format!("{}[{index}]", table.name())
}

fn shape(e: ShapeEntry) -> String {
    format!("(a={}, b={}, c={})", e.a, e.b, e.c)
}

fn err_name(code: u8) -> String {
    match ErrorCode::from_bits(code) {
        Some(e) => format!("{code} {e}"),
        None => format!("{code} (no such code)"),
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

fn resp_name(r: AxiResp) -> &'static str {
    match r {
        AxiResp::Okay => "OKAY",
        AxiResp::SlvErr => "SLVERR",
    }
}

/// The status fields by name.
pub fn status_fields(v: u32) -> String {
    let bit = |m: u32| u32::from(v & m != 0);
    let code = ((v & reg::STATUS_ERR_CODE_MASK) >> reg::STATUS_ERR_CODE_SHIFT) as u8;
    let known = reg::STATUS_BUSY | reg::STATUS_DONE | reg::STATUS_ERR | reg::STATUS_ERR_CODE_MASK;
    let mut s = format!(
        "BUSY={} DONE={} ERR={} err_code={}",
        bit(reg::STATUS_BUSY),
        bit(reg::STATUS_DONE),
        bit(reg::STATUS_ERR),
        err_name(code)
    );
    if v & !known != 0 {
        s.push_str(&format!(" reserved=0x{:x}", v & !known));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
