//! The panel's MCP servers as Claude takes them (`--mcp-config` documents and
//! the `mcpServers` of the `initialize` request, keyed by server name),
//! checked, merged, and reduced to the one HTTP server the bridge registers
//! with the agent: the panel's `unity-ops`, or else the only HTTP server.
//!
//! A server the bridge cannot pass on (stdio, sse, sdk, a second HTTP
//! server) is noted, not fatal; a server that is not well-formed is an error
//! naming its field, wherever it came from.

use serde_json::{Map, Value, json};

use crate::acp::json_field::json_kind;
use crate::launch::McpEndpoint;

/// The name the panel gives its own MCP server.
pub const PANEL_SERVER: &str = "unity-ops";

/// The server types Claude Code knows; only `http` is passed to the agent.
const KNOWN_TYPES: &[&str] = &[
    "stdio",
    "sse",
    "sse-ide",
    "http",
    "ws",
    "ws-ide",
    "sdk",
    "claudeai-proxy",
];

/// The server types that are reached at a `url`.
const URL_TYPES: &[&str] = &["sse", "sse-ide", "http", "ws", "ws-ide", "claudeai-proxy"];

/// A server set that is not well-formed: `field` is its path from the set's
/// own name (`mcpServers.unity-ops.url`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {problem}")]
pub struct ServerSetError {
    pub field: String,
    pub problem: String,
}

fn bad(field: String, problem: impl Into<String>) -> ServerSetError {
    ServerSetError {
        field,
        problem: problem.into(),
    }
}

/// Checks a server set (`value` is what `field` holds: an object of server
/// configs keyed by name) and returns it.
pub fn check<'a>(value: &'a Value, field: &str) -> Result<&'a Map<String, Value>, ServerSetError> {
    let Value::Object(servers) = value else {
        return Err(bad(
            field.to_string(),
            format!(
                "is {}, not an object of MCP server configs keyed by name",
                json_kind(value)
            ),
        ));
    };
    for (name, server) in servers {
        check_server(server, &format!("{field}.{name}"))?;
    }
    Ok(servers)
}

fn check_server(server: &Value, field: &str) -> Result<(), ServerSetError> {
    let Value::Object(s) = server else {
        return Err(bad(
            field.to_string(),
            format!("is {}, not an object", json_kind(server)),
        ));
    };
    let kind = kind(server);
    match s.get("type") {
        None => {}
        Some(Value::String(t)) if KNOWN_TYPES.contains(&t.as_str()) => {}
        Some(Value::String(t)) => {
            return Err(bad(
                format!("{field}.type"),
                format!("is {t:?}, not one of {}", KNOWN_TYPES.join(", ")),
            ));
        }
        Some(other) => {
            return Err(bad(
                format!("{field}.type"),
                format!("is {}, not a string", json_kind(other)),
            ));
        }
    }
    let needed = if URL_TYPES.contains(&kind) {
        Some("url")
    } else if kind == "stdio" {
        Some("command")
    } else {
        None
    };
    if let Some(key) = needed {
        match s.get(key) {
            Some(Value::String(v)) if !v.trim().is_empty() => {}
            Some(Value::String(_)) => {
                return Err(bad(format!("{field}.{key}"), "is empty"));
            }
            None => {
                return Err(bad(
                    format!("{field}.{key}"),
                    format!("is missing (a {kind} server needs one)"),
                ));
            }
            Some(other) => {
                return Err(bad(
                    format!("{field}.{key}"),
                    format!("is {}, not a string", json_kind(other)),
                ));
            }
        }
    }
    if let Some(headers) = s.get("headers") {
        let Value::Object(h) = headers else {
            return Err(bad(
                format!("{field}.headers"),
                format!("is {}, not an object", json_kind(headers)),
            ));
        };
        if let Some((k, v)) = h.iter().find(|(_, v)| !v.is_string()) {
            return Err(bad(
                format!("{field}.headers.{k}"),
                format!("is {}, not a string", json_kind(v)),
            ));
        }
    }
    Ok(())
}

/// A server's type: its `type`, else `http` for a bare `url` without a
/// `command`, else `stdio` (Claude's default).
fn kind(server: &Value) -> &str {
    match server.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None if server.get("url").is_some() && server.get("command").is_none() => "http",
        None => "stdio",
    }
}

