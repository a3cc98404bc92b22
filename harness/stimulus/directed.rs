//! Directed cases for states neither random nor steered programs reach:
//! a findemax over +0 and -0, an engine retire in every cycle between two
//! latches, and GEMV/GEMM that wait for a write to their last activation
//! word (docs/mutation.md, "The directed cases").
//!
//! `mutate` runs them after the CVO sweep on every mutant still alive; the
//! campaign does not (they are not random, and a seed cannot name them).

use super::{GenOptions, Preload, Rng, TestCase};
use crate::config::HwConfig;
use pccx_golden::asm::{parse_program, Item};
use pccx_golden::model::{Event, ModelError, NpuModel, ShapeEntry, ShapeTable};
use pccx_golden::numerics::{w4a8, Bf16};
use pccx_golden::{Golden, GoldenConfig};
use std::collections::{BTreeSet, HashMap};

/// The seeds of the directed cases (their images and initial state), apart
/// from the random seeds (from 1) and the steered ones (from 2^32).
pub const FIRST_SEED: u64 = 1 << 40;

/// Candidates the retire-streak search tries before it gives up. Every
/// shipped configuration finds one within a few hundred
/// (`directed::tests`).
const STREAK_TRIES: u64 = 20_000;

/// The directed cases for `config`, in the order `mutate` runs them.
///
/// Fails only when the retire-streak search finds no program for the
/// configuration, which the unit tests rule out for every shipped one.
pub fn cases(config: &HwConfig, options: &GenOptions) -> Result<Vec<TestCase>, String> {
    Ok(vec![
        signed_zero_emax(options, FIRST_SEED),
        retire_streak(config, options, FIRST_SEED + 1)?,
        activation_tail_hazard(options, FIRST_SEED + 2),
    ])
}

/// A GEMV and a GEMM with findemax and `w_scale` over zero activations,
/// their column scales alternating -1 and +1: every output is -0 or +0, so
/// e_max must be +0 (findemax orders -0 below +0, docs/semantics.md). A
/// random program multiplies a zero sum by a negative scale next to one
/// multiplied by a positive scale, with nothing larger, almost never.
pub fn signed_zero_emax(options: &GenOptions, seed: u64) -> TestCase {
    const K: usize = 16;
    const N: usize = 16;
    let program = parse_program(
        "gemv l2[64] <- l2[16], fmap=1, weight=1, findemax, w_scale\n\
         gemm l2[96] <- l2[32], fmap=2, weight=1, findemax, w_scale\n",
    )
    .expect("the signed-zero program assembles");
    let mut case = TestCase::directed(seed, options, program);
    // Activations: one word for the GEMV (1 x 16 INT8), two for the GEMM.
    case.l2_patches = vec![(16, vec![0]), (32, vec![0, 0])];
    let weights: Vec<i8> = (0..K * N).map(|i| (i % 15) as i8 - 7).collect();
    let scales: Vec<Bf16> = (0..N)
        .map(|n| if n % 2 == 0 { Bf16(0xBF80) } else { Bf16::ONE })
        .collect();
    let beats =
        w4a8::weight_beats(K, N, &weights, Some(&scales)).expect("a 16 x 16 weight block packs");
    case.weight_prefix = [beats.clone(), beats];
    case.preload = Preload {
        tables: vec![
            (ShapeTable::Fmap, 1, entry(1, K as u16, 0)),
            (ShapeTable::Fmap, 2, entry(2, K as u16, 0)),
            (ShapeTable::Weight, 1, entry(K as u16, N as u16, 0)),
        ],
        e_max: None,
    };
    case
}

