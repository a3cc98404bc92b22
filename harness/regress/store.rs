//! A run's directory while it runs, for campaigns and mutation runs alike: its header, the records of the runs before this one, and the journal this run appends to.

use super::campaign::Shard;
use super::identity::RunEnded;
use super::journal::{self, CampaignHeader, Journal, Record, RunEntry};
use super::lock::DirLock;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The header of a run's directory (`campaign.json`, `mutate.json`).
pub trait RunHeader: Serialize + DeserializeOwned + Clone {
    /// Its file in the directory.
    const FILE: &'static str;
    /// Reads `DIR/FILE`, its format checked; `Ok(None)` if there is none.
    fn read(dir: &Path) -> Result<Option<Self>, String>;
    /// The first field of the run's identity in which `self` and `old`
    /// differ (`` `field` is A here and B there ``).
    fn difference(&self, old: &Self) -> Option<String>;
    fn shard(&self) -> Option<Shard>;
    fn runs_mut(&mut self) -> &mut Vec<RunEntry>;
    /// What a resumed run keeps of the header before it: its runs.
    fn carry_over(&mut self, old: Self);
}

impl RunHeader for CampaignHeader {
    const FILE: &'static str = journal::CAMPAIGN_FILE;

    fn read(dir: &Path) -> Result<Option<Self>, String> {
        CampaignHeader::read(dir)
    }

    fn difference(&self, old: &Self) -> Option<String> {
        self.identity.difference(&old.identity)
    }

    fn shard(&self) -> Option<Shard> {
        self.shard
    }

    fn runs_mut(&mut self) -> &mut Vec<RunEntry> {
        &mut self.runs
    }

    fn carry_over(&mut self, old: Self) {
        self.runs = old.runs;
        self.reference_model = old.reference_model;
        self.dut_model = old.dut_model;
    }
}

/// A run's directory, open for this run.
pub struct RunStore<H: RunHeader, R: Record> {
    pub dir: PathBuf,
    /// The header as written at the start, with this run's entry last.
    pub header: H,
    /// The records of the runs before this one (with `--resume`).
    pub prior: Vec<R>,
    /// Appended to from the workers (and the timekeeper of a hung seed).
    pub journal: Mutex<Journal>,
    /// This run's hold on the directory, checked before every record.
    pub lock: DirLock,
}

impl<H: RunHeader, R: Record> RunStore<H, R> {
    /// Opens `dir` for a run whose header is `header`, first taking its
    /// lock (one writer per directory: [`super::lock`]; `break_lock`
    /// overrules a holder that cannot be told gone): with `resume`, the
    /// records there are kept (the header there must name the same run
    /// and shard); without it, the records and header there are moved to
    /// the next `previous/N/`, never overwritten. Writes the header with
    /// this run's entry.
    pub fn open(dir: &Path, mut header: H, resume: bool, break_lock: bool) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--out {}: cannot create: {e}", dir.display()))?;
        let lock = DirLock::acquire(dir, break_lock).map_err(|e| e.to_string())?;
        if let Some((holder, gone)) = &lock.took_over {
            eprintln!(
                "pccx-cosim: {}: took over the lock of {} ({gone})",
                dir.display(),
                holder.describe()
            );
        }
        let (read, notes) = journal::read_for_run::<R>(dir, resume, H::FILE)?;
        if resume {
            if let Some(old) = H::read(dir)? {
                let file = dir.join(H::FILE);
                if let Some(d) = header.difference(&old) {
                    return Err(format!(
                        "--resume: this run is not the one in {}: {d}",
                        file.display()
                    ));
                }
                if old.shard() != header.shard() {
                    let show = |s: Option<Shard>| s.map_or("(none)".into(), |s| s.to_string());
                    return Err(format!(
                        "--resume: {} is shard {} and this run shard {}",
                        file.display(),
                        show(old.shard()),
                        show(header.shard())
                    ));
                }
                header.carry_over(old);
            }
        }
        for note in &notes {
            eprintln!("pccx-cosim: {note}");
        }
        let journal = Journal::open(dir, read.whole_len)?;
        header.runs_mut().push(journal::this_run());
        journal::write_header(dir, H::FILE, &header)?;
        Ok(RunStore {
            dir: dir.to_path_buf(),
            header,
            prior: read.records,
            journal: Mutex::new(journal),
            lock,
        })
    }

    /// Appends `record` to the journal, flushed, if the directory is still
    /// this run's (else the error says who took it).
    pub fn append(&self, record: &R) -> Result<(), String> {
        self.lock.still_held()?;
        self.journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(record)
    }

    /// Puts the records on disk and records in the header how this run
    /// ended, its wall time and its number of records.
    pub fn finish(
        &mut self,
        wall_seconds: f64,
        records: u64,
        ended: RunEnded,
    ) -> Result<(), String> {
        self.journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .sync()?;
        if let Some(run) = self.header.runs_mut().last_mut() {
            run.wall_seconds = Some(wall_seconds);
            run.seeds = Some(records);
            run.ended = Some(ended);
        }
        journal::write_header(&self.dir, H::FILE, &self.header)
    }

    /// Once `stop` is set (SIGTERM, SIGINT), gives the run `grace` to end
    /// by itself; past it (a seed stuck where the flag is never looked at,
    /// in a simulation that does not return), writes the header with the
    /// run `interrupted`, lets go of the lock and ends the process with
    /// `code`. Every finished record is on disk already. Without this, a
    /// task Slurm stops at its time limit leaves such a process running
    /// (its shell is killed first), holding the directory against the rerun.
    pub fn end_after_stop(&self, stop: Arc<AtomicBool>, grace: Duration, code: u8)
    where
        H: Send + 'static,
    {
        let dir = self.dir.clone();
        let header = self.header_ended(RunEnded::Interrupted);
        let release = self.lock.releaser();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(grace);
            eprintln!(
                "pccx-cosim: {}: still running {} s after the stop signal (a seed stuck?); \
                 the finished records are on disk, the process ends now",
                dir.display(),
                grace.as_secs_f64()
            );
            let _ = journal::write_header(&dir, H::FILE, &header);
            release();
            std::process::exit(code.into());
        });
    }

    /// The header as [`finish`](Self::finish) would write it with `ended`
    /// and nothing else known: for a process about to end at once (a hung
    /// seed), which writes it and goes.
    pub fn write_ended(&self, ended: RunEnded) -> Result<(), String> {
        journal::write_header(&self.dir, H::FILE, &self.header_ended(ended))
    }

    /// The header with this run's entry ended as `ended`.
    fn header_ended(&self, ended: RunEnded) -> H {
        let mut header = self.header.clone();
        if let Some(run) = header.runs_mut().last_mut() {
            run.ended = Some(ended);
        }
        header
    }
}
