//! Coverage feedback for a campaign: the coverage-against-programs curve,
//! and, under `--steer`, cases made from what the earlier ones reached
//! (docs/coverage.md, "Steering").
//!
//! A steered campaign runs in batches of [`BATCH`] programs. The cases of
//! batch `b` are made from the coverage of batches `0 .. b` only, merged in
//! case order, so the campaign's programs (and so its report) are the same
//! whatever the number of workers and whichever worker ran what. The first
//! batch takes every bin for a hole; after it, each case is one of:
//!
//! - **aimed at holes**: a fresh program of up to four segments, each from
//!   a generator profile that makes one hole's kind of event frequent (a
//!   bin's typed key says which, never its name: the engine for a flag or
//!   route bin, illegal words for a decoder error, bad shapes for SHAPE,
//!   edge operands for a range error, bursts without gaps for hazards and
//!   full FIFOs), as long as a plain program in all; the distinct profiles
//!   of the holes are taken in turn;
//! - **a mutant of the corpus**: the programs that reached a functional bin
//!   or an RTL point no earlier program had, spliced, with fields edited,
//!   flooded (every FIFO full), or squeezed (no gaps), parents drawn in
//!   proportion to what they found;
//! - **plain**: the generator's own program of the seed, as without `--steer`.
//!
//! A quarter of the steered cases also set shape-table entries and e_max
//! by backdoor before their program, and an eighth run with stalled I/O
//! (unless the campaign fixed a timing mode), checked for order.

use crate::coverage::{
    catalogue, BinKey, CvoFlag, CvoRangeClass, End, Group, HazardKind, MatLimit, Resource,
    ShapeReason,
};
use crate::stimulus::mutate::{self, Mutation};
use crate::stimulus::{GenOptions, OpWeights, Rng, TestCase};
use pccx_golden::asm::{Item, Program};
use pccx_golden::footprint::cvo_range_words;
use pccx_golden::isa::{self, CvoFunc, Decoded, Instr, MemRoute};
use pccx_golden::model::ShapeTable;
use pccx_golden::Engine;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};

/// Programs per batch: the cases of a batch are made from the coverage of
/// the batches before it.
pub const BATCH: u64 = 4;

/// Holes one aimed program goes for, a segment each.
const SEGMENTS: usize = 4;
/// The shortest segment, in instructions.
const MIN_SEGMENT: usize = 10;
/// A profile gets a segment per this many of its holes.
const HOLES_PER_TURN: usize = 2;

/// What one case reached: the functional bins it hit (catalogue indices)
/// and the RTL coverage points whose counters it moved (keys, kind).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaseFeedback {
    pub bins: Vec<usize>,
    pub rtl: Vec<(String, String)>,
}

/// The campaign's coverage after `programs` cases, in case order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    pub programs: u64,
    /// Functional bins hit.
    pub bins: usize,
    /// RTL points hit, per kind (none without RTL coverage).
    pub line: usize,
    pub branch: usize,
    pub toggle: usize,
    /// Programs in the corpus (steered campaigns).
    pub corpus: usize,
}

/// The `format` of a curve file (`--coverage-curve`).
pub const CURVE_FORMAT: &str = "pccx-cosim coverage curve";

/// A curve file: what ran, and the coverage after each program.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurveFile {
    pub format: String,
    pub version: u32,
    pub config: String,
    pub first_seed: u64,
    pub count: u64,
    pub instrs: usize,
    pub steer: bool,
    /// Whether the RTL columns were measured (`--rtl-coverage`).
    pub rtl: bool,
    pub points: Vec<CurvePoint>,
}

impl CurveFile {
    /// Reads a curve file, naming the file and the field at fault.
    pub fn read(path: &std::path::Path) -> Result<CurveFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let file: CurveFile = serde_path_to_error::deserialize(de)
            .map_err(|e| format!("{}: field `{}`: {}", path.display(), e.path(), e.inner()))?;
        if file.format != CURVE_FORMAT {
            return Err(format!(
                "{}: field `format`: `{}`, expected `{CURVE_FORMAT}`",
                path.display(),
                file.format
            ));
        }
        Ok(file)
    }
}

/// How a steered case was made, for the curve's readers and the tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Plain,
    Hole,
    Mutant(Mutation),
}

/// What the cases of one batch are made from.
#[derive(Default)]
struct Snapshot {
    /// The generator profiles of the functional bins never hit, in
    /// catalogue order of their first hole, each with the flag bin its
    /// segment's instructions are pinned to, if any ([`pin`]).
    profiles: Vec<(GenOptions, Option<usize>)>,
    /// The corpus: programs and what each found.
    corpus: Vec<(Arc<Program>, u64)>,
}

impl Snapshot {
    /// Before anything ran: every bin a hole.
    fn first(gen: &GenOptions) -> Snapshot {
        Snapshot::of(gen, 0..catalogue().len(), Vec::new())
    }

