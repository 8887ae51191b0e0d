//! What an ACP client sends, typed: each request is built once as a
//! [`Request`] and spelled by the revision the agent selected only when it
//! is written ([`Request::line`]). The revision's rules (v2's
//! `auth/login`, `session/resume`, a config value's `type`) are rules on
//! this one model, written once for the bridge and the recorder.
//!
//! Keys go out in the order ACP's examples use, which is the order the
//! goldens and recordings pin.

pub use crate::acp::message::RequestId;
use crate::acp::revision::{CLIENT_NAME, Revision};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// A request to the agent, before a revision spells it.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `initialize`, offering `offering` (which fixes its own spelling).
    Initialize { offering: Revision },
    /// `authenticate` (v2: `auth/login`).
    Authenticate { method_id: String },
    /// `session/new`.
    NewSession(SessionSetup),
    /// `session/load` (v2: `session/resume`, the whole history replayed).
    LoadSession {
        session_id: String,
        setup: SessionSetup,
    },
    /// `session/prompt`.
    Prompt {
        session_id: String,
        prompt: Vec<ContentBlock>,
    },
    /// `session/set_mode`.
    SetMode { session_id: String, mode_id: String },
    /// `session/set_config_option`.
    SetConfigOption {
        session_id: String,
        config_id: String,
        value: ConfigValue,
    },
    /// `session/set_model`.
    SetModel {
        session_id: String,
        model_id: String,
    },
}

/// A config option's new value: one of its listed values, or a switch's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigValue {
    Id(String),
    Boolean(bool),
}

/// What `session/new` and `session/load` share.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionSetup {
    pub cwd: String,
    pub mcp_servers: Vec<McpServer>,
    pub system_prompt: Option<SystemPrompt>,
    /// Workspace roots beside `cwd`: `None` leaves the key out.
    pub additional_directories: Option<Vec<String>>,
}

/// An MCP server offered to the agent over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServer {
    #[serde(rename = "type")]
    pub transport: &'static str,
    pub name: String,
    pub url: String,
    pub headers: Vec<HttpHeader>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HttpHeader {
    pub name: &'static str,
    pub value: String,
}

/// A session call's `systemPrompt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SystemPrompt {
    /// `override` or `append`.
    pub mode: &'static str,
    pub content: Vec<ContentBlock>,
}

/// A content block the client sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        #[serde(rename = "mimeType")]
        mime_type: String,
        data: String,
    },
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text { text: text.into() }
    }
}

/// A notification to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notification {
    /// `session/cancel`.
    Cancel { session_id: String },
}

/// The answer to a `session/request_permission`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionAnswer {
    pub outcome: PermissionOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    Selected {
        #[serde(rename = "optionId")]
        option_id: String,
    },
    Cancelled,
}

impl PermissionAnswer {
    pub fn selected(option_id: impl Into<String>) -> PermissionAnswer {
        PermissionAnswer {
            outcome: PermissionOutcome::Selected {
                option_id: option_id.into(),
            },
        }
    }

    pub fn cancelled() -> PermissionAnswer {
        PermissionAnswer {
            outcome: PermissionOutcome::Cancelled,
        }
    }
}

impl Request {
    /// The method this revision calls it.
    pub fn method(&self, revision: Revision) -> &'static str {
        let v2 = revision == Revision::V2;
        match self {
            Request::Initialize { .. } => "initialize",
            Request::Authenticate { .. } if v2 => "auth/login",
            Request::Authenticate { .. } => "authenticate",
            Request::NewSession(_) => "session/new",
            Request::LoadSession { .. } if v2 => "session/resume",
            Request::LoadSession { .. } => "session/load",
            Request::Prompt { .. } => "session/prompt",
            Request::SetMode { .. } => "session/set_mode",
            Request::SetConfigOption { .. } => "session/set_config_option",
            Request::SetModel { .. } => "session/set_model",
        }
    }

    /// Its params as this revision spells them.
    pub fn params(&self, revision: Revision) -> Params<'_> {
        Params {
            request: self,
            revision,
        }
    }

    /// The whole JSON-RPC line, with the client's numeric `id`.
    pub fn line(&self, id: u64, revision: Revision) -> String {
        #[derive(Serialize)]
        struct Rpc<'a> {
            jsonrpc: &'static str,
            id: u64,
            method: &'static str,
            params: Params<'a>,
        }
        to_line(&Rpc {
            jsonrpc: "2.0",
            id,
            method: self.method(revision),
            params: self.params(revision),
        })
    }
}

