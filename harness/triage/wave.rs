//! The waveform of a mismatch: the case is run again, deterministically,
//! with the DUT dumping an FST window of the cycles before the first
//! difference (docs/harness.md, "Waveforms").

use std::path::{Path, PathBuf};

use crate::env::models;
use crate::env::models::Setup;
use crate::scoreboard::{run_case, Mismatch};
use crate::stimulus::TestCase;

/// Cycles shown before the first difference, unless told otherwise.
pub const DEFAULT_WINDOW: u64 = 200;

/// Cycles shown after it (the retire of the differing instruction, and a
/// little of what follows).
const AFTER: u64 = 4;

/// The file name of a seed's waveform.
pub fn file_name(case: &TestCase) -> String {
    format!("seed-{}.fst", case.seed)
}

/// The command lines that open `path`, for the report.
pub fn viewer_hint(path: &Path) -> String {
    format!("gtkwave {0}   (or: surfer {0})", path.display())
}

/// Reruns `case` on a fresh DUT of `setup` with a waveform window of
/// `window` cycles up to the first difference (`mismatch.cycle`, or the
/// end of the run for a final-state difference) and writes it to
/// `dir/seed-N.fst`. Returns the path, or why there is none.
pub fn dump_window(
    setup: &Setup,
    case: &TestCase,
    mismatch: &Mismatch,
    window: u64,
    dir: &Path,
) -> Result<PathBuf, String> {
    let path = dir.join(file_name(case));
    let end = match mismatch.cycle {
        Some(c) => c,
        None => {
            // A final-state difference: first find where the run ends.
            let mut reference = models::open_reference(&setup.config);
            let mut dut = setup.open_dut()?;
            let outcome = run_case(case, &mut *reference, &mut *dut).map_err(|e| e.to_string())?;
            outcome.cycles.unwrap_or(0) + u64::from(crate::scoreboard::QUIESCENCE_CYCLES)
        }
    };
    let mut reference = models::open_reference(&setup.config);
    let mut dut = setup.open_dut()?;
    let no_wave = format!("the `{}` model has no waveform", dut.name());
    dut.sim_controls()
        .ok_or_else(|| no_wave.clone())?
        .set_wave_window(&path, end.saturating_sub(window), end + AFTER)?;
    let outcome = run_case(case, &mut *reference, &mut *dut).map_err(|e| e.to_string())?;
    dut.sim_controls().ok_or(no_wave)?.finish_wave()?;
    if outcome.first_mismatch.is_none() {
        return Err(format!(
            "the rerun for the waveform did not mismatch (the waveform at {} shows a passing run)",
            path.display()
        ));
    }
    Ok(path)
}
