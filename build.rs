//! Verilates `hw/rtl` once per hardware configuration (`hw/configs/*.cfg`),
//! compiles the C++ model and the FFI shim with `cc`, and runs bindgen on the
//! shim's C header. See docs/build.md for the why of each step. The
//! Verilator flags shared with the lint and the mutant builds, and the
//! source list, are in hw/verilator.f.
//!
//! Environment:
//! - Without the `rtl` cargo feature (`--no-default-features`): skip all of
//!   it (the harness then builds without the RTL model; only the golden model
//!   is available).
//! - `PCCX_CONFIGS=kv260,tiny`: build only these configurations.
//! - `VERILATOR`: the verilator executable (default: `verilator` on PATH).
//! - `PCCX_COVERAGE=1`: also build `tiny` with Verilator line and toggle
//!   coverage, as the extra model `tiny_cov` (`PCCX_COVERAGE=kv260,tiny`
//!   names the configurations instead; docs/coverage.md).

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

const MIN_VERILATOR: (u32, u32) = (5, 6);

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=hw/rtl");
    println!("cargo:rerun-if-changed=hw/verilator.f");
    println!("cargo:rerun-if-changed=hw/configs");
    println!("cargo:rerun-if-changed=harness/rtl/shim");
    println!("cargo:rerun-if-env-changed=PCCX_CONFIGS");
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=PCCX_NO_TRACE");
    println!("cargo:rerun-if-env-changed=PCCX_TRACE_DEPTH");
    println!("cargo:rerun-if-env-changed=PCCX_COVERAGE");

    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let configs = read_configs(&root.join("hw/configs"));

    if env::var_os("CARGO_FEATURE_RTL").is_none() {
        write_config_table(&out, &configs, &[], &[]);
        return;
    }

    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    let (version, vroot) = check_verilator(&verilator);
    check_manifest(&root.join("hw/rtl"));
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
        None => configs,
    };

    let include = vroot.join("include");
    compile_runtime(&out, &include, &version);
    for cfg in &configs {
        build_config(&root, &out, &verilator, &include, cfg, false);
    }
    if !cov_configs.is_empty() {
        compile_cov_runtime(&out, &include, &version);
    }
    for cfg in &cov_configs {
        build_config(&root, &out, &verilator, &include, cfg, true);
    }
    run_bindgen(&root, &out);
    write_config_table(&out, &all_configs, &configs, &cov_configs);
    if tracing() {
        // The FST writer compresses with zlib; after the archives that use it.
        println!("cargo:rustc-link-lib=z");
    }
}

#[derive(Clone)]
struct HwConfig {
    name: String,
    params: BTreeMap<String, u64>,
}

impl HwConfig {
    fn param(&self, key: &str) -> u64 {
        *self
            .params
            .get(key)
            .unwrap_or_else(|| fail(&format!("hw/configs/{}.cfg does not set {key}", self.name)))
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
            params.insert(key.trim().to_string(), value);
        }
        configs.push(HwConfig { name, params });
    }
    configs.sort_by(|a, b| a.name.cmp(&b.name));
    if configs.is_empty() {
        fail("hw/configs/ holds no .cfg file");
    }
    configs
}

/// Stops the build with a clear message if `hw/rtl/manifest.txt` names a
/// file that is not there (Verilator reads the list itself, through
/// hw/verilator.f).
fn check_manifest(rtl: &Path) {
    let manifest = rtl.join("manifest.txt");
    let text = fs::read_to_string(&manifest)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", manifest.display())));
    for l in text
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
    {
        if !rtl.join(l).exists() {
            fail(&format!(
                "{} lists {l}, which does not exist",
                manifest.display()
            ));
        }
    }
}

