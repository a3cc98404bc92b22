//! Campaigns as Slurm job arrays on a real cluster: `slurm submit --wait`
//! through sbatch and squeue, a task killed mid-run, a task that fails and
//! is completed by the command `slurm wait` prints (docs/scale-out.md).
//! Second tier (docs/testing.md): `bash scripts/test-tools.sh` starts a
//! local cluster (`scripts/slurm-local.sh start`) and runs these; each test
//! fails at once, saying so, when no controller answers.

mod support;

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{browser, cosim, curated_ids, read_json, s, scratch, text, without_wall};

const WAIT: [&str; 4] = ["--wait", "--poll", "1", "--wait-timeout"];

/// The node tests/slurm_nodes.rs never loses. That file runs beside this one
/// (scripts/test-tools.sh) and SIGKILLs another node with every task on it.
/// A task lost with it is requeued and resumes from its journal, which is
/// right on a cluster; a test whose outcome needs each shard to run in one
/// process keeps its job on this node (the others run anywhere: pinning
/// them all here queues them behind slurm_nodes's own task).
const KEPT: &str = "pccx-node1";

/// The sbatch option that keeps a job on [`KEPT`], when the cluster has it.
fn on_kept_node() -> Vec<String> {
    if cluster_has(KEPT) {
        vec![format!("--sbatch-arg=--nodelist={KEPT}")]
    } else {
        Vec::new()
    }
}

fn cluster_has(node: &str) -> bool {
    Command::new("sinfo")
        .args(["-h", "-N", "-o", "%N"])
        .output()
        .is_ok_and(|o| text(&o.stdout).lines().any(|l| l.trim() == node))
}

/// Fails at once, saying what to do, when no controller answers (rather
/// than after every wait's deadline).
fn require_cluster() {
    let up = Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        up,
        "no Slurm controller answers `sinfo`: start one with `bash scripts/slurm-local.sh start`"
    );
}

