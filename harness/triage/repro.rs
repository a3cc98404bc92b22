//! Repro files: everything needed to run a failing case again, exactly, on
//! another day or another machine (docs/harness.md, "Repro files").
//!
//! A repro holds the configuration, the seed and every generator option, the
//! program (as assembler text for people and as words for the tools), the
//! seeds the memory images are filled from, the host I/O timing the DUT
//! ran with, the first difference and where the binary that found it came
//! from. [`Repro::case`] rebuilds the [`TestCase`] from the words and the
//! seeds alone; [`replay`] runs it again and says whether the same mismatch
//! recurs.

use crate::config::{self, HwConfig};
use crate::env::faults::Fault;
use crate::env::models::{self, DutKind, HostIo, Setup};
use crate::scoreboard::{run_case, CheckKind, Mismatch, MismatchRecord};
use crate::stimulus::{GenOptions, OpWeights, TestCase};
use crate::triage::shrink::{self, DutFactory, ProgramSize, ShrinkOptions};
use crate::triage::signature::{Signature, SignatureRecord};
use pccx_golden::asm::{format_program, Item, Program};
use pccx_golden::model::{ModelError, NpuModel, Word, HOST_WORDS};
use serde_json::{json, Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `format` field of every repro file.
pub const FORMAT: &str = "pccx-cosim repro";
/// The `version` field: bumped when a field changes meaning.
pub const VERSION: u64 = 1;

/// How `fill` makes an image from its seed, as the file states it.
pub const FILL_RULE: &str = "word i of an image is the i-th Rng::next_u128 of Rng::new(seed): \
     xoshiro256** 1.0 whose state is the first four SplitMix64 outputs of seed, \
     two draws per word, low half first (harness/stimulus, docs/stimulus.md)";

/// How a weight stream's beats follow from the case's weight seed, as the
/// file states it.
pub const STREAM_RULE: &str = "beat i of stream s (0 matrix, 1 vector) is \
     pccx_golden::streams::WeightSource::new(seed).beat(s, i): SplitMix64 draws from the key \
     mix64(mix64(seed ^ mix64(s + 1)) ^ mix64(i)) (golden/src/streams.rs, docs/numerics.md)";

/// What the shrinker made of the case.
#[derive(Clone, Debug, PartialEq)]
pub struct ShrinkRecord {
    pub before: ProgramSize,
    pub after: ProgramSize,
    pub runs: usize,
    /// The budget ran out first: a smaller program may exist.
    pub exhausted: bool,
    /// The minimal program (same images, same options).
    pub program: Program,
    /// Its first mismatch (of the repro's signature: the shrinker keeps
    /// only programs that fail with it).
    pub mismatch: MismatchRecord,
    /// The file name of its assembler text, beside the repro.
    pub min_asm: String,
}

/// One failing case and everything around it.
#[derive(Clone, Debug, PartialEq)]
pub struct Repro {
    pub setup: Setup,
    pub case: TestCase,
    pub mismatch: MismatchRecord,
    /// The mismatch's signature, as written.
    pub signature: SignatureRecord,
    pub shrink: Option<ShrinkRecord>,
    /// Where the binary that found it came from ([`provenance`]).
    pub provenance: Value,
}

impl Repro {
    pub fn new(setup: Setup, case: TestCase, mismatch: &Mismatch) -> Repro {
        Repro {
            setup,
            case,
            mismatch: mismatch.record(),
            signature: Signature::of(mismatch).record(),
            shrink: None,
            provenance: provenance().clone(),
        }
    }

    /// `repro-<config>-seed<N>.json`.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.stem())
    }

    /// `repro-<config>-seed<N>-min.asm`.
    pub fn min_asm_name(&self) -> String {
        format!("{}-min.asm", self.stem())
    }

    fn stem(&self) -> String {
        format!("repro-{}-seed{}", self.setup.config.name, self.case.seed)
    }

    pub fn to_json(&self) -> Value {
        let s = &self.setup;
        let c = &self.case;
        json!({
            "format": FORMAT,
            "version": VERSION,
            "config": {
                "name": s.config.name,
                "l2_words": s.config.l2_words,
                "fifo_depth": s.config.fifo_depth,
            },
            "dut": s.dut.name(),
            "inject_fault": s.fault.map(|f| json!({"name": f.name(), "params": format!("{f:?}")})),
            "host_timing": s.host_timing.as_ref().map(|io| json!({
                "latency": io.latency,
                "stall_schedule": io.stall_schedule,
            })),
            "seed": c.seed,
            "gen_options": gen_options_json(&c.options),
            "program": program_json(&c.program),
            "images": {
                "l2_init_seed": hex64(c.l2_init_seed),
                "host_init_seed": hex64(c.host_init_seed),
                "l2_words": c.options.l2_words,
                "host_words": HOST_WORDS,
                "fill": FILL_RULE,
                "l2_patches": c.l2_patches.iter().map(|(addr, words)| json!({
                    "addr": addr,
                    "words": words.iter().map(|w| format!("0x{w:032x}")).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            },
            "weight_stream": {
                "seed": hex64(c.weight_seed),
                "rule": STREAM_RULE,
            },
            "mismatch": self.mismatch.to_json(),
            "signature": self.signature.to_json(),
            "shrink": self.shrink.as_ref().map(|r| json!({
                "before": size_json(r.before),
                "after": size_json(r.after),
                "runs": r.runs,
                "exhausted": r.exhausted,
                "min_asm": r.min_asm,
                "program": program_json(&r.program),
                "mismatch": r.mismatch.to_json(),
            })),
            "provenance": self.provenance,
        })
    }

    pub fn from_json(v: &Value) -> Result<Repro, FieldError> {
        let format = str_at(v, "format")?;
        if format != FORMAT {
            return Err(FieldError::new(
                "format",
                format!("`{format}`, expected `{FORMAT}`"),
            ));
        }
        let version = u64_at(v, "version")?;
        if version != VERSION {
            return Err(FieldError::new(
                "version",
                format!("version {version}; this pccx-cosim reads version {VERSION}"),
            ));
        }
        let config = config_at(v)?;
        let dut_name = str_at(v, "dut")?;
        let dut = DutKind::by_name(dut_name).ok_or_else(|| {
            FieldError::new("dut", format!("`{dut_name}`, expected rtl or golden"))
        })?;
        let fault = match at(v, "inject_fault")? {
            Value::Null => None,
            _ => Some(fault_at(v)?),
        };
        let host_timing = match at(v, "host_timing")? {
            Value::Null => None,
            _ => Some(HostIo {
                latency: u32_at(v, "host_timing.latency")?,
                stall_schedule: match at(v, "host_timing.stall_schedule")? {
                    Value::Null => None,
                    other => Some(other.clone()),
                },
            }),
        };
        let options = gen_options_at(v, "gen_options")?;
        if options.l2_words != config.l2_words {
            return Err(FieldError::new(
                "gen_options.l2_words",
                format!(
                    "{} words, but configuration `{}` has {}",
                    options.l2_words, config.name, config.l2_words
                ),
            ));
        }
        let image_words = u32_at(v, "images.l2_words")?;
        if image_words != options.l2_words {
            return Err(FieldError::new(
                "images.l2_words",
                format!(
                    "{image_words}, but gen_options.l2_words is {}",
                    options.l2_words
                ),
            ));
        }
        let seed = u64_at(v, "seed")?;
        // Files written before the weight streams existed ran no GEMV or
        // GEMM that read them; the seed `generate` gives is as good as any.
        let weight_seed = match v.get("weight_stream") {
            None => TestCase::weight_seed_of(seed),
            Some(_) => u64_at(v, "weight_stream.seed")?,
        };
        let case = TestCase {
            seed,
            options,
            program: program_at(v, "program.items")?,
            l2_init_seed: u64_at(v, "images.l2_init_seed")?,
            host_init_seed: u64_at(v, "images.host_init_seed")?,
            weight_seed,
            l2_patches: l2_patches_at(v)?,
        };
        let shrink = match at(v, "shrink")? {
            Value::Null => None,
            _ => Some(ShrinkRecord {
                before: size_at(v, "shrink.before")?,
                after: size_at(v, "shrink.after")?,
                runs: u64_at(v, "shrink.runs")? as usize,
                exhausted: bool_at(v, "shrink.exhausted")?,
                program: program_at(v, "shrink.program.items")?,
                mismatch: mismatch_at(v, "shrink.mismatch")?,
                min_asm: str_at(v, "shrink.min_asm")?.to_string(),
            }),
        };
        Ok(Repro {
            setup: Setup {
                config,
                dut,
                fault,
                host_timing,
                rtl_coverage: false,
            },
            case,
            mismatch: mismatch_at(v, "mismatch")?,
            signature: SignatureRecord {
                text: str_at(v, "signature.text")?.to_string(),
                kind: str_at(v, "signature.kind")?.to_string(),
                engine: str_at(v, "signature.engine")?.to_string(),
                field: str_at(v, "signature.field")?.to_string(),
            },
            shrink,
            provenance: at(v, "provenance")?.clone(),
        })
    }

    /// Reads a repro file. The error names the file and, for a malformed
    /// file, the field at fault.
    pub fn read(path: &Path) -> Result<Repro, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
        Repro::from_json(&v).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes the repro into `dir` (made if missing) under
    /// [`Repro::file_name`]; returns the path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot make directory {}: {e}", dir.display()))?;
        let path = dir.join(self.file_name());
        let text = serde_json::to_string_pretty(&self.to_json()).expect("JSON values serialise");
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// The case to replay: the recorded one, or with `min` the shrunk one.
    pub fn case_to_replay(&self, min: bool) -> Result<(TestCase, &MismatchRecord), String> {
        if !min {
            return Ok((self.case.clone(), &self.mismatch));
        }
        let r = self
            .shrink
            .as_ref()
            .ok_or("the repro holds no shrunk program (it was written with --no-shrink)")?;
        Ok((
            TestCase {
                program: r.program.clone(),
                ..self.case.clone()
            },
            &r.mismatch,
        ))
    }
}

/// A malformed repro: which field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field's path: `gen_options.weights.memcpy`, `program.items[3].instr`.
    pub field: String,
    pub message: String,
}

impl FieldError {
    fn new(field: &str, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

// ----- replay -------------------------------------------------------------------

/// What a replay found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The same mismatch (kind, sequence number and detail text) recurred.
    Reproduces(Mismatch),
    /// A mismatch, but another one.
    Differs(Mismatch),
    /// Reference and DUT now agree.
    NoLongerReproduces,
}

/// Runs `case` on `reference` and `dut` and compares the outcome with the
/// mismatch `expected`.
pub fn replay_case(
    case: &TestCase,
    expected: &MismatchRecord,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
) -> Result<Verdict, ModelError> {
    let outcome = run_case(case, reference, dut)?;
    Ok(match outcome.first_mismatch {
        Some(m) if m.record().same_as(expected) => Verdict::Reproduces(m),
        Some(m) => Verdict::Differs(m),
        None => Verdict::NoLongerReproduces,
    })
}

/// Replays a repro (its shrunk program with `min`) on fresh models made as
/// its setup says.
pub fn replay(repro: &Repro, min: bool) -> Result<Verdict, String> {
    let (case, expected) = repro.case_to_replay(min)?;
    let mut reference = models::open_reference(&repro.setup.config);
    let mut dut = repro
        .setup
        .open_dut()
        .map_err(|e| format!("cannot open the DUT: {e}"))?;
    replay_case(&case, expected, &mut *reference, &mut *dut).map_err(|e| e.to_string())
}

// ----- recording a failure -------------------------------------------------------

/// What was written for one failing seed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Artefacts {
    pub repro: Option<PathBuf>,
    /// The FST waveform window of the first difference (RTL DUTs only).
    pub wave: Option<PathBuf>,
    pub min_asm: Option<PathBuf>,
    /// Program sizes before and after shrinking, and the runs it took.
    pub shrink: Option<(ProgramSize, ProgramSize, usize)>,
    /// What went wrong while writing or shrinking (the failure itself
    /// stands).
    pub problems: Vec<String>,
}

/// Writes a repro for each mismatch it is shown, and shrinks it.
pub struct Recorder<'a> {
    pub setup: Setup,
    pub out_dir: PathBuf,
    /// Makes fresh DUTs for the shrinker; `None`: do not shrink.
    pub shrink_with: Option<Box<DutFactory<'a>>>,
    pub shrink_options: ShrinkOptions,
    /// Cycles of waveform before the first difference; 0: no waveform.
    pub wave_window: u64,
}

impl<'a> Recorder<'a> {
    /// A recorder that shrinks on DUTs made as `setup` says, unless
    /// `no_shrink`.
    pub fn new(setup: Setup, out_dir: PathBuf, no_shrink: bool) -> Recorder<'a> {
        let shrink_with: Option<Box<DutFactory<'a>>> = if no_shrink {
            None
        } else {
            let s = setup.clone();
            Some(Box::new(move || s.open_dut()))
        };
        Recorder {
            setup,
            out_dir,
            shrink_with,
            shrink_options: ShrinkOptions::default(),
            wave_window: crate::triage::wave::DEFAULT_WINDOW,
        }
    }

    /// Writes the repro of `case`, then shrinks the case and writes the
    /// minimal program beside it and the repro again with the shrink's
    /// record. The first write comes before shrinking, so that a repro
    /// exists even if shrinking is interrupted.
    pub fn record(&mut self, case: &TestCase, mismatch: &Mismatch) -> Artefacts {
        let mut artefacts = Artefacts::default();
        let mut repro = Repro::new(self.setup.clone(), case.clone(), mismatch);
        match repro.write(&self.out_dir) {
            Ok(path) => artefacts.repro = Some(path),
            Err(e) => {
                artefacts.problems.push(e);
                return artefacts;
            }
        }
        if self.wave_window > 0 && self.setup.dut == DutKind::Rtl {
            match crate::triage::wave::dump_window(
                &self.setup,
                case,
                mismatch,
                self.wave_window,
                &self.out_dir,
            ) {
                Ok(path) => artefacts.wave = Some(path),
                Err(e) => artefacts.problems.push(format!("no waveform: {e}")),
            }
        }
        let Some(make_dut) = self.shrink_with.as_mut() else {
            return artefacts;
        };
        let mut reference = models::open_reference(&self.setup.config);
        let shrunk = match shrink::shrink_against(
            case,
            &mut *reference,
            &mut **make_dut,
            &self.shrink_options,
        ) {
            Ok(r) => r,
            Err(e) => {
                artefacts.problems.push(format!("not shrunk: {e}"));
                return artefacts;
            }
        };
        let min_path = self.out_dir.join(repro.min_asm_name());
        let repro_path = artefacts.repro.clone().expect("written above");
        let text = min_asm_text(&repro, &repro_path, &shrunk);
        if let Err(e) = std::fs::write(&min_path, text) {
            artefacts
                .problems
                .push(format!("cannot write {}: {e}", min_path.display()));
            return artefacts;
        }
        artefacts.min_asm = Some(min_path);
        artefacts.shrink = Some((shrunk.before, shrunk.after, shrunk.runs));
        repro.shrink = Some(ShrinkRecord {
            before: shrunk.before,
            after: shrunk.after,
            runs: shrunk.runs,
            exhausted: shrunk.exhausted,
            program: shrunk.case.program,
            mismatch: shrunk.mismatch.record(),
            min_asm: repro.min_asm_name(),
        });
        if let Err(e) = repro.write(&self.out_dir) {
            artefacts.problems.push(e);
        }
        artefacts
    }
}

