//! Recording a failing seed: its repro file, its waveform window, and the
//! shrunk program beside them, each written as soon as it exists.

use super::{hex64, Repro, ShrinkRecord};
use crate::env::models::{self, DutKind, Setup};
use crate::scoreboard::Mismatch;
use crate::stimulus::TestCase;
use crate::triage::shrink::{self, DutFactory, ProgramSize, ShrinkOptions};
use pccx_golden::asm::format_program;
use std::path::{Path, PathBuf};

/// What was written for one failing seed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Artefacts {
    pub repro: Option<PathBuf>,
    /// The FST waveform window of the first difference (RTL DUTs only).
    pub wave: Option<PathBuf>,
    pub min_asm: Option<PathBuf>,
    /// Program sizes before and after shrinking, and the runs it took.
    pub shrink: Option<(ProgramSize, ProgramSize, usize)>,
    /// What went wrong while writing or shrinking (the failure itself
    /// stands).
    pub problems: Vec<String>,
}

/// Writes a repro for each mismatch it is shown, and shrinks it.
pub struct Recorder<'a> {
    pub setup: Setup,
    pub out_dir: PathBuf,
    /// Makes fresh DUTs for the shrinker; `None`: do not shrink.
    pub shrink_with: Option<Box<DutFactory<'a>>>,
    pub shrink_options: ShrinkOptions,
    /// Cycles of waveform before the first difference; 0: no waveform.
    pub wave_window: u64,
}

impl<'a> Recorder<'a> {
    /// A recorder that shrinks on DUTs made as `setup` says, unless
    /// `no_shrink`.
    pub fn new(setup: Setup, out_dir: PathBuf, no_shrink: bool) -> Recorder<'a> {
        let shrink_with: Option<Box<DutFactory<'a>>> = if no_shrink {
            None
        } else {
            let s = setup.clone();
            Some(Box::new(move || s.open_dut()))
        };
        Recorder {
            setup,
            out_dir,
            shrink_with,
            shrink_options: ShrinkOptions::default(),
            wave_window: crate::triage::wave::DEFAULT_WINDOW,
        }
    }

    /// Writes the repro of a seed that ran past its wall-clock limit
    /// `limit` (`timeout`, a mismatch of kind `timeout`): no waveform and
    /// no shrinking, each of whose runs would take the limit again.
    pub fn record_timeout(
        &mut self,
        case: &TestCase,
        timeout: &Mismatch,
        limit: Option<std::time::Duration>,
    ) -> Artefacts {
        let mut artefacts = Artefacts::default();
        let mut repro = Repro::new(self.setup.clone(), case.clone(), timeout);
        repro.seed_timeout = limit;
        match repro.write(&self.out_dir) {
            Ok(path) => artefacts.repro = Some(path),
            Err(e) => artefacts.problems.push(e),
        }
        artefacts
    }

    /// Writes the repro of `case`, then shrinks the case and writes the
    /// minimal program beside it and the repro again with the shrink's
    /// record. The first write comes before shrinking, so that a repro
    /// exists even if shrinking is interrupted.
    pub fn record(&mut self, case: &TestCase, mismatch: &Mismatch) -> Artefacts {
        let mut artefacts = Artefacts::default();
        let mut repro = Repro::new(self.setup.clone(), case.clone(), mismatch);
        match repro.write(&self.out_dir) {
            Ok(path) => artefacts.repro = Some(path),
            Err(e) => {
                artefacts.problems.push(e);
                return artefacts;
            }
        }
        if self.wave_window > 0 && self.setup.dut == DutKind::Rtl {
            match crate::triage::wave::dump_window(
                &self.setup,
                case,
                mismatch,
                self.wave_window,
                &self.out_dir,
            ) {
                Ok(path) => artefacts.wave = Some(path),
                Err(e) => artefacts.problems.push(format!("no waveform: {e}")),
            }
        }
        let Some(make_dut) = self.shrink_with.as_mut() else {
            return artefacts;
        };
        let mut reference = models::open_reference(&self.setup.config);
        let shrunk = match shrink::shrink_against(
            case,
            &mut *reference,
            &mut **make_dut,
            &self.shrink_options,
        ) {
            Ok(r) => r,
            Err(e) => {
                artefacts.problems.push(format!("not shrunk: {e}"));
                return artefacts;
            }
        };
        let min_path = self.out_dir.join(repro.min_asm_name());
        let repro_path = artefacts.repro.clone().expect("written above");
        let text = min_asm_text(&repro, &repro_path, &shrunk);
        if let Err(e) = std::fs::write(&min_path, text) {
            artefacts
                .problems
                .push(format!("cannot write {}: {e}", min_path.display()));
            return artefacts;
        }
        artefacts.min_asm = Some(min_path);
        artefacts.shrink = Some((shrunk.before, shrunk.after, shrunk.runs));
        repro.shrink = Some(ShrinkRecord {
            before: shrunk.before,
            after: shrunk.after,
            runs: shrunk.runs,
            exhausted: shrunk.exhausted,
            program: shrunk.case.program,
            mismatch: shrunk.mismatch.record(),
            min_asm: repro.min_asm_name(),
        });
        if let Err(e) = repro.write(&self.out_dir) {
            artefacts.problems.push(e);
        }
        artefacts
    }
}

/// The minimal program as assembler text, with a header saying what it is
/// and how to run it.
fn min_asm_text(repro: &Repro, repro_path: &Path, shrunk: &shrink::ShrinkResult) -> String {
    let m = &shrunk.mismatch;
    let at = m.seq.map(|s| format!(" at seq {s}")).unwrap_or_default();
    let mut text = format!(
        "; shrunk from seed {} on {} ({} -> {}, {} runs{})\n\
         ; fails with {}: {}{at}: {}\n\
         ; images: l2_init_seed {}, host_init_seed {}; weight streams: seed {} (see {})\n\
         ; run it: pccx-cosim replay --min {}\n",
        repro.case.seed,
        repro.setup.config.name,
        shrunk.before,
        shrunk.after,
        shrunk.runs,
        if shrunk.exhausted {
            "; budget spent, may shrink further"
        } else {
            ""
        },
        shrunk.signature,
        m.kind,
        m.detail().replace('\n', " "),
        hex64(repro.case.l2_init_seed),
        hex64(repro.case.host_init_seed),
        hex64(repro.case.weight_seed),
        repro.file_name(),
        repro_path.display(),
    );
    // A workload's case starts from data of its own: say so, or the seeds
    // above would look like the whole story.
    let [matrix, vector] = &repro.case.weight_prefix;
    if !repro.case.host_patches.is_empty() || !matrix.is_empty() || !vector.is_empty() {
        let host: usize = repro.case.host_patches.iter().map(|(_, w)| w.len()).sum();
        text.push_str(&format!(
            "; and its own data: {host} host words, {} matrix and {} vector weight beats before the seeded ones (in {})\n",
            matrix.len(),
            vector.len(),
            repro.file_name()
        ));
    }
    text.push_str(&format_program(&shrunk.case.program));
    text
}
