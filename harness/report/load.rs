//! Reading a page's inputs from run directories: a campaign's `--out DIR`,
//! shards of one (merged), a Slurm submission's directory, or a mutation
//! run's; coverage and curve files found beside them or named.

use super::{Baseline, CampaignPart, Cluster, Inputs, JobPart, MutationPart, ShardRow};
use crate::coverage::{Coverage, CoverageFile};
use crate::regress::campaign::Shard;
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
        if dir.join(slurm::JOB_FILE).exists() {
            if let Some((first, _)) = &job {
                return Err(format!(
                    "{} and {} are both Slurm submissions: report one at a time",
                    first.display(),
                    dir.display()
                ));
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
            Some((k, first)) if std::mem::discriminant(k) != std::mem::discriminant(&this) => {
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
    let states = job
        .as_ref()
        .map(|(top, record)| scheduler_states(top, record, extra.offline));
    let log = |dir: &Path, shard: Option<&str>| -> Option<PathBuf> {
        let (top, record) = job.as_ref()?;
        let index = shard?.split('/').next()?.parse::<u64>().ok()?;
        let path =
            slurm::shard_dir(top, index).join(format!("slurm-{}_{index}.out", record.job_id));
        (path.is_file() && path.starts_with(top) && dir.starts_with(top)).then_some(path)
    };
    let task_state = |shard: Option<&str>| -> Option<TaskState> {
        let index = shard?.split('/').next()?.parse::<u64>().ok()?;
        states.as_ref()?.0.get(&index).cloned()
    };
    let job_part = job
        .as_ref()
        .zip(states.as_ref())
        .map(|((_, r), (_, from))| JobPart {
            job_id: r.job_id.clone(),
            states_from: from.clone(),
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
            let sharded =
                job.is_some() || m.dirs.len() > 1 || m.dirs.iter().any(|d| d.shard.is_some());
            let cluster = sharded.then(|| {
                let mut rerun: Vec<String> = m
                    .dirs
                    .iter()
                    .filter(|d| !d.missing.is_empty())
                    .map(|d| merge::rerun_command(&m.identity, d))
                    .collect();
                let absent = m
                    .absent_shards
                    .iter()
                    .map(|(shard, seeds)| {
                        rerun.push(merge::shard_command(&m.identity, *shard, "DIR"));
                        format!("shard {shard}: no directory, {} seeds", seeds.len())
                    })
                    .collect();
                if let Some((_, record)) = &job {
                    rerun.extend(sbatch_rerun(
                        record,
                        &m.dirs
                            .iter()
                            .map(|d| (d.shard.clone(), d.missing.len()))
                            .collect::<Vec<_>>(),
                        m.absent_shards.iter().map(|(s, _)| s.index),
                    ));
                }
                Cluster {
                    shards: m
                        .dirs
                        .iter()
                        .map(|d| ShardRow {
                            dir: d.dir.clone(),
                            shard: d.shard.clone(),
                            records: d.records,
                            missing: d.missing.len(),
                            last_run: d.last_run.clone(),
                            scheduler: task_state(d.shard.as_deref()),
                            log: log(&d.dir, d.shard.as_deref()),
                        })
                        .collect(),
                    absent,
                    rerun,
                    job: job_part.clone(),
                    duplicates: m.duplicates,
                    conflicting: m.conflicting.iter().map(u64::to_string).collect(),
                }
            });
            let mut file = m.file;
            file.interrupted = m
                .dirs
                .iter()
                .any(|d| d.last_run.as_deref() == Some("interrupted"));
            inputs.campaign = Some(CampaignPart {
                file,
                identity: Some(m.identity),
                runs,
                dirs: run_dirs.clone(),
                cluster,
            });
        }
        Kind::Mutation => {
            let m = mutants::merge(&run_dirs)?;
            let sharded = job.is_some() || m.dirs.len() > 1 || m.dirs.iter().any(|d| d.1.is_some());
            let cluster = sharded.then(|| {
                let mut rerun: Vec<String> = m
                    .dirs
                    .iter()
                    .filter(|d| !d.3.is_empty())
                    .map(|(dir, shard, _, _)| m.rerun_command(dir, shard.as_deref()))
                    .collect();
                let given: Vec<Option<Shard>> = m
                    .dirs
                    .iter()
                    .map(|d| d.1.as_deref().and_then(|s| s.parse().ok()))
                    .collect();
                let absent_shards = Shard::absent_from(&given);
                let absent = absent_shards
                    .iter()
                    .map(|shard| {
                        rerun.push(m.rerun_command(Path::new("DIR"), Some(&shard.to_string())));
                        format!("shard {shard}: no directory")
                    })
                    .collect();
                if let Some((_, record)) = &job {
                    rerun.extend(sbatch_rerun(
                        record,
                        &m.dirs
                            .iter()
                            .map(|d| (d.1.clone(), d.3.len()))
                            .collect::<Vec<_>>(),
                        absent_shards.iter().map(|s| s.index),
                    ));
                }
                Cluster {
                    shards: m
                        .dirs
                        .iter()
                        .map(|(dir, shard, records, missing)| ShardRow {
                            dir: dir.clone(),
                            shard: shard.clone(),
                            records: *records,
                            missing: missing.len(),
                            last_run: mutants_last_run(dir),
                            scheduler: task_state(shard.as_deref()),
                            log: log(dir, shard.as_deref()),
                        })
                        .collect(),
                    absent,
                    rerun,
                    job: job_part.clone(),
                    duplicates: m.duplicates,
                    conflicting: m.conflicting.clone(),
                }
            });
            inputs.mutation = Some(MutationPart {
                report: m.report,
                header: Some(m.header),
                cluster,
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
            let mut total: Option<Coverage> = None;
            for dir in &run_dirs {
                let path = dir.join(COVERAGE_NAME);
                if !path.exists() {
                    continue;
                }
                match CoverageFile::read(&path) {
                    // Cases are numbered across the whole campaign in every
                    // shard, so the earliest first hit is the run's.
                    Ok(c) => match total.as_mut() {
                        Some(t) => t.merge_concurrent(&c),
                        None => total = Some(c),
                    },
                    Err(e) => inputs.notes.push(format!("coverage not shown: {e}")),
                }
            }
            inputs.coverage = total.as_ref().map(CoverageFile::of);
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

/// How the last run of a mutation directory ended.
fn mutants_last_run(dir: &Path) -> Option<String> {
    journal::read_header::<mutants::MutateHeader>(dir, mutants::MUTATE_FILE)
        .ok()
        .flatten()
        .and_then(|h| h.runs.last().and_then(|r| r.ended.clone()))
}

/// The task states of a Slurm job: those the last `slurm wait` saw, with
/// squeue's of now over them for the tasks it still lists; and where they
/// came from, or why they are unknown.
fn scheduler_states(
    top: &Path,
    record: &JobRecord,
    offline: bool,
) -> (BTreeMap<u64, TaskState>, String) {
    let mut sources = Vec::new();
    let mut states = BTreeMap::new();
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
    (states, sources.join("; "))
}

/// `sbatch --array=...` of the job's script for the tasks whose shard
/// lacks records (or has no directory).
fn sbatch_rerun(
    record: &JobRecord,
    dirs: &[(Option<String>, usize)],
    absent: impl Iterator<Item = u64>,
) -> Option<String> {
    let mut tasks: Vec<u64> = dirs
        .iter()
        .filter(|(_, missing)| *missing > 0)
        .filter_map(|(shard, _)| shard.as_deref()?.split('/').next()?.parse().ok())
        .chain(absent)
        .collect();
    tasks.sort_unstable();
    tasks.dedup();
    (!tasks.is_empty()).then(|| {
        format!(
            "sbatch --array={} {}",
            tasks
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            merge::shell_word(&record.script)
        )
    })
}
