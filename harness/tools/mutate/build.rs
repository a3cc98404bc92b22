//! Building a mutant: a copy of `hw/rtl` with one token changed, Verilated
//! (with the shared options of `hw/verilator.f`) and compiled with the shim
//! into a shared object, then loaded into this process. The build steps and
//! the loader are the run-time builder's (`rtl::dynamic`), shared with the
//! on-demand configurations; so is the Verilator runtime, compiled once into
//! the build cache.

use std::path::{Path, PathBuf};

use crate::config::HwConfig;
use crate::rtl::dut::{self, Manifest};
use crate::rtl::dynamic::{self, SharedModel, Toolchain};
use crate::rtl::SimOps;

use super::Mutant;

/// The configuration name mutants are compiled under (their symbols never
/// clash with the configurations linked into the binary).
pub const MUTANT_CONFIG: &str = "mutant";

/// The C++ opt level of a mutant built alone: its build costs far more than
/// its campaign (docs/mutation.md), and most mutants die in the first seed.
const MUTANT_OPT: &str = "-O0";

/// The version of a mutant's build steps, part of its cache key.
const MUTANT_RECIPE: &str = "mutant-2";

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
        let toolchain = Toolchain::find("mutate", crate::rtl::verilator::MUTANT_CXX)?;
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

    /// A fresh directory under the work directory, `<prefix>NNNN`.
    fn fresh_dir(&self, prefix: &str) -> PathBuf {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self.work.join(format!("{prefix}{n:04}"));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Writes the sources of `mutants` applied together to `dir` as a copy
    /// of hw/: `rtl/` with their files changed, and `verilator.f`. No two of
    /// them may share a line (each is applied to the text the one before
    /// left, and only its own line moves).
    fn write_sources(&self, mutants: &[&Mutant], dir: &Path) -> Result<(), (&'static str, String)> {
        let rtl = dir.join("rtl");
        std::fs::create_dir_all(&rtl).map_err(|e| ("setup", e.to_string()))?;
        let src_rtl = self.root.join("hw/rtl");
        for name in super::manifest_files(&src_rtl).map_err(|e| ("setup", e))? {
            let mut text = std::fs::read_to_string(src_rtl.join(&name))
                .map_err(|e| ("setup", e.to_string()))?;
            for mutant in mutants.iter().filter(|m| m.file == name) {
                text = mutant.apply(&text).map_err(|e| ("setup", e))?;
            }
            std::fs::write(rtl.join(&name), text).map_err(|e| ("setup", e.to_string()))?;
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
        let described: String = mutants.iter().map(|m| m.describe() + "\n").collect();
        std::fs::write(dir.join("mutant.txt"), described).ok();
        Ok(())
    }

    /// Whether Verilator takes `mutant` built alone (its front end and
    /// checks, `--lint-only`, about 0.6 s here against a build's 7 s): a
    /// mutant run from the schema is "not compiling" exactly when Verilator
    /// refuses it alone, e.g. a signal that now drives itself, which the
    /// schema's guard hides. On refusal, the stage and Verilator's message.
    pub fn lint_alone(&self, mutant: &Mutant) -> Result<(), (&'static str, String)> {
        self.lint_together(&[mutant])
    }

    /// Whether Verilator takes `mutants` applied together (no two on one
    /// line): the step [`super::lint`] splits until each refusal is one
    /// mutant's alone.
    pub fn lint_together(&self, mutants: &[&Mutant]) -> Result<(), (&'static str, String)> {
        let dir = self.fresh_dir("l");
        self.write_sources(mutants, &dir)?;
        let out = self.lint(&dir).map_err(|e| ("verilator", e))?;
        let _ = std::fs::remove_dir_all(&dir);
        if out.status.success() {
            Ok(())
        } else {
            Err((
                "verilator",
                format!(
                    "`verilator --lint-only` exited with {}:\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ),
            ))
        }
    }

    /// `verilator --lint-only` of the copy of hw/ in `dir` (its
    /// `verilator.f`), with the mutants' waivers and the configuration's
    /// parameters.
    fn lint(&self, dir: &Path) -> Result<std::process::Output, String> {
        std::process::Command::new(self.toolchain.verilator())
            .arg("-F")
            .arg(dir.join("verilator.f"))
            .arg("--lint-only")
            .args(MUTANT_VERILATOR_ARGS)
            .args(self.params())
            .output()
            .map_err(|e| format!("cannot run Verilator: {e}"))
    }

    /// Builds `mutant` into a shared object, or finds it in the build cache
    /// (the same mutated sources, options and toolchain build the same
    /// model: a second run of an unchanged RTL builds no mutant alone
    /// again); on failure, the stage and the tool's message. A refused
    /// mutant is not cached: it costs Verilator's front end alone.
    pub fn build(&self, mutant: &Mutant) -> Result<PathBuf, (&'static str, String)> {
        let dir = self.fresh_dir("m");
        self.write_sources(&[mutant], &dir)?;
        let mut key = crate::rtl::recipe::Key::new(MUTANT_RECIPE);
        key.add("mutant", mutant.id().as_bytes());
        let rtl = dir.join("rtl");
        for name in super::manifest_files(&rtl).map_err(|e| ("setup", e))? {
            key.add_file(&format!("rtl/{name}"), &rtl.join(&name))
                .map_err(|e| ("setup", e))?;
        }
        key.add_file("hw/verilator.f", &dir.join("verilator.f"))
            .map_err(|e| ("setup", e))?;
        key.add_file(
            dut::DEFAULT_MANIFEST,
            &self.root.join(dut::DEFAULT_MANIFEST),
        )
        .map_err(|e| ("setup", e))?;
        for f in crate::rtl::recipe::shim_files(&self.root).map_err(|e| ("setup", e))? {
            key.add_file(&f, &self.root.join(&f))
                .map_err(|e| ("setup", e))?;
        }
        key.add("params", self.params().join(" ").as_bytes());
        key.add("verilator args", MUTANT_VERILATOR_ARGS.join(" ").as_bytes());
        for (label, value) in self.toolchain.identity(MUTANT_OPT) {
            key.add(label, value.as_bytes());
        }
        let mut failure = None;
        let so_name = format!("pccx_model_{MUTANT_CONFIG}.so");
        let built = crate::rtl::recipe::get_or_build(
            &dynamic::default_cache_dir(),
            &format!("mutant-{}", self.config.name),
            &key,
            |entry| match self.build_into(&dir, entry) {
                Ok(so) if so == entry.join(&so_name) => {
                    // The shared object is all a run loads: the generated
                    // C++ and the objects would be most of the entry.
                    let _ = std::fs::remove_dir_all(entry.join("verilated"));
                    let _ = std::fs::remove_dir_all(entry.join("obj"));
                    Ok(())
                }
                Ok(so) => Err(format!("the build wrote {}, not {so_name}", so.display())),
                Err(e) => {
                    failure = Some(e);
                    Err("the build failed".into())
                }
            },
        );
        match built {
            Ok((entry, _)) => Ok(entry.join(so_name)),
            Err(e) => Err(failure.unwrap_or(("setup", e))),
        }
    }

    /// Verilates and compiles the sources written to `src` into `dir`.
    fn build_into(&self, src: &Path, dir: &Path) -> Result<PathBuf, (&'static str, String)> {
        let dut_path = self.root.join(dut::DEFAULT_MANIFEST);
        let dut = Manifest::read(&dut_path).map_err(|e| ("setup", e))?;
        let model = SharedModel {
            name: MUTANT_CONFIG,
            config: &self.config,
            options_file: &src.join("verilator.f"),
            shim_dir: &self.root.join("harness/rtl/shim"),
            verilator_args: MUTANT_VERILATOR_ARGS,
            opt: MUTANT_OPT,
            // `mutate --jobs` already builds that many mutants at once.
            jobs: 1,
            unity: true,
            defines: &[],
            dut: &dut,
            dut_path: &dut_path,
            trace: false,
        };
        self.toolchain
            .build_shared_object(&model, dir, &self.runtime)
    }
}

/// Loads a mutant's shared object into this process.
pub fn load(so: &Path) -> Result<MutantModel, String> {
    dynamic::load(so, MUTANT_CONFIG).map(|ops| MutantModel { ops })
}

/// The configuration name of a mutant schema's model.
pub const SCHEMA_CONFIG: &str = "schema";

/// The version of the schema's build steps, part of its cache key.
const SCHEMA_RECIPE: &str = "schema-3";

/// The C++ opt level of a schema: one build serves every mutant, so the
/// simulation speed counts more than the compile time (docs/mutation.md).
const SCHEMA_OPT: &str = "-O1";

/// The C++ opt level of a schema of a run's own mutants (`--builds
/// subset`): it serves a few mutants through long batteries, and without
/// the other guards the model is small enough for -O2 to pay.
const SUBSET_OPT: &str = "-O2";

/// Why a site is left out of a schema of a run's own mutants.
const NOT_IN_SUBSET: &str = "not among this run's mutants (a schema of the run's own mutants)";

/// Rounds of Verilator lint that may evict sites before the schema is
/// given up on.
const SCHEMA_ROUNDS: usize = 100;

/// A schema that lints, and the guards evicted on the way.
struct Linted {
    schema: super::schema::Schema,
    evicted: std::collections::BTreeMap<u32, String>,
}

/// A built mutant schema: the shared object and what it guards.
pub struct SchemaBuild {
    pub so: PathBuf,
    pub schema: super::schema::Schema,
    /// Whether the shared object came from the build cache.
    pub cached: bool,
}

impl Builder {
    /// The mutant schema of `all` (every site, in order): generated, linted
    /// by Verilator (a site whose guard Verilator refuses, say in a
    /// constant expression, is evicted and built alone), then Verilated and
    /// compiled into the build cache (found there if the same schema was
    /// built before). `say` hears about each round.
    ///
    /// With `only` (selectors), the schema guards only those sites: the
    /// rest of hw/rtl is as written (a file without a guard keeps its
    /// out-of-line functions), so the model simulates at nearly the speed
    /// of the RTL alone. Selectors stay those of the whole list.
    pub fn schema(
        &self,
        all: &[Mutant],
        only: Option<&std::collections::BTreeSet<u32>>,
        say: &dyn Fn(&str),
    ) -> Result<SchemaBuild, String> {
        use super::schema::Schema;
        let src = self.work.join("schema");
        // The guards Verilator refused, found once per RTL and toolchain:
        // a later run (a `--id` to reproduce, CI) skips the lint rounds.
        let cache = dynamic::default_cache_dir();
        let mut lint_key = crate::rtl::recipe::Key::new(SCHEMA_RECIPE);
        lint_key.add("product", b"the guards the mutant schema's lint refused");
        // The schema with every guard: it changes with the RTL, the sites
        // and the generator alike.
        for (name, file) in &Schema::generate(&self.root, all, &Default::default())?.files {
            lint_key.add(name, file.text.as_bytes());
        }
        lint_key.add_file("hw/verilator.f", &self.root.join("hw/verilator.f"))?;
        lint_key.add("params", self.params().join(" ").as_bytes());
        for (label, value) in self.toolchain.identity(SCHEMA_OPT) {
            lint_key.add(label, value.as_bytes());
        }
        let lint_file = cache.join(format!(
            "schema-lint-{}-{}.txt",
            self.config.name,
            lint_key.hex()
        ));
        let known: Option<std::collections::BTreeMap<u32, String>> =
            std::fs::read_to_string(&lint_file).ok().map(|text| {
                text.lines()
                    .filter_map(|l| l.split_once('\t'))
                    .filter_map(|(k, why)| Some((k.parse().ok()?, why.to_string())))
                    .collect()
            });
        // The guards Verilator refuses among all of them: on record, or
        // found now (and the schema of every guard kept, when that is the
        // one wanted).
        let (evicted, full) = match known {
            Some(evicted) => (evicted, None),
            None => {
                let linted = self.lint_rounds(all, &src, say, Default::default())?;
                let text: String = linted
                    .evicted
                    .iter()
                    .map(|(k, why)| format!("{k}\t{}\n", why.replace(['\n', '\t'], " ")))
                    .collect();
                // Written whole, then renamed: a reader sees all of it or none.
                let _ = std::fs::create_dir_all(&cache);
                let tmp = lint_file.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, &lint_file);
                }
                (linted.evicted, Some(linted.schema))
            }
        };
        let schema = match (only, full) {
            (None, Some(schema)) => schema,
            (None, None) => {
                let schema = Schema::generate(&self.root, all, &evicted)?;
                schema.write(&self.root, &src)?;
                schema
            }
            (Some(only), _) => {
                let mut excluded = evicted;
                for k in (1..=all.len() as u32).filter(|k| !only.contains(k)) {
                    excluded.entry(k).or_insert_with(|| NOT_IN_SUBSET.into());
                }
                // Usually one round: the guards left lint as they did among
                // all of them.
                self.lint_rounds(all, &src, say, excluded)?.schema
            }
        };
        let opt = if only.is_some() {
            SUBSET_OPT
        } else {
            SCHEMA_OPT
        };
        // Which sites are built alone and why, for whoever wonders.
        let mut listing =
            String::from("# Sites the mutant schema does not guard (built alone), and why.\n");
        for (k, why) in schema
            .unguarded
            .iter()
            .filter(|(_, why)| *why != NOT_IN_SUBSET)
        {
            let id = all.get(*k as usize - 1).map_or(String::new(), |m| m.id());
            listing += &format!("{id}  # {}\n", why.lines().next().unwrap_or(""));
        }
        std::fs::write(src.join("unguarded.txt"), listing)
            .map_err(|e| format!("cannot write {}: {e}", src.join("unguarded.txt").display()))?;
        let mut key = crate::rtl::recipe::Key::new(SCHEMA_RECIPE);
        key.add("name", SCHEMA_CONFIG.as_bytes());
        key.add(
            "selector package",
            super::schema::selector_package().as_bytes(),
        );
        for (name, file) in &schema.files {
            key.add(name, file.text.as_bytes());
        }
        key.add_file("hw/verilator.f", &self.root.join("hw/verilator.f"))?;
        let dut_path = self.root.join(dut::DEFAULT_MANIFEST);
        key.add_file(dut::DEFAULT_MANIFEST, &dut_path)?;
        let dut = Manifest::read(&dut_path)?;
        let shim = self.root.join("harness/rtl/shim");
        for f in crate::rtl::recipe::shim_files(&self.root)? {
            key.add_file(&f, &self.root.join(&f))?;
        }
        key.add("params", self.params().join(" ").as_bytes());
        key.add("verilator args", MUTANT_VERILATOR_ARGS.join(" ").as_bytes());
        for (label, value) in self.toolchain.identity(opt) {
            key.add(label, value.as_bytes());
        }
        let (dir, found) = crate::rtl::recipe::get_or_build(
            &cache,
            &format!("{SCHEMA_CONFIG}-{}", self.config.name),
            &key,
            |dir| {
                let model = SharedModel {
                    name: SCHEMA_CONFIG,
                    config: &self.config,
                    options_file: &src.join("verilator.f"),
                    shim_dir: &shim,
                    verilator_args: MUTANT_VERILATOR_ARGS,
                    opt,
                    jobs: dynamic::jobs(),
                    unity: false,
                    defines: &["PCCX_MUTANT_SCHEMA"],
                    dut: &dut,
                    dut_path: &dut_path,
                    trace: false,
                };
                self.toolchain
                    .build_shared_object(&model, dir, &self.runtime)
                    .map(|_| ())
                    .map_err(|(stage, e)| format!("the mutant schema: {stage} failed:\n{e}"))
            },
        )?;
        Ok(SchemaBuild {
            so: dir.join(format!("pccx_model_{SCHEMA_CONFIG}.so")),
            schema,
            cached: found == crate::rtl::recipe::Found::Cached,
        })
    }

    /// Generates the schema of `all` without the sites of `evicted` into
    /// `src` and lints it, evicting each guard Verilator refuses, until it
    /// lints; the schema and the guards evicted, with Verilator's reason.
    fn lint_rounds(
        &self,
        all: &[Mutant],
        src: &Path,
        say: &dyn Fn(&str),
        mut evicted: std::collections::BTreeMap<u32, String>,
    ) -> Result<Linted, String> {
        use super::schema::Schema;
        for round in 1..=SCHEMA_ROUNDS {
            let schema = Schema::generate(&self.root, all, &evicted)?;
            schema.write(&self.root, src)?;
            let out = self.lint(src)?;
            if out.status.success() {
                return Ok(Linted { schema, evicted });
            }
            let text = String::from_utf8_lossy(&out.stderr).into_owned();
            let mut evicted_now = 0;
            let mut unplaced = Vec::new();
            // After a syntax error the parser's later complaints in that
            // file are noise: take only the first one of each file.
            let mut syntax_seen = std::collections::BTreeSet::new();
            for (file, line, column, message) in super::schema::error_places(&text) {
                if message.starts_with("syntax error") && !syntax_seen.insert(file.clone()) {
                    continue;
                }
                let mut selectors = schema.selectors_at(&file, line, column);
                if selectors.is_empty() && !message.starts_with("syntax error") {
                    selectors = schema.loop_bounds_before(&file, line);
                }
                if selectors.is_empty() {
                    unplaced.push(format!("{file}:{line}:{column}: {message}"));
                }
                for k in selectors {
                    if evicted
                        .insert(k, format!("Verilator refuses its guard: {message}"))
                        .is_none()
                    {
                        evicted_now += 1;
                    }
                }
            }
            say(&format!(
                "schema round {round}: Verilator refused {evicted_now} guards{}",
                if unplaced.is_empty() {
                    String::new()
                } else {
                    format!(" and {} errors outside any guard", unplaced.len())
                }
            ));
            if evicted_now == 0 || round == SCHEMA_ROUNDS {
                return Err(format!(
                    "the mutant schema does not lint after {round} rounds; errors at no guard:\n  {}\nVerilator said:\n{}",
                    unplaced.join("\n  "),
                    text.lines().take(30).collect::<Vec<_>>().join("\n")
                ));
            }
        }
        unreachable!("the last round returns")
    }

    /// A fingerprint of what a mutant's behaviour depends on besides its
    /// own change: hw/rtl's manifest and every file it lists,
    /// hw/verilator.f, the configuration's parameters and the toolchain;
    /// `label` names what it is for.
    pub fn rtl_fingerprint(&self, label: &str) -> Result<String, String> {
        let mut key = crate::rtl::recipe::Key::new(label);
        let rtl = self.root.join("hw/rtl");
        key.add_file("hw/rtl/manifest.txt", &rtl.join("manifest.txt"))?;
        for name in super::manifest_files(&rtl)? {
            key.add_file(&format!("hw/rtl/{name}"), &rtl.join(&name))?;
        }
        key.add_file("hw/verilator.f", &self.root.join("hw/verilator.f"))?;
        key.add("params", self.params().join(" ").as_bytes());
        for (label, value) in self.toolchain.identity(SCHEMA_OPT) {
            key.add(label, value.as_bytes());
        }
        Ok(key.hex())
    }

    /// `-G` of the configuration's RTL parameters.
    fn params(&self) -> Vec<String> {
        self.config
            .rtl_params
            .iter()
            .map(|(k, v)| format!("-G{k}={v}"))
            .collect()
    }
}

/// Loads a schema's shared object and selects mutant `selector` in it (0:
/// the RTL as written); every model this process then creates from it is
/// that mutant.
pub fn load_schema(so: &Path, selector: u32) -> Result<MutantModel, String> {
    let ops = dynamic::load(so, SCHEMA_CONFIG)?;
    let select = dynamic::symbol(so, "pccx_mutant_select")?;
    // SAFETY: the shim's `extern "C" void pccx_mutant_select(uint32_t)`.
    let select: extern "C" fn(u32) = unsafe { std::mem::transmute(select) };
    select(selector);
    Ok(MutantModel { ops })
}
