//! The adapters (docs/dut-contract.md, "Adapters"): the harness's register
//! operations of CONTRACT section 10 on the command and status ports a DUT
//! has, and loading and draining a DUT that has no back door and no taps.
//!
//! A DUT's shape comes from its manifest through the shim's table
//! (`pccx_sim_ops`: `push_kick`, `status_fifo`, `back_door`, `level`). The
//! shapes built: a 32-bit AXI-Lite with the instruction in two writes and
//! status registers (`hw/rtl`), and a 64-bit AXI-Lite with push and kick
//! and status through a FIFO (`hw/wrap`).

use pccx_golden::isa::{Instr, Memcpy, Memset};
use pccx_golden::model::{reg, AxiResp, ModelError, ShapeEntry, ShapeTable, Word};

use super::{RtlModel, OVERLAPPED_ISSUE_PCT};

/// The push-and-kick command port's registers (64-bit AXI-Lite).
pub mod push_kick {
    /// W: the instruction word (by strobes), held; R: the held word.
    pub const INSTR: u16 = 0x000;
    /// W: sends the held word to the NPU.
    pub const KICK: u16 = 0x008;
    /// W: clears ERR and err_code (CONTRACT section 10's write of 0x08);
    /// R: pops the status FIFO.
    pub const STATUS: u16 = 0x010;
    /// Where a canonical offset no register answers goes: above every
    /// register of this map, so the DUT answers SLVERR as at 0x10 and up.
    pub fn unmapped(offset: u32) -> u16 {
        0x800 | (offset as u16 & 0x7F8)
    }
}

/// Reads of the status FIFO one poll makes at most: an entry is a change,
/// and a DUT that never runs dry would otherwise hold the poll forever.
const MAX_POLL_READS: u32 = 64;

/// Cycles between two polls while draining a DUT with no retire tap.
const DRAIN_POLL_GAP: u32 = 16;

/// Words one front-door load moves per MEMCPY: (8, 4096, 1) BF16 elements.
const LOAD_WORDS: usize = 4096;

/// The fmap shape entry a front-door load uses, set back to its reset
/// value (all zero) afterwards.
const LOAD_SHAPE: u8 = 63;

/// What the status FIFO last said: the status bits and the retired count.
#[derive(Clone, Copy, Debug, Default)]
pub struct FifoStatus {
    pub status: u32,
    pub retired: u64,
}

impl RtlModel {
    fn pushes_and_kicks(&self) -> bool {
        self.ops.push_kick != 0
    }

    fn has_status_fifo(&self) -> bool {
        self.ops.status_fifo != 0
    }

    /// Whether the DUT has the back door (L2, shape tables, e_max).
    pub(super) fn has_back_door(&self) -> bool {
        self.ops.back_door != 0
    }

    /// Whether the DUT has the retire tap (level retire or full).
    pub(super) fn has_retire_tap(&self) -> bool {
        self.ops.level >= 1
    }

    /// Issues one instruction: two writes (under stalled I/O one in four
    /// overlapped), or the whole word and a kick. The two responses are
    /// those of the two writes either way.
    pub(super) fn issue_word(&mut self, word: u64) -> Result<(AxiResp, AxiResp), ModelError> {
        if self.pushes_and_kicks() {
            self.instr_writes += 1;
            self.instruction_sent(word);
            let push = self.axi_write(push_kick::INSTR, word, 0xFF, false)?;
            let kick = self.axi_write(push_kick::KICK, 0, 0xFF, false)?;
            return Ok((push, kick));
        }
        if self
            .write_skew
            .as_mut()
            .is_some_and(|rng| rng.percent(OVERLAPPED_ISSUE_PCT))
        {
            return self.issue_overlapped(word);
        }
        let lo = self.canonical_write(reg::INSTR_LO, word as u32)?;
        let hi = self.canonical_write(reg::INSTR_HI, (word >> 32) as u32)?;
        Ok((lo, hi))
    }

    /// The instruction register after a write of `value` to `offset`: a
    /// half, as CONTRACT section 10's map has it (the high half's write
    /// latches the whole word).
    fn hold(&mut self, offset: u32, value: u32) {
        match offset {
            reg::INSTR_LO => self.held_word = (self.held_word & !0xFFFF_FFFF) | u64::from(value),
            reg::INSTR_HI => {
                self.held_word = (self.held_word & 0xFFFF_FFFF) | (u64::from(value) << 32)
            }
            _ => {}
        }
    }

