//! Fault injection: proof that every scoreboard check can fire.
//!
//! [`Faulty`] wraps any model and, for one [`Fault`], changes what the model
//! reports (an event, a register read, a write response) or, after the
//! drain, its architectural state by backdoor. Running a case with the
//! plain model as reference and `Faulty(model)` as DUT must then produce
//! exactly the check that fault is meant to trip (tests/gate/scoreboard_fires.rs);
//! a check that no fault can trip is a check that may be dead.

use pccx_golden::isa::{self, Decoded, Instr};
use pccx_golden::model::{
    reg, AxiResp, Clocked, Event, ModelError, NpuModel, ShapeEntry, ShapeTable, Word,
};
use pccx_golden::streams::WeightSource;
use std::collections::BTreeSet;

/// One deliberate defect. `nth` counts events of the named type from 0,
/// since the last reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Flip bit `bit` (mod 128) of the nth L2 write's data; moved into an
    /// enabled element if the mask disables the one it names.
    L2Data {
        nth: usize,
        bit: u32,
    },
    /// XOR the nth L2 write's element mask.
    L2Mask {
        nth: usize,
        xor: u8,
    },
    /// XOR the nth L2 write's address.
    L2Addr {
        nth: usize,
        xor: u32,
    },
    /// Flip bit `bit` (mod 128, moved into an enabled element as for
    /// [`Fault::L2Data`]) of every L2 write to `addr`, whichever instruction
    /// makes it: a fault that stays put while the shrinker removes and
    /// changes instructions around it.
    L2DataAt {
        addr: u32,
        bit: u32,
    },
    /// Feed the DUT a weight stream with bit `bit` (mod 128) of beat
    /// `index` of `stream` (0 matrix, 1 vector) flipped: a wrong weight
    /// stream reaching a real RTL, whose results must then differ from the
    /// reference's (docs/workloads.md). Keyed on a beat, so not among the
    /// defaults: a program that takes fewer beats never sees it.
    WeightBeat {
        stream: usize,
        index: usize,
        bit: u32,
    },
    /// Do not report the nth L2 write.
    DropL2 {
        nth: usize,
    },
    /// Report an extra whole-word L2 write to `addr` for instruction `seq`,
    /// just before its retire (keyed by sequence number, not by retire
    /// order, which differs between a sequential and a decoupled model).
    ExtraL2 {
        seq: u32,
        addr: u32,
    },
    /// Report the nth L2 write after its instruction's retire.
    LateL2 {
        nth: usize,
    },
    /// Flip bit `bit` (mod 128) of the nth host write's data.
    HostData {
        nth: usize,
        bit: u32,
    },
    DropHost {
        nth: usize,
    },
    /// XOR the `a` value of the nth shape-table write.
    ShapeValue {
        nth: usize,
        xor: u16,
    },
    /// XOR the value of the nth e_max write.
    EMaxValue {
        nth: usize,
        xor: u16,
    },
    /// Report an e_max write for instruction `seq`, just before its retire.
    ExtraEMax {
        seq: u32,
        value: u16,
    },
    /// Do not report the nth e_max write (a findemax that forgot e_max).
    DropEMax {
        nth: usize,
    },
    /// Flip bit `bit` (mod 128, moved into an enabled element as for
    /// [`Fault::L2Data`]) of the nth L2 write made by a GEMV or GEMM: one
    /// wrong output element.
    MatData {
        nth: usize,
        bit: u32,
    },
    /// Add `delta` (wrapping) to the beat count of the nth weight-stream
    /// read: an engine that took one beat too many or too few.
    StreamBeats {
        nth: usize,
        delta: i32,
    },
    /// Do not report the nth weight-stream read.
    DropStreamRead {
        nth: usize,
    },
    /// Add `delta` (wrapping) to what `weight_beats_consumed` says of
    /// `stream`: beats taken that no instruction reported.
    BeatsConsumed {
        stream: usize,
        delta: i64,
    },
    /// XOR the error code of the retire of sequence number `nth` (4-bit field).
    RetireErr {
        nth: usize,
        xor: u8,
    },
    /// XOR the error code of every retire that reports `err` (a DUT that
    /// gets one error code wrong, wherever it occurs).
    RetireErrIf {
        err: u8,
        xor: u8,
    },
    /// XOR the opcode of the retire of sequence number `nth` (4-bit field).
    RetireOpcode {
        nth: usize,
        xor: u8,
    },
    DropRetire {
        nth: usize,
    },
    /// Report the retire of sequence number `nth` twice: right after itself, or with `later`
    /// at the start of the next batch of events (after the scoreboard has
    /// compared the instruction).
    DuplicateRetire {
        nth: usize,
        later: bool,
    },
    /// Report the latch of sequence number `nth` twice, as [`Fault::DuplicateRetire`] does.
    DuplicateLatch {
        nth: usize,
        later: bool,
    },
    /// XOR the word of the latch of sequence number `nth`.
    LatchWord {
        nth: usize,
        xor: u64,
    },
    /// Invert the response of the nth register write (OKAY <-> SLVERR).
    AxiResp {
        nth: usize,
    },
    /// After the drain, flip bit 0 of L2[addr] by backdoor, no event.
    CorruptL2 {
        addr: u32,
    },
    /// After the drain, flip bit 0 of HOST[addr] by backdoor, no event.
    CorruptHost {
        addr: u32,
    },
    /// After the drain, flip bit 0 of the entry's `c` by backdoor.
    CorruptTable {
        table: ShapeTable,
        index: u8,
    },
    /// After the drain, flip bit 0 of e_max by backdoor.
    CorruptEMax,
    /// XOR `1 << bit` into every status (0x08) read.
    StatusBit {
        bit: u32,
    },
    /// Add `delta` to every retired-count (0x0C) read.
    RetiredCount {
        delta: u32,
    },
    /// XOR `1 << bit` into every read of the held low instruction word (0x00).
    InstrLoBit {
        bit: u32,
    },
    /// A read of an offset the register map does not name answers OKAY
    /// (its data still 0) instead of SLVERR.
    UnmappedReadOkay,
    /// Add `delta` (may be negative; saturates at 0) to the retire cycle
    /// of sequence number `nth`: a timing bug under exact timing, an order
    /// violation when large enough under order timing.
    RetireCycle {
        nth: usize,
        delta: i64,
    },
    /// Move the `nth` change of the status timeline one cycle later.
    StatusDelay {
        nth: usize,
    },
    /// The nth drain since the wrapper was made (resets do not count)
    /// fails with a watchdog error: an infrastructure failure, not a
    /// mismatch, for the campaign's error path.
    Hang {
        nth_drain: usize,
    },
    /// The nth drain panics, as a crashing simulator would: the campaign
    /// must survive it and keep its results.
    Panic {
        nth_drain: usize,
    },
    /// The nth drain never returns and looks at no flag, as a simulator
    /// stuck inside one evaluation would: only `--seed-timeout`'s last
    /// resort (record the seed, end the process) gets out of it.
    Stuck {
        nth_drain: usize,
    },
}

