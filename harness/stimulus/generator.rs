//! The constrained-random program generator (docs/stimulus.md).
//!
//! It keeps a shadow of the fmap shape table (it wrote every entry itself,
//! and the table is zero after reset), so it knows the exact length of every
//! MEMCPY it emits. That is what lets it aim: overlaps with recent accesses
//! on purpose, copies that end exactly at a memory's last word or one word
//! past it.

use super::{GenOptions, Rng};
use pccx_golden::asm::{Item, Program};
use pccx_golden::exec::mat::{MAT_ACC_WORDS, MAT_L1_WORDS};
use pccx_golden::footprint::cvo_range_words;
use pccx_golden::isa::layout::{self, Field};
use pccx_golden::isa::{Cvo, CvoFunc, Instr, MatOp, Memcpy, Memset};
use pccx_golden::model::{reg, ShapeEntry, ShapeTable, HOST_WORDS, SHAPE_ENTRIES};
use pccx_golden::tables::memcpy_words;
use pccx_golden::Engine;

/// Largest value of the 17-bit address fields.
const ADDR_MAX: u64 = (1 << 17) - 1;
/// Words in each hot window: small against the copy lengths (up to ~40
/// words for ordinary shapes), so that accesses overlap often.
const HOT_WINDOW_WORDS: u64 = 128;
/// How many recent accesses a deliberate hazard may pick its partner from.
const RECENT_ACCESSES: usize = 8;
/// Most fmap entries in use at once: few, so MEMSETs rewrite entries that
/// pending MEMCPYs read (table hazards).
const MAX_LIVE_ENTRIES: usize = 6;
/// K and N values around the multiples of 8, 16 and 32 that the packing
/// (16 INT8 or 8 BF16 per word) and the 32-column weight tiles turn on.
const MAT_EDGE_DIMS: [u16; 13] = [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65];
/// Largest K of an ordinary GEMV/GEMM (and of a chained one).
const MAT_K_MAX: u64 = 96;
/// Largest N of an ordinary GEMV/GEMM.
const MAT_N_MAX: u64 = 80;
/// Largest M of an ordinary GEMM.
const MAT_M_MAX: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mem {
    L2,
    Host,
}

/// A range of words an emitted MEMCPY reads or writes.
#[derive(Clone, Copy, Debug)]
struct Access {
    mem: Mem,
    start: u64,
    len: u64,
    write: bool,
}

/// The engines in the order their weights are drawn from: the draw picks
/// an index into this list, so a seed's programs depend on it.
const DRAW_ORDER: [Engine; 5] = [
    Engine::Memset,
    Engine::Mem,
    Engine::Gemv,
    Engine::Gemm,
    Engine::Cvo,
];

/// Where a GEMV/GEMM put its output, for the next one to read.
#[derive(Clone, Copy, Debug)]
struct MatOut {
    dest: u64,
    m: u64,
    n: u64,
}

struct Generator<'a> {
    rng: Rng,
    opt: &'a GenOptions,
    fmap: [ShapeEntry; SHAPE_ENTRIES],
    /// The weight table as the generator's MEMSETs left it.
    weight: [ShapeEntry; SHAPE_ENTRIES],
    live: Vec<u8>,
    /// Weight-table entries GEMV/GEMM shapes were written to (at most
    /// `MAX_LIVE_ENTRIES`).
    weight_live: Vec<u8>,
    /// GEMV or GEMM is in the mix. Without them nothing here draws from the
    /// PRNG differently from slice 1, so slice-1 weights give slice-1
    /// programs.
    mat: bool,
    /// The latest GEMV/GEMM output expected to be written.
    last_mat: Option<MatOut>,
    /// Instructions already decided (the CVOs of a prefix), emitted one a
    /// slot before anything new.
    queued: Vec<u64>,
    /// The fmap entry the latest MEMSET wrote, until a MEMCPY reads it.
    fresh_entry: Option<u8>,
    recent: Vec<Access>,
    l2_hot: u64,
    host_hot: u64,
    items: Vec<Item>,
    instrs: usize,
    burst_left: u32,
    burst_kind: Option<Engine>,
    /// The next slot holds an edge probe: no idle gap before it, so that
    /// its GEMV/GEMM is still in flight when it is latched.
    probe_next: bool,
}

/// The program of `seed` under `opt`.
pub(super) fn generate(seed: u64, opt: &GenOptions) -> Program {
    let mut rng = Rng::new(seed);
    let l2_hot = rng.below(u64::from(opt.l2_words).saturating_sub(HOT_WINDOW_WORDS) + 1);
    let host_hot = rng.below(u64::from(HOST_WORDS) - HOT_WINDOW_WORDS + 1);
    let mut g = Generator {
        rng,
        opt,
        fmap: [ShapeEntry::default(); SHAPE_ENTRIES],
        weight: [ShapeEntry::default(); SHAPE_ENTRIES],
        live: Vec::new(),
        weight_live: Vec::new(),
        mat: opt.weights.gemv + opt.weights.gemm > 0,
        last_mat: None,
        queued: Vec::new(),
        fresh_entry: None,
        recent: Vec::new(),
        l2_hot,
        host_hot,
        items: Vec::new(),
        instrs: 0,
        burst_left: 0,
        burst_kind: None,
        probe_next: false,
    };
    g.prologue();
    while g.instrs < opt.instrs {
        g.slot();
    }
    Program { items: g.items }
}

