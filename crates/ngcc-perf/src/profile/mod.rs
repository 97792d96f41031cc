//! Relink with wrappers, read helper counters, compute shares.