impl Fault {
    /// One of each fault, with the parameters `--inject-fault NAME` uses:
    /// the first event of its kind, word 0, the second drain for a hang or
    /// a panic (so that a campaign has one result before it stops). The
    /// faults keyed on an address or an error code ([`Fault::L2DataAt`],
    /// [`Fault::RetireErrIf`]) are not among them: no default of theirs
    /// fires on every program.
    pub const DEFAULTS: &'static [Fault] = &[
        Fault::L2Data { nth: 0, bit: 0 },
        Fault::L2Mask { nth: 0, xor: 0x01 },
        Fault::L2Addr { nth: 0, xor: 0x01 },
        Fault::DropL2 { nth: 0 },
        Fault::ExtraL2 { seq: 0, addr: 0 },
        Fault::LateL2 { nth: 0 },
        Fault::HostData { nth: 0, bit: 0 },
        Fault::DropHost { nth: 0 },
        Fault::ShapeValue { nth: 0, xor: 1 },
        Fault::EMaxValue { nth: 0, xor: 1 },
        Fault::ExtraEMax {
            seq: 0,
            value: 0x3f80,
        },
        Fault::DropEMax { nth: 0 },
        Fault::MatData { nth: 0, bit: 0 },
        Fault::StreamBeats { nth: 0, delta: 1 },
        Fault::DropStreamRead { nth: 0 },
        Fault::BeatsConsumed {
            stream: 0,
            delta: 1,
        },
        Fault::RetireErr { nth: 0, xor: 1 },
        Fault::RetireOpcode { nth: 0, xor: 1 },
        Fault::DropRetire { nth: 0 },
        Fault::DuplicateRetire {
            nth: 0,
            later: false,
        },
        Fault::DuplicateLatch {
            nth: 0,
            later: false,
        },
        Fault::LatchWord { nth: 0, xor: 1 },
        Fault::AxiResp { nth: 0 },
        Fault::CorruptL2 { addr: 0 },
        Fault::CorruptHost { addr: 0 },
        Fault::CorruptTable {
            table: ShapeTable::Fmap,
            index: 0,
        },
        Fault::CorruptEMax,
        Fault::StatusBit { bit: 1 },
        Fault::RetiredCount { delta: 1 },
        Fault::InstrLoBit { bit: 3 },
        Fault::UnmappedReadOkay,
        Fault::RetireCycle { nth: 0, delta: 1 },
        Fault::StatusDelay { nth: 1 },
        Fault::Hang { nth_drain: 1 },
        Fault::Panic { nth_drain: 1 },
        Fault::Stuck { nth_drain: 1 },
    ];

    /// The fault's kind, as `--inject-fault` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::L2Data { .. } => "l2-data",
            Fault::L2Mask { .. } => "l2-mask",
            Fault::L2Addr { .. } => "l2-addr",
            Fault::L2DataAt { .. } => "l2-data-at",
            Fault::WeightBeat { .. } => "weight-beat",
            Fault::DropL2 { .. } => "drop-l2",
            Fault::ExtraL2 { .. } => "extra-l2",
            Fault::LateL2 { .. } => "late-l2",
            Fault::HostData { .. } => "host-data",
            Fault::DropHost { .. } => "drop-host",
            Fault::ShapeValue { .. } => "shape-value",
            Fault::EMaxValue { .. } => "emax-value",
            Fault::ExtraEMax { .. } => "extra-emax",
            Fault::DropEMax { .. } => "drop-emax",
            Fault::MatData { .. } => "mat-data",
            Fault::StreamBeats { .. } => "stream-beats",
            Fault::DropStreamRead { .. } => "drop-stream-read",
            Fault::BeatsConsumed { .. } => "beats-consumed",
            Fault::RetireErr { .. } => "retire-err",
            Fault::RetireErrIf { .. } => "retire-err-if",
            Fault::RetireOpcode { .. } => "retire-opcode",
            Fault::DropRetire { .. } => "drop-retire",
            Fault::DuplicateRetire { .. } => "duplicate-retire",
            Fault::DuplicateLatch { .. } => "duplicate-latch",
            Fault::LatchWord { .. } => "latch-word",
            Fault::AxiResp { .. } => "axi-resp",
            Fault::CorruptL2 { .. } => "corrupt-l2",
            Fault::CorruptHost { .. } => "corrupt-host",
            Fault::CorruptTable { .. } => "corrupt-table",
            Fault::CorruptEMax => "corrupt-emax",
            Fault::StatusBit { .. } => "status-bit",
            Fault::RetiredCount { .. } => "retired-count",
            Fault::InstrLoBit { .. } => "instr-lo-bit",
            Fault::UnmappedReadOkay => "unmapped-read-okay",
            Fault::RetireCycle { .. } => "retire-cycle",
            Fault::StatusDelay { .. } => "status-delay",
            Fault::Hang { .. } => "hang",
            Fault::Panic { .. } => "panic",
            Fault::Stuck { .. } => "stuck",
        }
    }

    /// The default fault of a kind.
    pub fn by_name(name: &str) -> Option<Fault> {
        Fault::DEFAULTS.iter().find(|f| f.name() == name).copied()
    }

    pub fn names() -> Vec<&'static str> {
        Fault::DEFAULTS.iter().map(Fault::name).collect()
    }
}

