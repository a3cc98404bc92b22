//! `pccx-cosim mutate`: mutation testing of hw/rtl (a pool of mutant builds and campaigns), and the hidden `mutate-run` child.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::HwConfig;
#[cfg(not(feature = "rtl"))]
use crate::env::models;

use super::args::{config_values, observation_values, parse_u64};
use super::Failure;
use crate::tools::mutants::Builds;
use pccx_golden::model::Observation;

// The flags of `mutate` (its help is the doc comment of `Command::Mutate`).
// Read only by the RTL build's `mutate`.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
#[derive(Args)]
pub(super) struct MutateArgs {
    /// How many mutants to sample from all sites (0: every site).
    #[arg(long, default_value_t = 200)]
    sample: usize,
    /// Every site of hw/rtl (the same as `--sample 0`).
    #[arg(long, conflicts_with_all = ["ids", "sample", "id", "changed_since"])]
    all: bool,
    /// The sites on the lines of hw/rtl changed since the git revision REF
    /// (committed since, or edited and not committed; a file git does not
    /// track counts whole): the mutants of a change.
    #[arg(long, value_name = "REF", conflicts_with_all = ["ids", "sample", "id"])]
    changed_since: Option<String>,
    /// Run this one mutant (by its id, `file:line:column:class`); may be
    /// given more than once.
    #[arg(long, value_name = "ID", conflicts_with_all = ["ids", "sample"])]
    id: Vec<String>,
    /// How mutants are built: all in one mutant schema, each guarded by a
    /// run-time selector (sites it cannot guard are built alone), or each
    /// alone; `auto` takes the schema for more than 30 mutants.
    #[arg(long, value_enum, default_value_t = Builds::Auto)]
    builds: Builds,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1, value_parser = parse_u64)]
    sample_seed: u64,
    /// Run the mutants listed in FILE (one id per line) instead of a sample.
    #[arg(long, value_name = "FILE")]
    ids: Option<PathBuf>,
    /// Mutants known to be equivalent, with the reason (id # reason).
    #[arg(long, value_name = "FILE", default_value = "hw/mutants/equivalent.txt")]
    equivalent: PathBuf,
    /// Run each listed equivalent through N programs (a quarter steered,
    /// the rest random, every other one stalled) and the CVO sweep, and
    /// record what it survived in the evidence file (docs/mutation.md,
    /// "Evidence"); the issue asks N >= 2000.
    #[arg(long, value_name = "N", conflicts_with = "observe")]
    evidence: Option<u64>,
    /// How much of each mutant the checks see (docs/dut-contract.md):
    /// `black-box`, `retire` or `full`. Below `full` the RTL's assertions
    /// are off too: they are taps inside the design.
    #[arg(long, value_name = "LEVEL", default_value = "full", value_parser = observation_values())]
    observe: Observation,
    /// The equivalents' evidence file: a listed equivalent with a
    /// sufficient record for this RTL and configuration is not run again.
    #[arg(long, value_name = "FILE", default_value = "hw/mutants/evidence.json")]
    evidence_file: PathBuf,
    /// Seeds of the campaign per mutant (from 1).
    #[arg(long, default_value_t = 40)]
    seeds: u64,
    /// Steered programs run on a mutant the seeds leave alive, before the
    /// CVO sweep: made from the golden model's coverage (docs/mutation.md).
    #[arg(long, default_value_t = 40)]
    steered: u64,
    /// Instructions per program.
    #[arg(long, default_value_t = 40)]
    instrs: usize,
    /// Wall-clock budget per mutant campaign, in seconds.
    #[arg(long, default_value_t = 120)]
    budget: u64,
    #[arg(long, default_value = "tiny", value_parser = config_values())]
    config: HwConfig,
    /// Where mutants are built.
    #[arg(long, value_name = "DIR", default_value = "target/pccx-mutate")]
    work: PathBuf,
    /// Also write every mutant's result and the summary to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Mutants built and run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Mutants Verilator lints at once to find those it refuses alone (a
    /// refused batch is split until each refusal is one mutant's alone;
    /// docs/mutation.md); 1 lints each alone.
    #[arg(long, value_name = "N", default_value_t = crate::tools::mutants::DEFAULT_LINT_BATCH,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    lint_batch: usize,
    /// Print the mutants that would run, and stop.
    #[arg(long)]
    list: bool,
    /// Exit 1 unless every mutant not listed as equivalent is killed.
    #[arg(long)]
    require_all_killed: bool,
    /// The run's directory: `mutate.json` and `results.jsonl`, one record
    /// per mutant, each flushed as its mutant finishes (docs/scale-out.md).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write the run's HTML page to FILE: kill tables per class and per
    /// file, survivors with their reproduce commands, time to kill
    /// (docs/report.md).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Continue the run whose records `--out DIR` holds: run only the
    /// mutants it has no record of.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Take `--out DIR`'s lock even from a holder that cannot be told gone
    /// (one on another host outside Slurm): only when that writer is known
    /// to have stopped (docs/scale-out.md, "One writer per directory").
    #[arg(long, requires = "out")]
    break_lock: bool,
    /// Run shard I of N: the mutants at positions k of the list with
    /// `k mod N == I`.
    #[arg(long, value_name = "I/N")]
    shard: Option<crate::regress::campaign::Shard>,
}

