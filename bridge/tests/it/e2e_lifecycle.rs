//! End-to-end: how `acp-bridge` starts, ends and cleans up its agent, over
//! real pipes and real processes (the agent is the scripted ACP peer, a test
//! double).

use crate::support;

use std::time::Duration;

use support::{
    Bridge, assert_peer_kept_to_script, kill_pids, peer_cmd, read_pids, scratch, wait_gone,
};

/// What the bridge says when it has to kill the agent's tree.
#[cfg(unix)]
const SENDING_KILL: &str = "sending SIGKILL";
#[cfg(windows)]
const SENDING_KILL: &str = "sending job termination";

/// What the panel does once the agent runs.
#[derive(Clone, Copy, PartialEq)]
enum PanelAction {
    CloseStdin,
    KeepStdinOpen,
    /// The SDKs end the CLI process with SIGTERM (on Windows: CTRL_BREAK).
    SendSigterm,
}

/// How an agent misbehaves on the way out, and what the bridge must do.
struct EndCase {
    name: &'static str,
    script: &'static str,
    panel: PanelAction,
    expect_code: i32,
    /// Text the bridge's stderr must contain.
    expect_stderr: &'static [&'static str],
}

const END_CASES: &[EndCase] = &[
    EndCase {
        name: "agent_ignoring_stdin_eof_and_sigterm_is_killed_with_its_helper",
        script: "ignores_eof_and_sigterm.json",
        panel: PanelAction::CloseStdin,
        expect_code: 0,
        expect_stderr: &[
            SENDING_KILL,
            "[agent] scripted-acp-peer: stdin closed; ignoring it",
        ],
    },
    EndCase {
        name: "sigterm_to_the_bridge_ends_an_agent_that_ignores_it",
        script: "ignores_eof_and_sigterm.json",
        panel: PanelAction::SendSigterm,
        expect_code: 128 + 15,
        expect_stderr: &["got signal 15", SENDING_KILL],
    },
    EndCase {
        name: "helper_left_by_an_exiting_agent_is_ended",
        script: "exits_leaving_a_helper.json",
        panel: PanelAction::CloseStdin,
        expect_code: 0,
        expect_stderr: &[],
    },
    EndCase {
        name: "agent_crash_ends_the_bridge_with_the_agent_exit_code",
        script: "crashes_at_start.json",
        panel: PanelAction::KeepStdinOpen,
        expect_code: 7,
        expect_stderr: &[
            "[agent] scripted-acp-peer: simulated crash",
            "the agent ended on its own (exit code 7)",
        ],
    },
];

fn agent_is_always_ended_and_no_process_is_left() {
    for case in END_CASES {
        let dir = scratch(case.name);
        let (mut bridge, pids) = Bridge::start_with_peer(
            &dir,
            case.script,
            &[
                "--output-format",
                "stream-json",
                "--verbose",
                "--input-format",
                "stream-json",
                "--agent-grace-ms",
                "300",
                "--eof-drain-ms",
                "300",
            ],
        );
        match case.panel {
            PanelAction::CloseStdin => bridge.close_stdin(),
            PanelAction::KeepStdinOpen => {}
            PanelAction::SendSigterm => {
                if let Err(e) = bridge.terminate() {
                    assert!(support::console_events_missing(), "{}: {e}", case.name);
                    eprintln!("{}: NOT RUN on this host: {e}", case.name);
                    bridge.kill();
                    let _ = bridge.wait_exit_and_reap(&pids);
                    continue;
                }
            }
        }
        let (status, left) = bridge.wait_exit_and_reap(&pids);
        let stderr = bridge.stderr();
        assert!(
            left.is_empty(),
            "{}: processes left behind: {left:?}\nstderr:\n{stderr}",
            case.name
        );
        assert_eq!(
            status.code(),
            Some(case.expect_code),
            "{}: exit status\nstderr:\n{stderr}",
            case.name
        );
        for want in case.expect_stderr {
            assert!(
                stderr.contains(want),
                "{}: stderr lacks {want:?}:\n{stderr}",
                case.name
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn agent_that_cannot_start_is_a_clear_nonzero_exit() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--agent-cmd", "acp-bridge-test-no-such-agent --acp"],
            "cannot start the agent \"acp-bridge-test-no-such-agent\"",
        ),
        (
            &["--agent-cmd", "/nonexistent/dir/agent"],
            if cfg!(windows) {
                "(os error 3)"
            } else {
                "No such file or directory"
            },
        ),
        (&["--model", "m"], "no agent command"),
        (
            &["--agent-cmd", "agent \"unclosed"],
            "cannot split the agent command line",
        ),
    ];
    for (args, want) in cases {
        let mut bridge = Bridge::start(args);
        let status = bridge.wait_exit(Duration::from_secs(10));
        let stderr = bridge.stderr();
        assert!(!status.success(), "{args:?}: exited 0\n{stderr}");
        assert!(
            stderr.contains(want),
            "{args:?}: stderr lacks {want:?}:\n{stderr}"
        );
    }
}

fn version_probe_prints_a_version_and_exits_zero() {
    for flag in ["--version", "-v"] {
        let out = std::process::Command::new(support::bridge())
            .arg(flag)
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with(&format!("{} (acp-bridge)\n", env!("CARGO_PKG_VERSION"))),
            "{flag}: {text:?}"
        );
        let build = acp_bridge::build_stamp::BRIDGE;
        for line in [
            format!("target: {}", build.target),
            "acp protocol: 1, 2".to_string(),
            format!("acp schema: {}", acp_bridge::build_stamp::ACP_SCHEMA),
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{flag}: no {line:?} in {text:?}"
            );
        }
        assert!(
            text.lines().any(|l| l.starts_with("commit: ")),
            "{flag}: {text:?}"
        );
    }
}

