//! `--bridge-log <file>`: every line in and out, tagged with its direction,
//! plus the host's own notes, with the MCP servers' header and environment
//! values redacted (from `--mcp-config` and from the panel's `initialize`).
//! Meant for debugging a real panel session; a no-op without the flag.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

pub struct TrafficLog {
    file: Option<BufWriter<File>>,
    /// Values never written as they are (the MCP servers' headers and env).
    secrets: Vec<String>,
}

impl TrafficLog {
    pub fn open(path: Option<&Path>, secrets: Vec<String>) -> Result<TrafficLog> {
        let file = match path {
            Some(p) => Some(BufWriter::new(
                File::options()
                    .create(true)
                    .append(true)
                    .open(p)
                    .with_context(|| format!("--bridge-log: cannot open {}", p.display()))?,
            )),
            None => None,
        };
        let secrets = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        Ok(TrafficLog { file, secrets })
    }

    /// One line, tagged: `panel>` (from the panel), `<panel` (to it),
    /// `agent<` (to the agent), `<agent` (from it), `agent-stderr`, `diag`.
    pub fn record(&mut self, tag: &str, line: &str) {
        if let Some(f) = &mut self.file {
            let mut line = std::borrow::Cow::Borrowed(line);
            for secret in &self.secrets {
                if line.contains(secret.as_str()) {
                    line = std::borrow::Cow::Owned(line.replace(secret.as_str(), "<redacted>"));
                }
            }
            // A failing debug log must not end the session.
            let _ = writeln!(f, "{tag} {line}");
        }
    }

    /// Learns the secrets of the MCP servers a panel `initialize` line
    /// carries, before that line is recorded.
    pub fn learn_secrets_of_panel_line(&mut self, line: &str) {
        if self.file.is_none() || !line.contains("\"mcpServers\"") {
            return;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        if let Some(servers) = v["request"]["mcpServers"].as_object() {
            for s in acp_bridge::mcp_servers::secrets(servers) {
                if !self.secrets.contains(&s) {
                    self.secrets.push(s);
                }
            }
        }
    }

    pub fn note(&mut self, text: &str) {
        self.record("host", text);
    }

    pub fn flush(&mut self) {
        if let Some(f) = &mut self.file {
            let _ = f.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_tags_lines_and_redacts_the_secret() {
        let dir =
            std::env::temp_dir().join(format!("acp-bridge-traffic-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        let mut log =
            TrafficLog::open(Some(&path), vec!["Bearer s3cret".into(), String::new()]).unwrap();
        log.record(
            "agent<",
            r#"{"headers":[{"name":"Authorization","value":"Bearer s3cret"}]}"#,
        );
        log.note("plain");
        let init = r#"{"type":"control_request","request":{"subtype":"initialize","mcpServers":{"u":{"url":"http://x","headers":{"X-Key":"k3y"}}}}}"#;
        log.learn_secrets_of_panel_line(init);
        log.record("panel>", init);
        log.flush();
        // closed before the directory goes (Windows deletes no open file)
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "agent< {\"headers\":[{\"name\":\"Authorization\",\"value\":\"<redacted>\"}]}\nhost plain\n\
             panel> {\"type\":\"control_request\",\"request\":{\"subtype\":\"initialize\",\"mcpServers\":{\"u\":{\"url\":\"http://x\",\"headers\":{\"X-Key\":\"<redacted>\"}}}}}\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
