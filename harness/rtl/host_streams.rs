//! The harness side of host memory as two AXI-Stream ports (the manifest's
//! `interface.host: "streams"`, docs/dut-contract.md "Host memory by
//! streams"): the DMA in front of a DUT that takes host words on one stream
//! and sends them on another, with no addresses on either.
//!
//! The host programs that DMA as software would: from the instructions it
//! sends, in program order. Each instruction word the DUT accepts is decoded
//! here; a MEMSET updates a shadow of the fmap shape table, and a MEMCPY
//! that moves host words (golden's `host_transfer`, the contract's length
//! and range rules) queues one transfer: host to L2 on the stream into the
//! DUT, L2 to host on the stream out of it. The MEM engine runs its copies
//! in program order, so the transfer at the head of each queue is the copy
//! the DUT is moving. A DUT that takes or sends a word no transfer asks
//! for, or retires everything with words of a transfer left, breaks this
//! protocol (the RTL's failure, reported with its repro).

use std::collections::VecDeque;

use pccx_golden::exec::memcpy::{host_transfer, HostTransfer};
use pccx_golden::isa::{decode, Decoded, Instr};
use pccx_golden::model::HOST_WORDS;
use pccx_golden::Tables;

use crate::stimulus::Rng;

/// Chance, in percent, that a stream with words to move moves none in a
/// cycle under stalled I/O (the host port's own rate of not-ready cycles).
pub const STREAM_STALL_PCT: u64 = 30;

/// A transfer in flight: the next host word and the words left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    next: u64,
    left: u64,
}

#[derive(Default)]
pub struct HostStreams {
    tables: Tables,
    /// Host to L2 copies, oldest first.
    into_dut: VecDeque<Pending>,
    /// L2 to host copies, oldest first.
    out_of_dut: VecDeque<Pending>,
    /// Whether the word offered into the DUT stays offered (a word once
    /// offered stays until taken, as AXI-Stream requires).
    offering: bool,
    stall: Option<(u64, Rng)>,
}

impl HostStreams {
    pub fn new() -> HostStreams {
        HostStreams::default()
    }

    /// `Some(seed)`: stalled I/O from `seed`; `None`: ideal.
    pub fn set_stalls(&mut self, seed: Option<u64>) {
        self.stall = seed.map(|s| (s, Rng::new(s)));
    }

    /// At reset: the shape table back to zero (its reset value), no
    /// transfer, the stall schedule from its start.
    pub fn restart(&mut self) {
        self.tables = Tables::default();
        self.into_dut.clear();
        self.out_of_dut.clear();
        self.offering = false;
        if let Some((seed, rng)) = &mut self.stall {
            *rng = Rng::new(*seed);
        }
    }

    /// The DUT accepted instruction `word` (program order), on an L2 of
    /// `l2_words`.
    pub fn accepted(&mut self, word: u64, l2_words: u32) {
        match decode(word) {
            Decoded::Legal(Instr::Memset(m)) => {
                self.tables.set(m.dest_cache, m.dest_addr, m.entry())
            }
            Decoded::Legal(Instr::Memcpy(m)) => {
                if let Some(HostTransfer {
                    to_host,
                    host_addr,
                    words,
                }) = host_transfer(&m, &self.tables, l2_words)
                {
                    let queue = if to_host {
                        &mut self.out_of_dut
                    } else {
                        &mut self.into_dut
                    };
                    queue.push_back(Pending {
                        next: host_addr,
                        left: words,
                    });
                }
            }
            _ => {}
        }
    }

    /// One draw of the stall schedule: whether a stream moves in this cycle.
    fn moves(&mut self) -> bool {
        match &mut self.stall {
            Some((_, rng)) => rng.below(100) >= STREAM_STALL_PCT,
            None => true,
        }
    }

    /// Valid, and the host address whose word to offer, on the stream into
    /// the DUT for the coming cycle.
    pub fn offer_into(&mut self) -> Option<u64> {
        let head = self.into_dut.front().copied()?;
        if !self.offering {
            self.offering = self.moves();
        }
        self.offering.then_some(head.next)
    }

    /// Ready of the stream out of the DUT for the coming cycle.
    pub fn ready_out(&mut self) -> bool {
        !self.out_of_dut.is_empty() && self.moves()
    }

    /// The DUT took the word offered into it.
    pub fn taken_into(&mut self) {
        self.offering = false;
        Self::advance(&mut self.into_dut);
    }

