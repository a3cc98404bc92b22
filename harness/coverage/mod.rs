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
//! Every bin has a typed [`BinKey`], and its name is rendered from the key:
//! the sampler hits keys and the steering matches on them, so only people
//! and coverage files read names.
//!
//! A bin the RTL cannot reach yet can be listed as *excluded*: shown, never
//! counted as a hole (CVO's routes were, while CVO was a placeholder; none
//! is now).

mod key;
mod probe;
pub mod rtl;

pub use key::{
    direction, BinKey, CvoFlag, CvoRangeClass, CvoShape, End, HazardKind, Illegal, MatLimit,
    Resource, Route, ShapeReason, MEMCPY_ROUTES,
};
pub use probe::Probe;

use pccx_golden::isa::{CvoFunc, MemRoute};
use pccx_golden::model::{ErrorCode, ShapeTable};
use pccx_golden::Engine;
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
    /// What it counts; code matches on this.
    pub key: BinKey,
    /// `key`'s group.
    pub group: Group,
    /// `key`'s name, for reports and files.
    pub name: String,
    /// Why the bin cannot be hit yet; such a bin is never a hole.
    pub excluded: Option<&'static str>,
}

/// The route bins, each with why it is excluded, if it is (the place to
/// exclude a route the RTL cannot take yet).
const ROUTES: [(Route, Option<&str>); 9] = [
    (Route::MemcpyHostToL2, None),
    (Route::MemcpyL2ToHost, None),
    (Route::MemcpyL2ToL2, None),
    (Route::GemmFill, None),
    (Route::GemvFill, None),
    (Route::GemmResult, None),
    (Route::GemvResult, None),
    (Route::L2ToCvo, None),
    (Route::CvoToL2, None),
];

/// The whole catalogue, in report order.
pub fn catalogue() -> &'static [Bin] {
    static BINS: OnceLock<Vec<Bin>> = OnceLock::new();
    BINS.get_or_init(build_catalogue)
}

fn build_catalogue() -> Vec<Bin> {
    let mut bins = Vec::new();
    let mut add = |key: BinKey, excluded: Option<&'static str>| {
        bins.push(Bin {
            key,
            group: key.group(),
            name: key.name(),
            excluded,
        })
    };
    let bools = [false, true];
    for engine in [Engine::Gemv, Engine::Gemm] {
        for findemax in bools {
            for accm in bools {
                for w_scale in bools {
                    let flags = BinKey::MatFlags {
                        engine,
                        findemax,
                        accm,
                        w_scale,
                    };
                    add(flags, None);
                }
            }
        }
    }
    for route in MEMCPY_ROUTES {
        for async_ in bools {
            add(BinKey::MemcpyMode { route, async_ }, None);
        }
    }
    for table in ShapeTable::ALL {
        add(BinKey::MemsetTable(table), None);
    }
    for func in CvoFunc::ALL {
        for flag in CvoFlag::EVERY_FUNCTION {
            add(BinKey::CvoFlag(func, flag), None);
        }
        if func == CvoFunc::Scale {
            add(BinKey::CvoFlag(func, CvoFlag::RecipScale), None);
        }
    }
    for shape in CvoShape::ALL {
        add(BinKey::CvoShape(shape), None);
    }
    for (route, excluded) in ROUTES {
        add(BinKey::Route(route), excluded);
    }
    for reason in Illegal::ALL {
        add(BinKey::Illegal(reason), None);
    }
    for engine in [Engine::Gemv, Engine::Gemm] {
        for reason in ShapeReason::ALL {
            if reason.possible(engine) {
                add(BinKey::Shape(engine, reason), None);
            }
        }
    }
    let memcpy_range = |code, route, end| BinKey::MemcpyRange { code, route, end };
    let (l2, host) = (ErrorCode::L2Range, ErrorCode::HostRange);
    for key in [
        memcpy_range(l2, MemRoute::HostToL2, End::Dest),
        memcpy_range(l2, MemRoute::L2ToHost, End::Src),
        memcpy_range(l2, MemRoute::L2ToL2, End::Src),
        memcpy_range(l2, MemRoute::L2ToL2, End::Dest),
        BinKey::L2Range(Engine::Gemv, End::Src),
        BinKey::L2Range(Engine::Gemv, End::Dest),
        BinKey::L2Range(Engine::Gemm, End::Src),
        BinKey::L2Range(Engine::Gemm, End::Dest),
        memcpy_range(host, MemRoute::HostToL2, End::Src),
        memcpy_range(host, MemRoute::L2ToHost, End::Dest),
        BinKey::L2Range(Engine::Cvo, End::Src),
        BinKey::L2Range(Engine::Cvo, End::Dest),
    ] {
        add(key, None);
    }
    for class in CvoRangeClass::ALL {
        for end in [End::Src, End::Dest] {
            add(BinKey::CvoRangeEdge(class, end), None);
        }
    }
    for engine in [Engine::Gemv, Engine::Gemm] {
        for limit in MatLimit::ALL {
            add(BinKey::AtLimit(engine, limit), None);
        }
    }
    for engine in Engine::ALL {
        add(BinKey::Ok(engine), None);
    }
    for resource in Resource::ALL {
        for kind in HazardKind::ALL {
            add(BinKey::Hazard(kind, resource), None);
        }
    }
    for engine in [Engine::Mem, Engine::Cvo] {
        add(BinKey::BarrierWaits(engine), None);
        add(BinKey::BehindBarrier(engine), None);
    }
    for engine in Engine::ALL {
        add(BinKey::FifoFull(engine), None);
    }
    bins
}

/// The catalogue index of the bin `group: name` (as files name bins).
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

