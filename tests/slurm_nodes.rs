//! Scale-out on a cluster of several hosts (docs/scale-out.md, "Many
//! nodes"): array tasks spread over nodes, a node lost under its task (its
//! slurmd and the task killed: the node goes down, Slurm requeues the task
//! elsewhere, the lock passes to the new instance), and a task past its
//! time limit completed by the command `slurm wait` prints. Second tier
//! (docs/testing.md): `bash scripts/test-tools.sh` starts the local cluster
//! with three nodes (`scripts/slurm-local.sh start --nodes 3`), each a host
//! of its own; each test fails at once, saying so, on a cluster of fewer.

mod support;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{bin, cosim, read_json, s, scratch, text};

/// The node the time-limit test runs on, which the node-loss test never
/// takes away: the two run at once.
const KEPT: &str = "pccx-node1";

/// The cluster's nodes, at least three of them usable, or a failure that
/// says how to start such a cluster.
fn nodes() -> Vec<String> {
    let o = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%N %t"])
        .output();
    let listed = o.map_or(String::new(), |o| text(&o.stdout));
    let up: Vec<String> = listed
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, t)| matches!(t.trim(), "idle" | "mix" | "alloc"))
        .map(|(n, _)| n.to_string())
        .collect();
    assert!(
        up.len() >= 3,
        "these tests need 3 usable nodes; sinfo lists:\n{listed}\
         start them with `bash scripts/slurm-local.sh start --nodes 3`"
    );
    up
}

