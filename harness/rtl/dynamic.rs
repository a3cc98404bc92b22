//! Verilated models built at run time into shared objects and loaded with
//! `dlopen`: the test-only configurations a binary does not link in (built
//! on demand, once, into the content-keyed cache of `recipe`) and the
//! mutants of `pccx-cosim mutate`. Both read the Verilator command line of
//! hw/verilator.f, compile the shim in, and share one runtime build and one
//! loader (docs/build.md, "On-demand configurations").

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::dut::{self, Manifest};
pub use super::recipe::Found;
use super::recipe::{self, Key};
use super::verilator::{self, Verilator};
use super::SimOps;
use crate::config::HwConfig;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
}
const RTLD_NOW: c_int = 2;

/// The version of the build steps of this file, part of every key they
/// make: bump it when a step changes what it produces.
const RECIPE: &str = "dynamic-5";

/// The C++ opt level of an on-demand model. Measured on the test that
/// opens all four `skew_*` configurations (tests/gate/timing.rs,
/// `a_one_cycle_latency_change_in_any_engine_fails_the_timing_check`, an
/// empty cache but for the runtime, 2 shared cores): build and run 63 s at
/// -O0 against 91 s at -O1; the run alone, from the cache, 1.3 s against
/// 0.7 s. The tests run a few short programs on these models, so the build
/// is what costs (docs/build.md).
pub const ON_DEMAND_OPT: &str = "-O0";

/// The opt level of the runtime objects: compiled once per cache and
/// toolchain, so their compile time hardly matters.
const RUNTIME_OPT: &str = "-O2";

/// Verilator and the C++ compiler, as found at run time.
#[derive(Clone, Debug)]
pub struct Toolchain {
    verilator: Verilator,
    include: PathBuf,
    cxx: String,
    /// What `<cxx> --version` printed.
    cxx_version: String,
    /// `CXXFLAGS`, after this builder's own flags (as cc orders them).
    cxxflags: Vec<String>,
}

/// Runs a tool; on failure, its exit status and what it printed.
fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `{what}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{what}` exited with {}:\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    Ok(())
}

impl Toolchain {
    /// Finds Verilator (`VERILATOR`, default the one this binary was built
    /// with, else `verilator` on PATH) and the C++ compiler (`CXX`, default
    /// `default_cxx`: [`verilator::MODEL_CXX`] for a configuration built on
    /// demand, [`verilator::MUTANT_CXX`] for a mutant). `purpose` says what
    /// needs them, for the message if one is missing.
    pub fn find(purpose: &str, default_cxx: &str) -> Result<Toolchain, String> {
        let command = default_verilator();
        let verilator = Verilator::identify(&command)
            .map_err(|e| format!("{purpose} needs Verilator at run time: {e}"))?;
        let missing = |tool: &str, name: &str, var: &str, e: String| {
            format!(
                "{purpose} needs {tool} at run time, and `{name}` cannot be run ({e}): \
                 run `bash scripts/setup.sh`, or set {var}"
            )
        };
        let include = verilator.include.clone();
        let cxx = verilator::model_compiler(default_cxx).map_err(|e| format!("{purpose}: {e}"))?;
        let cxx_version = Command::new(&cxx)
            .arg("--version")
            .output()
            .map_err(|e| missing("a C++ compiler", &cxx, "CXX", e.to_string()))?;
        Ok(Toolchain {
            verilator,
            include,
            cxx,
            cxx_version: String::from_utf8_lossy(&cxx_version.stdout)
                .trim()
                .to_string(),
            cxxflags: std::env::var("CXXFLAGS")
                .unwrap_or_default()
                .split_whitespace()
                .map(String::from)
                .collect(),
        })
    }

    /// The Verilator command.
    pub fn verilator(&self) -> &str {
        &self.verilator.command
    }

    /// The Verilator, identified.
    pub fn verilator_identity(&self) -> &Verilator {
        &self.verilator
    }

