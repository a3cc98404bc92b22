//! Functional coverage, sampled from the reference (golden) side of every
//! case a campaign runs (docs/coverage.md).
//!
//! A [`Coverage`] counts hits of a fixed catalogue of bins in five groups:
//! the flag combinations of each opcode, the data routes, the error codes
//! per opcode (and, for SHAPE and the range errors, per reason), the hazard
//! kinds between instructions in flight at the same time, and back-pressure
//! of each engine's FIFO. [`Probe`] wraps the golden reference and samples
//! every instruction it executes; its counts accumulate over every case it
//! is reset for, so a campaign's reference gives the campaign's coverage.
//!
//! A bin the RTL cannot reach yet can be listed as *excluded*: shown, never
//! counted as a hole (CVO's routes were, while CVO was a placeholder; none
//! is now).

mod probe;
pub mod rtl;

pub use probe::Probe;

use pccx_golden::isa::CvoFunc;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// The groups of bins, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// Per opcode, every combination of its flags (and MEMCPY directions,
    /// MEMSET tables, CVO functions).
    Flags,
    /// Data routes an instruction moved words along.
    Routes,
    /// Retire codes per opcode that can produce them, SHAPE and the range
    /// errors split by reason.
    Errors,
    /// RAW, WAR, WAW on each resource, and barriers, between an instruction
    /// and an older one still in flight when it was latched.
    Hazards,
    /// A latch that waited because its engine's FIFO was full.
    FifoFull,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::Flags,
        Group::Routes,
        Group::Errors,
        Group::Hazards,
        Group::FifoFull,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Flags => "flags",
            Group::Routes => "routes",
            Group::Errors => "errors",
            Group::Hazards => "hazards",
            Group::FifoFull => "fifo-full",
        }
    }
}

/// One bin of the catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bin {
    pub group: Group,
    pub name: String,
    /// Why the bin cannot be hit yet; such a bin is never a hole.
    pub excluded: Option<&'static str>,
}

/// The engine names, in engine (opcode) order.
pub const ENGINES: [&str; 5] = ["GEMV", "GEMM", "MEM", "MEMSET", "CVO"];

/// The MEMCPY directions as bin names use them.
pub const DIRECTIONS: [&str; 3] = ["host->l2", "l2->host", "l2->l2"];

/// The resources a hazard can be on.
pub const RESOURCES: [&str; 4] = ["l2", "host", "table", "e_max"];

/// Hazard kinds.
pub const HAZARDS: [&str; 3] = ["RAW", "WAR", "WAW"];

/// SHAPE reasons of GEMV (GEMM has all but `m!=1`), in the order they are
/// classified: the first that holds names the bin.
pub const SHAPE_REASONS: [&str; 5] = ["zero-dim", "k-mismatch", "m!=1", "over-l1", "over-acc"];

/// Route bins: (name, excluded).
const ROUTES: [(&str, Option<&str>); 9] = [
    ("0x01 host->l2 (memcpy)", None),
    ("0x10 l2->host (memcpy)", None),
    ("l2->l2 (memcpy)", None),
    ("0x12 l2->l1 (gemm fill)", None),
    ("0x13 l2->l1 (gemv fill)", None),
    ("0x21 gemm->l2 (result)", None),
    ("0x31 gemv->l2 (result)", None),
    ("0x14 l2->cvo", None),
    ("0x41 cvo->l2", None),
];

/// CVO operand shapes (`cvo len=0`, ...): the lengths that end on and off
/// a word boundary, and the walk direction the overlap rule picks
/// (docs/cvo.md section 1).
pub const CVO_SHAPES: [&str; 5] = [
    "len=0",
    "len ends mid-word",
    "len whole words",
    "dst <= src (ascending)",
    "dst > src (descending)",
];

/// `gemv findemax=1 accm=0 w_scale=1`.
pub fn mat_flags_bin(op: &str, findemax: bool, accm: bool, w_scale: bool) -> String {
    format!(
        "{op} findemax={} accm={} w_scale={}",
        u8::from(findemax),
        u8::from(accm),
        u8::from(w_scale)
    )
}

