use super::*;
use crate::isa::{Cvo, MatOp, Memcpy, Memset};
use crate::model::ShapeEntry;

fn tables_with(fmap: &[(u8, (u16, u16, u16))], weight: &[(u8, (u16, u16, u16))]) -> Tables {
    let mut t = Tables::default();
    for &(i, (a, b, c)) in fmap {
        t.set(ShapeTable::Fmap, i, ShapeEntry { a, b, c });
    }
    for &(i, (a, b, c)) in weight {
        t.set(ShapeTable::Weight, i, ShapeEntry { a, b, c });
    }
    t
}

fn r(start: u64, end: u64) -> Option<Range> {
    Some(Range { start, end })
}

fn memcpy(from_device: bool, to_device: bool, async_: bool) -> Instr {
    Instr::Memcpy(Memcpy {
        from_device,
        to_device,
        dest_addr: 100,
        src_addr: 7,
        aux_addr: 0x1FFFF,
        shape_ptr_addr: 3,
        async_,
    })
}

fn cvo(func: CvoFunc, length: u16, flags: u8, async_: bool) -> Instr {
    Instr::Cvo(Cvo {
        func,
        src_addr: 10,
        dst_addr: 50,
        length,
        flags,
        async_,
    })
}

#[test]
fn memset_writes_its_entry_only() {
    let fp = footprint(
        &Instr::Memset(Memset {
            dest_cache: ShapeTable::Weight,
            dest_addr: 9,
            a_value: 1,
            b_value: 2,
            c_value: 3,
            reserved: 0,
        }),
        &Tables::default(),
    );
    assert_eq!(
        fp,
        Footprint {
            table_write: Some((ShapeTable::Weight, 9)),
            ..Footprint::default()
        }
    );
}

#[test]
fn memcpy_routes() {
    // 1*1*9 elements -> 2 words.
    let t = tables_with(&[(3, (1, 1, 9))], &[]);
    let h2l = footprint(&memcpy(true, false, false), &t);
    assert_eq!((h2l.host_read, h2l.l2_write), (r(7, 9), r(100, 102)));
    assert_eq!((h2l.l2_read, h2l.host_write), (None, None));
    assert_eq!(h2l.table_reads, vec![(ShapeTable::Fmap, 3)]);
    assert!(h2l.barrier);
    let l2h = footprint(&memcpy(false, true, true), &t);
    assert_eq!((l2h.l2_read, l2h.host_write), (r(7, 9), r(100, 102)));
    assert_eq!((l2h.host_read, l2h.l2_write), (None, None));
    assert!(!l2h.barrier);
    let l2l = footprint(&memcpy(false, false, true), &t);
    assert_eq!((l2l.l2_read, l2l.l2_write), (r(7, 9), r(100, 102)));
}

#[test]
fn memcpy_empty_and_huge() {
    let empty = footprint(&memcpy(true, false, false), &Tables::default());
    assert_eq!((empty.host_read, empty.l2_write), (None, None));
    // Nominal ranges run past memory without overflow.
    let t = tables_with(&[(3, (u16::MAX, u16::MAX, u16::MAX))], &[]);
    let huge = footprint(&memcpy(false, false, true), &t);
    let len = (u64::from(u16::MAX).pow(3)).div_ceil(8);
    assert_eq!(huge.l2_read, r(7, 7 + len));
}

#[test]
fn mat_ranges() {
    // M=3, K=17 (2 words per row); K=17, N=9 (2 words per row).
    let t = tables_with(&[(9, (3, 17, 0))], &[(2, (17, 9, 0))]);
    let op = MatOp {
        dest_reg: 768,
        src_addr: 400,
        flags: 0x20,
        size_ptr_addr: 2,
        shape_ptr_addr: 9,
        parallel_lane: 4,
        reserved: 0,
    };
    for instr in [Instr::Gemv(op), Instr::Gemm(op)] {
        let fp = footprint(&instr, &t);
        assert_eq!(fp.l2_read, r(400, 406));
        assert_eq!(fp.l2_write, r(768, 774));
        assert_eq!(
            fp.table_reads,
            vec![(ShapeTable::Fmap, 9), (ShapeTable::Weight, 2)]
        );
        assert!(fp.emax_write && !fp.emax_read && !fp.barrier);
    }
    let fp = footprint(
        &Instr::Gemv(MatOp { flags: 0x10, ..op }),
        &Tables::default(),
    );
    assert_eq!(
        (fp.l2_read, fp.l2_write, fp.emax_write),
        (None, None, false)
    );
}

