//! `ngcc-perf slurm`: prints a bash driver that runs one campaign on a Slurm cluster. It
//! submits three jobs: build and KAT once (the shared run directory CAMP/build), then a job
//! array of N tasks each measuring one shard (`campaign … --shard auto`, its own run directory
//! CAMP/shard-K seeded from CAMP/build), then the merge into CAMP/dataset with catalog,
//! validation and pages, after the whole array succeeded (`--dependency=afterok`). The same
//! driver resubmits array indices alone (`bash driver shard K`) and a new merge after them.
//! Nothing here talks to Slurm: the script is text, run by the user where sbatch is.

use crate::campaign::{self, CampaignArgs, Phase};
use crate::util::Failure;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const AFTER_HELP: &str = "\
--run DIR is the campaign folder: DIR/build (build and KAT, once), DIR/shard-K (array task K),
DIR/dataset, DIR/catalog, DIR/pages (the merge job), DIR/logs (Slurm output). --shard,
--shard-count and --build-from are set by the script. Every node must see DIR, the candidates
and the ngcc-perf binary at the same paths (a shared file system), and have gcc.

Example:
  ngcc-perf slurm all --candidates cands --run /shared/camp --shards 16 --system x86_2 > camp.sh
  bash camp.sh            # build job, array 1-16, merge
  bash camp.sh shard 7    # task 7 failed or was cancelled: resubmit it alone, and the merge";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct SlurmArgs {
    /// The campaign, with the arguments `campaign` takes: PHASES (`all`, or build/kat for the
    /// build job and calibrate/measure/profile for the array), --candidates, --run (here the
    /// campaign folder holding build/, shard-K/, dataset/, logs/), budgets and the rest.
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Array tasks, one shard each.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// What an array task gets: `core` (one exclusive core of a shared node, which needs
    /// SelectTypeParameters=CR_Core or CR_Core_Memory) or `node` (a whole node; the benchmark
    /// CPU is its last one, or --cpu).
    #[arg(long, value_enum, default_value_t = PerTask::Core)]
    pub per_task: PerTask,
    /// System id of the merged dataset.
    #[arg(long)]
    pub system: String,
    /// Slurm partition of every job.
    #[arg(long)]
    pub partition: Option<String>,
    /// Time limit of every job (sbatch --time), e.g. `2-00:00:00`.
    #[arg(long)]
    pub time: Option<String>,
    /// A further sbatch option for every job, e.g. `--sbatch=--account=pqc` (repeat).
    #[arg(long = "sbatch", value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// The ngcc-perf binary the jobs run (default: this one); every node must reach it.
    #[arg(long)]
    pub exe: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PerTask {
    Core,
    Node,
}

pub fn run(args: SlurmArgs) -> Result<ExitCode> {
    let exe = match &args.exe {
        Some(e) => std::path::absolute(e)?,
        None => std::env::current_exe()?,
    };
    crate::util::out_text!("{}", script(&args, &exe)?);
    Ok(ExitCode::SUCCESS)
}

/// Shell word for `s` (quoted only when needed).
fn q(s: &str) -> Result<String> {
    shlex::try_quote(s)
        .map(|c| c.into_owned())
        .map_err(|e| Failure::usage(format!("cannot quote {s:?} for the shell: {e}")))
}

fn qp(p: &Path) -> Result<String> {
    q(&p.to_string_lossy())
}

fn abs(p: &Path) -> Result<PathBuf> {
    Ok(std::path::absolute(p)?)
}