    /// The flags of every compile and link: position-independent code for a
    /// shared object, no coverage, and FST tracing only when `trace` (a DUT
    /// of another manifest, whose failures need their waveform; without it
    /// the shim answers a waveform request with "no tracing").
    fn flags_for(&self, opt: &str, trace: bool) -> Vec<String> {
        let trace = if trace { "1" } else { "0" };
        let mut flags: Vec<String> = vec![
            "-std=c++17".into(),
            opt.into(),
            "-fPIC".into(),
            "-w".into(),
            "-faligned-new".into(),
            format!("-I{}", self.include.display()),
            format!("-I{}", self.include.join("vltstd").display()),
            "-DVM_COVERAGE=0".into(),
            "-DVM_SC=0".into(),
            format!("-DVM_TRACE={trace}"),
            format!("-DVM_TRACE_FST={trace}"),
            "-DVM_TRACE_VCD=0".into(),
        ];
        flags.extend(self.cxxflags.iter().cloned());
        flags
    }

    /// What a key must hold of this toolchain for a build at `opt`.
    pub fn identity(&self, opt: &str) -> Vec<(&'static str, String)> {
        self.identity_for(opt, false)
    }

    /// The key inputs of a build at `opt`, with or without tracing.
    pub fn identity_for(&self, opt: &str, trace: bool) -> Vec<(&'static str, String)> {
        vec![
            ("verilator", self.verilator.identity.clone()),
            (
                "c++",
                format!("{} {}", self.cxx, self.flags_for(opt, trace).join(" ")),
            ),
            ("c++ --version", self.cxx_version.clone()),
            ("target", env!("PCCX_TARGET").to_string()),
        ]
    }

