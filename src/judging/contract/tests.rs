//! The contract's derive and check over hand-made lines.

use super::*;
use serde_json::json;

/// [`Contract::check`] over lines as text.
fn check(c: &Contract, lines: &[String]) -> Conformance {
    let parsed: Vec<Option<Value>> = lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
    c.check(&parsed)
}

fn contract_of(lines: &[Value]) -> Contract {
    let mut c = Contract::default();
    let mut acc: BTreeMap<String, Vec<BTreeMap<String, &'static str>>> = BTreeMap::new();
    for l in lines {
        for item in items(l) {
            acc.entry(item.kind)
                .or_default()
                .push(key_types(item.value));
        }
    }
    for (kind, samples) in acc {
        let mut rules = KindRules {
            seen: samples.len(),
            ..Default::default()
        };
        for s in &samples {
            for (k, t) in s {
                let r = rules.keys.entry(k.clone()).or_insert(KeyRule {
                    required: true,
                    types: BTreeSet::new(),
                });
                r.types.insert(t.to_string());
            }
        }
        for (k, r) in rules.keys.iter_mut() {
            r.required = samples.iter().all(|s| s.contains_key(k));
        }
        c.kinds.insert(kind, rules);
    }
    c
}

#[test]
fn line_kinds_are_what_the_panel_dispatches_on() {
    let cases = [
        (json!({"type":"system","subtype":"init"}), "system/init"),
        (
            json!({"type":"stream_event","event":{"type":"content_block_delta"}}),
            "stream_event/content_block_delta",
        ),
        (
            json!({"type":"control_request","request":{"subtype":"can_use_tool"}}),
            "control_request/can_use_tool",
        ),
        (
            json!({"type":"control_response","response":{"subtype":"success"}}),
            "control_response/success",
        ),
        (
            json!({"type":"result","subtype":"success"}),
            "result/success",
        ),
        (json!({"type":"assistant"}), "assistant"),
    ];
    for (v, kind) in cases {
        assert_eq!(line_kind(&v).as_deref(), Some(kind), "{v}");
    }
    assert_eq!(line_kind(&json!({"no":"type"})), None);
}

#[test]
fn a_key_claude_always_sends_is_required_and_its_absence_fails_the_line() {
    let c = contract_of(&[
        json!({"type":"result","subtype":"success","session_id":"a","num_turns":1,"extra":1}),
        json!({"type":"result","subtype":"success","session_id":"b","num_turns":2}),
    ]);
    assert!(c.kinds["result/success"].keys["session_id"].required);
    assert!(!c.kinds["result/success"].keys["extra"].required);
    let report = check(
        &c,
        &[json!({"type":"result","subtype":"success","num_turns":1}).to_string()],
    );
    assert!(report.fails());
    assert_eq!(report.lines[0].missing, vec!["session_id"]);
    let ok = check(
        &c,
        &[json!({"type":"result","subtype":"success","session_id":"x","num_turns":1}).to_string()],
    );
    assert!(!ok.fails(), "{}", ok.render());
}

#[test]
fn a_waived_key_is_counted_not_failed_and_a_kind_pattern_covers_subtypes() {
    let mut c = contract_of(&[
        json!({"type":"result","subtype":"success","session_id":"a","modelUsage":{}}),
    ]);
    c.waived = vec![Waiver {
        kind: "result/*".into(),
        keys: vec!["modelUsage".into()],
        why: "no ACP counterpart".into(),
    }];
    let report = check(
        &c,
        &[json!({"type":"result","subtype":"success","session_id":"x"}).to_string()],
    );
    assert!(!report.fails(), "{}", report.render());
    assert_eq!(report.waived, 1);
    let report = check(
        &c,
        &[json!({"type":"result","subtype":"success"}).to_string()],
    );
    assert_eq!(report.lines[0].missing, vec!["session_id"]);
}

#[test]
fn a_type_claude_never_used_is_reported_but_does_not_fail() {
    let c = contract_of(&[json!({"type":"result","subtype":"success","num_turns":1})]);
    let report = check(
        &c,
        &[json!({"type":"result","subtype":"success","num_turns":"1"}).to_string()],
    );
    assert!(!report.fails());
    assert_eq!(report.lines[0].mismatched[0].key, "num_turns");
    assert!(
        report
            .render()
            .contains("num_turns is string (Claude: number)"),
        "{}",
        report.render()
    );
}

#[test]
fn content_blocks_are_checked_as_their_own_kind_with_their_place_in_the_line() {
    let c = contract_of(&[json!({"type":"user","message":{"role":"user","content":[
        {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image","source":{"type":"base64"}}]}
    ]}})]);
    let line = json!({"type":"user","message":{"role":"user","content":[
        {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image"}]}
    ]}});
    let report = check(&c, &[line.to_string()]);
    assert!(report.fails());
    assert_eq!(report.lines[0].kind, "tool_result.content/image");
    assert_eq!(
        report.lines[0].missing,
        vec!["message.content[0].content[1].source"]
    );
}

#[test]
fn a_kind_claude_never_sent_and_a_non_json_line_are_reported() {
    let c = contract_of(&[json!({"type":"result","subtype":"success"})]);
    let report = check(
        &c,
        &[
            "{\"type\":\"system\",\"subtype\":\"status\"}".into(),
            "nope".into(),
        ],
    );
    assert!(report.lines[0].unknown_kind && !report.lines[0].fails());
    assert!(report.lines[1].not_json && report.lines[1].fails());
    let report = check(&c, &["{\"type\":\"stream_event\",\"event\":{}}".into()]);
    assert_eq!(report.lines[0].missing, vec!["event.type"]);
}
