//! Hardware configurations the harness can run: the parameters both models
//! are built with, and the ones the stimulus generator aims at (L2 size for
//! range errors, FIFO depth for bursts that fill the engine FIFOs).
//!
//! The list is generated from `hw/configs/*.cfg` by build.rs. Callers use
//! only [`by_name`], [`names`], [`default_config`] and [`ALL`].

use pccx_golden::timing::TimingParams;

/// One hardware configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwConfig {
    pub name: &'static str,
    /// `TEST_ONLY = 1` in its file: a configuration for the tests (the
    /// `skew_*` builds with a deliberate timing bug). It is not linked into
    /// the binary by default; opening its RTL builds it on demand
    /// (`rtl::dynamic`, docs/build.md).
    pub test_only: bool,
    /// `L2_WORDS`: L2 size in 128-bit words.
    pub l2_words: u32,
    /// Depth of each engine FIFO.
    pub fifo_depth: u32,
    /// `ARRAY_ROWS` x `ARRAY_COLS`: the GEMM systolic array (rows run along
    /// K, columns along N).
    pub array_rows: u32,
    pub array_cols: u32,
    /// `VEC_LANES`: the GEMV vector core's uV lanes.
    pub vector_lanes: u32,
    /// `CVO_CORES`: the CVO engine's uCVO cores.
    pub cvo_cores: u32,
    /// Every top-level RTL parameter of the file (`-G<name>=<value>`, in
    /// name order): what a builder passes to Verilator, so that a model
    /// built at run time has exactly the parameters of one built by
    /// build.rs.
    pub rtl_params: &'static [(&'static str, u64)],
}

// `ALL`: every configuration in hw/configs/*.cfg, in name order, generated
// by build.rs so that the RTL parameters and the harness cannot disagree.
include!(concat!(env!("OUT_DIR"), "/configs.rs"));

impl HwConfig {
    /// The timing model's parameters for this configuration under ideal I/O
    /// (docs/timing.md): what the reference predicts every cycle with.
    pub fn timing_params(&self) -> TimingParams {
        TimingParams {
            fifo_depth: self.fifo_depth,
            host_latency: IDEAL_HOST_LATENCY,
            array_rows: self.array_rows,
            array_cols: self.array_cols,
            vector_lanes: self.vector_lanes,
            cvo_cores: self.cvo_cores,
        }
    }
}

/// The configuration called `name`.
pub fn by_name(name: &str) -> Option<HwConfig> {
    ALL.iter().find(|c| c.name == name).copied()
}

/// The names [`by_name`] accepts, in [`ALL`] order.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|c| c.name).collect()
}

/// The configuration used when none is named.
pub fn default_config() -> HwConfig {
    by_name(DEFAULT_NAME).expect("hw/configs/kv260.cfg exists")
}

/// The name of the default configuration: the KV260 board.
pub const DEFAULT_NAME: &str = "kv260";

/// The fixed host latency of ideal I/O: the RTL wrapper's default, and the
/// timing model's `LAT` (docs/timing.md).
pub const IDEAL_HOST_LATENCY: u32 = 4;
