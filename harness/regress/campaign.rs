//! A campaign: many seeds, one case each, reference against DUT, with a
//! result per seed and a summary that survives an infrastructure failure.

use crate::config::HwConfig;
use crate::regress::results::CampaignFile;
use crate::scoreboard::{run_case_with, Mismatch, TimingMode};
use crate::stimulus::{GenOptions, TestCase};
use crate::triage::repro::Artefacts;
use crate::triage::signature::Signature;
use pccx_golden::model::NpuModel;
use serde_json::Value;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignOptions {
    pub first_seed: u64,
    /// Seeds `first_seed .. first_seed + count`.
    pub count: u64,
    /// Instructions per program.
    pub instrs: usize,
    pub config: HwConfig,
    /// Stall I/O (`--io stall`) instead of ideal I/O.
    pub stall_io: bool,
    /// The timing check; `None`: exact under ideal I/O, order under stall.
    pub timing: Option<TimingMode>,
}

impl CampaignOptions {
    pub fn gen_options(&self) -> GenOptions {
        GenOptions {
            stall_io: self.stall_io,
            ..GenOptions::for_config(&self.config, self.instrs)
        }
    }

    /// The seeds in order; a seed range that would pass `u64::MAX` ends
    /// there.
    pub fn seeds(&self) -> impl Iterator<Item = u64> {
        let first = self.first_seed;
        (0..self.count).map_while(move |i| first.checked_add(i))
    }
}

/// What one seed did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedResult {
    pub seed: u64,
    pub instructions: u32,
    pub cycles: Option<u64>,
    pub wall: Duration,
    /// `None`: reference and DUT agreed on everything.
    pub mismatch: Option<Mismatch>,
    /// The repro and the shrunk program written for a mismatch.
    pub artefacts: Artefacts,
}

impl SeedResult {
    /// The one-line verdict the CLI prints.
    pub fn line(&self) -> String {
        match &self.mismatch {
            None => {
                let cycles = self
                    .cycles
                    .map(|c| format!(", {c} cycles"))
                    .unwrap_or_default();
                format!(
                    "seed {}: ok, {} instrs{cycles}",
                    self.seed, self.instructions
                )
            }
            Some(m) => {
                let at = m.seq.map(|s| format!(" at seq {s}")).unwrap_or_default();
                let cycle = m.cycle.map(|c| format!(", cycle {c}")).unwrap_or_default();
                format!(
                    "seed {}: MISMATCH {}{at}{cycle}: {}",
                    self.seed,
                    m.kind,
                    m.detail()
                )
            }
        }
    }

    pub fn signature(&self) -> Option<Signature> {
        self.mismatch.as_ref().map(Signature::of)
    }
}

/// Why a campaign stopped before its last seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfraError {
    pub seed: u64,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Seeds that ran to a verdict.
    pub seeds: u64,
    pub matched: u64,
    pub mismatched: u64,
    pub instructions: u64,
    /// Sum of the seeds' cycle counts; `None` when no seed reported any
    /// (the golden model has no notion of time).
    pub cycles: Option<u64>,
    pub wall: Duration,
    pub stopped: Option<InfraError>,
    /// Busy cycles per engine (GEMV, GEMM, MEM, MEMSET, CVO), summed.
    pub engine_busy: [u64; 5],
}

/// Engine names in `engine_busy` order.
pub const ENGINE_NAMES: [&str; 5] = ["GEMV", "GEMM", "MEM", "MEMSET", "CVO"];

impl Summary {
    /// The summary of a campaign in which no seed ran (`stopped` says why,
    /// if it stopped).
    pub fn nothing_ran(stopped: Option<InfraError>) -> Summary {
        Summary {
            seeds: 0,
            matched: 0,
            mismatched: 0,
            instructions: 0,
            cycles: None,
            wall: Duration::ZERO,
            stopped,
            engine_busy: [0; 5],
        }
    }

    pub fn cycles_per_second(&self) -> Option<f64> {
        let secs = self.wall.as_secs_f64();
        self.cycles
            .map(|c| if secs > 0.0 { c as f64 / secs } else { 0.0 })
    }

