//! How a unity-ops tool is named toward the model.
//!
//! Agents rename MCP tools before offering them to their model: codex 1.x/2.x
//! offers one namespace tool `mcp__unity_ops` holding `uap_ping`; older
//! codex and other agents offer flat functions such as
//! `mcp__unity-ops__uap_ping`, Gemini `mcp_unity-ops_uap_ping`, Grok
//! `unity-ops__uap_ping`. A scripted call must come back in the form the
//! agent offered, so the request's own tool list decides; the profile's
//! [`ToolNaming`] is only the fallback when the request does not show the
//! tool (which is then noted).

use serde::{Deserialize, Serialize};

/// A tool as offered in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedTool {
    pub name: String,
    /// The namespace (or group) the tool was offered in, if any.
    pub namespace: Option<String>,
}

/// The name (and namespace) a scripted call is rendered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRef {
    pub name: String,
    pub namespace: Option<String>,
}

/// The agent profile's naming rule, used when the request's tool list does
/// not show the tool. Profile TOML:
/// `tool_naming = { form = "namespace", namespace = "mcp__unity_ops" }` or
/// `tool_naming = { form = "flat", template = "mcp__unity-ops__{tool}" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolNaming {
    /// The tool keeps its name inside a namespace tool.
    Namespace { namespace: String },
    /// A flat function name; `{tool}` is replaced by the tool name.
    Flat { template: String },
}

impl Default for ToolNaming {
    /// codex-acp 1.x/2.x.
    fn default() -> Self {
        ToolNaming::Namespace {
            namespace: "mcp__unity_ops".to_owned(),
        }
    }
}

/// Separators agents put between a server name and a tool name.
const SUFFIX_SEPARATORS: &[&str] = &["__", "_", ".", "/"];

impl ToolNaming {
    /// Resolve `tool` against the offered tools. Returns the reference and,
    /// when the fallback rule was used, a sentence saying so.
    pub fn resolve(&self, tool: &str, offered: &[OfferedTool]) -> (ToolRef, Option<String>) {
        // 1. Offered under its own name inside a namespace (prefer a
        //    unity-ops one when several namespaces have it).
        let in_namespace = offered
            .iter()
            .filter(|t| t.name == tool && t.namespace.is_some())
            .max_by_key(|t| t.namespace.as_deref().is_some_and(|n| n.contains("unity")));
        if let Some(t) = in_namespace {
            return (
                ToolRef {
                    name: t.name.clone(),
                    namespace: t.namespace.clone(),
                },
                None,
            );
        }
        // 2. Offered flat: exactly, or as `<prefix><sep><tool>`.
        let flat = offered.iter().filter(|t| t.namespace.is_none()).find(|t| {
            t.name == tool
                || SUFFIX_SEPARATORS.iter().any(|sep| {
                    t.name
                        .strip_suffix(tool)
                        .is_some_and(|p| p.ends_with(sep) && p.len() > sep.len())
                })
        });
        if let Some(t) = flat {
            return (
                ToolRef {
                    name: t.name.clone(),
                    namespace: None,
                },
                None,
            );
        }
        // 3. The profile's rule.
        let r = match self {
            ToolNaming::Namespace { namespace } => ToolRef {
                name: tool.to_owned(),
                namespace: Some(namespace.clone()),
            },
            ToolNaming::Flat { template } => ToolRef {
                name: template.replace("{tool}", tool),
                namespace: None,
            },
        };
        let how = format!(
            "`{tool}` is not among the {} tool(s) the request offered; named it {}{} by the profile's rule",
            offered.len(),
            r.namespace
                .as_deref()
                .map(|n| format!("{n}/"))
                .unwrap_or_default(),
            r.name
        );
        (r, Some(how))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(n: &str) -> OfferedTool {
        OfferedTool {
            name: n.into(),
            namespace: None,
        }
    }
    fn ns(ns: &str, n: &str) -> OfferedTool {
        OfferedTool {
            name: n.into(),
            namespace: Some(ns.into()),
        }
    }

    #[test]
    fn the_offered_form_wins_over_the_profile_rule() {
        let flat_rule = ToolNaming::Flat {
            template: "mcp__unity-ops__{tool}".into(),
        };
        let cases: Vec<(&str, Vec<OfferedTool>, ToolNaming, ToolRef, bool)> = vec![
            (
                "codex namespace",
                vec![flat("shell"), ns("mcp__unity_ops", "uap_ping")],
                flat_rule.clone(),
                ToolRef {
                    name: "uap_ping".into(),
                    namespace: Some("mcp__unity_ops".into()),
                },
                false,
            ),
            (
                "codex 0.x flat",
                vec![flat("shell"), flat("mcp__unity-ops__uap_ping")],
                ToolNaming::default(),
                ToolRef {
                    name: "mcp__unity-ops__uap_ping".into(),
                    namespace: None,
                },
                false,
            ),
            (
                "gemini flat",
                vec![flat("mcp_unity-ops_uap_ping")],
                ToolNaming::default(),
                ToolRef {
                    name: "mcp_unity-ops_uap_ping".into(),
                    namespace: None,
                },
                false,
            ),
            (
                "similar suffix is not the tool",
                vec![flat("xuap_ping")],
                flat_rule.clone(),
                ToolRef {
                    name: "mcp__unity-ops__uap_ping".into(),
                    namespace: None,
                },
                true,
            ),
            (
                "not offered: namespace rule",
                vec![flat("shell")],
                ToolNaming::default(),
                ToolRef {
                    name: "uap_ping".into(),
                    namespace: Some("mcp__unity_ops".into()),
                },
                true,
            ),
        ];
        for (case, offered, rule, want, fell_back) in cases {
            let (got, how) = rule.resolve("uap_ping", &offered);
            assert_eq!(got, want, "{case}");
            assert_eq!(how.is_some(), fell_back, "{case}");
        }
    }

    #[test]
    fn profile_toml_forms_parse() {
        #[derive(Deserialize)]
        struct P {
            tool_naming: ToolNaming,
        }
        let p: P = toml::from_str(
            "tool_naming = { form = \"flat\", template = \"mcp__unity-ops__{tool}\" }",
        )
        .unwrap();
        assert_eq!(
            p.tool_naming,
            ToolNaming::Flat {
                template: "mcp__unity-ops__{tool}".into()
            }
        );
        let p: P = toml::from_str(
            "tool_naming = { form = \"namespace\", namespace = \"mcp__unity_ops\" }",
        )
        .unwrap();
        assert_eq!(p.tool_naming, ToolNaming::default());
    }
}
