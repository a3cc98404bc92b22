//! What the scoreboard reports: which check fired, what differed (a typed
//! [`Difference`] with its values), and the text people read, rendered
//! from those at the edge and never parsed back.

use crate::format::{Hex, Hex64};
use pccx_golden::isa::{self, Decoded};
use pccx_golden::model::{reg, AxiResp, ErrorCode, ShapeEntry, ShapeTable, Word};
use pccx_golden::streams::STREAM_NAMES;
use pccx_golden::Engine;
use serde::{Deserialize, Serialize};
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
    /// The DUT hung: a wait (an issue on a full FIFO, a drain) ran past the
    /// deadline the reference's own retire cycles give, or showed no
    /// progress for the watchdog's cycles. A failure of the DUT, not of the
    /// harness (docs/harness.md, "What the RTL does wrong").
    Hang,
    /// The DUT broke the AXI-Lite protocol (a response nobody asked for, a
    /// VALID dropped before READY).
    BusProtocol,
    /// An assertion inside the DUT failed (hw/rtl/pccx_assert_pkg.sv); the
    /// signature's field is its name.
    Assertion,
    /// The seed ran past its wall-clock limit (`--seed-timeout`): not a
    /// comparison, but what a timeout's repro file says happened.
    Timeout,
}

impl CheckKind {
    pub const ALL: [CheckKind; 27] = [
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
        CheckKind::Hang,
        CheckKind::BusProtocol,
        CheckKind::Assertion,
        CheckKind::Timeout,
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
            CheckKind::Hang => "hang",
            CheckKind::BusProtocol => "bus-protocol",
            CheckKind::Assertion => "assertion",
            CheckKind::Timeout => "timeout",
        }
    }

    pub fn by_name(name: &str) -> Option<CheckKind> {
        CheckKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the check compares end-of-program state (it then has no
    /// sequence number).
    pub fn is_final(self) -> bool {
        (CheckKind::FinalL2..=CheckKind::FinalInstrRegs).contains(&self)
            || self == CheckKind::StatusTimeline
    }
}

impl Serialize for CheckKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for CheckKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        CheckKind::by_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no check `{name}`")))
    }
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One side of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Reference,
    Dut,
}

/// How the groups of writes (or stream reads) two models made to one place
/// differ. `T` is what one write carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupDiff<T> {
    /// The reference wrote it, the DUT did not.
    Missing,
    /// The DUT wrote it, the reference did not.
    Extra,
    /// Both wrote it, a different number of times.
    Count { reference: usize, dut: usize },
    /// Both wrote it as often; the first of each group.
    Value { reference: T, dut: T },
}

/// A whole memory the final-state check compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Memory {
    L2,
    Host,
}

impl Memory {
    pub fn name(self) -> &'static str {
        match self {
            Memory::L2 => "L2",
            Memory::Host => "HOST",
        }
    }
}

/// The per-instruction cycles the exact timing check compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimedEvent {
    Latch,
    Start,
    Retire,
}

impl TimedEvent {
    pub const ALL: [TimedEvent; 3] = [TimedEvent::Latch, TimedEvent::Start, TimedEvent::Retire];

    pub fn name(self) -> &'static str {
        match self {
            TimedEvent::Latch => "latch",
            TimedEvent::Start => "start",
            TimedEvent::Retire => "retire",
        }
    }
}

/// Why a younger instruction must retire after an older one (stall I/O,
/// docs/semantics.md section 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderReason {
    SameEngine,
    OlderBarrier,
    IsBarrier,
    Conflict,
}

impl OrderReason {
    fn text(self) -> &'static str {
        match self {
            OrderReason::SameEngine => "the same engine FIFO",
            OrderReason::OlderBarrier => "an older barrier (async = 0)",
            OrderReason::IsBarrier => "it is a barrier (async = 0)",
            OrderReason::Conflict => "conflicting footprints",
        }
    }
}

