//! Numerics of the GEMV/GEMM engines (CONTRACT sections 5 and 6,
//! docs/numerics.md): exact BF16 rounding and the W4A8 reference math. Pure
//! functions only; the interpreter's GEMV/GEMM (`exec/mat.rs`) is built on
//! them.
pub mod bf16;
pub mod cvo;
pub mod profile;
pub mod w4a8;

pub use bf16::{round_exact, Bf16, Class, Value};
