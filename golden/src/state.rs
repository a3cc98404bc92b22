//! Architectural state (docs/semantics.md section 1) and the only ways the
//! instruction handlers change it: every front-door write goes through a
//! helper here that also records its event, so no handler can change state
//! without the scoreboard seeing it.

use crate::model::{ErrorCode, Event, ShapeEntry, ShapeTable, Word, HOST_WORDS};
use crate::streams::{WeightSource, STREAMS};
use crate::tables::Tables;

#[derive(Clone, Debug)]
pub struct State {
    l2: Vec<Word>,
    host: Vec<Word>,
    pub tables: Tables,
    pub e_max: u16,
    /// What the weight streams deliver in this run.
    weights: WeightSource,
    /// Beats taken from each stream since reset.
    consumed: [u64; STREAMS],
    events: Vec<Event>,
}

/// Whether `[base, base + len)` lies inside a memory of `size` words.
pub(crate) fn in_range(base: u64, len: u64, size: usize) -> bool {
    base.checked_add(len).is_some_and(|end| end <= size as u64)
}

impl State {
    pub fn new(l2_words: u32) -> State {
        State {
            l2: vec![0; l2_words as usize],
            host: vec![0; HOST_WORDS as usize],
            tables: Tables::default(),
            e_max: 0,
            weights: WeightSource::default(),
            consumed: [0; STREAMS],
            events: Vec::new(),
        }
    }

    /// Architectural reset: memories keep their contents, events go, the
    /// weight streams restart with `weights`.
    pub fn reset(&mut self, weights: WeightSource) {
        self.tables = Tables::default();
        self.e_max = 0;
        self.weights = weights;
        self.consumed = [0; STREAMS];
        self.events.clear();
    }

    /// Beats taken from each weight stream since reset.
    pub fn beats_consumed(&self) -> [u64; STREAMS] {
        self.consumed
    }

    /// `count` beats of `stream` from `skip` beats past the next one,
    /// without taking them.
    pub fn peek_beats(&self, stream: usize, skip: u64, count: u64) -> Vec<Word> {
        self.weights
            .beats(stream, self.consumed[stream] + skip, count)
    }

    /// Takes the next `count` beats from `stream` (the ones `peek_beats`
    /// showed) and records the read, when there is one.
    pub fn take_beats(&mut self, seq: u32, stream: usize, count: u32) {
        if count == 0 {
            return;
        }
        self.consumed[stream] += u64::from(count);
        self.record(Event::StreamRead {
            seq,
            stream: stream as u8,
            beats: count,
        });
    }

    pub fn l2_words(&self) -> u32 {
        self.l2.len() as u32
    }

    pub fn l2(&self) -> &[Word] {
        &self.l2
    }

    pub fn host(&self) -> &[Word] {
        &self.host
    }

    /// Backdoor access: no events.
    pub fn l2_mut(&mut self) -> &mut [Word] {
        &mut self.l2
    }

    /// Backdoor access: no events.
    pub fn host_mut(&mut self) -> &mut [Word] {
        &mut self.host
    }

    pub fn record(&mut self, event: Event) {
        self.events.push(event);
    }

    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// `L2_RANGE` unless `[base, base + len)` is inside L2. An empty range
    /// is always in range (docs/semantics.md section 5).
    pub fn check_l2(&self, base: u64, len: u64) -> Result<(), ErrorCode> {
        if len == 0 || in_range(base, len, self.l2.len()) {
            Ok(())
        } else {
            Err(ErrorCode::L2Range)
        }
    }

    /// `HOST_RANGE` unless `[base, base + len)` is inside host memory.
    pub fn check_host(&self, base: u64, len: u64) -> Result<(), ErrorCode> {
        if len == 0 || in_range(base, len, self.host.len()) {
            Ok(())
        } else {
            Err(ErrorCode::HostRange)
        }
    }

    /// Reads checked words; the caller ran `check_l2` first.
    pub fn read_l2(&self, base: u64, len: u64) -> Vec<Word> {
        if len == 0 {
            return Vec::new(); // in range whatever the base
        }
        self.l2[base as usize..(base + len) as usize].to_vec()
    }

    /// Reads checked words; the caller ran `check_host` first.
    pub fn read_host(&self, base: u64, len: u64) -> Vec<Word> {
        if len == 0 {
            return Vec::new(); // in range whatever the base
        }
        self.host[base as usize..(base + len) as usize].to_vec()
    }

    /// Writes the BF16 elements of `data` selected by `mask` (bit i =
    /// element i) into a checked L2 word, and records the write.
    pub fn write_l2(&mut self, seq: u32, addr: u64, data: Word, mask: u8) {
        let keep = (0..8)
            .filter(|i| mask & (1 << i) == 0)
            .fold(0u128, |acc, i| acc | 0xFFFF << (16 * i));
        let slot = &mut self.l2[addr as usize];
        *slot = (*slot & keep) | (data & !keep);
        self.record(Event::L2Write {
            seq,
            addr: addr as u32,
            data,
            mask,
        });
    }

    /// Writes a checked host word and records the write.
    pub fn write_host(&mut self, seq: u32, addr: u64, data: Word) {
        self.host[addr as usize] = data;
        self.record(Event::HostWrite {
            seq,
            addr: addr as u32,
            data,
        });
    }

    pub fn write_table(&mut self, seq: u32, table: ShapeTable, index: u8, entry: ShapeEntry) {
        self.tables.set(table, index, entry);
        self.record(Event::ShapeWrite {
            seq,
            table,
            index,
            entry,
        });
    }

    pub fn write_e_max(&mut self, seq: u32, value: u16) {
        self.e_max = value;
        self.record(Event::EMaxWrite { seq, value });
    }
}
