//! Mutant schemata (docs/mutation.md, "Schemata"): one model with every
//! site guarded by a run-time selector must behave, for each selected
//! mutant, exactly like that mutant Verilated and compiled alone: the same
//! verdict, at the same seed and instruction count, with the same first
//! mismatch. Checked on a sample of the guarded sites, each run both ways
//! as `pccx-cosim mutate` runs it (a child process per mutant).

use std::path::Path;
use std::time::Duration;

use pccx_cosim::config;
use pccx_cosim::tools::mutate::{self, build, lint, schema, MutateOptions, Verdict};
use pccx_golden::model::Observation;

fn options(root: &Path, work: &Path) -> MutateOptions {
    MutateOptions {
        config: config::by_name("tiny").unwrap(),
        // Fewer seeds than a real run: a survivor costs its seeds twice
        // here, and most kills come in the first seed.
        seeds: 6,
        first_seed: 1,
        steered: 4,
        instrs: 40,
        budget: Duration::from_secs(120),
        work_dir: work.to_path_buf(),
        root: root.to_path_buf(),
        observe: Observation::Full,
    }
}

/// The standard output of a run of the binary that must have succeeded
/// (its output and errors in the panic message when it did not).
fn succeeded(o: std::process::Output) -> String {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

/// What must agree between the two builds of one mutant.
fn essence(v: &Verdict) -> String {
    match v {
        Verdict::Killed {
            seed,
            instructions,
            by,
            mismatch,
            ..
        } => format!(
            "killed at seed {seed} after {instructions} instructions by {by}: {}",
            mismatch
                .as_ref()
                .map_or("(no mismatch)".to_string(), |m| format!(
                    "{} seq {:?} cycle {:?}: {}",
                    m.kind, m.seq, m.cycle, m.detail
                ))
        ),
        Verdict::Survived {
            seeds,
            instructions,
            ..
        } => format!("survived {seeds} seeds, {instructions} instructions"),
        Verdict::TimedOut { .. } => "timed out".into(),
        Verdict::NotCompiling { stage, .. } => format!("not compiling ({stage})"),
    }
}

#[test]
fn a_schema_mutant_behaves_like_the_same_mutant_built_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-schema");
    let exe = Path::new(env!("CARGO_BIN_EXE_pccx-cosim"));
    let opts = options(root, &work);
    let sites = mutate::all_sites(root).expect("mutation sites of hw/rtl");
    let builder = build::Builder::new(root, &work, opts.config).expect("mutant builder");
    let built = builder
        .schema(&sites, None, &|_| {})
        .expect("the mutant schema");
    let guarded = built.schema.guarded(sites.len());
    assert!(
        guarded.len() * 10 >= sites.len() * 9,
        "the schema guards {} of {} sites",
        guarded.len(),
        sites.len()
    );
    let guarded_sites: Vec<mutate::Mutant> = guarded
        .iter()
        .map(|&k| sites[k as usize - 1].clone())
        .collect();
    // Six mutants: each is built alone (the test's cost), and six give at
    // least six kills with a mismatch to compare, alone against schema.
    let sample = mutate::sample(&guarded_sites, 6, 16);
    let selector = |m: &mutate::Mutant| {
        schema::selector_of(sites.iter().position(|s| s == m).expect("a site"))
    };
    // The schema of these six sites only (`--builds subset`): it guards
    // them and nothing else, under the same selectors.
    let only: std::collections::BTreeSet<u32> = sample.iter().map(selector).collect();
    let subset = builder
        .schema(&sites, Some(&only), &|_| {})
        .expect("the schema of the sample");
    assert_eq!(
        subset.schema.guarded(sites.len()),
        only.iter().copied().collect::<Vec<_>>()
    );
    assert_ne!(subset.so, built.so);
    let results = std::sync::Mutex::new(Vec::new());
    let queue = std::sync::Mutex::new(sample.iter());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(m) = queue.lock().unwrap().next() else {
                    break;
                };
                let alone = mutate::run_mutant(&opts, &builder, m, exe, None).expect("a verdict");
                // Not batched: each lints alone, as the alone build does.
                let lints = lint::LintBatches::new(&builder, &[], 1);
                let schema = Some((built.so.as_path(), selector(m), &lints));
                let guarded =
                    mutate::run_mutant(&opts, &builder, m, exe, schema).expect("a verdict");
                let of_sample = Some((subset.so.as_path(), selector(m), &lints));
                let in_subset =
                    mutate::run_mutant(&opts, &builder, m, exe, of_sample).expect("a verdict");
                results.lock().unwrap().push((
                    m.id(),
                    essence(&alone.verdict),
                    essence(&guarded.verdict),
                ));
                results.lock().unwrap().push((
                    format!("{} (subset)", m.id()),
                    essence(&alone.verdict),
                    essence(&in_subset.verdict),
                ));
            });
        }
    });
    let results = results.into_inner().unwrap();
    let differing: Vec<_> = results.iter().filter(|(_, a, s)| a != s).collect();
    assert!(
        differing.is_empty(),
        "alone vs schema differ:\n{differing:#?}"
    );
    // The comparison is of something: kills with their first mismatch.
    let kills = results
        .iter()
        .filter(|(_, a, _)| a.starts_with("killed") && !a.contains("(no mismatch)"))
        .count();
    assert!(
        kills >= 6,
        "too few kills with a mismatch to compare: {results:#?}"
    );
    // Built alone, a mutant is kept in the build cache under its own key
    // (another mutant, another entry), its shared object only: the loop
    // above built these, so these calls find them.
    let compiling: Vec<_> = sample
        .iter()
        .filter_map(|m| builder.build(m).ok())
        .collect();
    assert!(compiling.len() >= 2, "{compiling:?}");
    let entries: std::collections::BTreeSet<_> =
        compiling.iter().map(|so| so.parent().unwrap()).collect();
    assert_eq!(entries.len(), compiling.len(), "{compiling:?}");
    for entry in entries {
        let mut names: Vec<String> = std::fs::read_dir(entry)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["inputs.txt", "pccx_model_mutant.so"],
            "{}",
            entry.display()
        );
    }
}