/// What differed, with the values: one variant per way a check can fail.
/// Signatures ([`Difference::field`]) and the report's detail line
/// ([`Mismatch::detail`]) are both computed from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// The AXI-Lite responses to an instruction's two register writes.
    IssueResponses,
    /// The response to a `.write` item issued before instruction `before_seq`.
    WriteResponse {
        offset: u32,
        value: u32,
        before_seq: u32,
    },
    /// `by` reported a write of `seq` after retiring it.
    LateWrite {
        by: Side,
        seq: u32,
    },
    /// `by` retired `seq` a second time, after the comparison.
    RetiredAgain {
        by: Side,
        seq: u32,
    },
    /// `by` latched `seq` again after retiring it.
    LatchedAgain {
        by: Side,
        seq: u32,
    },
    /// The reference retired `seq`; the DUT never did.
    DutNeverRetired {
        seq: u32,
    },
    /// The DUT retired `seq`; the reference never did.
    ReferenceNeverRetired {
        seq: u32,
    },
    /// The DUT retired a sequence number that was never issued.
    NeverIssued {
        seq: u32,
        issued: usize,
    },
    /// An issued instruction neither model retired.
    NeitherRetired {
        seq: u32,
    },
    /// An issued instruction neither model reported anything for.
    NothingReported {
        seq: u32,
    },
    /// `wrong` latched something other than the issued word (`None`: a
    /// sequence number that was never issued).
    LatchWord {
        seq: u32,
        issued: Option<u64>,
        wrong: Side,
    },
    RetireOpcode {
        reference: u8,
        dut: u8,
    },
    RetireErr {
        reference: u8,
        dut: u8,
    },
    /// One side retired `seq` more than once before the comparison.
    RetiredMoreThanOnce {
        seq: u32,
    },
    /// Reads of weight stream `stream`; a value is a beat count.
    StreamRead {
        stream: u8,
        diff: GroupDiff<u32>,
    },
    /// Writes of L2 word `addr`; a value is (element mask, data under it).
    /// `totals`: the instruction's L2 writes on each side.
    L2Write {
        addr: u32,
        diff: GroupDiff<(u8, Word)>,
        totals: (usize, usize),
    },
    /// Writes of host word `addr`.
    HostWrite {
        addr: u32,
        diff: GroupDiff<Word>,
        totals: (usize, usize),
    },
    ShapeWrite {
        table: ShapeTable,
        index: u8,
        diff: GroupDiff<ShapeEntry>,
    },
    EMaxWrite {
        diff: GroupDiff<u16>,
    },
    /// The first differing word of a whole memory after the program, and
    /// how many differ.
    FinalMemory {
        memory: Memory,
        addr: u32,
        reference: Word,
        dut: Word,
        differing: usize,
    },
    /// The first differing shape-table entry, and how many differ.
    FinalTable {
        table: ShapeTable,
        index: u8,
        differing: usize,
    },
    FinalEMax {
        reference: u16,
        dut: u16,
    },
    /// Beats consumed from weight stream `stream` since reset.
    FinalBeats {
        stream: u8,
        reference: u64,
        dut: u64,
    },
    /// The status register read after the drain (equal values: the read
    /// responses differ).
    FinalStatus {
        reference: u32,
        dut: u32,
    },
    /// A held instruction register (0x00 or 0x04) reads back differently.
    FinalInstrReg {
        offset: u32,
    },
    FinalRetired {
        reference: u32,
        dut: u32,
    },
    /// The earliest cycle that differs from the timing model's prediction,
    /// and how many instructions differ in all.
    TimingCycle {
        event: TimedEvent,
        predicted: Option<u64>,
        actual: Option<u64>,
        differing: usize,
    },
    /// The status register over time, from the first differing cycle.
    StatusTimeline {
        cycle: u64,
        predicted: u32,
        actual: u32,
    },
    /// `seq` retired in `cycle`, not after `older` (retired in
    /// `older_cycle`), which it must wait for.
    RetireOrder {
        seq: u32,
        cycle: u64,
        older: u32,
        older_cycle: u64,
        reason: OrderReason,
    },
    /// The DUT ran past the seed's wall-clock limit (`--seed-timeout`),
    /// in microseconds, and gave up where `at` says.
    WallClock {
        limit_micros: u64,
        at: String,
    },
    /// A DUT with another design's timing took `dut` cycles to the end of
    /// its drain, past the `allowed` its budget gives the reference's
    /// `reference` (docs/dut-contract.md, "Timing").
    CycleBudget {
        reference: u64,
        dut: u64,
        allowed: u64,
        tolerance_pct: u32,
        slack_cycles: u64,
    },
    /// The DUT hung while `at` (the watchdog's words: what it waited for,
    /// the cycle, the instructions latched and retired).
    Hang {
        at: String,
    },
    /// The DUT broke the bus protocol: `what` (the bus monitor's words).
    BusProtocol {
        what: String,
    },
    /// An assertion of the DUT failed: the one named `name`
    /// (scoreboard/assertions.rs), in `scope`.
    Assertion {
        name: &'static str,
        scope: String,
        /// The other assertions that failed at the same edge.
        also: Vec<String>,
    },
}