#[test]
fn dry_run_writes_the_array_script_and_submits_nothing() {
    let dir = scratch("dry");
    let o = cosim(&[
        "slurm",
        "submit",
        "--seed",
        "1",
        "--count",
        "100",
        "--shards",
        "4",
        "--out",
        s(&dir),
        "--config",
        "tiny",
        "--time",
        "00:10:00",
        "--sbatch-arg=--mem=1G",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let script = std::fs::read_to_string(dir.join("campaign.sbatch")).unwrap();
    assert_eq!(text(&o.stdout).lines().next(), Some("#!/bin/bash"));
    for line in [
        "#SBATCH --array=0-3",
        "#SBATCH --requeue",
        "#SBATCH --time=00:10:00",
        "#SBATCH --mem=1G",
    ] {
        assert!(script.contains(line), "{line} in\n{script}");
    }
    assert!(
        script.contains("--seed 1 --count 100 --instrs 40 --config tiny --jobs 1 --shard"),
        "{script}"
    );
    assert!(!dir.join("slurm-job.json").exists());
    for i in 0..4 {
        assert!(dir.join(format!("shard-{i}")).is_dir());
    }
    let o = cosim(&[
        "slurm",
        "submit",
        "--seed",
        "1",
        "--count",
        "3",
        "--shards",
        "4",
        "--out",
        s(&dir),
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--shards 4: between 1 and --count (3)"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_four_shard_array_merges_into_the_unsharded_report() {
    require_cluster();
    let dir = scratch("four");
    let whole = dir.join("whole.json");
    let o = cosim(&[
        "--seed",
        "7",
        "--count",
        "40",
        "--config",
        "tiny",
        "--jobs",
        "1",
        "--json",
        s(&whole),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let run = dir.join("run");
    let o = cosim(
        &[
            &[
                "slurm",
                "submit",
                "--seed",
                "7",
                "--count",
                "40",
                "--shards",
                "4",
                "--config",
                "tiny",
                "--out",
                s(&run),
            ][..],
            &WAIT,
            &["300"],
        ]
        .concat(),
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(out.contains("4 tasks, 0 failed"), "{out}");
    assert!(read_json(&run.join("slurm-job.json"))["job_id"]
        .as_str()
        .is_some());
    assert_eq!(
        without_wall(&read_json(&run.join("merged.json"))),
        without_wall(&read_json(&whole))
    );
    // Each task wrote its shard, and Slurm's log of it.
    for i in 0..4 {
        let shard = run.join(format!("shard-{i}"));
        assert_eq!(
            read_json(&shard.join("campaign.json"))["shard"],
            format!("{i}/4")
        );
        let logs = std::fs::read_dir(&shard).unwrap().filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("slurm-")
        });
        assert_eq!(logs.count(), 1, "{}", shard.display());
    }
    // The morning-after page of the submission: the job, each shard with
    // the state its task ended in (as `slurm wait` recorded it) and its
    // log, and nothing missing.
    let job_id = read_json(&run.join("slurm-job.json"))["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let states = read_json(&run.join("slurm-states.json"));
    // `--wait` wrote the page beside merged.json; `report` makes it again.
    assert!(
        out.contains(&format!("report: {}", run.join("report.html").display())),
        "{out}"
    );
    let page = dir.join("report.html");
    let o = cosim(&["report", s(&run), "--offline", "--out", s(&page)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let page_text = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .split("<table id=\"provenance\"")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(page_text(&run.join("report.html")), page_text(&page));
    let dom = browser::dom(&page);
    assert_eq!(browser::text_of(&dom, "#job-id"), job_id);
    assert_eq!(browser::text_of(&dom, "#verdict"), "PASS");
    assert_eq!(browser::select(&dom, "#complete").len(), 1);
    let rows = browser::select(&dom, "#shard-table tbody tr");
    assert_eq!(rows.len(), 4);
    let td = scraper::Selector::parse("td").unwrap();
    let a = scraper::Selector::parse("a").unwrap();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.select(&td).map(|c| c.text().collect()).collect();
        assert_eq!(cells[1], format!("{i}/4"));
        // A task that ended between two of wait's looks has no state.
        let expected = states["tasks"][i.to_string()]["state"]
            .as_str()
            .unwrap_or("-");
        assert!(cells[5].starts_with(expected), "task {i}: {}", cells[5]);
        let log = row.select(&a).next().expect("a link to the task's log");
        let path = browser::resolve(&dir, log.value().attr("href").unwrap());
        assert!(
            path.ends_with(format!("shard-{i}/slurm-{job_id}_{i}.out")),
            "{}",
            path.display()
        );
        assert!(path.is_file());
    }
    assert!(
        states["tasks"]
            .as_object()
            .unwrap()
            .values()
            .any(|t| t["state"] == "COMPLETED"),
        "wait saw no task complete: {states}"
    );
}

#[test]
fn a_task_killed_mid_run_is_resumed_and_every_seed_is_recorded_once() {
    require_cluster();
    let dir = scratch("kill");
    let run = dir.join("run");
    let count = 1500u64;
    let submit = support::bin()
        .args([
            "slurm",
            "submit",
            "--seed",
            "1",
            "--count",
            &count.to_string(),
            "--shards",
            "2",
            "--config",
            "tiny",
            "--out",
            s(&run),
            "--wait",
            "--poll",
            "1",
            "--wait-timeout",
            "600",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once shard 0 has recorded some seeds, SIGKILL its campaign process
    // (not the task's shell, which then resumes it).
    let results = run.join("shard-0").join("results.jsonl");
    let deadline = Instant::now() + Duration::from_secs(300);
    let lines = || std::fs::read_to_string(&results).map_or(0, |t| t.lines().count());
    while lines() < 20 {
        assert!(
            Instant::now() < deadline,
            "shard 0 recorded nothing in 300 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The pattern names this run's directory: the other tests of this file
    // run at the same time with shards of their own numbered 0/2.
    let pattern = format!("--shard 0/2 --out {}/shard-0 ", s(&run));
    let killed = Command::new("pkill")
        .args(["-KILL", "-f", "--", &pattern])
        .status()
        .unwrap();
    assert!(killed.success(), "no campaign process of shard 0 to kill");
    let before = lines();
    assert!(
        before < (count / 2) as usize,
        "shard 0 finished before the kill ({before} records)"
    );
    let o = submit.wait_with_output().unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let merged = read_json(&run.join("merged.json"));
    let seeds: Vec<u64> = merged["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds.len() as u64, count, "{out}");
    assert_eq!(seeds.iter().collect::<BTreeSet<_>>().len() as u64, count);
    assert_eq!(merged["summary"]["matched"], count);
    // The task resumed its shard: two runs in its header, a note in its log.
    let header = read_json(&run.join("shard-0").join("campaign.json"));
    assert_eq!(header["runs"].as_array().unwrap().len(), 2, "{header}");
    let log = std::fs::read_dir(run.join("shard-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("slurm-")
        })
        .unwrap();
    let log = std::fs::read_to_string(log).unwrap();
    assert!(log.contains("ended by signal 9; resuming"), "{log}");
}

#[test]
fn a_shard_that_exits_with_an_error_shows_as_failed() {
    require_cluster();
    let dir = scratch("failed");
    let run = dir.join("run");
    // The `panic` fault stops a campaign at its second seed with an
    // infrastructure error (exit 2): each shard here has two seeds. A shard
    // resumed in a fresh process would pass that seed, so no node is lost
    // under it.
    let pin = on_kept_node();
    let pin: Vec<&str> = pin.iter().map(String::as_str).collect();
    let o = cosim(
        &[
            &[
                "slurm",
                "submit",
                "--seed",
                "1",
                "--count",
                "4",
                "--shards",
                "2",
                "--config",
                "tiny",
                "--out",
                s(&run),
                "--campaign-arg=--inject-fault",
                "--campaign-arg=panic",
            ][..],
            &WAIT,
            &["300"],
            &pin[..],
        ]
        .concat(),
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}{}", text(&o.stderr));
    assert!(out.contains("2 tasks, 2 failed"), "{out}");
    assert!(out.contains("task 0: FAILED (NonZeroExitCode)"), "{out}");
    assert!(out.contains("stopped at seed"), "{out}");
}

#[test]
fn a_mutation_run_as_an_array_merges_its_shards() {
    require_cluster();
    let dir = scratch("mutate");
    let ids = curated_ids(2);
    let list = dir.join("ids.txt");
    std::fs::write(&list, ids.join("\n") + "\n").unwrap();
    let run = dir.join("run");
    let ids_arg = format!("--mutate-arg={}", s(&list));
    let o = cosim(
        &[
            &[
                "slurm",
                "submit-mutate",
                "--mutate-arg=--ids",
                &ids_arg,
                // Each task runs its mutants from the mutant schema (built
                // by the first task to ask, found in the cache by the
                // other).
                "--mutate-arg=--builds",
                "--mutate-arg=schema",
                "--shards",
                "2",
                "--out",
                s(&run),
            ][..],
            &WAIT,
            &["600"],
        ]
        .concat(),
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(out.contains("2 tasks, 0 failed"), "{out}");
    let merged = read_json(&run.join("merged.json"));
    let got: BTreeSet<&str> = merged["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, ids.iter().map(String::as_str).collect());
    assert_eq!(merged["summary"]["killed"], 2);
    for shard in ["shard-0", "shard-1"] {
        // The task's output, `slurm-<job>_<task>.out`.
        let log: String = std::fs::read_dir(run.join(shard))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("slurm-"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        assert!(log.contains("mutant schema:"), "{shard}: {log}");
    }
}

#[test]
fn a_cancelled_job_shows_its_tasks_cancelled_and_what_is_missing() {
    require_cluster();
    let dir = scratch("cancel");
    let run = dir.join("run");
    let o = cosim(&[
        "slurm",
        "submit",
        "--seed",
        "1",
        "--count",
        "1000000",
        "--shards",
        "2",
        "--config",
        "tiny",
        "--out",
        s(&run),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Once a task has recorded a seed, scancel the job.
    let results = run.join("shard-0").join("results.jsonl");
    let deadline = Instant::now() + Duration::from_secs(300);
    while std::fs::read_to_string(&results).map_or(0, |t| t.lines().count()) < 5 {
        assert!(
            Instant::now() < deadline,
            "shard 0 recorded nothing in 300 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = cosim(&["slurm", "cancel", s(&run)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = cosim(&[&["slurm", "wait", s(&run)][..], &WAIT[1..], &["300"]].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}{}", text(&o.stderr));
    assert!(out.contains("CANCELLED"), "{out}");
    assert!(out.contains("incomplete:"), "{out}");
    assert!(out.contains("sbatch --array="), "{out}");
    // The page wait wrote says the same: both tasks cancelled, seeds
    // missing, and the sbatch command wait printed among its commands.
    let dom = browser::dom(&run.join("report.html"));
    assert_eq!(browser::text_of(&dom, "#verdict"), "INCOMPLETE");
    let td = scraper::Selector::parse("td").unwrap();
    for row in browser::select(&dom, "#shard-table tbody tr") {
        let cells: Vec<String> = row.select(&td).map(|c| c.text().collect()).collect();
        assert!(cells[5].starts_with("CANCELLED"), "{cells:?}");
    }
    let printed = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("sbatch --array="))
        .unwrap();
    let commands: Vec<String> = browser::select(&dom, "#rerun code")
        .iter()
        .map(|c| c.text().collect())
        .collect();
    assert!(
        commands.iter().any(|c| c == printed),
        "{printed}\n{commands:?}"
    );
}

#[test]
fn a_failed_task_is_completed_by_the_sbatch_command_wait_printed() {
    require_cluster();
    let dir = scratch("rerun");
    let run = dir.join("run");
    // Shard 1 cannot read its records (a directory stands where the file
    // goes): its task fails, shard 0's completes.
    let blocker = run.join("shard-1").join("results.jsonl");
    std::fs::create_dir_all(&blocker).unwrap();
    let o = cosim(
        &[
            &[
                "slurm",
                "submit",
                "--seed",
                "1",
                "--count",
                "40",
                "--shards",
                "2",
                "--config",
                "tiny",
                "--out",
                s(&run),
            ][..],
            &WAIT,
            &["300"],
        ]
        .concat(),
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}{}", text(&o.stderr));
    assert!(out.contains("2 tasks, 1 failed"), "{out}");
    let printed = support::printed_sbatch(&out);
    assert!(printed.starts_with("sbatch --array=1 "), "{printed}");
    // The cause removed, the printed command runs exactly the failed task.
    std::fs::remove_dir(&blocker).unwrap();
    support::sbatch_to_the_end(&printed);
    // `merge` takes the submission's directory (its shards).
    let o = cosim(&["merge", s(&run)]);
    let out = text(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{printed}\n{out}{}",
        text(&o.stderr)
    );
    assert!(out.contains("summary: 40 seeds, 40 matched"), "{out}");
}
