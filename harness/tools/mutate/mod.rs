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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::config::HwConfig;
use crate::env::models;
use crate::rtl::{HostTiming, RtlModel};
use crate::scoreboard::run_case;
use crate::stimulus::{cvo_sweep, GenOptions, Rng, TestCase};
pub use sites::{Mutant, MutantClass};

/// What became of one mutant.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Killed {
        seed: u64,
        /// Instructions issued over all seeds up to and including the
        /// killing one.
        instructions: u64,
        seconds: f64,
        /// The check that caught it (or "watchdog", "model error").
        by: String,
    },
    Survived {
        seeds: u64,
        instructions: u64,
    },
    TimedOut {
        seeds: u64,
        seconds: f64,
    },
    NotCompiling {
        stage: &'static str,
        message: String,
    },
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
/// without a verdict has been caught: the simulation failed loudly.
pub fn run_mutant(
    options: &MutateOptions,
    builder: &build::Builder,
    mutant: &Mutant,
    exe: &Path,
) -> MutantResult {
    let begin = Instant::now();
    let built = builder.build(mutant);
    let build_seconds = begin.elapsed().as_secs_f64();
    let verdict = match built {
        Err((stage, message)) => Verdict::NotCompiling { stage, message },
        Ok(so) => run_child(options, &so, exe),
    };
    MutantResult {
        mutant: mutant.clone(),
        verdict,
        equivalent: None,
        build_seconds,
    }
}

fn run_child(options: &MutateOptions, so: &Path, exe: &Path) -> Verdict {
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
            return Verdict::NotCompiling {
                stage: "run",
                message: format!("cannot start {}: {e}", exe.display()),
            }
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
                return Verdict::TimedOut {
                    seeds: 0,
                    seconds: begin.elapsed().as_secs_f64(),
                };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break,
        }
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => {
            return Verdict::NotCompiling {
                stage: "run",
                message: e.to_string(),
            }
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(v) = stdout.lines().rev().find_map(parse_verdict) {
        return v;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_string();
    Verdict::Killed {
        seed: options.first_seed,
        instructions: 0,
        seconds: begin.elapsed().as_secs_f64(),
        by: format!("simulation abort ({}: {why})", out.status),
    }
}

/// The verdict line `mutate-run` prints, as [`verdict_json`] wrote it.
fn parse_verdict(line: &str) -> Option<Verdict> {
    let v: Value = serde_json::from_str(line).ok()?;
    let f = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let u = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(match v.get("verdict")?.as_str()? {
        "killed" => Verdict::Killed {
            seed: u("seed"),
            instructions: u("instructions"),
            seconds: f("seconds"),
            by: v.get("by")?.as_str()?.to_string(),
        },
        "survived" => Verdict::Survived {
            seeds: u("seeds"),
            instructions: u("instructions"),
        },
        "timed out" => Verdict::TimedOut {
            seeds: u("seeds"),
            seconds: f("seconds"),
        },
        _ => return None,
    })
}

/// One verdict as a JSON object (the child's output and the report's).
pub fn verdict_json(verdict: &Verdict) -> Value {
    match verdict {
        Verdict::Killed {
            seed,
            instructions,
            seconds,
            by,
        } => json!({"verdict": "killed", "seed": seed, "instructions": instructions,
                    "seconds": seconds, "by": by}),
        Verdict::Survived {
            seeds,
            instructions,
        } => json!({"verdict": "survived", "seeds": seeds, "instructions": instructions}),
        Verdict::TimedOut { seeds, seconds } => {
            json!({"verdict": "timed out", "seeds": seeds, "seconds": seconds})
        }
        Verdict::NotCompiling { stage, message } => {
            json!({"verdict": "not compiling", "stage": stage,
                   "message": message.lines().take(6).collect::<Vec<_>>().join("\n")})
        }
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

pub fn summarize(results: &[MutantResult]) -> MutateSummary {
    let mut s = MutateSummary {
        total: results.len(),
        ..MutateSummary::default()
    };
    let mut times = Vec::new();
    let mut instrs = Vec::new();
    for r in results {
        if r.equivalent.is_some() && !matches!(r.verdict, Verdict::Killed { .. }) {
            s.equivalent += 1;
            continue;
        }
        match &r.verdict {
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

pub fn result_json(r: &MutantResult) -> Value {
    json!({
        "id": r.mutant.id(),
        "class": r.mutant.class.name(),
        "change": r.mutant.describe(),
        "result": verdict_json(&r.verdict),
        "equivalent": r.equivalent,
        "build_seconds": r.build_seconds,
    })
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