    /// Compiles each `(source, object)` with `flags`, `jobs` at a time,
    /// largest source first (the longest compile starts first); the first
    /// failure, with the file it was in.
    fn compile(
        &self,
        jobs: usize,
        flags: &[String],
        units: &[(PathBuf, PathBuf)],
    ) -> Result<(), String> {
        let mut order: Vec<&(PathBuf, PathBuf)> = units.iter().collect();
        order.sort_by_key(|(src, _)| {
            std::cmp::Reverse(std::fs::metadata(src).map_or(0, |m| m.len()))
        });
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<String>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..jobs.clamp(1, order.len().max(1)) {
                scope.spawn(|| {
                    while let Some((src, obj)) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        // After a failure, start nothing new: its message is the answer.
                        if failed.lock().unwrap().is_some() {
                            break;
                        }
                        let result = run(
                            Command::new(&self.cxx)
                                .args(flags)
                                .arg("-c")
                                .arg(src)
                                .arg("-o")
                                .arg(obj),
                            &self.cxx,
                        );
                        if let Err(e) = result {
                            failed
                                .lock()
                                .unwrap()
                                .get_or_insert(format!("{}: {e}", src.display()));
                        }
                    }
                });
            }
        });
        match failed.into_inner().unwrap() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The Verilator runtime's objects for shared objects, from the cache
    /// `cache` (compiled there once per toolchain).
    pub fn runtime_objects(&self, cache: &Path) -> Result<Vec<PathBuf>, String> {
        self.runtime_objects_for(cache, false)
    }

    /// [`Toolchain::runtime_objects`] with or without tracing.
    pub fn runtime_objects_for(&self, cache: &Path, trace: bool) -> Result<Vec<PathBuf>, String> {
        let mut key = Key::new(RECIPE);
        if trace {
            key.add("product", b"verilator runtime objects (PIC, FST tracing)");
        } else {
            key.add("product", b"verilator runtime objects (PIC, no tracing)");
        }
        for (label, value) in self.identity_for(RUNTIME_OPT, trace) {
            key.add(label, value.as_bytes());
        }
        let object = |dir: &Path, f: &str| dir.join(f.replace(".cpp", ".o"));
        let name = if trace { "vlrt-so-fst" } else { "vlrt-so" };
        let (dir, _) = recipe::get_or_build(cache, name, &key, |dir| {
            let units: Vec<(PathBuf, PathBuf)> = self
                .runtime_files_for(trace)
                .iter()
                .map(|f| (self.include.join(f), object(dir, f)))
                .collect();
            self.compile(jobs(), &self.flags_for(RUNTIME_OPT, trace), &units)
                .map_err(|e| format!("compiling the Verilator runtime: {e}"))
        })?;
        Ok(self
            .runtime_files_for(trace)
            .iter()
            .map(|f| object(&dir, f))
            .collect())
    }

    /// The runtime files every shared object links (without tracing or
    /// coverage: the run-time builds have neither).
    fn runtime_files_for(&self, trace: bool) -> Vec<&'static str> {
        self.verilator.runtime_files(trace, false)
    }

    /// Verilates and compiles `model` into `dir/pccx_model_<name>.so`, with
    /// the `runtime` objects linked in. On failure, the stage ("verilator"
    /// or "c++") and the tool's message.
    pub fn build_shared_object(
        &self,
        model: &SharedModel,
        dir: &Path,
        runtime: &[PathBuf],
    ) -> Result<PathBuf, (&'static str, String)> {
        let name = model.name;
        let prefix = format!("Vpccx_{name}");
        let mdir = dir.join("verilated");
        let params = model
            .config
            .rtl_params
            .iter()
            .map(|(k, v)| format!("-G{k}={v}"));
        run(
            Command::new(&self.verilator.command)
                .arg("-F")
                .arg(model.options_file)
                .arg("--cc")
                .args(model.trace.then_some("--trace-fst"))
                .args(model.verilator_args)
                .args(["--prefix", &prefix])
                .arg("-Mdir")
                .arg(&mdir)
                .args(params),
            &self.verilator.command,
        )
        .map_err(|e| ("verilator", e))?;
        verilator::adapt_generated(
            &self.verilator,
            &mdir,
            &prefix,
            model.dut.l2_array.as_deref(),
            &self.runtime_files_for(model.trace),
        )
        .map_err(|e| ("verilator", e))?;
        let header = mdir.join(format!("{prefix}.h"));
        let text = std::fs::read_to_string(&header).map_err(|e| {
            (
                "verilator",
                format!("cannot read {}: {e}", header.display()),
            )
        })?;
        model
            .dut
            .check_ports(model.dut_path, &dut::header_ports(&text), &header)
            .map_err(|e| ("verilator", e))?;
        let lists = recipe::read_class_lists(&mdir.join(format!("{prefix}_classes.mk")))
            .map_err(|e| ("verilator", e))?;
        let obj = dir.join("obj");
        std::fs::create_dir_all(&obj).map_err(|e| ("c++", format!("{}: {e}", obj.display())))?;
        let shim = model.shim_dir.join("pccx_shim.cpp");
        let classes = recipe::class_files(&lists, &["VM_CLASSES_FAST", "VM_CLASSES_SLOW"]);
        let support = recipe::class_files(&lists, &["VM_SUPPORT_FAST", "VM_SUPPORT_SLOW"]);
        // At -O0 (`unity`) the classes are one translation unit, else the
        // small files are bundled as build.rs bundles them (recipe::bundle;
        // docs/build.md, "The regression gate").
        let alone_from = if model.unity {
            u64::MAX
        } else {
            recipe::BUNDLE_BYTES
        };
        let sources = recipe::bundle(&mdir, &prefix, "classes", &classes, alone_from)
            .map_err(|e| ("c++", e))?;
        let units: Vec<(PathBuf, PathBuf)> = sources
            .into_iter()
            .chain(support.iter().map(|f| mdir.join(f)))
            .chain([shim])
            .map(|src| {
                let o = obj.join(src.file_name().unwrap()).with_extension("o");
                (src, o)
            })
            .collect();
        let mut flags = self.flags_for(model.opt, model.trace);
        flags.extend([
            format!("-I{}", mdir.display()),
            format!("-I{}", model.shim_dir.display()),
            // The shim's generator behind the model's randomized initial
            // state (pccx_rand_reset.h), in every file as in build.rs.
            "-include".into(),
            model
                .shim_dir
                .join("pccx_rand_reset.h")
                .display()
                .to_string(),
            format!("-DPCCX_PREFIX={prefix}"),
            format!("-DPCCX_CONFIG={name}"),
            format!("-DPCCX_L2_WORDS={}", model.config.l2_words),
            format!("-DPCCX_FIFO_DEPTH={}", model.config.fifo_depth),
        ]);
        flags.extend(model.defines.iter().map(|d| format!("-D{d}")));
        flags.extend(
            model
                .dut
                .shim_defines()
                .into_iter()
                .map(|(name, value)| format!("-D{name}={value}")),
        );
        self.compile(model.jobs, &flags, &units)
            .map_err(|e| ("c++", e))?;
        let so = dir.join(format!("pccx_model_{name}.so"));
        // The runtime's own libraries (libatomic for clang's code), so that
        // dlopen finds every symbol.
        let libs = self
            .verilator
            .link_libraries(model.trace, self.cxx_version.contains("clang"))
            .map_err(|e| ("c++", e))?;
        run(
            Command::new(&self.cxx)
                .args(self.flags_for(model.opt, model.trace))
                .arg("-shared")
                .args(units.iter().map(|(_, o)| o))
                .args(runtime)
                .args(libs.iter().map(|l| format!("-l{l}")))
                .arg("-o")
                .arg(&so),
            &self.cxx,
        )
        .map_err(|e| ("c++", e))?;
        // The shared object holds them.
        let _ = std::fs::remove_dir_all(&obj);
        Ok(so)
    }
}

