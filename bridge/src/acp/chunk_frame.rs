//! The frame an agent sends most, read without a `Value` tree: a
//! `session/update` notification carrying an `agent_message_chunk` or
//! `agent_thought_chunk` of non-empty text. Its fields are read borrowed
//! from the line into typed structs; unknown fields are skipped unread.
//!
//! Only that exact shape is a chunk frame here. Anything else (another
//! method or kind, an `id`, a field of another type, a missing one, a
//! duplicate key, an array where an object belongs, non-text content, empty
//! text) is `None`, and the caller reads the line the generic `Value` way,
//! which owns every tolerance rule; so both ways behave the same. A failed
//! typed read costs an error value (formatted, its position computed), so a
//! line whose start does not name a chunk kind is not tried at all.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::acp::update_frame::{Notification, Object, named_near_start};

/// A text or thought chunk, borrowed from its line where it holds no escapes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ChunkFrame<'a> {
    pub kind: ChunkKind,
    /// Never empty.
    pub text: Cow<'a, str>,
    pub message_id: Option<Cow<'a, str>>,
    pub tool_call_id: Option<Cow<'a, str>>,
}

/// The `sessionUpdate` of a [`ChunkFrame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub enum ChunkKind {
    #[serde(rename = "agent_message_chunk")]
    Message,
    #[serde(rename = "agent_thought_chunk")]
    Thought,
}

impl ChunkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Message => "agent_message_chunk",
            ChunkKind::Thought => "agent_thought_chunk",
        }
    }
}

/// How far into a line the chunk kind is looked for before the typed read is
/// tried. Agents put `sessionUpdate` first or after a short id; a chunk frame
/// that names its kind later is read the generic way, just more slowly.
const KIND_WINDOW: usize = 1024;

/// Whether the line's start names a chunk kind (`..._chunk"`): a cheap test
/// that keeps tool calls, responses and megabyte frames off the typed read.
fn names_a_chunk_kind(line: &str) -> bool {
    static KIND: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("_chunk\""));
    named_near_start(line, KIND_WINDOW, &KIND)
}

/// The line as a chunk frame, or `None` when it is anything else.
pub(crate) fn parse(line: &str) -> Option<ChunkFrame<'_>> {
    if !names_a_chunk_kind(line) {
        return None;
    }
    let Object(frame) = serde_json::from_str::<Object<Notification<Params<'_>>>>(line).ok()?;
    let Object(update) = frame.params.0.update;
    let Object(content) = update.content;
    if content.text.0.is_empty() {
        return None; // no block for no text; the generic path reads its usage
    }
    Some(ChunkFrame {
        kind: update.session_update,
        text: content.text.0,
        message_id: update.message_id.map(|s| s.0),
        tool_call_id: update.tool_call_id.map(|s| s.0),
    })
}

#[derive(serde::Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    update: Object<Update<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Update<'a> {
    session_update: ChunkKind,
    #[serde(borrow)]
    content: Object<Content<'a>>,
    #[serde(borrow)]
    message_id: Option<Str<'a>>,
    #[serde(borrow)]
    tool_call_id: Option<Str<'a>>,
}

#[derive(serde::Deserialize)]
struct Content<'a> {
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: TextType,
    #[serde(borrow)]
    text: Str<'a>,
}

#[derive(serde::Deserialize)]
enum TextType {
    #[serde(rename = "text")]
    Text,
}

/// A string, borrowed from the line when it holds no escapes.
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct StrVisitor<'a>(PhantomData<&'a str>);
        impl<'de: 'a, 'a> Visitor<'de> for StrVisitor<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(s)))
            }
        }
        d.deserialize_str(StrVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(line: &str) -> Option<(ChunkKind, String, Option<String>, Option<String>)> {
        parse(line).map(|f| {
            (
                f.kind,
                f.text.into_owned(),
                f.message_id.map(Cow::into_owned),
                f.tool_call_id.map(Cow::into_owned),
            )
        })
    }

    #[test]
    fn the_plain_shapes_of_a_text_or_thought_chunk_are_chunk_frames() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#,
                (ChunkKind::Message, "hi", None, None),
            ),
            (
                r#" {"params":{"update":{"content":{"text":"a \"q\" \\ \u00e9","type":"text","annotations":null},"messageId":"m1","toolCallId":null,"sessionUpdate":"agent_thought_chunk"},"_meta":{"x":[1,{}]}},"id":null,"method":"session\/update"} "#,
                (ChunkKind::Thought, "a \"q\" \\ é", Some("m1"), None),
            ),
            (
                r#"{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","toolCallId":"c1","messageId":null,"content":{"type":"text","text":"x"}}}}"#,
                (ChunkKind::Message, "x", None, Some("c1")),
            ),
        ];
        for (line, (kind, text, message_id, tool_call_id)) in cases {
            assert_eq!(
                chunk(line),
                Some((
                    kind,
                    text.to_string(),
                    message_id.map(str::to_string),
                    tool_call_id.map(str::to_string)
                )),
                "{line}"
            );
        }
    }

    #[test]
    fn a_chunk_kind_named_only_past_the_window_is_left_to_the_generic_path() {
        let line = |pad: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"pad":"{}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"é"}}}}}}}}"#,
                "é".repeat(pad)
            )
        };
        assert!(chunk(&line(10)).is_some());
        assert!(chunk(&line(KIND_WINDOW)).is_none());
        assert!(!names_a_chunk_kind(&"é".repeat(KIND_WINDOW)));
    }

    #[test]
    fn any_other_shape_is_left_to_the_generic_path() {
        let chunk_with = |update: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
            )
        };
        let lines = [
            r#"{"jsonrpc":"2.0","method":"session/update","id":1,"params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"session/other","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"session/update","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":[{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}]}"#.to_string(),
            r#"["session/update",null,{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}]"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}} x"#.to_string(),
            chunk_with(r#"{"sessionUpdate":"tool_call","content":{"type":"text","text":"hi"}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"image","text":"hi"}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","content":["text","hi"]}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","text":"b"}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"hi"}}"#),
            chunk_with(r#"{"sessionUpdate":"agent_message_chunk","toolCallId":{},"content":{"type":"text","text":"hi"}}"#),
            chunk_with(r#"{"content":{"type":"text","text":"hi"}}"#),
            chunk_with("null"),
            "not json".to_string(),
            String::new(),
        ];
        for line in &lines {
            assert_eq!(chunk(line), None, "{line}");
        }
    }
}