/// How many events of each type have passed since the last reset.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    l2: usize,
    host: usize,
    shape: usize,
    emax: usize,
    stream: usize,
    /// L2 writes of GEMV and GEMM instructions.
    mat_l2: usize,
    retire: usize,
    latch: usize,
    reg_write: usize,
}

/// A model with one fault. Its name is the inner model's with the fault's
/// appended ("golden+l2-data"), so reports say what was injected.
pub struct Faulty<M: NpuModel + ?Sized> {
    inner: Box<M>,
    fault: Fault,
    name: String,
    counts: Counts,
    fired: bool,
    /// A write held back by [`Fault::LateL2`] until its retire has passed.
    held: Option<Event>,
    /// Events for the start of the next batch.
    next_batch: Vec<Event>,
    /// Drains since the wrapper was made.
    drains: usize,
    /// Sequence numbers latched as GEMV or GEMM since the last reset.
    mat_seqs: BTreeSet<u32>,
}

impl<M: NpuModel> Faulty<M> {
    pub fn new(inner: M, fault: Fault) -> Faulty<M> {
        Faulty::boxed(Box::new(inner), fault)
    }
}

impl<M: NpuModel + ?Sized> Faulty<M> {
    /// Wraps an already boxed model (a `Box<dyn NpuModel>` from
    /// `models::open_dut`, say).
    pub fn boxed(inner: Box<M>, fault: Fault) -> Faulty<M> {
        let name = format!("{}+{}", inner.name(), fault.name());
        Faulty {
            inner,
            fault,
            name,
            counts: Counts::default(),
            fired: false,
            held: None,
            next_batch: Vec::new(),
            drains: 0,
            mat_seqs: BTreeSet::new(),
        }
    }

