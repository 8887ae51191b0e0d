//! A panel's `control_request`, read once: its `request_id` and what it
//! asks, by subtype. A subtype is a variant, so a new one is one place here
//! and the compiler names where the core must say what it does with it; a
//! subtype the bridge does not serve is [`Ask::Unsupported`], answered
//! `unsupported_request` naming it. A request whose id or fields have the
//! wrong type is [`Refused`], with the reason its error answer gives.
//!
//! The control lines the bridge writes are typed here too: the
//! `control_response` answering one, and the `can_use_tool` request.

use serde::Serialize;
use serde_json::Value;

use crate::acp::json_field::json_kind;
pub use crate::acp::message::RequestId;

/// A control request the bridge reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlRequest<'a> {
    pub request_id: RequestId,
    pub ask: Ask<'a>,
}

/// What a control request asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask<'a> {
    /// `initialize`: the request itself, read by the session's setup.
    Initialize(&'a Value),
    Interrupt,
    SetPermissionMode {
        mode: &'a str,
    },
    /// `set_model`; `None` (the Python SDK's `set_model(None)`) is the
    /// default model.
    SetModel {
        model: Option<&'a str>,
    },
    /// `set_max_thinking_tokens`; `None` is the default budget.
    SetMaxThinkingTokens {
        tokens: Option<u64>,
    },
    EndSession,
    McpStatus,
    GetContextUsage,
    GetUsage,
    /// A subtype the bridge does not serve (`""` when there is none).
    Unsupported(&'a str),
}

/// A control request answered with an error at once: `why` says which
/// field has the wrong type.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The id as sent, echoed whatever its type.
    pub request_id: RequestId,
    pub why: String,
    /// The id itself is wrong: the diagnostic shows the whole line.
    pub bad_id: bool,
}

impl<'a> ControlRequest<'a> {
    /// Reads a `control_request` line (an object).
    pub fn read(line: &'a Value) -> Result<ControlRequest<'a>, Refused> {
        let raw_id = line.get("request_id").cloned().unwrap_or(Value::Null);
        if !matches!(raw_id, Value::String(_) | Value::Number(_)) {
            let why = format!(
                "control_request request_id is {}, not a string or a number",
                json_kind(&raw_id)
            );
            return Err(Refused {
                request_id: raw_id.into(),
                why,
                bad_id: true,
            });
        }
        let request_id = RequestId::from(raw_id);
        let refused = |why: String| Refused {
            request_id: request_id.clone(),
            why,
            bad_id: false,
        };
        let req = &line["request"];
        let subtype = match req.get("subtype") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                let kind = json_kind(other);
                return Err(refused(format!(
                    "control_request request.subtype is {kind}, not a string"
                )));
            }
            None => "",
        };
        // a field of the wrong type: `request.<field> is <kind>, not <want>`
        let wrong = |field: &str, want: &str| {
            let kind = json_kind(req.get(field).unwrap_or(&Value::Null));
            refused(format!("{subtype} request.{field} is {kind}, not {want}"))
        };
        let ask = match subtype {
            "initialize" => Ask::Initialize(req),
            "interrupt" => Ask::Interrupt,
            "set_permission_mode" => match req.get("mode") {
                Some(Value::String(mode)) => Ask::SetPermissionMode { mode },
                _ => return Err(wrong("mode", "a string")),
            },
            "set_model" => match req.get("model") {
                None | Some(Value::Null) => Ask::SetModel { model: None },
                Some(Value::String(model)) => Ask::SetModel { model: Some(model) },
                _ => return Err(wrong("model", "a string")),
            },
            "set_max_thinking_tokens" => match req.get("max_thinking_tokens") {
                None | Some(Value::Null) => Ask::SetMaxThinkingTokens { tokens: None },
                Some(n) if n.as_u64().is_some() => Ask::SetMaxThinkingTokens { tokens: n.as_u64() },
                _ => return Err(wrong("max_thinking_tokens", "a number or null")),
            },
            "end_session" => Ask::EndSession,
            "mcp_status" => Ask::McpStatus,
            "get_context_usage" => Ask::GetContextUsage,
            "get_usage" => Ask::GetUsage,
            other => Ask::Unsupported(other),
        };
        Ok(ControlRequest { request_id, ask })
    }
}

impl Ask<'_> {
    /// Whether it changes the agent's session (it waits for the handshake,
    /// and fails without a session).
    pub fn changes_the_session(&self) -> bool {
        matches!(
            self,
            Ask::SetPermissionMode { .. } | Ask::SetModel { .. } | Ask::SetMaxThinkingTokens { .. }
        )
    }
}

/// A `control_response` line: the answer to a panel `control_request`,
/// its `request_id` echoed as the panel sent it (a string or a number). It
/// carries no `session_id`, so the core writes it unstamped.
#[derive(Debug, Serialize)]
pub struct ControlResponse<'a, B> {
    #[serde(rename = "type")]
    kind: ControlResponseType,
    response: ControlAnswer<'a, B>,
}

/// The constant `type` of a [`ControlResponse`].
#[derive(Debug, Serialize)]
enum ControlResponseType {
    #[serde(rename = "control_response")]
    ControlResponse,
}

