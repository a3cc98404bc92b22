//! The records of a mutation run and the report made from them (verdicts,
//! the summary, the tables per class and per file): what `mutate` writes
//! and `merge` reads back, in any build.

use crate::regress::campaign::Shard;
use crate::regress::identity::{self, MutationIdentity, Rerun, RunEnded};
use pccx_golden::model::Observation;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Mutants Verilator lints at once by default (`mutate --lint-batch`,
/// tools::mutate::lint): here, so that the command line builds without the
/// RTL (`--no-default-features`) too.
pub const DEFAULT_LINT_BATCH: usize = 16;

/// What became of one mutant; as JSON (the child's line, a record's
/// `result`), tagged by `verdict`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict")]
pub enum Verdict {
    #[serde(rename = "killed")]
    Killed {
        seed: u64,
        /// Programs run up to and including the killing one (random seeds,
        /// then the CVO sweep's cases).
        #[serde(default)]
        programs: u64,
        /// Instructions issued over all seeds up to and including the
        /// killing one.
        instructions: u64,
        seconds: f64,
        /// The check that caught it (or "watchdog", "model error").
        by: String,
        /// The first mismatch, when a check caught it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mismatch: Option<Box<crate::scoreboard::MismatchRecord>>,
        /// When an assertion of the RTL made the kill: which, and what the
        /// scoreboard alone saw of the same program.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        assertion: Option<AssertionKill>,
    },
    #[serde(rename = "survived")]
    Survived {
        seeds: u64,
        instructions: u64,
        /// The programs it passed, by kind (records older than it read as
        /// none).
        #[serde(default)]
        battery: Battery,
    },
    #[serde(rename = "timed out")]
    TimedOut { seeds: u64, seconds: f64 },
    #[serde(rename = "not compiling")]
    NotCompiling { stage: String, message: String },
}

/// The programs a surviving mutant passed, by kind: what a listed
/// equivalent's evidence is (docs/mutation.md, "Evidence").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Battery {
    /// Random programs under ideal I/O (timing checked to the cycle).
    pub random: u64,
    /// Random programs under stalled I/O.
    pub stalled: u64,
    /// Steered programs.
    pub steered: u64,
    /// The CVO sweep's cases (every BF16 input through every CVO
    /// function), 0 when it did not run.
    pub cvo_sweep: u64,
    /// The directed cases (stimulus/directed.rs), 0 when they did not run
    /// (and in records made before they existed).
    #[serde(default)]
    pub directed: u64,
}

impl Battery {
    /// Random, stalled and steered programs together (the sweep apart).
    pub fn programs(&self) -> u64 {
        self.random + self.stalled + self.steered
    }
}

/// What a listed equivalent rests on besides its reason in words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Where the battery was run: `run` (this run) or `recorded` (the
    /// evidence file's record for this RTL and configuration; the mutant
    /// was not run again).
    pub source: EvidenceSource,
    pub battery: Battery,
    /// Whether the entry rests on an exhaustive check (tagged `exhaustive`
    /// in the equivalent list: the CVO sweep puts every input through the
    /// function the site lies in).
    pub exhaustive: bool,
    /// Enough for the entry to stand: the exhaustive check passed, or at
    /// least [`EVIDENCE_PROGRAMS`] programs did.
    pub sufficient: bool,
}

/// Programs (random, stalled and steered) an equivalent entry that is not
/// exhaustive needs on a configuration (issue 31).
pub const EVIDENCE_PROGRAMS: u64 = 2000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceSource {
    Run,
    Recorded,
}

impl Evidence {
    pub fn new(source: EvidenceSource, battery: Battery, exhaustive: bool) -> Evidence {
        Evidence {
            source,
            battery,
            exhaustive,
            sufficient: if exhaustive {
                battery.cvo_sweep > 0
            } else {
                battery.programs() >= EVIDENCE_PROGRAMS
            },
        }
    }
}

/// A kill an assertion of the RTL made first (docs/assertions.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssertionKill {
    /// The assertion's name (scoreboard/assertions.rs).
    pub name: String,
    /// The cycle it failed at.
    pub cycle: u64,
    /// The other assertions that failed at the same edge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// The killing program run again with the assertions off: the check
    /// that caught the mutant then and its cycle, or `None` when the
    /// program passed (only the assertion sees the bug there).
    pub scoreboard: Option<ScoreboardKill>,
}

