//! The one model factory: every reference and every DUT of a run, a test or
//! a tool is opened here, and this is the only file that knows whether the
//! binary was built with the RTL (the `rtl` cargo feature).

use crate::config::{HwConfig, IDEAL_HOST_LATENCY};
use crate::env::faults::{Fault, Faulty};
use crate::env::observed::Observed;
use pccx_golden::golden::{Golden, GoldenConfig};
use pccx_golden::model::{NpuModel, Observation};
use serde_json::Value;

/// The reference: the golden sequential interpreter with its timing part,
/// which predicts every cycle for ideal I/O on `config` (docs/timing.md).
pub fn open_reference(config: &HwConfig) -> Box<dyn NpuModel> {
    Box::new(reference_golden(config))
}

/// The reference of [`open_reference`] as its concrete type (for a wrapper
/// that looks at its tables and timeline: `coverage::Probe`).
pub fn reference_golden(config: &HwConfig) -> Golden {
    Golden::with_timing(
        GoldenConfig {
            l2_words: config.l2_words,
        },
        config.timing_params(),
    )
}

/// Which implementation is the device under test.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum DutKind {
    /// The Verilated RTL of the configuration.
    Rtl,
    /// The golden model against itself (a self-check of the harness, and the
    /// only DUT of a build without the `rtl` feature).
    Golden,
}

impl DutKind {
    pub const ALL: [DutKind; 2] = [DutKind::Rtl, DutKind::Golden];

    /// The name the CLI and the repro file use.
    pub fn name(self) -> &'static str {
        match self {
            DutKind::Rtl => "rtl",
            DutKind::Golden => "golden",
        }
    }

    pub fn by_name(name: &str) -> Option<DutKind> {
        DutKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the DUT has a host port whose timing can be set.
    pub fn has_host_port(self) -> bool {
        self == DutKind::Rtl
    }
}

/// The device under test of `kind` on `config`, with default host timing. An
/// error says why it cannot be opened (no Verilated build for this
/// configuration, say).
pub fn open_dut(config: &HwConfig, kind: DutKind) -> Result<Box<dyn NpuModel>, String> {
    Setup::new(*config, kind, None).open_dut()
}

/// The host side of the DUT's ACP port.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostIo {
    /// Cycles from an accepted request to its response.
    pub latency: u32,
    /// A stall schedule, when the DUT ran with one (`None`: ideal I/O).
    /// Kept as JSON until the harness can replay one.
    pub stall_schedule: Option<Value>,
}

impl HostIo {
    /// What [`open_dut`] gives a DUT of `kind`: the RTL's default timing, or
    /// nothing for a DUT without a host port.
    pub fn default_for(kind: DutKind) -> Option<HostIo> {
        kind.has_host_port().then_some(HostIo {
            latency: IDEAL_HOST_LATENCY,
            stall_schedule: None,
        })
    }
}

/// How the models of a run are made: what a campaign opens, and what
/// `replay` needs to make them again.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    pub config: HwConfig,
    pub dut: DutKind,
    /// The fault wrapped around the DUT (`--inject-fault`).
    pub fault: Option<Fault>,
    /// The DUT's host I/O timing; `None` for a DUT without one.
    pub host_timing: Option<HostIo>,
    /// Open the RTL from its coverage build (`--rtl-coverage`,
    /// docs/coverage.md).
    pub rtl_coverage: bool,
    /// The level the DUT is seen at (`--observe`, docs/dut-contract.md):
    /// below its own, it is opened inside [`Observed`].
    pub observe: Observation,
    /// The manifest of the DUT when it is not the repository's own RTL
    /// (`--dut-manifest`, relative to the sources this binary was built
    /// from): built on demand and opened in its place.
    pub dut_manifest: Option<String>,
    /// Whether the DUT's declared numerics profile applies (`--numerics`).
    pub numerics: crate::env::numerics::NumericsMode,
}

impl Setup {
    /// A DUT of `kind` on `config` with default host timing and `fault`
    /// around it.
    pub fn new(config: HwConfig, dut: DutKind, fault: Option<Fault>) -> Setup {
        Setup {
            config,
            dut,
            fault,
            host_timing: HostIo::default_for(dut),
            rtl_coverage: false,
            observe: Observation::Full,
            dut_manifest: None,
            numerics: Default::default(),
        }
    }

    /// A fresh reference for this setup's configuration.
    pub fn open_reference(&self) -> Box<dyn NpuModel> {
        open_reference(&self.config)
    }

    /// For a DUT of another manifest (`dut_manifest`): the line that names
    /// it and the level it is seen at, once `observe` is checked to be at
    /// most the level it declares.
    pub fn other_dut(&self) -> Result<Option<String>, String> {
        match &self.dut_manifest {
            None => Ok(None),
            Some(path) => rtl_side::describe(path, self.observe).map(Some),
        }
    }

