//! The program builder: a workload's steps as one pccx program, with the L2
//! and host memory it lays out, the shape-table entries it sets and the
//! weight beats it streams (docs/workloads.md, "The builder").

use crate::config::HwConfig;
use crate::stimulus::{GenOptions, TestCase};
use pccx_golden::asm::{Item, Program};
use pccx_golden::exec::mat::{MAT_ACC_WORDS, MAT_L1_WORDS};
use pccx_golden::isa::layout;
use pccx_golden::isa::{Cvo, CvoFunc, Instr, MatOp, Memcpy, Memset};
use pccx_golden::model::{ShapeEntry, ShapeTable, Word, HOST_WORDS, SHAPE_ENTRIES};
use pccx_golden::numerics::w4a8;
use pccx_golden::numerics::Bf16;
use pccx_golden::streams::{MATRIX_STREAM, VECTOR_STREAM};
use pccx_golden::Engine;

/// Why a workload's program cannot be built on a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A region of memory, in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub addr: u32,
    pub words: u32,
}

/// Flags of a GEMV/GEMM the builder emits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatFlags {
    pub findemax: bool,
    pub accm: bool,
}

/// Flags of a CVO the builder emits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CvoFlags {
    pub sub_emax: bool,
    pub recip_scale: bool,
    pub accm: bool,
}

/// Builds one program: instructions in order, the L2 and host regions they
/// use (bump-allocated from 0, nothing freed: a program is one step), the
/// host data it starts with, and the weight beats of every GEMV and GEMM in
/// the order the engines take them.
pub struct ProgramBuilder {
    config: HwConfig,
    items: Vec<Item>,
    l2_next: u32,
    host_next: u32,
    host_patches: Vec<(u32, Vec<Word>)>,
    entries: [Vec<ShapeEntry>; 2],
    streams: [Vec<Word>; 2],
}

impl ProgramBuilder {
    pub fn new(config: &HwConfig) -> ProgramBuilder {
        ProgramBuilder {
            config: *config,
            items: Vec::new(),
            l2_next: 0,
            host_next: 0,
            host_patches: Vec::new(),
            entries: [Vec::new(), Vec::new()],
            streams: [Vec::new(), Vec::new()],
        }
    }

    /// `words` words of L2, or why they do not fit.
    pub fn l2(&mut self, what: &str, words: u32) -> Result<Region, BuildError> {
        let addr = self.l2_next;
        let end = u64::from(addr) + u64::from(words);
        if end > u64::from(self.config.l2_words) {
            return Err(BuildError(format!(
                "{what} ({words} words at L2 word {addr}) does not fit in {}'s L2 of {} words",
                self.config.name, self.config.l2_words
            )));
        }
        self.l2_next = end as u32;
        Ok(Region { addr, words })
    }

    /// Host memory holding `data` when the program starts (what the driver
    /// left there).
    pub fn host_data(&mut self, what: &str, data: Vec<Word>) -> Result<Region, BuildError> {
        let region = self.host(what, data.len() as u32)?;
        self.host_patches.push((region.addr, data));
        Ok(region)
    }

    /// Host memory for results the program copies out.
    pub fn host(&mut self, what: &str, words: u32) -> Result<Region, BuildError> {
        let addr = self.host_next;
        let end = u64::from(addr) + u64::from(words);
        if end > u64::from(HOST_WORDS) {
            return Err(BuildError(format!(
                "{what} ({words} words) does not fit in host memory ({HOST_WORDS} words)"
            )));
        }
        self.host_next = end as u32;
        Ok(Region { addr, words })
    }

    /// The index of a shape-table entry holding `entry`, set by a MEMSET the
    /// first time this program needs it.
    fn entry(&mut self, table: ShapeTable, entry: ShapeEntry) -> Result<u8, BuildError> {
        let entries = &mut self.entries[table as usize];
        if let Some(i) = entries.iter().position(|e| *e == entry) {
            return Ok(i as u8);
        }
        if entries.len() == SHAPE_ENTRIES {
            return Err(BuildError(format!(
                "the program needs more than {SHAPE_ENTRIES} {table:?} shape entries"
            )));
        }
        entries.push(entry);
        let index = (entries.len() - 1) as u8;
        self.push(Instr::Memset(Memset {
            dest_cache: table,
            dest_addr: index,
            a_value: entry.a,
            b_value: entry.b,
            c_value: entry.c,
            reserved: 0,
        }));
        Ok(index)
    }

    fn push(&mut self, instr: Instr) {
        self.items.push(Item::Instr(instr.encode()));
    }

    /// The fmap entry of a MEMCPY of `words` words: `a * b * c = 8 * words`
    /// BF16 elements.
    fn copy_entry(&mut self, words: u32) -> Result<u8, BuildError> {
        let b = u16::try_from(words).map_err(|_| {
            BuildError(format!(
                "a copy of {words} words is too long for one MEMCPY"
            ))
        })?;
        self.entry(ShapeTable::Fmap, ShapeEntry { a: 8, b, c: 1 })
    }

