//! One handler per instruction, Spike-style. Each handler checks everything
//! that can fail before its first write, so an instruction in error has no
//! effect (docs/semantics.md section 3), and returns the code it retires with.

mod cvo;
pub mod mat;
pub mod memcpy;
mod memset;

use crate::isa::Instr;
use crate::model::ErrorCode;
use crate::state::State;

/// Executes one legal instruction completely, recording its writes as
/// events of sequence number `seq`.
pub fn execute(state: &mut State, seq: u32, instr: &Instr) -> ErrorCode {
    let result = match instr {
        Instr::Memset(op) => memset::execute(state, seq, op),
        Instr::Memcpy(op) => memcpy::execute(state, seq, op),
        Instr::Gemv(op) => mat::execute(state, seq, mat::MatEngine::Gemv, op),
        Instr::Gemm(op) => mat::execute(state, seq, mat::MatEngine::Gemm, op),
        Instr::Cvo(op) => cvo::execute(state, seq, op),
    };
    result.err().unwrap_or(ErrorCode::Ok)
}
