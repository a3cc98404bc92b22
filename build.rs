//! Verilates `hw/rtl` once per hardware configuration (`hw/configs/*.cfg`)
//! that this binary links in, compiles the C++ model and the FFI shim with
//! `cc`, and runs bindgen on the shim's C header. Every product goes through
//! a cache keyed on its inputs (harness/rtl/recipe.rs), shared by the cargo
//! profiles, so `cargo test` after `cargo build --release` re-Verilates
//! nothing. See docs/build.md for the why of each step. The Verilator flags
//! shared with the lint and the run-time builds, and the source list, are in
//! hw/verilator.f.
//!
//! Environment:
//! - Without the `rtl` cargo feature (`--no-default-features`): skip all of
//!   it (the harness then builds without the RTL model; only the golden model
//!   is available).
//! - `PCCX_CONFIGS=kv260,tiny`: link only these configurations (by default:
//!   every one not marked `TEST_ONLY = 1`; a test-only one named here is
//!   linked in too).
//! - `PCCX_RTL_CACHE=DIR`: the cache (default `<target dir>/pccx-rtl-cache`).
//! - `VERILATOR`: the verilator executable (default: `verilator` on PATH).
//! - `PCCX_COVERAGE=1`: also build `tiny` with Verilator line and toggle
//!   coverage, as the extra model `tiny_cov` (`PCCX_COVERAGE=kv260,tiny`
//!   names the configurations instead; docs/coverage.md).
//! - `PCCX_PROFILE_GENERATE=1`: compile the models instrumented for clang's
//!   profile-guided optimisation (`scripts/train-profile.sh` does this in a
//!   target directory of its own). Without it, a model whose configuration
//!   has `hw/profiles/<name>.profdata` is compiled with that profile when
//!   the compiler is clang (docs/build.md, "Profile-guided optimisation").

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

// The key, the cache's install and the class-list reader, shared with the
// run-time builder (harness/rtl/dynamic.rs); build.rs uses only part of it.
#[allow(dead_code)]
#[path = "harness/rtl/recipe.rs"]
mod recipe;
// Which Verilator this is, and the checks and rewrite of its output, shared
// with the run-time builder too.
#[allow(dead_code)]
#[path = "harness/rtl/verilator.rs"]
mod verilator;
// The DUT manifest (hw/dut.json): what is Verilated, at which level, and the
// port behind each of the shim's roles.
#[allow(dead_code)]
#[path = "harness/rtl/dut.rs"]
mod dut;

use recipe::Key;
use verilator::Verilator;

/// The version of the build steps below, part of every cache key: bump it
/// when a step changes what it produces (a flag, a file, an order), so that
/// entries built the old way are not reused.
const RECIPE: &str = "build.rs-5";

