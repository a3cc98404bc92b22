//! Mutation reports of one set of mutants on several configurations, combined: a mutant counts as caught when any configuration's run kills it.
//!
//! The campaign and the gate run every shipped configuration, so a bug is
//! caught when one of them catches it. Per mutant, the combined verdict is
//! the strongest of its per-configuration ones (killed, then survived,
//! timed out, not compiling), and it is equivalent only when every
//! configuration lists it so (`@config` entries of the equivalent list hold
//! on the configurations they name only). docs/mutation.md, "Per
//! configuration".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::mutants::{
    kill_tables, summarize, summary_json, AssertionKills, KillRow, MutantRecord, MutateReport,
    Survivor, Verdict,
};

/// The combination of per-configuration mutation reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CombinedReport {
    /// The configurations, in the order given.
    pub configs: Vec<String>,
    /// Each configuration's row, in the order given, and the combined one.
    pub per_config: Vec<KillRow>,
    pub combined: KillRow,
    /// The combined summary, and its kill tables.
    pub summary: Value,
    pub by_class: Vec<KillRow>,
    pub by_file: Vec<KillRow>,
    pub assertion_kills: AssertionKills,
    /// Mutants caught on no configuration and not equivalent on all, with
    /// the command that reruns each on a configuration it survived.
    pub survivors: Vec<Survivor>,
    /// Mutants whose verdicts differ between configurations: id, then
    /// configuration -> verdict (`equivalent` for a listed, unkilled one).
    pub differing: Vec<(String, BTreeMap<String, String>)>,
    /// The combined record of every mutant (the killing configuration's
    /// record for a kill).
    pub mutants: Vec<MutantRecord>,
    /// Every mutant listed as equivalent on at least one configuration,
    /// with what it rests on there (docs/mutation.md, "Evidence for the
    /// equivalents").
    #[serde(default)]
    pub equivalents: Vec<EquivalentStanding>,
}

/// One listed equivalent across the configurations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EquivalentStanding {
    pub id: String,
    /// Configuration -> what the entry rests on there.
    pub per_config: BTreeMap<String, Standing>,
}

impl EquivalentStanding {
    /// Sufficient evidence on every configuration that lists it and
    /// compiles it.
    pub fn sufficient(&self) -> bool {
        self.per_config.values().all(Standing::holds)
    }
}

/// What a listed equivalent rests on, on one configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Standing {
    /// Not listed there (an `@config` entry): run and counted as any
    /// mutant, with this verdict.
    NotListed { verdict: String },
    /// Listed, but Verilator refuses it there: nothing ran.
    NotCompiling,
    /// The CVO sweep put every input through the function it lies in.
    Exhaustive,
    /// Programs (random, stalled, steered) it passed; `sufficient` when at
    /// least the required number.
    Programs { programs: u64, sufficient: bool },
    /// Listed, but killed there: the entry is wrong.
    Killed,
    /// Listed, but its run ran out of time: no evidence.
    TimedOut,
}

impl Standing {
    fn of(r: &MutantRecord) -> Standing {
        if r.equivalent.is_none() {
            return Standing::NotListed {
                verdict: r.result.name().into(),
            };
        }
        match (&r.result, &r.evidence) {
            (Verdict::Killed { .. }, _) => Standing::Killed,
            (Verdict::NotCompiling { .. }, _) => Standing::NotCompiling,
            (Verdict::TimedOut { .. }, _) => Standing::TimedOut,
            (Verdict::Survived { .. }, Some(e)) if e.exhaustive && e.sufficient => {
                Standing::Exhaustive
            }
            (Verdict::Survived { .. }, Some(e)) => Standing::Programs {
                programs: e.battery.programs(),
                sufficient: e.sufficient,
            },
            (Verdict::Survived { battery, .. }, None) => Standing::Programs {
                programs: battery.programs(),
                sufficient: false,
            },
        }
    }

    /// Whether the entry stands there: sufficient evidence, or nothing to
    /// stand (not listed, not compiling).
    pub fn holds(&self) -> bool {
        match self {
            Standing::NotListed { .. } | Standing::NotCompiling | Standing::Exhaustive => true,
            Standing::Programs { sufficient, .. } => *sufficient,
            Standing::Killed | Standing::TimedOut => false,
        }
    }

    /// The table cell.
    pub fn cell(&self) -> String {
        match self {
            Standing::NotListed { verdict } => format!("not listed ({verdict})"),
            Standing::NotCompiling => "not compiling".into(),
            Standing::Exhaustive => "exhaustive".into(),
            Standing::Programs {
                programs,
                sufficient: true,
            } => format!("{programs} programs"),
            Standing::Programs {
                programs,
                sufficient: false,
            } => format!("{programs} programs, NOT SUFFICIENT"),
            Standing::Killed => "KILLED".into(),
            Standing::TimedOut => "TIMED OUT".into(),
        }
    }
}

