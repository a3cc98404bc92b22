//! One writer per run directory: the lock file `DIR/lock` names its holder (host, PID, start, Slurm job), is taken over only when that holder is gone, and is checked before every record this run writes.
//!
//! The rules (docs/scale-out.md, "One writer per directory"):
//! - The lock is made whole, then linked into place: `link(2)` fails if
//!   `DIR/lock` exists, on a local disk and on NFS alike, so two writers
//!   never both create it, and a reader never sees half of one.
//! - A holder on this host is gone when its PID is not running, is a
//!   zombie, or started at another time (a reused PID).
//! - A holder on another host is gone when its Slurm job has ended (squeue
//!   no longer lists it, or lists it in a final state), or when it is this
//!   very Slurm task in an earlier incarnation (Slurm requeued the task:
//!   `SLURM_RESTART_COUNT` is higher here). Without a Slurm job, or without
//!   `squeue`, nothing can be told: the lock stands and `--break-lock`
//!   takes it.
//! - Taking over replaces the file by a rename; the earlier holder, if it
//!   still runs somewhere, sees the lock is no longer its file before its
//!   next record and stops writing.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal::{unix_now, where_we_run};
use super::slurm::TaskState;

/// How the state of a Slurm job is asked: `Ok(None)` when the scheduler no
/// longer lists it ([`super::slurm::job_state`]; tests pass their own).
pub type JobState<'a> = &'a dyn Fn(&str) -> Result<Option<TaskState>, String>;

/// The lock's file in a run directory.
pub const LOCK_FILE: &str = "lock";

/// Who holds a directory: what `DIR/lock` says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    /// The host name (`/proc/sys/kernel/hostname`, so a node's own in a
    /// container or namespace).
    pub host: String,
    pub pid: u32,
    /// The process's start in clock ticks after boot (`/proc/PID/stat`,
    /// field 22): a PID reused by another process is not the holder.
    pub pid_start: Option<u64>,
    /// Seconds since the Unix epoch when it took the lock.
    pub since_unix: u64,
    /// The Slurm job (`JOB_TASK` for an array task) it runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm_job: Option<String>,
    /// `SLURM_RESTART_COUNT`: how often Slurm requeued that job.
    #[serde(default)]
    pub slurm_restarts: u64,
    /// What it runs (`pccx-cosim run ...`), for a person reading the lock.
    pub command: String,
}

impl Holder {
    /// This process.
    pub fn this_process() -> Holder {
        let (host, slurm_job) = where_we_run();
        let pid = std::process::id();
        Holder {
            host,
            pid,
            pid_start: running_since(pid),
            since_unix: unix_now(),
            slurm_job,
            slurm_restarts: std::env::var("SLURM_RESTART_COUNT")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            command: std::env::args().collect::<Vec<_>>().join(" "),
        }
    }

    /// `PID 42 on node1 (Slurm job 7_3), since 2026-12-06 05:10 UTC:
    /// pccx-cosim run ...`.
    pub fn describe(&self) -> String {
        format!(
            "PID {} on {}{}, since {}: {}",
            self.pid,
            self.host,
            self.slurm_job.as_ref().map_or(String::new(), |j| format!(
                " (Slurm job {j}{})",
                if self.slurm_restarts > 0 {
                    format!(", requeued {} times", self.slurm_restarts)
                } else {
                    String::new()
                }
            )),
            super::journal::utc(self.since_unix),
            self.command
        )
    }
}

/// Why a holder is gone, said when its lock is taken over.
#[derive(Clone, Debug, PartialEq)]
pub enum Gone {
    /// Same host, and the PID runs no more (or is another process now).
    ProcessEnded,
    /// Its Slurm job has ended, in this state (`None`: squeue no longer
    /// lists it).
    JobEnded(Option<String>),
    /// It is this Slurm task before Slurm requeued it.
    Requeued { then: u64, now: u64 },
    /// `--break-lock`.
    Broken,
}

impl std::fmt::Display for Gone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Gone::ProcessEnded => write!(f, "that process has ended"),
            Gone::JobEnded(Some(state)) => write!(f, "its Slurm job has ended ({state})"),
            Gone::JobEnded(None) => write!(f, "its Slurm job has ended (squeue no longer lists it)"),
            Gone::Requeued { then, now } => write!(
                f,
                "it is this Slurm task before Slurm requeued it (restart {then}; this is restart {now})"
            ),
            Gone::Broken => write!(f, "--break-lock"),
        }
    }
}

