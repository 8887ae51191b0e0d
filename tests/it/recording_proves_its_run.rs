//! A recording proves its scenario ran:
//! - the model server finds a prompt the agent wrapped in framing text of
//!   its own, and never serves a turn's reply to a request that offers no
//!   tools (a session-title request quoting the prompt) unless the profile
//!   declares it a side request;
//! - `record` ends a run `incomplete` and exits 1, naming what was not
//!   played, when a scripted reply was never asked for or the scenario
//!   calls an agent tool the profile maps none for; an agent the profile
//!   says never asks a model records `ok`;
//! - a profile's `[session]` (MCP servers the agent does not advertise,
//!   config options set after `session/new`) is sent, kept in the header,
//!   and replays through the bridge without a divergence;
//! - `record --acp-protocol 2` negotiates ACP v2 as a real client does (a
//!   refused offer falls back to v1), ends a turn on `state_update` `idle`,
//!   and files the recording as `<version>+acp2`.

use crate::support::record_run;

use std::path::Path;
use std::time::Duration;

use acp_harness::capture::model_server::{Flavour, ModelScript, Placement, SideRequests, place};
use acp_harness::corpus::recording::{self, Outcome};
use acp_harness::corpus::scenario;
use axum::http::Method;
use serde_json::{Value, json};

const RUN_LIMIT: Duration = Duration::from_secs(60);

const SCENARIO: &str = r#"name = "one-turn"
summary = "One prompt, one scripted reply."
[[step]]
panel = "prompt"
text = "Reply with the single word: hello"
  [[step.model]]
  text = "hello"
"#;

fn chat(user: &str, tools: bool) -> Value {
    let mut body = json!({"model": "m", "stream": true, "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": user},
    ]});
    if tools {
        body["tools"] = json!([{"type": "function", "function": {"name": "bash"}}]);
    }
    body
}

fn placed(body: &Value, side: &SideRequests) -> String {
    let scenario = scenario::parse(Path::new("one-turn.toml"), SCENARIO.as_bytes()).unwrap();
    let script = ModelScript::from_scenario(&scenario);
    let bytes = serde_json::to_vec(body).unwrap();
    match place(
        Flavour::ChatCompletions,
        &script,
        side,
        &Method::POST,
        "/v1/chat/completions",
        &bytes,
    ) {
        Placement::Turn {
            turn,
            reply,
            quoted,
            ..
        } => format!("turn {turn} reply {reply} quoted={quoted}"),
        Placement::Side(s, _) => format!("side {}", s.name),
        Placement::OffScript { why, .. } => format!("off script: {why}"),
        other => format!("{other:?}"),
    }
}

fn a_framed_prompt_is_the_turn_and_a_request_without_tools_is_never_the_turn() {
    let none = SideRequests::default();
    let title: SideRequests = vec![
        toml::from_str::<toml::Value>(
            "name = \"session title\"\nno_tools = true\nlast_user_matches = \"(?i)title\"",
        )
        .unwrap(),
    ]
    .try_into()
    .unwrap();
    let framed = "[Context: the user works in Unity]\nThe user says: \"Reply with the single word: hello\" -- answer briefly";
    let title_request = "Generate a session title for: Reply with the single word: hello";
    let cases: &[(&str, Value, &SideRequests, &str)] = &[
        (
            "the prompt as a block of its own",
            chat("Reply with the single word: hello", true),
            &none,
            "turn 0 reply 0 quoted=false",
        ),
        (
            "the prompt inside framing text",
            chat(framed, true),
            &none,
            "turn 0 reply 0 quoted=true",
        ),
        (
            "a title request quoting the prompt, undeclared",
            chat(title_request, false),
            &none,
            "off script: it quotes turn 1's prompt but offers no tools: a request about the conversation (a session title, a summary), not the turn",
        ),
        (
            "the prompt on its own in a request without tools, undeclared",
            chat("Reply with the single word: hello", false),
            &none,
            "off script: it quotes turn 1's prompt but offers no tools: a request about the conversation (a session title, a summary), not the turn",
        ),
        (
            "a title request quoting the prompt, declared",
            chat(title_request, false),
            &title,
            "side session title",
        ),
    ];
    for (case, body, side, want) in cases {
        assert_eq!(placed(body, side), *want, "{case}");
    }
}

/// Answers every prompt itself with `hello`, never asking a model.
const SELF_ANSWERING: &str = r#"
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocolVersion":1,"agentInfo":{"name":"self-answering","version":"1.0.0"}}}';;
  *'"method":"session/new"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"sessionId":"s"}}';;
  *'"method":"session/set_config_option"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"configOptions":[]}}';;
  *'"method":"session/prompt"'*)
    printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}'
    printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"stopReason":"end_turn"}}';;
  esac
