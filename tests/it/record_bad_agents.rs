//! `record` against agents that misbehave: each is a test double (a short
//! bash script behind a test profile), never a real agent. Whatever the agent
//! does, the run must end in bounded time with a non-zero exit, and the
//! recording must hold everything up to that point plus a trailer that says
//! what happened.

use crate::support::record_run;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use acp_harness::corpus::recording::{self, Leg, Outcome};

/// The whole `record` run of one double may take at most this long.
const RUN_LIMIT: Duration = Duration::from_secs(60);

const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"test-double","version":"1.0.0"},"agentCapabilities":{"mcpCapabilities":{"http":true}}}}"#;

struct Case {
    name: &'static str,
    /// `program` of the double's recipe.
    program: &'static str,
    /// bash script (ignored when the program is not bash).
    script: String,
    outcome: Outcome,
    exit_code: Option<i32>,
    exit_signal: Option<i32>,
    /// Raw texts that must appear in the recording's events or trailer notes.
    holds: Vec<&'static str>,
    /// The `[[ready.wait]] notification` of the double's profile.
    ready_notification: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "crashes-after-initialize",
            program: "bash",
            script: format!(
                "read -r line; echo '{INIT_RESULT}'; read -r line; echo 'boom: exiting' >&2; exit 3"
            ),
            outcome: Outcome::AgentCrashed,
            exit_code: Some(3),
            exit_signal: None,
            holds: vec![
                "\"method\":\"initialize\"",
                "\"agentInfo\"",
                "\"method\":\"session/new\"",
                "boom: exiting",
                "agent closed its output",
            ],
            ready_notification: None,
        },
        Case {
            name: "speaks-non-json",
            program: "bash",
            script: "read -r line; echo 'this is not json'; sleep 0.2; exit 0".into(),
            outcome: Outcome::AgentCrashed,
            exit_code: Some(0),
            exit_signal: None,
            holds: vec!["this is not json", "not a JSON object"],
            ready_notification: None,
        },
        Case {
            name: "hangs-and-ignores-sigterm",
            program: "bash",
            script: "trap '' TERM; while read -r line; do :; done; sleep 30".into(),
            outcome: Outcome::Timeout,
            exit_code: None,
            exit_signal: Some(9),
            holds: vec!["timeout: waited the initialize response", "ignored SIGTERM"],
            ready_notification: None,
        },
        Case {
            name: "fails-to-start",
            program: "/nonexistent/acp-agent-test-double",
            script: String::new(),
            outcome: Outcome::Error,
            exit_code: None,
            exit_signal: None,
            holds: vec!["starting the agent"],
            ready_notification: None,
        },
        Case {
            name: "never-ready",
            program: "bash",
            script: format!(
                "read -r line; echo '{INIT_RESULT}'; read -r line; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"sessionId\":\"s\"}}}}'; while read -r line; do :; done"
            ),
            outcome: Outcome::Timeout,
            exit_code: Some(0),
            exit_signal: None,
            holds: vec!["timeout: waited the _x.test/ready notification before prompting"],
            ready_notification: Some("_x.test/ready"),
        },
        Case {
            // Its model request carries no prompt of the scenario and no
            // side request of the profile matches it.
            name: "asks-the-model-off-script",
            program: "bash",
            script: format!(
                "read -r line; echo '{INIT_RESULT}'; read -r line; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"sessionId\":\"s\"}}}}'; read -r line; \
                 curl -s -o /dev/null -H 'content-type: application/json' -d '{{\"model\":\"m\",\"input\":[{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"Write a title for this chat.\"}}]}}]}}' {{model_url}}/v1/responses; \
                 echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"stopReason\":\"end_turn\"}}}}'; while read -r line; do :; done"
            ),
            outcome: Outcome::OffScript,
            exit_code: Some(0),
            exit_signal: None,
            holds: vec![
                "(POST /v1/responses) is off script: no user message holds a scripted prompt (the last one says",
                "no [[model.side_requests]] of the profile matches it",
            ],
            ready_notification: None,
        },
    ]
}