/// What the scoreboard alone caught.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreboardKill {
    pub by: String,
    pub cycle: Option<u64>,
}

impl AssertionKill {
    /// How many cycles before the scoreboard the assertion caught the bug.
    pub fn lead(&self) -> Option<i64> {
        let later = self.scoreboard.as_ref()?.cycle?;
        Some(later as i64 - self.cycle as i64)
    }
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Killed { .. } => "killed",
            Verdict::Survived { .. } => "survived",
            Verdict::TimedOut { .. } => "timed out",
            Verdict::NotCompiling { .. } => "not compiling",
        }
    }
}

impl Verdict {
    /// The verdict with a compiler's message cut to its first six lines.
    pub fn shortened(&self) -> Verdict {
        match self {
            Verdict::NotCompiling { stage, message } => Verdict::NotCompiling {
                stage: stage.clone(),
                message: message.lines().take(6).collect::<Vec<_>>().join("\n"),
            },
            v => v.clone(),
        }
    }
}

/// One mutant's result as a report and `results.jsonl` hold it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutantRecord {
    pub id: String,
    pub class: String,
    pub change: String,
    pub result: Verdict,
    /// The reason, when the mutant is listed as equivalent.
    pub equivalent: Option<String>,
    pub build_seconds: f64,
    /// For a listed equivalent that survived: what it survived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

impl MutantRecord {
    /// Listed as equivalent and neither killed nor refused by Verilator: a
    /// listed mutant that does not compile on this configuration counts as
    /// not compiling there (nothing ran, so nothing is evidence for it).
    pub fn counts_as_equivalent(&self) -> bool {
        self.equivalent.is_some()
            && matches!(
                self.result,
                Verdict::Survived { .. } | Verdict::TimedOut { .. }
            )
    }

    /// Neither killed nor listed as equivalent: a hole in the stimulus or
    /// the checks, or an equivalent mutant not yet listed.
    pub fn survives(&self) -> bool {
        self.equivalent.is_none()
            && matches!(
                self.result,
                Verdict::Survived { .. } | Verdict::TimedOut { .. }
            )
    }
}

impl MutantRecord {
    /// The file of hw/rtl the mutant is in (its id's first field).
    pub fn file(&self) -> &str {
        self.id.split(':').next().unwrap_or("")
    }
}

impl crate::regress::journal::Record for MutantRecord {
    type Key = String;
    fn key(&self) -> String {
        self.id.clone()
    }
    fn verdict(&self) -> String {
        self.result.name().into()
    }
}

/// The figures of a mutation run.
#[derive(Clone, Debug, Default)]
pub struct MutateSummary {
    pub total: usize,
    pub killed: usize,
    pub survived: usize,
    pub timed_out: usize,
    pub not_compiling: usize,
    pub equivalent: usize,
    /// killed / (total - equivalent - not compiling).
    pub kill_rate: Option<f64>,
    pub median_seconds_to_kill: Option<f64>,
    pub median_instructions_to_kill: Option<u64>,
}

pub fn summarize<'a>(results: impl IntoIterator<Item = &'a MutantRecord>) -> MutateSummary {
    let mut s = MutateSummary::default();
    let mut times = Vec::new();
    let mut instrs = Vec::new();
    for r in results {
        s.total += 1;
        if r.counts_as_equivalent() {
            s.equivalent += 1;
            continue;
        }
        match &r.result {
            Verdict::Killed {
                seconds,
                instructions,
                ..
            } => {
                s.killed += 1;
                times.push(*seconds);
                instrs.push(*instructions);
            }
            Verdict::Survived { .. } => s.survived += 1,
            Verdict::TimedOut { .. } => s.timed_out += 1,
            Verdict::NotCompiling { .. } => s.not_compiling += 1,
        }
    }
    let counted = s.total - s.equivalent - s.not_compiling;
    s.kill_rate = (counted > 0).then(|| s.killed as f64 / counted as f64);
    times.sort_by(f64::total_cmp);
    instrs.sort_unstable();
    s.median_seconds_to_kill = times.get(times.len() / 2).copied();
    s.median_instructions_to_kill = instrs.get(instrs.len() / 2).copied();
    s
}

