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
pub mod sites;

pub use super::mutants::{summarize, summary_json, MutantRecord, MutateSummary, Verdict};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::HwConfig;
use crate::env::models;
use crate::rtl::{HostTiming, RtlModel};
use crate::scoreboard::run_case;
use crate::stimulus::{cvo_sweep, GenOptions, Rng, TestCase};
pub use sites::{Mutant, MutantClass};

/// How mutants are run.
#[derive(Clone, Debug)]
pub struct MutateOptions {
    pub config: HwConfig,
    /// Seeds tried per mutant, from `first_seed`.
    pub seeds: u64,
    pub first_seed: u64,
    pub instrs: usize,
    /// Wall-clock budget of one mutant's campaign.
    pub budget: Duration,
    pub work_dir: PathBuf,
    /// The repository root (for hw/rtl and the shim).
    pub root: PathBuf,
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
    let manifest = std::fs::read_to_string(rtl.join("manifest.txt"))
        .map_err(|e| format!("cannot read hw/rtl/manifest.txt: {e}"))?;
    let mut out = Vec::new();
    for name in manifest
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
    {
        let text = std::fs::read_to_string(rtl.join(name))
            .map_err(|e| format!("cannot read hw/rtl/{name}: {e}"))?;
        out.extend(sites::sites(name, &text));
    }
    Ok(out)
}

/// `n` sites drawn without replacement by `seed`, the same for the same
/// sources.
pub fn sample(sites: &[Mutant], n: usize, seed: u64) -> Vec<Mutant> {
    let mut idx: Vec<usize> = (0..sites.len()).collect();
    let mut rng = Rng::new(seed);
    for i in (1..idx.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        idx.swap(i, j);
    }
    idx.truncate(n);
    idx.sort_unstable();
    idx.into_iter().map(|i| sites[i].clone()).collect()
}

/// Mutant ids listed in a file (`id` then optional `# reason`), for the
/// curated set and the equivalent list.
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
                instructions: 0,
                seconds: 0.0,
                by: format!("model error at reset: {e}"),
            }
        }
    };
    let mut reference = models::open_reference(&options.config);
    let mut instructions = 0u64;
    for (n, seed) in (options.first_seed..options.first_seed + options.seeds).enumerate() {
        if begin.elapsed() > options.budget {
            return Verdict::TimedOut {
                seeds: n as u64,
                seconds: begin.elapsed().as_secs_f64(),
            };
        }
        let gen = if seed % 2 == 0 { &stalled } else { &ideal };
        let case = TestCase::generate(seed, gen);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_case(&case, &mut *reference, &mut dut)
        }));
        let killed = |by: String, instructions: u64| Verdict::Killed {
            seed,
            instructions,
            seconds: begin.elapsed().as_secs_f64(),
            by,
        };
        match result {
            Ok(Ok(outcome)) => {
                instructions += u64::from(outcome.instructions);
                if let Some(m) = outcome.first_mismatch {
                    return killed(m.kind.name().to_string(), instructions);
                }
            }
            Ok(Err(e)) => {
                let by = match e {
                    pccx_golden::model::ModelError::Watchdog { .. } => "watchdog".to_string(),
                    other => format!("model error: {other}"),
                };
                return killed(by, instructions);
            }
            Err(_) => return killed("panic in the harness".into(), instructions),
        }
    }
    // The random seeds did not kill it: the CVO domain sweep, every BF16
    // input through every CVO function (a datapath mutant that moves one
    // last bit for a few inputs survives random programs).
    for case in cvo_sweep::cases(&ideal) {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_case(&case, &mut *reference, &mut dut)
        }));
        let killed = |by: String| Verdict::Killed {
            seed: 0,
            instructions: instructions + case.program.items.len() as u64,
            seconds: begin.elapsed().as_secs_f64(),
            by: format!("cvo-sweep {by}"),
        };
        match result {
            Ok(Ok(outcome)) => match outcome.first_mismatch {
                Some(m) => return killed(m.kind.name().to_string()),
                None => instructions += u64::from(outcome.instructions),
            },
            Ok(Err(e)) => return killed(format!("model error: {e}")),
            Err(_) => return killed("panic in the harness".into()),
        }
    }
    Verdict::Survived {
        seeds: options.seeds,
        instructions,
    }
}

/// Builds one mutant and runs its campaign in a child process
/// (`exe mutate-run`): a mutant can make the simulation abort (Verilator
/// stops the process when combinational logic does not settle) or crash,
/// and that must end this mutant, not the whole run. A child that dies
/// without a verdict has been caught: the simulation failed loudly, unless
/// SIGINT, SIGTERM or SIGKILL ended it (a person, Slurm, a test): then
/// there is no result (`None`), and a resumed run tries the mutant again.
pub fn run_mutant(
    options: &MutateOptions,
    builder: &build::Builder,
    mutant: &Mutant,
    exe: &Path,
) -> Option<MutantResult> {
    let begin = Instant::now();
    let built = builder.build(mutant);
    let build_seconds = begin.elapsed().as_secs_f64();
    let verdict = match built {
        Err((stage, message)) => Verdict::NotCompiling {
            stage: stage.into(),
            message,
        },
        Ok(so) => run_child(options, &so, exe)?,
    };
    Some(MutantResult {
        mutant: mutant.clone(),
        verdict,
        equivalent: None,
        build_seconds,
    })
}

fn run_child(options: &MutateOptions, so: &Path, exe: &Path) -> Option<Verdict> {
    let begin = Instant::now();
    let child = std::process::Command::new(exe)
        .arg("mutate-run")
        .arg("--so")
        .arg(so)
        .args(["--config", options.config.name])
        .args(["--seeds", &options.seeds.to_string()])
        .args(["--first-seed", &options.first_seed.to_string()])
        .args(["--instrs", &options.instrs.to_string()])
        .args(["--budget", &options.budget.as_secs().to_string()])
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
    // The child keeps its own budget; this is the backstop for a hang
    // outside the watchdog's reach.
    let hard_limit = options.budget + Duration::from_secs(60);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if begin.elapsed() > hard_limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(Verdict::TimedOut {
                    seeds: 0,
                    seconds: begin.elapsed().as_secs_f64(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break,
        }
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => {
            return Some(Verdict::NotCompiling {
                stage: "run".into(),
                message: e.to_string(),
            })
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(v) = stdout.lines().rev().find_map(parse_verdict) {
        return Some(v);
    }
    {
        use std::os::unix::process::ExitStatusExt;
        // SIGINT, SIGKILL, SIGTERM: sent from outside, not by the mutant.
        if matches!(out.status.signal(), Some(2 | 9 | 15)) {
            return None;
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_string();
    Some(Verdict::Killed {
        seed: options.first_seed,
        instructions: 0,
        seconds: begin.elapsed().as_secs_f64(),
        by: format!("simulation abort ({}: {why})", out.status),
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
        }
    }
}