fn profile_text(case: &Case) -> String {
    let args = if case.program == "bash" {
        format!("args = [\"-c\", '''{}''']", case.script)
    } else {
        "args = []".into()
    };
    let ready = case
        .ready_notification
        .map(|n| format!("[[ready.wait]]\nnotification = \"{n}\"\n"))
        .unwrap_or_default();
    format!(
        r#"id = "test-double-{name}"
default_version = "1.0.0"
[model]
# the double answers by itself, never asking a model
asks_model = false
flavour = "responses"
tool_naming = {{ form = "namespace", namespace = "mcp__unity_ops" }}
[ready]
timeout_ms = 1500
handshake_timeout_ms = 1500
{ready}[stop]
eof_grace_ms = 300
term_grace_ms = 300
[[recipe]]
versions = "*"
program = "{program}"
{args}
"#,
        name = case.name,
        program = case.program,
    )
}

fn setup_root(dir: &Path, case: &Case) -> PathBuf {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::write(
        root.join("profiles")
            .join(format!("test-double-{}.toml", case.name)),
        profile_text(case),
    )
    .unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/text-only.toml");
    std::fs::copy(scenario, root.join("scenarios/text-only.toml")).unwrap();
    root
}

/// Runs `record` for one double; returns its exit code (None = killed by us
/// after RUN_LIMIT, i.e. a hang) and stderr.
fn run_record(root: &Path, out: &Path, agent: &str) -> (Option<i32>, String) {
    run_record_with(root, out, agent, &[])
}

/// Runs `record` of the text-only scenario for `agent` with `extra`
/// arguments, bounded by RUN_LIMIT; returns its exit code (None = killed by
/// us, i.e. a hang) and stderr.
fn run_record_with(root: &Path, out: &Path, agent: &str, extra: &[&str]) -> (Option<i32>, String) {
    let stderr_path = out.with_extension("stderr");
    record_run::run_record(
        root,
        out,
        agent,
        "text-only",
        extra,
        &stderr_path,
        RUN_LIMIT,
    )
}

