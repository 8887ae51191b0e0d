use serde_json::json;

use super::value_form::*;
use super::*;

/// The tests write a `tool_result` of any JSON content.
impl ResultContent for Value {}

/// The typed delta line must be byte-identical to the `Value` line the
/// core stamps (goldens pin the bytes).
#[test]
fn typed_block_delta_has_the_bytes_of_the_value_form() {
    for (text, thinking) in [
        ("plain", false),
        ("\"quoted\" \\ escaped\n\ttab \u{1} ctl, ünïcödé 🦀", false),
        ("", true),
        ("a thought </x>", true),
    ] {
        let (delta, value_delta) = if thinking {
            (
                Delta::Thinking { thinking: text },
                json!({"type": "thinking_delta", "thinking": text}),
            )
        } else {
            (
                Delta::Text { text },
                json!({"type": "text_delta", "text": text}),
            )
        };
        let event = BlockDelta {
            kind: BlockDeltaType::ContentBlockDelta,
            index: 3,
            delta,
        };
        let line = StampedStreamEvent {
            kind: StreamEventType::StreamEvent,
            event: &event,
            session_id: "S\"1",
            parent_tool_use_id: (),
            uuid: "u-1",
        };
        let mut written = Vec::new();
        line.write_to(&mut written).unwrap();
        let typed = String::from_utf8(written).unwrap();
        assert_eq!(typed, serde_json::to_string(&line).unwrap());
        let mut v =
            stream_event(json!({"type": "content_block_delta", "index": 3, "delta": value_delta}));
        v["session_id"] = json!("S\"1");
        v["uuid"] = json!("u-1");
        assert_eq!(typed, v.to_string());
    }
}

/// The events of a streamed message must be byte-identical to the
/// `Value` events they replace (goldens pin the bytes).
#[test]
fn message_events_have_the_bytes_of_the_value_form() {
    let start = MessageEvent::Start {
        id: "msg_\"1".into(),
        model: "m\\1".into(),
    };
    let message = message_object("msg_\"1", "m\\1", vec![], None);
    let block = |b| MessageEvent::BlockStart { index: 2, block: b };
    for (event, value) in [
        (start, json!({"type": "message_start", "message": message})),
        (
            block(EmptyBlock::Text),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            block(EmptyBlock::Thinking),
            json!({"type": "content_block_start", "index": 2,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        (
            MessageEvent::BlockStop { index: 2 },
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            MessageEvent::Delta {
                stop_reason: "end_turn".into(),
            },
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                "usage": {"output_tokens": 0}}),
        ),
        (MessageEvent::Stop, json!({"type": "message_stop"})),
    ] {
        assert_eq!(serde_json::to_string(&event).unwrap(), value.to_string());
    }
}

/// A JSON-map line with the stamps the core gives a typed one.
fn stamped(mut v: Value) -> String {
    v["session_id"] = json!("S1");
    v["uuid"] = json!("u-1");
    v.to_string()
}

/// The line [`StampedMessage::write_to`] writes, which is the line its
/// `Serialize` writes.
fn stamped_message<M: LineMessage>(kind: MessageLineType, message: &M) -> String {
    let line = StampedMessage {
        kind,
        message,
        parent_tool_use_id: (),
        session_id: "S1",
        uuid: "u-1",
    };
    let mut written = Vec::new();
    line.write_to(&mut written).unwrap();
    let written = String::from_utf8(written).unwrap();
    assert_eq!(written, serde_json::to_string(&line).unwrap());
    written
}

#[test]
fn usage_writes_the_bytes_it_serialises_to() {
    for usage in [
        Usage::default(),
        Usage {
            input_tokens: 1,
            cache_creation_input_tokens: 20,
            cache_read_input_tokens: 300,
            output_tokens: u64::MAX,
        },
    ] {
        let mut written = Vec::new();
        usage.write_to(&mut written).unwrap();
        assert_eq!(
            String::from_utf8(written).unwrap(),
            serde_json::to_string(&usage).unwrap()
        );
    }
}

/// The typed `tool_use` and `tool_result` lines must be byte-identical to
/// the `Value` lines they replace (goldens pin the bytes).
#[test]
fn typed_tool_use_and_tool_result_lines_have_the_bytes_of_the_value_form() {
    let input = json!({"command": "cat \"a b\"", "n": 1.5, "list": [true, null], "é": {}});
    let typed = stamped_message(
        MessageLineType::Assistant,
        &ToolUseMessage::new("msg_acp_1", "gpt-5", "call-1", "Bash", &input),
    );
    let value = assistant(message_object(
        "msg_acp_1",
        "gpt-5",
        vec![json!({"type": "tool_use", "id": "call-1", "name": "Bash", "input": input})],
        None,
    ));
    assert_eq!(typed, stamped(value));

    for (content, is_error) in [
        (json!("out \"q\"\n"), false),
        (json!([{"type": "text", "text": "t"}]), true),
        (json!(""), false),
    ] {
        let typed = stamped_message(
            MessageLineType::User,
            &ToolResultMessage::new("call-1", &content, is_error),
        );
        let value = json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": "call-1", "content": content, "is_error": is_error
            }]},
            "parent_tool_use_id": null,
            "session_id": null
        });
        assert_eq!(typed, stamped(value));
    }
}

