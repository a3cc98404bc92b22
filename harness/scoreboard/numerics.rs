//! The value hand-off (docs/dut-contract.md, "Numerics profiles"): for a
//! DUT that declares a numerics profile, the reference runs behind the DUT.
//! Each item goes to the DUT at once and to the reference from a queue;
//! after a CVO whose function the profile bounds, the queue waits until the
//! DUT has retired it. Then every element of its L2 writes within the bound
//! is handed to the reference (its record and its L2), the instruction is
//! compared as usual, and the reference goes on. The golden model executes
//! an instruction completely when it is latched, so what it executes next
//! reads the DUT's values, as Ibex's co-simulation hands Spike the values
//! it cannot predict.

use super::*;
use pccx_golden::numerics::bf16::Bf16;
use pccx_golden::numerics::profile::NumericsProfile;
use std::collections::VecDeque;

/// An item the DUT has done and the reference has not, with the DUT's
/// answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lagged {
    item: Item,
    answer: DutAnswer,
}

/// What the DUT answered to an item.
#[derive(Clone, Copy, Debug)]
enum DutAnswer {
    /// An instruction's two responses, and its sequence number.
    Issue(u32, (AxiResp, AxiResp)),
    /// A `.write` item's response, issued before instruction `before_seq`.
    Write(u32, AxiResp),
    Idle,
}

/// The reference's queue and what it waits for.
#[derive(Debug)]
pub(super) struct HandOff {
    profile: NumericsProfile,
    lag: VecDeque<Lagged>,
    /// The profiled CVO the reference has executed and the DUT has not
    /// retired yet: nothing after it goes to the reference until then.
    awaiting: Option<u32>,
    /// Elements accepted within their bound and handed over.
    pub(super) accepted: u64,
}

impl HandOff {
    pub(super) fn new(profile: NumericsProfile) -> HandOff {
        HandOff {
            profile,
            lag: VecDeque::new(),
            awaiting: None,
            accepted: 0,
        }
    }

    /// Whether the reference is behind the DUT (its deadlines then mean
    /// nothing yet).
    pub(super) fn behind(&self) -> bool {
        self.awaiting.is_some() || !self.lag.is_empty()
    }

    /// The instruction whose comparison waits for its hand-over.
    pub(super) fn awaiting(&self) -> Option<u32> {
        self.awaiting
    }
}

impl<'a> Run<'a> {
    /// [`Run::apply`] with the reference behind: the DUT does `item` now,
    /// the reference when the queue reaches it.
    pub(super) fn apply_handing_off(&mut self, item: &Item) -> Result<(), ModelError> {
        let answer = match *item {
            Item::Instr(word) => {
                let seq = self.issued.len() as u32;
                self.issued.push(word);
                DutAnswer::Issue(seq, self.on_dut(|m| m.issue(word))?)
            }
            Item::Idle(cycles) => {
                self.on_dut(|m| m.idle(cycles))?;
                DutAnswer::Idle
            }
            Item::RegWrite { offset, value } => {
                let before_seq = self.issued.len() as u32;
                DutAnswer::Write(before_seq, self.on_dut(|m| m.reg_write(offset, value))?)
            }
        };
        self.hand_off
            .as_mut()
            .expect("apply_handing_off with a hand-off")
            .lag
            .push_back(Lagged {
                item: *item,
                answer,
            });
        self.settle()
    }

    /// Collects and compares, hands over what the DUT has retired and lets
    /// the reference catch up, until it waits for the DUT or has done
    /// everything the DUT has.
    pub(super) fn settle(&mut self) -> Result<(), ModelError> {
        loop {
            self.ingest_both();
            self.hand_over_retired()?;
            self.compare_ready();
            let Some(h) = &self.hand_off else {
                return Ok(());
            };
            if h.awaiting.is_some() || h.lag.is_empty() {
                return Ok(());
            }
            self.catch_up()?;
        }
    }

