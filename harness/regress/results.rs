//! A campaign's records and the report made from them: one [`SeedRecord`]
//! per finished seed (a line of `results.jsonl`, an entry of `--json`), and
//! the `--json` file, its summary and signature groups, made from a list of
//! them (docs/harness.md, "Campaign JSON"; docs/scale-out.md).

pub use super::campaign::SeedVerdict;
use super::campaign::{CampaignReport, InfraError, ModelFailure, SeedResult, SeedTotals, Summary};
use crate::scoreboard::{MismatchRecord, RetireLatency};
use crate::triage::repro::Artefacts;
use crate::triage::signature::{Signature, SignatureRecord};
use pccx_golden::{Engine, PerEngine};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The whole `--json` file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CampaignFile {
    pub config: String,
    pub first_seed: u64,
    pub count: u64,
    pub instrs: usize,
    pub reference: String,
    pub dut: String,
    /// `i/n` for a shard's own report; absent for a whole campaign and a
    /// merge of shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Seeds of the campaign with no record (a merge of incomplete shards,
    /// an interrupted run); absent when none is missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_seeds: Vec<u64>,
    /// The run stopped on SIGTERM or SIGINT before its last seed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    pub results: Vec<SeedRecord>,
    pub summary: SummaryRecord,
    pub failures_by_signature: Vec<SignatureGroup>,
}

/// One seed's record: a line of `results.jsonl`, an entry of `results`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedRecord {
    pub seed: u64,
    pub verdict: SeedVerdict,
    pub instructions: u32,
    pub cycles: Option<u64>,
    pub wall_seconds: f64,
    /// Busy cycles per engine, in [`Engine::ALL`] order.
    #[serde(default)]
    pub engine_busy: PerEngine<u64>,
    /// Latch-to-retire cycles per engine, in power-of-two buckets
    /// ([`RetireLatency`]); absent when the DUT reports no cycles.
    #[serde(default, skip_serializing_if = "RetireLatency::is_empty")]
    pub retire_latency: RetireLatency,
    /// The rest only for a mismatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<MismatchRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRecord>,
    /// What was written for a mismatch or a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artefacts: Option<ArtefactsRecord>,
    /// An error or a timeout: what happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What was written for a failing seed.
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
    /// Seeds with a record (any verdict).
    pub seeds: u64,
    pub matched: u64,
    pub mismatched: u64,
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub timeouts: u64,
    pub instructions: u64,
    pub cycles: Option<u64>,
    /// Wall time of the run (of a merge: the sum over its shards' runs).
    pub wall_seconds: f64,
    pub cycles_per_second: Option<f64>,
    /// Busy cycles per engine, by name (GEMV, GEMM, MEM, MEMSET, CVO).
    pub engine_busy_cycles: BTreeMap<String, u64>,
    /// Latch-to-retire cycles per engine over every seed, in power-of-two
    /// buckets ([`RetireLatency`]); absent when no seed reported cycles.
    #[serde(default, skip_serializing_if = "RetireLatency::is_empty")]
    pub retire_latency: RetireLatency,
    /// The infrastructure error that stopped the campaign, if one did.
    pub stopped: Option<StoppedRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppedRecord {
    pub seed: u64,
    pub error: String,
}

impl StoppedRecord {
    pub fn of(e: &InfraError) -> StoppedRecord {
        StoppedRecord {
            seed: e.seed,
            error: e.message.clone(),
        }
    }
}

/// The seeds that failed with one signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureGroup {
    #[serde(flatten)]
    pub signature: SignatureRecord,
    pub seeds: Vec<u64>,
}

/// What a report says about the run besides its records.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFacts {
    pub config: String,
    pub first_seed: u64,
    pub count: u64,
    pub instrs: usize,
    pub reference: String,
    pub dut: String,
    pub shard: Option<String>,
    pub wall_seconds: f64,
    /// An infrastructure error that is no seed's record (a DUT that could
    /// not be opened); a seed's error record stops the run all the same.
    pub stopped: Option<StoppedRecord>,
    pub interrupted: bool,
    pub missing_seeds: Vec<u64>,
}

impl CampaignFile {
    /// The report of an in-memory campaign.
    pub fn of(report: &CampaignReport) -> CampaignFile {
        let o = &report.options;
        let records: Vec<SeedRecord> = report.results.iter().map(SeedRecord::of).collect();
        // A seed's error record says the same; this covers an error before
        // any seed (a DUT that could not be opened).
        let stopped = report.summary.stopped.as_ref().map(StoppedRecord::of);
        CampaignFile::from_records(
            RunFacts {
                config: o.config.name.to_string(),
                first_seed: o.first_seed,
                count: o.count,
                instrs: o.instrs,
                reference: report.reference_model.clone(),
                dut: report.dut_model.clone(),
                shard: o.shard.filter(|s| s.count > 1).map(|s| s.to_string()),
                wall_seconds: report.summary.wall.as_secs_f64(),
                stopped,
                interrupted: report.interrupted,
                missing_seeds: Vec::new(),
            },
            records,
        )
    }

