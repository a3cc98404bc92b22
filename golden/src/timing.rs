//! The timing part of the golden model: predicts, from the instruction
//! stream, the host's write schedule and the hardware parameters alone, the
//! cycle in which every instruction is latched, started and retired, and the
//! status register in every cycle (docs/timing.md, which this file follows
//! formula by formula). It never looks at the RTL.
//!
//! Why a forward, in-order computation is enough: an instruction's start
//! depends only on older instructions (the conflict and barrier rules, its
//! engine's previous instruction), and its latch only on the host's schedule
//! and on when older instructions of its engine left the FIFO.

use crate::engine::{Engine, PerEngine};
use crate::exec::mat::{check_shape, MatEngine, MatShape};
use crate::footprint::{conflicts, Footprint};
use crate::isa::{Cvo, CvoFunc, Instr, MemRoute};
use crate::model::{reg, ErrorCode, ShapeTable};
use crate::tables::{memcpy_words, Tables};

/// The hardware and I/O parameters timing depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingParams {
    /// Depth of each engine FIFO (`FIFO_DEPTH`).
    pub fifo_depth: u32,
    /// Fixed host response latency of ideal I/O (`LAT`).
    pub host_latency: u32,
    /// `ARRAY_ROWS` x `ARRAY_COLS`: the GEMM systolic array (rows along K,
    /// columns along N).
    pub array_rows: u32,
    pub array_cols: u32,
    /// `VEC_LANES`: the GEMV engine's uV lanes.
    pub vector_lanes: u32,
    /// `CVO_CORES`: the CVO engine's uCVO cores.
    pub cvo_cores: u32,
}

/// Cycles one AXI-Lite access takes that does not latch an instruction
/// (write to 0x00, 0x08, an unmapped offset; any read): accept, respond.
pub const REG_ACCESS_CYCLES: u64 = 2;

/// Cycles an engine is busy between its start cycle S and its retire cycle
/// R, less one: R = S + 1 + busy (docs/timing.md, "Engines"). An
/// instruction in error (`code` not OK) is busy 0 cycles.
pub fn engine_busy_cycles(
    instr: &Instr,
    tables: &Tables,
    code: ErrorCode,
    params: &TimingParams,
) -> u64 {
    if code != ErrorCode::Ok {
        return 0;
    }
    let lat = u64::from(params.host_latency.max(1));
    match instr {
        Instr::Memcpy(op) => {
            let len = memcpy_words(tables.get(ShapeTable::Fmap, op.shape_ptr_addr));
            if len == 0 {
                return 0;
            }
            match op.route() {
                MemRoute::HostToL2 => lat + len,
                MemRoute::L2ToHost => 2 * len + lat,
                MemRoute::L2ToL2 => 2 * len,
            }
        }
        Instr::Gemv(_) | Instr::Gemm(_) => {
            let Some((engine, op)) = MatEngine::of(instr) else {
                return 0;
            };
            // An OK instruction passed its SHAPE check with these tables.
            let Ok(shape) = check_shape(engine, op, tables) else {
                return 0;
            };
            match engine {
                MatEngine::Gemm => {
                    gemm_busy_cycles(shape, op.w_scale(), params.array_rows, params.array_cols)
                }
                MatEngine::Gemv => {
                    gemv_busy_cycles(shape, op.w_scale(), op.parallel_lane, params.vector_lanes)
                }
            }
        }
        Instr::Cvo(op) => cvo_busy_cycles(op, params.cvo_cores),
        // MEMSET retires in the cycle after its start.
        Instr::Memset(_) => 0,
    }
}

/// CVO on `cvo_cores` uCVO cores (docs/cvo.md section 4), for an
/// instruction that passed its checks. With `P = ceil(8 / cores)` compute
/// cycles per word, `W = ceil(length / 8)`, `a = accm`:
///
/// ```text
/// REDUCE_SUM:        W * (P + 1) + a + 2     read + P per word; [read old],
///                                            combine and round, write
/// the others:  sc + W * (P + 3 + a)          sc = 1 for SCALE (its scalar);
///                                            per word [read old], read, P,
///                                            drain, write
/// ```
///
/// `length = 0` retires in the cycle after its start.
pub fn cvo_busy_cycles(op: &Cvo, cvo_cores: u32) -> u64 {
    let words = u64::from(op.length).div_ceil(8);
    if words == 0 {
        return 0;
    }
    let per_word = 8u64.div_ceil(u64::from(cvo_cores.clamp(1, 8)));
    let accm = u64::from(op.accm());
    match op.func {
        CvoFunc::ReduceSum => words * (per_word + 1) + accm + 2,
        CvoFunc::Scale => 1 + words * (per_word + 3 + accm),
        _ => words * (per_word + 3 + accm),
    }
}

