//! Regressions: the campaign runner (many seeds, a result each) and the
//! reports rendered from its results (the JSON results file, JUnit).

pub mod campaign;
pub mod identity;
pub mod journal;
pub mod junit;
pub mod lock;
pub mod merge;
pub mod results;
pub mod slurm;
pub mod steer;
pub mod store;
