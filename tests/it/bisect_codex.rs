//! Bisect over the committed codex-acp recordings, offline, with a bridge
//! that lacks one piece of agent-shape handling (`acp_bridge::Compat`): the
//! search must name the real first version that needs it, which these tests
//! check against the recordings themselves. Also `replay --bisect-exit`.

use std::path::{Path, PathBuf};
use std::process::Command;

use acp_harness::corpus::recording::blobs;
use acp_harness::tracking::bisect::{self, CompatSwitch, Found, Judge, Search};
use semver::Version;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the bisection of `scenario` over the recorded codex-acp versions
/// from `from` (up to `to`, if given) with the bridge handling `compat`;
/// returns the versions searched and what the search found.
fn search_recorded(
    scenario: &str,
    from: &str,
    to: Option<&str>,
    compat: acp_bridge::Compat,
) -> (Vec<Version>, Search) {
    let from = Version::parse(from).unwrap();
    let to = to.map(|t| Version::parse(t).unwrap());
    let list: Vec<Version> = bisect::versions(&root(), "codex-acp", true)
        .unwrap()
        .into_iter()
        .filter(|v| *v >= from && to.as_ref().is_none_or(|to| v <= to))
        .collect();
    let judge = Judge {
        corpus: acp_harness::judging::judge::Corpus::at(&root()),
        agent: "codex-acp".into(),
        scenario: scenario.into(),
        compat,
        compare_panel: false,
        record_timeout: None,
    };
    let s = bisect::search(list.len(), |i, good| {
        judge.judge(&list[i], good.map(|g| &list[g]))
    });
    (list, s)
}

/// Bisects `scenario` over the recorded versions in `[from, to]` with the
/// given bridge handling switched off; returns (last good, first bad).
fn bisect_offline(
    scenario: &str,
    from: &str,
    to: &str,
    off: &[CompatSwitch],
) -> (Version, Version) {
    let (list, s) = search_recorded(scenario, from, Some(to), bisect::compat_without(off));
    match s.found {
        Found::Transition {
            last_good,
            first_bad,
            untestable,
        } => {
            assert!(
                untestable.is_empty(),
                "untestable versions hide the break: {untestable:?}"
            );
            assert!(
                s.tested.len() < list.len(),
                "{} tests for {} versions is not a bisection",
                s.tested.len(),
                list.len()
            );
            (list[last_good].clone(), list[first_bad].clone())
        }
        other => panic!("no transition found: {other:?}; tested {:?}", s.tested),
    }
}

/// The agent frames of one committed recording, parsed.
fn agent_frames(version: &Version, scenario: &str) -> Vec<Value> {
    let path = root().join(format!("recordings/codex-acp/{version}/{scenario}.jsonl"));
    let rec = acp_harness::corpus::recording::read(&path).unwrap();
    rec.events
        .iter()
        .filter(|e| {
            e.leg == acp_harness::corpus::recording::Leg::Acp
                && e.dir == acp_harness::corpus::recording::Dir::FromAgent
        })
        .filter_map(|e| serde_json::from_str(&e.raw).ok())
        .collect()
}

/// Whether the finished unity-ops call carries its MCP result only in the
/// wrapped rawOutput (`{"result":{"content":[...]}}`) and no ACP `content`.
fn result_only_wrapped(version: &Version) -> bool {
    agent_frames(version, "unity-call-allowed").iter().any(|f| {
        let u = &f["params"]["update"];
        u["status"] == "completed"
            && u["rawOutput"]["result"]["content"].is_array()
            && u["content"].as_array().is_none_or(|c| c.is_empty())
    })
}

fn reject_option_id(version: &Version) -> String {
    agent_frames(version, "permission-denied")
        .iter()
        .find(|f| f["method"] == "session/request_permission")
        .and_then(|f| {
            f["params"]["options"]
                .as_array()?
                .iter()
                .find(|o| o["kind"] == "reject_once")?["optionId"]
                .as_str()
                .map(String::from)
        })
        .expect("a permission request with a reject_once option")
}

fn bisect_without_wrapped_raw_output_support_names_the_first_version_whose_mcp_result_left_content()
{
    let (good, bad) = bisect_offline(
        "unity-call-allowed",
        "0.4.4",
        "2.6.0",
        &[CompatSwitch::McpRawOutputWrapper],
    );
    assert!(
        !result_only_wrapped(&good),
        "{good} already sends only the wrapped rawOutput"
    );
    assert!(
        result_only_wrapped(&bad),
        "{bad} does not send only the wrapped rawOutput"
    );
    assert_eq!(
        (good.to_string(), bad.to_string()),
        ("0.16.0".into(), "1.0.0".into())
    );
}

