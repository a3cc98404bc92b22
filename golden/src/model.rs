//! The one narrow interface every pccx model sits behind.
//!
//! The scoreboard drives two implementations of [`NpuModel`] with the same
//! program and compares what they report; it knows nothing else about them.
//! The golden interpreter (this crate) and the Verilated RTL (the harness)
//! both implement it, so either can sit on either side, and a fault-injecting
//! wrapper can sit around either one to prove that a check fires.

use crate::streams::WeightSource;
use std::fmt;

/// Number of 128-bit words in the host memory window behind the ACP port.
pub const HOST_WORDS: u32 = 1 << 17;

pub use crate::word::Word;

/// Which shape table a MEMSET writes (`dest_cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ShapeTable {
    Fmap = 0,
    Weight = 1,
}

impl ShapeTable {
    pub const ALL: [ShapeTable; 2] = [ShapeTable::Fmap, ShapeTable::Weight];

    pub fn name(self) -> &'static str {
        match self {
            ShapeTable::Fmap => "fmap",
            ShapeTable::Weight => "weight",
        }
    }
}

/// Number of entries in each shape table (6-bit pointers).
pub const SHAPE_ENTRIES: usize = 64;

/// One shape-table entry: three 16-bit values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShapeEntry {
    pub a: u16,
    pub b: u16,
    pub c: u16,
}

/// The 4-bit error code of a retired instruction (docs/semantics.md section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    Ok = 0,
    IllegalOpcode = 1,
    IllegalFunc = 2,
    IllegalDestCache = 3,
    IllegalDirection = 4,
    Shape = 5,
    L2Range = 6,
    HostRange = 7,
    Unimplemented = 15,
}

impl ErrorCode {
    /// Decodes the 4-bit field; codes with no meaning return `None`.
    pub fn from_bits(bits: u8) -> Option<ErrorCode> {
        Some(match bits {
            0 => ErrorCode::Ok,
            1 => ErrorCode::IllegalOpcode,
            2 => ErrorCode::IllegalFunc,
            3 => ErrorCode::IllegalDestCache,
            4 => ErrorCode::IllegalDirection,
            5 => ErrorCode::Shape,
            6 => ErrorCode::L2Range,
            7 => ErrorCode::HostRange,
            15 => ErrorCode::Unimplemented,
            _ => return None,
        })
    }

    pub fn bits(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Ok => "OK",
            ErrorCode::IllegalOpcode => "ILLEGAL_OPCODE",
            ErrorCode::IllegalFunc => "ILLEGAL_FUNC",
            ErrorCode::IllegalDestCache => "ILLEGAL_DEST_CACHE",
            ErrorCode::IllegalDirection => "ILLEGAL_DIRECTION",
            ErrorCode::Shape => "SHAPE",
            ErrorCode::L2Range => "L2_RANGE",
            ErrorCode::HostRange => "HOST_RANGE",
            ErrorCode::Unimplemented => "UNIMPLEMENTED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// AXI-Lite response code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxiResp {
    Okay,
    SlvErr,
}

/// Register offsets of the AXI-Lite slave (docs/semantics.md section 7).
pub mod reg {
    pub const INSTR_LO: u32 = 0x00;
    pub const INSTR_HI: u32 = 0x04;
    pub const STATUS: u32 = 0x08;
    pub const RETIRED: u32 = 0x0C;