/// Keys of a `.cfg` file that describe the configuration instead of setting
/// an RTL parameter; they are not passed to Verilator.
const META_KEYS: &[&str] = &["TEST_ONLY"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=harness/rtl/recipe.rs");
    println!("cargo:rerun-if-changed=harness/rtl/verilator.rs");
    println!("cargo:rerun-if-changed=harness/rtl/dut.rs");
    println!("cargo:rerun-if-changed={}", dut::DEFAULT_MANIFEST);
    println!("cargo:rerun-if-changed=hw/rtl");
    println!("cargo:rerun-if-changed=hw/verilator.f");
    println!("cargo:rerun-if-changed=hw/configs");
    println!("cargo:rerun-if-changed=harness/rtl/shim");
    println!("cargo:rerun-if-env-changed=PCCX_CONFIGS");
    println!("cargo:rerun-if-env-changed=PCCX_RTL_CACHE");
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo:rerun-if-env-changed=PCCX_NO_TRACE");
    println!("cargo:rerun-if-env-changed=PCCX_TRACE_DEPTH");
    println!("cargo:rerun-if-env-changed=PCCX_COVERAGE");
    // The models' C++ compiler (clang++ when unset, verilator::MODEL_CXX):
    // cc reads CXX only when no compiler is given, so it is named here.
    println!("cargo:rerun-if-env-changed=CXX");
    println!("cargo:rerun-if-env-changed=PCCX_PROFILE_GENERATE");
    println!("cargo:rerun-if-changed=hw/profiles");

    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    // The DUT: its manifest names the files, the top and the ports.
    let dut = Dut::open(&root).unwrap_or_else(|e| fail(&e));
    let configs = read_configs(&dut.configs);

    if env::var_os("CARGO_FEATURE_RTL").is_none() {
        write_config_table(&out, &configs, &[], &[]);
        return;
    }

    let command = env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    let verilator = Verilator::identify(&command).unwrap_or_else(|e| {
        fail(&format!(
            "{e} (or build with --no-default-features for a harness without the RTL model)"
        ))
    });
    if verilator.version > verilator::NEWEST_TESTED {
        println!(
            "cargo:warning=Verilator {} is newer than {}, the newest the harness was tested \
             with (docs/build.md, \"Verilator versions\"): run scripts/verilator-matrix.sh",
            verilator.version,
            verilator::NEWEST_TESTED
        );
    }
    // For the binary: the Verilator its linked models were made with (the
    // build provenance), and the one its run-time builds use by default.
    println!(
        "cargo:rustc-env=PCCX_VERILATOR_BUILT={}",
        verilator.describe()
    );
    println!(
        "cargo:rustc-env=PCCX_VERILATOR={}",
        verilator.path.display()
    );
    // A manifest that names a missing file stops here, with its name
    // (Verilator reads the list itself, through hw/verilator.f).
    recipe::model_sources(&root).unwrap_or_else(|e| fail(&e));
    let wanted: Option<Vec<String>> = env::var("PCCX_CONFIGS").ok().map(|s| {
        s.split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    });
    let all_configs = configs.clone();
    let cov_configs = coverage_configs(&all_configs);
    let configs: Vec<HwConfig> = match wanted {
        Some(names) => names
            .iter()
            .map(|n| {
                configs
                    .iter()
                    .find(|c| &c.name == n)
                    .cloned()
                    .unwrap_or_else(|| {
                        fail(&format!(
                            "PCCX_CONFIGS names `{n}`, which is not a file in hw/configs/"
                        ))
                    })
            })
            .collect(),
        // The test-only configurations are built when a test opens one
        // (harness/rtl/dynamic.rs), not for every binary.
        None => configs.into_iter().filter(|c| !c.test_only).collect(),
    };

    let cache = cache_dir(&root, &out);
    // For the run-time builder: where to find and put its shared objects,
    // and the target the key names.
    println!("cargo:rustc-env=PCCX_RTL_CACHE_DIR={}", cache.display());
    println!(
        "cargo:rustc-env=PCCX_TARGET={}",
        env::var("TARGET").unwrap()
    );
    let l2_name = dut.manifest.l2_array.clone();
    let builder = Builder {
        dut,
        root: root.clone(),
        cache,
        include: verilator.include.clone(),
        verilator,
        l2_name,
        target: env::var("TARGET").unwrap(),
    };
    // Every archive is made in a thread of its own: one model Verilates
    // (one core) while another compiles, and the compiles of all of them
    // share cargo's jobserver (cc's `parallel`), so the cores stay busy to
    // the end. The link lines follow, in a fixed order: the runtime before
    // the models, as the linker reads them.
    let archives: Vec<Archive> = std::thread::scope(|scope| {
        let builder = &builder;
        let mut jobs = vec![scope.spawn(move || builder.runtime())];
        for cfg in &configs {
            jobs.push(scope.spawn(move || builder.model(cfg, false)));
        }
        if !cov_configs.is_empty() {
            jobs.push(scope.spawn(move || builder.cov_runtime()));
        }
        for cfg in &cov_configs {
            jobs.push(scope.spawn(move || builder.model(cfg, true)));
        }
        jobs.into_iter()
            .map(|job| {
                job.join()
                    .unwrap_or_else(|_| fail("a build thread panicked"))
            })
            .collect()
    });
    for archive in &archives {
        cc::emit_link_directives(&archive.link, &archive.path);
        // A removed cache (`rm -rf target/pccx-rtl-cache`) runs build.rs
        // again, which builds the entry again, before anything links it.
        println!("cargo:rerun-if-changed={}", archive.path.display());
    }
    if profile_generate() {
        // The instrumented code's runtime, after the archives that use it;
        // `-u` pulls in its part that writes the profile at exit, as clang's
        // own driver does.
        let cxx = verilated_build(&builder.include, "2", false).get_compiler();
        let resource_dir = Command::new(cxx.path())
            .arg("-print-resource-dir")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|e| fail(&format!("cannot run {}: {e}", cxx.path().display())));
        let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap();
        let dir = Path::new(&resource_dir).join("lib/linux");
        let lib = format!("clang_rt.profile-{arch}");
        if !dir.join(format!("lib{lib}.a")).is_file() {
            fail(&format!(
                "PCCX_PROFILE_GENERATE=1: clang's profile runtime lib{lib}.a is not in {}",
                dir.display()
            ));
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static={lib}");
        println!("cargo:rustc-link-arg=-Wl,-u,__llvm_profile_runtime");
    }
    run_bindgen(&root, &out);
    write_config_table(&out, &all_configs, &configs, &cov_configs);
    // The runtime's libraries (libatomic where this Verilator's makefile
    // names it; with tracing, the FST writer's compressors), read from
    // Verilator's own makefile; after the archives that use them.
    for lib in builder
        .verilator
        .link_libraries(
            tracing(),
            verilated_build(&builder.include, "3", false)
                .get_compiler()
                .is_like_clang(),
        )
        .unwrap_or_else(|e| fail(&e))
    {
        println!("cargo:rustc-link-lib={lib}");
    }
}