/// `memcpy l2->host async`.
pub fn memcpy_bin(direction: &str, async_: bool) -> String {
    format!(
        "memcpy {direction} {}",
        if async_ { "async" } else { "sync" }
    )
}

/// `cvo exp sync`, `cvo gelu sub_emax`, `cvo scale recip_scale`.
pub fn cvo_bin(func: CvoFunc, what: &str) -> String {
    format!("cvo {} {what}", func.name())
}

/// `RAW l2`, `WAW e_max`.
pub fn hazard_bin(kind: &str, resource: &str) -> String {
    format!("{kind} {resource}")
}

/// `barrier memcpy waits for older`.
pub fn barrier_waits_bin(op: &str) -> String {
    format!("barrier {op} waits for older")
}

/// `younger waits for cvo barrier`.
pub fn behind_barrier_bin(op: &str) -> String {
    format!("younger waits for {op} barrier")
}

/// `SHAPE gemm over-acc`.
pub fn shape_bin(op: &str, reason: &str) -> String {
    format!("SHAPE {op} {reason}")
}

/// The whole catalogue, in report order.
pub fn catalogue() -> &'static [Bin] {
    static BINS: OnceLock<Vec<Bin>> = OnceLock::new();
    BINS.get_or_init(build_catalogue)
}

fn build_catalogue() -> Vec<Bin> {
    let mut bins = Vec::new();
    let mut add = |group: Group, name: String, excluded: Option<&'static str>| {
        bins.push(Bin {
            group,
            name,
            excluded,
        })
    };
    let bools = [false, true];
    for op in ["gemv", "gemm"] {
        for f in bools {
            for a in bools {
                for w in bools {
                    add(Group::Flags, mat_flags_bin(op, f, a, w), None);
                }
            }
        }
    }
    for d in DIRECTIONS {
        for a in bools {
            add(Group::Flags, memcpy_bin(d, a), None);
        }
    }
    add(Group::Flags, "memset fmap".into(), None);
    add(Group::Flags, "memset weight".into(), None);
    for func in CvoFunc::ALL {
        for what in ["sync", "async", "sub_emax", "accm"] {
            add(Group::Flags, cvo_bin(func, what), None);
        }
        if func == CvoFunc::Scale {
            add(Group::Flags, cvo_bin(func, "recip_scale"), None);
        }
    }
    for what in CVO_SHAPES {
        add(Group::Flags, format!("cvo {what}"), None);
    }
    for (name, excluded) in ROUTES {
        add(Group::Routes, name.into(), excluded);
    }
    for name in [
        "ILLEGAL_OPCODE",
        "ILLEGAL_FUNC cvo",
        "ILLEGAL_DEST_CACHE memset",
        "ILLEGAL_DIRECTION memcpy",
    ] {
        add(Group::Errors, name.into(), None);
    }
    for op in ["gemv", "gemm"] {
        for reason in SHAPE_REASONS {
            if op == "gemm" && reason == "m!=1" {
                continue;
            }
            add(Group::Errors, shape_bin(op, reason), None);
        }
    }
    for name in [
        "L2_RANGE memcpy host->l2 dest",
        "L2_RANGE memcpy l2->host src",
        "L2_RANGE memcpy l2->l2 src",
        "L2_RANGE memcpy l2->l2 dest",
        "L2_RANGE gemv src",
        "L2_RANGE gemv dest",
        "L2_RANGE gemm src",
        "L2_RANGE gemm dest",
        "HOST_RANGE memcpy host->l2 src",
        "HOST_RANGE memcpy l2->host dest",
        "L2_RANGE cvo src",
        "L2_RANGE cvo dest",
        "OK gemv",
        "OK gemm",
        "OK memcpy",
        "OK memset",
        "OK cvo",
    ] {
        add(Group::Errors, name.into(), None);
    }
    for resource in RESOURCES {
        for kind in HAZARDS {
            add(Group::Hazards, hazard_bin(kind, resource), None);
        }
    }
    for op in ["memcpy", "cvo"] {
        add(Group::Hazards, barrier_waits_bin(op), None);
        add(Group::Hazards, behind_barrier_bin(op), None);
    }
    for engine in ENGINES {
        add(Group::FifoFull, engine.into(), None);
    }
    bins
}

