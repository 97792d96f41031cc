//! Which containment this host gives a child, found by running one probe job (the jail
//! built, no candidate code). The rule that a host with none runs candidate code only when
//! told is the campaign's (`campaign::jail_gate`).

use crate::dataset::schema::Containment;
use crate::sandbox::jail::JailOptions;
use crate::sandbox::{self, Spec};
use anyhow::Result;
use std::time::Duration;

/// Runs one probe job in `scratch`, its jail built as `options` says; its containment (or
/// why the jail failed).
pub fn probe(
    scratch: &std::path::Path,
    options: &JailOptions,
) -> Result<(Containment, Option<String>)> {
    let spec = Spec {
        workdir: scratch.to_path_buf(),
        timeout: Duration::from_secs(30),
    };
    let out = sandbox::run_probe(&spec, options)?;
    Ok((out.observed.containment, out.jail_error))
}
