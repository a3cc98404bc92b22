//! The one rerun command (`regress::identity::Rerun::command`), run as
//! printed: a plain shard and a steered shard cut short are completed by
//! the command `merge` prints (the steered one run again whole, as
//! docs/scale-out.md says), a mutation shard cut short is resumed the
//! same way, and a failing seed's reproduce command, with
//! stalled I/O and an injected fault, fails again the same way.

mod support;

use std::path::Path;
use std::process::Output;
use support::{cosim, s, scratch, text};

const CAMPAIGN: [&str; 8] = [
    "--seed", "1", "--count", "12", "--config", "tiny", "--instrs", "20",
];

/// Runs a command line as printed (`pccx-cosim ...`, shell-quoted) with
/// this build's binary first on PATH.
fn run_printed(command: &str) -> Output {
    let binary = Path::new(env!("CARGO_BIN_EXE_pccx-cosim"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    assert!(command.starts_with("pccx-cosim "), "{command}");
    std::process::Command::new("sh")
        .args(["-c", command])
        .env("PATH", path)
        .output()
        .expect("sh runs")
}

/// The command printed on the line after `heading`.
fn printed_after(out: &str, heading: &str) -> String {
    let mut lines = out.lines();
    lines
        .find(|l| l.contains(heading))
        .unwrap_or_else(|| panic!("no `{heading}` in:\n{out}"));
    lines.next().expect("a command line").trim().to_string()
}

/// Runs `command` as printed, which must succeed, then `merge` again,
/// which must now find the run complete; the merge's output.
fn completed_by(command: &str, merge: impl Fn() -> Output) -> Output {
    let o = run_printed(command);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{command}\n{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let o = merge();
    assert_eq!(o.status.code(), Some(0), "{command}\n{}", text(&o.stdout));
    o
}

fn shard_cut_short_is_completed_by_the_printed_command(name: &str, extra: &[&str]) {
    let dir = scratch(name);
    let shard_dir = |i: usize| dir.join(format!("shard-{i}"));
    for i in 0..2 {
        let shard = format!("{i}/2");
        let o = cosim(
            &[
                &CAMPAIGN[..],
                extra,
                &["--shard", &shard, "--out", s(&shard_dir(i))],
            ]
            .concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    // Shard 1 keeps its first two records: as if it had been killed.
    let results = shard_dir(1).join("results.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .take(2)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&results, kept.concat()).unwrap();
    let merge = || cosim(&["merge", s(&shard_dir(0)), s(&shard_dir(1))]);
    let o = merge();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let command = printed_after(&text(&o.stdout), "to run exactly the missing seeds");
    assert!(command.contains("--shard 1/2"), "{command}");
    let o = completed_by(&command, merge);
    assert!(
        text(&o.stdout).contains("summary: 12 seeds"),
        "{}",
        text(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_plain_shard_cut_short_resumes_from_the_printed_command() {
    shard_cut_short_is_completed_by_the_printed_command("plain", &[]);
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_steered_shard_cut_short_runs_again_whole_from_the_printed_command() {
    shard_cut_short_is_completed_by_the_printed_command("steered", &["--steer"]);
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_failing_seed_with_stalls_and_a_fault_fails_again_from_its_printed_command() {
    let dir = scratch("seed");
    let o = cosim(
        &[
            &CAMPAIGN[..],
            &[
                "--io",
                "stall",
                "--inject-fault",
                "l2-data",
                "--out",
                s(&dir),
                "--no-shrink",
            ],
        ]
        .concat(),
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    let first = out
        .lines()
        .find(|l| l.contains("MISMATCH"))
        .unwrap_or_else(|| panic!("no mismatch in:\n{out}"))
        .to_string();
    // `    reproduce: COMMAND   (program: ...)`, the first seed's.
    let command = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("reproduce: "))
        .and_then(|l| l.split("   (").next())
        .unwrap_or_else(|| panic!("no reproduce command in:\n{out}"))
        .to_string();
    assert!(
        command.contains("--io stall") && command.contains("--inject-fault l2-data"),
        "{command}"
    );
    let o = run_printed(&command);
    assert_eq!(o.status.code(), Some(1), "{command}\n{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains(first.trim()),
        "{command}\nexpected {first}\n{}",
        text(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_mutation_shard_cut_short_resumes_from_the_printed_command() {
    let dir = scratch("mutate");
    let list = dir.join("ids.txt");
    std::fs::write(&list, support::curated_ids(2).join("\n") + "\n").unwrap();
    let shard_dir = |i: usize| dir.join(format!("shard-{i}"));
    for i in 0..2 {
        let shard = format!("{i}/2");
        let work = shard_dir(i).join("build");
        let o = cosim(&[
            "mutate",
            "--ids",
            s(&list),
            "--jobs",
            "1",
            "--shard",
            &shard,
            "--out",
            s(&shard_dir(i)),
            "--work",
            s(&work),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    // Shard 1 loses its one record: as if killed before writing it.
    std::fs::write(shard_dir(1).join("results.jsonl"), "").unwrap();
    let merge = || cosim(&["merge", s(&shard_dir(0)), s(&shard_dir(1))]);
    let o = merge();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    let command = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("pccx-cosim mutate"))
        .unwrap_or_else(|| panic!("no mutate command in:\n{out}"))
        .to_string();
    assert!(
        command.contains("--shard 1/2") && command.contains("--resume"),
        "{command}"
    );
    completed_by(&command, merge);
    let _ = std::fs::remove_dir_all(&dir);
}
