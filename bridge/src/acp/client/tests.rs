//! The frame builders' tests.

use super::*;
use crate::acp::revision::Revision;
use serde_json::{Value, json};

/// What a typed frame writes, as JSON.
fn written(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

/// A line as JSON.
fn line(text: String) -> Value {
    serde_json::from_str(&text).unwrap()
}

/// `session/new` params, as v1 spells them.
fn new_session_params(
    cwd: &str,
    mcp: McpOffer<'_>,
    caps: &AgentCapabilities,
    system_prompt: Option<SystemPrompt>,
) -> Value {
    let request = Request::NewSession(session_setup(cwd, mcp, caps, system_prompt));
    written(request.params(Revision::V1))
}

/// `session/load` params, as v1 spells them.
fn load_session_params(
    session_id: &str,
    cwd: &str,
    mcp: McpOffer<'_>,
    caps: &AgentCapabilities,
    system_prompt: Option<SystemPrompt>,
) -> Value {
    let request = Request::LoadSession {
        session_id: session_id.into(),
        setup: session_setup(cwd, mcp, caps, system_prompt),
    };
    written(request.params(Revision::V1))
}

fn opts(list: &[(&str, &str)]) -> Vec<PermissionOption> {
    let options: Vec<Value> = list
        .iter()
        .map(|(id, kind)| json!({"optionId": id, "name": id, "kind": kind}))
        .collect();
    PermissionOption::read_all(&Value::Array(options))
}

fn init(http: bool, image: bool, load: bool) -> AgentCapabilities {
    AgentCapabilities::read(&json!({"protocolVersion": 1, "agentCapabilities": {
        "loadSession": load,
        "mcpCapabilities": {"http": http},
        "promptCapabilities": {"image": image}}}))
}

fn endpoint() -> McpEndpoint {
    McpEndpoint {
        name: "unity-ops".into(),
        url: "http://127.0.0.1:9/mcp".into(),
        authorization: Some("Bearer t".into()),
    }
}

#[test]
fn initialize_declares_no_fs_and_no_terminal() {
    assert_eq!(
        written(
            Request::Initialize {
                offering: Revision::V1
            }
            .params(Revision::V1)
        ),
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}})
    );
}

#[test]
fn new_session_registers_unity_ops_only_with_http_mcp_or_when_told_unadvertised() {
    let ep = endpoint();
    let offer = |unadvertised| McpOffer {
        endpoint: Some(&ep),
        unadvertised,
    };
    let registered = json!({"cwd": "/w", "mcpServers": [{"type": "http", "name": "unity-ops", "url": "http://127.0.0.1:9/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer t"}]}]});
    assert_eq!(
        new_session_params("/w", offer(false), &init(true, false, false), None),
        registered
    );
    assert_eq!(
        new_session_params("/w", offer(false), &init(false, false, false), None),
        json!({"cwd": "/w", "mcpServers": []})
    );
    assert_eq!(
        new_session_params("/w", offer(true), &init(false, false, false), None),
        registered
    );
    assert_eq!(
        new_session_params("/w", McpOffer::default(), &init(true, false, false), None),
        json!({"cwd": "/w", "mcpServers": []})
    );
    assert_eq!(
        load_session_params("s1", "/w", offer(false), &init(true, false, true), None)["sessionId"],
        json!("s1")
    );
}

