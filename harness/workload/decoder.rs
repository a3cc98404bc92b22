//! The decoder block of a small transformer as pccx programs and host work,
//! and the same mathematics in f64 (docs/workloads.md, "The block as programs").

use super::builder::BuildError;
use super::driver::{Driver, WorkloadError};
use super::layers;
use super::quant::{bf16, ErrorStats, Gaussian, Matrix, QuantWeights};
use pccx_golden::isa::CvoFunc;
use pccx_golden::numerics::cvo::accuracy::reference_f64;
use pccx_golden::numerics::w4a8::I8_PER_WORD;

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
    let norm1_scaled = layers::rmsnorm(driver, LAYERS[0], &model.x)?;
    let norm1 = norm1_scaled.map(|v| v * sqrt_d);
    let [q, k, v] = layers::projections(
        driver,
        LAYERS[1],
        &norm1_scaled,
        [&model.wq, &model.wk, &model.wv],
        sqrt_d,
    )?;
    let probs = layers::softmax(driver, LAYERS[2], dims.heads, &q, &k)?;
    let attn = layers::attention_v(driver, LAYERS[3], dims.heads, &probs, &v)?;
    let [o] = layers::projections(driver, LAYERS[4], &attn, [&model.wo], 1.0)?;
    let x1 = layers::residual(driver, LAYERS[5], &model.x, &o);
    let norm2_scaled = layers::rmsnorm(driver, LAYERS[6], &x1)?;
    let norm2 = norm2_scaled.map(|v| v * sqrt_d);
    let act = layers::mlp_up(driver, LAYERS[7], &norm2_scaled, &model.w_up, sqrt_d)?;
    let [mlp] = layers::projections(driver, LAYERS[8], &act, [&model.w_down], 1.0)?;
    let out = layers::residual(driver, LAYERS[9], &x1, &mlp);
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

#[cfg(test)]
mod tests {
    use super::*;

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
