//! pccx golden model.
pub mod model;
