//! The seam in front of the jail for the timing phases: calibrate, measure (trials, verify
//! children, the fixed-cost probes) and profile run their children through a [`Runner`]
//! held by `MeasureCtx`, so the planning rule, record assembly, the cross-checks and the
//! fresh/redo rules can be tested on scripted outcomes with exact numbers, without jailed
//! processes or a real clock. [`JailRunner`] is the only product implementation.

use crate::child::protocol::Request;
use crate::sandbox::jail::JailOptions;
use crate::sandbox::{self, Outcome, Spec};
use anyhow::Result;

/// Runs one child job and reports it as the orchestrator sees it (the child's reply plus
/// what was observed from outside: exit, CPU from wait4, wall time).
pub trait Runner {
    /// One job in its jail, waiting at most `spec.timeout` (`sandbox::run`).
    fn run(&self, spec: &Spec, req: &Request) -> Result<Outcome>;
    /// An empty jail, no candidate code (`sandbox::run_probe`): the fixed cost of a process.
    fn probe(&self, spec: &Spec) -> Result<Outcome>;
}

/// The real jail, built as the campaign's settings say (`Settings::jail`).
pub struct JailRunner<'a> {
    pub jail: &'a JailOptions,
}

impl JailRunner<'_> {
    pub fn new(jail: &JailOptions) -> JailRunner<'_> {
        JailRunner { jail }
    }
}

impl Runner for JailRunner<'_> {
    fn run(&self, spec: &Spec, req: &Request) -> Result<Outcome> {
        sandbox::run(spec, self.jail, req)
    }

    fn probe(&self, spec: &Spec) -> Result<Outcome> {
        sandbox::run_probe(spec, self.jail)
    }
}

/// A runner that runs nothing: each job gets the next prepared reply (the child's result
/// line, the exit, the CPU and wall time the orchestrator would have observed, files the
/// child leaves in its scratch folder), and every request is kept for the test to read.
#[cfg(test)]
pub mod scripted {
    use super::Runner;
    use crate::child::protocol::Request;
    use crate::dataset::schema::{Observed, Usage};
    use crate::sandbox::{Exit, Outcome, Spec};
    use anyhow::{Result, anyhow};
    use std::cell::RefCell;
    use std::collections::VecDeque;

    /// One prepared child.
    pub struct Reply {
        /// The JSON result line (`Value::Null`: the child sent none).
        pub result: serde_json::Value,
        pub exit: Exit,
        /// CPU seconds of the jail's whole tree (wait4) and its wall seconds.
        pub cpu_s: f64,
        pub wall_s: f64,
        /// Files (relative path, bytes) the child leaves in its scratch folder.
        pub files: Vec<(String, Vec<u8>)>,
    }

    impl Reply {
        /// A child that exited 0 with `result`, observed at `cpu_s` and `wall_s`.
        pub fn ok(result: impl serde::Serialize, cpu_s: f64, wall_s: f64) -> Reply {
            Reply {
                result: serde_json::to_value(result).expect("a serialisable reply"),
                exit: Exit::Code(0),
                cpu_s,
                wall_s,
                files: Vec::new(),
            }
        }

        /// The child also leaves `path` (relative to its scratch folder) with `bytes`.
        pub fn leaving(mut self, path: &str, bytes: &[u8]) -> Reply {
            self.files.push((path.to_string(), bytes.to_vec()));
            self
        }
    }

    /// An outcome as `sandbox::run` builds it, from what the kernel would have shown.
    pub fn outcome(result: Vec<u8>, exit: Exit, cpu_s: f64, wall_s: f64) -> Outcome {
        Outcome {
            exit,
            stdout: String::new(),
            stderr: String::new(),
            result,
            sandbox: Some("jail: scripted".into()),
            crash: None,
            unexpected: None,
            jail_error: None,
            exec_failed: false,
            observed: Observed {
                tree_usage: Usage {
                    user_s: cpu_s,
                    ..Usage::default()
                },
                wall_s,
                ..Observed::default()
            },
            wall_s,
            command: vec!["scripted".into()],
            bound_hit: None,
            scratch_note: None,
        }
    }

    #[derive(Default)]
    pub struct ScriptedRunner {
        replies: RefCell<VecDeque<Reply>>,
        /// (CPU, wall) seconds of each probe, in order.
        probes: RefCell<VecDeque<(f64, f64)>>,
        /// Every job asked for: its scratch folder's name and the request.
        seen: RefCell<Vec<(String, Request)>>,
        /// The wall-clock timeout each job was given, in order.
        timeouts: RefCell<Vec<std::time::Duration>>,
    }

    impl ScriptedRunner {
        pub fn new(replies: Vec<Reply>) -> ScriptedRunner {
            ScriptedRunner {
                replies: RefCell::new(replies.into()),
                ..ScriptedRunner::default()
            }
        }

        pub fn with_probes(self, probes: &[(f64, f64)]) -> ScriptedRunner {
            self.probes.borrow_mut().extend(probes.iter().copied());
            self
        }

        /// The jobs run so far (scratch name, request), in order.
        pub fn seen(&self) -> Vec<(String, Request)> {
            self.seen.borrow().clone()
        }

        /// The wall-clock timeouts of the jobs run so far, in order.
        pub fn timeouts(&self) -> Vec<std::time::Duration> {
            self.timeouts.borrow().clone()
        }

        /// Replies not asked for yet.
        pub fn left(&self) -> usize {
            self.replies.borrow().len()
        }
    }

    impl Runner for ScriptedRunner {
        fn run(&self, spec: &Spec, req: &Request) -> Result<Outcome> {
            let name = spec
                .workdir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            self.seen.borrow_mut().push((name.clone(), req.clone()));
            self.timeouts.borrow_mut().push(spec.timeout);
            let r = self
                .replies
                .borrow_mut()
                .pop_front()
                .ok_or_else(|| anyhow!("no reply scripted for job {name}"))?;
            for (path, bytes) in &r.files {
                let to = spec.workdir.join(path);
                std::fs::create_dir_all(to.parent().expect("a file in a folder"))?;
                std::fs::write(to, bytes)?;
            }
            let result = if r.result.is_null() {
                Vec::new()
            } else {
                serde_json::to_vec(&r.result)?
            };
            Ok(outcome(result, r.exit, r.cpu_s, r.wall_s))
        }

        fn probe(&self, _spec: &Spec) -> Result<Outcome> {
            let (cpu, wall) = self
                .probes
                .borrow_mut()
                .pop_front()
                .ok_or_else(|| anyhow!("no probe scripted"))?;
            Ok(outcome(Vec::new(), Exit::Code(0), cpu, wall))
        }
    }
}
