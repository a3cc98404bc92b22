//! The RTL gate's integration tests in one binary (docs/testing.md): one
//! link instead of one per file, and libtest spreads every test of the gate
//! over every core, so a long test runs beside the short ones.
//!
//! Each module is one area (the file names say which); a test runs alone
//! with `cargo test --test gate MODULE::` or `cargo test --test gate NAME`.
//! The second tier's tests stay binaries of their own (`tests/*.rs`,
//! `test = false` in Cargo.toml). The modules that open the RTL are left
//! out of a build without it (`--no-default-features`), as their
//! `required-features` left their binaries out before.

#[cfg(feature = "rtl")]
#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod campaign_jobs;
mod cli;
mod coverage;
#[cfg(feature = "rtl")]
mod cross_config;
mod cvo_accuracy_cli;
#[cfg(feature = "rtl")]
mod cvo_e2e;
#[cfg(feature = "rtl")]
mod cvo_exhaustive;
#[cfg(feature = "rtl")]
mod fingerprints;
#[cfg(feature = "rtl")]
mod initial_state;
mod isa_layout_sv;
mod layering;
#[cfg(feature = "rtl")]
mod observation;
#[cfg(feature = "rtl")]
mod other_duts;
#[cfg(feature = "rtl")]
mod protocol;
#[cfg(feature = "rtl")]
mod repro;
#[cfg(feature = "rtl")]
mod rtl_directed;
#[cfg(feature = "rtl")]
mod rtl_mat_unit;
#[cfg(feature = "rtl")]
mod rtl_random;
mod scoreboard_fires;
mod session;
#[cfg(feature = "rtl")]
mod shrink;
#[cfg(feature = "rtl")]
mod steer;
mod stimulus;
#[cfg(feature = "rtl")]
mod timing;
#[cfg(feature = "rtl")]
mod wave;
#[cfg(feature = "rtl")]
mod workload;
