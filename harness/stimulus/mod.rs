//! Stimulus: the portable PRNG and the seeded constrained-random program
//! generator (docs/stimulus.md).
//!
//! Everything a test case contains follows from its seed and its
//! [`GenOptions`]: the program, and the seeds of the initial L2 and host
//! images, which [`fill`] expands. A seed printed by a failing campaign
//! therefore reproduces the failure anywhere.

pub mod cvo_sweep;
pub mod directed;
mod generator;
pub mod image;
pub mod mutate;
pub mod prng;

pub use image::{ImageRule, Window};
pub use prng::{Rng, SplitMix64};

use crate::config::HwConfig;
use pccx_golden::asm::Program;
use pccx_golden::model::{ShapeEntry, ShapeTable, Word, HOST_WORDS};
use pccx_golden::streams::WeightSource;
use pccx_golden::Engine;

/// Relative weights of the legal instruction kinds in the random mix (after
/// the prologue). Zero leaves a kind out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpWeights {
    pub memset: u32,
    pub memcpy: u32,
    pub gemv: u32,
    pub gemm: u32,
    pub cvo: u32,
}

impl OpWeights {
    /// The weight of `engine`'s instructions.
    pub fn of(&self, engine: Engine) -> u32 {
        match engine {
            Engine::Gemv => self.gemv,
            Engine::Gemm => self.gemm,
            Engine::Mem => self.memcpy,
            Engine::Memset => self.memset,
            Engine::Cvo => self.cvo,
        }
    }

    /// The weights `weight` gives each engine.
    pub fn from_fn(weight: impl Fn(Engine) -> u32) -> OpWeights {
        OpWeights {
            memset: weight(Engine::Memset),
            memcpy: weight(Engine::Mem),
            gemv: weight(Engine::Gemv),
            gemm: weight(Engine::Gemm),
            cvo: weight(Engine::Cvo),
        }
    }

    /// Slice 1: only the MEM engines had real semantics, so GEMV, GEMM and
    /// CVO were left out of random programs. The programs of a seed under
    /// these weights are the ones slice 1 generated.
    pub const SLICE1: OpWeights = OpWeights {
        memset: 25,
        memcpy: 75,
        gemv: 0,
        gemm: 0,
        cvo: 0,
    };

    /// The default mix: the slice-1 kinds plus GEMV and GEMM (which also
    /// bring their own MEMSETs), and a few CVOs with random fields (every
    /// function, flag and `async`, for the coverage bins, docs/coverage.md);
    /// more CVOs come with the softmax/RMSNorm prefixes of GEMVs
    /// (`GenOptions::mat_prefix_pct`).
    pub const DEFAULT: OpWeights = OpWeights {
        memset: 25,
        memcpy: 75,
        gemv: 20,
        gemm: 20,
        cvo: 12,
    };
}

/// The longest gap before the GEMV/GEMM of an edge probe
/// (`GenOptions::edge_probe_pct`), in which the engines drain: the one gap
/// that may be longer than `max_idle`.
pub const PROBE_DRAIN_MAX: u32 = 1000;