    pub fn text(&self) -> String {
        let (cycles, rate) = match (self.cycles, self.cycles_per_second()) {
            (Some(c), Some(r)) => (format!("{c} cycles"), format!("{r:.0} simulated cycles/s")),
            _ => ("no cycles reported".into(), "no simulated cycles/s".into()),
        };
        let mut s = format!(
            "summary: {} seeds, {} matched, {} mismatched, {} instructions, {cycles}, \
             {:.3} s wall, {rate}",
            self.seeds,
            self.matched,
            self.mismatched,
            self.instructions,
            self.wall.as_secs_f64(),
        );
        if let Some(cycles) = self.cycles.filter(|&c| c > 0) {
            let shares: Vec<String> = ENGINE_NAMES
                .iter()
                .zip(self.engine_busy)
                .map(|(name, busy)| format!("{name} {:.1}%", 100.0 * busy as f64 / cycles as f64))
                .collect();
            s.push_str(&format!(
                "\nutilisation (busy cycles / simulated cycles): {}",
                shares.join(", ")
            ));
        }
        if let Some(e) = &self.stopped {
            s.push_str(&format!(
                "\nstopped at seed {} by an infrastructure error: {}",
                e.seed, e.message
            ));
        }
        s
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignReport {
    pub options: CampaignOptions,
    pub reference_model: String,
    pub dut_model: String,
    pub results: Vec<SeedResult>,
    pub summary: Summary,
}

impl CampaignReport {
    /// The results file (`--json`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(CampaignFile::of(self)).expect("campaign reports serialise")
    }

    /// The mismatched seeds grouped by signature: the most frequent
    /// signature first (then the one seen first), seeds in order.
    pub fn failures_by_signature(&self) -> Vec<(Signature, Vec<u64>)> {
        let mut groups: BTreeMap<Signature, Vec<u64>> = BTreeMap::new();
        for r in &self.results {
            if let Some(s) = r.signature() {
                groups.entry(s).or_default().push(r.seed);
            }
        }
        let mut groups: Vec<(Signature, Vec<u64>)> = groups.into_iter().collect();
        groups.sort_by_key(|(_, seeds)| (std::cmp::Reverse(seeds.len()), seeds[0]));
        groups
    }

    /// `failures by signature: l2-writes/MEM/data x3 (seeds 4, 9, 17)`, one
    /// line per signature (the later ones indented under the first);
    /// `None` when nothing mismatched.
    pub fn signature_text(&self) -> Option<String> {
        const SHOWN: usize = 10;
        let lines: Vec<String> = self
            .failures_by_signature()
            .iter()
            .map(|(s, seeds)| {
                let mut list: Vec<String> = seeds.iter().take(SHOWN).map(u64::to_string).collect();
                if seeds.len() > SHOWN {
                    list.push(format!("... {} more", seeds.len() - SHOWN));
                }
                let noun = if seeds.len() == 1 { "seed" } else { "seeds" };
                format!("{s} x{} ({noun} {})", seeds.len(), list.join(", "))
            })
            .collect();
        let head = "failures by signature: ";
        (!lines.is_empty()).then(|| {
            let indent = format!("\n{}", " ".repeat(head.len()));
            format!("{head}{}", lines.join(&indent))
        })
    }
}

/// Runs every seed of `options` on the two models (reset between seeds),
/// calling `on_result` after each. Mismatches do not stop the campaign; an
/// infrastructure error (a model error, or a panic inside a model) does,
/// and is recorded in the summary with everything that ran before it.
pub fn run_campaign(
    options: &CampaignOptions,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    on_result: &mut dyn FnMut(&SeedResult),
) -> CampaignReport {
    run_campaign_with(
        options,
        reference,
        dut,
        &mut |_, _| Artefacts::default(),
        on_result,
    )
}

/// [`run_campaign`], calling `on_mismatch` with the case and its first
/// mismatch before `on_result` for each seed that mismatches (to write a
/// repro and shrink the case: `repro::Recorder::record`).
pub fn run_campaign_with(
    options: &CampaignOptions,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    on_mismatch: &mut dyn FnMut(&TestCase, &Mismatch) -> Artefacts,
    on_result: &mut dyn FnMut(&SeedResult),
) -> CampaignReport {
    let started = Instant::now();
    let gen = options.gen_options();
    let mut results = Vec::new();
    let mut stopped = None;
    let mut engine_busy = [0u64; 5];
    for seed in options.seeds() {
        let t0 = Instant::now();
        let case = TestCase::generate(seed, &gen);
        let timing = options.timing.unwrap_or(TimingMode::default_for(&case));
        let ran = catch_unwind(AssertUnwindSafe(|| {
            run_case_with(&case, reference, dut, timing)
        }));
        let outcome = match ran {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => {
                stopped = Some(InfraError {
                    seed,
                    message: e.to_string(),
                });
                break;
            }
            Err(panic) => {
                stopped = Some(InfraError {
                    seed,
                    message: format!("a model panicked: {}", panic_message(&panic)),
                });
                break;
            }
        };
        let wall = t0.elapsed();
        for (total, busy) in engine_busy.iter_mut().zip(outcome.engine_busy) {
            *total += busy;
        }
        let artefacts = match &outcome.first_mismatch {
            Some(m) => on_mismatch(&case, m),
            None => Artefacts::default(),
        };
        let result = SeedResult {
            seed,
            instructions: outcome.instructions,
            cycles: outcome.cycles,
            wall,
            mismatch: outcome.first_mismatch,
            artefacts,
        };
        on_result(&result);
        results.push(result);
    }
    let mismatched = results.iter().filter(|r| r.mismatch.is_some()).count() as u64;
    let summary = Summary {
        seeds: results.len() as u64,
        matched: results.len() as u64 - mismatched,
        mismatched,
        instructions: results.iter().map(|r| u64::from(r.instructions)).sum(),
        cycles: results.iter().filter_map(|r| r.cycles).reduce(|a, b| a + b),
        wall: started.elapsed(),
        stopped,
        engine_busy,
    };
    CampaignReport {
        options: options.clone(),
        reference_model: reference.name().to_string(),
        dut_model: dut.name().to_string(),
        results,
        summary,
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoreboard::{CheckKind, Difference};

    fn result(seed: u64, kind: Option<CheckKind>) -> SeedResult {
        SeedResult {
            seed,
            instructions: 1,
            cycles: None,
            wall: Duration::ZERO,
            mismatch: kind.map(|kind| Mismatch {
                kind,
                seq: Some(0),
                word: Some(0x5000_0000_0000_0000),
                cycle: None,
                difference: match kind {
                    CheckKind::RetireOpcode => Difference::RetireOpcode {
                        reference: 7,
                        dut: 0,
                    },
                    _ => Difference::RetireErr {
                        reference: 1,
                        dut: 0,
                    },
                },
                reference: String::new(),
                dut: String::new(),
                afterwards: None,
                reference_model: "golden".into(),
                dut_model: "rtl".into(),
            }),
            artefacts: Artefacts::default(),
        }
    }

    fn report(results: Vec<SeedResult>) -> CampaignReport {
        CampaignReport {
            options: CampaignOptions {
                first_seed: 0,
                count: results.len() as u64,
                instrs: 1,
                config: crate::config::default_config(),
                stall_io: false,
                timing: None,
            },
            reference_model: "golden".into(),
            dut_model: "rtl".into(),
            results,
            summary: Summary::nothing_ran(None),
        }
    }

    #[test]
    fn failures_are_grouped_by_signature_most_frequent_first() {
        use CheckKind as K;
        let mut results = vec![
            result(1, Some(K::RetireOpcode)),
            result(2, None),
            result(3, Some(K::RetireErr)),
        ];
        results.extend((4..16).map(|seed| result(seed, Some(K::RetireErr))));
        let text = report(results).signature_text().unwrap();
        assert_eq!(
            text,
            "failures by signature: retire-err/decoder/err x13 \
             (seeds 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... 3 more)\n\
             \x20                      retire-opcode/decoder/opcode x1 (seed 1)"
        );
        assert_eq!(report(vec![result(0, None)]).signature_text(), None);
    }
}