/// Which part of what a check compares differed: the third part of a
/// failure signature, without the particulars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// A latched word that is not the issued one.
    Word,
    /// A second latch.
    Duplicate,
    /// The responses of an instruction issue.
    Issue,
    /// The response of a `.write` item.
    Write,
    Opcode,
    Err,
    Missing,
    Extra,
    /// A write after the writer's retire.
    Late,
    Count,
    Mask,
    Data,
    Beats,
    /// A shape-table entry.
    Entry,
    Value,
    /// Beats consumed from this weight stream.
    Stream(u8),
    /// These status bits.
    Status(u32),
    /// The status read's response.
    StatusResp,
    /// The wall-clock limit of a seed.
    WallClock,
    /// A wait that did not end (a hang).
    Stuck,
    /// The bus protocol.
    Protocol,
    /// This assertion of the DUT.
    Assertion(&'static str),
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            Field::Word => "word",
            Field::Duplicate => "duplicate",
            Field::Issue => "issue",
            Field::Write => "write",
            Field::Opcode => "opcode",
            Field::Err => "err",
            Field::Missing => "missing",
            Field::Extra => "extra",
            Field::Late => "late",
            Field::Count => "count",
            Field::Mask => "mask",
            Field::Data => "data",
            Field::Beats => "beats",
            Field::Entry => "entry",
            Field::Value => "value",
            Field::WallClock => "wall-clock",
            Field::Stuck => "stuck",
            Field::Protocol => "protocol",
            Field::Assertion(name) => name,
            Field::Stream(s) => STREAM_NAMES
                .get(usize::from(s))
                .copied()
                .unwrap_or("stream"),
            Field::Status(bits) => return write!(f, "status.{}", status_bit_names(bits)),
            Field::StatusResp => "status.resp",
        };
        f.write_str(name)
    }
}

/// The status fields whose bits `bits` touches, joined with `+`.
fn status_bit_names(bits: u32) -> String {
    let fields = [
        (reg::STATUS_BUSY, "BUSY"),
        (reg::STATUS_DONE, "DONE"),
        (reg::STATUS_ERR, "ERR"),
        (reg::STATUS_ERR_CODE_MASK, "err_code"),
    ];
    let known = fields.iter().fold(0, |m, f| m | f.0);
    let mut names: Vec<&str> = fields
        .iter()
        .filter(|(mask, _)| bits & mask != 0)
        .map(|f| f.1)
        .collect();
    if bits & !known != 0 {
        names.push("reserved");
    }
    names.join("+")
}

impl<T: PartialEq> GroupDiff<T> {
    /// Missing, extra and count as their own fields; a value difference as
    /// `value`.
    fn field(&self, value: Field) -> Field {
        match self {
            GroupDiff::Missing => Field::Missing,
            GroupDiff::Extra => Field::Extra,
            GroupDiff::Count { .. } => Field::Count,
            GroupDiff::Value { .. } => value,
        }
    }

    /// The words for a write group's difference at `place`; `value`
    /// words a value difference.
    fn describe(&self, place: &str, value: impl FnOnce(&T, &T) -> String) -> String {
        match self {
            GroupDiff::Missing => format!("missing write to {place}: the DUT did not write it"),
            GroupDiff::Extra => {
                format!("extra write to {place}: the reference did not write it")
            }
            GroupDiff::Count { reference, dut } => format!(
                "{place} written {reference} times by the reference, {dut} times by the DUT"
            ),
            GroupDiff::Value { reference, dut } => value(reference, dut),
        }
    }
}