    pub const STATUS_BUSY: u32 = 1 << 0;
    pub const STATUS_DONE: u32 = 1 << 1;
    pub const STATUS_ERR: u32 = 1 << 2;
    pub const STATUS_ERR_CODE_SHIFT: u32 = 4;
    pub const STATUS_ERR_CODE_MASK: u32 = 0xF << STATUS_ERR_CODE_SHIFT;
}

/// Something a model observed an instruction do. Every event names the
/// sequence number of the instruction it belongs to, so the scoreboard can
/// compare per instruction whatever order the engines finished in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// The instruction was latched (got its sequence number).
    Latch {
        seq: u32,
        word: u64,
        cycle: Option<u64>,
    },
    /// The instruction retired with `err` (raw 4-bit code) in `cycle`;
    /// `start` is the cycle its engine started it (`None` for an illegal
    /// word, which no engine runs, and for untimed models).
    Retire {
        seq: u32,
        opcode: u8,
        err: u8,
        cycle: Option<u64>,
        start: Option<u64>,
    },
    /// An L2 word written; `mask` bit i enables BF16 element i.
    L2Write {
        seq: u32,
        addr: u32,
        data: Word,
        mask: u8,
    },
    /// A host-memory word written through the ACP port.
    HostWrite { seq: u32, addr: u32, data: Word },
    /// A shape-table entry written.
    ShapeWrite {
        seq: u32,
        table: ShapeTable,
        index: u8,
        entry: ShapeEntry,
    },
    /// e_max written.
    EMaxWrite { seq: u32, value: u16 },
    /// A GEMV or GEMM took `beats` (at least one) beats from weight stream
    /// `stream` (0 matrix, for GEMM; 1 vector, for GEMV;
    /// `streams::MATRIX_STREAM`, `streams::VECTOR_STREAM`). One per
    /// instruction that consumed anything, reported before its retire like
    /// a write; an instruction in error consumes nothing and reports none.
    StreamRead { seq: u32, stream: u8, beats: u32 },
}

impl Event {
    pub fn seq(&self) -> u32 {
        match *self {
            Event::Latch { seq, .. }
            | Event::Retire { seq, .. }
            | Event::L2Write { seq, .. }
            | Event::HostWrite { seq, .. }
            | Event::ShapeWrite { seq, .. }
            | Event::EMaxWrite { seq, .. }
            | Event::StreamRead { seq, .. } => seq,
        }
    }
}

/// Why a model could not do what it was asked (infrastructure, not a
/// mismatch): a hang caught by the watchdog, a backdoor access out of range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// The model did not finish within `cycles` cycles while doing `what`.
    Watchdog { what: String, cycles: u64 },
    /// A backdoor access outside the memory.
    Backdoor(String),
    /// The model broke the bus protocol (an AXI-Lite response nobody asked
    /// for, say): a bug in the model, reported as such.
    Protocol(String),
    /// The run was abandoned from outside while doing `what` (a campaign's
    /// wall-clock limit per seed passed; `SimControls::set_abandon_flag`).
    Abandoned { what: String },
    /// An assertion inside the model failed (the RTL's, hw/rtl/
    /// pccx_assert_pkg.sv): its label `name`, its hierarchical `scope`, at
    /// `cycle`. A bug in the model, reported as such.
    Assertion(Box<AssertionFailure>),
    /// Anything else, with a message saying what.
    Other(String),
}

/// A failed assertion of a model (the RTL's, hw/rtl/pccx_assert_pkg.sv).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertionFailure {
    /// Its label.
    pub name: String,
    /// Its hierarchical scope.
    pub scope: String,
    /// The other assertions that failed at the same clock edge.
    pub also: Vec<String>,
    /// The cycle of that edge.
    pub cycle: u64,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Watchdog { what, cycles } => {
                write!(
                    f,
                    "watchdog: no progress after {cycles} cycles while {what} (the RTL hangs)"
                )
            }
            ModelError::Backdoor(m) => write!(f, "backdoor access: {m}"),
            ModelError::Protocol(m) => write!(f, "bus protocol violation: {m}"),
            ModelError::Assertion(a) => {
                write!(
                    f,
                    "assertion {} failed at cycle {} ({})",
                    a.name, a.cycle, a.scope
                )?;
                if !a.also.is_empty() {
                    write!(f, "; at the same edge also {}", a.also.join(", "))?;
                }
                Ok(())
            }
            ModelError::Abandoned { what } => {
                write!(f, "abandoned at the wall-clock limit while {what}")
            }
            ModelError::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ModelError {}

/// A memory lent by a model: its words as bytes, 16 per word, least
/// significant byte first, whatever the model stores them as (the golden
/// model's `u128`s, the Verilated model's 32-bit limbs).
#[derive(Clone, Copy, Debug)]
pub struct MemoryView<'a> {
    bytes: &'a [u8],
}

