//! [`Probe`]: the golden reference with a coverage sampler around it.
//!
//! The golden model executes an instruction completely inside the write to
//! 0x04, so the probe sees, at that moment, the tables as the instruction
//! found them (its footprint, its SHAPE reason), and right after it the
//! instruction's events: latch and retire cycles (timing model), error
//! code, writes. It passes every event on unchanged, so the scoreboard sees
//! exactly what the bare reference would report.

use super::{
    BinKey, Coverage, CvoFlag, CvoRangeClass, CvoShape, End, HazardKind, Illegal, MatLimit,
    Resource, Route, ShapeReason,
};
use pccx_golden::exec::mat::{check_shape, MatEngine, MAT_ACC_WORDS, MAT_L1_WORDS};
use pccx_golden::footprint::{cvo_range_words, footprint, Footprint, Range};
use pccx_golden::golden::Golden;
use pccx_golden::isa::{self, CvoFunc, Decoded, IllegalReason, Instr, MatOp, MemRoute};
use pccx_golden::model::{
    reg, AxiResp, ErrorCode, Event, ModelError, NpuModel, ShapeEntry, ShapeTable, HOST_WORDS,
};
use pccx_golden::tables::{memcpy_words, Tables};
use pccx_golden::Engine;

/// An older legal instruction that may still be in flight.
struct Flight {
    retire: u64,
    footprint: Footprint,
    engine: Engine,
}

/// The golden reference, sampling functional coverage of everything it
/// runs. Use it as the campaign's reference; read [`Probe::coverage`]
/// afterwards.
pub struct Probe {
    inner: Golden,
    coverage: Coverage,
    instr_lo: u32,
    in_flight: Vec<Flight>,
    /// Events taken from the inner model while sampling, not yet handed on.
    events: Vec<Event>,
}