impl MutateSummary {
    pub fn text(&self) -> String {
        let rate = self
            .kill_rate
            .map_or("n/a".to_string(), |r| format!("{:.1}%", 100.0 * r));
        format!(
            "mutants: {} (killed {}, survived {}, timed out {}, not compiling {}, equivalent {}); \
             kill rate {rate} = killed / (all - equivalent - not compiling); \
             median time to kill {}, median instructions to kill {}",
            self.total,
            self.killed,
            self.survived,
            self.timed_out,
            self.not_compiling,
            self.equivalent,
            self.median_seconds_to_kill
                .map_or("n/a".into(), |t| format!("{t:.2} s")),
            self.median_instructions_to_kill
                .map_or("n/a".into(), |n| n.to_string()),
        )
    }
}

pub fn summary_json(s: &MutateSummary) -> Value {
    json!({
        "total": s.total, "killed": s.killed, "survived": s.survived,
        "timed_out": s.timed_out, "not_compiling": s.not_compiling,
        "equivalent": s.equivalent, "kill_rate": s.kill_rate,
        "median_seconds_to_kill": s.median_seconds_to_kill,
        "median_instructions_to_kill": s.median_instructions_to_kill,
    })
}

/// The classes' names in report order.
const CLASS_NAMES: [&str; 5] = [
    "signal-mix-up",
    "broken-conditional",
    "off-by-one-compare",
    "off-by-one-constant",
    "operator-swap",
];

/// A mutation run's report (`mutate --json`, and `merge` of mutation
/// directories): the run, every mutant's record, the summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutateReport {
    pub config: String,
    pub seeds: u64,
    pub instrs: usize,
    /// Mutation sites in hw/rtl.
    pub sites: usize,
    /// The level the mutants were seen at (`mutate --observe`,
    /// docs/dut-contract.md); reports before the levels saw everything.
    #[serde(default = "full_observation", skip_serializing_if = "is_full")]
    pub observe: Observation,
    /// `i/n` for a shard's own report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Mutants of the run with no record (an interrupted run, a merge of
    /// incomplete shards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    pub summary: Value,
    /// The kill table per mutation class, and per file of hw/rtl.
    #[serde(default)]
    pub by_class: Vec<KillRow>,
    #[serde(default)]
    pub by_file: Vec<KillRow>,
    /// The kills that took longest, slowest first.
    #[serde(default)]
    pub slowest_kills: Vec<SlowKill>,
    /// Mutants neither killed nor listed as equivalent, each with the
    /// command that runs it again.
    #[serde(default)]
    pub survivors: Vec<Survivor>,
    /// The kills the RTL's assertions made first.
    #[serde(default)]
    pub assertion_kills: AssertionKills,
    pub mutants: Vec<MutantRecord>,
}

fn full_observation() -> Observation {
    Observation::Full
}

fn is_full(o: &Observation) -> bool {
    *o == Observation::Full
}

/// What the RTL's assertions add to a mutation run: the kills one of them
/// made first, and how much sooner than the scoreboard alone (the killing
/// program run again with the assertions off).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssertionKills {
    /// Kills in all.
    pub killed: usize,
    /// Kills an assertion made first.
    pub first: usize,
    /// Of those, the ones the scoreboard alone also caught on that program.
    pub scoreboard_later: usize,
    /// Of those, the ones it caught as a hang: the watchdog gives up only
    /// after its cycles without progress, which its lead mostly measures.
    #[serde(default)]
    pub scoreboard_hangs: usize,
    /// The assertion's lead over the scoreboard, in cycles, over the kills
    /// the scoreboard caught by a check other than the watchdog.
    pub median_lead_cycles: Option<i64>,
    pub min_lead_cycles: Option<i64>,
    pub max_lead_cycles: Option<i64>,
    /// Kills made first by each assertion, most first.
    pub by_assertion: Vec<(String, usize)>,
}

