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
//!
//! The checks are made at the lower of the two models' observation levels
//! (docs/dut-contract.md), by the observers of that level, one module each:
//!
//! | module | observes | levels |
//! |---|---|---|
//! | `run.rs` | the driver: load, program, drain, quiescence; hangs, bus protocol, assertions, register responses | all |
//! | `instructions.rs` | per instruction: the retire (opcode, error, once); the latch and every write | `retire`; `full` |
//! | `final_state.rs` | after the drain: host writes and memory, registers, weight beats, L2 (back door, or read back by MEMCPY); shape tables and e_max | all; `full` |
//! | `timing.rs` | retire cycles and order; latch and start cycles and the status register per cycle | `retire`; `full` |
//! | `numerics.rs` | a DUT's numerics profile: the reference behind the DUT, results within the bound handed over | `full` |
//!
//! `out_of_reach` lists the checks a level cannot make.

pub mod assertions;
mod final_state;
mod instructions;
mod mismatch;
mod numerics;
mod resident;
mod run;
mod timing;

pub use resident::{Changes, Resident};

pub use mismatch::{
    hex_word, status_fields, CheckKind, Difference, Field, GroupDiff, Memory, Mismatch,
    MismatchRecord, OrderReason, Side, TimedEvent, Unit,
};

use crate::stimulus::TestCase;
pub use final_state::read_back_program;
use instructions::*;
use mismatch::{err_name, resp_name, shape, stream_name, table_slot};
use pccx_golden::asm::Item;
use pccx_golden::isa::{Instr, Memcpy, Memset};
use pccx_golden::model::{
    reg, AxiResp, CycleBudget, Event, MemoryView, ModelError, NpuModel, Observation, ShapeEntry,
    ShapeTable, Word, HOST_WORDS, SHAPE_ENTRIES, UNATTRIBUTED,
};
use pccx_golden::{Engine, PerEngine};
use std::collections::{BTreeMap, BTreeSet};

/// The result of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Instructions issued (each got a sequence number).
    pub instructions: u32,
    /// The DUT's last retire cycle (below `retire`, the end of its drain;
    /// else the reference's last retire), when reported.
    pub cycles: Option<u64>,
    pub first_mismatch: Option<Mismatch>,
    /// Cycles each engine spent on the DUT's instructions, start to retire
    /// inclusive, when the DUT reports starts.
    pub engine_busy: PerEngine<u64>,
    /// Latch-to-retire cycles of the DUT's instructions, per engine.
    pub retire_latency: RetireLatency,
    /// Elements of the DUT's CVO results accepted within its numerics
    /// profile and handed to the reference (numerics.rs); 0 without one.
    pub handed_over: u64,
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
            handed_over: 0,
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
    /// The shape-table writes the reference made, per sequence number,
    /// whatever the level: the order rules need the tables each
    /// instruction's footprint was computed with, which is the reference's
    /// own knowledge, not an observation of the DUT.
    reference_shapes: BTreeMap<u32, Vec<(ShapeTable, u8, ShapeEntry)>>,
    /// Whether the L2 was read back through the models' own MEMCPY (below
    /// `Full`): host memory then holds a copy of it.
    read_back: bool,
    /// The DUT's numerics profile and the reference's queue behind it
    /// (numerics.rs), when the DUT declares one.
    hand_off: Option<numerics::HandOff>,
    /// The DUT's cycle budget, when its timing is another design's.
    cycle_budget: Option<CycleBudget>,
    /// The DUT's cycle at the end of its drain.
    dut_end_cycle: Option<u64>,
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
