//! The agent's own tools (shell, file write) as the scripted model calls
//! them.
//!
//! A scenario names a *role* (`agent_tool = "shell"`) with role arguments
//! (`{ command = "..." }`); each agent profile maps the role to the tool its
//! agent offers the model and that tool's argument shape, in
//! `[model.agent_tools.<role>]`:
//!
//! ```toml
//! [model.agent_tools.shell]
//! name = "run_shell_command"
//! arguments = { command = "{command}" }
//! ```
//!
//! In the `arguments` template a string that is exactly `{key}` becomes the
//! scenario argument `key` as it is (any JSON value); `{key}` inside a longer
//! string is replaced by its text. The run's own values (`{workspace}`,
//! `{home}`: [`AgentTools::with_run_values`]) are filled in first, for agents
//! whose file tools demand absolute paths (`file_path = "{workspace}/{path}"`).
//! So agent-specific names and shapes live in the profiles, never in code.
//!
//! Where an agent needs more than one model call for a role (a discovery
//! call before the real one: some agents refuse to write a file they have
//! not listed or read), the role is a short sequence:
//!
//! ```toml
//! [model.agent_tools.write_file]
//! steps = [
//!   { name = "list_directory", arguments = { path = "{workspace}" } },
//!   { name = "write_file", arguments = { file_path = "{workspace}/{path}", content = "{content}" } },
//! ]
//! ```
//!
//! Each step but the last becomes a reply of its own before the scenario's
//! reply, which makes the last step's call ([`AgentTools::expand`]); every
//! step's output comes back before the next, so the script's later replies
//! keep their places.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::naming::ToolRef;
use super::script::ModelScript;
use crate::corpus::scenario::{ModelReply, ScriptedToolCall};

/// One role's tool: its name toward the model and the argument template.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentTool {
    #[serde(default)]
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The role as a sequence of calls, the real one last (instead of
    /// `name` and `arguments`).
    #[serde(default)]
    pub steps: Vec<AgentToolStep>,
}

/// One call of a role scripted as a sequence.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentToolStep {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// The profile's role table (`[model.agent_tools]`); empty by default.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(transparent)]
pub struct AgentTools(pub BTreeMap<String, AgentTool>);

/// Why a role call could not be rendered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentToolError {
    #[error(
        "the profile maps no tool for the role `{role}` ([model.agent_tools.{role}]; it maps: {known})"
    )]
    UnknownRole { role: String, known: String },
    #[error("[model.agent_tools.{role}] uses `{{{key}}}`, which the scenario's call does not give")]
    MissingArgument { role: String, key: String },
    #[error(
        "[model.agent_tools.{role}] names no tool (give `name`, or `steps` with a `name` each)"
    )]
    NoTool { role: String },
}

impl AgentTools {
    /// The script with each call of a sequenced role preceded by one reply
    /// per step but the last (call ids `<id>_step<k>`), and the table with
    /// those steps as roles `<role>#<k>` and the role itself as its last step.
    pub fn expand(mut self, mut script: ModelScript) -> (ModelScript, AgentTools) {
        let mut sequences: BTreeMap<String, usize> = BTreeMap::new();
        let mut added = Vec::new();
        for (role, tool) in &mut self.0 {
            let Some(last) = tool.steps.last().cloned() else {
                continue;
            };
            for (k, step) in tool.steps[..tool.steps.len() - 1].iter().enumerate() {
                added.push((
                    format!("{role}#{}", k + 1),
                    AgentTool {
                        name: step.name.clone(),
                        arguments: step.arguments.clone(),
                        steps: Vec::new(),
                    },
                ));
            }
            sequences.insert(role.clone(), tool.steps.len() - 1);
            tool.name = last.name;
            tool.arguments = last.arguments;
            tool.steps.clear();
        }
        self.0.extend(added);
        if sequences.values().all(|n| *n == 0) {
            return (script, self);
        }
        for turn in &mut script.turns {
            let mut replies = Vec::with_capacity(turn.replies.len());
            for reply in std::mem::take(&mut turn.replies) {
                for call in &reply.tool_calls {
                    let Some(role) = call.agent_tool.as_deref() else {
                        continue;
                    };
                    for k in 1..=sequences.get(role).copied().unwrap_or(0) {
                        replies.push(ModelReply {
                            tool_calls: vec![ScriptedToolCall {
                                tool: String::new(),
                                agent_tool: Some(format!("{role}#{k}")),
                                arguments: call.arguments.clone(),
                                id: format!("{}_step{k}", call.id),
                            }],
                            ..ModelReply::default()
                        });
                    }
                }
                replies.push(reply);
            }
            turn.replies = replies;
        }
        (script, self)
    }

