//! Which schema definition a JSON-RPC frame must match, and the check
//! itself. Requests and notifications are named by their method; a response
//! by the method of the request it answers, so ids are tracked per sender
//! over one conversation (one agent process).

use std::collections::HashMap;

use serde_json::Value;

use super::schema::{AcpSchema, Handler, Kind, Violation};

/// Who sent a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sender {
    /// The ACP client: the recorder's client, or the bridge in a replay.
    Client,
    Agent,
}

impl Sender {
    pub fn label(self) -> &'static str {
        match self {
            Sender::Client => "client",
            Sender::Agent => "agent",
        }
    }
    fn other(self) -> Sender {
        match self {
            Sender::Client => Sender::Agent,
            Sender::Agent => Sender::Client,
        }
    }
    fn handles(self, handler: Handler) -> bool {
        matches!(
            (self, handler),
            (_, Handler::Either)
                | (Sender::Client, Handler::Client)
                | (Sender::Agent, Handler::Agent)
        )
    }
}

/// What the schema says about one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Invalid(Vec<Violation>),
    /// The schema does not cover it (an extension, an unstable or unknown
    /// method, a response to such a request): listed, never an error.
    Outside(String),
}

/// One frame checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameCheck {
    pub sender: Sender,
    /// The method, a response labelled with its request's (`initialize
    /// result`); `None` when the frame names none.
    pub method: Option<String>,
    pub verdict: Verdict,
}

/// Checks the frames of one conversation in order.
#[derive(Debug, Default)]
pub struct Classifier {
    /// (sender of the request, its id as JSON text) -> method.
    pending: HashMap<(Sender, String), String>,
}

fn invalid(message: impl Into<String>) -> Verdict {
    Verdict::Invalid(vec![Violation {
        pointer: String::new(),
        message: message.into(),
    }])
}

impl Classifier {
    /// Takes `raw`, one line `sender` wrote, for its request id alone,
    /// unchecked: a replay's agent frames are validated with the recording,
    /// and here they only pair the bridge's responses with their requests.
    pub fn note(&mut self, sender: Sender, raw: &str) {
        #[derive(serde::Deserialize)]
        struct Head {
            #[serde(default)]
            id: Value,
            method: Option<String>,
        }
        let Ok(head) = serde_json::from_str::<Head>(raw) else {
            return;
        };
        if head.id.is_null() {
            return;
        }
        let id = head.id.to_string();
        match head.method {
            Some(method) => {
                self.pending.insert((sender, id), method);
            }
            None => {
                self.pending.remove(&(sender.other(), id));
            }
        }
    }

    /// Checks `raw`, one line `sender` wrote.
    pub fn check(&mut self, schema: &AcpSchema, sender: Sender, raw: &str) -> FrameCheck {
        let (method, verdict) = match serde_json::from_str::<Value>(raw) {
            Err(e) => (None, invalid(format!("not JSON: {e}"))),
            Ok(frame) => self.check_value(schema, sender, &frame),
        };
        FrameCheck {
            sender,
            method,
            verdict,
        }
    }

    fn check_value(
        &mut self,
        schema: &AcpSchema,
        sender: Sender,
        frame: &Value,
    ) -> (Option<String>, Verdict) {
        let Some(obj) = frame.as_object() else {
            return (None, invalid("not a JSON-RPC object"));
        };
        let id = obj
            .get("id")
            .filter(|id| !id.is_null())
            .map(Value::to_string);
        if let Some(method) = obj.get("method").and_then(Value::as_str) {
            let kind = match &id {
                Some(id) => {
                    self.pending
                        .insert((sender, id.clone()), method.to_string());
                    Kind::Request
                }
                None => Kind::Notification,
            };
            let verdict = match schema.handler(method) {
                None => Verdict::Outside("a method the schema does not define".into()),
                Some(h) if !sender.other().handles(h) => Verdict::Outside(format!(
                    "a method the {} handles, sent by the {}",
                    sender.label(),
                    sender.label()
                )),
                Some(_) => match schema.definition(method, kind) {
                    None => Verdict::Outside(format!("no {kind:?} of this method in the schema")),
                    Some(def) => {
                        let params = obj.get("params").unwrap_or(&Value::Null);
                        validated(schema.validate(def, params, "/params"))
                    }
                },
            };
            return (Some(method.to_string()), verdict);
        }
        let Some(id) = id else {
            return (
                None,
                invalid("neither a request, a notification nor a response"),
            );
        };
        let Some(method) = self.pending.remove(&(sender.other(), id)) else {
            return (
                None,
                Verdict::Outside("a response to no request seen".into()),
            );
        };
        let (label, verdict) = if let Some(error) = obj.get("error") {
            let verdict = if schema.handler(&method).is_none() {
                Verdict::Outside("the response to a method outside the schema".into())
            } else {
                validated(schema.validate("Error", error, "/error"))
            };
            (format!("{method} error"), verdict)
        } else {
            let result = obj.get("result").unwrap_or(&Value::Null);
            let verdict = match schema.definition(&method, Kind::Response) {
                None => Verdict::Outside("the response to a method outside the schema".into()),
                Some(def) => validated(schema.validate(def, result, "/result")),
            };
            (format!("{method} result"), verdict)
        };
        (Some(label), verdict)
    }
}

fn validated(result: Result<Vec<Violation>, String>) -> Verdict {
    match result {
        Ok(v) if v.is_empty() => Verdict::Valid,
        Ok(v) => Verdict::Invalid(v),
        Err(e) => invalid(e),
    }
}
