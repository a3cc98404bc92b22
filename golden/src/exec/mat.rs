//! GEMV and GEMM, W4A8 (CONTRACT section 5; docs/numerics.md section 2;
//! docs/semantics.md section 6): INT8 activations from L2, INT4 weights and
//! BF16 scales from the engine's weight stream, BF16 results back to L2.
//!
//! Every check comes before the first effect: an instruction in error
//! writes nothing and takes no beat. The math is `numerics::w4a8`'s.

use crate::isa::{Instr, MatOp};
use crate::model::{ErrorCode, ShapeTable};
use crate::numerics::bf16::Bf16;
use crate::numerics::w4a8::{self, MatError, MatInputs, BF16_PER_WORD, I4_PER_WORD, I8_PER_WORD};
use crate::state::State;
use crate::streams::{MATRIX_STREAM, VECTOR_STREAM};
use crate::tables::Tables;

/// The L1 activation buffer, in 128-bit words: `M * ceil(K/16)` may not
/// exceed it. Architectural: the same on every hardware configuration.
pub const MAT_L1_WORDS: u64 = 2048;
/// The accumulator buffer, in BF16 output words: `M * ceil(N/8)` may not
/// exceed it. Architectural: the same on every hardware configuration.
pub const MAT_ACC_WORDS: u64 = 512;

/// Which of the two engines runs a GEMV/GEMM body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatEngine {
    Gemv,
    Gemm,
}

impl MatEngine {
    /// The engine and body of a GEMV or GEMM, `None` for anything else.
    pub fn of(instr: &Instr) -> Option<(MatEngine, &MatOp)> {
        match instr {
            Instr::Gemv(op) => Some((MatEngine::Gemv, op)),
            Instr::Gemm(op) => Some((MatEngine::Gemm, op)),
            _ => None,
        }
    }

    /// The weight stream the engine reads: GEMM the matrix stream, GEMV
    /// the vector stream.
    pub fn stream(self) -> usize {
        match self {
            MatEngine::Gemm => MATRIX_STREAM,
            MatEngine::Gemv => VECTOR_STREAM,
        }
    }
}

/// The dimensions of a GEMV/GEMM that passed its SHAPE check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatShape {
    /// Activation rows (fmap `a`).
    pub m: u64,
    /// The shared dimension (fmap `b` = weight `a`).
    pub k: u64,
    /// Output columns (weight `b`).
    pub n: u64,
}

impl MatShape {
    /// Words of one activation row: `ceil(K/16)`.
    pub fn act_row_words(&self) -> u64 {
        self.k.div_ceil(I8_PER_WORD as u64)
    }

    /// Activation words read from L2 (and held in L1): `M * ceil(K/16)`.
    pub fn act_words(&self) -> u64 {
        self.m * self.act_row_words()
    }

    /// Words of one output row: `ceil(N/8)`.
    pub fn out_row_words(&self) -> u64 {
        self.n.div_ceil(BF16_PER_WORD as u64)
    }

    /// Output words written (and held in the accumulator buffer):
    /// `M * ceil(N/8)`.
    pub fn out_words(&self) -> u64 {
        self.m * self.out_row_words()
    }

    /// Architectural 32-column weight tiles: `ceil(N/32)`.
    pub fn tiles(&self) -> u64 {
        self.n.div_ceil(I4_PER_WORD as u64)
    }

    /// Beats taken from the weight stream: `ceil(N/32) * K`, plus
    /// `ceil(N/8)` scale beats with `w_scale`.
    pub fn beats(&self, w_scale: bool) -> u64 {
        self.tiles() * self.k + if w_scale { self.out_row_words() } else { 0 }
    }
}

/// The SHAPE check (docs/semantics.md section 6), from the tables as they
/// stand: every dimension at least 1, the two K equal, M = 1 for GEMV, and
/// both buffer limits kept. Any failure is `SHAPE`; which one is not
/// architectural.
pub fn check_shape(engine: MatEngine, op: &MatOp, tables: &Tables) -> Result<MatShape, ErrorCode> {
    let fmap = tables.get(ShapeTable::Fmap, op.shape_ptr_addr);
    let weight = tables.get(ShapeTable::Weight, op.size_ptr_addr);
    let shape = MatShape {
        m: u64::from(fmap.a),
        k: u64::from(fmap.b),
        n: u64::from(weight.b),
    };
    let ok = shape.m >= 1
        && shape.k >= 1
        && shape.n >= 1
        && u64::from(weight.a) == shape.k
        && (engine == MatEngine::Gemm || shape.m == 1)
        && shape.act_words() <= MAT_L1_WORDS
        && shape.out_words() <= MAT_ACC_WORDS;
    if ok {
        Ok(shape)
    } else {
        Err(ErrorCode::Shape)
    }
}

