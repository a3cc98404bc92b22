//! The verification environment: where the models of a run come from (the
//! one factory), and the faults that wrap a DUT to show that checks fire.

#[macro_use]
mod delegate;

pub mod faults;
pub mod models;
