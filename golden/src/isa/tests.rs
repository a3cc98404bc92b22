use super::*;

fn legal(word: u64) -> Instr {
    match decode(word) {
        Decoded::Legal(instr) => instr,
        other => panic!("{word:#x} decoded as {other:?}"),
    }
}

fn illegal(word: u64) -> IllegalReason {
    match decode(word) {
        Decoded::Illegal { word: w, reason } => {
            assert_eq!(w, word);
            reason
        }
        other => panic!("{word:#x} decoded as {other:?}"),
    }
}

#[test]
fn memset_fields() {
    // memset weight[5] = (4, 16, 0), reserved 0x3
    let word = 0x3000_0000_0000_0000 | 1 << 58 | 5 << 52 | 4 << 36 | 16 << 20 | 0x3;
    let Instr::Memset(m) = legal(word) else {
        panic!()
    };
    assert_eq!(m.dest_cache, ShapeTable::Weight);
    assert_eq!(
        (m.dest_addr, m.a_value, m.b_value, m.c_value),
        (5, 4, 16, 0)
    );
    assert_eq!(m.reserved, 3);
    assert_eq!(Instr::Memset(m).encode(), word);
}

#[test]
fn memcpy_fields_and_routes() {
    let base = 0x2000_0000_0000_0000u64 | 7 << 41 | 9 << 24 | 0x12 << 7 | 3 << 1 | 1;
    let Instr::Memcpy(m) = legal(base) else {
        panic!()
    };
    assert_eq!(
        (m.dest_addr, m.src_addr, m.aux_addr, m.shape_ptr_addr),
        (7, 9, 0x12, 3)
    );
    assert!(m.async_);
    assert_eq!(m.route(), MemRoute::L2ToL2);
    let Instr::Memcpy(m) = legal(base | 1 << 59) else {
        panic!()
    };
    assert_eq!(m.route(), MemRoute::HostToL2);
    let Instr::Memcpy(m) = legal(base | 1 << 58) else {
        panic!()
    };
    assert_eq!(m.route(), MemRoute::L2ToHost);
    assert_eq!(illegal(base | 3 << 58), IllegalReason::Direction);
}

#[test]
fn mat_flags() {
    let word = 1u64 << 60 | 0b101_101 << 20 | 0b101;
    let Instr::Gemm(m) = legal(word) else {
        panic!()
    };
    assert!(m.findemax() && !m.accm() && m.w_scale());
    assert_eq!((m.flags, m.reserved), (0b101_101, 0b101));
    let Instr::Gemv(m) = legal(0b010_000 << 20) else {
        panic!()
    };
    assert!(!m.findemax() && m.accm() && !m.w_scale());
}

#[test]
fn cvo_flags_are_word_bits_5_to_1() {
    let cvo = |flag_bits: u64| {
        let Instr::Cvo(c) = legal(4u64 << 60 | flag_bits) else {
            panic!()
        };
        c
    };
    assert!(cvo(1 << 5).sub_emax());
    assert!(cvo(1 << 4).recip_scale());
    assert!(cvo(1 << 3).accm());
    let quiet = cvo(0b110);
    assert!(!quiet.sub_emax() && !quiet.recip_scale() && !quiet.accm());
    assert_eq!(quiet.flags, 0b11);
    assert!(cvo(1).async_);
}

#[test]
fn cvo_funcs() {
    for func in CvoFunc::ALL {
        let Instr::Cvo(c) = legal(4u64 << 60 | u64::from(func.bits()) << 56) else {
            panic!()
        };
        assert_eq!(c.func, func);
        assert_eq!(CvoFunc::from_name(func.name()), Some(func));
    }
    for code in 8..16u64 {
        assert_eq!(
            illegal(4 << 60 | code << 56),
            IllegalReason::CvoFunc(code as u8)
        );
    }
}

#[test]
fn illegal_opcodes_and_codes() {
    for op in 5..16u64 {
        let r = illegal(op << 60 | 0xABC);
        assert_eq!(r, IllegalReason::Opcode(op as u8));
        assert_eq!(r.error_code(), ErrorCode::IllegalOpcode);
    }
    assert_eq!(illegal(3 << 60 | 2 << 58), IllegalReason::DestCache(2));
    assert_eq!(
        illegal(3 << 60 | 3 << 58).error_code(),
        ErrorCode::IllegalDestCache
    );
    assert_eq!(
        IllegalReason::CvoFunc(9).error_code(),
        ErrorCode::IllegalFunc
    );
    assert_eq!(
        IllegalReason::Direction.error_code(),
        ErrorCode::IllegalDirection
    );
}

#[test]
fn fields_and_names() {
    assert_eq!(
        fields(0x5123_4567_89ab_cdef),
        vec![("opcode", 5), ("body", 0x123_4567_89ab_cdef)]
    );
    assert_eq!(op_name(0x5000_0000_0000_0000), "ILLEGAL");
    assert_eq!(op_name(4u64 << 60 | 8 << 56), "ILLEGAL");
    assert_eq!(op_name(0), "GEMV");
    let f = fields(4u64 << 60 | 8 << 56 | 0b10110 << 1);
    assert!(f.contains(&("cvo_func", 8)));
    assert!(f.contains(&("flags", 0b10110)));
    let f = fields(1u64 << 60 | 0x3F << 20 | 7);
    assert!(f.contains(&("flags", 0x3F)));
    assert!(f.contains(&("reserved", 7)));
}

#[test]
fn encode_truncates_wide_fields() {
    let m = Memset {
        dest_cache: ShapeTable::Fmap,
        dest_addr: 0xFF,
        a_value: 0,
        b_value: 0,
        c_value: 0,
        reserved: 0xFF,
    };
    assert_eq!(Instr::Memset(m).encode(), 3u64 << 60 | 0x3F << 52 | 0xF);
}

#[test]
#[should_panic(expected = "host -> host")]
fn route_of_host_to_host_panics() {
    let m = Memcpy {
        from_device: true,
        to_device: true,
        dest_addr: 0,
        src_addr: 0,
        aux_addr: 0,
        shape_ptr_addr: 0,
        async_: false,
    };
    m.route();
}

#[test]
fn entry_ids_round_trip() {
    use layout::entry_id;
    // Bit 6 names the table, bits 5:0 the entry: weight[5] is 0x45.
    assert_eq!(entry_id::encode(ShapeTable::Weight, 5), 0x45);
    assert_eq!(entry_id::encode(ShapeTable::Fmap, 63), 0x3F);
    for table in ShapeTable::ALL {
        for index in 0..64 {
            assert_eq!(
                entry_id::decode(entry_id::encode(table, index)),
                (table, index)
            );
        }
    }
    // The id MEMSET's fields give is the one its entry has.
    let m = Memset {
        dest_cache: ShapeTable::Weight,
        dest_addr: 9,
        a_value: 0,
        b_value: 0,
        c_value: 0,
        reserved: 0,
    };
    let word = Instr::Memset(m).encode();
    let id = (layout::memset::DEST_CACHE.get(word) & 1) << 6 | layout::memset::DEST_ADDR.get(word);
    assert_eq!(entry_id::decode(id as u8), (ShapeTable::Weight, 9));
}