/// What the generator aims at, and how often it does each unusual thing.
/// Percentages are per instruction slot unless said otherwise.
///
/// Repro files record every option (serde, field by field). An option
/// newer than a file reads as the value its writer used: the `serde(default)`
/// of each such field says which.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GenOptions {
    /// Instructions per program (illegal ones included; idle gaps and
    /// register writes are extra).
    pub instrs: usize,
    /// `L2_WORDS` of the target, for range errors at the true edge.
    pub l2_words: u32,
    /// Engine FIFO depth of the target: bursts are made longer than this.
    pub fifo_depth: u32,
    pub weights: OpWeights,
    /// Share of illegal encodings (each of the four kinds equally often).
    pub illegal_pct: u32,
    /// Share of MEMCPYs aimed at a memory edge: exactly at it (in range),
    /// one word past it, far past it.
    pub range_err_pct: u32,
    /// Share of MEMCPYs made to overlap a recent access on purpose.
    pub hazard_pct: u32,
    /// Of the operands placed against a recent access (`hazard_pct`), the
    /// share that abut it (start just past it or end just before it)
    /// instead of overlapping it. 0 gives the programs generated before
    /// abutting existed (and files written before it read as 0).
    #[serde(default)]
    pub abut_pct: u32,
    /// Share of MEMCPYs with a long (hundreds of words) shape.
    pub long_copy_pct: u32,
    /// Chance that a slot starts a burst of back-to-back instructions.
    pub burst_pct: u32,
    /// Chance of an `.idle` gap after an instruction outside a burst.
    pub idle_pct: u32,
    /// Longest idle gap, in cycles.
    pub max_idle: u32,
    /// Chance of a `.write 0x08` (clear ERR) before an instruction.
    pub clear_err_pct: u32,
    /// Chance of a write to a register that answers SLVERR (0x0C, unmapped).
    pub bad_reg_write_pct: u32,
    /// Share of GEMV/GEMM given a bad shape on purpose: a zero dimension, a
    /// K mismatch, a GEMV with M != 1, one past a buffer limit. (These
    /// four did nothing before GEMV/GEMM were generated, so older files
    /// read as today's defaults.)
    #[serde(default = "defaults::mat_shape_err_pct")]
    pub mat_shape_err_pct: u32,
    /// Share of GEMV/GEMM at a buffer limit exactly (large shapes).
    #[serde(default = "defaults::mat_limit_pct")]
    pub mat_limit_pct: u32,
    /// Share of GEMV/GEMM that read the previous one's output.
    #[serde(default = "defaults::mat_chain_pct")]
    pub mat_chain_pct: u32,
    /// Share of GEMVs followed by a softmax or RMSNorm prefix of CVOs that
    /// read its output (and, for softmax, its e_max).
    #[serde(default = "defaults::mat_prefix_pct")]
    pub mat_prefix_pct: u32,
    /// Share of the table indices MEMSETs write and new GEMV/GEMM shapes
    /// take that are drawn at the field's edges (entry 0 twice as often as
    /// entry 63) instead of uniformly. 0 draws as earlier versions did (no
    /// extra draw); files written before it ran without.
    #[serde(default)]
    pub entry_edge_pct: u32,
    /// Share of GEMV/GEMM (legal, in range, without a prefix) followed at
    /// once by an edge probe: an `async` CVO whose source or destination
    /// meets the GEMV/GEMM's output or source range at one of its four
    /// edges (ending just before it, sharing only its first word, only its
    /// last, starting just past it), SCALE and REDUCE_SUM often (their
    /// ranges are one word longer or one word long), lengths at the word
    /// edges; a footprint one word off at either end shows as a CVO that
    /// runs while the GEMV/GEMM is still writing (wrong data) or waits for
    /// nothing (wrong DONE cycle). Files written before it ran without.
    #[serde(default)]
    pub edge_probe_pct: u32,
    /// Stall I/O: the DUT's host port withholds ready and adds latency on a
    /// schedule drawn from [`TestCase::io_stall_seed`] (docs/timing.md).
    /// Exact timing then no longer applies; the scoreboard checks order.
    /// Files written before stall I/O existed ran with ideal I/O.
    #[serde(default)]
    pub stall_io: bool,
    /// Randomized initial state: before each case's reset the DUT's
    /// registers, FIFOs and buffers (everything but L2, which the images
    /// set) take values drawn from [`TestCase::initial_state_seed`], as
    /// silicon powers up, instead of the zeros a simulator starts from; a
    /// register that needs a reset and lacks one then shows. Files written
    /// before it ran from zeroed state.
    #[serde(default)]
    pub random_init: bool,
}

/// The defaults of [`GenOptions`] fields newer than some files.
mod defaults {
    use super::GenOptions;