/// A schema of one site of `pccx_pkg` (a footprint function the
/// scheduler's out-of-line `dependency_row` calls): the scheduler has no
/// guard of its own, yet its function must be inlined, or Verilator
/// refuses the selector read inside it. The first evidence run of
/// `--builds subset` failed so on `kv260`.
#[test]
fn a_schema_of_a_package_site_alone_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-schema-package");
    let opts = options(root, &work);
    let sites = mutate::all_sites(root).expect("mutation sites of hw/rtl");
    let builder = build::Builder::new(root, &work, opts.config).expect("mutant builder");
    // The first site inside `function automatic footprint_t footprint(`.
    let text = std::fs::read_to_string(root.join("hw/rtl/pccx_pkg.sv")).unwrap();
    let first = 1 + text
        .lines()
        .position(|l| l.contains("footprint_t footprint("))
        .expect("pccx_pkg.sv defines footprint()");
    let k = sites
        .iter()
        .position(|m| m.file == "pccx_pkg.sv" && m.line > first)
        .map(schema::selector_of)
        .expect("a site in footprint()");
    let only = std::collections::BTreeSet::from([k]);
    let built = builder
        .schema(&sites, Some(&only), &|_| {})
        .unwrap_or_else(|e| panic!("the schema of {}: {e}", sites[k as usize - 1].id()));
    assert_eq!(built.schema.guarded(sites.len()), [k]);
}