#[cfg(not(target_endian = "little"))]
compile_error!("MemoryView and the RTL shim assume a little-endian host");

impl<'a> MemoryView<'a> {
    /// The bytes of `words`.
    pub fn of_words(words: &'a [Word]) -> MemoryView<'a> {
        // SAFETY: a u128 has no padding and u8 no alignment; on a
        // little-endian host its bytes are least significant first.
        let bytes =
            unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 16) };
        MemoryView { bytes }
    }

    /// The view of `words` words at `ptr`.
    ///
    /// # Safety
    /// `ptr` must point to `16 * words` readable bytes laid out as above,
    /// unchanged for `'a`.
    pub unsafe fn from_raw(ptr: *const u8, words: usize) -> MemoryView<'a> {
        MemoryView {
            bytes: std::slice::from_raw_parts(ptr, words * 16),
        }
    }

    /// Its length in words.
    pub fn words(&self) -> usize {
        self.bytes.len() / 16
    }

    /// The bytes of words `range`.
    pub fn bytes(&self, range: std::ops::Range<usize>) -> &'a [u8] {
        &self.bytes[range.start * 16..range.end * 16]
    }

    /// Word `i`.
    pub fn word(&self, i: usize) -> Word {
        let mut b = [0u8; 16];
        b.copy_from_slice(&self.bytes[i * 16..i * 16 + 16]);
        u128::from_le_bytes(b)
    }
}

/// How much of a model's inside its reports show: the observation levels of
/// the DUT contract (docs/dut-contract.md), each a strict superset of the
/// one before. The order is the levels' order: `BlackBox < Retire < Full`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Observation {
    /// Only the external interfaces: host-memory writes (with no
    /// instruction named), registers read through the command port,
    /// weight beats taken, and L2 read back through the DUT's own MEMCPY.
    BlackBox,
    /// Plus a completion tap: each instruction's retire (sequence number,
    /// opcode, error code) and its cycle.
    Retire,
    /// Every event of every instruction, and the back door: what a model of
    /// this repository reports.
    Full,
}

impl Observation {
    pub const ALL: [Observation; 3] = [
        Observation::BlackBox,
        Observation::Retire,
        Observation::Full,
    ];

    /// The name the command line, the manifests and the result files use.
    pub fn name(self) -> &'static str {
        match self {
            Observation::BlackBox => "black-box",
            Observation::Retire => "retire",
            Observation::Full => "full",
        }
    }

    pub fn by_name(name: &str) -> Option<Observation> {
        Observation::ALL.into_iter().find(|o| o.name() == name)
    }

    /// `event` as a model seen at this level reports it, if it does: a
    /// host write is seen on the bus at every level, but below `Full` with
    /// [`UNATTRIBUTED`] as its sequence number (no tap names the writer);
    /// a retire from `Retire` on, without the engine's start cycle (a tap
    /// of `Full`); everything else only at `Full`.
    pub fn show(self, event: Event) -> Option<Event> {
        if self == Observation::Full {
            return Some(event);
        }
        match event {
            Event::HostWrite { addr, data, .. } => Some(Event::HostWrite {
                seq: UNATTRIBUTED,
                addr,
                data,
            }),
            Event::Retire {
                seq,
                opcode,
                err,
                cycle,
                ..
            } if self == Observation::Retire => Some(Event::Retire {
                seq,
                opcode,
                err,
                cycle,
                start: None,
            }),
            _ => None,
        }
    }
}