#[derive(Debug, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
enum ControlAnswer<'a, B> {
    Success {
        request_id: &'a RequestId,
        response: B,
    },
    Error {
        request_id: &'a RequestId,
        error: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_code: Option<&'a str>,
    },
}

/// A success answer to a panel `control_request`, carrying `response`.
pub fn control_success<B: Serialize>(
    request_id: &RequestId,
    response: B,
) -> ControlResponse<'_, B> {
    ControlResponse {
        kind: ControlResponseType::ControlResponse,
        response: ControlAnswer::Success {
            request_id,
            response,
        },
    }
}

/// The body of a success answer that says nothing more: `{}`.
#[derive(Debug, Serialize)]
pub struct Done {}

/// An error answer to a panel `control_request`.
pub fn control_error<'a>(
    request_id: &'a RequestId,
    error: &'a str,
    error_code: Option<&'a str>,
) -> ControlResponse<'a, ()> {
    ControlResponse {
        kind: ControlResponseType::ControlResponse,
        response: ControlAnswer::Error {
            request_id,
            error,
            error_code,
        },
    }
}

/// A `can_use_tool` permission request to the panel (a line with no stamps).
#[derive(Debug, Serialize)]
pub struct CanUseTool<'a, I> {
    #[serde(rename = "type")]
    kind: &'static str,
    request_id: &'a str,
    request: CanUseToolRequest<'a, I>,
}

#[derive(Debug, Serialize)]
struct CanUseToolRequest<'a, I> {
    subtype: &'static str,
    tool_name: &'a str,
    input: &'a I,
    /// The `addRules` suggestion that makes the panel's "always allow"
    /// menu work, when the agent offers to allow always.
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_suggestions: Option<[AllowRule<'a>; 1]>,
    tool_use_id: &'a str,
    /// Why the agent asks, as Claude's own request carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct AllowRule<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    rules: [ToolRule<'a>; 1],
    behavior: &'static str,
    destination: &'static str,
}

#[derive(Debug, Serialize)]
struct ToolRule<'a> {
    #[serde(rename = "toolName")]
    tool_name: &'a str,
}

/// What a `can_use_tool` request asks about.
pub struct ToolAsk<'a, I> {
    pub tool_name: &'a str,
    pub input: &'a I,
    pub tool_use_id: &'a str,
    /// The agent offers to allow the tool always.
    pub allow_always: bool,
    pub description: Option<&'a str>,
}

pub fn can_use_tool<'a, I: Serialize>(
    request_id: &'a str,
    ask: ToolAsk<'a, I>,
) -> CanUseTool<'a, I> {
    let allow_always = AllowRule {
        kind: "addRules",
        rules: [ToolRule {
            tool_name: ask.tool_name,
        }],
        behavior: "allow",
        destination: "session",
    };
    CanUseTool {
        kind: "control_request",
        request_id,
        request: CanUseToolRequest {
            subtype: "can_use_tool",
            tool_name: ask.tool_name,
            input: ask.input,
            permission_suggestions: ask.allow_always.then_some([allow_always]),
            tool_use_id: ask.tool_use_id,
            description: ask.description,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(req: Value) -> Value {
        json!({"type": "control_request", "request_id": "r1", "request": req})
    }

    #[test]
    fn a_control_request_reads_as_its_subtype() {
        let cases = [
            (json!({"subtype": "interrupt"}), Ask::Interrupt),
            (
                json!({"subtype": "set_model", "model": null}),
                Ask::SetModel { model: None },
            ),
            (
                json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 8000}),
                Ask::SetMaxThinkingTokens { tokens: Some(8000) },
            ),
            (json!({}), Ask::Unsupported("")),
            (
                json!({"subtype": "rewind_files"}),
                Ask::Unsupported("rewind_files"),
            ),
        ];
        for (req, want) in cases {
            let line = request(req);
            let read = ControlRequest::read(&line).unwrap();
            assert_eq!(read.ask, want);
            assert_eq!(read.request_id, RequestId::Text("r1".into()));
        }
    }

    #[test]
    fn a_control_request_of_the_wrong_types_is_refused_naming_the_field() {
        let cases = [
            (
                request(json!({"subtype": "set_permission_mode", "mode": 3})),
                "set_permission_mode request.mode is a number, not a string",
                false,
            ),
            (
                request(json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": -1})),
                "set_max_thinking_tokens request.max_thinking_tokens is a number, not a number or null",
                false,
            ),
            (
                request(json!({"subtype": ["interrupt"]})),
                "control_request request.subtype is an array, not a string",
                false,
            ),
            (
                json!({"type": "control_request", "request_id": {"a": 1}, "request": {}}),
                "control_request request_id is an object, not a string or a number",
                true,
            ),
        ];
        for (line, why, bad_id) in cases {
            let refused = ControlRequest::read(&line).unwrap_err();
            assert_eq!((refused.why.as_str(), refused.bad_id), (why, bad_id));
            assert_eq!(
                serde_json::to_value(&refused.request_id).unwrap(),
                line["request_id"]
            );
        }
    }
}
