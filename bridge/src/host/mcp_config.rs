//! Claude's `--mcp-config` (inline JSON or a file path) reduced to the one
//! HTTP server the bridge registers with the agent: the panel's `unity-ops`,
//! or else the only HTTP server configured.
//!
//! Format: `{"mcpServers":{"unity-ops":{"type":"http","url":"...",
//! "headers":{"Authorization":"Bearer ..."}}}}`. Servers the bridge cannot
//! pass on (stdio, sdk, a second HTTP server) are noted, not fatal.

use std::path::Path;

use acp_bridge::McpEndpoint;
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// The name the panel gives its own MCP server.
pub const PANEL_SERVER: &str = "unity-ops";

#[derive(Debug, Default)]
pub struct Picked {
    pub endpoint: Option<McpEndpoint>,
    pub notes: Vec<String>,
    /// Every header value and environment value of every configured server
    /// (credentials, as a rule): the tap never writes them.
    pub secrets: Vec<String>,
}

/// Reads every `--mcp-config` value (later ones override earlier servers of
/// the same name, as Claude merges them) and picks the endpoint.
pub fn pick_endpoint(values: &[String], current_dir: &Path) -> Result<Picked> {
    let mut servers = Map::new();
    for value in values {
        let (text, origin) = if value.trim_start().starts_with('{') {
            (value.clone(), "inline JSON".to_string())
        } else {
            let path = current_dir.join(value);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("--mcp-config: cannot read {}", path.display()))?;
            (text, path.display().to_string())
        };
        let doc: Value = serde_json::from_str(&text)
            .with_context(|| format!("--mcp-config ({origin}): not valid JSON"))?;
        match doc.get("mcpServers") {
            Some(Value::Object(map)) => servers.extend(map.clone()),
            Some(_) => bail!("--mcp-config ({origin}): \"mcpServers\" must be an object"),
            None => bail!("--mcp-config ({origin}): no \"mcpServers\" object"),
        }
    }

    let mut picked = Picked::default();
    for server in servers.values() {
        for field in ["headers", "env"] {
            if let Some(map) = server.get(field).and_then(Value::as_object) {
                picked
                    .secrets
                    .extend(map.values().filter_map(Value::as_str).map(str::to_string));
            }
        }
    }
    let http: Vec<(&String, &Value)> = servers.iter().filter(|(_, s)| is_http(s)).collect();
    let chosen = match servers.get(PANEL_SERVER) {
        Some(server) if is_http(server) => Some((PANEL_SERVER, server)),
        Some(_) => {
            picked.notes.push(format!(
                "mcp server {PANEL_SERVER:?} is not an http server; not registered"
            ));
            None
        }
        None if http.len() == 1 => Some((http[0].0.as_str(), http[0].1)),
        None if http.len() > 1 => {
            let names: Vec<&str> = http.iter().map(|(n, _)| n.as_str()).collect();
            picked.notes.push(format!(
                "several http mcp servers and none named {PANEL_SERVER:?} ({}); none registered",
                names.join(", ")
            ));
            None
        }
        None => None,
    };
    for name in servers.keys() {
        if chosen.map(|(n, _)| n) != Some(name.as_str()) {
            picked.notes.push(format!(
                "mcp server {name:?} not passed to the agent (only one http server is)"
            ));
        }
    }
    if let Some((name, server)) = chosen {
        let url = match server.get("url").and_then(Value::as_str) {
            Some(u) if !u.is_empty() => u.to_string(),
            _ => bail!("--mcp-config: server {name:?} has no \"url\""),
        };
        let authorization = server
            .get("headers")
            .and_then(Value::as_object)
            .and_then(|h| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            })
            .and_then(|(_, v)| v.as_str())
            .map(str::to_string);
        picked.endpoint = Some(McpEndpoint {
            name: name.to_string(),
            url,
            authorization,
        });
    }
    Ok(picked)
}

/// Claude writes `"type":"http"`; a bare `url` without a `command` is http too.
fn is_http(server: &Value) -> bool {
    match server.get("type").and_then(Value::as_str) {
        Some(t) => t == "http",
        None => server.get("url").is_some() && server.get("command").is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(configs: &[&str]) -> Picked {
        let values: Vec<String> = configs.iter().map(|s| s.to_string()).collect();
        pick_endpoint(&values, &std::env::temp_dir()).unwrap()
    }

    #[test]
    fn endpoint_choice_follows_name_then_uniqueness() {
        // (configs, expected server name or None)
        let cases: &[(&[&str], Option<&str>)] = &[
            (
                &[r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:1/mcp"}}}"#],
                Some("unity-ops"),
            ),
            (
                &[
                    r#"{"mcpServers":{"a":{"type":"http","url":"http://127.0.0.1:1/a"},"unity-ops":{"type":"http","url":"http://127.0.0.1:1/u"}}}"#,
                ],
                Some("unity-ops"),
            ),
            (
                &[r#"{"mcpServers":{"other":{"type":"http","url":"http://127.0.0.1:1/o"}}}"#],
                Some("other"),
            ),
            (
                &[
                    r#"{"mcpServers":{"a":{"type":"http","url":"http://x/a"},"b":{"type":"http","url":"http://x/b"}}}"#,
                ],
                None,
            ),
            (
                &[r#"{"mcpServers":{"fs":{"command":"npx","args":["x"]}}}"#],
                None,
            ),
            (
                &[r#"{"mcpServers":{"unity-ops":{"type":"stdio","command":"x"}}}"#],
                None,
            ),
            (&[r#"{"mcpServers":{"s":{"type":"sdk","name":"s"}}}"#], None),
            (&[r#"{"mcpServers":{}}"#], None),
            (
                &[
                    r#"{"mcpServers":{"a":{"type":"http","url":"http://x/a"}}}"#,
                    r#"{"mcpServers":{"unity-ops":{"url":"http://x/u"}}}"#,
                ],
                Some("unity-ops"),
            ),
        ];
        for (configs, want) in cases {
            let got = pick(configs).endpoint.map(|e| e.name);
            assert_eq!(got.as_deref(), *want, "for {configs:?}");
        }
    }

    #[test]
    fn authorization_header_is_found_case_insensitively() {
        let p = pick(&[
            r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://u","headers":{"authorization":"Bearer k","X-Other":"1"}}}}"#,
        ]);
        assert_eq!(
            p.endpoint.unwrap().authorization.as_deref(),
            Some("Bearer k")
        );
        let p = pick(&[r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://u"}}}"#]);
        assert_eq!(p.endpoint.unwrap().authorization, None);
    }

    #[test]
    fn config_can_be_a_file_path() {
        let dir =
            std::env::temp_dir().join(format!("acp-bridge-mcp-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("mcp.json"),
            r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://f"}}}"#,
        )
        .unwrap();
        let p = pick_endpoint(&["mcp.json".to_string()], &dir).unwrap();
        assert_eq!(p.endpoint.unwrap().url, "http://f");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_configs_are_clear_errors() {
        let cases = [
            ("{nope", "not valid JSON"),
            (r#"{"servers":{}}"#, "no \"mcpServers\" object"),
            (r#"{"mcpServers":[]}"#, "must be an object"),
            (
                r#"{"mcpServers":{"unity-ops":{"type":"http"}}}"#,
                "has no \"url\"",
            ),
            ("missing-file.json", "cannot read"),
        ];
        for (value, want) in cases {
            let err = pick_endpoint(&[value.to_string()], &std::env::temp_dir()).unwrap_err();
            let text = format!("{err:#}");
            assert!(text.contains(want), "{value}: {text}");
        }
    }
}
