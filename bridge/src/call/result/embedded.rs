//! What a tool result's text may carry besides text (docs/bridge-behaviour.md,
//! "Tool results"): **images never become text**, wherever they sit.
//!
//! - A text that is a JSON document of result parts (OpenAI-style
//!   `[{"type":"image_url","image_url":{"url":"data:image/png;base64,..."}}]`,
//!   MCP content blocks, a whole `CallToolResult`) is read as those parts.
//! - A text that is a JSON `{"error": ...}` object is its error message.
//! - **No text the bridge emits holds a base64 run of 4 KiB or more**: a run
//!   that starts like an image becomes one, any other leaves
//!   [`BASE64_PLACEHOLDER`].
//!
//! Each text is parsed at most once and scanned once, so this stays linear.

use serde_json::Value;

use crate::acp::json_field::field;

/// A run of base64 this long (or longer) in a text is data, never text.
pub const MAX_BASE64_RUN: usize = 4 * 1024;
/// What a base64 run that is no image leaves in the text.
pub const BASE64_PLACEHOLDER: &str = "[base64 data]";

/// One thing a text holds: text, or an image (MIME type, base64).
#[derive(Debug, PartialEq)]
pub(super) enum Part {
    Text(String),
    Image { mime: String, data: String },
}

/// How deep a JSON text's parts are searched: a bound, so a hostile text
/// costs one pass.
const MAX_DEPTH: usize = 8;

/// The parts of a text that is a JSON document of result parts or an error
/// object, `None` for any other text (it stays as it is). Only a text that
/// opens with `[` or `{` and names an image or an error is parsed.
pub(super) fn json_parts(text: &str) -> Option<Vec<Part>> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
        return None;
    }
    if !(text.contains("image") || text.contains("\"error\"")) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let mut parts = Vec::new();
    if let Some(message) = error_message(&value) {
        parts.push(Part::Text(message));
        return Some(parts);
    }
    let mut found_image = false;
    collect(&value, &mut parts, &mut found_image, MAX_DEPTH);
    found_image.then_some(parts)
}

/// The message of a JSON error object: `{"error": "..."}` or `{"error":
/// {"message": ...}}` (also with other keys beside it), `{"message", "code"}`.
pub(super) fn error_message(v: &Value) -> Option<String> {
    let error = field(v, "error");
    if let Some(message) = error.as_str().filter(|m| !m.trim().is_empty()) {
        return Some(message.to_string());
    }
    if let Some(message) = field(error, "message").as_str() {
        return Some(message.to_string());
    }
    None
}

/// The parts under `v`: content blocks and image parts in any array or
/// object, texts of text blocks; other values are kept as JSON text only
/// when they hold no image.
fn collect(v: &Value, parts: &mut Vec<Part>, found_image: &mut bool, depth: usize) {
    if depth == 0 {
        return;
    }
    match v {
        Value::Array(items) => {
            for item in items {
                collect(item, parts, found_image, depth - 1);
            }
        }
        Value::Object(map) => {
            if let Some(image) = image_part(v) {
                *found_image = true;
                parts.push(image);
                return;
            }
            if field(v, "type") == "text"
                && let Some(text) = field(v, "text").as_str()
            {
                parts.push(Part::Text(text.to_string()));
                return;
            }
            for value in map.values() {
                collect(value, parts, found_image, depth - 1);
            }
        }
        Value::String(s) => {
            if let Some((mime, data)) = data_uri(s) {
                *found_image = true;
                parts.push(Part::Image {
                    mime,
                    data: data.to_string(),
                });
            }
        }
        _ => {}
    }
}

/// An image in one of the shapes result parts take: an MCP / ACP block
/// (`{"type":"image","data","mimeType"}`), an Anthropic block (`source`),
/// an OpenAI part (`image_url` / `imageUrl` holding a URL or `{url}`,
/// `input_image`).
pub(super) fn image_part(v: &Value) -> Option<Part> {
    let kind = field(v, "type").as_str().unwrap_or("");
    if kind == "image" {
        if let Some(data) = field(v, "data").as_str() {
            let mime = ["mimeType", "mime_type", "media_type"]
                .iter()
                .find_map(|k| field(v, k).as_str())
                .unwrap_or("image/png");
            return Some(Part::Image {
                mime: mime.to_string(),
                data: data.to_string(),
            });
        }
        let source = field(v, "source");
        if let Some(data) = field(source, "data").as_str() {
            let mime = field(source, "media_type").as_str().unwrap_or("image/png");
            return Some(Part::Image {
                mime: mime.to_string(),
                data: data.to_string(),
            });
        }
    }
    for key in ["image_url", "imageUrl"] {
        let url = field(v, key);
        let url = url.as_str().or_else(|| field(url, "url").as_str());
        if let Some((mime, data)) = url.and_then(data_uri) {
            return Some(Part::Image {
                mime,
                data: data.to_string(),
            });
        }
    }
    None
}

