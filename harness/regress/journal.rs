//! A campaign's directory as it runs: `campaign.json` says what the run is,
//! `results.jsonl` holds one record per finished seed, each line written
//! whole and flushed as the seed finishes; `--resume` and `merge` read
//! them back (docs/scale-out.md).

use super::campaign::Shard;
use super::identity::{RunEnded, RunIdentity};
use super::results::SeedRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The records of a directory.
pub const RESULTS_FILE: &str = "results.jsonl";
/// What the run of a directory is.
pub const CAMPAIGN_FILE: &str = "campaign.json";
/// The `format` field of `campaign.json`.
pub const FORMAT: &str = "pccx-cosim campaign";
/// The `version` field of `campaign.json`; bumped when a field changes
/// meaning.
pub const VERSION: u64 = 1;

/// One process's run in a directory (a resumed campaign has several).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// Seconds since the Unix epoch when it started.
    pub started_unix: u64,
    /// Its wall time; absent while it runs, or if it was killed.
    pub wall_seconds: Option<f64>,
    /// Seeds it recorded; absent while it runs, or if it was killed.
    pub seeds: Option<u64>,
    /// How it ended; absent while it runs, or if it was killed.
    pub ended: Option<RunEnded>,
    /// The host it ran on, and the Slurm job and task if it ran in one.
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm_job: Option<String>,
    /// The build that ran: versions, git commit, whether hw/rtl had
    /// uncommitted edits ([`provenance`](crate::triage::repro::provenance));
    /// absent in runs recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

/// `campaign.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CampaignHeader {
    pub format: String,
    pub version: u64,
    #[serde(flatten)]
    pub identity: RunIdentity,
    /// `i/n`, or absent for the whole campaign.
    pub shard: Option<Shard>,
    /// The models' names, once they were opened.
    pub reference_model: Option<String>,
    pub dut_model: Option<String>,
    pub runs: Vec<RunEntry>,
}

impl CampaignHeader {
    pub fn new(identity: RunIdentity, shard: Option<Shard>) -> CampaignHeader {
        CampaignHeader {
            format: FORMAT.into(),
            version: VERSION,
            identity,
            shard,
            reference_model: None,
            dut_model: None,
            runs: Vec::new(),
        }
    }

    /// Reads `DIR/campaign.json`; `Ok(None)` if there is none.
    pub fn read(dir: &Path) -> Result<Option<CampaignHeader>, String> {
        let Some(header) = read_header::<CampaignHeader>(dir, CAMPAIGN_FILE)? else {
            return Ok(None);
        };
        check_format(
            dir,
            CAMPAIGN_FILE,
            &header.format,
            FORMAT,
            header.version,
            VERSION,
        )?;
        Ok(Some(header))
    }

    /// Writes `DIR/campaign.json` whole ([`write_header`]).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        write_header(dir, CAMPAIGN_FILE, self)
    }

    /// The sum of the finished runs' wall times.
    pub fn wall_seconds(&self) -> f64 {
        self.runs.iter().filter_map(|r| r.wall_seconds).sum()
    }
}

/// A line of a journal: a campaign's seed or a mutation run's mutant,
/// known by its key; two records of one key should agree on `verdict`.
pub trait Record: Serialize + serde::de::DeserializeOwned {
    type Key: Ord + Clone;
    fn key(&self) -> Self::Key;
    fn verdict(&self) -> String;
}

impl Record for SeedRecord {
    type Key = u64;
    fn key(&self) -> u64 {
        self.seed
    }
    fn verdict(&self) -> String {
        self.verdict.name().into()
    }
}

/// Reads the header `DIR/NAME`; `Ok(None)` if there is none. An error
/// names the file, line, column and field.
pub fn read_header<T: serde::de::DeserializeOwned>(
    dir: &Path,
    name: &str,
) -> Result<Option<T>, String> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de)
        .map(Some)
        .map_err(|e| {
            let inner = e.inner();
            format!(
                "{}:{}:{}: field `{}`: {inner}",
                path.display(),
                inner.line(),
                inner.column(),
                e.path()
            )
        })
}

/// A header's `format` must be `format` and its `version` one this build
/// reads.
pub fn check_format(
    dir: &Path,
    name: &str,
    found: &str,
    format: &str,
    version: u64,
    newest: u64,
) -> Result<(), String> {
    let path = dir.join(name);
    if found != format {
        return Err(format!(
            "{}: field `format`: `{found}` is not `{format}`",
            path.display()
        ));
    }
    if version > newest {
        return Err(format!(
            "{}: field `version`: {version} is newer than this build reads ({newest})",
            path.display()
        ));
    }
    Ok(())
}

