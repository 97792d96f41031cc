//! Counters, planning, statistics, host checks.

pub mod counter;
pub mod crosscheck;
pub mod host;
pub mod plan;
pub mod stats;
pub mod timing;
