//! One campaign worker: its reference (plain or inside the coverage probe), its DUT, its recorder of mismatches, and the coverage counts a case moved.

use indicatif::ProgressBar;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::coverage::rtl as rtl_coverage;
use crate::coverage::{Coverage, Probe};
use crate::regress::campaign;
use crate::regress::steer::CaseFeedback;
use crate::scoreboard::Mismatch;
use crate::stimulus::TestCase;
use crate::triage::repro::{Artefacts, Recorder};
use pccx_golden::model::NpuModel;

/// The reference of a campaign worker: the golden model, or the golden
/// model inside the functional-coverage probe (`--coverage`).
pub(super) enum ReferenceModel {
    Plain(Box<dyn NpuModel>),
    Probe(Box<Probe>),
}

/// One worker of the campaign: its models, its recorder of mismatches.
pub(super) struct CampaignWorker<'a> {
    pub(super) reference: ReferenceModel,
    pub(super) dut: Box<dyn NpuModel>,
    pub(super) recorder: Recorder<'a>,
    pub(super) bar: Option<ProgressBar>,
    pub(super) mismatched: &'a AtomicU64,
    /// Where this worker writes its RTL coverage counters at the end.
    pub(super) rtl_coverage: Option<PathBuf>,
    /// `--seed-timeout`, which a timeout's repro records.
    pub(super) seed_timeout: Option<Duration>,
    /// The counts after the last case, which the next case's are compared
    /// with (steering and the curve).
    pub(super) case_counts: CaseCounts,
}

/// What a worker has counted so far, functional and RTL, so that the bins
/// and points a case moved are those whose counts grew during it.
pub(super) struct CaseCounts {
    bins: Vec<u64>,
    /// Where the RTL counters are written after each case (with RTL
    /// coverage), and each point's count then.
    rtl_file: Option<PathBuf>,
    rtl: HashMap<String, u64>,
}

impl CaseCounts {
    pub(super) fn new(rtl_file: Option<PathBuf>) -> CaseCounts {
        CaseCounts {
            bins: Vec::new(),
            rtl_file,
            rtl: HashMap::new(),
        }
    }

    /// The bins and points whose counts grew since the last call.
    fn grown(&mut self, bins: &[u64], dut: &mut dyn NpuModel) -> CaseFeedback {
        let mut feedback = CaseFeedback::default();
        self.bins.resize(bins.len(), 0);
        for (i, (&now, before)) in bins.iter().zip(&mut self.bins).enumerate() {
            if now > *before {
                feedback.bins.push(i);
            }
            *before = now;
        }
        if let (Some(path), Some(sim)) = (&self.rtl_file, dut.sim_controls()) {
            // A point the case moved is one the steering may reward; a
            // counter file that cannot be written or read leaves it to the
            // functional bins (the campaign's own file reports the error).
            let points = sim
                .write_coverage(path)
                .and_then(|()| std::fs::read_to_string(path).map_err(|e| e.to_string()))
                .and_then(|text| rtl_coverage::point_counts(&text));
            if let Ok(points) = points {
                for (key, kind, count) in points {
                    let before = self.rtl.entry(key.clone()).or_insert(0);
                    if count > *before {
                        feedback.rtl.push((key, kind));
                    }
                    *before = count;
                }
            }
            let _ = std::fs::remove_file(path);
        }
        feedback
    }
}

/// What a worker hands back: its functional coverage, and the file its RTL
/// counters went to.
pub(super) struct WorkerDone {
    pub(super) coverage: Option<Coverage>,
    pub(super) rtl_coverage: Option<Result<PathBuf, String>>,
}

impl campaign::Worker for CampaignWorker<'_> {
    type Done = WorkerDone;

    fn models(&mut self) -> (&mut dyn NpuModel, &mut dyn NpuModel) {
        let reference: &mut dyn NpuModel = match &mut self.reference {
            ReferenceModel::Plain(m) => &mut **m,
            ReferenceModel::Probe(p) => &mut **p,
        };
        (reference, &mut *self.dut)
    }

    fn start_case(&mut self, case: u64) {
        if let ReferenceModel::Probe(p) = &mut self.reference {
            p.set_case_number(case);
        }
    }

    fn on_mismatch(&mut self, case: &TestCase, m: &Mismatch) -> Artefacts {
        let mismatched = self.mismatched.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            let what = if self.recorder.shrink_with.is_some() {
                "shrinking"
            } else {
                "recording"
            };
            bar.set_message(format!(
                "{mismatched} mismatched, {what} seed {}",
                case.seed
            ));
        }
        let artefacts = self.recorder.record(case, m);
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} mismatched",
                self.mismatched.load(Ordering::Relaxed)
            ));
        }
        artefacts
    }

    fn on_timeout(&mut self, case: &TestCase, timeout: &Mismatch) -> Artefacts {
        self.recorder
            .record_timeout(case, timeout, self.seed_timeout)
    }

    fn case_feedback(&mut self) -> CaseFeedback {
        let bins = match &self.reference {
            ReferenceModel::Probe(p) => p.coverage().counts().to_vec(),
            ReferenceModel::Plain(_) => Vec::new(),
        };
        self.case_counts.grown(&bins, &mut *self.dut)
    }

    fn finish(mut self) -> WorkerDone {
        let rtl_coverage = self.rtl_coverage.take().map(|path| {
            let name = self.dut.name().to_string();
            match self.dut.sim_controls() {
                Some(sim) => sim.write_coverage(&path).map(|()| path),
                None => Err(format!("the `{name}` model has no coverage counters")),
            }
        });
        WorkerDone {
            coverage: match self.reference {
                ReferenceModel::Probe(p) => Some(p.into_coverage()),
                ReferenceModel::Plain(_) => None,
            },
            rtl_coverage,
        }
    }
}
