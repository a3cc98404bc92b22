//! The morning-after page (`pccx-cosim report`, and `--report FILE` on a
//! campaign, `merge` and `mutate`): one self-contained HTML file that says
//! what broke, since when, and where to look (docs/report.md).

pub mod charts;
pub mod html;
mod load;
mod sections;
mod workload;

pub use load::{baseline, from_dirs, submission_shards, Extra};

use crate::coverage::CoverageFile;
use crate::regress::campaign::Shard;
use crate::regress::identity::{RunEnded, RunIdentity};
use crate::regress::journal::RunEntry;
use crate::regress::results::CampaignFile;
use crate::regress::slurm::TaskState;
use crate::regress::steer::CurveFile;
use crate::tools::mutants::{MutateHeader, MutateReport};
use std::path::{Path, PathBuf};

/// Everything a page shows; each part is there when its run is.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub campaign: Option<CampaignPart>,
    pub mutation: Option<MutationPart>,
    pub coverage: Option<CoverageFile>,
    pub curves: Vec<CurveFile>,
    /// What could not be read, shown on the page (the rest still is).
    pub notes: Vec<String>,
    /// An earlier run of the campaign to compare with (`--baseline`):
    /// which signatures are new, which are gone.
    pub baseline: Option<Baseline>,
    /// A workload run (`pccx-cosim workload --report`).
    pub workload: Option<crate::workload::WorkloadReport>,
}

/// What a page needs of an earlier run: its failure signatures, its build.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    pub dirs: Vec<PathBuf>,
    /// Seeds recorded.
    pub seeds: u64,
    /// Each signature with the number of its seeds.
    pub signatures: std::collections::BTreeMap<String, usize>,
    /// The git commit its last run was built from.
    pub commit: Option<String>,
    /// When its last run started (seconds since the epoch).
    pub started_unix: Option<u64>,
}

/// A campaign: one directory's, the merge of several, or a run in memory.
#[derive(Clone, Debug)]
pub struct CampaignPart {
    pub file: CampaignFile,
    /// What ran (I/O, timing, fault, ...), from `campaign.json`.
    pub identity: Option<RunIdentity>,
    /// The processes that ran it, oldest first (each with its build).
    pub runs: Vec<RunEntry>,
    /// Where a record's artefact files are looked for when the path it
    /// gives does not lead to them (the run was elsewhere).
    pub dirs: Vec<PathBuf>,
    pub cluster: Option<Cluster>,
}

/// A mutation run: one directory's, or the merge of several.
#[derive(Clone, Debug)]
pub struct MutationPart {
    pub report: MutateReport,
    pub header: Option<MutateHeader>,
    pub cluster: Option<Cluster>,
}

/// A run in shards: a Slurm job's, or shard directories merged by hand.
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    pub shards: Vec<ShardRow>,
    /// Shards of the run with no directory, each with what it lacks.
    pub absent: Vec<String>,
    /// The commands that run exactly what is missing.
    pub rerun: Vec<String>,
    pub job: Option<JobPart>,
    /// Records that repeated a seed or mutant (reruns), dropped.
    pub duplicates: usize,
    /// Seeds or mutants whose records disagree.
    pub conflicting: Vec<String>,
}

/// One shard's directory as the report found it.
#[derive(Clone, Debug)]
pub struct ShardRow {
    pub dir: PathBuf,
    pub shard: Option<Shard>,
    pub records: usize,
    /// Seeds (or mutants) of its shard with no record anywhere.
    pub missing: usize,
    /// How its last run ended, `None` if it never finished.
    pub last_run: Option<RunEnded>,
    /// Its array task's state, when a Slurm job ran it and the state is
    /// known.
    pub scheduler: Option<TaskState>,
    /// Its task's Slurm log, when there is one.
    pub log: Option<PathBuf>,
    /// The host of each run in its directory, in order, with how the run
    /// ended (`node2 (did not finish)`): where a requeued task went.
    pub hosts: Vec<String>,
    /// Its task's states as `slurm wait` saw them change, when Slurm ran
    /// it more than once (requeued).
    pub requeued: Vec<TaskState>,
}

/// The Slurm job that ran the shards.
#[derive(Clone, Debug)]
pub struct JobPart {
    pub job_id: String,
    /// Where the task states come from (squeue now, or the last `slurm
    /// wait`), or why they are unknown.
    pub states_from: String,
}

/// Writes the page for `inputs` to `path`: whole, through a file beside it
/// renamed over it, so a reader never opens half a page. Links are made
/// relative to `path`'s directory.
pub fn write(path: &Path, inputs: &Inputs) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "{}: cannot write the report: {} is not a directory",
            path.display(),
            dir.display()
        ));
    }
    let text = render(inputs, &dir);
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| format!("{}: cannot write the report: {e}", path.display()))
}

/// The page for `inputs`, its links relative to `page_dir`.
pub fn render(inputs: &Inputs, page_dir: &Path) -> String {
    let (title, body) = sections::body(inputs, page_dir);
    html::page(&title, &body)
}
