//! Real workloads on the NPU: a transformer decoder block built as pccx
//! programs, run on the RTL against the golden model with every check, its
//! cost per layer, and its error against the same mathematics in f64
//! (docs/workloads.md).
//!
//! `builder` lays out one program (L2, host memory, shape tables, weight
//! streams); `driver` runs the programs one after another and keeps each
//! layer's cost; `quant` is the host's arithmetic between programs;
//! `layers` are the layers as programs; `decoder` composes them into the
//! block and holds its f64 reference.

pub mod builder;
pub mod decoder;
pub mod driver;
pub mod layers;
pub mod quant;

use crate::env::models::{DutKind, Setup};
use crate::scoreboard::MismatchRecord;
use decoder::{DecoderDims, DecoderModel};
use driver::{Driver, LayerCost, WorkloadError};
use pccx_golden::Engine;
use quant::ErrorStats;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The workloads there are.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadName {
    /// A decoder block: d_model 256, 4 heads, 16 tokens, MLP 1024 (its
    /// largest program takes 2,304 L2 words: it fits every configuration).
    Decoder,
    /// The same block at d_model 64, 2 heads, 8 tokens, MLP 128 (fits
    /// tiny; `cargo test` runs it end to end).
    DecoderTiny,
}

impl WorkloadName {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadName::Decoder => "decoder",
            WorkloadName::DecoderTiny => "decoder-tiny",
        }
    }

    pub fn dims(self) -> DecoderDims {
        match self {
            WorkloadName::Decoder => DecoderDims {
                d_model: 256,
                heads: 4,
                tokens: 16,
                hidden: 1024,
                group: 64,
            },
            WorkloadName::DecoderTiny => DecoderDims {
                d_model: 64,
                heads: 2,
                tokens: 8,
                hidden: 128,
                group: 32,
            },
        }
    }
}

/// One layer's line of the tables.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayerReport {
    pub name: String,
    pub programs: u32,
    pub instructions: u64,
    pub cycles: u64,
    /// Busy cycles per engine, by the engine's name.
    pub busy: BTreeMap<String, u64>,
    pub host_ops: u64,
    /// Against the block in f64 end to end (errors accumulate along the
    /// block); `None` when the layer did not finish.
    pub error: Option<ErrorStats>,
    /// Against the layer in f64 on the NPU's own inputs to it: the
    /// layer's error alone.
    pub error_alone: Option<ErrorStats>,
}

impl LayerReport {
    /// `engine`'s busy share of the layer's cycles.
    pub fn utilisation(&self, engine: Engine) -> f64 {
        let busy = self.busy.get(engine.name()).copied().unwrap_or(0);
        if self.cycles == 0 {
            0.0
        } else {
            busy as f64 / self.cycles as f64
        }
    }
}

/// Where a failing layer's artefacts are.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FailureReport {
    pub layer: String,
    pub mismatch: MismatchRecord,
    pub repro: Option<PathBuf>,
    pub wave: Option<PathBuf>,
    pub min_asm: Option<PathBuf>,
}

/// The result of one workload run, as `--json` writes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkloadReport {
    pub format: String,
    pub version: u32,
    pub workload: WorkloadName,
    pub dims: DecoderDims,
    pub config: String,
    pub dut: DutKind,
    pub seed: u64,
    pub layers: Vec<LayerReport>,
    /// `ok` or `mismatch`.
    pub verdict: String,
    pub failure: Option<FailureReport>,
}

pub const FORMAT: &str = "pccx-cosim workload";
pub const VERSION: u32 = 1;

/// What to run.
#[derive(Clone, Debug)]
pub struct WorkloadRequest {
    pub workload: WorkloadName,
    pub setup: Setup,
    pub seed: u64,
    /// Where a failure's repro, waveform and shrunk program go.
    pub out_dir: PathBuf,
    pub no_shrink: bool,
}