    /// The harness sends instruction `word` to the DUT (program order),
    /// which the instruction register then holds: host streams program
    /// their DMA from it before the DUT can run it.
    pub(super) fn instruction_sent(&mut self, word: u64) {
        self.held_word = word;
        let l2_words = self.config.l2_words;
        if let Some(streams) = &mut self.streams {
            streams.accepted(word, l2_words);
        }
    }

    /// A write of CONTRACT section 10's register map, on the DUT's port.
    pub(super) fn canonical_write(
        &mut self,
        offset: u32,
        value: u32,
    ) -> Result<AxiResp, ModelError> {
        let value64 = u64::from(value);
        self.hold(offset, value);
        if !self.pushes_and_kicks() {
            if offset == reg::INSTR_HI {
                self.instr_writes += 1;
                self.instruction_sent(self.held_word);
            }
            let answers_slverr = !matches!(offset, reg::INSTR_LO | reg::INSTR_HI | reg::STATUS);
            return self.axi_write(offset as u16, value64, 0xF, answers_slverr);
        }
        match offset {
            reg::INSTR_LO => self.axi_write(push_kick::INSTR, value64, 0x0F, false),
            reg::INSTR_HI => {
                self.instr_writes += 1;
                self.instruction_sent(self.held_word);
                let push = self.axi_write(push_kick::INSTR, value64 << 32, 0xF0, false)?;
                let kick = self.axi_write(push_kick::KICK, 0, 0xFF, false)?;
                Ok(if push == AxiResp::Okay { kick } else { push })
            }
            reg::STATUS => self.axi_write(push_kick::STATUS, value64, 0xFF, false),
            other => self.axi_write(push_kick::unmapped(other), value64, 0xFF, true),
        }
    }

    /// A read of CONTRACT section 10's register map, on the DUT's port.
    pub(super) fn canonical_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError> {
        if !self.pushes_and_kicks() {
            let (v, resp) = self.axi_read(offset as u16)?;
            return Ok((v as u32, resp));
        }
        match offset {
            reg::INSTR_LO | reg::INSTR_HI => {
                let (v, resp) = self.axi_read(push_kick::INSTR)?;
                let half = if offset == reg::INSTR_HI { v >> 32 } else { v };
                Ok((half as u32, resp))
            }
            reg::STATUS | reg::RETIRED if self.has_status_fifo() => {
                let resp = self.poll_status()?;
                let s = self.fifo_status;
                let value = if offset == reg::STATUS {
                    s.status
                } else {
                    // The loads' own instructions are the harness's, not the
                    // program's (`front_door_retired`).
                    s.retired.saturating_sub(self.front_door_retired) as u32
                };
                Ok((value, resp))
            }
            other => {
                let (v, resp) = self.axi_read(push_kick::unmapped(other))?;
                Ok((v as u32, resp))
            }
        }
    }

    /// Reads the status FIFO until it is empty (or `MAX_POLL_READS`); the
    /// last entry is the newest status. Returns the last read's response.
    fn poll_status(&mut self) -> Result<AxiResp, ModelError> {
        let mut resp = AxiResp::Okay;
        for _ in 0..MAX_POLL_READS {
            let (v, r) = self.axi_read(push_kick::STATUS)?;
            resp = r;
            if v >> 63 == 0 {
                break;
            }
            self.fifo_status = FifoStatus {
                status: v as u32,
                retired: (v >> 32) & 0x7FFF_FFFF,
            };
        }
        Ok(resp)
    }

    /// The instructions the DUT says it retired, by its own registers.
    fn retired_by_registers(&mut self) -> Result<u64, ModelError> {
        if self.has_status_fifo() {
            self.poll_status()?;
            Ok(self.fifo_status.retired)
        } else {
            Ok(u64::from(self.axi_read(reg::RETIRED as u16)?.0 as u32))
        }
    }

