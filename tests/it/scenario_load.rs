//! Scenario loading: the committed scenarios load, and bad files are
//! rejected with a message naming the file, the line and the field.

use std::path::{Path, PathBuf};

use acp_harness::corpus::scenario::{
    self, CountRule, Decision, ExpectKind, Point, ScenarioError, Step,
};

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn every_committed_scenario_loads_and_is_named_after_its_file() {
    let all = scenario::load_all(scenarios_dir()).expect("committed scenarios load");
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    for wanted in [
        "text-only",
        "thinking-text",
        "unity-call-allowed",
        "screenshot",
        "permission-denied",
        "interrupt-slow-tool",
        "steering",
        "model-error",
        "resume-session",
    ] {
        assert!(
            names.contains(&wanted),
            "missing scenario {wanted}; have {names:?}"
        );
    }
    for s in &all {
        assert!(!s.expect.is_empty(), "{} has no expectations", s.name);
        assert_eq!(s.sha256.len(), 64);
        // an imported scenario (a tapped session) has no model replies
        assert!(
            s.prompts()
                .all(|p| (s.imported || !p.model.is_empty()) && !p.live.is_empty())
        );
    }
}

fn unity_call_allowed_parses_into_the_documented_types() {
    let s = scenario::find(scenarios_dir(), "unity-call-allowed").unwrap();
    assert_eq!(s.tools, vec!["uap_ping".to_owned()]);
    let Step::Prompt(p) = &s.steps[0] else {
        panic!("step 0 is not a prompt: {:?}", s.steps[0])
    };
    assert_eq!(p.text, "Ping the Unity editor.");
    assert_eq!(p.model.len(), 2);
    assert_eq!(p.model[0].tool_calls[0].tool, "uap_ping");
    assert_eq!(p.model[0].tool_calls[0].id, "call_ping_1");
    assert_eq!(p.model[0].tool_calls[0].arguments, serde_json::json!({}));
    assert_eq!(
        s.steps[1],
        Step::Permission {
            decision: Decision::Allow,
            option_id: None,
            updated_input: None
        }
    );
    let e = &s.expect[0];
    assert_eq!(e.kind, ExpectKind::ToolUse);
    assert_eq!(e.name.as_deref(), Some("mcp__unity-ops__uap_ping"));
    assert_eq!(e.count, CountRule::Exactly(1));
    assert!(e.line > 1);
}

fn steer_and_interrupt_points_parse() {
    let s = scenario::find(scenarios_dir(), "steering").unwrap();
    assert!(matches!(
        s.steps[2],
        Step::Steer {
            at: Point::FirstToolCall,
            ..
        }
    ));
    let s = scenario::find(scenarios_dir(), "interrupt-slow-tool").unwrap();
    assert!(matches!(
        s.steps[2],
        Step::Interrupt {
            at: Point::FirstToolCall
        }
    ));
}

fn find_names_the_available_scenarios_when_the_name_is_unknown() {
    let err = scenario::find(scenarios_dir(), "no-such-scenario").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ScenarioError::NotFound { .. }));
    assert!(
        msg.contains("no-such-scenario") && msg.contains("text-only"),
        "{msg}"
    );
}

const GOOD_HEAD: &str = "name = \"t\"\nsummary = \"s\"\ntools = [\"uap_ping\"]\n";

