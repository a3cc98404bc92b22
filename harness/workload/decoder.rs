//! The decoder block of a small transformer as pccx programs and host work,
//! and the same mathematics in f64 (docs/workloads.md, "The decoder block").

use super::builder::{BuildError, CvoFlags, MatFlags};
use super::driver::{Driver, WorkloadError};
use super::quant::{
    bf16, bf16_row_words, bf16_values, bf16_words, ErrorStats, Gaussian, Matrix, QuantActs,
    QuantWeights,
};
use pccx_golden::isa::CvoFunc;
use pccx_golden::numerics::cvo::accuracy::{reference_f64, round_f64};
use pccx_golden::numerics::w4a8::I8_PER_WORD;
use pccx_golden::Engine;

/// The shape of a decoder block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DecoderDims {
    pub d_model: usize,
    pub heads: usize,
    pub tokens: usize,
    /// Width of the MLP's hidden layer.
    pub hidden: usize,
    /// Rows of K per INT4 weight group (one BF16 scale per group and
    /// column).
    pub group: usize,
}

impl DecoderDims {
    pub fn head_dim(&self) -> usize {
        self.d_model / self.heads
    }

    /// Why these dimensions cannot be laid out as the builder does, if so.
    pub fn check(&self) -> Result<(), BuildError> {
        let e = self.head_dim();
        let bad = |what: String| Err(BuildError(format!("decoder dimensions {self:?}: {what}")));
        if self.heads == 0
            || !self.d_model.is_multiple_of(self.heads)
            || !e.is_multiple_of(I8_PER_WORD)
        {
            return bad(format!("the head dimension {e} must be a multiple of 16"));
        }
        if self.group == 0
            || !self.group.is_multiple_of(I8_PER_WORD)
            || !self.d_model.is_multiple_of(self.group)
            || !self.hidden.is_multiple_of(self.group)
        {
            return bad("the group must be a multiple of 16 dividing d_model and hidden".into());
        }
        if self.tokens == 0 || self.tokens > 64 {
            return bad("1 to 64 tokens (one weight shape entry per causal row)".into());
        }
        if !self.d_model.is_multiple_of(8) || !self.hidden.is_multiple_of(8) {
            return bad("d_model and hidden must be multiples of 8".into());
        }
        Ok(())
    }
}

/// The block's parameters and input: INT4 weights with BF16 group scales
/// (the RMSNorm gains folded into the projection after each norm, as
/// quantised models ship them) and BF16 input rows.
#[derive(Clone, Debug, PartialEq)]
pub struct DecoderModel {
    pub dims: DecoderDims,
    pub x: Matrix,
    pub wq: QuantWeights,
    pub wk: QuantWeights,
    pub wv: QuantWeights,
    pub wo: QuantWeights,
    pub w_up: QuantWeights,
    pub w_down: QuantWeights,
}

impl DecoderModel {
    /// Weights and input drawn from `seed`: weights N(0, 1/K), gains
    /// 1 + N(0, 0.1^2), input N(0, 1) rounded to BF16.
    pub fn new(dims: DecoderDims, seed: u64) -> DecoderModel {
        let mut g = Gaussian::new(seed);
        let (d, f) = (dims.d_model, dims.hidden);
        let x = g.matrix(dims.tokens, d, 1.0).map(bf16);
        let gain1: Vec<f64> = (0..d).map(|_| 1.0 + g.draw(0.1)).collect();
        let gain2: Vec<f64> = (0..d).map(|_| 1.0 + g.draw(0.1)).collect();
        let mut linear = |k: usize, n: usize, gain: Option<&[f64]>| {
            let w = g.matrix(k, n, 1.0 / (k as f64).sqrt());
            let w = match gain {
                Some(gain) => Matrix::from_fn(k, n, |r, c| gain[r] * w.at(r, c)),
                None => w,
            };
            QuantWeights::quantise(&w, dims.group)
        };
        DecoderModel {
            dims,
            wq: linear(d, d, Some(&gain1)),
            wk: linear(d, d, Some(&gain1)),
            wv: linear(d, d, Some(&gain1)),
            wo: linear(d, d, None),
            w_up: linear(d, f, Some(&gain2)),
            w_down: linear(f, d, None),
            x,
        }
    }
}

/// Every tensor a layer of the block produces, by the NPU or by the f64
/// reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensors {
    /// `x / rms(x)` (the gain is in the next weights).
    pub norm1: Matrix,
    pub q: Matrix,
    pub k: Matrix,
    pub v: Matrix,
    /// Per head, `tokens x tokens`, zero above the diagonal (causal).
    pub probs: Vec<Matrix>,
    pub attn: Matrix,
    pub o: Matrix,
    pub x1: Matrix,
    pub norm2: Matrix,
    /// GELU of the MLP's up projection.
    pub act: Matrix,
    pub mlp: Matrix,
    pub out: Matrix,
}