    pub fn mat_shape_err_pct() -> u32 {
        GenOptions::new(0, 0, 0).mat_shape_err_pct
    }
    pub fn mat_limit_pct() -> u32 {
        GenOptions::new(0, 0, 0).mat_limit_pct
    }
    pub fn mat_chain_pct() -> u32 {
        GenOptions::new(0, 0, 0).mat_chain_pct
    }
    pub fn mat_prefix_pct() -> u32 {
        GenOptions::new(0, 0, 0).mat_prefix_pct
    }
}

impl GenOptions {
    /// The default mix for a hardware configuration.
    pub fn new(instrs: usize, l2_words: u32, fifo_depth: u32) -> GenOptions {
        GenOptions {
            instrs,
            l2_words,
            fifo_depth,
            weights: OpWeights::DEFAULT,
            illegal_pct: 6,
            range_err_pct: 12,
            hazard_pct: 45,
            abut_pct: 50,
            long_copy_pct: 4,
            burst_pct: 12,
            idle_pct: 45,
            max_idle: 200,
            clear_err_pct: 4,
            bad_reg_write_pct: 1,
            mat_shape_err_pct: 15,
            mat_limit_pct: 5,
            mat_chain_pct: 25,
            mat_prefix_pct: 15,
            entry_edge_pct: 18,
            edge_probe_pct: 50,
            stall_io: false,
            random_init: true,
        }
    }

    pub fn for_config(config: &HwConfig, instrs: usize) -> GenOptions {
        GenOptions::new(instrs, config.l2_words, config.fifo_depth)
    }
}

/// One co-simulation run: a program and the initial memory images.
#[derive(Clone, Debug, PartialEq)]
pub struct TestCase {
    pub seed: u64,
    pub options: GenOptions,
    pub program: Program,
    /// Seed of the initial L2's own words (`options.l2_words` words; which
    /// words are its own: [`TestCase::image`]).
    pub l2_init_seed: u64,
    /// Seed of the initial host memory's own words (`HOST_WORDS` words).
    pub host_init_seed: u64,
    /// Which words of the images come from the two seeds above: all of them
    /// (version-1 repro files), or the windows of the program over a base
    /// image every case shares (docs/stimulus.md, "Images").
    pub image: ImageRule,
    /// Seed of both weight streams ([`WeightSource::new`]).
    pub weight_seed: u64,
    /// Words written over the seeded L2 image, in order: (address, words).
    /// Empty for generated cases; directed tests that need exact operands
    /// (every BF16 input of a CVO function) put them here.
    pub l2_patches: Vec<(u32, Vec<Word>)>,
    /// Words written over the host image, in order: (address, words).
    /// Empty for generated cases; a workload's program puts the data its
    /// driver left in host memory here (docs/workloads.md).
    pub host_patches: Vec<(u32, Vec<Word>)>,
    /// Beats both weight streams deliver before the seeded ones, indexed by
    /// stream (`[matrix, vector]`, [`WeightSource::with_prefix`]). Empty for
    /// generated cases; a workload streams its real weights here.
    pub weight_prefix: [Vec<Word>; 2],
    /// Shape-table entries and e_max set by backdoor after the images,
    /// before the program. Empty for generated cases; steered ones use it.
    pub preload: Preload,
}

/// What a case sets by backdoor before its program: shape-table entries
/// and e_max, through the RTL's simulation-only write ports (CONTRACT
/// section 11) and the golden model's setters, so that a program starts
/// from tables no MEMSET of its own wrote (docs/stimulus.md, "Preloads").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preload {
    /// (table, index, entry), written in this order.
    pub tables: Vec<(ShapeTable, u8, ShapeEntry)>,
    pub e_max: Option<u16>,
}

impl Preload {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.e_max.is_none()
    }
}

