//! Directed RTL-vs-golden tests: every MEMSET and MEMCPY case, every error,
//! the status register, back-pressure and the ordering rules. Each program
//! runs on the golden model and the Verilated RTL under the scoreboard,
//! which compares every instruction's writes and retire and then all state.
//! Where a case is about timing behaviour (back-pressure, out-of-order
//! retire), the test also checks that the behaviour really happened.

use crate::common;

use common::must_match;

// ---- MEMSET ----------------------------------------------------------------

#[test]
fn memset_both_tables_every_entry_edge() {
    must_match(
        "kv260",
        "memset fmap[0] = (1, 2, 3)
         memset fmap[63] = (0xFFFF, 0xFFFF, 0xFFFF)
         memset weight[0] = (4, 5, 6)
         memset weight[63] = (7, 8, 9) rsvd=0xF
         memset fmap[0] = (0, 0, 0)",
    );
}

#[test]
fn memset_illegal_dest_cache() {
    must_match(
        "kv260",
        ".word 0x3830001000100090   ; dest_cache 2
         .word 0x3C30001000100090   ; dest_cache 3
         memset fmap[3] = (1, 1, 9)",
    );
}

// ---- MEMCPY, the three directions --------------------------------------------

#[test]
fn memcpy_host_to_l2_and_back() {
    must_match(
        "kv260",
        "memset fmap[3] = (1, 1, 9)          ; 9 elements -> 2 words
         memcpy l2[100] <- host[0], shape=3
         memcpy host[500] <- l2[100], shape=3
         memset fmap[4] = (4, 4, 4)          ; 64 elements -> 8 words
         memcpy l2[200] <- host[17], shape=4, async, aux=0x1FFFF
         memcpy host[9] <- l2[200], shape=4, async",
    );
}

#[test]
fn memcpy_l2_to_l2_overlapping_both_directions() {
    must_match(
        "kv260",
        "memset fmap[1] = (10, 8, 1)         ; 10 words
         memcpy l2[1000] <- l2[1004], shape=1   ; dest < src, overlapping
         memcpy l2[2004] <- l2[2000], shape=1   ; dest > src, overlapping
         memcpy l2[3000] <- l2[3000], shape=1   ; dest == src
         memcpy l2[4000] <- l2[4009], shape=1   ; one word of overlap
         memcpy l2[5009] <- l2[5000], shape=1, async",
    );
}

#[test]
fn memcpy_lengths_round_up_and_zero() {
    must_match(
        "kv260",
        "memset fmap[1] = (1, 1, 1)          ; 1 element -> 1 word
         memset fmap[2] = (3, 3, 1)          ; 9 -> 2 words
         memset fmap[3] = (0, 5, 5)          ; zero -> no effect
         memset fmap[4] = (8, 1, 1)          ; exactly 1 word
         memcpy l2[10] <- host[0], shape=1
         memcpy l2[20] <- host[0], shape=2
         memcpy l2[30] <- host[0], shape=3
         memcpy l2[40] <- host[0], shape=4
         memcpy host[100] <- l2[10], shape=2
         memcpy l2[50] <- l2[10], shape=3",
    );
}

#[test]
fn memcpy_zero_length_never_out_of_range() {
    must_match(
        "tiny",
        "memset fmap[3] = (0, 0, 0)
         memcpy l2[131071] <- host[131071], shape=3
         memcpy host[131071] <- l2[131071], shape=3
         memcpy l2[131071] <- l2[131071], shape=3",
    );
}

// ---- range errors, at and past the edges ---------------------------------------

#[test]
fn memcpy_l2_edge_kv260() {
    // kv260 L2 is 114,688 words: 114,680 + 8 ends exactly at the edge.
    must_match(
        "kv260",
        "memset fmap[1] = (8, 8, 1)          ; 8 words
         memcpy l2[114680] <- host[0], shape=1   ; in range, at the edge
         memcpy l2[114681] <- host[0], shape=1   ; one past: L2_RANGE
         memcpy host[0] <- l2[114681], shape=1   ; source one past: L2_RANGE
         memcpy host[1] <- l2[114680], shape=1
         memcpy l2[114681] <- l2[0], shape=1
         memcpy l2[0] <- l2[114681], shape=1
         memcpy l2[120000] <- host[0], shape=1   ; address past L2 inside 17 bits",
    );
}