impl AssertionKills {
    pub fn of(records: &[MutantRecord]) -> AssertionKills {
        let mut s = AssertionKills::default();
        let mut leads = Vec::new();
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for r in records {
            let Verdict::Killed { assertion, .. } = &r.result else {
                continue;
            };
            s.killed += 1;
            let Some(a) = assertion else { continue };
            s.first += 1;
            *by.entry(a.name.clone()).or_default() += 1;
            match &a.scoreboard {
                None => {}
                Some(k) if k.by.ends_with("hang") || k.by.ends_with("watchdog") => {
                    s.scoreboard_later += 1;
                    s.scoreboard_hangs += 1;
                }
                Some(_) => {
                    s.scoreboard_later += 1;
                    leads.extend(a.lead());
                }
            }
        }
        leads.sort_unstable();
        s.median_lead_cycles = leads.get(leads.len() / 2).copied();
        s.min_lead_cycles = leads.first().copied();
        s.max_lead_cycles = leads.last().copied();
        s.by_assertion = by.into_iter().collect();
        s.by_assertion
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        s
    }

    /// The report's lines.
    pub fn text(&self) -> Vec<String> {
        if self.first == 0 {
            return vec![format!(
                "assertions: none of the {} kills was made first by an assertion",
                self.killed
            )];
        }
        let mut out = vec![format!(
            "assertions: {} of {} kills made first by an assertion; the scoreboard alone \
             (the same program, assertions off) caught {} of them: {} as a hang (when its \
             watchdog gave up), the other {} a median of {} cycles later ({} .. {}); it missed \
             {} on that program",
            self.first,
            self.killed,
            self.scoreboard_later,
            self.scoreboard_hangs,
            self.scoreboard_later - self.scoreboard_hangs,
            self.median_lead_cycles
                .map_or("-".into(), |c| c.to_string()),
            self.min_lead_cycles.map_or("-".into(), |c| c.to_string()),
            self.max_lead_cycles.map_or("-".into(), |c| c.to_string()),
            self.first - self.scoreboard_later,
        )];
        out.extend(
            self.by_assertion
                .iter()
                .map(|(name, n)| format!("  {n:>5}  {name}")),
        );
        out
    }
}

/// One row of a kill table: the verdicts of a group of mutants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KillRow {
    /// The class or the file.
    pub name: String,
    pub mutants: usize,
    pub killed: usize,
    pub survived: usize,
    pub timed_out: usize,
    pub not_compiling: usize,
    pub equivalent: usize,
    pub kill_rate: Option<f64>,
}

impl KillRow {
    pub fn of(name: &str, records: &[&MutantRecord]) -> KillRow {
        let s = summarize(records.iter().copied());
        KillRow {
            name: name.to_string(),
            mutants: s.total,
            killed: s.killed,
            survived: s.survived,
            timed_out: s.timed_out,
            not_compiling: s.not_compiling,
            equivalent: s.equivalent,
            kill_rate: s.kill_rate,
        }
    }

    /// The column heads of [`KillRow::line`].
    pub fn head(width: usize) -> String {
        format!(
            "  {:<width$} {:>5} {:>7} {:>9} {:>10} {:>14} {:>11} {:>9}",
            "",
            "all",
            "killed",
            "survived",
            "timed out",
            "not compiling",
            "equivalent",
            "kill rate"
        )
    }

    pub fn line(&self, width: usize) -> String {
        let rate = self
            .kill_rate
            .map_or("n/a".into(), |r| format!("{:.1}%", 100.0 * r));
        format!(
            "  {:<width$} {:>5} {:>7} {:>9} {:>10} {:>14} {:>11} {:>9}",
            self.name,
            self.mutants,
            self.killed,
            self.survived,
            self.timed_out,
            self.not_compiling,
            self.equivalent,
            rate
        )
    }
}

