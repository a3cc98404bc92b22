//! Shrinking on the real RTL: a fault deep in a generated 40-instruction
//! program shrinks to a handful of instructions that still fail with the
//! same signature. The faults are keyed on what stays put while the program
//! shrinks (an L2 address, an error code), not on an event count.

use pccx_cosim::config::{self, HwConfig};
use pccx_cosim::env::faults::{Fault, Faulty};
use pccx_cosim::env::models;
use pccx_cosim::scoreboard::run_case;
use pccx_cosim::stimulus::{GenOptions, OpWeights, TestCase};
use pccx_cosim::triage::shrink::{shrink_against, ShrinkOptions, ShrinkResult};
use pccx_cosim::triage::signature::Signature;
use pccx_golden::asm::{format_program, Item};
use pccx_golden::model::{ErrorCode, Event, NpuModel};
use std::sync::mpsc;
use std::time::Duration;

fn tiny() -> HwConfig {
    config::by_name("tiny").unwrap()
}

fn faulty_rtl(config: HwConfig, fault: Fault) -> impl FnMut() -> Result<Box<dyn NpuModel>, String> {
    move || {
        let dut = models::open_dut(&config, models::DutKind::Rtl)?;
        Ok(Box::new(Faulty::boxed(dut, fault)) as Box<dyn NpuModel>)
    }
}

/// The events golden reports for `case`, with the sequence number of the
/// instruction each belongs to.
fn golden_events(config: &HwConfig, case: &TestCase) -> Vec<Event> {
    let mut g = models::open_reference(config);
    g.reset().unwrap();
    g.write_l2(0, &case.l2_image()).unwrap();
    g.write_host(0, &case.host_image()).unwrap();
    let mut events = Vec::new();
    for item in &case.program.items {
        match *item {
            Item::Instr(word) => {
                g.issue(word).unwrap();
            }
            Item::Idle(cycles) => g.idle(cycles).unwrap(),
            Item::RegWrite { offset, value } => {
                g.reg_write(offset, value).unwrap();
            }
        }
        events.extend(g.take_events());
    }
    g.drain().unwrap();
    events.extend(g.take_events());
    events
}

/// Shrinks `case` against `Faulty(rtl, fault)` (with the campaign's
/// reference), checks that the original
/// fails with `signature`, that the shrunk case still does on a fresh DUT
/// with the very mismatch the shrinker recorded, and returns the result.
fn shrink_and_check(
    config: HwConfig,
    case: &TestCase,
    fault: Fault,
    signature: &str,
) -> ShrinkResult {
    let mut make = faulty_rtl(config, fault);
    let mut reference = models::open_reference(&config);
    let original = run_case(case, &mut *reference, &mut *make().unwrap())
        .unwrap()
        .first_mismatch
        .expect("the fault is caught on the original program");
    assert_eq!(
        Signature::of(&original).to_string(),
        signature,
        "{original}"
    );
    let r = shrink_against(case, &mut *reference, &mut make, &ShrinkOptions::default()).unwrap();
    assert_eq!(r.signature.to_string(), signature);
    assert!(!r.exhausted, "the budget ran out after {} runs", r.runs);
    let again = run_case(&r.case, &mut *reference, &mut *make().unwrap())
        .unwrap()
        .first_mismatch
        .expect("the shrunk program still fails");
    assert_eq!(again, r.mismatch);
    assert_eq!(Signature::of(&again).to_string(), signature);
    assert_eq!(
        (r.case.l2_init_seed, r.case.host_init_seed),
        (case.l2_init_seed, case.host_init_seed),
        "same images"
    );
    eprintln!(
        "{fault:?}: {} -> {} in {} runs:\n{}",
        r.before,
        r.after,
        r.runs,
        format_program(&r.case.program)
    );
    r
}

/// Slice-1 programs (MEMSETs and copies only): the faults below are on
/// copies.
fn slice1(config: &HwConfig) -> GenOptions {
    GenOptions {
        weights: OpWeights::SLICE1,
        ..GenOptions::for_config(config, 40)
    }
}

