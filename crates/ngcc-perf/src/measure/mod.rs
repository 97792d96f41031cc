//! Counters, planning, statistics (dudect's Welch tests too), host checks.

pub mod calibration;
pub mod callgrind;
pub mod client_requests;
pub mod clock;
pub mod core_clock;
pub mod counter;
pub mod crosscheck;
pub mod dudect;
pub mod host;
pub mod memcheck;
pub mod noise;
pub mod plan;
pub mod stats;
pub mod timing;
