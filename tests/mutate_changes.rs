//! `pccx-cosim mutate --changed-since REF` (docs/mutation.md, "Mutants of
//! a change"): the sites on the lines of hw/rtl that differ from a git
//! revision, so that a reviewer (and CI) sees which new lines no test would
//! notice. Run in a scratch git repository holding a copy of hw/.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A git repository holding a copy of hw/ at one commit.
fn repository(name: &str) -> PathBuf {
    let dir = scratch(name);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // hw/ is the repository's; the shim (untracked here) is what a mutant
    // built alone is compiled with.
    std::fs::create_dir_all(dir.join("harness/rtl")).unwrap();
    for (from, to) in [("hw", "."), ("harness/rtl/shim", "harness/rtl")] {
        let copy = Command::new("cp")
            .arg("-r")
            .arg(root.join(from))
            .arg(dir.join(to))
            .status()
            .unwrap();
        assert!(copy.success());
    }
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "hw"]);
    git(&dir, &["commit", "-q", "-m", "hw"]);
    dir
}

fn mutate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .current_dir(dir)
        .arg("mutate")
        .args(args)
        .output()
        .expect("pccx-cosim runs")
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join("hw/rtl").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The ids `--list` prints.
fn listed(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("pccx_") && l.contains("  "))
        .map(|l| l.split("  ").next().unwrap().to_string())
        .collect()
}

#[test]
fn only_the_sites_of_changed_lines_are_chosen() {
    let dir = repository("mutate-changed-list");
    // No change: no mutants.
    let none = mutate(&dir, &["--changed-since", "HEAD", "--list"]);
    assert!(none.status.success(), "{none:?}");
    assert!(listed(&none).is_empty(), "{none:?}");
    // One line edited and committed, one edited in the working tree: the
    // sites of those two lines, and only those.
    edit(
        &dir,
        "pccx_memset_engine.sv",
        "assign rsp.ret_valid = (phase == 2'd1);",
        "assign rsp.ret_valid = (phase == 2'd1) && 1'b1;",
    );
    git(&dir, &["commit", "-q", "-am", "memset"]);
    edit(
        &dir,
        "pccx_fifo.sv",
        "assign empty = (count == '0);",
        "assign empty = (count == '0) && 1'b1;",
    );
    let out = mutate(&dir, &["--changed-since", "HEAD~1", "--list"]);
    assert!(out.status.success(), "{out:?}");
    let ids = listed(&out);
    let fifo = std::fs::read_to_string(dir.join("hw/rtl/pccx_fifo.sv")).unwrap();
    let line = fifo
        .lines()
        .position(|l| l.contains("(count == '0) && 1'b1"))
        .unwrap()
        + 1;
    assert!(
        ids.iter()
            .any(|id| id.starts_with(&format!("pccx_fifo.sv:{line}:"))),
        "{ids:?}"
    );
    assert!(
        ids.iter()
            .any(|id| id.starts_with("pccx_memset_engine.sv:")),
        "{ids:?}"
    );
    assert!(
        ids.iter()
            .all(|id| id.starts_with(&format!("pccx_fifo.sv:{line}:"))
                || id.starts_with("pccx_memset_engine.sv:")),
        "{ids:?}"
    );
    // Since the first commit only the memset change is committed; the
    // fifo edit is in the working tree and counts too.
    let head = mutate(&dir, &["--changed-since", "HEAD", "--list"]);
    assert!(listed(&head)
        .iter()
        .all(|id| id.starts_with(&format!("pccx_fifo.sv:{line}:"))));
}

#[test]
fn a_ref_that_is_no_commit_is_named_in_the_error() {
    let dir = repository("mutate-changed-bad-ref");
    let out = mutate(&dir, &["--changed-since", "no-such-branch", "--list"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`no-such-branch` is not a commit"),
        "{stderr}"
    );
}

#[test]
fn a_change_whose_mutant_survives_fails_require_all_killed() {
    let dir = repository("mutate-changed-gate");
    // `+ 0` on a MEMSET's sequence number: its `+` -> `-` is equivalent
    // (x - 0 is x) and survives; `0` -> `1` is killed.
    edit(
        &dir,
        "pccx_memset_engine.sv",
        "assign rsp.ret_seq   = ret_seq;",
        "assign rsp.ret_seq   = ret_seq + 0;",
    );
    let out = mutate(
        &dir,
        &[
            "--changed-since",
            "HEAD",
            "--require-all-killed",
            "--seeds",
            "2",
            "--equivalent",
            "none.txt",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{:?}", out.stderr);
    assert!(stdout.contains("survivors"), "{stdout}");
    assert!(
        stdout.contains("pccx-cosim mutate --id pccx_memset_engine.sv:"),
        "a reproduce command: {stdout}"
    );
}
