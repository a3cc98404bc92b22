//! The repro file's format: serde types laid out as the file is, and the
//! checks serde cannot make (names that must exist in this build, a
//! configuration that must not have changed), each naming its field.

use super::{FieldError, Repro, ShrinkRecord};
use crate::config::{self, HwConfig};
use crate::env::faults::Fault;
use crate::env::models::{DutKind, HostIo, Setup};
use crate::env::numerics::NumericsMode;
use crate::format::{self, Hex, Hex128, Hex64};
use crate::scoreboard::MismatchRecord;
use crate::stimulus::{GenOptions, ImageRule, Preload, TestCase, Window};
use crate::triage::shrink::ProgramSize;
use crate::triage::signature::SignatureRecord;
use pccx_golden::asm::{format_program, Item, Program};
use pccx_golden::model::{Observation, ShapeEntry, ShapeTable, HOST_WORDS, SHAPE_ENTRIES};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `format` field of every repro file.
pub const FORMAT: &str = "pccx-cosim repro";
/// The `version` field: bumped when a field changes meaning. Version 2
/// added `images.rule` and the windows; a version-1 file is read as the
/// whole rule it was written under. Version 3 added
/// `gen_options.random_init` (the RTL's state before reset drawn from the
/// seed) and `seed_timeout_seconds`; older files ran from zeroed state, and
/// an older build must not replay a newer file from the wrong state.
/// Version 4 draws that state with the shim's own generator instead of
/// Verilator's (docs/harness.md, "Initial state"): a version-3 file that
/// drew one cannot be replayed exactly, and says so. It also added
/// `images.preload` (backdoor writes before the program). Version 5 added
/// `images.host_patches` and `weight_stream.matrix_prefix` /
/// `vector_prefix` (a workload's data and weights, docs/workloads.md): an
/// older build would replay such a file without them.
pub const VERSION: u64 = 5;
/// The oldest version this build reads.
pub const OLDEST_VERSION: u64 = 1;

/// How the whole rule makes an image from its seed, as the file states it.
pub const FILL_RULE: &str = "word i of an image is the i-th Rng::next_u128 of Rng::new(seed): \
     xoshiro256** 1.0 whose state is the first four SplitMix64 outputs of seed, \
     two draws per word, low half first (harness/stimulus, docs/stimulus.md)";

/// How the windowed rule makes an image, as the file states it.
pub const WINDOWED_FILL_RULE: &str = "word i is the image seed's word i inside a window and \
     the base seed's word i elsewhere (base seeds: L2 0x5043435842415345, host \
     0x50434358484F5354 as stimulus::image::BASE_*_SEED); a seed's word i is made of \
     SplitMix64(seed) outputs 2i+1 (low half) and 2i+2, L2 words then with moderate \
     blocks and BF16 specials (harness/stimulus/image.rs, docs/stimulus.md)";

/// How a weight stream's beats follow from the case's weight seed, as the
/// file states it.
pub const STREAM_RULE: &str = "beat i of stream s (0 matrix, 1 vector) is \
     pccx_golden::streams::WeightSource::new(seed).beat(s, i): SplitMix64 draws from the key \
     mix64(mix64(seed ^ mix64(s + 1)) ^ mix64(i)) (golden/src/streams.rs, docs/numerics.md)";

fn full_observation() -> Observation {
    Observation::Full
}

fn is_full(o: &Observation) -> bool {
    *o == Observation::Full
}

/// A repro file, field by field (docs/harness.md, "Repro files").
#[derive(Serialize, Deserialize)]
pub(super) struct ReproFile {
    format: String,
    #[serde(deserialize_with = "format::flexible")]
    version: u64,
    config: ConfigFile,
    dut: String,
    inject_fault: Option<FaultFile>,
    host_timing: Option<HostIo>,
    /// The level the DUT was seen at (docs/dut-contract.md); files written
    /// before the levels existed saw everything.
    #[serde(default = "full_observation", skip_serializing_if = "is_full")]
    observe: Observation,
    /// The DUT's manifest when it is not the repository's own RTL
    /// (`--dut-manifest`, docs/dut-contract.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dut_manifest: Option<String>,
    /// `--numerics exact`: the DUT's declared profile did not apply.
    #[serde(default, skip_serializing_if = "NumericsMode::is_declared")]
    numerics: NumericsMode,
    #[serde(deserialize_with = "format::flexible")]
    seed: u64,
    gen_options: GenOptions,
    program: ProgramFile,
    images: ImagesFile,
    /// Files written before the weight streams existed have none.
    #[serde(default)]
    weight_stream: Option<WeightStreamFile>,
    mismatch: MismatchRecord,
    signature: SignatureRecord,
    shrink: Option<ShrinkFile>,
    /// The wall-clock limit per seed a `timeout` repro ran past, in
    /// seconds; replay applies it again. Absent for a mismatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed_timeout_seconds: Option<f64>,
    provenance: Value,
}