    /// The table with the run's values (`("workspace", "/tmp/.../workspace")`)
    /// written into every template string that names them as `{workspace}`
    /// / `{home}`; the scenario's arguments are filled in later by
    /// [`AgentTools::render`].
    pub fn with_run_values(mut self, values: &[(&str, &str)]) -> AgentTools {
        fn fill_run(v: &mut Value, values: &[(&str, &str)]) {
            match v {
                Value::String(s) => {
                    for (key, value) in values {
                        let placeholder = format!("{{{key}}}");
                        if s.contains(&placeholder) {
                            *s = s.replace(&placeholder, value);
                        }
                    }
                }
                Value::Array(items) => items.iter_mut().for_each(|i| fill_run(i, values)),
                Value::Object(map) => map.values_mut().for_each(|i| fill_run(i, values)),
                _ => {}
            }
        }
        for tool in self.0.values_mut() {
            fill_run(&mut tool.arguments, values);
            for step in &mut tool.steps {
                fill_run(&mut step.arguments, values);
            }
        }
        self
    }

    /// The tool reference and arguments for a call of `role` with the
    /// scenario's `args`.
    pub fn render(&self, role: &str, args: &Value) -> Result<(ToolRef, Value), AgentToolError> {
        let tool = self
            .0
            .get(role)
            .ok_or_else(|| AgentToolError::UnknownRole {
                role: role.to_owned(),
                known: if self.0.is_empty() {
                    "nothing".to_owned()
                } else {
                    self.0.keys().cloned().collect::<Vec<_>>().join(", ")
                },
            })?;
        if tool.name.is_empty() {
            return Err(AgentToolError::NoTool {
                role: role.to_owned(),
            });
        }
        let arguments = fill(&tool.arguments, args, role)?;
        Ok((
            ToolRef {
                name: tool.name.clone(),
                namespace: None,
            },
            arguments,
        ))
    }
}

fn fill(template: &Value, args: &Value, role: &str) -> Result<Value, AgentToolError> {
    Ok(match template {
        Value::String(s) => fill_string(s, args, role)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| fill(v, args, role))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), fill(v, args, role)?)))
                .collect::<Result<_, AgentToolError>>()?,
        ),
        other => other.clone(),
    })
}