    /// Whether the fault changed anything since the last reset: a test
    /// whose fault never fired proves nothing.
    pub fn fired(&self) -> bool {
        self.fired
    }

    pub fn inner(&mut self) -> &mut M {
        &mut self.inner
    }

    /// Passes one inner event through the fault into `out`.
    fn pass(&mut self, mut event: Event, out: &mut Vec<Event>) {
        let c = &mut self.counts;
        let counter = match event {
            Event::L2Write { .. } => &mut c.l2,
            Event::HostWrite { .. } => &mut c.host,
            Event::ShapeWrite { .. } => &mut c.shape,
            Event::EMaxWrite { .. } => &mut c.emax,
            Event::StreamRead { .. } => &mut c.stream,
            Event::Retire { .. } => &mut c.retire,
            Event::Latch { .. } => &mut c.latch,
        };
        // Retires and latches are counted by sequence number: their order
        // differs between the sequential golden model and the decoupled RTL,
        // and a fault must hit the same instruction in both.
        let n = match event {
            Event::Retire { seq, .. } | Event::Latch { seq, .. } => seq as usize,
            _ => *counter,
        };
        *counter += 1;
        if let Event::Latch { seq, word, .. } = event {
            if let Decoded::Legal(Instr::Gemv(_) | Instr::Gemm(_)) = isa::decode(word) {
                self.mat_seqs.insert(seq);
            }
        }
        let nth_mat_write = match event {
            Event::L2Write { seq, .. } if self.mat_seqs.contains(&seq) => {
                self.counts.mat_l2 += 1;
                Some(self.counts.mat_l2 - 1)
            }
            _ => None,
        };
        let mut fired = true;
        match (self.fault, &mut event) {
            (Fault::L2Data { nth, bit }, Event::L2Write { data, mask, .. }) if nth == n => {
                *data ^= 1 << enabled_bit(bit, *mask);
            }
            (
                Fault::L2DataAt { addr: at, bit },
                Event::L2Write {
                    addr, data, mask, ..
                },
            ) if at == *addr => {
                *data ^= 1 << enabled_bit(bit, *mask);
            }
            (Fault::L2Mask { nth, xor }, Event::L2Write { mask, .. }) if nth == n => *mask ^= xor,
            (Fault::L2Addr { nth, xor }, Event::L2Write { addr, .. }) if nth == n => *addr ^= xor,
            (Fault::DropL2 { nth }, Event::L2Write { .. }) if nth == n => return self.fire(),
            (Fault::LateL2 { nth }, Event::L2Write { .. }) if nth == n => {
                self.held = Some(event);
                return self.fire();
            }
            (Fault::HostData { nth, bit }, Event::HostWrite { data, .. }) if nth == n => {
                *data ^= 1 << (bit % 128);
            }
            (Fault::DropHost { nth }, Event::HostWrite { .. }) if nth == n => return self.fire(),
            (Fault::ShapeValue { nth, xor }, Event::ShapeWrite { entry, .. }) if nth == n => {
                entry.a ^= xor;
            }
            (Fault::EMaxValue { nth, xor }, Event::EMaxWrite { value, .. }) if nth == n => {
                *value ^= xor;
            }
            (Fault::MatData { nth, bit }, Event::L2Write { data, mask, .. })
                if nth_mat_write == Some(nth) =>
            {
                *data ^= 1 << enabled_bit(bit, *mask);
            }
            (Fault::DropEMax { nth }, Event::EMaxWrite { .. }) if nth == n => return self.fire(),
            (Fault::StreamBeats { nth, delta }, Event::StreamRead { beats, .. }) if nth == n => {
                *beats = beats.wrapping_add_signed(delta);
            }
            (Fault::DropStreamRead { nth }, Event::StreamRead { .. }) if nth == n => {
                return self.fire()
            }
            (Fault::ExtraL2 { seq: target, addr }, Event::Retire { seq, .. }) if target == *seq => {
                out.push(Event::L2Write {
                    seq: *seq,
                    addr,
                    data: 0x0bad_0bad_0bad_0bad_0bad_0bad_0bad_0bad,
                    mask: 0xFF,
                });
            }
            (Fault::ExtraEMax { seq: target, value }, Event::Retire { seq, .. })
                if target == *seq =>
            {
                out.push(Event::EMaxWrite { seq: *seq, value });
            }
            (Fault::RetireErr { nth, xor }, Event::Retire { err, .. }) if nth == n => {
                *err = (*err ^ xor) & 0xF;
            }
            (Fault::RetireErrIf { err: code, xor }, Event::Retire { err, .. }) if code == *err => {
                *err = (*err ^ xor) & 0xF;
            }
            (Fault::RetireOpcode { nth, xor }, Event::Retire { opcode, .. }) if nth == n => {
                *opcode = (*opcode ^ xor) & 0xF;
            }
            (Fault::DropRetire { nth }, Event::Retire { .. }) if nth == n => return self.fire(),
            (
                Fault::RetireCycle { nth, delta },
                Event::Retire {
                    cycle: Some(cycle), ..
                },
            ) if nth == n => *cycle = cycle.saturating_add_signed(delta),
            (Fault::DuplicateRetire { nth, later }, Event::Retire { .. })
            | (Fault::DuplicateLatch { nth, later }, Event::Latch { .. })
                if nth == n =>
            {
                if later {
                    self.next_batch.push(event.clone());
                } else {
                    out.push(event.clone());
                }
            }
            (Fault::LatchWord { nth, xor }, Event::Latch { word, .. }) if nth == n => *word ^= xor,
            _ => fired = false,
        }
        self.fired |= fired;
        let retired = match event {
            Event::Retire { seq, .. } => Some(seq),
            _ => None,
        };
        out.push(event);
        if let (Some(seq), Some(held)) = (retired, &self.held) {
            if held.seq() == seq {
                out.extend(self.held.take());
            }
        }
    }

