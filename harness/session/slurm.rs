//! The wait for a Slurm array and its verdict: which tasks failed or fell short, the merged report and page, and the command that runs exactly those tasks again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{write_file, EXIT_ERROR};
use crate::regress::campaign::Shard;
use crate::regress::identity::{self, shell_word, Rerun};
use crate::regress::slurm::{self, ArrayJob, JobRecord};
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
    for (i, steps) in waited.requeued() {
        let steps: Vec<String> = steps.iter().map(slurm::TaskState::describe).collect();
        say!("    task {i}: requeued: {}", steps.join(" -> "));
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

/// What every job array takes (`slurm submit` and `slurm submit-mutate`).
#[derive(Clone, Debug)]
pub struct ArrayRequest {
    /// Shards, one array task each.
    pub shards: u64,
    /// The run's directory, on a filesystem every node sees.
    pub out: PathBuf,
    /// Cores per task (sbatch --cpus-per-task), and the task's --jobs.
    pub cpus_per_task: u32,
    /// Time limit of each task (sbatch --time).
    pub time: Option<String>,
    /// Partition (sbatch --partition).
    pub partition: Option<String>,
    /// More sbatch options, each one `#SBATCH` line.
    pub sbatch_args: Vec<String>,
    /// Write and print the script and the sbatch command; submit nothing.
    pub dry_run: bool,
}

/// The campaign each task of a `slurm submit` array runs its shard of.
#[derive(Clone, Debug)]
pub struct CampaignArray {
    pub seed: u64,
    pub count: u64,
    pub instrs: usize,
    /// A shipped configuration's name.
    pub config: String,
    /// The campaign's --seed-timeout, as given.
    pub seed_timeout: Option<String>,
    /// Each shard samples coverage into its directory.
    pub coverage: bool,
    /// More campaign flags, each as given.
    pub campaign_args: Vec<String>,
}

/// What a submission did.
#[derive(Clone, Debug)]
pub enum Submitted {
    /// `--dry-run`: the script is written and printed, nothing submitted.
    DryRun,
    /// The job runs; its record is in `dir` (absolute).
    Job { dir: PathBuf },
}

/// Submits a campaign as a job array: every task resumes its shard's
/// directory, so a requeued task reruns only what is missing.
pub fn submit_campaign(c: &CampaignArray, a: &ArrayRequest) -> Result<Submitted, String> {
    if a.shards > c.count.max(1) {
        return Err(format!(
            "--shards {}: between 1 and --count ({})",
            a.shards, c.count
        ));
    }
    // A steered campaign cannot resume (its cases are made from the
    // coverage of the ones before): say so now, not in each task's log.
    if c.campaign_args.iter().any(|arg| arg == "--steer") {
        return Err(
            "--campaign-arg --steer: a Slurm task resumes its shard after a requeue, and a \
             steered campaign cannot resume (its cases are made from the coverage of the ones \
             before); run steered shards with `pccx-cosim --steer --shard I/N` directly"
                .into(),
        );
    }
    let mut args: Vec<String> = vec![
        "--seed".into(),
        c.seed.to_string(),
        "--count".into(),
        c.count.to_string(),
        "--instrs".into(),
        c.instrs.to_string(),
        "--config".into(),
        c.config.clone(),
        "--jobs".into(),
        a.cpus_per_task.to_string(),
    ];
    if let Some(t) = &c.seed_timeout {
        args.extend(["--seed-timeout".to_string(), t.clone()]);
    }
    args.extend(c.campaign_args.iter().cloned());
    let task_args = if c.coverage {
        vec!["--coverage \"$out\"/coverage.json".to_string()]
    } else {
        Vec::new()
    };
    submit(args, task_args, None, a)
}

/// Submits a mutation run as a job array: each task runs its shard of the
/// mutants from this repository's root (which every node must see).
pub fn submit_mutation(mutate_args: &[String], a: &ArrayRequest) -> Result<Submitted, String> {
    let root =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    if !root.join("hw/rtl/manifest.txt").exists() {
        return Err(
            "submit-mutate runs from the repository root (no hw/rtl/manifest.txt here), \
             which every node must see"
                .into(),
        );
    }
    let mut args = vec!["mutate".to_string()];
    args.extend(mutate_args.iter().cloned());
    args.extend(["--jobs".to_string(), a.cpus_per_task.to_string()]);
    // Each task builds its mutants in its own directory.
    let task_args = vec!["--work \"$out\"/build".to_string()];
    submit(args, task_args, Some(root), a)
}

fn submit(
    args: Vec<String>,
    task_args: Vec<String>,
    workdir: Option<PathBuf>,
    a: &ArrayRequest,
) -> Result<Submitted, String> {
    if a.shards == 0 {
        return Err("--shards 0: a job array needs one task at least".into());
    }
    let dir = std::path::absolute(&a.out).map_err(|e| format!("--out {}: {e}", a.out.display()))?;
    // The `#SBATCH --output` line names DIR, and such a line ends at the
    // first blank.
    if dir.display().to_string().chars().any(char::is_whitespace) {
        return Err(format!(
            "--out {}: a path with blanks cannot go into an #SBATCH line; choose another",
            dir.display()
        ));
    }
    // Slurm opens each task's output file before the script runs, so the
    // shard directories must exist.
    for i in 0..a.shards {
        let d = slurm::shard_dir(&dir, i);
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: cannot create: {e}", d.display()))?;
    }
    let binary =
        std::env::current_exe().map_err(|e| format!("cannot find this binary's path: {e}"))?;
    let mut sbatch_args = vec![format!("--cpus-per-task={}", a.cpus_per_task)];
    sbatch_args.extend(a.sbatch_args.iter().cloned());
    let job = ArrayJob {
        binary,
        args,
        shards: a.shards,
        dir: dir.clone(),
        job_name: "pccx-cosim".into(),
        time: a.time.clone(),
        partition: a.partition.clone(),
        sbatch_args,
        task_args,
        workdir,
    };
    let script_path = dir.join(slurm::SCRIPT_FILE);
    let script = job.script();
    write_file(&script_path, script.clone())?;
    if a.dry_run {
        say!("{script}");
        say!(
            "# not submitted (--dry-run); to submit: sbatch --parsable {}",
            shell_word(&script_path.display().to_string())
        );
        return Ok(Submitted::DryRun);
    }
    let job_id = slurm::submit(&script_path)?;
    JobRecord {
        job_id: job_id.clone(),
        shards: a.shards,
        submitted_unix: journal::unix_now(),
        script: script_path.display().to_string(),
    }
    .write(&dir)?;
    say!(
        "submitted job {job_id}: {} tasks, one per shard, into {}; watch it with `pccx-cosim slurm wait {}`",
        a.shards,
        dir.display(),
        shell_word(&dir.display().to_string())
    );
    Ok(Submitted::Job { dir })
}