impl Notification {
    pub fn line(&self) -> String {
        #[derive(Serialize)]
        struct Rpc<'a> {
            jsonrpc: &'static str,
            method: &'static str,
            params: SessionOnly<'a>,
        }
        #[derive(Serialize)]
        struct SessionOnly<'a> {
            #[serde(rename = "sessionId")]
            session_id: &'a str,
        }
        let Notification::Cancel { session_id } = self;
        to_line(&Rpc {
            jsonrpc: "2.0",
            method: "session/cancel",
            params: SessionOnly { session_id },
        })
    }
}

/// A success answer to an agent's request; `id` is echoed verbatim (agents
/// use numbers or strings).
pub fn result_line(id: &RequestId, result: &impl Serialize) -> String {
    #[derive(Serialize)]
    struct Rpc<'a, R> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        result: &'a R,
    }
    to_line(&Rpc {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// An error answer to an agent's request; `id` is echoed verbatim.
pub fn error_line(id: &RequestId, code: i64, message: &str) -> String {
    #[derive(Serialize)]
    struct Rpc<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        error: RpcError<'a>,
    }
    #[derive(Serialize)]
    struct RpcError<'a> {
        code: i64,
        message: &'a str,
    }
    to_line(&Rpc {
        jsonrpc: "2.0",
        id,
        error: RpcError { code, message },
    })
}

/// Every value here is made of strings, numbers and maps with string keys,
/// which serde_json always writes.
fn to_line(v: &impl Serialize) -> String {
    serde_json::to_string(v).expect("a request of strings, numbers and maps serialises")
}

/// A request's params under one revision (see [`Request::params`]).
pub struct Params<'a> {
    request: &'a Request,
    revision: Revision,
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v2 = self.revision == Revision::V2;
        let mut m = s.serialize_map(None)?;
        match self.request {
            Request::Initialize { offering } => initialize(&mut m, *offering)?,
            Request::Authenticate { method_id } => m.serialize_entry("methodId", method_id)?,
            Request::NewSession(setup) => session_setup(&mut m, setup)?,
            Request::LoadSession { session_id, setup } => {
                m.serialize_entry("sessionId", session_id)?;
                session_setup(&mut m, setup)?;
                if v2 {
                    m.serialize_entry("replayFrom", &ReplayFromStart { kind: "start" })?;
                }
            }
            Request::Prompt { session_id, prompt } => {
                m.serialize_entry("sessionId", session_id)?;
                m.serialize_entry("prompt", prompt)?;
            }
            Request::SetMode {
                session_id,
                mode_id,
            } => {
                m.serialize_entry("sessionId", session_id)?;
                m.serialize_entry("modeId", mode_id)?;
            }
            Request::SetConfigOption {
                session_id,
                config_id,
                value,
            } => {
                m.serialize_entry("sessionId", session_id)?;
                m.serialize_entry("configId", config_id)?;
                match value {
                    ConfigValue::Id(value) => {
                        m.serialize_entry("value", value)?;
                        // v2 tags a listed value
                        if v2 {
                            m.serialize_entry("type", "id")?;
                        }
                    }
                    ConfigValue::Boolean(value) => {
                        m.serialize_entry("type", "boolean")?;
                        m.serialize_entry("value", value)?;
                    }
                }
            }
            Request::SetModel {
                session_id,
                model_id,
            } => {
                m.serialize_entry("sessionId", session_id)?;
                m.serialize_entry("modelId", model_id)?;
            }
        }
        m.end()
    }
}

