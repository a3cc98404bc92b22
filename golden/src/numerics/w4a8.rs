//! W4A8 GEMV/GEMM: element packing (CONTRACT section 1), the weight-stream
//! beat layout and the reference math (CONTRACT section 5), as pure
//! functions. docs/numerics.md restates the rules and the decisions.

use super::bf16::Bf16;
use crate::model::Word;
use std::fmt;

/// INT8 elements per 128-bit word.
pub const I8_PER_WORD: usize = 16;
/// INT4 elements per 128-bit word (also the columns of one weight tile).
pub const I4_PER_WORD: usize = 32;
/// BF16 elements per 128-bit word.
pub const BF16_PER_WORD: usize = 8;

/// Element `i` of a word holding 16 INT8 (bits `[8i+7:8i]`).
pub fn unpack_i8(word: Word) -> [i8; I8_PER_WORD] {
    std::array::from_fn(|i| (word >> (8 * i)) as u8 as i8)
}

pub fn pack_i8(elems: &[i8; I8_PER_WORD]) -> Word {
    elems
        .iter()
        .enumerate()
        .fold(0, |w, (i, &e)| w | Word::from(e as u8) << (8 * i))
}

/// Element `i` of a word holding 32 INT4 (bits `[4i+3:4i]`), sign-extended.
pub fn unpack_i4(word: Word) -> [i8; I4_PER_WORD] {
    std::array::from_fn(|i| {
        let nibble = ((word >> (4 * i)) & 0xF) as u8;
        // Sign-extend bit 3 through the byte.
        ((nibble << 4) as i8) >> 4
    })
}

/// Packs 32 INT4 values; each must be in `-8..=7` (only its low 4 bits are
/// used).
pub fn pack_i4(elems: &[i8; I4_PER_WORD]) -> Word {
    elems
        .iter()
        .enumerate()
        .fold(0, |w, (i, &e)| w | Word::from(e as u8 & 0xF) << (4 * i))
}

/// Element `i` of a word holding 8 BF16 (bits `[16i+15:16i]`).
pub fn unpack_bf16(word: Word) -> [Bf16; BF16_PER_WORD] {
    std::array::from_fn(|i| Bf16((word >> (16 * i)) as u16))
}

pub fn pack_bf16(elems: &[Bf16; BF16_PER_WORD]) -> Word {
    elems
        .iter()
        .enumerate()
        .fold(0, |w, (i, e)| w | Word::from(e.0) << (16 * i))
}

/// Why a pure W4A8 function refused its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatError {
    /// M, K or N is zero.
    ZeroDim,
    /// A slice has the wrong length for the shape.
    Length {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// A weight outside `-8..=7`.
    Int4Range { index: usize, value: i8 },
}

impl fmt::Display for MatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatError::ZeroDim => write!(f, "M, K and N must be at least 1"),
            MatError::Length {
                what,
                expected,
                got,
            } => write!(f, "{what}: expected {expected} elements, got {got}"),
            MatError::Int4Range { index, value } => {
                write!(f, "weight {index} = {value} is not an INT4 value")
            }
        }
    }
}

impl std::error::Error for MatError {}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), MatError> {
    if expected == got {
        Ok(())
    } else {
        Err(MatError::Length {
            what,
            expected,
            got,
        })
    }
}

fn check_int4(weights: &[i8]) -> Result<(), MatError> {
    match weights.iter().position(|w| !(-8..=7).contains(w)) {
        Some(index) => Err(MatError::Int4Range {
            index,
            value: weights[index],
        }),
        None => Ok(()),
    }
}

/// Number of weight-stream beats an instruction consumes:
/// `ceil(N/32) * K`, plus `ceil(N/8)` with `w_scale`.
pub fn beat_count(k: usize, n: usize, w_scale: bool) -> usize {
    n.div_ceil(I4_PER_WORD) * k
        + if w_scale {
            n.div_ceil(BF16_PER_WORD)
        } else {
            0
        }
}

