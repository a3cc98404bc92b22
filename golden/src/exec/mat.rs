//! GEMV and GEMM: slice-1 placeholder (docs/semantics.md section 11). The
//! instruction retires with UNIMPLEMENTED and no effect until the engines
//! and docs/numerics.md land.

use crate::isa::MatOp;
use crate::model::ErrorCode;
use crate::state::State;

pub fn execute(_state: &mut State, _seq: u32, _op: &MatOp) -> Result<(), ErrorCode> {
    Err(ErrorCode::Unimplemented)
}
