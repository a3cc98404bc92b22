//! The golden model: a sequential interpreter behind the AXI-Lite register
//! map (docs/semantics.md sections 7 and 8). Because conflicts and barriers
//! make the decoupled NPU sequentially consistent, executing each instruction
//! completely when it is latched gives the architectural state, every
//! instruction's writes and every error code; it has no notion of time.

use crate::engine::Engine;
use crate::exec;
use crate::isa::{self, Decoded};
use crate::model::{
    reg, AxiResp, Clocked, ErrorCode, Event, MemoryView, ModelError, NpuModel, ShapeEntry,
    ShapeTable, Word, SHAPE_ENTRIES,
};
use crate::state::State;
use crate::streams::WeightSource;
use crate::tables::Tables;
use crate::timing::{self, Latched, Timeline, TimingParams};

/// The AXI-Lite address is 12 bits wide.
const REG_SPACE: u32 = 0x1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoldenConfig {
    pub l2_words: u32,
}

impl Default for GoldenConfig {
    /// The KV260 L2: 1.75 MiB of 128-bit words.
    fn default() -> GoldenConfig {
        GoldenConfig { l2_words: 114_688 }
    }
}

/// The register-file side of the model.
#[derive(Clone, Debug, Default)]
struct Regs {
    instr_lo: u32,
    instr_hi: u32,
    next_seq: u32,
    retired: u32,
    /// Code of the youngest retired instruction, `None` before the first.
    last_code: Option<ErrorCode>,
    /// First error in program order since reset or the last clear.
    first_error: Option<ErrorCode>,
}

impl Regs {
    fn status(&self) -> u32 {
        // BUSY is never set: an instruction retires inside the 0x04 write.
        let done = if self.last_code == Some(ErrorCode::Ok) {
            reg::STATUS_DONE
        } else {
            0
        };
        let err = self.first_error.map_or(0, |code| {
            reg::STATUS_ERR | u32::from(code.bits()) << reg::STATUS_ERR_CODE_SHIFT
        });
        done | err
    }
}

#[derive(Clone, Debug)]
pub struct Golden {
    state: State,
    regs: Regs,
    /// The timing part (docs/timing.md); `None`: untimed, events carry no
    /// cycles.
    timing: Option<Timeline>,
    /// The weight streams of the runs from the next reset on.
    next_weights: WeightSource,
}

impl Default for Golden {
    fn default() -> Golden {
        Golden::new(GoldenConfig::default())
    }
}

impl Golden {
    /// A model just out of reset, with L2 and host memory all zero.
    pub fn new(config: GoldenConfig) -> Golden {
        Golden {
            state: State::new(config.l2_words),
            regs: Regs::default(),
            timing: None,
            next_weights: WeightSource::default(),
        }
    }

    /// A model that also predicts every latch, start and retire cycle and the
    /// status register in every cycle, for ideal I/O with `params`.
    pub fn with_timing(config: GoldenConfig, params: TimingParams) -> Golden {
        Golden {
            timing: Some(Timeline::new(params)),
            ..Golden::new(config)
        }
    }

    /// The timing part, when the model has one.
    pub fn timeline(&self) -> Option<&Timeline> {
        self.timing.as_ref()
    }

    /// Both shape tables as they stand (for footprint computation).
    pub fn tables(&self) -> &Tables {
        &self.state.tables
    }

    /// The sequence number the next latched instruction gets.
    pub fn next_seq(&self) -> u32 {
        self.regs.next_seq
    }

