//! Counters, planning, statistics, host checks.

pub mod calibration;
pub mod counter;
pub mod host;
pub mod noise;
pub mod plan;
pub mod stats;
pub mod timing;
