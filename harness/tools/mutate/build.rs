//! Building a mutant: a copy of `hw/rtl` with one token changed, Verilated
//! (with the shared options of `hw/verilator.f`) and compiled with the shim
//! into a shared object, then loaded into this process. The build steps and
//! the loader are the run-time builder's (`rtl::dynamic`), shared with the
//! on-demand configurations; so is the Verilator runtime, compiled once into
//! the build cache.

use std::path::{Path, PathBuf};

use crate::config::HwConfig;
use crate::rtl::dynamic::{self, SharedModel, Toolchain};
use crate::rtl::SimOps;

use super::Mutant;

/// The configuration name mutants are compiled under (their symbols never
/// clash with the configurations linked into the binary).
const MUTANT_CONFIG: &str = "mutant";

/// After the shared -Wall: a mutant may warn, and still runs.
const MUTANT_VERILATOR_ARGS: &[&str] = &["-Wno-fatal", "-Wno-lint", "-Wno-style"];

/// A loaded mutant. The shared object stays mapped for the life of the
/// process (`dynamic::load`).
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
    toolchain: Toolchain,
    runtime: Vec<PathBuf>,
    config: HwConfig,
    counter: std::sync::atomic::AtomicUsize,
}

impl Builder {
    /// Finds Verilator and a C++ compiler, and the Verilator runtime's
    /// objects in the build cache (compiling them there unless they are).
    pub fn new(root: &Path, work: &Path, config: HwConfig) -> Result<Builder, String> {
        let toolchain = Toolchain::find("mutate")?;
        let runtime = toolchain.runtime_objects(&dynamic::default_cache_dir())?;
        Ok(Builder {
            root: root.to_path_buf(),
            work: work.to_path_buf(),
            toolchain,
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
        let model = SharedModel {
            name: MUTANT_CONFIG,
            config: &self.config,
            options_file: &dir.join("verilator.f"),
            shim_dir: &self.root.join("harness/rtl/shim"),
            verilator_args: MUTANT_VERILATOR_ARGS,
            // -O0: a mutant's build costs far more than its campaign
            // (docs/mutation.md), and most mutants die in the first seed.
            opt: "-O0",
            // `mutate --jobs` already builds that many mutants at once.
            jobs: 1,
        };
        self.toolchain
            .build_shared_object(&model, &dir, &self.runtime)
    }
}

/// Loads a mutant's shared object into this process.
pub fn load(so: &Path) -> Result<MutantModel, String> {
    dynamic::load(so, MUTANT_CONFIG).map(|ops| MutantModel { ops })
}
