//! The layers a transformer is made of, each as one pccx program (or host
//! work) with the host's work around it: RMSNorm, linear layers on INT4
//! weight groups, causal softmax, attention times values, residual adds
//! (docs/workloads.md, "The block as programs"). A workload composes them.

use super::builder::{BuildError, CvoFlags, MatFlags};
use super::driver::{Driver, WorkloadError};
use super::quant::{
    bf16, bf16_row_words, bf16_values, bf16_words, Matrix, QuantActs, QuantWeights,
};
use pccx_golden::isa::CvoFunc;
use pccx_golden::numerics::cvo::accuracy::round_f64;
use pccx_golden::numerics::w4a8::I8_PER_WORD;
use pccx_golden::Engine;

/// RMSNorm of the BF16 rows of `x`, divided by `sqrt(d)` (a power of two
/// for the shipped dimensions, folded into the next weights' scales): per
/// token REDUCE_SUM of the squares, SQRT, RECIP, SCALE. The host squares
/// the elements (no instruction multiplies two vectors elementwise).
pub fn rmsnorm(driver: &mut Driver, layer: &str, x: &Matrix) -> Result<Matrix, WorkloadError> {
    let (t, d) = (x.rows, x.cols);
    let row = bf16_row_words(d) as u32;
    let mut b = driver.builder();
    // Each token's row follows a word for its scalar: SCALE reads its
    // scalar at src and its vector from src + 1.
    let block: Vec<_> = (0..t)
        .flat_map(|r| std::iter::once(0).chain(bf16_words(x.row(r))))
        .collect();
    let squares: Vec<_> = (0..t)
        .flat_map(|r| bf16_words(&x.row(r).iter().map(|v| bf16(v * v)).collect::<Vec<_>>()))
        .collect();
    let host_ops = (t * d) as u64;
    let h_block = b.host_data("rows", block)?;
    let h_squares = b.host_data("squares", squares)?;
    let l_block = b.l2("rows", h_block.words)?;
    let l_squares = b.l2("squares", h_squares.words)?;
    let l_out = b.l2("normalised rows", t as u32 * row)?;
    b.copy_in(h_block, l_block)?;
    b.copy_in(h_squares, l_squares)?;
    for r in 0..t as u32 {
        let slot = l_block.addr + r * (1 + row);
        b.cvo(
            CvoFunc::ReduceSum,
            l_squares.addr + r * row,
            slot,
            d,
            CvoFlags::default(),
        )?;
        b.cvo(CvoFunc::Sqrt, slot, slot, 1, CvoFlags::default())?;
        b.cvo(CvoFunc::Recip, slot, slot, 1, CvoFlags::default())?;
        b.cvo(
            CvoFunc::Scale,
            slot,
            l_out.addr + r * row,
            d,
            CvoFlags::default(),
        )?;
    }
    let h_out = b.host("normalised rows", l_out.words)?;
    b.copy_out(l_out, h_out)?;
    let [words] = driver.run(layer, b, host_ops, [h_out])?;
    Ok(read_rows(&words, t, d))
}

/// `t` rows of `n` BF16 values, each row `ceil(n/8)` words.
pub fn read_rows(words: &[pccx_golden::model::Word], t: usize, n: usize) -> Matrix {
    let row = bf16_row_words(n);
    let mut m = Matrix::zeros(t, n);
    for r in 0..t {
        m.data[r * n..(r + 1) * n].copy_from_slice(&bf16_values(&words[r * row..(r + 1) * row], n));
    }
    m
}

/// Output columns per GEMM: the most that keep `tokens * ceil(N/8)`
/// within the accumulator (and at most 256), dividing `n`, a multiple of
/// 8 where one divides `n` (whole output words).
pub fn chunk_cols(tokens: usize, n: usize) -> usize {
    let limit = (pccx_golden::exec::mat::MAT_ACC_WORDS as usize / tokens.max(1) * 8)
        .clamp(1, 256)
        .min(n.max(1));
    let divides = |c: &usize| n.is_multiple_of(*c);
    (1..=limit)
        .rev()
        .filter(|c| c.is_multiple_of(8))
        .find(divides)
        .or_else(|| (1..=limit).rev().find(divides))
        .unwrap_or(1)
}

/// Linear layers on the same input: the host quantises `x` to INT8 (one
/// scale), then per weight matrix, per chunk of output columns and per
/// weight group one GEMM, the groups accumulated (`accm`), each with the
/// group's scales times the activation scale times `fold` streamed as its
/// BF16 column scales.
pub fn projections<const P: usize>(
    driver: &mut Driver,
    layer: &str,
    x: &Matrix,
    weights: [&QuantWeights; P],
    fold: f64,
) -> Result<[Matrix; P], WorkloadError> {
    let outs = linear(driver, layer, x, &weights, fold, false)?;
    Ok(outs.try_into().expect("one output per weight matrix"))
}

/// The MLP's up projection and GELU, in one program.
pub fn mlp_up(
    driver: &mut Driver,
    layer: &str,
    x: &Matrix,
    w: &QuantWeights,
    fold: f64,
) -> Result<Matrix, WorkloadError> {
    Ok(linear(driver, layer, x, &[w], fold, true)?.remove(0))
}