/// A GEMV and a GEMM of K = 32 (two activation words a row), each after
/// an async MEMCPY that writes the last word they read (the GEMM's second
/// row's second word): the RAW hazard must hold them until the copy
/// retires. A random program seldom has a copy in flight into exactly
/// the upper half of an operand, so a read footprint half as long as the
/// operand went unseen on two configurations.
pub fn activation_tail_hazard(options: &GenOptions, seed: u64) -> TestCase {
    let program = parse_program(
        "memcpy l2[513] <- host[0], shape=1, async\n\
         gemv l2[600] <- l2[512], fmap=2, weight=2\n\
         memcpy l2[523] <- host[8], shape=1, async\n\
         gemm l2[640] <- l2[520], fmap=3, weight=2\n",
    )
    .expect("the activation-hazard program assembles");
    let mut case = TestCase::directed(seed, options, program);
    case.preload = Preload {
        tables: vec![
            (ShapeTable::Fmap, 1, entry(1, 1, 8)),
            (ShapeTable::Fmap, 2, entry(1, 32, 0)),
            (ShapeTable::Fmap, 3, entry(2, 32, 0)),
            (ShapeTable::Weight, 2, entry(32, 8, 0)),
        ],
        e_max: None,
    };
    case
}

fn entry(a: u16, b: u16, c: u16) -> ShapeEntry {
    ShapeEntry { a, b, c }
}

/// Two consecutive latches of legal instructions with an engine retire in
/// every cycle between them, while the first one still waits in its FIFO
/// at the second: the scheduler's free-slot register, recomputed in latch
/// and retire cycles, must then have moved on from the first's slot, or
/// the second's word takes that slot and the first starts as the second
/// (a wrong result, which the scoreboard sees, not only an assertion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streak {
    pub first_latch: u64,
    pub second_latch: u64,
}

/// The first [`Streak`] in a timed model's events, if any.
pub fn find_streak(events: &[Event]) -> Option<Streak> {
    let mut latched: HashMap<u32, u64> = HashMap::new();
    let mut retired: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut engine_retires = BTreeSet::new();
    for event in events {
        match *event {
            Event::Latch {
                seq,
                cycle: Some(c),
                ..
            } => {
                latched.insert(seq, c);
            }
            // An illegal word retires from the decoder (no start): it
            // takes no slot, and its retire is not an engine's.
            Event::Retire {
                seq,
                cycle: Some(c),
                start: Some(start),
                ..
            } => {
                retired.insert(seq, (start, c));
                engine_retires.insert(c);
            }
            _ => {}
        }
    }
    let mut legal: Vec<(u64, u32)> = latched
        .iter()
        .filter(|(seq, _)| retired.contains_key(seq))
        .map(|(&seq, &cycle)| (cycle, seq))
        .collect();
    legal.sort_unstable();
    legal.windows(2).find_map(|w| {
        let ((first, seq), (second, _)) = (w[0], w[1]);
        let busy_between = second > first + 1
            && (first + 1..second).all(|c| engine_retires.contains(&c))
            && retired[&seq].0 > second;
        busy_between.then_some(Streak {
            first_latch: first,
            second_latch: second,
        })
    })
}

/// A program whose ideal-I/O timing on `config` has a [`Streak`], found by
/// searching programs of one shape with the golden model's timing: a long
/// barrier (a synchronous MEMCPY), then instructions that retire one or a
/// few cycles after they start (MEMSETs, zero-length copies, CVOs of a few
/// elements, GEMV/GEMM that fail their SHAPE check), which queue behind the
/// barrier and retire in a burst when it does, while the host latches more.
/// A retire can be at most every other cycle per engine, so the burst
/// needs several engines whose retires interleave.
pub fn retire_streak(
    config: &HwConfig,
    options: &GenOptions,
    seed: u64,
) -> Result<TestCase, String> {
    let mut rng = Rng::new(seed);
    for _ in 0..STREAK_TRIES {
        let text = streak_candidate(&mut rng, config.fifo_depth);
        let program = parse_program(&text)
            .map_err(|e| format!("a retire-streak candidate does not assemble: {e}\n{text}"))?;
        let mut case = TestCase::directed(seed, options, program);
        case.preload = Preload {
            tables: STREAK_TABLES.to_vec(),
            e_max: None,
        };
        let events = golden_events(config, &case)
            .map_err(|e| format!("the golden model refused a retire-streak candidate: {e}"))?;
        if find_streak(&events).is_some() {
            return Ok(case);
        }
    }
    Err(format!(
        "no program of the retire-streak shape has a retire in every cycle between two latches \
         on {} within {STREAK_TRIES} tries",
        config.name
    ))
}