done
"#;

/// The frames the recording client sent the agent, parsed.
fn sent_to_agent(rec: &recording::Recording) -> Vec<Value> {
    rec.events
        .iter()
        .filter(|e| e.leg == recording::Leg::Acp && e.dir == recording::Dir::ToAgent)
        .map(|e| serde_json::from_str(&e.raw).unwrap())
        .collect()
}

/// A repository root under `dir` with `profiles/` and the one-turn scenario.
fn root_with_one_turn(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::write(root.join("scenarios/one-turn.toml"), SCENARIO).unwrap();
    root
}

fn profile(id: &str, model_extra: &str) -> String {
    profile_with(id, "", model_extra)
}

fn profile_with(id: &str, top: &str, model_extra: &str) -> String {
    crate::support::record_run::double_profile(
        id,
        top,
        &format!(
            "flavour = \"chat_completions\"\ntool_naming = {{ form = \"flat\", template = \"unity-ops_{{tool}}\" }}\n{model_extra}"
        ),
        "bash",
        &format!("[\"-c\", '''{SELF_ANSWERING}''']"),
    )
}

const GATE_SCENARIO: &str = r#"name = "own-tool"
summary = "One prompt whose reply calls the agent's own shell tool."
[[step]]
panel = "prompt"
text = "Run the shell command."
  [[step.model]]
  tool_calls = [{ agent_tool = "shell", arguments = { command = "true" }, id = "call_sh" }]
  [[step.model]]
  text = "done"
"#;

fn a_run_that_leaves_its_script_unplayed_ends_incomplete_and_record_exits_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_with_one_turn(dir.path());
    std::fs::write(root.join("scenarios/own-tool.toml"), GATE_SCENARIO).unwrap();
    // (profile, its [model] extra, scenario, exit, outcome, a note that must be there)
    let cases = [
        (
            "asks-model",
            "",
            "one-turn",
            Some(1),
            Outcome::Incomplete,
            Some(
                "incomplete: a scripted model reply was never asked for: turn 1 (\"Reply with the single word: hello\") reply 1: text \"hello\"",
            ),
        ),
        (
            "never-asks",
            "asks_model = false",
            "one-turn",
            Some(0),
            Outcome::Ok,
            None,
        ),
        (
            "no-own-tools",
            "asks_model = false",
            "own-tool",
            Some(1),
            Outcome::Incomplete,
            Some(
                "incomplete: the scenario calls the agent's own `shell` tool and the profile maps none ([model.agent_tools.shell])",
            ),
        ),
    ];
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    for (id, extra, scenario, want_code, want_outcome, want_note) in cases {
        std::fs::write(
            root.join("profiles").join(format!("{id}.toml")),
            profile(id, extra),
        )
        .unwrap();
        let stderr_path = out.join(format!("{id}.stderr"));
        let (code, stderr) =
            record_run::run_record(&root, &out, id, scenario, &[], &stderr_path, RUN_LIMIT);
        assert_eq!(code, want_code, "{id}: exit code; stderr:\n{stderr}");
        let rec = recording::read(&out.join(format!("{id}/1.0.0/{scenario}.jsonl"))).unwrap();
        let trailer = rec.trailer.expect("a trailer");
        assert_eq!(trailer.outcome, want_outcome, "{id}: {:?}", trailer.notes);
        if let Some(note) = want_note {
            assert!(
                trailer.notes.iter().any(|n| n == note),
                "{id}: no note {note:?} in {:?}",
                trailer.notes
            );
            assert!(
                stderr.contains(note),
                "{id}: record did not say {note:?}:\n{stderr}"
            );
        }
    }
}