impl Generator<'_> {
    fn size(&self, mem: Mem) -> u64 {
        match mem {
            Mem::L2 => u64::from(self.opt.l2_words),
            Mem::Host => u64::from(HOST_WORDS),
        }
    }

    fn emit(&mut self, word: u64) {
        self.items.push(Item::Instr(word));
        self.instrs += 1;
    }

    /// A few MEMSETs of fmap entries, so that the copies of the mix have
    /// shapes to use; the first one is never empty.
    fn prologue(&mut self) {
        let count = self.rng.range(2, 4);
        for i in 0..count {
            if self.instrs >= self.opt.instrs {
                return;
            }
            let index = self.unused_entry();
            let entry = if i == 0 {
                self.ordinary_shape()
            } else {
                self.shape()
            };
            let word = self.fmap_memset(index, entry);
            self.emit(word);
            self.maybe_idle();
        }
    }

    fn slot(&mut self) {
        if self.rng.percent(self.opt.clear_err_pct) {
            let value = self.rng.bits(32) as u32;
            self.items.push(Item::RegWrite {
                offset: reg::STATUS,
                value,
            });
        }
        if self.rng.percent(self.opt.bad_reg_write_pct) {
            // Read-only and unmapped offsets: SLVERR, no effect.
            let offset = *self.rng.pick(&[reg::RETIRED, 0x10, 0x14, 0x100, 0xFFC]);
            let value = self.rng.bits(32) as u32;
            self.items.push(Item::RegWrite { offset, value });
        }
        if self.burst_left == 0 && self.rng.percent(self.opt.burst_pct) {
            // Longer than a FIFO is deep, mostly of one engine, so that FIFO
            // fills and the 0x04 write is back-pressured.
            let depth = self.opt.fifo_depth;
            self.burst_left = depth + self.rng.range_u32(1, depth + 2);
            self.burst_kind = Some(self.legal_kind());
        }
        let word = if !self.queued.is_empty() {
            self.queued.remove(0)
        } else if self.rng.percent(self.opt.illegal_pct) {
            self.illegal()
        } else {
            let kind = match self.burst_kind {
                Some(kind) if self.burst_left > 0 && self.rng.percent(75) => kind,
                _ => self.legal_kind(),
            };
            match kind {
                Engine::Memset => self.memset(),
                Engine::Mem => self.memcpy(),
                Engine::Gemv | Engine::Gemm => self.matop(kind),
                Engine::Cvo => self.cvo(),
            }
        };
        self.emit(word);
        if self.burst_left > 0 {
            self.burst_left -= 1;
        } else if std::mem::take(&mut self.probe_next) {
            // No gap: the probe follows its GEMV/GEMM at once.
        } else {
            self.maybe_idle();
        }
    }

    /// The engine of the next legal instruction, drawn from the mix.
    fn legal_kind(&mut self) -> Engine {
        let w = self.opt.weights;
        DRAW_ORDER[self.rng.weighted(&DRAW_ORDER.map(|e| w.of(e)))]
    }

    fn maybe_idle(&mut self) {
        if self.opt.max_idle == 0 || !self.rng.percent(self.opt.idle_pct) {
            return;
        }
        let max = self.opt.max_idle;
        // Mostly short gaps (engines still busy), some long (engines drain).
        let cycles = match self.rng.below(10) {
            0..=5 => self.rng.range_u32(1, 4.min(max)),
            6..=8 => self.rng.range_u32(1, 32.min(max)),
            _ => self.rng.range_u32(1, max),
        };
        self.items.push(Item::Idle(cycles));
    }

    // ----- shapes -------------------------------------------------------

    /// Small shapes; a*b*c up to 300 elements, often not a multiple of 8.
    fn ordinary_shape(&mut self) -> ShapeEntry {
        ShapeEntry {
            a: self.rng.range(1, 3) as u16,
            b: self.rng.range(1, 10) as u16,
            c: self.rng.range(1, 10) as u16,
        }
    }

    fn shape(&mut self) -> ShapeEntry {
        let r = self.rng.below(100) as u32;
        let long = self.opt.long_copy_pct;
        let dim = |rng: &mut Rng| rng.range(1, 10) as u16;
        match r {
            // Hundreds of words: a*b*c = 8c.
            _ if r < long => ShapeEntry {
                a: 1,
                b: 8,
                c: self.rng.range(100, 300) as u16,
            },
            // Empty: one zero dimension, the others possibly huge (the
            // product must be computed, not assumed).
            _ if r < long + 10 => {
                let big = self.rng.percent(30);
                let mut d = [0u16; 3];
                for v in &mut d {
                    *v = if big { u16::MAX } else { dim(&mut self.rng) };
                }
                d[self.rng.below(3) as usize] = 0;
                ShapeEntry {
                    a: d[0],
                    b: d[1],
                    c: d[2],
                }
            }
            // Whole words.
            _ if r < long + 20 => ShapeEntry {
                a: 1,
                b: 8 * self.rng.range(1, 4) as u16,
                c: dim(&mut self.rng),
            },
            // One element: one word, seven elements of padding.
            _ if r < long + 25 => ShapeEntry { a: 1, b: 1, c: 1 },
            // Far larger than any memory: always a range error.
            _ if r < long + 28 => ShapeEntry {
                a: self.rng.range(1000, 65535) as u16,
                b: self.rng.range(1000, 65535) as u16,
                c: self.rng.range(1, 65535) as u16,
            },
            _ => self.ordinary_shape(),
        }
    }

    /// A table index, the field's edges often: entry 0 (also what a
    /// footprint without a table write holds in its entry field, so a
    /// table conflict check that looks at that field without its enable
    /// shows only against a MEMSET of entry 0) and entry 63.
    /// No extra draw with `entry_edge_pct` 0 (the programs of earlier
    /// versions).
    fn entry_index(&mut self) -> u8 {
        if self.opt.entry_edge_pct > 0 && self.rng.percent(self.opt.entry_edge_pct) {
            if self.rng.below(3) < 2 {
                0
            } else {
                SHAPE_ENTRIES as u8 - 1
            }
        } else {
            self.rng.below(SHAPE_ENTRIES as u64) as u8
        }
    }

    fn unused_entry(&mut self) -> u8 {
        loop {
            let index = self.entry_index();
            if !self.live.contains(&index) {
                return index;
            }
        }
    }

    // ----- MEMSET -------------------------------------------------------

    fn fmap_memset(&mut self, index: u8, entry: ShapeEntry) -> u64 {
        self.fmap[usize::from(index)] = entry;
        if !self.live.contains(&index) {
            if self.live.len() == MAX_LIVE_ENTRIES {
                let evicted = self.rng.below(MAX_LIVE_ENTRIES as u64) as usize;
                self.live.swap_remove(evicted);
            }
            self.live.push(index);
        }
        self.fresh_entry = Some(index);
        self.memset_word(ShapeTable::Fmap, index, entry)
    }

    fn memset_word(&mut self, table: ShapeTable, index: u8, entry: ShapeEntry) -> u64 {
        if table == ShapeTable::Weight {
            self.weight[usize::from(index)] = entry;
        }
        Instr::Memset(Memset {
            dest_cache: table,
            dest_addr: index,
            a_value: entry.a,
            b_value: entry.b,
            c_value: entry.c,
            reserved: self.rng.bits(4) as u8,
        })
        .encode()
    }

    fn memset(&mut self) -> u64 {
        match self.rng.below(100) {
            // A GEMV/GEMM shape in the weight table, mostly over an entry a
            // queued GEMV/GEMM may read (WAR on the table).
            0..=11 if self.mat && self.rng.percent(50) => {
                let index = self.weight_entry();
                let k = match self.live.is_empty() {
                    true => self.mat_dim(MAT_K_MAX),
                    false => self.fmap[usize::from(*self.rng.pick(&self.live))].b,
                };
                let entry = ShapeEntry {
                    a: k,
                    b: self.mat_dim(MAT_N_MAX),
                    c: self.rng.bits(16) as u16,
                };
                self.memset_word(ShapeTable::Weight, index, entry)
            }
            // The weight table: no MEMCPY reads it, but its entries are
            // architectural state all the same.
            0..=11 => {
                let index = self.entry_index();
                let entry = ShapeEntry {
                    a: self.rng.bits(16) as u16,
                    b: self.rng.bits(16) as u16,
                    c: self.rng.bits(16) as u16,
                };
                self.memset_word(ShapeTable::Weight, index, entry)
            }
            // Rewrite an entry in use: WAR/WAW on the table against
            // pending MEMCPYs and MEMSETs.
            12..=79 if !self.live.is_empty() => {
                let index = *self.rng.pick(&self.live);
                let entry = self.shape();
                self.fmap_memset(index, entry)
            }
            _ => {
                let index = self.entry_index();
                let entry = self.shape();
                self.fmap_memset(index, entry)
            }
        }
    }

    // ----- MEMCPY -------------------------------------------------------

    /// The shape pointer of a copy: often the entry just written (RAW on
    /// the table), mostly one in use, sometimes any (usually empty).
    fn copy_entry(&mut self) -> u8 {
        let r = self.rng.below(100);
        if r < 35 {
            if let Some(index) = self.fresh_entry.take() {
                return index;
            }
        }
        if r < 92 && !self.live.is_empty() {
            return *self.rng.pick(&self.live);
        }
        self.rng.below(SHAPE_ENTRIES as u64) as u8
    }

    fn memcpy(&mut self) -> u64 {
        // (from_device, to_device): host -> L2, L2 -> host, L2 -> L2.
        let (from_host, to_host) = *self
            .rng
            .pick(&[(true, false), (false, true), (false, false)]);
        let src_mem = if from_host { Mem::Host } else { Mem::L2 };
        let dst_mem = if to_host { Mem::Host } else { Mem::L2 };
        let shape_ptr = self.copy_entry();
        let len = memcpy_words(self.fmap[usize::from(shape_ptr)]);

        let (src, dst) = if self.rng.percent(self.opt.range_err_pct) {
            self.edge_operands(src_mem, dst_mem, len)
        } else {
            let src = self.operand(src_mem, len, false);
            let dst = if src_mem == Mem::L2 && dst_mem == Mem::L2 && self.rng.percent(35) {
                self.overlapping_l2_dst(src, len)
            } else {
                self.operand(dst_mem, len, true)
            };
            (src, dst)
        };
        self.remember(Access {
            mem: src_mem,
            start: src,
            len,
            write: false,
        });
        self.remember(Access {
            mem: dst_mem,
            start: dst,
            len,
            write: true,
        });

        Instr::Memcpy(Memcpy {
            from_device: from_host,
            to_device: to_host,
            dest_addr: dst as u32,
            src_addr: src as u32,
            aux_addr: self.rng.bits(17) as u32,
            shape_ptr_addr: shape_ptr,
            async_: self.rng.percent(50),
        })
        .encode()
    }

    /// A CVO's source and destination (start, words) as hazard partners.
    fn remember_cvo(&mut self, src: (u64, u64), dst: (u64, u64)) {
        for ((start, len), write) in [(src, false), (dst, true)] {
            self.remember(Access {
                mem: Mem::L2,
                start,
                len,
                write,
            });
        }
    }

    fn remember(&mut self, access: Access) {
        // Only accesses that lie in memory make good hazard partners.
        if access.len == 0 || access.start + access.len > self.size(access.mem) {
            return;
        }
        if self.recent.len() == RECENT_ACCESSES {
            self.recent.remove(0);
        }
        self.recent.push(access);
    }

    /// An in-range start for `len` words: overlapping a recent access
    /// (RAW for a read; WAR or WAW for a write), in the hot window, or
    /// anywhere.
    fn operand(&mut self, mem: Mem, len: u64, write: bool) -> u64 {
        let size = self.size(mem);
        if len > size {
            // Cannot be in range; any address will do.
            return self.rng.range(0, ADDR_MAX);
        }
        let last_start = size - len;
        let r = self.rng.below(100) as u32;
        let start = if r < self.opt.hazard_pct {
            // A reader overlaps a write (RAW); a writer a read (WAR) or a
            // write (WAW).
            let partners: Vec<Access> = self
                .recent
                .iter()
                .filter(|a| a.mem == mem && (write || a.write))
                .copied()
                .collect();
            if partners.is_empty() || len == 0 {
                self.hot(mem)
            } else {
                let p = *self.rng.pick(&partners);
                // At p's edges. Just past its last word, or ending just
                // before its first: no conflict, but a footprint one word
                // too long at either end makes one (and a wrong start
                // cycle). Sharing only p's last word, or only its first: a
                // conflict that a footprint one word (or half a range) too
                // short at that end misses. No draw at all with abut_pct 0,
                // so older seeds keep their programs.
                let abut = self.opt.abut_pct > 0 && self.rng.percent(self.opt.abut_pct);
                let edge = if abut { self.rng.below(4) } else { 4 };
                if edge == 0 {
                    p.start + p.len
                } else if edge == 1 {
                    p.start.saturating_sub(len)
                } else if edge == 2 {
                    p.start + p.len.max(1) - 1
                } else if edge == 3 {
                    (p.start + 1).saturating_sub(len)
                } else {
                    // Any start whose range shares a word with p's.
                    let lo = p.start.saturating_sub(len - 1);
                    self.rng.range(lo, p.start + p.len - 1)
                }
            }
        } else if r < 92 {
            self.hot(mem)
        } else {
            self.rng.range(0, last_start)
        };
        start.min(last_start)
    }

    fn hot(&mut self, mem: Mem) -> u64 {
        let base = match mem {
            Mem::L2 => self.l2_hot,
            Mem::Host => self.host_hot,
        };
        base + self.rng.below(HOT_WINDOW_WORDS)
    }

    /// An L2 -> L2 destination overlapping its own source, ahead of it or
    /// behind it (or equal): memmove must copy in the right direction.
    fn overlapping_l2_dst(&mut self, src: u64, len: u64) -> u64 {
        let size = self.size(Mem::L2);
        if len == 0 || len > size {
            return src;
        }
        let lo = src.saturating_sub(len - 1);
        self.rng.range(lo, src + len - 1).min(size - len)
    }

    /// Operands for a copy aimed at a memory edge: one or both ranges end
    /// exactly at the last word (in range), one word past it, or far past.
    fn edge_operands(&mut self, src_mem: Mem, dst_mem: Mem, len: u64) -> (u64, u64) {
        if len == 0 {
            // An empty transfer touches nothing, so it is never out of
            // range, however far out its addresses are: start both at or
            // past the end (for host memory, whose end the 17-bit field
            // cannot pass, at its last word).
            let src = self.rng.range(self.size(src_mem).min(ADDR_MAX), ADDR_MAX);
            let dst = self.rng.range(self.size(dst_mem).min(ADDR_MAX), ADDR_MAX);
            return (src, dst);
        }
        let (src_edge, dst_edge) = match self.rng.below(5) {
            0 | 1 => (true, false),
            2 | 3 => (false, true),
            // Both: the source is checked first, so its memory names the
            // error.
            _ => (true, true),
        };
        let src = if src_edge {
            self.edge_start(src_mem, len)
        } else {
            self.operand(src_mem, len, false)
        };
        let dst = if dst_edge {
            self.edge_start(dst_mem, len)
        } else {
            self.operand(dst_mem, len, true)
        };
        (src, dst)
    }

    fn edge_start(&mut self, mem: Mem, len: u64) -> u64 {
        let size = self.size(mem);
        let Some(at_edge) = size.checked_sub(len) else {
            // Longer than the memory: out of range wherever it starts.
            return self.rng.range(0, ADDR_MAX);
        };
        let start = match self.rng.below(3) {
            0 => at_edge,
            1 => at_edge + 1,
            _ => self.rng.range(at_edge + 1, ADDR_MAX.max(at_edge + 1)),
        };
        // The field is 17 bits: a host copy of one word cannot start past
        // the last host word, so it ends at the edge instead.
        start.min(ADDR_MAX)
    }

    // ----- GEMV and GEMM --------------------------------------------------

    /// A K or N dimension: half the time one of the packing edges, else
    /// uniform in `1..=max`.
    fn mat_dim(&mut self, max: u64) -> u16 {
        if self.rng.percent(50) {
            *self.rng.pick(&MAT_EDGE_DIMS)
        } else {
            self.rng.range(1, max) as u16
        }
    }

    /// A weight-table entry for a new GEMV/GEMM shape: mostly one in use.
    fn weight_entry(&mut self) -> u8 {
        if !self.weight_live.is_empty() && self.rng.percent(50) {
            return *self.rng.pick(&self.weight_live);
        }
        let index = self.entry_index();
        if !self.weight_live.contains(&index) {
            if self.weight_live.len() == MAX_LIVE_ENTRIES {
                let evicted = self.rng.below(MAX_LIVE_ENTRIES as u64) as usize;
                self.weight_live.swap_remove(evicted);
            }
            self.weight_live.push(index);
        }
        index
    }

    /// The (fmap a, b) = (M, K) and (weight a, b) = (K', N) a new GEMV/GEMM
    /// shape gets: ordinary (small), at a buffer limit, or bad on purpose.
    /// With `chain`, the ordinary shape reads the previous output as its
    /// activations: same M, K = 2N' (one INT8 pair per BF16, so the row
    /// strides agree), at most `MAT_K_MAX`.
    fn mat_shape(&mut self, gemv: bool, chain: Option<MatOut>) -> ((u16, u16), (u16, u16)) {
        let r = self.rng.below(100) as u32;
        let (err, limit) = (self.opt.mat_shape_err_pct, self.opt.mat_limit_pct);
        if chain.is_none() && r < err {
            return self.bad_mat_shape(gemv);
        }
        if chain.is_none() && r < err + limit {
            let (m, k, n) = self.limit_mat_shape(gemv);
            return ((m, k), (k, n));
        }
        let m = match (gemv, chain) {
            (true, _) => 1,
            (false, Some(c)) => c.m.min(MAT_M_MAX) as u16,
            (false, None) if self.rng.percent(50) => 1,
            (false, None) => self.rng.range(2, MAT_M_MAX) as u16,
        };
        let k = match chain {
            Some(c) => (2 * c.n).clamp(1, MAT_K_MAX) as u16,
            None => self.mat_dim(MAT_K_MAX),
        };
        let n = self.mat_dim(MAT_N_MAX);
        ((m, k), (k, n))
    }

    /// Exactly at a limit, legal: the L1 limit (`M * ceil(K/16) = 2048`),
    /// the accumulator limit (`M * ceil(N/8) = 512`) or both, with the other
    /// dimensions small so that the instruction stays affordable.
    fn limit_mat_shape(&mut self, gemv: bool) -> (u16, u16, u16) {
        let top =
            |rng: &mut Rng, words: u64, per: u64| rng.range(words * per - per + 1, words * per);
        if gemv {
            // M = 1: K fills L1 (32753..=32768), or N fills the
            // accumulators (4089..=4096). The long K is the expensive one
            // (4 cycles a beat on one lane: about 131,000 cycles), so it is
            // the rarer one.
            return if self.rng.percent(30) {
                let k = top(&mut self.rng, MAT_L1_WORDS, 16);
                (1, k as u16, self.rng.range(1, 8) as u16)
            } else {
                let n = top(&mut self.rng, MAT_ACC_WORDS, 8);
                (1, self.rng.range(1, 16) as u16, n as u16)
            };
        }
        // Both at once is drawn twice as often as each other kind: it is the
        // limit case random programs reach last.
        match self.rng.below(5) {
            // Both at once: 512 rows of one word each way.
            0 | 4 => {
                let k = top(&mut self.rng, MAT_L1_WORDS / 512, 16);
                (512, k as u16, self.rng.range(1, 8) as u16)
            }
            // L1 full, few columns.
            1 => {
                let m = *self.rng.pick(&[128u64, 256, 512]);
                let k = top(&mut self.rng, MAT_L1_WORDS / m, 16);
                (m as u16, k as u16, self.rng.range(1, 8) as u16)
            }
            // Accumulators full with many columns, few rows.
            2 => {
                let m = *self.rng.pick(&[1u64, 2, 64]);
                let n = top(&mut self.rng, MAT_ACC_WORDS / m, 8);
                let k = if m == 1 {
                    self.rng.range(1, 8)
                } else {
                    self.rng.range(1, 16)
                };
                (m as u16, k as u16, n as u16)
            }
            // Accumulators full with many rows.
            _ => {
                let m = *self.rng.pick(&[256u64, 512]);
                let n = top(&mut self.rng, MAT_ACC_WORDS / m, 8);
                (m as u16, self.rng.range(1, 16) as u16, n as u16)
            }
        }
    }

    /// A shape the SHAPE check must refuse (whatever the addresses).
    fn bad_mat_shape(&mut self, gemv: bool) -> ((u16, u16), (u16, u16)) {
        let small = |rng: &mut Rng| rng.range(1, 64) as u16;
        let m1 = |rng: &mut Rng, gemv: bool| if gemv { 1 } else { rng.range(1, 8) as u16 };
        // GEMV has one more kind (M != 1), GEMM draws the K mismatch twice
        // as often, GEMV a zero dimension twice and GEMM three times as
        // often (it has one more zero, M): these
        // are the SHAPE reasons a campaign reaches last (docs/coverage.md),
        // a zero one alone (M, K = K' or N) the rarest.
        let kind = match (gemv, self.rng.below(7)) {
            (false, 4) => 1,
            (true, 6) | (false, 5 | 6) => 0,
            (_, k) => k,
        };
        match kind {
            // A zero dimension; the others sometimes huge (then over a
            // limit too).
            0 => {
                let big = self.rng.percent(10);
                let mut d: [u16; 4] =
                    std::array::from_fn(|_| if big { u16::MAX } else { small(&mut self.rng) });
                if gemv {
                    d[0] = 1;
                }
                // K' = K, so that only the zero-dimension check can refuse it
                // (a K mismatch would hide a broken zero check).
                d[2] = d[1];
                // K with K' still equal (the zero check alone refuses it), K
                // alone (the K mismatch refuses it too), N, or M (GEMM only).
                // GEMM's K = K' = 0 three times in eight: its zero M shares
                // the draws, and the bin was a campaign's last to close.
                let (kk, k_alone, n) = if gemv { (2, 3, 5) } else { (3, 4, 6) };
                match self.rng.below(if gemv { 5 } else { 8 }) {
                    r if r < kk => {
                        d[1] = 0;
                        d[2] = 0;
                    }
                    r if r < k_alone => d[1] = 0,
                    r if r < n => d[3] = 0,
                    _ => d[0] = 0,
                }
                ((d[0], d[1]), (d[2], d[3]))
            }
            // K mismatch: off by one, or any other value.
            1 => {
                let k = self.mat_dim(MAT_K_MAX);
                let other = match self.rng.below(3) {
                    0 => k + 1,
                    1 => k - 1,
                    _ => self.rng.range(1, 65535) as u16,
                };
                let other = if other == k || other == 0 {
                    k + 1
                } else {
                    other
                };
                let m = m1(&mut self.rng, gemv);
                ((m, k), (other, self.mat_dim(MAT_N_MAX)))
            }
            // One past the L1 limit: M * ceil(K/16) = 2049 (M = 1 or 3, the
            // divisors that leave the accumulators in range).
            2 => {
                let m: u64 = if gemv || self.rng.percent(50) { 1 } else { 3 };
                let words = (MAT_L1_WORDS + 1) / m;
                let k = self.rng.range(words * 16 - 15, words * 16) as u16;
                let n = self.rng.range(1, 8) as u16;
                ((m as u16, k), (k, n))
            }
            // One past the accumulator limit: M * ceil(N/8) = 513.
            3 => {
                let m: u64 = if gemv {
                    1
                } else {
                    *self.rng.pick(&[1u64, 3, 9, 19, 27, 57, 171, 513])
                };
                let words = (MAT_ACC_WORDS + 1) / m;
                let n = self.rng.range(words * 8 - 7, words * 8) as u16;
                let k = self.rng.range(1, 48) as u16;
                ((m as u16, k), (k, n))
            }
            // GEMV with M != 1.
            _ => {
                // Mostly small, so that M != 1 alone refuses it (513 and
                // 65535 are past a limit too).
                let m = *self.rng.pick(&[2u16, 3, 8, 2, 3, 8, 513, 65535]);
                let k = self.mat_dim(MAT_K_MAX);
                ((m, k), (k, self.mat_dim(MAT_N_MAX)))
            }
        }
    }

    /// The fmap and weight entries a GEMV/GEMM reads: an existing pair of
    /// matching shapes, or a new shape, with the MEMSETs that write it
    /// emitted first (when the program has room for them).
    fn mat_entries(&mut self, gemv: bool, chain: Option<MatOut>) -> (u8, u8) {
        // In a burst always, when there is a pair: no MEMSETs between the
        // instructions, so that the engine's FIFO fills.
        if chain.is_none() && (self.burst_left > 0 || self.rng.percent(40)) {
            let pairs: Vec<(u8, u8)> = self
                .live
                .iter()
                .flat_map(|&f| self.weight_live.iter().map(move |&w| (f, w)))
                .filter(|&(f, w)| {
                    let (fm, we) = (self.fmap[usize::from(f)], self.weight[usize::from(w)]);
                    // Not the rare GEMV that fills L1 again: once is enough.
                    fm.b == we.a && (!gemv || fm.a == 1) && fm.b <= 1024
                })
                .collect();
            if !pairs.is_empty() {
                return *self.rng.pick(&pairs);
            }
        }
        let ((m, k), (k2, n)) = self.mat_shape(gemv, chain);
        // The fmap entry is a MEMCPY shape too (M * K * c elements): keep
        // the copies that may read it to a few hundred words.
        let c = *self.rng.pick(&[0u16, 1, 1, 2, 3]);
        let c = if u64::from(m) * u64::from(k) * u64::from(c) > 8 * 300 {
            0
        } else {
            c
        };
        let want_f = ShapeEntry { a: m, b: k, c };
        let want_w = ShapeEntry {
            a: k2,
            b: n,
            c: self.rng.bits(16) as u16,
        };
        // An entry that already holds the shape needs no MEMSET.
        let has_f = self
            .live
            .iter()
            .copied()
            .find(|&f| (self.fmap[usize::from(f)].a, self.fmap[usize::from(f)].b) == (m, k));
        let has_w =
            self.weight_live.iter().copied().find(|&w| {
                (self.weight[usize::from(w)].a, self.weight[usize::from(w)].b) == (k2, n)
            });
        let needed = usize::from(has_f.is_none()) + usize::from(has_w.is_none());
        // Room for the MEMSETs and the instruction itself.
        let room = self.opt.instrs - self.instrs > needed;
        let f = match has_f {
            Some(f) => f,
            None if room => {
                let index = if !self.live.is_empty() && self.rng.percent(50) {
                    *self.rng.pick(&self.live)
                } else {
                    self.unused_entry()
                };
                let word = self.fmap_memset(index, want_f);
                self.emit(word);
                index
            }
            None => self.any_fmap_entry(),
        };
        let w = match has_w {
            Some(w) => w,
            None if room => {
                let index = self.weight_entry();
                let word = self.memset_word(ShapeTable::Weight, index, want_w);
                self.emit(word);
                index
            }
            None => self.rng.below(SHAPE_ENTRIES as u64) as u8,
        };
        (f, w)
    }

    fn any_fmap_entry(&mut self) -> u8 {
        if self.live.is_empty() {
            self.rng.below(SHAPE_ENTRIES as u64) as u8
        } else {
            *self.rng.pick(&self.live)
        }
    }

    /// A GEMV or GEMM (its MEMSETs emitted first, the CVOs of a prefix
    /// queued after it): random flags, `parallel_lane` and reserved bits;
    /// operands overlapping recent accesses, its own source, the previous
    /// output (a chain) or a memory edge.
    fn matop(&mut self, kind: Engine) -> u64 {
        let gemv = kind == Engine::Gemv;
        let chain = self
            .last_mat
            .filter(|_| self.rng.percent(self.opt.mat_chain_pct));
        let (f, w) = self.mat_entries(gemv, chain);
        let (fm, we) = (self.fmap[usize::from(f)], self.weight[usize::from(w)]);
        let (m, k, k2, n) = (
            u64::from(fm.a),
            u64::from(fm.b),
            u64::from(we.a),
            u64::from(we.b),
        );
        let src_len = m * k.div_ceil(16);
        let dest_len = m * n.div_ceil(8);
        let l2 = self.size(Mem::L2);
        let (src, dest) = if chain.is_none() && self.rng.percent(self.opt.range_err_pct) {
            self.mat_edge_operands(src_len, dest_len)
        } else {
            let src = match chain {
                Some(c) => c.dest,
                None => self.operand(Mem::L2, src_len, false),
            };
            let dest = if self.rng.percent(30) && src_len > 0 && dest_len > 0 {
                // Overlapping its own source, ahead, behind or exactly.
                let lo = src.saturating_sub(dest_len - 1);
                self.rng
                    .range(lo, src + src_len - 1)
                    .min(l2.saturating_sub(dest_len))
            } else {
                self.operand(Mem::L2, dest_len, true)
            };
            (src.min(ADDR_MAX), dest.min(ADDR_MAX))
        };
        self.remember(Access {
            mem: Mem::L2,
            start: src,
            len: src_len,
            write: false,
        });
        self.remember(Access {
            mem: Mem::L2,
            start: dest,
            len: dest_len,
            write: true,
        });
        let prefix =
            gemv && self.rng.percent(self.opt.mat_prefix_pct) && self.opt.instrs - self.instrs >= 5;
        let softmax = prefix && self.rng.percent(50);
        let mut flags = self.rng.bits(6) as u8;
        if softmax {
            flags |= layout::mat::FLAG_FINDEMAX;
        }
        let op = MatOp {
            dest_reg: dest as u32,
            src_addr: src as u32,
            flags,
            size_ptr_addr: w,
            shape_ptr_addr: f,
            parallel_lane: self.rng.bits(5) as u8,
            reserved: self.rng.bits(3) as u8,
        };
        let legal_shape = m >= 1
            && k >= 1
            && n >= 1
            && k == k2
            && (!gemv || m == 1)
            && src_len <= MAT_L1_WORDS
            && dest_len <= MAT_ACC_WORDS;
        let in_range = src + src_len <= l2 && dest + dest_len <= l2;
        if legal_shape && in_range {
            self.last_mat = Some(MatOut { dest, m, n });
            if prefix {
                self.queue_prefix(softmax, dest, n);
            } else if self.opt.edge_probe_pct > 0
                && self.burst_left == 0
                && self.rng.percent(self.opt.edge_probe_pct)
                && self.opt.instrs - self.instrs >= 2
            {
                let probe = self.edge_probe((src, src_len), (dest, dest_len));
                self.queued.push(probe);
                self.probe_next = true;
                // Mostly the engines drain first (the gap goes
                // before the GEMV/GEMM): then nothing but the edge decides
                // whether the probe waits for it, where in a busy program
                // both often wait for older instructions anyway.
                // Longer than `max_idle` (which bounds the random gaps):
                // a GEMM on one small array takes thousands of cycles.
                if self.opt.max_idle > 0 && self.rng.percent(60) {
                    let cycles = self
                        .rng
                        .range_u32(super::PROBE_DRAIN_MAX / 20, super::PROBE_DRAIN_MAX);
                    self.items.push(Item::Idle(cycles));
                }
            }
        }
        match kind {
            Engine::Gemv => Instr::Gemv(op),
            _ => Instr::Gemm(op),
        }
        .encode()
    }

    /// The CVO of an edge probe (`GenOptions::edge_probe_pct`) on a GEMV or
    /// GEMM that reads `read` and writes `written` (start, words): one of
    /// its operands meets one of those ranges at an edge, in range.
    fn edge_probe(&mut self, read: (u64, u64), written: (u64, u64)) -> u64 {
        // SCALE's source is one word longer than its vector, REDUCE_SUM's
        // destination one word long (none for length 0): the ranges most
        // often got wrong, so each is the probe more than a third of the
        // time, SCALE mostly as the reader and REDUCE_SUM as the writer.
        let func = match self.rng.below(20) {
            0..=6 => CvoFunc::Scale,
            7..=13 => CvoFunc::ReduceSum,
            _ => *self.rng.pick(&CvoFunc::ALL),
        };
        let cvo_reads = match func {
            CvoFunc::Scale => self.rng.percent(75),
            CvoFunc::ReduceSum => self.rng.percent(25),
            _ => self.rng.percent(50),
        };
        // RAW (the CVO reads the output); WAW (it writes the output) or WAR
        // (it writes the source).
        let partner = if cvo_reads || self.rng.percent(67) {
            written
        } else {
            read
        };
        // Lengths at the word edges: none, one element (REDUCE_SUM's
        // destination depends on length != 0), under a word, one word,
        // whole words, any.
        let length = match self.rng.below(8) {
            0 | 1 => 0,
            2 => 1,
            3 => self.rng.range(2, 7),
            4 => 8,
            5 => 8 * self.rng.range(2, 4),
            _ => self.rng.range(1, 64),
        } as u16;
        let (src_len, dst_len) = cvo_range_words(func, length);
        let own_len = if cvo_reads { src_len } else { dst_len };
        let (a, p_len) = partner;
        let l2 = self.size(Mem::L2);
        let start = if own_len == 0 {
            // An empty range conflicts with nothing: inside the partner's,
            // where one a word too long would.
            a + self.rng.below(p_len.max(1))
        } else {
            // Ending just before, sharing only the first word, only the
            // last, starting just past; those that fit in L2.
            let edges: Vec<u64> = [
                a.checked_sub(own_len),
                (a + 1).checked_sub(own_len),
                Some(a + p_len.max(1) - 1),
                Some(a + p_len),
            ]
            .into_iter()
            .flatten()
            .filter(|&s| s + own_len <= l2)
            .collect();
            if edges.is_empty() {
                a
            } else {
                *self.rng.pick(&edges)
            }
        };
        // The other operand clear of both of the GEMV/GEMM's ranges: one
        // that overlapped them (the hot window often does) would order the
        // probe behind it whatever the edge does.
        let other_len = if cvo_reads { dst_len } else { src_len };
        let clear = |at: u64| {
            [read, written]
                .iter()
                .all(|&(p, n)| at + other_len <= p || p + n.max(1) <= at)
        };
        let mut other = self.operand(Mem::L2, other_len, !cvo_reads);
        for _ in 0..8 {
            if clear(other) {
                break;
            }
            other = self.rng.range(0, l2.saturating_sub(other_len.max(1)));
        }
        let (src, dst) = if cvo_reads {
            (start, other)
        } else {
            (other, start)
        };
        let (src, dst) = (src.min(ADDR_MAX), dst.min(ADDR_MAX));
        self.remember_cvo((src, src_len), (dst, dst_len));
        // No sub_emax: an e_max dependency would order it behind a
        // findemax GEMV whatever its footprint.
        let flags = self.rng.bits(5) as u8 & !layout::cvo::FLAG_SUB_EMAX;
        cvo_word(func, src, dst, length, flags, true)
    }

    /// Operands at an L2 edge: the source, the destination or both end
    /// exactly at the last word (in range), one word past it, or start far
    /// past it.
    fn mat_edge_operands(&mut self, src_len: u64, dest_len: u64) -> (u64, u64) {
        let (src_edge, dest_edge) = match self.rng.below(5) {
            0 | 1 => (true, false),
            2 | 3 => (false, true),
            _ => (true, true),
        };
        let src = if src_edge && self.rng.percent(50) && src_len <= self.size(Mem::L2) {
            // Ending one word past L2, the edge a range check is off by one
            // at (edge_start draws it one time in three).
            self.size(Mem::L2) + 1 - src_len
        } else if src_edge {
            self.edge_start(Mem::L2, src_len)
        } else {
            self.operand(Mem::L2, src_len, false)
        };
        let dest = if dest_edge {
            self.edge_start(Mem::L2, dest_len)
        } else {
            self.operand(Mem::L2, dest_len, true)
        };
        (src, dest)
    }

    /// The CVOs that follow a GEMV in a transformer layer, reading its
    /// output: softmax (`exp(x - e_max)` needs the GEMV's findemax, then the
    /// sum of the exponentials) or RMSNorm (the sum of squares, then a
    /// root's reciprocal, ISA section 3.4), laid out as the seed lays them
    /// out: SCALE's scalar in the word before its vector. They exercise the
    /// ordering (RAW on L2 and on e_max) and the numerics on real GEMV
    /// outputs.
    fn queue_prefix(&mut self, softmax: bool, out: u64, n: u64) {
        let len = n as u16;
        let async_ = self.rng.percent(50);
        let sum_at = self.hot(Mem::L2);
        if softmax {
            let exp_at = self.hot(Mem::L2);
            self.queued
                .push(cvo_word(CvoFunc::Exp, out, exp_at, len, 0x10, async_));
            self.queued
                .push(cvo_word(CvoFunc::ReduceSum, exp_at, sum_at, len, 0, true));
        } else {
            self.queued
                .push(cvo_word(CvoFunc::ReduceSum, out, sum_at, len, 0, async_));
            let root_at = self.hot(Mem::L2);
            self.queued
                .push(cvo_word(CvoFunc::Sqrt, sum_at, root_at, 1, 0, true));
            // The factor goes in front of the GEMV's output, SCALE's layout.
            let factor_at = out.saturating_sub(1);
            self.queued
                .push(cvo_word(CvoFunc::Recip, root_at, factor_at, 1, 0, true));
            let dst = self.hot(Mem::L2);
            self.queued
                .push(cvo_word(CvoFunc::Scale, factor_at, dst, len, 0, true));
        }
    }

    /// A CVO with its operands placed like any other access (overlapping or
    /// abutting recent ones), its footprint remembered as a hazard partner:
    /// CVO reads ceil(length/8) words (one more for SCALE, its scale word)
    /// and writes as many (one for REDUCE_SUM), docs/semantics.md. Lengths
    /// favour the edges (0, under one word, whole words); some CVOs work in
    /// place or onto a shifted copy of their own vector (both walk
    /// directions of docs/cvo.md's overlap rule); some end at or past the
    /// end of L2 (REDUCE_SUM's single word also exactly at it).
    fn cvo(&mut self) -> u64 {
        let src_edge = self.rng.percent(self.opt.range_err_pct);
        let dst_kind = self.rng.below(10);
        // At an edge, two times in three a function with a range of its
        // own: SCALE's source has its scale word, REDUCE_SUM's destination
        // is one word; a range check off by that word shows only on them
        // (two functions of eight would seldom be there otherwise).
        let func = if (src_edge || dst_kind == 3) && self.rng.percent(67) {
            *self.rng.pick(&[CvoFunc::Scale, CvoFunc::ReduceSum])
        } else {
            *self.rng.pick(&CvoFunc::ALL)
        };
        let length = match self.rng.below(8) {
            0 => 0,
            1 => self.rng.range(1, 7),
            2 => 8 * self.rng.range(1, 8),
            _ => self.rng.range(1, 200),
        } as u16;
        let words = u64::from(length).div_ceil(8);
        let (src_len, dst_len) = cvo_range_words(func, length);
        let src = if src_edge && self.rng.percent(50) && src_len <= self.size(Mem::L2) {
            // Ending one word past L2, the edge a range check is off by one
            // at (edge_start draws it one time in three).
            self.size(Mem::L2) + 1 - src_len
        } else if src_edge {
            self.edge_start(Mem::L2, src_len)
        } else {
            self.operand(Mem::L2, src_len, false)
        }
        .min(ADDR_MAX);
        let vector = src + u64::from(func == CvoFunc::Scale);
        let dst = match dst_kind {
            0 => vector,                                      // in place
            1 => vector + self.rng.range(1, words.max(1)),    // shifted up: descending
            2 => vector.saturating_sub(self.rng.range(1, 3)), // shifted down: ascending
            3 => self.edge_start(Mem::L2, dst_len),
            // REDUCE_SUM's one-word destination in the last word of L2: the
            // legal edge of its range check.
            4 if func == CvoFunc::ReduceSum => self.size(Mem::L2) - 1,
            _ => self.operand(Mem::L2, dst_len, true),
        }
        .min(ADDR_MAX);
        self.remember_cvo((src, src_len), (dst, dst_len));
        Instr::Cvo(Cvo {
            func,
            src_addr: src as u32,
            dst_addr: dst as u32,
            length,
            flags: self.rng.bits(5) as u8,
            async_: self.rng.percent(50),
        })
        .encode()
    }

    // ----- illegal encodings --------------------------------------------

    /// One of the four illegal kinds, every other bit random.
    fn illegal(&mut self) -> u64 {
        let random_except = |rng: &mut Rng, fields: &[Field]| {
            let mask = fields
                .iter()
                .fold(layout::OPCODE.put(u64::MAX), |m, f| m | f.put(u64::MAX));
            rng.next_u64() & !mask
        };
        let op = layout::OPCODE;
        match self.rng.below(4) {
            0 => op.put(self.rng.range(5, 15)) | random_except(&mut self.rng, &[]),
            1 => {
                let f = layout::cvo::CVO_FUNC;
                op.put(4) | f.put(self.rng.range(8, 15)) | random_except(&mut self.rng, &[f])
            }
            2 => {
                let f = layout::memset::DEST_CACHE;
                op.put(3) | f.put(self.rng.range(2, 3)) | random_except(&mut self.rng, &[f])
            }
            _ => {
                let (from, to) = (layout::memcpy::FROM_DEVICE, layout::memcpy::TO_DEVICE);
                op.put(2) | from.put(1) | to.put(1) | random_except(&mut self.rng, &[from, to])
            }
        }
    }
}

/// A CVO word (`flags` as the raw 5-bit field).
fn cvo_word(func: CvoFunc, src: u64, dst: u64, length: u16, flags: u8, async_: bool) -> u64 {
    Instr::Cvo(Cvo {
        func,
        src_addr: src.min(ADDR_MAX) as u32,
        dst_addr: dst.min(ADDR_MAX) as u32,
        length,
        flags,
        async_,
    })
    .encode()
}
