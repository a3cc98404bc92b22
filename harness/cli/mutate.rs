//! `pccx-cosim mutate`: mutation testing of hw/rtl (a pool of mutant builds and campaigns), and the hidden `mutate-run` child.

use clap::builder::PossibleValuesParser;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::config;
#[cfg(not(feature = "rtl"))]
use crate::env::models;

#[cfg(feature = "rtl")]
use super::args::hw_config;
use super::args::parse_u64;
use super::Failure;

// The flags of `mutate` (its help is the doc comment of `Command::Mutate`).
// Read only by the RTL build's `mutate`.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
#[derive(Args)]
pub(super) struct MutateArgs {
    /// How many mutants to sample from all sites (0: every site).
    #[arg(long, default_value_t = 200)]
    sample: usize,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1, value_parser = parse_u64)]
    sample_seed: u64,
    /// Run the mutants listed in FILE (one id per line) instead of a sample.
    #[arg(long, value_name = "FILE")]
    ids: Option<PathBuf>,
    /// Mutants known to be equivalent, with the reason (id # reason).
    #[arg(long, value_name = "FILE", default_value = "hw/mutants/equivalent.txt")]
    equivalent: PathBuf,
    /// Seeds of the campaign per mutant (from 1).
    #[arg(long, default_value_t = 40)]
    seeds: u64,
    /// Instructions per program.
    #[arg(long, default_value_t = 40)]
    instrs: usize,
    /// Wall-clock budget per mutant campaign, in seconds.
    #[arg(long, default_value_t = 120)]
    budget: u64,
    #[arg(long, default_value = "tiny", value_parser = PossibleValuesParser::new(config::names()))]
    config: String,
    /// Where mutants are built.
    #[arg(long, value_name = "DIR", default_value = "target/pccx-mutate")]
    work: PathBuf,
    /// Also write every mutant's result and the summary to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Mutants built and run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Print the mutants that would run, and stop.
    #[arg(long)]
    list: bool,
    /// Exit 1 unless every mutant not listed as equivalent is killed.
    #[arg(long)]
    require_all_killed: bool,
}

// The flags of the internal `mutate-run`.
// Read only by the RTL build's `mutate-run`.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
#[derive(Args)]
pub(super) struct MutateRunArgs {
    #[arg(long)]
    so: PathBuf,
    #[arg(long, value_parser = PossibleValuesParser::new(config::names()))]
    config: String,
    #[arg(long)]
    seeds: u64,
    #[arg(long)]
    first_seed: u64,
    #[arg(long)]
    instrs: usize,
    #[arg(long)]
    budget: u64,
}

#[cfg(not(feature = "rtl"))]
pub(super) fn mutate_run(_: MutateRunArgs) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("mutate")))
}

#[cfg(feature = "rtl")]
pub(super) fn mutate_run(args: MutateRunArgs) -> Result<ExitCode, Failure> {
    use crate::tools::mutate::{self, build, MutateOptions};
    let MutateRunArgs {
        so,
        config,
        seeds,
        first_seed,
        instrs,
        budget,
    } = args;
    let model = build::load(&so).map_err(Failure::Message)?;
    let options = MutateOptions {
        config: hw_config(&config),
        seeds,
        first_seed,
        instrs,
        budget: std::time::Duration::from_secs(budget),
        work_dir: PathBuf::new(),
        root: PathBuf::new(),
    };
    let verdict = mutate::campaign(&options, &model);
    say!("{}", mutate::verdict_json(&verdict));
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "rtl"))]
pub(super) fn mutate(_: MutateArgs) -> Result<ExitCode, Failure> {
    Err(Failure::Message(models::no_rtl_error("mutation testing")))
}

