//! The panel's `initialize` request: what it carries (system prompt fields,
//! MCP servers, options the bridge cannot apply), its answer with the
//! `*_applied` fields the Agent SDKs read, and `--await-initialize`.
//!
//! The MCP servers of the `initialize` that starts the session join the
//! launch's `--mcp-config` set (a launch server replaces an `initialize`
//! server of the same name, as Claude puts the request's set before its
//! `--mcp-config` items), and the endpoint is picked from the merged set
//! before `session/new`. A later `initialize` changes no server.

use serde::Serialize;
use serde_json::Map;

use crate::stream_json::RequestId;

use super::*;
use crate::acp::mcp_servers;

/// Fields of an `initialize` request the bridge cannot apply, with the
/// response field that says so: each answered `false` when the request
/// carries it (non-empty), absent otherwise, as Claude answers them.
const UNAPPLIED_FIELDS: &[(&str, &str)] = &[
    ("hooks", "hooks_applied"),
    ("plugins", "plugins_applied"),
    ("managedSettings", "managed_settings_applied"),
    ("settings", "settings_applied"),
    ("disallowedTools", "disallowed_tools_applied"),
    // applied when the roots reached the agent (see `answer_initialize`)
    ("additionalDirectories", "additional_directories_applied"),
    ("codeRunningMcpTools", "code_running_mcp_tools_applied"),
];

/// What one panel `initialize` asked for that its answer reports on.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct InitializeAsk {
    /// `request.mcpServers`, checked; `None` when absent, null or empty.
    mcp_servers: Option<Map<String, Value>>,
    /// The response fields of the [`UNAPPLIED_FIELDS`] it carries.
    unapplied: Vec<&'static str>,
    /// `request.additionalDirectories` (its strings), when it names any.
    directories: Option<Vec<String>>,
}

impl InitializeAsk {
    /// Reads the request; a malformed `mcpServers` is an error naming its field.
    pub(super) fn read(req: &Value) -> Result<InitializeAsk, mcp_servers::ServerSetError> {
        let mcp_servers = match req.get("mcpServers") {
            None | Some(Value::Null) => None,
            Some(v) => {
                Some(mcp_servers::check(v, "request.mcpServers")?.clone()).filter(|m| !m.is_empty())
            }
        };
        let unapplied = UNAPPLIED_FIELDS
            .iter()
            .filter(|(field, _)| carried(&req[*field]))
            .map(|(_, answer)| *answer)
            .collect();
        let directories: Vec<String> = req["additionalDirectories"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str().filter(|d| !d.is_empty()).map(str::to_string))
            .collect();
        Ok(InitializeAsk {
            mcp_servers,
            unapplied,
            directories: (!directories.is_empty()).then_some(directories),
        })
    }
}

/// The answer to a panel `initialize`, in the keys real `claude` writes.
#[derive(Serialize)]
struct InitializeAnswer<'a> {
    commands: Vec<CommandEntry<'a>>,
    output_style: &'static str,
    available_output_styles: [&'static str; 1],
    models: Vec<ModelEntry<'a>>,
    #[serde(flatten)]
    applied: Applied,
}

#[derive(Serialize)]
struct CommandEntry<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(rename = "argumentHint")]
    argument_hint: &'a str,
}

#[derive(Serialize)]
struct ModelEntry<'a> {
    value: &'a str,
    #[serde(rename = "displayName")]
    display_name: &'a str,
    #[serde(rename = "resolvedModel")]
    resolved_model: &'a str,
}