    fn fire(&mut self) {
        self.fired = true;
    }

    /// The backdoor faults, applied once the inner model has drained.
    fn corrupt_state(&mut self) -> Result<(), ModelError> {
        match self.fault {
            Fault::CorruptL2 { addr } => {
                let mut w = [0 as Word];
                self.inner.read_l2(addr, &mut w)?;
                self.inner.write_l2(addr, &[w[0] ^ 1])?;
            }
            Fault::CorruptHost { addr } => {
                let mut w = [0 as Word];
                self.inner.read_host(addr, &mut w)?;
                self.inner.write_host(addr, &[w[0] ^ 1])?;
            }
            Fault::CorruptTable { table, index } => {
                let e = self.inner.shape_entry(table, index)?;
                let corrupted = ShapeEntry { c: e.c ^ 1, ..e };
                self.inner.set_shape_entry(table, index, corrupted)?;
            }
            Fault::CorruptEMax => {
                let v = self.inner.e_max()?;
                self.inner.set_e_max(v ^ 1)?;
            }
            _ => return Ok(()),
        }
        self.fired = true;
        Ok(())
    }
}

/// Bit `bit % 128`, moved to the same position of the lowest enabled
/// element if its own element is disabled (a flip there would not be
/// architectural, so no check could see it). A zero mask keeps the bit.
fn enabled_bit(bit: u32, mask: u8) -> u32 {
    let bit = bit % 128;
    let element = bit / 16;
    if mask & (1 << element) != 0 || mask == 0 {
        return bit;
    }
    mask.trailing_zeros() * 16 + bit % 16
}