/// The minimal program as assembler text, with a header saying what it is
/// and how to run it.
fn min_asm_text(repro: &Repro, repro_path: &Path, shrunk: &shrink::ShrinkResult) -> String {
    let m = &shrunk.mismatch;
    let at = m.seq.map(|s| format!(" at seq {s}")).unwrap_or_default();
    let mut text = format!(
        "; shrunk from seed {} on {} ({} -> {}, {} runs{})\n\
         ; fails with {}: {}{at}: {}\n\
         ; images: l2_init_seed {}, host_init_seed {}; weight streams: seed {} (see {})\n\
         ; run it: pccx-cosim replay --min {}\n",
        repro.case.seed,
        repro.setup.config.name,
        shrunk.before,
        shrunk.after,
        shrunk.runs,
        if shrunk.exhausted {
            "; budget spent, may shrink further"
        } else {
            ""
        },
        shrunk.signature,
        m.kind,
        m.detail().replace('\n', " "),
        hex64(repro.case.l2_init_seed),
        hex64(repro.case.host_init_seed),
        hex64(repro.case.weight_seed),
        repro.file_name(),
        repro_path.display(),
    );
    text.push_str(&format_program(&shrunk.case.program));
    text
}

// ----- provenance ------------------------------------------------------------------

/// Where this binary and the RTL came from, asked once per process: the
/// pccx-cosim version and build profile, the rustc and Verilator on PATH
/// (asked at run time), the git commit of the source tree and whether
/// hw/rtl has uncommitted changes. What cannot be found out is "unknown".
pub fn provenance() -> &'static Value {
    static PROVENANCE: OnceLock<Value> = OnceLock::new();
    PROVENANCE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let git = |args: &[&str]| -> Option<String> {
            let out = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .env("GIT_OPTIONAL_LOCKS", "0")
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let commit = git(&["rev-parse", "HEAD"]);
        let rtl_commit = git(&["log", "-1", "--format=%H", "--", "hw/rtl"]);
        let dirty = git(&["status", "--porcelain", "--", "hw/rtl"]).map(|s| !s.is_empty());
        let verilator = if cfg!(not(feature = "rtl")) {
            "none (built without the rtl feature)".to_string()
        } else {
            let bin = std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
            first_line_of(&bin, &["--version"])
        };
        let rustc = first_line_of(
            &std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()),
            &["--version"],
        );
        json!({
            "pccx_cosim_version": env!("CARGO_PKG_VERSION"),
            "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "rustc_on_path": rustc,
            "verilator": verilator,
            "git_commit": commit.unwrap_or_else(|| "unknown".into()),
            "rtl_last_commit": rtl_commit.filter(|c| !c.is_empty()).unwrap_or_else(|| "unknown".into()),
            "rtl_dirty": dirty.map_or(json!("unknown"), Value::from),
            "command_line": std::env::args().collect::<Vec<_>>().join(" "),
        })
    })
}

