//! `--shard K/N` and `--shard auto`: which shard this process measures, taken from the
//! scheduler that started it when asked (a Slurm job array task or a Kubernetes Indexed Job
//! pod), and the run directory it writes (`{shard}` in `--run` becomes K).

use crate::util::Failure;
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};

/// What `--shard` said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Fixed(u32, u32),
    Auto,
}

/// Replaced by K in `--run`, so that every array task writes its own run directory.
pub const PLACEHOLDER: &str = "{shard}";

/// Slurm job array variables (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES").
const SLURM_ID: &str = "SLURM_ARRAY_TASK_ID";
const SLURM_MIN: &str = "SLURM_ARRAY_TASK_MIN";
const SLURM_MAX: &str = "SLURM_ARRAY_TASK_MAX";
const SLURM_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
const SLURM_STEP: &str = "SLURM_ARRAY_TASK_STEP";
/// Kubernetes Indexed Job: the pod's 0-based completion index.
const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";

// Plain messages (anyhow): every caller turns them into a usage failure as they are and none
// decides on a kind; clap prints a value parser's error with Display, i.e. the message alone.
pub fn parse(s: &str) -> Result<ShardArg> {
    if s == "auto" {
        return Ok(ShardArg::Auto);
    }
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| anyhow!("expected K/N, e.g. 1/3, or auto"))?;
    let k: u32 = k.parse().map_err(|_| anyhow!("K is not a number"))?;
    let n: u32 = n.parse().map_err(|_| anyhow!("N is not a number"))?;
    check(k, n).map(|_| ShardArg::Fixed(k, n))
}

fn check(k: u32, n: u32) -> Result<(u32, u32)> {
    if k < 1 || k > n {
        bail!("shard {k}/{n}: need 1 <= K <= N");
    }
    Ok((k, n))
}

/// K/N of an array task from its environment (`get` looks a variable up).
///
/// Slurm: K = SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN + 1 and N = SLURM_ARRAY_TASK_COUNT;
/// with `count` (`--shard-count N`) K is the array index itself (arrays indexed 1..N), which
/// stays right when one index is resubmitted alone (`sbatch --array=3` has MIN 3, COUNT 1).
/// Kubernetes: K = JOB_COMPLETION_INDEX + 1, N = `count` (a pod is not told the Job's
/// completions).
pub fn from_env(get: impl Fn(&str) -> Option<String>, count: Option<u32>) -> Result<(u32, u32)> {
    let num = |var: &str| -> Result<Option<u32>> {
        match get(var) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<u32>()
                .map(Some)
                .map_err(|_| anyhow!("{var}={v:?} is not a number")),
        }
    };
    match (num(SLURM_ID)?, num(K8S_INDEX)?) {
        (Some(_), Some(_)) => Err(anyhow!(
            "--shard auto: both {SLURM_ID} and {K8S_INDEX} are set, so it is unclear which scheduler started this task; pass --shard K/N"
        )),
        (None, None) => Err(anyhow!(
            "--shard auto: neither {SLURM_ID} (a Slurm job array task) nor {K8S_INDEX} (a Kubernetes Indexed Job pod) is set; run this as an array task or pass --shard K/N"
        )),
        (None, Some(index)) => {
            let n = count.ok_or_else(|| anyhow!(
                "--shard auto: {K8S_INDEX}={index} but no --shard-count N (a Kubernetes pod is not told the Job's completions; pass .spec.completions)"
            ))?;
            check(index + 1, n).map_err(|e| {
                anyhow!("--shard auto: {K8S_INDEX}={index} with --shard-count {n}: {e} (the index must be 0..N-1)")
            })
        }
        (Some(id), None) => {
            if let Some(n) = count {
                if let Some(max) = num(SLURM_MAX)?.filter(|&m| m > n) {
                    bail!(
                        "--shard auto: the job array runs to index {max} ({SLURM_MAX}) but --shard-count is {n}"
                    );
                }
                return check(id, n).map_err(|e| {
                    anyhow!("--shard auto: {SLURM_ID}={id} with --shard-count {n}: {e} (index the array 1-{n}: sbatch --array=1-{n})")
                });
            }
            let missing = |var: &str| anyhow!("--shard auto: {SLURM_ID}={id} but {var} is not set");
            let min = num(SLURM_MIN)?.ok_or_else(|| missing(SLURM_MIN))?;
            let n = num(SLURM_COUNT)?.ok_or_else(|| missing(SLURM_COUNT))?;
            if let Some(step) = num(SLURM_STEP)?.filter(|&s| s != 1) {
                bail!(
                    "--shard auto: the job array has step {step} ({SLURM_STEP}); pass --shard-count N and index the array 1-N"
                );
            }
            if let Some(max) = num(SLURM_MAX)?
                && max.checked_sub(min).map(|d| d + 1) != Some(n)
            {
                bail!(
                    "--shard auto: the job array indices {min}-{max} are not {n} contiguous ones ({SLURM_COUNT}={n}); pass --shard-count N and index the array 1-N"
                );
            }
            let k = id.checked_sub(min).map(|d| d + 1).ok_or_else(|| {
                anyhow!("--shard auto: {SLURM_ID}={id} is below {SLURM_MIN}={min}")
            })?;
            check(k, n).map_err(|e| {
                anyhow!("--shard auto: {SLURM_ID}={id}, {SLURM_MIN}={min}, {SLURM_COUNT}={n}: {e}")
            })
        }
    }
}