impl TestCase {
    /// The case of `seed`. The seed is expanded by [`SplitMix64`] into four
    /// independent seeds: the program's, the L2 image's, the host image's,
    /// the weight streams' (the fourth, so the first three are what they
    /// were before the streams existed).
    pub fn generate(seed: u64, options: &GenOptions) -> TestCase {
        let mut seeds = SplitMix64::new(seed);
        let program_seed = seeds.next_u64();
        let l2_init_seed = seeds.next_u64();
        let host_init_seed = seeds.next_u64();
        let weight_seed = seeds.next_u64();
        let program = generator::generate(program_seed, options);
        TestCase {
            seed,
            options: options.clone(),
            image: ImageRule::windowed_for(&program, options.l2_words),
            program,
            l2_init_seed,
            host_init_seed,
            weight_seed,
            l2_patches: Vec::new(),
            host_patches: Vec::new(),
            weight_prefix: [Vec::new(), Vec::new()],
            preload: Preload::default(),
        }
    }

    /// The weight seed [`TestCase::generate`] gives `seed`.
    pub fn weight_seed_of(seed: u64) -> u64 {
        let mut seeds = SplitMix64::new(seed);
        (0..3).for_each(|_| {
            seeds.next_u64();
        });
        seeds.next_u64()
    }

    /// What both weight streams deliver in this case.
    pub fn weight_source(&self) -> WeightSource {
        let [matrix, vector] = self.weight_prefix.clone();
        WeightSource::with_prefix(self.weight_seed, matrix, vector)
    }

    /// A hand-written program with images from `seed` (directed tests).
    pub fn directed(seed: u64, options: &GenOptions, program: Program) -> TestCase {
        TestCase {
            image: ImageRule::windowed_for(&program, options.l2_words),
            program,
            ..TestCase::generate(
                seed,
                &GenOptions {
                    instrs: 0,
                    ..options.clone()
                },
            )
        }
    }

    /// The seed of the DUT's state before reset, with randomized initial
    /// state: a function of the case's seed, so a seed alone reproduces it.
    pub fn initial_state_seed(&self) -> Option<u64> {
        self.options
            .random_init
            .then_some(self.seed ^ 0x494E_4954_5354_4154)
    }

    /// The seed of the host stall schedule, under stall I/O: a function of
    /// the case's seed, so a seed alone reproduces its stalls too.
    pub fn io_stall_seed(&self) -> Option<u64> {
        self.options
            .stall_io
            .then_some(self.seed ^ 0x5354_414C_4C49_4F00)
    }

    /// The initial L2, every word of it. Under the whole rule: [`fill`] of
    /// the L2 seed, with one 16-bit element in sixteen replaced by a BF16
    /// special value ([`with_specials`]), then half of its 32-word blocks
    /// holding moderate BF16 values ([`with_moderate_blocks`]). Under the
    /// windowed rule: the base image with the L2 seed's words
    /// ([`image::l2_word`]) in the windows. Then the case's patches.
    pub fn l2_image(&self) -> Vec<Word> {
        let words = self.options.l2_words as usize;
        let mut image = match &self.image {
            ImageRule::Whole => {
                let mut image = fill(self.l2_init_seed, words);
                with_specials(&mut image, self.l2_init_seed ^ SPECIALS_SEED_SALT);
                with_moderate_blocks(&mut image, self.l2_init_seed ^ MODERATE_SEED_SALT);
                image
            }
            ImageRule::Windowed { l2, .. } => {
                let mut image = image::base_l2(self.options.l2_words).to_vec();
                image::paint(&mut image, l2, |i| image::l2_word(self.l2_init_seed, i));
                image
            }
        };
        apply_patches(&mut image, &self.l2_patches);
        image
    }

    /// The initial host memory, every word of it: [`fill`] of the host seed
    /// (whole rule), or the host base image with the host seed's words in
    /// the windows; then the case's host patches.
    pub fn host_image(&self) -> Vec<Word> {
        let mut image = match &self.image {
            ImageRule::Whole => fill(self.host_init_seed, HOST_WORDS as usize),
            ImageRule::Windowed { host, .. } => {
                let mut image = image::base_host().to_vec();
                image::paint(&mut image, host, |i| {
                    image::host_word(self.host_init_seed, i)
                });
                image
            }
        };
        apply_patches(&mut image, &self.host_patches);
        image
    }
}

