use super::*;
use crate::isa::{layout, Cvo, CvoFunc, Instr, Memcpy, Memset};
use crate::model::HOST_WORDS;
use crate::numerics::{self, Bf16};

const L2: u32 = 1024;

fn model() -> Golden {
    Golden::new(GoldenConfig { l2_words: L2 })
}

fn memset(table: ShapeTable, index: u8, a: u16, b: u16, c: u16) -> u64 {
    Instr::Memset(Memset {
        dest_cache: table,
        dest_addr: index,
        a_value: a,
        b_value: b,
        c_value: c,
        reserved: 0,
    })
    .encode()
}

/// A MEMCPY word; `from_host`/`to_host` pick the route, shape pointer 3.
fn memcpy(from_host: bool, to_host: bool, dest: u32, src: u32) -> u64 {
    Instr::Memcpy(Memcpy {
        from_device: from_host,
        to_device: to_host,
        dest_addr: dest,
        src_addr: src,
        aux_addr: 0x1234,
        shape_ptr_addr: 3,
        async_: false,
    })
    .encode()
}

/// Sets fmap[3] by backdoor so that a MEMCPY moves `words` words (a*b*c =
/// 8*words - 7 elements, exercising the rounding up).
fn set_len(g: &mut Golden, words: u16) {
    let entry = match words {
        0 => ShapeEntry { a: 5, b: 0, c: 7 },
        w => ShapeEntry {
            a: 1,
            b: 8 * w - 7,
            c: 1,
        },
    };
    g.set_shape_entry(ShapeTable::Fmap, 3, entry).unwrap();
}

fn pattern(base: u128, n: usize) -> Vec<Word> {
    (0..n as u128).map(|i| base << 64 | i).collect()
}

fn run(g: &mut Golden, word: u64) -> Vec<Event> {
    assert_eq!(g.issue(word).unwrap(), (AxiResp::Okay, AxiResp::Okay));
    g.take_events()
}

fn retire(seq: u32, word: u64, err: ErrorCode) -> Event {
    Event::Retire {
        seq,
        opcode: (word >> 60) as u8,
        err: err.bits(),
        cycle: None,
        start: None,
    }
}

fn latch(seq: u32, word: u64) -> Event {
    Event::Latch {
        seq,
        word,
        cycle: None,
    }
}

/// The events of an instruction without effect: latch, then retire.
fn bare(seq: u32, word: u64, err: ErrorCode) -> Vec<Event> {
    vec![latch(seq, word), retire(seq, word, err)]
}

fn status(g: &mut Golden) -> u32 {
    let (value, resp) = g.reg_read(reg::STATUS).unwrap();
    assert_eq!(resp, AxiResp::Okay);
    value
}

fn l2(g: &mut Golden, addr: u32, n: usize) -> Vec<Word> {
    let mut out = vec![0; n];
    g.read_l2(addr, &mut out).unwrap();
    out
}

fn host(g: &mut Golden, addr: u32, n: usize) -> Vec<Word> {
    let mut out = vec![0; n];
    g.read_host(addr, &mut out).unwrap();
    out
}

fn err_status(code: ErrorCode) -> u32 {
    reg::STATUS_ERR | u32::from(code.bits()) << reg::STATUS_ERR_CODE_SHIFT
}

// ---- MEMSET ----

#[test]
fn memset_writes_both_tables() {
    let mut g = model();
    let w0 = memset(ShapeTable::Fmap, 3, 1, 1, 9);
    let w1 = memset(ShapeTable::Weight, 63, 0xFFFF, 16, 0);
    let fmap = ShapeEntry { a: 1, b: 1, c: 9 };
    let weight = ShapeEntry {
        a: 0xFFFF,
        b: 16,
        c: 0,
    };
    assert_eq!(
        run(&mut g, w0),
        vec![
            latch(0, w0),
            Event::ShapeWrite {
                seq: 0,
                table: ShapeTable::Fmap,
                index: 3,
                entry: fmap
            },
            retire(0, w0, ErrorCode::Ok)
        ]
    );
    assert_eq!(
        run(&mut g, w1)[1],
        Event::ShapeWrite {
            seq: 1,
            table: ShapeTable::Weight,
            index: 63,
            entry: weight
        }
    );
    assert_eq!(g.shape_entry(ShapeTable::Fmap, 3).unwrap(), fmap);
    assert_eq!(g.shape_entry(ShapeTable::Weight, 63).unwrap(), weight);
    assert_eq!(
        g.shape_entry(ShapeTable::Weight, 3).unwrap(),
        ShapeEntry::default()
    );
    assert_eq!(status(&mut g), reg::STATUS_DONE);
}