fn failed_authentication_ends_agent_and_bridge_with_an_error() {
    let dir = scratch("auth-fails");
    let (mut bridge, pids) =
        Bridge::start_with_peer(&dir, "auth_fails.json", &["--agent-grace-ms", "300"]);
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    let reply = bridge.wait_for("the initialize control_response", |v| {
        v["type"] == "control_response"
    });
    assert_eq!(reply["response"]["subtype"], "error", "{reply}");
    // The panel keeps its stdin open: the core closes the agent's stdin itself.
    let (status, left) = bridge.wait_exit_and_reap(&pids);
    let stderr = bridge.stderr();
    assert!(left.is_empty(), "processes left behind: {left:?}\n{stderr}");
    assert_eq!(status.code(), Some(1), "exit status\n{stderr}");
    assert!(
        stderr.contains("[agent] scripted-acp-peer: got authenticate"),
        "{stderr}"
    );
    assert!(stderr.contains("the session failed"), "{stderr}");
    assert_peer_kept_to_script(&stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

fn agent_command_can_come_from_the_environment() {
    let dir = scratch("agent-env");
    let pid_file = dir.join("pids");
    let mut bridge = Bridge::start_with_agent_env(
        &[
            "--output-format",
            "stream-json",
            "--cwd",
            dir.to_str().unwrap(),
        ],
        Some(&peer_cmd("crashes_at_start.json", &pid_file)),
    );
    let pids = read_pids(&pid_file);
    let (status, _) = bridge.wait_exit_and_reap(&pids);
    // The crash script's exit code proves that agent was the one started.
    assert_eq!(status.code(), Some(7), "{}", bridge.stderr());
    let _ = std::fs::remove_dir_all(&dir);
}

fn panel_that_stops_reading_stdout_ends_the_session() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};

    let dir = scratch("stdout-gone");
    let pid_file = dir.join("pids");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader); // every write to our stdout now fails with EPIPE
    let mut child = Command::new(support::bridge())
        .args([
            "--agent-cmd",
            &peer_cmd("text_only_turn.json", &pid_file),
            "--cwd",
            dir.to_str().unwrap(),
            "--agent-grace-ms",
            "300",
        ])
        .env_remove("ACP_BRIDGE_AGENT")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pids = read_pids(&pid_file);
    let mut stdin = child.stdin.take().unwrap();
    // The initialize reply is the first write that fails; stdin stays open.
    writeln!(
        stdin,
        r#"{{"type":"control_request","request_id":"req_1","request":{{"subtype":"initialize"}}}}"#
    )
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            kill_pids(&pids);
            panic!("acp-bridge kept running after its stdout broke");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let left = wait_gone(&pids, Duration::from_secs(3));
    kill_pids(&left);
    assert!(left.is_empty(), "processes left behind: {left:?}\n{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("writing stdout failed"), "{stderr}");
    drop(stdin);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The processes that must not outlive a bridge killed outright: on Linux
/// the agent (its parent-death signal; its own children are out of reach
/// there, the test ends the helper itself); on Windows the whole tree (the
/// Job Object closes with the bridge).
fn must_die_with_the_bridge(pids: &[i32]) -> &[i32] {
    if cfg!(windows) { pids } else { &pids[..1] }
}

fn agent_dies_with_a_bridge_that_is_killed_outright() {
    // SIGKILL (TerminateProcess) gives the bridge no chance to clean up: the
    // agent (which here ignores stdin EOF and SIGTERM) must still not outlive it.
    let dir = scratch("bridge-killed");
    let (mut bridge, pids) = Bridge::start_with_peer(&dir, "ignores_eof_and_sigterm.json", &[]);
    bridge.kill();
    let status = bridge.wait_exit(Duration::from_secs(10));
    let agent_left = wait_gone(must_die_with_the_bridge(&pids), Duration::from_secs(5));
    kill_pids(&pids);
    #[cfg(unix)]
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    #[cfg(windows)]
    assert!(!status.success(), "{status}");
    assert!(
        agent_left.is_empty(),
        "the agent outlived the killed bridge: {agent_left:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// How the Windows tree test ends the session.
#[cfg(windows)]
#[derive(Clone, Copy, Debug)]
enum TreeEnd {
    /// The panel closes the bridge's stdin.
    CloseStdin,
    /// The bridge is killed outright (TerminateProcess).
    KillBridge,
    /// CTRL_BREAK to the bridge's console process group (the SDKs' SIGTERM).
    CtrlBreak,
}

/// npm installs agents on Windows as `.cmd` shims, started through
/// `cmd.exe`: the shim here is named without its extension (found through
/// PATH and PATHEXT), runs the peer, which starts a helper, and ignores
/// stdin EOF and CTRL_BREAK. However the session ends, the peer and its
/// helper (cmd.exe's child and grandchild) are gone: the Job Object holds them.
#[cfg(windows)]
fn a_cmd_shim_agent_is_ended_with_its_whole_tree() {
    for end in [TreeEnd::CloseStdin, TreeEnd::KillBridge, TreeEnd::CtrlBreak] {
        let name = format!("cmd-shim-{end:?}");
        let dir = scratch(&name);
        let pid_file = dir.join("pids");
        // The peer and its script beside the shim: the shim names them by
        // Windows paths of the scratch directory.
        let peer = dir.join("scripted-acp-peer.exe");
        std::fs::copy(support::PEER, &peer).unwrap();
        let script = dir.join("script.json");
        std::fs::copy(support::script("ignores_eof_and_sigterm.json"), &script).unwrap();
        let shim = format!(
            "@echo off\r\n\"{}\" \"{}\" --pid-file \"{}\"\r\n",
            peer.display(),
            script.display(),
            pid_file.display(),
        );
        std::fs::write(dir.join("stub-acp-agent.cmd"), shim).unwrap();
        let mut bridge = Bridge::start_with_path_first(
            &[
                "--agent-cmd",
                "stub-acp-agent",
                "--cwd",
                dir.to_str().unwrap(),
                "--agent-grace-ms",
                "300",
                "--eof-drain-ms",
                "300",
            ],
            &dir,
        );
        let until = std::time::Instant::now() + support::STEP_TIMEOUT;
        while !pid_file.exists() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !pid_file.exists() {
            bridge.fail(&format!("{name}: the shim did not start the peer"));
        }
        let pids = read_pids(&pid_file);
        assert_eq!(pids.len(), 2, "{name}: the peer and its helper");
        match end {
            TreeEnd::CloseStdin => bridge.close_stdin(),
            TreeEnd::KillBridge => bridge.kill(),
            TreeEnd::CtrlBreak => {
                if let Err(e) = bridge.terminate() {
                    assert!(support::console_events_missing(), "{name}: {e}");
                    eprintln!("{name}: NOT RUN on this host: {e}");
                    bridge.kill();
                    let _ = bridge.wait_exit_and_reap(&pids);
                    continue;
                }
            }
        }
        let (status, left) = bridge.wait_exit_and_reap(&pids);
        let stderr = bridge.stderr();
        assert!(
            left.is_empty(),
            "{name}: processes left behind: {left:?}\nstderr:\n{stderr}"
        );
        match end {
            TreeEnd::CloseStdin => {
                assert_eq!(status.code(), Some(0), "{name}\nstderr:\n{stderr}");
                assert!(stderr.contains(SENDING_KILL), "{name}:\n{stderr}");
            }
            TreeEnd::KillBridge => assert!(!status.success(), "{name}: {status}"),
            TreeEnd::CtrlBreak => {
                assert_eq!(status.code(), Some(128 + 15), "{name}\nstderr:\n{stderr}");
                assert!(stderr.contains("got signal 15"), "{name}:\n{stderr}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(e2e_lifecycle: agent_is_always_ended_and_no_process_is_left, agent_that_cannot_start_is_a_clear_nonzero_exit, version_probe_prints_a_version_and_exits_zero, failed_authentication_ends_agent_and_bridge_with_an_error, agent_command_can_come_from_the_environment, panel_that_stops_reading_stdout_ends_the_session, agent_dies_with_a_bridge_that_is_killed_outright, #[cfg(windows)] a_cmd_shim_agent_is_ended_with_its_whole_tree)
}