/// Why a directory could not be locked.
#[derive(Clone, Debug, PartialEq)]
pub enum LockError {
    /// Another writer holds it; `why` says how that was told.
    Held {
        lock: PathBuf,
        holder: Box<Holder>,
        why: String,
    },
    /// The lock file could not be made, read or replaced.
    Io(String),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Held { lock, holder, why } => write!(
                f,
                "{} is held by {} ({why}); one writer per directory: wait for it, or, if it is \
                 gone and that cannot be told from here, run again with --break-lock",
                lock.display(),
                holder.describe()
            ),
            LockError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// This run's hold on a directory; the lock file is removed when it is
/// dropped (if it is still this run's).
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    /// The lock file as this run made it: device and inode.
    file_id: (u64, u64),
    pub holder: Holder,
    /// What was said when an earlier holder's lock was taken over.
    pub took_over: Option<(Holder, Gone)>,
}

impl DirLock {
    /// Takes `dir`'s lock for this process (`dir` exists). With
    /// `break_lock`, a holder that cannot be told gone is overruled.
    pub fn acquire(dir: &Path, break_lock: bool) -> Result<DirLock, LockError> {
        Self::acquire_as(
            dir,
            Holder::this_process(),
            break_lock,
            &super::slurm::job_state,
        )
    }

    /// [`acquire`](Self::acquire) as `me`, asking `job_state` about Slurm
    /// jobs (tests pass their own: there is no cluster in a unit test).
    pub fn acquire_as(
        dir: &Path,
        me: Holder,
        break_lock: bool,
        job_state: JobState,
    ) -> Result<DirLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |what: &str, e: std::io::Error| {
            LockError::Io(format!("{}: cannot {what}: {e}", path.display()))
        };
        let text = serde_json::to_string_pretty(&me).expect("holders serialise") + "\n";
        let partial = dir.join(format!(".lock.{}.{}", me.host, me.pid));
        std::fs::write(&partial, &text).map_err(|e| io("write its lock", e))?;
        let result = (|| {
            // A few rounds: a holder may let go, or another taker win,
            // between reading and replacing.
            for _ in 0..5 {
                match std::fs::hard_link(&partial, &path) {
                    Ok(()) => return Self::held(&path, me.clone(), None),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io("create", e)),
                }
                let holder = match read_holder(&path) {
                    Ok(Some(h)) => h,
                    // Gone between link and read: try again.
                    Ok(None) => continue,
                    Err(e) => {
                        if break_lock {
                            // Unreadable: only --break-lock replaces it.
                            std::fs::rename(&partial, &path).map_err(|e| io("replace", e))?;
                            return Self::held(&path, me.clone(), None);
                        }
                        return Err(LockError::Io(format!("{e}; --break-lock replaces it")));
                    }
                };
                let gone = match is_gone(&holder, &me, job_state) {
                    Ok(gone) => gone,
                    Err(_) if break_lock => Gone::Broken,
                    Err(why) => {
                        return Err(LockError::Held {
                            lock: path.clone(),
                            holder: Box::new(holder),
                            why,
                        })
                    }
                };
                // Replace the lock only if it is still the one judged.
                if read_holder(&path).ok().flatten().as_ref() != Some(&holder) {
                    continue;
                }
                std::fs::rename(&partial, &path).map_err(|e| io("replace", e))?;
                return Self::held(&path, me.clone(), Some((holder, gone)));
            }
            Err(LockError::Io(format!(
                "{}: changed hands five times while this run tried to take it",
                path.display()
            )))
        })();
        let _ = std::fs::remove_file(&partial);
        result
    }

    /// The lock at `path` as this run made it (or took it over), checked
    /// to be this run's.
    fn held(
        path: &Path,
        me: Holder,
        took_over: Option<(Holder, Gone)>,
    ) -> Result<DirLock, LockError> {
        let meta = std::fs::metadata(path)
            .map_err(|e| LockError::Io(format!("{}: cannot read: {e}", path.display())))?;
        let lock = DirLock {
            path: path.to_path_buf(),
            file_id: file_id(&meta),
            holder: me,
            took_over,
        };
        // Two takers may both have replaced it: the last one holds it.
        match read_holder(path) {
            Ok(Some(h)) if h == lock.holder => Ok(lock),
            Ok(Some(h)) => Err(LockError::Held {
                lock: path.to_path_buf(),
                why: "it took the lock at the same moment".into(),
                holder: Box::new(h),
            }),
            _ => Err(LockError::Io(format!(
                "{}: vanished as it was taken",
                path.display()
            ))),
        }
    }

    /// Whether the lock is still this run's: checked before every record
    /// (a `stat`, so cheap), so that a run whose lock was taken over (its
    /// node was declared lost while it ran) stops writing.
    pub fn still_held(&self) -> Result<(), String> {
        match std::fs::metadata(&self.path) {
            Ok(m) if file_id(&m) == self.file_id => Ok(()),
            Ok(_) => Err(format!(
                "{}: this run's lock was taken over{}; it stops writing here",
                self.path.display(),
                read_holder(&self.path)
                    .ok()
                    .flatten()
                    .map_or(String::new(), |h| format!(" by {}", h.describe()))
            )),
            Err(e) => Err(format!(
                "{}: this run's lock is gone ({e}); it stops writing here",
                self.path.display()
            )),
        }
    }

    /// What removes this lock (if it is still this run's) from another
    /// thread, for a process that ends without dropping it.
    pub fn releaser(&self) -> impl FnOnce() + Send + 'static {
        let (path, id) = (self.path.clone(), self.file_id);
        move || release(&path, id)
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        release(&self.path, self.file_id);
    }
}