/// (case, file text, expected line, expected field, a fragment of the message)
const BAD: &[(&str, &str, usize, &str, &str)] = &[
    (
        "unknown top-level key",
        "name = \"t\"\nsummary = \"s\"\nbogus = 1\n[[step]]\npanel = \"resume\"\n",
        3,
        "bogus",
        "unknown field",
    ),
    (
        "name differs from file stem",
        "name = \"other\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\n",
        1,
        "name",
        "must equal the file name",
    ),
    (
        "unknown step kind",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"dance\"\n",
        4,
        "step[0].panel",
        "unknown step kind",
    ),
    (
        "unknown key in a step",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\ncolour = \"red\"\n",
        5,
        "step[0].colour",
        "unknown field",
    ),
    (
        "key of another step kind",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\ndecision = \"allow\"\n",
        5,
        "step[0].decision",
        "does not belong",
    ),
    (
        "prompt without model replies (in a scenario that is not imported)",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n",
        3,
        "step[0].model",
        "only an `imported = true` scenario has none",
    ),
    (
        "tool not offered",
        "name = \"t\"\nsummary = \"s\"\ntools = []\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntool_calls = [{ tool = \"uap_ping\", id = \"c1\" }]\n",
        8,
        "step[0].model[0].tool_calls[0].tool",
        "not offered",
    ),
    (
        "duplicate call id",
        "name = \"t\"\nsummary = \"s\"\ntools = [\"uap_ping\"]\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntool_calls = [{ tool = \"uap_ping\", id = \"c1\" }]\n[[step.model]]\ntool_calls = [{ tool = \"uap_ping\", id = \"c1\" }]\n",
        10,
        "step[0].model[1].tool_calls[0].id",
        "used twice",
    ),
    (
        "unknown key in a model reply",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntxt = \"x\"\n",
        7,
        "step[0].model[0].txt",
        "unknown field",
    ),
    (
        "bad interrupt point",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntext = \"x\"\n[[step]]\npanel = \"interrupt\"\nat = \"chunks:0\"\n",
        10,
        "step[1].at",
        "unknown point",
    ),
    (
        "permission before any prompt",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"permission\"\ndecision = \"allow\"\n",
        4,
        "step[0].panel",
        "running turn",
    ),
    (
        "unknown decision",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntext = \"x\"\n[[step]]\npanel = \"permission\"\ndecision = \"maybe\"\n",
        10,
        "step[1].decision",
        "unknown decision",
    ),
    (
        "error status not an error",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\nerror = { status = 200, message = \"m\" }\n",
        7,
        "step[0].model[0].error.status",
        "not an HTTP error",
    ),
    (
        "prompt texts overlap",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi there\"\n[[step.model]]\ntext = \"x\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntext = \"y\"\n",
        10,
        "step[1].text",
        "overlaps",
    ),
    (
        "unknown expectation kind",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\n[[expect]]\nkind = \"tool_usage\"\nwhy = \"w\"\n",
        6,
        "expect[0].kind",
        "unknown variant",
    ),
    (
        "unknown expectation key",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\n[[expect]]\nkind = \"result\"\nwhy = \"w\"\ncontains = \"x\"\n",
        8,
        "expect[0].contains",
        "unknown field",
    ),
    (
        "filter on the wrong kind",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\n[[expect]]\nkind = \"result\"\nname = \"x\"\nwhy = \"w\"\n",
        7,
        "expect[0].name",
        "applies to kind",
    ),
    (
        "count and min together",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\n[[expect]]\nkind = \"result\"\ncount = 1\nmin = 1\nwhy = \"w\"\n",
        7,
        "expect[0].count",
        "not both",
    ),
    (
        "wrong value type",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"resume\"\n[[expect]]\nkind = \"result\"\ncount = \"one\"\nwhy = \"w\"\n",
        7,
        "expect[0].count",
        "invalid type",
    ),
    (
        "unknown image fixture",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\nimages = [{ fixture = \"nope\" }]\n[[step.model]]\ntext = \"x\"\n",
        6,
        "step[0].images[0].fixture",
        "unknown fixture",
    ),
    (
        "tool unknown to the stub server",
        "name = \"t\"\nsummary = \"s\"\ntools = [\"uap_ping\", \"uap_screenshot\"]\n[[step]]\npanel = \"resume\"\n",
        3,
        "tools[1]",
        "not a unity-ops tool",
    ),
    (
        "argument the tool does not take",
        "name = \"t\"\nsummary = \"s\"\ntools = [\"uap_slow\"]\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntool_calls = [{ tool = \"uap_slow\", arguments = { millis = 5 }, id = \"c1\" }]\n",
        8,
        "step[0].model[0].tool_calls[0].arguments",
        "takes no argument `millis`",
    ),
    (
        "pace on an error reply",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\nerror = { status = 500, message = \"m\" }\npace_ms = 5\n",
        8,
        "step[0].model[0].pace_ms",
        "not streamed",
    ),
    (
        "call with tool and agent_tool",
        "name = \"t\"\nsummary = \"s\"\ntools = [\"uap_ping\"]\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntool_calls = [{ tool = \"uap_ping\", agent_tool = \"shell\", id = \"c1\" }]\n",
        8,
        "step[0].model[0].tool_calls[0].tool",
        "not both",
    ),
    (
        "call with neither tool nor agent_tool",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntool_calls = [{ id = \"c1\" }]\n",
        7,
        "step[0].model[0].tool_calls[0]",
        "needs `tool`",
    ),
    (
        "agent_tool role not a role name",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntool_calls = [{ agent_tool = \"Run Shell\", id = \"c1\" }]\n",
        7,
        "step[0].model[0].tool_calls[0].agent_tool",
        "not a role name",
    ),
    (
        "pace out of range",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntext = \"x\"\npace_ms = 60000\n",
        8,
        "step[0].model[0].pace_ms",
        "must be 1..=",
    ),
    (
        "workspace fixture outside the workspace",
        "name = \"t\"\nsummary = \"s\"\n[[workspace]]\ndir = \"../x\"\n[[step]]\npanel = \"resume\"\n",
        3,
        "workspace[0]",
        "not a relative path inside the workspace",
    ),
    (
        "workspace fixture that is neither dir nor file",
        "name = \"t\"\nsummary = \"s\"\n[[workspace]]\ncontent = \"x\"\n[[step]]\npanel = \"resume\"\n",
        3,
        "workspace[0]",
        "give `dir",
    ),
    (
        "a launch setting outside an imported scenario",
        "name = \"t\"\nsummary = \"s\"\n[launch]\nmodel = \"m\"\n[[step]]\npanel = \"resume\"\n",
        3,
        "launch",
        "belongs to an imported scenario",
    ),
    (
        "append_system_prompt outside an imported scenario",
        "name = \"t\"\nsummary = \"s\"\nappend_system_prompt = \"x\"\n[[step]]\npanel = \"resume\"\n",
        3,
        "append_system_prompt",
        "belongs to an imported scenario",
    ),
    (
        "set_model outside an imported scenario",
        "name = \"t\"\nsummary = \"s\"\n[[step]]\npanel = \"set_model\"\nmodel_id = \"m\"\n",
        4,
        "step[0].panel",
        "belongs to an imported scenario",
    ),
    (
        "set_model without model_id",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[[step]]\npanel = \"set_model\"\n",
        4,
        "step[0].model_id",
        "needs `model_id`",
    ),
    (
        "updated_input outside an imported scenario",
        "name = \"t\"\nsummary = \"s\"\ntools = [\"uap_ping\"]\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step.model]]\ntext = \"x\"\n[[step]]\npanel = \"permission\"\ndecision = \"allow\"\nupdated_input = '{}'\n",
        12,
        "step[1].updated_input",
        "belongs to an imported scenario",
    ),
    (
        "updated_input that is no JSON object",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step]]\npanel = \"permission\"\ndecision = \"allow\"\nupdated_input = '[1]'\n",
        10,
        "step[1].updated_input",
        "must be a JSON object",
    ),
    (
        "updated_input on a denial",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n[[step]]\npanel = \"permission\"\ndecision = \"deny\"\nupdated_input = '{}'\n",
        10,
        "step[1].updated_input",
        "only an allowing answer",
    ),
    (
        "inline image data that is not base64",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\nimages = [{ media_type = \"image/png\", data = \"%%\" }]\n",
        7,
        "step[0].images[0].data",
        "not standard base64",
    ),
    (
        "inline image data without its media type",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\nimages = [{ data = \"iVBO\" }]\n",
        7,
        "step[0].images[0].media_type",
        "needs its `media_type`",
    ),
    (
        "an MCP server that is neither a name nor false",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[launch]\nmcp_server = true\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n",
        5,
        "launch.mcp_server",
        "or false for none",
    ),
    (
        "a token for no MCP server",
        "name = \"t\"\nsummary = \"s\"\nimported = true\n[launch]\nmcp_server = false\nmcp_authorization = true\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n",
        6,
        "launch.mcp_authorization",
        "needs a server",
    ),
    (
        "toml syntax error",
        "name = \"t\"\nsummary = \n",
        2,
        "(syntax)",
        "",
    ),
];

fn bad_scenarios_are_rejected_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (case, text, line, field, fragment) in BAD {
        let path = dir.path().join("t.toml");
        std::fs::write(&path, text).unwrap();
        match scenario::load(&path) {
            Ok(_) => failures.push(format!("{case}: loaded, expected an error")),
            Err(err) => {
                let msg = err.to_string();
                let ok = match &err {
                    ScenarioError::Invalid {
                        file,
                        line: l,
                        field: f,
                        message,
                        ..
                    } => file == &path && l == line && f == field && message.contains(fragment),
                    _ => false,
                };
                if !ok || !msg.contains("t.toml") {
                    failures.push(format!(
                        "{case}: got `{msg}`; want line {line}, field {field}, `{fragment}`"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn a_minimal_good_scenario_loads_with_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    let text = format!(
        "{GOOD_HEAD}[[step]]\npanel = \"prompt\"\ntext = \"hi\"\nimages = [{{ fixture = \"red-dot-png\" }}]\n[[step.model]]\ntext = \"x\"\n[[expect]]\nkind = \"result\"\nwhy = \"w\"\n"
    );
    std::fs::write(&path, &text).unwrap();
    let s = scenario::load(&path).unwrap();
    let Step::Prompt(p) = &s.steps[0] else {
        panic!()
    };
    assert_eq!(p.live, "hi", "live defaults to text");
    assert_eq!(p.images[0].media_type, "image/png");
    assert!(p.images[0].data_base64.starts_with("iVBORw0KGgo"), "a PNG");
    assert_eq!(
        s.expect[0].count,
        CountRule::Range {
            min: Some(1),
            max: None
        }
    );
    assert_eq!(s.expect[0].line, 10);
}

fn an_imported_scenario_has_prompts_without_model_replies_that_may_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    let text = "name = \"t\"\nsummary = \"s\"\nimported = true\nsystem_prompt = \"Say continue when done.\"\n\
        [[step]]\npanel = \"prompt\"\ntext = \"continue\"\n\
        [[step]]\npanel = \"interrupt\"\nat = \"chunks:2\"\n\
        [[step]]\npanel = \"prompt\"\ntext = \"continue\"\n";
    std::fs::write(&path, text).unwrap();
    let s = scenario::load(&path).unwrap();
    assert!(s.imported);
    assert!(
        s.prompts()
            .all(|p| p.model.is_empty() && p.text == "continue")
    );
    assert!(
        !scenario::load(scenarios_dir().join("text-only.toml"))
            .unwrap()
            .imported
    );
}

/// What a tapped panel did that only a replayed panel can do again: its
/// launch flags, the appended instructions, an edited input, a model change.
fn an_imported_scenario_carries_the_tapped_launch_an_edited_input_and_a_model_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    let text = "name = \"t\"\nsummary = \"s\"\nimported = true\nsystem_prompt = \"A\"\nappend_system_prompt = \"B\"\n\
        [launch]\nmodel = \"m1\"\npermission_mode = \"acceptEdits\"\nresume_session = \"sess-9\"\nmcp_server = \"editor\"\nmcp_authorization = false\n\
        [[step]]\npanel = \"prompt\"\ntext = \"look\"\nimages = [{ media_type = \"image/png\", data = \"iVBORw0KGgo=\" }]\n\
        [[step]]\npanel = \"permission\"\ndecision = \"allow\"\nupdated_input = '{\"command\":\"ls -a\",\"x\":null}'\n\
        [[step]]\npanel = \"set_model\"\nmodel_id = \"m2\"\n";
    std::fs::write(&path, text).unwrap();
    let s = scenario::load(&path).unwrap();
    assert_eq!(s.system_prompt.as_deref(), Some("A"));
    assert_eq!(s.append_system_prompt.as_deref(), Some("B"));
    assert_eq!(
        s.launch,
        scenario::LaunchSettings {
            model: Some("m1".into()),
            permission_mode: Some("acceptEdits".into()),
            resume_session: Some("sess-9".into()),
            mcp_server: scenario::PanelMcpServer::Given {
                name: "editor".into(),
                authorization: false
            },
        }
    );
    let Step::Prompt(p) = &s.steps[0] else {
        panic!("{:?}", s.steps[0])
    };
    assert_eq!(p.images[0].media_type, "image/png");
    assert_eq!(p.images[0].data_base64, "iVBORw0KGgo=");
    assert_eq!(
        s.steps[1],
        Step::Permission {
            decision: Decision::Allow,
            option_id: None,
            updated_input: Some(serde_json::json!({"command": "ls -a", "x": null}))
        }
    );
    assert_eq!(s.steps[2], Step::SetModel { model: "m2".into() });
}

/// The README's examples, joined in order, form one valid scenario that
/// uses every step kind: the documentation cannot drift from the loader.
fn readme_examples_parse_and_cover_every_step_kind() {
    let readme = std::fs::read_to_string(scenarios_dir().join("README.md")).unwrap();
    let mut toml = String::new();
    let mut in_block = false;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            in_block = line.trim() == "```toml";
            continue;
        }
        if in_block {
            toml.push_str(line);
            toml.push('\n');
        }
    }
    let s = scenario::parse(Path::new("unity-call-allowed.toml"), toml.as_bytes())
        .unwrap_or_else(|e| panic!("README examples do not parse: {e}\n{toml}"));
    let kinds: Vec<&str> = s.steps.iter().map(Step::kind).collect();
    for kind in [
        "prompt",
        "permission",
        "interrupt",
        "steer",
        "set_mode",
        "resume",
    ] {
        assert!(
            kinds.contains(&kind),
            "README has no `{kind}` example; has {kinds:?}"
        );
    }
    assert!(!s.expect.is_empty(), "README has an [[expect]] example");
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(scenario_load: every_committed_scenario_loads_and_is_named_after_its_file, unity_call_allowed_parses_into_the_documented_types, steer_and_interrupt_points_parse, find_names_the_available_scenarios_when_the_name_is_unknown, bad_scenarios_are_rejected_naming_file_line_and_field, a_minimal_good_scenario_loads_with_defaults, an_imported_scenario_has_prompts_without_model_replies_that_may_repeat, an_imported_scenario_carries_the_tapped_launch_an_edited_input_and_a_model_change, readme_examples_parse_and_cover_every_step_kind)
}