#[derive(Serialize, Deserialize)]
struct ConfigFile {
    name: String,
    l2_words: u32,
    fifo_depth: u32,
}

/// `--inject-fault NAME`, and the fault's parameters as `Debug` prints
/// them (a fault with other parameters can only be made from code).
#[derive(Serialize, Deserialize)]
struct FaultFile {
    name: String,
    params: String,
}

/// A program as words (for the tools) and as text (for people; not read).
#[derive(Serialize, Deserialize)]
struct ProgramFile {
    asm: String,
    size: ProgramSize,
    items: Vec<ItemFile>,
}

/// One program item: `{"instr": "0x..."}`, `{"idle": N}` or
/// `{"write": {"offset": "0x08", "value": "0x..."}}`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ItemFile {
    Instr(Hex64),
    Idle(u32),
    Write {
        offset: Hex<u32, 2>,
        value: Hex<u32, 8>,
    },
}

#[derive(Serialize, Deserialize)]
struct ImagesFile {
    l2_init_seed: Hex64,
    host_init_seed: Hex64,
    l2_words: u32,
    #[serde(default)]
    host_words: u32,
    #[serde(default)]
    fill: String,
    /// Which words come from the seeds; version-1 files have none and were
    /// written under the whole rule.
    #[serde(default)]
    rule: Option<ImageRuleName>,
    /// The windows of the windowed rule.
    #[serde(default)]
    l2_windows: Option<Vec<Window>>,
    #[serde(default)]
    host_windows: Option<Vec<Window>>,
    /// Words written over the seeded L2 image; files written before
    /// patches existed have none.
    #[serde(default)]
    l2_patches: Vec<PatchFile>,
    /// Shape-table entries and e_max set by backdoor before the program
    /// (steered cases); files written before preloads existed have none.
    #[serde(default, skip_serializing_if = "PreloadFile::is_empty")]
    preload: PreloadFile,
    /// Words written over the host image (a workload's data); files
    /// written before version 5 have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    host_patches: Vec<PatchFile>,
}

/// [`Preload`] as the file holds it.
#[derive(Default, Serialize, Deserialize)]
struct PreloadFile {
    #[serde(default)]
    tables: Vec<TableEntryFile>,
    #[serde(default)]
    e_max: Option<Hex<u16, 4>>,
}

impl PreloadFile {
    fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.e_max.is_none()
    }

    fn of(p: &Preload) -> PreloadFile {
        PreloadFile {
            tables: p
                .tables
                .iter()
                .map(|&(table, index, e)| TableEntryFile {
                    table: TableName::of(table),
                    index,
                    a: e.a,
                    b: e.b,
                    c: e.c,
                })
                .collect(),
            e_max: p.e_max.map(Hex),
        }
    }

    fn preload(&self) -> Result<Preload, FieldError> {
        let mut tables = Vec::new();
        for (i, t) in self.tables.iter().enumerate() {
            if usize::from(t.index) >= SHAPE_ENTRIES {
                return Err(FieldError::new(
                    &format!("images.preload.tables[{i}].index"),
                    format!("{}, past the last entry {}", t.index, SHAPE_ENTRIES - 1),
                ));
            }
            let entry = ShapeEntry {
                a: t.a,
                b: t.b,
                c: t.c,
            };
            tables.push((t.table.table(), t.index, entry));
        }
        Ok(Preload {
            tables,
            e_max: self.e_max.map(|h| h.0),
        })
    }
}

/// One preloaded shape-table entry.
#[derive(Serialize, Deserialize)]
struct TableEntryFile {
    table: TableName,
    index: u8,
    a: u16,
    b: u16,
    c: u16,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum TableName {
    Fmap,
    Weight,
}

impl TableName {
    fn of(t: ShapeTable) -> TableName {
        match t {
            ShapeTable::Fmap => TableName::Fmap,
            ShapeTable::Weight => TableName::Weight,
        }
    }