#[derive(Clone)]
struct HwConfig {
    name: String,
    /// The RTL parameters (`-G`), every key of the file but [`META_KEYS`].
    params: BTreeMap<String, u64>,
    /// `TEST_ONLY = 1`: built on demand for the tests, not linked by default.
    test_only: bool,
}

impl HwConfig {
    fn param(&self, key: &str) -> u64 {
        *self
            .params
            .get(key)
            .unwrap_or_else(|| fail(&format!("hw/configs/{}.cfg does not set {key}", self.name)))
    }

    fn param_list(&self) -> Vec<(&str, u64)> {
        self.params.iter().map(|(k, v)| (k.as_str(), *v)).collect()
    }
}

fn fail(message: &str) -> ! {
    eprintln!("\nerror: {message}\n");
    println!("cargo:warning={message}");
    exit(1);
}

/// `hw/configs/<name>.cfg`: `KEY = value` lines, `#` comments.
fn read_configs(dir: &Path) -> Vec<HwConfig> {
    let mut configs = Vec::new();
    let entries =
        fs::read_dir(dir).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", dir.display())));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("cfg") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut params = BTreeMap::new();
        let mut meta = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap().trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line.split_once('=').unwrap_or_else(|| {
                fail(&format!(
                    "{}:{}: expected `NAME = value`",
                    path.display(),
                    n + 1
                ))
            });
            let value: u64 = value.trim().parse().unwrap_or_else(|_| {
                fail(&format!(
                    "{}:{}: `{}` is not an integer",
                    path.display(),
                    n + 1,
                    value.trim()
                ))
            });
            let key = key.trim().to_string();
            if META_KEYS.contains(&key.as_str()) {
                meta.insert(key, value);
            } else {
                params.insert(key, value);
            }
        }
        let test_only = match meta.get("TEST_ONLY") {
            None | Some(0) => false,
            Some(1) => true,
            Some(v) => fail(&format!("{}: TEST_ONLY is 0 or 1, not {v}", path.display())),
        };
        configs.push(HwConfig {
            name,
            params,
            test_only,
        });
    }
    configs.sort_by(|a, b| a.name.cmp(&b.name));
    if configs.is_empty() {
        fail("hw/configs/ holds no .cfg file");
    }
    configs
}

/// Where the cache lives: `PCCX_RTL_CACHE`, or `pccx-rtl-cache` in the
/// target directory, which is shared by every profile. OUT_DIR is
/// `<target>/[<triple>/]<profile>/build/<package>-<hash>/out`; with
/// `--target`, the triple adds a level.
fn cache_dir(root: &Path, out: &Path) -> PathBuf {
    if let Some(dir) = env::var_os("PCCX_RTL_CACHE").filter(|d| !d.is_empty()) {
        // Relative to the package root, the build script's working directory.
        return root.join(dir);
    }
    let target_dir = out
        .ancestors()
        .nth(4)
        .filter(|_| out.ancestors().nth(2).and_then(Path::file_name) == Some("build".as_ref()))
        .map(|dir| {
            let triple = env::var("TARGET").unwrap_or_default();
            if dir.file_name() == Some(triple.as_ref()) {
                dir.parent().unwrap_or(dir)
            } else {
                dir
            }
        });
    match target_dir {
        Some(dir) => dir.join("pccx-rtl-cache"),
        // An OUT_DIR of a layout cargo does not use today: a cache of this
        // profile's own, still keyed, never wrong.
        None => out.join("pccx-rtl-cache"),
    }
}

/// FST tracing is compiled in unless PCCX_NO_TRACE=1 (which exists to
/// measure what compiled-in tracing costs; docs/build.md). It costs nothing
/// measurable while no waveform window is open.
fn tracing() -> bool {
    env::var("PCCX_NO_TRACE").map_or(true, |v| v != "1")
}

