//! The initial memory images of a case and how they follow from its seeds
//! (docs/stimulus.md, "Images").
//!
//! Two rules. [`ImageRule::Whole`] (repro files of version 1, and nothing
//! newer): every word of both memories is drawn from the case's seed, in
//! order, so a seed costs the whole memory size to make, load and restore.
//! [`ImageRule::Windowed`] (every case generated since version 2): a case's
//! images are a fixed base image, the same for every seed, except in the
//! windows the program can read or write, where the words are drawn from
//! the case's seed. A window word and a base word are made by one
//! counter-based function of (seed, address), so any word costs the same
//! whatever else is drawn, and a campaign makes, loads and restores only
//! what a program touches (docs/build.md, "Campaign throughput").

use super::{BF16_SPECIALS, MODERATE_BLOCK_WORDS};
use pccx_golden::asm::{Item, Program};
use pccx_golden::footprint::{footprint, Range};
use pccx_golden::isa::{decode, Decoded, Instr};
use pccx_golden::model::{reg, ShapeEntry, Word, HOST_WORDS};
use pccx_golden::tables::Tables;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// How a case's images follow from its seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageRule {
    /// Word i of each image is the i-th `Rng::next_u128` of the image's
    /// seed, L2 words then with specials and moderate blocks
    /// (`stimulus::fill`, `with_specials`, `with_moderate_blocks`).
    Whole,
    /// The base image ([`BASE_L2_SEED`], [`BASE_HOST_SEED`]) everywhere but
    /// in these windows, where the words are those of the case's seeds.
    Windowed { l2: Vec<Window>, host: Vec<Window> },
}

impl ImageRule {
    /// The windowed rule with the windows of `program` ([`windows_of`]).
    pub fn windowed_for(program: &Program, l2_words: u32) -> ImageRule {
        let (l2, host) = windows_of(program, l2_words);
        ImageRule::Windowed { l2, host }
    }
}

/// A run of words `[start, start + len)` of one memory, never empty.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Window {
    pub start: u32,
    pub len: u32,
}

impl Window {
    pub fn end(&self) -> u32 {
        self.start + self.len
    }
}

/// The seed every case's L2 base image is drawn from (ASCII "PCCXBASE").
pub const BASE_L2_SEED: u64 = 0x5043_4358_4241_5345;
/// The seed of the host base image ("PCCXHOST").
pub const BASE_HOST_SEED: u64 = 0x5043_4358_484F_5354;

/// Words added on either side of each access of the program to make its
/// window: a datapath that reads one word too far still reads a word of
/// this seed, not the base every seed shares.
pub const WINDOW_PAD_WORDS: u32 = 8;

