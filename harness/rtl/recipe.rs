//! What build.rs and the run-time builder (`dynamic.rs`) share about building
//! a Verilated model: its cache key, the atomic install of a cache entry, and
//! the reading of Verilator's class lists. build.rs includes this file as a
//! module of its own (`#[path]`), so it may use nothing but `std`.
//!
//! A cache entry is a directory `<cache>/<name>-<16 hex digits>` named by
//! the key of everything that went into it (docs/build.md, "The cache"):
//! the two cargo profiles, `cargo test` and `cargo run --release`, and every
//! process that asks for an on-demand model find the same entry and build it
//! once.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a (64 bits) of `bytes`, continuing from `state`. Written out here
/// because the key must be the same in every process, profile and Rust
/// version, which `DefaultHasher` does not promise.
fn fnv1a64(mut state: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(FNV_PRIME);
    }
    state
}

/// `value` as its size and hash, for [`Key::inputs`].
fn digest(value: &[u8]) -> String {
    format!(
        "{} bytes, fnv {:016x}",
        value.len(),
        fnv1a64(FNV_OFFSET, value)
    )
}

/// A cache key under construction: named inputs, each hashed with its name
/// and length (so that moving bytes from one input to the next changes the
/// key), and a readable record of them for `inputs.txt` in the entry, which
/// shows which input changed when a build was not reused.
#[derive(Clone, Debug)]
pub struct Key {
    hash: u64,
    inputs: String,
}

impl Key {
    /// A key of the build steps `recipe` names: a constant its builder bumps
    /// when the steps change, so that old entries are not reused.
    pub fn new(recipe: &str) -> Key {
        let mut key = Key {
            hash: FNV_OFFSET,
            inputs: String::new(),
        };
        key.add("recipe", recipe.as_bytes());
        key
    }

    /// Adds the input `label` with the value `value` (shown in full in
    /// [`Key::inputs`] when it is short text).
    pub fn add(&mut self, label: &str, value: &[u8]) -> &mut Key {
        let shown = match std::str::from_utf8(value) {
            Ok(text) if text.len() <= 1000 => text.trim().replace('\n', " | "),
            _ => digest(value),
        };
        self.add_shown(label, value, &shown)
    }

    /// Adds the content of the file at `path` under `label` (shown as its
    /// size and hash).
    pub fn add_file(&mut self, label: &str, path: &Path) -> Result<&mut Key, String> {
        let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(self.add_shown(label, &bytes, &digest(&bytes)))
    }

    fn add_shown(&mut self, label: &str, value: &[u8], shown: &str) -> &mut Key {
        for part in [label.as_bytes(), value] {
            self.hash = fnv1a64(self.hash, &(part.len() as u64).to_le_bytes());
            self.hash = fnv1a64(self.hash, part);
        }
        writeln!(self.inputs, "{label}: {shown}").unwrap();
        self
    }

    /// The key as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.hash)
    }

    /// One line per input: its name and its value (or its size and hash).
    pub fn inputs(&self) -> &str {
        &self.inputs
    }
}

/// The files, relative to the repository root `root`, that a Verilated
/// model is made of: the DUT manifest, the Verilator options file it names
/// and every file that reads (dut::options_file_sources), and the shim.
pub fn model_sources(root: &Path) -> Result<Vec<String>, String> {
    model_sources_of(root, super::dut::DEFAULT_MANIFEST)
}

/// [`model_sources`] of the DUT whose manifest is `manifest_path` (relative
/// to `root`).
pub fn model_sources_of(root: &Path, manifest_path: &str) -> Result<Vec<String>, String> {
    let manifest = root.join(manifest_path);
    let dut = super::dut::Manifest::read(&manifest)?;
    let dir = manifest.parent().unwrap_or(root);
    let mut files = vec![manifest_path.to_string()];
    for file in super::dut::options_file_sources(&dir.join(&dut.verilator_file))? {
        let relative = file.strip_prefix(root).map_err(|_| {
            format!(
                "{} reads {}, which is outside the repository",
                manifest.display(),
                file.display()
            )
        })?;
        files.push(relative.to_string_lossy().into_owned());
    }
    files.extend(shim_files(root)?);
    Ok(files)
}