/// The catalogue index of the bin with `key`; `None` if the catalogue has
/// no such bin.
pub fn index_of_key(key: BinKey) -> Option<usize> {
    static INDEX: OnceLock<HashMap<BinKey, usize>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            catalogue()
                .iter()
                .enumerate()
                .map(|(i, b)| (b.key, i))
                .collect()
        })
        .get(&key)
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

    /// Counts one hit. A key the catalogue has no bin for is a bug of the
    /// sampler (caught by the tests); it is ignored.
    pub fn hit(&mut self, key: BinKey) {
        match index_of_key(key) {
            Some(i) => {
                self.counts[i] += 1;
                let case = self.case_number.unwrap_or(self.cases.max(1));
                self.first_case[i].get_or_insert(case);
            }
            None => debug_assert!(false, "no bin for {key:?}"),
        }
    }

    /// Hits of every bin, in catalogue order.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Hits of the bin `group: name`; `None` if the catalogue has no such
    /// bin.
    pub fn count(&self, group: Group, name: &str) -> Option<u64> {
        index_of(group, name).map(|i| self.counts[i])
    }

    /// Hits of the bin with `key`; `None` if the catalogue has no such bin.
    pub fn count_of(&self, key: BinKey) -> Option<u64> {
        index_of_key(key).map(|i| self.counts[i])
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

    /// The coverage of `parts`, each of other cases of one campaign
    /// numbered by their place in it (workers, shards: see
    /// [`merge_concurrent`](Self::merge_concurrent)); `None` for none.
    pub fn sum_concurrent(parts: impl IntoIterator<Item = Coverage>) -> Option<Coverage> {
        parts.into_iter().reduce(|mut total, c| {
            total.merge_concurrent(&c);
            total
        })
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
            assert_eq!(index_of(b.group, &b.name), index_of_key(b.key));
            assert!(index_of_key(b.key).is_some(), "{}", b.name);
        }
        assert_eq!(index_of(Group::Flags, "no such bin"), None);
        assert_eq!(
            index_of_key(BinKey::Shape(Engine::Gemm, ShapeReason::MNotOne)),
            None
        );
        // 16 GEMV/GEMM, 6 MEMCPY, 2 MEMSET, 33 CVO flags + 5 CVO shapes.
        let flags = bins.iter().filter(|b| b.group == Group::Flags).count();
        assert_eq!(flags, 16 + 6 + 2 + 8 * 4 + 1 + 5);
        assert_eq!(bins.len(), 137, "docs/coverage.md counts 137 bins");
    }

    /// Names are what files and reports hold: one of each kind of key,
    /// rendered as coverage files have always named them.
    #[test]
    fn keys_render_the_names_files_hold() {
        let names = [
            (
                BinKey::MatFlags {
                    engine: Engine::Gemm,
                    findemax: true,
                    accm: false,
                    w_scale: true,
                },
                "gemm findemax=1 accm=0 w_scale=1",
            ),
            (
                BinKey::MemcpyMode {
                    route: MemRoute::L2ToHost,
                    async_: true,
                },
                "memcpy l2->host async",
            ),
            (BinKey::MemsetTable(ShapeTable::Weight), "memset weight"),
            (
                BinKey::CvoFlag(CvoFunc::ReduceSum, CvoFlag::SubEmax),
                "cvo reduce_sum sub_emax",
            ),
            (
                BinKey::CvoShape(CvoShape::Descending),
                "cvo dst > src (descending)",
            ),
            (BinKey::Route(Route::GemvFill), "0x13 l2->l1 (gemv fill)"),
            (
                BinKey::Illegal(Illegal::DestCache),
                "ILLEGAL_DEST_CACHE memset",
            ),
            (
                BinKey::Shape(Engine::Gemv, ShapeReason::MNotOne),
                "SHAPE gemv m!=1",
            ),
            (
                BinKey::MemcpyRange {
                    code: ErrorCode::HostRange,
                    route: MemRoute::HostToL2,
                    end: End::Src,
                },
                "HOST_RANGE memcpy host->l2 src",
            ),
            (BinKey::L2Range(Engine::Cvo, End::Dest), "L2_RANGE cvo dest"),
            (BinKey::Ok(Engine::Mem), "OK memcpy"),
            (BinKey::Hazard(HazardKind::War, Resource::EMax), "WAR e_max"),
            (
                BinKey::BarrierWaits(Engine::Mem),
                "barrier memcpy waits for older",
            ),
            (
                BinKey::BehindBarrier(Engine::Cvo),
                "younger waits for cvo barrier",
            ),
            (BinKey::FifoFull(Engine::Mem), "MEM"),
        ];
        for (key, name) in names {
            assert_eq!(key.name(), name);
            let bin = &catalogue()[index_of_key(key).expect(name)];
            assert_eq!((bin.key, bin.name.as_str()), (key, name));
        }
    }

    #[test]
    fn holes_exclude_the_excluded_and_merge_adds() {
        let mut c = Coverage::new();
        let all = catalogue().len();
        let excluded = catalogue().iter().filter(|b| b.excluded.is_some()).count();
        assert_eq!(excluded, 0);
        assert_eq!(c.holes().len(), all - excluded);
        c.hit(BinKey::Route(Route::MemcpyHostToL2));
        c.hit(BinKey::FifoFull(Engine::Mem));
        assert_eq!(c.holes().len(), all - excluded - 2);
        let mut d = Coverage::new();
        d.hit(BinKey::FifoFull(Engine::Mem));
        d.merge(&c);
        assert_eq!(d.count(Group::FifoFull, "MEM"), Some(2));
        assert_eq!(d.count_of(BinKey::FifoFull(Engine::Mem)), Some(2));
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
