//! Claude's `--mcp-config` values (inline JSON or a file path) read into one
//! server set, checked and reduced to the endpoint the bridge registers by
//! [`acp_bridge::acp::mcp_servers`].
//!
//! Format: `{"mcpServers":{"unity-ops":{"type":"http","url":"...",
//! "headers":{"Authorization":"Bearer ..."}}}}`.

use std::path::Path;

use acp_bridge::acp::mcp_servers::{self, Picked};
use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Map, Value};

/// What the launch's `--mcp-config` values name.
#[derive(Debug, Default)]
pub struct LaunchServers {
    /// Every server, later values overriding earlier servers of the same
    /// name, as Claude merges them.
    pub servers: Map<String, Value>,
    pub picked: Picked,
}

/// Reads every `--mcp-config` value and picks the endpoint.
pub fn read(values: &[String], current_dir: &Path) -> Result<LaunchServers> {
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
        let Some(set) = doc.get("mcpServers") else {
            bail!("--mcp-config ({origin}): no \"mcpServers\" object");
        };
        let set = mcp_servers::check(set, "mcpServers")
            .map_err(|e| anyhow!("--mcp-config ({origin}): {e}"))?;
        servers = mcp_servers::merge(&servers, set);
    }
    let picked = mcp_servers::pick(&servers);
    Ok(LaunchServers { servers, picked })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(configs: &[&str]) -> LaunchServers {
        let values: Vec<String> = configs.iter().map(|s| s.to_string()).collect();
        read(&values, &std::env::temp_dir()).unwrap()
    }

    #[test]
    fn later_values_override_earlier_servers_of_the_same_name() {
        let l = read_all(&[
            r#"{"mcpServers":{"a":{"type":"http","url":"http://x/a"},"unity-ops":{"url":"http://x/1"}}}"#,
            r#"{"mcpServers":{"unity-ops":{"url":"http://x/2"}}}"#,
        ]);
        assert_eq!(l.servers.len(), 2);
        let ep = l.picked.endpoint.unwrap();
        assert_eq!(
            (ep.name.as_str(), ep.url.as_str()),
            ("unity-ops", "http://x/2")
        );
        assert!(
            l.picked
                .notes
                .iter()
                .any(|n| n.contains("\"a\" not passed")),
            "{:?}",
            l.picked.notes
        );
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
        let l = read(&["mcp.json".to_string()], &dir).unwrap();
        assert_eq!(l.picked.endpoint.unwrap().url, "http://f");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The spellings a Windows panel may pass: a subfolder with a backslash,
    /// the absolute path with forward slashes, with a lower-case drive
    /// letter, and in its verbatim `\\?\` form.
    #[cfg(windows)]
    #[test]
    fn config_path_may_be_spelled_any_windows_way() {
        let dir = std::env::temp_dir().join(format!("acp-bridge-mcp-win-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(
            dir.join("sub").join("mcp.json"),
            r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://w"}}}"#,
        )
        .unwrap();
        let full = dir
            .join("sub")
            .join("mcp.json")
            .to_string_lossy()
            .into_owned();
        let mut lower = full.clone();
        lower[..1].make_ascii_lowercase();
        for value in [
            r"sub\mcp.json".to_string(),
            full.replace('\\', "/"),
            lower,
            format!(r"\\?\{full}"),
        ] {
            let l = read(std::slice::from_ref(&value), &dir)
                .unwrap_or_else(|e| panic!("{value}: {e:#}"));
            assert_eq!(l.picked.endpoint.unwrap().url, "http://w", "{value}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_configs_are_clear_errors() {
        let cases = [
            ("{nope", "not valid JSON"),
            (r#"{"servers":{}}"#, "no \"mcpServers\" object"),
            (
                r#"{"mcpServers":[]}"#,
                "mcpServers is an array, not an object",
            ),
            (
                r#"{"mcpServers":{"unity-ops":{"type":"http"}}}"#,
                "(inline JSON): mcpServers.unity-ops.url is missing",
            ),
            (
                r#"{"mcpServers":{"x":{"type":"pigeon","url":"http://x"}}}"#,
                "mcpServers.x.type is \"pigeon\"",
            ),
            ("missing-file.json", "cannot read"),
        ];
        for (value, want) in cases {
            let err = read(&[value.to_string()], &std::env::temp_dir()).unwrap_err();
            let text = format!("{err:#}");
            assert!(text.contains(want), "{value}: {text}");
        }
    }
}
