//! A mutation run from its request to its outcome: the mutants chosen, their builds, a pool of workers each running one mutant's campaign in a child process, the journal, the report files and the exit decision.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{EXIT_FAILED, EXIT_INTERRUPTED};
use crate::config::HwConfig;
use crate::regress::campaign::Shard;
use crate::regress::identity::{self, MutantSelection, MutationIdentity, Rerun, RunEnded};
use crate::regress::store::RunStore;
use crate::tools::mutants::{
    Builds, MutantRecord, MutateHeader, MutateReport, MUTATE_FORMAT, SCHEMA_FROM,
};
use crate::tools::mutate::evidence::EvidenceFile;
use crate::tools::mutate::{
    self, build::Builder, lint::LintBatches, Evidence, EvidenceSource, MutateOptions, Verdict,
};
use pccx_golden::model::Observation;

/// Everything a mutation run is asked to do, typed.
#[derive(Clone, Debug)]
pub struct MutationRequest {
    /// The repository (its hw/rtl is mutated).
    pub root: PathBuf,
    pub selection: MutantSelection,
    pub config: HwConfig,
    /// Seeds of the campaign per mutant (from 1).
    pub seeds: u64,
    /// Steered programs per mutant the seeds leave alive.
    pub steered: u64,
    pub instrs: usize,
    /// Wall-clock budget per mutant campaign.
    pub budget_seconds: u64,
    pub builds: Builds,
    /// Mutants known to be equivalent (`id # reason`); a missing file is
    /// an empty list.
    pub equivalent: PathBuf,
    /// Where mutants are built.
    pub work: PathBuf,
    /// Mutants built and run at once.
    pub jobs: usize,
    /// Mutants linted at once (tools::mutate::lint); 1 lints each alone.
    pub lint_batch: usize,
    /// Print the mutants that would run, and stop.
    pub list: bool,
    pub require_all_killed: bool,
    pub shard: Option<Shard>,
    /// The run's directory (`mutate.json`, `results.jsonl`).
    pub out: Option<PathBuf>,
    pub resume: bool,
    /// Take the directory's lock from a holder that cannot be told gone.
    pub break_lock: bool,
    pub json: Option<PathBuf>,
    pub report: Option<PathBuf>,
    /// `--observe`: the level the mutants are seen at (docs/dut-contract.md).
    pub observe: Observation,
    /// `--evidence N`: each listed equivalent runs through N programs
    /// (and the CVO sweep), and what it survived is recorded in
    /// `evidence_file` (docs/mutation.md, "Evidence").
    pub evidence: Option<u64>,
    /// The evidence file: read by every run (a listed equivalent with a
    /// sufficient record for this RTL is not run again), written by
    /// `--evidence`; a missing file has no records.
    pub evidence_file: PathBuf,
}

/// How a mutation run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutationEnd {
    /// `--list`: nothing ran.
    Listed,
    /// Every mutant ran; with `--require-all-killed`, every one was killed
    /// (or is listed as equivalent, or does not compile).
    Done,
    /// `--require-all-killed`, and a mutant survived or has no record.
    Survived,
    /// SIGTERM or SIGINT; what finished is recorded.
    Interrupted,
}

