//! The campaign results file (`--json`): serde types laid out as the file
//! is (docs/harness.md, "Campaign JSON"), made from a [`CampaignReport`].

use super::campaign::{CampaignReport, SeedResult, Summary, ENGINE_NAMES};
use crate::scoreboard::MismatchRecord;
use crate::triage::repro::Artefacts;
use crate::triage::signature::{Signature, SignatureRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CampaignFile {
    pub config: String,
    pub first_seed: u64,
    pub count: u64,
    pub instrs: usize,
    pub reference: String,
    pub dut: String,
    pub results: Vec<SeedRecord>,
    pub summary: SummaryRecord,
    pub failures_by_signature: Vec<SignatureGroup>,
}

/// The verdict of one seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeedStatus {
    Ok,
    Mismatch,
}

/// One seed's line of `results`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedRecord {
    pub seed: u64,
    pub status: SeedStatus,
    pub instructions: u32,
    pub cycles: Option<u64>,
    pub wall_seconds: f64,
    /// The rest only for a mismatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<MismatchRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artefacts: Option<ArtefactsRecord>,
}

/// What was written for a mismatching seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtefactsRecord {
    pub repro: Option<String>,
    pub min_asm: Option<String>,
    pub wave: Option<String>,
    pub shrink: Option<ShrinkSizes>,
    pub problems: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkSizes {
    pub before_instructions: usize,
    pub before_items: usize,
    pub after_instructions: usize,
    pub after_items: usize,
    pub runs: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryRecord {
    pub seeds: u64,
    pub matched: u64,
    pub mismatched: u64,
    pub instructions: u64,
    pub cycles: Option<u64>,
    pub wall_seconds: f64,
    pub cycles_per_second: Option<f64>,
    /// Busy cycles per engine, by name (GEMV, GEMM, MEM, MEMSET, CVO).
    pub engine_busy_cycles: BTreeMap<String, u64>,
    /// The infrastructure error that stopped the campaign, if one did.
    pub stopped: Option<StoppedRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppedRecord {
    pub seed: u64,
    pub error: String,
}

/// The seeds that failed with one signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureGroup {
    #[serde(flatten)]
    pub signature: SignatureRecord,
    pub seeds: Vec<u64>,
}

impl CampaignFile {
    pub fn of(report: &CampaignReport) -> CampaignFile {
        let o = &report.options;
        CampaignFile {
            config: o.config.name.to_string(),
            first_seed: o.first_seed,
            count: o.count,
            instrs: o.instrs,
            reference: report.reference_model.clone(),
            dut: report.dut_model.clone(),
            results: report.results.iter().map(SeedRecord::of).collect(),
            summary: SummaryRecord::of(&report.summary),
            failures_by_signature: report
                .failures_by_signature()
                .into_iter()
                .map(|(s, seeds)| SignatureGroup {
                    signature: s.record(),
                    seeds,
                })
                .collect(),
        }
    }
}

impl SeedRecord {
    pub fn of(r: &SeedResult) -> SeedRecord {
        SeedRecord {
            seed: r.seed,
            status: if r.mismatch.is_some() {
                SeedStatus::Mismatch
            } else {
                SeedStatus::Ok
            },
            instructions: r.instructions,
            cycles: r.cycles,
            wall_seconds: r.wall.as_secs_f64(),
            mismatch: r.mismatch.as_ref().map(|m| m.record()),
            signature: r.mismatch.as_ref().map(|m| Signature::of(m).record()),
            artefacts: r
                .mismatch
                .as_ref()
                .map(|_| ArtefactsRecord::of(&r.artefacts)),
        }
    }
}

impl ArtefactsRecord {
    fn of(a: &Artefacts) -> ArtefactsRecord {
        let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
        ArtefactsRecord {
            repro: path(&a.repro),
            min_asm: path(&a.min_asm),
            wave: path(&a.wave),
            shrink: a.shrink.map(|(before, after, runs)| ShrinkSizes {
                before_instructions: before.instructions,
                before_items: before.items,
                after_instructions: after.instructions,
                after_items: after.items,
                runs,
            }),
            problems: a.problems.clone(),
        }
    }
}

impl SummaryRecord {
    pub fn of(s: &Summary) -> SummaryRecord {
        SummaryRecord {
            seeds: s.seeds,
            matched: s.matched,
            mismatched: s.mismatched,
            instructions: s.instructions,
            cycles: s.cycles,
            wall_seconds: s.wall.as_secs_f64(),
            cycles_per_second: s.cycles_per_second(),
            engine_busy_cycles: ENGINE_NAMES
                .iter()
                .zip(s.engine_busy)
                .map(|(n, b)| (n.to_string(), b))
                .collect(),
            stopped: s.stopped.as_ref().map(|e| StoppedRecord {
                seed: e.seed,
                error: e.message.clone(),
            }),
        }
    }
}
