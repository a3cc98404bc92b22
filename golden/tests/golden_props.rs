//! The interpreter against the footprint rules: every write an instruction
//! makes lies inside its footprint, and a successful one writes all of it.

use pccx_golden::footprint::{footprint, Range};
use pccx_golden::isa::{decode, Decoded, Instr, MatOp, Memcpy, Memset};
use pccx_golden::model::{ErrorCode, Event, NpuModel, ShapeTable, HOST_WORDS};
use pccx_golden::{Golden, GoldenConfig};
use proptest::prelude::*;

const L2: u32 = 256;

/// Addresses that cluster around the ends of L2 and host memory, where the
/// range checks decide.
fn addr() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..16,
        (L2 - 16)..(L2 + 16),
        (HOST_WORDS - 16)..HOST_WORDS,
        0u32..1 << 17
    ]
}

fn instr() -> impl Strategy<Value = Instr> {
    // Small dimensions, mostly 1 to 3, so that GEMV/GEMM shapes often agree.
    let dim = || prop_oneof![3 => 1u16..4, 1 => 0u16..6];
    let memset = (any::<bool>(), 0u8..4, dim(), dim(), dim(), 0u8..16).prop_map(
        |(weight, dest_addr, a, b, c, reserved)| {
            Instr::Memset(Memset {
                dest_cache: if weight {
                    ShapeTable::Weight
                } else {
                    ShapeTable::Fmap
                },
                dest_addr,
                a_value: a,
                b_value: b,
                c_value: c,
                reserved,
            })
        },
    );
    let memcpy = (0u8..3, addr(), addr(), 0u8..4, any::<bool>()).prop_map(
        |(route, dest_addr, src_addr, shape_ptr_addr, async_)| {
            Instr::Memcpy(Memcpy {
                from_device: route == 1,
                to_device: route == 2,
                dest_addr,
                src_addr,
                aux_addr: dest_addr ^ src_addr,
                shape_ptr_addr,
                async_,
            })
        },
    );
    let mat_addr = || prop_oneof![3 => 0u32..200, 1 => addr()];
    let mat = (
        any::<bool>(),
        mat_addr(),
        mat_addr(),
        0u8..64,
        0u8..4,
        0u8..4,
        0u8..32,
    )
        .prop_map(
            |(gemv, dest_reg, src_addr, flags, size_ptr_addr, shape_ptr_addr, lanes)| {
                let op = MatOp {
                    dest_reg,
                    src_addr,
                    flags,
                    size_ptr_addr,
                    shape_ptr_addr,
                    parallel_lane: lanes,
                    reserved: flags & 7,
                };
                if gemv {
                    Instr::Gemv(op)
                } else {
                    Instr::Gemm(op)
                }
            },
        );
    prop_oneof![2 => memset, 2 => memcpy, 1 => mat]
}

fn contains(range: Option<Range>, addr: u32) -> bool {
    range.is_some_and(|r| r.start <= u64::from(addr) && u64::from(addr) < r.end)
}

fn len(range: Option<Range>) -> usize {
    range.map_or(0, |r| r.len() as usize)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn writes_match_footprints(program in prop::collection::vec(instr(), 1..30)) {
        let mut g = Golden::new(GoldenConfig { l2_words: L2 });
        let ramp: Vec<u128> = (0..L2 as u128).map(|i| i * 0x1_0001).collect();
        g.write_l2(0, &ramp).unwrap();
        for instr in program {
            let word = instr.encode();
            prop_assert_eq!(decode(word), Decoded::Legal(instr));
            let fp = footprint(&instr, g.tables());
            let is_mat = matches!(instr, Instr::Gemv(_) | Instr::Gemm(_));
            let beats_before = g.weight_beats_consumed();
            g.issue(word).unwrap();
            let events = g.take_events();
            let Some(Event::Retire { err, .. }) = events.last() else { panic!("no retire") };
            let writes = &events[1..events.len() - 1];
            for event in writes {
                match *event {
                    Event::L2Write { addr, mask, .. } => {
                        prop_assert!(contains(fp.l2_write, addr));
                        prop_assert!(addr < L2 && (mask == 0xFF || is_mat && mask != 0));
                    }
                    Event::EMaxWrite { .. } => prop_assert!(fp.emax_write),
                    Event::StreamRead { beats, stream, .. } => {
                        prop_assert!(is_mat && beats > 0);
                        let stream = usize::from(stream);
                        let consumed = g.weight_beats_consumed();
                        prop_assert_eq!(consumed[stream] - beats_before[stream], u64::from(beats));
                        prop_assert_eq!(consumed[1 - stream], beats_before[1 - stream]);
                    }
                    Event::HostWrite { addr, .. } => prop_assert!(contains(fp.host_write, addr)),
                    Event::ShapeWrite { table, index, .. } => {
                        prop_assert_eq!(fp.table_write, Some((table, index)))
                    }
                    ref other => prop_assert!(false, "unexpected {:?}", other),
                }
            }
            if *err == ErrorCode::Ok.bits() {
                let expected = len(fp.l2_write)
                    + len(fp.host_write)
                    + usize::from(fp.table_write.is_some())
                    + usize::from(fp.emax_write)
                    + usize::from(is_mat);
                prop_assert_eq!(writes.len(), expected);
            } else {
                prop_assert!(writes.is_empty());
                prop_assert_eq!(g.weight_beats_consumed(), beats_before);
                if is_mat {
                    prop_assert!(matches!(*err, 5 | 6), "GEMV/GEMM fails on shape or L2 range, got {}", err);
                } else {
                    prop_assert!(matches!(*err, 6 | 7), "memcpy fails only on range, got {}", err);
                }
            }
        }
    }
}