fn first_line_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

// ----- JSON, out ---------------------------------------------------------------------

fn hex64(v: u64) -> String {
    format!("0x{v:016x}")
}

fn size_json(s: ProgramSize) -> Value {
    json!({"items": s.items, "instructions": s.instructions})
}

pub fn signature_json(s: &Signature) -> Value {
    s.record().to_json()
}

fn gen_options_json(o: &GenOptions) -> Value {
    // Destructured, so that a new option cannot be left out of the file.
    let GenOptions {
        instrs,
        l2_words,
        fifo_depth,
        weights:
            OpWeights {
                memset,
                memcpy,
                gemv,
                gemm,
                cvo,
            },
        illegal_pct,
        range_err_pct,
        hazard_pct,
        abut_pct,
        long_copy_pct,
        burst_pct,
        idle_pct,
        max_idle,
        clear_err_pct,
        bad_reg_write_pct,
        mat_shape_err_pct,
        mat_limit_pct,
        mat_chain_pct,
        mat_prefix_pct,
        stall_io,
    } = *o;
    json!({
        "instrs": instrs,
        "l2_words": l2_words,
        "fifo_depth": fifo_depth,
        "weights": {"memset": memset, "memcpy": memcpy, "gemv": gemv, "gemm": gemm, "cvo": cvo},
        "illegal_pct": illegal_pct,
        "range_err_pct": range_err_pct,
        "hazard_pct": hazard_pct,
        "abut_pct": abut_pct,
        "long_copy_pct": long_copy_pct,
        "burst_pct": burst_pct,
        "idle_pct": idle_pct,
        "max_idle": max_idle,
        "clear_err_pct": clear_err_pct,
        "bad_reg_write_pct": bad_reg_write_pct,
        "mat_shape_err_pct": mat_shape_err_pct,
        "mat_limit_pct": mat_limit_pct,
        "mat_chain_pct": mat_chain_pct,
        "mat_prefix_pct": mat_prefix_pct,
        "stall_io": stall_io,
    })
}

