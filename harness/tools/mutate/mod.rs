//! `pccx-cosim mutate`: the kill rate of the harness on injected RTL bugs
//! (docs/mutation.md).
//!
//! Each mutant is one token of `hw/rtl` changed (see [`sites`]). It is
//! Verilated and compiled into a shared object of its own, loaded into this
//! process, and run against the golden model on seeded random programs
//! until the first mismatch (killed), the seed budget (survived) or the time
//! budget (timed out). A mutant Verilator or the C++ compiler rejects is
//! "not compiling". Survivors are examined by hand: those that cannot
//! change behaviour are listed in `hw/mutants/equivalent.txt` with the
//! reason, the others are holes in the generator or the checks.

pub mod build;
pub mod evidence;
pub mod lint;
pub mod schema;
pub mod sites;

pub use super::mutants::{
    summarize, summary_json, Battery, Evidence, EvidenceSource, MutantRecord, MutateSummary,
    Verdict,
};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::HwConfig;
use crate::env::models;
use crate::env::observed::Observed;
use crate::rtl::{HostTiming, RtlModel};
use crate::scoreboard::run_case;
use crate::stimulus::{cvo_sweep, directed, GenOptions, Rng, TestCase};
use crate::tools::mutants::{AssertionKill, ScoreboardKill};
use pccx_golden::model::Observation;
pub use sites::{Mutant, MutantClass};

/// The seed of the first steered program (far from the plain seeds, whose
/// programs the steered ones would otherwise repeat when they fall back on
/// the generator's own).
pub const STEERED_FIRST_SEED: u64 = 1 << 32;

/// How mutants are run.
#[derive(Clone, Debug)]
pub struct MutateOptions {
    pub config: HwConfig,
    /// Seeds tried per mutant, from `first_seed`.
    pub seeds: u64,
    pub first_seed: u64,
    /// Steered programs after the seeds (`Steer::golden_suite`).
    pub steered: u64,
    pub instrs: usize,
    /// Wall-clock budget of one mutant's campaign.
    pub budget: Duration,
    pub work_dir: PathBuf,
    /// The repository root (for hw/rtl and the shim).
    pub root: PathBuf,
    /// The level the mutant is seen at (docs/dut-contract.md); below
    /// `Full` its assertions are off.
    pub observe: Observation,
}

/// One mutant's result.
#[derive(Clone, Debug)]
pub struct MutantResult {
    pub mutant: Mutant,
    pub verdict: Verdict,
    /// The reason, when the mutant is listed as equivalent.
    pub equivalent: Option<String>,
    pub build_seconds: f64,
}

/// Every mutation site of the files in `hw/rtl/manifest.txt`.
pub fn all_sites(root: &Path) -> Result<Vec<Mutant>, String> {
    let rtl = root.join("hw/rtl");
    let mut out = Vec::new();
    for name in manifest_files(&rtl)? {
        let text = std::fs::read_to_string(rtl.join(&name))
            .map_err(|e| format!("cannot read hw/rtl/{name}: {e}"))?;
        out.extend(sites::sites(&name, &text));
    }
    Ok(out)
}

