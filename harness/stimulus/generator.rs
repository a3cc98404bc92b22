//! The constrained-random program generator (docs/stimulus.md).
//!
//! It keeps a shadow of the fmap shape table (it wrote every entry itself,
//! and the table is zero after reset), so it knows the exact length of every
//! MEMCPY it emits. That is what lets it aim: overlaps with recent accesses
//! on purpose, copies that end exactly at a memory's last word or one word
//! past it.

use super::{GenOptions, Rng};
use pccx_golden::asm::{Item, Program};
use pccx_golden::isa::layout::{self, Field};
use pccx_golden::isa::{Cvo, CvoFunc, Instr, MatOp, Memcpy, Memset};
use pccx_golden::model::{reg, ShapeEntry, ShapeTable, HOST_WORDS, SHAPE_ENTRIES};
use pccx_golden::tables::memcpy_words;

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

/// Which of the legal kinds a slot emits (index into the weight list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Memset,
    Memcpy,
    Gemv,
    Gemm,
    Cvo,
}

const KINDS: [Kind; 5] = [
    Kind::Memset,
    Kind::Memcpy,
    Kind::Gemv,
    Kind::Gemm,
    Kind::Cvo,
];

struct Generator<'a> {
    rng: Rng,
    opt: &'a GenOptions,
    fmap: [ShapeEntry; SHAPE_ENTRIES],
    live: Vec<u8>,
    /// The fmap entry the latest MEMSET wrote, until a MEMCPY reads it.
    fresh_entry: Option<u8>,
    recent: Vec<Access>,
    l2_hot: u64,
    host_hot: u64,
    items: Vec<Item>,
    instrs: usize,
    burst_left: u32,
    burst_kind: Option<Kind>,
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
        live: Vec::new(),
        fresh_entry: None,
        recent: Vec::new(),
        l2_hot,
        host_hot,
        items: Vec::new(),
        instrs: 0,
        burst_left: 0,
        burst_kind: None,
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
        let word = if self.rng.percent(self.opt.illegal_pct) {
            self.illegal()
        } else {
            let kind = match self.burst_kind {
                Some(kind) if self.burst_left > 0 && self.rng.percent(75) => kind,
                _ => self.legal_kind(),
            };
            match kind {
                Kind::Memset => self.memset(),
                Kind::Memcpy => self.memcpy(),
                Kind::Gemv | Kind::Gemm => self.matop(kind),
                Kind::Cvo => self.cvo(),
            }
        };
        self.emit(word);
        if self.burst_left > 0 {
            self.burst_left -= 1;
        } else {
            self.maybe_idle();
        }
    }

    fn legal_kind(&mut self) -> Kind {
        let w = self.opt.weights;
        KINDS[self
            .rng
            .weighted(&[w.memset, w.memcpy, w.gemv, w.gemm, w.cvo])]
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

    fn unused_entry(&mut self) -> u8 {
        loop {
            let index = self.rng.below(SHAPE_ENTRIES as u64) as u8;
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
            // The weight table: no MEMCPY reads it, but its entries are
            // architectural state all the same.
            0..=11 => {
                let index = self.rng.below(SHAPE_ENTRIES as u64) as u8;
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
                let index = self.rng.below(SHAPE_ENTRIES as u64) as u8;
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
                // Any start whose range shares a word with p's.
                let lo = p.start.saturating_sub(len - 1);
                self.rng.range(lo, p.start + p.len - 1)
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

    // ----- GEMV, GEMM, CVO (retire UNIMPLEMENTED in slice 1) ------------

    fn matop(&mut self, kind: Kind) -> u64 {
        let shape_ptr = self.copy_entry();
        let m = MatOp {
            dest_reg: self.hot(Mem::L2) as u32,
            src_addr: self.hot(Mem::L2) as u32,
            flags: self.rng.bits(6) as u8,
            size_ptr_addr: self.rng.bits(6) as u8,
            shape_ptr_addr: shape_ptr,
            parallel_lane: self.rng.bits(5) as u8,
            reserved: self.rng.bits(3) as u8,
        };
        match kind {
            Kind::Gemv => Instr::Gemv(m),
            _ => Instr::Gemm(m),
        }
        .encode()
    }

    fn cvo(&mut self) -> u64 {
        Instr::Cvo(Cvo {
            func: *self.rng.pick(&CvoFunc::ALL),
            src_addr: self.hot(Mem::L2) as u32,
            dst_addr: self.hot(Mem::L2) as u32,
            length: self.rng.range(0, 200) as u16,
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