#[cfg(feature = "rtl")]
pub(super) fn mutate(a: MutateArgs) -> Result<ExitCode, Failure> {
    use crate::tools::mutate::{self, build::Builder, MutateOptions, Verdict};
    let root = std::env::current_dir().map_err(|e| Failure::Message(e.to_string()))?;
    if !root.join("hw/rtl/manifest.txt").exists() {
        return Err(Failure::Message(
            "run mutate from the repository root (no hw/rtl/manifest.txt here)".into(),
        ));
    }
    let sites = mutate::all_sites(&root).map_err(Failure::Message)?;
    let mut chosen = match &a.ids {
        Some(file) => {
            let ids = mutate::read_id_list(file).map_err(Failure::Message)?;
            let mut out = Vec::new();
            for id in ids.keys() {
                out.push(mutate::by_id(&sites, id).cloned().ok_or_else(|| {
                    Failure::Message(format!(
                        "{}: mutant `{id}` is not a site of hw/rtl any more (the line moved?)",
                        file.display()
                    ))
                })?);
            }
            out
        }
        None if a.sample == 0 => sites.clone(),
        None => mutate::sample(&sites, a.sample, a.sample_seed),
    };
    let equivalent = if a.equivalent.exists() {
        mutate::read_id_list(&a.equivalent).map_err(Failure::Message)?
    } else {
        Default::default()
    };
    say!(
        "mutate: {} sites in hw/rtl; running {} mutants on {} ({} seeds x {} instrs each, {} s budget)",
        sites.len(),
        chosen.len(),
        a.config,
        a.seeds,
        a.instrs,
        a.budget
    );
    if a.list {
        for m in &chosen {
            say!("{}  {}", m.id(), m.describe());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let options = MutateOptions {
        config: hw_config(&a.config),
        seeds: a.seeds,
        first_seed: 1,
        instrs: a.instrs,
        budget: std::time::Duration::from_secs(a.budget),
        work_dir: a.work.clone(),
        root: root.clone(),
    };
    let builder = Builder::new(&root, &a.work, options.config).map_err(Failure::Message)?;
    let exe = std::env::current_exe().map_err(|e| Failure::Message(e.to_string()))?;
    let total = chosen.len();
    let queue = std::sync::Mutex::new(std::mem::take(&mut chosen).into_iter().enumerate());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.max(1) {
            scope.spawn(|| loop {
                let next = queue.lock().unwrap().next();
                let Some((n, m)) = next else { break };
                let mut r = mutate::run_mutant(&options, &builder, &m, &exe);
                r.equivalent = equivalent.get(&m.id()).cloned();
                let extra = match &r.verdict {
                    Verdict::Killed {
                        seed, seconds, by, ..
                    } => {
                        format!("by {by} at seed {seed} after {seconds:.2} s")
                    }
                    Verdict::NotCompiling { stage, .. } => format!("({stage})"),
                    _ if r.equivalent.is_some() => "(listed as equivalent)".into(),
                    _ => String::new(),
                };
                say!(
                    "[{}/{total}] {:<13} {}  {extra}",
                    n + 1,
                    r.verdict.name(),
                    m.describe()
                );
                results.lock().unwrap().push((n, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(n, _)| *n);
    let results: Vec<_> = results.into_iter().map(|(_, r)| r).collect();
    let summary = mutate::summarize(&results);
    let survivors: Vec<_> = results
        .iter()
        .filter(|r| {
            r.equivalent.is_none()
                && matches!(
                    r.verdict,
                    Verdict::Survived { .. } | Verdict::TimedOut { .. }
                )
        })
        .collect();
    for class in mutate::MutantClass::ALL {
        let of: Vec<_> = results
            .iter()
            .filter(|r| r.mutant.class == class)
            .cloned()
            .collect();
        let s = mutate::summarize(&of);
        let rate = s
            .kill_rate
            .map_or("n/a".into(), |r| format!("{:.1}%", 100.0 * r));
        say!(
            "  {:<20} {:>4} mutants: {:>4} killed, {:>3} survived, {:>3} timed out, {:>3} not compiling, {:>3} equivalent; kill rate {rate}",
            class.name(),
            s.total,
            s.killed,
            s.survived,
            s.timed_out,
            s.not_compiling,
            s.equivalent
        );
    }
    if !survivors.is_empty() {
        say!(
            "survivors (examine each: an equivalent mutant goes into {} with its reason):",
            a.equivalent.display()
        );
        for r in &survivors {
            say!("  {}  {}", r.mutant.id(), r.mutant.describe());
        }
    }
    say!("{}", summary.text());
    if let Some(path) = &a.json {
        let doc = serde_json::json!({
            "config": a.config,
            "seeds": a.seeds,
            "instrs": a.instrs,
            "sites": sites.len(),
            "summary": mutate::summary_json(&summary),
            "mutants": results.iter().map(mutate::result_json).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap())
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    let all_killed = summary.killed + summary.equivalent + summary.not_compiling == summary.total
        && summary.not_compiling == 0;
    Ok(if a.require_all_killed && !all_killed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