#[test]
fn system_prompt_goes_only_where_advertised_and_overrides_only_where_offered() {
    let caps = |sp: Value| {
        AgentCapabilities::read(
            &json!({"agentCapabilities": {"sessionCapabilities": {"systemPrompt": sp}}}),
        )
    };
    let append_only = caps(json!({}));
    let with_override = caps(json!({"mode": {"override": {}}}));
    let text = |t: &str| json!({"type": "text", "text": t});
    // (name, initialize result, system prompt, appended text, systemPrompt sent)
    type Case<'a> = (
        &'a str,
        &'a AgentCapabilities,
        Option<&'a str>,
        Option<&'a str>,
        Option<Value>,
    );
    let cases: &[Case] = &[
        (
            "not advertised",
            &AgentCapabilities::read(&json!({"agentCapabilities": {}})),
            Some("S"),
            Some("A"),
            None,
        ),
        ("advertised null", &caps(Value::Null), Some("S"), None, None),
        ("nothing to send", &with_override, Some(""), None, None),
        (
            "override",
            &with_override,
            Some("S"),
            None,
            Some(json!({"mode": "override", "content": [text("S")]})),
        ),
        (
            "override with appended text",
            &with_override,
            Some("S"),
            Some("A"),
            Some(json!({"mode": "override", "content": [text("S"), text("A")]})),
        ),
        (
            "append only: the replacing prompt is appended",
            &append_only,
            Some("S"),
            Some("A"),
            Some(json!({"mode": "append", "content": [text("S"), text("A")]})),
        ),
        (
            "appended text alone is never override",
            &with_override,
            None,
            Some("A"),
            Some(json!({"mode": "append", "content": [text("A")]})),
        ),
        (
            "override mode null",
            &caps(json!({"mode": {"override": null}})),
            Some("S"),
            None,
            Some(json!({"mode": "append", "content": [text("S")]})),
        ),
    ];
    for (name, init, system, append, want) in cases {
        assert_eq!(
            &session_system_prompt(*system, *append, init).map(written),
            want,
            "{name}"
        );
    }
    let sp = session_system_prompt(Some("S"), None, &with_override);
    assert_eq!(
        new_session_params("/w", McpOffer::default(), &with_override, sp.clone())["systemPrompt"],
        json!({"mode": "override", "content": [text("S")]})
    );
    assert_eq!(
        load_session_params("s1", "/w", McpOffer::default(), &with_override, sp)["systemPrompt"]["mode"],
        "override"
    );
}

#[test]
fn prompt_prepends_instructions_and_drops_images_without_capability() {
    let img = [PromptImage {
        media_type: "image/png".into(),
        data_base64: "AAAA".into(),
    }];
    assert_eq!(
        written(prompt_blocks(
            "hi",
            &img,
            Some("be brief"),
            &init(false, true, false)
        )),
        json!([
            {"type": "text", "text": "be brief"},
            {"type": "text", "text": "hi"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"}
        ])
    );
    assert_eq!(
        written(prompt_blocks("hi", &img, None, &init(false, false, false))),
        json!([{"type": "text", "text": "hi"}])
    );
    assert_eq!(
        written(prompt_blocks("", &img, None, &init(false, true, false))),
        json!([{"type": "image", "mimeType": "image/png", "data": "AAAA"}])
    );
}

#[test]
fn permission_choice_by_intent_for_real_option_lists() {
    use PermissionIntent::*;
    // (agent, options, allow once, allow always, deny)
    type Case<'a> = (
        &'a str,
        Vec<PermissionOption>,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
    );
    let cases: Vec<Case> = vec![
        (
            "codex 0.x",
            opts(&[
                ("approved", "allow_once"),
                ("approved-for-session", "allow_always"),
                ("approved-always", "allow_always"),
                ("cancel", "reject_once"),
            ]),
            Some("approved"),
            Some("approved-for-session"),
            Some("cancel"),
        ),
        (
            "codex 1.x",
            opts(&[
                ("allow_once", "allow_once"),
                ("allow_session", "allow_always"),
                ("allow_always", "allow_always"),
                ("decline", "reject_once"),
            ]),
            Some("allow_once"),
            Some("allow_session"),
            Some("decline"),
        ),
        (
            "gemini",
            opts(&[
                ("proceed_always_server", "allow_always"),
                ("proceed_always_tool", "allow_always"),
                ("proceed_once", "allow_once"),
                ("cancel", "reject_once"),
            ]),
            Some("proceed_once"),
            Some("proceed_always_tool"),
            Some("cancel"),
        ),
        (
            "grok",
            opts(&[
                ("enable-always-approve", "allow_once"),
                ("always-allow", "allow_always"),
                ("allow-once", "allow_once"),
                ("reject-once", "reject_once"),
            ]),
            Some("allow-once"),
            Some("always-allow"),
            Some("reject-once"),
        ),
        (
            "only a widening allow_once",
            opts(&[
                ("enable-always-approve", "allow_once"),
                ("reject-once", "reject_once"),
            ]),
            None,
            None,
            Some("reject-once"),
        ),
        (
            "only allow_always",
            opts(&[("always", "allow_always")]),
            None,
            Some("always"),
            None,
        ),
        (
            "gemini without a per-tool option: server-wide is wider than the panel's rule",
            opts(&[
                ("proceed_always_server", "allow_always"),
                ("proceed_once", "allow_once"),
                ("cancel", "reject_once"),
            ]),
            Some("proceed_once"),
            Some("proceed_once"),
            Some("cancel"),
        ),
    ];
    for (agent, options, once, always, deny) in cases {
        assert_eq!(
            choose_permission_option(&options, AllowOnce).as_deref(),
            once,
            "{agent} allow once"
        );
        assert_eq!(
            choose_permission_option(&options, AllowAlways).as_deref(),
            always,
            "{agent} allow always"
        );
        assert_eq!(
            choose_permission_option(&options, Deny).as_deref(),
            deny,
            "{agent} deny"
        );
    }
}