/// The kill tables per class and per file as text, each under `title`
/// ("kill table per class:"), its rows aligned to the longest name; a
/// table with no mutant is left out.
pub fn kill_tables(title: &str, by_class: &[KillRow], by_file: &[KillRow]) -> Vec<String> {
    let mut out = Vec::new();
    let width = by_file
        .iter()
        .map(|r| r.name.len())
        .chain([20])
        .max()
        .unwrap_or(20);
    for (which, rows) in [("per class", by_class), ("per file", by_file)] {
        if rows.iter().all(|r| r.mutants == 0) {
            continue;
        }
        out.push(format!("{title} {which}:"));
        out.push(KillRow::head(width));
        out.extend(rows.iter().filter(|r| r.mutants > 0).map(|r| r.line(width)));
    }
    out
}

/// A kill and what it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlowKill {
    pub id: String,
    pub seconds: f64,
    pub programs: u64,
    pub by: String,
}

/// A survivor and how to run it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Survivor {
    pub id: String,
    pub change: String,
    pub verdict: String,
    pub reproduce: String,
}

/// How many of the slowest kills a report lists.
const SLOWEST: usize = 10;

impl MutateReport {
    /// A report of `mutants` alone, on `config`, with its summary and no
    /// tables (what `mutate-combine` reads of a report; tests build them).
    pub fn of_mutants(config: &str, sites: usize, mutants: Vec<MutantRecord>) -> MutateReport {
        MutateReport {
            config: config.into(),
            seeds: 40,
            instrs: 40,
            sites,
            observe: Observation::Full,
            shard: None,
            missing: vec![],
            interrupted: false,
            summary: summary_json(&summarize(&mutants)),
            by_class: vec![],
            by_file: vec![],
            slowest_kills: vec![],
            survivors: vec![],
            assertion_kills: AssertionKills::default(),
            mutants,
        }
    }

    /// The report of `records` (put in the order of `order`, the run's
    /// list of mutant ids, those not in it last).
    pub fn new(
        header: &MutateHeader,
        mut records: Vec<MutantRecord>,
        order: &[String],
    ) -> MutateReport {
        let place: std::collections::HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        records.sort_by_key(|r| place.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
        let have: std::collections::HashSet<&str> = records.iter().map(|r| r.id.as_str()).collect();
        let missing = order
            .iter()
            .filter(|id| !have.contains(id.as_str()))
            .cloned()
            .collect();
        let by_class = CLASS_NAMES
            .iter()
            .map(|c| {
                let of: Vec<&MutantRecord> = records.iter().filter(|r| r.class == *c).collect();
                KillRow::of(c, &of)
            })
            .collect();
        let mut files: Vec<&str> = records.iter().map(|r| r.file()).collect();
        files.sort_unstable();
        files.dedup();
        let by_file = files
            .into_iter()
            .map(|f| {
                let of: Vec<&MutantRecord> = records.iter().filter(|r| r.file() == f).collect();
                KillRow::of(f, &of)
            })
            .collect();
        let mut kills: Vec<SlowKill> = records
            .iter()
            .filter_map(|r| match &r.result {
                Verdict::Killed {
                    seconds,
                    programs,
                    by,
                    ..
                } => Some(SlowKill {
                    id: r.id.clone(),
                    seconds: *seconds,
                    programs: *programs,
                    by: by.clone(),
                }),
                _ => None,
            })
            .collect();
        kills.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        kills.truncate(SLOWEST);
        let survivors = records
            .iter()
            .filter(|r| r.survives())
            .map(|r| Survivor {
                id: r.id.clone(),
                change: r.change.clone(),
                verdict: r.result.name().into(),
                reproduce: identity::command(&Rerun::Mutant {
                    identity: &header.identity,
                    id: &r.id,
                }),
            })
            .collect();
        MutateReport {
            config: header.identity.config.clone(),
            seeds: header.identity.seeds,
            instrs: header.identity.instrs,
            sites: header.identity.sites,
            observe: header.identity.observe,
            shard: None,
            missing,
            interrupted: false,
            summary: summary_json(&summarize(&records)),
            by_class,
            by_file,
            slowest_kills: kills,
            survivors,
            assertion_kills: AssertionKills::of(&records),
            mutants: records,
        }
    }

    /// The kill tables per class and per file, the slowest kills, the
    /// survivors with their commands, then the summary line;
    /// `equivalent_file` is where an equivalent survivor is to be listed.
    pub fn text(&self, equivalent_file: &str) -> String {
        let mut out = kill_tables("kill table", &self.by_class, &self.by_file);
        if !self.slowest_kills.is_empty() {
            out.push("slowest kills:".into());
            for k in &self.slowest_kills {
                out.push(format!(
                    "  {:>8.2} s  {:>3} programs  {}  by {}",
                    k.seconds, k.programs, k.id, k.by
                ));
            }
        }
        out.extend(self.assertion_kills.text());
        if !self.survivors.is_empty() {
            out.push(format!(
                "survivors (examine each: an equivalent mutant goes into {equivalent_file} with its reason):"
            ));
            for r in &self.survivors {
                out.push(format!(
                    "  {}  ({})\n      {}",
                    r.change, r.verdict, r.reproduce
                ));
            }
        }
        if !self.missing.is_empty() {
            out.push(format!(
                "{} mutants of the run have no record yet",
                self.missing.len()
            ));
        }
        out.push(summarize(&self.mutants).text());
        out.join("\n")
    }

    /// Every mutant of the run has a record, and each that compiles is
    /// killed unless listed as equivalent (a mutant Verilator refuses is no
    /// bug a test could miss).
    pub fn all_killed(&self) -> bool {
        let s = summarize(&self.mutants);
        self.missing.is_empty() && s.killed + s.equivalent + s.not_compiling == s.total
    }
}

/// How the mutants of a run are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Builds {
    /// The schema for more than [`SCHEMA_FROM`] mutants, else each alone.
    Auto,
    /// One mutant schema for every site it can guard.
    Schema,
    /// Each mutant Verilated and compiled alone.
    Alone,
    /// One mutant schema of the run's own mutants only (built for the run,
    /// at -O2): several times faster per program than the schema of every
    /// site, for long batteries of a few mutants (`--evidence`).
    Subset,
}