#[test]
fn memset_ignores_reserved_bits() {
    let mut g = model();
    let word = memset(ShapeTable::Fmap, 1, 2, 3, 4) | 0xF;
    run(&mut g, word);
    assert_eq!(
        g.shape_entry(ShapeTable::Fmap, 1).unwrap(),
        ShapeEntry { a: 2, b: 3, c: 4 }
    );
}

#[test]
fn memset_then_memcpy_uses_the_new_length() {
    let mut g = model();
    g.write_host(0, &pattern(1, 4)).unwrap();
    run(&mut g, memset(ShapeTable::Fmap, 3, 4, 2, 3)); // 24 elements -> 3 words
    let events = run(&mut g, memcpy(true, false, 10, 0));
    assert_eq!(events.len(), 2 + 3);
    assert_eq!(l2(&mut g, 10, 4), [&pattern(1, 3)[..], &[0]].concat());
}

// ---- MEMCPY ----

#[test]
fn memcpy_host_to_l2() {
    let mut g = model();
    g.write_host(100, &pattern(7, 3)).unwrap();
    set_len(&mut g, 3);
    let word = memcpy(true, false, 20, 100);
    let events = run(&mut g, word);
    let writes: Vec<Event> = (0..3)
        .map(|i| Event::L2Write {
            seq: 0,
            addr: 20 + i,
            data: pattern(7, 3)[i as usize],
            mask: 0xFF,
        })
        .collect();
    assert_eq!(
        events,
        [
            vec![latch(0, word)],
            writes,
            vec![retire(0, word, ErrorCode::Ok)]
        ]
        .concat()
    );
    assert_eq!(l2(&mut g, 19, 5), [&[0][..], &pattern(7, 3), &[0]].concat());
    assert_eq!(status(&mut g), reg::STATUS_DONE);
}

#[test]
fn memcpy_l2_to_host() {
    let mut g = model();
    g.write_l2(L2 - 2, &pattern(9, 2)).unwrap();
    set_len(&mut g, 2);
    let word = memcpy(false, true, HOST_WORDS - 2, L2 - 2);
    let events = run(&mut g, word);
    assert_eq!(
        events[1..3],
        [
            Event::HostWrite {
                seq: 0,
                addr: HOST_WORDS - 2,
                data: pattern(9, 2)[0]
            },
            Event::HostWrite {
                seq: 0,
                addr: HOST_WORDS - 1,
                data: pattern(9, 2)[1]
            }
        ]
    );
    assert_eq!(host(&mut g, HOST_WORDS - 2, 2), pattern(9, 2));
}

#[test]
fn memcpy_l2_to_l2_disjoint() {
    let mut g = model();
    g.write_l2(0, &pattern(3, 4)).unwrap();
    set_len(&mut g, 4);
    run(&mut g, memcpy(false, false, 500, 0));
    assert_eq!(l2(&mut g, 500, 4), pattern(3, 4));
    assert_eq!(l2(&mut g, 0, 4), pattern(3, 4));
}

#[test]
fn memcpy_l2_to_l2_overlapping_is_memmove() {
    for (dest, src) in [(12, 10), (10, 12)] {
        let mut g = model();
        g.write_l2(10, &pattern(5, 6)).unwrap();
        set_len(&mut g, 4);
        let before = l2(&mut g, 0, 32);
        run(&mut g, memcpy(false, false, dest, src));
        let mut expect = before.clone();
        expect[dest as usize..dest as usize + 4]
            .copy_from_slice(&before[src as usize..src as usize + 4]);
        assert_eq!(l2(&mut g, 0, 32), expect, "dest {dest} src {src}");
    }
}

#[test]
fn memcpy_onto_itself() {
    let mut g = model();
    g.write_l2(40, &pattern(2, 2)).unwrap();
    set_len(&mut g, 2);
    assert_eq!(run(&mut g, memcpy(false, false, 40, 40)).len(), 4);
    assert_eq!(l2(&mut g, 40, 2), pattern(2, 2));
}