    fn of(
        gen: &GenOptions,
        holes: impl Iterator<Item = usize>,
        corpus: Vec<(Arc<Program>, u64)>,
    ) -> Snapshot {
        // Each distinct profile once per HOLES_PER_TURN of its holes (one
        // at least): a profile that many holes share (CVO's functions and
        // flags) gets more segments.
        // A flag bin is a segment of its own, its instructions pinned to
        // the bin's fields; other holes share their profile's segments.
        let mut distinct: Vec<((GenOptions, Option<usize>), usize)> = Vec::new();
        for hole in holes.filter(|&i| catalogue()[i].excluded.is_none()) {
            let p = (profile_for(gen, hole), pins(hole).then_some(hole));
            match distinct.iter_mut().find(|(q, _)| *q == p) {
                Some((_, n)) => *n += 1,
                None => distinct.push((p, 1)),
            }
        }
        let mut profiles = Vec::new();
        let turns = |n: usize| n.div_ceil(HOLES_PER_TURN);
        for turn in 0..distinct.iter().map(|&(_, n)| turns(n)).max().unwrap_or(0) {
            for (p, n) in &distinct {
                if turn < turns(*n) {
                    profiles.push(p.clone());
                }
            }
        }
        Snapshot { profiles, corpus }
    }
}

struct State {
    bin_counts: Vec<u64>,
    rtl_seen: HashSet<String>,
    rtl_kinds: BTreeMap<String, usize>,
    corpus: Vec<(Arc<Program>, u64)>,
    /// Feedback of cases not merged yet, by position.
    pending: BTreeMap<u64, (CaseFeedback, Arc<Program>)>,
    /// Cases merged: every position below this one.
    merged: u64,
    snapshot: Arc<Snapshot>,
    curve: Vec<CurvePoint>,
    abandoned: bool,
}

/// The feedback loop of one campaign (or one shard of it), shared by its
/// workers.
pub struct Steer {
    gen: GenOptions,
    steer: bool,
    /// Whether some steered cases may run with stalled I/O (checked for
    /// order, not exact timing): not when the campaign asked for a timing
    /// mode, which must then hold for every case.
    stall_cases: bool,
    state: Mutex<State>,
    merged: Condvar,
}

impl Steer {
    /// With `steer` false the cases are the generator's own, and only the
    /// curve is kept. With `stall_cases`, an eighth of the steered cases
    /// run with stalled I/O.
    pub fn new(gen: GenOptions, steer: bool, stall_cases: bool) -> Steer {
        let first = Arc::new(Snapshot::first(&gen));
        Steer {
            stall_cases: stall_cases && !gen.stall_io,
            gen,
            steer,
            state: Mutex::new(State {
                bin_counts: vec![0; catalogue().len()],
                rtl_seen: HashSet::new(),
                rtl_kinds: BTreeMap::new(),
                corpus: Vec::new(),
                pending: BTreeMap::new(),
                merged: 0,
                snapshot: first,
                curve: Vec::new(),
                abandoned: false,
            }),
            merged: Condvar::new(),
        }
    }

    pub fn steering(&self) -> bool {
        self.steer
    }

    /// The case at `position` (from 0, in this run's order) of `seed`.
    /// A steered case waits until every case of the batches before its own
    /// has reported; `None` if the run was abandoned meanwhile.
    pub fn case(&self, position: u64, seed: u64) -> Option<(TestCase, Origin)> {
        let batch_start = position / BATCH * BATCH;
        if !self.steer {
            return Some((TestCase::generate(seed, &self.gen), Origin::Plain));
        }
        let snapshot = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            while state.merged < batch_start && !state.abandoned {
                state = self.merged.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if state.abandoned {
                return None;
            }
            // Taken when `merged` reached a batch's start and not replaced
            // before the batch's last case reports, which is after this.
            state.snapshot.clone()
        };
        Some(self.make(position, seed, &snapshot))
    }

    fn make(&self, position: u64, seed: u64, snap: &Snapshot) -> (TestCase, Origin) {
        let mut rng = Rng::new(seed ^ 0x5354_4545_5253_4545);
        let roll = rng.below(100);
        let (mut case, origin) = if !snap.profiles.is_empty() && roll < 90 {
            // SEGMENTS segments, each from the next profile of the holes in
            // turn across the batch (a profile may come back when there are
            // few); the program stays as long as a plain one.
            let n = SEGMENTS;
            let length = (self.gen.instrs / n).max(MIN_SEGMENT);
            let first = position as usize * SEGMENTS + rng.below(SEGMENTS as u64) as usize;
            let mut program = Program::default();
            for j in 0..n {
                let (profile, pinned) = &snap.profiles[(first + j) % snap.profiles.len()];
                // A burst profile needs room to fill a FIFO behind a busy
                // engine.
                let room = if profile.burst_pct >= 80 {
                    3 * profile.fifo_depth as usize
                } else {
                    0
                };
                let gen = GenOptions {
                    instrs: length.max(room),
                    ..profile.clone()
                };
                let part = TestCase::generate(rng.next_u64(), &gen).program;
                program.items.extend(match pinned {
                    Some(bin) => pin_segment(*bin, part.items, &self.gen),
                    None => part.items,
                });
            }
            (TestCase::directed(seed, &self.gen, program), Origin::Hole)
        } else if !snap.corpus.is_empty() && roll < 92 {
            let parent = pick(&snap.corpus, &mut rng);
            let other = pick(&snap.corpus, &mut rng);
            let how = Mutation::ALL[rng.below(Mutation::ALL.len() as u64) as usize];
            let max = self.gen.instrs * 3 + 16;
            let program = mutate::mutate(how, parent, other, self.gen.fifo_depth, max, &mut rng);
            (
                TestCase::directed(seed, &self.gen, program),
                Origin::Mutant(how),
            )
        } else {
            (TestCase::generate(seed, &self.gen), Origin::Plain)
        };
        if rng.percent(25) {
            case.preload = mutate::random_preload(&mut rng);
        }
        // Stalled I/O reaches what ideal I/O cannot: engines waiting on an
        // empty weight stream, a host slow to take a response.
        if self.stall_cases && rng.percent(12) {
            case.options.stall_io = true;
            // And a write no register takes (SLVERR on both sides), which
            // the stalling host may send with a partial strobe.
            let at = rng.below(case.program.items.len() as u64 + 1) as usize;
            let write = Item::RegWrite {
                offset: pccx_golden::model::reg::RETIRED,
                value: rng.next_u64() as u32,
            };
            case.program.items.insert(at, write);
        }
        (case, origin)
    }

