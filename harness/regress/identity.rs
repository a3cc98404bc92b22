//! What a run is, typed: a campaign's identity and a mutation run's, the choices they are made of, how a run ended, and the one command that reruns or resumes any run.
//!
//! A flag that changes what a seed does is a field of [`RunIdentity`]: it
//! is written to `campaign.json`, compared on `--resume` and `merge`
//! ([`RunIdentity::difference`]) and rendered back into flags
//! ([`RunIdentity::flags`]) by this file alone (docs/architecture.md,
//! "Where a new flag goes").

use super::campaign::Shard;
use crate::env::faults::Fault;
use crate::env::models::DutKind;
use crate::env::numerics::NumericsMode;
use crate::scoreboard::TimingMode;
use pccx_golden::model::Observation;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::{Path, PathBuf};

/// The DUT's host I/O (`--io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// Fixed latency, always ready: retire cycles are predicted exactly.
    Ideal,
    /// A seeded schedule of not-ready cycles and extra latency per seed.
    Stall,
}

impl IoMode {
    /// The name the CLI and `campaign.json` use.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Ideal => "ideal",
            IoMode::Stall => "stall",
        }
    }
}

/// The RTL's state before each case's reset (`--initial-state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum InitialState {
    /// Drawn from the case's seed, as silicon powers up (docs/harness.md).
    Random,
    /// Zero everywhere, as a plain simulation starts.
    Zero,
}

impl InitialState {
    /// The name the CLI and `campaign.json` use.
    pub fn name(self) -> &'static str {
        match self {
            InitialState::Random => "random",
            InitialState::Zero => "zero",
        }
    }
}

/// How one process's run of a directory ended (`RunEntry::ended`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunEnded {
    /// Every seed (or mutant) it was given has a record.
    Complete,
    /// SIGTERM or SIGINT: what finished is recorded; `--resume` continues.
    Interrupted,
    /// A model failed (an infrastructure error) at a seed.
    Stopped,
    /// A seed stayed stuck in the simulator past twice `--seed-timeout`.
    Hung,
}

impl RunEnded {
    pub fn name(self) -> &'static str {
        match self {
            RunEnded::Complete => "complete",
            RunEnded::Interrupted => "interrupted",
            RunEnded::Stopped => "stopped",
            RunEnded::Hung => "hung",
        }
    }
}

impl fmt::Display for RunEnded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What makes two runs' records comparable: the same seeds give the same
/// verdicts only under the same identity. `campaign.json` holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// The configuration's name (`--config`).
    pub config: String,
    pub first_seed: u64,
    pub count: u64,
    pub instrs: usize,
    pub io: IoMode,
    /// Absent for the default of the I/O.
    pub timing: Option<TimingMode>,
    pub dut: DutKind,
    /// The fault by its name (the CLI injects each with its default
    /// parameters).
    #[serde(with = "fault_by_name")]
    pub inject_fault: Option<Fault>,
    /// Headers written before `--initial-state` existed ran from zeroed
    /// state.
    #[serde(default = "zero_state")]
    pub initial_state: InitialState,
    /// `--steer`: the cases were made from coverage feedback (headers
    /// written before steering existed were not).
    #[serde(default)]
    pub steer: bool,
    /// `--observe`: the level the DUT was seen at (docs/dut-contract.md);
    /// headers written before the levels existed saw everything.
    #[serde(default = "full_observation")]
    pub observe: Observation,
    /// `--dut-manifest`: the DUT when it is not the repository's own RTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut_manifest: Option<String>,
    /// `--numerics`: whether the DUT's declared numerics profile applies.
    #[serde(default, skip_serializing_if = "NumericsMode::is_declared")]
    pub numerics: NumericsMode,
}

fn full_observation() -> Observation {
    Observation::Full
}

fn zero_state() -> InitialState {
    InitialState::Zero
}

impl RunIdentity {
    /// The first field in which `self` and `other` differ, with both
    /// values, as `` `field` is A here and B there ``.
    pub fn difference(&self, other: &RunIdentity) -> Option<String> {
        first_difference(self, other)
    }