/// The layers of the block, in order, as the tables name them.
pub const LAYERS: [&str; 10] = [
    "rmsnorm 1",
    "q/k/v projections",
    "scores + softmax",
    "attention x V",
    "output projection",
    "residual 1",
    "rmsnorm 2",
    "MLP up + GELU",
    "MLP down",
    "residual 2",
];

impl Tensors {
    /// Each layer's output against `reference`'s, in [`LAYERS`] order.
    pub fn errors(&self, reference: &Tensors) -> Vec<ErrorStats> {
        let probs: Vec<(&Matrix, &Matrix)> = self.probs.iter().zip(&reference.probs).collect();
        vec![
            ErrorStats::of(&[(&self.norm1, &reference.norm1)]),
            ErrorStats::of(&[
                (&self.q, &reference.q),
                (&self.k, &reference.k),
                (&self.v, &reference.v),
            ]),
            ErrorStats::of(&probs),
            ErrorStats::of(&[(&self.attn, &reference.attn)]),
            ErrorStats::of(&[(&self.o, &reference.o)]),
            ErrorStats::of(&[(&self.x1, &reference.x1)]),
            ErrorStats::of(&[(&self.norm2, &reference.norm2)]),
            ErrorStats::of(&[(&self.act, &reference.act)]),
            ErrorStats::of(&[(&self.mlp, &reference.mlp)]),
            ErrorStats::of(&[(&self.out, &reference.out)]),
        ]
    }
}

fn rmsnorm_f64(x: &Matrix) -> Matrix {
    let d = x.cols as f64;
    Matrix::from_fn(x.rows, x.cols, |r, c| {
        let ms = x.row(r).iter().map(|v| v * v).sum::<f64>() / d;
        x.at(r, c) / ms.sqrt()
    })
}

/// The block's layers in f64 with the model's weights (INT4 times their
/// scales, exactly) on unquantised activations: softmax, RMSNorm and GELU
/// exact, nothing rounded.
struct F64Block<'a> {
    model: &'a DecoderModel,
}

impl F64Block<'_> {
    fn projection(&self, x: &Matrix, w: &QuantWeights) -> Matrix {
        x.matmul(&w.dequantised())
    }

    /// Causal softmax of each head's scores, `q k^T / sqrt(e)`.
    fn probs(&self, q: &Matrix, k: &Matrix) -> Vec<Matrix> {
        let dims = self.model.dims;
        let (t, e) = (dims.tokens, dims.head_dim());
        (0..dims.heads)
            .map(|h| {
                let (qh, kh) = (q.columns(h * e, e), k.columns(h * e, e));
                let mut p = Matrix::zeros(t, t);
                for m in 0..t {
                    let scores: Vec<f64> = (0..=m)
                        .map(|n| {
                            (0..e).map(|i| qh.at(m, i) * kh.at(n, i)).sum::<f64>()
                                / (e as f64).sqrt()
                        })
                        .collect();
                    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let exps: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let sum: f64 = exps.iter().sum();
                    for (n, x) in exps.iter().enumerate() {
                        p.data[m * t + n] = x / sum;
                    }
                }
                p
            })
            .collect()
    }

    fn attention(&self, probs: &[Matrix], v: &Matrix) -> Matrix {
        let e = self.model.dims.head_dim();
        let heads: Vec<Matrix> = probs
            .iter()
            .enumerate()
            .map(|(h, p)| p.matmul(&v.columns(h * e, e)))
            .collect();
        Matrix::concat_columns(&heads)
    }

    fn mlp_up(&self, x: &Matrix) -> Matrix {
        self.projection(x, &self.model.w_up)
            .map(|v| reference_f64(CvoFunc::Gelu, v))
    }
}

/// The block in f64 from its input (end to end: each layer takes the
/// reference's own previous tensors).
pub fn reference(model: &DecoderModel) -> Tensors {
    let f = F64Block { model };
    let norm1 = rmsnorm_f64(&model.x);
    let q = f.projection(&norm1, &model.wq);
    let k = f.projection(&norm1, &model.wk);
    let v = f.projection(&norm1, &model.wv);
    let probs = f.probs(&q, &k);
    let attn = f.attention(&probs, &v);
    let o = f.projection(&attn, &model.wo);
    let x1 = model.x.zip(&o, |a, b| a + b);
    let norm2 = rmsnorm_f64(&x1);
    let act = f.mlp_up(&norm2);
    let mlp = f.projection(&act, &model.w_down);
    let out = x1.zip(&mlp, |a, b| a + b);
    Tensors {
        norm1,
        q,
        k,
        v,
        probs,
        attn,
        o,
        x1,
        norm2,
        act,
        mlp,
        out,
    }
}