/// A file's device and inode: what tells this run's lock file from one
/// that replaced it.
fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

/// Removes the lock file at `path` if it is still the file `id`.
fn release(path: &Path, id: (u64, u64)) {
    if std::fs::metadata(path).is_ok_and(|m| file_id(&m) == id) {
        let _ = std::fs::remove_file(path);
    }
}

/// The holder `path` names; `Ok(None)` if there is no lock file.
pub fn read_holder(path: &Path) -> Result<Option<Holder>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: not a lock this program wrote: {e}", path.display()))
}

/// Whether `holder` is gone, as told from `me`; `Err` says why it stands.
fn is_gone(holder: &Holder, me: &Holder, job_state: JobState) -> Result<Gone, String> {
    if holder.host == me.host {
        let alive = running_since(holder.pid)
            .is_some_and(|start| holder.pid_start.is_none_or(|s| s == start));
        return if alive {
            Err("its process runs on this host".into())
        } else {
            Ok(Gone::ProcessEnded)
        };
    }
    let Some(job) = &holder.slurm_job else {
        return Err(format!(
            "it runs on another host, outside Slurm: whether it still runs cannot be told from {}",
            me.host
        ));
    };
    if me.slurm_job.as_ref() == Some(job) && me.slurm_restarts > holder.slurm_restarts {
        return Ok(Gone::Requeued {
            then: holder.slurm_restarts,
            now: me.slurm_restarts,
        });
    }
    match job_state(job) {
        Ok(None) => Ok(Gone::JobEnded(None)),
        Ok(Some(state)) if state.is_final() => Ok(Gone::JobEnded(Some(state.state))),
        Ok(Some(state)) => Err(format!("its Slurm job is {}", state.with_reason())),
        Err(e) => Err(format!("its Slurm job cannot be asked about: {e}")),
    }
}