fn misbehaving_agents_end_with_a_trailer_and_a_failing_exit() {
    let mut failures = Vec::new();
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let root = setup_root(dir.path(), &case);
        let out = dir.path().join("out");
        let agent = format!("test-double-{}", case.name);
        let (code, stderr) = run_record(&root, &out, &agent);
        let path = out.join(&agent).join("1.0.0").join("text-only.jsonl");
        let problems = check(&case, code, &path);
        if !problems.is_empty() {
            failures.push(format!(
                "{}: {}\n--- stderr:\n{stderr}",
                case.name,
                problems.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn check(case: &Case, code: Option<i32>, path: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    match code {
        None => problems.push(format!("record did not finish within {RUN_LIMIT:?}")),
        Some(0) => problems.push("record exited 0".into()),
        Some(_) => {}
    }
    let rec = match recording::read(path) {
        Ok(r) => r,
        Err(e) => {
            problems.push(format!("no readable recording: {e}"));
            return problems;
        }
    };
    // Where a loopback-only namespace can be made, every run uses one and says so.
    let expected_isolation = if acp_harness::capture::isolation::available() {
        "netns-loopback"
    } else {
        "none"
    };
    if rec.header.isolation != expected_isolation {
        problems.push(format!(
            "header isolation {:?}, expected {expected_isolation:?}",
            rec.header.isolation
        ));
    }
    let Some(trailer) = &rec.trailer else {
        problems.push("recording has no trailer".into());
        return problems;
    };
    if trailer.outcome != case.outcome {
        problems.push(format!(
            "outcome {:?}, expected {:?}",
            trailer.outcome, case.outcome
        ));
    }
    if trailer.exit.code != case.exit_code || trailer.exit.signal != case.exit_signal {
        problems.push(format!(
            "exit {:?}, expected code {:?} signal {:?}",
            trailer.exit, case.exit_code, case.exit_signal
        ));
    }
    let mut all_text: Vec<&str> = rec.events.iter().map(|e| e.raw.as_str()).collect();
    all_text.extend(trailer.notes.iter().map(String::as_str));
    for needle in &case.holds {
        if !all_text.iter().any(|t| t.contains(needle)) {
            problems.push(format!("recording lacks {needle:?}"));
        }
    }
    if !rec.events.iter().any(|e| e.leg == Leg::Acp) && case.outcome != Outcome::Error {
        problems.push("recording holds no ACP frame".into());
    }
    problems
}

/// A test double that plays one text turn and draws a fresh session id each
/// run, as real agents do; `word` is what it answers.
fn text_turn_double(word: &str) -> String {
    let init = INIT_RESULT;
    format!(
        r#"while read -r line; do case "$line" in
*'"method":"initialize"'*) echo '{init}';;
*'"method":"session/new"'*) S="sess-$RANDOM$RANDOM"; echo '{{"jsonrpc":"2.0","id":1,"result":{{"sessionId":"'"$S"'"}}}}';;
*'"method":"session/prompt"'*) echo '{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"'"$S"'","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{word}"}}}}}}}}'; echo '{{"jsonrpc":"2.0","id":2,"result":{{"stopReason":"end_turn"}}}}';;
esac; done"#
    )
}

fn double_case(name: &'static str, word: &str) -> Case {
    Case {
        name,
        program: "bash",
        script: text_turn_double(word),
        outcome: Outcome::Ok,
        exit_code: Some(0),
        exit_signal: None,
        holds: vec![],
        ready_notification: None,
    }
}

/// Runs `record --check` against what is under `out`; returns exit code
/// (None = a hang, killed after RUN_LIMIT) and stderr.
fn run_check(root: &Path, out: &Path, agent: &str) -> (Option<i32>, String) {
    run_record_with(root, out, agent, &["--check"])
}

fn re_recording_matches_after_normalising_random_session_ids_and_a_changed_answer_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let same = double_case("steady", "hello");
    let root = setup_root(dir.path(), &same);
    let out = dir.path().join("out");
    let agent = "test-double-steady";
    let (code, stderr) = run_record(&root, &out, agent);
    assert_eq!(code, Some(0), "first recording failed:\n{stderr}");
    let first = std::fs::read_to_string(out.join(agent).join("1.0.0/text-only.jsonl")).unwrap();

    let (code, stderr) = run_check(&root, &out, agent);
    assert_eq!(code, Some(0), "re-recording should match:\n{stderr}");
    assert!(stderr.contains("matches after normalisation"), "{stderr}");
    let after = std::fs::read_to_string(out.join(agent).join("1.0.0/text-only.jsonl")).unwrap();
    assert_eq!(
        first, after,
        "--check must not rewrite the committed recording"
    );

    // Same agent id, but it now answers something else: a real difference.
    let changed = double_case("steady", "goodbye");
    std::fs::write(
        root.join("profiles").join(format!("{agent}.toml")),
        profile_text(&changed),
    )
    .unwrap();
    let (code, stderr) = run_check(&root, &out, agent);
    assert_eq!(
        code,
        Some(1),
        "a changed answer must fail the check:\n{stderr}"
    );
    assert!(stderr.contains("== leg acp proc 1 from_agent"), "{stderr}");
    assert!(stderr.contains("goodbye"), "{stderr}");
}