impl std::fmt::Display for Observation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The sequence number of an event no tap attributes to an instruction (a
/// host write seen below the `Full` observation level).
pub const UNATTRIBUTED: u32 = u32::MAX;

/// A pccx NPU implementation, seen from the host and the harness.
///
/// The trait holds what every implementation has; what only some have is a
/// capability reached through [`clock`](NpuModel::clock) and
/// [`sim_controls`](NpuModel::sim_controls), so a model without it says
/// nothing about it and a wrapper forwards one accessor, not each method.
///
/// Front door: [`reg_write`](NpuModel::reg_write) / [`reg_read`](NpuModel::reg_read)
/// (AXI-Lite) and [`idle`](NpuModel::idle) (the host leaves a gap). Back door:
/// the `*_l2`, `*_host`, shape-table and e_max accessors, which take effect at
/// once and are never reported as events. Observation:
/// [`take_events`](NpuModel::take_events).
pub trait NpuModel {
    /// A short name for reports ("golden", "rtl").
    fn name(&self) -> &str;

    /// Architectural reset (docs/semantics.md section 1). L2 and host memory
    /// keep their contents; events are discarded.
    fn reset(&mut self) -> Result<(), ModelError>;

    /// L2 size in words.
    fn l2_words(&self) -> u32;

    fn write_l2(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError>;
    fn read_l2(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError>;
    fn write_host(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError>;
    fn read_host(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError>;

    /// Every word of L2 as the model holds it now, when it can lend it (the
    /// golden model's words, the Verilated array), so that the end-of-case
    /// comparison reads it in place; `None`: read it with `read_l2`.
    fn l2_view(&self) -> Option<MemoryView<'_>> {
        None
    }

    /// Every word of host memory, as [`l2_view`](NpuModel::l2_view) for L2.
    fn host_view(&self) -> Option<MemoryView<'_>> {
        None
    }

    fn shape_entry(&mut self, table: ShapeTable, index: u8) -> Result<ShapeEntry, ModelError>;
    fn set_shape_entry(
        &mut self,
        table: ShapeTable,
        index: u8,
        entry: ShapeEntry,
    ) -> Result<(), ModelError>;
    fn e_max(&mut self) -> Result<u16, ModelError>;
    fn set_e_max(&mut self, value: u16) -> Result<(), ModelError>;

    /// One AXI-Lite write; returns when its write response arrives (a full
    /// engine FIFO makes that wait).
    fn reg_write(&mut self, offset: u32, value: u32) -> Result<AxiResp, ModelError>;
    /// One AXI-Lite read.
    fn reg_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError>;
    /// The host does nothing for `cycles` cycles (the NPU keeps running).
    fn idle(&mut self, cycles: u32) -> Result<(), ModelError>;
    /// Runs until every latched instruction has retired.
    fn drain(&mut self) -> Result<(), ModelError>;

    /// Events observed since the last call, oldest first.
    fn take_events(&mut self) -> Vec<Event>;

    /// The content of both weight streams for the runs from the next reset
    /// on (docs/numerics.md section 2.4). Reset sets the consumed counts to 0.
    fn set_weight_source(&mut self, source: WeightSource);

    /// Beats taken from each weight stream since reset, indexed by stream
    /// (`[matrix, vector]`).
    fn weight_beats_consumed(&mut self) -> [u64; 2];

    /// The model's clock, when it has one (a timed golden model, the RTL):
    /// the status register over time, and waits that can hang.
    fn clock(&mut self) -> Option<&mut dyn Clocked> {
        None
    }

    /// What only a simulated design offers (host-port stalls, waveform
    /// windows, code coverage); `None` for a model without signals.
    fn sim_controls(&mut self) -> Option<&mut dyn SimControls> {
        None
    }

    /// How much of the model its reports show (docs/dut-contract.md): every
    /// model of this repository reports everything; a DUT seen through a
    /// narrower interface says so, and the scoreboard then makes only the
    /// checks that level allows.
    fn observation(&self) -> Observation {
        Observation::Full
    }

    /// Where the model's CVO is approximate by design, the error it
    /// declares per function (docs/dut-contract.md, "Numerics profiles"):
    /// the scoreboard accepts a result within it and hands the value to the
    /// reference. `None`, every model of this repository: exact.
    fn numerics(&self) -> Option<&crate::numerics::profile::NumericsProfile> {
        None
    }

    /// Where the model's timing is another design's, not the one the golden
    /// timing model describes (docs/dut-contract.md, "Timing"): the
    /// per-instruction check keeps only the ordering rules, and the program
    /// as a whole must end within its budget. `None`, every model of this
    /// repository: exact timing.
    fn cycle_budget(&self) -> Option<CycleBudget> {
        None
    }

    /// Issues one instruction: low word to 0x00, then high word to 0x04.
    fn issue(&mut self, word: u64) -> Result<(AxiResp, AxiResp), ModelError> {
        let lo = self.reg_write(reg::INSTR_LO, word as u32)?;
        let hi = self.reg_write(reg::INSTR_HI, (word >> 32) as u32)?;
        Ok((lo, hi))
    }
}

/// A program's cycle budget against the golden timing model's prediction
/// ([`NpuModel::cycle_budget`]): at most `reference * (100 + tolerance_pct)
/// / 100 + slack_cycles` cycles from reset to the end of the drain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleBudget {
    pub tolerance_pct: u32,
    pub slack_cycles: u64,
}

impl CycleBudget {
    /// The budget of a program the reference predicts `reference` cycles for.
    pub fn of(self, reference: u64) -> u64 {
        reference.saturating_mul(100 + u64::from(self.tolerance_pct)) / 100 + self.slack_cycles
    }
}

/// What a model with a notion of time offers ([`NpuModel::clock`]).
pub trait Clocked {
    /// The status register's value over time since reset, as (cycle, value)
    /// at cycle 0 and at every cycle where it changed. The list covers
    /// every cycle the model has simulated or predicted; the last value
    /// holds from then on.
    fn status_timeline(&mut self) -> Vec<(u64, u32)>;

    /// Whether the retire cycles this model reports are a prediction of the
    /// hardware's (a timed reference model), so that a DUT far slower than
    /// them hangs; `false` for an observation (the RTL).
    fn predicts_timing(&mut self) -> bool;

    /// A cycle (counted from reset) past which any wait of the model (an
    /// issue waiting for a full FIFO, a drain) ends in a watchdog error,
    /// even if the model still shows activity (an engine stuck in a loop
    /// that keeps writing). `None` removes the deadline. A model that
    /// cannot hang (a prediction) ignores it.
    fn set_wait_deadline(&mut self, _cycle: Option<u64>) {}

    /// The cycle (counted from reset) the model has reached, for a model
    /// that simulates cycles one by one (the RTL): where a hang or a bus
    /// protocol violation was seen. `None` for a prediction.
    fn cycle_now(&mut self) -> Option<u64> {
        None
    }
}

/// What only a simulated design offers ([`NpuModel::sim_controls`]).
pub trait SimControls {
    /// Host I/O for the runs from the next reset on: `Some(seed)` stalls the
    /// host port on a schedule drawn from `seed`, `None` gives ideal I/O.
    /// A design without a host port ignores it.
    fn set_io_stalls(&mut self, _seed: Option<u64>) {}

    /// Dumps a waveform of cycles `from..=to` (counted from the next reset)
    /// to the FST file `path`; `Ok(())` once it is armed.
    fn set_wave_window(&mut self, path: &std::path::Path, from: u64, to: u64)
        -> Result<(), String>;

    /// Closes the waveform file; says why nothing was written, if so.
    fn finish_wave(&mut self) -> Result<(), String>;

    /// Writes the code-coverage counters gathered since the model was made
    /// to the file `path` (Verilator's `coverage.dat` format), or says why
    /// there are none (a model built without coverage).
    fn write_coverage(&mut self, path: &std::path::Path) -> Result<(), String>;

    /// From the next reset on, the design's state before each reset is
    /// drawn from `seed` (everything but L2), as silicon powers up; `None`:
    /// whatever it holds (zero in a fresh simulation). A model without such
    /// state ignores it.
    fn set_initial_state(&mut self, _seed: Option<u64>) {}

    /// Whether L2 holds its words through the next reset, with the initial
    /// state as set: `false` for a model whose L2 powers up random with the
    /// rest of its state (a RAM the harness cannot name), which must then
    /// be loaded in full.
    fn keeps_l2_through_reset(&self) -> bool {
        true
    }

    /// A flag that, once set by another thread, makes the model's next
    /// wait return `ModelError::Abandoned` (a wall-clock limit per seed:
    /// a model cannot be stopped from outside otherwise). `None` removes
    /// it. A model that cannot run long ignores it.
    fn set_abandon_flag(&mut self, _flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {}
}