fn index_of(group: Group, name: &str) -> Option<usize> {
    static INDEX: OnceLock<HashMap<(Group, String), usize>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            catalogue()
                .iter()
                .enumerate()
                .map(|(i, b)| ((b.group, b.name.clone()), i))
                .collect()
        })
        .get(&(group, name.to_string()))
        .copied()
}

/// Hits per bin of [`catalogue`], and what was sampled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    counts: Vec<u64>,
    /// Per bin, the case (1 for the first case sampled) that first hit it.
    first_case: Vec<Option<u64>>,
    /// Cases (resets) sampled.
    pub cases: u64,
    /// Instructions sampled.
    pub instructions: u64,
    /// Instructions whose latch or retire cycle was not reported (an
    /// untimed reference): their hazard and FIFO bins could not be sampled.
    pub untimed: u64,
    /// The number a first hit is recorded under, when the sampler is told
    /// (a campaign worker: the seed's position in the campaign); else the
    /// count of cases sampled.
    pub case_number: Option<u64>,
}

impl Default for Coverage {
    fn default() -> Coverage {
        Coverage::new()
    }
}

/// Bins hit per group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupSummary {
    pub group: Group,
    pub hit: usize,
    /// Bins that count (excluded ones not included).
    pub total: usize,
    pub excluded: usize,
}

impl Coverage {
    pub fn new() -> Coverage {
        Coverage {
            counts: vec![0; catalogue().len()],
            first_case: vec![None; catalogue().len()],
            cases: 0,
            instructions: 0,
            untimed: 0,
            case_number: None,
        }
    }

    /// Counts one hit. The names come from this module's functions, so an
    /// unknown one is a bug here (caught by the tests); it is ignored.
    pub fn hit(&mut self, group: Group, name: &str) {
        match index_of(group, name) {
            Some(i) => {
                self.counts[i] += 1;
                let case = self.case_number.unwrap_or(self.cases.max(1));
                self.first_case[i].get_or_insert(case);
            }
            None => debug_assert!(false, "no {} bin `{name}`", group.name()),
        }
    }

    /// Hits of every bin, in catalogue order.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Hits of one bin; `None` if the catalogue has no such bin.
    pub fn count(&self, group: Group, name: &str) -> Option<u64> {
        index_of(group, name).map(|i| self.counts[i])
    }

    /// The case (counted from 1) that first hit the bin.
    pub fn first_case(&self, group: Group, name: &str) -> Option<u64> {
        index_of(group, name).and_then(|i| self.first_case[i])
    }

    /// The number of cases it took to hit every bin that counts: the
    /// latest first hit; `None` while some bin is a hole.
    pub fn closed_after(&self) -> Option<u64> {
        let mut latest = 0;
        for (i, b) in catalogue().iter().enumerate() {
            if b.excluded.is_none() {
                latest = latest.max(self.first_case[i]?);
            }
        }
        Some(latest)
    }

    /// Every bin with its hits, in catalogue order.
    pub fn bins(&self) -> impl Iterator<Item = (&'static Bin, u64)> + '_ {
        catalogue().iter().zip(self.counts.iter().copied())
    }

    /// Adds another coverage's hits to these, its cases after these.
    pub fn merge(&mut self, other: &Coverage) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        for (a, b) in self.first_case.iter_mut().zip(&other.first_case) {
            if a.is_none() {
                *a = b.map(|case| case + self.cases);
            }
        }
        self.cases += other.cases;
        self.instructions += other.instructions;
        self.untimed += other.untimed;
    }

    /// Adds the hits of another sampler that ran other cases of the same
    /// campaign at the same time (another worker), both numbering cases by
    /// their position in the campaign: a first hit is the earlier of the
    /// two.
    pub fn merge_concurrent(&mut self, other: &Coverage) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        for (a, b) in self.first_case.iter_mut().zip(&other.first_case) {
            *a = match (*a, *b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
        }
        self.cases += other.cases;
        self.instructions += other.instructions;
        self.untimed += other.untimed;
    }