impl Difference {
    /// Which part differed (for signatures).
    pub fn field(&self) -> Field {
        use Difference as D;
        match self {
            D::IssueResponses => Field::Issue,
            D::WriteResponse { .. } => Field::Write,
            D::LateWrite { .. } => Field::Late,
            D::RetiredAgain { .. }
            | D::ReferenceNeverRetired { .. }
            | D::NeverIssued { .. }
            | D::RetiredMoreThanOnce { .. } => Field::Extra,
            D::LatchedAgain { .. } => Field::Duplicate,
            D::DutNeverRetired { .. } | D::NeitherRetired { .. } | D::NothingReported { .. } => {
                Field::Missing
            }
            D::LatchWord { .. } => Field::Word,
            D::RetireOpcode { .. } => Field::Opcode,
            D::RetireErr { .. } => Field::Err,
            D::StreamRead { diff, .. } => diff.field(Field::Beats),
            D::L2Write { diff, .. } => match diff {
                GroupDiff::Value { reference, dut } if reference.0 != dut.0 => Field::Mask,
                _ => diff.field(Field::Data),
            },
            D::HostWrite { diff, .. } => diff.field(Field::Data),
            D::ShapeWrite { diff, .. } => diff.field(Field::Value),
            D::EMaxWrite { diff } => diff.field(Field::Value),
            D::FinalMemory { .. } => Field::Data,
            D::FinalTable { .. } => Field::Entry,
            D::FinalBeats { stream, .. } => Field::Stream(*stream),
            D::FinalStatus { reference, dut } if reference != dut => Field::Status(reference ^ dut),
            D::FinalStatus { .. } => Field::StatusResp,
            D::FinalRetired { .. } => Field::Count,
            D::FinalEMax { .. }
            | D::FinalInstrReg { .. }
            | D::TimingCycle { .. }
            | D::StatusTimeline { .. }
            | D::RetireOrder { .. }
            | D::CycleBudget { .. } => Field::Value,
            D::WallClock { .. } => Field::WallClock,
            D::Hang { .. } => Field::Stuck,
            D::BusProtocol { .. } => Field::Protocol,
            D::Assertion { name, .. } => Field::Assertion(name),
        }
    }

