//! Where the campaign and the CLI get their models from.

use crate::config::HwConfig;
use pccx_golden::golden::{Golden, GoldenConfig};
use pccx_golden::model::NpuModel;
use pccx_golden::timing::TimingParams;

/// The fixed host latency of ideal I/O (the RTL wrapper's, and the timing
/// model's `LAT`).
pub const IDEAL_HOST_LATENCY: u32 = 4;

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
        TimingParams {
            fifo_depth: config.fifo_depth,
            host_latency: IDEAL_HOST_LATENCY,
            array_rows: config.array_rows,
            array_cols: config.array_cols,
            vector_lanes: config.vector_lanes,
            cvo_cores: config.cvo_cores,
        },
    )
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
