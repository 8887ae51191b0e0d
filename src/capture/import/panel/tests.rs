use super::*;
use serde_json::{Map, json};

fn ev(dir: Dir, v: Value) -> Event {
    Event {
        seq: 0,
        ms: 0,
        leg: Leg::StreamJson,
        dir,
        proc: 1,
        raw: v.to_string(),
        http: None,
        extra: Map::new(),
    }
}

const PANEL: Dir = Dir::ToAgent;
const BRIDGE: Dir = Dir::FromAgent;

fn user(text: &str) -> Value {
    json!({"type":"user","message":{"role":"user","content":text}})
}

#[test]
fn panel_lines_become_steps_at_points_the_panel_had_passed() {
    let events = vec![
        ev(
            PANEL,
            json!({"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}),
        ),
        ev(PANEL, user("Ping it.")),
        ev(
            BRIDGE,
            json!({"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}}),
        ),
        ev(PANEL, user("Also this.")),
        ev(
            BRIDGE,
            json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__unity-ops__uap_ping","input":{}}]}}),
        ),
        ev(
            BRIDGE,
            json!({"type":"control_request","request_id":"acp-perm-1","request":{"subtype":"can_use_tool","tool_name":"mcp__unity-ops__uap_ping","input":{}}}),
        ),
        ev(
            PANEL,
            json!({"type":"control_response","response":{"subtype":"success","request_id":"acp-perm-1","response":{"behavior":"allow","updatedInput":{},"updatedPermissions":[{"type":"addRules","behavior":"allow"}]}}}),
        ),
        ev(
            PANEL,
            json!({"type":"control_request","request_id":"req_2","request":{"subtype":"interrupt"}}),
        ),
        ev(BRIDGE, json!({"type":"result","subtype":"success"})),
        ev(
            PANEL,
            json!({"type":"control_request","request_id":"req_3","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}),
        ),
        ev(
            PANEL,
            json!({"type":"control_request","request_id":"req_4","request":{"subtype":"mcp_status"}}),
        ),
    ];
    let leg = read(&events, |i| i + 2).unwrap();
    assert_eq!(
        leg.steps,
        vec![
            PanelStep::Prompt {
                text: "Ping it.".into(),
                images: vec![]
            },
            PanelStep::Steer {
                at: Point::Chunks(1),
                text: "Also this.".into(),
                images: vec![]
            },
            PanelStep::Permission {
                decision: Decision::AllowAlways,
                tool: "mcp__unity-ops__uap_ping".into(),
                updated_input: None
            },
            PanelStep::Interrupt {
                at: Point::Permission
            },
            PanelStep::SetMode {
                mode: "acceptEdits".into()
            },
        ]
    );
    assert_eq!(leg.tool_uses, vec!["mcp__unity-ops__uap_ping"]);
    assert!(leg.notes[0].contains("`mcp_status`"), "{:?}", leg.notes);
}

#[test]
fn a_mode_or_model_change_is_a_step_or_a_note_and_one_during_a_turn_is_noted() {
    let change = |request: Value| {
        ev(
            PANEL,
            json!({"type":"control_request","request_id":"r","request":request}),
        )
    };
    let cases: Vec<(Value, bool, Option<PanelStep>, &str)> = vec![
        (
            json!({"subtype":"set_permission_mode","mode":"plan"}),
            false,
            Some(PanelStep::SetMode {
                mode: "plan".into(),
            }),
            "",
        ),
        (
            json!({"subtype":"set_permission_mode"}),
            false,
            None,
            "a set_permission_mode without a mode is left out",
        ),
        (
            json!({"subtype":"set_permission_mode","mode":"plan"}),
            true,
            Some(PanelStep::SetMode {
                mode: "plan".into(),
            }),
            "the mode changed while a turn ran",
        ),
        (
            json!({"subtype":"set_model","model":"m-2"}),
            true,
            Some(PanelStep::SetModel {
                model: "m-2".into(),
            }),
            "the model changed while a turn ran",
        ),
        (
            json!({"subtype":"set_model","model":null}),
            false,
            None,
            "a set_model back to the default model is left out",
        ),
    ];
    for (request, during_a_turn, step, note) in cases {
        let mut events = vec![];
        if during_a_turn {
            events.push(ev(PANEL, user("Go.")));
        }
        events.push(change(request.clone()));
        let leg = read(&events, |i| i + 2).unwrap();
        let steps: Vec<_> = leg.steps.iter().skip(usize::from(during_a_turn)).collect();
        assert_eq!(steps, step.iter().collect::<Vec<_>>(), "{request}");
        match note {
            "" => assert!(leg.notes.is_empty(), "{request}: {:?}", leg.notes),
            note => assert!(
                leg.notes.iter().any(|n| n.contains(note)),
                "{request}: {:?}",
                leg.notes
            ),
        }
    }
}

#[test]
fn an_answer_that_also_switches_the_mode_is_named_in_the_notes() {
    let events = vec![
        ev(PANEL, user("Edit it.")),
        ev(
            BRIDGE,
            json!({"type":"control_request","request_id":"acp-perm-1","request":{"subtype":"can_use_tool","tool_name":"Edit","input":{"a":1}}}),
        ),
        ev(
            PANEL,
            json!({"type":"control_response","response":{"subtype":"success","request_id":"acp-perm-1","response":{"behavior":"allow","updatedInput":{"a":1},"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}),
        ),
    ];
    let leg = read(&events, |i| i + 2).unwrap();
    assert_eq!(
        leg.steps[1],
        PanelStep::Permission {
            decision: Decision::Allow,
            tool: "Edit".into(),
            updated_input: None
        }
    );
    assert!(
        leg.notes
            .iter()
            .any(|n| n.contains("tap line 4") && n.contains("acceptEdits")),
        "{:?}",
        leg.notes
    );
}

#[test]
fn a_step_no_point_can_place_and_a_prompt_no_scenario_can_carry_are_refused() {
    let cases: Vec<(&str, Vec<Event>, &str)> = vec![
        (
            "interrupt at once",
            vec![
                ev(PANEL, user("Go.")),
                ev(
                    PANEL,
                    json!({"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}),
                ),
            ],
            "an interrupt before anything",
        ),
        (
            "image before the text",
            vec![ev(
                PANEL,
                json!({"type":"user","message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"text","text":"x"}]}}),
            )],
            "does not start with its text",
        ),
        (
            "image by URL",
            vec![ev(
                PANEL,
                json!({"type":"user","message":{"content":[{"type":"text","text":"x"},{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]}}),
            )],
            "neither text nor a base64 image",
        ),
    ];
    for (case, events, want) in cases {
        let err = read(&events, |i| i + 2).unwrap_err();
        assert!(err.to_string().contains(want), "{case}: {err}");
        assert!(err.to_string().starts_with("tap line "), "{case}: {err}");
    }
}

#[test]
fn permission_answers_read_as_the_bridge_reads_them() {
    let cases = [
        (
            json!({"subtype":"success","response":{"behavior":"allow","updatedInput":{}}}),
            Decision::Allow,
        ),
        (
            json!({"subtype":"success","response":{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits"}]}}),
            Decision::Allow,
        ),
        (
            json!({"subtype":"success","response":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[]}]}}),
            Decision::AllowAlways,
        ),
        (
            json!({"subtype":"success","response":{"behavior":"deny","message":"no"}}),
            Decision::Deny,
        ),
        (
            json!({"subtype":"success","response":{"behavior":"deny","message":"no","interrupt":true}}),
            Decision::Cancel,
        ),
        (json!({"subtype":"error","error":"x"}), Decision::Deny),
    ];
    for (response, want) in cases {
        assert_eq!(decision(&response), want, "{response}");
    }
}

#[test]
fn the_scenario_text_quotes_what_the_user_typed() {
    let head = ScenarioHead {
        name: "n",
        summary: "s",
        source: "from a tap",
        tools: &["uap_ping".to_string()],
        system_prompt: None,
        append_system_prompt: None,
        model: None,
        permission_mode: None,
        resume_session: None,
        mcp_server: &PanelMcpServer::default(),
        script_gate: false,
        results: 1,
    };
    let text = scenario_text(
        &head,
        &[PanelStep::Prompt {
            text: "say \"hi\"\\n\nnext\u{1}".into(),
            images: vec![],
        }],
    );
    let doc: toml::Table = text.parse().unwrap();
    assert_eq!(
        doc["step"][0]["text"].as_str(),
        Some("say \"hi\"\\n\nnext\u{1}")
    );
    assert_eq!(doc["imported"].as_bool(), Some(true));
    assert_eq!(doc["expect"][0]["count"].as_integer(), Some(1));
}