    /// MEMCPY host -> L2 of all of `from` into `to`.
    pub fn copy_in(&mut self, from: Region, to: Region) -> Result<(), BuildError> {
        self.copy(true, false, from, to)
    }

    /// MEMCPY L2 -> host of all of `from` into `to`.
    pub fn copy_out(&mut self, from: Region, to: Region) -> Result<(), BuildError> {
        self.copy(false, true, from, to)
    }

    fn copy(
        &mut self,
        from_host: bool,
        to_host: bool,
        from: Region,
        to: Region,
    ) -> Result<(), BuildError> {
        assert_eq!(
            from.words, to.words,
            "a copy between regions of different sizes"
        );
        let shape = self.copy_entry(from.words)?;
        // async: the conflict rule alone orders it after what wrote its
        // source and before what reads its destination (CONTRACT section 8).
        self.push(Instr::Memcpy(Memcpy {
            from_device: from_host,
            to_device: to_host,
            dest_addr: to.addr,
            src_addr: from.addr,
            aux_addr: 0,
            shape_ptr_addr: shape,
            async_: true,
        }));
        Ok(())
    }

    /// A GEMV (`engine` Gemv, `m` = 1) or GEMM: `m x k` INT8 activations at
    /// `src`, the `k x n` INT4 `weights` (row-major) and their per-column
    /// BF16 `scales` streamed, `m x n` BF16 to `dest`.
    #[allow(clippy::too_many_arguments)]
    pub fn mat(
        &mut self,
        engine: Engine,
        src: u32,
        dest: u32,
        (m, k, n): (usize, usize, usize),
        weights: &[i8],
        scales: &[Bf16],
        flags: MatFlags,
    ) -> Result<(), BuildError> {
        let dims = |v: usize, what: &str| {
            u16::try_from(v)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| BuildError(format!("{what} = {v} is no GEMV/GEMM dimension")))
        };
        let (m16, k16, n16) = (dims(m, "M")?, dims(k, "K")?, dims(n, "N")?);
        if (m * k.div_ceil(16)) as u64 > MAT_L1_WORDS || (m * n.div_ceil(8)) as u64 > MAT_ACC_WORDS
        {
            return Err(BuildError(format!(
                "a {m} x {k} x {n} GEMV/GEMM is over the L1 or accumulator limit"
            )));
        }
        let fmap = self.entry(
            ShapeTable::Fmap,
            ShapeEntry {
                a: m16,
                b: k16,
                c: 0,
            },
        )?;
        let size = self.entry(
            ShapeTable::Weight,
            ShapeEntry {
                a: k16,
                b: n16,
                c: 0,
            },
        )?;
        let beats = w4a8::weight_beats(k, n, weights, Some(scales))
            .map_err(|e| BuildError(format!("weights of a {k} x {n} GEMV/GEMM: {e:?}")))?;
        let op = MatOp {
            dest_reg: dest,
            src_addr: src,
            flags: layout::mat::FLAG_W_SCALE
                | if flags.findemax {
                    layout::mat::FLAG_FINDEMAX
                } else {
                    0
                }
                | if flags.accm {
                    layout::mat::FLAG_ACCM
                } else {
                    0
                },
            size_ptr_addr: size,
            shape_ptr_addr: fmap,
            parallel_lane: 0,
            reserved: 0,
        };
        match engine {
            Engine::Gemv => {
                self.streams[VECTOR_STREAM].extend(beats);
                self.push(Instr::Gemv(op));
            }
            Engine::Gemm => {
                self.streams[MATRIX_STREAM].extend(beats);
                self.push(Instr::Gemm(op));
            }
            other => panic!("{} is not a matrix engine", other.name()),
        }
        Ok(())
    }

    /// A CVO of `length` elements.
    pub fn cvo(
        &mut self,
        func: CvoFunc,
        src: u32,
        dst: u32,
        length: usize,
        flags: CvoFlags,
    ) -> Result<(), BuildError> {
        let length = u16::try_from(length)
            .map_err(|_| BuildError(format!("a CVO of {length} elements is too long")))?;
        self.push(Instr::Cvo(Cvo {
            func,
            src_addr: src,
            dst_addr: dst,
            length,
            flags: if flags.sub_emax {
                layout::cvo::FLAG_SUB_EMAX
            } else {
                0
            } | if flags.recip_scale {
                layout::cvo::FLAG_RECIP_SCALE
            } else {
                0
            } | if flags.accm {
                layout::cvo::FLAG_ACCM
            } else {
                0
            },
            async_: true,
        }));
        Ok(())
    }

    /// The case the driver runs: this program, its host data and its
    /// weight beats, on images from `seed` (the words it never reads).
    pub fn finish(self, seed: u64) -> TestCase {
        let options = GenOptions::for_config(&self.config, 0);
        let mut case = TestCase::directed(seed, &options, Program { items: self.items });
        case.host_patches = self.host_patches;
        case.weight_prefix = self.streams;
        case
    }
}