/// The shim's files, relative to the repository root `root`, sorted: they
/// are compiled into every model, so every key of one holds them.
pub fn shim_files(root: &Path) -> Result<Vec<String>, String> {
    let shim = root.join("harness/rtl/shim");
    let mut files: Vec<String> = fs::read_dir(&shim)
        .map_err(|e| format!("cannot read {}: {e}", shim.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| format!("harness/rtl/shim/{}", e.file_name().to_string_lossy()))
        .collect();
    files.sort();
    Ok(files)
}

/// The key of the model `name` (its `--prefix` and symbol names) built by
/// `recipe` from the sources under `root` with the RTL parameters `params`.
/// `build` holds the builder's own inputs: its flags and the identity of
/// its tools (Verilator's and the compiler's versions, the compiler flags).
pub fn model_key(
    recipe: &str,
    root: &Path,
    name: &str,
    params: &[(&str, u64)],
    build: &[(&str, String)],
) -> Result<Key, String> {
    model_key_of(
        recipe,
        root,
        super::dut::DEFAULT_MANIFEST,
        name,
        params,
        build,
    )
}

/// [`model_key`] of the DUT whose manifest is `manifest_path` (relative to
/// `root`).
pub fn model_key_of(
    recipe: &str,
    root: &Path,
    manifest_path: &str,
    name: &str,
    params: &[(&str, u64)],
    build: &[(&str, String)],
) -> Result<Key, String> {
    let mut key = Key::new(recipe);
    key.add("name", name.as_bytes());
    for file in model_sources_of(root, manifest_path)? {
        key.add_file(&file, &root.join(&file))?;
    }
    let mut sorted = params.to_vec();
    sorted.sort();
    let text: String = sorted.iter().map(|(k, v)| format!("-G{k}={v} ")).collect();
    key.add("params", text.trim_end().as_bytes());
    for (label, value) in build {
        key.add(label, value.as_bytes());
    }
    Ok(key)
}

/// Whether [`get_or_build`] found the entry or made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Already in the cache (built by an earlier or a concurrent builder).
    Cached,
    /// Built by this call.
    Built,
}

/// The entry `<cache>/<name>-<key>`, built by `build` unless it exists.
///
/// `build` fills a fresh temporary directory beside the entry, which is then
/// renamed into place: an entry either exists whole or not at all, whatever
/// is interrupted, and two builders that race (a `cargo test` and a `cargo
/// build --release` at once, two test processes) never see a half-built one.
/// A lock file keeps the second of two such builders waiting for the first
/// instead of building the same entry again; where the file system cannot
/// lock, both build and the first rename wins.
pub fn get_or_build(
    cache: &Path,
    name: &str,
    key: &Key,
    build: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(PathBuf, Found), String> {
    let entry = format!("{name}-{}", key.hex());
    let dir = cache.join(&entry);
    if dir.is_dir() {
        return Ok((dir, Found::Cached));
    }
    let locks = cache.join(".locks");
    fs::create_dir_all(&locks).map_err(|e| {
        format!(
            "cannot create the build cache {}: {e} (set PCCX_RTL_CACHE to a writable directory)",
            locks.display()
        )
    })?;
    let lock_path = locks.join(format!("{entry}.lock"));
    let lock = fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    let locked = lock.lock().is_ok();
    if dir.is_dir() {
        return Ok((dir, Found::Cached));
    }
    let prefix = format!(".tmp-{entry}-");
    if locked {
        // Holding the lock, any temporary directory of this entry is left
        // over from a builder that was killed.
        for stale in fs::read_dir(cache).into_iter().flatten().flatten() {
            if stale.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = fs::remove_dir_all(stale.path());
            }
        }
    }
    static SERIAL: AtomicUsize = AtomicUsize::new(0);
    let tmp = cache.join(format!(
        "{prefix}{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let built = build(&tmp).and_then(|()| {
        fs::write(tmp.join("inputs.txt"), key.inputs())
            .map_err(|e| format!("cannot write {}: {e}", tmp.join("inputs.txt").display()))
    });
    if let Err(e) = built {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    match fs::rename(&tmp, &dir) {
        Ok(()) => Ok((dir, Found::Built)),
        // Another builder (one that could not lock) got there first: its
        // entry has the same key, so it is as good as ours.
        Err(_) if dir.is_dir() => {
            let _ = fs::remove_dir_all(&tmp);
            Ok((dir, Found::Cached))
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            Err(format!(
                "cannot move {} to {}: {e}",
                tmp.display(),
                dir.display()
            ))
        }
    }
}

/// Parses the `NAME += \` continuation lists of `V<prefix>_classes.mk`: the
/// files Verilator generated, by kind (`VM_CLASSES_FAST`, `_SLOW`,
/// `VM_SUPPORT_*`). They change with the Verilator version, the parameters
/// and the inlining, so they are read, never guessed.
pub fn read_class_lists(path: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some((name, rest)) = line.split_once("+=") {
            let name = name.trim().to_string();
            let list = lists.entry(name.clone()).or_default();
            let rest = rest.trim().trim_end_matches('\\').trim();
            if !rest.is_empty() {
                list.push(rest.to_string());
            }
            current = line.ends_with('\\').then_some(name);
        } else if let Some(name) = &current {
            let item = line.trim_end_matches('\\').trim();
            if !item.is_empty() {
                lists
                    .entry(name.clone())
                    .or_default()
                    .push(item.to_string());
            }
            if !line.ends_with('\\') {
                current = None;
            }
        }
    }
    Ok(lists)
}