#[test]
fn memcpy_length_rounds_up_and_is_exact() {
    let cases = [
        (ShapeEntry { a: 1, b: 1, c: 1 }, 1),
        (ShapeEntry { a: 1, b: 1, c: 8 }, 1),
        (ShapeEntry { a: 1, b: 1, c: 9 }, 2),
        (ShapeEntry { a: 4, b: 4, c: 4 }, 8),
        (ShapeEntry { a: 3, b: 5, c: 7 }, 14),
    ];
    for (entry, words) in cases {
        let mut g = model();
        g.set_shape_entry(ShapeTable::Fmap, 3, entry).unwrap();
        let events = run(&mut g, memcpy(true, false, 0, 0));
        assert_eq!(events.len() - 2, words, "{entry:?}");
    }
}

#[test]
fn memcpy_length_reads_fmap_not_weight() {
    let mut g = model();
    g.set_shape_entry(ShapeTable::Weight, 3, ShapeEntry { a: 8, b: 1, c: 1 })
        .unwrap();
    let word = memcpy(true, false, 0, 0);
    assert_eq!(
        run(&mut g, word),
        vec![latch(0, word), retire(0, word, ErrorCode::Ok)]
    );
}

#[test]
fn memcpy_empty_is_ok_even_out_of_range() {
    let mut g = model();
    set_len(&mut g, 0);
    let addr = (1 << 17) - 1;
    for word in [
        memcpy(true, false, addr, addr),
        memcpy(false, true, addr, addr),
        memcpy(false, false, addr, addr),
    ] {
        let seq = g.next_seq();
        assert_eq!(run(&mut g, word), bare(seq, word, ErrorCode::Ok));
    }
    assert_eq!(status(&mut g), reg::STATUS_DONE);
}

#[test]
fn memcpy_huge_length_is_a_range_error() {
    let mut g = model();
    let max = ShapeEntry {
        a: u16::MAX,
        b: u16::MAX,
        c: u16::MAX,
    };
    g.set_shape_entry(ShapeTable::Fmap, 3, max).unwrap();
    let word = memcpy(true, false, 0, 0);
    assert_eq!(run(&mut g, word), bare(0, word, ErrorCode::HostRange));
}

#[test]
fn memcpy_range_boundaries() {
    // (from_host, to_host, dest, src, expected)
    let h = HOST_WORDS;
    let cases = [
        (true, false, L2 - 4, h - 4, ErrorCode::Ok),
        (true, false, L2 - 3, h - 4, ErrorCode::L2Range),
        (true, false, L2 - 4, h - 3, ErrorCode::HostRange),
        (true, false, L2 - 3, h - 3, ErrorCode::HostRange),
        (false, true, h - 4, L2 - 4, ErrorCode::Ok),
        (false, true, h - 3, L2 - 4, ErrorCode::HostRange),
        (false, true, h - 4, L2 - 3, ErrorCode::L2Range),
        (false, true, h - 3, L2 - 3, ErrorCode::L2Range),
        (false, false, L2 - 4, L2 - 4, ErrorCode::Ok),
        (false, false, L2 - 3, 0, ErrorCode::L2Range),
        (false, false, 0, L2 - 3, ErrorCode::L2Range),
        (false, false, 0x1FFFF, 0x1FFFF, ErrorCode::L2Range),
    ];
    for (from_host, to_host, dest, src, code) in cases {
        let mut g = model();
        set_len(&mut g, 4);
        g.write_host(h - 4, &pattern(1, 4)).unwrap();
        g.write_l2(L2 - 4, &pattern(1, 4)).unwrap();
        let word = memcpy(from_host, to_host, dest, src);
        let events = run(&mut g, word);
        if code == ErrorCode::Ok {
            assert_eq!(events.len(), 6);
        } else {
            assert_eq!(
                events,
                bare(0, word, code),
                "{from_host} {to_host} {dest} {src}"
            );
        }
    }
}

#[test]
fn memcpy_in_error_changes_nothing() {
    let mut g = model();
    set_len(&mut g, 4);
    g.write_host(0, &pattern(1, 4)).unwrap();
    run(&mut g, memcpy(true, false, L2 - 3, 0));
    assert_eq!(l2(&mut g, L2 - 3, 3), vec![0; 3]);
}

// ---- decoder errors and placeholders ----