/// The checks before the first effect leave no way for the pure functions
/// to refuse their inputs; if one does anyway, the instruction fails with
/// no effect rather than writing something half-made.
fn refused(e: MatError) -> ErrorCode {
    debug_assert!(false, "a checked GEMV/GEMM was refused: {e}");
    ErrorCode::Shape
}

/// Executes one GEMV or GEMM (`engine` says which).
pub fn execute(
    state: &mut State,
    seq: u32,
    engine: MatEngine,
    op: &MatOp,
) -> Result<(), ErrorCode> {
    let shape = check_shape(engine, op, &state.tables)?;
    let (src, dest) = (u64::from(op.src_addr), u64::from(op.dest_reg));
    // Source first, then destination (docs/semantics.md section 6).
    state.check_l2(src, shape.act_words())?;
    state.check_l2(dest, shape.out_words())?;

    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let stream = engine.stream();
    // Everything is read before anything is written: the activations go to
    // L1 first, so a destination overlapping the source sees no write
    // before the read; accm reads the destination's old values.
    let act =
        w4a8::unpack_activations(m, k, &state.read_l2(src, shape.act_words())).map_err(refused)?;
    let old: Option<Vec<Bf16>> = op.accm().then(|| {
        let words = state.read_l2(dest, shape.out_words());
        words
            .chunks(shape.out_row_words() as usize)
            .flat_map(|row| row.iter().flat_map(|&w| w4a8::unpack_bf16(w)).take(n))
            .collect()
    });
    let tiles = shape.tiles() as usize;
    // The scale beats follow the ceil(N/32) * K weight beats.
    let scales: Option<Vec<Bf16>> = op.w_scale().then(|| {
        state
            .peek_beats(stream, shape.tiles() * shape.k, shape.out_row_words())
            .into_iter()
            .flat_map(w4a8::unpack_bf16)
            .take(n)
            .collect()
    });

    // Column tile by column tile (each output element depends only on its
    // own column's weights, scale and old value, so this is the same as
    // one product over all N columns, without holding all K x N weights or
    // all their beats).
    let mut out = vec![Bf16::POS_ZERO; m * n];
    let mut e_max: Option<Bf16> = None;
    for t in 0..tiles {
        let col0 = t * I4_PER_WORD;
        let cols = (n - col0).min(I4_PER_WORD);
        let beats = state.peek_beats(stream, (t * k) as u64, k as u64);
        let (weights, _) = w4a8::split_weight_beats(k, cols, false, &beats).map_err(refused)?;
        let old_tile: Option<Vec<Bf16>> = old.as_ref().map(|o| {
            (0..m)
                .flat_map(|row| o[row * n + col0..row * n + col0 + cols].iter().copied())
                .collect()
        });
        let result = w4a8::gemm(&MatInputs {
            m,
            k,
            n: cols,
            act: &act,
            weights: &weights,
            scales: scales.as_ref().map(|s| &s[col0..col0 + cols]),
            old: old_tile.as_deref(),
        })
        .map_err(refused)?;
        for row in 0..m {
            out[row * n + col0..row * n + col0 + cols]
                .copy_from_slice(&result.out[row * cols..(row + 1) * cols]);
        }
        e_max = Some(e_max.map_or(result.e_max, |e| e.emax_max(result.e_max)));
    }
    let words = w4a8::pack_output(m, n, &out).map_err(refused)?;

    // Effects, in the order the engine makes them: the beats, the output
    // words in ascending address order (row by row), then e_max.
    state.take_beats(seq, stream, shape.beats(op.w_scale()) as u32);
    for (addr, (data, mask)) in (dest..).zip(words) {
        state.write_l2(seq, addr, data, mask);
    }
    if op.findemax() {
        if let Some(e) = e_max {
            state.write_e_max(seq, e.0);
        }
    }
    Ok(())
}