/// The C++ files (in the Verilator output directory) of the lists `kinds`.
pub fn class_files(lists: &BTreeMap<String, Vec<String>>, kinds: &[&str]) -> Vec<String> {
    kinds
        .iter()
        .filter_map(|k| lists.get(*k))
        .flatten()
        .map(|n| format!("{n}.cpp"))
        .collect()
}

/// A file a bundle holds alone from this size up: at -O1 and -O2 a file
/// of Verilated C++ this large costs far more than the headers every file
/// parses (about 0.7 s each with clang here), so it stays a unit of its own
/// and compiles in parallel with the others.
pub const BUNDLE_BYTES: u64 = 256 * 1024;

/// The C++ files `files` of the Verilator output directory `mdir` as units
/// to compile: every file of `alone_from` bytes or more alone (build.rs and
/// the schemata: [`BUNDLE_BYTES`]), the smaller ones `#include`d together
/// into `<prefix>__bundle_<tag>_<n>.cpp` files of about that size, largest
/// first. With `u64::MAX` every file goes into one bundle: the one
/// translation unit of a build at -O0, where each file's cost is mostly
/// the headers it parses (Verilator's own makefile builds a model so
/// without `VM_PARALLEL_BUILDS`). A Verilated model's classes are made to
/// compile as one file (Verilator's own makefile does so when the build is
/// not parallel), so bundling changes nothing but how often the headers
/// are parsed (docs/build.md, "The regression gate").
pub fn bundle(
    mdir: &Path,
    prefix: &str,
    tag: &str,
    files: &[String],
    alone_from: u64,
) -> Result<Vec<PathBuf>, String> {
    let mut sized: Vec<(u64, &String)> = files
        .iter()
        .map(|f| {
            let path = mdir.join(f);
            fs::metadata(&path)
                .map(|m| (m.len(), f))
                .map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect::<Result<_, _>>()?;
    sized.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut units = Vec::new();
    let mut group: Vec<&String> = Vec::new();
    let mut group_bytes = 0;
    let flush = |group: &mut Vec<&String>, units: &mut Vec<PathBuf>| -> Result<(), String> {
        match group.len() {
            0 => {}
            1 => units.push(mdir.join(group[0])),
            _ => {
                let path = mdir.join(format!("{prefix}__bundle_{tag}_{}.cpp", units.len()));
                let text: String = group
                    .iter()
                    .map(|f| format!("#include \"{f}\"\n"))
                    .collect();
                fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
                units.push(path);
            }
        }
        group.clear();
        Ok(())
    };
    for (bytes, file) in sized {
        if bytes >= alone_from {
            units.push(mdir.join(file));
            continue;
        }
        group.push(file);
        group_bytes += bytes;
        if group_bytes >= alone_from {
            flush(&mut group, &mut units)?;
            group_bytes = 0;
        }
    }
    flush(&mut group, &mut units)?;
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository of three sources in a fresh directory under the system
    /// temporary directory.
    fn fake_root(tag: &str) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("pccx-recipe-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("hw/rtl")).unwrap();
        fs::create_dir_all(root.join("harness/rtl/shim")).unwrap();
        fs::write(root.join("hw/verilator.f"), "-Wall\n-F rtl/manifest.txt\n").unwrap();
        fs::write(root.join("hw/rtl/manifest.txt"), "# order\na.sv\nb.sv\n").unwrap();
        fs::write(root.join("hw/rtl/a.sv"), "module a; endmodule\n").unwrap();
        fs::write(root.join("hw/rtl/b.sv"), "module b; endmodule\n").unwrap();
        fs::write(root.join("harness/rtl/shim/s.cpp"), "int s;\n").unwrap();
        let dut = Path::new(env!("CARGO_MANIFEST_DIR")).join(super::super::dut::DEFAULT_MANIFEST);
        fs::copy(dut, root.join(super::super::dut::DEFAULT_MANIFEST)).unwrap();
        root
    }

    fn key(root: &Path, params: &[(&str, u64)]) -> String {
        model_key("test-1", root, "tiny", params, &[("cxx", "g++ -O1".into())])
            .unwrap()
            .hex()
    }

    const PARAMS: &[(&str, u64)] = &[("L2_WORDS", 4096), ("FIFO_DEPTH", 2)];

    #[test]
    fn fnv1a64_is_the_published_function() {
        // Test vectors of the FNV reference (draft-eastlake-fnv).
        assert_eq!(fnv1a64(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_key_is_stable_and_follows_every_input() {
        let root = fake_root("key");
        let base = key(&root, PARAMS);
        assert_eq!(base.len(), 16);
        assert_eq!(key(&root, PARAMS), base, "same inputs, same key");
        // Parameter order is not an input; parameter values are.
        assert_eq!(key(&root, &[PARAMS[1], PARAMS[0]]), base);
        assert_ne!(key(&root, &[("L2_WORDS", 4096), ("FIFO_DEPTH", 4)]), base);
        assert_ne!(
            key(
                &root,
                &[("L2_WORDS", 4096), ("FIFO_DEPTH", 2), ("TIMING_SKEW", 4)]
            ),
            base
        );

        // The content of an RTL source, not its time stamp.
        let a = root.join("hw/rtl/a.sv");
        fs::write(&a, "module a; wire w; endmodule\n").unwrap();
        let edited = key(&root, PARAMS);
        assert_ne!(edited, base);
        fs::write(&a, "module a; endmodule\n").unwrap();
        assert_eq!(key(&root, PARAMS), base, "restored content, same key");

        // The manifests, the options file and the shim are inputs too.
        for file in [
            "hw/dut.json",
            "hw/rtl/manifest.txt",
            "hw/verilator.f",
            "harness/rtl/shim/s.cpp",
        ] {
            let path = root.join(file);
            let old = fs::read(&path).unwrap();
            fs::write(&path, [old.as_slice(), b"\n"].concat()).unwrap();
            assert_ne!(key(&root, PARAMS), base, "{file} changed");
            fs::write(&path, old).unwrap();
        }
        // A new shim file, too.
        fs::write(root.join("harness/rtl/shim/t.h"), "").unwrap();
        assert_ne!(key(&root, PARAMS), base, "a file added to the shim");
        fs::remove_file(root.join("harness/rtl/shim/t.h")).unwrap();

        // The builder's own inputs and the recipe.
        let other_cxx = model_key(
            "test-1",
            &root,
            "tiny",
            PARAMS,
            &[("cxx", "g++ -O2".into())],
        );
        assert_ne!(other_cxx.unwrap().hex(), base);
        let other_recipe = model_key(
            "test-2",
            &root,
            "tiny",
            PARAMS,
            &[("cxx", "g++ -O1".into())],
        );
        assert_ne!(other_recipe.unwrap().hex(), base);
        let other_name = model_key(
            "test-1",
            &root,
            "small",
            PARAMS,
            &[("cxx", "g++ -O1".into())],
        );
        assert_ne!(other_name.unwrap().hex(), base);
        assert_eq!(key(&root, PARAMS), base);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_missing_source_is_named() {
        let root = fake_root("missing");
        fs::remove_file(root.join("hw/rtl/b.sv")).unwrap();
        let err = model_key("test-1", &root, "tiny", PARAMS, &[]).unwrap_err();
        assert!(err.contains("lists b.sv, which does not exist"), "{err}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_entry_is_built_once_and_a_failed_build_leaves_nothing() {
        let root = fake_root("entry");
        let cache = root.join("cache");
        let key = Key::new("test-1");
        let mut runs = 0;
        let (dir, found) = get_or_build(&cache, "m", &key, |tmp| {
            runs += 1;
            fs::write(tmp.join("lib.a"), "x").map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(found, Found::Built);
        assert_eq!(dir, cache.join(format!("m-{}", key.hex())));
        assert!(dir.join("lib.a").is_file() && dir.join("inputs.txt").is_file());
        let (again, found) = get_or_build(&cache, "m", &key, |_| {
            runs += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!((again, found, runs), (dir, Found::Cached, 1));

        let other = Key::new("test-2");
        let err = get_or_build(&cache, "m", &other, |tmp| {
            fs::write(tmp.join("half"), "").unwrap();
            Err("the compiler said no".to_string())
        })
        .unwrap_err();
        assert_eq!(err, "the compiler said no");
        let left: Vec<_> = fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".locks")
            .collect();
        assert_eq!(
            left,
            vec![format!("m-{}", key.hex())],
            "no half-built entry"
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn class_lists_are_read_from_the_make_fragment() {
        let root = fake_root("classes");
        let mk = root.join("V_classes.mk");
        fs::write(
            &mk,
            "# comment\nVM_CLASSES_FAST += \\\n\tVa \\\n\tVa__1 \\\n\nVM_SUPPORT_FAST += \\\n\tVa__Dpi \\\n\nVM_GLOBAL_SLOW += \\\n\n",
        )
        .unwrap();
        let lists = read_class_lists(&mk).unwrap();
        assert_eq!(
            class_files(
                &lists,
                &["VM_CLASSES_FAST", "VM_SUPPORT_FAST", "VM_CLASSES_SLOW"]
            ),
            vec!["Va.cpp", "Va__1.cpp", "Va__Dpi.cpp"]
        );
        assert_eq!(lists["VM_GLOBAL_SLOW"], Vec::<String>::new());
        fs::remove_dir_all(&root).unwrap();
    }
}