#[derive(Serialize)]
struct ReplayFromStart {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// What a client's `initialize` declares it can do, under the key its
/// revision names it by: v1 declares no fs and no terminal
/// (`clientCapabilities`), so agents must not ask for files or commands;
/// v2 declares nothing (`capabilities`), having no `fs/*` or `terminal/*`
/// methods to refuse.
pub fn declared_capabilities(offering: Revision) -> (&'static str, DeclaredCapabilities) {
    match offering {
        Revision::V1 => (
            "clientCapabilities",
            DeclaredCapabilities::V1 {
                fs: Fs {
                    read_text_file: false,
                    write_text_file: false,
                },
                terminal: false,
            },
        ),
        Revision::V2 => ("capabilities", DeclaredCapabilities::V2 {}),
    }
}

/// See [`declared_capabilities`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum DeclaredCapabilities {
    V1 { fs: Fs, terminal: bool },
    V2 {},
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fs {
    read_text_file: bool,
    write_text_file: bool,
}

/// `initialize` params offering `offering`; v2 also names the client
/// (`info`, required).
fn initialize<M: SerializeMap>(m: &mut M, offering: Revision) -> Result<(), M::Error> {
    #[derive(Serialize)]
    struct Info {
        name: &'static str,
        version: &'static str,
    }
    m.serialize_entry("protocolVersion", &offering.number())?;
    if offering == Revision::V2 {
        m.serialize_entry(
            "info",
            &Info {
                name: CLIENT_NAME,
                version: env!("CARGO_PKG_VERSION"),
            },
        )?;
    }
    let (key, declared) = declared_capabilities(offering);
    m.serialize_entry(key, &declared)
}

fn session_setup<M: SerializeMap>(m: &mut M, setup: &SessionSetup) -> Result<(), M::Error> {
    m.serialize_entry("cwd", &setup.cwd)?;
    m.serialize_entry("mcpServers", &setup.mcp_servers)?;
    if let Some(sp) = &setup.system_prompt {
        m.serialize_entry("systemPrompt", sp)?;
    }
    if let Some(dirs) = &setup.additional_directories {
        m.serialize_entry("additionalDirectories", dirs)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> SessionSetup {
        SessionSetup {
            cwd: "/w".into(),
            mcp_servers: Vec::new(),
            system_prompt: None,
            additional_directories: Some(vec!["/x".into()]),
        }
    }

    #[test]
    fn each_revision_spells_a_request_by_its_rules() {
        let sid = || "s".to_string();
        // (request, v1 line, v2 line)
        let cases = [
            (
                Request::Authenticate {
                    method_id: "key".into(),
                },
                r#"{"jsonrpc":"2.0","id":3,"method":"authenticate","params":{"methodId":"key"}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"auth/login","params":{"methodId":"key"}}"#,
            ),
            (
                Request::LoadSession {
                    session_id: sid(),
                    setup: setup(),
                },
                r#"{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s","cwd":"/w","mcpServers":[],"additionalDirectories":["/x"]}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"session/resume","params":{"sessionId":"s","cwd":"/w","mcpServers":[],"additionalDirectories":["/x"],"replayFrom":{"type":"start"}}}"#,
            ),
            (
                Request::SetConfigOption {
                    session_id: sid(),
                    config_id: "mode".into(),
                    value: ConfigValue::Id("plan".into()),
                },
                r#"{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s","configId":"mode","value":"plan"}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s","configId":"mode","value":"plan","type":"id"}}"#,
            ),
            (
                Request::Prompt {
                    session_id: sid(),
                    prompt: vec![ContentBlock::text("hi")],
                },
                r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#,
            ),
        ];
        for (request, v1, v2) in cases {
            assert_eq!(request.line(3, Revision::V1), v1);
            assert_eq!(request.line(3, Revision::V2), v2);
        }
    }

    #[test]
    fn initialize_spells_the_revision_it_offers() {
        let v1 = Request::Initialize {
            offering: Revision::V1,
        };
        assert_eq!(
            v1.line(0, Revision::V2),
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}"#
        );
        let v2 = Request::Initialize {
            offering: Revision::V2,
        };
        let line = v2.line(0, Revision::V1);
        assert!(
            line.starts_with(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"acp-bridge","version":"#),
            "{line}"
        );
        assert!(line.ends_with(r#""capabilities":{}}}"#), "{line}");
    }
}