/// GEMM on an `array_rows` x `array_cols` systolic array (docs/timing.md,
/// "GEMM"), for a shape that passed its checks. With `R`, `C` the array,
/// `A = M*ceil(K/16)`, `T = ceil(N/32)`, `W = ceil(N/8)`:
///
/// ```text
/// busy = A                                    L1 fill, one L2 word per cycle
///      + sum over tiles t < T, k-chunks kc < ceil(K/R) of
///          rows_kc                            weight load, one beat per row
///        + ceil(cols_t / C) * (M + R + C)     per sub-tile: 1 preload cycle,
///                                             M + R + C - 1 streaming cycles
///      + (w_scale ? W : 0)                    scale beats, one per cycle
///      + M*W + 2                              output words, 2 pipeline cycles
/// ```
///
/// with `rows_kc = min(R, K - kc*R)` and `cols_t = min(32, N - 32t)`. The
/// `rows_kc` of one tile add up to `K`, which is how it is computed here.
/// The output path's pipeline (read the old word, convert, write) adds two
/// cycles after the last word is issued (docs/timing.md).
pub const OUTPUT_PIPELINE_CYCLES: u64 = 2;

pub fn gemm_busy_cycles(shape: MatShape, w_scale: bool, array_rows: u32, array_cols: u32) -> u64 {
    let (r, c) = (u64::from(array_rows.max(1)), u64::from(array_cols.max(1)));
    let MatShape { m, k, n } = shape;
    let chunks = k.div_ceil(r);
    let tiles: u64 = (0..shape.tiles())
        .map(|t| {
            let cols_t = (n - 32 * t).min(32);
            k + chunks * cols_t.div_ceil(c) * (m + r + c)
        })
        .sum();
    let scales = if w_scale { shape.out_row_words() } else { 0 };
    shape.act_words() + tiles + scales + shape.out_words() + OUTPUT_PIPELINE_CYCLES
}

/// GEMV on `vector_lanes` uV lanes (docs/timing.md, "GEMV"), for a shape
/// that passed its checks (M = 1). With `P` the lanes in use
/// (`parallel_lane`, 0 or more than there are meaning all of them), beat
/// `j` of a tile is accepted in cycle `c(j) = (j / P) * max(P, 4) + j % P`
/// of the tile, by lane `j % P`; a lane needs 4 cycles per beat (8 MACs a
/// cycle over 32 columns), and the tile ends with a reduce cycle 5 cycles
/// after its last beat:
///
/// ```text
/// busy = ceil(K/16)                           L1 fill
///      + ceil(N/32) * (c(K-1) + 6)            tiles
///      + (w_scale ? W : 0)                    scale beats
///      + W + 2                                output words, 2 pipeline cycles
/// ```
pub fn gemv_busy_cycles(
    shape: MatShape,
    w_scale: bool,
    parallel_lane: u8,
    vector_lanes: u32,
) -> u64 {
    let lanes = u64::from(vector_lanes.max(1));
    let p = match u64::from(parallel_lane) {
        0 => lanes,
        p if p > lanes => lanes,
        p => p,
    };
    let accept = |j: u64| (j / p) * p.max(4) + j % p;
    let scales = if w_scale { shape.out_row_words() } else { 0 };
    shape.act_words()
        + shape.tiles() * (accept(shape.k.saturating_sub(1)) + 6)
        + scales
        + shape.out_row_words()
        + OUTPUT_PIPELINE_CYCLES
}

/// What the timing model needs to know of one latched instruction.
pub struct Latched<'a> {
    pub seq: u32,
    /// `None`: an illegal word (retires from the decoder).
    pub instr: Option<&'a Instr>,
    /// Its footprint, from the tables as they stand in program order.
    pub footprint: Option<Footprint>,
    pub busy: u64,
    pub code: ErrorCode,
}

/// The predicted cycles of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prediction {
    pub latch: u64,
    pub start: Option<u64>,
    pub retire: u64,
}

#[derive(Clone, Debug)]
struct Record {
    seq: u32,
    engine: Option<Engine>,
    latch: u64,
    start: Option<u64>,
    retire: u64,
    code: ErrorCode,
    footprint: Option<Footprint>,
    memset_target: Option<(ShapeTable, u8)>,
    /// Cycles the latch waited for room in the engine FIFO.
    fifo_wait: u64,
}

impl Record {
    fn reads_tables(&self) -> bool {
        self.footprint
            .as_ref()
            .is_some_and(|f| !f.table_reads.is_empty())
    }

