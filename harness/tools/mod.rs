//! Tools built on the harness: mutation testing of the RTL, the simulation
//! benchmark, and the CVO accuracy report.

#[cfg(feature = "rtl")]
pub mod bench;
pub mod cvo_accuracy;
#[cfg(feature = "rtl")]
pub mod gate_power;
pub mod mutants;
pub mod mutants_combined;
#[cfg(feature = "rtl")]
pub mod mutate;
pub mod plot;