    /// Drains a DUT with no retire tap: polls its retired count until every
    /// instruction written has retired. A count that stops short for the
    /// watchdog's cycles is a hang.
    pub(super) fn drain_by_polling(&mut self) -> Result<(), ModelError> {
        let what = "draining: polling the retired count until every instruction written retired";
        let mut last = None;
        let mut since = self.cycle;
        loop {
            let seen = self.retired_by_registers()?;
            if seen >= self.instr_writes {
                return Ok(());
            }
            if last != Some(seen) {
                last = Some(seen);
                since = self.cycle;
            }
            if self.cycle - since >= self.watchdog_cycles {
                return Err(ModelError::Watchdog {
                    what: format!(
                        "{what} (cycle {}, {} instructions written, {seen} retired)",
                        self.cycle, self.instr_writes
                    ),
                    cycles: self.cycle - since,
                });
            }
            for _ in 0..DRAIN_POLL_GAP {
                self.tick();
            }
            self.idle_since_progress = 0;
            self.check_watchdog(what)?;
        }
    }

    /// Loads L2 words through the DUT's own MEMCPY (host to L2), for a DUT
    /// with no back door: per 4,096 words, the words into host memory at
    /// 0, a MEMSET of fmap entry 63 to their length, a synchronous MEMCPY,
    /// a drain, and host memory put back; then entry 63 back to zero, its
    /// value after a reset. Only right after a reset (the table then holds
    /// its reset values, which this leaves as they were).
    pub(super) fn load_l2_front_door(
        &mut self,
        addr: u32,
        data: &[Word],
    ) -> Result<(), ModelError> {
        if self.instr_writes != self.front_door_retired {
            return Err(ModelError::Backdoor(format!(
                "{}: L2 has no back door, and a load through MEMCPY after the program's own \
                 instructions would change the shape table they use; load right after a reset",
                self.config.name
            )));
        }
        for (k, chunk) in data.chunks(LOAD_WORDS).enumerate() {
            let at = addr + (k * LOAD_WORDS) as u32;
            let n = chunk.len();
            let saved = self.host.mem[..n].to_vec();
            self.host.mem[..n].copy_from_slice(chunk);
            let program = [
                load_shape(ShapeEntry {
                    a: 8,
                    b: n as u16,
                    c: 1,
                }),
                Instr::Memcpy(Memcpy {
                    from_device: true,
                    to_device: false,
                    dest_addr: at,
                    src_addr: 0,
                    aux_addr: 0,
                    shape_ptr_addr: LOAD_SHAPE,
                    async_: false,
                }),
            ];
            self.run_harness_program(&program)?;
            self.host.mem[..n].copy_from_slice(&saved);
        }
        self.run_harness_program(&[load_shape(ShapeEntry::default())])?;
        self.events.clear();
        Ok(())
    }

    /// Sets a shape-table entry through the DUT's own MEMSET, for a DUT
    /// with no back door.
    pub(super) fn set_entry_front_door(
        &mut self,
        table: ShapeTable,
        index: u8,
        entry: ShapeEntry,
    ) -> Result<(), ModelError> {
        let memset = Instr::Memset(Memset {
            dest_cache: table,
            dest_addr: index,
            a_value: entry.a,
            b_value: entry.b,
            c_value: entry.c,
            reserved: 0,
        });
        self.run_harness_program(&[memset])?;
        self.events.clear();
        Ok(())
    }

    /// Issues the harness's own instructions and drains; they count in
    /// `front_door_retired`, not as the program's.
    fn run_harness_program(&mut self, program: &[Instr]) -> Result<(), ModelError> {
        let start = self.cycle;
        for instr in program {
            let (a, b) = self.issue_word(instr.encode())?;
            self.front_door_retired += 1;
            if a != AxiResp::Okay || b != AxiResp::Okay {
                return Err(ModelError::Backdoor(format!(
                    "{}: the DUT answered {a:?}, {b:?} to the harness's own `{instr:?}`",
                    self.config.name
                )));
            }
        }
        self.drain_by_polling()?;
        self.front_door_cycles += self.cycle - start;
        Ok(())
    }
}

/// MEMSET of the fmap entry the loads use.
fn load_shape(entry: ShapeEntry) -> Instr {
    Instr::Memset(Memset {
        dest_cache: ShapeTable::Fmap,
        dest_addr: LOAD_SHAPE,
        a_value: entry.a,
        b_value: entry.b,
        c_value: entry.c,
        reserved: 0,
    })
}