    /// The flags that make this identity, defaults left out, with
    /// `--seed`/`--count` for the seeds `first ..= last`.
    fn flags_for(&self, first: u64, count: u64) -> Vec<String> {
        let mut f: Vec<String> = vec!["--seed".into(), first.to_string()];
        if count != 1 {
            f.extend(["--count".into(), count.to_string()]);
        }
        f.extend([
            "--instrs".into(),
            self.instrs.to_string(),
            "--config".into(),
            self.config.clone(),
        ]);
        let mut flag = |name: &str, value: Option<&str>| {
            f.push(format!("--{name}"));
            f.extend(value.map(str::to_string));
        };
        if self.io != IoMode::Ideal {
            flag("io", Some(self.io.name()));
        }
        if let Some(t) = self.timing {
            flag("timing", Some(t.name()));
        }
        if self.dut != DutKind::Rtl {
            flag("dut", Some(self.dut.name()));
        }
        if let Some(fault) = &self.inject_fault {
            flag("inject-fault", Some(fault.name()));
        }
        if self.initial_state != InitialState::Random {
            flag("initial-state", Some(self.initial_state.name()));
        }
        if self.steer {
            flag("steer", None);
        }
        if self.observe != Observation::Full {
            flag("observe", Some(self.observe.name()));
        }
        if let Some(m) = &self.dut_manifest {
            flag("dut-manifest", Some(m));
        }
        if !self.numerics.is_declared() {
            flag("numerics", Some("exact"));
        }
        f
    }

    /// The campaign's flags (`--seed` .. `--steer`), defaults left out.
    pub fn flags(&self) -> Vec<String> {
        self.flags_for(self.first_seed, self.count)
    }
}

/// The first field (by name) in which two identities' JSON differ, as
/// `` `field` is A here and B there ``: every field is compared, a new
/// one too, without a list to keep.
fn first_difference<T: Serialize>(a: &T, b: &T) -> Option<String> {
    let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (
        serde_json::to_value(a).expect("identities serialise"),
        serde_json::to_value(b).expect("identities serialise"),
    ) else {
        unreachable!("identities serialise as objects")
    };
    let show = |v: Option<&serde_json::Value>| match v {
        None | Some(serde_json::Value::Null) => "(none)".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    a.keys()
        .chain(b.keys().filter(|k| !a.contains_key(*k)))
        .find(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "`{k}` is {} here and {} there",
                show(a.get(k)),
                show(b.get(k))
            )
        })
}

/// `Option<Fault>` as the fault's name, as the CLI names it.
mod fault_by_name {
    use super::*;

    pub fn serialize<S: Serializer>(f: &Option<Fault>, s: S) -> Result<S::Ok, S::Error> {
        f.map(|f| f.name()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Fault>, D::Error> {
        let name: Option<String> = Option::deserialize(d)?;
        name.map(|n| {
            Fault::by_name(&n).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "`{n}` is not a fault of this build ({})",
                    Fault::names().join(", ")
                ))
            })
        })
        .transpose()
    }
}

impl Serialize for Shard {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shard, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Which mutants a mutation run chose (`mutate`'s selection flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MutantSelection {
    /// `--sample N --sample-seed S`.
    Sample { count: usize, seed: u64 },
    /// Every site (`--all`, `--sample 0`).
    All,
    /// `--ids FILE`.
    IdsFile(PathBuf),
    /// `--id ID`, repeated.
    Ids(Vec<String>),
    /// `--changed-since REF`.
    ChangedSince(String),
}

impl MutantSelection {
    /// The `mutate` flags that choose the same mutants.
    pub fn flags(&self) -> Vec<String> {
        match self {
            MutantSelection::Sample { count, seed } => vec![
                "--sample".into(),
                count.to_string(),
                "--sample-seed".into(),
                seed.to_string(),
            ],
            MutantSelection::All => vec!["--all".into()],
            MutantSelection::IdsFile(p) => vec!["--ids".into(), p.display().to_string()],
            MutantSelection::Ids(ids) => ids
                .iter()
                .flat_map(|id| ["--id".to_string(), id.clone()])
                .collect(),
            MutantSelection::ChangedSince(base) => vec!["--changed-since".into(), base.clone()],
        }
    }
}

/// The header's text: `sample N seed S`, `all`, `ids FILE`, `id A B`,
/// `changed-since REF` (the format of `mutate.json` since version 1).
impl fmt::Display for MutantSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MutantSelection::Sample { count, seed } => write!(f, "sample {count} seed {seed}"),
            MutantSelection::All => f.write_str("all"),
            MutantSelection::IdsFile(p) => write!(f, "ids {}", p.display()),
            MutantSelection::Ids(ids) => write!(f, "id {}", ids.join(" ")),
            MutantSelection::ChangedSince(base) => write!(f, "changed-since {base}"),
        }
    }
}

