//! `pccx-cosim cvo-accuracy`: the golden CVO functions against the exact ones over every BF16 input.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::Failure;

// The flags of `cvo-accuracy` (its help is the doc comment of
// `Command::CvoAccuracy`).
#[derive(Args)]
pub(super) struct CvoAccuracyArgs {
    /// Also write the results to FILE, as JSON.
    #[arg(long, value_name = "FILE")]
    pub(super) json: Option<PathBuf>,
    /// Write one SVG plot per function, DIR/cvo-<func>-ulp.svg (DIR is
    /// created if missing).
    #[arg(long, value_name = "DIR")]
    pub(super) plots: Option<PathBuf>,
}

pub(super) fn cvo_accuracy(json: Option<&Path>, plots: Option<&Path>) -> Result<ExitCode, Failure> {
    use crate::tools::cvo_accuracy::{self, Accuracy};
    // Check the outputs before the measurement, so a bad path fails at once.
    if let Some(dir) = plots {
        cvo_accuracy::prepare_plot_dir(dir).map_err(Failure::Message)?;
    }
    let json_file = json
        .map(|path| {
            std::fs::File::create(path).map_err(|e| {
                Failure::Message(format!("--json {}: cannot write: {e}", path.display()))
            })
        })
        .transpose()?;
    let accuracy = Accuracy::measure();
    say!("{}", accuracy.text());
    if let (Some(path), Some(mut file)) = (json, json_file) {
        use std::io::Write as _;
        let text =
            serde_json::to_string_pretty(&accuracy.to_json()).expect("JSON values serialise");
        writeln!(file, "{text}")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(dir) = plots {
        let written = cvo_accuracy::write_plots(dir, &accuracy).map_err(Failure::Message)?;
        say!("plots: {} files in {}", written.len(), dir.display());
    }
    Ok(if accuracy.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