impl MutationEnd {
    pub fn exit_code(self) -> u8 {
        match self {
            MutationEnd::Listed | MutationEnd::Done => 0,
            MutationEnd::Survived => EXIT_FAILED,
            MutationEnd::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

/// The mutants `selection` names among `sites`.
fn choose(
    request: &MutationRequest,
    sites: &[mutate::Mutant],
) -> Result<Vec<mutate::Mutant>, String> {
    let by_ids = |ids: &mut dyn Iterator<Item = &String>, unknown: &dyn Fn(&str) -> String| {
        ids.map(|id| mutate::by_id(sites, id).cloned().ok_or_else(|| unknown(id)))
            .collect::<Result<Vec<_>, String>>()
    };
    Ok(match &request.selection {
        MutantSelection::Ids(ids) => by_ids(&mut ids.iter(), &|id| {
            format!(
                "--id: `{id}` is not a mutation site of hw/rtl (`mutate --list --sample 0` lists them)"
            )
        })?,
        MutantSelection::ChangedSince(base) => {
            let changed = mutate::changed_lines(&request.root, base)?;
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
            chosen
        }
        MutantSelection::IdsFile(file) => {
            let ids = mutate::read_ids(file)?;
            by_ids(&mut ids.iter(), &|id| {
                format!(
                    "{}: mutant `{id}` is not a site of hw/rtl any more (the line moved?)",
                    file.display()
                )
            })?
        }
        MutantSelection::All => sites.to_vec(),
        MutantSelection::Sample { count, seed } => mutate::sample(sites, *count, *seed),
    })
}

/// The options of a listed equivalent's run under `--evidence n`: `n`
/// programs, a quarter of them steered and the rest random (every other
/// one stalled), the budget grown in proportion.
fn evidence_options(options: &MutateOptions, n: u64) -> MutateOptions {
    let steered = (n / 4).max(options.steered);
    let seeds = n.saturating_sub(steered).max(options.seeds);
    let scale = (seeds + steered).div_ceil((options.seeds + options.steered).max(1));
    MutateOptions {
        seeds,
        steered,
        budget: options.budget * scale.max(1) as u32,
        ..options.clone()
    }
}

/// Runs the mutation run `request`: a line per mutant as it finishes, the
/// kill tables, the journal and the files asked for.
pub fn run(request: &MutationRequest) -> Result<MutationEnd, String> {
    let root = &request.root;
    if !root.join("hw/rtl/manifest.txt").exists() {
        return Err(format!(
            "run mutate from the repository root (no hw/rtl/manifest.txt in {})",
            root.display()
        ));
    }
    let sites = mutate::all_sites(root)?;
    let chosen = choose(request, &sites)?;
    let equivalent = if request.equivalent.exists() {
        mutate::read_equivalents(&request.equivalent, request.config.name)?
    } else {
        Default::default()
    };
    let in_shard = |k: usize| request.shard.is_none_or(|s| s.holds(k as u64));
    say!(
        "mutate: {} sites in hw/rtl; running {} mutants{} on {} ({} seeds x {} instrs, {} steered programs each, {} s budget){}",
        sites.len(),
        chosen.len(),
        request.shard.map_or(String::new(), |s| format!(
            ", shard {s} of them: {}",
            (0..chosen.len()).filter(|&k| in_shard(k)).count()
        )),
        request.config.name,
        request.seeds,
        request.instrs,
        request.steered,
        request.budget_seconds,
        match request.observe {
            Observation::Full => String::new(),
            level => format!(", seen at the {level} level (assertions off)"),
        }
    );
    if request.list {
        for (k, m) in chosen.iter().enumerate() {
            if in_shard(k) {
                say!("{}  {}", m.id(), m.describe());
            }
        }
        return Ok(MutationEnd::Listed);
    }
    let header = MutateHeader {
        format: MUTATE_FORMAT.into(),
        version: 1,
        identity: MutationIdentity {
            config: request.config.name.to_string(),
            seeds: request.seeds,
            steered: request.steered,
            instrs: request.instrs,
            budget_seconds: request.budget_seconds,
            selection: request.selection.clone(),
            sites: sites.len(),
            observe: request.observe,
        },
        mutants: chosen.iter().map(|m| m.id()).collect(),
        shard: request.shard,
        runs: Vec::new(),
    };
    // This shard's mutants, in the run's order.
    let shard_ids: Vec<String> = chosen
        .iter()
        .enumerate()
        .filter(|(k, _)| in_shard(*k))
        .map(|(_, m)| m.id())
        .collect();
    // Watched from before the directory is written, so that a signal
    // never finds the run half set up.
    let stop = Arc::new(AtomicBool::new(false));
    super::watch_for_stop_signals(&stop)?;
    let mut store: Option<RunStore<MutateHeader, MutantRecord>> = match &request.out {
        Some(dir) => Some(RunStore::open(
            dir,
            header.clone(),
            request.resume,
            request.break_lock,
        )?),
        None => None,
    };
    let prior = store.as_ref().map_or(Vec::new(), |s| s.prior.clone());
    let done: HashSet<&str> = prior.iter().map(|r| r.id.as_str()).collect();
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
        config: request.config,
        seeds: request.seeds,
        first_seed: 1,
        steered: request.steered,
        instrs: request.instrs,
        budget: Duration::from_secs(request.budget_seconds),
        work_dir: request.work.clone(),
        root: root.clone(),
        observe: request.observe,
    };
    let builder = Builder::new(root, &request.work, options.config)?;
    // Listed equivalents with a sufficient record for this RTL and
    // configuration are not run again: their record is the evidence.
    let rtl = mutate::evidence::rtl_fingerprint(&builder)?;
    let mut evidence_file = EvidenceFile::read(&request.evidence_file)?;
    let recorded = |m: &mutate::Mutant| -> Option<Evidence> {
        let listed = equivalent.get(&m.id())?;
        let battery = evidence_file.fresh(&m.id(), request.config.name, &rtl)?;
        let evidence = Evidence::new(EvidenceSource::Recorded, battery, listed.exhaustive);
        evidence.sufficient.then_some(evidence)
    };
    let mut reused_records = Vec::new();
    let mut still_to_run = Vec::new();
    for m in to_run {
        let Some(evidence) = recorded(&m) else {
            still_to_run.push(m);
            continue;
        };
        let record = MutantRecord {
            id: m.id(),
            class: m.class.name().into(),
            change: m.describe(),
            result: Verdict::Survived {
                seeds: 0,
                instructions: 0,
                battery: Default::default(),
            },
            equivalent: equivalent.get(&m.id()).map(|e| e.reason.clone()),
            build_seconds: 0.0,
            evidence: Some(evidence),
        };
        if let Some(store) = &store {
            store.append(&record)?;
        }
        reused_records.push(record);
    }
    let to_run = still_to_run;
    if !reused_records.is_empty() {
        say!(
            "equivalents: {} listed ones have sufficient evidence recorded for this RTL in {} and are not run again",
            reused_records.len(),
            request.evidence_file.display()
        );
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let use_schema = match request.builds {
        Builds::Schema | Builds::Subset => !to_run.is_empty(),
        Builds::Alone => false,
        Builds::Auto => to_run.len() >= SCHEMA_FROM,
    };
    let schema = if use_schema {
        let begin = Instant::now();
        let only: Option<std::collections::BTreeSet<u32>> = (request.builds == Builds::Subset)
            .then(|| {
                let run: HashSet<String> = to_run.iter().map(|m| m.id()).collect();
                sites
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| run.contains(&m.id()))
                    .map(|(k, _)| mutate::schema::selector_of(k))
                    .collect()
            });
        let built = builder.schema(&sites, only.as_ref(), &|line| say!("{line}"))?;
        // With a schema of the run's own mutants, the sites outside the run
        // are not counted: only the run's own, guarded or built alone.
        let outside = only.as_ref().map_or(0, |only| {
            built
                .schema
                .unguarded
                .keys()
                .filter(|k| !only.contains(k))
                .count()
        });
        say!(
            "mutant schema{}: {} of {} sites guarded, {} built alone; {} in {:.0} s ({})",
            if outside > 0 {
                " of this run's mutants"
            } else {
                ""
            },
            sites.len() - built.schema.unguarded.len(),
            sites.len() - outside,
            built.schema.unguarded.len() - outside,
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
    let selector_of: HashMap<String, u32> = sites
        .iter()
        .enumerate()
        .map(|(k, m)| (m.id(), mutate::schema::selector_of(k)))
        .collect();
    let guarded = |m: &mutate::Mutant| {
        schema.as_ref().and_then(|b| {
            let k = selector_of[&m.id()];
            (!b.schema.unguarded.contains_key(&k)).then_some((b.so.as_path(), k))
        })
    };
    // Verilator's verdict on each guarded mutant alone, found in batches
    // (tools::mutate::lint); the unguarded are built alone, which checks
    // them.
    let to_lint: Vec<mutate::Mutant> = to_run
        .iter()
        .filter(|m| guarded(m).is_some())
        .cloned()
        .collect();
    let lints = LintBatches::new(&builder, &to_lint, request.lint_batch);
    if !to_lint.is_empty() {
        say!(
            "lint: {} mutants in {} batches of at most {}",
            to_lint.len(),
            lints.batch_count(),
            request.lint_batch.max(1)
        );
    }
    let started = Instant::now();
    let total = to_run.len();
    let queue = Mutex::new(to_run.into_iter().enumerate());
    let results = Mutex::new(Vec::new());
    let journal_error = Mutex::new(None::<String>);
    std::thread::scope(|scope| {
        for _ in 0..request.jobs.max(1) {
            scope.spawn(|| loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((n, m)) = next else { break };
                let guarded = guarded(&m).map(|(so, k)| (so, k, &lints));
                let listed = equivalent.get(&m.id());
                // Under --evidence a listed equivalent runs the longer battery.
                let options = match (request.evidence, listed) {
                    (Some(n), Some(_)) => evidence_options(&options, n),
                    _ => options.clone(),
                };
                // None: the child was stopped from outside; no result.
                let Some(mut r) = mutate::run_mutant(&options, &builder, &m, &exe, guarded) else {
                    continue;
                };
                r.equivalent = listed.map(|e| e.reason.clone());
                let mut record = MutantRecord::of(&r);
                if let (Some(e), Verdict::Survived { battery, .. }) = (listed, &r.verdict) {
                    record.evidence =
                        Some(Evidence::new(EvidenceSource::Run, *battery, e.exhaustive));
                }
                let extra = match &r.verdict {
                    Verdict::Killed {
                        seed,
                        seconds,
                        by,
                        assertion,
                        ..
                    } => {
                        let name = assertion.as_ref().map_or(String::new(), |a| {
                            format!(
                                " {} ({})",
                                a.name,
                                a.lead()
                                    .map_or("the scoreboard alone misses it there".into(), |c| {
                                        format!("{c} cycles before the scoreboard")
                                    })
                            )
                        });
                        format!("by {by}{name} at seed {seed} after {seconds:.2} s")
                    }
                    Verdict::NotCompiling { stage, .. } => format!("({stage})"),
                    _ if r.equivalent.is_some() => match &record.evidence {
                        Some(e) => format!(
                            "(listed as equivalent; {} programs, CVO sweep {}{})",
                            e.battery.programs(),
                            if e.battery.cvo_sweep > 0 {
                                "passed"
                            } else {
                                "not run"
                            },
                            if e.sufficient {
                                ""
                            } else {
                                "; evidence not sufficient"
                            }
                        ),
                        None => "(listed as equivalent)".into(),
                    },
                    _ => String::new(),
                };
                if let Some(store) = &store {
                    if let Err(e) = store.append(&record) {
                        // Nothing more can be recorded: end the run.
                        stop.store(true, Ordering::SeqCst);
                        journal_error
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert(e);
                    }
                }
                say!(
                    "[{}/{total}] {:<13} {}  {extra}",
                    n + 1,
                    r.verdict.name(),
                    m.describe()
                );
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(record);
            });
        }
    });
    let interrupted = stop.load(Ordering::SeqCst);
    let new_records = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let recorded_now = new_records.len() as u64;
    let mut records = prior;
    records.extend(reused_records);
    records.extend(new_records);
    // The equivalent list as it is now, also for records of earlier runs.
    for r in &mut records {
        r.equivalent = equivalent.get(&r.id).map(|e| e.reason.clone());
        if r.equivalent.is_none() {
            r.evidence = None;
        }
    }
    if request.evidence.is_some() && !interrupted {
        // What each listed equivalent survived, for this RTL: recorded when
        // sufficient; an entry that died loses its record.
        for r in &records {
            match (&r.evidence, &r.result) {
                (Some(e), _) if e.source == EvidenceSource::Run && e.sufficient => {
                    evidence_file.record(&r.id, request.config.name, &rtl, e.battery)
                }
                (_, Verdict::Killed { .. }) if equivalent.contains_key(&r.id) => {
                    evidence_file.forget(&r.id, request.config.name)
                }
                _ => {}
            }
        }
        evidence_file.write(&request.evidence_file)?;
        say!("evidence: recorded in {}", request.evidence_file.display());
    }
    let mut report = MutateReport::new(&header, records, &shard_ids);
    report.shard = header.shard.map(|s| s.to_string());
    report.interrupted = interrupted;
    say!("{}", report.text(&request.equivalent.display().to_string()));
    let header_identity = header.identity.clone();
    let header = match &mut store {
        Some(store) => {
            let ended = if interrupted {
                RunEnded::Interrupted
            } else {
                RunEnded::Complete
            };
            store.finish(started.elapsed().as_secs_f64(), recorded_now, ended)?;
            store.header.clone()
        }
        None => header,
    };
    if let Some(path) = &request.json {
        let mut doc = serde_json::to_value(&report).expect("reports serialise");
        doc["sites"] = sites.len().into();
        let text = serde_json::to_string_pretty(&doc).expect("reports serialise");
        super::write_file(path, text + "\n")?;
    }
    if let Some(path) = &request.report {
        let inputs = crate::report::Inputs {
            mutation: Some(crate::report::MutationPart {
                report: report.clone(),
                header: Some(header),
                cluster: None,
            }),
            ..Default::default()
        };
        super::write_report(path, &inputs)?;
    }
    if let Some(e) = journal_error
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
    {
        return Err(format!("the results could not all be recorded: {e}"));
    }
    Ok(if interrupted {
        eprintln!(
            "pccx-cosim: mutate interrupted; the report holds the mutants that finished{}",
            request.out.as_ref().map_or(String::new(), |dir| format!(
                "; `{}` continues it",
                identity::command(&Rerun::Mutation {
                    identity: &header_identity,
                    shard: request.shard,
                    dir,
                })
            ))
        );
        MutationEnd::Interrupted
    } else if request.require_all_killed && !report.all_killed() {
        MutationEnd::Survived
    } else {
        MutationEnd::Done
    })
}