impl std::str::FromStr for MutantSelection {
    type Err = String;

    fn from_str(s: &str) -> Result<MutantSelection, String> {
        let words: Vec<&str> = s.split_whitespace().collect();
        Ok(match words[..] {
            ["all"] => MutantSelection::All,
            ["sample", n, "seed", seed] => MutantSelection::Sample {
                count: n
                    .parse()
                    .map_err(|e| format!("`{s}`: the sample size: {e}"))?,
                seed: seed.parse().map_err(|e| format!("`{s}`: the seed: {e}"))?,
            },
            ["ids", ..] => MutantSelection::IdsFile(PathBuf::from(&s["ids ".len()..])),
            ["id", ..] => MutantSelection::Ids(words[1..].iter().map(|w| w.to_string()).collect()),
            ["changed-since", base] => MutantSelection::ChangedSince(base.into()),
            _ => {
                return Err(format!(
                "`{s}` is not a selection of mutants (sample N seed S, all, ids FILE, id ID..., \
                     changed-since REF)"
            ))
            }
        })
    }
}

impl Serialize for MutantSelection {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MutantSelection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MutantSelection, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// What makes two mutation runs' records comparable (`mutate.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutationIdentity {
    pub config: String,
    pub seeds: u64,
    /// Steered programs per surviving mutant (0 in runs before they were).
    #[serde(default)]
    pub steered: u64,
    pub instrs: usize,
    pub budget_seconds: u64,
    pub selection: MutantSelection,
    /// The number of sites of hw/rtl when the run began.
    pub sites: usize,
    /// `--observe` (docs/dut-contract.md); runs before the levels saw
    /// everything.
    #[serde(default = "full_observation")]
    pub observe: Observation,
}

impl MutationIdentity {
    /// The first field in which `self` and `other` differ.
    pub fn difference(&self, other: &MutationIdentity) -> Option<String> {
        first_difference(self, other)
    }

    /// `mutate`'s flags for this run.
    pub fn flags(&self) -> Vec<String> {
        let mut f = self.selection.flags();
        f.extend([
            "--config".into(),
            self.config.clone(),
            "--seeds".into(),
            self.seeds.to_string(),
            "--steered".into(),
            self.steered.to_string(),
            "--instrs".into(),
            self.instrs.to_string(),
            "--budget".into(),
            self.budget_seconds.to_string(),
        ]);
        if self.observe != Observation::Full {
            f.extend(["--observe".into(), self.observe.name().into()]);
        }
        f
    }
}

/// A run, or part of one, that a printed command runs again.
#[derive(Clone, Copy, Debug)]
pub enum Rerun<'a> {
    /// One seed of a campaign, without a directory (the `reproduce:` line;
    /// a steered case needs the cases before it, so its command runs the
    /// shard's seeds from the first up to it).
    Seed {
        identity: &'a RunIdentity,
        shard: Option<Shard>,
        seed: u64,
        /// `--seed-timeout`, which a timeout must run under again.
        seed_timeout: Option<f64>,
    },
    /// A campaign's directory (a shard's, or the whole run's), resumed: it
    /// runs the seeds the directory lacks. A steered run cannot resume
    /// (its cases are made from the coverage of those before), so it is
    /// run again whole into the directory (docs/scale-out.md).
    Campaign {
        identity: &'a RunIdentity,
        shard: Option<Shard>,
        dir: &'a Path,
    },
    /// A mutation run's directory, resumed.
    Mutation {
        identity: &'a MutationIdentity,
        shard: Option<Shard>,
        dir: &'a Path,
    },
    /// One mutant of a mutation run, alone, without a directory (a
    /// survivor's reproduce command).
    Mutant {
        identity: &'a MutationIdentity,
        id: &'a str,
    },
    /// The tasks of a Slurm array whose shards fell short, each resuming
    /// its shard.
    SlurmTasks { script: &'a Path, tasks: &'a [u64] },
}

