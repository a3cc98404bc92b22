//! Campaigns that survive kills and split across processes: `results.jsonl`
//! as seeds finish, `--resume`, SIGTERM, `--shard`, `merge`, `--seed-timeout`
//! (docs/scale-out.md). Every campaign here runs the real RTL (`tiny`).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{bin, cosim, curated_ids, read_json, s, scratch, text, without_wall};

/// Every line of `DIR/results.jsonl`, each a whole JSON object.
fn records(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a torn line `{l}`: {e}")))
        .collect()
}

/// Starts a campaign in the background.
fn spawn(args: &[&str]) -> Child {
    bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// Waits until `dir` holds at least `n` records (or the child ended).
fn wait_for_records(child: &mut Child, dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while records(dir).len() < n {
        assert!(Instant::now() < deadline, "no {n} records after 120 s");
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

const CAMPAIGN: [&str; 6] = ["--config", "tiny", "--instrs", "40", "--jobs", "1"];

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_killed_campaign_resumes_to_the_report_of_an_uninterrupted_one() {
    let dir = scratch("kill");
    let (whole, killed) = (dir.join("whole"), dir.join("killed"));
    let count = "300";
    let mut args = vec!["--seed", "1", "--count", count];
    args.extend(CAMPAIGN);
    let whole_json = dir.join("whole.json");
    let o = cosim(&[&args[..], &["--out", s(&whole), "--json", s(&whole_json)]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let mut child = spawn(&[&args[..], &["--out", s(&killed)]].concat());
    wait_for_records(&mut child, &killed, 20);
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let before = records(&killed).len(); // every line whole (records() checks)
    assert!(
        (20..300).contains(&before),
        "the kill came after {before} of 300 seeds: the test saw no resume"
    );
    let resumed_json = dir.join("resumed.json");
    let o = cosim(
        &[
            &args[..],
            &["--out", s(&killed), "--resume", "--json", s(&resumed_json)],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains(&format!("{before} seeds recorded")), "{out}");
    // Only the seeds not recorded ran again, and the report is the whole
    // campaign's.
    assert_eq!(
        out.lines().filter(|l| l.starts_with("seed ")).count(),
        300 - before
    );
    assert_eq!(records(&killed).len(), 300);
    assert_eq!(
        without_wall(&read_json(&resumed_json)),
        without_wall(&read_json(&whole_json))
    );
    // The header lists both runs; the killed one never said how it ended.
    let header = read_json(&killed.join("campaign.json"));
    let runs = header["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0]["ended"].is_null());
    assert_eq!(runs[1]["ended"], "complete");
    // A resume under other flags is refused, naming the field.
    let o = cosim(&[
        "--seed",
        "1",
        "--count",
        count,
        "--config",
        "tiny",
        "--instrs",
        "41",
        "--out",
        s(&killed),
        "--resume",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("`instrs` is 41 here and 40 there"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn sigterm_stops_the_campaign_with_its_reports_written_and_exit_3() {
    let dir = scratch("term");
    let out = dir.join("run");
    let (json, junit) = (dir.join("r.json"), dir.join("r.xml"));
    let mut args = vec!["--seed", "1", "--count", "1000000"];
    args.extend(CAMPAIGN);
    let mut child = spawn(
        &[
            &args[..],
            &["--out", s(&out), "--json", s(&json), "--junit", s(&junit)],
        ]
        .concat(),
    );
    wait_for_records(&mut child, &out, 10);
    signal(&child, "TERM");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("interrupted after"),
        "{}",
        text(&o.stderr)
    );
    let recorded = records(&out).len();
    let report = read_json(&json);
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["summary"]["seeds"], recorded as u64);
    assert_eq!(report["results"].as_array().unwrap().len(), recorded);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), recorded);
    assert_eq!(
        read_json(&out.join("campaign.json"))["runs"][0]["ended"],
        "interrupted"
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn four_shards_merge_into_the_unsharded_report_and_a_missing_one_is_named() {
    let dir = scratch("shards");
    let mut args = vec!["--seed", "100", "--count", "30"];
    args.extend(CAMPAIGN);
    let whole_json = dir.join("whole.json");
    let whole_coverage = dir.join("whole-coverage.json");
    let o = cosim(
        &[
            &args[..],
            &[
                "--json",
                s(&whole_json),
                "--out",
                s(&dir.join("whole")),
                "--coverage",
                s(&whole_coverage),
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let shard_dir = |i: usize| dir.join(format!("shard-{i}"));
    for i in 0..4 {
        let shard = format!("{i}/4");
        let coverage = shard_dir(i).join("coverage.json");
        let o = cosim(
            &[
                &args[..],
                &[
                    "--shard",
                    &shard,
                    "--out",
                    s(&shard_dir(i)),
                    "--coverage",
                    s(&coverage),
                ],
            ]
            .concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        // Shard i runs the seeds 100 + k with k mod 4 == i.
        let seeds: Vec<u64> = records(&shard_dir(i))
            .iter()
            .map(|r| r["seed"].as_u64().unwrap())
            .collect();
        let expected: Vec<u64> = (0..30)
            .filter(|k| k % 4 == i as u64)
            .map(|k| 100 + k)
            .collect();
        assert_eq!(seeds, expected);
    }
    // Three shards: incomplete, exit 2, and the command that runs the rest.
    let dirs3: Vec<String> = (0..3).map(|i| s(&shard_dir(i)).to_string()).collect();
    let o = cosim(
        &[
            &["merge"][..],
            &dirs3.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(
        out.contains("incomplete: 7 of 30 seeds missing: 103, 107, 111, 115, 119, 123, 127"),
        "{out}"
    );
    assert!(out.contains("--shard 3/4"), "{out}");
    // All four, given twice over (a rerun's copy): the unsharded report.
    let merged = dir.join("merged.json");
    let mut all: Vec<String> = (0..4).map(|i| s(&shard_dir(i)).to_string()).collect();
    all.push(s(&shard_dir(0)).to_string());
    let o = cosim(
        &[
            &["merge", "--json", s(&merged)][..],
            &all.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("records repeat a seed"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(
        without_wall(&read_json(&merged)),
        without_wall(&read_json(&whole_json))
    );
    // Coverage merged from the shards is the whole run's, first hits and
    // all (cases are numbered by their place in the whole campaign).
    let merged_coverage = dir.join("merged-coverage.json");
    let dirs4: Vec<String> = (0..4).map(|i| s(&shard_dir(i)).to_string()).collect();
    let o = cosim(
        &[
            &["merge", "--coverage", s(&merged_coverage)][..],
            &dirs4.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(read_json(&merged_coverage), read_json(&whole_coverage));
}

#[test]
fn merge_refuses_what_is_not_one_campaign() {
    let dir = scratch("refuse");
    let run = |out: &Path, instrs: &str| {
        let o = cosim(&[
            "--seed",
            "1",
            "--count",
            "4",
            "--config",
            "tiny",
            "--dut",
            "golden",
            "--instrs",
            instrs,
            "--shard",
            "0/2",
            "--out",
            s(out),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    };
    run(&dir.join("a"), "40");
    run(&dir.join("b"), "12");
    let o = cosim(&["merge", s(&dir.join("a")), s(&dir.join("b"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not shards of one campaign: `instrs` is 12 here and 40 there"),
        "{}",
        text(&o.stderr)
    );
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let o = cosim(&["merge", s(&dir.join("empty"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no campaign.json here"),
        "{}",
        text(&o.stderr)
    );
    // A line that is not a record is named by file and line.
    let results = dir.join("a").join("results.jsonl");
    let mut t = std::fs::read_to_string(&results).unwrap();
    t.push_str("{\"seed\": 3, \"verdict\": \"perhaps\"}\n");
    std::fs::write(&results, t).unwrap();
    let o = cosim(&["merge", s(&dir.join("a"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("results.jsonl:3:"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn merge_exits_1_when_a_shard_mismatched() {
    let dir = scratch("mismatch");
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("s{i}"))).collect();
    for (i, out) in shards.iter().enumerate() {
        let shard = format!("{i}/2");
        let o = cosim(&[
            "--seed",
            "1",
            "--count",
            "6",
            "--config",
            "tiny",
            "--dut",
            "golden",
            "--inject-fault",
            "l2-data",
            "--no-shrink",
            "--shard",
            &shard,
            "--out",
            s(out),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    }
    let o = cosim(&["merge", s(&shards[0]), s(&shards[1])]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("failures by signature:"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_seed_past_its_timeout_is_a_timeout_and_the_campaign_goes_on() {
    let dir = scratch("timeout");
    let out = dir.join("run");
    let json = dir.join("r.json");
    // Long programs and a limit of a tenth of a millisecond: every seed
    // runs past it.
    let o = cosim(&[
        "--seed",
        "1",
        "--count",
        "3",
        "--config",
        "tiny",
        "--instrs",
        "400",
        "--jobs",
        "1",
        "--seed-timeout",
        "0.0001",
        "--out",
        s(&out),
        "--json",
        s(&json),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let out_text = text(&o.stdout);
    assert_eq!(out_text.matches(": TIMEOUT: ").count(), 3, "{out_text}");
    assert!(out_text.contains("3 timed out"), "{out_text}");
    assert!(
        out_text.contains(
            "reproduce: pccx-cosim --seed 2 --instrs 400 --config tiny --seed-timeout 0.0001"
        ),
        "{out_text}"
    );
    let report = read_json(&json);
    for r in report["results"].as_array().unwrap() {
        assert_eq!(r["verdict"], "timeout", "{r}");
        assert!(
            r["error"].as_str().unwrap().contains("wall-clock limit"),
            "{r}"
        );
    }
    // Each timeout has a repro, which replays as a timeout under the
    // same limit.
    let repro = out.join("repro-tiny-seed2.json");
    assert!(repro.exists(), "{out_text}");
    let file = read_json(&repro);
    assert_eq!(file["mismatch"]["kind"], "timeout");
    assert_eq!(file["seed_timeout_seconds"], 0.0001);
    let o = cosim(&["replay", s(&repro)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    // With room to finish, the same seeds match: the limit is what fired.
    let o = cosim(&[
        "--seed",
        "1",
        "--count",
        "3",
        "--config",
        "tiny",
        "--instrs",
        "400",
        "--jobs",
        "1",
        "--seed-timeout",
        "60",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = cosim(&["--seed", "1", "--seed-timeout", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("positive number of seconds"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "builds RTL mutants")]
fn a_killed_mutation_run_resumes_and_its_shards_merge() {
    let dir = scratch("mutate");
    // Two mutants the curated set kills.
    let ids = curated_ids(2);
    let list = dir.join("ids.txt");
    std::fs::write(&list, ids.join("\n") + "\n").unwrap();
    let run = |out: &Path, extra: &[&str]| {
        let work = out.join("build");
        let mut args = vec![
            "mutate",
            "--ids",
            s(&list),
            "--jobs",
            "1",
            "--out",
            s(out),
            "--work",
            s(&work),
        ];
        args.extend(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<String>>()
    };
    // Killed with SIGKILL once the first mutant is recorded: the second is
    // lost with the process, and a resumed run does only that one.
    let whole = dir.join("whole");
    let mut child = bin()
        .args(run(&whole, &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_records(&mut child, &whole, 1);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(records(&whole).len(), 1, "the kill came after both mutants");
    let o = bin().args(run(&whole, &["--resume"])).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("resuming: 1 mutants recorded, 1 to run"),
        "{}",
        text(&o.stdout)
    );
    let recorded: Vec<String> = records(&whole)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(recorded.len(), 2);
    assert!(ids.iter().all(|id| recorded.contains(id)), "{recorded:?}");
    // The merge of the one directory is complete, every mutant killed.
    let merged = dir.join("merged.json");
    let o = cosim(&["merge", s(&whole), "--json", s(&merged)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let report = read_json(&merged);
    assert_eq!(report["summary"]["killed"], 2);
    assert!(report.get("missing").is_none());
    // SIGTERM while the first mutant is being built: it finishes and is
    // recorded, the second never starts, and the run says it stopped.
    let term = dir.join("term");
    let child = bin()
        .args(run(&term, &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let header = term.join("mutate.json");
    // The first mutant's build directory: it is in flight.
    let building = term.join("build").join("m0000");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !building.exists() {
        assert!(Instant::now() < deadline, "no mutant build after 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, "TERM");
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert_eq!(records(&term).len(), 1);
    assert_eq!(read_json(&header)["runs"][0]["ended"], "interrupted");
    // One shard of two alone is incomplete, and says what runs the rest.
    let half = dir.join("half");
    let o = bin()
        .args(run(&half, &["--shard", "0/2"]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = cosim(&["merge", s(&half)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("--shard 1/2 --out DIR --resume"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_seed_stuck_where_no_cycle_passes_is_recorded_and_the_process_ends_with_4() {
    let dir = scratch("stuck");
    let out = dir.join("run");
    // The `stuck` fault never returns from the second drain and looks at
    // no flag: after twice the limit and 5 s the timekeeper records the
    // seed and ends the process.
    let started = Instant::now();
    let o = cosim(&[
        "--seed",
        "1",
        "--count",
        "3",
        "--config",
        "tiny",
        "--inject-fault",
        "stuck",
        "--seed-timeout",
        "0.5",
        "--out",
        s(&out),
    ]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        started.elapsed() >= Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert!(
        text(&o.stderr).contains("seed 2 ran past --seed-timeout"),
        "{}",
        text(&o.stderr)
    );
    let r = records(&out);
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(
        (r[0]["seed"].as_u64(), r[0]["verdict"].as_str()),
        (Some(1), Some("match"))
    );
    assert_eq!(
        (r[1]["seed"].as_u64(), r[1]["verdict"].as_str()),
        (Some(2), Some("timeout"))
    );
    assert_eq!(
        read_json(&out.join("campaign.json"))["runs"][0]["ended"],
        "hung"
    );
}

/// What `DIR/lock` says of its holder.
fn lock_holder(dir: &Path) -> Value {
    read_json(&dir.join("lock"))
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn one_writer_per_directory_and_every_earlier_generation_kept() {
    let dir = scratch("lock");
    let out = dir.join("run");
    let long = ["--seed", "1", "--count", "100000", "--out", s(&out)];
    let mut first = spawn(&[&long[..], &CAMPAIGN[..]].concat());
    wait_for_records(&mut first, &out, 5);
    let holder = lock_holder(&out);
    assert_eq!(holder["pid"], first.id());
    // A second writer, resumed or fresh, is refused while the first runs,
    // and the first's records are untouched.
    for extra in [&["--resume"][..], &[][..]] {
        let o = cosim(&[&long[..], &CAMPAIGN[..], extra].concat());
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "lock is held by PID {} on {}",
                first.id(),
                holder["host"].as_str().unwrap()
            )) && err.contains("its process runs on this host")
                && err.contains("--break-lock"),
            "{err}"
        );
        assert!(out.join("results.jsonl").exists());
        assert!(!out.join("previous").exists());
    }
    // The lock taken from under it (a writer elsewhere was given the
    // directory): the first stops writing at its next record, exit 2.
    let before = records(&out).len();
    let stranger = serde_json::json!({"host": "elsewhere", "pid": 1, "pid_start": 1,
        "since_unix": 0, "command": "pccx-cosim run (a test)"});
    let swap = dir.join("lock.new");
    std::fs::write(&swap, stranger.to_string()).unwrap();
    std::fs::rename(&swap, out.join("lock")).unwrap();
    let o = first.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("lock was taken over by PID 1 on elsewhere"),
        "{err}"
    );
    let after = records(&out).len();
    assert!(
        after <= before + 2,
        "{before} records, then {after} after the lock went"
    );
    assert!(
        out.join("lock").exists(),
        "the lock it lost is not its to remove"
    );
    // A holder on another host outside Slurm cannot be told gone: refused,
    // then taken with --break-lock.
    let short = ["--seed", "1", "--count", "6", "--out", s(&out)];
    let o = cosim(&[&short[..], &CAMPAIGN[..]].concat());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("on elsewhere") && err.contains("outside Slurm"),
        "{err}"
    );
    let o = cosim(&[&short[..], &CAMPAIGN[..], &["--break-lock"][..]].concat());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("took over the lock of PID 1 on elsewhere") && err.contains("--break-lock"),
        "{err}"
    );
    assert!(
        !out.join("lock").exists(),
        "a finished run lets go of its lock"
    );
    // Every generation kept: the first run's records, then the second's.
    let o = cosim(&[&short[..], &CAMPAIGN[..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("previous/2"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(records(&out.join("previous/1")).len(), after);
    assert_eq!(records(&out.join("previous/2")).len(), 6);
    assert_eq!(records(&out).len(), 6);
    for g in ["previous/1", "previous/2"] {
        assert!(out.join(g).join("campaign.json").exists(), "{g}");
    }
    // A holder killed outright leaves its lock; its PID is dead, so the
    // next run takes it over, saying so.
    let mut killed = spawn(&[&long[..], &CAMPAIGN[..]].concat());
    wait_for_records(&mut killed, &out, 10);
    signal(&killed, "KILL");
    let _ = killed.wait();
    assert_eq!(lock_holder(&out)["pid"], killed.id());
    let o = cosim(&[&short[..], &CAMPAIGN[..]].concat());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!("took over the lock of PID {}", killed.id()))
            && err.contains("that process has ended"),
        "{err}"
    );
    assert_eq!(records(&out.join("previous/3")).len(), 6);
    assert!(records(&out.join("previous/4")).len() >= 10);
}

/// SIGTERM ends a run even when a seed is stuck where the stop flag is
/// never looked at (the `stuck` fault: a drain that never returns): after
/// the grace the process ends, exit 3, the finished seed recorded, the
/// header saying "interrupted" and the lock let go, so that the next run
/// (a Slurm task's rerun) finds the directory free.
#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn sigterm_ends_a_run_stuck_in_a_seed_after_the_grace() {
    let dir = scratch("stuck-term");
    let out = dir.join("run");
    let mut child = spawn(
        &[
            &["--seed", "1", "--count", "2", "--inject-fault", "stuck"][..],
            &CAMPAIGN[..],
            &["--out", s(&out)][..],
        ]
        .concat(),
    );
    wait_for_records(&mut child, &out, 1);
    // Seed 2 is stuck now (its drain never returns).
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    signal(&child, "TERM");
    let o = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        took < Duration::from_secs(10),
        "ended {took:?} after SIGTERM"
    );
    assert!(
        err.contains("still running 3 s after the stop signal"),
        "{err}"
    );
    assert_eq!(records(&out).len(), 1);
    let header = read_json(&out.join("campaign.json"));
    assert_eq!(header["runs"][0]["ended"], "interrupted", "{header}");
    assert!(!out.join("lock").exists(), "the lock is let go");
}