/// The `*_applied` fields, in the order first set: a field set again keeps
/// its place (the roots' field is `false` for a request that carries them,
/// then says whether they reached the agent).
#[derive(Default)]
struct Applied(Vec<(&'static str, bool)>);

impl Applied {
    fn set(&mut self, field: &'static str, applied: bool) {
        match self.0.iter_mut().find(|(f, _)| *f == field) {
            Some((_, slot)) => *slot = applied,
            None => self.0.push((field, applied)),
        }
    }
}

impl Serialize for Applied {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (field, applied) in &self.0 {
            map.serialize_entry(field, applied)?;
        }
        map.end()
    }
}

/// Whether a request field says something: present, not null, not empty.
fn carried(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

impl Bridge {
    /// A panel `control_request` `initialize`.
    pub(super) fn panel_initialize_request(
        &mut self,
        request_id: stream_json::RequestId,
        req: &Value,
        now: Duration,
    ) {
        let read = InitializeAsk::read(req)
            .map_err(|e| e.to_string())
            .and_then(|ask| Ok((ask, PanelInstructions::read(req)?)));
        let (ask, instructions) = match read {
            Ok(read) => read,
            Err(e) => {
                let why = format!("initialize {e}");
                self.answer_panel(stream_json::control_error(&request_id, &why, None));
                if self.phase == Phase::Idle {
                    // not started half-configured: not at all
                    self.refuse_session(format!("{why}; no session started"), None, now);
                } else {
                    self.diag(why);
                }
                return;
            }
        };
        self.initialize_instructions(instructions);
        match self.phase {
            Phase::Idle => {
                if let Some(servers) = &ask.mcp_servers {
                    self.take_initialize_servers(servers.clone());
                }
                if let Some(directories) = &ask.directories {
                    self.directories.asked(&self.spec.cwd, directories);
                }
                self.startup.wait_panel_init(request_id, ask);
                self.start_handshake(now);
            }
            Phase::Handshaking => self.startup.wait_panel_init(request_id, ask),
            Phase::Ready => {
                self.answer_initialize(&request_id, &ask);
            }
            Phase::Failed => {
                let why = self.failure.clone().unwrap_or_default();
                self.answer_panel(stream_json::control_error(&request_id, &why, None));
            }
        }
    }

    /// Under `--await-initialize`, a first panel line that is not the
    /// `initialize` request refuses the session (as Claude exits on it); the
    /// line itself is then answered as any line after a failed start is.
    pub(super) fn await_initialize_first(&mut self, v: &Value, now: Duration) {
        if !self.spec.await_initialize || self.phase != Phase::Idle {
            return;
        }
        let what = match v["type"].as_str() {
            Some("control_request") if v["request"]["subtype"] == "initialize" => return,
            Some("control_request") => format!(
                "a control_request {}",
                v["request"]["subtype"]
                    .as_str()
                    .unwrap_or("without subtype")
            ),
            Some("user") => "a user message".to_string(),
            Some("control_response") => "a control_response".to_string(),
            _ => return,
        };
        self.refuse_session(
            format!(
                "--await-initialize: the panel's first line must be its initialize request, not {what}; no session started"
            ),
            Some("initialize_not_first"),
            now,
        );
    }

    /// No session starts, before any handshake: the failed start's way
    /// ([`Bridge::fail_start`]), which has nothing pending to answer yet.
    fn refuse_session(&mut self, why: String, reason: Option<&'static str>, now: Duration) {
        self.fail_start(&why, reason, now);
    }

    /// Merges the `initialize`'s servers with the launch's and picks the
    /// endpoint from them (before `session/new`).
    fn take_initialize_servers(&mut self, servers: Map<String, Value>) {
        let launch = match (&self.spec.mcp_servers, &self.spec.mcp) {
            (set, _) if !set.is_empty() => set.clone(),
            (_, Some(ep)) => Map::from_iter([(ep.name.clone(), mcp_servers::server_entry(ep))]),
            (_, None) => Map::new(),
        };
        let picked = mcp_servers::pick(&mcp_servers::merge(&servers, &launch));
        for note in picked.notes {
            self.diag(format!("initialize mcpServers with --mcp-config: {note}"));
        }
        let endpoint_is_theirs = picked.endpoint.as_ref().is_some_and(|ep| {
            servers
                .get(&ep.name)
                .is_some_and(|s| launch.get(&ep.name).is_none_or(|l| l == s))
        });
        let names = picked.endpoint.iter().map(|ep| ep.name.clone()).collect();
        self.tool_calls.servers = std::sync::Arc::new(self.tool_calls.servers.with_names(names));
        (self.mcp).take_initialize(servers, picked.endpoint, endpoint_is_theirs);
    }

    /// Whether the servers an `initialize` named are applied: they are the
    /// set the session took, and the endpoint from it went to the agent's
    /// `session/new` or `session/load`.
    fn mcp_servers_applied(&self, asked: &Map<String, Value>) -> bool {
        let registered = self.phase == Phase::Ready && self.offers_http_mcp();
        self.mcp.applied(asked, registered)
    }

    /// Answers a panel `initialize`: commands, models, and the `*_applied`
    /// fields for what `ask` carried.
    pub(super) fn answer_initialize(&mut self, request_id: &RequestId, ask: &InitializeAsk) {
        fn text(t: &Option<String>) -> &str {
            t.as_deref().unwrap_or_default()
        }
        let commands = (self.session.commands.iter())
            .map(|c| CommandEntry {
                name: text(&c.name),
                description: text(&c.description),
                argument_hint: text(&c.hint),
            })
            .collect();
        let models = client::available_models(&self.session.state);
        let models = (models.iter())
            .map(|m| ModelEntry {
                value: &m.id,
                display_name: &m.name,
                resolved_model: &m.id,
            })
            .collect();
        let mut applied = Applied::default();
        for field in &ask.unapplied {
            applied.set(field, false);
        }
        if let Some(asked) = &ask.directories {
            let sent =
                self.phase == Phase::Ready && self.directories.were_sent(&self.spec.cwd, asked);
            applied.set("additional_directories_applied", sent);
        }
        if let Some(asked) = &ask.mcp_servers {
            applied.set("mcp_servers_applied", self.mcp_servers_applied(asked));
        }
        let answer = InitializeAnswer {
            commands,
            output_style: "default",
            available_output_styles: ["default"],
            models,
            applied,
        };
        let line = line_written(|text| {
            serde_json::to_writer(text, &stream_json::control_success(request_id, &answer))
        });
        self.push_typed_line(line, "control_response");
    }

    /// Takes the system prompt fields of a panel `initialize`.
    fn initialize_instructions(&mut self, given: PanelInstructions) {
        if let Err(late) = self.instructions.take_panel(given) {
            self.diag(late.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_applied_field_set_again_keeps_its_place() {
        let mut applied = Applied::default();
        for field in [
            "hooks_applied",
            "additional_directories_applied",
            "settings_applied",
        ] {
            applied.set(field, false);
        }
        applied.set("additional_directories_applied", true);
        applied.set("mcp_servers_applied", true);
        assert_eq!(
            serde_json::to_string(&applied).unwrap(),
            r#"{"hooks_applied":false,"additional_directories_applied":true,"settings_applied":false,"mcp_servers_applied":true}"#
        );
    }
}