    /// The report of `records` (in any order; sorted by seed here).
    pub fn from_records(facts: RunFacts, mut records: Vec<SeedRecord>) -> CampaignFile {
        records.sort_by_key(|r| r.seed);
        let summary = SummaryRecord::of_records(&records, facts.wall_seconds, facts.stopped);
        CampaignFile {
            config: facts.config,
            first_seed: facts.first_seed,
            count: facts.count,
            instrs: facts.instrs,
            reference: facts.reference,
            dut: facts.dut,
            shard: facts.shard,
            missing_seeds: facts.missing_seeds,
            interrupted: facts.interrupted,
            failures_by_signature: signature_groups(&records),
            results: records,
            summary,
        }
    }

    /// `failures by signature: l2-writes/MEM/data x3 (seeds 4, 9, 17)`, one
    /// line per signature (the later ones indented under the first);
    /// `None` when nothing mismatched.
    pub fn signature_text(&self) -> Option<String> {
        const SHOWN: usize = 10;
        let lines: Vec<String> = self
            .failures_by_signature
            .iter()
            .map(|g| {
                let seeds = &g.seeds;
                let mut list: Vec<String> = seeds.iter().take(SHOWN).map(u64::to_string).collect();
                if seeds.len() > SHOWN {
                    list.push(format!("... {} more", seeds.len() - SHOWN));
                }
                let noun = if seeds.len() == 1 { "seed" } else { "seeds" };
                format!(
                    "{} x{} ({noun} {})",
                    g.signature,
                    seeds.len(),
                    list.join(", ")
                )
            })
            .collect();
        let head = "failures by signature: ";
        (!lines.is_empty()).then(|| {
            let indent = format!("\n{}", " ".repeat(head.len()));
            format!("{head}{}", lines.join(&indent))
        })
    }
}

/// The mismatched seeds grouped by signature: the most frequent signature
/// first (then the one seen first), seeds in order.
pub fn signature_groups(records: &[SeedRecord]) -> Vec<SignatureGroup> {
    let mut groups: BTreeMap<&str, (SignatureRecord, Vec<u64>)> = BTreeMap::new();
    for r in records {
        if let Some(s) = &r.signature {
            groups
                .entry(&s.text)
                .or_insert_with(|| (s.clone(), Vec::new()))
                .1
                .push(r.seed);
        }
    }
    let mut groups: Vec<SignatureGroup> = groups
        .into_values()
        .map(|(signature, mut seeds)| {
            seeds.sort_unstable();
            SignatureGroup { signature, seeds }
        })
        .collect();
    groups.sort_by(|a, b| {
        (
            std::cmp::Reverse(a.seeds.len()),
            a.seeds[0],
            &a.signature.text,
        )
            .cmp(&(
                std::cmp::Reverse(b.seeds.len()),
                b.seeds[0],
                &b.signature.text,
            ))
    });
    groups
}

impl SeedRecord {
    pub fn of(r: &SeedResult) -> SeedRecord {
        let verdict = r.verdict();
        // What failed: a mismatch, or the timeout as its repro states it.
        let failing = match (&r.mismatch, &r.failure) {
            (Some(m), _) => Some(m),
            (None, Some(ModelFailure::Timeout(m))) => Some(&**m),
            _ => None,
        };
        SeedRecord {
            seed: r.seed,
            verdict,
            instructions: r.instructions,
            cycles: r.cycles,
            wall_seconds: r.wall.as_secs_f64(),
            engine_busy: r.engine_busy,
            retire_latency: r.retire_latency.clone(),
            mismatch: failing.map(|m| m.record()),
            signature: failing.map(|m| Signature::of(m).record()),
            artefacts: (verdict != SeedVerdict::Match).then(|| ArtefactsRecord::of(&r.artefacts)),
            error: r.failure.as_ref().map(ModelFailure::message),
        }
    }

    /// The record of a seed at which a model failed.
    pub fn error(seed: u64, message: &str) -> SeedRecord {
        SeedRecord {
            seed,
            verdict: SeedVerdict::Error,
            instructions: 0,
            cycles: None,
            wall_seconds: 0.0,
            engine_busy: PerEngine::default(),
            retire_latency: RetireLatency::default(),
            mismatch: None,
            signature: None,
            artefacts: None,
            error: Some(message.to_string()),
        }
    }

    /// The one-line verdict the CLI prints: `seed N: ` and the
    /// [`outcome`](Self::outcome).
    pub fn line(&self) -> String {
        format!("seed {}: {}", self.seed, self.outcome())
    }

