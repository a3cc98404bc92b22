//! The wait for a Slurm array and its verdict: which tasks failed or fell short, the merged report and page, and the command that runs exactly those tasks again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{write_file, EXIT_ERROR};
use crate::regress::campaign::Shard;
use crate::regress::identity::{self, Rerun};
use crate::regress::slurm::{self, JobRecord};
use crate::regress::{journal, junit, merge};
use crate::tools::mutants;

/// How `slurm wait` polls and how long it waits.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    /// Between two looks at the queue (at least a second).
    pub poll: Duration,
    /// After which the wait gives up on tasks still going.
    pub timeout: Duration,
}

/// The page `slurm wait` writes into a submission's directory.
const REPORT_FILE: &str = "report.html";

/// Waits for the array job recorded in `dir` (`slurm::JobRecord`), then
/// merges its shards into `merged.json` (and `merged.xml`), writes the page
/// and prints the command that runs exactly the tasks that fell short.
/// Returns the exit status: the merge's verdict, or [`EXIT_ERROR`] when a
/// task failed, the wait ran out or nothing was written.
pub fn wait_and_report(dir: &Path, deadline: &Deadline) -> Result<u8, String> {
    let job = JobRecord::read(dir)?;
    let waited = slurm::wait(
        &job.job_id,
        job.shards,
        deadline.poll.max(Duration::from_secs(1)),
        deadline.timeout,
        &mut |i, s| say!("task {i}: {} ({})", s.state, s.reason),
    )?;
    // For the report of the morning after: squeue forgets finished tasks.
    waited.write(dir)?;
    let failed: Vec<(u64, &slurm::TaskState)> = waited
        .tasks
        .iter()
        .filter(|(_, s)| s.failed())
        .map(|(i, s)| (*i, s))
        .collect();
    say!(
        "job {}: {} tasks, {} failed{}",
        job.job_id,
        job.shards,
        failed.len(),
        if waited.timed_out {
            ", still going at the wait's deadline"
        } else {
            ""
        }
    );
    for (i, s) in &failed {
        say!(
            "    task {i}: {} ({}), log {}",
            s.state,
            s.reason,
            slurm::shard_dir(dir, *i)
                .join(format!("slurm-{}_{i}.out", job.job_id))
                .display()
        );
    }
    for i in &waited.unseen {
        say!("    task {i}: ended between two looks; judged by its records");
    }
    let dirs: Vec<PathBuf> = (0..job.shards).map(|i| slurm::shard_dir(dir, i)).collect();
    let mutation = dirs.iter().any(|d| d.join(mutants::MUTATE_FILE).exists());
    let header_file = if mutation {
        mutants::MUTATE_FILE
    } else {
        journal::CAMPAIGN_FILE
    };
    let present: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| d.join(header_file).exists())
        .cloned()
        .collect();
    if present.is_empty() {
        say!("no shard wrote a {header_file}: nothing to merge");
        return Ok(EXIT_ERROR);
    }
    let json = dir.join("merged.json");
    // The shards with something missing, by task index, and the code.
    let (short, code) = if mutation {
        let m = mutants::merge(&present)?;
        let text = serde_json::to_string_pretty(&m.report).expect("reports serialise");
        write_file(&json, text + "\n")?;
        say!("{}", m.report.text("hw/mutants/equivalent.txt"));
        say!("merged report: {}", json.display());
        let missing: std::collections::HashSet<&String> = m.report.missing.iter().collect();
        let short: Vec<u64> = (0..job.shards)
            .filter(|&i| {
                m.header
                    .mutants
                    .iter()
                    .enumerate()
                    .any(|(k, id)| k as u64 % job.shards == i && missing.contains(id))
            })
            .collect();
        if !short.is_empty() {
            say!(
                "incomplete: {} mutants have no record",
                m.report.missing.len()
            );
        }
        (short, m.exit_code())
    } else {
        let merged = merge::merge(&present)?;
        let xml = dir.join("merged.xml");
        let text = serde_json::to_string_pretty(&merged.file).expect("reports serialise");
        write_file(&json, text + "\n")?;
        write_file(&xml, junit::render(&merged.file))?;
        say!("{}", merged.file.summary.text());
        if let Some(t) = merged.file.signature_text() {
            say!("{t}");
        }
        say!("merged report: {} and {}", json.display(), xml.display());
        let first = merged.identity.first_seed;
        let short: Vec<u64> = (0..job.shards)
            .filter(|&i| {
                let shard = Shard {
                    index: i,
                    count: job.shards,
                };
                merged
                    .file
                    .missing_seeds
                    .iter()
                    .any(|&s| shard.holds(s - first))
            })
            .collect();
        if !short.is_empty() {
            say!(
                "incomplete: {} seeds missing ({})",
                merged.file.missing_seeds.len(),
                merge::ranges(&merged.file.missing_seeds)
            );
        }
        (short, merged.exit_code())
    };
    // The morning-after page of the submission, beside merged.json.
    let page = dir.join(REPORT_FILE);
    let extra = crate::report::Extra {
        offline: true,
        ..Default::default()
    };
    match crate::report::from_dirs(std::slice::from_ref(&dir.to_path_buf()), &extra) {
        Ok(inputs) => super::write_report(&page, &inputs)?,
        Err(e) => eprintln!("pccx-cosim: no report page: {e}"),
    }
    if !short.is_empty() {
        say!("to run exactly those (each task resumes its shard):");
        say!(
            "    {}",
            identity::command(&Rerun::SlurmTasks {
                script: Path::new(&job.script),
                tasks: &short,
            })
        );
    }
    Ok(if code == 0 && (!failed.is_empty() || waited.timed_out) {
        EXIT_ERROR
    } else {
        code
    })
}