/// Each layer in f64 on the NPU's own inputs to it (`npu`'s tensors of the
/// layer before): the error of each layer alone, where [`reference`]'s
/// accumulates along the block.
pub fn reference_per_layer(model: &DecoderModel, npu: &Tensors) -> Tensors {
    let f = F64Block { model };
    Tensors {
        norm1: rmsnorm_f64(&model.x),
        q: f.projection(&npu.norm1, &model.wq),
        k: f.projection(&npu.norm1, &model.wk),
        v: f.projection(&npu.norm1, &model.wv),
        probs: f.probs(&npu.q, &npu.k),
        attn: f.attention(&npu.probs, &npu.v),
        o: f.projection(&npu.attn, &model.wo),
        x1: model.x.zip(&npu.o, |a, b| a + b),
        norm2: rmsnorm_f64(&npu.x1),
        act: f.mlp_up(&npu.norm2),
        mlp: f.projection(&npu.act, &model.w_down),
        out: npu.x1.zip(&npu.mlp, |a, b| a + b),
    }
}

/// The block on the NPU: one program per layer (the residuals are host
/// work), each run by `driver` with every check, the host's work between
/// them done here and counted.
pub fn run(model: &DecoderModel, driver: &mut Driver) -> Result<Tensors, WorkloadError> {
    model.dims.check()?;
    let dims = model.dims;
    let sqrt_d = (dims.d_model as f64).sqrt();
    let norm1_scaled = rmsnorm(driver, LAYERS[0], &model.x)?;
    let norm1 = norm1_scaled.map(|v| v * sqrt_d);
    let [q, k, v] = projections(
        driver,
        LAYERS[1],
        &norm1_scaled,
        [&model.wq, &model.wk, &model.wv],
        sqrt_d,
    )?;
    let probs = softmax(driver, LAYERS[2], dims, &q, &k)?;
    let attn = attention_v(driver, LAYERS[3], dims, &probs, &v)?;
    let [o] = projections(driver, LAYERS[4], &attn, [&model.wo], 1.0)?;
    let x1 = residual(driver, LAYERS[5], &model.x, &o);
    let norm2_scaled = rmsnorm(driver, LAYERS[6], &x1)?;
    let norm2 = norm2_scaled.map(|v| v * sqrt_d);
    let act = mlp_up(driver, LAYERS[7], &norm2_scaled, &model.w_up, sqrt_d)?;
    let [mlp] = projections(driver, LAYERS[8], &act, [&model.w_down], 1.0)?;
    let out = residual(driver, LAYERS[9], &x1, &mlp);
    Ok(Tensors {
        norm1,
        q,
        k,
        v,
        probs,
        attn,
        o,
        x1,
        norm2,
        act,
        mlp,
        out,
    })
}