/// A record's verdict as the combination ranks it: lower is stronger.
fn rank(r: &MutantRecord) -> u8 {
    match r.result {
        Verdict::Killed { .. } => 0,
        Verdict::Survived { .. } => 1,
        Verdict::TimedOut { .. } => 2,
        Verdict::NotCompiling { .. } => 3,
    }
}

/// A record's verdict in words, `equivalent` for a listed, unkilled one.
fn word(r: &MutantRecord) -> String {
    if r.counts_as_equivalent() {
        "equivalent".into()
    } else {
        r.result.name().into()
    }
}

/// Combines `reports` (one per configuration, each over the same mutants).
pub fn combine(reports: &[MutateReport]) -> Result<CombinedReport, String> {
    let Some(first) = reports.first() else {
        return Err("no report to combine".into());
    };
    let mut configs: Vec<String> = Vec::new();
    for r in reports {
        if configs.contains(&r.config) {
            return Err(format!("two reports of configuration {}", r.config));
        }
        if r.observe != first.observe {
            return Err(format!(
                "the report of {} saw the mutants at the {} level, that of {} at the {} level: \
                 combine reports of one level (docs/dut-contract.md)",
                r.config, r.observe, first.config, first.observe
            ));
        }
        if r.sites != first.sites {
            return Err(format!(
                "the report of {} counts {} sites of hw/rtl, that of {} {}: runs of different RTL",
                r.config, r.sites, first.config, first.sites
            ));
        }
        if !r.missing.is_empty() || r.interrupted {
            return Err(format!(
                "the report of {} is incomplete ({} mutants without a record): finish it first (--resume)",
                r.config,
                r.missing.len()
            ));
        }
        configs.push(r.config.clone());
    }
    let ids: Vec<&str> = first.mutants.iter().map(|m| m.id.as_str()).collect();
    let mut by_config: Vec<BTreeMap<&str, &MutantRecord>> = Vec::new();
    for r in reports {
        let map: BTreeMap<&str, &MutantRecord> =
            r.mutants.iter().map(|m| (m.id.as_str(), m)).collect();
        if map.len() != ids.len() || ids.iter().any(|id| !map.contains_key(id)) {
            return Err(format!(
                "the reports of {} and {} hold different mutants",
                first.config, r.config
            ));
        }
        by_config.push(map);
    }
    let mut mutants = Vec::new();
    let mut differing = Vec::new();
    for id in &ids {
        let records: Vec<&MutantRecord> = by_config.iter().map(|m| m[id]).collect();
        let words: BTreeMap<String, String> = configs
            .iter()
            .zip(&records)
            .map(|(c, r)| (c.clone(), word(r)))
            .collect();
        let mut combined = (*records.iter().min_by_key(|r| rank(r)).unwrap()).clone();
        let equivalent_everywhere = records.iter().all(|r| r.equivalent.is_some());
        if !equivalent_everywhere {
            combined.equivalent = None;
        }
        if words.values().any(|w| *w != words[&configs[0]]) {
            differing.push((id.to_string(), words));
        }
        mutants.push(combined);
    }
    let equivalents = ids
        .iter()
        .filter(|id| by_config.iter().any(|m| m[*id].equivalent.is_some()))
        .map(|id| EquivalentStanding {
            id: id.to_string(),
            per_config: configs
                .iter()
                .zip(&by_config)
                .map(|(c, m)| (c.clone(), Standing::of(m[id])))
                .collect(),
        })
        .collect();
    let survivors = mutants
        .iter()
        .filter(|m| m.survives())
        .filter_map(|m| {
            reports
                .iter()
                .flat_map(|r| &r.survivors)
                .find(|s| s.id == m.id)
                .cloned()
        })
        .collect();
    let report_rows = |group: &dyn Fn(&MutantRecord) -> String| {
        let mut names: Vec<String> = mutants.iter().map(group).collect();
        names.sort();
        names.dedup();
        names
            .iter()
            .map(|n| {
                let of: Vec<&MutantRecord> = mutants.iter().filter(|m| group(m) == *n).collect();
                KillRow::of(n, &of)
            })
            .collect::<Vec<_>>()
    };
    Ok(CombinedReport {
        per_config: reports
            .iter()
            .map(|r| KillRow::of(&r.config, &r.mutants.iter().collect::<Vec<_>>()))
            .collect(),
        combined: KillRow::of("combined", &mutants.iter().collect::<Vec<_>>()),
        summary: summary_json(&summarize(&mutants)),
        by_class: report_rows(&|m| m.class.clone()),
        by_file: report_rows(&|m| m.file().to_string()),
        assertion_kills: AssertionKills::of(&mutants),
        survivors,
        differing,
        configs,
        mutants,
        equivalents,
    })
}

