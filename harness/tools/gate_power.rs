//! `pccx-cosim gate-power`: the RTL gate's own test binaries run against mutants through the schema's run-time selector; which the gate kills, by which test, how fast.
//!
//! One mutant schema per linked configuration serves every mutant (a site
//! the schema cannot guard is built alone). The gate's test binaries are
//! the ones `cargo test` builds; each runs with `PCCX_MODEL_OVERRIDE`
//! (`rtl::model_override`) naming the schema and the mutant, so every RTL
//! model a test opens (and every `pccx-cosim` a test starts) is the
//! mutant. First the schemata run the gate with no mutant selected: a
//! test that fails then (it needs tracing, which the schemata lack) is
//! left out of every mutant's run, and the report says which. Then each
//! mutant runs the binaries module by module (a unit: the tests of one
//! top-level module of one binary), fastest first, until one fails
//! (killed) or all pass (survived). docs/mutation.md, "The gate's power".

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::HwConfig;
use crate::rtl::model_override::{self, ModelOverride};
use crate::tools::mutate::build::{Builder, MUTANT_CONFIG, SCHEMA_CONFIG};
use crate::tools::mutate::lint::{self, LintBatches};
use crate::tools::mutate::{self, Mutant};

/// What to run.
#[derive(Clone, Debug)]
pub struct GateRequest {
    /// The repository root (`cargo test` runs there).
    pub root: PathBuf,
    /// The mutants, by id, each with where it was named (for errors).
    pub mutants: Vec<String>,
    /// The configurations whose models the mutant replaces.
    pub configs: Vec<HwConfig>,
    /// Where schemata and mutants are built and the runs' logs go.
    pub work: PathBuf,
    /// A binary that runs longer than this many times its time with no
    /// mutant selected (plus half a minute) is stopped: the mutant hangs
    /// the gate, which kills it.
    pub timeout_factor: u32,
}

/// One unit of the gate: the tests of one top-level module of a test binary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateBinary {
    /// The test target and module this unit runs (`gate::rtl_random`,
    /// `pccx_cosim::scoreboard` for a module of the library's own tests).
    pub name: String,
    pub path: PathBuf,
    /// The tests of the binary this unit runs, by exact name (every test of
    /// one top-level module); empty: the whole binary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// Its wall time with the schemata and no mutant selected.
    pub baseline_seconds: f64,
    /// Tests that fail with no mutant selected (they need what a schema
    /// lacks), left out of every mutant's run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// What the gate made of one mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum GateVerdict {
    /// A test failed.
    Killed {
        binary: String,
        /// The first test that failed (or the exit status, when the binary
        /// ended without naming one: a crash).
        test: String,
        /// From the start of the mutant's run to the end of that binary.
        seconds: f64,
    },
    /// A binary ran past its limit.
    Hung { binary: String, seconds: f64 },
    /// Every test passed.
    Survived { seconds: f64 },
    /// Verilator refuses the mutant alone (on this configuration).
    NotCompiling { config: String, message: String },
}

/// One mutant's record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateRecord {
    pub id: String,
    pub change: String,
    #[serde(flatten)]
    pub verdict: GateVerdict,
}

/// The whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateReport {
    pub configs: Vec<String>,
    pub binaries: Vec<GateBinary>,
    pub records: Vec<GateRecord>,
    pub summary: GateSummary,
}

/// The counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GateSummary {
    pub mutants: usize,
    pub killed: usize,
    pub hung: usize,
    pub survived: usize,
    pub not_compiling: usize,
    /// (killed + hung) / (mutants - not compiling), in percent.
    pub kill_rate: f64,
    /// The median time to kill, in seconds.
    pub median_kill_seconds: f64,
}

impl GateSummary {
    pub fn of(records: &[GateRecord]) -> GateSummary {
        let mut s = GateSummary {
            mutants: records.len(),
            ..Default::default()
        };
        let mut kill_times = Vec::new();
        for r in records {
            match &r.verdict {
                GateVerdict::Killed { seconds, .. } => {
                    s.killed += 1;
                    kill_times.push(*seconds);
                }
                GateVerdict::Hung { seconds, .. } => {
                    s.hung += 1;
                    kill_times.push(*seconds);
                }
                GateVerdict::Survived { .. } => s.survived += 1,
                GateVerdict::NotCompiling { .. } => s.not_compiling += 1,
            }
        }
        let judged = s.mutants - s.not_compiling;
        if judged > 0 {
            s.kill_rate = 100.0 * (s.killed + s.hung) as f64 / judged as f64;
        }
        kill_times.sort_by(f64::total_cmp);
        if !kill_times.is_empty() {
            s.median_kill_seconds = kill_times[kill_times.len() / 2];
        }
        s
    }