/// The source files `rtl/manifest.txt` lists, in compile order.
pub fn manifest_files(rtl: &Path) -> Result<Vec<String>, String> {
    let path = rtl.join("manifest.txt");
    let manifest = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(manifest
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// The lines of hw/rtl's files changed since the git revision `base`, by
/// file name: the lines of today's text that differ from `base`'s, in
/// commits since or in the working tree; a file git does not track counts
/// whole. Run in the repository at `root`.
pub fn changed_lines(root: &Path, base: &str) -> Result<BTreeMap<String, BTreeSet<usize>>, String> {
    let git = |args: &[&str]| -> Result<String, String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .map_err(|e| format!("--changed-since needs git, and it cannot be run: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{base}^{{commit}}"),
    ])
    .map_err(|e| {
        format!(
            "--changed-since: `{base}` is not a commit of the repository at {}{}",
            root.display(),
            if e.is_empty() {
                String::new()
            } else {
                format!(" ({e})")
            }
        )
    })?;
    let diff = git(&[
        "diff",
        "--unified=0",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        base,
        "--",
        "hw/rtl",
    ])
    .map_err(|e| format!("--changed-since {base}: git diff failed: {e}"))?;
    let mut out = parse_changed_lines(&diff)?;
    let untracked = git(&["ls-files", "--others", "--exclude-standard", "--", "hw/rtl"])
        .map_err(|e| format!("--changed-since {base}: git ls-files failed: {e}"))?;
    for path in untracked.lines() {
        let Some(name) = path.strip_prefix("hw/rtl/") else {
            continue;
        };
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
        out.insert(name.to_string(), (1..=text.lines().count()).collect());
    }
    Ok(out)
}

/// The new-side lines of each file's hunks in a `git diff --unified=0`.
pub fn parse_changed_lines(diff: &str) -> Result<BTreeMap<String, BTreeSet<usize>>, String> {
    let mut out: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut file: Option<String> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            file = path
                .strip_prefix("b/hw/rtl/")
                .map(|p| p.trim_end().to_string());
            continue;
        }
        let Some(hunk) = line.strip_prefix("@@ ") else {
            continue;
        };
        let Some(name) = &file else { continue };
        // `@@ -a[,b] +c[,d] @@`: lines c .. c + d of the new text.
        let new_side = hunk
            .split_whitespace()
            .find_map(|w| w.strip_prefix('+'))
            .ok_or_else(|| format!("git diff: a hunk header without a new side: `{line}`"))?;
        let (start, count) = match new_side.split_once(',') {
            Some((s, c)) => (s.parse::<usize>(), c.parse::<usize>()),
            None => (new_side.parse::<usize>(), Ok(1)),
        };
        let (Ok(start), Ok(count)) = (start, count) else {
            return Err(format!("git diff: cannot read the hunk header `{line}`"));
        };
        out.entry(name.clone())
            .or_default()
            .extend(start..start + count);
    }
    out.retain(|_, lines| !lines.is_empty());
    Ok(out)
}

/// `n` sites drawn without replacement by `seed`, the same for the same
/// sources.
pub fn sample(sites: &[Mutant], n: usize, seed: u64) -> Vec<Mutant> {
    sample_indices(sites.len(), n, seed)
        .into_iter()
        .map(|i| sites[i].clone())
        .collect()
}

/// `n` of the indices `0..len` drawn without replacement by `seed`, in
/// ascending order: the draw of [`sample`], for any list.
pub fn sample_indices(len: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..len).collect();
    let mut rng = Rng::new(seed);
    for i in (1..idx.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        idx.swap(i, j);
    }
    idx.truncate(n);
    idx.sort_unstable();
    idx
}

/// The mutant ids listed in a file: the first word of each entry of
/// [`read_id_list`] (an equivalent's `@config` and `exhaustive` tags left
/// out), so that any list of mutants, the equivalent list too, selects them.
pub fn read_ids(path: &Path) -> Result<Vec<String>, String> {
    Ok(read_id_list(path)?
        .into_keys()
        .filter_map(|entry| entry.split_whitespace().next().map(String::from))
        .collect())
}

/// The entries listed in a file (an entry, then an optional `# reason`),
/// for the curated set and the equivalent list.
pub fn read_id_list(path: &Path) -> Result<BTreeMap<String, String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (id, reason) = match line.split_once('#') {
            Some((id, r)) => (id.trim(), r.trim()),
            None => (line, ""),
        };
        out.insert(id.to_string(), reason.to_string());
    }
    Ok(out)
}

/// One entry of the equivalent list that holds on a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Equivalent {
    pub reason: String,
    /// Tagged `exhaustive`: it rests on the CVO sweep, which puts every
    /// input through the function the site lies in, not on a count of
    /// programs (docs/mutation.md, "Evidence").
    pub exhaustive: bool,
}

