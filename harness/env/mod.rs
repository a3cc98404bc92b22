//! The verification environment: where the models of a run come from (the
//! one factory), the faults that wrap a DUT to show that checks fire, and the
//! view of a DUT at a lower observation level.

#[macro_use]
mod delegate;

pub mod faults;
pub mod models;
pub mod numerics;
pub mod observed;
