//! Counters, planning, statistics, host checks.

pub mod bench;
pub mod host;
pub mod stats;