/// From this many mutants on, `--builds auto` takes the schema: its build
/// (a few minutes here, then cached) costs as much as about 30 mutants
/// built alone.
pub const SCHEMA_FROM: usize = 31;

/// The `format` field of `mutate.json`.
pub const MUTATE_FORMAT: &str = "pccx-cosim mutate";
/// The header of a mutation run's directory.
pub const MUTATE_FILE: &str = "mutate.json";

/// `DIR/mutate.json`: what a mutation run is (so that `--resume` and
/// `merge` can check it), and its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutateHeader {
    pub format: String,
    pub version: u64,
    #[serde(flatten)]
    pub identity: MutationIdentity,
    /// The ids of the whole run's mutants, in order, before sharding.
    pub mutants: Vec<String>,
    pub shard: Option<Shard>,
    pub runs: Vec<crate::regress::journal::RunEntry>,
}

impl MutateHeader {
    /// The first field in which `self` and `other` differ, as
    /// `` `field` is A here and B there ``.
    pub fn difference(&self, other: &MutateHeader) -> Option<String> {
        self.identity.difference(&other.identity).or_else(|| {
            (self.mutants != other.mutants)
                .then(|| "`mutants`: the list of mutants differs (hw/rtl changed?)".to_string())
        })
    }
}

impl crate::regress::store::RunHeader for MutateHeader {
    const FILE: &'static str = MUTATE_FILE;

    fn read(dir: &std::path::Path) -> Result<Option<Self>, String> {
        use crate::regress::journal;
        let Some(h) = journal::read_header::<MutateHeader>(dir, MUTATE_FILE)? else {
            return Ok(None);
        };
        journal::check_format(dir, MUTATE_FILE, &h.format, MUTATE_FORMAT, h.version, 1)?;
        Ok(Some(h))
    }

    fn difference(&self, old: &Self) -> Option<String> {
        MutateHeader::difference(self, old)
    }

    fn shard(&self) -> Option<Shard> {
        self.shard
    }

    fn runs_mut(&mut self) -> &mut Vec<crate::regress::journal::RunEntry> {
        &mut self.runs
    }

    fn carry_over(&mut self, old: Self) {
        self.runs = old.runs;
    }
}

