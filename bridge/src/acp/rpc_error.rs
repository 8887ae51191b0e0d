//! A JSON-RPC error an agent answers with, read once: its code, its
//! message and the readable part of its `data`. It is written as the text
//! the panel's user reads ([`fmt::Display`]), and tells the handshake
//! whether the agent asks to authenticate first.

use std::fmt;

use serde_json::Value;

use crate::acp::json_field::field;

/// How much of an error's `data` its text quotes.
const DETAILS_MAX: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: Option<i64>,
    pub message: Option<String>,
    /// The readable part of `data` (see [`RpcError::read`]).
    pub details: Option<String>,
    /// The error as JSON text, kept for one without a message to show.
    pub as_sent: Option<String>,
}

impl RpcError {
    /// Reads an `error` member. `data`'s readable part is a string, or its
    /// `message` / `details` / `detail` (also inside a JSON string: an
    /// `error.message` or `message` there), else the object itself.
    pub fn read(error: &Value) -> RpcError {
        let message = field(error, "message").as_str().map(str::to_string);
        RpcError {
            code: field(error, "code").as_i64(),
            details: details(field(error, "data")),
            as_sent: message.is_none().then(|| error.to_string()),
            message,
        }
    }

    /// Whether the error means "authenticate first": code -32000 (ACP's
    /// `auth_required`) or a message that says so.
    pub fn asks_to_authenticate(&self) -> bool {
        if self.code == Some(-32000) {
            return true;
        }
        let msg = self.message.as_deref().unwrap_or("").to_ascii_lowercase();
        msg.contains("auth") || msg.contains("login") || msg.contains("log in")
    }

    /// Whether the message is made of generic words only ("Internal
    /// error", "Server error", "Internal error: Agent error"), which say
    /// nothing the panel's user can act on.
    fn is_generic(&self) -> bool {
        self.message.as_deref().is_some_and(|m| {
            m.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .all(|w| {
                    ["internal", "server", "unknown", "agent", "error"]
                        .iter()
                        .any(|g| w.eq_ignore_ascii_case(g))
                })
        })
    }
}

/// The error as text: its message and code, plus the details in its `data`
/// when the message alone is generic (Factory Droid's reason is in `data`);
/// an error without a message as its JSON.
impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, &self.message) {
            (Some(c), Some(m)) => write!(f, "{m} (code {c})")?,
            (None, Some(m)) => f.write_str(m)?,
            _ => return f.write_str(self.as_sent.as_deref().unwrap_or("")),
        }
        match self.details.as_deref().filter(|_| self.is_generic()) {
            Some(details) => write!(f, ": {}", crate::shorten::shorten(details, DETAILS_MAX)),
            None => Ok(()),
        }
    }
}

fn details(data: &Value) -> Option<String> {
    let text = match data {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        Value::Object(map) if map.is_empty() => return None,
        other => ["message", "details", "detail"]
            .iter()
            .find_map(|k| other[*k].as_str().map(str::to_string))
            .unwrap_or_else(|| other.to_string()),
    };
    let nested = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        [&v["error"]["message"], &v["message"]]
            .into_iter()
            .find_map(|m| m.as_str().map(str::to_string))
    });
    let text = nested.unwrap_or(text);
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_error_reads_as_its_message_and_code_with_details_only_when_the_message_is_generic() {
        let cases = [
            (
                json!({"code": -32603, "message": "boom"}),
                "boom (code -32603)",
            ),
            (json!({"message": "boom", "data": "why"}), "boom"),
            (
                json!({"code": -32603, "message": "Internal error: Agent error", "data": {"message": "quota"}}),
                "Internal error: Agent error (code -32603): quota",
            ),
            (
                json!({"message": "Internal error", "data": "{\"error\":{\"message\":\"nested\"}}"}),
                "Internal error: nested",
            ),
            (
                json!({"message": "Internal error", "data": {}}),
                "Internal error",
            ),
            (json!({"code": -32000}), r#"{"code":-32000}"#),
            (json!("text"), r#""text""#),
        ];
        for (error, want) in cases {
            assert_eq!(RpcError::read(&error).to_string(), want, "{error}");
        }
    }

    #[test]
    fn an_auth_error_is_its_code_or_a_message_that_says_so() {
        let asks = |e: Value| RpcError::read(&e).asks_to_authenticate();
        assert!(asks(json!({"code": -32000, "message": "x"})));
        assert!(asks(json!({"code": 1, "message": "Please log in first"})));
        assert!(asks(json!({"message": "Authentication required"})));
        assert!(!asks(json!({"code": -32603, "message": "boom"})));
    }
}
