//! `pccx-cosim slurm submit|wait|cancel`: a campaign as a Slurm job array, watched to its end and merged.

use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::config::{self, HwConfig};
use crate::regress::slurm::{self, JobRecord};
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
    let campaign = session::slurm::CampaignArray {
        seed: a.seed,
        count: a.count,
        instrs: a.instrs,
        config: a.config.name.to_string(),
        seed_timeout: a.seed_timeout.clone(),
        coverage: a.coverage,
        campaign_args: a.campaign_arg.clone(),
    };
    let submitted =
        session::slurm::submit_campaign(&campaign, &a.array.request()).map_err(Failure::Message)?;
    after_submit(submitted, a.array)
}

fn submit_mutate(a: SubmitMutateArgs) -> Result<ExitCode, Failure> {
    let submitted = session::slurm::submit_mutation(&a.mutate_arg, &a.array.request())
        .map_err(Failure::Message)?;
    after_submit(submitted, a.array)
}

impl ArrayOptions {
    fn request(&self) -> session::slurm::ArrayRequest {
        session::slurm::ArrayRequest {
            shards: self.shards,
            out: self.out.clone(),
            cpus_per_task: self.cpus_per_task,
            time: self.time.clone(),
            partition: self.partition.clone(),
            sbatch_args: self.sbatch_arg.clone(),
            dry_run: self.dry_run,
        }
    }
}

/// With `--wait`, a submitted job is watched to its end.
fn after_submit(
    submitted: session::slurm::Submitted,
    a: ArrayOptions,
) -> Result<ExitCode, Failure> {
    match submitted {
        session::slurm::Submitted::Job { dir } if a.wait => wait_and_report(&dir, a.deadline),
        _ => Ok(ExitCode::SUCCESS),
    }
}