#[test]
fn selector_zero_is_the_rtl_as_written_and_a_selected_mutant_is_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-schema-zero");
    let exe = Path::new(env!("CARGO_BIN_EXE_pccx-cosim"));
    let opts = options(root, &work);
    let sites = mutate::all_sites(root).expect("mutation sites of hw/rtl");
    let builder = build::Builder::new(root, &work, opts.config).expect("mutant builder");
    let built = builder
        .schema(&sites, None, &|_| {})
        .expect("the mutant schema");
    // The child runs `mutate-run --selector K`: with 0 nothing is mutated,
    // and the short campaign passes every check.
    let run = |k: u32| {
        let out = std::process::Command::new(exe)
            .args(["mutate-run", "--so"])
            .arg(&built.so)
            .args(["--config", "tiny", "--seeds", "4", "--first-seed", "1"])
            .args(["--instrs", "40", "--budget", "60", "--selector"])
            .arg(k.to_string())
            .output()
            .expect("run mutate-run");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let clean = run(0);
    assert!(clean.contains("\"survived\""), "{clean}");
    // The decode of an illegal opcode inverted (the first guarded site of
    // the decoder that a plain program reaches): killed.
    let k = built
        .schema
        .guarded(sites.len())
        .into_iter()
        .find(|&k| {
            let m = &sites[k as usize - 1];
            m.file == "pccx_pkg.sv" && m.original == "(w.opcode > OP_CVO)"
        })
        .expect("the decoder's illegal-opcode test is guarded");
    let mutated = run(k);
    assert!(mutated.contains("\"killed\""), "{mutated}");
}