/// Returns the version string and VERILATOR_ROOT, or stops the build with a
/// message that says how to get a usable Verilator.
fn check_verilator(verilator: &str) -> (String, PathBuf) {
    let hint = "run `bash scripts/setup.sh` (installs Verilator >= 5.006 and libclang), \
                or build with --no-default-features for a harness without the RTL model";
    let output = Command::new(verilator)
        .arg("--version")
        .output()
        .unwrap_or_else(|_| {
            fail(&format!(
                "Verilator not found (`{verilator}` is not on PATH): {hint}"
            ))
        });
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    let version = text.split_whitespace().nth(1).unwrap_or_else(|| {
        fail(&format!(
            "cannot read the Verilator version from `{}`: {hint}",
            text.trim()
        ))
    });
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if found < MIN_VERILATOR {
        fail(&format!("Verilator {version} is older than 5.006: {hint}"));
    }
    let vroot = Command::new(verilator)
        .arg("--getenv")
        .arg("VERILATOR_ROOT")
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| p.join("include/verilated.h").exists())
        .unwrap_or_else(|| {
            fail(&format!(
                "cannot find Verilator's include directory: {hint}"
            ))
        });
    (version.to_string(), vroot)
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

/// Flags shared by every C++ file built against the Verilator runtime.
fn verilated_build(include: &Path, opt: &str) -> cc::Build {
    verilated_build_with(include, opt, false)
}

