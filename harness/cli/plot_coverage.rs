//! `pccx-cosim plot-coverage`: coverage-against-programs curves into one SVG.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::regress::steer::CurveFile;
use crate::tools::plot;

use super::Failure;

// The flags of `plot-coverage` (its help is the doc comment of
// `Command::PlotCoverage`).
#[derive(Args)]
pub(super) struct PlotCoverageArgs {
    /// Curve files written by `--coverage-curve`.
    #[arg(required = true, value_name = "CURVE")]
    pub(super) curves: Vec<PathBuf>,
    /// The SVG to write.
    #[arg(long, value_name = "FILE")]
    pub(super) out: PathBuf,
}

pub(super) fn plot_coverage(args: &PlotCoverageArgs) -> Result<ExitCode, Failure> {
    let curves = args
        .curves
        .iter()
        .map(|p| CurveFile::read(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::Message)?;
    let metrics = plot::plot(&curves, &args.out).map_err(Failure::Message)?;
    say!(
        "{}: {} curve(s), {}",
        args.out.display(),
        curves.len(),
        metrics
            .iter()
            .map(|m| m.title())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
