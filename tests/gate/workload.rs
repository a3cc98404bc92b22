//! The tiny decoder block end to end on the RTL, and the two checks a
//! workload adds shown to fire: the f64 error table notices one scale one
//! ULP off, and a wrong weight stream reaching the RTL is a mismatch with
//! its repro (docs/workloads.md).

use pccx_cosim::config;
use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models::{DutKind, Setup};
use pccx_cosim::scoreboard::run_case;
use pccx_cosim::triage::repro::Repro;
use pccx_cosim::workload::decoder::{DecoderModel, LAYERS};
use pccx_cosim::workload::{self, WorkloadName, WorkloadReport, WorkloadRequest};
use pccx_golden::numerics::Bf16;
use std::path::PathBuf;

fn request(dut: DutKind, fault: Option<Fault>, out: &str) -> WorkloadRequest {
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(out);
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).unwrap();
    WorkloadRequest {
        workload: WorkloadName::DecoderTiny,
        setup: Setup::new(config::by_name("tiny").unwrap(), dut, fault),
        seed: 1,
        out_dir,
        no_shrink: true,
    }
}

fn layer<'a>(r: &'a WorkloadReport, name: &str) -> &'a workload::LayerReport {
    r.layers.iter().find(|l| l.name == name).unwrap()
}

#[test]
fn the_tiny_decoder_block_matches_on_the_rtl_with_exact_timing_and_lands_near_f64() {
    let rtl = workload::run(&request(DutKind::Rtl, None, "workload-rtl")).unwrap();
    assert_eq!(rtl.verdict, "ok", "{:?}", rtl.failure);
    let names: Vec<&str> = rtl.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, LAYERS);
    for l in &rtl.layers {
        let host_only = l.name.starts_with("residual");
        assert_eq!(l.programs, u32::from(!host_only), "{}", l.name);
        assert_eq!(l.instructions > 0, !host_only, "{}", l.name);
        assert_eq!(l.cycles > 0, !host_only, "{}", l.name);
        assert!(l.host_ops > 0, "{}", l.name);
        // Every layer's output is close to the same mathematics in f64:
        // INT8 activations, INT4 keys and values, BF16 everywhere. The
        // bounds are a few times what seed 1 measures (docs/workloads.md).
        let alone = l.error_alone.unwrap();
        let end = l.error.unwrap();
        assert!(
            alone.max_rel.is_finite() && alone.max_rel < 0.2,
            "{}: {alone:?}",
            l.name
        );
        assert!(
            end.max_rel.is_finite() && end.max_rel < 0.4,
            "{}: {end:?}",
            l.name
        );
        assert!(
            alone.mean_rel > 0.0,
            "{}: exactly equal to f64 is not BF16",
            l.name
        );
    }
    // Each engine shows up where the block uses it.
    let busy = |name: &str, engine: &str| layer(&rtl, name).busy[engine];
    assert!(busy("scores + softmax", "GEMV") > 0);
    assert!(busy("q/k/v projections", "GEMM") > 0);
    assert!(busy("rmsnorm 1", "CVO") > 0);
    assert!(busy("MLP up + GELU", "CVO") > 0);
    // The golden model's timing alone gives the same cycles, layer by
    // layer (the RTL run checked every retire cycle against it).
    let golden = workload::run(&request(DutKind::Golden, None, "workload-golden")).unwrap();
    let cycles = |r: &WorkloadReport| r.layers.iter().map(|l| l.cycles).collect::<Vec<_>>();
    assert_eq!(cycles(&golden), cycles(&rtl));
    assert_eq!(golden.layers[0].error, rtl.layers[0].error);
}

#[test]
fn a_scale_one_ulp_off_in_the_reference_shows_in_the_error_table() {
    let request = request(DutKind::Golden, None, "workload-ulp");
    let right = workload::run(&request).unwrap();
    let off = workload::run_with_reference_model(&request, |m: &DecoderModel| {
        let mut m = m.clone();
        let s = &mut m.wo.scales[3];
        *s = Bf16(s.0 + 1);
        m
    })
    .unwrap();
    let at = LAYERS
        .iter()
        .position(|&l| l == "output projection")
        .unwrap();
    for (r, o) in right.layers.iter().zip(&off.layers).take(at) {
        assert_eq!(r.error, o.error, "{}", r.name);
        assert_eq!(r.error_alone, o.error_alone, "{}", r.name);
    }
    let (r, o) = (
        right.layers[at].error_alone.unwrap(),
        off.layers[at].error_alone.unwrap(),
    );
    assert_ne!(r.mean_rel, o.mean_rel, "one scale one ULP off did not show");
    // And it stays visible downstream, end to end.
    assert_ne!(right.layers[at + 1].error, off.layers[at + 1].error);
}

