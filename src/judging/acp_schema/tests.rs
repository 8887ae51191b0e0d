//! Real frames of `recordings/` against the vendored schema.

use super::*;
use crate::corpus::recording;
use std::path::Path;

fn schema() -> &'static AcpSchema {
    AcpSchema::get().expect("the vendored schema compiles")
}

/// The frames of one conversation, checked in order, each `(sender, raw)`.
fn check_all(frames: &[(Sender, &str)]) -> Vec<FrameCheck> {
    let mut classifier = Classifier::default();
    frames
        .iter()
        .map(|(sender, raw)| classifier.check(schema(), *sender, raw))
        .collect()
}

// claude-agent-acp 0.23.1, text-only: the handshake.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}"#;
const INITIALIZE_RESULT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"_meta":{"claudeCode":{"promptQueueing":true}},"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"loadSession":true,"sessionCapabilities":{"fork":{},"list":{},"resume":{},"close":{}}},"agentInfo":{"name":"@zed-industries/claude-agent-acp","title":"Claude Agent","version":"0.23.1"},"authMethods":[]}}"#;
const SESSION_NEW: &str = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"<workspace>","mcpServers":[{"type":"http","name":"unity-ops","url":"<mcp-url>","headers":[{"name":"Authorization","value":"Bearer <mcp-token>"}]}]}}"#;
// claude-agent-acp 0.23.1: `used` must be an integer.
const USAGE_UPDATE_USED_NULL: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"6e51595f-b6c1-491f-8006-4e14a2c8f684","update":{"sessionUpdate":"usage_update","used":null,"size":200000,"cost":{"amount":0.0006150000000000001,"currency":"USD"}}}}"#;
// claude-agent-acp 0.101.0, resume-session: an extension notification.
const AUTH_STATUS: &str = r#"{"jsonrpc":"2.0","method":"_auth/status_update","params":{"authStatus":{"kind":"api_key","label":"Anthropic API key","detail":"ANTHROPIC_API_KEY"}}}"#;

#[test]
fn a_recorded_handshake_is_valid_and_its_response_is_matched_by_id() {
    let checks = check_all(&[
        (Sender::Client, INITIALIZE),
        (Sender::Agent, INITIALIZE_RESULT),
        (Sender::Client, SESSION_NEW),
    ]);
    let got: Vec<_> = checks
        .iter()
        .map(|c| (c.method.as_deref(), &c.verdict))
        .collect();
    assert_eq!(
        got,
        [
            (Some("initialize"), &Verdict::Valid),
            (Some("initialize result"), &Verdict::Valid),
            (Some("session/new"), &Verdict::Valid),
        ]
    );
}

#[test]
fn usage_update_with_used_null_is_invalid_at_the_used_pointer() {
    let checks = check_all(&[(Sender::Agent, USAGE_UPDATE_USED_NULL)]);
    let Verdict::Invalid(violations) = &checks[0].verdict else {
        panic!("expected invalid, got {:?}", checks[0].verdict);
    };
    assert!(
        violations
            .iter()
            .any(|v| v.pointer.starts_with("/params/update")),
        "{violations:?}"
    );
}

#[test]
fn extension_unstable_and_unknown_methods_and_their_responses_are_outside_the_schema() {
    let checks = check_all(&[
        (Sender::Agent, AUTH_STATUS),
        (
            Sender::Client,
            r#"{"jsonrpc":"2.0","id":4,"method":"session/set_model","params":{"sessionId":"s","modelId":"m"}}"#,
        ),
        (Sender::Agent, r#"{"jsonrpc":"2.0","id":4,"result":{}}"#),
        (Sender::Agent, r#"{"jsonrpc":"2.0","id":99,"result":{}}"#),
    ]);
    for c in &checks {
        assert!(matches!(c.verdict, Verdict::Outside(_)), "{c:?}");
    }
}

#[test]
fn an_error_response_is_checked_against_the_error_definition() {
    let checks = check_all(&[
        (Sender::Client, INITIALIZE),
        (
            Sender::Agent,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"Internal error"}}"#,
        ),
        (Sender::Client, SESSION_NEW),
        (
            Sender::Agent,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"bad"}}"#,
        ),
    ]);
    assert_eq!(checks[1].verdict, Verdict::Valid);
    assert!(
        matches!(checks[3].verdict, Verdict::Invalid(_)),
        "{:?}",
        checks[3]
    );
}

#[test]
fn a_line_that_is_not_json_is_invalid_not_a_panic() {
    let checks = check_all(&[(Sender::Agent, "Loading config...")]);
    assert!(matches!(checks[0].verdict, Verdict::Invalid(_)));
}

