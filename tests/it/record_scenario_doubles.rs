//! The recorder's scenario-level behaviour against test doubles (short bash
//! scripts behind test profiles, never real agents):
//! - a double that asks no permission (as an agent that honours a tool's
//!   `readOnlyHint` does): the interrupt and steering scenarios' permission
//!   steps must not wait for the turn's end. Recording ends quickly with the
//!   interrupt or steer landing while the turn runs, and the replay of that
//!   recording follows the same steps: no stall, no divergence, one result
//!   per turn;
//! - workspace fixtures of the profile and the scenario exist in the
//!   agent's cwd before it starts.

use crate::support::record_run;

use std::path::Path;
use std::time::{Duration, Instant};

use acp_harness::corpus::recording;
use acp_harness::corpus::scenario;
use acp_harness::judging::replay::replayer::replay;

/// A whole `record` run may take at most this long (a stalled permission
/// step would wait the recorder's 90 s step timeout).
const RUN_LIMIT: Duration = Duration::from_secs(40);

/// The double: on a prompt it reports one MCP tool call that completes
/// without asking, then holds the turn open for 2 s (a slow model) unless
/// `session/cancel` ends it first.
const DOUBLE: &str = r#"
S=sess-1; OPEN=""
say() { printf '%s\n' "$1"; }
upd() { say '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'"$S"'","update":'"$1"'}}'; }
finish() { upd '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}'; say '{"jsonrpc":"2.0","id":'"$OPEN"',"result":{"stopReason":"end_turn"}}'; OPEN=""; }
while true; do
  read -t 2 -r line; rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -gt 128 ] || break
    [ -n "$OPEN" ] && finish
    continue
  fi
  id=$(printf '%s' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*) say '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocolVersion":1,"agentInfo":{"name":"unasking-double","version":"1.0.0"},"agentCapabilities":{"mcpCapabilities":{"http":true}}}}';;
  *'"method":"session/new"'*) say '{"jsonrpc":"2.0","id":'"$id"',"result":{"sessionId":"'"$S"'"}}';;
  *'"method":"session/cancel"'*) [ -n "$OPEN" ] && say '{"jsonrpc":"2.0","id":'"$OPEN"',"result":{"stopReason":"cancelled"}}'; OPEN="";;
  *'"method":"session/prompt"'*)
    [ -n "$OPEN" ] && finish
    case "$line" in
    *'Run the slow'*)
      upd '{"sessionUpdate":"tool_call","toolCallId":"call_ro_'"$id"'","title":"mcp__unity-ops__uap_slow","kind":"read","status":"pending","rawInput":{"ms":20000}}'
      upd '{"sessionUpdate":"tool_call_update","toolCallId":"call_ro_'"$id"'","status":"completed","rawOutput":{"content":[{"type":"text","text":"slept"}]}}'
      OPEN="$id";;
    *)
      upd '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"still-here"}}'
      say '{"jsonrpc":"2.0","id":'"$id"',"result":{"stopReason":"end_turn"}}';;
    esac;;
  esac
done
"#;

/// A test profile running `script` with bash; `extra` (e.g. `[[workspace]]`
/// entries) goes before its other tables.
fn profile(id: &str, script: &str, extra: &str) -> String {
    crate::support::record_run::double_profile(
        id,
        extra,
        "# the double answers by itself, never asking a model\nasks_model = false\nflavour = \"responses\"\ntool_naming = { form = \"namespace\", namespace = \"mcp__unity_ops\" }",
        "bash",
        &format!("[\"-c\", '''{script}''']"),
    )
}

/// Scenarios in the shape of interrupt-slow-tool and steering: a permission
/// step placed before the interrupt / steer.
const SCENARIOS: &[(&str, &str)] = &[
    (
        "unasked-interrupt",
        r#"name = "unasked-interrupt"
summary = "A permission step before an interrupt, against an agent that asks nothing."
tools = ["uap_slow"]
[[step]]
panel = "prompt"
text = "Run the slow Unity operation."
  [[step.model]]
  text = "x"
[[step]]
panel = "permission"
decision = "allow"
[[step]]
panel = "interrupt"
at = "first_tool_call"
[[step]]
panel = "prompt"
text = "Reply with the single word: still-here"
  [[step.model]]
  text = "still-here"
[[expect]]
kind = "result"
count = 2
why = "one result per prompt"
"#,
    ),
    (
        "unasked-steer",
        r#"name = "unasked-steer"
summary = "A permission step before a steer, against an agent that asks nothing."
tools = ["uap_slow"]
[[step]]
panel = "prompt"
text = "Run the slow Unity operation."
  [[step.model]]
  text = "x"
[[step]]
panel = "permission"
decision = "allow"
[[step]]
panel = "steer"
at = "first_tool_call"
text = "Also reply with the word: hello"
  [[step.model]]
  text = "hello"
[[expect]]
kind = "result"
count = 1
why = "the steer folds into the running turn"
"#,
    ),
];