fn fill_string(s: &str, args: &Value, role: &str) -> Result<Value, AgentToolError> {
    let lookup = |key: &str| {
        args.get(key)
            .cloned()
            .ok_or_else(|| AgentToolError::MissingArgument {
                role: role.to_owned(),
                key: key.to_owned(),
            })
    };
    // The whole string is one placeholder: keep the value's JSON type.
    if let Some(key) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}'))
        && is_key(key)
    {
        return lookup(key);
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if is_key(&after[..end]) => {
                let v = lookup(&after[..end])?;
                match v {
                    Value::String(t) => out.push_str(&t),
                    other => out.push_str(&other.to_string()),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

fn is_key(k: &str) -> bool {
    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(toml_text: &str) -> AgentTools {
        toml::from_str::<BTreeMap<String, AgentTool>>(toml_text)
            .map(AgentTools)
            .unwrap()
    }

    #[test]
    fn a_sequenced_role_puts_a_reply_per_discovery_step_before_the_real_call() {
        use crate::capture::model_server::script::ScriptTurn;
        let tools = table(
            "[write_file]\nsteps = [ { name = \"ls\", arguments = { dir = \"{workspace}\" } }, { name = \"write\", arguments = { file_path = \"{path}\" } } ]\n",
        );
        let call = ScriptedToolCall {
            tool: String::new(),
            agent_tool: Some("write_file".into()),
            arguments: json!({"path": "A.cs"}),
            id: "call_w".into(),
        };
        let script = ModelScript {
            turns: vec![ScriptTurn {
                prompt_text: "p".into(),
                cut_short: false,
                replies: vec![
                    ModelReply {
                        text: Some("writing".into()),
                        tool_calls: vec![call],
                        ..ModelReply::default()
                    },
                    ModelReply {
                        text: Some("done".into()),
                        ..ModelReply::default()
                    },
                ],
            }],
            direct_mcp_calls: false,
            mcp_call_arguments: serde_json::Map::new(),
        };
        let (script, tools) = tools.with_run_values(&[("workspace", "/w")]).expand(script);
        let replies = &script.turns[0].replies;
        assert_eq!(replies.len(), 3);
        let first = &replies[0].tool_calls[0];
        assert_eq!(first.id, "call_w_step1");
        let (tool, args) = tools
            .render(first.agent_tool.as_deref().unwrap(), &first.arguments)
            .unwrap();
        assert_eq!((tool.name.as_str(), args), ("ls", json!({"dir": "/w"})));
        let (tool, args) = tools
            .render("write_file", &json!({"path": "A.cs"}))
            .unwrap();
        assert_eq!(
            (tool.name.as_str(), args),
            ("write", json!({"file_path": "A.cs"}))
        );
        assert_eq!(replies[1].text.as_deref(), Some("writing"));
        assert_eq!(replies[2].text.as_deref(), Some("done"));
    }

    #[test]
    fn run_placeholders_are_filled_before_the_scenario_arguments() {
        let tools = table(
            "[write_file]\nname = \"write\"\narguments = { file_path = \"{workspace}/{path}\", cache = \"{home}/.cache\", content = \"{content}\" }\n",
        )
        .with_run_values(&[("workspace", "/w"), ("home", "/h")]);
        let (_, arguments) = tools
            .render("write_file", &json!({"path": "A/B.cs", "content": "x"}))
            .unwrap();
        assert_eq!(
            arguments,
            json!({"file_path": "/w/A/B.cs", "cache": "/h/.cache", "content": "x"})
        );
    }

    #[test]
    fn a_role_renders_as_the_profiles_tool_with_the_arguments_filled_in() {
        let tools = table(
            "[shell]\nname = \"shell\"\narguments = { command = [\"bash\", \"-lc\", \"{command}\"] }\n\
             [write_file]\nname = \"write\"\narguments = { file_path = \"{path}\", content = \"{content}\", note = \"to {path}\" }\n",
        );
        let cases = [
            (
                "shell",
                json!({"command": "echo hi > a.txt"}),
                "shell",
                json!({"command": ["bash", "-lc", "echo hi > a.txt"]}),
            ),
            (
                "write_file",
                json!({"path": "A/B.cs", "content": "class B {}"}),
                "write",
                json!({"file_path": "A/B.cs", "content": "class B {}", "note": "to A/B.cs"}),
            ),
        ];
        for (role, args, name, want) in cases {
            let (r, a) = tools.render(role, &args).unwrap();
            assert_eq!(
                (r.name.as_str(), r.namespace, a),
                (name, None, want),
                "{role}"
            );
        }
    }

    #[test]
    fn a_whole_string_placeholder_keeps_the_json_type_and_braces_that_are_no_placeholder_stay() {
        let tools =
            table("[x]\nname = \"x\"\narguments = { n = \"{n}\", s = \"{ not a key } {n}\" }\n");
        let (_, a) = tools.render("x", &json!({"n": 5})).unwrap();
        assert_eq!(a, json!({"n": 5, "s": "{ not a key } 5"}));
    }

    #[test]
    fn an_unknown_role_or_a_missing_argument_is_named() {
        let tools = table("[shell]\nname = \"s\"\narguments = { command = \"{command}\" }\n");
        let e = tools.render("edit", &json!({})).unwrap_err().to_string();
        assert!(e.contains("`edit`") && e.contains("shell"), "{e}");
        let e = tools.render("shell", &json!({})).unwrap_err().to_string();
        assert!(e.contains("{command}"), "{e}");
    }
}