/// The entries of the equivalent list at `path` that hold on the
/// configuration `config`: each line is `id [@config,config...]
/// [exhaustive] # reason`; an entry scoped with `@` is equivalent only on
/// the configurations it names (a width that a parameter makes equal, say)
/// and runs as any other mutant elsewhere, an entry without one on every
/// configuration.
pub fn read_equivalents(path: &Path, config: &str) -> Result<BTreeMap<String, Equivalent>, String> {
    let mut out = BTreeMap::new();
    for (entry, reason) in read_id_list(path)? {
        let mut words = entry.split_whitespace();
        let id = words.next().unwrap_or_default().to_string();
        let mut holds = true;
        let mut exhaustive = false;
        let mut scoped = false;
        for word in words {
            match word {
                "exhaustive" if !exhaustive => exhaustive = true,
                s if s.starts_with('@') && s.len() > 1 && !scoped => {
                    scoped = true;
                    let names: Vec<&str> = s[1..].split(',').collect();
                    if let Some(bad) = names.iter().find(|n| crate::config::by_name(n).is_none())
                    {
                        return Err(format!(
                            "{}: `{entry}`: `{bad}` is not a configuration (hw/configs)",
                            path.display()
                        ));
                    }
                    holds = names.contains(&config);
                }
                _ => {
                    return Err(format!(
                        "{}: `{entry}`: after the id only `@config[,config...]` and `exhaustive` may stand",
                        path.display()
                    ))
                }
            }
        }
        if holds {
            out.insert(id, Equivalent { reason, exhaustive });
        }
    }
    Ok(out)
}

/// Finds the mutant with id `id` among `sites`.
pub fn by_id<'a>(sites: &'a [Mutant], id: &str) -> Option<&'a Mutant> {
    sites.iter().find(|m| m.id() == id)
}

/// Runs a campaign on the loaded mutant model until it is killed (this runs
/// in the child process `pccx-cosim mutate-run`).
pub fn campaign(options: &MutateOptions, model: &build::MutantModel) -> Verdict {
    // Every other seed runs under stall I/O (a host port that stalls and
    // weight streams that run dry): a mutant that takes a beat nobody
    // offered, or ignores a stall, is visible only then. The other seeds
    // keep ideal I/O, where timing is checked cycle for cycle.
    let ideal = GenOptions::for_config(&options.config, options.instrs);
    let stalled = GenOptions {
        stall_io: true,
        ..ideal.clone()
    };
    let begin = Instant::now();
    let mut dut = match RtlModel::open_with_ops(options.config, model.ops(), HostTiming::default())
    {
        Ok(d) => d,
        Err(e) => {
            return Verdict::Killed {
                seed: options.first_seed,
                programs: 1,
                instructions: 0,
                seconds: 0.0,
                by: format!("model error at reset: {e}"),
                mismatch: None,
                assertion: None,
            }
        }
    };
    // The assertions are taps inside the design: below `Full` they do not
    // count (docs/dut-contract.md).
    if options.observe < Observation::Full {
        dut.set_assertions(false);
    }
    let mut reference = models::open_reference(&options.config);
    let mut instructions = 0u64;
    let mut on = Cases {
        reference: &mut *reference,
        dut: &mut dut,
        level: options.observe,
        begin,
        budget: options.budget,
        instructions: &mut instructions,
    };
    let random = (options.first_seed..options.first_seed + options.seeds)
        .map(|seed| TestCase::generate(seed, if stalls(seed) { &stalled } else { &ideal }));
    if let Some(verdict) = on.run(random, 0, "") {
        return verdict;
    }
    // The random seeds did not kill it: steered programs, made from what
    // the golden model reaches (FIFOs full, hazards at an operand's edge,
    // every SHAPE reason...), which plain seeds reach seldom.
    let suite = if options.steered > 0 {
        match crate::regress::steer::Steer::golden_suite(
            &options.config,
            &ideal,
            STEERED_FIRST_SEED,
            options.steered,
        ) {
            Ok(s) => s,
            Err(e) => {
                return Verdict::Killed {
                    seed: 0,
                    programs: options.seeds,
                    instructions: *on.instructions,
                    seconds: begin.elapsed().as_secs_f64(),
                    by: format!("model error in the golden model: {e}"),
                    mismatch: None,
                    assertion: None,
                }
            }
        }
    } else {
        Vec::new()
    };
    if let Some(verdict) = on.run(&suite, options.seeds, "steered ") {
        return verdict;
    }
    let seeds_and_steered = options.seeds + suite.len() as u64;
    // The random seeds did not kill it: the CVO domain sweep, every BF16
    // input through every CVO function (a datapath mutant that moves one
    // last bit for a few inputs survives random programs).
    let sweep = cvo_sweep::cases(&ideal);
    let sweep_cases = sweep.len() as u64;
    for (n, case) in sweep.into_iter().enumerate() {
        match judge(&case, &mut *reference, &mut dut, options.observe) {
            Judged::Passed { instructions: n } => instructions += n,
            Judged::Killed {
                by,
                mismatch,
                assertion,
                ..
            } => {
                return Verdict::Killed {
                    seed: 0,
                    programs: seeds_and_steered + n as u64 + 1,
                    instructions: instructions + case.program.items.len() as u64,
                    seconds: begin.elapsed().as_secs_f64(),
                    by: format!("cvo-sweep {by}"),
                    mismatch,
                    assertion: assertion
                        .map(|a| without_assertions(&case, &mut *reference, &mut dut, a)),
                }
            }
        }
    }
    // Last, the directed cases: states no random or steered program
    // reaches (a findemax over signed zeros, a retire in every cycle
    // between two latches).
    let swept = seeds_and_steered + sweep_cases;
    let directed = match directed::cases(&options.config, &ideal) {
        Ok(cases) => cases,
        Err(e) => {
            return Verdict::Killed {
                seed: 0,
                programs: swept,
                instructions,
                seconds: begin.elapsed().as_secs_f64(),
                by: format!("model error in the golden model: {e}"),
                mismatch: None,
                assertion: None,
            }
        }
    };
    let directed_cases = directed.len() as u64;
    for (n, case) in directed.into_iter().enumerate() {
        match judge(&case, &mut *reference, &mut dut, options.observe) {
            Judged::Passed { instructions: n } => instructions += n,
            Judged::Killed {
                by,
                mismatch,
                assertion,
                ..
            } => {
                return Verdict::Killed {
                    seed: 0,
                    programs: swept + n as u64 + 1,
                    instructions: instructions + case.program.items.len() as u64,
                    seconds: begin.elapsed().as_secs_f64(),
                    by: format!("directed {by}"),
                    mismatch,
                    assertion: assertion
                        .map(|a| without_assertions(&case, &mut *reference, &mut dut, a)),
                }
            }
        }
    }
    let stalled = (options.first_seed..options.first_seed + options.seeds)
        .filter(|&seed| stalls(seed))
        .count() as u64;
    Verdict::Survived {
        seeds: options.seeds,
        instructions,
        battery: Battery {
            random: options.seeds - stalled,
            stalled,
            steered: suite.len() as u64,
            cvo_sweep: sweep_cases,
            directed: directed_cases,
        },
    }
}