/// [`projections`] and [`mlp_up`]: the weight matrices on one input, each
/// chunk followed by GELU when `gelu`.
pub fn linear(
    driver: &mut Driver,
    layer: &str,
    x: &Matrix,
    weights: &[&QuantWeights],
    fold: f64,
    gelu: bool,
) -> Result<Vec<Matrix>, WorkloadError> {
    let (t, k) = (x.rows, x.cols);
    let acts = QuantActs::quantise(x);
    let mut host_ops = (t * k) as u64;
    let mut b = driver.builder();
    let group = weights[0].group;
    // One activation layout serves every matrix: they must share K and the
    // group (the block's q/k/v do).
    if let Some(w) = weights.iter().find(|w| w.k != k || w.group != group) {
        return Err(BuildError(format!(
            "{layer}: linear layers on one input need K = {k} and groups of {group}, \
             not K = {} in groups of {}",
            w.k, w.group
        ))
        .into());
    }
    // Group-major: each group's K slice of every row is one GEMM's M rows.
    let act_words: Vec<_> = (0..k / group)
        .flat_map(|g| acts.words(0..t, g * group, group))
        .collect();
    let group_words = (t * group / I8_PER_WORD) as u32;
    let h_act = b.host_data("activations", act_words)?;
    let l_act = b.l2("activations", h_act.words)?;
    b.copy_in(h_act, l_act)?;
    let mut outputs = Vec::new();
    for w in weights {
        let n = w.n;
        let nc = chunk_cols(t, n);
        let chunk_words = (t * bf16_row_words(nc)) as u32;
        let l_out = b.l2("outputs", chunk_words * (n / nc) as u32)?;
        for c in 0..n / nc {
            let dest = l_out.addr + c as u32 * chunk_words;
            for g in 0..w.groups() {
                let scales: Vec<_> = (0..nc)
                    .map(|j| round_f64(w.scale(g, c * nc + j).to_f64() * acts.scale * fold))
                    .collect();
                host_ops += nc as u64;
                b.mat(
                    Engine::Gemm,
                    l_act.addr + g as u32 * group_words,
                    dest,
                    (t, group, nc),
                    &w.block(g, c * nc, nc),
                    &scales,
                    MatFlags {
                        findemax: false,
                        accm: g > 0,
                    },
                )?;
            }
            if gelu {
                b.cvo(CvoFunc::Gelu, dest, dest, t * nc, CvoFlags::default())?;
            }
        }
        outputs.push((l_out, n, nc));
    }
    let mut reads = Vec::new();
    for &(l_out, _, _) in &outputs {
        let h_out = b.host("outputs", l_out.words)?;
        b.copy_out(l_out, h_out)?;
        reads.push(h_out);
    }
    let words = driver.run_many(layer, b, host_ops, &reads)?;
    Ok(outputs
        .iter()
        .zip(words)
        .map(|(&(_, n, nc), words)| {
            let chunk_words = t * bf16_row_words(nc);
            let chunks: Vec<Matrix> = (0..n / nc)
                .map(|c| read_rows(&words[c * chunk_words..(c + 1) * chunk_words], t, nc))
                .collect();
            Matrix::concat_columns(&chunks)
        })
        .collect())
}

/// Scores and softmax per head and query row, in the ISA's own sequence:
/// a GEMV with `findemax` (the row's scores against the keys up to it:
/// the causal mask is the GEMV's N), EXP with `sub_emax`, REDUCE_SUM,
/// SCALE with `recip_scale`. The host quantises Q to INT8 and each key
/// row to INT4 with its own scale (keys are the GEMV's weights).
pub fn softmax(
    driver: &mut Driver,
    layer: &str,
    heads: usize,
    q: &Matrix,
    k: &Matrix,
) -> Result<Vec<Matrix>, WorkloadError> {
    let (t, e) = (q.rows, q.cols / heads);
    let qa = QuantActs::quantise(q);
    let mut host_ops = (t * q.cols) as u64;
    let mut b = driver.builder();
    let q_words: Vec<_> = (0..heads)
        .flat_map(|h| {
            let qa = &qa;
            (0..t).flat_map(move |m| qa.words(m..m + 1, h * e, e))
        })
        .collect();
    let q_row = (e / I8_PER_WORD) as u32;
    let h_q = b.host_data("queries", q_words)?;
    let l_q = b.l2("queries", h_q.words)?;
    // Per (head, row): a word for the sum, then the row.
    let row = 1 + bf16_row_words(t) as u32;
    let l_rows = b.l2("score rows", (heads * t) as u32 * row)?;
    b.copy_in(h_q, l_q)?;
    for h in 0..heads {
        let keys = QuantWeights::quantise(&k.columns(h * e, e).transpose_for_keys(), e);
        host_ops += (t * e) as u64;
        for m in 0..t {
            let n = m + 1;
            let weights = keys.block(0, 0, n);
            let scales: Vec<_> = (0..n)
                .map(|j| round_f64(keys.scale(0, j).to_f64() * qa.scale / (e as f64).sqrt()))
                .collect();
            host_ops += n as u64;
            let at = l_rows.addr + (h * t + m) as u32 * row;
            b.mat(
                Engine::Gemv,
                l_q.addr + (h * t + m) as u32 * q_row,
                at + 1,
                (1, e, n),
                &weights,
                &scales,
                MatFlags {
                    findemax: true,
                    accm: false,
                },
            )?;
            let exp = CvoFlags {
                sub_emax: true,
                ..CvoFlags::default()
            };
            b.cvo(CvoFunc::Exp, at + 1, at + 1, n, exp)?;
            b.cvo(CvoFunc::ReduceSum, at + 1, at, n, CvoFlags::default())?;
            let divide = CvoFlags {
                recip_scale: true,
                ..CvoFlags::default()
            };
            b.cvo(CvoFunc::Scale, at, at + 1, n, divide)?;
        }
    }
    let h_rows = b.host("probabilities", l_rows.words)?;
    b.copy_out(l_rows, h_rows)?;
    let [words] = driver.run(layer, b, host_ops, [h_rows])?;
    Ok((0..heads)
        .map(|h| {
            Matrix::from_fn(t, t, |m, n| {
                let at = (h * t + m) * row as usize;
                if n <= m {
                    bf16_values(&words[at + 1..at + row as usize], t)[n]
                } else {
                    0.0
                }
            })
        })
        .collect())
}

