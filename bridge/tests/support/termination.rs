//! Shared by the test doubles that play a stubborn agent (the scripted
//! peer, the fault campaign's agent).

/// Survives what a parent sends to end its children: SIGTERM on Unix
/// (inherited by the helper, as SIG_IGN survives exec), the console's
/// CTRL_BREAK and CTRL_C on Windows.
pub fn ignore_termination() {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to SIG_IGN.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
    #[cfg(windows)]
    {
        use windows::Win32::System::Console::SetConsoleCtrlHandler;
        use windows::core::BOOL;
        unsafe extern "system" fn swallow(_event: u32) -> BOOL {
            BOOL(1)
        }
        // SAFETY: registers a handler that touches nothing.
        let _ = unsafe { SetConsoleCtrlHandler(Some(swallow), true) };
    }
}
