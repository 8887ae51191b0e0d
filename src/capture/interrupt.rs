//! SIGINT and SIGTERM as a request to end the run the way any run ends
//! (agent stopped by its profile's ladder, servers shut down, the trailer
//! written) instead of dying mid-write. A second signal ends the process at
//! once: whoever sends it wants out now, and what is on disk is still safe
//! (an unfinished file is only ever a temp file, see [`crate::atomic_file`]).

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// The exit code of a run that was interrupted.
pub const EXIT_INTERRUPTED: u8 = 2;

/// Whether (and by which signal) the run was asked to end.
#[derive(Clone, Debug)]
pub struct Interrupt {
    rx: watch::Receiver<Option<&'static str>>,
}

impl Interrupt {
    /// Takes over SIGINT and SIGTERM for this process. Must be called inside
    /// a tokio runtime; the listener lives as long as the runtime.
    pub fn listen() -> std::io::Result<Interrupt> {
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let mut count = 0u32;
            loop {
                let name = tokio::select! {
                    Some(()) = int.recv() => "SIGINT",
                    Some(()) = term.recv() => "SIGTERM",
                    else => return,
                };
                count += 1;
                if count > 1 {
                    eprintln!("[interrupt] {name} again: exiting now");
                    std::process::exit(i32::from(EXIT_INTERRUPTED));
                }
                eprintln!("[interrupt] {name} received: ending the run");
                let _ = tx.send(Some(name));
            }
        });
        Ok(Interrupt { rx })
    }

    /// An interrupt that never comes (a caller that handles no signals).
    pub fn never() -> Interrupt {
        // no sender: `wait` then pends for ever
        let (_, rx) = watch::channel(None);
        Interrupt { rx }
    }

    /// The signal received, if any.
    pub fn requested(&self) -> Option<&'static str> {
        *self.rx.borrow()
    }

    /// Resolves with the signal's name once one arrived (at once if one did).
    pub async fn wait(&mut self) -> &'static str {
        match self.rx.wait_for(Option::is_some).await {
            Ok(name) => name.expect("waited for Some"),
            Err(_) => std::future::pending().await,
        }
    }
}