    pub fn text(&self) -> String {
        format!(
            "gate power: {} mutants, {} killed, {} hung the gate, {} survived, {} not compiling: \
             {:.1} % killed; median time to kill {:.1} s",
            self.mutants,
            self.killed,
            self.hung,
            self.survived,
            self.not_compiling,
            self.kill_rate,
            self.median_kill_seconds
        )
    }
}

/// The ids of the mutants a `mutate` report (`--json`) records as killed
/// and not listed as equivalent, in the report's order.
pub fn killed_in(report: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(report)
        .map_err(|e| format!("{}: cannot read: {e}", report.display()))?;
    let parsed: crate::tools::mutants::MutateReport =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
    Ok(parsed
        .mutants
        .iter()
        .filter(|m| {
            m.equivalent.is_none()
                && matches!(m.result, crate::tools::mutants::Verdict::Killed { .. })
        })
        .map(|m| m.id.clone())
        .collect())
}

/// `n` of `ids` drawn without replacement by `seed` (the draw `mutate
/// --sample` makes of sites), in their order.
pub fn sample_ids(ids: &[String], n: usize, seed: u64) -> Vec<String> {
    mutate::sample_indices(ids.len(), n, seed)
        .into_iter()
        .map(|i| ids[i].clone())
        .collect()
}