/// The reference's tensors, and a hook to bend the model the reference
/// sees (a test shows that the error table notices one scale one ULP off).
pub fn run_with_reference_model(
    request: &WorkloadRequest,
    reference_model: impl FnOnce(&DecoderModel) -> DecoderModel,
) -> Result<WorkloadReport, WorkloadError> {
    let dims = request.workload.dims();
    dims.check()?;
    let model = DecoderModel::new(dims, request.seed);
    let reference = reference_model(&model);
    let expected = decoder::reference(&reference);
    let mut driver = Driver::open(
        request.setup.clone(),
        request.seed,
        request.out_dir.clone(),
        request.no_shrink,
    )
    .map_err(|error| WorkloadError::Model {
        layer: "opening the models".into(),
        error,
    })?;
    let ran = decoder::run(&model, &mut driver);
    let (errors, alone) = match &ran {
        Ok(tensors) => (
            tensors.errors(&expected),
            tensors.errors(&decoder::reference_per_layer(&reference, tensors)),
        ),
        Err(_) => (Vec::new(), Vec::new()),
    };
    let layers: Vec<LayerReport> = driver
        .layers
        .iter()
        .enumerate()
        .map(|(i, cost)| layer_report(cost, errors.get(i).copied(), alone.get(i).copied()))
        .collect();
    let mut report = WorkloadReport {
        format: FORMAT.into(),
        version: VERSION,
        workload: request.workload,
        dims,
        config: request.setup.config.name.into(),
        dut: request.setup.dut,
        seed: request.seed,
        layers,
        verdict: "ok".into(),
        failure: None,
    };
    match ran {
        Ok(_) => Ok(report),
        Err(WorkloadError::Mismatch(m)) => {
            let m = *m;
            report.verdict = "mismatch".into();
            report.failure = Some(FailureReport {
                layer: m.layer,
                mismatch: m.record,
                repro: m.artefacts.repro,
                wave: m.artefacts.wave,
                min_asm: m.artefacts.min_asm,
            });
            Ok(report)
        }
        Err(e) => Err(e),
    }
}

/// Runs `request`'s workload: every program against the reference, the
/// outputs against the f64 reference.
pub fn run(request: &WorkloadRequest) -> Result<WorkloadReport, WorkloadError> {
    run_with_reference_model(request, DecoderModel::clone)
}

fn layer_report(
    cost: &LayerCost,
    error: Option<ErrorStats>,
    error_alone: Option<ErrorStats>,
) -> LayerReport {
    LayerReport {
        name: cost.name.clone(),
        programs: cost.programs,
        instructions: cost.instructions,
        cycles: cost.cycles,
        busy: Engine::ALL
            .into_iter()
            .map(|e| (e.name().to_string(), cost.busy[e]))
            .collect(),
        host_ops: cost.host_ops,
        error,
        error_alone,
    }
}

/// A `--json` file of `pccx-cosim workload`, or what is wrong with it (the
/// file and the field named).
pub fn read_report(path: &std::path::Path) -> Result<WorkloadReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let report: WorkloadReport = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| format!("{}: field `{}`: {}", path.display(), e.path(), e.inner()))?;
    if report.format != FORMAT || report.version != VERSION {
        return Err(format!(
            "{}: a `{}` file of version {}, not a `{FORMAT}` file of version {VERSION}",
            path.display(),
            report.format,
            report.version
        ));
    }
    Ok(report)
}

/// The per-layer table as text (what the command prints).
pub fn table(report: &WorkloadReport) -> String {
    let mut out = format!(
        "{:<20} {:>5} {:>9} {:>5} {:>5} {:>5} {:>6} {:>5} {:>8} {:>17} {:>17}\n",
        "", "", "", "", "", "", "", "", "", "end to end", "layer alone"
    );
    out += &format!(
        "{:<20} {:>5} {:>9} {:>5} {:>5} {:>5} {:>6} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
        "layer",
        "instr",
        "cycles",
        "gemv",
        "gemm",
        "mem",
        "memset",
        "cvo",
        "host ops",
        "max",
        "mean",
        "max",
        "mean"
    );
    let stats = |e: Option<ErrorStats>| match e {
        Some(e) => (format!("{:.2e}", e.max_rel), format!("{:.2e}", e.mean_rel)),
        None => ("-".into(), "-".into()),
    };
    for l in &report.layers {
        let pct = |e: Engine| format!("{:.0}%", 100.0 * l.utilisation(e));
        let (max, mean) = stats(l.error);
        let (max1, mean1) = stats(l.error_alone);
        out += &format!(
            "{:<20} {:>5} {:>9} {:>5} {:>5} {:>5} {:>6} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
            l.name,
            l.instructions,
            l.cycles,
            pct(Engine::Gemv),
            pct(Engine::Gemm),
            pct(Engine::Mem),
            pct(Engine::Memset),
            pct(Engine::Cvo),
            l.host_ops,
            max,
            mean,
            max1,
            mean1
        );
    }
    let total = |f: fn(&LayerReport) -> u64| report.layers.iter().map(f).sum::<u64>();
    out += &format!(
        "{:<20} {:>5} {:>9} {:>41}\n",
        "total",
        total(|l| l.instructions),
        total(|l| l.cycles),
        total(|l| l.host_ops)
    );
    out
}
