//! pccx-cosim harness: the Verilated RTL behind the `NpuModel` interface,
//! the scoreboard, the stimulus generator and the campaign runner.

#[macro_use]
mod delegate;

#[cfg(not(pccx_no_rtl))]
pub mod bench;
pub mod config;
#[cfg(not(pccx_no_rtl))]
pub mod mutate;
#[cfg(not(pccx_no_rtl))]
pub mod rtl;

pub mod campaign;
pub mod coverage;
pub mod cvo_accuracy;
pub mod faults;
pub mod junit;
pub mod models;
pub mod repro;
pub mod rtl_coverage;
pub mod scoreboard;
pub mod shrink;
pub mod signature;
pub mod stimulus;
pub mod wave;
