//! Where the campaign and the CLI get their models from.

use crate::config::HwConfig;
use pccx_golden::golden::{Golden, GoldenConfig};
use pccx_golden::model::NpuModel;

/// The reference: the golden sequential interpreter.
pub fn open_reference(config: &HwConfig) -> Box<dyn NpuModel> {
    Box::new(Golden::new(GoldenConfig {
        l2_words: config.l2_words,
    }))
}

/// The device under test: `"rtl"` (the Verilated model of `config`) or
/// `"golden"` (the reference against itself). An error says why it cannot be
/// opened (no Verilated build for this configuration, say).
pub fn open_dut(config: &HwConfig, kind: &str) -> Result<Box<dyn NpuModel>, String> {
    match kind {
        "golden" => Ok(open_reference(config)),
        "rtl" => open_rtl(config),
        other => Err(format!("unknown DUT `{other}` (expected rtl or golden)")),
    }
}

#[cfg(not(pccx_no_rtl))]
fn open_rtl(config: &HwConfig) -> Result<Box<dyn NpuModel>, String> {
    use crate::rtl::{HostTiming, RtlModel};
    Ok(Box::new(RtlModel::open(*config, HostTiming::default())?))
}

#[cfg(pccx_no_rtl)]
fn open_rtl(_config: &HwConfig) -> Result<Box<dyn NpuModel>, String> {
    Err(
        "this pccx-cosim was built with PCCX_NO_RTL=1 and has no RTL model; \
         rebuild without it, or pass --dut golden"
            .into(),
    )
}
