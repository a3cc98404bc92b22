//! pccx golden model: the ISA (decode/encode), a line-oriented assembler,
//! instruction footprints, and a sequential reference interpreter behind the
//! [`model::NpuModel`] interface.
pub mod asm;
pub mod engine;
pub mod exec;
pub mod footprint;
pub mod golden;
pub mod isa;
pub mod model;
pub mod numerics;
pub mod state;
pub mod streams;
pub mod tables;
pub mod timing;
pub mod word;

pub use engine::{Engine, PerEngine};
pub use golden::{Golden, GoldenConfig};
pub use streams::WeightSource;
pub use tables::Tables;
