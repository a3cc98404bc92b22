//! Reading a page's inputs from run directories: a campaign's `--out DIR`,
//! shards of one (merged), a Slurm submission's directory, or a mutation
//! run's; coverage and curve files found beside them or named.

use super::{Baseline, CampaignPart, Cluster, Inputs, JobPart, MutationPart, ShardRow};
use crate::coverage::{Coverage, CoverageFile};
use crate::regress::campaign::Shard;
use crate::regress::identity::{self, Rerun, RunEnded};
use crate::regress::journal::{self, CampaignHeader};
use crate::regress::merge;
use crate::regress::slurm::{self, JobRecord, TaskState, Waited};
use crate::regress::steer::CurveFile;
use crate::tools::mutants;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The coverage file a directory's run wrote beside its records (the name
/// a Slurm task gives it).
pub const COVERAGE_NAME: &str = "coverage.json";
/// The curve file a directory's run wrote beside its records.
pub const CURVE_NAME: &str = "coverage-curve.json";

/// Files named on the command line besides the directories.
#[derive(Clone, Debug, Default)]
pub struct Extra {
    /// Functional coverage to show instead of the directories' own.
    pub coverage: Option<PathBuf>,
    /// Coverage curves to plot besides the directories' own.
    pub curves: Vec<PathBuf>,
    /// Do not ask squeue for task states (a report made away from the
    /// cluster, or in a test that must not depend on one).
    pub offline: bool,
}

/// What kind of run a directory holds.
#[derive(PartialEq)]
enum Kind {
    Campaign,
    Mutation,
}

/// The inputs of a page from `dirs`. A directory with `slurm-job.json`
/// stands for its shards; every directory must then be of one campaign or
/// one mutation run. An error names the directory or file at fault.
pub fn from_dirs(dirs: &[PathBuf], extra: &Extra) -> Result<Inputs, String> {
    if dirs.is_empty() {
        return Err("report: name at least one run directory".into());
    }
    let mut job: Option<(PathBuf, JobRecord)> = None;
    let mut run_dirs: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !dir.is_dir() {
            return Err(format!("{}: not a directory", dir.display()));
        }
        if let Some((record, shards)) = submission_shards(dir)? {
            if let Some((first, _)) = &job {
                return Err(format!(
                    "{} and {} are both Slurm submissions: report one at a time",
                    first.display(),
                    dir.display()
                ));
            }
            run_dirs.extend(shards);
            job = Some((dir.clone(), record));
        } else {
            run_dirs.push(dir.clone());
        }
    }
    let mut kind: Option<(Kind, &Path)> = None;
    for dir in &run_dirs {
        let this = if dir.join(mutants::MUTATE_FILE).exists() {
            Kind::Mutation
        } else if dir.join(journal::CAMPAIGN_FILE).exists() {
            Kind::Campaign
        } else {
            return Err(format!(
                "{}: no {}, {} or {} here: not a campaign's, mutation run's or Slurm \
                 submission's directory",
                dir.display(),
                journal::CAMPAIGN_FILE,
                mutants::MUTATE_FILE,
                slurm::JOB_FILE
            ));
        };
        match &kind {
            None => kind = Some((this, dir)),
            Some((k, first)) if *k != this => {
                return Err(format!(
                    "{} and {} are not of one run: one is a campaign, the other a mutation run",
                    first.display(),
                    dir.display()
                ))
            }
            Some(_) => {}
        }
    }
    let mut inputs = Inputs::default();
    let job = job.as_ref().map(|(top, record)| Job {
        top,
        record,
        states: scheduler_states(top, record, extra.offline),
    });
    match kind.expect("one directory at least").0 {
        Kind::Campaign => {
            let m = merge::merge(&run_dirs)?;
            let mut runs = Vec::new();
            for dir in &run_dirs {
                if let Some(h) = CampaignHeader::read(dir)? {
                    runs.extend(h.runs);
                }
            }
            runs.sort_by_key(|r| r.started_unix);
            let shards = Shards {
                rows: m
                    .dirs
                    .iter()
                    .map(|d| row(&d.dir, d.shard, d.records, d.missing.len(), d.last_run))
                    .collect(),
                resume: m
                    .dirs
                    .iter()
                    .filter(|d| !d.missing.is_empty())
                    .map(|d| merge::rerun_command(&m.identity, d))
                    .collect(),
                absent: m
                    .absent_shards
                    .iter()
                    .map(|(shard, seeds)| Absent {
                        shard: *shard,
                        what: format!("shard {shard}: no directory, {} seeds", seeds.len()),
                        command: merge::shard_command(&m.identity, *shard, Path::new("DIR")),
                    })
                    .collect(),
                duplicates: m.duplicates,
                conflicting: m.conflicting.iter().map(u64::to_string).collect(),
            };
            let mut file = m.file;
            file.interrupted = m
                .dirs
                .iter()
                .any(|d| d.last_run == Some(RunEnded::Interrupted));
            inputs.campaign = Some(CampaignPart {
                file,
                identity: Some(m.identity),
                runs,
                dirs: run_dirs.clone(),
                cluster: cluster(shards, job.as_ref()),
            });
        }
        Kind::Mutation => {
            let m = mutants::merge(&run_dirs)?;
            let given: Vec<Option<Shard>> = m.dirs.iter().map(|d| d.shard).collect();
            let shards = Shards {
                rows: m
                    .dirs
                    .iter()
                    .map(|d| row(&d.dir, d.shard, d.records, d.missing.len(), d.last_run))
                    .collect(),
                resume: m
                    .dirs
                    .iter()
                    .filter(|d| !d.missing.is_empty())
                    .map(|d| m.rerun_command(&d.dir, d.shard))
                    .collect(),
                absent: Shard::absent_from(&given)
                    .into_iter()
                    .map(|shard| Absent {
                        shard,
                        what: format!("shard {shard}: no directory"),
                        command: m.rerun_command(Path::new("DIR"), Some(shard)),
                    })
                    .collect(),
                duplicates: m.duplicates,
                conflicting: m.conflicting.clone(),
            };
            inputs.mutation = Some(MutationPart {
                report: m.report,
                header: Some(m.header),
                cluster: cluster(shards, job.as_ref()),
            });
        }
    }
    // Coverage: named on the command line, else what the directories hold.
    match &extra.coverage {
        Some(path) => {
            let c = CoverageFile::read(path)?;
            inputs.coverage = Some(CoverageFile::of(&c));
        }
        None => {
            let mut parts = Vec::new();
            for dir in &run_dirs {
                let path = dir.join(COVERAGE_NAME);
                if !path.exists() {
                    continue;
                }
                match CoverageFile::read(&path) {
                    Ok(c) => parts.push(c),
                    Err(e) => inputs.notes.push(format!("coverage not shown: {e}")),
                }
            }
            // Cases are numbered across the whole campaign in every shard.
            inputs.coverage = Coverage::sum_concurrent(parts)
                .as_ref()
                .map(CoverageFile::of);
        }
    }
    for dir in &run_dirs {
        let path = dir.join(CURVE_NAME);
        if path.exists() {
            match CurveFile::read(&path) {
                Ok(c) => inputs.curves.push(c),
                Err(e) => inputs.notes.push(format!("curve not shown: {e}")),
            }
        }
    }
    for path in &extra.curves {
        inputs.curves.push(CurveFile::read(path)?);
    }
    Ok(inputs)
}

