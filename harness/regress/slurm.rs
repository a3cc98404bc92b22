//! Campaigns as Slurm job arrays: the sbatch script of one (a shard per
//! task), its submission, and the watch over its tasks, through Slurm's own
//! commands (`sbatch`, `squeue`, `scancel`); no scheduler of our own
//! (docs/scale-out.md).

use super::identity::shell_word;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The script a submission writes into its directory.
pub const SCRIPT_FILE: &str = "campaign.sbatch";
/// The job a submission started.
pub const JOB_FILE: &str = "slurm-job.json";
/// How many times a task runs its shard again, resumed, after the process
/// was killed by a signal (a SIGKILL, a lost child), before it gives up.
pub const ATTEMPTS: u32 = 3;

/// What one array task runs: `pccx-cosim` with these arguments, then
/// `--shard $TASK/N --out DIR/shard-$TASK --resume`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayJob {
    /// The binary every task runs (on a filesystem every node sees).
    pub binary: PathBuf,
    /// The subcommand and flags shared by every task (`--seed`, `--count`,
    /// ...), without `--shard`, `--out` and `--resume`.
    pub args: Vec<String>,
    pub shards: u64,
    /// The directory of the whole run; task i writes `DIR/shard-i`.
    pub dir: PathBuf,
    pub job_name: String,
    /// `--time` for each task.
    pub time: Option<String>,
    pub partition: Option<String>,
    /// More `#SBATCH` lines, as given.
    pub sbatch_args: Vec<String>,
    /// More arguments of every task, as shell text we wrote (they may
    /// name `$out`, the task's shard directory).
    pub task_args: Vec<String>,
    /// The directory each task runs in (`mutate` runs from the
    /// repository's root); `None`: where sbatch was run.
    pub workdir: Option<PathBuf>,
}

/// `DIR/shard-i`.
pub fn shard_dir(dir: &Path, index: u64) -> PathBuf {
    dir.join(format!("shard-{index}"))
}

impl ArrayJob {
    /// The sbatch script.
    pub fn script(&self) -> String {
        let dir = self.dir.display().to_string();
        let mut s = String::from("#!/bin/bash\n");
        s += "# Written by `pccx-cosim slurm submit` (docs/scale-out.md): one array task\n";
        s += "# per shard; each resumes its shard's directory, so a requeued or rerun\n";
        s += "# task runs only the seeds its shard has no record of.\n";
        let mut directive = |d: String| s += &format!("#SBATCH {d}\n");
        directive(format!("--job-name={}", self.job_name));
        directive(format!("--array=0-{}", self.shards.saturating_sub(1)));
        directive("--requeue".into());
        directive("--ntasks=1".into());
        directive(format!("--output={dir}/shard-%a/slurm-%A_%a.out"));
        if let Some(t) = &self.time {
            directive(format!("--time={t}"));
        }
        if let Some(p) = &self.partition {
            directive(format!("--partition={p}"));
        }
        for a in &self.sbatch_args {
            directive(a.clone());
        }
        let args: Vec<String> = self.args.iter().map(|a| shell_word(a)).collect();
        s += &format!(
            "{cd}set -u
task=\"${{SLURM_ARRAY_TASK_ID:?not in a Slurm array task}}\"
out={dir_word}/shard-\"$task\"
mkdir -p \"$out\"
attempt=1
while :; do
    {bin} {args}{task_args} --shard \"$task\"/{shards} --out \"$out\" --resume
    status=$?
    # 128 + N: the process was killed by signal N. Run the shard again,
    # resumed, unless this was the last attempt.
    if [ \"$status\" -lt 128 ] || [ \"$attempt\" -ge {ATTEMPTS} ]; then
        break
    fi
    echo \"pccx-cosim slurm: attempt $attempt ended by signal $((status - 128)); resuming\" >&2
    attempt=$((attempt + 1))
done
# 0 all matched, 1 a seed mismatched or timed out: the shard ran to its end
# and its records say the rest, so the task completed. Anything else (2 an
# error, 3 interrupted, 4 a seed stuck) fails the task.
case \"$status\" in
    0|1) exit 0 ;;
    *) exit \"$status\" ;;
esac
",
            cd = self.workdir.as_ref().map_or(String::new(), |d| format!(
                "cd {} || exit 2\n",
                shell_word(&d.display().to_string())
            )),
            bin = shell_word(&self.binary.display().to_string()),
            dir_word = shell_word(&dir),
            args = args.join(" "),
            shards = self.shards,
            task_args = self
                .task_args
                .iter()
                .map(|a| format!(" {a}"))
                .collect::<String>(),
        );
        s
    }
}