/// `earlier` and `later` as one set: a server of `later` replaces the one of
/// `earlier` with the same name, as Claude merges its `--mcp-config` items.
pub fn merge(earlier: &Map<String, Value>, later: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = earlier.clone();
    merged.extend(later.iter().map(|(k, v)| (k.clone(), v.clone())));
    merged
}

/// An endpoint as the server entry it was picked from (`type: http`).
pub fn server_entry(endpoint: &McpEndpoint) -> Value {
    let mut server = json!({"type": "http", "url": endpoint.url});
    if let Some(a) = &endpoint.authorization {
        server["headers"] = json!({"Authorization": a});
    }
    server
}

/// The endpoint the bridge registers from a checked set, with notes on the
/// servers it does not pass on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Picked {
    pub endpoint: Option<McpEndpoint>,
    pub notes: Vec<String>,
}

/// Picks the panel's server (by name), else the only HTTP server. `servers`
/// must have passed [`check`].
pub fn pick(servers: &Map<String, Value>) -> Picked {
    let mut picked = Picked::default();
    let http: Vec<&String> = servers
        .iter()
        .filter(|(_, s)| kind(s) == "http")
        .map(|(n, _)| n)
        .collect();
    let chosen = match servers.get(PANEL_SERVER) {
        Some(server) if kind(server) == "http" => Some(PANEL_SERVER),
        Some(_) => {
            picked.notes.push(format!(
                "mcp server {PANEL_SERVER:?} is not an http server; not registered"
            ));
            None
        }
        None if http.len() == 1 => Some(http[0].as_str()),
        None if http.len() > 1 => {
            let names: Vec<&str> = http.iter().map(|n| n.as_str()).collect();
            picked.notes.push(format!(
                "several http mcp servers and none named {PANEL_SERVER:?} ({}); none registered",
                names.join(", ")
            ));
            None
        }
        None => None,
    };
    for name in servers.keys() {
        if chosen != Some(name.as_str()) {
            picked.notes.push(format!(
                "mcp server {name:?} not passed to the agent (only one http server is)"
            ));
        }
    }
    if let Some(name) = chosen {
        let server = &servers[name];
        let authorization = server["headers"]
            .as_object()
            .and_then(|h| {
                h.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            })
            .and_then(|(_, v)| v.as_str())
            .map(str::to_string);
        picked.endpoint = Some(McpEndpoint {
            name: name.to_string(),
            url: server["url"].as_str().unwrap_or_default().to_string(),
            authorization,
        });
    }
    picked
}

/// The values in a set that must never be written as they are: every
/// header value and every environment value of every server, and every
/// string of a server the bridge does not pass on (its URL, a stdio
/// server's command and arguments) of [`PASSED_OVER_MIN`] bytes or more.
/// The server passed on keeps its URL: the tap names it `<mcp-url>`.
pub fn secrets(servers: &Map<String, Value>) -> Vec<String> {
    let passed_on = pick(servers).endpoint.map(|e| e.name);
    let mut out: Vec<String> = Vec::new();
    for (name, s) in servers {
        for k in ["headers", "env"] {
            let values = s[k].as_object().into_iter().flat_map(|m| m.values());
            out.extend(values.filter_map(Value::as_str).map(str::to_string));
        }
        if passed_on.as_deref() == Some(name.as_str()) {
            continue;
        }
        let args = s["args"].as_array().into_iter().flatten();
        let strings = [&s["url"], &s["command"]].into_iter().chain(args);
        out.extend(
            strings
                .filter_map(Value::as_str)
                .filter(|v| v.len() >= PASSED_OVER_MIN)
                .map(str::to_string),
        );
    }
    out.retain(|v| !v.is_empty());
    out
}

