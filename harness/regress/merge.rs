//! Putting campaign directories together (`pccx-cosim merge`): the shards
//! of one campaign, or the reruns of one, into the report the whole run
//! would have written, with the seeds still missing and how to run them.

use super::campaign::Shard;
use super::identity::{self, Rerun, RunEnded, RunIdentity};
use super::journal::{self, CampaignHeader};
use super::results::{CampaignFile, RunFacts, SeedRecord, SeedVerdict};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One directory as the merge found it.
#[derive(Clone, Debug, PartialEq)]
pub struct DirStatus {
    pub dir: PathBuf,
    pub shard: Option<Shard>,
    pub records: usize,
    /// Seeds of its shard with no record anywhere.
    pub missing: Vec<u64>,
    /// How its last run ended, or `None` if it never finished (killed,
    /// or running).
    pub last_run: Option<RunEnded>,
}

/// What [`merge`] made.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub file: CampaignFile,
    pub identity: RunIdentity,
    pub dirs: Vec<DirStatus>,
    /// Records of a seed another directory (or an earlier line) already
    /// had: reruns, dropped.
    pub duplicates: usize,
    /// Seeds whose records disagree on the verdict.
    pub conflicting: Vec<u64>,
    /// Shards of the campaign (all directories are shards of `n`) with no
    /// directory among those merged, and their seeds.
    pub absent_shards: Vec<(Shard, Vec<u64>)>,
}

impl Merged {
    /// 0 every seed of the campaign matched; 1 some seed mismatched or
    /// timed out; 2 seeds are missing, or a model failed at one.
    pub fn exit_code(&self) -> u8 {
        let s = &self.file.summary;
        if s.mismatched + s.timeouts > 0 {
            1
        } else if !self.file.missing_seeds.is_empty() || s.errors > 0 {
            2
        } else {
            0
        }
    }
}

/// Merges the directories `dirs` of one campaign. Every one must hold a
/// `campaign.json` of the same identity; their records are put together,
/// each seed once (the first record of it found, in the order given).
pub fn merge(dirs: &[PathBuf]) -> Result<Merged, String> {
    let Some(first_dir) = dirs.first() else {
        return Err("merge: name at least one campaign directory".into());
    };
    let mut identity: Option<(RunIdentity, &Path)> = None;
    let mut seen: BTreeMap<u64, SeedVerdict> = BTreeMap::new();
    let mut records: Vec<SeedRecord> = Vec::new();
    let mut duplicates = 0;
    let mut conflicting = Vec::new();
    let mut wall = 0.0;
    let mut models: Option<(String, String)> = None;
    let mut read_dirs = Vec::new();
    for dir in dirs {
        let header = CampaignHeader::read(dir)?.ok_or_else(|| {
            format!(
                "{}: no {} here: not a campaign directory (a campaign writes one with --out DIR)",
                dir.display(),
                journal::CAMPAIGN_FILE
            )
        })?;
        match &identity {
            None => identity = Some((header.identity.clone(), dir)),
            Some((id, there)) => {
                if let Some(d) = header.identity.difference(id) {
                    return Err(format!(
                        "{} and {} are not shards of one campaign: {d}",
                        dir.display(),
                        there.display()
                    ));
                }
            }
        }
        let read = journal::read_records(&dir.join(journal::RESULTS_FILE))?;
        duplicates += read.duplicates;
        conflicting.extend(read.conflicting.iter().copied());
        let n = read.records.len();
        for r in read.records {
            match seen.get(&r.seed) {
                Some(&v) => {
                    duplicates += 1;
                    if v != r.verdict && !conflicting.contains(&r.seed) {
                        conflicting.push(r.seed);
                    }
                }
                None => {
                    seen.insert(r.seed, r.verdict);
                    records.push(r);
                }
            }
        }
        wall += header.wall_seconds();
        if let (Some(r), Some(d)) = (&header.reference_model, &header.dut_model) {
            models.get_or_insert((r.clone(), d.clone()));
        }
        read_dirs.push((dir.clone(), header, n));
    }
    let (identity, _) = identity.expect("one directory at least");
    let campaign_seeds =
        (0..identity.count).map_while(|k| identity.first_seed.checked_add(k).map(|s| (k, s)));
    let missing: Vec<u64> = campaign_seeds
        .clone()
        .filter(|(_, s)| !seen.contains_key(s))
        .map(|(_, s)| s)
        .collect();
    let outside: Vec<u64> = seen
        .keys()
        .copied()
        .filter(|s| *s < identity.first_seed || *s - identity.first_seed >= identity.count)
        .collect();
    if let Some(s) = outside.first() {
        return Err(format!(
            "{}: a record of seed {s}, outside the campaign's seeds {}",
            first_dir.display(),
            span_of(identity.first_seed, identity.count)
        ));
    }
    let dirs_status: Vec<DirStatus> = read_dirs
        .into_iter()
        .map(|(dir, header, n)| {
            let missing_here = missing_of(&campaign_seeds, header.shard, &seen);
            DirStatus {
                dir,
                shard: header.shard,
                records: n,
                missing: missing_here,
                last_run: header.runs.last().and_then(|r| r.ended),
            }
        })
        .collect();
    let shards: Vec<Option<Shard>> = dirs_status.iter().map(|d: &DirStatus| d.shard).collect();
    let absent_shards = Shard::absent_from(&shards)
        .into_iter()
        .map(|shard| (shard, missing_of(&campaign_seeds, Some(shard), &seen)))
        .filter(|(_, seeds)| !seeds.is_empty())
        .collect();
    let (reference, dut) = models.unwrap_or_else(|| ("?".into(), "?".into()));
    let file = CampaignFile::from_records(
        RunFacts {
            config: identity.config.clone(),
            first_seed: identity.first_seed,
            count: identity.count,
            instrs: identity.instrs,
            reference,
            dut,
            shard: None,
            wall_seconds: wall,
            stopped: None,
            interrupted: false,
            missing_seeds: missing,
        },
        records,
    );
    conflicting.sort_unstable();
    conflicting.dedup();
    Ok(Merged {
        file,
        identity,
        dirs: dirs_status,
        duplicates,
        conflicting,
        absent_shards,
    })
}