/// RMSNorm of the BF16 rows of `x`, divided by `sqrt(d)` (a power of two
/// for the shipped dimensions, folded into the next weights' scales): per
/// token REDUCE_SUM of the squares, SQRT, RECIP, SCALE. The host squares
/// the elements (no instruction multiplies two vectors elementwise).
fn rmsnorm(driver: &mut Driver, layer: &str, x: &Matrix) -> Result<Matrix, WorkloadError> {
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
fn read_rows(words: &[pccx_golden::model::Word], t: usize, n: usize) -> Matrix {
    let row = bf16_row_words(n);
    let mut m = Matrix::zeros(t, n);
    for r in 0..t {
        m.data[r * n..(r + 1) * n].copy_from_slice(&bf16_values(&words[r * row..(r + 1) * row], n));
    }
    m
}

/// Output columns per GEMM: the accumulator holds `tokens * ceil(N/8)`
/// words at most.
fn chunk_cols(tokens: usize, n: usize) -> usize {
    let limit = (pccx_golden::exec::mat::MAT_ACC_WORDS as usize / tokens * 8).min(256);
    let mut c = n.min(limit);
    while !n.is_multiple_of(c) {
        c -= 8;
    }
    c
}

/// Linear layers on the same input: the host quantises `x` to INT8 (one
/// scale), then per weight matrix, per chunk of output columns and per
/// weight group one GEMM, the groups accumulated (`accm`), each with the
/// group's scales times the activation scale times `fold` streamed as its
/// BF16 column scales.
fn projections<const P: usize>(
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
fn mlp_up(
    driver: &mut Driver,
    layer: &str,
    x: &Matrix,
    w: &QuantWeights,
    fold: f64,
) -> Result<Matrix, WorkloadError> {
    Ok(linear(driver, layer, x, &[w], fold, true)?.remove(0))
}

fn linear(
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
    // Group-major: each group's K slice of every row is one GEMM's M rows.
    let act_words: Vec<_> = (0..k / group)
        .flat_map(|g| acts.words(g * group, group))
        .collect();
    let group_words = (t * group / I8_PER_WORD) as u32;
    let h_act = b.host_data("activations", act_words)?;
    let l_act = b.l2("activations", h_act.words)?;
    b.copy_in(h_act, l_act)?;
    let mut outputs = Vec::new();
    for w in weights {
        assert_eq!(w.k, k);
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
fn softmax(
    driver: &mut Driver,
    layer: &str,
    dims: DecoderDims,
    q: &Matrix,
    k: &Matrix,
) -> Result<Vec<Matrix>, WorkloadError> {
    let (t, e) = (dims.tokens, dims.head_dim());
    let qa = QuantActs::quantise(q);
    let mut host_ops = (t * dims.d_model) as u64;
    let mut b = driver.builder();
    let q_words: Vec<_> = (0..dims.heads)
        .flat_map(|h| {
            let qa = &qa;
            (0..t).flat_map(move |m| {
                let one = QuantActs {
                    rows: 1,
                    cols: qa.cols,
                    q: qa.q[m * qa.cols..(m + 1) * qa.cols].to_vec(),
                    scale: qa.scale,
                };
                one.words(h * e, e)
            })
        })
        .collect();
    let q_row = (e / I8_PER_WORD) as u32;
    let h_q = b.host_data("queries", q_words)?;
    let l_q = b.l2("queries", h_q.words)?;
    // Per (head, row): a word for the sum, then the row.
    let row = 1 + bf16_row_words(t) as u32;
    let l_rows = b.l2("score rows", (dims.heads * t) as u32 * row)?;
    b.copy_in(h_q, l_q)?;
    for h in 0..dims.heads {
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
    Ok((0..dims.heads)
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
fn attention_v(
    driver: &mut Driver,
    layer: &str,
    dims: DecoderDims,
    probs: &[Matrix],
    v: &Matrix,
) -> Result<Matrix, WorkloadError> {
    let (t, e) = (dims.tokens, dims.head_dim());
    let mut b = driver.builder();
    let mut host_ops = 0;
    let p_acts: Vec<QuantActs> = probs
        .iter()
        .map(|p| QuantActs::with_scale(p, 1.0 / 127.0))
        .collect();
    host_ops += (dims.heads * t * t) as u64;
    let p_words: Vec<_> = p_acts.iter().flat_map(|p| p.words(0, t)).collect();
    let p_head = (t * t.div_ceil(I8_PER_WORD)) as u32;
    let h_p = b.host_data("probabilities", p_words)?;
    let l_p = b.l2("probabilities", h_p.words)?;
    let out_head = (t * bf16_row_words(e)) as u32;
    let l_out = b.l2("heads", dims.heads as u32 * out_head)?;
    b.copy_in(h_p, l_p)?;
    for h in 0..dims.heads {
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
    let heads: Vec<Matrix> = (0..dims.heads)
        .map(|h| {
            let at = h * out_head as usize;
            read_rows(&words[at..at + out_head as usize], t, e)
        })
        .collect();
    Ok(Matrix::concat_columns(&heads))
}

/// `bf16(a + b)` elementwise on the host: no instruction adds two vectors.
fn residual(driver: &mut Driver, layer: &str, a: &Matrix, b: &Matrix) -> Matrix {
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
    }

    #[test]
    fn the_reference_softmax_rows_sum_to_one_and_are_causal() {
        let dims = DecoderDims {
            d_model: 32,
            heads: 2,
            tokens: 4,
            hidden: 64,
            group: 16,
        };
        let r = reference(&DecoderModel::new(dims, 1));
        for p in &r.probs {
            for m in 0..4 {
                assert!((p.row(m).iter().sum::<f64>() - 1.0).abs() < 1e-12);
                assert!(p.row(m)[m + 1..].iter().all(|&v| v == 0.0));
            }
        }
        // RMSNorm: mean square 1 per row.
        for m in 0..4 {
            let ms = r.norm1.row(m).iter().map(|v| v * v).sum::<f64>() / 32.0;
            assert!((ms - 1.0).abs() < 1e-12);
        }
    }
}
