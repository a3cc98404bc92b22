//! The timing checks of the scoreboard (docs/timing.md): exact cycles and
//! the status register over time under ideal I/O, the retire order under
//! stall I/O. They run only once everything functional has matched.

use super::{status_fields, CheckKind, Difference, Finding, OrderReason, Record, TimedEvent};
use pccx_golden::footprint::{conflicts, footprint, Footprint};
use pccx_golden::isa::{self, Decoded, Instr};
use pccx_golden::model::{ShapeEntry, ShapeTable};
use pccx_golden::{Engine, Tables};

/// A timing difference and the instruction it is placed at.
pub(super) type Found = (Option<u32>, Finding);

/// (latch, start, retire) cycles of one instruction on each side.
pub(super) struct Cycles {
    reference: [Option<u64>; 3],
    dut: [Option<u64>; 3],
}

impl Cycles {
    pub fn of(r: &Record, d: &Record) -> Cycles {
        let side = |x: &Record| {
            [
                x.latch_cycles.first().copied().flatten(),
                x.start,
                x.retire_cycle(),
            ]
        };
        Cycles {
            reference: side(r),
            dut: side(d),
        }
    }
}

fn text(c: &[Option<u64>; 3]) -> String {
    TimedEvent::ALL
        .iter()
        .zip(c)
        .map(|(f, v)| match v {
            Some(v) => format!("{} {v}", f.name()),
            None => format!("{} -", f.name()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Exact mode: every predicted cycle must be the DUT's. Reported: the
/// instruction whose divergence happens earliest in time (the cause; later
/// ones usually follow from it), with the count of all that differ.
pub(super) fn exact(cycles: &[Cycles]) -> Option<Found> {
    // (cycle of the earliest differing event, seq, field)
    let mut first: Option<(u64, usize, usize)> = None;
    let mut differing = 0;
    for (seq, c) in cycles.iter().enumerate() {
        let mut differs = false;
        for f in 0..3 {
            // An untimed reference predicts nothing.
            let Some(predicted) = c.reference[f] else {
                continue;
            };
            if c.dut[f] != Some(predicted) {
                differs = true;
                let when = c.dut[f].map_or(predicted, |a| a.min(predicted));
                if first.is_none_or(|(w, _, _)| when < w) {
                    first = Some((when, seq, f));
                }
            }
        }
        differing += usize::from(differs);
    }
    let (_, seq, f) = first?;
    let c = &cycles[seq];
    Some((
        Some(seq as u32),
        Finding::new(
            CheckKind::Timing,
            Difference::TimingCycle {
                event: TimedEvent::ALL[f],
                predicted: c.reference[f],
                actual: c.dut[f],
                differing,
            },
            format!("predicted {}", text(&c.reference)),
            format!("actual    {}", text(&c.dut)),
        ),
    ))
}

fn value_at(timeline: &[(u64, u32)], cycle: u64) -> u32 {
    timeline
        .iter()
        .take_while(|(c, _)| *c <= cycle)
        .last()
        .map_or(0, |&(_, v)| v)
}

/// Exact mode: the status register in every cycle.
pub(super) fn status(
    predicted: Option<&[(u64, u32)]>,
    actual: Option<&[(u64, u32)]>,
) -> Option<Found> {
    let (p, a) = (predicted?, actual?);
    let mut cycles: Vec<u64> = p.iter().chain(a).map(|&(c, _)| c).collect();
    cycles.sort_unstable();
    cycles.dedup();
    let cycle = cycles
        .into_iter()
        .find(|&c| value_at(p, c) != value_at(a, c))?;
    let (pv, av) = (value_at(p, cycle), value_at(a, cycle));
    Some((
        None,
        Finding::new(
            CheckKind::StatusTimeline,
            Difference::StatusTimeline {
                cycle,
                predicted: pv,
                actual: av,
            },
            format!("predicted 0x{pv:08x} {}", status_fields(pv)),
            format!("actual    0x{av:08x} {}", status_fields(av)),
        ),
    ))
}

/// Order mode: an instruction retires strictly after every older one it
/// must wait for: conflicting footprints, a barrier on either side, or the
/// same engine (one FIFO, in order). Footprints are taken with the tables
/// as the reference's shape-table writes left them in program order.
pub(super) fn order(
    words: &[u64],
    shape_writes: &[Vec<(ShapeTable, u8, ShapeEntry)>],
    cycles: &[Cycles],
) -> Option<Found> {
    let mut tables = Tables::default();
    let mut legal: Vec<(usize, Instr, Footprint)> = Vec::new();
    for (seq, &word) in words.iter().enumerate() {
        if let Decoded::Legal(instr) = isa::decode(word) {
            let fp = footprint(&instr, &tables);
            legal.push((seq, instr, fp));
        }
        for &(table, index, entry) in &shape_writes[seq] {
            tables.set(table, index, entry);
        }
    }
    for (n, (seq_n, instr_n, fp_n)) in legal.iter().enumerate() {
        let retire_n = cycles[*seq_n].dut[2]?;
        for (seq_x, instr_x, fp_x) in &legal[..n] {
            let reason = if Engine::of_instr(instr_x) == Engine::of_instr(instr_n) {
                OrderReason::SameEngine
            } else if fp_x.barrier {
                OrderReason::OlderBarrier
            } else if fp_n.barrier {
                OrderReason::IsBarrier
            } else if conflicts(fp_x, fp_n) {
                OrderReason::Conflict
            } else {
                continue;
            };
            let retire_x = cycles[*seq_x].dut[2]?;
            if retire_x >= retire_n {
                return Some((
                    Some(*seq_n as u32),
                    Finding::new(
                        CheckKind::RetireOrder,
                        Difference::RetireOrder {
                            seq: *seq_n as u32,
                            cycle: retire_n,
                            older: *seq_x as u32,
                            older_cycle: retire_x,
                            reason,
                        },
                        format!("seq {seq_x} retires before seq {seq_n}"),
                        format!("seq {seq_x} at {retire_x}, seq {seq_n} at {retire_n}"),
                    ),
                ));
            }
        }
    }
    None
}