/// `--shard`, `--shard-count` and `{shard}` in `--run` turned into the shard measured and the
/// run directory written (`Settings` construction).
pub fn resolve(
    arg: Option<ShardArg>,
    count: Option<u32>,
    run: &Path,
) -> Result<(Option<(u32, u32)>, PathBuf)> {
    let usage = |m: String| Failure::usage(m);
    let shard = match (arg, count) {
        (None, None) => None,
        (None, Some(_)) => return Err(Failure::usage("--shard-count goes with --shard auto")),
        (Some(ShardArg::Fixed(..)), Some(_)) => {
            return Err(Failure::usage(
                "--shard-count goes with --shard auto, not with --shard K/N",
            ));
        }
        (Some(ShardArg::Fixed(k, n)), None) => Some((k, n)),
        (Some(ShardArg::Auto), count) => {
            Some(from_env(|v| std::env::var(v).ok(), count).map_err(|e| usage(e.to_string()))?)
        }
    };
    let text = run.to_string_lossy().into_owned();
    let has_placeholder = text.contains(PLACEHOLDER);
    let run = match shard {
        Some((k, _)) if has_placeholder => PathBuf::from(text.replace(PLACEHOLDER, &k.to_string())),
        None if has_placeholder => {
            return Err(usage(format!(
                "--run contains {PLACEHOLDER} but no --shard was given"
            )));
        }
        _ if arg == Some(ShardArg::Auto) => {
            return Err(usage(format!(
                "--shard auto: --run must contain {PLACEHOLDER} (e.g. --run camp/shard-{PLACEHOLDER}): every array task needs its own run directory"
            )));
        }
        _ => run.to_path_buf(),
    };
    Ok((shard, run))
}

/// Deterministic shard of an instance (1-based K of N): the same in every process and phase.
pub fn in_shard(key: &str, shard: Option<(u32, u32)>) -> bool {
    let Some((k, n)) = shard else { return true };
    let digest = crate::util::sha256_hex(key.as_bytes());
    let v = u64::from_str_radix(&digest[..15], 16).unwrap_or(0);
    v % u64::from(n) == u64::from(k - 1)
}

