//! pccx-cosim harness: the Verilated RTL and the golden model behind one
//! interface, the scoreboard that compares them, the stimulus that drives
//! them, and the tools built on those (docs/architecture.md, "Where things
//! are").
//!
//! Layers, each importing only those above it:
//! `format` (serde helpers of the file formats) -> `config` (hardware
//! configurations) -> `stimulus` -> `rtl` -> `scoreboard`
//! -> `env` (the model factory, faults) -> `coverage` -> `triage` (signatures,
//! shrinking, repro files, waves) -> `regress` (campaigns, reports) ->
//! `tools` (mutate, bench, CVO accuracy) -> `workload` (a transformer block
//! as programs, its driver and f64 reference) -> `report` (the HTML page of a
//! run) -> `session` (a run from its typed request to its outcome: store,
//! workers, outputs, exit decision) -> `cli` (the command line, one file
//! per subcommand, parsing and dispatch only; `harness/main.rs` only calls
//! `cli::main`).

/// `println!` that ends the program quietly when stdout is gone (a closed
/// pipe, as in `pccx-cosim ... | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(141);
        }
    }};
}

pub mod config;
pub mod format;
pub mod stimulus;

#[cfg(feature = "rtl")]
pub mod rtl;

pub mod scoreboard;

#[macro_use]
pub mod env;

pub mod coverage;
pub mod regress;
pub mod report;
pub mod tools;
pub mod triage;
pub mod workload;

pub mod session;

pub mod cli;
