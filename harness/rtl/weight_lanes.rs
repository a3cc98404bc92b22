//! The adapter from the two weight streams to a DUT's own weight ports: N ports of 32, 64 or 128 bits, each carrying pieces of one stream.
//!
//! A stream's 128-bit beat `b` is cut into `q = 128 / bits` pieces, lowest
//! bits first; its pieces, numbered `j = b * q + part`, are dealt to the
//! stream's `k` ports in turn, in port order: its port of rank `r` carries
//! pieces `r, r + k, r + 2k, ...`, one after another (docs/dut-contract.md,
//! "Adapters"). Each port is an AXI-Stream of its own: a piece once offered
//! stays offered until taken; under stalled I/O each port runs dry on the
//! streams' seeded schedule. A beat counts as consumed when all its
//! pieces are taken; a program that ends with part of a beat taken is the
//! DUT's protocol error (`partial`).
//!
//! pccx_top's two 128-bit ports, one per stream, are this with `q = 1` and
//! `k = 1`; the RTL model keeps its direct path for them (with the
//! `ws_seq` tap of the full level) and uses this for every other shape.

use super::weight_port::{WeightPort, NUM_STREAMS};

pub struct WeightLanes {
    bits: u32,
    /// Pieces per 128-bit beat.
    pieces: u64,
    /// Per port: the stream it carries.
    stream_of: Vec<usize>,
    /// Per port: its rank among its stream's ports.
    rank: Vec<u64>,
    /// Per stream: how many ports carry it.
    ports_of: [u64; NUM_STREAMS],
    /// Per port: the piece it offers next.
    next_piece: Vec<u64>,
    /// Per port: whether it offers that piece in the coming cycle.
    showing: Vec<bool>,
    /// Per port: the beat its next piece is cut from, once computed.
    head: Vec<Option<u128>>,
    /// Per stream: pieces taken since reset.
    taken: [u64; NUM_STREAMS],
}

impl WeightLanes {
    /// `bits` per port; bit p of `gemv_ports` set: port p carries GEMV's
    /// stream (1), else GEMM's (0). The manifest checked both
    /// (harness/rtl/dut.rs, `Weights`).
    pub fn new(ports: usize, bits: u32, gemv_ports: u32) -> WeightLanes {
        let stream_of: Vec<usize> = (0..ports).map(|p| (gemv_ports >> p) as usize & 1).collect();
        let mut ports_of = [0u64; NUM_STREAMS];
        let rank = stream_of
            .iter()
            .map(|&s| {
                ports_of[s] += 1;
                ports_of[s] - 1
            })
            .collect::<Vec<u64>>();
        let mut lanes = WeightLanes {
            bits,
            pieces: u64::from(128 / bits),
            stream_of,
            next_piece: rank.clone(),
            rank,
            ports_of,
            showing: vec![true; ports],
            head: vec![None; ports],
            taken: [0; NUM_STREAMS],
        };
        lanes.restart();
        lanes
    }

    pub fn ports(&self) -> usize {
        self.stream_of.len()
    }

    /// The stream port `port` carries.
    pub fn stream_of(&self, port: usize) -> usize {
        self.stream_of[port]
    }

    /// Back to piece 0 of both streams (at reset).
    pub fn restart(&mut self) {
        self.next_piece.clone_from(&self.rank);
        self.showing.fill(true);
        self.head.fill(None);
        self.taken = [0; NUM_STREAMS];
    }

    /// Valid and data (the piece in the low bits) of `port` for the
    /// coming cycle.
    pub fn offer(&mut self, port: usize, weights: &mut WeightPort) -> (bool, u128) {
        if !self.showing[port] {
            self.showing[port] = weights.draw_offer();
        }
        let stream = self.stream_of[port];
        let piece = self.next_piece[port];
        let beat = match self.head[port] {
            Some(beat) => beat,
            None => {
                let beat = weights.beat_at(stream, piece / self.pieces);
                self.head[port] = Some(beat);
                beat
            }
        };
        let shift = (piece % self.pieces) as u32 * self.bits;
        let mask = if self.bits == 128 {
            u128::MAX
        } else {
            (1u128 << self.bits) - 1
        };
        (self.showing[port], (beat >> shift) & mask)
    }

    /// `port`'s piece moved at this edge. The beats of its stream that all
    /// pieces of are now taken go to `weights`' count.
    pub fn taken(&mut self, port: usize, weights: &mut WeightPort) {
        let stream = self.stream_of[port];
        let k = self.ports_of[stream];
        let before = self.next_piece[port] / self.pieces;
        self.next_piece[port] += k;
        if self.next_piece[port] / self.pieces != before {
            self.head[port] = None;
        }
        self.taken[stream] += 1;
        if weights.stalls() {
            self.showing[port] = false;
        }
        weights.set_consumed(stream, self.complete_beats(stream));
    }

