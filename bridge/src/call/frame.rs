//! The frames of a tool call, read without a `Value` tree for the update: a
//! `session/update` notification whose update is a `tool_call` or
//! `tool_call_update`. The update's keys go straight into the call's own
//! fields ([`OwnFields`]); only each field's value is read as JSON first. A burst of tool calls would otherwise hash and
//! allocate every key of every frame into a map that merging takes apart.
//!
//! Only that exact shape is a call frame here. Anything else (another
//! method or kind, an `id`, a `toolCallId`, `kind` or `status` that is no
//! string or none, a duplicate key, an array where an object belongs, very many keys) is
//! `None`, and the caller reads the line the generic `Value` way, which owns
//! every tolerance rule; both ways give the call the same fields. A failed
//! typed read costs an error value, so a line whose start does not name a
//! call kind is not tried at all.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::acp::chunk_frame::Str;
use crate::acp::tool_call::{CallStatus, ToolKind};
use crate::acp::update_frame::{Notification, Object};
use crate::acp::update_kind::CallKind;
use crate::call::fields::OwnFields;

/// A `tool_call` or `tool_call_update` frame.
#[derive(Debug, PartialEq)]
pub(crate) struct CallFrame<'a> {
    pub kind: CallKind,
    pub tool_call_id: Cow<'a, str>,
    /// Every other key of the update, in its order.
    pub fields: OwnFields,
}

/// How far into a line the call kind is looked for before the typed read
/// is tried (agents put `sessionUpdate` first or after a short id).
const KIND_WINDOW: usize = 1024;

/// An update of more keys than this is read the generic way: a key is
/// checked against those before it (a duplicate is left to that way).
const MAX_KEYS: usize = 32;

/// Whether the line's start names a call kind (`"tool_call"` or
/// `"tool_call_update"`).
fn names_a_call_kind(line: &str) -> bool {
    static KIND: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"tool_call"));
    let start = &line.as_bytes()[..line.len().min(KIND_WINDOW)];
    KIND.find_iter(start).any(|at| {
        let rest = &start[at + "\"tool_call".len()..];
        rest.starts_with(b"\"") || rest.starts_with(b"_update\"")
    })
}

/// The line as a call frame, or `None` when it is anything else.
pub(crate) fn parse(line: &str) -> Option<CallFrame<'_>> {
    if !names_a_call_kind(line) {
        return None;
    }
    // the plain envelope is skipped; where its text is no update (a key
    // after it), the envelope is read
    let plain =
        crate::acp::update_frame::plain_update(line).and_then(|u| serde_json::from_str(u).ok());
    let Update { kind, id, fields } = match plain {
        Some(update) => update,
        None => {
            let Object(frame) =
                serde_json::from_str::<Object<Notification<Params<'_>>>>(line).ok()?;
            frame.params.0.update
        }
    };
    Some(CallFrame {
        kind: kind?,
        tool_call_id: id?,
        fields,
    })
}

#[derive(serde::Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    update: Update<'a>,
}

/// The update's keys, read in one pass into the call's fields.
struct Update<'a> {
    kind: Option<CallKind>,
    id: Option<Cow<'a, str>>,
    fields: OwnFields,
}