/// [`verilated_build`] for a model Verilated with or without coverage
/// (`VM_COVERAGE` must match between a model and the runtime file that
/// serves it, verilated_cov.cpp; the rest of the runtime does not read it).
fn verilated_build_with(include: &Path, opt: &str, coverage: bool) -> cc::Build {
    let trace = if tracing() { "1" } else { "0" };
    let mut b = cc::Build::new();
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

/// The Verilator runtime does not change when the RTL does: build it once per
/// (Verilator version, flags) and keep it in OUT_DIR.
fn compile_runtime(out: &Path, include: &Path, version: &str) {
    let key = format!(
        "vlrt-{version}-O2-{}",
        if tracing() { "fst" } else { "notrace" }
    );
    let dir = out.join(&key);
    let lib = dir.join("libpccx_vlrt.a");
    if !lib.exists() {
        fs::create_dir_all(&dir).unwrap();
        let mut b = verilated_build(include, "2");
        for f in [
            "verilated.cpp",
            "verilated_threads.cpp",
            "verilated_dpi.cpp",
        ] {
            b.file(include.join(f));
        }
        if tracing() {
            b.file(include.join("verilated_fst_c.cpp"));
        }
        b.out_dir(&dir).compile("pccx_vlrt");
    } else {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static=pccx_vlrt");
    }
}

/// The coverage part of the runtime (`VerilatedCovContext`), only for a
/// `PCCX_COVERAGE` build, in an archive of its own beside the runtime, so
/// that the runtime itself and its cache stay what they are without it.
fn compile_cov_runtime(out: &Path, include: &Path, version: &str) {
    let key = format!(
        "vlcov-{version}-O2-{}",
        if tracing() { "fst" } else { "notrace" }
    );
    let dir = out.join(&key);
    if !dir.join("libpccx_vlcov.a").exists() {
        fs::create_dir_all(&dir).unwrap();
        verilated_build_with(include, "2", true)
            .file(include.join("verilated_cov.cpp"))
            .out_dir(&dir)
            .compile("pccx_vlcov");
    } else {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static=pccx_vlcov");
    }
}

/// Verilates and compiles one configuration; with `coverage`, as the
/// model `<name>_cov` with line and toggle coverage.
fn build_config(
    root: &Path,
    out: &Path,
    verilator: &str,
    include: &Path,
    cfg: &HwConfig,
    coverage: bool,
) {
    let name = if coverage {
        format!("{}_cov", cfg.name)
    } else {
        cfg.name.clone()
    };
    let prefix = format!("Vpccx_{name}");
    let mdir = out.join("verilated").join(&name);
    if mdir.exists() {
        fs::remove_dir_all(&mdir).unwrap();
    }
    fs::create_dir_all(&mdir).unwrap();
    // The shared flags and the sources (hw/verilator.f), then this build's own.
    let mut cmd = Command::new(verilator);
    cmd.arg("-F")
        .arg(root.join("hw/verilator.f"))
        .args(["--cc", "--output-split", "5000"])
        .arg("--prefix")
        .arg(&prefix)
        .arg("-Mdir")
        .arg(&mdir);
    if coverage {
        cmd.args(["--coverage-line", "--coverage-toggle"]);
    }
    if tracing() {
        cmd.arg("--trace-fst");
        // The depth of the hierarchy a waveform shows: fixed at verilate
        // time (the runtime `levels` argument has no effect on 5.006).
        if let Ok(depth) = env::var("PCCX_TRACE_DEPTH") {
            cmd.arg("--trace-depth").arg(depth);
        }
    }
    for (k, v) in &cfg.params {
        cmd.arg(format!("-G{k}={v}"));
    }
    let result = cmd
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {verilator}: {e}")));
    if !result.status.success() {
        fail(&format!(
            "Verilator rejected hw/rtl for configuration `{}`:\n{}",
            cfg.name,
            String::from_utf8_lossy(&result.stderr)
        ));
    }

    let classes = read_class_lists(&mdir.join(format!("{prefix}_classes.mk")));
    let cpp = |names: &[String]| -> Vec<PathBuf> {
        names
            .iter()
            .map(|n| mdir.join(format!("{n}.cpp")))
            .collect()
    };
    let fast: Vec<String> = [
        classes.get("VM_CLASSES_FAST"),
        classes.get("VM_SUPPORT_FAST"),
    ]
    .into_iter()
    .flatten()
    .flatten()
    .cloned()
    .collect();
    let slow: Vec<String> = [
        classes.get("VM_CLASSES_SLOW"),
        classes.get("VM_SUPPORT_SLOW"),
    ]
    .into_iter()
    .flatten()
    .flatten()
    .cloned()
    .collect();

    // Slow (construction, initial) code at -O1, fast (eval) code at -O2; both
    // end in one archive because they reference each other.
    let mut slow_build = verilated_build_with(include, "1", coverage);
    slow_build
        .include(&mdir)
        .files(cpp(&slow))
        .out_dir(mdir.join("slow"));
    let slow_objects = slow_build.compile_intermediates();

    let mut fast_build = verilated_build_with(include, "2", coverage);
    fast_build
        .include(&mdir)
        .include(root.join("harness/rtl/shim"))
        .files(cpp(&fast))
        .file(root.join("harness/rtl/shim/pccx_shim.cpp"))
        .define("PCCX_PREFIX", prefix.as_str())
        .define("PCCX_CONFIG", name.as_str())
        .define("PCCX_L2_WORDS", cfg.param("L2_WORDS").to_string().as_str())
        .define(
            "PCCX_FIFO_DEPTH",
            cfg.param("FIFO_DEPTH").to_string().as_str(),
        )
        .objects(slow_objects)
        .out_dir(mdir.join("fast"))
        .compile(&format!("pccx_model_{name}"));
}

/// Parses `NAME += \` continuation lists out of `V<prefix>_classes.mk`.
fn read_class_lists(path: &Path) -> BTreeMap<String, Vec<String>> {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display())));
    let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some((name, rest)) = line.split_once("+=") {
            let name = name.trim().to_string();
            lists.entry(name.clone()).or_default();
            let rest = rest.trim().trim_end_matches('\\').trim();
            if !rest.is_empty() {
                lists.get_mut(&name).unwrap().push(rest.to_string());
            }
            current = line.ends_with('\\').then_some(name);
        } else if let Some(name) = &current {
            let item = line.trim_end_matches('\\').trim();
            if !item.is_empty() {
                lists.get_mut(name).unwrap().push(item.to_string());
            }
            if !line.ends_with('\\') {
                current = None;
            }
        }
    }
    lists
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
        writeln!(
            s,
            "    HwConfig {{ name: {:?}, l2_words: {}, fifo_depth: {}, array_rows: {}, array_cols: {}, vector_lanes: {}, cvo_cores: {} }},",
            c.name,
            c.param("L2_WORDS"),
            c.param("FIFO_DEPTH"),
            c.param("ARRAY_ROWS"),
            c.param("ARRAY_COLS"),
            c.param("VEC_LANES"),
            c.param("CVO_CORES")
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