    /// Beats of `stream` every piece of which is taken: the pieces are
    /// taken in order on each port, so piece j is taken when the port
    /// that carries it is past it.
    fn complete_beats(&self, stream: usize) -> u64 {
        let first_missing = (0..self.ports())
            .filter(|&p| self.stream_of[p] == stream)
            .map(|p| self.next_piece[p])
            .min()
            .unwrap_or(0);
        first_missing / self.pieces
    }

    /// A stream of which part of a beat is taken, and how many pieces:
    /// at the end of a program, the DUT's fault.
    pub fn partial(&self) -> Option<(usize, u64)> {
        (0..NUM_STREAMS).find_map(|s| {
            let whole = self.complete_beats(s) * self.pieces;
            (self.taken[s] != whole).then_some((s, self.taken[s]))
        })
    }

    pub fn bits(&self) -> u32 {
        self.bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pccx_golden::streams::WeightSource;

    fn port() -> WeightPort {
        let mut w = WeightPort::new();
        w.set_source(WeightSource::new(7));
        w
    }

    #[test]
    fn pieces_are_dealt_lowest_first_in_port_order() {
        // Four 64-bit ports: GEMM on 0 and 2, GEMV on 1 and 3.
        let mut w = port();
        let source = WeightSource::new(7);
        let mut lanes = WeightLanes::new(4, 64, 0b1010);
        let mask = (1u128 << 64) - 1;
        for b in 0..3u64 {
            let beat = source.beat(0, b);
            // GEMM's beat b: its low half on port 0, its high half on port 2.
            assert_eq!(lanes.offer(0, &mut w), (true, beat & mask));
            assert_eq!(lanes.offer(2, &mut w), (true, beat >> 64));
            lanes.taken(0, &mut w);
            assert_eq!(w.consumed()[0], b, "half a beat is not a beat");
            lanes.taken(2, &mut w);
            assert_eq!(w.consumed()[0], b + 1);
        }
        let gemv = source.beat(1, 0);
        assert_eq!(lanes.offer(1, &mut w), (true, gemv & mask));
        assert_eq!(lanes.offer(3, &mut w), (true, gemv >> 64));
        assert_eq!(lanes.partial(), None);
        lanes.taken(3, &mut w);
        assert_eq!(lanes.partial(), Some((1, 1)));
        assert_eq!(w.consumed(), [3, 0]);
    }

    #[test]
    fn whole_beats_alternate_between_a_stream_s_ports() {
        // Four 128-bit ports, two per stream: beat 2i on the first, 2i+1 on
        // the second, taken in any order.
        let mut w = port();
        let source = WeightSource::new(7);
        let mut lanes = WeightLanes::new(4, 128, 0b1100);
        assert_eq!(lanes.offer(0, &mut w).1, source.beat(0, 0));
        assert_eq!(lanes.offer(1, &mut w).1, source.beat(0, 1));
        lanes.taken(1, &mut w);
        assert_eq!(w.consumed()[0], 0, "beat 1 before beat 0 completes nothing");
        assert_eq!(lanes.offer(1, &mut w).1, source.beat(0, 3));
        lanes.taken(0, &mut w);
        assert_eq!(w.consumed()[0], 2);
        assert_eq!(lanes.offer(2, &mut w).1, source.beat(1, 0));
        assert_eq!(lanes.offer(3, &mut w).1, source.beat(1, 1));
    }

    #[test]
    fn a_stalled_port_keeps_its_piece_until_taken() {
        // The engine takes an offered piece only at its second cycle: the
        // piece must still be offered, unchanged, then; and the port runs
        // dry now and then in between.
        let mut w = port();
        w.set_stalls(Some(3));
        w.restart();
        let source = WeightSource::new(7);
        let mut lanes = WeightLanes::new(2, 32, 0b10);
        let (mut dry, mut held, mut next) = (0, None, 0u64);
        for _ in 0..400 {
            let (valid, piece) = lanes.offer(0, &mut w);
            let expected = (source.beat(0, next / 4) >> (32 * (next % 4))) & 0xFFFF_FFFF;
            match (valid, held) {
                (false, None) => dry += 1,
                (false, Some(_)) => panic!("an offered piece was withdrawn"),
                (true, None) => {
                    assert_eq!(piece, expected);
                    held = Some(piece);
                }
                (true, Some(p)) => {
                    assert_eq!(piece, p, "an offered piece changed before it was taken");
                    lanes.taken(0, &mut w);
                    (held, next) = (None, next + 1);
                }
            }
        }
        assert!(
            dry > 0 && next > 50,
            "dry {dry} cycles, {next} pieces taken"
        );
        assert_eq!(w.consumed()[0], next / 4);
    }
}
