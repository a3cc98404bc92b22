//! Regressions: the campaign runner (many seeds, a result each) and the
//! reports rendered from its results (JSON, JUnit).

pub mod campaign;
pub mod junit;