const SPECIALS_SALT: u64 = 0x5350_4543_4941_4C53;
const MODERATE_SALT: u64 = 0x4D4F_4445_5241_5445;
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The `n`-th output (from 1) of `SplitMix64::new(seed)`, reached without
/// drawing the ones before it.
fn splitmix_at(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Random bits of word `i`: SplitMix64 outputs 2i+1 (low half) and 2i+2.
fn random_word(seed: u64, i: u32) -> Word {
    let n = 2 * u64::from(i);
    u128::from(splitmix_at(seed, n + 1)) | u128::from(splitmix_at(seed, n + 2)) << 64
}

/// L2 word `i` of the image of `seed` under the windowed rule: in a
/// moderate block (one 32-word block in two, by one draw per block) BF16
/// values of magnitude 2^-6 to 2^7, else random bits with one element in
/// sixteen replaced by a BF16 special value (the same distributions as the
/// whole rule's `with_moderate_blocks` and `with_specials`).
pub fn l2_word(seed: u64, i: u32) -> Word {
    let r = random_word(seed, i);
    let block = u64::from(i) / MODERATE_BLOCK_WORDS as u64;
    if splitmix_at(seed ^ MODERATE_SALT, block + 1) & 1 == 1 {
        return moderate_word(r);
    }
    with_special_elements(r, splitmix_at(seed ^ SPECIALS_SALT, u64::from(i) + 1))
}

/// The L2 words `start..start + out.len()` of the image of `seed`: what
/// [`l2_word`] gives, made a block at a time (one moderate draw per block).
pub fn l2_words_into(seed: u64, start: u32, out: &mut [Word]) {
    let block_words = MODERATE_BLOCK_WORDS as u32;
    let mut i = start;
    let end = start + out.len() as u32;
    let mut k = 0usize;
    while i < end {
        let block = u64::from(i / block_words);
        let block_end = ((i / block_words + 1) * block_words).min(end);
        let moderate = splitmix_at(seed ^ MODERATE_SALT, block + 1) & 1 == 1;
        for j in i..block_end {
            let r = random_word(seed, j);
            out[k] = if moderate {
                moderate_word(r)
            } else {
                with_special_elements(r, splitmix_at(seed ^ SPECIALS_SALT, u64::from(j) + 1))
            };
            k += 1;
        }
        i = block_end;
    }
}

/// Random bits `r` made into eight moderate BF16 values.
fn moderate_word(r: Word) -> Word {
    (0..8).fold(0, |acc, lane| {
        let bits = (r >> (16 * lane)) as u16;
        let exponent = 121 + (bits >> 7 & 0xFF) % 14; // 2^-6 .. 2^7
        let element = (bits & 0x807F) | exponent << 7;
        acc | u128::from(element) << (16 * lane)
    })
}

/// `word` with each element whose byte of `s` has a zero low nibble
/// replaced by the special value its next three bits choose.
fn with_special_elements(word: Word, s: u64) -> Word {
    (0..8).fold(word, |word, lane| {
        let bits = (s >> (8 * lane)) & 0xFF;
        if bits & 0xF != 0 {
            return word;
        }
        let special = u128::from(BF16_SPECIALS[(bits >> 4) as usize & 7]);
        (word & !(0xFFFF_u128 << (16 * lane))) | (special << (16 * lane))
    })
}

/// Host word `i` of the image of `seed` under the windowed rule: random bits.
pub fn host_word(seed: u64, i: u32) -> Word {
    random_word(seed, i)
}

/// The L2 base image of an L2 of `words` words, made once per process.
pub fn base_l2(words: u32) -> Arc<[Word]> {
    static CACHE: OnceLock<Mutex<HashMap<u32, Arc<[Word]>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(words)
        .or_insert_with(|| (0..words).map(|i| l2_word(BASE_L2_SEED, i)).collect())
        .clone()
}

/// The host base image, made once per process.
pub fn base_host() -> Arc<[Word]> {
    static BASE: OnceLock<Arc<[Word]>> = OnceLock::new();
    BASE.get_or_init(|| {
        (0..HOST_WORDS)
            .map(|i| host_word(BASE_HOST_SEED, i))
            .collect()
    })
    .clone()
}

/// The windows of `program` on an L2 of `l2_words` words: every L2 and host
/// range a legal instruction of it reads or writes (its footprint,
/// docs/semantics.md section 8, with the shape tables as the program's own
/// MEMSETs leave them from reset), widened by [`WINDOW_PAD_WORDS`] on each
/// side, cut to the memory, merged where they meet. A pure function of the
/// program, computed when a case is made and then kept with it: a shrunk
/// program keeps its case's images.
pub fn windows_of(program: &Program, l2_words: u32) -> (Vec<Window>, Vec<Window>) {
    let mut tables = Tables::default();
    let (mut l2, mut host) = (Vec::new(), Vec::new());
    let mut low: Option<u32> = None;
    for item in &program.items {
        let word = match *item {
            Item::Instr(word) => word,
            // A raw write to INSTR_HI issues INSTR_LO's word with it.
            Item::RegWrite { offset, value } if offset == reg::INSTR_LO => {
                low = Some(value);
                continue;
            }
            Item::RegWrite { offset, value } if offset == reg::INSTR_HI => {
                u64::from(value) << 32 | u64::from(low.unwrap_or(0))
            }
            _ => continue,
        };
        let Decoded::Legal(instr) = decode(word) else {
            continue;
        };
        if let Instr::Memset(m) = &instr {
            let entry = ShapeEntry {
                a: m.a_value,
                b: m.b_value,
                c: m.c_value,
            };
            tables.set(m.dest_cache, m.dest_addr, entry);
            continue;
        }
        let fp = footprint(&instr, &tables);
        l2.extend([fp.l2_read, fp.l2_write].into_iter().flatten());
        host.extend([fp.host_read, fp.host_write].into_iter().flatten());
    }
    (merge(l2, l2_words), merge(host, HOST_WORDS))
}

/// Pads, cuts to `size` words and merges `ranges` into sorted, disjoint,
/// non-adjacent windows.
fn merge(ranges: Vec<Range>, size: u32) -> Vec<Window> {
    let pad = u64::from(WINDOW_PAD_WORDS);
    coalesce(
        ranges
            .into_iter()
            .map(|r| (r.start.saturating_sub(pad), r.end + pad)),
        size,
    )
}

/// Half-open `[start, end)` ranges cut to `size` words, sorted and merged
/// where they overlap or meet.
pub fn coalesce(ranges: impl IntoIterator<Item = (u64, u64)>, size: u32) -> Vec<Window> {
    let size = u64::from(size);
    let mut ranges: Vec<(u64, u64)> = ranges
        .into_iter()
        .map(|(start, end)| (start, end.min(size)))
        .filter(|(start, end)| start < end)
        .collect();
    ranges.sort_unstable();
    let mut out: Vec<Window> = Vec::new();
    for (start, end) in ranges {
        match out.last_mut() {
            Some(last) if u64::from(last.end()) >= start => {
                last.len = last.len.max((end - u64::from(last.start)) as u32);
            }
            _ => out.push(Window {
                start: start as u32,
                len: (end - start) as u32,
            }),
        }
    }
    out
}

/// The windows covering every word of `a` and of `b`.
pub fn union(a: &[Window], b: &[Window], size: u32) -> Vec<Window> {
    coalesce(
        a.iter()
            .chain(b)
            .map(|w| (u64::from(w.start), u64::from(w.end()))),
        size,
    )
}

/// Writes the seed's words into `image` over each window (the rest of
/// `image` is left as it is: the base, for a whole image).
pub fn paint(image: &mut [Word], windows: &[Window], word: impl Fn(u32) -> Word) {
    for w in windows {
        for i in w.start..w.end() {
            image[i as usize] = word(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_at_is_the_sequential_generator() {
        let mut sm = super::super::SplitMix64::new(42);
        for n in 1..=5 {
            assert_eq!(splitmix_at(42, n), sm.next_u64());
        }
    }

    #[test]
    fn words_made_a_block_at_a_time_are_the_words_one_at_a_time() {
        let mut out = vec![0; 100];
        l2_words_into(9, 17, &mut out);
        assert_eq!(out, (17..117).map(|i| l2_word(9, i)).collect::<Vec<_>>());
    }

    #[test]
    fn windows_are_padded_cut_and_merged() {
        let r = |start, end| Range { start, end };
        assert_eq!(
            merge(vec![r(100, 110), r(3, 4), r(112, 120), r(995, 1200)], 1000),
            vec![
                Window { start: 0, len: 12 },
                Window { start: 92, len: 36 },
                Window {
                    start: 987,
                    len: 13
                },
            ]
        );
        // Entirely past the memory: no window.
        assert!(merge(vec![r(2000, 2010)], 1000).is_empty());
    }

    #[test]
    fn l2_words_have_the_whole_rules_distributions() {
        let words: Vec<Word> = (0..4096).map(|i| l2_word(7, i)).collect();
        let elements = || {
            words
                .iter()
                .flat_map(|w| (0..8).map(move |l| (*w >> (16 * l)) as u16))
        };
        let specials = elements().filter(|e| BF16_SPECIALS.contains(e)).count();
        // One element in sixteen in the non-moderate half: about 1/32.
        assert!((600..1500).contains(&specials), "{specials} specials");
        let moderate_blocks = words
            .chunks(MODERATE_BLOCK_WORDS)
            .filter(|b| {
                b.iter().all(|w| {
                    (0..8).all(|l| {
                        let e = (*w >> (16 * l)) as u16;
                        (121..135).contains(&(e >> 7 & 0xFF))
                    })
                })
            })
            .count();
        assert!(
            (40..90).contains(&moderate_blocks),
            "{moderate_blocks} moderate blocks of 128"
        );
    }
}