#[test]
fn memcpy_host_edge_and_check_order() {
    must_match(
        "tiny",
        "memset fmap[1] = (8, 8, 1)          ; 8 words
         memcpy l2[0] <- host[131064], shape=1   ; host source at the edge
         memcpy l2[0] <- host[131065], shape=1   ; HOST_RANGE
         memcpy host[131064] <- l2[8], shape=1   ; host destination at the edge
         memcpy host[131065] <- l2[8], shape=1   ; HOST_RANGE
         memcpy l2[4090] <- host[131065], shape=1 ; both bad: source first (HOST)
         memcpy host[131065] <- l2[4090], shape=1 ; both bad: source first (L2)
         memset fmap[2] = (0xFFFF, 0xFFFF, 0xFFFF) ; 2^45 words
         memcpy l2[0] <- host[0], shape=2
         memcpy host[0] <- l2[0], shape=2
         memcpy l2[0] <- l2[0], shape=2",
    );
}

// ---- decode errors, and every engine in one program -----------------------------

#[test]
fn illegal_encodings_all_kinds() {
    must_match(
        "kv260",
        ".word 0x5000000000000000
         .word 0x6123456789ABCDEF
         .word 0xFFFFFFFFFFFFFFFF
         .word 0x4800000000000000   ; cvo_func 8
         .word 0x4F00000000000001   ; cvo_func F
         .word 0x2C00000000000006   ; memcpy host -> host
         memset fmap[1] = (1, 1, 1)",
    );
}

/// The program that once showed the placeholders: GEMV with findemax, GEMM,
/// then CVOs reading the GEMV's output and its e_max.
#[test]
fn compute_engines_in_one_program() {
    must_match(
        "kv260",
        "memset fmap[1] = (1, 16, 1)
         memset weight[2] = (16, 8, 1)
         gemv l2[100] <- l2[0], fmap=1, weight=2, lanes=0, findemax
         gemm l2[200] <- l2[0], fmap=1, weight=2, lanes=31, accm, w_scale
         cvo.exp l2[300] <- l2[100], len=8, sub_emax
         cvo.reduce_sum l2[301] <- l2[100], len=64, async
         cvo.scale l2[302] <- l2[100], len=0",
    );
}

/// CVO's edges on every configuration's core count: lengths 1, 7, 8, 9 and
/// 0; a REDUCE_SUM that ends mid-word; in place, shifted up (descending
/// walk) and down; SCALE in place over its own scalar word; ranges that end
/// exactly at the last word of L2 and one word past it (source first, then
/// destination).
#[test]
fn cvo_edges_on_every_core_count() {
    for cfg in ["tiny", "small", "kv260"] {
        let last = common::config(cfg).l2_words - 1;
        must_match(
            cfg,
            &format!(
                "cvo.sin l2[10] <- l2[0], len=1
                 cvo.cos l2[20] <- l2[0], len=7, accm
                 cvo.gelu l2[30] <- l2[0], len=8, sub_emax, async
                 cvo.sqrt l2[40] <- l2[0], len=9, accm, sub_emax
                 cvo.recip l2[50] <- l2[0], len=0
                 cvo.reduce_sum l2[60] <- l2[0], len=13, accm
                 cvo.exp l2[70] <- l2[70], len=20
                 cvo.exp l2[81] <- l2[80], len=24, accm
                 cvo.recip l2[89] <- l2[90], len=24
                 cvo.scale l2[100] <- l2[100], len=16, recip_scale
                 cvo.scale l2[110] <- l2[111], len=16, async
                 cvo.sin l2[0] <- l2[{last}], len=9
                 cvo.sin l2[{last}] <- l2[0], len=9
                 cvo.reduce_sum l2[{last}] <- l2[0], len=9
                 cvo.scale l2[0] <- l2[{s}], len=8
                 cvo.scale l2[0] <- l2[{last}], len=8",
                s = last - 1
            ),
        );
    }
}