/// One model to build into a shared object.
pub struct SharedModel<'a> {
    /// The name the shim exports its table under (`pccx_sim_ops_<name>`),
    /// also in the Verilator `--prefix`.
    pub name: &'a str,
    /// The parameters (`rtl_params`) and sizes the shim is built with.
    pub config: &'a HwConfig,
    /// hw/verilator.f, or a mutant's copy beside its copied sources.
    pub options_file: &'a Path,
    /// harness/rtl/shim.
    pub shim_dir: &'a Path,
    /// Verilator flags after `--cc` (the mutants' warning waivers, say).
    pub verilator_args: &'a [&'a str],
    pub opt: &'a str,
    /// C++ compiles run at once.
    pub jobs: usize,
    /// The model's classes compiled as one file (one bundle of them all,
    /// `<prefix>__bundle_classes_0.cpp`): for
    /// builds at -O0, where each file's cost is mostly its headers; an
    /// optimised build keeps the files apart, to compile them in parallel.
    pub unity: bool,
    /// Preprocessor symbols of the model's compile (`PCCX_MUTANT_SCHEMA`).
    pub defines: &'a [&'a str],
    /// The DUT manifest (hw/dut.json) and its path: the ports the shim
    /// uses, checked against the Verilated top.
    pub dut: &'a Manifest,
    pub dut_path: &'a Path,
    /// With FST tracing (`--trace-fst`, the FST writer linked in).
    pub trace: bool,
}

/// How many compiles to run at once: the cores this process may use.
pub fn jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Loads the shared object `so` and returns its `pccx_sim_ops_<name>`
/// table. The library stays mapped for the life of the process: unloading
/// a Verilated model's library is not safe while its thread-local state may
/// still be referenced.
pub fn load(so: &Path, name: &str) -> Result<&'static SimOps, String> {
    let sym = symbol(so, &format!("pccx_sim_ops_{name}"))?;
    // SAFETY: the symbol is the shim's `const pccx_sim_ops
    // *pccx_sim_ops_<name>(void)`, whose table is a static of the library,
    // which is never unloaded.
    unsafe {
        let get: extern "C" fn() -> *const SimOps = std::mem::transmute(sym);
        Ok(&*get())
    }
}

/// The C function `symbol` of the shared object `so`, loading the library
/// if it is not yet (a second dlopen of a loaded library returns the same
/// handle; it stays mapped for the life of the process). The caller gives
/// the pointer its type.
pub fn symbol(so: &Path, symbol: &str) -> Result<*mut c_void, String> {
    let path = CString::new(so.to_string_lossy().as_bytes().to_vec())
        .map_err(|_| format!("{}: the path holds a NUL byte", so.display()))?;
    let name = CString::new(symbol).map_err(|_| format!("`{symbol}`: a NUL byte"))?;
    // SAFETY: plain dlopen/dlsym of a library built by this file.
    unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_NOW);
        if handle.is_null() {
            return Err(format!(
                "cannot load {}: {}",
                so.display(),
                CStr::from_ptr(dlerror()).to_string_lossy()
            ));
        }
        let sym = dlsym(handle, name.as_ptr());
        if sym.is_null() {
            return Err(format!("{} has no {symbol}", so.display()));
        }
        Ok(sym)
    }
}

/// The Verilator the run-time builds use: `VERILATOR`, else the one this
/// binary's linked models were built with (so that an on-demand model and a
/// mutant are made by the same Verilator as the models beside them), else
/// `verilator` on PATH when that one is gone.
pub fn default_verilator() -> String {
    if let Some(v) = std::env::var_os("VERILATOR").filter(|v| !v.is_empty()) {
        return v.to_string_lossy().into_owned();
    }
    let built = env!("PCCX_VERILATOR");
    if Path::new(built).is_file() {
        built.to_string()
    } else {
        "verilator".to_string()
    }
}