    /// Bins that count and were never hit.
    pub fn holes(&self) -> Vec<&'static Bin> {
        self.bins()
            .filter(|(b, n)| b.excluded.is_none() && *n == 0)
            .map(|(b, _)| b)
            .collect()
    }

    pub fn groups(&self) -> Vec<GroupSummary> {
        Group::ALL
            .iter()
            .map(|&group| {
                let of = || self.bins().filter(move |(b, _)| b.group == group);
                GroupSummary {
                    group,
                    hit: of().filter(|(b, n)| b.excluded.is_none() && *n > 0).count(),
                    total: of().filter(|(b, _)| b.excluded.is_none()).count(),
                    excluded: of().filter(|(b, _)| b.excluded.is_some()).count(),
                }
            })
            .collect()
    }

    /// (bins hit, bins that count).
    pub fn totals(&self) -> (usize, usize) {
        self.groups()
            .iter()
            .fold((0, 0), |(h, t), g| (h + g.hit, t + g.total))
    }

    /// The summary the campaign prints: totals, one line per group, the
    /// holes.
    pub fn text(&self) -> String {
        let (hit, total) = self.totals();
        let excluded: usize = self.groups().iter().map(|g| g.excluded).sum();
        let mut s = format!(
            "functional coverage: {hit}/{total} bins hit ({:.1}%) over {} cases, {} instructions; \
             {excluded} bins excluded (not yet implemented), {} holes",
            percent(hit, total),
            self.cases,
            self.instructions,
            total - hit,
        );
        if let Some(n) = self.closed_after() {
            let _ = write!(s, "; every bin hit by case {n}");
        }
        for g in self.groups() {
            let ex = if g.excluded > 0 {
                format!(" (+{} excluded)", g.excluded)
            } else {
                String::new()
            };
            let _ = write!(
                s,
                "\n  {:<10} {:>3}/{:<3}{ex}",
                g.group.name(),
                g.hit,
                g.total
            );
        }
        if self.untimed > 0 {
            let _ = write!(
                s,
                "\n  note: {} instructions had no cycles (untimed reference): hazards and FIFO \
                 back-pressure were not sampled for them",
                self.untimed
            );
        }
        let holes = self.holes();
        if !holes.is_empty() {
            s.push_str("\nholes:");
            for group in Group::ALL {
                let names: Vec<&str> = holes
                    .iter()
                    .filter(|b| b.group == group)
                    .map(|b| b.name.as_str())
                    .collect();
                if !names.is_empty() {
                    let _ = write!(s, "\n  {}: {}", group.name(), names.join(", "));
                }
            }
        }
        s
    }

    /// The `--coverage FILE` document (docs/coverage.md).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(CoverageFile::of(self)).expect("coverage files serialise")
    }
}