/// The shell command that runs `rerun`, its words quoted where needed.
pub fn command(rerun: &Rerun) -> String {
    let dir_flags = |shard: Option<Shard>, dir: &Path, resume: bool| {
        let mut f: Vec<String> = Vec::new();
        if let Some(s) = shard {
            f.extend(["--shard".into(), s.to_string()]);
        }
        f.extend(["--out".into(), dir.display().to_string()]);
        if resume {
            f.push("--resume".into());
        }
        f
    };
    let words: Vec<String> = match *rerun {
        Rerun::Seed {
            identity,
            shard,
            seed,
            seed_timeout,
        } => {
            let mut f = if identity.steer {
                let upto = seed - identity.first_seed + 1;
                let mut f = identity.flags_for(identity.first_seed, upto);
                if let Some(s) = shard {
                    f.extend(["--shard".into(), s.to_string()]);
                }
                f
            } else {
                identity.flags_for(seed, 1)
            };
            if let Some(limit) = seed_timeout {
                f.extend(["--seed-timeout".into(), limit.to_string()]);
            }
            f
        }
        Rerun::Campaign {
            identity,
            shard,
            dir,
        } => {
            let mut f = identity.flags();
            f.extend(dir_flags(shard, dir, !identity.steer));
            f
        }
        Rerun::Mutation {
            identity,
            shard,
            dir,
        } => {
            let mut f = vec!["mutate".to_string()];
            f.extend(identity.flags());
            f.extend(dir_flags(shard, dir, true));
            f
        }
        Rerun::Mutant { identity, id } => {
            let alone = MutationIdentity {
                selection: MutantSelection::Ids(vec![id.to_string()]),
                ..identity.clone()
            };
            let mut f = vec!["mutate".to_string()];
            f.extend(alone.flags());
            f
        }
        Rerun::SlurmTasks { script, tasks } => {
            let list: Vec<String> = tasks.iter().map(u64::to_string).collect();
            return format!(
                "sbatch --array={} {}",
                list.join(","),
                shell_word(&script.display().to_string())
            );
        }
    };
    let quoted: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    format!("pccx-cosim {}", quoted.join(" "))
}