fn program_json(p: &Program) -> Value {
    let items: Vec<Value> = p
        .items
        .iter()
        .map(|item| match *item {
            Item::Instr(word) => json!({"instr": format!("0x{word:016x}")}),
            Item::Idle(cycles) => json!({"idle": cycles}),
            Item::RegWrite { offset, value } => json!({"write": {
                "offset": format!("0x{offset:02x}"),
                "value": format!("0x{value:08x}"),
            }}),
        })
        .collect();
    json!({"asm": format_program(p), "size": size_json(ProgramSize::of(p)), "items": items})
}

// ----- JSON, in ----------------------------------------------------------------------

/// The value at a dotted path (`a.b`, `a.items[3].c`); a missing one is
/// reported at the first part of the path that is missing.
fn at<'v>(v: &'v Value, path: &str) -> Result<&'v Value, FieldError> {
    let mut cur = v;
    let mut here = String::new();
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        if !here.is_empty() {
            here.push('.');
        }
        here.push_str(name);
        cur = cur
            .get(name)
            .ok_or_else(|| FieldError::new(&here, "missing"))?;
        if let Some(i) = index {
            here.push_str(&format!("[{i}]"));
            cur = cur
                .get(i)
                .ok_or_else(|| FieldError::new(&here, "missing"))?;
        }
    }
    Ok(cur)
}