impl<'de: 'a, 'a> Deserialize<'de> for Update<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct UpdateVisitor<'a>(PhantomData<&'a str>);
        impl<'de: 'a, 'a> Visitor<'de> for UpdateVisitor<'a> {
            type Value = Update<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tool call update object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Update<'a>, A::Error> {
                let mut update = Update {
                    kind: None,
                    id: None,
                    fields: OwnFields::new(),
                };
                let mut keys = 0;
                let duplicate = || de::Error::custom("a duplicate key");
                while let Some(Str(name)) = map.next_key::<Str<'a>>()? {
                    match name.as_ref() {
                        "sessionUpdate" if update.kind.is_none() => {
                            update.kind = Some(map.next_value()?);
                        }
                        "toolCallId" if update.id.is_none() => {
                            update.id = Some(map.next_value::<Str<'a>>()?.0);
                        }
                        "sessionUpdate" | "toolCallId" => return Err(duplicate()),
                        other => {
                            if update.fields.has(other) {
                                return Err(duplicate());
                            }
                            keys += 1;
                            if keys > MAX_KEYS {
                                return Err(de::Error::custom("too many keys"));
                            }
                            match other {
                                // the vocabulary's words are read where they lie
                                "kind" => {
                                    let Str(kind) = map.next_value()?;
                                    update.fields.kind = Some(ToolKind::read(&kind));
                                }
                                "status" => {
                                    let Str(status) = map.next_value()?;
                                    update.fields.status = Some(CallStatus::read(&status));
                                }
                                _ => update.fields.set(other, map.next_value::<Value>()?),
                            }
                        }
                    }
                }
                Ok(update)
            }
        }
        d.deserialize_map(UpdateVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the generic path gives the call: the update's keys but the
    /// kind and id, and the id.
    fn generic(line: &str) -> Option<(String, String, OwnFields)> {
        let mut u = crate::acp::update_frame::parse(line)?;
        let kind = u["sessionUpdate"].as_str()?.to_string();
        let id = u["toolCallId"].as_str()?.to_string();
        let map = u.as_object_mut()?;
        map.shift_remove("sessionUpdate");
        map.shift_remove("toolCallId");
        Some((kind, id, OwnFields::from(u)))
    }

    fn typed(line: &str) -> Option<(String, String, OwnFields)> {
        parse(line).map(|f| {
            (
                f.kind.as_str().to_string(),
                f.tool_call_id.into_owned(),
                f.fields,
            )
        })
    }

    #[test]
    fn a_call_frame_gives_the_fields_the_generic_path_gives() {
        let frame = |update: Value| {
            json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":update}})
                .to_string()
        };
        let lines = [
            frame(json!({"sessionUpdate":"tool_call","toolCallId":"c1","title":"cat a","kind":"execute",
                "status":"pending","rawInput":{"command":["bash","-lc","cat a"]},"x-new":{"k":[1]}})),
            frame(json!({"toolCallId":"c\"1\u{e9}","status":"in_progress","sessionUpdate":"tool_call_update"})),
            frame(json!({"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed",
                "content":[{"type":"content","content":{"type":"text","text":"a\nb"}}],"rawOutput":null,"_meta":{}})),
            r#"{"params":{"update":{"sessionUpdate":"tool_call","toolCallId":"c","ti\u0074le":"t"}},"id":null,"method":"session/update"}"#.to_string(),
            // a key after the update: the envelope is read, not skipped
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed"},"_meta":{"x":1}}}"#.to_string(),
        ];
        for line in &lines {
            let want = generic(line);
            assert!(want.is_some(), "{line}");
            assert_eq!(typed(line), want, "{line}");
        }
    }

    #[test]
    fn any_other_shape_is_left_to_the_generic_path() {
        let with = |update: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
            )
        };
        let many: String = (0..=MAX_KEYS).map(|i| format!(r#","k{i}":{i}"#)).collect();
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"c"}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"session/request_permission","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"c"}}}"#.to_string(),
            with(r#"{"sessionUpdate":"tool_call_updated","toolCallId":"c"}"#),
            with(r#"{"sessionUpdate":"plan","entries":[],"note":"tool_call"}"#),
            with(r#"{"sessionUpdate":"tool_call","toolCallId":7}"#),
            with(r#"{"sessionUpdate":"tool_call","toolCallId":null}"#),
            with(r#"{"sessionUpdate":"tool_call"}"#),
            with(r#"{"sessionUpdate":"tool_call","toolCallId":"c","status":"a","status":"b"}"#),
            with(r#"{"sessionUpdate":"tool_call","toolCallId":"c","toolCallId":"d"}"#),
            with(r#"{"sessionUpdate":"tool_call","sessionUpdate":"tool_call_update","toolCallId":"c"}"#),
            with(r#"["sessionUpdate","tool_call"]"#),
            with(&format!(r#"{{"sessionUpdate":"tool_call","toolCallId":"c"{many}}}"#)),
            format!("{} x", with(r#"{"sessionUpdate":"tool_call","toolCallId":"c"}"#)),
        ];
        for line in &lines {
            assert_eq!(parse(line), None, "{line}");
        }
        assert!(parse(&with(r#"{"sessionUpdate":"tool_call","toolCallId":"c"}"#)).is_some());
    }
}