    /// What the case at `position` reached. Cases are merged in position
    /// order; a case that reached something new joins the corpus.
    pub fn feedback(&self, position: u64, program: &Program, feedback: CaseFeedback) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .pending
            .insert(position, (feedback, Arc::new(program.clone())));
        let mut advanced = false;
        loop {
            let next = state.merged;
            let Some((fb, program)) = state.pending.remove(&next) else {
                break;
            };
            let mut found = 0u64;
            for &bin in &fb.bins {
                if state.bin_counts[bin] == 0 {
                    found += 1;
                }
                state.bin_counts[bin] += 1;
            }
            for (key, kind) in fb.rtl {
                if state.rtl_seen.insert(key) {
                    found += 1;
                    *state.rtl_kinds.entry(kind).or_default() += 1;
                }
            }
            if found > 0 && self.steer {
                state.corpus.push((program, found));
            }
            state.merged += 1;
            let point = CurvePoint {
                programs: state.merged,
                bins: state.bin_counts.iter().filter(|&&n| n > 0).count(),
                line: state.rtl_kinds.get("line").copied().unwrap_or(0),
                branch: state.rtl_kinds.get("branch").copied().unwrap_or(0),
                toggle: state.rtl_kinds.get("toggle").copied().unwrap_or(0),
                corpus: state.corpus.len(),
            };
            state.curve.push(point);
            if state.merged.is_multiple_of(BATCH) {
                let counts = &state.bin_counts;
                let holes = (0..counts.len()).filter(|&i| counts[i] == 0);
                state.snapshot = Arc::new(Snapshot::of(&self.gen, holes, state.corpus.clone()));
            }
            advanced = true;
        }
        if advanced {
            self.merged.notify_all();
        }
    }

    /// Wakes every case waiting for a batch: the run is over (stopped, or a
    /// model failed) and no more feedback comes.
    pub fn abandon(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .abandoned = true;
        self.merged.notify_all();
    }

    /// `count` steered cases from `first_seed` on, steered by what the
    /// golden model alone reaches (its functional coverage; no RTL, so the
    /// list depends on the generator and the golden model only):
    /// `mutate` runs them on every mutant its random seeds leave alive,
    /// for the rare states plain programs seldom reach.
    pub fn golden_suite(
        config: &crate::config::HwConfig,
        gen: &GenOptions,
        first_seed: u64,
        count: u64,
    ) -> Result<Vec<TestCase>, String> {
        use crate::coverage::Probe;
        use crate::env::models;
        let steer = Steer::new(gen.clone(), true, !gen.stall_io);
        let mut probe = Probe::new(models::reference_golden(config));
        let mut other = models::open_reference(config);
        let mut before: Vec<u64> = Vec::new();
        let mut out = Vec::new();
        for position in 0..count {
            let Some((mut case, _)) = steer.case(position, first_seed + position) else {
                break;
            };
            if position % 8 == 5 {
                // A program whose very first instruction fails at start (a
                // GEMV of the zeroed last table entries, a SHAPE error):
                // the status register's rules for instruction 0, which
                // random programs, all opening with MEMSETs, never reach.
                case.preload = Default::default();
                let first =
                    pccx_golden::asm::parse_program("gemv l2[0] <- l2[0], fmap=63, weight=63")
                        .expect("the failing opener assembles");
                case.program.items.splice(0..0, first.items);
            }
            crate::scoreboard::run_case(&case, &mut probe, &mut *other)
                .map_err(|e| format!("the golden model on steered case {position}: {e}"))?;
            let now = probe.coverage().counts();
            before.resize(now.len(), 0);
            let bins = (0..now.len()).filter(|&i| now[i] > before[i]).collect();
            before.copy_from_slice(now);
            let feedback = CaseFeedback {
                bins,
                rtl: Vec::new(),
            };
            steer.feedback(position, &case.program, feedback);
            out.push(case);
        }
        Ok(out)
    }

    /// The curve so far: one point per case merged.
    pub fn curve(&self) -> Vec<CurvePoint> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .curve
            .clone()
    }
}

/// A corpus program, drawn in proportion to what it found.
fn pick<'a>(corpus: &'a [(Arc<Program>, u64)], rng: &mut Rng) -> &'a Program {
    let total: u64 = corpus.iter().map(|(_, f)| f).sum();
    let mut at = rng.below(total.max(1));
    for (p, found) in corpus {
        if at < *found {
            return p;
        }
        at -= found;
    }
    &corpus[corpus.len() - 1].0
}

/// How a segment is made to hit a bin beyond its profile's mix
/// (docs/coverage.md, "Steering").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Aim {
    /// Every instruction of the bin's engine given the bin's fields
    /// ([`pin_fields`]).
    Fields,
    /// The first two MAT ops of the engine preceded by MEMSETs of the
    /// entries they read, with shapes that fail for the reason first.
    Shape(Engine, ShapeReason),
    /// The engine's first instruction repeated until its FIFO is full.
    Flood(Engine),
    /// Two MEMSETs of the table entry a MAT op reads, right behind it.
    TableHazard,
    /// A MEMCPY followed by one on the same host words.
    HostHazard(HazardKind),
    /// The first two MAT ops of the engine preceded by MEMSETs of the
    /// entries they read, with a legal shape exactly at the limit, their
    /// operands moved inside L2.
    AtLimit(Engine, MatLimit),
}