#[test]
fn cvo_ranges() {
    let fp = footprint(&cvo(CvoFunc::Exp, 9, 0x10, false), &Tables::default());
    assert_eq!((fp.l2_read, fp.l2_write), (r(10, 12), r(50, 52)));
    assert!(fp.emax_read && fp.barrier && fp.table_reads.is_empty());
    let fp = footprint(&cvo(CvoFunc::Scale, 9, 0, true), &Tables::default());
    assert_eq!((fp.l2_read, fp.l2_write), (r(10, 13), r(50, 52)));
    assert!(!fp.emax_read && !fp.barrier);
    let fp = footprint(&cvo(CvoFunc::ReduceSum, 64, 0, true), &Tables::default());
    assert_eq!((fp.l2_read, fp.l2_write), (r(10, 18), r(50, 51)));
}

#[test]
fn cvo_empty_vector() {
    let fp = footprint(&cvo(CvoFunc::Sqrt, 0, 0, true), &Tables::default());
    assert_eq!((fp.l2_read, fp.l2_write), (None, None));
    let fp = footprint(&cvo(CvoFunc::Scale, 0, 0, true), &Tables::default());
    assert_eq!((fp.l2_read, fp.l2_write), (r(10, 11), None));
    let fp = footprint(&cvo(CvoFunc::ReduceSum, 0, 0x10, true), &Tables::default());
    assert_eq!((fp.l2_read, fp.l2_write), (None, None));
    assert!(fp.emax_read);
}

fn l2(read: Option<Range>, write: Option<Range>) -> Footprint {
    Footprint {
        l2_read: read,
        l2_write: write,
        ..Footprint::default()
    }
}

#[test]
fn l2_hazards() {
    let w = l2(None, r(10, 20));
    let rd = |s, e| l2(r(s, e), None);
    assert!(conflicts(&w, &rd(19, 30)), "RAW");
    assert!(conflicts(&rd(19, 30), &w), "WAR");
    assert!(conflicts(&w, &l2(None, r(0, 11))), "WAW");
    assert!(!conflicts(&w, &rd(20, 30)), "half-open end");
    assert!(!conflicts(&w, &rd(0, 10)), "half-open start");
    assert!(!conflicts(&rd(0, 100), &rd(0, 100)), "read/read");
}

#[test]
fn host_hazards_are_separate_from_l2() {
    let host_w = Footprint {
        host_write: r(0, 4),
        ..Footprint::default()
    };
    let host_r = Footprint {
        host_read: r(3, 4),
        ..Footprint::default()
    };
    assert!(conflicts(&host_w, &host_r) && conflicts(&host_r, &host_w));
    assert!(conflicts(&host_w, &host_w));
    assert!(!conflicts(&host_w, &l2(r(0, 4), r(0, 4))));
}

#[test]
fn table_and_emax_hazards() {
    let set = |t, i| Footprint {
        table_write: Some((t, i)),
        ..Footprint::default()
    };
    let user = Footprint {
        table_reads: vec![(ShapeTable::Fmap, 3)],
        ..Footprint::default()
    };
    assert!(conflicts(&set(ShapeTable::Fmap, 3), &user));
    assert!(conflicts(&user, &set(ShapeTable::Fmap, 3)));
    assert!(!conflicts(&set(ShapeTable::Weight, 3), &user));
    assert!(!conflicts(&set(ShapeTable::Fmap, 4), &user));
    assert!(conflicts(
        &set(ShapeTable::Weight, 1),
        &set(ShapeTable::Weight, 1)
    ));
    let (ew, er) = (
        Footprint {
            emax_write: true,
            ..Footprint::default()
        },
        Footprint {
            emax_read: true,
            ..Footprint::default()
        },
    );
    assert!(conflicts(&ew, &er) && conflicts(&er, &ew) && conflicts(&ew, &ew));
    assert!(!conflicts(&er, &er));
}

#[test]
fn barriers_are_not_conflicts() {
    let b = Footprint {
        barrier: true,
        ..Footprint::default()
    };
    assert!(!conflicts(&b, &b));
}