    /// The DUT sent a word while ready was high: the host address it goes
    /// to.
    pub fn sent_out(&mut self) -> u64 {
        let addr = self.out_of_dut.front().map_or(0, |p| p.next);
        Self::advance(&mut self.out_of_dut);
        addr % u64::from(HOST_WORDS)
    }

    fn advance(queue: &mut VecDeque<Pending>) {
        if let Some(head) = queue.front_mut() {
            head.next += 1;
            head.left -= 1;
            if head.left == 0 {
                queue.pop_front();
            }
        }
    }

    /// Words of the programmed transfers not moved yet: (into the DUT, out
    /// of it).
    pub fn words_left(&self) -> (u64, u64) {
        let sum = |q: &VecDeque<Pending>| q.iter().map(|p| p.left).sum();
        (sum(&self.into_dut), sum(&self.out_of_dut))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pccx_golden::isa::{Memcpy, Memset};
    use pccx_golden::model::ShapeTable;

    fn memset(entry: u8, a: u16) -> u64 {
        Instr::Memset(Memset {
            dest_cache: ShapeTable::Fmap,
            dest_addr: entry,
            a_value: a,
            b_value: 1,
            c_value: 1,
            reserved: 0,
        })
        .encode()
    }

    fn memcpy(from_host: bool, to_host: bool, dest: u32, src: u32, entry: u8) -> u64 {
        Instr::Memcpy(Memcpy {
            from_device: from_host,
            to_device: to_host,
            dest_addr: dest,
            src_addr: src,
            aux_addr: 0,
            shape_ptr_addr: entry,
            async_: false,
        })
        .encode()
    }

    #[test]
    fn copies_are_programmed_in_order_from_the_shadow_table_and_moved_word_by_word() {
        let mut s = HostStreams::new();
        assert_eq!(s.offer_into(), None);
        assert!(!s.ready_out());
        // Entry 3: 16 elements, two words; entry 4 never set: zero words.
        s.accepted(memset(3, 16), 4096);
        s.accepted(memcpy(true, false, 0, 500, 3), 4096);
        s.accepted(memcpy(true, false, 0, 900, 4), 4096);
        s.accepted(memcpy(false, true, 70, 0, 3), 4096);
        s.accepted(memcpy(false, false, 70, 0, 3), 4096);
        // A copy past L2's end moves nothing.
        s.accepted(memcpy(true, false, 4095, 0, 3), 4096);
        assert_eq!(s.words_left(), (2, 2));
        assert_eq!(s.offer_into(), Some(500));
        s.taken_into();
        assert_eq!(s.offer_into(), Some(501));
        s.taken_into();
        assert_eq!(s.offer_into(), None);
        assert!(s.ready_out());
        assert_eq!(s.sent_out(), 70);
        assert_eq!(s.sent_out(), 71);
        assert!(!s.ready_out());
        assert_eq!(s.words_left(), (0, 0));
        // A MEMSET after a copy does not change it; a reset forgets all.
        s.accepted(memcpy(true, false, 0, 8, 3), 4096);
        s.accepted(memset(3, 8), 4096);
        assert_eq!(s.words_left(), (2, 0));
        s.restart();
        assert_eq!(s.words_left(), (0, 0));
        s.accepted(memcpy(true, false, 0, 8, 3), 4096);
        assert_eq!(s.words_left(), (0, 0));
    }

    #[test]
    fn under_stalls_a_word_once_offered_stays_offered_and_some_cycles_move_nothing() {
        // Cycles in which a word was due and none was offered, over the
        // 80 words of ten copies; a word offered and not taken must stay.
        let dry_cycles = |stalls: Option<u64>| {
            let mut s = HostStreams::new();
            s.set_stalls(stalls);
            s.restart();
            s.accepted(memset(1, 64), 4096);
            for k in 0..10 {
                s.accepted(memcpy(true, false, 0, 8 * k, 1), 4096);
            }
            let (mut dry, mut cycle) = (0, 0);
            while s.words_left().0 > 0 {
                cycle += 1;
                match s.offer_into() {
                    None => dry += 1,
                    // Taken every other cycle: the word must be there again.
                    Some(addr) if cycle % 2 == 0 => {
                        assert_eq!(s.offer_into(), Some(addr));
                        s.taken_into();
                    }
                    Some(_) => {}
                }
            }
            dry
        };
        assert_eq!(dry_cycles(None), 0);
        assert!(dry_cycles(Some(7)) > 0);
    }
}