/// Whether a mutant's random seed runs under stalled I/O (every other one).
fn stalls(seed: u64) -> bool {
    seed.is_multiple_of(2)
}

/// The mutant and its reference, for running cases one after another
/// under the mutant's wall-clock budget.
struct Cases<'a> {
    reference: &'a mut dyn pccx_golden::model::NpuModel,
    dut: &'a mut RtlModel,
    level: Observation,
    begin: Instant,
    budget: Duration,
    /// Instructions issued by the cases that passed, over all runs.
    instructions: &'a mut u64,
}

impl Cases<'_> {
    /// Runs `cases` in order, `done` programs having run before them: the
    /// verdict of the first that kills the mutant (its check's name after
    /// `label`), or a timeout once the budget is spent; `None` when every
    /// case passed.
    fn run<C: std::borrow::Borrow<TestCase>>(
        &mut self,
        cases: impl IntoIterator<Item = C>,
        done: u64,
        label: &str,
    ) -> Option<Verdict> {
        for (n, case) in cases.into_iter().enumerate() {
            let case = case.borrow();
            if self.begin.elapsed() > self.budget {
                return Some(Verdict::TimedOut {
                    seeds: done + n as u64,
                    seconds: self.begin.elapsed().as_secs_f64(),
                });
            }
            match judge(case, &mut *self.reference, &mut *self.dut, self.level) {
                Judged::Passed { instructions } => *self.instructions += instructions,
                Judged::Killed {
                    instructions,
                    by,
                    mismatch,
                    assertion,
                    ..
                } => {
                    let seconds = self.begin.elapsed().as_secs_f64();
                    return Some(Verdict::Killed {
                        seed: case.seed,
                        programs: done + n as u64 + 1,
                        instructions: *self.instructions + instructions,
                        seconds,
                        by: format!("{label}{by}"),
                        mismatch,
                        assertion: assertion.map(|a| {
                            without_assertions(case, &mut *self.reference, &mut *self.dut, a)
                        }),
                    });
                }
            }
        }
        None
    }
}