/// How [`pin_segment`] aims a segment at the bin with `key`; `None` for a
/// bin only its profile's mix goes for.
fn aim(key: BinKey) -> Option<Aim> {
    match key {
        BinKey::MatFlags { .. }
        | BinKey::MemcpyMode { .. }
        | BinKey::MemsetTable(_)
        | BinKey::CvoFlag(..)
        | BinKey::MemcpyRange { .. }
        | BinKey::L2Range(..)
        | BinKey::CvoRangeEdge(..) => Some(Aim::Fields),
        BinKey::Shape(engine, reason) => Some(Aim::Shape(engine, reason)),
        BinKey::AtLimit(engine, limit) => Some(Aim::AtLimit(engine, limit)),
        BinKey::FifoFull(engine) => Some(Aim::Flood(engine)),
        BinKey::Hazard(HazardKind::War | HazardKind::Waw, Resource::Table) => {
            Some(Aim::TableHazard)
        }
        BinKey::Hazard(kind, Resource::Host) => Some(Aim::HostHazard(kind)),
        BinKey::CvoShape(_)
        | BinKey::Route(_)
        | BinKey::Illegal(_)
        | BinKey::Ok(_)
        | BinKey::Hazard(..)
        | BinKey::BarrierWaits(_)
        | BinKey::BehindBarrier(_) => None,
    }
}

/// Whether [`pin_segment`] can make a segment hit bin `hole`.
fn pins(hole: usize) -> bool {
    aim(catalogue()[hole].key).is_some()
}

/// A segment made to hit bin `bin` as [`aim`] says.
fn pin_segment(bin: usize, items: Vec<Item>, gen: &GenOptions) -> Vec<Item> {
    let key = catalogue()[bin].key;
    match aim(key) {
        Some(Aim::Fields) => items
            .into_iter()
            .map(|item| match item {
                Item::Instr(word) => Item::Instr(pin(key, word, gen.l2_words)),
                item => item,
            })
            .collect(),
        Some(Aim::Shape(engine, reason)) => {
            shape_two(engine, items, |_| failing_shape(engine, reason), |_, _| {})
        }
        Some(Aim::AtLimit(engine, limit)) => shape_two(
            engine,
            items,
            |op| limit_shape(engine, limit, op),
            |op, shape| fit_in_l2(op, shape, gen.l2_words),
        ),
        Some(Aim::Flood(engine)) => fifo_flood(engine, items, gen.fifo_depth),
        Some(Aim::TableHazard) => table_hazard(items),
        Some(Aim::HostHazard(kind)) => host_hazard(kind, items),
        None => items,
    }
}

/// A segment whose first two MAT ops of `engine` are preceded by MEMSETs of
/// the entries they read, holding the shape `shape` gives for the op
/// ([M, K, K', N]); `adjust` then changes the op itself, given that shape.
fn shape_two(
    engine: Engine,
    items: Vec<Item>,
    shape: impl Fn(&isa::MatOp) -> [u16; 4],
    adjust: impl Fn(&mut isa::MatOp, [u16; 4]),
) -> Vec<Item> {
    let memset = |table, index, a, b| {
        Item::Instr(
            Instr::Memset(isa::Memset {
                dest_cache: table,
                dest_addr: index,
                a_value: a,
                b_value: b,
                c_value: 0,
                reserved: 0,
            })
            .encode(),
        )
    };
    let mut out = Vec::with_capacity(items.len() + 4);
    let mut pinned = 0;
    for item in items {
        if let (Item::Instr(word), true) = (item, pinned < 2) {
            if let Decoded::Legal(mut instr @ (Instr::Gemv(_) | Instr::Gemm(_))) = isa::decode(word)
            {
                if Engine::of_instr(&instr) == engine {
                    let (Instr::Gemv(mat) | Instr::Gemm(mat)) = &mut instr else {
                        unreachable!("matched as a MAT op above")
                    };
                    let dims = shape(mat);
                    let [m, k, k2, n] = dims;
                    out.push(memset(ShapeTable::Fmap, mat.shape_ptr_addr, m, k));
                    out.push(memset(ShapeTable::Weight, mat.size_ptr_addr, k2, n));
                    adjust(mat, dims);
                    out.push(Item::Instr(instr.encode()));
                    pinned += 1;
                    continue;
                }
            }
        }
        out.push(item);
    }
    out
}

/// A segment whose first instruction of `engine` comes FIFO-depth + 1 more
/// times right after it: the engine busy with the first, its FIFO full
/// behind it, the last latch waiting.
fn fifo_flood(engine: Engine, items: Vec<Item>, fifo_depth: u32) -> Vec<Item> {
    let mut out = Vec::with_capacity(items.len() + fifo_depth as usize + 1);
    let mut done = false;
    for item in items {
        out.push(item);
        if let (Item::Instr(word), false) = (item, done) {
            if let Decoded::Legal(instr) = isa::decode(word) {
                if Engine::of_instr(&instr) == engine {
                    out.extend((0..=fifo_depth).map(|_| Item::Instr(word)));
                    done = true;
                }
            }
        }
    }
    out
}