fn bisect_with_deny_by_legacy_id_names_the_first_version_whose_reject_option_changed_its_id() {
    let (good, bad) = bisect_offline(
        "permission-denied",
        "1.0.0",
        "2.6.0",
        &[CompatSwitch::RejectOptionByKind],
    );
    assert_ne!(
        reject_option_id(&good),
        reject_option_id(&bad),
        "{good} -> {bad}"
    );
    assert_eq!(
        (good.to_string(), bad.to_string()),
        ("1.6.2".into(), "1.7.0".into())
    );
}

fn with_every_handling_on_the_same_ranges_have_no_bad_version() {
    for (scenario, from) in [
        ("unity-call-allowed", "0.4.4"),
        ("permission-denied", "1.0.0"),
    ] {
        let (_, s) = search_recorded(scenario, from, None, acp_bridge::Compat::default());
        assert!(
            matches!(s.found, Found::NoBad { .. }),
            "{scenario}: {:?} {:?}",
            s.found,
            s.tested
        );
    }
}

fn bisect_exit(path: &Path) -> Option<i32> {
    Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["replay", "--bisect-exit", "--root"])
        .arg(root())
        .arg(path)
        .output()
        .unwrap()
        .status
        .code()
}

fn replay_bisect_exit_says_good_bad_or_untestable_for_git_bisect_run() {
    let good = root().join("recordings/codex-acp/2.6.0/unity-call-allowed.jsonl");
    assert_eq!(bisect_exit(&good), Some(0));
    // the same recording with the tool's answer altered: the golden no longer matches
    let dir = tempfile::tempdir().unwrap();
    let altered = dir.path().join("unity-call-allowed.jsonl");
    // inline: the copy reads without the corpus's blob store
    let inline =
        acp_harness::capture::migrate::to_inline(&std::fs::read_to_string(&good).unwrap(), &good)
            .unwrap();
    std::fs::write(
        &altered,
        inline.replace("\\\"text\\\":\\\"pong\\\"", "\\\"text\\\":\\\"pang\\\""),
    )
    .unwrap();
    assert_eq!(bisect_exit(&altered), Some(1));
    assert_eq!(bisect_exit(&dir.path().join("missing.jsonl")), Some(125));
    let truncated = dir.path().join("truncated.jsonl");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(
        &truncated,
        text.lines().take(5).collect::<Vec<_>>().join("\n"),
    )
    .unwrap();
    assert_eq!(bisect_exit(&truncated), Some(125));
}

fn a_recording_whose_known_limitation_holds_is_good_for_git_bisect_as_for_check() {
    // Gemini CLI 0.1.21 cannot reach an HTTP MCP server: exactly the listed
    // expectations fail, which `check` passes, so bisect must not blame the bridge.
    for scenario in ["screenshot", "unity-call-allowed", "permission-denied"] {
        let path = root().join(format!("recordings/gemini-cli/0.1.21/{scenario}.jsonl"));
        let case = acp_harness::judging::judge::Corpus::at(&root()).judge(&path);
        assert!(
            case.limitation.is_some(),
            "{scenario}: no known limitation covers it"
        );
        assert!(case.passed(), "{scenario}: {}", case.report());
        assert_eq!(bisect_exit(&path), Some(0), "{scenario}");
    }
}

