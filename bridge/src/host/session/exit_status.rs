//! How an agent's exit status reads: its signal, and a description for
//! the diagnostics and the tap.

use std::process::ExitStatus;

/// The signal that ended the agent (Unix only: a Windows process has just its
/// exit code).
pub(super) fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// The signal that ended a process (Unix; Windows statuses always have a code).
pub(super) fn killed_by(status: ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(&status)
    }
    #[cfg(windows)]
    {
        let _ = status;
        None
    }
}

pub(super) fn describe(status: Option<ExitStatus>) -> String {
    match status {
        Some(s) => match (s.code(), killed_by(s)) {
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "unknown status".into(),
        },
        None => "status unknown".into(),
    }
}