#[test]
fn every_method_meta_json_names_has_a_definition_in_the_schema() {
    for protocol in [1, 2] {
        let s = AcpSchema::for_protocol(protocol).expect("the vendored schema compiles");
        assert!(s.handler("session/prompt").is_some(), "v{protocol}");
        for method in s.methods().keys() {
            let defined = [schema::Kind::Request, schema::Kind::Notification]
                .iter()
                .any(|k| s.definition(method, *k).is_some());
            assert!(
                defined,
                "v{protocol}: {method} has no request or notification definition"
            );
        }
    }
}

#[test]
fn a_recording_is_judged_against_the_schema_of_the_revision_it_negotiated() {
    let v2 = AcpSchema::for_protocol(2).expect("the v2 schema compiles");
    // v2's prompt answer (`{messageId}`) and its turn's end (`state_update`)
    // are valid under v2 and not under v1; v2 has no `session/load`
    let frames = [
        (
            Sender::Client,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#,
        ),
        (
            Sender::Agent,
            r#"{"jsonrpc":"2.0","id":2,"result":{"messageId":"m1"}}"#,
        ),
        (
            Sender::Agent,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}"#,
        ),
    ];
    for (protocol, schema, want_valid) in [(2, v2, true), (1, schema(), false)] {
        let mut c = Classifier::default();
        let verdicts: Vec<bool> = frames
            .iter()
            .map(|(sender, raw)| matches!(c.check(schema, *sender, raw).verdict, Verdict::Valid))
            .collect();
        assert_eq!(
            verdicts[1..],
            [want_valid, want_valid],
            "v{protocol}: {verdicts:?}"
        );
    }
    assert!(v2.handler("session/load").is_none());
    assert!(schema::version_for(2).contains("schema/v2"));
}

#[test]
fn every_client_frame_of_a_recorded_text_only_run_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rec = recording::read(&root.join("recordings/claude-agent-acp/0.23.1/text-only.jsonl"))
        .expect("readable recording");
    let mut tally = Tally::default();
    for c in check_recording(schema(), &rec) {
        if c.sender == Sender::Client {
            tally.add(&c);
        }
    }
    assert!(tally.frames > 0);
    assert_eq!(tally.invalid, 0, "{:?}", tally.violations);
}

#[test]
fn the_matrix_sums_recordings_per_version_and_counts_invalid_bridge_frames() {
    let checks = check_all(&[(
        Sender::Client,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
    )]);
    let mut bridge = Tally::default();
    bridge.add(&checks[0]);
    let one = RecordingConformance {
        bridge: Some(bridge),
        ..RecordingConformance::default()
    };
    let mut m = matrix::Matrix::default();
    m.add("a", "1.0.0", &one);
    m.add("a", "1.0.0", &RecordingConformance::default());
    m.add("b", "2.0.0", &RecordingConformance::default());
    assert_eq!(m.rows.len(), 2);
    assert_eq!((m.rows[0].recordings, m.rows[0].not_replayed), (2, 1));
    assert_eq!(m.bridge_invalid(), 1);
    let json = m.to_json();
    assert_eq!(json["versions"][0]["agent"], "a");
    assert_eq!(json["versions"][0]["sides"]["bridge"]["invalid"], 1);
    assert_eq!(json["schema"], schema::version());
    assert!(m.render_table().contains(schema::version()));
}

#[test]
fn the_vendored_schema_names_its_source_and_version() {
    let v = schema::version();
    assert!(v.starts_with("agent-client-protocol-schema "), "{v}");
    assert!(!v.contains('\n'));
}

#[test]
fn the_bridge_build_names_the_vendored_schema() {
    assert_eq!(acp_bridge::build_stamp::ACP_SCHEMA, schema::version());
}

/// Stable v1 frames the 1.21.0 schema did not know: each is valid now.
#[test]
fn stable_additions_since_1_21_are_valid_frames() {
    let frames = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"warning","title":"Rate limited"}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"k1","status":"completed"}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"compaction_summary_chunk","compactionId":"k1","content":{"type":"text","text":"x"}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"}]}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan_removed","planId":"p1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Ping","name":"mcp__unity-ops__uap_ping"}}}"#,
    ];
    for frame in frames {
        let checks = check_all(&[(Sender::Agent, frame)]);
        assert_eq!(checks[0].verdict, Verdict::Valid, "{frame}");
    }
    let checks = check_all(&[(
        Sender::Client,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[],"systemPrompt":{"mode":"append","content":[{"type":"text","text":"Be brief."}]}}}"#,
    )]);
    assert_eq!(checks[0].verdict, Verdict::Valid);
}

#[test]
fn a_recording_checked_one_event_at_a_time_tallies_as_the_recording_read_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("recordings/claude-agent-acp/0.23.1/text-only.jsonl");
    let whole = RecordingConformance::of_recording(schema(), &recording::read(&path).unwrap());
    let events = recording::Reader::open(&path).unwrap();
    let streamed = RecordingConformance::of_events(schema(), events).unwrap();
    assert!(whole.agent.frames > 0 && whole.client.frames > 0);
    assert_eq!(streamed, whole);
}
