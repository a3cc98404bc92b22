//! The harness side of the ACP port: host memory and the responder that
//! serves the RTL's requests, one response per request, in order.
//!
//! Two kinds of I/O timing (docs/timing.md): *ideal*, a fixed latency and a
//! request channel that is always ready, under which retire cycles are
//! predicted exactly; and *stall*, where a seeded schedule withholds
//! `req_ready` and adds random extra latency, under which results must stay
//! exact and the retire order must obey the ordering rules.

use std::collections::VecDeque;

use pccx_golden::model::{Word, HOST_WORDS};

use crate::config::IDEAL_HOST_LATENCY;
use crate::stimulus::Rng;

/// A seeded schedule of host-side stalls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallSchedule {
    pub seed: u64,
    /// Chance, in percent, that the request channel is not ready in a cycle.
    pub not_ready_pct: u32,
    /// Largest extra latency added to a response, in cycles.
    pub max_extra_latency: u32,
}

/// When the responder accepts requests and how long responses take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTiming {
    /// Cycles from an accepted request to its response being offered (>= 1).
    pub latency: u32,
    /// `None`: ideal I/O.
    pub stall: Option<StallSchedule>,
}

impl Default for HostTiming {
    fn default() -> Self {
        HostTiming {
            latency: IDEAL_HOST_LATENCY,
            stall: None,
        }
    }
}

impl HostTiming {
    /// Stall-mode I/O from `seed` (its own stream, independent of the program).
    pub fn stalled(seed: u64) -> HostTiming {
        HostTiming {
            latency: IDEAL_HOST_LATENCY,
            stall: Some(StallSchedule {
                seed,
                not_ready_pct: 30,
                max_extra_latency: 12,
            }),
        }
    }
}

pub struct HostPort {
    pub mem: Vec<Word>,
    timing: HostTiming,
    rng: Rng,
    /// Cycles left of a long stall of the request channel.
    busy_for: u64,
    /// (cycle from which the response may be offered, read data)
    pending: VecDeque<(u64, Word)>,
}

impl HostPort {
    pub fn new(timing: HostTiming) -> Self {
        let mut port = HostPort {
            mem: vec![0; HOST_WORDS as usize],
            timing,
            rng: Rng::new(0),
            busy_for: 0,
            pending: VecDeque::new(),
        };
        port.restart();
        port
    }

    pub fn timing(&self) -> HostTiming {
        self.timing
    }

    pub fn set_timing(&mut self, timing: HostTiming) {
        self.timing = timing;
        self.restart();
    }

    /// Drops pending responses and restarts the stall schedule (at reset).
    pub fn restart(&mut self) {
        self.pending.clear();
        self.busy_for = 0;
        self.rng = Rng::new(self.timing.stall.map_or(0, |s| s.seed));
    }

    /// Whether the request channel is ready in this cycle (drawn once per
    /// cycle, in cycle order, so the schedule is a function of the seed).
    ///
    /// Besides single cycles, one cycle in a hundred begins a long stall of
    /// 4 to 11 cycles: an engine that must wait out several cycles without
    /// a request taken (a copy that retires on the responses it has, not
    /// on the words it asked for) shows only then.
    pub fn request_ready(&mut self) -> bool {
        match self.timing.stall {
            None => true,
            Some(_) if self.busy_for > 0 => {
                self.busy_for -= 1;
                false
            }
            Some(s) => {
                if self.rng.percent(1) {
                    self.busy_for = 3 + self.rng.below(8);
                    return false;
                }
                !self.rng.percent(s.not_ready_pct)
            }
        }
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
        let extra = match self.timing.stall {
            None => 0,
            Some(s) => self.rng.below(u64::from(s.max_extra_latency) + 1),
        };
        let due = cycle + u64::from(self.timing.latency.max(1)) + extra;
        // Responses stay in order.
        let due = self.pending.back().map_or(due, |(last, _)| due.max(*last));
        self.pending.push_back((due, read));
    }
}