/// The beats the weight stream carries for `W` (`k x n` INT4, row-major:
/// `W[k][n] = weights[k * n_cols + n]`) and, with `w_scale`, the `n` scales:
/// for `t` in `0..ceil(N/32)`, for `k` in `0..K`, one beat with
/// `W[k][32t + j]` in lane `j`; then `ceil(N/8)` beats with `s[8q + i]` in
/// lane `i`. Lanes past N are zero.
pub fn weight_beats(
    k: usize,
    n: usize,
    weights: &[i8],
    scales: Option<&[Bf16]>,
) -> Result<Vec<Word>, MatError> {
    if k == 0 || n == 0 {
        return Err(MatError::ZeroDim);
    }
    check_len("weights", k * n, weights.len())?;
    check_int4(weights)?;
    if let Some(s) = scales {
        check_len("scales", n, s.len())?;
    }
    let mut beats = Vec::with_capacity(beat_count(k, n, scales.is_some()));
    for col0 in (0..n).step_by(I4_PER_WORD) {
        let cols = (n - col0).min(I4_PER_WORD);
        for row in 0..k {
            let mut lanes = [0i8; I4_PER_WORD];
            lanes[..cols].copy_from_slice(&weights[row * n + col0..row * n + col0 + cols]);
            beats.push(pack_i4(&lanes));
        }
    }
    if let Some(s) = scales {
        for chunk in s.chunks(BF16_PER_WORD) {
            let mut lanes = [Bf16::POS_ZERO; BF16_PER_WORD];
            lanes[..chunk.len()].copy_from_slice(chunk);
            beats.push(pack_bf16(&lanes));
        }
    }
    Ok(beats)
}

/// The inverse of [`weight_beats`]: the weights (`k x n`, row-major) and,
/// with `w_scale`, the `n` scales, from exactly [`beat_count`] beats. Lanes
/// past N are ignored, whatever they hold.
pub fn split_weight_beats(
    k: usize,
    n: usize,
    w_scale: bool,
    beats: &[Word],
) -> Result<(Vec<i8>, Option<Vec<Bf16>>), MatError> {
    if k == 0 || n == 0 {
        return Err(MatError::ZeroDim);
    }
    check_len("beats", beat_count(k, n, w_scale), beats.len())?;
    let mut weights = vec![0i8; k * n];
    let tiles = n.div_ceil(I4_PER_WORD);
    for t in 0..tiles {
        let col0 = t * I4_PER_WORD;
        let cols = (n - col0).min(I4_PER_WORD);
        for row in 0..k {
            let lanes = unpack_i4(beats[t * k + row]);
            weights[row * n + col0..row * n + col0 + cols].copy_from_slice(&lanes[..cols]);
        }
    }
    let scales = w_scale.then(|| {
        beats[tiles * k..]
            .iter()
            .flat_map(|&b| unpack_bf16(b))
            .take(n)
            .collect()
    });
    Ok((weights, scales))
}

/// Activation rows as L2 holds them: row `m` starts at word
/// `m * ceil(K/16)`, element `k` of the row in lane `k % 16` of word
/// `k / 16`. Lanes past K are zero.
pub fn pack_activations(m: usize, k: usize, act: &[i8]) -> Result<Vec<Word>, MatError> {
    if m == 0 || k == 0 {
        return Err(MatError::ZeroDim);
    }
    check_len("activations", m * k, act.len())?;
    let mut words = Vec::with_capacity(m * k.div_ceil(I8_PER_WORD));
    for row in act.chunks(k) {
        for chunk in row.chunks(I8_PER_WORD) {
            let mut lanes = [0i8; I8_PER_WORD];
            lanes[..chunk.len()].copy_from_slice(chunk);
            words.push(pack_i8(&lanes));
        }
    }
    Ok(words)
}

/// The inverse of [`pack_activations`] (lanes past K ignored).
pub fn unpack_activations(m: usize, k: usize, words: &[Word]) -> Result<Vec<i8>, MatError> {
    if m == 0 || k == 0 {
        return Err(MatError::ZeroDim);
    }
    let stride = k.div_ceil(I8_PER_WORD);
    check_len("activation words", m * stride, words.len())?;
    let mut act = Vec::with_capacity(m * k);
    for row in words.chunks(stride) {
        act.extend(row.iter().flat_map(|&w| unpack_i8(w)).take(k));
    }
    Ok(act)
}

