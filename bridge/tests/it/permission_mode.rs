//! Claude permission modes against `tests/data/permission_mode/cases.json`:
//! plain-word mode ids, opaque ids matched by name or description, select
//! config options, and allow-all / read-only switches.

use std::path::PathBuf;

use acp_bridge::acp::client::{
    ModeChange, SessionState, mode_change_request, resolve_permission_mode,
};
use acp_bridge::acp::revision::Revision;
use serde_json::{Value, json};

fn change_of(want: &Value) -> Option<ModeChange> {
    if want.is_null() {
        return None;
    }
    if let Some(id) = want["set_mode"].as_str() {
        return Some(ModeChange::SetMode { mode_id: id.into() });
    }
    if let Some([id, value]) = want["set_config_option"].as_array().map(Vec::as_slice) {
        return Some(ModeChange::SetConfigOption {
            config_id: id.as_str().unwrap().into(),
            value: value.as_str().unwrap().into(),
        });
    }
    if let Some([id, value]) = want["set_config_switch"].as_array().map(Vec::as_slice) {
        return Some(ModeChange::SetConfigSwitch {
            config_id: id.as_str().unwrap().into(),
            value: value.as_bool().unwrap(),
        });
    }
    panic!("unknown expectation {want}");
}

fn claude_modes_map_onto_whatever_the_agent_offers() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/permission_mode/cases.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut failures = Vec::new();
    for case in data["cases"].as_array().unwrap() {
        let (mode, agent, want) = (
            case[0].as_str().unwrap(),
            case[1].as_str().unwrap(),
            &case[2],
        );
        let session = &data["agents"][agent];
        assert!(session.is_object(), "case names unknown agent {agent}");
        let got = resolve_permission_mode(mode, &SessionState::read(session));
        if got != change_of(want) {
            failures.push(format!("  {mode} on {agent}: want {want}, got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn a_switch_is_set_with_a_boolean_value() {
    let change = ModeChange::SetConfigSwitch {
        config_id: "skip_prompts".into(),
        value: true,
    };
    let request = mode_change_request("s1", &change);
    for revision in [Revision::V1, Revision::V2] {
        assert_eq!(request.method(revision), "session/set_config_option");
        assert_eq!(
            serde_json::to_value(request.params(revision)).unwrap(),
            json!({"sessionId": "s1", "configId": "skip_prompts", "type": "boolean", "value": true})
        );
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(permission_mode: claude_modes_map_onto_whatever_the_agent_offers, a_switch_is_set_with_a_boolean_value)
}