/// The configurations `PCCX_COVERAGE` asks for a coverage build of: none
/// when unset or `0`, `tiny` for `1`, else the names it lists.
fn coverage_configs(all: &[HwConfig]) -> Vec<HwConfig> {
    let names: Vec<String> = match env::var("PCCX_COVERAGE") {
        Err(_) => return Vec::new(),
        Ok(v) if v.trim() == "0" || v.trim().is_empty() => return Vec::new(),
        Ok(v) if v.trim() == "1" => vec!["tiny".into()],
        Ok(v) => v.split(',').map(|c| c.trim().to_string()).collect(),
    };
    names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| {
            all.iter()
                .find(|c| &c.name == n)
                .cloned()
                .unwrap_or_else(|| {
                    fail(&format!(
                        "PCCX_COVERAGE names `{n}`, which is not a file in hw/configs/"
                    ))
                })
        })
        .collect()
}

/// Flags shared by every C++ file built against the Verilator runtime. The
/// opt level and debug setting are explicit, never the cargo profile's, so
/// that the dev and release profiles build the same objects and share one
/// cache entry.
///
/// `VM_COVERAGE` must match between a model Verilated with coverage and the
/// runtime file that serves it (verilated_cov.cpp); the rest of the runtime
/// does not read it.
fn verilated_build(include: &Path, opt: &str, coverage: bool) -> cc::Build {
    let trace = if tracing() { "1" } else { "0" };
    let mut b = cc::Build::new();
    if let Some(cxx) = default_model_compiler() {
        b.compiler(cxx);
    }
    b.cpp(true)
        .std("c++17")
        .include(include)
        .include(include.join("vltstd"))
        .define("VM_COVERAGE", if coverage { "1" } else { "0" })
        .define("VM_SC", "0")
        .define("VM_TRACE", trace)
        .define("VM_TRACE_FST", trace)
        .define("VM_TRACE_VCD", "0")
        .opt_level_str(opt)
        .warnings(false)
        .flag_if_supported("-faligned-new")
        .flag_if_supported("-fcf-protection=none")
        .debug(false);
    b
}

/// The compiler to give every model build when `CXX` is unset: clang
/// (harness/rtl/verilator.rs, MODEL_CXX), checked once per build. `None`
/// when `CXX` is set: cc reads it itself, wrapper (`ccache g++`) and all.
fn default_model_compiler() -> Option<&'static str> {
    static CHOSEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    CHOSEN
        .get_or_init(|| {
            env::var_os("CXX").is_none_or(|v| v.is_empty()).then(|| {
                verilator::model_compiler(verilator::MODEL_CXX).unwrap_or_else(|e| fail(&e))
            })
        })
        .as_deref()
}

/// The identity of the C++ compiler a build uses: its path, every flag cc
/// gives it (the defines, the opt level, CXXFLAGS and the target's flags
/// included) and what it says its version is.
fn compiler_identity(b: &cc::Build) -> String {
    let tool = b.get_compiler();
    let version = Command::new(tool.path())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_else(|e| {
            fail(&format!(
                "cannot run the C++ compiler {}: {e} (run `bash scripts/setup.sh`, or set CXX)",
                tool.path().display()
            ))
        });
    let args: Vec<String> = tool
        .args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("{} {}\n{version}", tool.path().display(), args.join(" "))
}

/// The committed profiles of clang's profile-guided optimisation, one per
/// configuration (`<name>.profdata`, and `<name>.base`: what it was trained
/// on), written by scripts/train-profile.sh.
const PROFILES: &str = "hw/profiles";

/// `PCCX_PROFILE_GENERATE=1`: the models instrumented for training.
fn profile_generate() -> bool {
    env::var("PCCX_PROFILE_GENERATE").is_ok_and(|v| v == "1")
}

/// What profile-guided optimisation does to one model's fast code.
enum Profile {
    Off,
    /// Instrumented (`-fprofile-instr-generate`): a run writes raw profiles.
    Generate,
    /// Optimised with the profile at `path`, whose contents hash to `digest`.
    Use {
        path: PathBuf,
        digest: String,
    },
}

/// An archive to link, and the build whose settings say how (the C++
/// standard library with it). Linked with `cc::emit_link_directives`, the
/// function `cc::Build::compile` ends with: a cached archive links exactly
/// like a fresh one.
struct Archive {
    path: PathBuf,
    link: cc::Build,
}

/// Builds the cache entries this binary links.
/// The DUT this build Verilates, as hw/dut.json declares it.
struct Dut {
    manifest: dut::Manifest,
    /// hw/dut.json, for the messages.
    path: PathBuf,
    /// Verilator's `-F` file of the DUT.
    verilator_file: PathBuf,
    /// The configurations' folder.
    configs: PathBuf,
}