/// Shorter strings of a server passed over (`npx`, `-y`) would hit
/// ordinary text when scrubbed as literals.
const PASSED_OVER_MIN: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn secrets_are_header_and_env_values_and_the_strings_of_servers_passed_over() {
        // (set, the values a tap must never keep)
        let cases: &[(&str, &[&str])] = &[
            (
                r#"{"unity-ops":{"type":"http","url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer t0k"}}}"#,
                &["Bearer t0k"],
            ),
            (
                r#"{"unity-ops":{"type":"http","url":"http://127.0.0.1:1/mcp"},"db":{"command":"/opt/db-server","args":["-y","--dsn=postgres://u:p@h/d"],"env":{"PW":"x"}}}"#,
                &["x", "/opt/db-server", "--dsn=postgres://u:p@h/d"],
            ),
            (
                r#"{"a":{"type":"http","url":"http://x/a"},"b":{"type":"http","url":"https://wiki.example/b"}}"#,
                &["http://x/a", "https://wiki.example/b"],
            ),
            (
                r#"{"only":{"type":"http","url":"https://one.example/mcp"}}"#,
                &[],
            ),
        ];
        for (text, want) in cases {
            let v = set(text);
            let got = secrets(check(&v, "mcpServers").unwrap());
            assert_eq!(got, *want, "{text}");
        }
    }

    #[test]
    fn endpoint_choice_follows_name_then_uniqueness() {
        // (set, expected server name or None)
        let cases: &[(&str, Option<&str>)] = &[
            (
                r#"{"unity-ops":{"type":"http","url":"http://127.0.0.1:1/mcp"}}"#,
                Some("unity-ops"),
            ),
            (
                r#"{"a":{"type":"http","url":"http://x/a"},"unity-ops":{"type":"http","url":"http://x/u"}}"#,
                Some("unity-ops"),
            ),
            (
                r#"{"other":{"type":"http","url":"http://x/o"}}"#,
                Some("other"),
            ),
            (
                r#"{"a":{"type":"http","url":"http://x/a"},"b":{"type":"http","url":"http://x/b"}}"#,
                None,
            ),
            (r#"{"fs":{"command":"npx","args":["x"]}}"#, None),
            (r#"{"unity-ops":{"type":"stdio","command":"x"}}"#, None),
            (r#"{"s":{"type":"sdk","name":"s"}}"#, None),
            (r#"{"e":{"type":"sse","url":"http://x/e"}}"#, None),
            (r#"{"unity-ops":{"url":"http://x/u"}}"#, Some("unity-ops")),
            ("{}", None),
        ];
        for (text, want) in cases {
            let v = set(text);
            let got = pick(check(&v, "mcpServers").unwrap())
                .endpoint
                .map(|e| e.name);
            assert_eq!(got.as_deref(), *want, "for {text}");
        }
    }

    #[test]
    fn a_later_set_replaces_servers_of_the_same_name() {
        let earlier =
            set(r#"{"unity-ops":{"type":"http","url":"http://x/early"},"a":{"command":"a"}}"#);
        let later = set(r#"{"unity-ops":{"type":"http","url":"http://x/late"}}"#);
        let merged = merge(earlier.as_object().unwrap(), later.as_object().unwrap());
        assert_eq!(merged["unity-ops"]["url"], "http://x/late");
        assert!(merged.contains_key("a"));
    }

    #[test]
    fn authorization_header_is_found_case_insensitively() {
        let v = set(
            r#"{"unity-ops":{"type":"http","url":"http://u","headers":{"authorization":"Bearer k","X-Other":"1"}}}"#,
        );
        let servers = check(&v, "mcpServers").unwrap();
        assert_eq!(
            pick(servers).endpoint.unwrap().authorization.as_deref(),
            Some("Bearer k")
        );
        assert_eq!(secrets(servers), vec!["Bearer k", "1"]);
    }

    #[test]
    fn malformed_sets_name_the_field() {
        let cases = [
            ("[]", "mcpServers is an array, not an object"),
            (
                r#"{"u":"http://x"}"#,
                "mcpServers.u is a string, not an object",
            ),
            (
                r#"{"u":{"type":"carrier-pigeon","url":"http://x"}}"#,
                r#"mcpServers.u.type is "carrier-pigeon", not one of stdio"#,
            ),
            (
                r#"{"u":{"type":7}}"#,
                "mcpServers.u.type is a number, not a string",
            ),
            (
                r#"{"u":{"type":"http"}}"#,
                "mcpServers.u.url is missing (a http server needs one)",
            ),
            (
                r#"{"u":{"type":"sse","url":""}}"#,
                "mcpServers.u.url is empty",
            ),
            (r#"{"u":{"args":["x"]}}"#, "mcpServers.u.command is missing"),
            (
                r#"{"u":{"url":"http://x","headers":["Bearer t"]}}"#,
                "mcpServers.u.headers is an array, not an object",
            ),
            (
                r#"{"u":{"url":"http://x","headers":{"Authorization":1}}}"#,
                "mcpServers.u.headers.Authorization is a number, not a string",
            ),
        ];
        for (text, want) in cases {
            let err = check(&set(text), "mcpServers").unwrap_err().to_string();
            assert!(err.starts_with(want), "{text}: {err:?} lacks {want:?}");
        }
    }
}