/// The runs recorded in a shard's header.
fn runs(shard: &Path) -> Vec<Value> {
    std::fs::read_to_string(shard.join("campaign.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|h| h["runs"].as_array().cloned())
        .unwrap_or_default()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Waits for the node to be usable again, restarting its slurmd (start
/// brings back what is missing of a running cluster).
fn restore(node: &str) {
    let o = Command::new("bash")
        .args(["scripts/slurm-local.sh", "start", "--nodes", "3"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "restarting {node}: {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

#[test]
fn a_node_lost_under_its_task_is_requeued_and_every_seed_is_recorded_once() {
    let all = nodes();
    let dir = scratch("node-loss");
    let run = dir.join("run");
    // About 40 s of work in all: the shards run for seconds each, time
    // enough to find one running and lose its node.
    let (count, shards, instrs) = (7200u64, 6u64, "100");
    let campaign = ["--config", "tiny", "--instrs", instrs];
    let submit = bin()
        .args([
            "slurm",
            "submit",
            "--seed",
            "1",
            "--count",
            &count.to_string(),
        ])
        .args(["--shards", &shards.to_string(), "--out", s(&run)])
        .args(campaign)
        .args(["--wait", "--poll", "1", "--wait-timeout", "900"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The victim: a shard running on another node than the time-limit
    // test's, with some records and far from done.
    let deadline = Instant::now() + Duration::from_secs(300);
    let (victim, host) = loop {
        let found = (0..shards).find_map(|i| {
            let shard = run.join(format!("shard-{i}"));
            let last = runs(&shard).last().cloned()?;
            let host = last["host"].as_str()?.to_string();
            let going = last["ended"].is_null();
            let n = lines(&shard.join("results.jsonl"));
            (going && host != KEPT && n >= 5 && n < (count / shards / 2) as usize)
                .then_some((i, host))
        });
        if let Some(f) = found {
            break f;
        }
        assert!(
            Instant::now() < deadline,
            "no shard was seen running on another node than {KEPT} in 300 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(all.contains(&host), "{host} is not a node of {all:?}");
    let o = Command::new("bash")
        .args(["scripts/slurm-local.sh", "kill-node", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "kill-node {host}: {}", text(&o.stderr));
    let o = submit.wait_with_output().unwrap();
    let out = text(&o.stdout);
    restore(&host);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    // `slurm wait` saw the task requeued (the node's failure, or the task
    // pending again after it ran).
    assert!(
        out.contains(&format!("task {victim}: requeued: ")),
        "no requeue of task {victim} in:\n{out}"
    );
    // Every seed exactly once in the merged report, each matched.
    let merged = read_json(&run.join("merged.json"));
    let merged_seeds: BTreeSet<u64> = merged["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(merged["results"].as_array().unwrap().len() as u64, count);
    assert_eq!(merged_seeds, (1..=count).collect::<BTreeSet<u64>>());
    assert_eq!(merged["summary"]["matched"], count, "{out}");
    // The victim's records: written by one process at a time (no seed twice
    // in its journal), first on the lost node, then elsewhere.
    let shard = run.join(format!("shard-{victim}"));
    let journal = std::fs::read_to_string(shard.join("results.jsonl")).unwrap();
    let seeds: Vec<u64> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    let distinct: BTreeSet<&u64> = seeds.iter().collect();
    assert_eq!(
        distinct.len(),
        seeds.len(),
        "a seed recorded twice in {}",
        shard.display()
    );
    let hosts: Vec<String> = runs(&shard)
        .iter()
        .map(|r| r["host"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hosts.first(), Some(&host), "{hosts:?}");
    assert_ne!(hosts.last(), Some(&host), "{hosts:?}: not rerun elsewhere");
    // Tasks spread: the shards' first runs were on at least two nodes.
    let first_hosts: BTreeMap<String, usize> = (0..shards)
        .filter_map(|i| runs(&run.join(format!("shard-{i}"))).first().cloned())
        .fold(BTreeMap::new(), |mut m, r| {
            *m.entry(r["host"].as_str().unwrap().to_string())
                .or_default() += 1;
            m
        });
    assert!(
        first_hosts.len() >= 2,
        "every shard on one node: {first_hosts:?}"
    );
    // The page: each shard's hosts, the victim's requeue.
    let page = dir.join("report.html");
    let o = cosim(&["report", s(&run), "--offline", "--out", s(&page)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let dom = support::browser::dom(&page);
    let rows = support::browser::select(&dom, "#shard-table tbody tr");
    assert_eq!(rows.len() as u64, shards);
    let row: String = rows[victim as usize].text().collect();
    assert!(row.contains("requeued: ") && row.contains(&host), "{row}");
    assert!(
        row.contains(&format!("{host} (did not finish) \u{2192} ")),
        "{row}"
    );
    // `merge` takes the submission's directory as `report` does.
    let o = cosim(&["merge", s(&run)]);
    let merged_out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{merged_out}{}", text(&o.stderr));
    assert!(
        merged_out.contains(&format!(
            "complete: every seed of 1 .. {count} has a record"
        )),
        "{merged_out}"
    );
}

#[test]
fn a_task_past_its_time_limit_is_completed_by_the_command_wait_prints() {
    let kept = nodes();
    assert!(kept.iter().any(|n| n == KEPT), "no node {KEPT} in {kept:?}");
    let dir = scratch("timeout");
    let run = dir.join("run");
    // A seed stuck in the simulator (the `stuck` fault: the second seed a
    // process runs never ends) keeps the task past its one-minute limit,
    // whatever the machine's speed: Slurm ends it (TIMEOUT, 60 to 74 s).
    // The printed command resumes the shard: its process runs seed 2 first,
    // which then does not stick, and completes.
    let count = "2";
    let o = cosim(&[
        "slurm",
        "submit",
        "--seed",
        "1",
        "--count",
        count,
        "--shards",
        "1",
        "--config",
        "tiny",
        "--campaign-arg=--inject-fault",
        "--campaign-arg=stuck",
        "--time",
        "00:01:00",
        &format!("--sbatch-arg=--nodelist={KEPT}"),
        "--out",
        s(&run),
        "--wait",
        "--poll",
        "1",
        "--wait-timeout",
        "600",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}{}", text(&o.stderr));
    assert!(out.contains("task 0: TIMEOUT"), "{out}");
    let printed = support::printed_sbatch(&out);
    assert!(printed.starts_with("sbatch --array=0 "), "{printed}");
    // Slurm says TIMEOUT as it signals the task; its process ends within
    // its stop grace (3 s), letting go of the shard's lock. A rerun before
    // that is refused by the lock (one writer per directory), so wait.
    let lock = run.join("shard-0").join("lock");
    let deadline = Instant::now() + Duration::from_secs(30);
    while lock.exists() {
        assert!(
            Instant::now() < deadline,
            "{} still there after 30 s",
            lock.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    support::sbatch_to_the_end(&printed);
    let o = cosim(&["merge", s(&run)]);
    let merged = text(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{printed}\n{merged}{}",
        text(&o.stderr)
    );
    assert!(
        merged.contains(&format!(
            "complete: every seed of 1 .. {count} has a record"
        )),
        "{merged}"
    );
    // Two runs of the shard: the one Slurm stopped at its limit, the rerun.
    let header = read_json(&run.join("shard-0").join("campaign.json"));
    let ended: Vec<&Value> = header["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["ended"])
        .collect();
    assert!(
        ended.len() >= 2 && ended.last() == Some(&&Value::from("complete")),
        "{header}"
    );
}
