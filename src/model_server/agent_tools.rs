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

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::naming::ToolRef;

/// One role's tool: its name toward the model and the argument template.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentTool {
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
}

impl AgentTools {
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