/// The command lines of the build job and of an array task (`campaign …`, no binary).
/// Every field of the campaign arguments is placed here or refused, so a new campaign
/// option cannot be forgotten (the destructuring below stops compiling).
fn campaign_lines(args: &SlurmArgs, camp: &Path) -> Result<(Option<String>, String)> {
    let CampaignArgs {
        phases,
        candidates,
        run: _,
        only,
        jobs,
        quick,
        require_pass,
        kat_timeout,
        cpu,
        trial_target,
        op_budget,
        allow_unfixed_host,
        shard,
        shard_count,
        build_from,
        kat_issues,
        measure_timeout,
        mem_limit,
        allow_uncontained,
        build_timeout,
        build_mem_limit,
        allow_source_root,
        iccs_helpers: _,
        ct_budget,
        ct_measurements,
        ct_runs,
        count_calls,
        count_budget,
    } = &args.campaign;
    if shard.is_some() || shard_count.is_some() {
        return Err(Failure::usage(
            "slurm: --shard/--shard-count are set by the job array (use --shards N for its size)",
        ));
    }
    if build_from.is_some() {
        return Err(Failure::usage(
            "slurm: --build-from is set by the script (the array measures CAMP/build)",
        ));
    }
    if cpu.is_some() && args.per_task == PerTask::Core {
        return Err(Failure::usage(
            "slurm: with --per-task core every task measures on the core Slurm gave it; --cpu needs --per-task node",
        ));
    }
    if args.shards == 0 {
        return Err(Failure::usage("slurm: --shards must be at least 1"));
    }
    let all = Phase::parse_list(phases)?;
    let names = |keep: &dyn Fn(Phase) -> bool| -> Vec<&'static str> {
        all.iter()
            .copied()
            .filter(|p| keep(*p))
            .map(Phase::name)
            .collect()
    };
    if all.contains(&Phase::Baseline) {
        // Its records would come from every shard; it is one short run, not an array's work.
        return Err(Failure::usage(
            "slurm: run the baseline phase once outside the array (`campaign baseline --run RUN`)",
        ));
    }
    let build_phases = names(&|p| matches!(p, Phase::Build | Phase::Kat));
    let shard_phases = names(&|p| !matches!(p, Phase::Build | Phase::Kat));
    if shard_phases.is_empty() {
        return Err(Failure::usage(
            "slurm: no timing phase (calibrate, measure, profile) for the array to run",
        ));
    }
    let mut common = String::new();
    for c in candidates {
        let c = abs(c)?;
        if !c.is_dir() {
            return Err(Failure::usage(format!(
                "slurm: --candidates {} is not a folder",
                c.display()
            )));
        }
        write!(common, " --candidates {}", qp(&c)?)?;
    }
    if let Some(o) = only {
        write!(common, " --only {}", q(o)?)?;
    }
    write!(common, " --mem-limit {mem_limit}")?;
    // What the jail and the bounded compiler need in every job (KAT and the profile phase's
    // relink and KAT check run in the array too).
    for r in allow_source_root {
        write!(common, " --allow-source-root {}", qp(&abs(r)?)?)?;
    }
    write!(
        common,
        " --build-timeout {build_timeout} --build-mem-limit {build_mem_limit}"
    )?;
    if *allow_uncontained {
        common.push_str(" --allow-uncontained");
    }

    let build = if build_phases.is_empty() {
        None
    } else {
        let mut b = format!(
            "campaign {}{common} --run {}",
            build_phases.join(","),
            qp(&camp.join("build"))?
        );
        if let Some(j) = jobs {
            write!(b, " --jobs {j}")?;
        }
        if *quick {
            b.push_str(" --quick");
        }
        if *require_pass {
            b.push_str(" --require-pass");
        }
        write!(b, " --kat-timeout {kat_timeout}")?;
        Some(b)
    };
    let mut s = format!(
        "campaign {}{common} --run {} --build-from {} --shard auto --shard-count {}",
        shard_phases.join(","),
        qp(&camp.join(format!("shard-{}", campaign::shard::PLACEHOLDER)))?,
        qp(&camp.join("build"))?,
        args.shards
    );
    write!(s, " --trial-target {trial_target} --op-budget {op_budget}")?;
    if all.contains(&Phase::Ct) {
        write!(
            s,
            " --ct-budget {ct_budget} --ct-measurements {ct_measurements} --ct-runs {ct_runs}"
        )?;
    }
    if all.contains(&Phase::Count) {
        write!(
            s,
            " --count-calls {count_calls} --count-budget {count_budget}"
        )?;
    }
    if *allow_unfixed_host {
        s.push_str(" --allow-unfixed-host");
    }
    if let Some(t) = measure_timeout {
        write!(s, " --measure-timeout {t}")?;
    }
    if let Some(k) = kat_issues {
        write!(s, " --kat-issues {}", qp(&abs(k)?)?)?;
    }
    if let Some(c) = cpu {
        write!(s, " --cpu {c}")?;
    }
    // The profile phase's KAT check of a relinked library.
    write!(s, " --kat-timeout {kat_timeout}")?;
    Ok((build, s))
}

