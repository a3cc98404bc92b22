//! Shared by the tests that run the `pccx-cosim` binary (tests/gate/cli.rs,
//! tests/scale_out.rs, tests/slurm.rs): running it, scratch directories,
//! reading its reports. Needs no RTL, unlike tests/common.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
}

/// Runs the binary to its end.
pub fn cosim(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A directory of this test's own, empty (tests run in parallel, and test
/// binaries too).
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pccx-{}-{}-{test}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as the binary's argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn read_json(path: &Path) -> Value {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&t).unwrap()
}

/// A report with its wall times and rates removed: what runs of the same
/// seeds (other workers, shards, a resumed run) must agree on.
pub fn without_wall(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.contains("wall") && !k.contains("per_second"))
                .map(|(k, x)| (k.clone(), without_wall(x)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_wall).collect()),
        other => other.clone(),
    }
}

/// The first `n` mutant ids of the curated set (hw/mutants/curated.txt),
/// each one the curated run kills.
pub fn curated_ids(n: usize) -> Vec<String> {
    std::fs::read_to_string("hw/mutants/curated.txt")
        .unwrap()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .take(n)
        .collect()
}
pub mod browser;

/// The `sbatch --array=...` line `slurm wait` printed in `out` (the rerun
/// of exactly the shards with something missing).
pub fn printed_sbatch(out: &str) -> String {
    out.lines()
        .map(str::trim)
        .find(|l| l.starts_with("sbatch --array="))
        .unwrap_or_else(|| panic!("no sbatch command in:\n{out}"))
        .to_string()
}

/// Runs a printed `sbatch` line as a person would (through `sh`) and waits
/// until squeue no longer lists its job (300 s at most).
pub fn sbatch_to_the_end(printed: &str) {
    let o = Command::new("sh").args(["-c", printed]).output().unwrap();
    assert!(o.status.success(), "{printed}: {}", text(&o.stderr));
    let job = text(&o.stdout)
        .split_whitespace()
        .last()
        .expect("sbatch names its job")
        .to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-j", &job])
            .output()
            .unwrap();
        if text(&q.stdout).trim().is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "job {job} still queued after 300 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}
