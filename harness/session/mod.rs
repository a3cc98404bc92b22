//! Runs from their typed requests to their outcomes: a campaign, a mutation run, a Slurm array's wait; each owns its directory, workers, outputs and exit decision, so the command line only parses and dispatches.
//!
//! Nothing here reads clap: the tests build requests as the CLI does.

pub mod campaign;
#[cfg(feature = "rtl")]
pub mod mutation;
pub mod slurm;
mod worker;
pub mod workload;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Exit status of a run that mismatched, or of a tool's failing verdict.
pub const EXIT_FAILED: u8 = 1;
/// Exit status of a usage or infrastructure error.
pub const EXIT_ERROR: u8 = 2;
/// Exit status of a run stopped by SIGTERM or SIGINT (docs/scale-out.md).
pub const EXIT_INTERRUPTED: u8 = 3;
/// Exit status of a campaign ended because a seed was stuck in the
/// simulator past its wall-clock limit (`--seed-timeout`).
pub const EXIT_HUNG: u8 = 4;

/// How long a run with a directory is given to end by itself after SIGTERM
/// or SIGINT before it ends the process (`RunStore::end_after_stop`):
/// under Slurm's `KillWait` (5 s in scripts/slurm-local.sh, 30 s by
/// default), longer than a seed normally takes.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// SIGTERM (what Slurm and CI send at a time limit) and SIGINT set `stop`:
/// no further seed starts, the seeds in flight finish, and the reports
/// are written. A second one ends the process at once.
pub fn watch_for_stop_signals(stop: &Arc<AtomicBool>) -> Result<(), String> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for (signal, name, code) in [(SIGTERM, "SIGTERM", 143), (SIGINT, "SIGINT", 130)] {
        // The order matters: the shutdown is armed first, so the first
        // signal only sets the flag and the second finds it set.
        signal_hook::flag::register_conditional_shutdown(signal, code, Arc::clone(stop))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(stop)))
            .map_err(|e| format!("cannot watch for {name}: {e}"))?;
    }
    Ok(())
}

/// `--jobs`: the number given, else one worker per core.
pub fn worker_count(given: Option<usize>) -> Result<usize, String> {
    match given {
        Some(0) => Err("--jobs 0: a campaign needs at least one worker".into()),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Writes the HTML page and says where (every `--report` goes through
/// here).
pub fn write_report(path: &Path, inputs: &crate::report::Inputs) -> Result<(), String> {
    for note in &inputs.notes {
        eprintln!("pccx-cosim: report: {note}");
    }
    crate::report::write(path, inputs)?;
    say!("report: {}", path.display());
    Ok(())
}

/// Writes `text` to `path`, an error naming the file.
pub(crate) fn write_file(path: &Path, text: String) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}
