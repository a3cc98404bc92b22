//! `pccx-cosim workload NAME`: a transformer block as pccx programs, on the RTL against the golden model and against f64.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use super::args::{config_values, fault_values, parse_u64};
use super::Failure;
use crate::config::HwConfig;
use crate::env::faults::Fault;
use crate::env::models::{DutKind, Setup};
use crate::session::workload::{self, WorkloadOutputs};
use crate::workload::{WorkloadName, WorkloadRequest};

// The flags of `workload` (its help is the doc comment of
// `Command::Workload`).
#[derive(Args)]
pub(super) struct WorkloadArgs {
    /// The workload.
    #[arg(value_enum)]
    name: WorkloadName,
    #[arg(long, default_value = "kv260", value_parser = config_values())]
    config: HwConfig,
    /// The device under test: the RTL, or the golden model alone (its
    /// timing model's cycle counts, fast).
    #[arg(long, value_enum, default_value = "rtl")]
    dut: DutKind,
    /// Seed of the weights and the input (and of the images' unread words).
    #[arg(long, default_value = "1", value_parser = parse_u64)]
    seed: u64,
    /// Also write the per-layer results to FILE, as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the HTML page with the workload section to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Where a failing program's repro file, waveform and shrunk program go.
    #[arg(long, value_name = "DIR", default_value = "out/workload")]
    out: PathBuf,
    /// Do not shrink a failing program.
    #[arg(long)]
    no_shrink: bool,
    /// Wrap the DUT in a deliberate fault (the campaign's `--inject-fault`),
    /// to see a failing layer's report, repro, waveform and shrunk program.
    #[arg(long, value_name = "FAULT", value_parser = fault_values())]
    inject_fault: Option<Fault>,
}

pub(super) fn workload(args: WorkloadArgs) -> Result<ExitCode, Failure> {
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::Message(format!("--out {}: {e}", args.out.display())))?;
    let request = WorkloadRequest {
        workload: args.name,
        setup: Setup::new(args.config, args.dut, args.inject_fault),
        seed: args.seed,
        out_dir: args.out,
        no_shrink: args.no_shrink,
    };
    let outputs = WorkloadOutputs {
        json: args.json,
        report: args.report,
    };
    workload::run(&request, &outputs)
        .map(ExitCode::from)
        .map_err(Failure::Message)
}