#[test]
fn permission_options_without_kind_are_classified_by_id() {
    let options = PermissionOption::read_all(&json!([
        {"optionId": "allow-once"},
        {"optionId": "reject-once"},
        // a field that is no string is no field
        {"optionId": 7, "kind": ["allow_once"]},
    ]));
    assert_eq!(
        choose_permission_option(&options, PermissionIntent::AllowOnce).as_deref(),
        Some("allow-once")
    );
    assert_eq!(
        choose_permission_option(&options, PermissionIntent::Deny).as_deref(),
        Some("reject-once")
    );
}

#[test]
fn permission_mode_resolves_through_synonyms() {
    let codex = json!({"modes": {"currentModeId": "read-only", "availableModes": [{"id": "read-only"}, {"id": "auto"}, {"id": "full-access"}]}});
    let gemini = json!({"modes": {"availableModes": [{"id": "default"}, {"id": "autoEdit"}, {"id": "yolo"}]}});
    let config = json!({"modes": {"availableModes": [{"id": "ask"}]}, "configOptions": [
        {"id": "approval", "name": "Mode", "category": "mode", "type": "select", "currentValue": "ask",
         "options": [{"value": "ask", "name": "Ask"}, {"value": "yolo", "name": "YOLO"}]}]});
    // codex-acp 2.6.0: the mode config option, bypass as `agent-full-access`.
    let codex2 = json!({"configOptions": [{"id": "mode", "category": "mode", "type": "select", "currentValue": "read-only",
         "options": [{"value": "read-only"}, {"value": "workspace-write"}, {"value": "agent"}, {"value": "agent-full-access"}]}]});
    let cases = [
        (
            "bypassPermissions",
            &codex2,
            Some(ModeChange::SetConfigOption {
                config_id: "mode".into(),
                value: "agent-full-access".into(),
            }),
        ),
        (
            "acceptEdits",
            &codex,
            Some(ModeChange::SetMode {
                mode_id: "auto".into(),
            }),
        ),
        (
            "bypassPermissions",
            &codex,
            Some(ModeChange::SetMode {
                mode_id: "full-access".into(),
            }),
        ),
        (
            "default",
            &codex,
            Some(ModeChange::SetMode {
                mode_id: "read-only".into(),
            }),
        ),
        (
            "acceptEdits",
            &gemini,
            Some(ModeChange::SetMode {
                mode_id: "autoEdit".into(),
            }),
        ),
        (
            "bypassPermissions",
            &gemini,
            Some(ModeChange::SetMode {
                mode_id: "yolo".into(),
            }),
        ),
        ("plan", &gemini, None),
        (
            "bypassPermissions",
            &config,
            Some(ModeChange::SetConfigOption {
                config_id: "approval".into(),
                value: "yolo".into(),
            }),
        ),
        (
            "default",
            &config,
            Some(ModeChange::SetConfigOption {
                config_id: "approval".into(),
                value: "ask".into(),
            }),
        ),
        ("acceptEdits", &config, None),
        ("default", &json!({}), None),
    ];
    for (mode, session, want) in cases {
        assert_eq!(
            resolve_permission_mode(mode, &SessionState::read(session)),
            want,
            "{mode} in {session}"
        );
    }
}

