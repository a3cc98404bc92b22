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
#[cfg(feature = "rtl")]
use crate::regress::journal;
#[cfg(feature = "rtl")]
use crate::tools::mutants::{MutantRecord, MutateHeader, MutateReport, MUTATE_FILE, MUTATE_FORMAT};

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
    /// Run shard I of N: the mutants at positions k of the list with
    /// `k mod N == I`.
    #[arg(long, value_name = "I/N")]
    shard: Option<crate::regress::campaign::Shard>,
}

/// How the mutants of a run are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Builds {
    /// The schema for more than [`SCHEMA_FROM`] mutants, else each alone.
    Auto,
    /// One mutant schema for every site it can guard.
    Schema,
    /// Each mutant Verilated and compiled alone.
    Alone,
}

/// From this many mutants on, `--builds auto` takes the schema: its build
/// (a few minutes here, then cached) costs as much as about 30 mutants
/// built alone.
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
const SCHEMA_FROM: usize = 31;

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
    } = args;
    let model = match selector {
        Some(k) => build::load_schema(&so, k),
        None => build::load(&so),
    }
    .map_err(Failure::Message)?;
    let options = MutateOptions {
        config: hw_config(&config),
        seeds,
        first_seed,
        steered,
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
    // The mutants chosen, and how the run's header names the choice.
    let by_ids = |ids: &mut dyn Iterator<Item = &String>, unknown: &dyn Fn(&str) -> String| {
        ids.map(|id| {
            mutate::by_id(&sites, id)
                .cloned()
                .ok_or_else(|| Failure::Message(unknown(id)))
        })
        .collect::<Result<Vec<_>, Failure>>()
    };
    let (chosen, selection) = match &a.ids {
        None if !a.id.is_empty() => (
            by_ids(&mut a.id.iter(), &|id| {
                format!(
                    "--id: `{id}` is not a mutation site of hw/rtl (`mutate --list --sample 0` lists them)"
                )
            })?,
            format!("id {}", a.id.join(" ")),
        ),
        None if a.changed_since.is_some() => {
            let base = a.changed_since.as_deref().unwrap_or_default();
            let changed = mutate::changed_lines(&root, base).map_err(Failure::Message)?;
            let lines: usize = changed.values().map(|l| l.len()).sum();
            let chosen: Vec<mutate::Mutant> = sites
                .iter()
                .filter(|m| changed.get(&m.file).is_some_and(|l| l.contains(&m.line)))
                .cloned()
                .collect();
            say!(
                "mutate: {lines} lines of hw/rtl changed since {base} in {} files; {} mutation sites on them",
                changed.len(),
                chosen.len()
            );
            (chosen, format!("changed-since {base}"))
        }
        Some(file) => {
            let ids = mutate::read_id_list(file).map_err(Failure::Message)?;
            let chosen = by_ids(&mut ids.keys(), &|id| {
                format!(
                    "{}: mutant `{id}` is not a site of hw/rtl any more (the line moved?)",
                    file.display()
                )
            })?;
            (chosen, format!("ids {}", file.display()))
        }
        None if a.sample == 0 || a.all => (sites.clone(), "all".to_string()),
        None => (
            mutate::sample(&sites, a.sample, a.sample_seed),
            format!("sample {} seed {}", a.sample, a.sample_seed),
        ),
    };
    let equivalent = if a.equivalent.exists() {
        mutate::read_id_list(&a.equivalent).map_err(Failure::Message)?
    } else {
        Default::default()
    };
    say!(
        "mutate: {} sites in hw/rtl; running {} mutants{} on {} ({} seeds x {} instrs, {} steered programs each, {} s budget)",
        sites.len(),
        chosen.len(),
        a.shard.map_or(String::new(), |s| format!(
            ", shard {s} of them: {}",
            (0..chosen.len() as u64).filter(|&k| s.holds(k)).count()
        )),
        a.config,
        a.seeds,
        a.instrs,
        a.steered,
        a.budget
    );
    if a.list {
        for (k, m) in chosen.iter().enumerate() {
            if a.shard.is_none_or(|s| s.holds(k as u64)) {
                say!("{}  {}", m.id(), m.describe());
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut header = MutateHeader {
        format: MUTATE_FORMAT.into(),
        version: 1,
        config: a.config.clone(),
        seeds: a.seeds,
        steered: a.steered,
        instrs: a.instrs,
        budget_seconds: a.budget,
        selection,
        sites: sites.len(),
        mutants: chosen.iter().map(|m| m.id()).collect(),
        shard: a.shard.map(|s| s.to_string()),
        runs: Vec::new(),
    };
    // This shard's mutants, in the run's order.
    let shard_ids: Vec<String> = chosen
        .iter()
        .enumerate()
        .filter(|(k, _)| a.shard.is_none_or(|s| s.holds(*k as u64)))
        .map(|(_, m)| m.id())
        .collect();
    // Watched from before the directory is written, so that a signal
    // never finds the run half set up.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    super::run::watch_for_stop_signals(&stop)?;
    let (prior, journal) = match &a.out {
        Some(dir) => {
            let (prior, journal) = open_store(dir, &mut header, a.resume)?;
            (prior, Some(std::sync::Mutex::new(journal)))
        }
        None => (Vec::new(), None),
    };
    let done: std::collections::HashSet<&str> = prior.iter().map(|r| r.id.as_str()).collect();
    let to_run: Vec<mutate::Mutant> = chosen
        .iter()
        .filter(|m| shard_ids.contains(&m.id()) && !done.contains(m.id().as_str()))
        .cloned()
        .collect();
    if !prior.is_empty() {
        say!(
            "resuming: {} mutants recorded, {} to run",
            prior.len(),
            to_run.len()
        );
    }
    let options = MutateOptions {
        config: hw_config(&a.config),
        seeds: a.seeds,
        first_seed: 1,
        steered: a.steered,
        instrs: a.instrs,
        budget: std::time::Duration::from_secs(a.budget),
        work_dir: a.work.clone(),
        root: root.clone(),
    };
    let builder = Builder::new(&root, &a.work, options.config).map_err(Failure::Message)?;
    let exe = std::env::current_exe().map_err(|e| Failure::Message(e.to_string()))?;
    let use_schema = match a.builds {
        Builds::Schema => !to_run.is_empty(),
        Builds::Alone => false,
        Builds::Auto => to_run.len() >= SCHEMA_FROM,
    };
    let schema = if use_schema {
        let begin = std::time::Instant::now();
        let built = builder
            .schema(&sites, &|line| say!("{line}"))
            .map_err(Failure::Message)?;
        say!(
            "mutant schema: {} of {} sites guarded, {} built alone; {} in {:.0} s ({})",
            sites.len() - built.schema.unguarded.len(),
            sites.len(),
            built.schema.unguarded.len(),
            if built.cached {
                "found in the build cache"
            } else {
                "built"
            },
            begin.elapsed().as_secs_f64(),
            built.so.display()
        );
        Some(built)
    } else {
        None
    };
    let selector_of: std::collections::HashMap<String, u32> = sites
        .iter()
        .enumerate()
        .map(|(k, m)| (m.id(), mutate::schema::selector_of(k)))
        .collect();
    let started = std::time::Instant::now();
    let total = to_run.len();
    let queue = std::sync::Mutex::new(to_run.into_iter().enumerate());
    let results = std::sync::Mutex::new(Vec::new());
    let journal_error = std::sync::Mutex::new(None::<String>);
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.max(1) {
            scope.spawn(|| loop {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let next = queue.lock().unwrap().next();
                let Some((n, m)) = next else { break };
                // None: the child was stopped from outside; no result.
                let guarded = schema.as_ref().and_then(|b| {
                    let k = selector_of[&m.id()];
                    (!b.schema.unguarded.contains_key(&k)).then_some((b.so.as_path(), k))
                });
                let Some(mut r) = mutate::run_mutant(&options, &builder, &m, &exe, guarded) else {
                    continue;
                };
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
                let record = MutantRecord::of(&r);
                if let Some(journal) = &journal {
                    if let Err(e) = journal.lock().unwrap().append(&record) {
                        journal_error.lock().unwrap().get_or_insert(e);
                    }
                }
                say!(
                    "[{}/{total}] {:<13} {}  {extra}",
                    n + 1,
                    r.verdict.name(),
                    m.describe()
                );
                results.lock().unwrap().push(record);
            });
        }
    });
    let interrupted = stop.load(std::sync::atomic::Ordering::SeqCst);
    let new_records = results.into_inner().unwrap();
    let recorded_now = new_records.len() as u64;
    let mut records = prior;
    records.extend(new_records);
    // The equivalent list as it is now, also for records of earlier runs.
    for r in &mut records {
        r.equivalent = equivalent.get(&r.id).cloned();
    }
    let mut report = MutateReport::new(&header, records, &shard_ids);
    report.shard = header.shard.clone();
    report.interrupted = interrupted;
    say!("{}", report.text(&a.equivalent.display().to_string()));
    if let Some(dir) = &a.out {
        if let Some(journal) = &journal {
            journal.lock().unwrap().sync().map_err(Failure::Message)?;
        }
        if let Some(run) = header.runs.last_mut() {
            run.wall_seconds = Some(started.elapsed().as_secs_f64());
            run.seeds = Some(recorded_now);
            run.ended = Some(
                if interrupted {
                    "interrupted"
                } else {
                    "complete"
                }
                .into(),
            );
        }
        journal::write_header(dir, MUTATE_FILE, &header).map_err(Failure::Message)?;
    }
    if let Some(path) = &a.json {
        let mut doc = serde_json::to_value(&report).expect("reports serialise");
        doc["sites"] = sites.len().into();
        std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap() + "\n")
            .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &a.report {
        let inputs = crate::report::Inputs {
            mutation: Some(crate::report::MutationPart {
                report: report.clone(),
                header: Some(header.clone()),
                cluster: None,
            }),
            ..Default::default()
        };
        super::report::write(path, &inputs)?;
    }
    if let Some(e) = journal_error.into_inner().unwrap() {
        return Err(Failure::Message(format!(
            "the results could not all be recorded: {e}"
        )));
    }
    Ok(if interrupted {
        eprintln!(
            "pccx-cosim: mutate interrupted; the report holds the mutants that finished{}",
            a.out.as_ref().map_or(String::new(), |d| format!(
                "; `--resume --out {}` continues it",
                d.display()
            ))
        );
        ExitCode::from(super::run::EXIT_INTERRUPTED)
    } else if a.require_all_killed && !report.all_killed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Opens a mutation run's directory: with `resume`, its records (the run
/// must be the same); without, records there are moved aside. Returns the
/// records and the journal to append to; `header` gains this run.
#[cfg(feature = "rtl")]
fn open_store(
    dir: &std::path::Path,
    header: &mut MutateHeader,
    resume: bool,
) -> Result<(Vec<MutantRecord>, journal::Journal), Failure> {
    let message = Failure::Message;
    let (read, notes) = journal::read_for_run::<MutantRecord>(dir, resume).map_err(message)?;
    if resume {
        if let Some(old) =
            journal::read_header::<MutateHeader>(dir, MUTATE_FILE).map_err(message)?
        {
            journal::check_format(dir, MUTATE_FILE, &old.format, MUTATE_FORMAT, old.version, 1)
                .map_err(message)?;
            if let Some(d) = header.difference(&old) {
                return Err(Failure::Message(format!(
                    "--resume: this run is not the one in {}: {d}",
                    dir.join(MUTATE_FILE).display()
                )));
            }
            if old.shard != header.shard {
                return Err(Failure::Message(format!(
                    "--resume: {} is shard {} and this run shard {}",
                    dir.join(MUTATE_FILE).display(),
                    old.shard.as_deref().unwrap_or("(none)"),
                    header.shard.as_deref().unwrap_or("(none)")
                )));
            }
            header.runs = old.runs;
        }
    }
    for note in &notes {
        eprintln!("pccx-cosim: {note}");
    }
    let journal = journal::Journal::open(dir, read.whole_len).map_err(message)?;
    header.runs.push(journal::this_run());
    journal::write_header(dir, MUTATE_FILE, header).map_err(message)?;
    Ok((read.records, journal))
}