fn str_at<'v>(v: &'v Value, path: &str) -> Result<&'v str, FieldError> {
    let x = at(v, path)?;
    x.as_str()
        .ok_or_else(|| FieldError::new(path, format!("{x}, expected a string")))
}

fn bool_at(v: &Value, path: &str) -> Result<bool, FieldError> {
    let x = at(v, path)?;
    x.as_bool()
        .ok_or_else(|| FieldError::new(path, format!("{x}, expected true or false")))
}

/// An unsigned number: a JSON number, or a string of one (decimal or `0x`
/// hex; 64-bit seeds are written as hex strings, which no JSON reader
/// rounds).
fn u64_at(v: &Value, path: &str) -> Result<u64, FieldError> {
    let x = at(v, path)?;
    parse_u64(x).ok_or_else(|| FieldError::new(path, format!("{x}, expected an unsigned number")))
}

fn parse_u64(x: &Value) -> Option<u64> {
    match x {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s = s.replace('_', "");
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
}

/// `images.l2_patches`: words written over the seeded L2 image. Files
/// written before patches existed have none.
fn l2_patches_at(v: &Value) -> Result<Vec<(u32, Vec<Word>)>, FieldError> {
    let Some(list) = v.get("images").and_then(|i| i.get("l2_patches")) else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| FieldError::new("images.l2_patches", "expected a list"))?;
    let mut patches = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let path = format!("images.l2_patches[{i}]");
        let addr = u32_at(p, "addr")
            .map_err(|e| FieldError::new(&format!("{path}.{}", e.field), e.message))?;
        let words = p
            .get("words")
            .and_then(Value::as_array)
            .ok_or_else(|| FieldError::new(&format!("{path}.words"), "expected a list of words"))?
            .iter()
            .enumerate()
            .map(|(k, w)| {
                w.as_str()
                    .and_then(|s| s.strip_prefix("0x"))
                    .and_then(|h| u128::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        FieldError::new(
                            &format!("{path}.words[{k}]"),
                            format!("{w}, expected a 0x-prefixed 128-bit hex word"),
                        )
                    })
            })
            .collect::<Result<Vec<Word>, FieldError>>()?;
        patches.push((addr, words));
    }
    Ok(patches)
}

fn u32_at(v: &Value, path: &str) -> Result<u32, FieldError> {
    let n = u64_at(v, path)?;
    u32::try_from(n).map_err(|_| FieldError::new(path, format!("{n} does not fit in 32 bits")))
}