impl CombinedReport {
    /// The per-configuration and combined kill rates, the combined kill
    /// tables, the mutants whose verdicts differ, the survivors.
    pub fn text(&self) -> String {
        let mut out = vec![format!(
            "combined over {}: a mutant killed on any configuration is killed; equivalent only if equivalent on all",
            self.configs.join(", ")
        )];
        let rows: Vec<&KillRow> = self.per_config.iter().chain([&self.combined]).collect();
        let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
        out.push(KillRow::head(width));
        out.extend(rows.iter().map(|r| r.line(width)));
        out.extend(kill_tables(
            "combined kill table",
            &self.by_class,
            &self.by_file,
        ));
        if !self.differing.is_empty() {
            out.push(format!(
                "{} mutants with different verdicts on different configurations:",
                self.differing.len()
            ));
            for (id, words) in &self.differing {
                let each: Vec<String> = words.iter().map(|(c, w)| format!("{c} {w}")).collect();
                out.push(format!("  {id}: {}", each.join(", ")));
            }
        }
        out.extend(self.assertion_kills.text());
        if !self.equivalents.is_empty() {
            let short = self.equivalents.iter().filter(|e| !e.sufficient()).count();
            out.push(format!(
                "{} listed equivalents, {} of them without sufficient evidence on a configuration that lists them:",
                self.equivalents.len(),
                short
            ));
            for e in &self.equivalents {
                let each: Vec<String> = e
                    .per_config
                    .iter()
                    .map(|(c, s)| format!("{c} {}", s.cell()))
                    .collect();
                out.push(format!("  {}: {}", e.id, each.join(", ")));
            }
        }
        if !self.survivors.is_empty() {
            out.push("survivors on every configuration that compiles them:".into());
            for s in &self.survivors {
                out.push(format!(
                    "  {}  ({})\n      {}",
                    s.change, s.verdict, s.reproduce
                ));
            }
        }
        out.join("\n")
    }