/// When process `pid` started (ticks after boot), from one read of
/// `/proc/PID/stat`; `None` if there is no such process or it has exited
/// (a zombie, `Z`, or dead, `X`, waiting to be reaped).
fn running_since(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) may hold spaces: count from the last `)`. Then
    // field 3 is the state and field 22 the start time.
    let mut fields = stat[stat.rfind(')')? + 2..].split(' ');
    if matches!(fields.next(), Some("Z" | "X")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pccx-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn no_slurm(_: &str) -> Result<Option<TaskState>, String> {
        Err("no squeue in a unit test".into())
    }

    fn other(host: &str, job: Option<&str>, restarts: u64) -> Holder {
        Holder {
            host: host.into(),
            pid: 1,
            pid_start: Some(1),
            since_unix: 0,
            slurm_job: job.map(String::from),
            slurm_restarts: restarts,
            command: "pccx-cosim run --seeds 100".into(),
        }
    }

    #[test]
    fn a_second_writer_on_this_host_is_refused_while_the_first_lives() {
        let d = dir("second");
        let first = DirLock::acquire_as(&d, Holder::this_process(), false, &no_slurm).unwrap();
        let second = DirLock::acquire_as(&d, Holder::this_process(), false, &no_slurm);
        match second {
            Err(LockError::Held { holder, why, .. }) => {
                assert_eq!(*holder, first.holder);
                assert!(why.contains("runs on this host"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        first.still_held().unwrap();
        drop(first);
        assert!(!d.join(LOCK_FILE).exists(), "the lock goes with its run");
        DirLock::acquire_as(&d, Holder::this_process(), false, &no_slurm).unwrap();
    }

    #[test]
    fn a_dead_pid_on_this_host_is_taken_over_and_the_old_holder_then_stops() {
        let d = dir("dead");
        let me = Holder::this_process();
        // A child that has ended: its PID runs no more.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let dead = Holder {
            pid,
            pid_start: Some(0),
            ..me.clone()
        };
        let old = DirLock::acquire_as(&d, dead.clone(), false, &no_slurm);
        // Made as the dead process: its own check says it holds it.
        let old = old.unwrap();
        let new = DirLock::acquire_as(&d, me.clone(), false, &no_slurm).unwrap();
        assert_eq!(new.took_over, Some((dead, Gone::ProcessEnded)));
        let lost = old.still_held().unwrap_err();
        assert!(lost.contains("taken over by PID"), "{lost}");
        new.still_held().unwrap();
        drop(old);
        assert!(
            d.join(LOCK_FILE).exists(),
            "a lock taken over is not the old run's to remove"
        );
        drop(new);
        // A reused PID (this process's, with another start) is not the holder.
        let reused = Holder {
            pid_start: Some(1),
            ..me.clone()
        };
        std::fs::write(d.join(LOCK_FILE), serde_json::to_string(&reused).unwrap()).unwrap();
        let lock = DirLock::acquire_as(&d, me, false, &no_slurm).unwrap();
        assert_eq!(lock.took_over, Some((reused, Gone::ProcessEnded)));
    }

    #[test]
    fn another_host_is_judged_by_its_slurm_job_and_else_only_broken() {
        let d = dir("host");
        let me = Holder {
            slurm_job: Some("7_2".into()),
            slurm_restarts: 1,
            ..Holder::this_process()
        };
        let listed = |state: &str| TaskState {
            state: state.into(),
            reason: "None".into(),
            node: "node1".into(),
        };
        let running = |_: &str| Ok(Some(listed("RUNNING")));
        let ended = |_: &str| Ok(Some(listed("NODE_FAIL")));
        let forgotten = |_: &str| Ok(None);
        let cases: Vec<(Holder, JobState, Option<Gone>)> = vec![
            (other("node1", None, 0), &running, None),
            (other("node1", Some("9_0"), 0), &running, None),
            (other("node1", Some("9_0"), 0), &no_slurm, None),
            (
                other("node1", Some("9_0"), 0),
                &ended,
                Some(Gone::JobEnded(Some("NODE_FAIL".into()))),
            ),
            (
                other("node1", Some("9_0"), 0),
                &forgotten,
                Some(Gone::JobEnded(None)),
            ),
            // This task before its requeue, though its job runs (as this).
            (
                other("node1", Some("7_2"), 0),
                &running,
                Some(Gone::Requeued { then: 0, now: 1 }),
            ),
            (other("node1", Some("7_2"), 1), &running, None),
        ];
        for (holder, state, expect) in cases {
            std::fs::write(d.join(LOCK_FILE), serde_json::to_string(&holder).unwrap()).unwrap();
            let got = DirLock::acquire_as(&d, me.clone(), false, state);
            match (&got, &expect) {
                (Ok(lock), Some(gone)) => {
                    assert_eq!(lock.took_over.as_ref().map(|t| &t.1), Some(gone));
                    assert_eq!(read_holder(&d.join(LOCK_FILE)).unwrap().as_ref(), Some(&me));
                }
                (Err(LockError::Held { holder: h, .. }), None) => {
                    assert_eq!(**h, holder);
                    // --break-lock overrules it.
                    let broken = DirLock::acquire_as(&d, me.clone(), true, state).unwrap();
                    assert_eq!(broken.took_over.as_ref().map(|t| &t.1), Some(&Gone::Broken));
                    let message = got.unwrap_err().to_string();
                    assert!(
                        message.contains("node1") && message.contains("--break-lock"),
                        "{message}"
                    );
                }
                _ => panic!("{holder:?}: {got:?}, expected {expect:?}"),
            }
            let _ = std::fs::remove_file(d.join(LOCK_FILE));
        }
        // A lock that is not JSON stands too, until --break-lock.
        std::fs::write(d.join(LOCK_FILE), "not a lock").unwrap();
        let e = DirLock::acquire_as(&d, me.clone(), false, &no_slurm)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a lock this program wrote") && e.contains("--break-lock"),
            "{e}"
        );
        DirLock::acquire_as(&d, me, true, &no_slurm).unwrap();
    }
}
