//! MEMCPY (docs/semantics.md section 5).

use crate::isa::{MemRoute, Memcpy};
use crate::model::{ErrorCode, ShapeTable};
use crate::state::State;
use crate::tables::memcpy_words;

pub fn execute(state: &mut State, seq: u32, op: &Memcpy) -> Result<(), ErrorCode> {
    let len = memcpy_words(state.tables.get(ShapeTable::Fmap, op.shape_ptr_addr));
    let (src, dest) = (u64::from(op.src_addr), u64::from(op.dest_addr));
    let route = op.route();
    // Source first, then destination: the first failing range names the code.
    match route {
        MemRoute::HostToL2 => state.check_host(src, len)?,
        MemRoute::L2ToHost | MemRoute::L2ToL2 => state.check_l2(src, len)?,
    }
    match route {
        MemRoute::L2ToHost => state.check_host(dest, len)?,
        MemRoute::HostToL2 | MemRoute::L2ToL2 => state.check_l2(dest, len)?,
    }
    // All reads before any write: memmove semantics for overlapping L2 -> L2.
    let data = match route {
        MemRoute::HostToL2 => state.read_host(src, len),
        MemRoute::L2ToHost | MemRoute::L2ToL2 => state.read_l2(src, len),
    };
    for (addr, word) in (dest..).zip(data) {
        match route {
            MemRoute::L2ToHost => state.write_host(seq, addr, word),
            MemRoute::HostToL2 | MemRoute::L2ToL2 => state.write_l2(seq, addr, word, 0xFF),
        }
    }
    Ok(())
}