impl<M: NpuModel + ?Sized> NpuModel for Faulty<M> {
    forward_to_inner!();

    fn name(&self) -> &str {
        &self.name
    }

    fn reset(&mut self) -> Result<(), ModelError> {
        self.counts = Counts::default();
        self.mat_seqs.clear();
        self.fired = false;
        self.held = None;
        self.next_batch.clear();
        self.inner.reset()
    }

    fn set_weight_source(&mut self, mut source: WeightSource) {
        if let Fault::WeightBeat { stream, index, bit } = self.fault {
            let stream = stream.min(1);
            let from = source.prefix[stream].len();
            // The beats up to the one bent, as the source would deliver them.
            let more = source.beats(stream, from as u64, (index + 1).saturating_sub(from) as u64);
            let prefix = &mut source.prefix[stream];
            prefix.extend(more);
            prefix[index] ^= 1 << (bit % 128);
        }
        self.inner.set_weight_source(source)
    }

    fn reg_write(&mut self, offset: u32, value: u32) -> Result<AxiResp, ModelError> {
        let resp = self.inner.reg_write(offset, value)?;
        let n = self.counts.reg_write;
        self.counts.reg_write += 1;
        Ok(match self.fault {
            Fault::AxiResp { nth } if nth == n => {
                self.fired = true;
                match resp {
                    AxiResp::Okay => AxiResp::SlvErr,
                    AxiResp::SlvErr => AxiResp::Okay,
                }
            }
            _ => resp,
        })
    }

    fn reg_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError> {
        let (value, resp) = self.inner.reg_read(offset)?;
        if self.fault == Fault::UnmappedReadOkay && offset > reg::RETIRED {
            self.fired = true;
            return Ok((value, AxiResp::Okay));
        }
        let value = match self.fault {
            Fault::StatusBit { bit } if offset == reg::STATUS => value ^ (1 << (bit % 32)),
            Fault::RetiredCount { delta } if offset == reg::RETIRED => value.wrapping_add(delta),
            Fault::InstrLoBit { bit } if offset == reg::INSTR_LO => value ^ (1 << (bit % 32)),
            _ => return Ok((value, resp)),
        };
        self.fired = true;
        Ok((value, resp))
    }

    fn drain(&mut self) -> Result<(), ModelError> {
        let n = self.drains;
        self.drains += 1;
        match self.fault {
            Fault::Hang { nth_drain } if nth_drain == n => {
                self.fired = true;
                return Err(ModelError::Watchdog {
                    what: "draining (injected fault: hang)".into(),
                    cycles: 0,
                });
            }
            Fault::Panic { nth_drain } if nth_drain == n => {
                panic!("injected fault: panic in drain {n}")
            }
            Fault::Stuck { nth_drain } if nth_drain == n => {
                self.fired = true;
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            _ => {}
        }
        self.inner.drain()?;
        self.corrupt_state()
    }

    fn take_events(&mut self) -> Vec<Event> {
        let events = self.inner.take_events();
        let mut out = std::mem::take(&mut self.next_batch);
        for event in events {
            self.pass(event, &mut out);
        }
        out
    }

    /// The inner model's clock, seen through the fault (a `status-delay`
    /// fault moves a change of its status timeline).
    fn clock(&mut self) -> Option<&mut dyn Clocked> {
        self.inner.clock()?;
        Some(self)
    }

    fn weight_beats_consumed(&mut self) -> [u64; 2] {
        let mut consumed = self.inner.weight_beats_consumed();
        if let Fault::BeatsConsumed { stream, delta } = self.fault {
            if let Some(c) = consumed.get_mut(stream) {
                *c = c.wrapping_add_signed(delta);
                self.fired = true;
            }
        }
        consumed
    }
}

impl<M: NpuModel + ?Sized> Clocked for Faulty<M> {
    fn status_timeline(&mut self) -> Vec<(u64, u32)> {
        let Some(clock) = self.inner.clock() else {
            return Vec::new();
        };
        let mut timeline = clock.status_timeline();
        if let Fault::StatusDelay { nth } = self.fault {
            if let Some(change) = timeline.get_mut(nth) {
                change.0 += 1;
                self.fired = true;
            }
        }
        timeline
    }