/// A whole `data:image/<type>;base64,<data>` URI: its MIME type and data.
fn data_uri(s: &str) -> Option<(String, &str)> {
    let rest = s.trim().strip_prefix("data:image/")?;
    let (subtype, data) = rest.split_once(";base64,")?;
    (!subtype.is_empty()
        && subtype
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)))
    .then(|| (format!("image/{subtype}"), data))
}

/// Whether `b` is a base64 character (standard and URL-safe alphabets,
/// padding).
fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// The MIME type of base64 data that starts like an image file.
fn image_mime(data: &str) -> Option<&'static str> {
    [
        ("iVBORw0KGgo", "image/png"),
        ("/9j/", "image/jpeg"),
        ("R0lGOD", "image/gif"),
        ("UklGR", "image/webp"),
    ]
    .iter()
    .find(|(magic, _)| data.starts_with(magic))
    .map(|(_, mime)| *mime)
}

/// A text cut where it holds base64 runs of [`MAX_BASE64_RUN`] or more:
/// `(text before, the run, its image MIME type if it starts like one)`, in
/// order, then the rest; `None` when it holds none (the common case: a
/// text shorter than a run is not scanned).
#[allow(clippy::type_complexity)]
pub(super) fn base64_runs(text: &str) -> Option<(Vec<(&str, &str, Option<&'static str>)>, &str)> {
    if text.len() < MAX_BASE64_RUN {
        return None;
    }
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let (mut start, mut kept) = (0, 0);
    let mut i = 0;
    while i <= bytes.len() {
        let in_run = i < bytes.len() && is_base64(bytes[i]);
        if !in_run {
            if i - start >= MAX_BASE64_RUN {
                let run = &text[start..i];
                runs.push((&text[kept..start], run, image_mime(run)));
                kept = i;
            }
            start = i + 1;
        }
        i += 1;
    }
    (!runs.is_empty()).then(|| (runs, &text[kept.min(text.len())..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(len: usize) -> String {
        format!("iVBORw0KGgo{}", "A".repeat(len))
    }

    #[test]
    fn json_texts_of_image_parts_are_images_and_error_objects_their_message() {
        let data = png(16);
        let cases = [
            (
                "OpenAI image_url parts as JSON text",
                format!(
                    r#"[{{"type":"text","text":"shot"}},{{"type":"image_url","imageUrl":{{"url":"data:image/png;base64,{data}"}}}}]"#
                ),
                Some(vec![
                    Part::Text("shot".into()),
                    Part::Image {
                        mime: "image/png".into(),
                        data: data.clone(),
                    },
                ]),
            ),
            (
                "an MCP CallToolResult as JSON text",
                format!(
                    r#"{{"content":[{{"type":"image","data":"{data}","mimeType":"image/jpeg"}}],"isError":false}}"#
                ),
                Some(vec![Part::Image {
                    mime: "image/jpeg".into(),
                    data: data.clone(),
                }]),
            ),
            (
                "a JSON error string",
                r#"{"error":"MCP error -32603: boom"}"#.to_string(),
                Some(vec![Part::Text("MCP error -32603: boom".into())]),
            ),
            (
                "a JSON error object",
                r#"{"error":{"code":-32603,"message":"boom"}}"#.to_string(),
                Some(vec![Part::Text("boom".into())]),
            ),
            (
                "JSON without images stays text",
                r#"{"content":[{"type":"text","text":"pong"}]}"#.to_string(),
                None,
            ),
            ("plain text", "an image of a cat".to_string(), None),
            ("broken JSON", "[{\"image\": ".to_string(), None),
        ];
        for (case, text, want) in cases {
            assert_eq!(json_parts(&text), want, "{case}");
        }
    }

    #[test]
    fn base64_runs_of_4_kib_are_found_and_shorter_ones_are_not() {
        let short = "A".repeat(MAX_BASE64_RUN - 1);
        assert!(base64_runs(&format!("x {short} y")).is_none());
        let text = format!(
            "before {} middle {} after",
            png(MAX_BASE64_RUN),
            "B".repeat(MAX_BASE64_RUN)
        );
        let (runs, rest) = base64_runs(&text).expect("two runs");
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].0, "before ");
        assert_eq!(runs[0].2, Some("image/png"));
        assert_eq!(runs[1].0, " middle ");
        assert_eq!(runs[1].2, None);
        assert_eq!(rest, " after");
        let whole = "C".repeat(MAX_BASE64_RUN);
        let (runs, rest) = base64_runs(&whole).expect("whole text");
        assert_eq!((runs[0].0, rest), ("", ""));
    }
}
