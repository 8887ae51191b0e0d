//! The sweep that ends what a run leaves behind, against a real double
//! fork. The sweep ends every process below the test process, so no other
//! test may run beside it: the binary runs its trials one at a time, this
//! one last. Linux only (`/proc`, a subreaper); on Windows nothing escapes
//! the Job Object, which `tree` checks.

use std::time::Duration;

use tokio::time::Instant;

/// A grandchild that left its parent (a double fork into its own session,
/// stdio on /dev/null) is found below us as a subreaper and ended by the sweep.
async fn a_double_forked_daemon_is_found_and_ended() {
    assert!(process_group::become_subreaper());
    let me = std::process::id() as i32;
    let marker = format!("process-group-test-daemon-{me}");
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "( setsid bash -c 'while :; do sleep 1; done' {marker} </dev/null >/dev/null 2>&1 & )"
        ))
        .status()
        .unwrap();
    assert!(status.success());
    // every process of the marker: for a moment the subshell that starts
    // the daemon, and a child the daemon forks before it execs `sleep`,
    // carry it in their command lines too
    let marked = || {
        process_group::descendants(me)
            .into_iter()
            .filter(|p| p.cmdline.contains(&marker) && !p.zombie)
            .collect::<Vec<_>>()
    };
    // the daemon itself: re-parented to us once the subshell exits
    let orphaned = || {
        let daemon = |p: &process_group::Proc| p.ppid == me && !p.cmdline.contains("setsid");
        marked().into_iter().filter(daemon).collect::<Vec<_>>()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while orphaned().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let found = orphaned();
    assert_eq!(
        found.len(),
        1,
        "the daemon is below us, re-parented to us: {:?}",
        marked()
    );
    let swept =
        process_group::end_descendants(Duration::from_millis(100), Duration::from_secs(5)).await;
    assert!(
        swept.ended.iter().any(|p| p.cmdline.contains(&marker)),
        "{swept:?}"
    );
    assert!(swept.survivors.is_empty(), "{swept:?}");
    assert!(marked().is_empty(), "the daemon is gone");
    assert!(
        process_group::descendants(me).is_empty(),
        "nothing is left, zombies included"
    );
}

/// The suite's trial.
pub(crate) fn trial() -> libtest_mimic::Trial {
    libtest_mimic::Trial::test(
        "descendants::a_double_forked_daemon_is_found_and_ended",
        || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("a tokio runtime: {e}"))?
                .block_on(a_double_forked_daemon_is_found_and_ended());
            Ok(())
        },
    )
}
