//! What a pair of models' memories hold between the cases of a campaign, so
//! that a case loads only the words where it differs from the previous one.
//!
//! Under the windowed image rule every case's images are one base image
//! except in its windows. After a case that matched, both models hold the
//! base everywhere but in that case's windows and the words it wrote (the
//! reference's writes; the DUT wrote the same, or a check would have
//! failed, and the final comparison found both memories equal word for
//! word). The next case restores the base over those words, then writes
//! its own windows. After anything else (a mismatch, an error, a case of
//! the whole rule, the first case) nothing is assumed and the next case
//! loads both images in full. The final comparison is not affected: it
//! still reads and compares every word of both memories.

use crate::stimulus::image::{self, Window};
use crate::stimulus::{ImageRule, TestCase};
use pccx_golden::model::{ModelError, NpuModel, Word, HOST_WORDS};

/// The state two models' memories are known to be in between cases.
#[derive(Debug, Default)]
pub struct Resident {
    /// `None`: unknown; the next case loads in full.
    known: Option<Dirty>,
}

/// The words that may differ from the base images, on an L2 of `l2_words`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dirty {
    l2_words: u32,
    l2: Vec<Window>,
    host: Vec<Window>,
}

impl Resident {
    /// Nothing known: the first case loads in full.
    pub fn new() -> Resident {
        Resident::default()
    }

    /// Whether the next case of `case`'s kind would load only its changes.
    pub fn is_known_for(&self, case: &TestCase) -> bool {
        matches!(
            (&self.known, &case.image),
            (Some(d), ImageRule::Windowed { .. }) if d.l2_words == case.options.l2_words
        )
    }

    /// Forgets what the memories hold (after a mismatch or an error).
    pub fn forget(&mut self) {
        self.known = None;
    }

    /// What `case`'s images change from the state the models are in, when
    /// [`is_known_for`](Resident::is_known_for) says it is known; made once
    /// for both models.
    pub fn changes(&self, case: &TestCase) -> Option<Changes> {
        let (Some(dirty), ImageRule::Windowed { l2, host }) = (&self.known, &case.image) else {
            return None;
        };
        if !self.is_known_for(case) {
            return None;
        }
        let words = |windows: &[Window], fill: &dyn Fn(u32, &mut [Word])| {
            windows
                .iter()
                .map(|w| {
                    let mut words = vec![0; w.len as usize];
                    fill(w.start, &mut words);
                    (w.start, words)
                })
                .collect()
        };
        let l2_seed = case.l2_init_seed;
        let host_seed = case.host_init_seed;
        Some(Changes {
            base_l2: image::base_l2(dirty.l2_words),
            base_host: image::base_host(),
            restore_l2: dirty.l2.clone(),
            restore_host: dirty.host.clone(),
            l2: words(l2, &|start, out| image::l2_words_into(l2_seed, start, out)),
            host: words(host, &|start, out| {
                for (k, w) in out.iter_mut().enumerate() {
                    *w = image::host_word(host_seed, start + k as u32);
                }
            }),
            patches: case.l2_patches.clone(),
            host_patches: case.host_patches.clone(),
            l2_words: case.options.l2_words,
        })
    }

    /// [`changes`](Resident::changes) for `models` about to be reset with
    /// their initial state set: `None` also when one of them does not keep
    /// its L2 through that reset (its L2 powers up random), so `case`
    /// loads in full.
    pub fn changes_through_reset(
        &self,
        case: &TestCase,
        models: &mut [&mut dyn NpuModel],
    ) -> Option<Changes> {
        let kept = models.iter_mut().all(|m| {
            m.sim_controls()
                .is_none_or(|sim| sim.keeps_l2_through_reset())
        });
        self.changes(case).filter(|_| kept)
    }

    /// After `case` ran and both models agreed on everything, including
    /// every word of both memories at the end: the words that may now
    /// differ from the base are its windows, its patches and what the
    /// reference wrote (`l2_writes`, `host_writes`: word addresses). For a
    /// single model (the RTL alone of `bench`), its own writes.
    pub fn matched(
        &mut self,
        case: &TestCase,
        l2_writes: impl IntoIterator<Item = u32>,
        host_writes: impl IntoIterator<Item = u32>,
    ) {
        let ImageRule::Windowed { l2, host } = &case.image else {
            self.known = None;
            return;
        };
        let l2_words = case.options.l2_words;
        let one = |a: u32| (u64::from(a), u64::from(a) + 1);
        let window = |w: &Window| (u64::from(w.start), u64::from(w.end()));
        let patch = |(a, p): &(u32, Vec<Word>)| (u64::from(*a), u64::from(*a) + p.len() as u64);
        self.known = Some(Dirty {
            l2_words,
            l2: image::coalesce(
                l2.iter()
                    .map(window)
                    .chain(case.l2_patches.iter().map(patch))
                    .chain(l2_writes.into_iter().map(one)),
                l2_words,
            ),
            host: image::coalesce(
                host.iter()
                    .map(window)
                    .chain(case.host_patches.iter().map(patch))
                    .chain(host_writes.into_iter().map(one)),
                HOST_WORDS,
            ),
        });
    }
}

/// The writes that bring a model from the previous case's final memories
/// to the next case's initial ones: the base over the previous case's
/// words, then the new case's windows and patches.
pub struct Changes {
    base_l2: std::sync::Arc<[Word]>,
    base_host: std::sync::Arc<[Word]>,
    restore_l2: Vec<Window>,
    restore_host: Vec<Window>,
    l2: Vec<(u32, Vec<Word>)>,
    host: Vec<(u32, Vec<Word>)>,
    patches: Vec<(u32, Vec<Word>)>,
    host_patches: Vec<(u32, Vec<Word>)>,
    l2_words: u32,
}

impl Changes {
    /// Makes the writes on `m` (already reset).
    pub fn apply(&self, m: &mut dyn NpuModel) -> Result<(), ModelError> {
        for w in &self.restore_l2 {
            m.write_l2(w.start, &self.base_l2[w.start as usize..w.end() as usize])?;
        }
        for w in &self.restore_host {
            m.write_host(w.start, &self.base_host[w.start as usize..w.end() as usize])?;
        }
        for (start, words) in &self.l2 {
            m.write_l2(*start, words)?;
        }
        for (start, words) in &self.host {
            m.write_host(*start, words)?;
        }
        for (addr, patch) in &self.patches {
            if let Some(words) = clipped(*addr, patch, self.l2_words) {
                m.write_l2(*addr, words)?;
            }
        }
        for (addr, patch) in &self.host_patches {
            if let Some(words) = clipped(*addr, patch, HOST_WORDS) {
                m.write_host(*addr, words)?;
            }
        }
        Ok(())
    }
}

/// The part of a patch at `addr` inside a memory of `words` words, if any.
fn clipped(addr: u32, patch: &[Word], words: u32) -> Option<&[Word]> {
    let end = (addr as usize + patch.len()).min(words as usize);
    ((addr as usize) < end).then(|| &patch[..end - addr as usize])
}