/// `DIR/slurm-job.json`: the job a submission started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub job_id: String,
    pub shards: u64,
    pub submitted_unix: u64,
    pub script: String,
}

impl Waited {
    /// Writes `DIR/slurm-states.json` whole.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        super::journal::write_header(dir, STATES_FILE, self)
    }

    /// Reads `DIR/slurm-states.json`; `Ok(None)` if no wait wrote one.
    pub fn read(dir: &Path) -> Result<Option<Waited>, String> {
        super::journal::read_header(dir, STATES_FILE)
    }
}

impl JobRecord {
    pub fn read(dir: &Path) -> Result<JobRecord, String> {
        let path = dir.join(JOB_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: cannot read: {e} (no job was submitted here)",
                path.display()
            )
        })?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))
    }

    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(JOB_FILE);
        let text = serde_json::to_string_pretty(self).expect("job records serialise") + "\n";
        std::fs::write(&path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))
    }
}

/// Runs a Slurm command; its stdout, or an error with its stderr.
fn slurm(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        format!("cannot run `{program}`: {e} (is Slurm's client installed and on PATH?)")
    })?;
    if !out.status.success() {
        return Err(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Submits `script` with `sbatch --parsable`; the job id.
pub fn submit(script: &Path) -> Result<String, String> {
    let out = slurm("sbatch", &["--parsable", &script.display().to_string()])?;
    // `--parsable` prints `id` or `id;cluster`.
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("sbatch printed `{}`, not a job id", out.trim()));
    }
    Ok(id)
}

/// `scancel JOB`.
pub fn cancel(job_id: &str) -> Result<(), String> {
    slurm("scancel", &[job_id]).map(|_| ())
}

/// A task's state as Slurm reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskState {
    pub state: String,
    pub reason: String,
    /// The node it runs (or ran) on, when squeue names one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
}

impl TaskState {
    /// The task will not change any more.
    pub fn is_final(&self) -> bool {
        !matches!(
            self.state.as_str(),
            "PENDING"
                | "RUNNING"
                | "REQUEUED"
                | "CONFIGURING"
                | "COMPLETING"
                | "SUSPENDED"
                | "RESIZING"
                | "REQUEUE_HOLD"
                | "REQUEUE_FED"
                | "SIGNALING"
                | "STAGE_OUT"
        ) || self.is_held()
    }

    /// Held: it waits for a person, not for the scheduler (a task whose
    /// launch failed is held after its requeue).
    pub fn is_held(&self) -> bool {
        self.state == "REQUEUE_HOLD" || self.reason.to_ascii_lowercase().contains("held")
    }

    /// It ended without running its shard to the end.
    pub fn failed(&self) -> bool {
        self.is_final() && self.state != "COMPLETED"
    }

    /// `RUNNING`, `PENDING (BeginTime)`: the state with its reason, when
    /// squeue gives one.
    pub fn with_reason(&self) -> String {
        if self.reason.is_empty() || self.reason == "None" {
            self.state.clone()
        } else {
            format!("{} ({})", self.state, self.reason)
        }
    }

    /// `RUNNING on node1`, `PENDING (BeginTime)`: one step of a task's
    /// history.
    pub fn describe(&self) -> String {
        let mut s = self.with_reason();
        if !self.node.is_empty() && self.state != "PENDING" {
            s += &format!(" on {}", self.node);
        }
        s
    }
}

