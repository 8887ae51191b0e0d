//! SIGINT and SIGTERM as a request to end the run the way any run ends
//! (agent stopped by its profile's ladder, servers shut down, the trailer
//! written) instead of dying mid-write. A second signal ends the process at
//! once: whoever sends it wants out now, and what is on disk is still safe
//! (an unfinished file is only ever a temp file, see [`atomic_file`]).
//!
//! Every signal is also noted synchronously, in the signal handler itself,
//! so a decision taken after the run (commit the recording or not) sees a
//! signal the instant it arrived, not once the async listener ran.

use std::sync::atomic::{AtomicI32, Ordering};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// The first SIGINT or SIGTERM this process received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Notes `signal` as received. Async-signal-safe: called from handlers.
pub(crate) fn note_received(signal: libc::c_int) {
    let _ = RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// The SIGINT or SIGTERM this process received, by name, if any.
fn received() -> Option<&'static str> {
    match RECEIVED.load(Ordering::SeqCst) {
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        _ => None,
    }
}

/// What a run is asked to end by when no signal asks it: the `record` that
/// started this recorder inside its namespaces is gone or was interrupted.
pub const PARENT_GONE: &str = "the end of the `record` that started this recorder";

/// The listener's channel, for [`request_end`].
static ENDING: std::sync::OnceLock<watch::Sender<Option<&'static str>>> =
    std::sync::OnceLock::new();

/// Asks the run to end as a first signal would (`why` as its name), unless
/// something asked already; not counted as a signal, so a real one after it
/// still ends the run cleanly.
pub fn request_end(why: &'static str) {
    if let Some(tx) = ENDING.get() {
        tx.send_if_modified(|asked| {
            let first = asked.is_none();
            if first {
                eprintln!("[interrupt] {why}: ending the run");
                *asked = Some(why);
            }
            first
        });
    }
}

/// How a note names what ended the run (`interrupted: ...`).
pub fn describe(name: &str) -> String {
    if name.starts_with("SIG") {
        format!("{name} received")
    } else {
        name.to_string()
    }
}

/// Gives SIGINT and SIGTERM a handler that notes them, unless a handler is
/// there already (the namespace init's, which notes them itself). Runs
/// before tokio registers its own, which calls the one found after its own.
fn note_signals() {
    extern "C" fn note(signal: libc::c_int) {
        note_received(signal);
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction with a zeroed struct queries the current action;
        // the handler installed only stores into an atomic.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            if current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The exit code of a run that was interrupted.
pub const EXIT_INTERRUPTED: u8 = 2;

/// Whether (and by which signal) the run was asked to end.
#[derive(Clone, Debug)]
pub struct Interrupt {
    rx: watch::Receiver<Option<&'static str>>,
    /// Whether this process's signals count (not for [`Interrupt::never`]).
    listening: bool,
}

impl Interrupt {
    /// Takes over SIGINT and SIGTERM for this process. Must be called inside
    /// a tokio runtime; the listener lives as long as the runtime.
    pub fn listen() -> std::io::Result<Interrupt> {
        note_signals();
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let (tx, rx) = watch::channel(None);
        let _ = ENDING.set(tx.clone());
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
                tx.send_if_modified(|asked| asked.is_none() && asked.replace(name).is_none());
            }
        });
        Ok(Interrupt {
            rx,
            listening: true,
        })
    }

    /// An interrupt that never comes (a caller that handles no signals).
    pub fn never() -> Interrupt {
        // no sender: `wait` then pends for ever
        let (_, rx) = watch::channel(None);
        Interrupt {
            rx,
            listening: false,
        }
    }

    /// The signal received, if any: noted the moment it arrived, so a
    /// caller deciding after the run also sees one that came a moment ago.
    pub fn requested(&self) -> Option<&'static str> {
        (*self.rx.borrow()).or_else(|| if self.listening { received() } else { None })
    }

    /// Resolves with the signal's name once one arrived (at once if one did).
    pub async fn wait(&mut self) -> &'static str {
        match self.rx.wait_for(Option::is_some).await {
            Ok(name) => name.expect("waited for Some"),
            Err(_) => std::future::pending().await,
        }
    }
}