#[test]
fn illegal_words_retire_with_their_code() {
    let cases = [
        (0x5000_0000_0000_0000u64, ErrorCode::IllegalOpcode),
        (0xF123_4567_89AB_CDEF, ErrorCode::IllegalOpcode),
        (0x4800_0000_0000_0000, ErrorCode::IllegalFunc),
        (0x3800_0000_0000_0010, ErrorCode::IllegalDestCache),
        (0x3C00_0000_0000_0000, ErrorCode::IllegalDestCache),
        (0x2C00_0000_0000_0006, ErrorCode::IllegalDirection),
    ];
    for (word, code) in cases {
        let mut g = model();
        set_len(&mut g, 1);
        assert_eq!(run(&mut g, word), bare(0, word, code), "{word:#x}");
        assert_eq!(status(&mut g), err_status(code));
        assert_eq!(
            g.shape_entry(ShapeTable::Fmap, 1).unwrap(),
            ShapeEntry::default()
        );
    }
}

fn cvo(func: CvoFunc, src_addr: u32, dst_addr: u32, length: u16, flags: u8) -> u64 {
    Instr::Cvo(Cvo {
        func,
        src_addr,
        dst_addr,
        length,
        flags,
        async_: false,
    })
    .encode()
}

/// The elements of a word, element 0 first.
fn elements(word: Word) -> Vec<Bf16> {
    (0..8).map(|i| Bf16((word >> (16 * i)) as u16)).collect()
}

/// The wiring of the CVO interpreter: element order, the mask of the last
/// word, sub_emax before the function, accm after it, SCALE's scalar word,
/// REDUCE_SUM into element 0 only (the functions themselves are checked in
/// numerics::cvo and against the RTL in tests/gate/cvo_exhaustive.rs).
#[test]
fn cvo_wiring_masks_flags_and_layout() {
    let input: Vec<Word> = (0..3u128)
        .map(|w| (0..8).fold(0, |acc, i| acc | (0x3F80 + 0x10 * (8 * w + i)) << (16 * i)))
        .collect();
    let old = pattern(0x1111, 3);
    let e_max = Bf16(0x3F00);
    let mut g = model();
    g.set_e_max(e_max.0).unwrap();
    let x: Vec<Bf16> = input.iter().flat_map(|&w| elements(w)).collect();
    let fresh = |g: &mut Golden| {
        g.write_l2(0, &input).unwrap();
        g.write_l2(16, &old).unwrap();
    };
    let old_el: Vec<Bf16> = old.iter().flat_map(|&w| elements(w)).collect();
    let flags_sub_accm = layout::cvo::FLAG_SUB_EMAX | layout::cvo::FLAG_ACCM;

    // EXP of 11 elements with sub_emax and accm: 8 + 3, the last word masked.
    fresh(&mut g);
    run(&mut g, cvo(CvoFunc::Exp, 0, 16, 11, flags_sub_accm));
    let got: Vec<Bf16> = l2(&mut g, 16, 2).into_iter().flat_map(elements).collect();
    for i in 0..16 {
        let want = if i < 11 {
            numerics::bf16::add(
                old_el[i],
                numerics::cvo::exp(numerics::bf16::sub(x[i], e_max)),
            )
        } else {
            old_el[i]
        };
        assert_eq!(got[i], want, "element {i}");
    }

    // SCALE: the scalar is element 0 of word 0, the vector starts at word 1.
    fresh(&mut g);
    run(
        &mut g,
        cvo(CvoFunc::Scale, 0, 16, 9, layout::cvo::FLAG_RECIP_SCALE),
    );
    let got: Vec<Bf16> = l2(&mut g, 16, 2).into_iter().flat_map(elements).collect();
    for i in 0..9 {
        assert_eq!(got[i], numerics::cvo::divide(x[8 + i], x[0]), "element {i}");
    }
    assert_eq!(got[9..], old_el[9..16]);

    // REDUCE_SUM: element 0 of the destination only.
    fresh(&mut g);
    let events = run(&mut g, cvo(CvoFunc::ReduceSum, 0, 16, 20, 0));
    let mut sum = numerics::cvo::ExactSum::new();
    x[..20].iter().for_each(|&v| sum.add(v));
    let got = elements(l2(&mut g, 16, 1)[0]);
    assert_eq!(got[0], sum.round());
    assert_eq!(got[1..], old_el[1..8]);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::L2Write {
            addr: 16,
            mask: 0x01,
            ..
        }
    )));

    // Length 0 has no effect, even out of range; a range error has none either.
    fresh(&mut g);
    let word = cvo(CvoFunc::Sin, 0x1FFFF, 0x1FFFF, 0, 0);
    assert_eq!(run(&mut g, word), bare(3, word, ErrorCode::Ok));
    let word = cvo(CvoFunc::Sin, 0, L2 - 1, 9, 0);
    assert_eq!(run(&mut g, word), bare(4, word, ErrorCode::L2Range));
    let word = cvo(CvoFunc::Scale, L2 - 2, 0, 9, 0);
    assert_eq!(run(&mut g, word), bare(5, word, ErrorCode::L2Range));
    assert_eq!(l2(&mut g, 16, 3), old);
}

