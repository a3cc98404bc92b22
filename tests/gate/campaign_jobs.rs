//! A campaign on several workers reports what one worker reports, and a
//! campaign's models, reused from seed to seed with only each seed's
//! changes loaded, start every seed from exactly its images
//! (regress/campaign.rs, scoreboard/resident.rs).

use pccx_cosim::config;
use pccx_cosim::env::faults::{Fault, Faulty};
use pccx_cosim::env::models::{self, DutKind};
use pccx_cosim::regress::campaign::{self, CampaignOptions, CampaignReport, Worker};
use pccx_cosim::scoreboard::Resident;
use pccx_cosim::stimulus::{GenOptions, TestCase};
use pccx_golden::asm::Item;
use pccx_golden::model::{Event, NpuModel};
use std::time::Duration;

struct Pair {
    reference: Box<dyn NpuModel>,
    dut: Box<dyn NpuModel>,
}

impl Worker for Pair {
    type Done = ();
    fn models(&mut self) -> (&mut dyn NpuModel, &mut dyn NpuModel) {
        (&mut *self.reference, &mut *self.dut)
    }
    fn finish(self) {}
}

fn options(config: &str, count: u64) -> CampaignOptions {
    CampaignOptions {
        first_seed: 11,
        count,
        instrs: 30,
        config: config::by_name(config).expect("a configuration"),
        stall_io: false,
        timing: None,
        shard: None,
        skip: Default::default(),
        random_init: true,
        steer: false,
        curve: false,
    }
}

/// The report with wall times cleared: the one field workers may change.
fn without_wall(mut r: CampaignReport) -> CampaignReport {
    for s in &mut r.results {
        s.wall = Duration::ZERO;
    }
    r.summary.wall = Duration::ZERO;
    r
}

fn run(
    options: &CampaignOptions,
    jobs: usize,
    dut: DutKind,
    fault: Option<Fault>,
) -> CampaignReport {
    let make = |_: usize| -> Result<Pair, String> {
        let dut = models::open_dut(&options.config, dut)?;
        Ok(Pair {
            reference: models::open_reference(&options.config),
            dut: match fault {
                Some(f) => Box::new(Faulty::boxed(dut, f)),
                None => dut,
            },
        })
    };
    let mut order = Vec::new();
    let (report, _) =
        campaign::run_campaign_jobs(options, jobs, &make, &mut |r| order.push(r.seed));
    let seeds: Vec<u64> = options.seeds().collect();
    assert_eq!(
        order,
        seeds[..order.len()],
        "results are reported in seed order"
    );
    without_wall(report)
}

/// A fault that hits some seeds and not others (a data bit of a seed's
/// 60th L2 write: only seeds that write that much), so that the workers
/// mix matched and mismatched seeds, and the resident state is dropped and
/// rebuilt.
fn l2_data_fault() -> Fault {
    Fault::L2Data { nth: 60, bit: 5 }
}

#[test]
fn several_workers_report_what_one_reports() {
    let dut = if models::HAS_RTL {
        DutKind::Rtl
    } else {
        DutKind::Golden
    };
    let opts = options("tiny", 24);
    for fault in [None, Some(l2_data_fault())] {
        let one = run(&opts, 1, dut, fault);
        assert_eq!(one.results.len(), 24);
        if fault.is_some() {
            let mismatched = one.summary.mismatched;
            assert!(
                mismatched > 0 && mismatched < 24,
                "{mismatched} of 24 mismatched"
            );
        }
        for jobs in [2, 3] {
            assert_eq!(
                run(&opts, jobs, dut, fault),
                one,
                "--jobs {jobs}, fault {fault:?}"
            );
        }
    }
}

#[test]
fn a_worker_that_cannot_be_made_stops_the_campaign_before_its_first_seed() {
    let opts = options("tiny", 5);
    let make = |k: usize| -> Result<Pair, String> {
        if k == 1 {
            return Err("no model for worker 1".into());
        }
        Ok(Pair {
            reference: models::open_reference(&opts.config),
            dut: models::open_reference(&opts.config),
        })
    };
    let (report, _) = campaign::run_campaign_jobs(&opts, 2, &make, &mut |_| {});
    assert!(report.results.is_empty());
    let stopped = report.summary.stopped.expect("stopped");
    assert_eq!(
        (stopped.seed, stopped.message.as_str()),
        (11, "no model for worker 1")
    );
}

/// Runs `case` on `m` as a campaign's DUT would be driven, returning the
/// word addresses it wrote (L2, host).
fn drive(m: &mut dyn NpuModel, case: &TestCase) -> (Vec<u32>, Vec<u32>) {
    let (mut l2, mut host) = (Vec::new(), Vec::new());
    for item in &case.program.items {
        match *item {
            Item::Instr(w) => {
                m.issue(w).unwrap();
            }
            Item::Idle(n) => m.idle(n).unwrap(),
            Item::RegWrite { offset, value } => {
                m.reg_write(offset, value).unwrap();
            }
        }
    }
    m.drain().unwrap();
    for e in m.take_events() {
        match e {
            Event::L2Write { addr, .. } => l2.push(addr),
            Event::HostWrite { addr, .. } => host.push(addr),
            _ => {}
        }
    }
    (l2, host)
}

/// Loads `case` into `m` as the campaign does, and says whether every word
/// of both memories is then the case's image.
fn loads_exactly(m: &mut dyn NpuModel, resident: &Resident, case: &TestCase) -> bool {
    m.set_weight_source(case.weight_source());
    m.reset().unwrap();
    match resident.changes(case) {
        Some(changes) => changes.apply(m).unwrap(),
        None => {
            m.write_l2(0, &case.l2_image()).unwrap();
            m.write_host(0, &case.host_image()).unwrap();
        }
    }
    m.take_events();
    let mut l2 = vec![0; case.options.l2_words as usize];
    let mut host = vec![0; pccx_golden::model::HOST_WORDS as usize];
    m.read_l2(0, &mut l2).unwrap();
    m.read_host(0, &mut host).unwrap();
    l2 == case.l2_image() && host == case.host_image()
}

#[test]
fn reused_models_start_every_seed_from_exactly_its_images() {
    let cfg = config::by_name("tiny").unwrap();
    let gen = GenOptions::for_config(&cfg, 40);
    let mut kinds = vec![DutKind::Golden];
    if models::HAS_RTL {
        kinds.push(DutKind::Rtl);
    }
    for kind in kinds {
        let mut m = models::open_dut(&cfg, kind).unwrap();
        let mut resident = Resident::new();
        let mut incremental = 0;
        for seed in 1..=25 {
            let case = TestCase::generate(seed, &gen);
            incremental += usize::from(resident.is_known_for(&case));
            assert!(
                loads_exactly(&mut *m, &resident, &case),
                "{kind:?} seed {seed}"
            );
            let (l2, host) = drive(&mut *m, &case);
            resident.matched(&case, l2, host);
        }
        assert_eq!(
            incremental, 24,
            "every seed after the first loads only its changes"
        );

        // The check fires: a word changed behind the state's back (as a
        // model writing without reporting it would) is seen by the next
        // seed whose windows do not cover it.
        let found = (26..=50).any(|seed| {
            let case = TestCase::generate(seed, &gen);
            let exact = loads_exactly(&mut *m, &resident, &case);
            let (l2, host) = drive(&mut *m, &case);
            let mut w = [0];
            m.read_l2(0, &mut w).unwrap();
            m.write_l2(0, &[w[0] ^ 1]).unwrap();
            resident.matched(&case, l2, host);
            !exact
        });
        assert!(
            found,
            "{kind:?}: a word changed behind the state went unnoticed"
        );
    }
}
