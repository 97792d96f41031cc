//! The bound on one count job: CPU seconds as the kernel counts them for the job's process
//! (RLIMIT_CPU on valgrind, which runs the tool and the counted code in one process), with a
//! wall-clock bound behind it as a safety net only.
//!
//! The bound was wall time: on the shared 2-core host at load 4-11, jobs of Mito's large
//! operations (~3e8 instructions per call, 13 calls per job) were killed at their 100 s share
//! having had only 17-50 CPU seconds of it; the same job on a quiet host finished. A count is
//! a function of the library and the seed, so what it may cost should not depend on the host's
//! load either: the budget is now the job's CPU time, and how long the host makes it wait
//! for that CPU is bounded only by the safety net.

use crate::dataset::count::JobBound;
use crate::sandbox::Exit;

/// The least CPU a count job is given: valgrind's start-up (~0.8 CPU-s), the setup and the
/// warm-up under callgrind.
pub const MIN_JOB_CPU_S: u64 = 30;

/// The wall-clock safety net, in multiples of the job's CPU budget. At load L on C cores a
/// CPU-bound job gets about C/L of a core: this host was seen at load 4-20 on 2 cores, so a
/// job may need up to 10 wall seconds per CPU second before the host is busier than anything
/// seen here. The net is for what the CPU bound cannot end: a job that waits without using
/// the CPU (blocked, sleeping, stopped), which a CPU budget would let run forever.
pub const WALL_PER_CPU: u64 = 10;

/// Seconds between the budget (RLIMIT_CPU's soft limit: SIGXCPU, which our job dies of after
/// writing its crash note) and the hard limit (SIGKILL), for library code that catches or
/// ignores SIGXCPU.
pub const CPU_GRACE_S: u64 = 5;

/// The share of its budget a killed job's jail must have used, as wait4's rusage reads it,
/// for the kill to be the budget's. The kernel's limit clock runs ahead of rusage (it is
/// sampled at ticks; rusage is scaled to the scheduler's runtime): on this VM a process
/// killed at a 2 s limit showed 1.72-1.94 s of rusage, at 10 s 9.15 s (6-14 % less). A
/// quarter leaves room for that and still refuses a job that raised SIGXCPU on itself early.
const CPU_SEEN_SHARE: f64 = 0.75;

/// One count job's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobBudget {
    /// RLIMIT_CPU of the job's process, seconds: the kernel kills it there.
    pub cpu_s: u64,
    /// The orchestrator stops the job after this many wall seconds.
    pub wall_s: u64,
}

impl JobBudget {
    /// An instance's `--count-budget` CPU seconds shared equally by its `n_ops` operations,
    /// rounded up to whole seconds (RLIMIT_CPU's unit), never below [`MIN_JOB_CPU_S`].
    pub fn share(count_budget_s: f64, n_ops: usize) -> JobBudget {
        let share = count_budget_s / n_ops.max(1) as f64;
        let cpu_s = (share.ceil() as u64).max(MIN_JOB_CPU_S);
        JobBudget {
            cpu_s,
            wall_s: cpu_s * WALL_PER_CPU,
        }
    }

    /// Which bound ended a job, from what the kernel and the orchestrator observed (never
    /// from the job's words): the orchestrator's timeout is the wall bound; a job killed by
    /// a signal of RLIMIT_CPU (SIGXCPU at the budget, SIGKILL at the hard limit after it)
    /// whose jail had used most of its budget ([`CPU_SEEN_SHARE`] of it in `tree_cpu_s`,
    /// wait4's rusage of the whole jail, which holds the limited process) ran into the CPU
    /// budget. A kill with less CPU, or a SIGKILL a memory or pids bound explains
    /// (`bound_hit`), is not the budget's.
    pub fn ended_by(&self, exit: &Exit, tree_cpu_s: f64, bound_hit: bool) -> Option<JobBound> {
        let used = tree_cpu_s >= CPU_SEEN_SHARE * self.cpu_s as f64;
        match exit {
            Exit::Timeout => Some(JobBound::Wall),
            Exit::Signal(libc::SIGXCPU) if used => Some(JobBound::Cpu),
            Exit::Signal(libc::SIGKILL) if used && !bound_hit => Some(JobBound::Cpu),
            _ => None,
        }
    }

    /// Why a job ended at `bound`, for the record's error and the progress line.
    pub fn reason(&self, bound: JobBound, tree_cpu_s: f64, wall_s: f64) -> String {
        match bound {
            JobBound::Cpu => format!(
                "killed at its CPU budget of {} s (its share of --count-budget) after {:.1} s; \
                 the jail's rusage: {:.1} CPU-s",
                self.cpu_s, wall_s, tree_cpu_s
            ),
            JobBound::Wall => format!(
                "killed at the wall-clock safety net of {} s ({WALL_PER_CPU} x its CPU budget of {} s) \
                 having used {:.1} CPU-s: the host gave it less than 1/{WALL_PER_CPU} of a CPU, or it \
                 waited without computing",
                self.wall_s, self.cpu_s, tree_cpu_s
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instances_budget_is_shared_in_whole_cpu_seconds_with_a_floor() {
        // A KEM: keygen, enc, dec share 300 s.
        assert_eq!(
            JobBudget::share(300.0, 3),
            JobBudget {
                cpu_s: 100,
                wall_s: 1000
            }
        );
        // Eight hash lengths: 37.5 s each, rounded up.
        assert_eq!(JobBudget::share(300.0, 8).cpu_s, 38);
        // Never below the floor, nor divided by zero operations.
        assert_eq!(
            JobBudget::share(300.0, 20),
            JobBudget {
                cpu_s: 30,
                wall_s: 300
            }
        );
        assert_eq!(JobBudget::share(60.0, 0).cpu_s, 60);
    }

    #[test]
    fn the_bound_that_ended_a_job_is_read_from_the_kernels_observations() {
        let b = JobBudget::share(300.0, 3);
        let (kill, xcpu) = (Exit::Signal(libc::SIGKILL), Exit::Signal(libc::SIGXCPU));
        assert_eq!(
            b.ended_by(&Exit::Timeout, 40.0, false),
            Some(JobBound::Wall)
        );
        // SIGXCPU at the 100 s budget, rusage reading up to a quarter less.
        assert_eq!(b.ended_by(&xcpu, 91.5, false), Some(JobBound::Cpu));
        assert_eq!(b.ended_by(&xcpu, 75.0, false), Some(JobBound::Cpu));
        // SIGKILL at the hard limit (105 s), for a job that ignored SIGXCPU.
        assert_eq!(b.ended_by(&kill, 96.0, false), Some(JobBound::Cpu));
        // Short of three quarters: another cause (a crash, a job raising SIGXCPU itself).
        assert_eq!(b.ended_by(&xcpu, 74.75, false), None);
        assert_eq!(b.ended_by(&kill, 12.0, false), None);
        // The memory bound's kill, late in a long job: the memory bound's.
        assert_eq!(b.ended_by(&kill, 100.5, true), None);
        // A segfault after a long run, and a normal end, are no bound's.
        assert_eq!(b.ended_by(&Exit::Signal(libc::SIGSEGV), 120.0, false), None);
        assert_eq!(b.ended_by(&Exit::Code(0), 120.0, false), None);
    }
}
