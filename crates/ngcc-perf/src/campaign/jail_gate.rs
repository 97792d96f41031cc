//! The jail check before the first phase that runs candidate code, and the rule that a host
//! without any containment layer runs candidate code only when told (like the unfixed-host
//! rule of `host_gate`).

use crate::dataset::schema::Containment;
use crate::rundir::RunDir;
use crate::sandbox::jail::JailOptions;
use crate::sandbox::jail::probe::probe;
use anyhow::Result;

/// Probes the jail (built as the campaign's jobs will be: `jail`), records it in
/// campaign.json, and refuses (exit 2) on a host without any containment unless
/// `allow_uncontained`.
pub fn check(
    run: &RunDir,
    phase: &str,
    allow_uncontained: bool,
    jail: &JailOptions,
) -> Result<Containment> {
    let (c, err) = probe(&run.scratch("probe")?, jail)?;
    if let Some(e) = err {
        return Err(crate::util::Failure::usage(format!(
            "{phase}: the jail for candidate code could not be set up: {e}"
        )));
    }
    if c.uncontained() && !allow_uncontained {
        for m in &c.missing {
            crate::util::say!("JAIL: {m}");
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
        crate::util::say!("{phase}: running candidate code UNCONTAINED; every record says so");
    } else if !c.missing.is_empty() {
        crate::util::say!(
            "{phase}: jail: {} (missing: {})",
            c.text(),
            c.missing.join("; ")
        );
    }
    Ok(c)
}