    /// The detail line, in words; `names` are the reference's and the
    /// DUT's model names.
    fn render(&self, names: [&str; 2]) -> String {
        use Difference as D;
        let who = |side: &Side| match side {
            Side::Reference => names[0],
            Side::Dut => names[1],
        };
        match self {
            D::IssueResponses => "the write responses of the instruction issue differ".into(),
            D::WriteResponse {
                offset,
                value,
                before_seq,
            } => format!(
                ".write 0x{offset:02x}, 0x{value:08x} (before seq {before_seq} was issued) \
                 answered differently"
            ),
            D::LateWrite { by, seq } => {
                format!(
                    "{} reported a write of seq {seq} after retiring it",
                    who(by)
                )
            }
            D::RetiredAgain { by, seq } => format!("{} retired seq {seq} again", who(by)),
            D::LatchedAgain { by, seq } => {
                format!("{} latched seq {seq} again after retiring it", who(by))
            }
            D::DutNeverRetired { seq } => {
                format!("the DUT never retired seq {seq} (checked after the drain)")
            }
            D::ReferenceNeverRetired { seq } => format!("the reference never retired seq {seq}"),
            D::NeverIssued { seq, issued } => {
                format!("seq {seq} was never issued ({issued} instructions were)")
            }
            D::NeitherRetired { seq } => {
                format!("neither model retired seq {seq} (checked after the drain)")
            }
            D::NothingReported { seq } => {
                format!("neither model reported anything for seq {seq}")
            }
            D::LatchWord { seq, issued, wrong } => {
                let want = match issued {
                    Some(w) => format!("seq {seq} was issued as 0x{w:016x}"),
                    None => format!("seq {seq} was never issued"),
                };
                let bad = match wrong {
                    Side::Reference => "reference",
                    Side::Dut => "DUT",
                };
                format!("{want}; the {bad} latched otherwise")
            }
            D::RetireOpcode { reference, dut } => {
                format!("retire opcode 0x{reference:x} vs 0x{dut:x}")
            }
            D::RetireErr { reference, dut } => {
                format!("error code {} vs {}", err_name(*reference), err_name(*dut))
            }
            D::RetiredMoreThanOnce { seq } => format!("seq {seq} retired more than once"),
            D::StreamRead { stream, diff } => {
                let place = stream_name(*stream);
                match diff {
                    GroupDiff::Missing => {
                        format!("missing stream read: the DUT took no beats from the {place}")
                    }
                    GroupDiff::Extra => {
                        format!("extra stream read: the reference took no beats from the {place}")
                    }
                    GroupDiff::Count { reference, dut } => format!(
                        "{place} read reported {reference} times by the reference, \
                         {dut} times by the DUT"
                    ),
                    GroupDiff::Value { reference, dut } => {
                        format!("{place}: {reference} beats vs {dut}")
                    }
                }
            }
            D::L2Write { addr, diff, totals } => {
                let place = format!("L2[0x{addr:05x}]");
                let what = diff.describe(&place, |r, d| {
                    if r.0 != d.0 {
                        format!("{place}: element mask 0x{:02x} vs 0x{:02x}", r.0, d.0)
                    } else {
                        format!("{place}: {}", element_diff(r.1, d.1))
                    }
                });
                format!("{what} ({} vs {} L2 writes in all)", totals.0, totals.1)
            }
            D::HostWrite { addr, diff, totals } => {
                let place = format!("HOST[0x{addr:05x}]");
                let what =
                    diff.describe(&place, |r, d| format!("{place}: {}", element_diff(*r, *d)));
                format!("{what} ({} vs {} host writes in all)", totals.0, totals.1)
            }
            D::ShapeWrite { table, index, diff } => {
                let place = table_slot(*table, *index);
                diff.describe(&place, |_, _| format!("{place}: different value"))
            }
            D::EMaxWrite { diff } => diff.describe("e_max", |_, _| "e_max: different value".into()),
            D::FinalMemory {
                memory,
                addr,
                reference,
                dut,
                differing,
            } => {
                let mem = memory.name();
                format!(
                    "{mem}[0x{addr:05x}]: {}; {differing} word(s) of {mem} differ",
                    element_diff(*reference, *dut)
                )
            }
            D::FinalTable {
                table,
                index,
                differing,
            } => format!(
                "{} differs; {differing} entr(y/ies) differ in all",
                table_slot(*table, *index)
            ),
            D::FinalEMax { reference, dut } => format!("e_max 0x{reference:04x} vs 0x{dut:04x}"),
            D::FinalBeats {
                stream,
                reference,
                dut,
            } => format!(
                "beats consumed from the {} since reset: {reference} vs {dut}",
                stream_name(*stream)
            ),
            D::FinalStatus { reference, dut } if reference != dut => {
                format!("status bits 0x{:08x} differ", reference ^ dut)
            }
            D::FinalStatus { .. } => "status read response differs".into(),
            D::FinalInstrReg { offset } => format!("register 0x{offset:02x} reads differ"),
            D::FinalRetired { reference, dut } => {
                format!("retired count (0x0C) {reference} vs {dut}")
            }
            D::TimingCycle {
                event,
                predicted,
                actual,
                differing,
            } => {
                let show = |v: &Option<u64>| v.map_or("none".to_string(), |v| v.to_string());
                format!(
                    "{} cycle predicted {}, actual {}: the first divergence in time \
                     ({differing} instruction(s) differ in all)",
                    event.name(),
                    show(predicted),
                    show(actual)
                )
            }
            D::StatusTimeline {
                cycle,
                predicted,
                actual,
            } => format!(
                "status register (0x08) differs from cycle {cycle} on: bits {:#x} differ",
                predicted ^ actual
            ),
            D::RetireOrder {
                seq,
                cycle,
                older,
                older_cycle,
                reason,
            } => format!(
                "seq {seq} retired in cycle {cycle}, not after seq {older} \
                 (cycle {older_cycle}), which it must wait for: {}",
                reason.text()
            ),
            D::WallClock { limit_micros, at } => format!(
                "{} ran past the wall-clock limit of {} s per seed and gave up while {at}",
                names[1],
                *limit_micros as f64 / 1e6
            ),
            D::CycleBudget {
                reference,
                dut,
                allowed,
                tolerance_pct,
                slack_cycles,
            } => format!(
                "{} drained at cycle {dut}, past its budget of {allowed} cycles ({reference} \
                 predicted, + {tolerance_pct} %, + {slack_cycles})",
                names[1]
            ),
            D::Hang { at } => format!("{} hangs: {at}", names[1]),
            D::BusProtocol { what } => {
                format!("{} broke the bus protocol: {what}", names[1])
            }
            D::Assertion { name, scope, also } => {
                let states = super::assertions::by_name(name).map_or("", |a| a.states);
                let also = if also.is_empty() {
                    String::new()
                } else {
                    format!("; at the same edge also {}", also.join(", "))
                };
                format!(
                    "{} failed assertion {name} ({scope}): {states}{also}",
                    names[1]
                )
            }
        }
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
    /// The DUT's retire cycle of that instruction (the reference's if the
    /// DUT has none), when the model reports cycles.
    pub cycle: Option<u64>,
    /// What differed, with the values.
    pub difference: Difference,
    /// What the reference did, for people (the writes, retires or state
    /// the check looked at).
    pub reference: String,
    /// What the DUT did.
    pub dut: String,
    /// A model error that followed the difference (a hang after a wrong
    /// write is the write's fault, so the write is reported).
    pub afterwards: Option<String>,
    pub reference_model: String,
    pub dut_model: String,
}

impl Mismatch {
    /// What a seed that ran past its wall-clock limit `limit` records (its
    /// repro's "mismatch"): the DUT gave up while `at`.
    pub fn timeout(
        limit: Option<std::time::Duration>,
        at: String,
        reference_model: &str,
        dut_model: &str,
    ) -> Mismatch {
        Mismatch {
            kind: CheckKind::Timeout,
            seq: None,
            word: None,
            cycle: None,
            difference: Difference::WallClock {
                limit_micros: limit.map_or(0, |l| l.as_micros() as u64),
                at: at.clone(),
            },
            reference: String::new(),
            dut: at,
            afterwards: None,
            reference_model: reference_model.into(),
            dut_model: dut_model.into(),
        }
    }