    fn predicts_timing(&mut self) -> bool {
        self.inner.clock().is_some_and(|c| c.predicts_timing())
    }

    fn set_wait_deadline(&mut self, cycle: Option<u64>) {
        if let Some(clock) = self.inner.clock() {
            clock.set_wait_deadline(cycle);
        }
    }

    fn cycle_now(&mut self) -> Option<u64> {
        self.inner.clock().and_then(|c| c.cycle_now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flip_in_a_disabled_element_moves_to_an_enabled_one() {
        assert_eq!(enabled_bit(3, 0b0000_0001), 3);
        assert_eq!(enabled_bit(16 + 3, 0b0000_0001), 3);
        assert_eq!(enabled_bit(16 + 3, 0b1000_0100), 32 + 3);
        assert_eq!(enabled_bit(128 + 5, 0xFF), 5);
    }

    use pccx_golden::asm::parse_program;
    use pccx_golden::model::ErrorCode;
    use pccx_golden::{Golden, GoldenConfig};

    /// Runs `program` on `Faulty(golden, fault)` and returns its events.
    fn events_with(fault: Fault, program: &str) -> (Vec<Event>, bool) {
        let mut m = Faulty::new(Golden::new(GoldenConfig { l2_words: 256 }), fault);
        m.reset().unwrap();
        m.write_l2(0, &[0x1111; 256]).unwrap();
        let mut events = Vec::new();
        for item in parse_program(program).unwrap().items {
            if let pccx_golden::asm::Item::Instr(word) = item {
                m.issue(word).unwrap();
            }
            events.extend(m.take_events());
        }
        (events, m.fired())
    }

    fn l2_writes(events: &[Event]) -> Vec<(u32, Word)> {
        events
            .iter()
            .filter_map(|e| match *e {
                Event::L2Write { addr, data, .. } => Some((addr, data)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn l2_data_at_flips_every_write_to_its_address_and_no_other() {
        // Two copies write L2[4] and L2[5], both whole words.
        let program = "memset fmap[1] = (1, 1, 16)\n\
                       memset fmap[2] = (1, 1, 9)\n\
                       memcpy l2[4] <- l2[100], shape=1\n\
                       memcpy l2[4] <- l2[200], shape=2\n";
        // CorruptEMax acts after a drain only: these events are the clean ones.
        let (clean, _) = events_with(Fault::CorruptEMax, program);
        let (faulty, fired) = events_with(Fault::L2DataAt { addr: 5, bit: 16 }, program);
        assert!(fired);
        let flips: Vec<(u32, Word)> = l2_writes(&clean)
            .iter()
            .zip(l2_writes(&faulty))
            .map(|(&(addr, want), (got_addr, got))| {
                assert_eq!(addr, got_addr);
                (addr, want ^ got)
            })
            .collect();
        assert_eq!(flips, [(4, 0), (5, 1 << 16), (4, 0), (5, 1 << 16)]);
        let (_, fired) = events_with(Fault::L2DataAt { addr: 6, bit: 16 }, program);
        assert!(!fired, "no write to L2[6]");
    }

    #[test]
    fn retire_err_if_changes_only_the_code_it_names() {
        // Two illegal opcodes and a MEMSET between them.
        let program = ".word 0x5000000000000000\n\
                       memset fmap[1] = (1, 1, 1)\n\
                       .word 0x6000000000000000\n";
        let ill = ErrorCode::IllegalOpcode.bits();
        let (events, fired) = events_with(Fault::RetireErrIf { err: ill, xor: 0x8 }, program);
        assert!(fired);
        let errs: Vec<(u32, u8)> = events
            .iter()
            .filter_map(|e| match *e {
                Event::Retire { seq, err, .. } => Some((seq, err)),
                _ => None,
            })
            .collect();
        assert_eq!(errs, [(0, ill ^ 0x8), (1, 0), (2, ill ^ 0x8)]);
        let (_, fired) = events_with(Fault::RetireErrIf { err: 6, xor: 1 }, program);
        assert!(!fired, "no retire reports L2_RANGE");
    }

    #[test]
    fn every_fault_kind_has_one_default_found_by_its_name() {
        let names = Fault::names();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name} twice");
            assert_eq!(Fault::by_name(name).map(|f| f.name()), Some(*name));
        }
        assert_eq!(Fault::by_name("no-such-fault"), None);
    }
}