/// One directory of a mutation run as [`merge`] found it.
#[derive(Clone, Debug, PartialEq)]
pub struct MutateDir {
    pub dir: std::path::PathBuf,
    pub shard: Option<Shard>,
    pub records: usize,
    /// The ids of its shard with no record anywhere.
    pub missing: Vec<String>,
    /// How its last run ended, `None` if it never finished.
    pub last_run: Option<RunEnded>,
}

/// What [`merge`] made of mutation directories.
#[derive(Clone, Debug, PartialEq)]
pub struct MutateMerged {
    pub report: MutateReport,
    pub header: MutateHeader,
    pub dirs: Vec<MutateDir>,
    pub duplicates: usize,
    pub conflicting: Vec<String>,
}

impl MutateMerged {
    /// 0 every mutant recorded, none surviving; 1 a mutant survived or did
    /// not compile; 2 mutants are missing.
    pub fn exit_code(&self) -> u8 {
        let s = summarize(&self.report.mutants);
        let unkilled =
            self.report.mutants.iter().any(MutantRecord::survives) || s.not_compiling > 0;
        if unkilled {
            1
        } else if !self.report.missing.is_empty() {
            2
        } else {
            0
        }
    }

    /// The command that runs the mutants a directory's shard lacks.
    pub fn rerun_command(&self, dir: &std::path::Path, shard: Option<Shard>) -> String {
        identity::command(&Rerun::Mutation {
            identity: &self.header.identity,
            shard,
            dir,
        })
    }
}

/// Merges the directories of one mutation run (shards, reruns): each must
/// hold a `mutate.json` of the same run; each mutant's first record is
/// kept.
pub fn merge(dirs: &[std::path::PathBuf]) -> Result<MutateMerged, String> {
    use crate::regress::journal;
    let mut first: Option<(MutateHeader, &std::path::Path)> = None;
    let mut records: Vec<MutantRecord> = Vec::new();
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let (mut duplicates, mut conflicting) = (0, Vec::new());
    let mut per_dir = Vec::new();
    for dir in dirs {
        let header: MutateHeader = journal::read_header(dir, MUTATE_FILE)?.ok_or_else(|| {
            format!(
                "{}: no {MUTATE_FILE} here: not a mutation run's directory",
                dir.display()
            )
        })?;
        journal::check_format(
            dir,
            MUTATE_FILE,
            &header.format,
            MUTATE_FORMAT,
            header.version,
            1,
        )?;
        match &first {
            None => first = Some((header.clone(), dir)),
            Some((h, there)) => {
                if let Some(d) = header.difference(h) {
                    return Err(format!(
                        "{} and {} are not shards of one mutation run: {d}",
                        dir.display(),
                        there.display()
                    ));
                }
            }
        }
        let read = journal::read_journal::<MutantRecord>(&dir.join(journal::RESULTS_FILE))?;
        duplicates += read.duplicates;
        conflicting.extend(read.conflicting.iter().cloned());
        let n = read.records.len();
        for r in read.records {
            match seen.get(&r.id) {
                Some(v) => {
                    duplicates += 1;
                    if *v != r.result.name() && !conflicting.contains(&r.id) {
                        conflicting.push(r.id.clone());
                    }
                }
                None => {
                    seen.insert(r.id.clone(), r.result.name().to_string());
                    records.push(r);
                }
            }
        }
        let last_run = header.runs.last().and_then(|r| r.ended);
        per_dir.push((dir.clone(), header.shard, n, last_run));
    }
    let (header, _) = first.ok_or("merge: name at least one directory")?;
    let dirs = per_dir
        .into_iter()
        .map(|(dir, shard, records, last_run)| {
            let missing = header
                .mutants
                .iter()
                .enumerate()
                .filter(|(k, id)| {
                    shard.is_none_or(|s: Shard| s.holds(*k as u64)) && !seen.contains_key(*id)
                })
                .map(|(_, id)| id.clone())
                .collect();
            MutateDir {
                dir,
                shard,
                records,
                missing,
                last_run,
            }
        })
        .collect();
    let order = header.mutants.clone();
    Ok(MutateMerged {
        report: MutateReport::new(&header, records, &order),
        header,
        dirs,
        duplicates,
        conflicting,
    })
}