/// Verilator's message with the build directories taken out (each lint has
/// its own): from each line, what follows `/rtl/`.
fn without_dirs(message: &str) -> String {
    message
        .lines()
        .map(|l| match l.split_once("/rtl/") {
            Some((head, tail)) => format!("{}{tail}", head.split(' ').next().unwrap_or("")),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn mutants_linted_in_batches_get_the_verdict_and_message_each_gets_alone() {
    // The sites of the top level, which Verilator refuses alone now and
    // then (a signal driven from two kinds of process, a port of another
    // width): each mutant linted alone, then the same mutants in batches as
    // `mutate` lints them. docs/mutation.md records the same check on
    // every site.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-lint-batches");
    let sites = mutate::all_sites(root).expect("mutation sites of hw/rtl");
    let chosen: Vec<mutate::Mutant> = sites
        .iter()
        .filter(|m| m.file == "pccx_top.sv")
        .cloned()
        .collect();
    let builder =
        build::Builder::new(root, &work, config::by_name("tiny").unwrap()).expect("mutant builder");
    let alone: Vec<_> = chosen.iter().map(|m| builder.lint_alone(m)).collect();
    let refused = alone.iter().filter(|v| v.is_err()).count();
    assert!(
        refused >= 4 && refused * 2 < chosen.len(),
        "{refused} of {} refused alone: too few to test the splitting",
        chosen.len()
    );
    let size = lint::DEFAULT_BATCH;
    let lints = lint::LintBatches::new(&builder, &chosen, size);
    assert!(lints.batch_count() < chosen.len() / 2);
    let mut lint_seconds = 0.0;
    for (m, by_itself) in chosen.iter().zip(&alone) {
        let (batched, seconds) = lints.verdict(m);
        lint_seconds += seconds;
        match (by_itself, &batched) {
            (Ok(()), Ok(())) => {}
            (Err((s1, m1)), Err((s2, m2))) => {
                assert_eq!(s1, s2, "{}", m.id());
                assert_eq!(without_dirs(m1), without_dirs(m2), "{}", m.id());
            }
            _ => panic!(
                "{} (batches of {size}): alone {by_itself:?}, batched {batched:?}",
                m.id()
            ),
        }
    }
    eprintln!(
        "{} batches settled in {lint_seconds:.1} s",
        lints.batch_count()
    );
    assert!(lint_seconds > 0.0);
}

/// What the RTL does wrong is the RTL's failure (docs/harness.md, "What the
/// RTL does wrong"): a campaign on a mutant that hangs (a GEMM that never
/// finishes) or breaks the AXI-Lite protocol (a write response nobody asked
/// for) records a mismatch of that kind for each seed, with its repro file
/// and shrunk program, goes on to the next seed, and exits 1; the repro
/// replays to the same failure. The mutants run from a schema of their
/// own sites (`--builds subset`: compiled at -O2 with no other guard, so its
/// campaigns, shrinks and waveform reruns run at the RTL's speed) through
/// `PCCX_MODEL_OVERRIDE`, as `gate-power` runs them.
#[test]
fn a_hang_a_bus_violation_or_a_failed_assertion_of_the_rtl_is_a_mismatch_with_its_repro() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-rtl-failures");
    let exe = Path::new(env!("CARGO_BIN_EXE_pccx-cosim"));
    let sites = mutate::all_sites(root).expect("mutation sites of hw/rtl");
    let builder =
        build::Builder::new(root, &work, config::by_name("tiny").unwrap()).expect("mutant builder");
    let cases = [
        ("pccx_gemm_engine.sv:277:21:broken-conditional", "hang"),
        ("pccx_axil_slave.sv:48:41:operator-swap", "bus-protocol"),
        ("pccx_scheduler.sv:122:36:broken-conditional", "assertion"),
    ];
    let selector_of_id = |id: &str| {
        let k = sites
            .iter()
            .position(|m| m.id() == id)
            .unwrap_or_else(|| panic!("{id} is not a site of hw/rtl any more"));
        schema::selector_of(k)
    };
    let only: std::collections::BTreeSet<u32> =
        cases.iter().map(|(id, _)| selector_of_id(id)).collect();
    let built = builder
        .schema(&sites, Some(&only), &|_| {})
        .expect("the schema of the three sites");
    for (id, kind) in cases {
        let selector = selector_of_id(id);
        assert!(
            !built.schema.unguarded.contains_key(&selector),
            "{id} is not guarded in the schema"
        );
        let so = built.so.display().to_string();
        let overrides = format!(
            r#"[{{"config":"tiny","so":"{so}","name":"{}","selector":{selector}}}]"#,
            build::SCHEMA_CONFIG
        );
        let out = work.join(kind);
        let _ = std::fs::remove_dir_all(&out);
        let run = |args: &[&str]| {
            std::process::Command::new(exe)
                .args(args)
                .env("PCCX_MODEL_OVERRIDE", &overrides)
                .output()
                .expect("run pccx-cosim")
        };
        let o = run(&[
            "--seed",
            "1",
            "--count",
            "2",
            "--config",
            "tiny",
            "--out",
            out.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{id}: {text}{err}");
        assert!(!err.contains("infrastructure"), "{id}: {err}");
        for seed in [1, 2] {
            assert!(
                text.contains(&format!("seed {seed}: MISMATCH {kind} ")),
                "{id}, seed {seed}:\n{text}"
            );
            let repro = out.join(format!("repro-tiny-seed{seed}.json"));
            assert!(repro.is_file(), "{}", repro.display());
            assert!(out.join(format!("repro-tiny-seed{seed}-min.asm")).is_file());
        }
        let o = run(&[
            "replay",
            out.join("repro-tiny-seed1.json").to_str().unwrap(),
        ]);
        let replayed = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(1), "{id}: {replayed}");
        assert!(
            replayed.contains(&format!("MISMATCH {kind} ")),
            "{id}: {replayed}"
        );
    }
}

/// Every assertion of hw/rtl fires: each one's planted bug (`fired_by` in
/// harness/scoreboard/assertions.rs) is killed, first by that assertion.
/// The mutants run through `pccx-cosim mutate` from a schema of their own
/// sites (`--builds subset`), whose report must also say what the
/// scoreboard alone saw; the hand-made edits run from one schema of the
/// edits, as `mutate` runs a mutant (a child process).
#[test]
fn every_assertion_of_the_rtl_fires_on_its_planted_bug() {
    use pccx_cosim::scoreboard::assertions::{FiredBy, ASSERTIONS};
    use pccx_cosim::tools::mutate::{Mutant, MutantClass};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-assertions");
    let exe = Path::new(env!("CARGO_BIN_EXE_pccx-cosim"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    // The assertions that failed first (at the first failing edge).
    let first_assertions = |v: &Verdict| match v {
        Verdict::Killed {
            assertion: Some(k), ..
        } => std::iter::once(k.name.clone())
            .chain(k.also.clone())
            .collect(),
        _ => Vec::new(),
    };
    // The mutants, in one `mutate` run.
    let ids: String = ASSERTIONS
        .iter()
        .filter_map(|a| match a.fired_by {
            FiredBy::Mutant(id) => Some(format!("{id}\n")),
            FiredBy::Edit { .. } => None,
        })
        .collect();
    let list = work.join("ids.txt");
    std::fs::write(&list, ids).unwrap();
    let json = work.join("run.json");
    let o = std::process::Command::new(exe)
        .args([
            "mutate",
            "--ids",
            list.to_str().unwrap(),
            "--builds",
            "subset",
        ])
        .args([
            "--config",
            "tiny",
            "--work",
            work.join("w").to_str().unwrap(),
        ])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .expect("run pccx-cosim mutate");
    let text = succeeded(o);
    assert!(text.contains("made first by an assertion"), "{text}");
    let report: pccx_cosim::tools::mutants::MutateReport =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let mut failures = Vec::new();
    for a in ASSERTIONS {
        let FiredBy::Mutant(id) = a.fired_by else {
            continue;
        };
        let r = report.mutants.iter().find(|r| r.id == id);
        let got = r.map(|r| first_assertions(&r.result)).unwrap_or_default();
        if !got.iter().any(|n| n == a.name) {
            failures.push(format!("{} by {id}: {:?}", a.name, r.map(|r| &r.result)));
        }
    }
    // The edits, run two at a time.
    let builder =
        build::Builder::new(root, &work.join("e"), config::by_name("tiny").unwrap()).unwrap();
    let options = MutateOptions {
        seeds: 40,
        steered: 0,
        ..options(root, &work.join("e"))
    };
    let edits: Vec<(&str, Mutant)> = ASSERTIONS
        .iter()
        .filter_map(|a| match a.fired_by {
            FiredBy::Edit {
                file,
                line,
                column,
                original,
                replacement,
            } => Some((
                a.name,
                Mutant {
                    file: file.into(),
                    line,
                    column,
                    class: MutantClass::SignalMixUp,
                    original: original.into(),
                    replacement: replacement.into(),
                },
            )),
            FiredBy::Mutant(_) => None,
        })
        .collect();
    // One schema of the edits (a schema behaves as the mutant built alone:
    // the first test), each edit under selector k + 1; an edit it cannot
    // guard is built alone.
    let edit_mutants: Vec<Mutant> = edits.iter().map(|(_, m)| m.clone()).collect();
    let of_edits = builder
        .schema(&edit_mutants, None, &|_| {})
        .expect("the schema of the planted edits");
    let guarded = of_edits.schema.guarded(edit_mutants.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, m)) = edits.get(k) else { break };
                let selector = schema::selector_of(k);
                let lints = lint::LintBatches::new(&builder, &[], 1);
                let from_schema = guarded.contains(&selector).then_some((
                    of_edits.so.as_path(),
                    selector,
                    &lints,
                ));
                let r = mutate::run_mutant(&options, &builder, m, exe, from_schema);
                results
                    .lock()
                    .unwrap()
                    .push((*name, m.describe(), r.map(|r| r.verdict)));
            });
        }
    });
    for (name, change, verdict) in results.into_inner().unwrap() {
        let got = verdict.as_ref().map(first_assertions).unwrap_or_default();
        if !got.iter().any(|n| n == name) {
            failures.push(format!("{name} by {change}: {verdict:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The evidence of the equivalent list (docs/mutation.md, "Evidence"):
/// `--evidence N` records what each listed equivalent survived when it is
/// enough (the sweep for an `exhaustive` entry, 2,000 programs for any
/// other), drops the record of an entry that dies, and a later run does not
/// run again an entry whose record is for this RTL, but does one whose
/// record is for another.
#[test]
fn an_equivalent_with_evidence_for_this_rtl_is_not_run_again_and_one_that_dies_loses_it() {
    use pccx_cosim::tools::mutants::{EvidenceSource, MutateReport};
    use pccx_cosim::tools::mutate::evidence::EvidenceFile;
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-evidence");
    let exe = Path::new(env!("CARGO_BIN_EXE_pccx-cosim"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let (swept, counted, wrong) = (
        "pccx_cvo_pkg.sv:90:12:off-by-one-compare",
        "pccx_scheduler.sv:123:22:signal-mix-up",
        "pccx_pkg.sv:230:22:broken-conditional",
    );
    let list = work.join("equivalent.txt");
    std::fs::write(
        &list,
        format!(
            "{swept} exhaustive # fix24 at sh = 0\n{counted} # lat_ready includes lat_valid\n\
             {wrong} exhaustive # listed wrongly: a MEMCPY range check inverted\n"
        ),
    )
    .unwrap();
    let ids = work.join("ids.txt");
    std::fs::write(&ids, format!("{swept}\n{counted}\n{wrong}\n")).unwrap();
    let evidence = work.join("evidence.json");
    let mut seeded = EvidenceFile::read(&evidence).unwrap();
    let battery = pccx_cosim::tools::mutants::Battery {
        random: 1000,
        stalled: 1000,
        steered: 500,
        cvo_sweep: 6,
        directed: 0,
    };
    seeded.record(wrong, "tiny", "another RTL", battery);
    seeded.write(&evidence).unwrap();
    let run = |extra: &[&str], n: u32| -> (String, MutateReport) {
        let json = work.join(format!("run{n}.json"));
        let o = std::process::Command::new(exe)
            .args(["mutate", "--ids", ids.to_str().unwrap()])
            .args(["--equivalent", list.to_str().unwrap()])
            .args(["--evidence-file", evidence.to_str().unwrap()])
            .args(["--config", "tiny", "--builds", "subset"])
            .args(["--seeds", "2", "--steered", "2"])
            .args(["--work", work.join("w").to_str().unwrap()])
            .args(["--json", json.to_str().unwrap()])
            .args(extra)
            .output()
            .expect("run pccx-cosim mutate");
        let text = succeeded(o);
        (
            text,
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap(),
        )
    };
    let source = |r: &MutateReport, id: &str| {
        let m = r.mutants.iter().find(|m| m.id == id).expect("a record");
        m.evidence.as_ref().map(|e| (e.source, e.sufficient))
    };
    // --evidence 8: the sweep is enough for the exhaustive entry, 8
    // programs are not for the other; the wrongly listed one is killed.
    let (_, first) = run(&["--evidence", "8"], 1);
    assert_eq!(source(&first, swept), Some((EvidenceSource::Run, true)));
    assert_eq!(source(&first, counted), Some((EvidenceSource::Run, false)));
    assert_eq!(source(&first, wrong), None);
    let recorded = EvidenceFile::read(&evidence).unwrap();
    let ids_recorded: Vec<&str> = recorded.records.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids_recorded, [swept], "{recorded:?}");
    // Again without --evidence: the exhaustive entry is not run.
    let (text, second) = run(&[], 2);
    assert!(
        text.contains("1 listed ones have sufficient evidence"),
        "{text}"
    );
    assert_eq!(
        source(&second, swept),
        Some((EvidenceSource::Recorded, true))
    );
    assert_eq!(source(&second, counted), Some((EvidenceSource::Run, false)));
    // A record for another RTL is no evidence: it runs again.
    let mut stale = EvidenceFile::read(&evidence).unwrap();
    stale.records[0].rtl = "another RTL".into();
    stale.write(&evidence).unwrap();
    let (_, third) = run(&[], 3);
    assert_eq!(source(&third, swept), Some((EvidenceSource::Run, true)));
}
