//! The termination signals the bridge answers, the same way on every platform.

/// Our own termination signals. On Windows the console events stand for
/// the signals they mean: ctrl_c for SIGINT, ctrl_break for SIGTERM (what
/// a parent sends a process group it wants ended), ctrl_close for SIGHUP.
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
    #[cfg(windows)]
    int: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    term: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    hup: tokio::signal::windows::CtrlClose,
}

pub const SIGHUP: i32 = 1;
pub const SIGINT: i32 = 2;
pub const SIGTERM: i32 = 15;

impl Signals {
    pub fn listen() -> std::io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
                hup: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
            use windows::Win32::System::Console::SetConsoleCtrlHandler;
            // A parent that starts us in a new console process group (as it
            // must, to send that group CTRL_BREAK) also turns CTRL+C off for
            // us (wine: every console event); we answer them, so we turn
            // them back on. Best effort: without it only CTRL+C is lost,
            // never a reason not to start.
            // SAFETY: plain call on our own process.
            let _ = unsafe { SetConsoleCtrlHandler(None, false) };
            Ok(Signals {
                int: ctrl_c()?,
                term: ctrl_break()?,
                hup: ctrl_close()?,
            })
        }
    }

    /// The next one, as its Unix number.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => SIGTERM,
            _ = self.int.recv() => SIGINT,
            _ = self.hup.recv() => SIGHUP,
        }
    }
}