impl Probe {
    pub fn new(inner: Golden) -> Probe {
        Probe {
            inner,
            coverage: Coverage::new(),
            instr_lo: 0,
            in_flight: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Everything sampled since the probe was made.
    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    pub fn into_coverage(self) -> Coverage {
        self.coverage
    }

    /// Records the first hits of the next case under `case` (its position
    /// in a campaign run by several workers) rather than the count of cases
    /// this probe sampled.
    pub fn set_case_number(&mut self, case: u64) {
        self.coverage.case_number = Some(case);
    }

    fn sample(&mut self, word: u64, tables: &Tables, events: &[Event]) {
        let c = &mut self.coverage;
        c.instructions += 1;
        let (mut seq, mut latch, mut retire, mut err) = (None, None, None, None);
        let (mut l2_writes, mut host_writes) = (0u64, 0u64);
        for e in events {
            match *e {
                Event::Latch { seq: s, cycle, .. } => {
                    seq = Some(s);
                    latch = cycle;
                }
                Event::Retire {
                    err: code, cycle, ..
                } => {
                    err = Some(code);
                    retire = cycle;
                }
                Event::L2Write { .. } => l2_writes += 1,
                Event::HostWrite { .. } => host_writes += 1,
                _ => {}
            }
        }
        let Some(code) = err.and_then(ErrorCode::from_bits) else {
            return;
        };
        let instr = match isa::decode(word) {
            Decoded::Illegal { reason, .. } => {
                c.hit(BinKey::Illegal(illegal_kind(reason)));
                return;
            }
            Decoded::Legal(instr) => instr,
        };
        let l2_words = u64::from(self.inner.l2_words());
        sample_instr(c, &instr, tables, code, l2_words, l2_writes, host_writes);

        let (Some(seq), Some(latch), Some(retire)) = (seq, latch, retire) else {
            c.untimed += 1;
            return;
        };
        let fp = footprint(&instr, tables);
        let engine = Engine::of_instr(&instr);
        // In flight at the latch edge: retiring after the latch cycle
        // (docs/timing.md). Latch cycles only grow, so the rest never
        // matters again.
        self.in_flight.retain(|f| f.retire > latch);
        if fp.barrier && !self.in_flight.is_empty() {
            c.hit(BinKey::BarrierWaits(engine));
        }
        for older in &self.in_flight {
            if older.footprint.barrier {
                c.hit(BinKey::BehindBarrier(older.engine));
            }
            for (kind, resource) in hazards(&older.footprint, &fp) {
                c.hit(BinKey::Hazard(kind, resource));
            }
        }
        self.in_flight.push(Flight {
            retire,
            footprint: fp,
            engine,
        });
        let waited = self.inner.timeline().and_then(|t| t.fifo_wait(seq));
        if waited.is_some_and(|w| w > 0) {
            c.hit(BinKey::FifoFull(engine));
        }
    }
}

fn illegal_kind(reason: IllegalReason) -> Illegal {
    match reason {
        IllegalReason::Opcode(_) => Illegal::Opcode,
        IllegalReason::CvoFunc(_) => Illegal::CvoFunc,
        IllegalReason::DestCache(_) => Illegal::DestCache,
        IllegalReason::Direction => Illegal::Direction,
    }
}

/// The flag, route and error bins of one legal instruction that retired
/// with `code`, from the tables it found.
fn sample_instr(
    c: &mut Coverage,
    instr: &Instr,
    tables: &Tables,
    code: ErrorCode,
    l2_words: u64,
    l2_writes: u64,
    host_writes: u64,
) {
    let ok = code == ErrorCode::Ok;
    match instr {
        Instr::Gemv(m) | Instr::Gemm(m) => {
            let gemv = matches!(instr, Instr::Gemv(_));
            let engine = Engine::of_instr(instr);
            let mat = if gemv {
                MatEngine::Gemv
            } else {
                MatEngine::Gemm
            };
            match code {
                ErrorCode::Ok => {
                    c.hit(BinKey::MatFlags {
                        engine,
                        findemax: m.findemax(),
                        accm: m.accm(),
                        w_scale: m.w_scale(),
                    });
                    let (fill, result) = if gemv {
                        (Route::GemvFill, Route::GemvResult)
                    } else {
                        (Route::GemmFill, Route::GemmResult)
                    };
                    c.hit(BinKey::Route(fill));
                    if l2_writes > 0 {
                        c.hit(BinKey::Route(result));
                    }
                    c.hit(BinKey::Ok(engine));
                    if let Ok(shape) = check_shape(mat, m, tables) {
                        if shape.act_words() == MAT_L1_WORDS {
                            c.hit(BinKey::AtLimit(engine, MatLimit::L1));
                        }
                        if shape.out_words() == MAT_ACC_WORDS {
                            c.hit(BinKey::AtLimit(engine, MatLimit::Acc));
                        }
                    }
                }
                ErrorCode::Shape => c.hit(BinKey::Shape(engine, shape_reason(gemv, m, tables))),
                ErrorCode::L2Range => {
                    // A range error means the shape passed.
                    if let Ok(shape) = check_shape(mat, m, tables) {
                        let src_end = u64::from(m.src_addr) + shape.act_words();
                        let end = if src_end > l2_words {
                            End::Src
                        } else {
                            End::Dest
                        };
                        c.hit(BinKey::L2Range(engine, end));
                    }
                }
                _ => {}
            }
        }
        Instr::Memcpy(m) => {
            let route = m.route();
            match code {
                ErrorCode::Ok => {
                    c.hit(BinKey::MemcpyMode {
                        route,
                        async_: m.async_,
                    });
                    c.hit(BinKey::Ok(Engine::Mem));
                    let moved = match route {
                        MemRoute::HostToL2 => (l2_writes > 0).then_some(Route::MemcpyHostToL2),
                        MemRoute::L2ToHost => (host_writes > 0).then_some(Route::MemcpyL2ToHost),
                        MemRoute::L2ToL2 => (l2_writes > 0).then_some(Route::MemcpyL2ToL2),
                    };
                    if let Some(moved) = moved {
                        c.hit(BinKey::Route(moved));
                    }
                }
                ErrorCode::L2Range | ErrorCode::HostRange => {
                    let len = memcpy_words(tables.get(ShapeTable::Fmap, m.shape_ptr_addr));
                    let src_size = match route {
                        MemRoute::HostToL2 => u64::from(HOST_WORDS),
                        _ => l2_words,
                    };
                    let src_bad = u64::from(m.src_addr) + len > src_size;
                    let end = if src_bad { End::Src } else { End::Dest };
                    c.hit(BinKey::MemcpyRange { code, route, end });
                }
                _ => {}
            }
        }
        Instr::Memset(m) => {
            if ok {
                c.hit(BinKey::MemsetTable(m.dest_cache));
                c.hit(BinKey::Ok(Engine::Memset));
            }
        }
        Instr::Cvo(v) => {
            let words = u64::from(v.length).div_ceil(8);
            let vector_base = u64::from(v.src_addr) + u64::from(v.func == CvoFunc::Scale);
            if code == ErrorCode::Ok {
                let f = v.func;
                c.hit(BinKey::Ok(Engine::Cvo));
                let shape = match v.length % 8 {
                    _ if v.length == 0 => CvoShape::LenZero,
                    0 => CvoShape::LenWholeWords,
                    _ => CvoShape::LenEndsMidWord,
                };
                c.hit(BinKey::CvoShape(shape));
                if v.length != 0 {
                    c.hit(BinKey::Route(Route::L2ToCvo));
                    c.hit(BinKey::CvoShape(if u64::from(v.dst_addr) <= vector_base {
                        CvoShape::Ascending
                    } else {
                        CvoShape::Descending
                    }));
                }
                if l2_writes > 0 {
                    c.hit(BinKey::Route(Route::CvoToL2));
                }
                let mode = if v.async_ {
                    CvoFlag::Async
                } else {
                    CvoFlag::Sync
                };
                c.hit(BinKey::CvoFlag(f, mode));
                if v.sub_emax() {
                    c.hit(BinKey::CvoFlag(f, CvoFlag::SubEmax));
                }
                if v.accm() {
                    c.hit(BinKey::CvoFlag(f, CvoFlag::Accm));
                }
                if f == CvoFunc::Scale && v.recip_scale() {
                    c.hit(BinKey::CvoFlag(f, CvoFlag::RecipScale));
                }
            }
            if code == ErrorCode::L2Range {
                let src_end = vector_base + words;
                let end = if src_end > l2_words {
                    End::Src
                } else {
                    End::Dest
                };
                c.hit(BinKey::L2Range(Engine::Cvo, end));
                let (_, dst_words) = cvo_range_words(v.func, v.length);
                let failing_end = match end {
                    End::Src => src_end,
                    End::Dest => u64::from(v.dst_addr) + dst_words,
                };
                if failing_end == l2_words + 1 {
                    c.hit(BinKey::CvoRangeEdge(CvoRangeClass::of(v.func), end));
                }
            }
        }
    }
}

/// Which check of SHAPE failed: the one that did, when only one did, else
/// `Several` (K and K' count as one dimension: K = K' = 0 fails only the
/// zero check).
fn shape_reason(gemv: bool, op: &MatOp, tables: &Tables) -> ShapeReason {
    let f: ShapeEntry = tables.get(ShapeTable::Fmap, op.shape_ptr_addr);
    let w: ShapeEntry = tables.get(ShapeTable::Weight, op.size_ptr_addr);
    let (m, k, k2, n) = (
        u64::from(f.a),
        u64::from(f.b),
        u64::from(w.a),
        u64::from(w.b),
    );
    let failing: Vec<ShapeReason> = [
        (m == 0, ShapeReason::ZeroM),
        (k == 0 || k2 == 0, ShapeReason::ZeroK),
        (n == 0, ShapeReason::ZeroN),
        (k != k2, ShapeReason::KMismatch),
        (gemv && m != 1, ShapeReason::MNotOne),
        (m * k.div_ceil(16) > MAT_L1_WORDS, ShapeReason::OverL1),
        (m * n.div_ceil(8) > MAT_ACC_WORDS, ShapeReason::OverAcc),
    ]
    .into_iter()
    .filter_map(|(fails, reason)| fails.then_some(reason))
    .collect();
    match failing[..] {
        [only] => only,
        _ => ShapeReason::Several,
    }
}

fn overlap(a: &Option<Range>, b: &Option<Range>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.overlaps(b))
}

/// The (kind, resource) hazards of `younger` on `older` (docs/semantics.md
/// section 8): RAW, the older writes what the younger reads; WAR, the
/// older reads what the younger writes; WAW, both write it.
pub(crate) fn hazards(older: &Footprint, younger: &Footprint) -> Vec<(HazardKind, Resource)> {
    let (o, y) = (older, younger);
    let in_reads = |entry: &Option<(ShapeTable, u8)>, reads: &[(ShapeTable, u8)]| {
        entry.is_some_and(|e| reads.contains(&e))
    };
    use HazardKind::{Raw, War, Waw};
    use Resource::{EMax, Host, Table, L2};
    let found = [
        (Raw, L2, overlap(&o.l2_write, &y.l2_read)),
        (War, L2, overlap(&o.l2_read, &y.l2_write)),
        (Waw, L2, overlap(&o.l2_write, &y.l2_write)),
        (Raw, Host, overlap(&o.host_write, &y.host_read)),
        (War, Host, overlap(&o.host_read, &y.host_write)),
        (Waw, Host, overlap(&o.host_write, &y.host_write)),
        (Raw, Table, in_reads(&o.table_write, &y.table_reads)),
        (War, Table, in_reads(&y.table_write, &o.table_reads)),
        (
            Waw,
            Table,
            o.table_write.is_some() && o.table_write == y.table_write,
        ),
        (Raw, EMax, o.emax_write && y.emax_read),
        (War, EMax, o.emax_read && y.emax_write),
        (Waw, EMax, o.emax_write && y.emax_write),
    ];
    found
        .into_iter()
        .filter(|f| f.2)
        .map(|(k, r, _)| (k, r))
        .collect()
}

impl NpuModel for Probe {
    forward_to_inner!();

