//! The workload driver: runs each program of a workload on the reference and
//! the DUT with every check a campaign makes, reads its results back from
//! host memory, and keeps each layer's cost (docs/workloads.md).

use super::builder::{BuildError, ProgramBuilder, Region};
use crate::env::models::Setup;
use crate::scoreboard::{run_case_with, MismatchRecord, TimingMode};
use crate::triage::repro::{Artefacts, Recorder};
use pccx_golden::model::{NpuModel, Word};
use pccx_golden::{Engine, PerEngine};
use std::path::PathBuf;

/// The first difference of a workload, in the layer whose program it was.
#[derive(Debug)]
pub struct LayerFailure {
    pub layer: String,
    pub record: MismatchRecord,
    pub artefacts: Artefacts,
}

/// Why a workload stopped.
#[derive(Debug)]
pub enum WorkloadError {
    /// The workload does not fit the configuration (a usage error).
    Build(BuildError),
    /// The DUT differed from the reference (or hung, or broke the bus, or
    /// failed an assertion): a failure of the RTL, with its artefacts.
    Mismatch(Box<LayerFailure>),
    /// A model could not run the program (the harness's or the machine's
    /// fault).
    Model { layer: String, error: String },
}

impl From<BuildError> for WorkloadError {
    fn from(e: BuildError) -> WorkloadError {
        WorkloadError::Build(e)
    }
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadError::Build(e) => write!(f, "cannot build the workload: {e}"),
            WorkloadError::Mismatch(m) => write!(f, "{}: {}", m.layer, m.record),
            WorkloadError::Model { layer, error } => write!(f, "{layer}: {error}"),
        }
    }
}

/// What one layer cost: its programs on the NPU and the host's work.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerCost {
    pub name: String,
    pub programs: u32,
    /// Instructions issued (MEMSETs of the shape tables included).
    pub instructions: u64,
    /// Cycles from reset to the last retire, summed over its programs.
    pub cycles: u64,
    /// Cycles each engine was busy (start to retire).
    pub busy: PerEngine<u64>,
    /// Elementwise operations of the host: quantising, squaring, adding,
    /// computing a scale.
    pub host_ops: u64,
}

/// Runs a workload's programs, one after another, on fresh resets of the
/// same two models.
pub struct Driver {
    setup: Setup,
    reference: Box<dyn NpuModel>,
    dut: Box<dyn NpuModel>,
    seed: u64,
    out_dir: PathBuf,
    no_shrink: bool,
    pub layers: Vec<LayerCost>,
}

impl Driver {
    /// A driver on `setup`'s models; program `i` runs on images from
    /// `seed + i` (the words it never reads); a failure's artefacts go to
    /// `out_dir`.
    pub fn open(
        setup: Setup,
        seed: u64,
        out_dir: PathBuf,
        no_shrink: bool,
    ) -> Result<Driver, String> {
        let dut = setup.open_dut()?;
        Ok(Driver {
            reference: setup.open_reference(),
            dut,
            setup,
            seed,
            out_dir,
            no_shrink,
            layers: Vec::new(),
        })
    }

    /// A builder for the next program, on this driver's configuration.
    pub fn builder(&self) -> ProgramBuilder {
        ProgramBuilder::new(&self.setup.config)
    }

    fn layer(&mut self, name: &str) -> &mut LayerCost {
        if self.layers.last().is_none_or(|l| l.name != name) {
            self.layers.push(LayerCost {
                name: name.to_string(),
                ..LayerCost::default()
            });
        }
        self.layers.last_mut().expect("pushed above")
    }

    /// Host work of `layer` outside any program.
    pub fn host_only(&mut self, layer: &str, host_ops: u64) {
        self.layer(layer).host_ops += host_ops;
    }

    /// Runs the program `b` built for `layer` (the host did `host_ops`
    /// operations to prepare it) and returns the host memory of `reads`
    /// afterwards.
    pub fn run<const N: usize>(
        &mut self,
        layer: &str,
        b: ProgramBuilder,
        host_ops: u64,
        reads: [Region; N],
    ) -> Result<[Vec<Word>; N], WorkloadError> {
        let words = self.run_many(layer, b, host_ops, &reads)?;
        Ok(words.try_into().expect("one read per region"))
    }

    /// [`Driver::run`] with any number of regions.
    pub fn run_many(
        &mut self,
        layer: &str,
        b: ProgramBuilder,
        host_ops: u64,
        reads: &[Region],
    ) -> Result<Vec<Vec<Word>>, WorkloadError> {
        let index = self
            .layers
            .iter()
            .map(|l| u64::from(l.programs))
            .sum::<u64>();
        let case = b.finish(self.seed.wrapping_add(index));
        let outcome = run_case_with(
            &case,
            &mut *self.reference,
            &mut *self.dut,
            TimingMode::Exact,
        )
        .map_err(|e| WorkloadError::Model {
            layer: layer.to_string(),
            error: e.to_string(),
        })?;
        {
            let cost = self.layer(layer);
            cost.programs += 1;
            cost.instructions += u64::from(outcome.instructions);
            cost.cycles += outcome.cycles.unwrap_or(0);
            cost.host_ops += host_ops;
            for engine in Engine::ALL {
                cost.busy[engine] += outcome.engine_busy[engine];
            }
        }
        if let Some(mismatch) = outcome.first_mismatch {
            let mut recorder =
                Recorder::new(self.setup.clone(), self.out_dir.clone(), self.no_shrink);
            let artefacts = recorder.record(&case, &mismatch);
            return Err(WorkloadError::Mismatch(Box::new(LayerFailure {
                layer: layer.to_string(),
                record: mismatch.record(),
                artefacts,
            })));
        }
        reads
            .iter()
            .map(|r| {
                let mut out = vec![0; r.words as usize];
                self.reference.read_host(r.addr, &mut out).map(|()| out)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| WorkloadError::Model {
                layer: layer.to_string(),
                error: format!("reading the results back: {e}"),
            })
    }
}
