//! Tensors and the host's arithmetic between programs: quantising to INT4
//! and INT8, BF16 rounding, packing into words (docs/workloads.md, "Host
//! work").

use crate::stimulus::Rng;
use pccx_golden::model::Word;
use pccx_golden::numerics::cvo::accuracy::round_f64;
use pccx_golden::numerics::w4a8::{pack_activations, pack_output, unpack_bf16, BF16_PER_WORD};
use pccx_golden::numerics::Bf16;

/// A row-major matrix of reals.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f64>,
}

impl Matrix {
    pub fn zeros(rows: usize, cols: usize) -> Matrix {
        Matrix {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> f64) -> Matrix {
        let mut m = Matrix::zeros(rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                m.data[r * cols + c] = f(r, c);
            }
        }
        m
    }

    pub fn at(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.cols + c]
    }

    pub fn row(&self, r: usize) -> &[f64] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    /// Columns `c0 .. c0 + n`.
    pub fn columns(&self, c0: usize, n: usize) -> Matrix {
        Matrix::from_fn(self.rows, n, |r, c| self.at(r, c0 + c))
    }

    /// `self * other`, in f64.
    pub fn matmul(&self, other: &Matrix) -> Matrix {
        assert_eq!(
            self.cols, other.rows,
            "matmul of {}x{} by {}x{}",
            self.rows, self.cols, other.rows, other.cols
        );
        let mut out = Matrix::zeros(self.rows, other.cols);
        for r in 0..self.rows {
            for k in 0..self.cols {
                let a = self.at(r, k);
                for c in 0..other.cols {
                    out.data[r * other.cols + c] += a * other.at(k, c);
                }
            }
        }
        out
    }

    /// Every element mapped.
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Matrix {
        Matrix {
            rows: self.rows,
            cols: self.cols,
            data: self.data.iter().map(|&v| f(v)).collect(),
        }
    }

    /// Elementwise `f(self, other)`.
    pub fn zip(&self, other: &Matrix, f: impl Fn(f64, f64) -> f64) -> Matrix {
        assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        Matrix {
            rows: self.rows,
            cols: self.cols,
            data: self
                .data
                .iter()
                .zip(&other.data)
                .map(|(&a, &b)| f(a, b))
                .collect(),
        }
    }

    /// The rows of `parts` side by side (heads into one matrix).
    pub fn concat_columns(parts: &[Matrix]) -> Matrix {
        let rows = parts[0].rows;
        let cols = parts.iter().map(|p| p.cols).sum();
        let mut out = Matrix::zeros(rows, cols);
        for r in 0..rows {
            let mut c0 = 0;
            for p in parts {
                out.data[r * cols + c0..r * cols + c0 + p.cols].copy_from_slice(p.row(r));
                c0 += p.cols;
            }
        }
        out
    }

    fn max_abs(&self) -> f64 {
        self.data.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

/// A real rounded once to BF16, as a real.
pub fn bf16(v: f64) -> f64 {
    round_f64(v).to_f64()
}

/// Gaussian draws from the harness's PRNG (Box-Muller), for weights and
/// inputs that look like a model's.
pub struct Gaussian(Rng);

impl Gaussian {
    pub fn new(seed: u64) -> Gaussian {
        Gaussian(Rng::new(seed))
    }

    /// A draw from N(0, sigma^2).
    pub fn draw(&mut self, sigma: f64) -> f64 {
        let u1 = ((self.0.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    pub fn matrix(&mut self, rows: usize, cols: usize, sigma: f64) -> Matrix {
        Matrix::from_fn(rows, cols, |_, _| self.draw(sigma))
    }
}

/// INT4 weights (`k x n`), quantised per group of `group` rows along K and
/// per column, each group's column with one BF16 scale: how quantised
/// models store their linear layers.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantWeights {
    pub k: usize,
    pub n: usize,
    pub group: usize,
    /// `q[k * n + c]`, each in -8..=7.
    pub q: Vec<i8>,
    /// `scales[g * n + c]`: the scale of group `g`, column `c`.
    pub scales: Vec<Bf16>,
}

impl QuantWeights {
    /// `w` quantised: scale `bf16(max |w| / 7)` over the group's column,
    /// weights `round(w / scale)` clamped to -8..=7.
    pub fn quantise(w: &Matrix, group: usize) -> QuantWeights {
        assert_eq!(
            w.rows % group,
            0,
            "K = {} is not a multiple of the group {group}",
            w.rows
        );
        let (k, n) = (w.rows, w.cols);
        let groups = k / group;
        let mut scales = Vec::with_capacity(groups * n);
        let mut q = vec![0i8; k * n];
        for g in 0..groups {
            for c in 0..n {
                let max = (0..group).fold(0.0f64, |m, r| m.max(w.at(g * group + r, c).abs()));
                let s = round_f64(if max > 0.0 { max / 7.0 } else { 1.0 });
                for r in g * group..(g + 1) * group {
                    q[r * n + c] = (w.at(r, c) / s.to_f64()).round().clamp(-8.0, 7.0) as i8;
                }
                scales.push(s);
            }
        }
        // Scales were pushed group by group, column by column.
        QuantWeights {
            k,
            n,
            group,
            q,
            scales,
        }
    }

    pub fn groups(&self) -> usize {
        self.k / self.group
    }

    pub fn scale(&self, g: usize, c: usize) -> Bf16 {
        self.scales[g * self.n + c]
    }

    /// The weights the model holds: `q * scale`, exactly.
    pub fn dequantised(&self) -> Matrix {
        Matrix::from_fn(self.k, self.n, |r, c| {
            f64::from(self.q[r * self.n + c]) * self.scale(r / self.group, c).to_f64()
        })
    }

    /// Group `g`'s rows, columns `c0 .. c0 + cols`, row-major (a GEMM's
    /// weights).
    pub fn block(&self, g: usize, c0: usize, cols: usize) -> Vec<i8> {
        (g * self.group..(g + 1) * self.group)
            .flat_map(|r| {
                self.q[r * self.n + c0..r * self.n + c0 + cols]
                    .iter()
                    .copied()
            })
            .collect()
    }
}

/// INT8 activations with one scale for the tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantActs {
    pub rows: usize,
    pub cols: usize,
    pub q: Vec<i8>,
    pub scale: f64,
}

impl QuantActs {
    /// `m` quantised: scale `max |m| / 127`, values `round(m / scale)`.
    pub fn quantise(m: &Matrix) -> QuantActs {
        let max = m.max_abs();
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        QuantActs::with_scale(m, scale)
    }

    /// `m` quantised with a given scale (clamped to -127..=127).
    pub fn with_scale(m: &Matrix, scale: f64) -> QuantActs {
        QuantActs {
            rows: m.rows,
            cols: m.cols,
            q: m.data
                .iter()
                .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
            scale,
        }
    }

    /// Columns `c0 .. c0 + n` of `rows`, as L2 holds activation rows
    /// ([`pack_activations`]: each row from a word boundary, `ceil(n/16)`
    /// words).
    pub fn words(&self, rows: std::ops::Range<usize>, c0: usize, n: usize) -> Vec<Word> {
        let m = rows.len();
        let slice: Vec<i8> = rows
            .flat_map(|r| {
                self.q[r * self.cols + c0..r * self.cols + c0 + n]
                    .iter()
                    .copied()
            })
            .collect();
        pack_activations(m, n, &slice).unwrap_or_default()
    }
}

/// Words per row of `n` BF16 values.
pub fn bf16_row_words(n: usize) -> usize {
    n.div_ceil(BF16_PER_WORD)
}

/// One row of BF16 values as words, laid out as an output row
/// ([`pack_output`]: lanes past its end zero). Every value must already be
/// a BF16 value ([`bf16`]).
pub fn bf16_words(row: &[f64]) -> Vec<Word> {
    let values: Vec<Bf16> = row.iter().map(|&v| round_f64(v)).collect();
    pack_output(1, row.len(), &values)
        .unwrap_or_default()
        .into_iter()
        .map(|(word, _mask)| word)
        .collect()
}

/// `n` BF16 values from words, as reals.
pub fn bf16_values(words: &[Word], n: usize) -> Vec<f64> {
    words
        .iter()
        .flat_map(|&w| unpack_bf16(w))
        .take(n)
        .map(Bf16::to_f64)
        .collect()
}

/// How far `got` lands from `want`: normwise, so that elements near zero
/// do not dominate (docs/workloads.md, "Error").
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorStats {
    /// `max |got - want| / max |want|`.
    #[serde(with = "real")]
    pub max_rel: f64,
    /// `sum |got - want| / sum |want|`.
    #[serde(with = "real")]
    pub mean_rel: f64,
}

/// A real in a file: a number, or `"NaN"` / `"inf"` / `"-inf"`, which JSON
/// numbers cannot hold (serde_json would write `null` and not read it
/// back): an error that is NaN stays NaN, never a missing value.
mod real {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_str(&v.to_string())
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Text {
        Number(f64),
        Word(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Text::deserialize(d)? {
            Text::Number(v) => Ok(v),
            Text::Word(w) => w.parse().map_err(|_| {
                serde::de::Error::custom(format!(
                    "`{w}` is not a real (a number, NaN, inf or -inf)"
                ))
            }),
        }
    }
}

impl ErrorStats {
    /// The error of `got` against `want`, over all the pairs given.
    pub fn of(pairs: &[(&Matrix, &Matrix)]) -> ErrorStats {
        let (mut max_diff, mut max_want, mut sum_diff, mut sum_want) = (0.0f64, 0.0f64, 0.0, 0.0);
        for (got, want) in pairs {
            assert_eq!((got.rows, got.cols), (want.rows, want.cols));
            for (g, w) in got.data.iter().zip(&want.data) {
                let d = (g - w).abs();
                // A NaN anywhere makes the error NaN, never a small number.
                max_diff = if d.is_nan() {
                    f64::NAN
                } else {
                    max_diff.max(d)
                };
                max_want = max_want.max(w.abs());
                sum_diff += d;
                sum_want += w.abs();
            }
        }
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { a };
        ErrorStats {
            max_rel: ratio(max_diff, max_want),
            mean_rel: ratio(sum_diff, sum_want),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int4_groups_round_trip_within_half_a_step() {
        let w = Gaussian::new(3).matrix(64, 40, 0.1);
        let q = QuantWeights::quantise(&w, 32);
        assert!(q.q.iter().all(|v| (-8..=7).contains(v)));
        assert_eq!(q.scales.len(), 2 * 40);
        let d = q.dequantised();
        for r in 0..64 {
            for c in 0..40 {
                let step = q.scale(r / 32, c).to_f64();
                assert!(
                    (d.at(r, c) - w.at(r, c)).abs() <= step * 0.5 + 1e-12
                        || w.at(r, c).abs() >= step * 7.0
                );
            }
        }
        assert_eq!(q.block(1, 8, 4).len(), 32 * 4);
        assert_eq!(q.block(1, 8, 4)[0], q.q[32 * 40 + 8]);
    }

    #[test]
    fn int8_words_put_each_row_on_a_word_boundary() {
        let m = Matrix::from_fn(2, 20, |r, c| (r * 20 + c) as f64);
        let a = QuantActs::quantise(&m);
        assert_eq!(a.words(0..2, 0, 20).len(), 4);
        assert_eq!(a.words(0..2, 16, 4).len(), 2);
        assert_eq!(a.words(1..2, 0, 20), a.words(0..2, 0, 20)[2..]);
        assert_eq!(a.q[39], 127);
    }

    #[test]
    fn error_stats_are_normwise_and_nan_is_never_small() {
        let want = Matrix::from_fn(1, 4, |_, c| c as f64);
        let got = want.map(|v| v + 0.5);
        let e = ErrorStats::of(&[(&got, &want)]);
        assert_eq!(e.max_rel, 0.5 / 3.0);
        assert_eq!(e.mean_rel, 2.0 / 6.0);
        let nan = want.map(|_| f64::NAN);
        let e = ErrorStats::of(&[(&nan, &want)]);
        assert!(e.max_rel.is_nan());
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains("\"NaN\""), "{text}");
        let back: ErrorStats = serde_json::from_str(&text).unwrap();
        assert!(back.max_rel.is_nan() && back.mean_rel.is_nan());
        let finite: ErrorStats =
            serde_json::from_str(r#"{"max_rel": 0.5, "mean_rel": "inf"}"#).unwrap();
        assert_eq!((finite.max_rel, finite.mean_rel), (0.5, f64::INFINITY));
    }
}