/// Output rows as they are written to L2: `(data, mask)` per word, row `m`
/// at word offset `m * ceil(N/8)`; `mask` bit `i` = lane `i` is written
/// (lanes past N are not: they keep their old value, and are 0 in `data`).
pub fn pack_output(m: usize, n: usize, out: &[Bf16]) -> Result<Vec<(Word, u8)>, MatError> {
    if m == 0 || n == 0 {
        return Err(MatError::ZeroDim);
    }
    check_len("output", m * n, out.len())?;
    let mut words = Vec::with_capacity(m * n.div_ceil(BF16_PER_WORD));
    for row in out.chunks(n) {
        for chunk in row.chunks(BF16_PER_WORD) {
            let mut lanes = [Bf16::POS_ZERO; BF16_PER_WORD];
            lanes[..chunk.len()].copy_from_slice(chunk);
            let mask = if chunk.len() == BF16_PER_WORD {
                0xFF
            } else {
                (1u8 << chunk.len()) - 1
            };
            words.push((pack_bf16(&lanes), mask));
        }
    }
    Ok(words)
}

/// The inputs of one GEMV/GEMM, already unpacked. `w_scale` is
/// `scales.is_some()`, `accm` is `old.is_some()`.
#[derive(Clone, Copy, Debug)]
pub struct MatInputs<'a> {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// `m x k` INT8, row-major.
    pub act: &'a [i8],
    /// `k x n` INT4 (each in `-8..=7`), row-major.
    pub weights: &'a [i8],
    /// With w_scale: `s[n]`, `n` values.
    pub scales: Option<&'a [Bf16]>,
    /// With accm: the BF16 values at the destination before the
    /// instruction, `m x n`, row-major.
    pub old: Option<&'a [Bf16]>,
}

/// The result of one GEMV/GEMM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatOutput {
    /// `m x n` BF16, row-major: the values written.
    pub out: Vec<Bf16>,
    /// The findemax maximum of `out` (canonical pattern). The instruction
    /// writes it to e_max only with findemax.
    pub e_max: Bf16,
}

/// `acc[m][n] = sum_k act[m][k] * w[k][n]`, exact (`m x n`, row-major).
/// `|acc| <= K * 1024`, far inside `i64`.
pub fn accumulate(m: usize, k: usize, n: usize, act: &[i8], weights: &[i8]) -> Vec<i64> {
    let mut acc = vec![0i64; m * n];
    for row in 0..m {
        let a_row = &act[row * k..(row + 1) * k];
        let out_row = &mut acc[row * n..(row + 1) * n];
        for (kk, &a) in a_row.iter().enumerate() {
            let w_row = &weights[kk * n..(kk + 1) * n];
            for (o, &w) in out_row.iter_mut().zip(w_row) {
                *o += i64::from(a) * i64::from(w);
            }
        }
    }
    acc
}

/// The GEMV/GEMM math of CONTRACT section 5: per element,
/// `r = bf16(acc)`; with w_scale `r = bf16(r * s[n])`; with accm
/// `r = bf16(old + r)`; and the findemax maximum of everything written.
pub fn gemm(inp: &MatInputs<'_>) -> Result<MatOutput, MatError> {
    let MatInputs { m, k, n, .. } = *inp;
    if m == 0 || k == 0 || n == 0 {
        return Err(MatError::ZeroDim);
    }
    check_len("activations", m * k, inp.act.len())?;
    check_len("weights", k * n, inp.weights.len())?;
    check_int4(inp.weights)?;
    if let Some(s) = inp.scales {
        check_len("scales", n, s.len())?;
    }
    if let Some(old) = inp.old {
        check_len("old", m * n, old.len())?;
    }
    let acc = accumulate(m, k, n, inp.act, inp.weights);
    let out: Vec<Bf16> = acc
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let mut r = Bf16::from_i64(a);
            if let Some(s) = inp.scales {
                r = r * s[i % n];
            }
            if let Some(old) = inp.old {
                r = old[i] + r;
            }
            r
        })
        .collect();
    let e_max = out[1..]
        .iter()
        .fold(out[0].canonical(), |e, &v| e.emax_max(v));
    Ok(MatOutput { out, e_max })
}
