//! `pccx-cosim report DIR...`: the morning-after HTML page of a campaign, a merged cluster run, a mutation run or a workload.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::report::{self, Extra};

use super::Failure;

#[derive(Args)]
pub(super) struct ReportArgs {
    /// Run directories: a campaign's `--out DIR`, shards of one (merged),
    /// a `slurm submit` directory (its shards), or a mutation run's.
    #[arg(required_unless_present = "workload", value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// A workload run to show (a `pccx-cosim workload --json` file).
    #[arg(long, value_name = "FILE")]
    workload: Option<PathBuf>,
    /// The page to write.
    #[arg(long, value_name = "FILE", default_value = "report.html")]
    out: PathBuf,
    /// Functional coverage to show (a `--coverage` file), instead of the
    /// directories' own `coverage.json`.
    #[arg(long, value_name = "FILE")]
    coverage: Option<PathBuf>,
    /// A coverage curve to plot (a `--coverage-curve` file), besides the
    /// directories' own `coverage-curve.json`; may be repeated.
    #[arg(long, value_name = "FILE")]
    curve: Vec<PathBuf>,
    /// Do not ask squeue for the task states of a Slurm submission; show
    /// those the last `slurm wait` recorded.
    #[arg(long)]
    offline: bool,
    /// An earlier run of the campaign (its directory, or its shards' or
    /// Slurm submission's; may be repeated): each failure signature is
    /// marked new or seen before, and those no longer seen are listed.
    #[arg(long, value_name = "DIR")]
    baseline: Vec<PathBuf>,
}

pub(super) fn report(args: &ReportArgs) -> Result<ExitCode, Failure> {
    let extra = Extra {
        coverage: args.coverage.clone(),
        curves: args.curve.clone(),
        offline: args.offline,
    };
    let mut inputs = if args.dirs.is_empty() {
        report::Inputs::default()
    } else {
        report::from_dirs(&args.dirs, &extra).map_err(Failure::Message)?
    };
    if let Some(path) = &args.workload {
        inputs.workload = Some(crate::workload::read_report(path).map_err(Failure::Message)?);
    }
    if !args.baseline.is_empty() {
        if inputs.campaign.is_none() {
            return Err(Failure::Message(
                "--baseline compares campaigns; these directories hold a mutation run".into(),
            ));
        }
        inputs.baseline = Some(report::baseline(&args.baseline).map_err(Failure::Message)?);
    }
    crate::session::write_report(&args.out, &inputs).map_err(Failure::Message)?;
    Ok(ExitCode::SUCCESS)
}