/// The `--coverage FILE` document, field by field (docs/coverage.md).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CoverageFile {
    /// `pccx-cosim functional coverage`.
    pub format: String,
    pub version: u64,
    pub cases: u64,
    pub instructions: u64,
    pub untimed_instructions: u64,
    pub hit: usize,
    pub total: usize,
    /// The case after which every bin not excluded was hit.
    pub closed_after_cases: Option<u64>,
    pub groups: Vec<GroupRecord>,
    pub bins: Vec<BinRecord>,
    /// `group: bin` of every bin not hit and not excluded.
    pub holes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GroupRecord {
    pub group: String,
    pub hit: usize,
    pub total: usize,
    pub excluded: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BinRecord {
    pub group: String,
    pub name: String,
    pub count: u64,
    /// The first case (counted from 1) that hit it.
    pub first_case: Option<u64>,
    /// Why the bin is excluded, when it is.
    pub excluded: Option<String>,
}

/// `format` of a coverage file.
pub const COVERAGE_FORMAT: &str = "pccx-cosim functional coverage";

impl CoverageFile {
    /// Reads a `--coverage` file back: every bin of this build's catalogue
    /// must be there by group and name (a file of another build, with
    /// other bins, is refused), hit counts and first cases as written.
    pub fn read(path: &std::path::Path) -> Result<Coverage, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let file: CoverageFile = serde_json::from_str(&text)
            .map_err(|e| format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))?;
        if file.format != COVERAGE_FORMAT {
            return Err(format!(
                "{}: field `format`: `{}` is not `{COVERAGE_FORMAT}`",
                path.display(),
                file.format
            ));
        }
        let mut c = Coverage::new();
        let mut seen = 0;
        for (n, b) in file.bins.iter().enumerate() {
            let group = Group::ALL.into_iter().find(|g| g.name() == b.group);
            let Some(i) = group.and_then(|g| index_of(g, &b.name)) else {
                return Err(format!(
                    "{}: field `bins[{n}]`: this build has no bin `{}: {}`",
                    path.display(),
                    b.group,
                    b.name
                ));
            };
            c.counts[i] = b.count;
            c.first_case[i] = b.first_case;
            seen += 1;
        }
        if seen != catalogue().len() {
            return Err(format!(
                "{}: field `bins`: {seen} bins, this build has {}",
                path.display(),
                catalogue().len()
            ));
        }
        c.cases = file.cases;
        c.instructions = file.instructions;
        c.untimed = file.untimed_instructions;
        Ok(c)
    }

    pub fn of(c: &Coverage) -> CoverageFile {
        let (hit, total) = c.totals();
        CoverageFile {
            format: COVERAGE_FORMAT.into(),
            version: 1,
            cases: c.cases,
            instructions: c.instructions,
            untimed_instructions: c.untimed,
            hit,
            total,
            closed_after_cases: c.closed_after(),
            groups: c
                .groups()
                .iter()
                .map(|g| GroupRecord {
                    group: g.group.name().into(),
                    hit: g.hit,
                    total: g.total,
                    excluded: g.excluded,
                })
                .collect(),
            bins: c
                .bins()
                .zip(&c.first_case)
                .map(|((b, n), first)| BinRecord {
                    group: b.group.name().into(),
                    name: b.name.clone(),
                    count: n,
                    first_case: *first,
                    excluded: b.excluded.map(String::from),
                })
                .collect(),
            holes: c
                .holes()
                .iter()
                .map(|b| format!("{}: {}", b.group.name(), b.name))
                .collect(),
        }
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_names_are_unique_and_found() {
        let bins = catalogue();
        for b in bins {
            assert_eq!(
                bins.iter()
                    .filter(|o| o.group == b.group && o.name == b.name)
                    .count(),
                1,
                "{}",
                b.name
            );
            assert!(index_of(b.group, &b.name).is_some());
        }
        assert_eq!(index_of(Group::Flags, "no such bin"), None);
        // 16 GEMV/GEMM, 6 MEMCPY, 2 MEMSET, 33 CVO flags + 5 CVO shapes.
        let flags = bins.iter().filter(|b| b.group == Group::Flags).count();
        assert_eq!(flags, 16 + 6 + 2 + 8 * 4 + 1 + 5);
        assert_eq!(bins.len(), 122, "docs/coverage.md counts 122 bins");
    }

    #[test]
    fn holes_exclude_the_excluded_and_merge_adds() {
        let mut c = Coverage::new();
        let all = catalogue().len();
        let excluded = catalogue().iter().filter(|b| b.excluded.is_some()).count();
        assert_eq!(excluded, 0);
        assert_eq!(c.holes().len(), all - excluded);
        c.hit(Group::Routes, "0x01 host->l2 (memcpy)");
        c.hit(Group::FifoFull, "MEM");
        assert_eq!(c.holes().len(), all - excluded - 2);
        let mut d = Coverage::new();
        d.hit(Group::FifoFull, "MEM");
        d.merge(&c);
        assert_eq!(d.count(Group::FifoFull, "MEM"), Some(2));
        assert_eq!(d.totals(), (2, all - excluded));
        let text = d.text();
        assert!(text.contains("functional coverage: 2/"), "{text}");
        assert!(text.contains("fifo-full    1/5"), "{text}");
        assert!(
            text.contains("\nholes:\n  flags: gemv findemax=0"),
            "{text}"
        );
        let j = d.to_json();
        assert_eq!(j["hit"], 2);
        assert_eq!(j["holes"].as_array().unwrap().len(), all - excluded - 2);
    }
}
