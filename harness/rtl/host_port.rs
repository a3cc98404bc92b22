//! The harness side of the ACP port: host memory and the responder that
//! serves the RTL's requests, one response per request, in order.

use std::collections::VecDeque;

use pccx_golden::model::{Word, HOST_WORDS};

/// When the responder accepts requests and how long responses take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTiming {
    /// Cycles from an accepted request to its response being offered (>= 1).
    pub latency: u32,
}

impl Default for HostTiming {
    fn default() -> Self {
        HostTiming { latency: 4 }
    }
}

pub struct HostPort {
    pub mem: Vec<Word>,
    pub timing: HostTiming,
    /// (cycle from which the response may be offered, read data)
    pending: VecDeque<(u64, Word)>,
}

impl HostPort {
    pub fn new(timing: HostTiming) -> Self {
        HostPort {
            mem: vec![0; HOST_WORDS as usize],
            timing,
            pending: VecDeque::new(),
        }
    }

    pub fn clear_pending(&mut self) {
        self.pending.clear();
    }

    /// The response to offer in `cycle`, if one is due.
    pub fn response(&self, cycle: u64) -> Option<Word> {
        self.pending
            .front()
            .filter(|(due, _)| *due <= cycle)
            .map(|(_, d)| *d)
    }

    /// The RTL took the offered response.
    pub fn response_taken(&mut self) {
        self.pending.pop_front();
    }

    /// A request accepted at the edge ending `cycle`. Writes land at once (the
    /// RTL waits for their response before it retires the instruction).
    pub fn request(&mut self, cycle: u64, write: bool, addr: u32, data: Word) {
        let slot = &mut self.mem[addr as usize % HOST_WORDS as usize];
        let read = if write {
            *slot = data;
            0
        } else {
            *slot
        };
        self.pending
            .push_back((cycle + u64::from(self.timing.latency.max(1)), read));
    }
}
