//! MEMSET (docs/semantics.md section 4): never fails once decoded.

use crate::isa::Memset;
use crate::model::{ErrorCode, ShapeEntry};
use crate::state::State;

pub fn execute(state: &mut State, seq: u32, op: &Memset) -> Result<(), ErrorCode> {
    let entry = ShapeEntry {
        a: op.a_value,
        b: op.b_value,
        c: op.c_value,
    };
    state.write_table(seq, op.dest_cache, op.dest_addr, entry);
    Ok(())
}