fn opt_u64_at(v: &Value, path: &str) -> Result<Option<u64>, FieldError> {
    match at(v, path)? {
        Value::Null => Ok(None),
        _ => u64_at(v, path).map(Some),
    }
}

fn opt_str_at(v: &Value, path: &str) -> Result<Option<String>, FieldError> {
    match at(v, path)? {
        Value::Null => Ok(None),
        _ => str_at(v, path).map(|s| Some(s.to_string())),
    }
}

fn config_at(v: &Value) -> Result<HwConfig, FieldError> {
    let name = str_at(v, "config.name")?;
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
        (
            "config.l2_words",
            u32_at(v, "config.l2_words")?,
            config.l2_words,
        ),
        (
            "config.fifo_depth",
            u32_at(v, "config.fifo_depth")?,
            config.fifo_depth,
        ),
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

fn fault_at(v: &Value) -> Result<Fault, FieldError> {
    let name = str_at(v, "inject_fault.name")?;
    let fault = Fault::by_name(name).ok_or_else(|| {
        FieldError::new(
            "inject_fault.name",
            format!("no fault `{name}` (known: {})", Fault::names().join(", ")),
        )
    })?;
    let params = str_at(v, "inject_fault.params")?;
    if params != format!("{fault:?}") {
        return Err(FieldError::new(
            "inject_fault.params",
            format!(
                "`{params}` is not `--inject-fault {name}` ({fault:?}); \
                 a fault with other parameters can only be replayed from code"
            ),
        ));
    }
    Ok(fault)
}

fn gen_options_at(v: &Value, path: &str) -> Result<GenOptions, FieldError> {
    let u = |name: &str| u32_at(v, &format!("{path}.{name}"));
    // Options newer than the file's writer: the value that writer used
    // (the GEMV/GEMM ones did nothing before GEMV/GEMM were generated).
    let newer = |name: &str, default: u32| match v.get(path).and_then(|o| o.get(name)) {
        None => Ok(default),
        Some(_) => u(name),
    };
    let defaults = GenOptions::new(0, 0, 0);
    Ok(GenOptions {
        instrs: u64_at(v, &format!("{path}.instrs"))? as usize,
        l2_words: u("l2_words")?,
        fifo_depth: u("fifo_depth")?,
        weights: OpWeights {
            memset: u("weights.memset")?,
            memcpy: u("weights.memcpy")?,
            gemv: u("weights.gemv")?,
            gemm: u("weights.gemm")?,
            cvo: u("weights.cvo")?,
        },
        illegal_pct: u("illegal_pct")?,
        range_err_pct: u("range_err_pct")?,
        hazard_pct: u("hazard_pct")?,
        // Files written before abutting operands existed generated none.
        abut_pct: newer("abut_pct", 0)?,
        long_copy_pct: u("long_copy_pct")?,
        burst_pct: u("burst_pct")?,
        idle_pct: u("idle_pct")?,
        max_idle: u("max_idle")?,
        clear_err_pct: u("clear_err_pct")?,
        bad_reg_write_pct: u("bad_reg_write_pct")?,
        mat_shape_err_pct: newer("mat_shape_err_pct", defaults.mat_shape_err_pct)?,
        mat_limit_pct: newer("mat_limit_pct", defaults.mat_limit_pct)?,
        mat_chain_pct: newer("mat_chain_pct", defaults.mat_chain_pct)?,
        mat_prefix_pct: newer("mat_prefix_pct", defaults.mat_prefix_pct)?,
        // Files written before stall I/O existed ran with ideal I/O.
        stall_io: match v.get(path).and_then(|o| o.get("stall_io")) {
            None => false,
            Some(b) => b.as_bool().ok_or_else(|| {
                FieldError::new(&format!("{path}.stall_io"), "expected true or false")
            })?,
        },
    })
}

fn program_at(v: &Value, path: &str) -> Result<Program, FieldError> {
    let list = at(v, path)?
        .as_array()
        .ok_or_else(|| FieldError::new(path, "expected a list of items"))?;
    let mut items = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let here = format!("{path}[{i}]");
        let obj: &Map<String, Value> = item.as_object().ok_or_else(|| {
            FieldError::new(
                &here,
                format!("{item}, expected {{\"instr\"|\"idle\"|\"write\": ...}}"),
            )
        })?;
        let (key, _) = match (obj.len(), obj.iter().next()) {
            (1, Some(kv)) => kv,
            _ => {
                return Err(FieldError::new(
                    &here,
                    format!("{item}, expected exactly one of instr, idle, write"),
                ))
            }
        };
        let field = format!("{here}.{key}");
        items.push(match key.as_str() {
            "instr" => {
                let word = str_at(v, &field)?;
                let hex = word.strip_prefix("0x").ok_or_else(|| {
                    FieldError::new(&field, format!("`{word}`, expected a 0x hex word"))
                })?;
                Item::Instr(u64::from_str_radix(&hex.replace('_', ""), 16).map_err(|e| {
                    FieldError::new(&field, format!("`{word}` is not a 64-bit word: {e}"))
                })?)
            }
            "idle" => Item::Idle(u32_at(v, &field)?),
            "write" => Item::RegWrite {
                offset: u32_at(v, &format!("{field}.offset"))?,
                value: u32_at(v, &format!("{field}.value"))?,
            },
            other => {
                return Err(FieldError::new(
                    &here,
                    format!("unknown item `{other}` (expected instr, idle or write)"),
                ))
            }
        });
    }
    Ok(Program { items })
}