/// CPUs this process may run on, ascending (a Slurm task bound to one core sees just that
/// one); every online CPU's index if the mask cannot be read.
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it for pid 0
    // (this thread) and CPU_ISSET only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let cpus: Vec<u32> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .map(|c| c as u32)
                .collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn slurm(id: &str, min: &str, max: &str, count: &str) -> Vec<(&'static str, String)> {
        vec![
            (SLURM_ID, id.into()),
            (SLURM_MIN, min.into()),
            (SLURM_MAX, max.into()),
            (SLURM_COUNT, count.into()),
            (SLURM_STEP, "1".into()),
        ]
    }

    // The message as the user reads it, so the asserts below pin the text.
    fn resolve_with(
        vars: &[(&str, String)],
        count: Option<u32>,
    ) -> std::result::Result<(u32, u32), String> {
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        from_env(env(&pairs), count).map_err(|e| e.to_string())
    }

    #[test]
    fn slurm_arrays_give_k_from_the_minimum() {
        assert_eq!(resolve_with(&slurm("1", "1", "3", "3"), None), Ok((1, 3)));
        assert_eq!(resolve_with(&slurm("3", "1", "3", "3"), None), Ok((3, 3)));
        // A 0-based array: K = ID - MIN + 1.
        assert_eq!(resolve_with(&slurm("0", "0", "3", "4"), None), Ok((1, 4)));
        assert_eq!(
            resolve_with(&slurm("12", "10", "13", "4"), None),
            Ok((3, 4))
        );
    }

    #[test]
    fn shard_count_makes_k_the_index_so_one_index_can_be_resubmitted() {
        // `sbatch --array=2` alone: MIN = MAX = 2, COUNT = 1.
        let alone = slurm("2", "2", "2", "1");
        assert_eq!(
            resolve_with(&alone, None),
            Ok((1, 1)),
            "what Slurm alone says"
        );
        assert_eq!(resolve_with(&alone, Some(3)), Ok((2, 3)));
        let e = resolve_with(&slurm("0", "0", "2", "3"), Some(3)).unwrap_err();
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID=0") && e.contains("--array=1-3"),
            "{e}"
        );
        let e = resolve_with(&slurm("2", "1", "5", "5"), Some(3)).unwrap_err();
        assert!(
            e.contains("index 5") && e.contains("--shard-count is 3"),
            "{e}"
        );
    }

    #[test]
    fn inconsistent_slurm_arrays_are_refused() {
        let e = resolve_with(&slurm("3", "1", "7", "4"), None).unwrap_err();
        assert!(e.contains("1-7") && e.contains("contiguous"), "{e}");
        let mut stepped = slurm("3", "1", "7", "4");
        stepped[4].1 = "2".into();
        let e = resolve_with(&stepped, None).unwrap_err();
        assert!(e.contains("step 2"), "{e}");
        let e = resolve_with(&[(SLURM_ID, "2".into())], None).unwrap_err();
        assert!(e.contains("SLURM_ARRAY_TASK_MIN is not set"), "{e}");
        let e = resolve_with(&[(SLURM_ID, "x2".into())], None).unwrap_err();
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID=\"x2\" is not a number"),
            "{e}"
        );
    }

    #[test]
    fn kubernetes_needs_the_count() {
        let vars = [(K8S_INDEX, "0".to_string())];
        assert_eq!(resolve_with(&vars, Some(4)), Ok((1, 4)));
        let e = resolve_with(&vars, None).unwrap_err();
        assert!(
            e.contains("--shard-count") && e.contains("completions"),
            "{e}"
        );
        let e = resolve_with(&[(K8S_INDEX, "4".into())], Some(4)).unwrap_err();
        assert!(e.contains("0..N-1"), "{e}");
    }

    #[test]
    fn no_scheduler_or_two_are_errors() {
        let e = resolve_with(&[], None).unwrap_err();
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID") && e.contains("JOB_COMPLETION_INDEX"),
            "{e}"
        );
        let both = [(SLURM_ID, "1".to_string()), (K8S_INDEX, "0".to_string())];
        assert!(resolve_with(&both, Some(2)).unwrap_err().contains("both"));
    }

    #[test]
    fn fixed_shards_parse() {
        assert_eq!(parse("2/3").ok(), Some(ShardArg::Fixed(2, 3)));
        assert_eq!(parse("auto").ok(), Some(ShardArg::Auto));
        assert!(parse("4/3").is_err());
        assert!(parse("0/3").is_err());
        assert!(parse("x").is_err());
    }

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!allowed_cpus().is_empty());
    }
}