    fn table(self) -> ShapeTable {
        match self {
            TableName::Fmap => ShapeTable::Fmap,
            TableName::Weight => ShapeTable::Weight,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ImageRuleName {
    Whole,
    Windowed,
}

impl ImagesFile {
    /// The case's image rule; `version` is the file's.
    fn rule(&mut self, version: u64) -> Result<ImageRule, FieldError> {
        let rule = match (version, self.rule) {
            (1, None) => ImageRuleName::Whole,
            (1, Some(_)) => {
                return Err(FieldError::new(
                    "images.rule",
                    "a version-1 file has no image rule",
                ))
            }
            (_, None) => return Err(FieldError::new("images.rule", "missing")),
            (_, Some(rule)) => rule,
        };
        Ok(match rule {
            ImageRuleName::Whole => ImageRule::Whole,
            ImageRuleName::Windowed => {
                let l2 = check_windows(self.l2_windows.take(), "images.l2_windows", self.l2_words)?;
                let host =
                    check_windows(self.host_windows.take(), "images.host_windows", HOST_WORDS)?;
                ImageRule::Windowed { l2, host }
            }
        })
    }
}

/// The windows of `field`, each non-empty and inside a memory of `size`
/// words.
fn check_windows(
    windows: Option<Vec<Window>>,
    field: &str,
    size: u32,
) -> Result<Vec<Window>, FieldError> {
    let windows = windows.ok_or_else(|| FieldError::new(field, "missing"))?;
    for (n, w) in windows.iter().enumerate() {
        if w.len == 0 || w.start.checked_add(w.len).is_none_or(|end| end > size) {
            return Err(FieldError::new(
                &format!("{field}[{n}]"),
                format!(
                    "start {} len {} is empty or past the memory's {size} words",
                    w.start, w.len
                ),
            ));
        }
    }
    Ok(windows)
}

/// Patches as the file holds them.
fn patch_files(patches: &[(u32, Vec<pccx_golden::model::Word>)]) -> Vec<PatchFile> {
    patches
        .iter()
        .map(|(addr, words)| PatchFile {
            addr: *addr,
            words: words.iter().map(|&w| Hex(w)).collect(),
        })
        .collect()
}

/// Patches from the file.
fn from_patch_files(files: Vec<PatchFile>) -> Vec<(u32, Vec<pccx_golden::model::Word>)> {
    files
        .into_iter()
        .map(|p| (p.addr, p.words.into_iter().map(|w| w.0).collect()))
        .collect()
}

#[derive(Serialize, Deserialize)]
struct PatchFile {
    #[serde(deserialize_with = "format::flexible")]
    addr: u32,
    words: Vec<Hex128>,
}

#[derive(Serialize, Deserialize)]
struct WeightStreamFile {
    seed: Hex64,
    #[serde(default)]
    rule: String,
    /// Beats before the seeded ones (a workload's weights); files written
    /// before version 5 have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    matrix_prefix: Vec<Hex128>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    vector_prefix: Vec<Hex128>,
}

#[derive(Serialize, Deserialize)]
struct ShrinkFile {
    before: ProgramSize,
    after: ProgramSize,
    runs: usize,
    exhausted: bool,
    min_asm: String,
    program: ProgramFile,
    mismatch: MismatchRecord,
}

impl ProgramFile {
    fn of(p: &Program) -> ProgramFile {
        ProgramFile {
            asm: format_program(p),
            size: ProgramSize::of(p),
            items: p
                .items
                .iter()
                .map(|item| match *item {
                    Item::Instr(word) => ItemFile::Instr(Hex(word)),
                    Item::Idle(cycles) => ItemFile::Idle(cycles),
                    Item::RegWrite { offset, value } => ItemFile::Write {
                        offset: Hex(offset),
                        value: Hex(value),
                    },
                })
                .collect(),
        }
    }

    fn program(&self) -> Program {
        let items = self
            .items
            .iter()
            .map(|item| match *item {
                ItemFile::Instr(word) => Item::Instr(word.0),
                ItemFile::Idle(cycles) => Item::Idle(cycles),
                ItemFile::Write { offset, value } => Item::RegWrite {
                    offset: offset.0,
                    value: value.0,
                },
            })
            .collect();
        Program { items }
    }
}

impl ReproFile {
    pub(super) fn of(r: &Repro) -> ReproFile {
        let (s, c) = (&r.setup, &r.case);
        ReproFile {
            format: FORMAT.into(),
            version: VERSION,
            config: ConfigFile {
                name: s.config.name.to_string(),
                l2_words: s.config.l2_words,
                fifo_depth: s.config.fifo_depth,
            },
            dut: s.dut.name().into(),
            inject_fault: s.fault.map(|f| FaultFile {
                name: f.name().into(),
                params: format!("{f:?}"),
            }),
            host_timing: s.host_timing.clone(),
            observe: s.observe,
            dut_manifest: s.dut_manifest.clone(),
            numerics: s.numerics,
            seed: c.seed,
            gen_options: c.options.clone(),
            program: ProgramFile::of(&c.program),
            images: ImagesFile {
                l2_init_seed: Hex(c.l2_init_seed),
                host_init_seed: Hex(c.host_init_seed),
                l2_words: c.options.l2_words,
                host_words: HOST_WORDS,
                fill: match c.image {
                    ImageRule::Whole => FILL_RULE,
                    ImageRule::Windowed { .. } => WINDOWED_FILL_RULE,
                }
                .into(),
                rule: Some(match c.image {
                    ImageRule::Whole => ImageRuleName::Whole,
                    ImageRule::Windowed { .. } => ImageRuleName::Windowed,
                }),
                l2_windows: match &c.image {
                    ImageRule::Windowed { l2, .. } => Some(l2.clone()),
                    ImageRule::Whole => None,
                },
                host_windows: match &c.image {
                    ImageRule::Windowed { host, .. } => Some(host.clone()),
                    ImageRule::Whole => None,
                },
                l2_patches: patch_files(&c.l2_patches),
                preload: PreloadFile::of(&c.preload),
                host_patches: patch_files(&c.host_patches),
            },
            weight_stream: Some(WeightStreamFile {
                seed: Hex(c.weight_seed),
                rule: STREAM_RULE.into(),
                matrix_prefix: c.weight_prefix[0].iter().map(|&w| Hex(w)).collect(),
                vector_prefix: c.weight_prefix[1].iter().map(|&w| Hex(w)).collect(),
            }),
            mismatch: r.mismatch.clone(),
            signature: r.signature.clone(),
            shrink: r.shrink.as_ref().map(|k| ShrinkFile {
                before: k.before,
                after: k.after,
                runs: k.runs,
                exhausted: k.exhausted,
                min_asm: k.min_asm.clone(),
                program: ProgramFile::of(&k.program),
                mismatch: k.mismatch.clone(),
            }),
            seed_timeout_seconds: r.seed_timeout.map(|d| d.as_secs_f64()),
            provenance: r.provenance.clone(),
        }
    }

    /// Deserialises, naming the field at fault.
    pub(super) fn read(v: &Value) -> Result<ReproFile, FieldError> {
        // The format and version first: another file or a newer version
        // is reported as such, not as whichever field differs first.
        match v.get("format").map(|f| f.as_str()) {
            Some(Some(FORMAT)) => {}
            Some(_) => {
                return Err(FieldError::new(
                    "format",
                    format!("{}, expected `{FORMAT}`", v["format"]),
                ))
            }
            None => return Err(FieldError::new("format", "missing")),
        }
        match v.get("version").and_then(Value::as_u64) {
            Some(OLDEST_VERSION..=VERSION) => {}
            Some(other) => {
                return Err(FieldError::new(
                    "version",
                    format!(
                        "version {other}; this pccx-cosim reads versions \
                         {OLDEST_VERSION} to {VERSION}"
                    ),
                ))
            }
            None => return Err(FieldError::new("version", "missing or not a number")),
        }
        serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            let message = e.inner().to_string();
            // serde reports a missing field at the struct that lacks it;
            // name the field itself, as every other error does.
            match missing_field_name(&message) {
                Some(name) if path == "." => FieldError::new(name, "missing"),
                Some(name) => FieldError::new(&format!("{path}.{name}"), "missing"),
                None => FieldError::new(&path, message),
            }
        })
    }

    /// The checks serde cannot make, then the [`Repro`].
    pub(super) fn into_repro(mut self) -> Result<Repro, FieldError> {
        let config = self.config.check()?;
        let dut = DutKind::by_name(&self.dut).ok_or_else(|| {
            FieldError::new("dut", format!("`{}`, expected rtl or golden", self.dut))
        })?;
        let fault = self
            .inject_fault
            .as_ref()
            .map(FaultFile::check)
            .transpose()?;
        let options = self.gen_options;
        if options.l2_words != config.l2_words {
            return Err(FieldError::new(
                "gen_options.l2_words",
                format!(
                    "{} words, but configuration `{}` has {}",
                    options.l2_words, config.name, config.l2_words
                ),
            ));
        }
        if self.images.l2_words != options.l2_words {
            return Err(FieldError::new(
                "images.l2_words",
                format!(
                    "{}, but gen_options.l2_words is {}",
                    self.images.l2_words, options.l2_words
                ),
            ));
        }
        // Files written before the weight streams existed ran no GEMV or
        // GEMM that read them; the seed `generate` gives is as good as any.
        let (weight_seed, weight_prefix) = match self.weight_stream {
            None => (
                TestCase::weight_seed_of(self.seed),
                [Vec::new(), Vec::new()],
            ),
            Some(w) => (
                w.seed.0,
                [
                    w.matrix_prefix.into_iter().map(|b| b.0).collect(),
                    w.vector_prefix.into_iter().map(|b| b.0).collect(),
                ],
            ),
        };
        if self.version == 3 && options.random_init {
            return Err(FieldError::new(
                "gen_options.random_init",
                format!(
                    "a version-3 file drew the RTL's initial state with Verilator's \
                     generator, which this pccx-cosim no longer has, so it cannot replay \
                     the case exactly; run seed {} again to write a version-{VERSION} file",
                    self.seed
                ),
            ));
        }
        let image = self.images.rule(self.version)?;
        let preload = self.images.preload.preload()?;
        let case = TestCase {
            seed: self.seed,
            image,
            options,
            program: self.program.program(),
            l2_init_seed: self.images.l2_init_seed.0,
            host_init_seed: self.images.host_init_seed.0,
            weight_seed,
            l2_patches: from_patch_files(self.images.l2_patches),
            host_patches: from_patch_files(self.images.host_patches),
            weight_prefix,
            preload,
        };
        Ok(Repro {
            setup: Setup {
                config,
                dut,
                fault,
                host_timing: self.host_timing,
                rtl_coverage: false,
                observe: self.observe,
                dut_manifest: self.dut_manifest,
                numerics: self.numerics,
            },
            case,
            mismatch: self.mismatch,
            signature: self.signature,
            shrink: self.shrink.map(|k| ShrinkRecord {
                before: k.before,
                after: k.after,
                runs: k.runs,
                exhausted: k.exhausted,
                program: k.program.program(),
                mismatch: k.mismatch,
                min_asm: k.min_asm,
            }),
            seed_timeout: match self.seed_timeout_seconds {
                None => None,
                Some(s) if s > 0.0 && s.is_finite() => Some(std::time::Duration::from_secs_f64(s)),
                Some(s) => {
                    return Err(FieldError {
                        field: "seed_timeout_seconds".into(),
                        message: format!("{s} is not a positive number of seconds"),
                    })
                }
            },
            provenance: self.provenance,
        })
    }
}

/// `x` of serde's "missing field `x`".
fn missing_field_name(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
}

impl ConfigFile {
    /// The configuration of that name in this build, unchanged since the
    /// file was written.
    fn check(&self) -> Result<HwConfig, FieldError> {
        let name = &self.name;
        let config = config::by_name(name).ok_or_else(|| {
            FieldError::new(
                "config.name",
                format!(
                    "no configuration `{name}` in this pccx-cosim (it has: {})",
                    config::names().join(", ")
                ),
            )
        })?;
        for (field, recorded, now) in [
            ("config.l2_words", self.l2_words, config.l2_words),
            ("config.fifo_depth", self.fifo_depth, config.fifo_depth),
        ] {
            if recorded != now {
                return Err(FieldError::new(
                    field,
                    format!(
                        "{recorded} in the file, but this pccx-cosim's `{name}` has {now}: \
                         the configuration has changed since the repro was written"
                    ),
                ));
            }
        }
        Ok(config)
    }
}

impl FaultFile {
    fn check(&self) -> Result<Fault, FieldError> {
        let name = &self.name;
        let fault = Fault::by_name(name).ok_or_else(|| {
            FieldError::new(
                "inject_fault.name",
                format!("no fault `{name}` (known: {})", Fault::names().join(", ")),
            )
        })?;
        if self.params != format!("{fault:?}") {
            return Err(FieldError::new(
                "inject_fault.params",
                format!(
                    "`{}` is not `--inject-fault {name}` ({fault:?}); \
                     a fault with other parameters can only be replayed from code",
                    self.params
                ),
            ));
        }
        Ok(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stimulus::image::{BASE_HOST_SEED, BASE_L2_SEED};

    #[test]
    fn the_windowed_rule_states_the_base_seeds() {
        for seed in [BASE_L2_SEED, BASE_HOST_SEED] {
            assert!(
                WINDOWED_FILL_RULE.contains(&format!("0x{seed:X}")),
                "{seed:#x}"
            );
        }
    }
}
