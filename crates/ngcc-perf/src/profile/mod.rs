//! Hash/XOF/DRNG profiling (reference-harness.md §5): which helpers to wrap, the relinked
//! library, and the shares computed from a call table. The child side is
//! `child::profile`, the phase `campaign::phases::profile`.

pub mod heap;
pub mod relink;
pub(crate) mod shares;
pub mod symbols;