    /// The listed equivalents and their evidence as a Markdown table, one
    /// row per entry, one column per configuration (docs/mutation.md).
    pub fn equivalents_markdown(&self) -> String {
        let mut out = format!("| mutant | {} |\n", self.configs.join(" | "));
        out += &format!("|---|{}\n", "---|".repeat(self.configs.len()));
        for e in &self.equivalents {
            let cells: Vec<String> = self
                .configs
                .iter()
                .map(|c| e.per_config.get(c).map_or(String::new(), Standing::cell))
                .collect();
            out += &format!("| `{}` | {} |\n", e.id, cells.join(" | "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, result: Verdict, equivalent: bool) -> MutantRecord {
        MutantRecord {
            id: id.into(),
            class: "operator-swap".into(),
            change: format!("{id} changed"),
            result,
            equivalent: equivalent.then(|| "reason".into()),
            build_seconds: 0.0,
            evidence: None,
        }
    }

    fn killed() -> Verdict {
        Verdict::Killed {
            seed: 1,
            programs: 1,
            instructions: 3,
            seconds: 0.1,
            by: "l2-writes".into(),
            mismatch: None,
            assertion: None,
        }
    }

    fn survived() -> Verdict {
        Verdict::Survived {
            seeds: 40,
            instructions: 1600,
            battery: Default::default(),
        }
    }

    fn report(config: &str, mutants: Vec<MutantRecord>) -> MutateReport {
        MutateReport::of_mutants(config, 3, mutants)
    }

    #[test]
    fn killed_anywhere_is_killed_and_equivalent_only_everywhere() {
        let tiny = report(
            "tiny",
            vec![
                record("a.sv:1:1:operator-swap", survived(), true),
                record("a.sv:2:1:operator-swap", survived(), false),
                record("a.sv:3:1:operator-swap", survived(), true),
            ],
        );
        let small = report(
            "small",
            vec![
                record("a.sv:1:1:operator-swap", killed(), true),
                record("a.sv:2:1:operator-swap", survived(), false),
                record("a.sv:3:1:operator-swap", survived(), false),
            ],
        );
        let c = combine(&[tiny.clone(), small.clone()]).unwrap();
        let verdicts: Vec<String> = c.mutants.iter().map(word).collect();
        assert_eq!(verdicts, ["killed", "survived", "survived"]);
        assert_eq!(c.summary["killed"], 1);
        assert_eq!(c.summary["equivalent"], 0);
        assert_eq!(c.differing.len(), 2, "{:?}", c.differing);
        assert!(c.text().contains("combined"), "{}", c.text());
        // The same configuration twice, or different mutants: refused.
        assert!(combine(&[tiny.clone(), tiny.clone()]).is_err());
        // Reports of two observation levels: refused by name.
        let mut black_box = small.clone();
        black_box.observe = pccx_golden::model::Observation::BlackBox;
        let e = combine(&[tiny.clone(), black_box]).unwrap_err();
        assert!(
            e.contains("black-box level") && e.contains("full level"),
            "{e}"
        );
        let mut other = small.clone();
        other.mutants[2].id = "a.sv:9:1:operator-swap".into();
        assert!(combine(&[tiny, other])
            .unwrap_err()
            .contains("different mutants"));
    }

    /// A listed mutant that one configuration's Verilator refuses is not
    /// compiling there, not equivalent (nothing ran): equivalent combined
    /// when it is listed and survives where it compiles.
    #[test]
    fn a_listed_mutant_that_does_not_compile_counts_as_not_compiling_there() {
        let refused = Verdict::NotCompiling {
            stage: "verilator".into(),
            message: "Size-changing cast to zero or negative size".into(),
        };
        let tiny = report(
            "tiny",
            vec![record("a.sv:1:1:operator-swap", refused, true)],
        );
        let small = report(
            "small",
            vec![record("a.sv:1:1:operator-swap", survived(), true)],
        );
        assert_eq!(tiny.summary["not_compiling"], 1);
        assert_eq!(tiny.summary["equivalent"], 0);
        assert_eq!(small.summary["equivalent"], 1);
        let c = combine(&[tiny, small]).unwrap();
        assert_eq!(c.summary["equivalent"], 1);
        assert_eq!(c.summary["not_compiling"], 0);
        assert_eq!(c.differing.len(), 1, "{:?}", c.differing);
    }

    /// Each listed equivalent's standing per configuration: exhaustive, a
    /// count of programs (sufficient or not), not compiling, not listed, or
    /// killed (a wrong entry), and whether it holds everywhere.
    #[test]
    fn every_listed_equivalent_is_shown_with_its_evidence_per_configuration() {
        use crate::tools::mutants::{Battery, Evidence, EvidenceSource};
        let with = |r: MutantRecord, battery: Battery, exhaustive: bool| MutantRecord {
            evidence: Some(Evidence::new(EvidenceSource::Run, battery, exhaustive)),
            ..r
        };
        let programs = |n: u64| Battery {
            random: n / 2,
            stalled: n / 2,
            ..Default::default()
        };
        let swept = Battery {
            cvo_sweep: 3,
            ..programs(80)
        };
        let tiny = report(
            "tiny",
            vec![
                with(
                    record("a.sv:1:1:operator-swap", survived(), true),
                    swept,
                    true,
                ),
                with(
                    record("a.sv:2:1:operator-swap", survived(), true),
                    programs(2000),
                    false,
                ),
                record("a.sv:3:1:operator-swap", killed(), false),
            ],
        );
        let small = report(
            "small",
            vec![
                with(
                    record("a.sv:1:1:operator-swap", survived(), true),
                    swept,
                    true,
                ),
                with(
                    record("a.sv:2:1:operator-swap", survived(), true),
                    programs(80),
                    false,
                ),
                record("a.sv:3:1:operator-swap", killed(), true),
            ],
        );
        let c = combine(&[tiny, small]).unwrap();
        let cells: Vec<Vec<String>> = c
            .equivalents
            .iter()
            .map(|e| e.per_config.values().map(Standing::cell).collect())
            .collect();
        assert_eq!(
            cells,
            [
                vec!["exhaustive", "exhaustive"],
                vec!["80 programs, NOT SUFFICIENT", "2000 programs"],
                vec!["KILLED", "not listed (killed)"],
            ],
            "small sorts before tiny"
        );
        let holds: Vec<bool> = c
            .equivalents
            .iter()
            .map(EquivalentStanding::sufficient)
            .collect();
        assert_eq!(holds, [true, false, false]);
        assert!(
            c.text().contains("3 listed equivalents, 2 of them without"),
            "{}",
            c.text()
        );
        let md = c.equivalents_markdown();
        assert!(
            md.starts_with("| mutant | tiny | small |\n|---|---|---|\n"),
            "{md}"
        );
        assert!(
            md.contains(
                "| `a.sv:2:1:operator-swap` | 2000 programs | 80 programs, NOT SUFFICIENT |"
            ),
            "{md}"
        );
    }
}
