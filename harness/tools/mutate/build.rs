//! Building a mutant: a copy of `hw/rtl` with one token changed, Verilated
//! (with the shared options of `hw/verilator.f`) and compiled with the shim
//! into a shared object, then loaded into this process. The Verilator
//! runtime is compiled once per work directory.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::HwConfig;
use crate::rtl::SimOps;

use super::Mutant;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
}
const RTLD_NOW: c_int = 2;

/// The configuration name mutants are compiled under (their symbols never
/// clash with the configurations linked into the binary).
const MUTANT_CONFIG: &str = "mutant";

/// A loaded mutant. The shared object stays mapped for the life of the
/// process: unloading a Verilated model's library is not safe while its
/// thread-local state may still be referenced.
pub struct MutantModel {
    ops: &'static SimOps,
}

impl MutantModel {
    pub fn ops(&self) -> &'static SimOps {
        self.ops
    }
}

pub struct Builder {
    root: PathBuf,
    work: PathBuf,
    verilator: String,
    include: PathBuf,
    runtime: Vec<PathBuf>,
    config: HwConfig,
    counter: std::sync::atomic::AtomicUsize,
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(())
}

impl Builder {
    /// Finds Verilator and a C++ compiler, and compiles the runtime into
    /// `work/runtime` unless it is there.
    pub fn new(root: &Path, work: &Path, config: HwConfig) -> Result<Builder, String> {
        let verilator = std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
        let out = Command::new(&verilator)
            .args(["--getenv", "VERILATOR_ROOT"])
            .output()
            .map_err(|_| {
                format!("mutate needs Verilator at run time; `{verilator}` is not on PATH (bash scripts/setup.sh)")
            })?;
        let include = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("include");
        if !include.join("verilated.h").exists() {
            return Err(format!("no verilated.h under {}", include.display()));
        }
        let rt = work.join("runtime");
        std::fs::create_dir_all(&rt).map_err(|e| format!("cannot create {}: {e}", rt.display()))?;
        let mut runtime = Vec::new();
        for f in [
            "verilated.cpp",
            "verilated_threads.cpp",
            "verilated_dpi.cpp",
        ] {
            let obj = rt.join(f.replace(".cpp", ".o"));
            if !obj.exists() {
                run(
                    Command::new("g++")
                        .args(cxx_flags(&include, "-O2"))
                        .arg("-c")
                        .arg(include.join(f))
                        .arg("-o")
                        .arg(&obj),
                    "g++",
                )
                .map_err(|e| format!("compiling the Verilator runtime ({f}): {e}"))?;
            }
            runtime.push(obj);
        }
        Ok(Builder {
            root: root.to_path_buf(),
            work: work.to_path_buf(),
            verilator,
            include,
            runtime,
            config,
            counter: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Builds `mutant` into a shared object; on failure, the stage and the
    /// tool's message.
    pub fn build(&self, mutant: &Mutant) -> Result<PathBuf, (&'static str, String)> {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self.work.join(format!("m{n:04}"));
        let _ = std::fs::remove_dir_all(&dir);
        let rtl = dir.join("rtl");
        std::fs::create_dir_all(&rtl).map_err(|e| ("setup", e.to_string()))?;
        let src_rtl = self.root.join("hw/rtl");
        let manifest = std::fs::read_to_string(src_rtl.join("manifest.txt"))
            .map_err(|e| ("setup", e.to_string()))?;
        for name in manifest
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
        {
            let text = std::fs::read_to_string(src_rtl.join(name))
                .map_err(|e| ("setup", e.to_string()))?;
            let text = if name == mutant.file {
                mutant.apply(&text).map_err(|e| ("setup", e))?
            } else {
                text
            };
            std::fs::write(rtl.join(name), text).map_err(|e| ("setup", e.to_string()))?;
        }
        // The directory mirrors hw/: its verilator.f reads rtl/manifest.txt
        // next to it, so the mutant is built from the same command line as
        // the model (hw/verilator.f), on the copied sources.
        for (from, to) in [
            (src_rtl.join("manifest.txt"), rtl.join("manifest.txt")),
            (self.root.join("hw/verilator.f"), dir.join("verilator.f")),
        ] {
            std::fs::copy(&from, &to).map_err(|e| ("setup", e.to_string()))?;
        }
        std::fs::write(dir.join("mutant.txt"), mutant.describe() + "\n").ok();
        let obj = dir.join("obj");
        let prefix = format!("Vpccx_{MUTANT_CONFIG}");
        let c = &self.config;
        run(
            Command::new(&self.verilator)
                .arg("-F")
                .arg(dir.join("verilator.f"))
                // After the shared -Wall: a mutant may warn, and still runs.
                .args(["--cc", "-Wno-fatal", "-Wno-lint", "-Wno-style"])
                .args(["--prefix", &prefix])
                .arg("-Mdir")
                .arg(&obj)
                .arg(format!("-GL2_WORDS={}", c.l2_words))
                .arg(format!("-GFIFO_DEPTH={}", c.fifo_depth))
                .arg(format!("-GARRAY_ROWS={}", c.array_rows))
                .arg(format!("-GARRAY_COLS={}", c.array_cols))
                .arg(format!("-GVEC_LANES={}", c.vector_lanes))
                .arg(format!("-GCVO_CORES={}", c.cvo_cores)),
            "verilator",
        )
        .map_err(|e| ("verilator", e))?;
        let mut cpp: Vec<PathBuf> = std::fs::read_dir(&obj)
            .map_err(|e| ("verilator", e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
            .collect();
        cpp.sort();
        let so = dir.join("mutant.so");
        run(
            Command::new("g++")
                // -O0: a mutant's build costs far more than its campaign
                // (docs/mutation.md), and most mutants die in the first seed.
                .args(cxx_flags(&self.include, "-O0"))
                .arg("-shared")
                .arg(format!("-I{}", obj.display()))
                .arg(format!(
                    "-I{}",
                    self.root.join("harness/rtl/shim").display()
                ))
                .arg(format!("-DPCCX_PREFIX={prefix}"))
                .arg(format!("-DPCCX_CONFIG={MUTANT_CONFIG}"))
                .arg(format!("-DPCCX_L2_WORDS={}", c.l2_words))
                .arg(format!("-DPCCX_FIFO_DEPTH={}", c.fifo_depth))
                .args(&cpp)
                .arg(self.root.join("harness/rtl/shim/pccx_shim.cpp"))
                .args(&self.runtime)
                .arg("-o")
                .arg(&so),
            "g++",
        )
        .map_err(|e| ("c++", e))?;
        Ok(so)
    }
}

fn cxx_flags(include: &Path, opt: &str) -> Vec<String> {
    vec![
        "-std=c++17".into(),
        opt.into(),
        "-fPIC".into(),
        "-w".into(),
        "-faligned-new".into(),
        format!("-I{}", include.display()),
        format!("-I{}", include.join("vltstd").display()),
        "-DVM_COVERAGE=0".into(),
        "-DVM_SC=0".into(),
        "-DVM_TRACE=0".into(),
        "-DVM_TRACE_FST=0".into(),
        "-DVM_TRACE_VCD=0".into(),
    ]
}

/// Loads a mutant's shared object into this process.
pub fn load(so: &Path) -> Result<MutantModel, String> {
    let path = CString::new(so.to_string_lossy().as_bytes().to_vec()).map_err(|e| e.to_string())?;
    // SAFETY: plain dlopen/dlsym of a library we just built; the symbol is
    // the shim's `const pccx_sim_ops *pccx_sim_ops_mutant(void)`.
    unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_NOW);
        if handle.is_null() {
            return Err(CStr::from_ptr(dlerror()).to_string_lossy().into_owned());
        }
        let name = CString::new(format!("pccx_sim_ops_{MUTANT_CONFIG}")).unwrap();
        let sym = dlsym(handle, name.as_ptr());
        if sym.is_null() {
            return Err(format!(
                "{} has no pccx_sim_ops_{MUTANT_CONFIG}",
                so.display()
            ));
        }
        let get: extern "C" fn() -> *const SimOps = std::mem::transmute(sym);
        Ok(MutantModel { ops: &*get() })
    }
}