/// The `result` line must be byte-identical to the `Value` line it
/// replaces, its text written or copied as JSON text, with and without the
/// keys a failed turn adds.
#[test]
fn result_line_has_the_bytes_of_the_value_form() {
    let turn = |subtype: &'static str, reason: Option<&'static str>| TurnResult {
        is_error: subtype != "success",
        subtype,
        duration_ms: 1234,
        num_turns: 2,
        result: "said \"hi\"\n é".to_string(),
        stop_reason: Some("end_turn".into()),
        total_cost_usd: 0.0125,
        usage: Usage {
            input_tokens: 10,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 3,
            output_tokens: 7,
        },
        permission_denials: vec![PermissionDenial {
            tool_name: "Bash".into(),
            tool_use_id: "c1".into(),
            tool_input: json!({}),
        }],
        errors: vec!["it \"failed\"".into()],
        startup_failure_reason: reason,
    };
    let stamps = Stamps {
        session_id: "S\"1",
        uuid: "u-1",
    };
    for r in [
        turn("success", None),
        turn("error_during_execution", None),
        turn("error_during_execution", Some("initialize_not_first")),
    ] {
        let mut want = result(TurnResult {
            result: r.result.clone(),
            permission_denials: r.permission_denials.clone(),
            errors: r.errors.clone(),
            stop_reason: r.stop_reason.clone(),
            ..r
        });
        want["session_id"] = json!("S\"1");
        want["uuid"] = json!("u-1");
        let json_text = json!(r.result).to_string();
        for text in [ResultText::Text(&r.result), ResultText::Json(&json_text)] {
            let mut written = Vec::new();
            let line = ResultLine {
                turn: &r,
                result: text,
                stamps,
            };
            line.write_to(&mut written).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), want.to_string());
        }
    }
}

/// The `system` lines of a notice and a compaction must be byte-identical
/// to the `Value` lines they replace: the subtype's fields, then the stamps.
#[test]
fn system_lines_have_the_bytes_of_the_value_form() {
    let stamps = Stamps {
        session_id: "S1",
        uuid: "u-1",
    };
    for (event, fields) in [
        (
            SystemEvent::Informational {
                content: "Rate \"limited\"".into(),
                level: "warning",
            },
            json!({"subtype": "informational", "content": "Rate \"limited\"", "level": "warning"}),
        ),
        (
            SystemEvent::Status {
                status: Some("compacting"),
                compact_result: None,
                compact_error: None,
            },
            json!({"subtype": "status", "status": "compacting"}),
        ),
        (
            SystemEvent::Status {
                status: None,
                compact_result: Some("failed"),
                compact_error: Some("too long".into()),
            },
            json!({"subtype": "status", "status": null, "compact_result": "failed", "compact_error": "too long"}),
        ),
        (
            SystemEvent::CompactBoundary {
                compact_metadata: CompactMetadata {
                    trigger: "auto",
                    pre_tokens: 120_000,
                },
            },
            json!({"subtype": "compact_boundary", "compact_metadata": {"trigger": "auto", "pre_tokens": 120_000}}),
        ),
    ] {
        let mut want = json!({"type": "system"});
        for (k, v) in fields.as_object().unwrap() {
            want[k] = v.clone();
        }
        want["session_id"] = json!("S1");
        want["uuid"] = json!("u-1");
        let line = serde_json::to_string(&SystemLine::new(&event, stamps)).unwrap();
        assert_eq!(line, want.to_string());
    }
}
