//! The pccx instruction word: fields, decode (total) and encode.
//!
//! `decode` maps every 64-bit word to exactly one legal instruction or one
//! illegal variant (docs/semantics.md section 2). The structs keep reserved
//! bits and `aux_addr`, which execution ignores, so that
//! `encode(decode(w)) == w` for every legal word.

pub mod layout;

use crate::model::{ErrorCode, ShapeEntry, ShapeTable};
use layout::Field;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    Gemv = 0,
    Gemm = 1,
    Memcpy = 2,
    Memset = 3,
    Cvo = 4,
}

impl Opcode {
    pub const ALL: [Opcode; 5] = [
        Opcode::Gemv,
        Opcode::Gemm,
        Opcode::Memcpy,
        Opcode::Memset,
        Opcode::Cvo,
    ];

    pub fn from_bits(bits: u8) -> Option<Opcode> {
        Opcode::ALL.get(usize::from(bits)).copied()
    }

    pub fn bits(self) -> u8 {
        self as u8
    }

    /// Upper-case name, as the upstream vectors spell it.
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Gemv => "GEMV",
            Opcode::Gemm => "GEMM",
            Opcode::Memcpy => "MEMCPY",
            Opcode::Memset => "MEMSET",
            Opcode::Cvo => "CVO",
        }
    }
}

/// GEMV / GEMM body (the two share it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatOp {
    pub dest_reg: u32,
    pub src_addr: u32,
    /// Raw 6-bit flags field; see the helper methods.
    pub flags: u8,
    pub size_ptr_addr: u8,
    pub shape_ptr_addr: u8,
    pub parallel_lane: u8,
    pub reserved: u8,
}

impl MatOp {
    pub fn findemax(&self) -> bool {
        self.flags & layout::mat::FLAG_FINDEMAX != 0
    }
    pub fn accm(&self) -> bool {
        self.flags & layout::mat::FLAG_ACCM != 0
    }
    pub fn w_scale(&self) -> bool {
        self.flags & layout::mat::FLAG_W_SCALE != 0
    }
}

/// Direction of a legal MEMCPY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemRoute {
    /// Seed route 0x01.
    HostToL2,
    /// Seed route 0x10.
    L2ToHost,
    L2ToL2,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Memcpy {
    /// 1 = FROM_HOST.
    pub from_device: bool,
    /// 1 = TO_HOST.
    pub to_device: bool,
    pub dest_addr: u32,
    pub src_addr: u32,
    /// Reserved by the seed; kept only so the word round-trips.
    pub aux_addr: u32,
    pub shape_ptr_addr: u8,
    pub async_: bool,
}

impl Memcpy {
    /// The route, or `None` for host -> host (which `decode` never yields).
    pub fn try_route(&self) -> Option<MemRoute> {
        match (self.from_device, self.to_device) {
            (true, false) => Some(MemRoute::HostToL2),
            (false, true) => Some(MemRoute::L2ToHost),
            (false, false) => Some(MemRoute::L2ToL2),
            (true, true) => None,
        }
    }