    /// The verdict with its detail (`MISMATCH ... at seq 3, cycle 90: ...`,
    /// `ok, 40 instrs, 812 cycles`), what JUnit gives as a failure's
    /// message.
    pub fn outcome(&self) -> String {
        match (&self.mismatch, self.verdict) {
            (Some(m), SeedVerdict::Mismatch) => {
                let at = m.seq.map(|s| format!(" at seq {s}")).unwrap_or_default();
                let cycle = m.cycle.map(|c| format!(", cycle {c}")).unwrap_or_default();
                format!("MISMATCH {}{at}{cycle}: {}", m.kind, m.detail)
            }
            (_, SeedVerdict::Timeout) => {
                format!("TIMEOUT: {}", self.error.as_deref().unwrap_or(""))
            }
            (_, SeedVerdict::Error) => format!("ERROR: {}", self.error.as_deref().unwrap_or("")),
            (_, _) => {
                let cycles = self
                    .cycles
                    .map(|c| format!(", {c} cycles"))
                    .unwrap_or_default();
                format!("match, {} instrs{cycles}", self.instructions)
            }
        }
    }

    /// What [`Summary::of_seeds`] adds up of this record.
    pub fn totals(&self) -> SeedTotals<'_> {
        SeedTotals {
            verdict: self.verdict,
            instructions: self.instructions,
            cycles: self.cycles,
            engine_busy: self.engine_busy,
            retire_latency: &self.retire_latency,
        }
    }

    /// The record with its wall time zeroed: what two runs of the same
    /// seeds must agree on.
    pub fn without_wall_time(&self) -> SeedRecord {
        SeedRecord {
            wall_seconds: 0.0,
            ..self.clone()
        }
    }
}

impl ArtefactsRecord {
    pub fn of(a: &Artefacts) -> ArtefactsRecord {
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
            errors: s.errors,
            timeouts: s.timeouts,
            instructions: s.instructions,
            cycles: s.cycles,
            wall_seconds: s.wall.as_secs_f64(),
            cycles_per_second: rate(s.cycles, s.wall.as_secs_f64()),
            engine_busy_cycles: busy_by_name(s.engine_busy),
            retire_latency: s.retire_latency.clone(),
            stopped: s.stopped.as_ref().map(StoppedRecord::of),
        }
    }

    /// The summary of `records`; `stopped`, if not given, is the first
    /// error record's.
    pub fn of_records(
        records: &[SeedRecord],
        wall_seconds: f64,
        stopped: Option<StoppedRecord>,
    ) -> SummaryRecord {
        let summary =
            Summary::of_seeds(records.iter().map(SeedRecord::totals), Duration::ZERO, None);
        let stopped = stopped.or_else(|| {
            records
                .iter()
                .find(|r| r.verdict == SeedVerdict::Error)
                .map(|r| StoppedRecord {
                    seed: r.seed,
                    error: r.error.clone().unwrap_or_default(),
                })
        });
        SummaryRecord {
            wall_seconds,
            cycles_per_second: rate(summary.cycles, wall_seconds),
            stopped,
            ..SummaryRecord::of(&summary)
        }
    }

    /// The summary lines the CLI prints.
    pub fn text(&self) -> String {
        let (cycles, rate) = match (self.cycles, self.cycles_per_second) {
            (Some(c), Some(r)) => (format!("{c} cycles"), format!("{r:.0} simulated cycles/s")),
            _ => ("no cycles reported".into(), "no simulated cycles/s".into()),
        };
        let mut others = String::new();
        if self.timeouts > 0 {
            others += &format!("{} timed out, ", self.timeouts);
        }
        if self.errors > 0 {
            others += &format!("{} errors, ", self.errors);
        }
        let mut s = format!(
            "summary: {} seeds, {} matched, {} mismatched, {others}{} instructions, {cycles}, \
             {:.3} s wall, {rate}",
            self.seeds, self.matched, self.mismatched, self.instructions, self.wall_seconds,
        );
        if let Some(cycles) = self.cycles.filter(|&c| c > 0) {
            let shares: Vec<String> = Engine::ALL
                .iter()
                .map(|engine| {
                    let name = engine.name();
                    let busy = self.engine_busy_cycles.get(name).copied().unwrap_or(0);
                    format!("{name} {:.1}%", 100.0 * busy as f64 / cycles as f64)
                })
                .collect();
            s.push_str(&format!(
                "\nutilisation (busy cycles / simulated cycles): {}",
                shares.join(", ")
            ));
        }
        if let Some(e) = &self.stopped {
            s.push_str(&format!(
                "\nstopped at seed {} by an infrastructure error: {}",
                e.seed, e.error
            ));
        }
        s
    }
}

fn rate(cycles: Option<u64>, secs: f64) -> Option<f64> {
    cycles.map(|c| if secs > 0.0 { c as f64 / secs } else { 0.0 })
}

fn busy_by_name(busy: PerEngine<u64>) -> BTreeMap<String, u64> {
    busy.iter()
        .map(|(engine, &b)| (engine.name().to_string(), b))
        .collect()
}