    /// The detail line: the difference in words.
    pub fn detail(&self) -> String {
        let mut text = self
            .difference
            .render([&self.reference_model, &self.dut_model]);
        if let Some(e) = &self.afterwards {
            text.push_str(&format!(" (afterwards: {e})"));
        }
        text
    }

    /// The instruction's disassembly, when the mismatch names one.
    pub fn disasm(&self) -> Option<String> {
        self.word.map(pccx_golden::asm::disasm)
    }

    /// The engine (or the decoder) whose instruction it concerns.
    pub fn unit(&self) -> Unit {
        self.word.map_or(Unit::None, Unit::of)
    }

    /// The mismatch as files record it: rendered, for people and for
    /// comparing a replay with.
    pub fn record(&self) -> MismatchRecord {
        MismatchRecord {
            kind: self.kind,
            seq: self.seq,
            word: self.word.map(Hex),
            disasm: self.disasm(),
            cycle: self.cycle,
            detail: self.detail(),
            reference: self.reference.clone(),
            dut: self.dut.clone(),
            reference_model: self.reference_model.clone(),
            dut_model: self.dut_model.clone(),
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.record().fmt(f)
    }
}

/// Where an instruction word goes: one of the engines, or the decoder,
/// which retires illegal words itself; `None` when a mismatch names no
/// instruction. Ordered engines first (in [`Engine::ALL`] order), then the
/// decoder, then `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unit {
    Engine(Engine),
    Decoder,
    None,
}

impl Unit {
    pub fn of(word: u64) -> Unit {
        match isa::decode(word) {
            Decoded::Legal(instr) => Unit::Engine(Engine::of_instr(&instr)),
            Decoded::Illegal { .. } => Unit::Decoder,
        }
    }

    /// The engine's name, `decoder` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Engine(engine) => engine.name(),
            Unit::Decoder => "decoder",
            Unit::None => "none",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mismatch as a file holds it: everything rendered. A replay compares
/// a new [`Mismatch`]'s record with it; nothing parses its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MismatchRecord {
    pub kind: CheckKind,
    pub seq: Option<u32>,
    pub word: Option<Hex64>,
    pub disasm: Option<String>,
    pub cycle: Option<u64>,
    pub detail: String,
    pub reference: String,
    pub dut: String,
    pub reference_model: String,
    pub dut_model: String,
}

impl MismatchRecord {
    /// Whether `other` is the same mismatch: kind, sequence number, detail.
    pub fn same_as(&self, other: &MismatchRecord) -> bool {
        (self.kind, self.seq, &self.detail) == (other.kind, other.seq, &other.detail)
    }
}

impl fmt::Display for MismatchRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MISMATCH {}", self.kind)?;
        if let Some(seq) = self.seq {
            write!(f, " at seq {seq}")?;
        }
        if let Some(cycle) = self.cycle {
            write!(f, ", cycle {cycle}")?;
        }
        writeln!(f)?;
        if let Some(Hex(word)) = self.word {
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

// ----- rendering helpers ----------------------------------------------------

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

/// The name of weight stream `stream` in reports.
pub(super) fn stream_name(stream: u8) -> String {
    match STREAM_NAMES.get(usize::from(stream)) {
        Some(name) => format!("{name} stream"),
        None => format!("stream {stream}"),
    }
}

pub(super) fn table_slot(table: ShapeTable, index: u8) -> String {
    format!("{}[{index}]", table.name())
}

pub(super) fn shape(e: ShapeEntry) -> String {
    format!("(a={}, b={}, c={})", e.a, e.b, e.c)
}

pub(super) fn err_name(code: u8) -> String {
    match ErrorCode::from_bits(code) {
        Some(e) => format!("{code} {e}"),
        None => format!("{code} (no such code)"),
    }
}

pub(super) fn resp_name(r: AxiResp) -> &'static str {
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