/// The repository this binary was built from: its hw/rtl, hw/verilator.f
/// and shim are what an on-demand model is built from.
pub fn source_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cache: `PCCX_RTL_CACHE` if set, else the one build.rs used
/// (`<target dir>/pccx-rtl-cache`, fixed at build time).
pub fn default_cache_dir() -> PathBuf {
    match std::env::var_os("PCCX_RTL_CACHE").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("PCCX_RTL_CACHE_DIR")),
    }
}

/// A shared object of the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub path: PathBuf,
    /// Whether this call built it or found it.
    pub found: Found,
}

/// Builds configurations on demand from the sources under `root` into the
/// cache `cache`: of the repository's own RTL, or of the DUT another
/// manifest under `root` declares (`--dut-manifest`).
#[derive(Clone, Debug)]
pub struct OnDemand {
    root: PathBuf,
    cache: PathBuf,
    /// The DUT's manifest, relative to `root`.
    manifest: String,
}

impl OnDemand {
    pub fn new(root: &Path, cache: &Path) -> OnDemand {
        OnDemand::for_manifest(root, cache, dut::DEFAULT_MANIFEST)
    }

    /// Builds the DUT of `manifest` (relative to `root`).
    pub fn for_manifest(root: &Path, cache: &Path, manifest: &str) -> OnDemand {
        OnDemand {
            root: root.to_path_buf(),
            cache: cache.to_path_buf(),
            manifest: manifest.to_string(),
        }
    }

    /// Whether this builder's models trace: a DUT of another manifest has
    /// no linked build to take its waveform from, so its on-demand one
    /// does (the repository's test-only configurations do not, for speed).
    fn traced(&self) -> bool {
        self.manifest != dut::DEFAULT_MANIFEST
    }

    /// The model's name (its Verilator prefix, symbols and cache entry):
    /// the configuration's, after the DUT's own name for any DUT but the
    /// repository's, so that two DUTs' models never share a symbol.
    fn model_name(&self, config: &HwConfig) -> Result<String, String> {
        if self.manifest == dut::DEFAULT_MANIFEST {
            return Ok(config.name.to_string());
        }
        let manifest = Manifest::read(&self.root.join(&self.manifest))?;
        let dut: String = manifest
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        Ok(format!("{dut}_{}", config.name))
    }

    /// The sources this binary was built from and the default cache.
    pub fn from_env() -> OnDemand {
        OnDemand::new(&source_root(), &default_cache_dir())
    }

    /// What the error messages say is being done.
    fn purpose(config: &HwConfig) -> String {
        format!(
            "building the test-only configuration `{}` on demand",
            config.name
        )
    }

    /// The toolchain, if the sources are still there to build from.
    fn toolchain(&self, config: &HwConfig) -> Result<Toolchain, String> {
        let options = self.root.join("hw/verilator.f");
        if !options.is_file() {
            return Err(format!(
                "{} needs the sources this pccx-cosim was built from, and {} is not there",
                OnDemand::purpose(config),
                options.display()
            ));
        }
        Toolchain::find(&OnDemand::purpose(config), verilator::MODEL_CXX)
    }

    /// The key of `config`'s shared object.
    fn key(&self, toolchain: &Toolchain, config: &HwConfig) -> Result<Key, String> {
        let mut inputs = toolchain.identity_for(ON_DEMAND_OPT, self.traced());
        inputs.push(("verilator args", ON_DEMAND_VERILATOR_ARGS.join(" ")));
        let name = self.model_name(config)?;
        recipe::model_key_of(
            RECIPE,
            &self.root,
            &self.manifest,
            &name,
            config.rtl_params,
            &inputs,
        )
    }

    /// The shared object of `config`: from the cache, or built into it now.
    pub fn shared_object(&self, config: &HwConfig) -> Result<Built, String> {
        let toolchain = self.toolchain(config)?;
        let key = self.key(&toolchain, config)?;
        self.build(&toolchain, &key, config)
    }