/// The first L2 address, in a seed below 50, that only instructions with
/// sequence number 20 or later write.
fn deep_l2_write(config: &HwConfig, options: &GenOptions) -> (TestCase, u32) {
    for seed in 0..50 {
        let case = TestCase::generate(seed, options);
        let events = golden_events(config, &case);
        let first_writer = |addr: u32| {
            events.iter().find_map(|e| match *e {
                Event::L2Write { seq, addr: a, .. } if a == addr => Some(seq),
                _ => None,
            })
        };
        let deep = events.iter().find_map(|e| match *e {
            Event::L2Write { addr, .. } if first_writer(addr) >= Some(20) => Some(addr),
            _ => None,
        });
        if let Some(addr) = deep {
            return (case, addr);
        }
    }
    panic!("no seed below 50 writes an L2 word first at seq 20 or later");
}

#[test]
fn an_l2_data_fault_deep_in_a_program_shrinks_to_a_memset_and_a_copy() {
    let config = tiny();
    let (case, addr) = deep_l2_write(&config, &slice1(&config));
    let fault = Fault::L2DataAt { addr, bit: 77 };
    let r = shrink_and_check(config, &case, fault, "l2-writes/MEM/data");
    assert_eq!(r.before.instructions, 40);
    assert!(
        r.after.instructions <= 5,
        "{}",
        format_program(&r.case.program)
    );
    // At least a MEMSET for the shape and the copy that writes the address.
    assert!(r.after.instructions >= 2);
}

#[test]
fn an_error_code_fault_deep_in_a_program_shrinks_to_the_failing_copy() {
    let config = tiny();
    let options = slice1(&config);
    let range = ErrorCode::L2Range.bits();
    // A seed whose first L2_RANGE retire is deep in the program.
    let case = (0..100)
        .map(|seed| TestCase::generate(seed, &options))
        .find(|case| {
            let first = golden_events(&config, case).iter().find_map(|e| match *e {
                Event::Retire { seq, err, .. } if err == range => Some(seq),
                _ => None,
            });
            first >= Some(20)
        })
        .expect("a seed below 100 whose first L2_RANGE is at seq 20 or later");
    let fault = Fault::RetireErrIf {
        err: range,
        xor: 0x1,
    };
    let r = shrink_and_check(config, &case, fault, "retire-err/MEM/err");
    assert_eq!(r.before.instructions, 40);
    assert!(
        r.after.instructions <= 5,
        "{}",
        format_program(&r.case.program)
    );
}

/// Dropping an RTL model after others were made and dropped in the same
/// thread (as the shrinker does while the campaign's DUT lives) must not
/// hang: Verilator erases a model's scopes from the thread's current
/// context, which the shim sets to the model's own before destroying it.
#[test]
fn models_made_and_dropped_while_another_lives_drop_cleanly() {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let config = tiny();
        let first = models::open_dut(&config, models::DutKind::Rtl).unwrap();
        for _ in 0..3 {
            drop(models::open_dut(&config, models::DutKind::Rtl).unwrap());
        }
        drop(first);
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(30))
        .expect("dropping the first model hangs");
}

/// A fault keyed on a sequence number (the retire of seq 30) moves to
/// another instruction as the program shrinks, but the signature holds it to
/// one of the same engine: the shrunk program keeps exactly 31
/// instructions, the last one of the original's kind, and fails the same way.
#[test]
fn a_fault_keyed_on_a_sequence_number_keeps_its_signature() {
    let config = tiny();
    let case = TestCase::generate(2, &GenOptions::for_config(&config, 40));
    let fault = Fault::RetireErr { nth: 30, xor: 0x4 };
    let mut reference = models::open_reference(&config);
    let original = run_case(
        &case,
        &mut *reference,
        &mut *faulty_rtl(config, fault)().unwrap(),
    )
    .unwrap()
    .first_mismatch
    .unwrap();
    let signature = Signature::of(&original).to_string();
    let r = shrink_and_check(config, &case, fault, &signature);
    assert_eq!(
        r.after.instructions,
        31,
        "{}",
        format_program(&r.case.program)
    );
    assert_eq!(r.mismatch.seq, Some(30));
}
