//! A `session/update` notification of any kind read with its envelope typed:
//! only the update itself becomes a `Value` tree. The envelope's keys
//! (`jsonrpc`, `method`, `params`, `sessionId`, `update`) would otherwise be
//! hashed into two maps and their strings allocated, for every frame, only
//! to be dropped; on a burst of small tool-call frames that is a third of
//! the parse.
//!
//! Only that exact shape is read here: a notification (no `id` but `null`)
//! whose `method` is `session/update` and whose `params` object holds an
//! `update`. Anything else (another method, an `id`, a duplicate key, an
//! array for an object, no `update`) is `None` and the caller reads the line
//! the generic `Value` way, which owns every tolerance rule; the update taken
//! is the one that way takes. A failed typed read costs an error value, so a
//! line whose start does not name the method is not tried at all.

use std::fmt;
use std::marker::PhantomData;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// How far into a line the method is looked for before the typed read is
/// tried: agents put `method` before `params`.
const METHOD_WINDOW: usize = 256;

/// Whether the line's start names the `session/update` method.
fn names_the_method(line: &str) -> bool {
    static METHOD: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"session/update\""));
    named_near_start(line, METHOD_WINDOW, &METHOD)
}

/// Whether `needle` occurs in the first `window` bytes of `line`: the cheap
/// test before a typed read is tried, for every agent line. The needle is
/// ASCII, so no match takes part of a character cut at the window's end.
/// A searcher built once: `str::contains` sets one up per call, which
/// costs more than the search itself on a line's start.
pub(crate) fn named_near_start(line: &str, window: usize, needle: &Finder<'_>) -> bool {
    needle
        .find(&line.as_bytes()[..line.len().min(window)])
        .is_some()
}

/// The update of a `session/update` notification, or `None` when the line
/// is anything else.
pub(crate) fn parse(line: &str) -> Option<Value> {
    if !names_the_method(line) {
        return None;
    }
    let Object(frame) = serde_json::from_str::<Object<Notification<Params>>>(line).ok()?;
    let Object(params) = frame.params;
    Some(params.update)
}

/// The update's JSON text when the line is a `session/update` notification
/// in the plain form agents mostly write,
/// `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<id>","update":<update>}}`
/// (no spaces, the id free of escapes), so the envelope need not be read
/// key by key. `None` for any other form; the text found may still be no
/// JSON value, which its reader then refuses.
pub(crate) fn plain_update(line: &str) -> Option<&str> {
    const HEAD: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":""#;
    const UPDATE: &str = r#"","update":"#;
    let json_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let rest = line.trim_matches(json_space).strip_prefix(HEAD)?;
    let (id, rest) = rest.split_at(rest.find('"')?);
    if id.bytes().any(|b| b == b'\\' || b < 0x20) {
        return None;
    }
    rest.strip_prefix(UPDATE)?.strip_suffix("}}")
}

/// A `session/update` notification whose `params` read as `P`: the
/// envelope every typed read of an update shares.
#[derive(serde::Deserialize)]
pub(crate) struct Notification<P> {
    #[allow(dead_code)] // only its value is checked
    method: UpdateMethod,
    /// A request or response is no notification: any `id` but `null` fails.
    #[allow(dead_code)]
    id: Option<Rejected>,
    pub params: Object<P>,
}

/// The one `method` of a frame read typed.
#[derive(serde::Deserialize)]
enum UpdateMethod {
    #[serde(rename = "session/update")]
    SessionUpdate,
}

#[derive(serde::Deserialize)]
struct Params {
    update: Value,
}

/// A value that fails to read whatever it is (`Option<Rejected>` accepts
/// only `null` or a missing field).
struct Rejected;

impl<'de> Deserialize<'de> for Rejected {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(de::Error::custom("not a notification"))
    }
}

/// `T` read only from a JSON object: serde would also fill a struct from an
/// array, which the `Value` path never reads as one.
pub(crate) struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectVisitor(PhantomData)).map(Object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the generic path takes from the line as a `session/update`
    /// notification's update.
    fn generic(line: &str) -> Option<Value> {
        let mut v: Value = serde_json::from_str(line).ok()?;
        let notification =
            v.get("id").is_none_or(Value::is_null) && v["method"] == "session/update";
        notification.then(|| v["params"]["update"].take())
    }

    #[test]
    fn a_notification_gives_the_update_the_generic_path_gives() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","status":"pending"}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","id":null,"params":{"update":{"sessionUpdate":"plan","entries":[]},"sessionId":"s1"},"_meta":{"x":1}}"#,
            r#"{"method":"session/update","params":{"update":null}}"#,
            r#"{"method":"session/update","params":{"update":[1,2]}}"#,
        ] {
            let typed = parse(line);
            assert!(typed.is_some(), "{line}");
            assert_eq!(typed, generic(line), "{line}");
        }
    }

    #[test]
    fn any_other_shape_is_left_to_the_generic_path() {
        for line in [
            // a request, a response
            r#"{"jsonrpc":"2.0","id":3,"method":"session/update","params":{"update":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","id":"a","params":{"update":{}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"note":"session/update"}}"#,
            // another method
            r#"{"jsonrpc":"2.0","method":"session/request_permission","params":{"update":{}},"x":"session/update"}"#,
            // no update, no params, params not an object
            r#"{"method":"session/update","params":{"sessionId":"s1"}}"#,
            r#"{"method":"session/update"}"#,
            r#"{"method":"session/update","params":[{"update":{}}]}"#,
            // duplicate keys: the generic path takes the last
            r#"{"method":"session/update","params":{"update":{"a":1},"update":{"a":2}}}"#,
            r#"{"method":"session/update","params":{"update":{}},"params":{"update":{"b":1}}}"#,
            // an array for the frame, bad JSON, trailing text
            r#"["session/update",{"update":{}}]"#,
            r#"{"method":"session/update","params":{"update":{}}"#,
            r#"{"method":"session/update","params":{"update":{}}} x"#,
        ] {
            assert_eq!(parse(line), None, "{line}");
        }
    }

    #[test]
    fn only_the_plain_envelope_gives_its_update_text() {
        // (an extra key after the update leaves text that is no JSON value)
        let update = r#"{"sessionUpdate":"tool_call","toolCallId":"c\"1"}"#;
        let plain = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-1","update":{update}}}}}"#
        );
        assert_eq!(plain_update(&plain), Some(update));
        assert_eq!(plain_update(&format!(" {plain}\r\n")), Some(update));
        for line in [
            plain.replace(r#""jsonrpc":"2.0","#, r#""jsonrpc": "2.0","#),
            plain.replace("s-1", r#"s\"1"#),
            plain.replace(r#""method""#, r#""id":1,"method""#),
            plain.replace(r#"}}}"#, r#"}},"_meta":{}}"#),
            plain.replace(r#""sessionId":"s-1","#, ""),
            format!("\u{a0}{plain}"),
        ] {
            // nothing, or a text its reader refuses
            let found = plain_update(&line);
            assert!(
                found.is_none_or(|t| serde_json::from_str::<Value>(t).is_err()),
                "{line}"
            );
        }
    }

    #[test]
    fn a_method_named_only_past_the_window_is_left_to_the_generic_path() {
        let pad = "x".repeat(METHOD_WINDOW);
        let line = format!(
            r#"{{"jsonrpc":"2.0","pad":"{pad}","method":"session/update","params":{{"update":{{}}}}}}"#
        );
        assert_eq!(parse(&line), None);
        assert!(generic(&line).is_some());
    }
}
