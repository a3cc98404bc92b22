//! `pccx-cosim slurm submit|wait|cancel`: a campaign as a Slurm job array, watched to its end and merged.

use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::config::{self, HwConfig};
use crate::regress::identity::shell_word;
use crate::regress::journal;
use crate::regress::slurm::{self, ArrayJob, JobRecord};
use crate::session;

use super::args::{config_values, parse_u64};
use super::Failure;

#[derive(Args)]
pub(super) struct SlurmArgs {
    #[command(subcommand)]
    command: SlurmCommand,
}

#[derive(Subcommand)]
enum SlurmCommand {
    /// Write the sbatch script of a job array (one task per shard, each
    /// resuming its shard's directory DIR/shard-i), submit it with sbatch,
    /// and record the job in DIR/slurm-job.json.
    Submit(SubmitArgs),
    /// `submit` for a mutation run: each task runs its shard of the
    /// mutants (`pccx-cosim mutate --shard i/N --out DIR/shard-i --resume`)
    /// from this repository's root; `slurm wait` merges them.
    SubmitMutate(SubmitMutateArgs),
    /// Watch the job submitted into DIR until its tasks end (or the
    /// deadline), report the tasks that failed, merge the shards into
    /// DIR/merged.json and DIR/merged.xml, and print the command that reruns
    /// the missing seeds. Exit as `merge` does; 2 also when a task failed.
    Wait(WaitArgs),
    /// Cancel the job submitted into DIR (scancel).
    Cancel {
        /// The directory `submit --out` wrote.
        dir: PathBuf,
    },
}

#[derive(Args)]
struct SubmitArgs {
    /// First seed.
    #[arg(long, value_parser = parse_u64)]
    seed: u64,
    /// Seeds of the whole campaign.
    #[arg(long)]
    count: u64,
    #[arg(long, default_value_t = 40)]
    instrs: usize,
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = config_values())]
    config: HwConfig,
    /// Wall-clock limit per seed, in seconds (the campaign's
    /// --seed-timeout).
    #[arg(long, value_name = "SECONDS")]
    seed_timeout: Option<String>,
    /// Each shard samples functional coverage into DIR/shard-i/coverage.json
    /// (`merge --coverage` sums them).
    #[arg(long)]
    coverage: bool,
    /// More campaign flags for every task, each as given (`--campaign-arg=--io
    /// --campaign-arg=stall`).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    campaign_arg: Vec<String>,
    #[command(flatten)]
    array: ArrayOptions,
}

#[derive(Args)]
struct SubmitMutateArgs {
    /// The flags of `pccx-cosim mutate` for every task, each as given
    /// (`--mutate-arg=--sample --mutate-arg=0`); `--shard`, `--out`,
    /// `--resume` and `--work` are added per task.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    mutate_arg: Vec<String>,
    #[command(flatten)]
    array: ArrayOptions,
}

/// What every job array takes.
#[derive(Args)]
struct ArrayOptions {
    /// Shards, one array task each.
    #[arg(long)]
    shards: u64,
    /// The run's directory, on a filesystem every node sees.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Cores per task (sbatch --cpus-per-task), and the task's --jobs.
    #[arg(long, default_value_t = 1)]
    cpus_per_task: u32,
    /// Time limit of each task (sbatch --time).
    #[arg(long)]
    time: Option<String>,
    /// Partition (sbatch --partition).
    #[arg(long)]
    partition: Option<String>,
    /// More sbatch options, each one `#SBATCH` line (`--sbatch-arg=--mem=2G`).
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    sbatch_arg: Vec<String>,
    /// Write and print the script and the sbatch command; submit nothing.
    #[arg(long)]
    dry_run: bool,
    /// After submitting, wait as `slurm wait` does.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    deadline: DeadlineArgs,
}

#[derive(Args)]
struct WaitArgs {
    /// The directory `submit --out` wrote.
    dir: PathBuf,
    #[command(flatten)]
    deadline: DeadlineArgs,
}

#[derive(Args, Clone, Copy)]
struct DeadlineArgs {
    /// Give up waiting after this many seconds (the job goes on).
    #[arg(long, value_name = "SECONDS", default_value_t = 6 * 3600)]
    wait_timeout: u64,
    /// Seconds between two looks at the job's tasks.
    #[arg(long, value_name = "SECONDS", default_value_t = 2)]
    poll: u64,
}

pub(super) fn slurm(args: SlurmArgs) -> Result<ExitCode, Failure> {
    match args.command {
        SlurmCommand::Submit(a) => submit_campaign(a),
        SlurmCommand::SubmitMutate(a) => submit_mutate(a),
        SlurmCommand::Wait(a) => wait_and_report(&a.dir, a.deadline),
        SlurmCommand::Cancel { dir } => {
            let job = JobRecord::read(&dir).map_err(Failure::Message)?;
            slurm::cancel(&job.job_id).map_err(Failure::Message)?;
            say!("cancelled job {}", job.job_id);
            Ok(ExitCode::SUCCESS)
        }
    }
}

impl DeadlineArgs {
    fn deadline(self) -> session::slurm::Deadline {
        session::slurm::Deadline {
            poll: Duration::from_secs(self.poll),
            timeout: Duration::from_secs(self.wait_timeout),
        }
    }
}