/// The shard directories of the `slurm submit` directory `dir` that have
/// written their header (campaign or mutation run), with its job record;
/// `Ok(None)` when `dir` is not a submission (no `slurm-job.json`).
pub fn submission_shards(dir: &Path) -> Result<Option<(JobRecord, Vec<PathBuf>)>, String> {
    if !dir.join(slurm::JOB_FILE).exists() {
        return Ok(None);
    }
    let record = JobRecord::read(dir)?;
    let shards: Vec<PathBuf> = (0..record.shards)
        .map(|i| slurm::shard_dir(dir, i))
        .filter(|d| {
            d.join(journal::CAMPAIGN_FILE).exists() || d.join(mutants::MUTATE_FILE).exists()
        })
        .collect();
    if shards.is_empty() {
        return Err(format!(
            "{}: job {} has {} shards and none has written its header yet",
            dir.display(),
            record.job_id,
            record.shards
        ));
    }
    Ok(Some((record, shards)))
}

/// The Slurm submission the directories came from, and its task states
/// with where they came from.
struct Job<'a> {
    top: &'a Path,
    record: &'a JobRecord,
    states: SchedulerStates,
}

/// What the scheduler said of a job's tasks.
struct SchedulerStates {
    /// Each task's last state.
    tasks: BTreeMap<u64, TaskState>,
    /// Where those came from, or why they are unknown.
    from: String,
    /// Each task's states as `slurm wait` saw them change.
    history: BTreeMap<u64, Vec<TaskState>>,
}

/// What a merge (of a campaign's or a mutation run's directories) says of
/// its shards.
struct Shards {
    rows: Vec<ShardRow>,
    /// The commands that resume the directories with records missing.
    resume: Vec<String>,
    absent: Vec<Absent>,
    duplicates: usize,
    conflicting: Vec<String>,
}

/// A shard of the run with no directory among those given.
struct Absent {
    shard: Shard,
    what: String,
    /// The command that runs it into `DIR`.
    command: String,
}

/// A shard's row, before the scheduler is asked about it.
fn row(
    dir: &Path,
    shard: Option<Shard>,
    records: usize,
    missing: usize,
    last_run: Option<RunEnded>,
) -> ShardRow {
    ShardRow {
        dir: dir.to_path_buf(),
        shard,
        records,
        missing,
        last_run,
        scheduler: None,
        log: None,
        hosts: hosts_of(dir),
        requeued: Vec::new(),
    }
}

/// The hosts the runs of `dir` ran on, in order, each with how it ended
/// when it did not finish its work.
fn hosts_of(dir: &Path) -> Vec<String> {
    let runs = match CampaignHeader::read(dir) {
        Ok(Some(h)) => h.runs,
        _ => match <mutants::MutateHeader as crate::regress::store::RunHeader>::read(dir) {
            Ok(Some(h)) => h.runs,
            _ => Vec::new(),
        },
    };
    runs.iter()
        .map(|r| match r.ended {
            Some(RunEnded::Complete) => r.host.clone(),
            Some(e) => format!("{} ({})", r.host, e.name()),
            None => format!("{} (did not finish)", r.host),
        })
        .collect()
}

