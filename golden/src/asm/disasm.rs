//! Word -> one line of assembly.

use crate::isa::{decode, layout, Cvo, Decoded, Instr, MatOp, Memcpy, Memset};
use std::fmt::Write;

/// One line, no trailing newline. Legal words use the mnemonic form and
/// print every non-zero ignored field (reserved bits, aux_addr) so that the
/// line assembles back to the same word; illegal words print as `.word`.
pub fn disasm(word: u64) -> String {
    match decode(word) {
        Decoded::Legal(Instr::Memset(m)) => memset(&m),
        Decoded::Legal(Instr::Memcpy(m)) => memcpy(&m),
        Decoded::Legal(Instr::Gemv(m)) => mat("gemv", &m),
        Decoded::Legal(Instr::Gemm(m)) => mat("gemm", &m),
        Decoded::Legal(Instr::Cvo(c)) => cvo(&c),
        Decoded::Illegal { word, reason } => format!(".word 0x{word:016x} ; illegal: {reason}"),
    }
}

fn memset(m: &Memset) -> String {
    let mut s = format!(
        "memset {}[{}] = ({}, {}, {})",
        m.dest_cache.name(),
        m.dest_addr,
        m.a_value,
        m.b_value,
        m.c_value
    );
    if m.reserved != 0 {
        let _ = write!(s, ", rsvd=0x{:x}", m.reserved);
    }
    s
}

fn memory(is_host: bool) -> &'static str {
    if is_host {
        "host"
    } else {
        "l2"
    }
}

fn memcpy(m: &Memcpy) -> String {
    let mut s = format!(
        "memcpy {}[{}] <- {}[{}], shape={}",
        memory(m.to_device),
        m.dest_addr,
        memory(m.from_device),
        m.src_addr,
        m.shape_ptr_addr
    );
    if m.async_ {
        s += ", async";
    }
    if m.aux_addr != 0 {
        let _ = write!(s, ", aux=0x{:x}", m.aux_addr);
    }
    s
}

fn mat(mnemonic: &str, m: &MatOp) -> String {
    let mut s = format!(
        "{mnemonic} l2[{}] <- l2[{}], fmap={}, weight={}, lanes={}",
        m.dest_reg, m.src_addr, m.shape_ptr_addr, m.size_ptr_addr, m.parallel_lane
    );
    for (on, name) in [
        (m.findemax(), "findemax"),
        (m.accm(), "accm"),
        (m.w_scale(), "w_scale"),
    ] {
        if on {
            let _ = write!(s, ", {name}");
        }
    }
    let flags_rsvd = m.flags & layout::mat::FLAGS_RESERVED;
    if flags_rsvd != 0 {
        let _ = write!(s, ", flags_rsvd={flags_rsvd}");
    }
    if m.reserved != 0 {
        let _ = write!(s, ", rsvd={}", m.reserved);
    }
    s
}

fn cvo(c: &Cvo) -> String {
    let mut s = format!(
        "cvo.{} l2[{}] <- l2[{}], len={}",
        c.func.name(),
        c.dst_addr,
        c.src_addr,
        c.length
    );
    for (on, name) in [
        (c.sub_emax(), "sub_emax"),
        (c.recip_scale(), "recip_scale"),
        (c.accm(), "accm"),
    ] {
        if on {
            let _ = write!(s, ", {name}");
        }
    }
    let flags_rsvd = c.flags & layout::cvo::FLAGS_RESERVED;
    if flags_rsvd != 0 {
        let _ = write!(s, ", flags_rsvd={flags_rsvd}");
    }
    if c.async_ {
        s += ", async";
    }
    s
}