/// Writes each (address, words) patch over `image`, in order, clipped at
/// its end.
fn apply_patches(image: &mut [Word], patches: &[(u32, Vec<Word>)]) {
    for (addr, words) in patches {
        let start = (*addr as usize).min(image.len());
        let end = (start + words.len()).min(image.len());
        image[start..end].copy_from_slice(&words[..end - start]);
    }
}

/// BF16 values that random bits almost never make (an exponent of all ones
/// or all zeros is 1 in 128 draws, an exact infinity 1 in 32,768) and that
/// the output path must treat specially when a destination is accumulated
/// into (docs/numerics.md): infinities, NaN, both zeros, the smallest
/// subnormal, the largest finite values.
pub const BF16_SPECIALS: [u16; 8] = [
    0x7F80, 0xFF80, 0x7FC0, 0x0000, 0x8000, 0x0001, 0x7F7F, 0xFF7F,
];

const SPECIALS_SEED_SALT: u64 = 0x5350_4543_4941_4C53;
const MODERATE_SEED_SALT: u64 = 0x4D4F_4445_5241_5445;

/// Words per block of [`with_moderate_blocks`]: longer than most CVO
/// vectors the generator draws (up to 200 elements, 25 words).
pub const MODERATE_BLOCK_WORDS: usize = 32;

/// Rewrites every other 32-word block of `image` (chosen by one draw of
/// `Rng::new(seed)` per block) with BF16 values of magnitude 2^-6 to 2^7,
/// random sign, no special value. Random bits alone are a poor CVO input:
/// half of them have an exponent beyond 2^7, where EXP and GELU saturate,
/// and a sum of 100 elements almost always meets a NaN or an infinity. In
/// a moderate block EXP, GELU, SIN and COS take their general paths and
/// REDUCE_SUM sums finite values, so a broken datapath shows in the
/// random campaigns too, not only in tests/gate/cvo_exhaustive.rs.
pub fn with_moderate_blocks(image: &mut [Word], seed: u64) {
    let mut rng = Rng::new(seed);
    for block in image.chunks_mut(MODERATE_BLOCK_WORDS) {
        if rng.next_u64() & 1 == 0 {
            continue;
        }
        for word in block {
            let r = rng.next_u128();
            *word = (0..8).fold(0, |acc, lane| {
                let bits = (r >> (16 * lane)) as u16;
                let exponent = 121 + (bits >> 7 & 0xFF) % 14; // 2^-6 .. 2^7
                let element = (bits & 0x807F) | exponent << 7;
                acc | u128::from(element) << (16 * lane)
            });
        }
    }
}

/// Replaces one 16-bit element in sixteen of `image` by one of
/// [`BF16_SPECIALS`], chosen by `Rng::new(seed)`: per word one draw, eight
/// bits per element (low nibble 0: replace; next three bits: which).
pub fn with_specials(image: &mut [Word], seed: u64) {
    let mut rng = Rng::new(seed);
    for word in image.iter_mut() {
        let r = rng.next_u64();
        for lane in 0..8 {
            let bits = (r >> (8 * lane)) & 0xFF;
            if bits & 0xF == 0 {
                let special = u128::from(BF16_SPECIALS[(bits >> 4) as usize & 7]);
                *word = (*word & !(0xFFFF_u128 << (16 * lane))) | (special << (16 * lane));
            }
        }
    }
}

/// `words` pseudo-random 128-bit words: word i is the i-th
/// [`Rng::next_u128`] of `Rng::new(seed)` (low half drawn first).
pub fn fill(seed: u64, words: usize) -> Vec<Word> {
    let mut rng = Rng::new(seed);
    (0..words).map(|_| rng.next_u128()).collect()
}
