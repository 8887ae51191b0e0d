//! Every command's exit status, in one place: the command says what it
//! found ([`Exit`]), errors map to [`Exit::Error`], and `--help` prints
//! [`EXIT_CODES`]. `replay --bisect-exit` alone speaks `git bisect run`'s
//! dialect (125 untestable), as that tool requires.

use std::process::ExitCode;

/// What a command found, as its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: nothing wrong (every recording passes, no drift, no bad version).
    Good,
    /// 1: a regression or difference was found.
    Found,
    /// 2: a usage or tool error: a bad flag, an unreadable file, an empty
    /// selection; nothing was judged.
    Error,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Good => 0,
            Exit::Found => 1,
            Exit::Error => 2,
        }
    }

    /// `Error` when the corpus under a judged case is broken (a blob
    /// missing or corrupt), else [`Exit::found_if`].
    pub fn of_judged(cases: &[crate::judging::judge::Case], found: bool) -> Exit {
        if cases.iter().any(|c| c.corpus_error) {
            Exit::Error
        } else {
            Exit::found_if(found)
        }
    }

    /// `Good` when nothing was found, else `Found`.
    pub fn found_if(found: bool) -> Exit {
        if found { Exit::Found } else { Exit::Good }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// A usage error noticed after parsing (an empty selection, a missing
/// pair of arguments): exit 2 like clap's own usage errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The exit status of a command that failed with `err`: always
/// [`Exit::Error`], since a command reports what it found as `Ok`.
pub fn of_error(_err: &anyhow::Error) -> Exit {
    Exit::Error
}

/// The help text's exit-status section (`--help` of every command).
pub const EXIT_CODES: &str = "\
Exit status:
  0  good: everything passes, no difference found
  1  a regression or difference was found
  2  usage or tool error (bad flag, unreadable file, empty selection)";