/// Writes the header `DIR/NAME` whole: to a file beside it, then renamed
/// over it, so that a kill leaves the old one or the new one.
pub fn write_header(dir: &Path, name: &str, header: &impl Serialize) -> Result<(), String> {
    let path = dir.join(name);
    let partial = dir.join(format!("{name}.partial"));
    let text = serde_json::to_string_pretty(header).expect("headers serialise") + "\n";
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, &path))
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// The entry of this process's run, begun now.
pub fn this_run() -> RunEntry {
    let (host, slurm_job) = where_we_run();
    RunEntry {
        started_unix: unix_now(),
        wall_seconds: None,
        seeds: None,
        ended: None,
        host,
        slurm_job,
        provenance: Some(crate::triage::repro::provenance().clone()),
    }
}

/// The records read from a `results.jsonl`.
#[derive(Debug)]
pub struct ReadRecords<R: Record = SeedRecord> {
    /// One per key, the first record of each kept, in file order.
    pub records: Vec<R>,
    /// Records of a seed already seen (a rerun), dropped.
    pub duplicates: usize,
    /// Keys whose duplicate records disagree on the verdict: a
    /// nondeterministic seed (or mutant), worth a look.
    pub conflicting: Vec<R::Key>,
    /// The byte length of the whole lines; a last line without its line
    /// break (a write cut off by a kill) lies beyond it and is dropped.
    pub whole_len: u64,
    pub torn_tail: bool,
}

impl<R: Record> Default for ReadRecords<R> {
    fn default() -> Self {
        ReadRecords {
            records: Vec::new(),
            duplicates: 0,
            conflicting: Vec::new(),
            whole_len: 0,
            torn_tail: false,
        }
    }
}

/// Reads a campaign's `path`; `Ok` with no records if it does not exist. A
/// line that is not a record is an error naming the file and the line.
pub fn read_records(path: &Path) -> Result<ReadRecords<SeedRecord>, String> {
    read_journal(path)
}

/// [`read_records`] for records of any kind.
pub fn read_journal<R: Record>(path: &Path) -> Result<ReadRecords<R>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ReadRecords::default()),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    let whole_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut read: ReadRecords<R> = ReadRecords {
        whole_len: whole_len as u64,
        torn_tail: whole_len < bytes.len(),
        ..ReadRecords::default()
    };
    let mut index: BTreeMap<R::Key, usize> = BTreeMap::new();
    for (n, line) in bytes[..whole_len].split(|&b| b == b'\n').enumerate() {
        let line_no = n + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut de = serde_json::Deserializer::from_slice(line);
        let record: R = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let inner = e.inner();
            let at = if e.path().to_string() == "." {
                String::new()
            } else {
                format!(" field `{}`:", e.path())
            };
            format!(
                "{}:{line_no}:{}:{at} {inner}",
                path.display(),
                inner.column()
            )
        })?;
        let key = record.key();
        match index.get(&key) {
            Some(&i) => {
                read.duplicates += 1;
                if read.records[i].verdict() != record.verdict() && !read.conflicting.contains(&key)
                {
                    read.conflicting.push(key);
                }
            }
            None => {
                index.insert(key, read.records.len());
                read.records.push(record);
            }
        }
    }
    Ok(read)
}

/// The records a run in `dir` starts from, and what it should say about
/// them: with `resume`, the records of `DIR/results.jsonl`; without, none,
/// the records there (if any) and the header `DIR/header_file` moved to
/// `DIR/previous/N/` (N one past the highest there), so that no earlier
/// generation is ever lost. The notes name a torn last line (the record a
/// kill cut off runs again), repeated keys, and a move.
pub fn read_for_run<R: Record>(
    dir: &Path,
    resume: bool,
    header_file: &str,
) -> Result<(ReadRecords<R>, Vec<String>), String> {
    let results = dir.join(RESULTS_FILE);
    let read = read_journal::<R>(&results)?;
    let mut notes = Vec::new();
    if !read.records.is_empty() && !resume {
        let generation = next_generation(dir)?;
        std::fs::create_dir_all(&generation)
            .map_err(|e| format!("{}: cannot create: {e}", generation.display()))?;
        for name in [RESULTS_FILE, header_file] {
            let from = dir.join(name);
            if from.exists() {
                std::fs::rename(&from, generation.join(name))
                    .map_err(|e| format!("{}: cannot move aside: {e}", from.display()))?;
            }
        }
        notes.push(format!(
            "{} held {} records of an earlier run: moved with its {header_file} to {}/ \
             (--resume continues a run instead)",
            results.display(),
            read.records.len(),
            generation.display()
        ));
        return Ok((ReadRecords::default(), notes));
    }
    if read.torn_tail {
        notes.push(format!(
            "{}: its last line was cut off (a kill while it was written); the run it \
             recorded runs again",
            results.display()
        ));
    }
    if read.duplicates > 0 {
        notes.push(format!(
            "{}: {} records repeat a key and are ignored",
            results.display(),
            read.duplicates
        ));
    }
    Ok((read, notes))
}

