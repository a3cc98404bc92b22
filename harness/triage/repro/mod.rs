//! Repro files: everything needed to run a failing case again, exactly, on
//! another day or another machine (docs/harness.md, "Repro files").
//!
//! A repro holds the configuration, the seed and every generator option, the
//! program (as assembler text for people and as words for the tools), the
//! seeds the memory images are filled from, the host I/O timing the DUT
//! ran with, the first difference and where the binary that found it came
//! from. The file's layout is a serde type (`file.rs`); [`replay`] runs a
//! repro's case again and says whether the same mismatch recurs.
//!
//! Here: the [`Repro`] and replay. Beside it: `file.rs` (the format),
//! `recorder.rs` (writing a failing seed's artefacts and shrinking it),
//! `provenance.rs` (where the binary came from).

mod file;
mod provenance;
mod recorder;

pub use file::{FILL_RULE, FORMAT, STREAM_RULE, VERSION};
pub use provenance::provenance;
pub use recorder::{Artefacts, Recorder};

use crate::env::models::{self, Setup};
use crate::scoreboard::{run_case, CheckKind, Mismatch, MismatchRecord};
use crate::stimulus::TestCase;
use crate::triage::shrink::ProgramSize;
use crate::triage::signature::{Signature, SignatureRecord};
use pccx_golden::asm::Program;
use pccx_golden::model::{ModelError, NpuModel};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

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
    /// For a timeout (a mismatch of kind `timeout`): the wall-clock limit
    /// per seed it ran past, which replay applies again.
    pub seed_timeout: Option<std::time::Duration>,
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
            seed_timeout: None,
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

    /// The repro as the file holds it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(file::ReproFile::of(self)).expect("repro files serialise")
    }

    /// Reads a repro from its JSON; a malformed one is a [`FieldError`]
    /// naming the field at fault.
    pub fn from_json(v: &Value) -> Result<Repro, FieldError> {
        file::ReproFile::read(v)?.into_repro()
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
        let text = serde_json::to_string_pretty(&file::ReproFile::of(self))
            .expect("repro files serialise");
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
    replay_case_within(case, expected, reference, dut, None)
}

/// [`replay_case`] with the DUT told to give up after `limit` of wall time
/// (a timeout's repro). A timeout reproduces when the DUT gives up again,
/// wherever it got to: that point depends on the machine's speed.
pub fn replay_case_within(
    case: &TestCase,
    expected: &MismatchRecord,
    reference: &mut dyn NpuModel,
    dut: &mut dyn NpuModel,
    limit: Option<std::time::Duration>,
) -> Result<Verdict, ModelError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    let abandon = Arc::new(AtomicBool::new(false));
    if limit.is_some() {
        if let Some(sim) = dut.sim_controls() {
            sim.set_abandon_flag(Some(abandon.clone()));
        }
    }
    let (done, finished) = mpsc::channel::<()>();
    let outcome = std::thread::scope(|scope| {
        if let Some(limit) = limit {
            let abandon = abandon.clone();
            scope.spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
                    abandon.store(true, Ordering::SeqCst);
                }
            });
        }
        let outcome = run_case(case, reference, dut);
        drop(done);
        outcome
    });
    if let Some(sim) = dut.sim_controls() {
        sim.set_abandon_flag(None);
    }
    let outcome = match outcome {
        Err(ModelError::Abandoned { what }) if expected.kind == CheckKind::Timeout => {
            let m = Mismatch::timeout(limit, what, reference.name(), dut.name());
            return Ok(Verdict::Reproduces(m));
        }
        other => other?,
    };
    Ok(match outcome.first_mismatch {
        Some(m) if m.record().same_as(expected) => Verdict::Reproduces(m),
        Some(m) => Verdict::Differs(m),
        None => Verdict::NoLongerReproduces,
    })
}

/// Replays a repro (its shrunk program with `min`) on fresh models made as
/// its setup says; a timeout's repro under its wall-clock limit again.
pub fn replay(repro: &Repro, min: bool) -> Result<Verdict, String> {
    let (case, expected) = repro.case_to_replay(min)?;
    let mut reference = models::open_reference(&repro.setup.config);
    let mut dut = repro
        .setup
        .open_dut()
        .map_err(|e| format!("cannot open the DUT: {e}"))?;
    replay_case_within(
        &case,
        expected,
        &mut *reference,
        &mut *dut,
        repro.seed_timeout,
    )
    .map_err(|e| e.to_string())
}

/// `0x` and 16 hex digits.
fn hex64(v: u64) -> String {
    format!("0x{v:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::env::faults::Fault;
    use crate::env::models::DutKind;
    use crate::scoreboard::{CheckKind, Difference, GroupDiff};
    use crate::stimulus::GenOptions;
    use pccx_golden::asm::Item;
    use serde_json::json;

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
        // The windows of the windowed image rule (version 2).
        assert_eq!(good["images"]["rule"], json!("windowed"));
        let mut v = good.clone();
        v["images"]["l2_windows"] = json!([{"start": 4090, "len": 100}]);
        assert_eq!(
            Repro::from_json(&v).unwrap_err().field,
            "images.l2_windows[0]"
        );
        let mut v = good.clone();
        v["images"].as_object_mut().unwrap().remove("host_windows");
        assert_eq!(
            Repro::from_json(&v).unwrap_err().to_string(),
            "field `images.host_windows`: missing"
        );
        let mut v = good.clone();
        v["images"]["rule"] = json!("sideways");
        assert_eq!(Repro::from_json(&v).unwrap_err().field, "images.rule");
        // A version-1 file has no rule and means the whole rule.
        let mut v = good.clone();
        v["version"] = json!(1);
        assert_eq!(Repro::from_json(&v).unwrap_err().field, "images.rule");
        v["images"].as_object_mut().unwrap().remove("rule");
        let old = Repro::from_json(&v).unwrap();
        assert_eq!(old.case.image, crate::stimulus::ImageRule::Whole);
        let mut v = good;
        v.as_object_mut().unwrap().remove("mismatch");
        let e = Repro::from_json(&v).unwrap_err();
        assert_eq!(e.to_string(), "field `mismatch`: missing");
    }

    /// The weight seed is in the file and replay uses it; a file written
    /// before the weight streams existed gets the seed `generate` gives.
    /// A workload's program carries its host data and its weights in the
    /// file (version 5): a repro without them would replay other data.
    #[test]
    fn host_patches_and_weight_prefixes_read_back_as_written() {
        let mut r = repro();
        r.case.host_patches = vec![(7, vec![1, 2, 3]), (0x1_0000, vec![u128::MAX])];
        r.case.weight_prefix = [vec![5, 6], vec![u128::MAX - 1]];
        let v = r.to_json();
        assert_eq!(v["version"], json!(5));
        assert_eq!(v["images"]["host_patches"][1]["addr"], json!(0x1_0000));
        assert_eq!(
            v["weight_stream"]["vector_prefix"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        let text = serde_json::to_string_pretty(&v).unwrap();
        let back = Repro::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back.case.host_patches, r.case.host_patches);
        assert_eq!(back.case.weight_prefix, r.case.weight_prefix);
        assert_eq!(back.case.host_image()[8], 2);
        assert_eq!(back.case.weight_source().beat(0, 1), 6);
        // A file without them (every file before version 5) has none.
        let plain = repro().to_json();
        assert!(plain["images"].get("host_patches").is_none());
        assert!(plain["weight_stream"].get("matrix_prefix").is_none());
    }

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
