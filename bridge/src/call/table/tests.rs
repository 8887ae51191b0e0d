//! The tool call table's tests.

use super::*;

/// What the running calls hold follows what their fields hold now: a
/// replaced content counts once, rawInput and terminal output by what
/// they merged into, a closed call not at all.
#[test]
fn running_calls_hold_what_their_fields_hold_now() {
    let mut calls = ToolCalls::new(vec![]);
    let text = |n: usize| "y".repeat(n);
    let content =
        |n: usize| json!([{"type": "content", "content": {"type": "text", "text": text(n)}}]);
    for _ in 0..100 {
        calls.merge_owned(
            "a",
            json!({"status": "in_progress", "content": content(1000)}),
        );
    }
    let one = fields_held_bytes(calls.get("a").unwrap().fields());
    assert_eq!(calls.open_held, one);
    assert!((1000..1200).contains(&one), "{one}");
    calls.merge_owned("a", json!({"rawInput": {"path": text(500)}}));
    calls.merge_owned("a", json!({"rawInput": {"path": text(10), "mode": "r"}}));
    calls.merge_owned(
        "a",
        json!({"_meta": {"terminal_output": {"terminal_id": "a", "data": text(300)}}}),
    );
    calls.merge_owned("b", json!({"content": content(2000)}));
    let held = |id: &str| fields_held_bytes(calls.get(id).unwrap().fields());
    assert_eq!(calls.open_held, held("a") + held("b"));
    assert!(calls.over_budget().is_empty());
    calls.close("a");
    calls.close("a");
    assert_eq!(
        calls.open_held,
        fields_held_bytes(calls.get("b").unwrap().fields())
    );
    calls.close("b");
    assert_eq!(calls.open_held, 0);
}

/// A session of endless calls keeps the last [`REMEMBERED_CALLS`]
/// closed ones (their late frames are dropped) and every running one.
#[test]
fn closed_calls_past_the_window_are_forgotten_running_ones_never() {
    let mut calls = ToolCalls::new(vec![]);
    calls.merge_owned("running", json!({"status": "in_progress"}));
    let n = REMEMBERED_CALLS + 1000;
    for i in 0..n {
        calls.merge_owned(&format!("c{i}"), json!({"title": "t"}));
        calls.close(&format!("c{i}"));
    }
    // the running call at the front holds the window open
    assert_eq!(calls.calls.len(), n + 1);
    calls.close("running");
    assert_eq!(calls.calls.len(), REMEMBERED_CALLS);
    assert_eq!(calls.index.len(), REMEMBERED_CALLS);
    let last = format!("c{}", n - 1);
    assert!(
        calls
            .merge_owned(&last, json!({"status": "completed"}))
            .is_closed()
    );
    assert!(
        !calls
            .merge_owned("c0", json!({"status": "completed"}))
            .is_closed()
    );
    assert_eq!(calls.open_ids().len() + calls.unannounced_ids().len(), 1);
}

/// A permission request's parts count in what a running call holds, and a
/// later request's parts replace the earlier's, never the call's own title.
#[test]
fn permission_parts_count_in_what_a_call_holds_and_replace_each_other() {
    let asked = |title: &str, n: usize| {
        crate::call::identity::permission_request_fields(&json!({
            "toolCall": {"toolCallId": "a", "title": title,
                "content": [{"type": "content", "content": {"type": "text", "text": "y".repeat(n)}}]},
            "options": [{"optionId": "allow", "name": "Allow"}]
        }))
    };
    let held = |calls: &ToolCalls| fields_held_bytes(calls.get("a").unwrap().fields());
    let mut calls = ToolCalls::new(vec![]);
    calls.merge_owned("a", json!({"status": "pending"}));
    calls.merge_owned("a", asked("first", 1000));
    assert_eq!(calls.open_held, held(&calls));
    assert!(calls.open_held > 1000, "{}", calls.open_held);
    calls.merge_owned("a", asked("second", 10));
    assert_eq!(calls.open_held, held(&calls));
    assert!(calls.open_held < 200, "{}", calls.open_held);
    let fields = calls.get("a").unwrap().fields();
    assert_eq!(fields.permission.title(), Some("second"));
    assert!(fields.own.title.is_none());
}