/// A segment whose first MAT op is followed, back to back, by two MEMSETs
/// of the fmap entry it reads: the first waits for the MAT op (WAR on the
/// table), the second is latched while the first waits (WAW).
fn table_hazard(items: Vec<Item>) -> Vec<Item> {
    let mut out = Vec::with_capacity(items.len() + 2);
    let mut done = false;
    for item in items {
        out.push(item);
        if let (Item::Instr(word), false) = (item, done) {
            if let Decoded::Legal(Instr::Gemv(mat) | Instr::Gemm(mat)) = isa::decode(word) {
                let memset = Instr::Memset(isa::Memset {
                    dest_cache: ShapeTable::Fmap,
                    dest_addr: mat.shape_ptr_addr,
                    a_value: 1,
                    b_value: 16,
                    c_value: 0,
                    reserved: 0,
                })
                .encode();
                out.extend([Item::Instr(memset), Item::Instr(memset)]);
                done = true;
            }
        }
    }
    out
}

/// A segment whose first MEMCPY of the right direction is followed, back to
/// back, by one that touches the same host words: for RAW, an L2 -> host
/// copy and the host -> L2 copy back; for WAR, a host -> L2 copy and the
/// L2 -> host copy over its source; for WAW, an L2 -> host copy twice.
fn host_hazard(kind: HazardKind, items: Vec<Item>) -> Vec<Item> {
    let older = match kind {
        HazardKind::War => MemRoute::HostToL2,
        HazardKind::Raw | HazardKind::Waw => MemRoute::L2ToHost,
    };
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut done = false;
    for item in items {
        out.push(item);
        if let (Item::Instr(word), false) = (item, done) {
            if let Decoded::Legal(Instr::Memcpy(m)) = isa::decode(word) {
                if m.try_route() == Some(older) {
                    let younger = match kind {
                        HazardKind::Waw => m,
                        // The other direction, the two addresses swapped:
                        // each stays on its own side.
                        HazardKind::Raw | HazardKind::War => isa::Memcpy {
                            from_device: m.to_device,
                            to_device: m.from_device,
                            src_addr: m.dest_addr,
                            dest_addr: m.src_addr,
                            ..m
                        },
                    };
                    out.push(Item::Instr(Instr::Memcpy(younger).encode()));
                    done = true;
                }
            }
        }
    }
    out
}

/// A shape (M, K, K', N) for a MAT op of `engine` that fails the shape
/// check for `reason` alone (a zero M, K = K' or N, K mismatch, M != 1 on a
/// GEMV, past L1: M * ceil(K/16) > 2048, past the accumulators:
/// M * ceil(N/8) > 512), or for several.
fn failing_shape(engine: Engine, reason: ShapeReason) -> [u16; 4] {
    let m = if engine == Engine::Gemv { 1 } else { 2 };
    match reason {
        ShapeReason::ZeroM => [0, 16, 16, 8],
        ShapeReason::ZeroK => [m, 0, 0, 8],
        ShapeReason::ZeroN => [m, 16, 16, 0],
        ShapeReason::KMismatch => [m, 16, 17, 8],
        ShapeReason::MNotOne => [2, 16, 16, 8],
        ShapeReason::OverL1 => [m, 32800, 32800, 8],
        ShapeReason::OverAcc => [m, 16, 16, 4100],
        // A zero K that the K mismatch refuses too.
        ShapeReason::Several => [m, 0, 5, 8],
    }
}

/// A legal shape (M, K, K', N) for a MAT op of `engine` exactly at
/// `limit`: M * ceil(K/16) = 2048 for L1, M * ceil(N/8) = 512 for the
/// accumulators. The op's own address bits pick one of a few such shapes,
/// with K and N anywhere in the last word, so that steered programs vary.
fn limit_shape(engine: Engine, limit: MatLimit, op: &isa::MatOp) -> [u16; 4] {
    use pccx_golden::exec::mat::{MAT_ACC_WORDS, MAT_L1_WORDS};
    let pick = op.src_addr ^ op.dest_reg.rotate_left(3);
    // A dimension whose last packing word is `words`: `words * per` minus
    // up to `per - 1`.
    let top = |words: u64, per: u64| (words * per - u64::from(pick) % per) as u16;
    let small = |max: u32| (1 + pick % max) as u16;
    let (m, k, n) = match (engine, limit) {
        // GEMV: M = 1, the long K (about 131,000 cycles on one lane) or
        // the wide N.
        (Engine::Gemv, MatLimit::L1) => (1, top(MAT_L1_WORDS, 16), small(8)),
        (Engine::Gemv, _) => (1, small(16), top(MAT_ACC_WORDS, 8)),
        // GEMM: both limits at once (512 rows of one word each way), or one
        // limit with a few rows of many words.
        (_, MatLimit::L1) => match pick % 3 {
            0 => (512, top(MAT_L1_WORDS / 512, 16), small(8)),
            1 => (128, top(MAT_L1_WORDS / 128, 16), small(8)),
            _ => (256, top(MAT_L1_WORDS / 256, 16), small(16)),
        },
        (_, MatLimit::Acc) => match pick % 3 {
            0 => (512, small(16), top(MAT_ACC_WORDS / 512, 8)),
            1 => (64, small(16), top(MAT_ACC_WORDS / 64, 8)),
            _ => (2, small(8), top(MAT_ACC_WORDS / 2, 8)),
        },
    };
    [m, k, k, n]
}

