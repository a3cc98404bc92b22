//! The 128-bit word of L2 and host memory, the vocabulary every other
//! module of the golden model shares (a leaf, so that `model` and `streams`
//! need not import each other).

/// One 128-bit memory word (L2 or host).
pub type Word = u128;