    fn build(&self, toolchain: &Toolchain, key: &Key, config: &HwConfig) -> Result<Built, String> {
        let name = self.model_name(config)?;
        let file = format!("pccx_model_{name}.so");
        let purpose = OnDemand::purpose(config);
        let (dir, found) = recipe::get_or_build(&self.cache, &name, key, |dir| {
            let runtime = toolchain.runtime_objects_for(&self.cache, self.traced())?;
            let dut_path = self.root.join(&self.manifest);
            let manifest = Manifest::read(&dut_path)?;
            let options_file = dut_path
                .parent()
                .unwrap_or(&self.root)
                .join(&manifest.verilator_file);
            let model = SharedModel {
                name: &name,
                config,
                options_file: &options_file,
                shim_dir: &self.root.join("harness/rtl/shim"),
                verilator_args: ON_DEMAND_VERILATOR_ARGS,
                opt: ON_DEMAND_OPT,
                jobs: jobs(),
                unity: true,
                defines: &[],
                dut: &manifest,
                dut_path: &dut_path,
                trace: self.traced(),
            };
            toolchain
                .build_shared_object(&model, dir, &runtime)
                .map(|_| ())
                .map_err(|(stage, e)| format!("{stage} failed:\n{}", clip(&e)))
        })
        .map_err(|e| format!("{purpose}: {e}"))?;
        Ok(Built {
            path: dir.join(file),
            found,
        })
    }
}

/// The Verilator flags of an on-demand model after the shared ones: none,
/// so no tracing, and no `--output-split`. Verilator's own split (classes,
/// slow and fast code) still gives the compiles files to run in parallel,
/// and fewer files parse the model's headers fewer times: tiny at -O0 with
/// clang, two at a time, compiled in 5.0 s unsplit against 6.7 s split at
/// 5000 (docs/build.md, "The regression gate").
const ON_DEMAND_VERILATOR_ARGS: &[&str] = &[];

/// The first lines of a tool's message: the error is at the top, and a
/// failing compile of generated C++ can print megabytes.
fn clip(message: &str) -> String {
    const LINES: usize = 40;
    let lines: Vec<&str> = message.lines().collect();
    if lines.len() <= LINES {
        return message.to_string();
    }
    format!(
        "{}\n... ({} more lines)",
        lines[..LINES].join("\n"),
        lines.len() - LINES
    )
}

/// A loaded shim table, kept in a static and shared between test threads.
#[derive(Clone, Copy)]
pub(crate) struct Loaded(pub(crate) &'static SimOps);
// SAFETY: the table is immutable static data of a library that is never
// unloaded: function pointers, sizes and a pointer to the name string.
// Sharing it is sharing constants; each thread makes its own model.
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

/// The model of a test-only `config` that is not linked into this binary,
/// built on demand (or found in the cache) and loaded, once per process.
///
/// Test threads that ask for the same configuration at once wait for one
/// build (a lock per cache entry); processes that do are kept apart by the
/// cache's lock file and atomic install.
pub fn open_ops(config: &HwConfig) -> Result<&'static SimOps, String> {
    open_ops_of(dut::DEFAULT_MANIFEST, config)
}

/// [`open_ops`] of the DUT whose manifest is `manifest` (relative to the
/// sources this binary was built from).
pub fn open_ops_of(manifest: &str, config: &HwConfig) -> Result<&'static SimOps, String> {
    type Slot = Arc<Mutex<Option<Loaded>>>;
    static LOADED: Mutex<BTreeMap<String, Slot>> = Mutex::new(BTreeMap::new());
    static TOOLCHAIN: OnceLock<Toolchain> = OnceLock::new();

    let builder = OnDemand::for_manifest(&source_root(), &default_cache_dir(), manifest);
    let toolchain = match TOOLCHAIN.get() {
        Some(toolchain) => toolchain,
        None => {
            let found = builder.toolchain(config)?;
            TOOLCHAIN.get_or_init(|| found)
        }
    };
    // The sources are hashed on every call: an edit made while the process
    // runs gets an entry of its own.
    let key = builder.key(toolchain, config)?;
    let slot = LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(format!("{}-{}", builder.model_name(config)?, key.hex()))
        .or_default()
        .clone();
    let mut loaded = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(Loaded(ops)) = *loaded {
        return Ok(ops);
    }
    let built = builder.build(toolchain, &key, config)?;
    let ops = load(&built.path, &builder.model_name(config)?)?;
    *loaded = Some(Loaded(ops));
    Ok(ops)
}