/// Moves `op`'s source and destination inside an L2 of `l2_words` for the
/// shape [M, K, K', N], where they lie past it (an op at a limit is about
/// the limit, not a range error).
fn fit_in_l2(op: &mut isa::MatOp, [m, k, _, n]: [u16; 4], l2_words: u32) {
    let (m, k, n) = (u32::from(m), u32::from(k), u32::from(n));
    let (in_words, out_words) = (m * k.div_ceil(16), m * n.div_ceil(8));
    op.src_addr = op.src_addr.min(l2_words.saturating_sub(in_words));
    op.dest_reg = op.dest_reg.min(l2_words.saturating_sub(out_words));
}

/// `word` with the fields of the bin with `key`, if it is a legal
/// instruction the bin is about ([`pin_fields`]); anything else as it is.
fn pin(key: BinKey, word: u64, l2_words: u32) -> u64 {
    match isa::decode(word) {
        Decoded::Legal(mut instr) => {
            pin_fields(key, &mut instr, l2_words);
            instr.encode()
        }
        _ => word,
    }
}

/// Sets `instr`'s fields to the bin's, if it is an instruction of the
/// bin's engine (a MEMCPY only along the bin's route): a GEMV's or GEMM's
/// three flags, a MEMCPY's `async`, a MEMSET's table, a CVO's function and
/// the flag or `async` the bin names, or the operand a range error is
/// about, at the last address the 17-bit field holds (for a CVO's range
/// edge: ending one word past L2, the other operand inside it). Anything
/// else is left as it is.
fn pin_fields(key: BinKey, instr: &mut Instr, l2_words: u32) {
    use pccx_golden::isa::layout::{cvo as cvo_bits, mat as mat_bits};
    // The last address the 17-bit field holds: past L2 on every
    // configuration, and past host memory for any copy of two words or
    // more.
    const PAST_THE_END: u32 = 0x1_FFFF;
    let ours = Engine::of_instr(instr);
    match (key, instr) {
        (
            BinKey::MatFlags {
                engine,
                findemax,
                accm,
                w_scale,
            },
            Instr::Gemv(m) | Instr::Gemm(m),
        ) if engine == ours => {
            let mut flags =
                m.flags & !(mat_bits::FLAG_FINDEMAX | mat_bits::FLAG_ACCM | mat_bits::FLAG_W_SCALE);
            if findemax {
                flags |= mat_bits::FLAG_FINDEMAX;
            }
            if accm {
                flags |= mat_bits::FLAG_ACCM;
            }
            if w_scale {
                flags |= mat_bits::FLAG_W_SCALE;
            }
            m.flags = flags;
        }
        (BinKey::MemcpyMode { route, async_ }, Instr::Memcpy(m))
            if m.try_route() == Some(route) =>
        {
            m.async_ = async_;
        }
        (BinKey::MemcpyRange { route, end, .. }, Instr::Memcpy(m))
            if m.try_route() == Some(route) =>
        {
            match end {
                End::Src => m.src_addr = PAST_THE_END,
                End::Dest => m.dest_addr = PAST_THE_END,
            }
        }
        (BinKey::L2Range(engine, end), Instr::Gemv(m) | Instr::Gemm(m)) if engine == ours => {
            match end {
                End::Src => m.src_addr = PAST_THE_END,
                End::Dest => m.dest_reg = PAST_THE_END,
            }
        }
        (BinKey::L2Range(Engine::Cvo, end), Instr::Cvo(c)) => match end {
            End::Src => c.src_addr = PAST_THE_END,
            End::Dest => c.dst_addr = PAST_THE_END,
        },
        (BinKey::CvoRangeEdge(class, end), Instr::Cvo(c)) => {
            cvo_range_edge(c, class, end, l2_words)
        }
        (BinKey::MemsetTable(table), Instr::Memset(m)) => m.dest_cache = table,
        (BinKey::CvoFlag(func, flag), Instr::Cvo(c)) => {
            c.func = func;
            match flag {
                CvoFlag::Sync => c.async_ = false,
                CvoFlag::Async => c.async_ = true,
                CvoFlag::SubEmax => c.flags |= cvo_bits::FLAG_SUB_EMAX,
                CvoFlag::Accm => c.flags |= cvo_bits::FLAG_ACCM,
                CvoFlag::RecipScale => c.flags |= cvo_bits::FLAG_RECIP_SCALE,
            }
        }
        _ => {}
    }
}

/// Makes `c` a CVO of `class` whose operand at `end` ends exactly one word
/// past an L2 of `l2_words` and whose other operand lies inside it. Its
/// vector is longer than one word, so that the operand starts inside L2
/// too: a check that forgot a word of the range would then pass it.
fn cvo_range_edge(c: &mut isa::Cvo, class: CvoRangeClass, end: End, l2_words: u32) {
    if CvoRangeClass::of(c.func) != class {
        c.func = match class {
            CvoRangeClass::Scale => CvoFunc::Scale,
            CvoRangeClass::ReduceSum => CvoFunc::ReduceSum,
            CvoRangeClass::Other => CvoFunc::Exp,
        };
    }
    let max_words = (l2_words / 2).min(u32::from(u16::MAX) / 8);
    let words = (u32::from(c.length).div_ceil(8)).clamp(2, max_words);
    c.length = (words * 8 - u32::from(c.length) % 8) as u16;
    let (read, write) = cvo_range_words(c.func, c.length);
    let (src_words, dst_words) = (read as u32, write as u32);
    match end {
        End::Src => {
            c.src_addr = l2_words + 1 - src_words;
            c.dst_addr = c.dst_addr.min(l2_words - dst_words);
        }
        End::Dest => {
            c.dst_addr = l2_words + 1 - dst_words;
            c.src_addr = c.src_addr.min(l2_words - src_words);
        }
    }
}

