//! The session layer driven without the command line: a campaign request
//! built in code runs, journals, fails on an injected fault with exit
//! status 1, and resumes a directory cut short to the same records.

use crate::support;

use pccx_cosim::env::faults::Fault;
use pccx_cosim::env::models::DutKind;
use pccx_cosim::regress::identity::{InitialState, IoMode, RunIdentity};
use pccx_cosim::session::campaign::{self, CampaignEnd, CampaignRequest};
use pccx_golden::model::Observation;
use serde_json::Value;
use std::path::Path;
use support::scratch;

fn identity(fault: Option<Fault>) -> RunIdentity {
    RunIdentity {
        config: "tiny".into(),
        first_seed: 7,
        count: 8,
        instrs: 20,
        io: IoMode::Stall,
        timing: None,
        dut: DutKind::Rtl,
        inject_fault: fault,
        initial_state: InitialState::Random,
        steer: false,
        observe: Observation::Full,
        dut_manifest: None,
        numerics: Default::default(),
    }
}

/// The records of `dir`, wall times dropped, in seed order.
fn records(dir: &Path) -> Vec<Value> {
    let mut out: Vec<Value> = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("wall_seconds");
            v
        })
        .collect();
    out.sort_by_key(|v| v["seed"].as_u64());
    out
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_request_runs_fails_on_a_fault_and_resumes_without_clap() {
    let dir = scratch("session");
    let whole = dir.join("whole");
    let request = CampaignRequest {
        out: Some(whole.clone()),
        jobs: Some(2),
        ..CampaignRequest::new(identity(None))
    };
    assert_eq!(campaign::run(&request), Ok(CampaignEnd::Matched));
    let all = records(&whole);
    assert_eq!(all.len(), 8);

    // The same seeds with a fault: the exit decision is the session's.
    let faulty = CampaignRequest {
        out: Some(dir.join("faulty")),
        no_shrink: true,
        wave_window: 0,
        ..CampaignRequest::new(identity(Fault::by_name("l2-data")))
    };
    let end = campaign::run(&faulty).unwrap();
    assert_eq!(end, CampaignEnd::Failed);
    assert_eq!(end.exit_code(), 1);

    // Cut to three records, resumed: the whole run's records again.
    let results = whole.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let kept: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(&results, kept).unwrap();
    let resume = CampaignRequest {
        resume: true,
        ..request.clone()
    };
    assert_eq!(campaign::run(&resume), Ok(CampaignEnd::Matched));
    assert_eq!(records(&whole), all);

    // A resume that would change what the seeds do is refused by name.
    let other = CampaignRequest {
        resume: true,
        out: Some(whole.clone()),
        ..CampaignRequest::new(RunIdentity {
            instrs: 21,
            ..identity(None)
        })
    };
    let err = campaign::run(&other).unwrap_err();
    assert!(err.contains("instrs"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