impl Dut {
    fn open(root: &Path) -> Result<Dut, String> {
        let path = root.join(dut::DEFAULT_MANIFEST);
        let manifest = dut::Manifest::read(&path)?;
        let dir = path.parent().unwrap_or(root);
        let verilator_file = dir.join(&manifest.verilator_file);
        let text = fs::read_to_string(&verilator_file).map_err(|e| {
            format!(
                "{}: field `verilator_file`: cannot read {}: {e}",
                path.display(),
                verilator_file.display()
            )
        })?;
        manifest.check_top(&path, &verilator_file, &text)?;
        Ok(Dut {
            configs: dir.join(&manifest.configs),
            manifest,
            path,
            verilator_file,
        })
    }
}

struct Builder {
    dut: Dut,
    root: PathBuf,
    cache: PathBuf,
    verilator: Verilator,
    include: PathBuf,
    /// L2's array in the Verilated root (pccx_rand_reset.h), when the
    /// manifest names it.
    l2_name: Option<String>,
    target: String,
}

impl Builder {
    /// The inputs every product's key has beyond its own: the tools and the
    /// environment that changes what they make.
    fn common_inputs(&self, builds: &[(&'static str, &cc::Build)]) -> Vec<(&'static str, String)> {
        let mut inputs = vec![
            ("verilator", self.verilator.identity.clone()),
            ("target", self.target.clone()),
            ("trace", format!("fst {}", tracing())),
        ];
        for var in ["CXX", "CC", "CXXFLAGS", "CFLAGS"] {
            inputs.push((var, env::var(var).unwrap_or_default()));
        }
        for (label, b) in builds {
            inputs.push((label, compiler_identity(b)));
        }
        inputs
    }

    /// What profile-guided optimisation does to the fast code of model
    /// `name` (docs/build.md, "Profile-guided optimisation"):
    /// `PCCX_PROFILE_GENERATE=1` instruments it (and records the inputs the
    /// profile will be trained on, for scripts/train-profile.sh); else
    /// `hw/profiles/<name>.profdata`, when there is one, optimises it. A
    /// profile is only ever a matter of speed (the model's behaviour is the
    /// source's), but a build never differs quietly: one without the profile
    /// for want of clang, or with a profile trained on other inputs, says so.
    fn profile(&self, cfg: &HwConfig, name: &str, fast: &cc::Build) -> Profile {
        let clang = fast.get_compiler().is_like_clang();
        if profile_generate() {
            if !clang {
                fail("PCCX_PROFILE_GENERATE=1 needs clang as the models' compiler (unset CXX)");
            }
            let base = self.profile_base(cfg, fast);
            let record = self.cache.join(format!("profile-base-{name}.txt"));
            let _ = fs::create_dir_all(&self.cache);
            fs::write(&record, format!("{base}\n"))
                .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", record.display())));
            return Profile::Generate;
        }
        let path = self.root.join(PROFILES).join(format!("{name}.profdata"));
        let Ok(bytes) = fs::read(&path) else {
            return Profile::Off;
        };
        if !clang {
            println!(
                "cargo:warning={PROFILES}/{name}.profdata is a clang profile: the `{name}` model \
                 is compiled by {} without it (slower, the same behaviour)",
                fast.get_compiler().path().display()
            );
            return Profile::Off;
        }
        // Only a build that uses a profile runs the compiler for its version.
        let base = self.profile_base(cfg, fast);
        let trained_on = self.root.join(PROFILES).join(format!("{name}.base"));
        let recorded = fs::read_to_string(&trained_on).unwrap_or_default();
        let recorded = recorded
            .lines()
            .find(|l| !l.starts_with('#') && !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        if recorded != base {
            println!(
                "cargo:warning={PROFILES}/{name}.profdata was trained on another RTL, Verilator \
                 or clang than this build's ({}: {}): it still speeds up the code that did not \
                 change; `bash scripts/train-profile.sh {name}` trains it again",
                trained_on.display(),
                if recorded.is_empty() {
                    "missing".to_string()
                } else {
                    format!("{recorded}, this build's {base}")
                }
            );
        }
        let mut digest = Key::new("profile");
        digest.add("profdata", &bytes);
        Profile::Use {
            path,
            digest: digest.hex(),
        }
    }

    /// What a profile of configuration `cfg` is trained on, independent of
    /// where the repository lies: the DUT's sources, the shim, the
    /// parameters, the Verilator and the compiler's version.
    fn profile_base(&self, cfg: &HwConfig, fast: &cc::Build) -> String {
        let mut key = Key::new("profile-base-1");
        key.add("name", cfg.name.as_bytes());
        for file in recipe::model_sources(&self.root).unwrap_or_else(|e| fail(&e)) {
            key.add_file(&file, &self.root.join(&file))
                .unwrap_or_else(|e| fail(&e));
        }
        // The shim too: its tick is compiled with the model, and hot.
        for file in recipe::shim_files(&self.root).unwrap_or_else(|e| fail(&e)) {
            key.add_file(&file, &self.root.join(&file))
                .unwrap_or_else(|e| fail(&e));
        }
        key.add("params", format!("{:?}", cfg.param_list()).as_bytes());
        key.add("verilator", self.verilator.version_text.as_bytes());
        let identity = compiler_identity(fast);
        let version = identity.lines().nth(1).unwrap_or("");
        key.add("compiler", version.as_bytes());
        key.hex()
    }

    /// The archive `lib<lib>.a` of the entry `name`-`key`, built by `build`
    /// unless the cache has it.
    fn cached_archive(
        &self,
        name: &str,
        key: &Key,
        lib: &str,
        link: &cc::Build,
        build: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Archive {
        let (dir, _) = recipe::get_or_build(&self.cache, name, key, build)
            .unwrap_or_else(|e| fail(&format!("building `{name}`: {e}")));
        Archive {
            path: dir.join(format!("lib{lib}.a")),
            link: link.clone(),
        }
    }

    /// The Verilator runtime (`verilated.cpp`, the threads, DPI and, with
    /// tracing, the FST writer) at -O2. It does not depend on the RTL: an
    /// RTL change reuses it.
    fn runtime(&self) -> Archive {
        let b = verilated_build(&self.include, "2", false);
        let mut key = Key::new(RECIPE);
        key.add("product", b"verilator runtime");
        for (label, value) in self.common_inputs(&[("c++ -O2", &b)]) {
            key.add(label, value.as_bytes());
        }
        let files = self.verilator.runtime_files(tracing(), false);
        self.cached_archive("vlrt", &key, "pccx_vlrt", &b, |dir| {
            let mut build = b.clone();
            build.files(files.iter().map(|f| self.include.join(f)));
            archive(&build, dir, "pccx_vlrt", Vec::new())
                .map_err(|e| self.verilator.explain_runtime_error(e))
        })
    }

    /// The coverage part of the runtime (`VerilatedCovContext`), only for a
    /// `PCCX_COVERAGE` build, in an archive of its own, so that the runtime
    /// itself and its entry stay what they are without it.
    fn cov_runtime(&self) -> Archive {
        let b = verilated_build(&self.include, "2", true);
        let mut key = Key::new(RECIPE);
        key.add("product", b"verilator coverage runtime");
        for (label, value) in self.common_inputs(&[("c++ -O2", &b)]) {
            key.add(label, value.as_bytes());
        }
        self.cached_archive("vlcov", &key, "pccx_vlcov", &b, |dir| {
            let mut build = b.clone();
            build.file(self.include.join("verilated_cov.cpp"));
            archive(&build, dir, "pccx_vlcov", Vec::new())
        })
    }

    /// Verilates and compiles one configuration, unless the cache has it;
    /// with `coverage`, as the model `<name>_cov` with line and toggle
    /// coverage.
    fn model(&self, cfg: &HwConfig, coverage: bool) -> Archive {
        let name = if coverage {
            format!("{}_cov", cfg.name)
        } else {
            cfg.name.clone()
        };
        let prefix = format!("Vpccx_{name}");
        // The shared flags and the sources (hw/verilator.f), then this build's own.
        let mut verilator_args: Vec<String> = ["--cc", "--output-split", "5000"]
            .map(String::from)
            .to_vec();
        if coverage {
            verilator_args.extend(["--coverage-line", "--coverage-toggle"].map(String::from));
        }
        if tracing() {
            verilator_args.push("--trace-fst".into());
            // The depth of the hierarchy a waveform shows: fixed at verilate
            // time (the runtime `levels` argument has no effect on 5.006).
            if let Ok(depth) = env::var("PCCX_TRACE_DEPTH") {
                verilator_args.extend(["--trace-depth".into(), depth]);
            }
        }
        verilator_args.extend(cfg.params.iter().map(|(k, v)| format!("-G{k}={v}")));

        // Slow (construction, initial) code at -O1, fast (eval) code at -O2;
        // both end in one archive because they reference each other.
        // Every file of the model, and the shim, draw a randomized initial
        // state from the shim's generator (pccx_rand_reset.h says why).
        let rand_reset = self.root.join("harness/rtl/shim/pccx_rand_reset.h");
        let mut slow = verilated_build(&self.include, "1", coverage);
        slow.flag("-include").flag(rand_reset.to_str().unwrap());
        if let Some(l2) = &self.l2_name {
            slow.define("PCCX_L2_MEM", l2.as_str());
        }
        let mut fast = verilated_build(&self.include, "2", coverage);
        fast.flag("-include").flag(rand_reset.to_str().unwrap());
        for (name, value) in self.dut.manifest.shim_defines() {
            fast.define(&name, value.as_str());
        }
        fast.include(self.root.join("harness/rtl/shim"))
            .define("PCCX_PREFIX", prefix.as_str())
            .define("PCCX_CONFIG", name.as_str())
            .define("PCCX_L2_WORDS", cfg.param("L2_WORDS").to_string().as_str())
            .define(
                "PCCX_FIFO_DEPTH",
                cfg.param("FIFO_DEPTH").to_string().as_str(),
            );
        // Profile-guided optimisation of the fast code (coverage builds
        // never): instrumented, with the committed profile, or neither.
        let profile = if coverage {
            Profile::Off
        } else {
            self.profile(cfg, &name, &fast)
        };
        match &profile {
            Profile::Off => {}
            Profile::Generate => {
                fast.flag("-fprofile-instr-generate");
            }
            Profile::Use { path, .. } => {
                fast.flag(format!("-fprofile-instr-use={}", path.display()));
            }
        }
        let mut build_inputs = self.common_inputs(&[("c++ slow", &slow), ("c++ fast", &fast)]);
        build_inputs.push(("verilator args", verilator_args.join(" ")));
        if let Profile::Use { digest, .. } = &profile {
            // The flag names the file; its contents are the input.
            build_inputs.push(("profile", digest.clone()));
        }
        let key = recipe::model_key(RECIPE, &self.root, &name, &cfg.param_list(), &build_inputs)
            .unwrap_or_else(|e| fail(&e));
        let lib = format!("pccx_model_{name}");
        self.cached_archive(&name, &key, &lib, &fast, |dir| {
            let mdir = dir.join("verilated");
            let result = Command::new(&self.verilator.command)
                .arg("-F")
                .arg(&self.dut.verilator_file)
                .args(&verilator_args)
                .arg("--prefix")
                .arg(&prefix)
                .arg("-Mdir")
                .arg(&mdir)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", self.verilator.command))?;
            if !result.status.success() {
                return Err(format!(
                    "Verilator rejected hw/rtl for configuration `{}`:\n{}",
                    cfg.name,
                    String::from_utf8_lossy(&result.stderr)
                ));
            }
            verilator::adapt_generated(
                &self.verilator,
                &mdir,
                &prefix,
                self.l2_name.as_deref(),
                &self.verilator.runtime_files(tracing(), coverage),
            )?;
            // The ports the manifest names, against the top Verilator made.
            let header = mdir.join(format!("{prefix}.h"));
            let text = fs::read_to_string(&header)
                .map_err(|e| format!("cannot read {}: {e}", header.display()))?;
            self.dut
                .manifest
                .check_ports(&self.dut.path, &dut::header_ports(&text), &header)?;
            let classes = recipe::read_class_lists(&mdir.join(format!("{prefix}_classes.mk")))?;
            // The small files bundled (recipe::bundle), largest first: the
            // longest compile starts first, and the last ones are short.
            let cpp = |kinds: &[&str], tag: &str| -> Result<Vec<PathBuf>, String> {
                recipe::bundle(
                    &mdir,
                    &prefix,
                    tag,
                    &recipe::class_files(&classes, kinds),
                    recipe::BUNDLE_BYTES,
                )
            };
            let mut slow_build = slow.clone();
            slow_build
                .include(&mdir)
                .files(cpp(&["VM_CLASSES_SLOW", "VM_SUPPORT_SLOW"], "slow")?)
                .out_dir(dir.join("obj/slow"));
            let slow_objects = slow_build
                .try_compile_intermediates()
                .map_err(|e| format!("compiling the slow C++ of `{name}`: {e}"))?;
            let mut fast_build = fast.clone();
            fast_build
                .include(&mdir)
                .files(cpp(&["VM_CLASSES_FAST", "VM_SUPPORT_FAST"], "fast")?)
                .file(self.root.join("harness/rtl/shim/pccx_shim.cpp"));
            archive(&fast_build, dir, &lib, slow_objects)
        })
    }
}

/// Compiles the files of `build` into `dir/obj` and archives them, with
/// `more` objects, as `dir/lib<lib>.a`; the objects are then removed (the
/// archive holds them). No `cargo:` line: the archive's directory is
/// renamed after this.
fn archive(build: &cc::Build, dir: &Path, lib: &str, more: Vec<PathBuf>) -> Result<(), String> {
    let mut b = build.clone();
    b.out_dir(dir.join("obj/main"));
    let mut objects = b
        .try_compile_intermediates()
        .map_err(|e| format!("compiling {lib}: {e}"))?;
    objects.extend(more);
    let path = b
        .out_dir(dir)
        .try_create_archive(lib, &objects)
        .map_err(|e| format!("archiving {lib}: {e}"))?;
    // build.rs asks cargo to run it again if the archive changes
    // (`rerun-if-changed`), so that a removed cache is rebuilt. Cargo takes
    // a file written while the build script ran for a changed one, so the
    // archive is dated to the epoch: only its removal is then a change (the
    // key, not the date, says what it is).
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_modified(std::time::SystemTime::UNIX_EPOCH))
        .map_err(|e| format!("dating {}: {e}", path.display()))?;
    fs::remove_dir_all(dir.join("obj")).map_err(|e| format!("cleaning up {lib}: {e}"))
}

fn run_bindgen(root: &Path, out: &Path) {
    let header = root.join("harness/rtl/shim/pccx_shim.h");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_type("pccx_.*")
        .allowlist_var("PCCX_.*")
        .derive_default(true)
        .generate()
        .unwrap_or_else(|e| {
            fail(&format!(
                "bindgen failed on {}: {e} (is libclang installed? run `bash scripts/setup.sh`)",
                header.display()
            ))
        });
    bindings
        .write_to_file(out.join("shim_bindings.rs"))
        .unwrap();
}

/// `configs.rs`: every configuration's parameters (`HwConfig` values, for
/// harness/config.rs). `rtl_ops.rs`: for the configurations that were built,
/// the function that returns each one's `pccx_sim_ops` (for harness/rtl),
/// and the same for the coverage builds (`cov_ops_by_name`).
fn write_config_table(out: &Path, configs: &[HwConfig], built: &[HwConfig], cov: &[HwConfig]) {
    let mut s = String::from("// Generated by build.rs from hw/configs/*.cfg.\n");
    s.push_str("pub const ALL: &[HwConfig] = &[\n");
    for c in configs {
        let params: String = c
            .params
            .iter()
            .map(|(k, v)| format!("({k:?}, {v}), "))
            .collect();
        writeln!(
            s,
            "    HwConfig {{ name: {:?}, test_only: {}, l2_words: {}, fifo_depth: {}, array_rows: {}, array_cols: {}, vector_lanes: {}, cvo_cores: {}, rtl_params: &[{}] }},",
            c.name,
            c.test_only,
            c.param("L2_WORDS"),
            c.param("FIFO_DEPTH"),
            c.param("ARRAY_ROWS"),
            c.param("ARRAY_COLS"),
            c.param("VEC_LANES"),
            c.param("CVO_CORES"),
            params.trim_end_matches(", ")
        )
        .unwrap();
    }
    s.push_str("];\n");
    fs::write(out.join("configs.rs"), s).unwrap();

    let mut r =
        String::from("// Generated by build.rs: the configurations built into this binary.\n");
    let cov_names: Vec<String> = cov.iter().map(|c| format!("{}_cov", c.name)).collect();
    if !built.is_empty() || !cov.is_empty() {
        r.push_str("extern \"C\" {\n");
        for name in built.iter().map(|c| &c.name).chain(&cov_names) {
            writeln!(r, "    fn pccx_sim_ops_{name}() -> *const pccx_sim_ops;").unwrap();
        }
        r.push_str("}\n");
    }
    r.push_str("pub(crate) fn ops_by_name(name: &str) -> Option<*const pccx_sim_ops> {\n    match name {\n");
    for c in built {
        writeln!(
            r,
            "        {:?} => Some(unsafe {{ pccx_sim_ops_{}() }}),",
            c.name, c.name
        )
        .unwrap();
    }
    r.push_str("        _ => None,\n    }\n}\n");
    // Usually no coverage build: then the match has nothing but `_`.
    r.push_str("#[allow(clippy::match_single_binding)]\n");
    r.push_str("pub(crate) fn cov_ops_by_name(name: &str) -> Option<*const pccx_sim_ops> {\n    match name {\n");
    for c in cov {
        writeln!(
            r,
            "        {:?} => Some(unsafe {{ pccx_sim_ops_{}_cov() }}),",
            c.name, c.name
        )
        .unwrap();
    }
    r.push_str("        _ => None,\n    }\n}\n");
    fs::write(out.join("rtl_ops.rs"), r).unwrap();
}