/// Where earlier generations of a run directory are kept.
pub const PREVIOUS_DIR: &str = "previous";

/// `DIR/previous/N` for the first N above every generation there.
fn next_generation(dir: &Path) -> Result<PathBuf, String> {
    let previous = dir.join(PREVIOUS_DIR);
    let highest = match std::fs::read_dir(&previous) {
        Ok(entries) => entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
            .max()
            .unwrap_or(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(format!("{}: cannot read: {e}", previous.display())),
    };
    Ok(previous.join((highest + 1).to_string()))
}

/// `results.jsonl` open for appending.
pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Opens `DIR/results.jsonl` for appending, creating DIR and the file;
    /// a torn last line (`whole_len` short of the file's length) is cut
    /// off first, so that the next record starts a line of its own.
    pub fn open(dir: &Path, whole_len: u64) -> Result<Journal, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        let path = dir.join(RESULTS_FILE);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("{}: cannot open for appending: {e}", path.display()))?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len > whole_len {
            file.set_len(whole_len)
                .map_err(|e| format!("{}: cannot cut its torn last line: {e}", path.display()))?;
        }
        Ok(Journal { file, path })
    }

    /// Appends `record` as one line, in one write, and hands it to the
    /// operating system before returning: a kill of this process after
    /// this loses nothing of it.
    pub fn append(&mut self, record: &impl Serialize) -> Result<(), String> {
        let mut line = serde_json::to_vec(record).expect("records serialise");
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("{}: cannot append: {e}", self.path.display()))
    }

    /// Puts what was appended on disk (against a lost node, not a kill).
    pub fn sync(&self) -> Result<(), String> {
        self.file
            .sync_data()
            .map_err(|e| format!("{}: cannot sync: {e}", self.path.display()))
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM UTC`.
pub fn utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Civil date from days since 1970-01-01 (Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        (secs / 60) % 60
    )
}

/// This host's name, and the Slurm job and array task this process runs
/// in, if any.
pub fn where_we_run() -> (String, Option<String>) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let job = match (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID")) {
        (Some(job), Some(task)) => Some(format!("{job}_{task}")),
        _ => var("SLURM_JOB_ID"),
    };
    (host, job)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regress::results::SeedVerdict;

    fn record(seed: u64, verdict: SeedVerdict) -> SeedRecord {
        SeedRecord {
            seed,
            verdict,
            instructions: 3,
            cycles: Some(10),
            wall_seconds: 0.5,
            engine_busy: [1, 2, 3, 4, 5].into(),
            retire_latency: Default::default(),
            mismatch: None,
            signature: None,
            artefacts: None,
            error: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pccx-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn records_come_back_as_written_and_a_torn_line_is_cut_off() {
        let dir = scratch("torn");
        let mut journal = Journal::open(&dir, 0).unwrap();
        journal.append(&record(4, SeedVerdict::Match)).unwrap();
        journal.append(&record(5, SeedVerdict::Timeout)).unwrap();
        drop(journal);
        let path = dir.join(RESULTS_FILE);
        // A kill in the middle of a write leaves part of a line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seed\": 6, \"verd").unwrap();
        let read = read_records(&path).unwrap();
        assert!(read.torn_tail);
        assert_eq!(
            read.records,
            [
                record(4, SeedVerdict::Match),
                record(5, SeedVerdict::Timeout)
            ]
        );
        let mut journal = Journal::open(&dir, read.whole_len).unwrap();
        journal.append(&record(6, SeedVerdict::Match)).unwrap();
        let read = read_records(&path).unwrap();
        assert!(!read.torn_tail);
        assert_eq!(
            read.records.iter().map(|r| r.seed).collect::<Vec<_>>(),
            [4, 5, 6]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn duplicates_are_dropped_and_disagreeing_ones_named() {
        let dir = scratch("dup");
        let mut journal = Journal::open(&dir, 0).unwrap();
        for (seed, verdict) in [
            (1, SeedVerdict::Match),
            (2, SeedVerdict::Match),
            (1, SeedVerdict::Match),
            (2, SeedVerdict::Mismatch),
        ] {
            journal.append(&record(seed, verdict)).unwrap();
        }
        let read = read_records(&dir.join(RESULTS_FILE)).unwrap();
        assert_eq!(read.records.len(), 2);
        assert_eq!(read.duplicates, 2);
        assert_eq!(read.conflicting, [2]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_line_is_named_by_file_line_and_field() {
        let dir = scratch("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(RESULTS_FILE);
        let good = serde_json::to_string(&record(1, SeedVerdict::Match)).unwrap();
        let bad = good.replace("\"match\"", "\"maybe\"");
        std::fs::write(&path, format!("{good}\n{bad}\n")).unwrap();
        let e = read_records(&path).unwrap_err();
        assert!(e.starts_with(&format!("{}:2:", path.display())), "{e}");
        assert!(e.contains("verdict"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
