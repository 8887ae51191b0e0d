//! What an agent's `initialize` answer says it can do, read once into typed
//! fields (from the v1 view of either revision's answer, see
//! [`crate::acp::revision::v1_view`]), so the session calls, the prompts and
//! the recorder ask a field, not a JSON path. Tolerant as every agent edge
//! is: a capability that is missing or of another type reads as not
//! advertised.

use serde_json::Value;

/// The agent's advertised capabilities the bridge acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCapabilities {
    /// `loadSession`: it resumes a session with `session/load`.
    pub load_session: bool,
    /// `mcpCapabilities.http`: it takes an HTTP MCP server in `mcpServers`.
    pub http_mcp: bool,
    /// `promptCapabilities.image`: it takes image blocks in prompts.
    pub images: bool,
    /// `sessionCapabilities.systemPrompt`: it takes a client `systemPrompt`
    /// on its session calls; `Some(true)` when also in mode `override`,
    /// `Some(false)` when in mode `append` only.
    pub system_prompt: Option<bool>,
    /// `sessionCapabilities.additionalDirectories` present and not null.
    pub additional_directories: bool,
    /// The ids of `authMethods`, in the agent's order.
    pub auth_methods: Vec<String>,
}

impl AgentCapabilities {
    /// Reads the (v1 view of the) `initialize` answer's result.
    pub fn read(init_result: &Value) -> AgentCapabilities {
        let caps = &init_result["agentCapabilities"];
        let session = &caps["sessionCapabilities"];
        let system_prompt = &session["systemPrompt"];
        AgentCapabilities {
            load_session: caps["loadSession"].as_bool() == Some(true),
            http_mcp: caps["mcpCapabilities"]["http"].as_bool() == Some(true),
            images: caps["promptCapabilities"]["image"].as_bool() == Some(true),
            system_prompt: system_prompt
                .is_object()
                .then(|| system_prompt["mode"]["override"].is_object()),
            additional_directories: !session["additionalDirectories"].is_null(),
            auth_methods: init_result["authMethods"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// (what, the initialize result, what is read)
    #[test]
    fn each_capability_reads_as_advertised_and_a_wrong_type_as_not() {
        let full = AgentCapabilities {
            load_session: true,
            http_mcp: true,
            images: true,
            system_prompt: Some(true),
            additional_directories: true,
            auth_methods: vec!["oauth".into(), "api-key".into()],
        };
        let cases = [
            ("nothing", json!({}), AgentCapabilities::default()),
            ("not an object", json!("x"), AgentCapabilities::default()),
            (
                "everything",
                json!({"agentCapabilities": {"loadSession": true, "mcpCapabilities": {"http": true},
                    "promptCapabilities": {"image": true},
                    "sessionCapabilities": {"systemPrompt": {"mode": {"override": {}, "append": {}}},
                                            "additionalDirectories": {}}},
                       "authMethods": [{"id": "oauth"}, {"name": "no id"}, {"id": "api-key"}]}),
                full.clone(),
            ),
            (
                "append only, and wrong types",
                json!({"agentCapabilities": {"loadSession": "yes", "mcpCapabilities": {"http": 1},
                    "promptCapabilities": [], "sessionCapabilities": {"systemPrompt": {"mode": {"append": {}}},
                                                                      "additionalDirectories": null}},
                       "authMethods": {"id": "x"}}),
                AgentCapabilities {
                    system_prompt: Some(false),
                    ..AgentCapabilities::default()
                },
            ),
        ];
        for (what, init, want) in cases {
            assert_eq!(AgentCapabilities::read(&init), want, "{what}");
        }
    }
}