    /// The route of a legal MEMCPY.
    ///
    /// # Panics
    /// On a hand-built host -> host value: `decode` reports that encoding as
    /// [`IllegalReason::Direction`], so no decoded `Memcpy` has it.
    pub fn route(&self) -> MemRoute {
        self.try_route()
            .expect("MEMCPY host -> host is illegal and has no route")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Memset {
    pub dest_cache: ShapeTable,
    pub dest_addr: u8,
    pub a_value: u16,
    pub b_value: u16,
    pub c_value: u16,
    pub reserved: u8,
}

impl Memset {
    /// The shape-table entry the MEMSET writes.
    pub fn entry(&self) -> ShapeEntry {
        ShapeEntry {
            a: self.a_value,
            b: self.b_value,
            c: self.c_value,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvoFunc {
    Exp = 0,
    Sqrt = 1,
    Gelu = 2,
    Sin = 3,
    Cos = 4,
    ReduceSum = 5,
    Scale = 6,
    Recip = 7,
}

impl CvoFunc {
    pub const ALL: [CvoFunc; 8] = [
        CvoFunc::Exp,
        CvoFunc::Sqrt,
        CvoFunc::Gelu,
        CvoFunc::Sin,
        CvoFunc::Cos,
        CvoFunc::ReduceSum,
        CvoFunc::Scale,
        CvoFunc::Recip,
    ];

    pub fn from_bits(bits: u8) -> Option<CvoFunc> {
        CvoFunc::ALL.get(usize::from(bits)).copied()
    }

    pub fn bits(self) -> u8 {
        self as u8
    }

    /// Lower-case name, as the assembler spells it after `cvo.`.
    pub fn name(self) -> &'static str {
        match self {
            CvoFunc::Exp => "exp",
            CvoFunc::Sqrt => "sqrt",
            CvoFunc::Gelu => "gelu",
            CvoFunc::Sin => "sin",
            CvoFunc::Cos => "cos",
            CvoFunc::ReduceSum => "reduce_sum",
            CvoFunc::Scale => "scale",
            CvoFunc::Recip => "recip",
        }
    }

    pub fn from_name(name: &str) -> Option<CvoFunc> {
        CvoFunc::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cvo {
    pub func: CvoFunc,
    pub src_addr: u32,
    pub dst_addr: u32,
    pub length: u16,
    /// Raw 5-bit flags field `word[5:1]`; see the helper methods.
    pub flags: u8,
    pub async_: bool,
}

impl Cvo {
    pub fn sub_emax(&self) -> bool {
        self.flags & layout::cvo::FLAG_SUB_EMAX != 0
    }
    pub fn recip_scale(&self) -> bool {
        self.flags & layout::cvo::FLAG_RECIP_SCALE != 0
    }
    pub fn accm(&self) -> bool {
        self.flags & layout::cvo::FLAG_ACCM != 0
    }
}

/// A legal instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    Gemv(MatOp),
    Gemm(MatOp),
    Memcpy(Memcpy),
    Memset(Memset),
    Cvo(Cvo),
}

impl Instr {
    pub fn opcode(&self) -> Opcode {
        match self {
            Instr::Gemv(_) => Opcode::Gemv,
            Instr::Gemm(_) => Opcode::Gemm,
            Instr::Memcpy(_) => Opcode::Memcpy,
            Instr::Memset(_) => Opcode::Memset,
            Instr::Cvo(_) => Opcode::Cvo,
        }
    }

    /// The instruction word. A field value wider than its field is truncated
    /// to the field's width (decoded values always fit).
    pub fn encode(&self) -> u64 {
        layout::OPCODE.put(u64::from(self.opcode().bits())) | self.encode_body()
    }

    fn encode_body(&self) -> u64 {
        use layout::{cvo as c, mat as g, memcpy as mc, memset as ms};
        match self {
            Instr::Gemv(m) | Instr::Gemm(m) => {
                g::DEST_REG.put(m.dest_reg.into())
                    | g::SRC_ADDR.put(m.src_addr.into())
                    | g::FLAGS.put(m.flags.into())
                    | g::SIZE_PTR_ADDR.put(m.size_ptr_addr.into())
                    | g::SHAPE_PTR_ADDR.put(m.shape_ptr_addr.into())
                    | g::PARALLEL_LANE.put(m.parallel_lane.into())
                    | g::RESERVED.put(m.reserved.into())
            }
            Instr::Memcpy(m) => {
                mc::FROM_DEVICE.put(m.from_device.into())
                    | mc::TO_DEVICE.put(m.to_device.into())
                    | mc::DEST_ADDR.put(m.dest_addr.into())
                    | mc::SRC_ADDR.put(m.src_addr.into())
                    | mc::AUX_ADDR.put(m.aux_addr.into())
                    | mc::SHAPE_PTR_ADDR.put(m.shape_ptr_addr.into())
                    | mc::ASYNC.put(m.async_.into())
            }
            Instr::Memset(m) => {
                ms::DEST_CACHE.put(m.dest_cache as u64)
                    | ms::DEST_ADDR.put(m.dest_addr.into())
                    | ms::A_VALUE.put(m.a_value.into())
                    | ms::B_VALUE.put(m.b_value.into())
                    | ms::C_VALUE.put(m.c_value.into())
                    | ms::RESERVED.put(m.reserved.into())
            }
            Instr::Cvo(m) => {
                c::CVO_FUNC.put(m.func.bits().into())
                    | c::SRC_ADDR.put(m.src_addr.into())
                    | c::DST_ADDR.put(m.dst_addr.into())
                    | c::LENGTH.put(m.length.into())
                    | c::FLAGS.put(m.flags.into())
                    | c::ASYNC.put(m.async_.into())
            }
        }
    }
}

/// Why the decoder rejects a word (docs/semantics.md section 2; the variant
/// carries the offending raw field value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IllegalReason {
    /// Opcode 5-F.
    Opcode(u8),
    /// CVO with cvo_func 8-F.
    CvoFunc(u8),
    /// MEMSET with dest_cache 2-3.
    DestCache(u8),
    /// MEMCPY host -> host.
    Direction,
}

impl IllegalReason {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            IllegalReason::Opcode(_) => ErrorCode::IllegalOpcode,
            IllegalReason::CvoFunc(_) => ErrorCode::IllegalFunc,
            IllegalReason::DestCache(_) => ErrorCode::IllegalDestCache,
            IllegalReason::Direction => ErrorCode::IllegalDirection,
        }
    }
}

impl fmt::Display for IllegalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IllegalReason::Opcode(op) => write!(f, "opcode 0x{op:x}"),
            IllegalReason::CvoFunc(func) => write!(f, "cvo_func 0x{func:x}"),
            IllegalReason::DestCache(cache) => write!(f, "memset dest_cache {cache}"),
            IllegalReason::Direction => f.write_str("memcpy host -> host"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decoded {
    Legal(Instr),
    Illegal { word: u64, reason: IllegalReason },
}

impl Decoded {
    /// The code the decoder retires the word with: `Ok` for a legal word
    /// (its engine may still fail it).
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Decoded::Legal(_) => ErrorCode::Ok,
            Decoded::Illegal { reason, .. } => reason.error_code(),
        }
    }
}

/// The raw 4-bit opcode of any word (what the retire trace reports).
pub fn opcode_bits(word: u64) -> u8 {
    layout::OPCODE.get(word) as u8
}

fn get_u32(field: Field, word: u64) -> u32 {
    field.get(word) as u32
}

fn get_u16(field: Field, word: u64) -> u16 {
    field.get(word) as u16
}

fn get_u8(field: Field, word: u64) -> u8 {
    field.get(word) as u8
}

fn get_bool(field: Field, word: u64) -> bool {
    field.get(word) != 0
}

/// Decodes any word. The opcode is checked first, then the opcode's own
/// illegal-field rule (each opcode has at most one, so the priority order of
/// docs/semantics.md section 2 follows).
pub fn decode(word: u64) -> Decoded {
    match decode_legal(word) {
        Ok(instr) => Decoded::Legal(instr),
        Err(reason) => Decoded::Illegal { word, reason },
    }
}

fn decode_legal(word: u64) -> Result<Instr, IllegalReason> {
    use layout::{cvo as c, mat as g, memcpy as mc, memset as ms};
    let op = opcode_bits(word);
    let opcode = Opcode::from_bits(op).ok_or(IllegalReason::Opcode(op))?;
    let mat = || MatOp {
        dest_reg: get_u32(g::DEST_REG, word),
        src_addr: get_u32(g::SRC_ADDR, word),
        flags: get_u8(g::FLAGS, word),
        size_ptr_addr: get_u8(g::SIZE_PTR_ADDR, word),
        shape_ptr_addr: get_u8(g::SHAPE_PTR_ADDR, word),
        parallel_lane: get_u8(g::PARALLEL_LANE, word),
        reserved: get_u8(g::RESERVED, word),
    };
    Ok(match opcode {
        Opcode::Gemv => Instr::Gemv(mat()),
        Opcode::Gemm => Instr::Gemm(mat()),
        Opcode::Memcpy => {
            let m = Memcpy {
                from_device: get_bool(mc::FROM_DEVICE, word),
                to_device: get_bool(mc::TO_DEVICE, word),
                dest_addr: get_u32(mc::DEST_ADDR, word),
                src_addr: get_u32(mc::SRC_ADDR, word),
                aux_addr: get_u32(mc::AUX_ADDR, word),
                shape_ptr_addr: get_u8(mc::SHAPE_PTR_ADDR, word),
                async_: get_bool(mc::ASYNC, word),
            };
            m.try_route().ok_or(IllegalReason::Direction)?;
            Instr::Memcpy(m)
        }
        Opcode::Memset => {
            let cache = get_u8(ms::DEST_CACHE, word);
            let dest_cache = match cache {
                0 => ShapeTable::Fmap,
                1 => ShapeTable::Weight,
                _ => return Err(IllegalReason::DestCache(cache)),
            };
            Instr::Memset(Memset {
                dest_cache,
                dest_addr: get_u8(ms::DEST_ADDR, word),
                a_value: get_u16(ms::A_VALUE, word),
                b_value: get_u16(ms::B_VALUE, word),
                c_value: get_u16(ms::C_VALUE, word),
                reserved: get_u8(ms::RESERVED, word),
            })
        }
        Opcode::Cvo => {
            let code = get_u8(c::CVO_FUNC, word);
            Instr::Cvo(Cvo {
                func: CvoFunc::from_bits(code).ok_or(IllegalReason::CvoFunc(code))?,
                src_addr: get_u32(c::SRC_ADDR, word),
                dst_addr: get_u32(c::DST_ADDR, word),
                length: get_u16(c::LENGTH, word),
                flags: get_u8(c::FLAGS, word),
                async_: get_bool(c::ASYNC, word),
            })
        }
    })
}

/// The field layout an opcode's words use, opcode field excluded; an
/// illegal opcode has just a body.
pub fn layout_of(opcode_bits: u8) -> &'static [Field] {
    match Opcode::from_bits(opcode_bits) {
        Some(Opcode::Gemv | Opcode::Gemm) => &layout::mat::ALL,
        Some(Opcode::Memcpy) => &layout::memcpy::ALL,
        Some(Opcode::Memset) => &layout::memset::ALL,
        Some(Opcode::Cvo) => &layout::cvo::ALL,
        None => std::slice::from_ref(&layout::BODY),
    }
}

/// Every field of `word` by its seed name with its raw value, the opcode
/// first; the layout follows the opcode field alone, so words with an
/// illegal function, dest_cache or direction still show all their fields.
pub fn fields(word: u64) -> Vec<(&'static str, u64)> {
    let op = opcode_bits(word);
    std::iter::once(layout::OPCODE)
        .chain(layout_of(op).iter().copied())
        .map(|f| (f.name, f.get(word)))
        .collect()
}

/// "GEMV", "GEMM", "MEMCPY", "MEMSET", "CVO", or "ILLEGAL" for any word the
/// decoder rejects.
pub fn op_name(word: u64) -> &'static str {
    match decode(word) {
        Decoded::Legal(instr) => instr.opcode().name(),
        Decoded::Illegal { .. } => "ILLEGAL",
    }
}

#[cfg(test)]
mod tests;