    fn set_weight_source(&mut self, source: pccx_golden::streams::WeightSource) {
        self.inner.set_weight_source(source)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn reset(&mut self) -> Result<(), ModelError> {
        self.inner.reset()?;
        self.coverage.cases += 1;
        self.instr_lo = 0;
        self.in_flight.clear();
        self.events.clear();
        Ok(())
    }

    fn reg_write(&mut self, offset: u32, value: u32) -> Result<AxiResp, ModelError> {
        if offset != reg::INSTR_HI {
            let resp = self.inner.reg_write(offset, value)?;
            if offset == reg::INSTR_LO {
                self.instr_lo = value;
            }
            return Ok(resp);
        }
        let word = u64::from(value) << 32 | u64::from(self.instr_lo);
        let tables = self.inner.tables().clone();
        let resp = self.inner.reg_write(offset, value)?;
        let events = self.inner.take_events();
        self.sample(word, &tables, &events);
        self.events.extend(events);
        Ok(resp)
    }

    fn reg_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError> {
        self.inner.reg_read(offset)
    }

    fn drain(&mut self) -> Result<(), ModelError> {
        self.inner.drain()
    }

    fn take_events(&mut self) -> Vec<Event> {
        let mut events = std::mem::take(&mut self.events);
        events.extend(self.inner.take_events());
        events
    }

    fn weight_beats_consumed(&mut self) -> [u64; 2] {
        self.inner.weight_beats_consumed()
    }

    fn clock(&mut self) -> Option<&mut dyn pccx_golden::model::Clocked> {
        self.inner.clock()
    }
}
