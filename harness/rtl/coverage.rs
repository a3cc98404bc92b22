//! The RTL's code coverage: models Verilated with `--coverage-line
//! --coverage-toggle` (build.rs, `PCCX_COVERAGE=1`), opened like any other
//! [`RtlModel`], and the writing of their counters (docs/coverage.md).

use super::{ffi, HostTiming, RtlModel};
use crate::config::HwConfig;
use std::ffi::CString;
use std::path::Path;

/// The configurations that have a coverage build in this binary.
pub fn coverage_configs() -> Vec<&'static str> {
    crate::config::ALL
        .iter()
        .filter(|c| ffi::cov_ops_by_name(c.name).is_some())
        .map(|c| c.name)
        .collect()
}

/// Why `config` has no coverage build here, with the command that makes
/// one; `Ok` if it has.
pub fn check_coverage_build(config: &HwConfig) -> Result<(), String> {
    if ffi::cov_ops_by_name(config.name).is_some() {
        return Ok(());
    }
    let built = coverage_configs();
    let have = if built.is_empty() {
        "this pccx-cosim has no RTL coverage build".to_string()
    } else {
        format!(
            "this pccx-cosim has RTL coverage builds of {} only, not of `{}`",
            built.join(", "),
            config.name
        )
    };
    let how = if config.name == "tiny" {
        "PCCX_COVERAGE=1".to_string()
    } else {
        format!("PCCX_COVERAGE={}", config.name)
    };
    Err(format!(
        "{have}: rebuild with `{how} PCCX_CONFIGS={name} cargo build --release` \
         (PCCX_CONFIGS only limits the ordinary models), then run again with --config {name}",
        name = config.name
    ))
}

impl RtlModel {
    /// Opens the coverage build of `config` (a separate Verilated model,
    /// `<name>_cov`, of the same RTL and parameters). Its counters run from
    /// here over every reset until [`NpuModel::write_coverage`].
    ///
    /// [`NpuModel::write_coverage`]: pccx_golden::model::NpuModel::write_coverage
    pub fn open_coverage(config: HwConfig, timing: HostTiming) -> Result<RtlModel, String> {
        check_coverage_build(&config)?;
        let ops = ffi::cov_ops_by_name(config.name).ok_or("no coverage build")?;
        // SAFETY: the table is a static in the shim, valid for the program's life.
        let ops: &'static ffi::pccx_sim_ops = unsafe { &*ops };
        RtlModel::open_with_ops(config, ops, timing)
    }

    pub(super) fn write_coverage_file(&mut self, path: &Path) -> Result<(), String> {
        let write = self
            .ops
            .coverage_write
            .ok_or("the shim has no coverage_write")?;
        let text = path
            .to_str()
            .ok_or_else(|| format!("{}: not a UTF-8 path", path.display()))?;
        let c_path = CString::new(text)
            .map_err(|_| format!("{}: the path holds a NUL byte", path.display()))?;
        // SAFETY: `sim` is live; the path is a NUL-terminated string we own.
        match unsafe { write(self.sim, c_path.as_ptr()) } {
            0 => Ok(()),
            -1 => Err(format!(
                "the `{}` RTL model was not built with coverage (open it with \
                 RtlModel::open_coverage)",
                self.config.name
            )),
            _ => Err(format!("cannot write {}", path.display())),
        }
    }
}