/// The states of the job's array tasks by index, from `squeue` (tasks it
/// still lists: finished ones for `MinJobAge` seconds).
pub fn task_states(job_id: &str) -> Result<BTreeMap<u64, TaskState>, String> {
    let out = slurm(
        "squeue",
        &["-h", "-r", "-t", "all", "-j", job_id, "-o", "%i|%T|%N|%r"],
    )?;
    let mut states = BTreeMap::new();
    for line in out.lines() {
        let mut parts = line.trim().splitn(4, '|');
        let (Some(id), Some(state), node, reason) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some(index) = id.rsplit_once('_').and_then(|(_, i)| i.parse::<u64>().ok()) else {
            continue;
        };
        states.insert(
            index,
            TaskState {
                state: state.to_string(),
                reason: reason.unwrap_or("").to_string(),
                node: node.unwrap_or("").trim().to_string(),
            },
        );
    }
    Ok(states)
}

/// The state of one job (`JOB` or an array task `JOB_TASK`), from
/// `squeue`; `Ok(None)` when squeue does not (or no longer) list it.
pub fn job_state(job: &str) -> Result<Option<TaskState>, String> {
    let out = Command::new("squeue")
        .args(["-h", "-t", "all", "-j", job, "-o", "%T|%N|%r"])
        .output()
        .map_err(|e| format!("cannot run squeue: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // A job squeue has forgotten: "Invalid job id specified".
        if stderr.contains("Invalid job id") {
            return Ok(None);
        }
        return Err(format!("squeue failed ({}): {}", out.status, stderr.trim()));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ok(stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|line| {
            let mut parts = line.splitn(3, '|');
            let mut next = || parts.next().unwrap_or("").trim().to_string();
            let (state, node, reason) = (next(), next(), next());
            TaskState {
                state,
                reason,
                node,
            }
        }))
}

/// What `slurm wait` (or `submit --wait`) last saw of the job's tasks,
/// kept because squeue forgets a finished task after `MinJobAge`.
pub const STATES_FILE: &str = "slurm-states.json";

/// What [`wait`] saw; `DIR/slurm-states.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Waited {
    /// The last state seen of each task.
    pub tasks: BTreeMap<u64, TaskState>,
    /// Tasks squeue stopped listing before they were seen to end.
    pub unseen: Vec<u64>,
    /// The deadline passed with tasks still going.
    pub timed_out: bool,
    /// Each task's states as they changed.
    #[serde(default)]
    pub history: BTreeMap<u64, Vec<TaskState>>,
}

impl Waited {
    /// The tasks Slurm ran more than once (requeued: a node failed under
    /// it, or a person requeued it), each with its history: seen running,
    /// then pending or requeued again, or seen in `NODE_FAIL`/`REQUEUED`.
    pub fn requeued(&self) -> BTreeMap<u64, &[TaskState]> {
        self.history
            .iter()
            .filter(|(_, steps)| requeued(steps))
            .map(|(i, steps)| (*i, steps.as_slice()))
            .collect()
    }
}

/// Whether a task's history (as [`Waited::history`] keeps it) shows it
/// requeued.
pub fn requeued(steps: &[TaskState]) -> bool {
    let mut ran = false;
    for s in steps {
        match s.state.as_str() {
            "NODE_FAIL" | "REQUEUED" | "REQUEUE_HOLD" => return true,
            "PENDING" | "CONFIGURING" if ran => return true,
            "RUNNING" => ran = true,
            _ => {}
        }
    }
    false
}