// ---- status and register map -------------------------------------------------------

#[test]
fn status_err_first_error_and_clear() {
    must_match(
        "kv260",
        "memset fmap[1] = (8, 8, 1)
         memcpy l2[114681] <- host[0], shape=1   ; L2_RANGE (first error)
         .word 0x5000000000000000                ; ILLEGAL_OPCODE (second)
         memcpy l2[0] <- host[0], shape=1        ; ok: DONE after this one
         .write 0x08, 0x0                        ; clear
         .write 0x08, 0xFFFFFFFF                 ; clear again, any value
         memcpy l2[0] <- host[131070], shape=1   ; HOST_RANGE after the clear
         memcpy l2[8] <- host[0], shape=1",
    );
}

#[test]
fn register_map_slverr_and_holds() {
    must_match(
        "kv260",
        ".write 0x0C, 5      ; read-only: SLVERR
         .write 0x10, 1      ; unmapped: SLVERR
         .write 0x02, 1      ; unaligned: SLVERR
         .write 0xFFC, 1
         .write 0x00, 0x12345678
         memset fmap[1] = (1, 1, 1)",
    );
}

// ---- ordering: hazards, barriers, unresolved footprints ------------------------------

#[test]
fn hazards_raw_war_waw_on_l2_and_host() {
    let (_, rtl) = must_match(
        "kv260",
        "memset fmap[1] = (64, 8, 1)          ; 64 words
         memset fmap[2] = (8, 1, 1)           ; 1 word
         memcpy l2[1000] <- host[0], shape=1, async      ; long write of L2 1000..1064
         memcpy host[5000] <- l2[1063], shape=2, async   ; RAW on L2 1063
         memcpy l2[1063] <- host[7], shape=2, async      ; WAR on L2 1063, WAW with the first
         memcpy host[5000] <- l2[3], shape=2, async      ; WAW on host 5000
         memcpy l2[2000] <- host[5000], shape=2, async   ; RAW on host 5000
         memset fmap[3] = (1, 1, 1)                      ; independent: may finish early
         memcpy host[9000] <- l2[1000], shape=1, async   ; RAW on the whole first range",
    );
    // The decoupled engines really overlapped: the independent MEMSET (seq 7)
    // retired before older MEMCPYs.
    let log = rtl.retire_log();
    let pos = |seq| log.iter().position(|&(s, _)| s == seq).unwrap();
    assert!(
        pos(7) < pos(2),
        "MEMSET seq 7 should overtake MEMCPY seq 2: {log:?}"
    );
}

#[test]
fn table_hazards_and_unresolved_footprints() {
    must_match(
        "kv260",
        "memset fmap[1] = (100, 8, 1)                     ; 100 words
         memcpy l2[0] <- host[0], shape=1, async          ; reads fmap[1]
         memset fmap[1] = (2, 8, 1)                       ; WAR on fmap[1]: waits
         memcpy l2[50] <- host[300], shape=1, async       ; unresolved at latch
         memcpy host[600] <- l2[0], shape=1, async        ; must see both copies
         memset fmap[1] = (3, 8, 1)
         memset fmap[1] = (4, 8, 1)                       ; WAW on fmap[1]
         memcpy host[700] <- l2[0], shape=1, async",
    );
}

#[test]
fn sync_barrier_orders_independent_work() {
    let (_, rtl) = must_match(
        "kv260",
        "memset fmap[1] = (64, 8, 1)
         memcpy l2[0] <- host[0], shape=1, async     ; seq 1, long
         memcpy l2[500] <- host[500], shape=1        ; seq 2, sync: a barrier
         memset fmap[9] = (1, 1, 1)                  ; seq 3, independent",
    );
    let log = rtl.retire_log();
    let cycle = |seq| log.iter().find(|&&(s, _)| s == seq).unwrap().1;
    assert!(
        cycle(1) < cycle(2) && cycle(2) < cycle(3),
        "barrier order broken: {log:?}"
    );
}