fn size_at(v: &Value, path: &str) -> Result<ProgramSize, FieldError> {
    Ok(ProgramSize {
        items: u64_at(v, &format!("{path}.items"))? as usize,
        instructions: u64_at(v, &format!("{path}.instructions"))? as usize,
    })
}

fn mismatch_at(v: &Value, path: &str) -> Result<MismatchRecord, FieldError> {
    let f = |name: &str| format!("{path}.{name}");
    let kind_name = str_at(v, &f("kind"))?;
    let kind = CheckKind::ALL
        .into_iter()
        .find(|k| k.name() == kind_name)
        .ok_or_else(|| FieldError::new(&f("kind"), format!("no check `{kind_name}`")))?;
    let seq = opt_u64_at(v, &f("seq"))?
        .map(|s| u32::try_from(s).map_err(|_| FieldError::new(&f("seq"), "too large")))
        .transpose()?;
    Ok(MismatchRecord {
        kind,
        seq,
        word: opt_u64_at(v, &f("word"))?,
        disasm: opt_str_at(v, &f("disasm"))?,
        cycle: opt_u64_at(v, &f("cycle"))?,
        detail: str_at(v, &f("detail"))?.to_string(),
        reference: str_at(v, &f("reference"))?.to_string(),
        dut: str_at(v, &f("dut"))?.to_string(),
        reference_model: str_at(v, &f("reference_model"))?.to_string(),
        dut_model: str_at(v, &f("dut_model"))?.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoreboard::{Difference, GroupDiff};

    fn mismatch() -> Mismatch {
        Mismatch {
            kind: CheckKind::L2Writes,
            seq: Some(4),
            word: Some(0x2001ca017da724c3),
            cycle: Some(211),
            difference: Difference::L2Write {
                addr: 0xe5,
                diff: GroupDiff::Value {
                    reference: (0xff, 0x1d8b),
                    dut: (0xff, 0x1d8a),
                },
                totals: (1, 1),
            },
            reference: "L2[0x000e5] <- 0x1d8b mask 0xff".into(),
            dut: "L2[0x000e5] <- 0x1d8a mask 0xff".into(),
            afterwards: None,
            reference_model: "golden".into(),
            dut_model: "rtl+l2-data".into(),
        }
    }

    fn repro() -> Repro {
        let config = config::by_name("tiny").unwrap();
        let case = TestCase::generate(0xdead_beef_cafe, &GenOptions::for_config(&config, 12));
        Repro::new(
            Setup::new(
                config,
                DutKind::Rtl,
                Some(Fault::by_name("l2-data").unwrap()),
            ),
            case,
            &mismatch(),
        )
    }

    #[test]
    fn a_repro_reads_back_as_written() {
        let mut r = repro();
        r.shrink = Some(ShrinkRecord {
            before: ProgramSize::of(&r.case.program),
            after: ProgramSize {
                items: 2,
                instructions: 2,
            },
            runs: 17,
            exhausted: false,
            program: Program {
                items: vec![
                    Item::Instr(0x3030001000100090),
                    Item::Idle(3),
                    Item::RegWrite {
                        offset: 8,
                        value: 0xffff_ffff,
                    },
                ],
            },
            mismatch: Mismatch {
                seq: None,
                word: None,
                cycle: None,
                ..mismatch()
            }
            .record(),
            min_asm: r.min_asm_name(),
        });
        let text = serde_json::to_string_pretty(&r.to_json()).unwrap();
        let back = Repro::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(r.file_name(), "repro-tiny-seed244837814094590.json");
        assert_eq!(r.min_asm_name(), "repro-tiny-seed244837814094590-min.asm");
    }

    /// Each damaged field is named in the error.
    #[test]
    fn a_malformed_field_is_named() {
        let good = repro().to_json();
        for (path, bad, field) in [
            ("format", json!("something else"), "format"),
            ("version", json!(99), "version"),
            ("seed", json!(-1), "seed"),
            ("seed", json!("0xzz"), "seed"),
            ("dut", json!("fpga"), "dut"),
            ("config.name", json!("no-such-board"), "config.name"),
            ("config.l2_words", json!(12), "config.l2_words"),
            (
                "gen_options.weights.memcpy",
                json!("lots"),
                "gen_options.weights.memcpy",
            ),
            ("gen_options.l2_words", json!(5), "gen_options.l2_words"),
            (
                "images.host_init_seed",
                Value::Null,
                "images.host_init_seed",
            ),
            (
                "inject_fault.name",
                json!("no-such-fault"),
                "inject_fault.name",
            ),
            (
                "inject_fault.params",
                json!("L2Data { nth: 7, bit: 0 }"),
                "inject_fault.params",
            ),
            (
                "host_timing.latency",
                json!(1u64 << 40),
                "host_timing.latency",
            ),
            ("mismatch.kind", json!("l3-writes"), "mismatch.kind"),
            ("mismatch.detail", json!(3), "mismatch.detail"),
        ] {
            let mut v = good.clone();
            let (parent, leaf) = path.rsplit_once('.').map_or(("", path), |(p, l)| (p, l));
            let target = if parent.is_empty() {
                &mut v
            } else {
                parent.split('.').fold(&mut v, |v, k| &mut v[k])
            };
            target[leaf] = bad;
            let e = Repro::from_json(&v).unwrap_err();
            assert_eq!(e.field, field, "{path}: {e}");
        }
        let mut v = good.clone();
        v["program"]["items"][2] = json!({"instr": "0x12345678123456789"});
        assert_eq!(
            Repro::from_json(&v).unwrap_err().field,
            "program.items[2].instr"
        );
        v["program"]["items"][2] = json!({"jump": 3});
        assert_eq!(Repro::from_json(&v).unwrap_err().field, "program.items[2]");
        v["program"]["items"][2] = json!({"write": {"offset": 8}});
        assert_eq!(
            Repro::from_json(&v).unwrap_err().field,
            "program.items[2].write.value"
        );
        let mut v = good;
        v.as_object_mut().unwrap().remove("mismatch");
        let e = Repro::from_json(&v).unwrap_err();
        assert_eq!(e.to_string(), "field `mismatch`: missing");
    }

    /// The weight seed is in the file and replay uses it; a file written
    /// before the weight streams existed gets the seed `generate` gives.
    #[test]
    fn the_weight_seed_is_recorded_and_read_back() {
        let r = repro();
        let mut v = r.to_json();
        assert_eq!(v["weight_stream"]["seed"], json!(hex64(r.case.weight_seed)));
        assert!(v["weight_stream"]["rule"]
            .as_str()
            .unwrap()
            .contains("WeightSource"));
        v["weight_stream"]["seed"] = json!("0x2a");
        let back = Repro::from_json(&v).unwrap();
        assert_eq!(back.case.weight_seed, 42);
        assert_eq!(
            back.case.weight_source(),
            pccx_golden::WeightSource::new(42)
        );
        v["weight_stream"]["seed"] = json!(true);
        assert_eq!(
            Repro::from_json(&v).unwrap_err().field,
            "weight_stream.seed"
        );
        v.as_object_mut().unwrap().remove("weight_stream");
        let old = Repro::from_json(&v).unwrap();
        assert_eq!(old.case.weight_seed, TestCase::weight_seed_of(r.case.seed));
        assert_eq!(old.case.weight_seed, r.case.weight_seed);
    }

    /// Options added after a file was written take their defaults.
    #[test]
    fn newer_generator_options_default_when_missing() {
        let r = repro();
        let mut v = r.to_json();
        let options = v["gen_options"].as_object_mut().unwrap();
        for name in [
            "mat_shape_err_pct",
            "mat_limit_pct",
            "mat_chain_pct",
            "mat_prefix_pct",
        ] {
            assert!(options.remove(name).is_some(), "{name}");
        }
        assert_eq!(Repro::from_json(&v).unwrap().case.options, r.case.options);
        v["gen_options"]["mat_chain_pct"] = json!("often");
        assert_eq!(
            Repro::from_json(&v).unwrap_err().field,
            "gen_options.mat_chain_pct"
        );
    }

    #[test]
    fn seeds_are_hex_strings_and_numbers_both_read() {
        let mut v = repro().to_json();
        assert_eq!(v["images"]["l2_init_seed"].as_str().unwrap().len(), 18);
        v["seed"] = json!("0x10");
        assert_eq!(Repro::from_json(&v).unwrap().case.seed, 16);
    }

    #[test]
    fn provenance_says_unknown_rather_than_nothing() {
        let p = provenance();
        for key in [
            "pccx_cosim_version",
            "build_profile",
            "rustc_on_path",
            "verilator",
            "git_commit",
            "rtl_last_commit",
        ] {
            let s = p[key].as_str().unwrap_or_else(|| panic!("{key}: {p}"));
            assert!(!s.is_empty(), "{key}");
        }
        assert!(p["rtl_dirty"].is_boolean() || p["rtl_dirty"] == "unknown");
        assert_eq!(p["pccx_cosim_version"], env!("CARGO_PKG_VERSION"));
    }
}