/// The driver script for `args`, whose jobs run `exe`.
pub fn script(args: &SlurmArgs, exe: &Path) -> Result<String> {
    let camp = abs(&args.campaign.run)?;
    if camp
        .to_string_lossy()
        .contains(campaign::shard::PLACEHOLDER)
    {
        return Err(Failure::usage(
            "slurm: --run is the campaign folder; the script names the shard run directories itself",
        ));
    }
    let (build, shard) = campaign_lines(args, &camp)?;
    let n = args.shards;
    let ngcc = qp(exe)?;
    let name = camp
        .file_name()
        .map_or("campaign".into(), |n| n.to_string_lossy().into_owned());
    let job = |what: &str| q(&format!("ngcc-{name}-{what}"));
    let mut common = String::from("--parsable --chdir=\"$camp\"");
    if let Some(p) = &args.partition {
        write!(common, " --partition={}", q(p)?)?;
    }
    if let Some(t) = &args.time {
        write!(common, " --time={}", q(t)?)?;
    }
    for o in &args.sbatch {
        write!(common, " {}", q(o)?)?;
    }
    let per_task = match args.per_task {
        PerTask::Core => "--ntasks=1 --cpus-per-task=1 --hint=nomultithread",
        PerTask::Node => "--nodes=1 --ntasks=1 --exclusive",
    };
    let build_res = match args.campaign.jobs {
        Some(j) => format!("--ntasks=1 --cpus-per-task={j}"),
        None => "--nodes=1 --ntasks=1 --exclusive".into(),
    };
    let d = |p: &str| qp(&camp.join(p));
    let shard_dirs: Vec<String> = (1..=n)
        .map(|k| d(&format!("shard-{k}")))
        .collect::<Result<_>>()?;
    let (dataset, catalog, pages) = (d("dataset")?, d("catalog")?, d("pages")?);
    let system = q(&args.system)?;

    let mut o = String::new();
    writeln!(o, "#!/usr/bin/env bash")?;
    writeln!(
        o,
        "# One ngcc-perf campaign on Slurm, written by `ngcc-perf slurm` ({} {}).",
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(
        o,
        "#   bash THIS            submit: build and KAT once, then {n} array task(s) measuring one shard each, then the merge"
    )?;
    writeln!(
        o,
        "#   bash THIS shard K…   resubmit array index K… alone (a task that failed or was cancelled), and a new merge after it"
    )?;
    writeln!(o, "#   bash THIS merge      submit the merge alone")?;
    writeln!(
        o,
        "# In {}: build/ (the shared build run), shard-K/ (run directory of task K, resumed on",
        camp.display()
    )?;
    writeln!(
        o,
        "# resubmission), dataset/ (merged), catalog/, pages/, logs/ (Slurm output)."
    )?;
    writeln!(o, "set -euo pipefail")?;
    writeln!(o, "camp={}", qp(&camp)?)?;
    writeln!(o, "mkdir -p \"$camp/logs\"")?;
    writeln!(o, "submit() {{ sbatch {common} \"$@\" | cut -d';' -f1; }}")?;
    if let Some(b) = &build {
        writeln!(o, "build_job() {{")?;
        writeln!(
            o,
            "  submit --job-name={} --output=\"$camp/logs/%x-%j.out\" {build_res} \"$@\" <<'NGCC_JOB'",
            job("build")?
        )?;
        writeln!(
            o,
            "#!/bin/bash\nset -euo pipefail\nexec {ngcc} {b}\nNGCC_JOB\n}}"
        )?;
    }
    writeln!(o, "shard_job() {{")?;
    writeln!(
        o,
        "  submit --job-name={} --output=\"$camp/logs/%x-%A_%a.out\" {per_task} \"$@\" <<'NGCC_JOB'",
        job("shard")?
    )?;
    writeln!(
        o,
        "#!/bin/bash\nset -euo pipefail\n# K is this task's array index (SLURM_ARRAY_TASK_ID, 1-{n}).\nexec {ngcc} {shard}\nNGCC_JOB\n}}"
    )?;
    writeln!(o, "merge_job() {{")?;
    writeln!(
        o,
        "  submit --job-name={} --output=\"$camp/logs/%x-%j.out\" --ntasks=1 \"$@\" <<'NGCC_JOB'",
        job("merge")?
    )?;
    writeln!(o, "#!/bin/bash\nset -euo pipefail")?;
    writeln!(
        o,
        "{ngcc} merge {} --out {dataset} --system {system}",
        shard_dirs.join(" ")
    )?;
    writeln!(
        o,
        "{ngcc} catalog {dataset} --out {catalog} --system {system}"
    )?;
    writeln!(o, "{ngcc} validate {dataset} --catalog {catalog}")?;
    writeln!(
        o,
        "{ngcc} report {dataset} --catalog {catalog} --out {pages}"
    )?;
    writeln!(o, "NGCC_JOB\n}}")?;
    writeln!(o, "case \"${{1:-all}}\" in")?;
    writeln!(o, "  all)")?;
    let after_build = if build.is_some() {
        writeln!(o, "    build=$(build_job)")?;
        writeln!(o, "    echo \"build job $build\"")?;
        " --dependency=afterok:$build --kill-on-invalid-dep=yes"
    } else {
        ""
    };
    writeln!(o, "    array=$(shard_job --array=1-{n}{after_build})")?;
    writeln!(o, "    echo \"array job $array (tasks 1-{n})\"")?;
    writeln!(
        o,
        "    merge=$(merge_job --dependency=afterok:$array --kill-on-invalid-dep=yes)"
    )?;
    writeln!(o, "    echo \"merge job $merge (after the array)\" ;;")?;
    writeln!(o, "  shard)")?;
    writeln!(o, "    shift")?;
    writeln!(
        o,
        "    [ $# -gt 0 ] || {{ echo \"usage: $0 shard K…\" >&2; exit 2; }}"
    )?;
    writeln!(o, "    for k in \"$@\"; do")?;
    writeln!(
        o,
        "      case $k in ''|*[!0-9]*) echo \"$0: shard $k is not a number\" >&2; exit 2 ;; esac"
    )?;
    writeln!(
        o,
        "      if [ \"$k\" -lt 1 ] || [ \"$k\" -gt {n} ]; then echo \"$0: shard $k is not in 1-{n}\" >&2; exit 2; fi"
    )?;
    writeln!(o, "    done")?;
    writeln!(
        o,
        "    array=$(shard_job --array=\"$(IFS=,; echo \"$*\")\")"
    )?;
    writeln!(o, "    echo \"array job $array (tasks $*)\"")?;
    writeln!(
        o,
        "    merge=$(merge_job --dependency=afterok:$array --kill-on-invalid-dep=yes)"
    )?;
    writeln!(o, "    echo \"merge job $merge (after the array)\" ;;")?;
    writeln!(o, "  merge)")?;
    writeln!(o, "    merge=$(merge_job)")?;
    writeln!(o, "    echo \"merge job $merge\" ;;")?;
    writeln!(
        o,
        "  *) echo \"usage: $0 [all | shard K… | merge]\" >&2; exit 2 ;;"
    )?;
    writeln!(o, "esac")?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SlurmArgs,
    }

    fn parse(extra: &[&str]) -> Result<String> {
        let tmp = std::env::temp_dir();
        let cands = tmp.to_string_lossy().into_owned();
        let mut argv = vec![
            "slurm",
            "all",
            "--candidates",
            &cands,
            "--run",
            "/c/camp",
            "--system",
            "s_1",
        ];
        argv.extend(extra);
        let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        script(&cli.args, Path::new("/opt/ngcc perf/ngcc-perf"))
    }

    #[test]
    fn the_script_builds_once_then_an_array_then_the_merge() {
        let s = parse(&[
            "--shards",
            "3",
            "--trial-target",
            "0.05",
            "--only",
            "a*,b",
            "--allow-unfixed-host",
        ])
        .unwrap();
        assert!(
            s.contains("exec '/opt/ngcc perf/ngcc-perf' campaign build,kat --candidates"),
            "{s}"
        );
        assert!(s.contains(" --run /c/camp/build "), "{s}");
        assert!(
            s.contains("campaign calibrate,measure,profile,memory --candidates"),
            "{s}"
        );
        assert!(s.contains("--run '/c/camp/shard-{shard}' --build-from /c/camp/build --shard auto --shard-count 3 --trial-target 0.05 --op-budget 900 --allow-unfixed-host"), "{s}");
        assert!(s.contains("--only 'a*,b'"), "{s}");
        assert!(
            s.contains("--array=1-3 --dependency=afterok:$build --kill-on-invalid-dep=yes"),
            "{s}"
        );
        assert!(s.contains("merge_job --dependency=afterok:$array"), "{s}");
        assert!(s.contains("merge /c/camp/shard-1 /c/camp/shard-2 /c/camp/shard-3 --out /c/camp/dataset --system s_1"), "{s}");
        assert!(
            s.contains("--ntasks=1 --cpus-per-task=1 --hint=nomultithread"),
            "{s}"
        );
    }

    #[test]
    fn node_mode_and_refusals() {
        let s = parse(&[
            "--shards",
            "2",
            "--per-task",
            "node",
            "--cpu",
            "5",
            "--sbatch=--account=x y",
        ])
        .unwrap();
        assert!(s.contains("--nodes=1 --ntasks=1 --exclusive"), "{s}");
        assert!(s.contains(" --cpu 5"), "{s}");
        assert!(s.contains("'--account=x y'"), "{s}");
        for (extra, want) in [
            (&["--shards", "2", "--cpu", "1"][..], "--per-task node"),
            (&["--shards", "2", "--shard", "1/2"][..], "--shards N"),
            (&["--shards", "2", "--build-from", "/x"][..], "--build-from"),
            (&["--shards", "0"][..], "at least 1"),
        ] {
            let e = parse(extra).unwrap_err().to_string();
            assert!(e.contains(want), "{extra:?}: {e}");
        }
    }
}
