//! `acp-harness drift` over committed codex-acp recordings: the changes the
//! bisect tests rely on show up, a version compared with itself shows none,
//! and the committed example report is what the tool writes today.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn drift(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .arg("drift")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "drift {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn the_reject_option_id_change_is_reported_with_an_example_from_each_side() {
    let report = drift(&[
        "recordings/codex-acp/1.6.2",
        "recordings/codex-acp/1.7.0",
        "--scenario",
        "permission-denied",
    ]);
    assert!(
        report.contains(
            "- `session/request_permission params options/[]/optionId`: `decline` -> `cancel`"
        ),
        "{report}"
    );
    assert!(
        report.contains("e.g. codex-acp 1.6.2 permission-denied seq"),
        "{report}"
    );
    assert!(
        report.contains("e.g. codex-acp 1.7.0 permission-denied seq"),
        "{report}"
    );
    assert!(
        report.contains("## Bridge output (what the panel sees)"),
        "{report}"
    );
}

fn the_wrapped_raw_output_is_reported_as_a_changed_tool_call_shape() {
    let report = drift(&[
        "--agent",
        "codex-acp",
        "--from",
        "0.16.0",
        "--to",
        "1.0.0",
        "--scenario",
        "unity-call-allowed",
    ]);
    let line = report
        .lines()
        .find(|l| l.starts_with("- `tool_call_update rawOutput`"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        line.contains("`{content:[{text:str,type:str}],isError:bool}` -> "),
        "{line}"
    );
    assert!(
        line.contains("result:{_meta:null,content:[{text:str,type:str}]"),
        "{line}"
    );
}

fn a_version_compared_with_itself_shows_no_drift() {
    let report = drift(&[
        "recordings/codex-acp/2.6.0",
        "recordings/codex-acp/2.6.0",
        "--scenario",
        "unity-call-allowed",
    ]);
    assert!(
        report.contains("0 added, 0 removed, 0 changed."),
        "{report}"
    );
    assert!(report.contains("### unity-call-allowed: same"), "{report}");
}

fn the_committed_example_report_is_what_the_tool_writes() {
    let committed =
        std::fs::read_to_string(root().join("docs/drift-codex-acp-0.4.4-to-2.6.0.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.md");
    let out_arg = out.to_str().unwrap();
    drift(&[
        "--agent",
        "codex-acp",
        "--from",
        "0.4.4",
        "--to",
        "2.6.0",
        "--scenario",
        "unity-call-allowed",
        "--scenario",
        "screenshot",
        "--scenario",
        "permission-denied",
        "--out",
        out_arg,
    ]);
    let fresh = std::fs::read_to_string(&out)
        .unwrap()
        .replace(out_arg, "docs/drift-codex-acp-0.4.4-to-2.6.0.md");
    assert!(
        fresh == committed,
        "docs/drift-codex-acp-0.4.4-to-2.6.0.md is stale: regenerate it with the command on its Reproduce line"
    );
}

fn bad_arguments_are_refused_with_a_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["drift", "recordings/codex-acp/2.6.0"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("give two recordings"));
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args([
            "drift",
            "recordings/codex-acp/9.9.9",
            "recordings/codex-acp/2.6.0",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("9.9.9"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(drift_codex: the_reject_option_id_change_is_reported_with_an_example_from_each_side, the_wrapped_raw_output_is_reported_as_a_changed_tool_call_shape, a_version_compared_with_itself_shows_no_drift, the_committed_example_report_is_what_the_tool_writes, bad_arguments_are_refused_with_a_message)
}