fn record_mode_once_never_overwrites_new_keeps_and_all_reports_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let steady = double_case("steady", "hello");
    let root = setup_root(dir.path(), &steady);
    let out = dir.path().join("out");
    let agent = "test-double-steady";
    let file = out.join(agent).join("1.0.0/text-only.jsonl");
    let (code, stderr) = run_record(&root, &out, agent);
    assert_eq!(code, Some(0), "first recording failed:\n{stderr}");
    let first = std::fs::read_to_string(&file).unwrap();

    // once (the default): refuses as a usage error, names the file, writes nothing
    let (code, stderr) = run_record(&root, &out, agent);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("never overwrites"), "{stderr}");
    assert!(stderr.contains("text-only.jsonl"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // new: the recorded scenario is kept
    let (code, stderr) = run_record_with(&root, &out, agent, &["--mode", "new"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("nothing to do"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // all: re-recorded, and a changed answer is reported as a change
    let changed = double_case("steady", "goodbye");
    std::fs::write(
        root.join("profiles").join(format!("{agent}.toml")),
        profile_text(&changed),
    )
    .unwrap();
    let (code, stderr) = run_record_with(&root, &out, agent, &["--mode", "all"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("changed after normalisation"), "{stderr}");
    assert!(stderr.contains("goodbye"), "{stderr}");
    assert!(std::fs::read_to_string(&file).unwrap().contains("goodbye"));
}

/// Runs `update --agent <agent> <extra>` over `root`, bounded by
/// RUN_LIMIT; returns its exit code, stdout and stderr.
fn run_update(
    root: &Path,
    agent: &str,
    logs: &Path,
    extra: &[&str],
) -> (Option<i32>, String, String) {
    let out_path = logs.with_extension("stdout");
    let err_path = logs.with_extension("stderr");
    let child = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["update", "--agent", agent, "--jobs", "2"])
        .args(extra)
        .args(["--allow-network", "--job-timeout-secs", "50"])
        .arg("--root")
        .arg(root)
        .arg("--log-dir")
        .arg(logs)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let code = record_run::wait_bounded(child, RUN_LIMIT);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (code, read(&out_path), read(&err_path))
}

fn update_records_what_is_missing_and_sets_aside_what_could_not_be_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let steady = double_case("steady", "hello");
    let root = setup_root(dir.path(), &steady);
    let crash = cases()
        .into_iter()
        .find(|c| c.name == "crashes-after-initialize")
        .unwrap();
    std::fs::write(
        root.join("profiles/test-double-crashes-after-initialize.toml"),
        profile_text(&crash),
    )
    .unwrap();
    let logs = dir.path().join("logs");

    // a version that records: it lands in the corpus and gets a summary
    let (code, stdout, stderr) =
        run_update(&root, "test-double-steady", &logs, &["--version", "1.0.0"]);
    assert!(code.is_some(), "update hung:\n{stderr}");
    let recorded = root.join("recordings/test-double-steady/1.0.0/text-only.jsonl");
    assert!(recorded.is_file(), "{stdout}\n{stderr}");
    assert!(stdout.contains("test-double-steady 1.0.0: "), "{stdout}");
    assert!(
        stderr.contains("recorded    test-double-steady@1.0.0 text-only"),
        "{stderr}"
    );

    // asked again: nothing is missing, nothing is recorded
    let before = std::fs::read_to_string(&recorded).unwrap();
    let (code, stdout, stderr) =
        run_update(&root, "test-double-steady", &logs, &["--version", "1.0.0"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("0 recording job(s)"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&recorded).unwrap(), before);

    // a version whose agent crashes, recorded as shard 1/1: its recording
    // is moved out of the corpus and its reason saved beside the logs, not
    // into UNRUNNABLE.md (shards would overwrite each other's)
    let agent = "test-double-crashes-after-initialize";
    let unrunnable_md = root.join(format!("recordings/{agent}/UNRUNNABLE.md"));
    let (code, stdout, stderr) = run_update(
        &root,
        agent,
        &logs,
        &["--version", "1.0.0", "--shard", "1/1"],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        !root.join(format!("recordings/{agent}/1.0.0")).exists(),
        "{stderr}"
    );
    assert!(
        logs.join(format!("{agent}-1.0.0-text-only.jsonl"))
            .is_file()
    );
    assert!(!unrunnable_md.exists());
    let saved = logs.join("unrunnable.jsonl");
    assert!(
        std::fs::read_to_string(&saved)
            .unwrap()
            .contains("the recording ended agent_crashed")
    );

    // judging after the merge: unrunnable with the reason, a row in UNRUNNABLE.md
    let from = saved.to_str().unwrap();
    let (code, stdout, stderr) = run_update(
        &root,
        agent,
        &logs,
        &["--judge-only", "--unrunnable-from", from],
    );
    assert_eq!(
        code,
        Some(0),
        "unrunnable is not a bridge failure:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(&format!("{agent} 1.0.0: unrunnable")),
        "{stdout}"
    );
    let unrunnable = std::fs::read_to_string(&unrunnable_md).unwrap();
    assert!(
        unrunnable.contains("| 1.0.0 | text-only | the recording ended agent_crashed"),
        "{unrunnable}"
    );
}

fn an_agent_reporting_another_version_than_asked_writes_nothing_and_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let steady = double_case("steady", "hello");
    let root = setup_root(dir.path(), &steady);
    let out = dir.path().join("out");
    let agent = "test-double-steady";
    let committed = out.join(agent).join("1.0.0/text-only.jsonl");
    let (code, stderr) = run_record(&root, &out, agent);
    assert_eq!(code, Some(0), "first recording failed:\n{stderr}");
    let first = std::fs::read(&committed).unwrap();
    let corpus = || acp_harness::judging::judge::list_recordings(&out).unwrap();

    // the double reports 1.0.0 whatever it is asked to be
    for mode in ["once", "all"] {
        let (code, stderr) =
            run_record_with(&root, &out, &format!("{agent}@1.0.1"), &["--mode", mode]);
        assert_eq!(code, Some(2), "--mode {mode}: {stderr}");
        assert!(
            stderr.contains("asked for version 1.0.1, but the agent reports version 1.0.0"),
            "--mode {mode}: {stderr}"
        );
        assert!(std::fs::read(&committed).unwrap() == first, "--mode {mode}");
        assert_eq!(corpus(), vec![committed.clone()], "--mode {mode}");
    }

    // update of that version: unrunnable, and nothing of it in the corpus
    let logs = dir.path().join("logs");
    let (code, stdout, stderr) = run_update(&root, agent, &logs, &["--version", "1.0.1"]);
    assert!(code.is_some(), "update hung:\n{stderr}");
    assert!(
        stderr.contains("unrunnable  test-double-steady@1.0.1"),
        "{stdout}\n{stderr}"
    );
    let in_root =
        || acp_harness::judging::judge::list_recordings(&root.join("recordings")).unwrap();
    assert_eq!(in_root(), Vec::<PathBuf>::new(), "{stdout}\n{stderr}");

    // the profile says 1.0.1 reports itself as 1.0.0: recorded as 1.0.1
    let text = profile_text(&steady).replacen(
        "[model]",
        "reported_versions = { \"1.0.1\" = \"1.0.0\" }\n[model]",
        1,
    );
    std::fs::write(root.join("profiles").join(format!("{agent}.toml")), text).unwrap();
    let (code, stderr) = run_record(&root, &out, &format!("{agent}@1.0.1"));
    assert_eq!(code, Some(0), "{stderr}");
    let mapped = out.join(agent).join("1.0.1/text-only.jsonl");
    assert_eq!(corpus(), vec![committed.clone(), mapped]);
    assert!(std::fs::read(&committed).unwrap() == first);
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(record_bad_agents: misbehaving_agents_end_with_a_trailer_and_a_failing_exit, re_recording_matches_after_normalising_random_session_ids_and_a_changed_answer_does_not, record_mode_once_never_overwrites_new_keeps_and_all_reports_what_changed, update_records_what_is_missing_and_sets_aside_what_could_not_be_recorded, an_agent_reporting_another_version_than_asked_writes_nothing_and_names_both)
}