    /// After the DUT's drain: everything it will retire has retired, so
    /// the reference runs to the end. A profiled CVO the DUT never retired
    /// (its missing retire is reported) keeps the reference's own values.
    pub(super) fn finish_hand_off(&mut self) -> Result<(), ModelError> {
        self.settle()?;
        if let Some(h) = self.hand_off.as_mut() {
            h.awaiting = None;
        }
        while self.hand_off.as_ref().is_some_and(HandOff::behind) {
            self.catch_up()?;
            self.settle()?;
            if let Some(h) = self.hand_off.as_mut() {
                h.awaiting = None;
            }
        }
        Ok(())
    }

    /// Applies queued items to the reference until it reaches a profiled
    /// CVO (which it executes, then waits) or the end of the queue.
    fn catch_up(&mut self) -> Result<(), ModelError> {
        while let Some(lagged) = self.next_lagged() {
            match (lagged.item, lagged.answer) {
                (Item::Instr(word), DutAnswer::Issue(seq, rb)) => {
                    let ra = call(self.a, |m| m.issue(word))?;
                    self.compare_issue(seq, ra, rb);
                    let h = self.hand_off.as_mut().expect("a hand-off");
                    if h.profile.bound_of_word(word).is_some() {
                        h.awaiting = Some(seq);
                        return Ok(());
                    }
                }
                (Item::Idle(cycles), _) => call(self.a, |m| m.idle(cycles))?,
                (Item::RegWrite { offset, value }, DutAnswer::Write(before_seq, rb)) => {
                    let ra = call(self.a, |m| m.reg_write(offset, value))?;
                    self.compare_write(offset, value, before_seq, ra, rb);
                }
                (item, answer) => unreachable!("{item:?} queued with {answer:?}"),
            }
        }
        Ok(())
    }

    fn next_lagged(&mut self) -> Option<Lagged> {
        let h = self.hand_off.as_mut()?;
        if h.awaiting.is_some() {
            return None;
        }
        h.lag.pop_front()
    }

    /// Once both sides have retired the awaited CVO: every element the DUT
    /// wrote within the profile's bound of the reference's goes into the
    /// reference's record and L2; an element past it stays, and the
    /// comparison reports it.
    fn hand_over_retired(&mut self) -> Result<(), ModelError> {
        let Some(h) = &self.hand_off else {
            return Ok(());
        };
        let Some(seq) = h.awaiting else {
            return Ok(());
        };
        let Some(p) = self.pairs.get(&seq) else {
            return Ok(());
        };
        if !(p.r.retired() && p.d.retired()) {
            return Ok(());
        }
        let (_, bound) = h
            .profile
            .bound_of_word(self.issued[seq as usize])
            .expect("an awaited instruction is a profiled CVO");
        let mut changes = Vec::new();
        for (i, rw) in p.r.l2.iter().enumerate() {
            let Some(dw) =
                p.d.l2
                    .iter()
                    .find(|d| d.addr == rw.addr && d.mask == rw.mask)
            else {
                continue;
            };
            let mut data = rw.data;
            let mut lanes = 0u8;
            for lane in (0..8).filter(|l| rw.mask & (1 << l) != 0) {
                let element = |w: Word| Bf16((w >> (16 * lane)) as u16);
                let (r, d) = (element(rw.data), element(dw.data));
                if r != d && NumericsProfile::accepts(bound, r, d) {
                    data = data & !(0xFFFF << (16 * lane)) | Word::from(d.0) << (16 * lane);
                    lanes |= 1 << lane;
                }
            }
            if lanes != 0 {
                changes.push((i, data, lanes));
            }
        }
        for (i, data, lanes) in changes {
            let addr = self.pairs[&seq].r.l2[i].addr;
            // The reference has executed nothing after this instruction, so
            // its L2 holds this instruction's result in these lanes.
            let mut word = [0 as Word];
            call(self.a, |m| m.read_l2(addr, &mut word))?;
            let lane_bits = element_mask(lanes);
            word[0] = word[0] & !lane_bits | data & lane_bits;
            call(self.a, |m| m.write_l2(addr, &word))?;
            self.pairs.get_mut(&seq).expect("the pair").r.l2[i].data = data;
            if let Some(h) = self.hand_off.as_mut() {
                h.accepted += u64::from(lanes.count_ones());
            }
        }
        if let Some(h) = self.hand_off.as_mut() {
            h.awaiting = None;
        }
        Ok(())
    }
}