trait Keys {
    /// A head's keys (`tokens x e`) as GEMV weights: `e x tokens`, one
    /// column per key, so that one INT4 group of `e` rows gives each key
    /// its own scale.
    fn transpose_for_keys(&self) -> Matrix;
}

impl Keys for Matrix {
    fn transpose_for_keys(&self) -> Matrix {
        Matrix::from_fn(self.cols, self.rows, |r, c| self.at(c, r))
    }
}

/// Probabilities times values, one GEMM per head: the host quantises the
/// probabilities to INT8 with the fixed scale 1/127 (they lie in [0, 1])
/// and each head's values to INT4 per column (values are the weights).
pub fn attention_v(
    driver: &mut Driver,
    layer: &str,
    heads: usize,
    probs: &[Matrix],
    v: &Matrix,
) -> Result<Matrix, WorkloadError> {
    let (t, e) = (v.rows, v.cols / heads);
    let mut b = driver.builder();
    let mut host_ops = 0;
    let p_acts: Vec<QuantActs> = probs
        .iter()
        .map(|p| QuantActs::with_scale(p, 1.0 / 127.0))
        .collect();
    host_ops += (heads * t * t) as u64;
    let p_words: Vec<_> = p_acts.iter().flat_map(|p| p.words(0..t, 0, t)).collect();
    let p_head = (t * t.div_ceil(I8_PER_WORD)) as u32;
    let h_p = b.host_data("probabilities", p_words)?;
    let l_p = b.l2("probabilities", h_p.words)?;
    let out_head = (t * bf16_row_words(e)) as u32;
    let l_out = b.l2("heads", heads as u32 * out_head)?;
    b.copy_in(h_p, l_p)?;
    for h in 0..heads {
        let values = QuantWeights::quantise(&v.columns(h * e, e), t);
        host_ops += (t * e) as u64;
        let scales: Vec<_> = (0..e)
            .map(|j| round_f64(values.scale(0, j).to_f64() / 127.0))
            .collect();
        host_ops += e as u64;
        b.mat(
            Engine::Gemm,
            l_p.addr + h as u32 * p_head,
            l_out.addr + h as u32 * out_head,
            (t, t, e),
            &values.block(0, 0, e),
            &scales,
            MatFlags::default(),
        )?;
    }
    let h_out = b.host("heads", l_out.words)?;
    b.copy_out(l_out, h_out)?;
    let [words] = driver.run(layer, b, host_ops, [h_out])?;
    let heads: Vec<Matrix> = (0..heads)
        .map(|h| {
            let at = h * out_head as usize;
            read_rows(&words[at..at + out_head as usize], t, e)
        })
        .collect();
    Ok(Matrix::concat_columns(&heads))
}

/// `bf16(a + b)` elementwise on the host: no instruction adds two vectors.
pub fn residual(driver: &mut Driver, layer: &str, a: &Matrix, b: &Matrix) -> Matrix {
    driver.host_only(layer, (a.rows * a.cols) as u64);
    a.zip(b, |x, y| bf16(x + y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fill_the_accumulator_and_divide_n() {
        assert_eq!(chunk_cols(16, 1024), 256);
        assert_eq!(chunk_cols(16, 256), 256);
        assert_eq!(chunk_cols(8, 128), 128);
        assert_eq!(chunk_cols(16, 64), 64);
        // Odd widths still divide into chunks, whole words where possible.
        assert_eq!(chunk_cols(16, 264), 88);
        assert_eq!(chunk_cols(16, 7), 7);
        assert_eq!(chunk_cols(64, 300), 60);
    }
}