#[test]
fn models_come_from_models_or_a_model_config_option() {
    let classic = json!({"models": {"currentModelId": "m1", "availableModels": [{"modelId": "m1", "name": "Model One"}, {"modelId": "m2", "name": "Two"}]}});
    let config = json!({"configOptions": [{"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "a",
        "options": [{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]}]}]});
    assert_eq!(available_models(&SessionState::read(&classic)).len(), 2);
    assert_eq!(
        current_model(&SessionState::read(&classic)).as_deref(),
        Some("m1")
    );
    assert_eq!(
        resolve_model("two", &SessionState::read(&classic)),
        Some(ModelChange::SetModel {
            model_id: "m2".into()
        })
    );
    assert_eq!(
        available_models(&SessionState::read(&config))
            .iter()
            .map(|m| m.id.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(
        current_model(&SessionState::read(&config)).as_deref(),
        Some("a")
    );
    assert_eq!(
        resolve_model("b", &SessionState::read(&config)),
        Some(ModelChange::SetConfigOption {
            config_id: "model".into(),
            value: "b".into()
        })
    );
    assert_eq!(resolve_model("x", &SessionState::read(&config)), None);
    assert!(available_models(&SessionState::read(&json!({}))).is_empty());
}

#[test]
fn auth_errors_and_methods() {
    let i = AgentCapabilities::read(&json!({"authMethods": [{"id": "oauth"}, {"id": "key"}]}));
    assert_eq!(auth_method(None, &i).as_deref(), Some("oauth"));
    assert_eq!(auth_method(Some("key"), &i).as_deref(), Some("key"));
    assert_eq!(auth_method(None, &AgentCapabilities::default()), None);
}

#[test]
fn first_prompt_instructions_join_the_gate_steering_only_when_on() {
    assert_eq!(
        first_prompt_instructions(Some("ci"), false).as_deref(),
        Some("ci")
    );
    assert_eq!(first_prompt_instructions(None, false), None);
    assert_eq!(first_prompt_instructions(Some(""), false), None);
    let on = first_prompt_instructions(Some("ci"), true).unwrap();
    assert!(
        on.starts_with("ci\n\n") && on.contains(crate::script_gate::STAGING_FOLDER),
        "{on}"
    );
    assert_eq!(
        first_prompt_instructions(None, true),
        Some(crate::script_gate::steering_text(true))
    );
}

#[test]
fn frames_echo_ids_verbatim() {
    assert_eq!(
        line(method_not_found(&json!("f").into(), "fs/read_text_file"))["error"]["code"],
        json!(-32601)
    );
    assert_eq!(
        line(result_line(
            &json!("abc").into(),
            &PermissionAnswer::cancelled()
        ))["id"],
        json!("abc")
    );
    assert_eq!(
        line(error_line(&json!(7).into(), -32601, "no"))["error"]["code"],
        json!(-32601)
    );
    assert_eq!(
        line(
            Notification::Cancel {
                session_id: "s".into()
            }
            .line()
        ),
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
    );
    assert_eq!(
        written(PermissionAnswer::selected("o")),
        json!({"outcome": {"outcome": "selected", "optionId": "o"}})
    );
    assert_eq!(
        written(PermissionAnswer::cancelled()),
        json!({"outcome": {"outcome": "cancelled"}})
    );
}

mod compat {
    use super::*;

    #[test]
    fn deny_by_id_alone_finds_decline_but_not_cancel() {
        let off = crate::launch::Compat {
            reject_option_by_kind: false,
            ..crate::launch::Compat::default()
        };
        let v1 = PermissionOption::read_all(&json!([
            {"optionId": "allow_once", "kind": "allow_once"},
            {"optionId": "decline", "kind": "reject_once"},
        ]));
        let v2 = PermissionOption::read_all(&json!([
            {"optionId": "allow_once", "kind": "allow_once"},
            {"optionId": "cancel", "kind": "reject_once"},
        ]));
        assert_eq!(
            choose_permission_option_with(&v1, PermissionIntent::Deny, &off).as_deref(),
            Some("decline")
        );
        assert_eq!(
            choose_permission_option_with(&v2, PermissionIntent::Deny, &off),
            None
        );
        assert_eq!(
            choose_permission_option(&v2, PermissionIntent::Deny).as_deref(),
            Some("cancel")
        );
    }
}