    /// Latches, executes and retires one instruction word.
    fn run(&mut self, word: u64) {
        let seq = self.regs.next_seq;
        self.regs.next_seq = seq.wrapping_add(1);
        let decoded = isa::decode(word);
        let legal = match &decoded {
            Decoded::Legal(instr) => Some(instr),
            Decoded::Illegal { .. } => None,
        };
        let latch = self
            .timing
            .as_mut()
            .map(|t| t.latch_cycle(legal.map(Engine::of_instr)));
        self.state.record(Event::Latch {
            seq,
            word,
            cycle: latch,
        });
        let code = match &decoded {
            Decoded::Legal(instr) => exec::execute(&mut self.state, seq, instr),
            Decoded::Illegal { reason, .. } => reason.error_code(),
        };
        // Execution changes no table an instruction's own footprint or
        // latency depends on (a MEMSET's footprint is its target entry), so
        // both can be taken after it.
        let prediction = match (self.timing.as_mut(), latch) {
            (Some(t), Some(latch)) => {
                let tables = &self.state.tables;
                let item = Latched {
                    seq,
                    instr: legal,
                    footprint: legal.map(|i| crate::footprint::footprint(i, tables)),
                    busy: legal.map_or(0, |i| {
                        timing::engine_busy_cycles(i, tables, code, &t.params())
                    }),
                    code,
                };
                Some(t.schedule(latch, item))
            }
            _ => None,
        };
        self.regs.retired = self.regs.retired.wrapping_add(1);
        self.regs.last_code = Some(code);
        if code != ErrorCode::Ok && self.regs.first_error.is_none() {
            self.regs.first_error = Some(code);
        }
        self.state.record(Event::Retire {
            seq,
            opcode: isa::opcode_bits(word),
            err: code.bits(),
            cycle: prediction.map(|p| p.retire),
            start: prediction.and_then(|p| p.start),
        });
    }
}

impl Golden {
    /// The RTL writes shape tables and e_max through a backdoor port, one
    /// cycle each (docs/build.md); the timing part keeps in step.
    fn backdoor_port_cycle(&mut self) {
        if let Some(t) = self.timing.as_mut() {
            t.idle(1);
        }
    }
}

fn check_reg_offset(offset: u32) -> Result<(), ModelError> {
    if offset < REG_SPACE {
        Ok(())
    } else {
        Err(ModelError::Other(format!(
            "register offset {offset:#x} is outside the 12-bit AXI-Lite address space"
        )))
    }
}

/// `Backdoor` unless `[addr, addr + len)` lies inside `what` of `size` words.
fn check_backdoor(what: &str, addr: u32, len: usize, size: usize) -> Result<(), ModelError> {
    let end = u64::from(addr) + len as u64;
    if end <= size as u64 {
        Ok(())
    } else {
        Err(ModelError::Backdoor(format!(
            "{len} {what} words at {addr:#x} run to {end:#x}, past the end of {what} ({size:#x} words)"
        )))
    }
}

fn check_index(index: u8) -> Result<usize, ModelError> {
    let i = usize::from(index);
    if i < SHAPE_ENTRIES {
        Ok(i)
    } else {
        Err(ModelError::Backdoor(format!(
            "shape-table index {index} is past the {SHAPE_ENTRIES} entries"
        )))
    }
}

impl NpuModel for Golden {
    fn name(&self) -> &str {
        "golden"
    }

    fn reset(&mut self) -> Result<(), ModelError> {
        self.state.reset(self.next_weights.clone());
        self.regs = Regs::default();
        if let Some(t) = self.timing.as_mut() {
            t.reset();
        }
        Ok(())
    }

    fn l2_words(&self) -> u32 {
        self.state.l2_words()
    }

