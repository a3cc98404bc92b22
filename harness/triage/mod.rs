//! After a mismatch: what kind of bug it looks like (signature), the smallest
//! program that still shows it (shrink), the file that replays it (repro) and
//! the waveform around it (wave).

pub mod repro;
pub mod shrink;
pub mod signature;
pub mod wave;
