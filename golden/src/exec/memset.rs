//! MEMSET (docs/semantics.md section 4): never fails once decoded.

use crate::isa::Memset;
use crate::model::ErrorCode;
use crate::state::State;

pub fn execute(state: &mut State, seq: u32, op: &Memset) -> Result<(), ErrorCode> {
    state.write_table(seq, op.dest_cache, op.dest_addr, op.entry());
    Ok(())
}
