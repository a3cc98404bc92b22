//! The harness side of the two weight-stream ports: the beats of a
//! [`WeightSource`] offered in order, valid/ready, and a count per consuming
//! instruction (the `ws_seq` sideband says which one took a beat).
//!
//! Ideal I/O offers a beat in every cycle (the timing contract's "weight
//! streams never empty"). Stall I/O withholds `valid` on a seeded schedule,
//! like a DDR-fed FIFO running dry; a beat once offered stays offered until
//! taken, as AXI-Stream requires.

use pccx_golden::streams::WeightSource;

use crate::stimulus::Rng;

/// Chance, in percent, that an idle stream offers nothing in a cycle under
/// stall I/O.
pub const STREAM_EMPTY_PCT: u64 = 35;

pub const NUM_STREAMS: usize = 2;

/// The most beats one instruction can take from one stream: a GEMV or GEMM
/// at the limits reads K <= 16 * 2048 = 32768 beats per 32-column tile, in
/// at most ceil(4096 / 32) = 128 tiles, plus ceil(N/8) <= 512 scale beats
/// (docs/timing.md). A beat past this is not progress: an engine that keeps
/// taking beats without retiring hangs, and the watchdog must see it.
pub const MAX_BEATS_PER_INSTRUCTION: u64 = 32768 * 128 + 512;

pub struct WeightPort {
    source: WeightSource,
    /// Index of the next beat of each stream.
    next: [u64; NUM_STREAMS],
    /// Whether each stream offers a beat in the current cycle.
    offered: [bool; NUM_STREAMS],
    /// Beat `next[s]` of each stream, once computed: it is offered every
    /// cycle until taken, and hashing it anew each cycle is wasted work.
    head: [Option<u128>; NUM_STREAMS],
    stall: Option<(u64, Rng)>,
    /// Beats taken per sequence number and stream since reset, not yet
    /// reported: a few instructions at most are in flight, so a short list
    /// searched from its end (where the instruction of the last beat is)
    /// costs less per beat than hashing.
    taken: Vec<(u32, [u32; NUM_STREAMS])>,
    /// Cycles since reset in which an engine was ready for a beat of each
    /// stream and none was offered (the stream ran dry).
    starved: [u64; NUM_STREAMS],
}

impl WeightPort {
    pub fn new() -> WeightPort {
        WeightPort {
            source: WeightSource::new(0),
            next: [0; NUM_STREAMS],
            offered: [true; NUM_STREAMS],
            head: [None; NUM_STREAMS],
            stall: None,
            taken: Vec::new(),
            starved: [0; NUM_STREAMS],
        }
    }

    pub fn set_source(&mut self, source: WeightSource) {
        self.source = source;
        self.head = [None; NUM_STREAMS];
    }

    /// `Some(seed)`: stall I/O from `seed`; `None`: ideal.
    pub fn set_stalls(&mut self, seed: Option<u64>) {
        self.stall = seed.map(|s| (s, Rng::new(s)));
    }

    /// Back to beat 0 of both streams, and the stall schedule's start.
    pub fn restart(&mut self) {
        self.next = [0; NUM_STREAMS];
        self.head = [None; NUM_STREAMS];
        self.offered = [true; NUM_STREAMS];
        self.taken.clear();
        self.starved = [0; NUM_STREAMS];
        if let Some((seed, rng)) = &mut self.stall {
            *rng = Rng::new(*seed);
        }
    }

    /// Valid and data of `stream` for the coming cycle.
    pub fn offer(&mut self, stream: usize) -> (bool, u128) {
        if let Some((_, rng)) = &mut self.stall {
            // Drawn only while nothing is pending: an offered beat stays.
            if !self.offered[stream] {
                self.offered[stream] = rng.below(100) >= STREAM_EMPTY_PCT;
            }
        }
        let beat = match self.head[stream] {
            Some(beat) => beat,
            None => {
                let beat = self.source.beat(stream, self.next[stream]);
                self.head[stream] = Some(beat);
                beat
            }
        };
        (self.offered[stream], beat)
    }

    /// A beat of `stream` moved at this edge, taken by instruction `seq`.
    /// Returns how many beats of this stream instruction `seq` has taken so
    /// far, this one included.
    pub fn taken(&mut self, stream: usize, seq: u32) -> u64 {
        self.next[stream] += 1;
        self.head[stream] = None;
        let at = match self.taken.iter().rposition(|(s, _)| *s == seq) {
            Some(at) => at,
            None => {
                self.taken.push((seq, [0; NUM_STREAMS]));
                self.taken.len() - 1
            }
        };
        let count = &mut self.taken[at].1[stream];
        *count += 1;
        let count = *count;
        if self.stall.is_some() {
            self.offered[stream] = false;
        }
        u64::from(count)
    }

    /// For a port of [`super::weight_lanes`], each its own AXI-Stream: under
    /// stall I/O, whether a port that offers nothing offers its piece from
    /// the coming cycle on (one draw of the schedule); always under ideal.
    pub fn draw_offer(&mut self) -> bool {
        match &mut self.stall {
            Some((_, rng)) => rng.below(100) >= STREAM_EMPTY_PCT,
            None => true,
        }
    }

    pub fn stalls(&self) -> bool {
        self.stall.is_some()
    }

    /// Beat `index` of `stream`.
    pub fn beat_at(&self, stream: usize, index: u64) -> u128 {
        self.source.beat(stream, index)
    }

    /// The beats of `stream` consumed so far, counted by the lanes.
    pub fn set_consumed(&mut self, stream: usize, beats: u64) {
        self.next[stream] = beats;
    }

    /// The engine on `stream` was ready in a cycle when no beat was offered.
    pub fn starved(&mut self, stream: usize) {
        self.starved[stream] += 1;
    }

    /// Cycles since reset in which each stream left a ready engine waiting.
    pub fn starved_cycles(&self) -> [u64; NUM_STREAMS] {
        self.starved
    }

    /// Beats consumed from each stream since reset.
    pub fn consumed(&self) -> [u64; NUM_STREAMS] {
        self.next
    }

    /// Takes the count of beats instruction `seq` consumed, per stream.
    pub fn take_counts(&mut self, seq: u32) -> Vec<(usize, u32)> {
        let Some(at) = self.taken.iter().position(|(s, _)| *s == seq) else {
            return Vec::new();
        };
        let (_, counts) = self.taken.remove(at);
        (0..NUM_STREAMS)
            .filter(|&s| counts[s] > 0)
            .map(|s| (s, counts[s]))
            .collect()
    }
}

impl Default for WeightPort {
    fn default() -> Self {
        WeightPort::new()
    }
}