/// Waits and reports (`session::slurm`), its verdict as the exit status.
fn wait_and_report(dir: &Path, deadline: DeadlineArgs) -> Result<ExitCode, Failure> {
    session::slurm::wait_and_report(dir, &deadline.deadline())
        .map(ExitCode::from)
        .map_err(Failure::Message)
}

fn submit_campaign(a: SubmitArgs) -> Result<ExitCode, Failure> {
    if a.array.shards > a.count.max(1) {
        return Err(Failure::Message(format!(
            "--shards {}: between 1 and --count ({})",
            a.array.shards, a.count
        )));
    }
    let mut args: Vec<String> = [
        "--seed".to_string(),
        a.seed.to_string(),
        "--count".into(),
        a.count.to_string(),
        "--instrs".into(),
        a.instrs.to_string(),
        "--config".into(),
        a.config.name.to_string(),
        "--jobs".into(),
        a.array.cpus_per_task.to_string(),
    ]
    .to_vec();
    if let Some(t) = &a.seed_timeout {
        args.extend(["--seed-timeout".to_string(), t.clone()]);
    }
    // Every task resumes its shard (a requeued task reruns only what is
    // missing), which a steered campaign cannot do: say so now, not in
    // each task's log.
    if a.campaign_arg.iter().any(|c| c == "--steer") {
        return Err(Failure::Message(
            "--campaign-arg --steer: a Slurm task resumes its shard after a requeue, and a \
             steered campaign cannot resume (its cases are made from the coverage of the ones \
             before); run steered shards with `pccx-cosim --steer --shard I/N` directly"
                .into(),
        ));
    }
    args.extend(a.campaign_arg.iter().cloned());
    let task_args = if a.coverage {
        vec!["--coverage \"$out\"/coverage.json".to_string()]
    } else {
        Vec::new()
    };
    submit(args, task_args, None, a.array)
}

fn submit_mutate(a: SubmitMutateArgs) -> Result<ExitCode, Failure> {
    let root = std::env::current_dir()
        .map_err(|e| Failure::Message(format!("cannot read the current directory: {e}")))?;
    if !root.join("hw/rtl/manifest.txt").exists() {
        return Err(Failure::Message(
            "submit-mutate runs from the repository root (no hw/rtl/manifest.txt here), \
             which every node must see"
                .into(),
        ));
    }
    let mut args = vec!["mutate".to_string()];
    args.extend(a.mutate_arg.iter().cloned());
    args.extend(["--jobs".to_string(), a.array.cpus_per_task.to_string()]);
    // Each task builds its mutants in its own directory.
    let task_args = vec!["--work \"$out\"/build".to_string()];
    submit(args, task_args, Some(root), a.array)
}

fn submit(
    args: Vec<String>,
    task_args: Vec<String>,
    workdir: Option<PathBuf>,
    a: ArrayOptions,
) -> Result<ExitCode, Failure> {
    if a.shards == 0 {
        return Err(Failure::Message(
            "--shards 0: a job array needs one task at least".into(),
        ));
    }
    let dir = std::path::absolute(&a.out)
        .map_err(|e| Failure::Message(format!("--out {}: {e}", a.out.display())))?;
    // The `#SBATCH --output` line names DIR, and such a line ends at the
    // first blank.
    if dir.display().to_string().chars().any(char::is_whitespace) {
        return Err(Failure::Message(format!(
            "--out {}: a path with blanks cannot go into an #SBATCH line; choose another",
            dir.display()
        )));
    }
    // Slurm opens each task's output file before the script runs, so the
    // shard directories must exist.
    for i in 0..a.shards {
        let d = slurm::shard_dir(&dir, i);
        std::fs::create_dir_all(&d)
            .map_err(|e| Failure::Message(format!("{}: cannot create: {e}", d.display())))?;
    }
    let binary = std::env::current_exe()
        .map_err(|e| Failure::Message(format!("cannot find this binary's path: {e}")))?;
    let mut sbatch_args = vec![format!("--cpus-per-task={}", a.cpus_per_task)];
    sbatch_args.extend(a.sbatch_arg.iter().cloned());
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
    std::fs::write(&script_path, &script)
        .map_err(|e| Failure::Message(format!("{}: cannot write: {e}", script_path.display())))?;
    let sbatch = format!(
        "sbatch --parsable {}",
        shell_word(&script_path.display().to_string())
    );
    if a.dry_run {
        say!("{script}");
        say!("# not submitted (--dry-run); to submit: {sbatch}");
        return Ok(ExitCode::SUCCESS);
    }
    let job_id = slurm::submit(&script_path).map_err(Failure::Message)?;
    JobRecord {
        job_id: job_id.clone(),
        shards: a.shards,
        submitted_unix: journal::unix_now(),
        script: script_path.display().to_string(),
    }
    .write(&dir)
    .map_err(Failure::Message)?;
    say!(
        "submitted job {job_id}: {} tasks, one per shard, into {}; watch it with `pccx-cosim slurm wait {}`",
        a.shards,
        dir.display(),
        shell_word(&dir.display().to_string())
    );
    if a.wait {
        wait_and_report(&dir, a.deadline)
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