    fn barrier(&self) -> bool {
        self.footprint.as_ref().is_some_and(|f| f.barrier)
    }
}

/// The host's clock and every instruction latched since reset.
#[derive(Clone, Debug)]
pub struct Timeline {
    params: TimingParams,
    /// The cycle in which the host's next action begins.
    clock: u64,
    records: Vec<Record>,
    /// Indices into `records` of instructions that may still matter to a
    /// new latch (retire cycle not yet behind the host's clock).
    live: Vec<usize>,
    /// The first cycle each engine is idle again.
    engine_free: PerEngine<u64>,
    /// (clock edge at which a clear of ERR takes effect, first sequence
    /// number whose errors count after it).
    clears: Vec<(u64, u32)>,
    /// What the last [`Timeline::latch_cycle`] waited for FIFO room, for
    /// the [`Timeline::schedule`] that follows it.
    last_fifo_wait: u64,
}

impl Timeline {
    pub fn new(params: TimingParams) -> Timeline {
        Timeline {
            params,
            clock: 0,
            records: Vec::new(),
            live: Vec::new(),
            engine_free: PerEngine::default(),
            clears: Vec::new(),
            last_fifo_wait: 0,
        }
    }

    pub fn params(&self) -> TimingParams {
        self.params
    }

    pub fn reset(&mut self) {
        *self = Timeline::new(self.params);
    }

    /// The host leaves `cycles` idle cycles.
    pub fn idle(&mut self, cycles: u32) {
        self.clock += u64::from(cycles);
    }

    /// One register access that latches nothing. A write to 0x08 also
    /// clears ERR: the clear pulse is registered in the cycle after the
    /// write is accepted and acts at that cycle's edge.
    pub fn reg_access(&mut self, clears_err: bool, next_seq: u32) {
        if clears_err {
            self.clears.push((self.clock + 1, next_seq));
        }
        self.clock += REG_ACCESS_CYCLES;
    }

    /// The write to 0x04 of an instruction for `engine` (`None`: an illegal
    /// word): returns the latch cycle and advances the host's clock past the
    /// write response. [`Timeline::schedule`] must follow.
    pub fn latch_cycle(&mut self, engine: Option<Engine>) -> u64 {
        let accepted = self.clock;
        self.live.retain(|&i| self.records[i].retire >= accepted);
        // The slave holds the word from the cycle after acceptance until
        // the engine FIFO has room; illegal words need no room.
        let latch = match engine {
            None => accepted + 1,
            Some(e) => self.first_cycle_with_room(e, accepted + 1),
        };
        self.last_fifo_wait = latch - (accepted + 1);
        self.clock = latch + 2; // response in latch + 1, next access after it
        latch
    }

    /// The start and retire of the instruction latched in `latch`.
    pub fn schedule(&mut self, latch: u64, item: Latched<'_>) -> Prediction {
        let engine = item.instr.map(Engine::of_instr);
        let prediction = match engine {
            None => Prediction {
                latch,
                start: None,
                retire: latch + 1,
            },
            Some(e) => {
                let ready = self.dependencies_done(&item, latch);
                let start = (latch + 1).max(self.engine_free[e]).max(ready);
                let retire = start + 1 + item.busy;
                self.engine_free[e] = retire + 1;
                Prediction {
                    latch,
                    start: Some(start),
                    retire,
                }
            }
        };
        let memset_target = match item.instr {
            Some(Instr::Memset(m)) => Some((m.dest_cache, m.dest_addr)),
            _ => None,
        };
        self.records.push(Record {
            seq: item.seq,
            engine,
            latch,
            start: prediction.start,
            retire: prediction.retire,
            code: item.code,
            footprint: item.footprint,
            memset_target,
            fifo_wait: std::mem::take(&mut self.last_fifo_wait),
        });
        self.live.push(self.records.len() - 1);
        prediction
    }

    /// Cycles the latch of `seq` waited because its engine's FIFO was full
    /// (back-pressure: `L - (t + 1)` in docs/timing.md, 0 when the word was
    /// taken at once); `None` for a sequence number not latched since reset.
    pub fn fifo_wait(&self, seq: u32) -> Option<u64> {
        self.records
            .iter()
            .rev()
            .find(|r| r.seq == seq)
            .map(|r| r.fifo_wait)
    }