/// The seeds of `shard` (all, for `None`) with no record.
fn missing_of(
    campaign: &(impl Iterator<Item = (u64, u64)> + Clone),
    shard: Option<Shard>,
    seen: &BTreeMap<u64, SeedVerdict>,
) -> Vec<u64> {
    campaign
        .clone()
        .filter(|&(k, s)| shard.is_none_or(|sh| sh.holds(k)) && !seen.contains_key(&s))
        .map(|(_, s)| s)
        .collect()
}

/// The command that runs the seeds `dir` lacks: its own run, resumed (a
/// steered one run again whole).
pub fn rerun_command(identity: &RunIdentity, dir: &DirStatus) -> String {
    identity::command(&Rerun::Campaign {
        identity,
        shard: dir.shard,
        dir: &dir.dir,
    })
}

/// The command that runs shard `shard`, which has no directory yet, into
/// `dir`.
pub fn shard_command(identity: &RunIdentity, shard: Shard, dir: &Path) -> String {
    identity::command(&Rerun::Campaign {
        identity,
        shard: Some(shard),
        dir,
    })
}

/// Seeds as ranges, the first 24 of them: `1-4, 9, 12-13, ... 7 more`.
pub fn ranges(seeds: &[u64]) -> String {
    const SHOWN: usize = 24;
    let all = all_ranges(seeds);
    if all.len() <= SHOWN {
        return all.join(", ");
    }
    format!(
        "{}, ... {} more",
        all[..SHOWN].join(", "),
        all.len() - SHOWN
    )
}

/// The one way a range is printed: both ends included, `1 .. 10`.
pub fn span(first: u64, last: u64) -> String {
    format!("{first} .. {last}")
}

/// `count` numbers (seeds, words) from `first`, as [`span`] prints them
/// (`none` for 0).
pub fn span_of(first: u64, count: u64) -> String {
    match count {
        0 => "none".into(),
        _ => span(first, first.saturating_add(count - 1)),
    }
}

/// Seeds as ranges: `1 .. 4`, `9`, `12 .. 13`.
fn all_ranges(seeds: &[u64]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seeds.len() {
        let mut j = i;
        while j + 1 < seeds.len() && seeds[j + 1] == seeds[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            seeds[i].to_string()
        } else {
            span(seeds[i], seeds[j])
        });
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_read_as_ranges() {
        assert_eq!(ranges(&[1, 2, 3, 4, 9, 12, 13]), "1 .. 4, 9, 12 .. 13");
        assert_eq!(span_of(1, 10), "1 .. 10");
        assert_eq!(span_of(7, 1), "7 .. 7");
        assert_eq!(span_of(7, 0), "none");
        assert_eq!(ranges(&[]), "");
        let odd: Vec<u64> = (0..30).map(|k| 2 * k + 1).collect();
        assert!(
            ranges(&odd).ends_with("45, 47, ... 6 more"),
            "{}",
            ranges(&odd)
        );
    }
}