/// Polls the job's tasks every `poll` until every one of `shards` is in a
/// final state (or held), or `deadline` passes. A task squeue no longer
/// lists keeps its last state seen; one never seen ended too soon to be
/// seen (it is judged by its shard's records).
pub fn wait(
    job_id: &str,
    shards: u64,
    poll: Duration,
    deadline: Duration,
    on_change: &mut dyn FnMut(u64, &TaskState),
) -> Result<Waited, String> {
    let started = Instant::now();
    let mut seen: BTreeMap<u64, TaskState> = BTreeMap::new();
    let mut history: BTreeMap<u64, Vec<TaskState>> = BTreeMap::new();
    loop {
        let now = task_states(job_id)?;
        for (i, s) in &now {
            if seen.get(i) != Some(s) {
                on_change(*i, s);
                seen.insert(*i, s.clone());
                history.entry(*i).or_default().push(s.clone());
            }
        }
        let going = (0..shards).any(|i| match (now.get(&i), seen.get(&i)) {
            (Some(s), _) => !s.is_final(),
            // Listed before and gone: ended (past MinJobAge, or purged).
            (None, Some(_)) => false,
            // Never listed: pending tasks are listed, so it ended between
            // two polls, unless the job is brand new.
            (None, None) => started.elapsed() < poll * 3,
        });
        if !going {
            let unseen = (0..shards).filter(|i| !seen.contains_key(i)).collect();
            return Ok(Waited {
                tasks: seen,
                unseen,
                timed_out: false,
                history,
            });
        }
        if started.elapsed() >= deadline {
            let unseen = (0..shards).filter(|i| !seen.contains_key(i)).collect();
            return Ok(Waited {
                tasks: seen,
                unseen,
                timed_out: true,
                history,
            });
        }
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(state: &str, reason: &str) -> TaskState {
        TaskState {
            state: state.into(),
            reason: reason.into(),
            node: String::new(),
        }
    }

    #[test]
    fn a_task_seen_running_then_pending_again_was_requeued() {
        let on = |st: &str, node: &str| TaskState {
            node: node.into(),
            ..state(st, "None")
        };
        let pending = |reason: &str| state("PENDING", reason);
        assert!(!requeued(&[
            pending("Priority"),
            on("RUNNING", "n1"),
            on("COMPLETED", "n1")
        ]));
        assert!(requeued(&[
            on("RUNNING", "n2"),
            pending("BeginTime"),
            on("RUNNING", "n1"),
            on("COMPLETED", "n1")
        ]));
        assert!(requeued(&[on("RUNNING", "n2"), on("NODE_FAIL", "n2")]));
        assert!(!requeued(&[on("RUNNING", "n2"), on("TIMEOUT", "n2")]));
        assert_eq!(on("RUNNING", "n2").describe(), "RUNNING on n2");
        assert_eq!(pending("BeginTime").describe(), "PENDING (BeginTime)");
        assert_eq!(pending("BeginTime").with_reason(), "PENDING (BeginTime)");
        assert_eq!(on("RUNNING", "n2").with_reason(), "RUNNING");
    }

    #[test]
    fn states_are_final_failed_or_held_as_slurm_means_them() {
        assert!(!state("RUNNING", "None").is_final());
        assert!(!state("PENDING", "Priority").is_final());
        assert!(state("PENDING", "launch failed requeued held").is_final());
        assert!(state("PENDING", "JobHeldAdmin").failed());
        assert!(state("COMPLETED", "None").is_final());
        assert!(!state("COMPLETED", "None").failed());
        for s in [
            "FAILED",
            "TIMEOUT",
            "NODE_FAIL",
            "CANCELLED",
            "OUT_OF_MEMORY",
        ] {
            assert!(state(s, "").failed(), "{s}");
        }
    }

    #[test]
    fn the_script_runs_each_shard_resumed_in_its_own_directory() {
        let job = ArrayJob {
            binary: "/shared/bin/pccx-cosim".into(),
            args: vec!["--seed".into(), "1".into(), "--count".into(), "2000".into()],
            shards: 8,
            dir: "/shared/run 1".into(),
            job_name: "pccx-cosim".into(),
            time: Some("00:30:00".into()),
            partition: None,
            sbatch_args: vec!["--mem=2G".into()],
            task_args: Vec::new(),
            workdir: None,
        };
        let s = job.script();
        assert!(s.contains("#SBATCH --array=0-7\n"), "{s}");
        assert!(s.contains("#SBATCH --requeue\n"));
        assert!(s.contains("#SBATCH --time=00:30:00\n"));
        assert!(s.contains("#SBATCH --mem=2G\n"));
        assert!(s.contains("/shared/bin/pccx-cosim --seed 1 --count 2000 --shard \"$task\"/8 --out \"$out\" --resume"), "{s}");
        assert!(s.contains("out='/shared/run 1'/shard-\"$task\""), "{s}");
    }
}