/// One candidate of [`retire_streak`]'s shape: the barrier, then, in a
/// random order, a CVO chain and a MEM chain (each a head that is busy an
/// odd or an even number of cycles, then zero-length ones that retire a
/// cycle after they start, so the two chains' retires interleave), GEMVs
/// that run long (one latched during the burst stays in flight across the
/// next latch), MEMSETs and failing GEMMs, and a few idle cycles that move
/// the host's latches against the burst. Fmap entry 0 (all zero after
/// reset) gives the zero-length copies and the GEMMs' SHAPE errors; the
/// other entries are [`STREAK_TABLES`]. Every instruction has its own L2
/// words, so only the barrier orders them.
fn streak_candidate(rng: &mut Rng, fifo_depth: u32) -> String {
    #[derive(Clone, Copy)]
    enum Token {
        Cvo,
        Mem,
        Gemv,
        Memset,
        Gemm,
        Idle,
    }
    let chain = || 2 + fifo_depth.min(6);
    let mut tokens = Vec::new();
    tokens.extend(std::iter::repeat_n(
        Token::Cvo,
        rng.range_u32(2, chain()) as usize,
    ));
    tokens.extend(std::iter::repeat_n(
        Token::Mem,
        rng.range_u32(2, chain()) as usize,
    ));
    tokens.extend(std::iter::repeat_n(
        Token::Gemv,
        rng.range_u32(1, 3) as usize,
    ));
    tokens.extend(std::iter::repeat_n(
        Token::Memset,
        rng.range_u32(0, 4) as usize,
    ));
    tokens.extend(std::iter::repeat_n(
        Token::Gemm,
        rng.range_u32(0, 2) as usize,
    ));
    tokens.extend(std::iter::repeat_n(
        Token::Idle,
        rng.range_u32(0, 2) as usize,
    ));
    for i in (1..tokens.len()).rev() {
        tokens.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let barrier = rng.range_u32(1, 4);
    let mut text = format!("memcpy l2[2048] <- l2[1024], shape={}\n", 3 + barrier);
    let (mut cvo_head, mut mem_head) = (true, true);
    for (i, token) in tokens.into_iter().enumerate() {
        let (dest, src) = (100 + 8 * i, 600 + 8 * i);
        text += &match token {
            Token::Cvo if std::mem::take(&mut cvo_head) => match rng.below(3) {
                0 => format!("cvo.exp l2[{dest}] <- l2[{src}], len=1, async\n"),
                1 => format!("cvo.exp l2[{dest}] <- l2[{src}], len=1, accm, async\n"),
                _ => format!("cvo.reduce_sum l2[{dest}] <- l2[{src}], len=1, async\n"),
            },
            Token::Cvo => format!("cvo.exp l2[{dest}] <- l2[{src}], len=0, async\n"),
            Token::Mem if std::mem::take(&mut mem_head) => format!(
                "memcpy l2[{dest}] <- host[{}], shape={}, async\n",
                8 * i,
                rng.range_u32(1, 2)
            ),
            Token::Mem => format!("memcpy l2[{dest}] <- l2[{src}], shape=0, async\n"),
            Token::Gemv => format!("gemv l2[{dest}] <- l2[{src}], fmap=3, weight=3\n"),
            Token::Memset => format!("memset fmap[{}] = (1, 1, 1)\n", 32 + i),
            Token::Gemm => format!("gemm l2[{dest}] <- l2[{src}], fmap=0, weight=0\n"),
            Token::Idle => format!(".idle {}\n", rng.range_u32(1, 4)),
        };
    }
    text
}

/// The shape entries a retire-streak candidate names: fmap 1 and 2 copy
/// one and two words; fmap 3 with weight 3 is a 1 x 64 x 8 GEMV; fmap 4
/// to 6 are the barrier's 16, 32 or 48 words.
const STREAK_TABLES: [(ShapeTable, u8, ShapeEntry); 7] = [
    (ShapeTable::Fmap, 1, ShapeEntry { a: 1, b: 1, c: 8 }),
    (ShapeTable::Fmap, 2, ShapeEntry { a: 1, b: 2, c: 8 }),
    (ShapeTable::Fmap, 3, ShapeEntry { a: 1, b: 64, c: 0 }),
    (ShapeTable::Weight, 3, ShapeEntry { a: 64, b: 8, c: 0 }),
    (ShapeTable::Fmap, 4, ShapeEntry { a: 1, b: 16, c: 8 }),
    (ShapeTable::Fmap, 5, ShapeEntry { a: 1, b: 32, c: 8 }),
    (ShapeTable::Fmap, 6, ShapeEntry { a: 1, b: 48, c: 8 }),
];

/// The events of `case`'s program on a timed golden model of `config`
/// under ideal I/O, run as the scoreboard runs it: the preload by
/// backdoor, then the program, then the drain.
fn golden_events(config: &HwConfig, case: &TestCase) -> Result<Vec<Event>, ModelError> {
    let mut golden = Golden::with_timing(
        GoldenConfig {
            l2_words: config.l2_words,
        },
        config.timing_params(),
    );
    golden.reset()?;
    for &(table, index, value) in &case.preload.tables {
        golden.set_shape_entry(table, index, value)?;
    }
    for item in &case.program.items {
        match *item {
            Item::Instr(word) => {
                golden.issue(word)?;
            }
            Item::Idle(cycles) => golden.idle(cycles)?,
            Item::RegWrite { offset, value } => {
                golden.reg_write(offset, value)?;
            }
        }
    }
    golden.drain()?;
    Ok(golden.take_events())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;

    fn options(config: &HwConfig) -> GenOptions {
        GenOptions::for_config(config, 40)
    }

    #[test]
    fn every_shipped_configuration_has_a_retire_streak() {
        for name in ["tiny", "small", "kv260"] {
            let config = config::by_name(name).unwrap();
            let case = retire_streak(&config, &options(&config), FIRST_SEED + 1)
                .unwrap_or_else(|e| panic!("{e}"));
            let streak = find_streak(&golden_events(&config, &case).unwrap()).unwrap();
            assert!(
                streak.second_latch > streak.first_latch + 1,
                "{name}: {streak:?}"
            );
        }
    }

    fn latch(seq: u32, cycle: u64) -> Event {
        Event::Latch {
            seq,
            word: 0,
            cycle: Some(cycle),
        }
    }

    fn retire(seq: u32, cycle: u64, engine: bool) -> Event {
        Event::Retire {
            seq,
            opcode: 0,
            err: 0,
            cycle: Some(cycle),
            start: engine.then_some(cycle - 1),
        }
    }

    #[test]
    fn a_streak_needs_a_retire_in_every_cycle_between_and_the_first_in_flight() {
        // Latches in 10 and 15; retires of older instructions in 11..=14.
        let mut events = vec![latch(0, 1), latch(1, 2), latch(2, 3), latch(3, 4)];
        events.extend([latch(4, 10), latch(5, 15)]);
        events.extend((0..4).map(|s| retire(s, 11 + u64::from(s), true)));
        events.extend([retire(4, 20, true), retire(5, 21, true)]);
        let streak = find_streak(&events);
        assert_eq!(
            streak,
            Some(Streak {
                first_latch: 10,
                second_latch: 15
            })
        );
        // A quiet cycle (13) breaks it.
        let mut quiet = events.clone();
        quiet.retain(|e| !matches!(e, Event::Retire { seq: 2, .. }));
        quiet.push(retire(2, 30, true));
        assert_eq!(find_streak(&quiet), None);
        // A decoder retire (an illegal word) is no engine's.
        let mut decoder = events.clone();
        decoder.retain(|e| !matches!(e, Event::Retire { seq: 2, .. }));
        decoder.push(retire(2, 13, false));
        assert_eq!(find_streak(&decoder), None);
        // The first latched instruction started by the second latch (still
        // running, or gone): its engine holds its word, so a slot taken
        // over shows nowhere the scoreboard looks.
        let mut started = events.clone();
        started.retain(|e| !matches!(e, Event::Retire { seq: 4, .. }));
        started.push(Event::Retire {
            seq: 4,
            opcode: 0,
            err: 0,
            cycle: Some(20),
            start: Some(14),
        });
        assert_eq!(find_streak(&started), None);
    }

    /// Each MAT op starts only after the copy into its last activation
    /// word has retired, on every shipped configuration.
    #[test]
    fn the_activation_hazard_holds_each_mat_op_behind_its_copy() {
        for name in ["tiny", "small", "kv260"] {
            let config = config::by_name(name).unwrap();
            let case = activation_tail_hazard(&options(&config), FIRST_SEED + 2);
            // By sequence number: (start, retire).
            let retires: std::collections::BTreeMap<u32, (u64, u64)> =
                golden_events(&config, &case)
                    .unwrap()
                    .into_iter()
                    .filter_map(|e| match e {
                        Event::Retire {
                            seq,
                            cycle: Some(c),
                            start: Some(s),
                            err,
                            ..
                        } => {
                            assert_eq!(err, 0, "{name}");
                            Some((seq, (s, c)))
                        }
                        _ => None,
                    })
                    .collect();
            let r: Vec<(u64, u64)> = retires.into_values().collect();
            assert_eq!(r.len(), 4, "{name}");
            let (copy, gemv, copy2, gemm) = (r[0], r[1], r[2], r[3]);
            assert!(
                gemv.0 > copy.1,
                "{name}: the GEMV starts before its copy retires"
            );
            assert!(
                gemm.0 > copy2.1,
                "{name}: the GEMM starts before its copy retires"
            );
        }
    }

    #[test]
    fn the_signed_zero_case_makes_plus_zero_the_maximum() {
        let config = config::by_name("tiny").unwrap();
        let case = signed_zero_emax(&options(&config), FIRST_SEED);
        let mut golden = Golden::new(GoldenConfig {
            l2_words: config.l2_words,
        });
        // The weight source takes effect at the next reset.
        golden.set_weight_source(case.weight_source());
        golden.reset().unwrap();
        for &(at, ref words) in &case.l2_patches {
            golden.write_l2(at, words).unwrap();
        }
        for &(table, index, value) in &case.preload.tables {
            golden.set_shape_entry(table, index, value).unwrap();
        }
        for item in &case.program.items {
            if let Item::Instr(word) = *item {
                golden.issue(word).unwrap();
            }
        }
        golden.drain().unwrap();
        let events = golden.take_events();
        let zeros: Vec<u16> = events
            .iter()
            .filter_map(|e| match e {
                Event::L2Write { data, mask, .. } => Some((0..8).filter_map(move |i| {
                    (mask >> i & 1 == 1).then_some((data >> (16 * i)) as u16)
                })),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(
            zeros.contains(&0x8000) && zeros.contains(&0x0000),
            "{zeros:04x?}"
        );
        assert!(zeros.iter().all(|&z| z & 0x7FFF == 0), "{zeros:04x?}");
        let emax: Vec<u16> = events
            .iter()
            .filter_map(|e| match e {
                Event::EMaxWrite { value, .. } => Some(*value),
                _ => None,
            })
            .collect();
        assert_eq!(emax, [0x0000, 0x0000]);
    }
}
