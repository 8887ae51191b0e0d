use super::*;

fn update(u: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": u}})
}

/// The updates the core gets from each v2 frame, in order, one reader per case.
fn read_all(frames: Vec<Value>) -> Vec<Value> {
    let mut reader = V2Reader::default();
    frames
        .into_iter()
        .flat_map(|f| {
            // a frame handled as it came reads as itself
            let reads = reader.read(f.clone());
            reads.into_iter().map(move |r| match r {
                V2Read::AsSent => V2Read::Frame(f.clone()),
                other => other,
            })
        })
        .map(|r| match r {
            V2Read::Frame(f) if f["method"] == "session/update" => f["params"]["update"].clone(),
            V2Read::Frame(f) => f,
            V2Read::State { state, end } => {
                let usage = end.tokens.map(|t| json!({"inputTokens": t.input}));
                json!({"state": state, "stopReason": end.stop_reason, "usage": usage})
            }
            V2Read::Skipped(why) => json!({"skipped": why}),
            V2Read::AsSent => unreachable!("mapped above"),
        })
        .collect()
}

#[test]
fn v2_frames_read_as_the_v1_updates_of_the_same_session() {
    // (case, v2 frames, what the core gets)
    let cases: Vec<(&str, Vec<Value>, Vec<Value>)> = vec![
        (
            "a call first seen as an update is its tool_call, then updates",
            vec![
                update(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "t"}),
                ),
                update(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
                ),
            ],
            vec![
                json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t"}),
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
            ],
        ),
        (
            "content chunks append: each reads as the content so far",
            vec![
                update(
                    json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": {"type": "content", "content": {"type": "text", "text": "a"}}}),
                ),
                update(
                    json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": {"type": "content", "content": {"type": "text", "text": "b"}}}),
                ),
            ],
            vec![
                json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "content": [{"type": "content", "content": {"type": "text", "text": "a"}}]}),
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": [{"type": "content", "content": {"type": "text", "text": "a"}}, {"type": "content", "content": {"type": "text", "text": "b"}}]}),
            ],
        ),
        (
            "a whole message not streamed reads as its chunks",
            vec![update(
                json!({"sessionUpdate": "agent_message", "messageId": "m1", "content": [{"type": "text", "text": "he"}, {"type": "text", "text": "llo"}]}),
            )],
            vec![
                json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "he"}}),
                json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "llo"}}),
            ],
        ),
        (
            "a whole message after its chunks cannot be unsent",
            vec![
                update(
                    json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "hello"}}),
                ),
                update(
                    json!({"sessionUpdate": "agent_message", "messageId": "m1", "content": [{"type": "text", "text": "hello!"}]}),
                ),
            ],
            vec![
                json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "hello"}}),
                json!({"skipped": "agent_message m1 replaces a message whose content already reached the panel; skipped"}),
            ],
        ),
        (
            "state updates are the core's own events",
            vec![
                update(json!({"sessionUpdate": "state_update", "state": "running"})),
                update(
                    json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn", "usage": {"inputTokens": 1}}),
                ),
            ],
            vec![
                json!({"state": "running", "stopReason": null, "usage": null}),
                json!({"state": "idle", "stopReason": "end_turn", "usage": {"inputTokens": 1}}),
            ],
        ),
        (
            "a permission subject is v1's toolCall, titled",
            vec![
                json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s", "title": "Run uap_ping?", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}}, "options": []}}),
            ],
            vec![
                json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s", "title": "Run uap_ping?", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}}, "options": [], "toolCall": {"toolCallId": "c1", "title": "Run uap_ping?"}}}),
            ],
        ),
        (
            "what v1 already spells passes as it came",
            vec![update(
                json!({"sessionUpdate": "usage_update", "used": 1, "size": 2}),
            )],
            vec![json!({"sessionUpdate": "usage_update", "used": 1, "size": 2})],
        ),
    ];
    for (case, frames, want) in cases {
        assert_eq!(read_all(frames), want, "{case}");
    }
}