// The flags of `mutate-combine`.
#[derive(Args)]
pub(super) struct MutateCombineArgs {
    /// Write the combined report to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the listed equivalents and their evidence per configuration
    /// to FILE as a Markdown table.
    #[arg(long, value_name = "FILE")]
    equivalents_md: Option<PathBuf>,
    /// The reports, one per configuration (`mutate --json FILE`).
    #[arg(required = true, num_args = 2.., value_name = "REPORT")]
    reports: Vec<PathBuf>,
}

pub(super) fn mutate_combine(a: &MutateCombineArgs) -> Result<ExitCode, Failure> {
    use crate::tools::mutants::MutateReport;
    use crate::tools::mutants_combined::combine;
    let mut reports = Vec::new();
    for path in &a.reports {
        let text = std::fs::read(path)
            .map_err(|e| Failure::Message(format!("cannot read {}: {e}", path.display())))?;
        let de = &mut serde_json::Deserializer::from_slice(&text);
        let report: MutateReport = serde_path_to_error::deserialize(de).map_err(|e| {
            Failure::Message(format!(
                "{}: not a mutation report (`mutate --json`): at {}: {}",
                path.display(),
                e.path(),
                e.inner()
            ))
        })?;
        reports.push(report);
    }
    let combined = combine(&reports).map_err(Failure::Message)?;
    say!("{}", combined.text());
    if let Some(file) = &a.json {
        let text = serde_json::to_string_pretty(&combined).expect("a report serializes");
        std::fs::write(file, text + "\n")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", file.display())))?;
    }
    if let Some(file) = &a.equivalents_md {
        std::fs::write(file, combined.equivalents_markdown())
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", file.display())))?;
    }
    Ok(ExitCode::from(u8::from(
        combined.mutants.iter().any(|m| m.survives()),
    )))
}

// The flags of the internal `mutate-run`.
// Read only by the RTL build's `mutate-run`.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
#[derive(Args)]
pub(super) struct MutateRunArgs {
    #[arg(long)]
    so: PathBuf,
    #[arg(long, value_parser = config_values())]
    config: HwConfig,
    #[arg(long)]
    seeds: u64,
    #[arg(long)]
    first_seed: u64,
    #[arg(long, default_value_t = 0)]
    steered: u64,
    #[arg(long)]
    instrs: usize,
    #[arg(long)]
    budget: u64,
    /// The mutant to select in the schema `--so` (absent: `--so` is one
    /// mutant built alone).
    #[arg(long)]
    selector: Option<u32>,
    #[arg(long, default_value = "full", value_parser = observation_values())]
    observe: Observation,
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
        steered,
        instrs,
        budget,
        selector,
        observe,
    } = args;
    let model = match selector {
        Some(k) => build::load_schema(&so, k),
        None => build::load(&so),
    }
    .map_err(Failure::Message)?;
    let options = MutateOptions {
        config,
        seeds,
        first_seed,
        steered,
        instrs,
        budget: std::time::Duration::from_secs(budget),
        work_dir: PathBuf::new(),
        root: PathBuf::new(),
        observe,
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
    use crate::regress::identity::MutantSelection;
    use crate::session::mutation::{self, MutationRequest};
    let selection = match (&a.ids, &a.changed_since) {
        (Some(file), _) => MutantSelection::IdsFile(file.clone()),
        (None, _) if !a.id.is_empty() => MutantSelection::Ids(a.id.clone()),
        (None, Some(base)) => MutantSelection::ChangedSince(base.clone()),
        (None, None) if a.sample == 0 || a.all => MutantSelection::All,
        (None, None) => MutantSelection::Sample {
            count: a.sample,
            seed: a.sample_seed,
        },
    };
    let request = MutationRequest {
        root: std::env::current_dir().map_err(|e| Failure::Message(e.to_string()))?,
        selection,
        config: a.config,
        seeds: a.seeds,
        steered: a.steered,
        instrs: a.instrs,
        budget_seconds: a.budget,
        builds: a.builds,
        equivalent: a.equivalent,
        evidence: a.evidence,
        evidence_file: a.evidence_file,
        observe: a.observe,
        work: a.work,
        jobs: a.jobs,
        lint_batch: a.lint_batch,
        list: a.list,
        require_all_killed: a.require_all_killed,
        shard: a.shard,
        out: a.out,
        resume: a.resume,
        break_lock: a.break_lock,
        json: a.json,
        report: a.report,
    };
    let end = mutation::run(&request).map_err(Failure::Message)?;
    Ok(ExitCode::from(end.exit_code()))
}