fn a_profiles_session_setup_is_sent_kept_in_the_header_and_replayed_alike() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_with_one_turn(dir.path());
    let id = "session-setup";
    std::fs::write(
        root.join("profiles").join(format!("{id}.toml")),
        profile_with(
            id,
            "[session]\nmcp_unadvertised = true\nconfig_options = { mode = \"ask\", effort = \"low\" }\n",
            "asks_model = false",
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let stderr_path = out.join("record.stderr");
    let (code, stderr) =
        record_run::run_record(&root, &out, id, "one-turn", &[], &stderr_path, RUN_LIMIT);
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let rec = recording::read(&out.join(format!("{id}/1.0.0/one-turn.jsonl"))).unwrap();
    assert!(rec.header.session.mcp_unadvertised);
    assert_eq!(rec.header.session.config_option_list().len(), 2);
    let sent = sent_to_agent(&rec);
    let new = sent.iter().find(|f| f["method"] == "session/new").unwrap();
    assert_eq!(new["params"]["mcpServers"][0]["name"], "unity-ops", "{new}");
    let options: Vec<(&str, &str)> = sent
        .iter()
        .filter(|f| f["method"] == "session/set_config_option")
        .map(|f| {
            (
                f["params"]["configId"].as_str().unwrap(),
                f["params"]["value"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(options, [("effort", "low"), ("mode", "ask")]);
    let scenario = scenario::load(root.join("scenarios/one-turn.toml")).unwrap();
    let replayed = acp_harness::judging::replay::replayer::replay(&rec, &scenario);
    let divergences: Vec<_> = replayed.transcript.divergences().collect();
    assert!(divergences.is_empty(), "{divergences:?}");
}

/// An agent that speaks ACP v2 when offered it, or refuses a v2 offer
/// (`$REFUSE_V2`) and speaks v1; a v2 prompt is answered `{messageId}` at
/// once and its turn ends with `state_update` `idle`.
const V2_AGENT: &str = r#"
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*'"protocolVersion":2'*)
    if [ -n "$REFUSE_V2" ]; then
      printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"error":{"code":-32602,"message":"missing info"}}'
    else
      v2=1
      printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocolVersion":2,"info":{"name":"v2-agent","version":"1.0.0"},"capabilities":{"session":{"mcp":{"http":{}}}}}}'
    fi;;
  *'"method":"initialize"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocolVersion":1,"agentInfo":{"name":"v2-agent","version":"1.0.0"},"agentCapabilities":{"mcpCapabilities":{"http":true}}}}';;
  *'"method":"session/new"'*) printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"sessionId":"s"}}';;
  *'"method":"session/prompt"'*)
    if [ -n "$v2" ]; then
      printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"messageId":"m1"}}'
      printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}'
      printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"a1","content":{"type":"text","text":"hello"}}}}'
      printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}'
    else
      printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}'
      printf '%s\n' '{"jsonrpc":"2.0","id":'"$id"',"result":{"stopReason":"end_turn"}}'
    fi;;
  esac
done
"#;

fn a_v2_offer_is_negotiated_like_a_real_client_and_filed_beside_v1() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_with_one_turn(dir.path());
    // (agent, its [env], the revision it selects, a note that must be there)
    let cases = [
        ("speaks-v2", "", 2, None),
        (
            "refuses-v2",
            "REFUSE_V2 = \"1\"\n",
            1,
            Some("the agent refused the ACP v2 offer"),
        ),
    ];
    for (id, env, selected, note) in cases {
        let text = record_run::double_profile(
            id,
            &format!("[env]\n{env}"),
            "flavour = \"chat_completions\"\ntool_naming = { form = \"flat\", template = \"unity-ops_{tool}\" }\nasks_model = false",
            "bash",
            &format!("[\"-c\", '''{V2_AGENT}''']"),
        );
        std::fs::write(root.join("profiles").join(format!("{id}.toml")), text).unwrap();
        let out = dir.path().join(format!("out-{id}"));
        std::fs::create_dir_all(&out).unwrap();
        let stderr_path = out.join("record.stderr");
        let args = ["--acp-protocol", "2"];
        let (code, stderr) =
            record_run::run_record(&root, &out, id, "one-turn", &args, &stderr_path, RUN_LIMIT);
        assert_eq!(code, Some(0), "{id}: stderr:\n{stderr}");
        let rec = recording::read(&out.join(format!("{id}/1.0.0+acp2/one-turn.jsonl"))).unwrap();
        assert_eq!(rec.header.protocol_version, selected, "{id}");
        let trailer = rec.trailer.as_ref().expect("a trailer");
        assert_eq!(trailer.outcome, Outcome::Ok, "{id}: {:?}", trailer.notes);
        if let Some(note) = note {
            assert!(
                trailer.notes.iter().any(|n| n.contains(note)),
                "{id}: no note {note:?} in {:?}",
                trailer.notes
            );
        }
        let sent = sent_to_agent(&rec);
        assert_eq!(sent[0]["params"]["protocolVersion"], 2, "{id}");
        assert_eq!(sent[0]["params"]["info"]["name"], "acp-bridge", "{id}");
        let new = sent.iter().find(|f| f["method"] == "session/new").unwrap();
        assert_eq!(new["params"]["mcpServers"][0]["name"], "unity-ops", "{id}");
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(recording_proves_its_run: a_framed_prompt_is_the_turn_and_a_request_without_tools_is_never_the_turn, a_run_that_leaves_its_script_unplayed_ends_incomplete_and_record_exits_1_naming_it, a_profiles_session_setup_is_sent_kept_in_the_header_and_replayed_alike, a_v2_offer_is_negotiated_like_a_real_client_and_filed_beside_v1)
}
