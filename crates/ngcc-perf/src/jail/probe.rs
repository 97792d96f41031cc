//! Which containment this host gives a child, found by running one probe job (the jail
//! built, no candidate code), and the rule that a host with none measures only when told.

use crate::campaign::rundir::RunDir;
use crate::campaign::sandbox::{self, Spec};
use crate::dataset::schema::Containment;
use anyhow::Result;
use std::time::Duration;

/// Runs one probe job in `scratch`; its containment (or why the jail failed).
pub fn probe(scratch: &std::path::Path) -> Result<(Containment, Option<String>)> {
    let spec = Spec {
        workdir: scratch.to_path_buf(),
        timeout: Duration::from_secs(30),
    };
    let out = sandbox::run_job(&spec, None)?;
    Ok((out.observed.containment, out.jail_error))
}

/// Before a phase that runs candidate code: probes the jail, records it in campaign.json,
/// and refuses (exit 2) on a host without any containment unless `allow_uncontained`.
pub fn gate(run: &RunDir, phase: &str, allow_uncontained: bool) -> Result<Containment> {
    let (c, err) = probe(&run.root.join("scratch").join("probe"))?;
    if let Some(e) = err {
        return Err(crate::util::Failure::usage(format!(
            "{phase}: the jail for candidate code could not be set up: {e}"
        )));
    }
    if c.uncontained() && !allow_uncontained {
        for m in &c.missing {
            eprintln!("JAIL: {m}");
        }
        return Err(crate::util::Failure::usage(
            "refusing to run candidate code without any containment layer (no namespaces, Landlock or seccomp); use --allow-uncontained for tests, and the data will say so",
        ));
    }
    let mut campaign = run.load_campaign()?;
    campaign.containment = Some(c.clone());
    campaign.allow_uncontained |= allow_uncontained && c.uncontained();
    run.save_campaign(&campaign)?;
    if c.uncontained() {
        eprintln!("{phase}: running candidate code UNCONTAINED; every record says so");
    } else if !c.missing.is_empty() {
        eprintln!(
            "{phase}: jail: {} (missing: {})",
            c.text(),
            c.missing.join("; ")
        );
    }
    Ok(c)
}