    /// A fresh DUT as this setup describes it.
    pub fn open_dut(&self) -> Result<Box<dyn NpuModel>, String> {
        if let Some(io) = &self.host_timing {
            if !self.dut.has_host_port() && io.latency != IDEAL_HOST_LATENCY {
                return Err(format!(
                    "a host timing is given for the `{}` DUT, which has no host port",
                    self.dut.name()
                ));
            }
            if io.stall_schedule.is_some() {
                return Err(
                    "the DUT ran with a host stall schedule, which this pccx-cosim \
                     cannot replay"
                        .into(),
                );
            }
        }
        if self.rtl_coverage {
            self.check_rtl_coverage()?;
        }
        let dut = match self.dut {
            DutKind::Golden => open_reference(&self.config),
            DutKind::Rtl => {
                let latency = self
                    .host_timing
                    .as_ref()
                    .map_or(IDEAL_HOST_LATENCY, |io| io.latency);
                rtl_side::open(
                    &self.config,
                    latency,
                    self.rtl_coverage,
                    self.dut_manifest.as_deref(),
                    self.numerics,
                )?
            }
        };
        let dut = match self.fault {
            Some(fault) => Box::new(Faulty::boxed(dut, fault)),
            None => dut,
        };
        Ok(if self.observe < dut.observation() {
            Box::new(Observed::new(dut, self.observe))
        } else {
            dut
        })
    }

    /// Whether `--rtl-coverage` can run with this setup; the error says why
    /// not and how to build what is missing.
    pub fn check_rtl_coverage(&self) -> Result<(), String> {
        if self.dut != DutKind::Rtl {
            return Err(format!(
                "--rtl-coverage measures the RTL, but the DUT is `{}`: use --dut rtl",
                self.dut.name()
            ));
        }
        rtl_side::check_coverage_build(&self.config).map_err(|e| format!("--rtl-coverage: {e}"))
    }
}

/// Whether this binary has the Verilated RTL (the `rtl` cargo feature).
pub const HAS_RTL: bool = cfg!(feature = "rtl");

/// The error of every RTL-only command in a build without the RTL.
pub fn no_rtl_error(what: &str) -> String {
    format!(
        "{what} needs the RTL, and this pccx-cosim was built without it \
         (`--no-default-features`); rebuild with the default features"
    )
}

#[cfg(feature = "rtl")]
mod rtl_side {
    /// `Setup::other_dut` of the manifest `path`.
    pub fn describe(
        path: &str,
        observe: pccx_golden::model::Observation,
    ) -> Result<String, String> {
        use pccx_golden::model::Observation;
        let manifest =
            crate::rtl::dut::Manifest::read(&crate::rtl::dynamic::source_root().join(path))?;
        let offered = Observation::by_name(manifest.level.name())
            .expect("the manifest's levels are the observation levels");
        if observe > offered {
            return Err(format!(
                "{path} declares the {} level; the campaign asks for {observe} (--observe {} to \
                 see this DUT as it offers itself)",
                manifest.level, manifest.level
            ));
        }
        Ok(format!(
            "DUT: {} ({path}), seen at the {observe} level",
            manifest.name
        ))
    }

    use crate::config::HwConfig;
    use crate::rtl::{HostTiming, RtlModel};
    use pccx_golden::model::NpuModel;

    pub fn open(
        config: &HwConfig,
        latency: u32,
        coverage: bool,
        manifest: Option<&str>,
        numerics: crate::env::numerics::NumericsMode,
    ) -> Result<Box<dyn NpuModel>, String> {
        let timing = HostTiming {
            latency,
            ..HostTiming::default()
        };
        if let Some(manifest) = manifest {
            if coverage {
                return Err(
                    "--rtl-coverage measures the linked RTL, not a --dut-manifest DUT".into(),
                );
            }
            let mut model = RtlModel::open_manifest(manifest, *config, timing)?;
            if numerics.is_declared() {
                model.set_numerics(crate::env::numerics::declared_by(manifest)?);
            }
            return Ok(Box::new(model));
        }
        Ok(Box::new(if coverage {
            RtlModel::open_coverage(*config, timing)?
        } else {
            RtlModel::open(*config, timing)?
        }))
    }

    pub fn check_coverage_build(config: &HwConfig) -> Result<(), String> {
        crate::rtl::coverage::check_coverage_build(config)
    }
}

#[cfg(not(feature = "rtl"))]
mod rtl_side {
    pub fn describe(_: &str, _: pccx_golden::model::Observation) -> Result<String, String> {
        Err(super::no_rtl_error("a --dut-manifest DUT"))
    }

    use crate::config::HwConfig;
    use pccx_golden::model::NpuModel;

    pub fn open(
        _: &HwConfig,
        _: u32,
        _: bool,
        _: Option<&str>,
        _: crate::env::numerics::NumericsMode,
    ) -> Result<Box<dyn NpuModel>, String> {
        Err(super::no_rtl_error("the `rtl` DUT") + ", or pass --dut golden")
    }

    pub fn check_coverage_build(_: &HwConfig) -> Result<(), String> {
        Err(super::no_rtl_error("RTL coverage"))
    }
}