/// `s` quoted for a POSIX shell when it needs to be.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn identity() -> RunIdentity {
        RunIdentity {
            config: "tiny".into(),
            first_seed: 1,
            count: 10,
            instrs: 40,
            io: IoMode::Ideal,
            timing: None,
            dut: DutKind::Rtl,
            inject_fault: None,
            initial_state: InitialState::Random,
            steer: false,
            observe: Observation::Full,
            dut_manifest: None,
            numerics: Default::default(),
        }
    }

    #[test]
    fn identities_name_the_first_field_that_differs() {
        let a = identity();
        assert_eq!(a.difference(&a.clone()), None);
        let b = RunIdentity {
            instrs: 400,
            ..a.clone()
        };
        assert_eq!(
            a.difference(&b).as_deref(),
            Some("`instrs` is 40 here and 400 there")
        );
        let c = RunIdentity {
            io: IoMode::Stall,
            timing: Some(TimingMode::Order),
            ..a.clone()
        };
        assert_eq!(
            a.difference(&c).as_deref(),
            Some("`io` is ideal here and stall there")
        );
        let d = RunIdentity {
            inject_fault: Fault::by_name("l2-data"),
            ..a.clone()
        };
        assert_eq!(
            a.difference(&d).as_deref(),
            Some("`inject_fault` is (none) here and l2-data there")
        );
    }

    #[test]
    fn the_header_format_is_the_one_of_version_1() {
        let mut a = identity();
        a.inject_fault = Fault::by_name("l2-data");
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["io"], "ideal");
        assert_eq!(json["dut"], "rtl");
        assert_eq!(json["timing"], serde_json::Value::Null);
        assert_eq!(json["inject_fault"], "l2-data");
        assert_eq!(json["initial_state"], "random");
        // An old header: no initial_state (zeroed), no steer.
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("initial_state");
        old.as_object_mut().unwrap().remove("steer");
        let back: RunIdentity = serde_json::from_value(old).unwrap();
        assert_eq!(back.initial_state, InitialState::Zero);
        let mut bad = json;
        bad["inject_fault"] = "l2-nothing".into();
        let e = serde_json::from_value::<RunIdentity>(bad).unwrap_err();
        assert!(e.to_string().contains("`l2-nothing` is not a fault"), "{e}");
    }

    #[test]
    fn selections_round_trip_through_the_header_text() {
        for s in [
            MutantSelection::Sample {
                count: 200,
                seed: 3,
            },
            MutantSelection::All,
            MutantSelection::IdsFile("hw/mutants/curated.txt".into()),
            MutantSelection::Ids(vec!["a.sv:1:2:x".into(), "b.sv:3:4:y".into()]),
            MutantSelection::ChangedSince("HEAD~2".into()),
        ] {
            assert_eq!(s.to_string().parse::<MutantSelection>(), Ok(s.clone()));
        }
        assert!("sample x".parse::<MutantSelection>().is_err());
    }

    #[test]
    fn commands_resume_directories_and_rerun_steered_runs_whole() {
        let id = identity();
        let dir = Path::new("out/my dir");
        let shard = Some(Shard { index: 1, count: 4 });
        assert_eq!(
            command(&Rerun::Campaign {
                identity: &id,
                shard,
                dir
            }),
            "pccx-cosim --seed 1 --count 10 --instrs 40 --config tiny --shard 1/4 --out 'out/my dir' --resume"
        );
        let steered = RunIdentity {
            steer: true,
            initial_state: InitialState::Zero,
            ..id.clone()
        };
        assert_eq!(
            command(&Rerun::Campaign {
                identity: &steered,
                shard: None,
                dir
            }),
            "pccx-cosim --seed 1 --count 10 --instrs 40 --config tiny --initial-state zero --steer --out 'out/my dir'"
        );
        assert_eq!(
            command(&Rerun::Seed {
                identity: &steered,
                shard,
                seed: 6,
                seed_timeout: None
            }),
            "pccx-cosim --seed 1 --count 6 --instrs 40 --config tiny --initial-state zero --steer --shard 1/4"
        );
        let stalled = RunIdentity {
            io: IoMode::Stall,
            timing: Some(TimingMode::Order),
            dut: DutKind::Golden,
            inject_fault: Fault::by_name("l2-data"),
            ..id.clone()
        };
        assert_eq!(
            command(&Rerun::Seed {
                identity: &stalled,
                shard: None,
                seed: 7,
                seed_timeout: Some(2.5)
            }),
            "pccx-cosim --seed 7 --instrs 40 --config tiny --io stall --timing order --dut golden --inject-fault l2-data --seed-timeout 2.5"
        );
        let m = MutationIdentity {
            config: "tiny".into(),
            seeds: 40,
            steered: 40,
            instrs: 40,
            budget_seconds: 120,
            selection: MutantSelection::Sample { count: 5, seed: 1 },
            sites: 1717,
            observe: Observation::Full,
        };
        assert_eq!(
            command(&Rerun::Mutation {
                identity: &m,
                shard: None,
                dir: Path::new("m")
            }),
            "pccx-cosim mutate --sample 5 --sample-seed 1 --config tiny --seeds 40 --steered 40 --instrs 40 --budget 120 --out m --resume"
        );
        assert_eq!(
            command(&Rerun::Mutant {
                identity: &m,
                id: "pccx_fifo.sv:3:4:operator-swap"
            }),
            "pccx-cosim mutate --id pccx_fifo.sv:3:4:operator-swap --config tiny --seeds 40 --steered 40 --instrs 40 --budget 120"
        );
        assert_eq!(
            command(&Rerun::SlurmTasks {
                script: Path::new("run/job.sh"),
                tasks: &[0, 3]
            }),
            "sbatch --array=0,3 run/job.sh"
        );
        assert_eq!(shell_word("my dir/it's"), "'my dir/it'\\''s'");
    }
}