    fn write_l2(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError> {
        let l2 = self.state.l2_mut();
        check_backdoor("L2", addr, data.len(), l2.len())?;
        l2[addr as usize..][..data.len()].copy_from_slice(data);
        Ok(())
    }

    fn read_l2(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError> {
        let l2 = self.state.l2();
        check_backdoor("L2", addr, out.len(), l2.len())?;
        out.copy_from_slice(&l2[addr as usize..][..out.len()]);
        Ok(())
    }

    fn write_host(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError> {
        let host = self.state.host_mut();
        check_backdoor("host", addr, data.len(), host.len())?;
        host[addr as usize..][..data.len()].copy_from_slice(data);
        Ok(())
    }

    fn l2_view(&self) -> Option<MemoryView<'_>> {
        Some(MemoryView::of_words(self.state.l2()))
    }

    fn host_view(&self) -> Option<MemoryView<'_>> {
        Some(MemoryView::of_words(self.state.host()))
    }

    fn read_host(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError> {
        let host = self.state.host();
        check_backdoor("host", addr, out.len(), host.len())?;
        out.copy_from_slice(&host[addr as usize..][..out.len()]);
        Ok(())
    }

    fn shape_entry(&mut self, table: ShapeTable, index: u8) -> Result<ShapeEntry, ModelError> {
        Ok(self.state.tables.table(table)[check_index(index)?])
    }

    fn set_shape_entry(
        &mut self,
        table: ShapeTable,
        index: u8,
        entry: ShapeEntry,
    ) -> Result<(), ModelError> {
        self.state.tables.table_mut(table)[check_index(index)?] = entry;
        self.backdoor_port_cycle();
        Ok(())
    }

    fn e_max(&mut self) -> Result<u16, ModelError> {
        Ok(self.state.e_max)
    }

    fn set_e_max(&mut self, value: u16) -> Result<(), ModelError> {
        self.state.e_max = value;
        self.backdoor_port_cycle();
        Ok(())
    }

    fn reg_write(&mut self, offset: u32, value: u32) -> Result<AxiResp, ModelError> {
        check_reg_offset(offset)?;
        match offset {
            reg::INSTR_HI => {}
            _ => {
                let clears = offset == reg::STATUS;
                let next_seq = self.regs.next_seq;
                if let Some(t) = self.timing.as_mut() {
                    t.reg_access(clears, next_seq);
                }
            }
        }
        match offset {
            reg::INSTR_LO => self.regs.instr_lo = value,
            reg::INSTR_HI => {
                self.regs.instr_hi = value;
                let word = u64::from(value) << 32 | u64::from(self.regs.instr_lo);
                self.run(word);
            }
            // Any value clears; every older instruction has already retired,
            // so the "older errors never set it again" rule holds trivially.
            reg::STATUS => self.regs.first_error = None,
            _ => return Ok(AxiResp::SlvErr),
        }
        Ok(AxiResp::Okay)
    }

    fn reg_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError> {
        check_reg_offset(offset)?;
        if let Some(t) = self.timing.as_mut() {
            t.reg_access(false, self.regs.next_seq);
        }
        Ok(match offset {
            reg::INSTR_LO => (self.regs.instr_lo, AxiResp::Okay),
            reg::INSTR_HI => (self.regs.instr_hi, AxiResp::Okay),
            reg::STATUS => (self.regs.status(), AxiResp::Okay),
            reg::RETIRED => (self.regs.retired, AxiResp::Okay),
            _ => (0, AxiResp::SlvErr),
        })
    }

    /// Every latched instruction has already retired; only the timing
    /// part's clock moves.
    fn idle(&mut self, cycles: u32) -> Result<(), ModelError> {
        if let Some(t) = self.timing.as_mut() {
            t.idle(cycles);
        }
        Ok(())
    }

    /// Nothing to do, as for `idle`.
    fn drain(&mut self) -> Result<(), ModelError> {
        Ok(())
    }

    fn take_events(&mut self) -> Vec<Event> {
        self.state.take_events()
    }

    /// A timed golden model predicts the hardware's cycles; an untimed one
    /// has no clock.
    fn clock(&mut self) -> Option<&mut dyn Clocked> {
        if self.timing.is_some() {
            Some(self)
        } else {
            None
        }
    }

    fn set_weight_source(&mut self, source: WeightSource) {
        self.next_weights = source;
    }

    fn weight_beats_consumed(&mut self) -> [u64; 2] {
        self.state.beats_consumed()
    }
}

impl Clocked for Golden {
    fn status_timeline(&mut self) -> Vec<(u64, u32)> {
        self.timing
            .as_ref()
            .map(Timeline::status_timeline)
            .unwrap_or_default()
    }

    fn predicts_timing(&mut self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