/// A recording that is corrupt in its envelope is a file `git bisect` must
/// skip (125), never a regression of the bridge (1).
fn replay_bisect_exit_skips_recordings_it_cannot_read_or_trust() {
    let good = root().join("recordings/codex-acp/2.6.0/unity-call-allowed.jsonl");
    let text = std::fs::read_to_string(&good).unwrap();
    let first_event = |text: &str| text.lines().nth(1).unwrap().to_string();
    let with_line_2 = |new: &str| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines[1] = new.to_string();
        lines.join("\n") + "\n"
    };
    let e = first_event(&text);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "unknown dir",
            with_line_2(&e.replace(r#""dir":"to_agent""#, r#""dir":"sideways""#)).into_bytes(),
        ),
        (
            "unknown leg",
            with_line_2(&e.replace(r#""leg":"acp""#, r#""leg":"telepathy""#)).into_bytes(),
        ),
        (
            "wrong proc type",
            with_line_2(&e.replace(r#""proc":1"#, r#""proc":"one""#)).into_bytes(),
        ),
        ("invalid UTF-8", {
            let mut b = with_line_2(&e).into_bytes();
            let at = b.iter().position(|c| *c == b'\n').unwrap() + 5;
            b[at] = 0xff;
            b
        }),
        (
            "synthetic",
            text.replacen(r#""synthetic":false"#, r#""synthetic":true"#, 1)
                .into_bytes(),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, bytes) in cases {
        let path = dir.path().join("unity-call-allowed.jsonl");
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(bisect_exit(&path), Some(125), "{what}");
    }
}

/// A corpus in a temporary root: the scenarios, and for each version either
/// its committed recording and golden, a truncated copy, or nothing.
fn corpus_with(versions: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    for e in std::fs::read_dir(root().join("scenarios")).unwrap() {
        let e = e.unwrap();
        if e.path().extension().is_some_and(|x| x == "toml") {
            std::fs::copy(e.path(), scenarios.join(e.file_name())).unwrap();
        }
    }
    std::fs::create_dir_all(dir.path().join("tests/snapshots")).unwrap();
    for (version, what) in versions {
        let vdir = dir.path().join("recordings/codex-acp").join(version);
        std::fs::create_dir_all(&vdir).unwrap();
        let rec = root().join(format!(
            "recordings/codex-acp/{version}/unity-call-allowed.jsonl"
        ));
        let snap = format!("tests/snapshots/replay__codex-acp__{version}__unity-call-allowed.snap");
        match *what {
            "recorded" => {
                let to = vdir.join("unity-call-allowed.jsonl");
                blobs::copy_recording(&rec, &to, &blobs::BlobStore::for_writing(&to)).unwrap();
                std::fs::copy(root().join(&snap), dir.path().join(&snap)).unwrap();
            }
            "truncated" => {
                let text = std::fs::read_to_string(&rec).unwrap();
                std::fs::write(
                    vdir.join("unity-call-allowed.jsonl"),
                    text.lines().take(6).collect::<Vec<_>>().join("\n"),
                )
                .unwrap();
            }
            _ => {}
        }
    }
    dir
}

fn the_bisect_command_skips_untestable_versions_and_says_when_they_hide_the_break() {
    let corpus = corpus_with(&[
        ("0.9.5", "missing"),
        ("0.16.0", "recorded"),
        ("1.0.0", "truncated"),
        ("1.1.0", "recorded"),
        ("1.2.0", "recorded"),
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args([
            "bisect",
            "--agent",
            "codex-acp",
            "--scenario",
            "unity-call-allowed",
            "--offline",
        ])
        .args(["--compat-off", "mcp-raw-output-wrapper", "--root"])
        .arg(corpus.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // 1: a bad version was found
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("0.9.5      untestable: no committed recording (offline)"),
        "{text}"
    );
    assert!(
        text.contains("1.0.0      untestable: the recording is truncated"),
        "{text}"
    );
    assert!(text.contains("first bad version: 1.1.0\nlast good version: 0.16.0\nuntestable in between (the break may be in one of them): 1.0.0"), "{text}");
    assert!(
        text.contains("# Drift: codex-acp 0.16.0 -> codex-acp 1.1.0"),
        "{text}"
    );
}

fn the_bisect_command_refuses_an_unknown_compat_switch_and_says_when_nothing_is_bad() {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args([
            "bisect",
            "--agent",
            "codex-acp",
            "--scenario",
            "unity-call-allowed",
            "--offline",
            "--compat-off",
            "wrapper",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown compat switch \"wrapper\""));
    let corpus = corpus_with(&[("0.16.0", "recorded"), ("1.0.0", "recorded")]);
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args([
            "bisect",
            "--agent",
            "codex-acp",
            "--scenario",
            "unity-call-allowed",
            "--offline",
            "--root",
        ])
        .arg(corpus.path())
        .output()
        .unwrap();
    // 0: no bad version
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("no bad version: 1.0.0 (the newest testable) is good")
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(bisect_codex: bisect_without_wrapped_raw_output_support_names_the_first_version_whose_mcp_result_left_content, bisect_with_deny_by_legacy_id_names_the_first_version_whose_reject_option_changed_its_id, with_every_handling_on_the_same_ranges_have_no_bad_version, replay_bisect_exit_says_good_bad_or_untestable_for_git_bisect_run, a_recording_whose_known_limitation_holds_is_good_for_git_bisect_as_for_check, replay_bisect_exit_skips_recordings_it_cannot_read_or_trust, the_bisect_command_skips_untestable_versions_and_says_when_they_hide_the_break, the_bisect_command_refuses_an_unknown_compat_switch_and_says_when_nothing_is_bad)
}