/// How one case ended on a mutant.
enum Judged {
    /// Every check passed: the instructions it issued.
    Passed { instructions: u64 },
    /// A check, the watchdog, a model error or a panic caught it: the
    /// instructions issued up to the mismatch (0 for the others), the
    /// check's name, the first mismatch.
    Killed {
        instructions: u64,
        by: String,
        mismatch: Option<Box<crate::scoreboard::MismatchRecord>>,
        /// The cycle the DUT was caught at: the mismatch's, else the
        /// program's last.
        cycle: Option<u64>,
        /// The assertion that caught it, its cycle and the others failing
        /// at the same edge, when one did.
        assertion: Option<(&'static str, u64, Vec<String>)>,
    },
}

/// The kill of `case` by `assertion` (its name and cycle), with what the
/// scoreboard alone sees of the same program: the case run again on `dut`
/// with the RTL's assertions off.
fn without_assertions(
    case: &TestCase,
    reference: &mut dyn pccx_golden::model::NpuModel,
    dut: &mut RtlModel,
    (name, cycle, also): (&'static str, u64, Vec<String>),
) -> AssertionKill {
    dut.set_assertions(false);
    let again = judge(case, reference, dut, Observation::Full);
    dut.set_assertions(true);
    AssertionKill {
        name: name.to_string(),
        cycle,
        also,
        scoreboard: match again {
            Judged::Passed { .. } => None,
            Judged::Killed { by, cycle, .. } => Some(ScoreboardKill { by, cycle }),
        },
    }
}

/// Runs `case` on the mutant `dut` against `reference`, every check of
/// the level `dut` is seen at (`MutateOptions::observe`) on.
fn judge(
    case: &TestCase,
    reference: &mut dyn pccx_golden::model::NpuModel,
    dut: &mut RtlModel,
    level: Observation,
) -> Judged {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if level == Observation::Full {
            run_case(case, reference, dut)
        } else {
            run_case(case, reference, &mut Observed::new(dut, level))
        }
    }));
    let killed = |by: String| Judged::Killed {
        instructions: 0,
        by,
        mismatch: None,
        cycle: None,
        assertion: None,
    };
    match result {
        Ok(Ok(outcome)) => match outcome.first_mismatch {
            Some(m) => Judged::Killed {
                instructions: u64::from(outcome.instructions),
                by: m.kind.name().to_string(),
                cycle: m.cycle.or(outcome.cycles),
                assertion: match &m.difference {
                    crate::scoreboard::Difference::Assertion { name, also, .. } => {
                        Some((*name, m.cycle.unwrap_or(0), also.clone()))
                    }
                    _ => None,
                },
                mismatch: Some(Box::new(m.record())),
            },
            None => Judged::Passed {
                instructions: u64::from(outcome.instructions),
            },
        },
        Ok(Err(pccx_golden::model::ModelError::Watchdog { .. })) => killed("watchdog".into()),
        Ok(Err(other)) => killed(format!("model error: {other}")),
        Err(_) => killed("panic in the harness".into()),
    }
}

/// Builds one mutant and runs its campaign in a child process
/// (`exe mutate-run`): a mutant can make the simulation abort (Verilator
/// stops the process when combinational logic does not settle) or crash,
/// and that must end this mutant, not the whole run. A child that dies
/// without a verdict has been caught: the simulation failed loudly, unless
/// SIGINT, SIGTERM or SIGKILL ended it (a person, Slurm, a test): then
/// there is no result (`None`), and a resumed run tries the mutant again.
///
/// With `schema` (the schema's shared object and the mutant's selector in
/// it), the mutant is not built: Verilator's verdict on it alone comes from
/// `lints` (a mutant it refuses is not compiling, as when built alone) and
/// the child runs the schema with the mutant selected. `build_seconds` is
/// then the lint time this call spent (a batch's, or none).
pub fn run_mutant(
    options: &MutateOptions,
    builder: &build::Builder,
    mutant: &Mutant,
    exe: &Path,
    schema: Option<(&Path, u32, &lint::LintBatches)>,
) -> Option<MutantResult> {
    let begin = Instant::now();
    let (built, build_seconds) = match schema {
        Some((so, selector, lints)) => {
            let (verdict, seconds) = lints.verdict(mutant);
            (
                verdict.map(|()| (so.to_path_buf(), Some(selector))),
                seconds,
            )
        }
        None => {
            let built = builder.build(mutant).map(|so| (so, None));
            (built, begin.elapsed().as_secs_f64())
        }
    };
    let verdict = match built {
        Err((stage, message)) => Verdict::NotCompiling {
            stage: stage.into(),
            message,
        },
        Ok((so, selector)) => run_child(options, &so, exe, selector)?,
    };
    Some(MutantResult {
        mutant: mutant.clone(),
        verdict,
        equivalent: None,
        build_seconds,
    })
}