    /// The first cycle >= `from` in which engine `e`'s FIFO is not full:
    /// an entry occupies the FIFO from the cycle after its latch until its
    /// start (it is popped at the start edge).
    fn first_cycle_with_room(&self, e: Engine, from: u64) -> u64 {
        let mut starts: Vec<u64> = self
            .live
            .iter()
            .map(|&i| &self.records[i])
            .filter(|r| r.engine == Some(e))
            .filter_map(|r| r.start)
            .filter(|&s| s >= from)
            .collect();
        let depth = self.params.fifo_depth as usize;
        if starts.len() < depth {
            return from;
        }
        starts.sort_unstable();
        starts[starts.len() - depth] + 1
    }

    /// The first cycle in which every instruction the new one depends on has
    /// retired (its bit in the dependency row is cleared at the retire edge).
    fn dependencies_done(&self, item: &Latched<'_>, latch: u64) -> u64 {
        let Some(new_fp) = item.footprint.as_ref() else {
            return 0;
        };
        // In flight at the latch edge: latched earlier, retiring later. One
        // retiring in the latch cycle itself is already excluded.
        let in_flight: Vec<&Record> = self
            .live
            .iter()
            .map(|&i| &self.records[i])
            .filter(|r| r.engine.is_some() && r.retire > latch)
            .collect();
        let new_unresolved = self.unresolved(new_fp, u32::MAX, latch);
        let mut ready = 0;
        for older in in_flight {
            let fp = older
                .footprint
                .as_ref()
                .expect("legal records have footprints");
            let depends = new_fp.barrier
                || older.barrier()
                || new_unresolved
                || (older.reads_tables() && self.unresolved(fp, older.seq, latch))
                || conflicts(fp, new_fp);
            if depends {
                ready = ready.max(older.retire + 1);
            }
        }
        ready
    }

    /// Whether a MEMSET older than `older_than` and still in flight at the
    /// latch edge (retiring in that very cycle included: its table write has
    /// not landed yet) writes a table entry `fp` reads.
    fn unresolved(&self, fp: &Footprint, older_than: u32, latch: u64) -> bool {
        fp.table_reads.iter().any(|entry| {
            self.live
                .iter()
                .map(|&i| &self.records[i])
                .any(|r| r.memset_target == Some(*entry) && r.retire >= latch && r.seq < older_than)
        })
    }

    /// The status register (0x08) predicted at cycle 0 and at every cycle it
    /// changes, for everything latched so far (docs/timing.md, "Status").
    pub fn status_timeline(&self) -> Vec<(u64, u32)> {
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        enum Change {
            Latch(usize),
            Retire(usize),
            Clear(usize),
        }
        // (first cycle the change is visible, change)
        let mut changes: Vec<(u64, Change)> = Vec::new();
        for (i, r) in self.records.iter().enumerate() {
            changes.push((r.latch + 1, Change::Latch(i)));
            changes.push((r.retire + 1, Change::Retire(i)));
        }
        for (i, &(edge, _)) in self.clears.iter().enumerate() {
            changes.push((edge + 1, Change::Clear(i)));
        }
        changes.sort();

        let mut timeline = vec![(0u64, 0u32)];
        let (mut latched, mut retired) = (0usize, 0usize);
        let mut youngest: Option<usize> = None;
        let mut first_counted_seq = 0u32;
        let mut first_error: Option<(u32, ErrorCode)> = None;
        let mut k = 0;
        while k < changes.len() {
            let cycle = changes[k].0;
            // A clear acts on the flag first; errors retiring at the clear's
            // own edge are older than its boundary and never count.
            while k < changes.len() && changes[k].0 == cycle {
                match changes[k].1 {
                    Change::Latch(i) => {
                        latched += 1;
                        if youngest.is_none_or(|y| self.records[y].latch < self.records[i].latch) {
                            youngest = Some(i);
                        }
                    }
                    Change::Retire(i) => {
                        retired += 1;
                        let r = &self.records[i];
                        if r.code != ErrorCode::Ok
                            && r.seq >= first_counted_seq
                            && first_error.is_none_or(|(s, _)| r.seq < s)
                        {
                            first_error = Some((r.seq, r.code));
                        }
                    }
                    Change::Clear(i) => {
                        first_counted_seq = self.clears[i].1;
                        first_error = None;
                    }
                }
                k += 1;
            }
            let busy = latched > retired;
            let done = !busy && youngest.is_some_and(|y| self.records[y].code == ErrorCode::Ok);
            let mut status = u32::from(busy) * reg::STATUS_BUSY;
            if done {
                status |= reg::STATUS_DONE;
            }
            if let Some((_, code)) = first_error {
                status |= reg::STATUS_ERR | u32::from(code.bits()) << reg::STATUS_ERR_CODE_SHIFT;
            }
            if timeline.last().is_some_and(|&(_, v)| v != status) {
                timeline.push((cycle, status));
            }
        }
        timeline
    }
}
