//! ngcc-perf: build, KAT-check, measure, profile and report PQC submissions.
//!
//! Data flows through a run directory, one phase at a time (see ARCHITECTURE.md).
//! Candidate code only ever runs in child processes (`child`), never in the orchestrator.

pub(crate) mod bench;
pub(crate) mod build;
pub mod campaign;
pub mod candidate;
pub mod child;
pub mod cli;
pub mod csrc;
pub mod dataset;
pub(crate) mod demo;
pub mod iccs;
pub mod journal;
pub mod kat;
pub mod measure;
pub mod observe;
pub mod profile;
pub mod report;
pub mod rundir;
pub(crate) mod samples;
pub mod sandbox;
pub(crate) mod slurm;
pub mod util;
pub(crate) mod validate;