fn run_child(
    options: &MutateOptions,
    so: &Path,
    exe: &Path,
    selector: Option<u32>,
) -> Option<Verdict> {
    let begin = Instant::now();
    let mut command = std::process::Command::new(exe);
    command.arg("mutate-run");
    if let Some(k) = selector {
        command.args(["--selector", &k.to_string()]);
    }
    let child = command
        .arg("--so")
        .arg(so)
        .args(["--config", options.config.name])
        .args(["--seeds", &options.seeds.to_string()])
        .args(["--first-seed", &options.first_seed.to_string()])
        .args(["--steered", &options.steered.to_string()])
        .args(["--instrs", &options.instrs.to_string()])
        .args(["--budget", &options.budget.as_secs().to_string()])
        .args(["--observe", options.observe.name()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Some(Verdict::NotCompiling {
                stage: "run".into(),
                message: format!("cannot start {}: {e}", exe.display()),
            })
        }
    };
    // Both pipes are drained while the child runs: a verdict longer than a
    // pipe's buffer (a mismatch listing many retires) would otherwise block
    // the child in its last write until the hard limit below, a kill
    // recorded as a time-out (pccx_fifo.sv:43:65 at the retire level did).
    let stdout_reader = drain(child.stdout.take());
    let stderr_reader = drain(child.stderr.take());
    // The child keeps its own budget; this is the backstop for a hang
    // outside the watchdog's reach.
    let hard_limit = options.budget + Duration::from_secs(60);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if begin.elapsed() > hard_limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(Verdict::TimedOut {
                    seeds: 0,
                    seconds: begin.elapsed().as_secs_f64(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                return Some(Verdict::NotCompiling {
                    stage: "run".into(),
                    message: e.to_string(),
                })
            }
        }
    };
    let out_stdout = stdout_reader.join().unwrap_or_default();
    let out_stderr = stderr_reader.join().unwrap_or_default();
    let stdout = String::from_utf8_lossy(&out_stdout);
    if let Some(v) = stdout.lines().rev().find_map(parse_verdict) {
        return Some(v);
    }
    {
        use std::os::unix::process::ExitStatusExt;
        // SIGINT, SIGKILL, SIGTERM: sent from outside, not by the mutant.
        if matches!(status.signal(), Some(2 | 9 | 15)) {
            return None;
        }
    }
    let stderr = String::from_utf8_lossy(&out_stderr);
    let why = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_string();
    Some(Verdict::Killed {
        seed: options.first_seed,
        programs: 1,
        instructions: 0,
        seconds: begin.elapsed().as_secs_f64(),
        by: format!("simulation abort ({status}: {why})"),
        mismatch: None,
        assertion: None,
    })
}

/// Reads a child's pipe to its end on a thread of its own.
fn drain<R: std::io::Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// The verdict line `mutate-run` prints, as [`verdict_json`] wrote it.
fn parse_verdict(line: &str) -> Option<Verdict> {
    serde_json::from_str(line).ok()
}

/// One verdict as a JSON object (the child's output and the report's); a
/// compiler's message is cut to its first six lines.
pub fn verdict_json(verdict: &Verdict) -> Value {
    serde_json::to_value(verdict.shortened()).expect("verdicts serialise")
}

pub fn result_json(r: &MutantResult) -> Value {
    serde_json::to_value(MutantRecord::of(r)).expect("records serialise")
}