// ---- status and register map ----

#[test]
fn status_after_reset_is_idle() {
    let mut g = model();
    assert_eq!(status(&mut g), 0);
    assert_eq!(g.reg_read(reg::RETIRED).unwrap(), (0, AxiResp::Okay));
}

#[test]
fn done_follows_the_youngest_instruction() {
    let mut g = model();
    let ok = memset(ShapeTable::Fmap, 0, 1, 1, 1);
    let bad = 0x6000_0000_0000_0000;
    run(&mut g, ok);
    assert_eq!(status(&mut g), reg::STATUS_DONE);
    run(&mut g, bad);
    assert_eq!(status(&mut g), err_status(ErrorCode::IllegalOpcode));
    run(&mut g, ok);
    // ERR is sticky, DONE comes back.
    assert_eq!(
        status(&mut g),
        reg::STATUS_DONE | err_status(ErrorCode::IllegalOpcode)
    );
}

#[test]
fn err_code_is_the_first_error_and_clear_resets_it() {
    let mut g = model();
    set_len(&mut g, 4);
    run(&mut g, 0x4900_0000_0000_0000); // ILLEGAL_FUNC
    run(&mut g, memcpy(false, false, L2, 0)); // L2_RANGE
    assert_eq!(status(&mut g), err_status(ErrorCode::IllegalFunc));
    // Any value clears ERR and err_code, DONE is unaffected.
    assert_eq!(
        g.reg_write(reg::STATUS, 0xDEAD_BEEF).unwrap(),
        AxiResp::Okay
    );
    assert_eq!(status(&mut g), 0);
    run(&mut g, memcpy(true, false, 0, HOST_WORDS - 1)); // HOST_RANGE
    run(&mut g, 0x3800_0000_0000_0000); // ILLEGAL_DEST_CACHE
    assert_eq!(status(&mut g), err_status(ErrorCode::HostRange));
    run(&mut g, memset(ShapeTable::Fmap, 0, 0, 0, 0));
    assert_eq!(
        status(&mut g),
        reg::STATUS_DONE | err_status(ErrorCode::HostRange)
    );
    g.reg_write(reg::STATUS, 0).unwrap();
    assert_eq!(status(&mut g), reg::STATUS_DONE);
    assert_eq!(g.take_events().len(), 0, "register traffic makes no events");
}

#[test]
fn retired_count_and_sequence_numbers() {
    let mut g = model();
    for i in 0..5u32 {
        let word = if i % 2 == 0 {
            0x7000_0000_0000_0000
        } else {
            memset(ShapeTable::Fmap, 0, 0, 0, 0)
        };
        let events = run(&mut g, word);
        assert!(events.iter().all(|e| e.seq() == i));
        assert_eq!(g.reg_read(reg::RETIRED).unwrap(), (i + 1, AxiResp::Okay));
    }
}

#[test]
fn instruction_registers_hold_and_latch() {
    let mut g = model();
    assert_eq!(
        g.reg_write(reg::INSTR_LO, 0x0010_0090).unwrap(),
        AxiResp::Okay
    );
    assert_eq!(g.take_events(), vec![], "0x00 alone latches nothing");
    assert_eq!(
        g.reg_read(reg::INSTR_LO).unwrap(),
        (0x0010_0090, AxiResp::Okay)
    );
    assert_eq!(
        g.reg_write(reg::INSTR_HI, 0x3030_0010).unwrap(),
        AxiResp::Okay
    );
    assert_eq!(
        g.reg_read(reg::INSTR_HI).unwrap(),
        (0x3030_0010, AxiResp::Okay)
    );
    assert_eq!(
        g.shape_entry(ShapeTable::Fmap, 3).unwrap(),
        ShapeEntry { a: 1, b: 1, c: 9 }
    );
    // Writing 0x04 again re-latches the held low word with the new high word.
    g.reg_write(reg::INSTR_HI, 0x3050_0010).unwrap();
    assert_eq!(
        g.shape_entry(ShapeTable::Fmap, 5).unwrap(),
        ShapeEntry { a: 1, b: 1, c: 9 }
    );
    let events = g.take_events();
    assert_eq!(events[0], latch(0, 0x3030_0010_0010_0090));
    assert_eq!(events[3], latch(1, 0x3050_0010_0010_0090));
}