/// The generator options that make bin `hole`'s kind of event frequent.
fn profile_for(base: &GenOptions, hole: usize) -> GenOptions {
    let key = catalogue()[hole].key;
    let mut g = base.clone();
    // The engine's instructions frequent, MEMSETs (which the others' shapes
    // need) less so, the rest rare.
    let op = |g: &mut GenOptions, which: Engine| {
        g.weights = OpWeights::from_fn(|e| match e {
            _ if e == which => 100,
            Engine::Memset => 20,
            _ => 8,
        });
    };
    match key.group() {
        Group::Flags | Group::Routes => {
            op(&mut g, key.engine().unwrap_or(Engine::Mem));
            g.illegal_pct = 1;
            g.range_err_pct = 2;
            g.mat_shape_err_pct = 2;
        }
        Group::Errors => {
            if let Some(engine) = key.engine() {
                op(&mut g, engine);
            }
            match key {
                BinKey::Illegal(_) => g.illegal_pct = 50,
                BinKey::Shape(..) => g.mat_shape_err_pct = 100,
                BinKey::MemcpyRange { .. } | BinKey::L2Range(..) | BinKey::CvoRangeEdge(..) => {
                    g.range_err_pct = 100
                }
                BinKey::AtLimit(..) => g.mat_limit_pct = 50,
                _ => {}
            }
        }
        Group::Hazards => {
            // Operands against recent ones, and long copies in bursts so
            // that the older one is still in flight.
            g.hazard_pct = 95;
            g.burst_pct = 90;
            g.idle_pct = 0;
            g.long_copy_pct = 50;
            // The instructions that touch the hazard's resource.
            let by_resource = match key {
                BinKey::Hazard(_, Resource::Table) => Some(Engine::Memset),
                BinKey::Hazard(_, Resource::EMax) => Some(Engine::Gemv),
                BinKey::Hazard(_, Resource::Host) => Some(Engine::Mem),
                _ => None,
            };
            if let Some(engine) = key.engine().or(by_resource) {
                op(&mut g, engine);
            }
        }
        Group::FifoFull => {
            op(&mut g, key.engine().unwrap_or(Engine::Cvo));
            g.burst_pct = 100;
            g.idle_pct = 0;
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen() -> GenOptions {
        GenOptions::new(40, 4096, 4)
    }

    #[test]
    fn the_first_batch_needs_no_feedback_and_later_ones_wait_for_it() {
        let steer = Steer::new(gen(), true, true);
        let other = Steer::new(gen(), true, true);
        for k in 0..BATCH {
            // Aimed at every bin, before anything ran: no wait, and the
            // same cases from any Steer.
            let (case, _) = steer.case(k, 100 + k).unwrap();
            assert_eq!(Some(case), other.case(k, 100 + k).map(|(c, _)| c));
        }
        // Batch 1 waits for batch 0: abandoning wakes it with nothing.
        std::thread::scope(|s| {
            let waiting = s.spawn(|| steer.case(BATCH, 100 + BATCH));
            std::thread::sleep(std::time::Duration::from_millis(50));
            steer.abandon();
            assert!(waiting.join().unwrap().is_none());
        });
    }

    #[test]
    fn feedback_merges_in_position_order_and_new_finds_join_the_corpus() {
        let steer = Steer::new(gen(), true, true);
        let p = Program::default();
        let fb = |bins: Vec<usize>| CaseFeedback {
            bins,
            rtl: vec![("k".into(), "line".into())],
        };
        // Out of order: nothing merges until position 0 arrives.
        steer.feedback(1, &p, fb(vec![3]));
        assert!(steer.curve().is_empty());
        steer.feedback(0, &p, fb(vec![3, 4]));
        let curve = steer.curve();
        assert_eq!(curve.len(), 2);
        assert_eq!((curve[0].bins, curve[0].line, curve[0].corpus), (2, 1, 1));
        // Position 1 found nothing new: no second corpus entry.
        assert_eq!((curve[1].bins, curve[1].line, curve[1].corpus), (2, 1, 1));
    }

    #[test]
    fn a_steered_batch_is_a_function_of_the_feedback_before_it() {
        let run = || {
            let steer = Steer::new(gen(), true, true);
            for k in 0..BATCH {
                let (case, _) = steer.case(k, 7 + k).unwrap();
                steer.feedback(
                    k,
                    &case.program,
                    CaseFeedback {
                        bins: vec![k as usize],
                        rtl: Vec::new(),
                    },
                );
            }
            (BATCH..2 * BATCH)
                .map(|k| steer.case(k, 7 + k).unwrap())
                .collect::<Vec<_>>()
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b);
        assert!(a.iter().any(|(_, o)| *o != Origin::Plain), "{a:?}");
    }

    /// A SHAPE reason's pin makes the MAT op it precedes fail for that
    /// reason: the probe on the golden model counts the bin.
    #[test]
    fn a_shape_pin_hits_its_reason() {
        use crate::coverage::Probe;
        use pccx_golden::model::NpuModel;
        use pccx_golden::{Golden, GoldenConfig};
        let gemv = Instr::Gemv(isa::MatOp {
            dest_reg: 0x100,
            src_addr: 0,
            flags: 0,
            size_ptr_addr: 4,
            shape_ptr_addr: 3,
            parallel_lane: 0,
            reserved: 0,
        });
        let Instr::Gemv(op) = gemv else {
            unreachable!()
        };
        let gemm = Instr::Gemm(op);
        let mut pinned = 0;
        for (i, bin) in catalogue().iter().enumerate() {
            let BinKey::Shape(engine, _) = bin.key else {
                continue;
            };
            let word = if engine == Engine::Gemv { gemv } else { gemm }.encode();
            let items = pin_segment(i, vec![Item::Instr(word)], &gen());
            assert_eq!(items.len(), 3, "{}", bin.name);
            let mut probe = Probe::new(Golden::new(GoldenConfig { l2_words: 4096 }));
            probe.reset().unwrap();
            for item in items {
                if let Item::Instr(w) = item {
                    probe.issue(w).unwrap();
                }
            }
            probe.drain().unwrap();
            assert_eq!(probe.coverage().count_of(bin.key), Some(1), "{}", bin.name);
            pinned += 1;
        }
        assert_eq!(pinned, 14, "the fourteen SHAPE bins");
    }

    /// The bins steering has a segment of their own for are in the
    /// catalogue under the keys it matches on: were one gone (or keyed
    /// otherwise), steering would silently stop going for it.
    #[test]
    fn the_bins_steering_aims_at_are_in_the_catalogue() {
        let mut wanted = vec![
            (
                BinKey::Hazard(HazardKind::War, Resource::Table),
                Aim::TableHazard,
            ),
            (
                BinKey::Hazard(HazardKind::Waw, Resource::Table),
                Aim::TableHazard,
            ),
        ];
        for kind in HazardKind::ALL {
            wanted.push((BinKey::Hazard(kind, Resource::Host), Aim::HostHazard(kind)));
        }
        for engine in Engine::ALL {
            wanted.push((BinKey::FifoFull(engine), Aim::Flood(engine)));
        }
        for engine in [Engine::Gemv, Engine::Gemm] {
            for reason in ShapeReason::ALL {
                if reason.possible(engine) {
                    wanted.push((BinKey::Shape(engine, reason), Aim::Shape(engine, reason)));
                }
            }
        }
        for engine in [Engine::Gemv, Engine::Gemm] {
            for limit in MatLimit::ALL {
                wanted.push((BinKey::AtLimit(engine, limit), Aim::AtLimit(engine, limit)));
            }
        }
        for class in CvoRangeClass::ALL {
            for end in [End::Src, End::Dest] {
                wanted.push((BinKey::CvoRangeEdge(class, end), Aim::Fields));
            }
        }
        for (key, how) in wanted {
            assert!(
                catalogue().iter().any(|b| b.key == key),
                "steering aims at {key:?} ({how:?}), which the catalogue has no bin for"
            );
            assert_eq!(aim(key), Some(how), "{key:?}");
        }
        // And some bins of every kind whose fields a segment is given.
        let fields: Vec<BinKey> = catalogue()
            .iter()
            .filter(|b| aim(b.key) == Some(Aim::Fields))
            .map(|b| b.key)
            .collect();
        for (kind, is) in [
            (
                "MAT flags",
                &(|k: &BinKey| matches!(k, BinKey::MatFlags { .. })) as &dyn Fn(&BinKey) -> bool,
            ),
            ("MEMCPY modes", &|k| matches!(k, BinKey::MemcpyMode { .. })),
            ("MEMSET tables", &|k| matches!(k, BinKey::MemsetTable(_))),
            ("CVO flags", &|k| matches!(k, BinKey::CvoFlag(..))),
            ("MEMCPY range errors", &|k| {
                matches!(k, BinKey::MemcpyRange { .. })
            }),
            ("L2 range errors", &|k| matches!(k, BinKey::L2Range(..))),
        ] {
            assert!(fields.iter().any(is), "no {kind} bin to pin fields for");
        }
    }

    /// Every bin steering aims a segment at is reached by such segments:
    /// the segment of a seed's program made from the bin's profile, aimed
    /// at it, hits it on the golden model for one of a few seeds.
    #[test]
    fn every_bin_steering_aims_at_is_reached_by_its_segments() {
        use crate::coverage::Probe;
        use crate::env::models;
        use crate::scoreboard::run_case;
        let config = crate::config::by_name("tiny").expect("the tiny configuration");
        let base = GenOptions::for_config(&config, 40);
        let mut unreached = Vec::new();
        for (i, bin) in catalogue().iter().enumerate() {
            if aim(bin.key).is_none() {
                continue;
            }
            let reached = (1..=8u64).any(|seed| {
                let profile = profile_for(&base, i);
                let program = TestCase::generate(seed, &profile).program;
                let items = pin_segment(i, program.items, &base);
                let case = TestCase::directed(seed, &base, Program { items });
                let mut probe = Probe::new(models::reference_golden(&config));
                let mut other = models::open_reference(&config);
                run_case(&case, &mut probe, &mut *other).expect("the golden model runs");
                probe.coverage().count_of(bin.key).is_some_and(|n| n > 0)
            });
            if !reached {
                unreached.push(bin.name.as_str());
            }
        }
        assert!(
            unreached.is_empty(),
            "steering's segments never reach {unreached:?}"
        );
    }

    #[test]
    fn every_hole_has_a_profile_that_changes_the_mix() {
        for (i, _) in catalogue().iter().enumerate() {
            assert_ne!(profile_for(&gen(), i), gen(), "bin {i}");
        }
    }
}