fn record(root: &Path, out: &Path, agent: &str, scenario: &str) -> (Option<i32>, String, Duration) {
    std::fs::create_dir_all(out).unwrap();
    let started = Instant::now();
    let stderr_path = out.join(format!("{scenario}.stderr"));
    let (code, stderr) =
        record_run::run_record(root, out, agent, scenario, &[], &stderr_path, RUN_LIMIT);
    (code, stderr, started.elapsed())
}

fn permission_steps_never_wait_for_the_turn_end_when_the_agent_asks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    let text = profile("test-double-unasking", DOUBLE, "");
    std::fs::write(root.join("profiles/test-double-unasking.toml"), text).unwrap();
    let out = dir.path().join("out");
    for (name, text) in SCENARIOS {
        let path = root.join("scenarios").join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        let (code, stderr, took) = record(&root, &out, "test-double-unasking", name);
        assert_eq!(
            code,
            Some(0),
            "{name}: record failed after {took:?}:\n{stderr}"
        );
        let file = out.join(format!("test-double-unasking/1.0.0/{name}.jsonl"));
        let rec = recording::read(&file).unwrap();
        let notes: Vec<&str> = rec
            .events
            .iter()
            .filter(|e| e.leg == recording::Leg::Harness)
            .map(|e| e.raw.as_str())
            .collect();
        assert!(
            notes
                .iter()
                .any(|n| n.contains("no permission request is coming (tool call")),
            "{name}: the permission step should end on the unasked call: {notes:?}"
        );
        let scenario = scenario::load(&path).unwrap();
        let replayed = replay(&rec, &scenario);
        let divergences: Vec<_> = replayed.transcript.divergences().collect();
        assert!(
            divergences.is_empty(),
            "{name}: replay diverged:\n{}",
            replayed.transcript.render()
        );
        let results = replayed
            .panel_lines
            .iter()
            .filter(|l| l.starts_with("{\"type\":\"result\""))
            .count();
        let want = if *name == "unasked-steer" { 1 } else { 2 };
        assert_eq!(
            results,
            want,
            "{name}: results in replay:\n{}",
            replayed.transcript.render()
        );
    }
}

/// Answers each prompt with `present` when the profile's and the
/// scenario's fixtures are all in its cwd, else `missing`.
const FIXTURE_DOUBLE: &str = r#"
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocolVersion":1,"agentInfo":{"name":"fixture-double","version":"1.0.0"}}}';;
  *'"method":"session/new"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"sessionId":"s"}}';;
  *'"method":"session/prompt"'*)
    w=missing
    [ -d Assets/Scripts ] && [ "$(cat UapStaging/Editor/Gate.cs)" = "// staged" ] && [ -f .agent-state/ready ] && w=present
    printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"'"$w"'"}}}}'
    printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"stopReason":"end_turn"}}';;
  esac
done
"#;

fn workspace_fixtures_of_profile_and_scenario_exist_before_the_agent_starts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    let text = profile(
        "test-double-fixtures",
        FIXTURE_DOUBLE,
        "[[workspace]]\nfile = \".agent-state/ready\"\n",
    );
    std::fs::write(root.join("profiles/test-double-fixtures.toml"), text).unwrap();
    std::fs::write(
        root.join("scenarios/fixtures.toml"),
        r#"name = "fixtures"
summary = "The workspace holds the scenario's and the profile's fixtures."
[[workspace]]
dir = "Assets/Scripts"
[[workspace]]
file = "UapStaging/Editor/Gate.cs"
content = "// staged"
[[step]]
panel = "prompt"
text = "Are the fixtures there?"
  [[step.model]]
  text = "x"
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, stderr, _) = record(&root, &out, "test-double-fixtures", "fixtures");
    assert_eq!(code, Some(0), "record failed:\n{stderr}");
    let rec =
        std::fs::read_to_string(out.join("test-double-fixtures/1.0.0/fixtures.jsonl")).unwrap();
    assert!(
        rec.contains(r#"\"text\":\"present\""#),
        "the double did not find its fixtures:\n{rec}"
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(record_scenario_doubles: permission_steps_never_wait_for_the_turn_end_when_the_agent_asks_nothing, workspace_fixtures_of_profile_and_scenario_exist_before_the_agent_starts)
}