// ---- back-pressure ------------------------------------------------------------------

fn burst(n: usize, line: &str) -> String {
    (0..n).map(|_| format!("{line}\n")).collect()
}

#[test]
fn full_mem_fifo_back_pressures_and_loses_nothing() {
    for (config, depth) in [("kv260", 8usize), ("tiny", 2)] {
        let mut program = String::from("memset fmap[1] = (200, 8, 1)\n");
        // Each copy is 200 words long: the FIFO fills while the first runs.
        for i in 0..(2 * depth + 3) {
            program.push_str(&format!(
                "memcpy l2[{}] <- host[{}], shape=1, async\n",
                200 * i,
                7 * i
            ));
        }
        let (outcome, rtl) = must_match(config, &program);
        assert_eq!(outcome.instructions as usize, 2 * depth + 4);
        assert!(
            rtl.longest_response_wait() > 100,
            "{config}: the write response never waited ({} cycles): no back-pressure",
            rtl.longest_response_wait()
        );
    }
}

#[test]
fn full_memset_fifo_behind_a_barrier() {
    // A sync copy holds every younger instruction; MEMSETs pile up behind it.
    let mut program =
        String::from("memset fmap[1] = (100, 8, 1)\nmemcpy l2[0] <- host[0], shape=1\n");
    program.push_str(&burst(12, "memset weight[5] = (1, 2, 3)"));
    program.push_str("memcpy host[0] <- l2[0], shape=1, async\n");
    let (_, rtl) = must_match("tiny", &program);
    assert!(
        rtl.longest_response_wait() > 50,
        "no back-pressure on the MEMSET FIFO"
    );
}

// ---- the public pccx project's own smoke program ------------------------------------

/// The seven words of `shared/vectors/upstream-smoke-program.jsonl`, run as a
/// program. Skipped with
/// a notice when the file is not there.
#[test]
fn upstream_smoke_program() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/vectors/upstream-smoke-program.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipped: {} is not present", path.display());
        return;
    };
    let mut program = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        program.push_str(&format!(".word {}\n", v["word"].as_str().expect("a word")));
    }
    must_match("kv260", &program);
}

// ---- a hanging RTL is reported as such --------------------------------------------------

/// Issues every instruction of an assembler program (a test's own text:
/// it must parse).
fn issue_program(
    model: &mut dyn pccx_golden::model::NpuModel,
    text: &str,
) -> Result<(), pccx_golden::model::ModelError> {
    let program = pccx_golden::asm::parse_program(text).expect("a valid test program");
    for item in &program.items {
        if let pccx_golden::asm::Item::Instr(word) = item {
            model.issue(*word)?;
        }
    }
    Ok(())
}

/// A host port that is never ready starves the MEM dispatcher: the drain
/// must end with a watchdog error that says what it waited for, not hang.
#[test]
fn a_starved_copy_trips_the_watchdog() {
    use pccx_cosim::rtl::{HostTiming, RtlModel, StallSchedule};
    use pccx_golden::model::{ModelError, NpuModel};
    let never_ready = HostTiming {
        latency: 4,
        stall: Some(StallSchedule {
            seed: 1,
            not_ready_pct: 100,
            max_extra_latency: 0,
        }),
    };
    let mut rtl = RtlModel::open(common::config("tiny"), never_ready).expect("RTL model");
    rtl.set_watchdog(5_000);
    issue_program(
        &mut rtl,
        "memset fmap[1] = (8, 1, 1)\nmemcpy l2[0] <- host[0], shape=1",
    )
    .expect("issuing does not wait for the copy");
    match rtl.drain() {
        Err(ModelError::Watchdog { what, cycles }) => {
            assert!(cycles >= 5_000, "{cycles}");
            assert!(
                what.contains("draining") && what.contains("2 latched, 1 retired"),
                "{what}"
            );
        }
        other => panic!("expected a watchdog error, got {other:?}"),
    }
}