#[test]
fn slverr_offsets_change_nothing() {
    let mut g = model();
    g.reg_write(reg::INSTR_LO, 0x1234).unwrap();
    run(&mut g, 0x5000_0000_0000_0000);
    let before = (status(&mut g), g.reg_read(reg::RETIRED).unwrap());
    for offset in [reg::RETIRED, 0x01, 0x02, 0x10, 0x14, 0x100, 0xFFC] {
        assert_eq!(
            g.reg_write(offset, 0xFFFF_FFFF).unwrap(),
            AxiResp::SlvErr,
            "{offset:#x}"
        );
    }
    for offset in [0x01, 0x03, 0x10, 0x800, 0xFFF] {
        assert_eq!(
            g.reg_read(offset).unwrap(),
            (0, AxiResp::SlvErr),
            "{offset:#x}"
        );
    }
    assert_eq!((status(&mut g), g.reg_read(reg::RETIRED).unwrap()), before);
    assert_eq!(g.reg_read(reg::INSTR_LO).unwrap().0, 0);
    assert!(g.take_events().is_empty());
}

#[test]
fn offsets_beyond_12_bits_are_model_errors() {
    let mut g = model();
    assert!(matches!(g.reg_write(0x1000, 0), Err(ModelError::Other(_))));
    assert!(matches!(g.reg_read(0x1008), Err(ModelError::Other(_))));
}

#[test]
fn reset_clears_registers_tables_and_events_not_memory() {
    let mut g = model();
    g.write_l2(5, &[42]).unwrap();
    g.write_host(6, &[43]).unwrap();
    g.set_e_max(0x4000).unwrap();
    run(&mut g, memset(ShapeTable::Weight, 2, 1, 2, 3));
    g.issue(0x5000_0000_0000_0000).unwrap();
    g.reset().unwrap();
    assert!(g.take_events().is_empty());
    assert_eq!(status(&mut g), 0);
    assert_eq!(g.reg_read(reg::RETIRED).unwrap().0, 0);
    assert_eq!(g.reg_read(reg::INSTR_LO).unwrap().0, 0);
    assert_eq!(g.next_seq(), 0);
    assert_eq!(
        g.shape_entry(ShapeTable::Weight, 2).unwrap(),
        ShapeEntry::default()
    );
    assert_eq!(g.e_max().unwrap(), 0);
    assert_eq!((l2(&mut g, 5, 1), host(&mut g, 6, 1)), (vec![42], vec![43]));
}

#[test]
fn idle_and_drain_do_nothing() {
    let mut g = model();
    g.idle(1000).unwrap();
    g.drain().unwrap();
    assert_eq!(status(&mut g), 0);
    assert!(g.take_events().is_empty());
}

// ---- backdoor ----

#[test]
fn backdoor_bounds() {
    let mut g = model();
    assert_eq!(g.l2_words(), L2);
    assert_eq!(g.name(), "golden");
    g.write_l2(L2 - 1, &[1]).unwrap();
    g.write_l2(L2, &[]).unwrap();
    g.write_host(HOST_WORDS - 2, &[1, 2]).unwrap();
    let backdoor = |r: Result<(), ModelError>| matches!(r, Err(ModelError::Backdoor(_)));
    assert!(backdoor(g.write_l2(L2 - 1, &[1, 2])));
    assert!(backdoor(g.read_l2(L2, &mut [0])));
    assert!(backdoor(g.write_host(HOST_WORDS, &[1])));
    assert!(backdoor(g.read_host(u32::MAX, &mut [0])));
    assert!(matches!(
        g.shape_entry(ShapeTable::Fmap, 64),
        Err(ModelError::Backdoor(_))
    ));
    let entry = ShapeEntry::default();
    assert!(backdoor(g.set_shape_entry(ShapeTable::Weight, 200, entry)));
    let Err(ModelError::Backdoor(message)) = g.read_l2(L2 - 1, &mut [0, 0]) else {
        panic!()
    };
    assert!(
        message.contains("L2") && message.contains("0x3ff"),
        "{message}"
    );
    assert!(g.take_events().is_empty(), "backdoor makes no events");
}

#[test]
fn default_config_is_kv260() {
    assert_eq!(Golden::default().l2_words(), 114_688);
}