/// The gate's test binaries of this package, built by `cargo test
/// --no-run` in `root` (its progress on stderr).
pub fn gate_binaries(root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let out = Command::new("cargo")
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run `cargo test --no-run`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo test --no-run` in {} failed ({})",
            root.display(),
            out.status
        ));
    }
    let mut binaries = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_test = v["reason"] == "compiler-artifact" && v["profile"]["test"] == true;
        let ours = v["package_id"]
            .as_str()
            .is_some_and(|p| p.contains("#pccx-cosim@"));
        if let (true, true, Some(exe)) = (is_test, ours, v["executable"].as_str()) {
            let name = v["target"]["name"].as_str().unwrap_or("?").to_string();
            binaries.push((name, PathBuf::from(exe)));
        }
    }
    if binaries.is_empty() {
        return Err("`cargo test --no-run` named no test binary of pccx-cosim".into());
    }
    Ok(binaries)
}

/// The units of a test binary: its tests grouped by their top-level module
/// (`rtl_random::kv260_fixed_seeds` is in `rtl_random`), so that the gate's
/// one binary (tests/gate) is run module by module, fastest first, and a
/// mutant's run stops at the first module that fails, as it stopped at the
/// first failing binary when each area was a binary of its own.
fn units_of(target: &str, path: &Path, root: &Path) -> Result<Vec<(String, Vec<String>)>, String> {
    let out = Command::new(path)
        .args(["--list", "--format", "terse"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run {} --list: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} --list failed ({}): {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut units: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(test) = line.strip_suffix(": test") else {
            continue;
        };
        let module = test.split("::").next().unwrap_or(test);
        units
            .entry(format!("{target}::{module}"))
            .or_default()
            .push(test.to_string());
    }
    Ok(units.into_iter().collect())
}

/// How one binary's run ended.
struct BinaryRun {
    seconds: f64,
    /// The tests that failed, in the order reported.
    failed: Vec<String>,
    /// Exit status, `None` when stopped at its limit.
    code: Option<i32>,
}

/// Runs the tests `only` (exact names; all when empty) of a test binary
/// from `root` with `overrides`, leaving out `skip` (exact names), stopped
/// after `limit`; its output goes to `log`.
fn run_binary(
    root: &Path,
    path: &Path,
    only: &[String],
    overrides: &[ModelOverride],
    skip: &[String],
    limit: Duration,
    log: &Path,
) -> Result<BinaryRun, String> {
    use std::os::unix::process::CommandExt;
    let file =
        std::fs::File::create(log).map_err(|e| format!("{}: cannot create: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = Command::new(path);
    if !skip.is_empty() || !only.is_empty() {
        cmd.arg("--exact");
        for s in skip {
            cmd.args(["--skip", s]);
        }
        cmd.args(only);
    }
    let start = Instant::now();
    let mut child = cmd
        .current_dir(root)
        .env(model_override::ENV, model_override::render(overrides))
        .env("CARGO_MANIFEST_DIR", root)
        .stdout(file)
        .stderr(err)
        // Its own process group, so that a binary stopped at its limit
        // takes the pccx-cosim processes its tests started with it.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let code = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("{}: {e}", path.display()))?
        {
            break Some(status.code().unwrap_or(-1));
        }
        if start.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let failed = text
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| l.strip_suffix(" ... FAILED"))
        .map(str::to_string)
        .collect();
    Ok(BinaryRun {
        seconds: start.elapsed().as_secs_f64(),
        failed,
        code,
    })
}

/// Runs the gate against `request.mutants`; `say` hears progress, and each
/// record is appended to `journal` (JSON Lines) as it is made.
pub fn run(
    request: &GateRequest,
    journal: &Path,
    say: &dyn Fn(&str),
) -> Result<GateReport, String> {
    let root = &request.root;
    let sites = mutate::all_sites(root)?;
    let mut chosen: Vec<(u32, Mutant)> = Vec::new();
    for id in &request.mutants {
        let k = sites.iter().position(|m| &m.id() == id).ok_or_else(|| {
            format!(
                "mutant `{id}` is not a site of hw/rtl today (`pccx-cosim mutate --list --sample 0` lists them)"
            )
        })?;
        chosen.push((k as u32 + 1, sites[k].clone()));
    }
    say(&format!(
        "gate-power: {} mutants on {}",
        chosen.len(),
        request
            .configs
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let binaries = gate_binaries(root)?;
    // One schema (and builder, for the sites it cannot guard) per
    // configuration.
    let mut schemata = Vec::new();
    for config in &request.configs {
        let builder = Builder::new(root, &request.work.join(config.name), *config)?;
        let built = builder.schema(&sites, None, &|line| {
            say(&format!("{}: {line}", config.name))
        })?;
        say(&format!(
            "{}: schema {} ({})",
            config.name,
            built.so.display(),
            if built.cached { "cached" } else { "built" }
        ));
        schemata.push((config, builder, built));
    }
    // Verilator's verdict on each guarded mutant alone, per configuration,
    // found in batches as `mutate` finds it (tools::mutate::lint).
    let lints: Vec<LintBatches> = schemata
        .iter()
        .map(|(_, builder, built)| {
            let guarded: Vec<Mutant> = chosen
                .iter()
                .filter(|(k, _)| !built.schema.unguarded.contains_key(k))
                .map(|(_, m)| m.clone())
                .collect();
            LintBatches::new(builder, &guarded, lint::DEFAULT_BATCH)
        })
        .collect();
    let schema_overrides = |selector: u32| -> Vec<ModelOverride> {
        schemata
            .iter()
            .map(|(config, _, built)| ModelOverride {
                config: config.name.to_string(),
                so: built.so.clone(),
                name: SCHEMA_CONFIG.to_string(),
                selector: Some(selector),
            })
            .collect()
    };
    // The gate with no mutant selected: its times order the binaries, and
    // its failures are what a schema cannot run.
    let logs = request.work.join("gate-logs");
    std::fs::create_dir_all(&logs)
        .map_err(|e| format!("{}: cannot create: {e}", logs.display()))?;
    let generous = Duration::from_secs(1800);
    let mut gate: Vec<GateBinary> = Vec::new();
    let mut units = Vec::new();
    for (target, path) in &binaries {
        for (name, tests) in units_of(target, path, root)? {
            units.push((name, path, tests));
        }
    }
    for (name, path, tests) in &units {
        let log = logs.join(format!("baseline-{}.log", name.replace("::", "-")));
        let run = run_binary(root, path, tests, &schema_overrides(0), &[], generous, &log)?;
        if run.code != Some(0) && run.failed.is_empty() {
            return Err(format!(
                "the gate's `{name}` ended with {:?} and no failed test with no mutant selected; its output: {}",
                run.code,
                log.display()
            ));
        }
        if !run.failed.is_empty() {
            say(&format!(
                "{name}: left out, failing with no mutant selected: {} (log {})",
                run.failed.join(", "),
                log.display()
            ));
        }
        gate.push(GateBinary {
            name: name.clone(),
            path: (*path).clone(),
            tests: tests.clone(),
            baseline_seconds: run.seconds,
            left_out: run.failed,
        });
    }
    gate.sort_by(|a, b| a.baseline_seconds.total_cmp(&b.baseline_seconds));
    let total: f64 = gate.iter().map(|b| b.baseline_seconds).sum();
    say(&format!(
        "the gate with no mutant selected: {} units (a module of a test binary each), {total:.1} s",
        gate.len()
    ));
    let mut journal_file = std::fs::File::create(journal)
        .map_err(|e| format!("{}: cannot create: {e}", journal.display()))?;
    let mut records = Vec::new();
    for (n, (k, mutant)) in chosen.iter().enumerate() {
        let id = mutant.id();
        let verdict = judge(request, &gate, &schemata, &lints, *k, mutant, &logs)?;
        say(&format!(
            "[{}/{}] {id}: {}",
            n + 1,
            chosen.len(),
            verdict_text(&verdict)
        ));
        let record = GateRecord {
            id,
            change: mutant.describe(),
            verdict,
        };
        let line = serde_json::to_string(&record).expect("records serialise");
        writeln!(journal_file, "{line}")
            .and_then(|()| journal_file.flush())
            .map_err(|e| format!("{}: cannot write: {e}", journal.display()))?;
        records.push(record);
    }
    Ok(GateReport {
        configs: request.configs.iter().map(|c| c.name.to_string()).collect(),
        summary: GateSummary::of(&records),
        binaries: gate,
        records,
    })
}

/// One mutant through the gate.
fn judge(
    request: &GateRequest,
    gate: &[GateBinary],
    schemata: &[(&HwConfig, Builder, crate::tools::mutate::build::SchemaBuild)],
    lints: &[LintBatches],
    selector: u32,
    mutant: &Mutant,
    logs: &Path,
) -> Result<GateVerdict, String> {
    let mut overrides = Vec::new();
    for ((config, builder, built), lints) in schemata.iter().zip(lints) {
        // What Verilator says of the mutant alone decides "not compiling",
        // as in `mutate`.
        let alone = if built.schema.unguarded.contains_key(&selector) {
            builder.build(mutant).map(Some)
        } else {
            lints.verdict(mutant).0.map(|()| None)
        };
        match alone {
            Err((stage, message)) => {
                return Ok(GateVerdict::NotCompiling {
                    config: config.name.to_string(),
                    message: format!("{stage}: {}", first_lines(&message, 6)),
                })
            }
            Ok(Some(so)) => overrides.push(ModelOverride {
                config: config.name.to_string(),
                so,
                name: MUTANT_CONFIG.to_string(),
                selector: None,
            }),
            Ok(None) => overrides.push(ModelOverride {
                config: config.name.to_string(),
                so: built.so.clone(),
                name: SCHEMA_CONFIG.to_string(),
                selector: Some(selector),
            }),
        }
    }
    let start = Instant::now();
    for b in gate {
        let limit = Duration::from_secs_f64(
            b.baseline_seconds * f64::from(request.timeout_factor.max(1)) + 30.0,
        );
        let log = logs.join(format!("m{selector}-{}.log", b.name.replace("::", "-")));
        let run = run_binary(
            &request.root,
            &b.path,
            &b.tests,
            &overrides,
            &b.left_out,
            limit,
            &log,
        )?;
        let seconds = start.elapsed().as_secs_f64();
        match run.code {
            None => {
                return Ok(GateVerdict::Hung {
                    binary: b.name.clone(),
                    seconds,
                })
            }
            Some(0) => {
                let _ = std::fs::remove_file(&log);
            }
            Some(code) => {
                return Ok(GateVerdict::Killed {
                    binary: b.name.clone(),
                    test: run
                        .failed
                        .first()
                        .cloned()
                        .unwrap_or_else(|| format!("(exit status {code}, no test named)")),
                    seconds,
                })
            }
        }
    }
    Ok(GateVerdict::Survived {
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join("\n")
}

/// A verdict as a terminal line says it.
pub fn verdict_text(v: &GateVerdict) -> String {
    match v {
        GateVerdict::Killed {
            binary,
            test,
            seconds,
        } => format!("killed by {binary}::{test} after {seconds:.1} s"),
        GateVerdict::Hung { binary, seconds } => {
            format!("hung the gate in {binary} (stopped after {seconds:.1} s): killed")
        }
        GateVerdict::Survived { seconds } => format!("SURVIVED the whole gate ({seconds:.1} s)"),
        GateVerdict::NotCompiling { config, message } => format!(
            "not compiling on {config}: {}",
            message.lines().next().unwrap_or("")
        ),
    }
}

/// The kill table of a report, as Markdown: one row per binary that killed
/// something, with how many and the median time.
pub fn table(report: &GateReport) -> String {
    let mut by: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for r in &report.records {
        if let GateVerdict::Killed {
            binary, seconds, ..
        }
        | GateVerdict::Hung { binary, seconds } = &r.verdict
        {
            by.entry(binary.as_str()).or_default().push(*seconds);
        }
    }
    let mut out =
        String::from("| first to fail | mutants | median time to kill |\n|---|---|---|\n");
    let mut rows: Vec<(&str, Vec<f64>)> = by.into_iter().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1.len()));
    for (binary, mut times) in rows {
        times.sort_by(f64::total_cmp);
        out += &format!(
            "| `{binary}` | {} | {:.1} s |\n",
            times.len(),
            times[times.len() / 2]
        );
    }
    let survivors: BTreeSet<&str> = report
        .records
        .iter()
        .filter(|r| matches!(r.verdict, GateVerdict::Survived { .. }))
        .map(|r| r.id.as_str())
        .collect();
    if !survivors.is_empty() {
        out += &format!(
            "\nSurvived the gate: {}\n",
            survivors.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The units of this very binary (the library's unit tests): every
    /// test listed once, in the unit of its top-level module, and this test
    /// among them; an unknown binary is an error naming it.
    #[test]
    fn a_binary_splits_into_one_unit_per_top_level_module() {
        let exe = std::env::current_exe().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let units = units_of("pccx_cosim", &exe, root).unwrap();
        let this = "tools::gate_power::tests::a_binary_splits_into_one_unit_per_top_level_module";
        let tools = units
            .iter()
            .find(|(name, _)| name == "pccx_cosim::tools")
            .expect("a unit for the tools module");
        assert!(tools.1.iter().any(|t| t == this), "{:?}", tools.1);
        let mut all: Vec<&String> = units.iter().flat_map(|(_, tests)| tests).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a test in two units");
        assert!(units.len() > 5, "{units:?}");
        for (name, tests) in &units {
            let module = name.strip_prefix("pccx_cosim::").unwrap();
            assert!(tests.iter().all(|t| t.split("::").next() == Some(module)));
        }
        let missing = units_of("nothing", Path::new("/nonexistent/test-binary"), root);
        assert!(missing.unwrap_err().contains("/nonexistent/test-binary"));
    }

    fn record(id: &str, verdict: GateVerdict) -> GateRecord {
        GateRecord {
            id: id.into(),
            change: String::new(),
            verdict,
        }
    }

    #[test]
    fn the_summary_counts_hangs_as_kills_and_leaves_out_what_does_not_compile() {
        let records = vec![
            record(
                "a",
                GateVerdict::Killed {
                    binary: "fingerprints".into(),
                    test: "t".into(),
                    seconds: 1.0,
                },
            ),
            record(
                "b",
                GateVerdict::Hung {
                    binary: "timing".into(),
                    seconds: 9.0,
                },
            ),
            record("c", GateVerdict::Survived { seconds: 60.0 }),
            record(
                "d",
                GateVerdict::NotCompiling {
                    config: "tiny".into(),
                    message: "x".into(),
                },
            ),
        ];
        let s = GateSummary::of(&records);
        assert_eq!(
            (s.killed, s.hung, s.survived, s.not_compiling),
            (1, 1, 1, 1)
        );
        assert!((s.kill_rate - 200.0 / 3.0).abs() < 1e-9, "{}", s.kill_rate);
        assert_eq!(s.median_kill_seconds, 9.0);
        let report = GateReport {
            configs: vec![],
            binaries: vec![],
            records,
            summary: s,
        };
        let t = table(&report);
        assert!(t.contains("| `fingerprints` | 1 | 1.0 s |"), "{t}");
        assert!(t.contains("Survived the gate: c"), "{t}");
    }

    #[test]
    fn a_sample_is_the_same_for_the_same_seed_and_a_subset_in_order() {
        let ids: Vec<String> = (0..50).map(|i| format!("f.sv:{i}:1:x")).collect();
        let a = sample_ids(&ids, 10, 7);
        assert_eq!(a, sample_ids(&ids, 10, 7));
        assert_ne!(a, sample_ids(&ids, 10, 8));
        assert_eq!(a.len(), 10);
        let pos: Vec<usize> = a
            .iter()
            .map(|x| ids.iter().position(|y| y == x).unwrap())
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
    }
}