#[test]
fn a_wrong_weight_stream_in_the_rtl_shows_as_a_mismatch_with_its_repro() {
    for (stream, layer_name) in [(0, "q/k/v projections"), (1, "scores + softmax")] {
        let fault = Fault::WeightBeat {
            stream,
            index: 3,
            bit: 1,
        };
        let request = request(
            DutKind::Rtl,
            Some(fault),
            &format!("workload-fault-{stream}"),
        );
        let report = workload::run(&request).unwrap();
        assert_eq!(report.verdict, "mismatch");
        let failure = report.failure.as_ref().unwrap();
        assert_eq!(failure.layer, layer_name);
        // The layers before it ran and matched; nothing after it ran.
        let at = LAYERS.iter().position(|&l| l == layer_name).unwrap();
        assert_eq!(report.layers.len(), at + 1);
        assert!(report.layers.iter().all(|l| l.error.is_none()));
        // The repro holds the program with its host data and weights:
        // replayed on a correct RTL it matches, on the faulty one it fails
        // the same way.
        // (The fault is one only code can make, so the file names it but
        // cannot rebuild it: read the case without it.)
        let text = std::fs::read_to_string(failure.repro.as_ref().unwrap()).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["inject_fault"]["name"], "weight-beat");
        json["inject_fault"] = serde_json::Value::Null;
        let repro = Repro::from_json(&json).unwrap();
        assert!(!repro.case.host_patches.is_empty());
        assert!(!repro.case.weight_prefix[stream].is_empty());
        let (case, recorded) = repro.case_to_replay(false).unwrap();
        let clean = Setup::new(repro.setup.config, DutKind::Rtl, None);
        let outcome = run_case(
            &case,
            &mut *clean.open_reference(),
            &mut *clean.open_dut().unwrap(),
        )
        .unwrap();
        assert_eq!(outcome.first_mismatch, None);
        let outcome = run_case(
            &case,
            &mut *request.setup.open_reference(),
            &mut *request.setup.open_dut().unwrap(),
        )
        .unwrap();
        assert!(outcome.first_mismatch.unwrap().record().same_as(recorded));
    }
}

/// The command: its table, its JSON and its page; exit 0 when every
/// program matched, 1 when the DUT differed (with the failing layer's
/// artefacts named in both), as for a campaign.
#[test]
fn the_command_writes_its_table_json_and_page_and_exits_by_verdict() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("workload-cli");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |extra: &[&str], name: &str| {
        let json = dir.join(format!("{name}.json"));
        let page = dir.join(format!("{name}.html"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
            .args([
                "workload",
                "decoder-tiny",
                "--config",
                "tiny",
                "--no-shrink",
                "--out",
            ])
            .arg(dir.join(name))
            .arg("--json")
            .arg(&json)
            .arg("--report")
            .arg(&page)
            .args(extra)
            .output()
            .unwrap();
        let report: WorkloadReport =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let html = std::fs::read_to_string(&page).unwrap();
        (out, report, html)
    };
    let (out, report, html) = run(&[], "clean");
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for name in LAYERS {
        assert!(stdout.contains(name), "{name} missing from\n{stdout}");
    }
    assert_eq!(report.verdict, "ok");
    assert!(html.contains("id=\"workload\""));
    assert!(html.contains("id=\"plot-workload-cycles\""));
    assert!(html.contains("id=\"plot-workload-utilisation\""));
    assert!(html.contains("MLP up + GELU"));
    // `report --workload` makes the same section from the JSON, and names
    // the field of a damaged file.
    let bin = env!("CARGO_BIN_EXE_pccx-cosim");
    let page = dir.join("from-json.html");
    let out = std::process::Command::new(bin)
        .arg("report")
        .arg("--workload")
        .arg(dir.join("clean.json"))
        .arg("--out")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("id=\"plot-workload-cycles\""));
    let mut damaged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("clean.json")).unwrap()).unwrap();
    damaged["layers"][2]["cycles"] = "many".into();
    std::fs::write(dir.join("damaged.json"), damaged.to_string()).unwrap();
    let out = std::process::Command::new(bin)
        .arg("report")
        .arg("--workload")
        .arg(dir.join("damaged.json"))
        .arg("--out")
        .arg(dir.join("damaged.html"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("damaged.json: field `layers[2].cycles`"),
        "{stderr}"
    );

    let (out, report, html) = run(&["--inject-fault", "mat-data"], "fault");
    assert_eq!(out.status.code(), Some(1));
    let failure = report.failure.unwrap();
    assert_eq!(failure.layer, "q/k/v projections");
    assert!(failure.repro.as_ref().unwrap().is_file());
    assert!(failure.wave.as_ref().unwrap().is_file());
    assert!(html.contains("repro-tiny-seed"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAILED in q/k/v projections"));
}
