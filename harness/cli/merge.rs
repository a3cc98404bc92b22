//! `pccx-cosim merge DIR...`: shard directories into one report, the seeds still missing, and the commands that run them.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::coverage::{Coverage, CoverageFile};
use crate::regress::campaign::Shard;
use crate::regress::junit;
use crate::regress::merge::{self, Merged};
use crate::tools::mutants;

use super::Failure;

#[derive(Args)]
pub(super) struct MergeArgs {
    /// The campaign directories (each a run's `--out DIR`), or a `slurm
    /// submit` directory (its shards).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Write the merged report as JSON (the schema of a campaign's --json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the merged report as JUnit XML.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Merge each directory's functional coverage (`DIR/coverage.json`, as
    /// a run with `--coverage DIR/coverage.json` writes) into FILE.
    #[arg(long, value_name = "FILE")]
    coverage: Option<PathBuf>,
    /// Write the merged run's HTML page to FILE: shards and their states,
    /// missing seeds and the commands that run them, failures, coverage
    /// (docs/report.md).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

/// `--report FILE`: the page of the directories merged.
fn write_report(args: &MergeArgs) -> Result<(), Failure> {
    if let Some(path) = &args.report {
        let inputs = crate::report::from_dirs(&args.dirs, &crate::report::Extra::default())
            .map_err(Failure::Message)?;
        crate::session::write_report(path, &inputs).map_err(Failure::Message)?;
    }
    Ok(())
}

/// The run directories `args` names: a `slurm submit` directory stands for
/// its shards (those that have written their header, as `report` takes it).
fn run_dirs(args: &MergeArgs) -> Result<Vec<PathBuf>, Failure> {
    let mut dirs = Vec::new();
    for dir in &args.dirs {
        match crate::report::submission_shards(dir).map_err(Failure::Message)? {
            Some((_, shards)) => dirs.extend(shards),
            None => dirs.push(dir.clone()),
        }
    }
    Ok(dirs)
}

pub(super) fn merge(args: &MergeArgs) -> Result<ExitCode, Failure> {
    let dirs = run_dirs(args)?;
    if dirs[0].join(mutants::MUTATE_FILE).exists() {
        return merge_mutation_run(args, &dirs);
    }
    let merged = merge::merge(&dirs).map_err(Failure::Message)?;
    print_merged(&merged);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&merged.file).expect("reports serialise");
        write(path, text + "\n")?;
    }
    if let Some(path) = &args.junit {
        write(path, junit::render(&merged.file))?;
    }
    if let Some(path) = &args.coverage {
        let parts = dirs
            .iter()
            .map(|dir| CoverageFile::read(&dir.join("coverage.json")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Failure::Message)?;
        // Cases are numbered by their place in the whole campaign in every
        // shard.
        if let Some(c) = Coverage::sum_concurrent(parts) {
            say!("{}", c.text());
            let text = serde_json::to_string_pretty(&c.to_json()).expect("coverage serialises");
            write(path, text + "\n")?;
        }
    }
    write_report(args)?;
    Ok(ExitCode::from(merged.exit_code()))
}

fn write(path: &std::path::Path, text: String) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))
}

fn print_merged(m: &Merged) {
    for d in &m.dirs {
        let shard = d.shard.map_or(String::new(), |s| format!("shard {s}, "));
        let ended = d
            .last_run
            .map_or("did not finish (killed, or still running)", |e| e.name());
        let missing = if d.missing.is_empty() {
            String::new()
        } else {
            format!(", {} seeds missing", d.missing.len())
        };
        say!(
            "{}: {shard}{} records, last run {ended}{missing}",
            d.dir.display(),
            d.records
        );
    }
    if m.duplicates > 0 {
        say!(
            "{} records repeat a seed (reruns) and were dropped",
            m.duplicates
        );
    }
    if !m.conflicting.is_empty() {
        say!(
            "warning: seeds with disagreeing verdicts in different records (nondeterminism?): {}",
            merge::ranges(&m.conflicting)
        );
    }
    say!("{}", m.file.summary.text());
    if let Some(text) = m.file.signature_text() {
        say!("{text}");
    }
    let missing = &m.file.missing_seeds;
    if missing.is_empty() {
        say!(
            "complete: every seed of {} has a record",
            merge::span_of(m.identity.first_seed, m.identity.count)
        );
    } else {
        say!(
            "incomplete: {} of {} seeds missing: {}",
            missing.len(),
            m.identity.count,
            merge::ranges(missing)
        );
        say!("to run exactly the missing seeds:");
        for d in m.dirs.iter().filter(|d| !d.missing.is_empty()) {
            say!("    {}", merge::rerun_command(&m.identity, d));
        }
        for (shard, seeds) in &m.absent_shards {
            say!(
                "    {}   (shard {shard}: no directory given, {} seeds)",
                merge::shard_command(&m.identity, *shard, std::path::Path::new("DIR")),
                seeds.len()
            );
        }
    }
}

/// `merge` of a mutation run's directories (they hold `mutate.json`).
fn merge_mutation_run(args: &MergeArgs, dirs: &[PathBuf]) -> Result<ExitCode, Failure> {
    if args.junit.is_some() || args.coverage.is_some() {
        return Err(Failure::Message(
            "--junit and --coverage are a campaign's; a mutation run merges into --json".into(),
        ));
    }
    let m = mutants::merge(dirs).map_err(Failure::Message)?;
    for d in &m.dirs {
        let shard = d.shard.map_or(String::new(), |s| format!("shard {s}, "));
        say!(
            "{}: {shard}{} records, {} mutants of its shard missing",
            d.dir.display(),
            d.records,
            d.missing.len()
        );
    }
    if m.duplicates > 0 {
        say!(
            "{} records repeat a mutant (reruns) and were dropped",
            m.duplicates
        );
    }
    if !m.conflicting.is_empty() {
        say!(
            "warning: mutants with disagreeing verdicts in different records: {}",
            m.conflicting.join(", ")
        );
    }
    say!("{}", m.report.text("hw/mutants/equivalent.txt"));
    if !m.report.missing.is_empty() {
        say!(
            "incomplete: {} of {} mutants have no record; to run exactly those:",
            m.report.missing.len(),
            m.header.mutants.len()
        );
        for d in m.dirs.iter().filter(|d| !d.missing.is_empty()) {
            say!("    {}", m.rerun_command(&d.dir, d.shard));
        }
        // Shards of the run with no directory given.
        let shards: Vec<Option<Shard>> = m.dirs.iter().map(|d| d.shard).collect();
        for shard in Shard::absent_from(&shards) {
            let c = m.rerun_command(std::path::Path::new("DIR"), Some(shard));
            say!("    {c}   (shard {shard}: no directory given)");
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&m.report).expect("reports serialise");
        write(path, text + "\n")?;
    }
    write_report(args)?;
    Ok(ExitCode::from(m.exit_code()))
}
