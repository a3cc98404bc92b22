//! A workload run from its request to its exit status: run it, print the
//! per-layer table, write the JSON and the page, decide the exit.

use super::{write_file, EXIT_ERROR, EXIT_FAILED};
use crate::workload::{self, driver::WorkloadError, WorkloadRequest};
use std::path::PathBuf;

/// Where a workload run's results go.
#[derive(Clone, Debug, Default)]
pub struct WorkloadOutputs {
    pub json: Option<PathBuf>,
    pub report: Option<PathBuf>,
}

/// Runs `request`: exit 0 when every program matched, 1 when the DUT
/// differed in one (its repro, waveform and shrunk program written), 2 when
/// the workload could not run (it does not fit the configuration, a model
/// could not be opened or failed, an output could not be written).
pub fn run(request: &WorkloadRequest, outputs: &WorkloadOutputs) -> Result<u8, String> {
    let report = match workload::run(request) {
        Ok(r) => r,
        Err(e @ (WorkloadError::Build(_) | WorkloadError::Model { .. })) => {
            eprintln!("pccx-cosim: workload {}: {e}", request.workload.name());
            return Ok(EXIT_ERROR);
        }
        Err(WorkloadError::Mismatch(_)) => unreachable!("a mismatch is part of the report"),
    };
    say!(
        "workload {} on {} (DUT: {}, seed {})",
        report.workload.name(),
        report.config,
        report.dut.name(),
        report.seed
    );
    say!("{}", workload::table(&report).trim_end());
    if let Some(f) = &report.failure {
        say!("FAILED in {}:\n{}", f.layer, f.mismatch);
        for (what, path) in [
            ("repro", &f.repro),
            ("waveform", &f.wave),
            ("shrunk program", &f.min_asm),
        ] {
            if let Some(p) = path {
                say!("  {what}: {}", p.display());
            }
        }
    } else {
        say!("ok: every instruction of every program matched, with exact timing");
    }
    if let Some(path) = &outputs.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| format!("--json: {e}"))?;
        write_file(path, text + "\n")?;
    }
    if let Some(path) = &outputs.report {
        let inputs = crate::report::Inputs {
            workload: Some(report.clone()),
            ..Default::default()
        };
        super::write_report(path, &inputs)?;
    }
    Ok(if report.failure.is_some() {
        EXIT_FAILED
    } else {
        0
    })
}
