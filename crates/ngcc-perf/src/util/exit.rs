//! How a command ended, and the one mapping from that to its exit code (README, "Exit codes").
//! A command that finishes its work returns `Ok` with a check's verdict; an error carries its
//! kind in [`Failure`]; `cli::main` turns both into a code here and nowhere else.

use std::process::ExitCode;

/// How a command ended, as a script or CI decides on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The work was done and every check passed.
    Success,
    /// The work was done and a check it reports failed: differences, a page that differs, KAT
    /// failures with `--require-pass`, an unfixed host, a self-test or a C helper that
    /// disagrees with its model.
    CheckFailed,
    /// Bad input or usage: the command could not start what was asked.
    Usage,
    /// Any other error that stopped the command.
    Error,
}

impl Exit {
    /// The exit code of each kind: the only place these numbers are decided.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::CheckFailed => 1,
            Exit::Usage | Exit::Error => 2,
        }
    }

    /// [`Exit::Success`] when a reported check passed, else [`Exit::CheckFailed`], as a code.
    pub fn check(passed: bool) -> ExitCode {
        if passed {
            Exit::Success
        } else {
            Exit::CheckFailed
        }
        .into()
    }

    /// The kind of an error that stopped a command: its [`Failure`]'s, else [`Exit::Error`].
    pub fn of(err: &anyhow::Error) -> Exit {
        err.downcast_ref::<Failure>()
            .map_or(Exit::Error, |f| f.exit)
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// An error whose kind decides the exit code; its message is for humans only.
#[derive(Debug, thiserror::Error)]
#[error("{msg}")]
pub struct Failure {
    pub exit: Exit,
    pub msg: String,
}

impl Failure {
    /// Bad input or usage.
    pub fn usage(msg: impl Into<String>) -> anyhow::Error {
        Failure {
            exit: Exit::Usage,
            msg: msg.into(),
        }
        .into()
    }

    /// A check failed and the command stops with this message.
    pub fn check(msg: impl Into<String>) -> anyhow::Error {
        Failure {
            exit: Exit::CheckFailed,
            msg: msg.into(),
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_the_documented_codes() {
        let codes = [Exit::Success, Exit::CheckFailed, Exit::Usage, Exit::Error].map(Exit::code);
        assert_eq!(codes, [0, 1, 2, 2]);
    }

    #[test]
    fn an_error_has_its_failure_kind_or_error() {
        assert_eq!(Exit::of(&Failure::usage("x")), Exit::Usage);
        assert_eq!(Exit::of(&Failure::check("x")), Exit::CheckFailed);
        let wrapped = Failure::check("x").context("while checking");
        assert_eq!(Exit::of(&wrapped), Exit::CheckFailed);
        assert_eq!(Exit::of(&anyhow::anyhow!("io")), Exit::Error);
    }
}