impl MutantRecord {
    pub fn of(r: &MutantResult) -> MutantRecord {
        MutantRecord {
            id: r.mutant.id(),
            class: r.mutant.class.name().into(),
            change: r.mutant.describe(),
            result: r.verdict.shortened(),
            equivalent: r.equivalent.clone(),
            build_seconds: r.build_seconds,
            evidence: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_longer_than_a_pipe_s_buffer_is_read_not_timed_out() {
        // A stand-in for `mutate-run` that prints a 200 kB verdict: with
        // the pipes read only after the child's exit it blocked in that
        // write until the hard limit, and the kill became a time-out.
        let dir = std::env::temp_dir().join(format!("pccx-long-verdict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("mutate-run.sh");
        std::fs::write(
            &exe,
            "#!/bin/sh\nprintf '{\"verdict\":\"killed\",\"seed\":3,\"programs\":1,\
             \"instructions\":9,\"seconds\":0.5,\"by\":\"%s\"}\\n' \
             \"$(head -c 200000 /dev/zero | tr '\\0' x)\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let options = MutateOptions {
            config: crate::config::by_name("tiny").unwrap(),
            seeds: 1,
            first_seed: 3,
            steered: 0,
            instrs: 9,
            budget: Duration::from_secs(1),
            work_dir: dir.clone(),
            root: dir.clone(),
            observe: Observation::Full,
        };
        let begin = Instant::now();
        let verdict = run_child(&options, &dir.join("none.so"), &exe, None).unwrap();
        match verdict {
            Verdict::Killed { seed, by, .. } => {
                assert_eq!(seed, 3);
                assert_eq!(by.len(), 200_000);
            }
            other => panic!("{other:?} after {:?}", begin.elapsed()),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_diff_gives_the_new_lines_of_each_hunk() {
        let diff = "diff --git a/hw/rtl/a.sv b/hw/rtl/a.sv\n--- a/hw/rtl/a.sv\n+++ b/hw/rtl/a.sv\n\
                    @@ -3 +3 @@ x\n-old\n+new\n@@ -10,0 +11,2 @@\n+one\n+two\n@@ -20,2 +22,0 @@\n-gone\n-gone\n\
                    diff --git a/hw/rtl/b.sv b/hw/rtl/b.sv\n--- a/hw/rtl/b.sv\n+++ /dev/null\n@@ -1,3 +0,0 @@\n";
        let lines = parse_changed_lines(diff).unwrap();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines["a.sv"], BTreeSet::from([3, 11, 12]));
        assert!(parse_changed_lines("+++ b/hw/rtl/a.sv\n@@ -1 +x @@\n").is_err());
    }

    #[test]
    fn an_equivalent_scoped_to_configurations_holds_only_there() {
        let dir = std::env::temp_dir().join(format!("pccx-equivalents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let list = dir.join("equivalent.txt");
        std::fs::write(
            &list,
            "# comment\na.sv:1:1:operator-swap # everywhere\n\
             a.sv:2:1:operator-swap @tiny # widths equal on tiny\n\
             a.sv:3:1:operator-swap @tiny,small # and small\n",
        )
        .unwrap();
        let on = |config: &str| -> Vec<String> {
            read_equivalents(&list, config)
                .unwrap()
                .into_keys()
                .collect()
        };
        assert_eq!(on("tiny").len(), 3);
        assert_eq!(
            on("small"),
            ["a.sv:1:1:operator-swap", "a.sv:3:1:operator-swap"]
        );
        assert_eq!(on("kv260"), ["a.sv:1:1:operator-swap"]);
        std::fs::write(&list, "a.sv:2:1:operator-swap @huge # no such\n").unwrap();
        assert!(read_equivalents(&list, "tiny")
            .unwrap_err()
            .contains("`huge`"));
        std::fs::write(&list, "a.sv:2:1:operator-swap tiny # no @\n").unwrap();
        assert!(read_equivalents(&list, "tiny").is_err());
        std::fs::write(
            &list,
            "a.sv:1:1:operator-swap exhaustive # swept\n\
             a.sv:2:1:operator-swap @small exhaustive # swept there\n\
             a.sv:3:1:operator-swap # programs\n",
        )
        .unwrap();
        let tiny = read_equivalents(&list, "tiny").unwrap();
        assert!(tiny["a.sv:1:1:operator-swap"].exhaustive);
        assert!(!tiny["a.sv:3:1:operator-swap"].exhaustive);
        assert!(!tiny.contains_key("a.sv:2:1:operator-swap"));
        assert!(read_equivalents(&list, "small").unwrap()["a.sv:2:1:operator-swap"].exhaustive);
        std::fs::write(
            &list,
            "a.sv:1:1:operator-swap exhaustive exhaustive # twice\n",
        )
        .unwrap();
        assert!(read_equivalents(&list, "tiny").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
