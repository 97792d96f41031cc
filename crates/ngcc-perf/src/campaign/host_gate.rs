//! The host check before measuring phases, and what it leaves in campaign.json.

use crate::dataset::schema::{CounterKind, EnvField, HostCheck, HostEnv, Planning};
use crate::measure::host;
use crate::rundir::RunDir;
use crate::util::time::utc_now_iso;
use anyhow::Result;

/// What every record of this phase is labelled with.
#[derive(Debug, Clone)]
pub struct HostState {
    pub problems: Vec<String>,
    pub allow_unfixed: bool,
    pub environment: HostEnv,
    pub counter: CounterKind,
    pub counter_hz: Option<f64>,
}

impl HostState {
    pub fn fixed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the host; refuses (exit 2) on problems unless `allow_unfixed`. Records the check,
/// the environment and the planning in campaign.json (planning must not change once
/// records exist).
pub fn check(
    run: &RunDir,
    phase: &str,
    cpu: u32,
    allow_unfixed: bool,
    planning: &Planning,
    shard: Option<(u32, u32)>,
) -> Result<HostState> {
    let problems = host::host_problems(cpu);
    if !problems.is_empty() && !allow_unfixed {
        for p in &problems {
            crate::util::say!("HOST: {p}");
        }
        return Err(crate::util::Failure::usage(
            "refusing to measure on an unfixed host (use --allow-unfixed-host for tests, and the data will say so)",
        ));
    }
    let environment = host::environment(cpu);
    let counter = match &environment.counter {
        EnvField::Value(c) => c.clone(),
        _ => CounterKind::None,
    };
    let counter_hz = environment.counter_hz.json_f64();
    let mut c = run.load_campaign()?;
    if let Some(old) = &c.planning
        && old != planning
        && run.root.join("records").is_dir()
    {
        return Err(crate::util::Failure::usage(format!(
            "run directory was measured with planning trial_target_s={} op_budget_s={}; pass the same --trial-target/--op-budget",
            old.trial_target_s, old.op_budget_s
        )));
    }
    c.planning = Some(planning.clone());
    c.environment_at_start
        .get_or_insert_with(|| environment.clone());
    c.host_checks.push(HostCheck {
        phase: phase.into(),
        cpu,
        utc: utc_now_iso(),
        problems: problems.clone(),
        shard: shard.map(|(k, n)| format!("{k}/{n}")),
        host: environment.hostname.text(),
    });
    for p in &problems {
        if !c.host_problems.contains(p) {
            c.host_problems.push(p.clone());
        }
    }
    c.host_problems.sort();
    c.allow_unfixed_host |= allow_unfixed && !problems.is_empty();
    c.counter = Some(counter.clone());
    if let Some((_, n)) = shard {
        c.shards = Some(c.shards.unwrap_or(0).max(n));
    }
    c.environment_at_end = Some(environment.clone());
    run.save_campaign(&c)?;
    if !problems.is_empty() {
        crate::util::say!(
            "{phase}: measuring on an UNFIXED host ({}); every record says so",
            problems.join("; ")
        );
    }
    Ok(HostState {
        problems,
        allow_unfixed,
        environment,
        counter,
        counter_hz,
    })
}