/// An engine that keeps taking weight beats without retiring hangs even
/// though beats move: beats past the per-instruction cap are not progress.
/// With the cap lowered to 2 beats, a GEMV that needs 64 (K = 64, one tile)
/// looks exactly like such a runaway, and the watchdog must report it; with
/// the default cap (the architectural maximum) it retires.
#[test]
fn beats_past_the_cap_are_not_progress() {
    use pccx_cosim::rtl::{HostTiming, RtlModel};
    use pccx_golden::model::{ModelError, NpuModel};
    const PROGRAM: &str = "memset fmap[1] = (1, 64, 1)
         memset weight[2] = (64, 8, 1)
         gemv l2[100] <- l2[0], fmap=1, weight=2, lanes=0";
    let run = |cap: Option<u64>| -> Result<(), ModelError> {
        let mut rtl = RtlModel::open(common::config("tiny"), HostTiming::default()).expect("RTL");
        rtl.set_watchdog(20);
        if let Some(cap) = cap {
            rtl.set_beat_progress_cap(cap);
        }
        rtl.reset()?;
        issue_program(&mut rtl, PROGRAM)?;
        rtl.drain()
    };
    run(None).expect("with the default cap the GEMV retires");
    match run(Some(2)) {
        Err(ModelError::Watchdog { what, .. }) => assert!(what.contains("draining"), "{what}"),
        other => panic!("expected a watchdog error, got {other:?}"),
    }
}

/// A drain past its deadline is a hang even while the engine shows activity
/// (here a GEMV that keeps taking beats): the scoreboard sets the deadline
/// from a timed reference's retire cycles (DEADLINE_FACTOR).
#[test]
fn a_drain_past_its_deadline_is_a_hang() {
    use pccx_cosim::rtl::{HostTiming, RtlModel};
    use pccx_golden::model::{Clocked, ModelError, NpuModel};
    const PROGRAM: &str = "memset fmap[1] = (1, 512, 1)
         memset weight[2] = (512, 64, 1)
         gemv l2[100] <- l2[0], fmap=1, weight=2, lanes=0";
    let run = |deadline: Option<u64>| -> Result<(), ModelError> {
        let mut rtl = RtlModel::open(common::config("tiny"), HostTiming::default()).expect("RTL");
        rtl.reset()?;
        issue_program(&mut rtl, PROGRAM)?;
        rtl.set_wait_deadline(deadline);
        rtl.drain()
    };
    run(None).expect("without a deadline the GEMV retires");
    match run(Some(100)) {
        Err(ModelError::Watchdog { what, .. }) => assert!(what.contains("deadline"), "{what}"),
        other => panic!("expected a watchdog error, got {other:?}"),
    }
}

// ---- the mutation battery's directed cases ---------------------------------

/// `mutate`'s directed cases (stimulus/directed.rs) match on every linked
/// configuration, with exact timing: a findemax over +0 and -0, the
/// program whose retires fill every cycle between two latches, and GEMV/GEMM
/// behind a copy into their last activation word. They kill
/// mutants only because the RTL as written passes them; the retire streak
/// itself is checked on the golden model's timing by the unit tests.
#[test]
fn mutation_directed_cases_match_on_every_configuration() {
    use pccx_cosim::scoreboard::{run_case_with, TimingMode};
    use pccx_cosim::stimulus::{directed, GenOptions};
    for name in ["tiny", "small", "kv260"] {
        let cfg = common::config(name);
        let cases = directed::cases(&cfg, &GenOptions::for_config(&cfg, 0))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cases.len(), 3);
        for case in &cases {
            let (mut reference, mut dut) = (common::golden(&cfg), common::rtl(&cfg));
            let outcome = run_case_with(case, &mut reference, &mut dut, TimingMode::Exact)
                .expect("no infrastructure error");
            if let Some(m) = &outcome.first_mismatch {
                panic!("{name}: RTL and golden differ on a directed case:\n{m}");
            }
        }
    }
}
