//! Bit positions of every field (docs/semantics.md section 2), in one place.
//!
//! The decoder, the encoder, `fields()` and the assembler's width checks all
//! read these tables, so a bit position is written down exactly once.

/// One field of an instruction word: `width` bits starting at word bit `lo`.
/// `name` is the seed's field name (ISA.md section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub lo: u32,
    pub width: u32,
}

impl Field {
    const fn new(name: &'static str, lo: u32, width: u32) -> Field {
        Field { name, lo, width }
    }

    /// The largest value the field holds.
    pub const fn max(self) -> u64 {
        u64::MAX >> (64 - self.width)
    }

    pub const fn fits(self, value: u64) -> bool {
        value <= self.max()
    }

    /// The field's raw value in `word`.
    pub const fn get(self, word: u64) -> u64 {
        (word >> self.lo) & self.max()
    }

    /// `value` placed at the field's bits; bits beyond the width are dropped.
    pub const fn put(self, value: u64) -> u64 {
        (value & self.max()) << self.lo
    }
}

pub const OPCODE: Field = Field::new("opcode", 60, 4);
/// Everything below the opcode; what an illegal-opcode word carries.
pub const BODY: Field = Field::new("body", 0, 60);

/// GEMV and GEMM share one body.
pub mod mat {
    use super::Field;
    pub const DEST_REG: Field = Field::new("dest_reg", 43, 17);
    pub const SRC_ADDR: Field = Field::new("src_addr", 26, 17);
    pub const FLAGS: Field = Field::new("flags", 20, 6);
    pub const SIZE_PTR_ADDR: Field = Field::new("size_ptr_addr", 14, 6);
    pub const SHAPE_PTR_ADDR: Field = Field::new("shape_ptr_addr", 8, 6);
    pub const PARALLEL_LANE: Field = Field::new("parallel_lane", 3, 5);
    pub const RESERVED: Field = Field::new("reserved", 0, 3);
    pub const ALL: [Field; 7] = [
        DEST_REG,
        SRC_ADDR,
        FLAGS,
        SIZE_PTR_ADDR,
        SHAPE_PTR_ADDR,
        PARALLEL_LANE,
        RESERVED,
    ];

    /// Bits of the 6-bit flags field value.
    pub const FLAG_FINDEMAX: u8 = 1 << 5;
    pub const FLAG_ACCM: u8 = 1 << 4;
    pub const FLAG_W_SCALE: u8 = 1 << 3;
    pub const FLAGS_RESERVED: u8 = 0b111;
}

pub mod memcpy {
    use super::Field;
    pub const FROM_DEVICE: Field = Field::new("from_device", 59, 1);
    pub const TO_DEVICE: Field = Field::new("to_device", 58, 1);
    pub const DEST_ADDR: Field = Field::new("dest_addr", 41, 17);
    pub const SRC_ADDR: Field = Field::new("src_addr", 24, 17);
    pub const AUX_ADDR: Field = Field::new("aux_addr", 7, 17);
    pub const SHAPE_PTR_ADDR: Field = Field::new("shape_ptr_addr", 1, 6);
    pub const ASYNC: Field = Field::new("async", 0, 1);
    pub const ALL: [Field; 7] = [
        FROM_DEVICE,
        TO_DEVICE,
        DEST_ADDR,
        SRC_ADDR,
        AUX_ADDR,
        SHAPE_PTR_ADDR,
        ASYNC,
    ];
}

pub mod memset {
    use super::Field;
    pub const DEST_CACHE: Field = Field::new("dest_cache", 58, 2);
    pub const DEST_ADDR: Field = Field::new("dest_addr", 52, 6);
    pub const A_VALUE: Field = Field::new("a_value", 36, 16);
    pub const B_VALUE: Field = Field::new("b_value", 20, 16);
    pub const C_VALUE: Field = Field::new("c_value", 4, 16);
    pub const RESERVED: Field = Field::new("reserved", 0, 4);
    pub const ALL: [Field; 6] = [DEST_CACHE, DEST_ADDR, A_VALUE, B_VALUE, C_VALUE, RESERVED];
}

pub mod cvo {
    use super::Field;
    pub const CVO_FUNC: Field = Field::new("cvo_func", 56, 4);
    pub const SRC_ADDR: Field = Field::new("src_addr", 39, 17);
    pub const DST_ADDR: Field = Field::new("dst_addr", 22, 17);
    pub const LENGTH: Field = Field::new("length", 6, 16);
    /// The raw 5-bit value `word[5:1]`.
    pub const FLAGS: Field = Field::new("flags", 1, 5);
    pub const ASYNC: Field = Field::new("async", 0, 1);
    pub const ALL: [Field; 6] = [CVO_FUNC, SRC_ADDR, DST_ADDR, LENGTH, FLAGS, ASYNC];

    /// Bits of the 5-bit flags field value (the seed numbers them one higher,
    /// in body bits; see docs/semantics.md section 2).
    pub const FLAG_SUB_EMAX: u8 = 1 << 4;
    pub const FLAG_RECIP_SCALE: u8 = 1 << 3;
    pub const FLAG_ACCM: u8 = 1 << 2;
    pub const FLAGS_RESERVED: u8 = 0b11;
}

/// A shape-table entry id, as the RTL carries it (`entry_id_t` in
/// hw/rtl/pccx_pkg.sv): the table write the harness observes
/// (`tr_tbl_entry`) and its backdoor write (`bd_tbl_entry`). Not a field of
/// an instruction word, but the pair a MEMSET names (`dest_cache` bit 0,
/// `dest_addr`), so its bits live here with the others.
pub mod entry_id {
    use super::Field;
    use crate::model::ShapeTable;

    /// 1: the weight table, 0: fmap (`ShapeTable as u8`).
    pub const WEIGHT: Field = Field::new("weight", 6, 1);
    pub const INDEX: Field = Field::new("index", 0, 6);
    pub const ALL: [Field; 2] = [WEIGHT, INDEX];

    /// The id of entry `index` of `table`; index bits past the field are
    /// dropped (callers check the index against `SHAPE_ENTRIES`).
    pub const fn encode(table: ShapeTable, index: u8) -> u8 {
        (WEIGHT.put(table as u64) | INDEX.put(index as u64)) as u8
    }

    /// The table and the index an id names.
    pub const fn decode(id: u8) -> (ShapeTable, u8) {
        let table = if WEIGHT.get(id as u64) != 0 {
            ShapeTable::Weight
        } else {
            ShapeTable::Fmap
        };
        (table, INDEX.get(id as u64) as u8)
    }
}