/// The shards section's content: `None` for one unsharded directory not
/// run by Slurm. Each row gets its task's state and log when a job ran it;
/// the commands are the resumes, a run per absent shard, and the job's
/// `sbatch --array` of the tasks with something missing.
fn cluster(mut s: Shards, job: Option<&Job>) -> Option<Cluster> {
    let sharded = job.is_some() || s.rows.len() > 1 || s.rows.iter().any(|r| r.shard.is_some());
    if !sharded {
        return None;
    }
    let index = |shard: &Option<Shard>| shard.map(|s| s.index);
    if let Some(job) = job {
        for r in &mut s.rows {
            let Some(i) = index(&r.shard) else { continue };
            r.scheduler = job.states.tasks.get(&i).cloned();
            r.requeued = job
                .states
                .history
                .get(&i)
                .filter(|steps| slurm::requeued(steps))
                .cloned()
                .unwrap_or_default();
            let log =
                slurm::shard_dir(job.top, i).join(format!("slurm-{}_{i}.out", job.record.job_id));
            r.log = (log.is_file() && r.dir.starts_with(job.top)).then_some(log);
        }
    }
    let mut rerun = s.resume;
    rerun.extend(s.absent.iter().map(|a| a.command.clone()));
    if let Some(job) = job {
        let mut tasks: Vec<u64> = s
            .rows
            .iter()
            .filter(|r| r.missing > 0)
            .filter_map(|r| index(&r.shard))
            .chain(s.absent.iter().map(|a| a.shard.index))
            .collect();
        tasks.sort_unstable();
        tasks.dedup();
        if !tasks.is_empty() {
            rerun.push(identity::command(&Rerun::SlurmTasks {
                script: Path::new(&job.record.script),
                tasks: &tasks,
            }));
        }
    }
    Some(Cluster {
        shards: s.rows,
        absent: s.absent.into_iter().map(|a| a.what).collect(),
        rerun,
        job: job.map(|j| JobPart {
            job_id: j.record.job_id.clone(),
            states_from: j.states.from.clone(),
        }),
        duplicates: s.duplicates,
        conflicting: s.conflicting,
    })
}

/// An earlier campaign to compare with: its directories (or a Slurm
/// submission's), read as `report` reads them. A mutation run is refused.
pub fn baseline(dirs: &[PathBuf]) -> Result<Baseline, String> {
    let inputs = from_dirs(
        dirs,
        &Extra {
            offline: true,
            ..Default::default()
        },
    )
    .map_err(|e| format!("--baseline: {e}"))?;
    let Some(c) = inputs.campaign else {
        return Err(format!(
            "--baseline {}: a mutation run; a baseline is an earlier campaign",
            dirs[0].display()
        ));
    };
    let last = c.runs.iter().rev().find(|r| r.provenance.is_some());
    Ok(Baseline {
        dirs: dirs.to_vec(),
        seeds: c.file.summary.seeds,
        signatures: c
            .file
            .failures_by_signature
            .iter()
            .map(|g| (g.signature.text.clone(), g.seeds.len()))
            .collect(),
        commit: last
            .and_then(|r| r.provenance.as_ref())
            .and_then(|p| p.get("git_commit"))
            .and_then(|v| v.as_str())
            .map(String::from),
        started_unix: c.runs.last().map(|r| r.started_unix),
    })
}

/// The task states of a Slurm job: those the last `slurm wait` saw, with
/// squeue's of now over them for the tasks it still lists; and where they
/// came from, or why they are unknown.
fn scheduler_states(top: &Path, record: &JobRecord, offline: bool) -> SchedulerStates {
    let mut sources = Vec::new();
    let mut states = BTreeMap::new();
    let mut history = BTreeMap::new();
    match Waited::read(top) {
        Ok(Some(w)) => {
            let when = std::fs::metadata(top.join(slurm::STATES_FILE))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or("at an unknown time".into(), |d| {
                    format!("at {}", super::sections::utc(d.as_secs()))
                });
            states = w.tasks;
            history = w.history;
            sources.push(format!("as `slurm wait` last saw them ({when})"));
        }
        Ok(None) => {}
        Err(e) => sources.push(format!("not from `slurm wait`: {e}")),
    }
    if offline {
        sources.push("squeue not asked (--offline)".into());
    } else {
        match slurm::task_states(&record.job_id) {
            Ok(now) if !now.is_empty() => {
                sources.push(format!("{} as squeue lists them now", now.len()));
                states.extend(now);
            }
            Ok(_) => sources.push("squeue no longer lists the job".into()),
            Err(e) => sources.push(format!("squeue: {e}")),
        }
    }
    if states.is_empty() {
        sources.insert(0, "unknown".into());
    }
    SchedulerStates {
        tasks: states,
        from: sources.join("; "),
        history,
    }
}
