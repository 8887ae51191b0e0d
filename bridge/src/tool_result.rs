//! Renders a finished ACP tool call as the `content` of a Claude
//! `tool_result`: ACP `content` first (text, image, diff, terminal), else the
//! MCP `CallToolResult` that codex-acp wraps in `rawOutput` (bridge.md "MCP
//! results in rawOutput"), else `rawOutput` stringified.
//!
//! **Linear in the frame size**: every string is visited once and base64 is
//! only measured, never scanned (a quadratic scan once froze a panel for
//! minutes on a 500 KB image). Images become Anthropic image blocks, so base64
//! never lands in text.

use serde_json::{Value, json};

/// At most this many images per result; later ones leave `[image]`.
pub const MAX_IMAGES: usize = 4;
/// An image whose base64 is longer than this is dropped, leaving `[image]`.
pub const MAX_IMAGE_BASE64: usize = 8 * 1024 * 1024;
/// The text a dropped image leaves behind.
pub const IMAGE_PLACEHOLDER: &str = "[image]";

#[derive(Default)]
struct Rendered {
    texts: Vec<String>,
    images: Vec<Value>,
    /// Images seen, kept or not: rawOutput is only read when none was.
    images_seen: usize,
}

impl Rendered {
    fn image(&mut self, mime: &str, data: &str) {
        self.images_seen += 1;
        if data.len() > MAX_IMAGE_BASE64 || self.images.len() >= MAX_IMAGES {
            self.texts.push(IMAGE_PLACEHOLDER.to_string());
        } else {
            self.images.push(json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}));
        }
    }

    /// One ACP / MCP content block (the two share this shape).
    fn block(&mut self, block: &Value) {
        match block["type"].as_str().unwrap_or("") {
            "text" => self.texts.push(block["text"].as_str().unwrap_or("").to_string()),
            "image" => self.image(
                block["mimeType"].as_str().unwrap_or("image/png"),
                block["data"].as_str().unwrap_or(""),
            ),
            "resource" => {
                let r = &block["resource"];
                let text = r["text"].as_str().or(r["uri"].as_str()).unwrap_or("");
                self.texts.push(text.to_string());
            }
            "resource_link" => {
                let text = block["uri"].as_str().or(block["name"].as_str()).unwrap_or("");
                self.texts.push(text.to_string());
            }
            other => self.texts.push(format!("[{}]", if other.is_empty() { "content" } else { other })),
        }
    }

    /// One entry of an ACP tool call's `content` list.
    fn tool_call_content(&mut self, item: &Value) {
        match item["type"].as_str().unwrap_or("") {
            "content" => self.block(&item["content"]),
            "diff" => self.texts.push(render_diff(item)),
            "terminal" => self
                .texts
                .push(format!("[terminal {}]", item["terminalId"].as_str().unwrap_or("?"))),
            // a bare content block where a wrapped one belongs: read it anyway
            _ => self.block(item),
        }
    }

    fn is_empty(&self) -> bool {
        self.texts.is_empty() && self.images_seen == 0
    }

    fn into_content(self) -> Value {
        let text = self.texts.join("\n");
        if self.images.is_empty() {
            return Value::String(text);
        }
        let mut blocks = Vec::with_capacity(self.images.len() + 1);
        if !text.is_empty() {
            blocks.push(json!({"type": "text", "text": text}));
        }
        blocks.extend(self.images);
        Value::Array(blocks)
    }
}

/// A diff as text: the path, then removed lines with `-` and added ones with `+`.
fn render_diff(item: &Value) -> String {
    let path = item["path"].as_str().unwrap_or("");
    let mut out = String::from(path);
    for line in item["oldText"].as_str().unwrap_or("").lines() {
        out.push_str("\n-");
        out.push_str(line);
    }
    for line in item["newText"].as_str().unwrap_or("").lines() {
        out.push_str("\n+");
        out.push_str(line);
    }
    out
}

/// The Claude `tool_result` content for a finished call. `call` holds the
/// call's ACP fields (`content`, `rawOutput`) as of its final update: a string
/// when the result is text only, else `[text block?, image blocks...]`.
pub fn tool_result_content(call: &Value) -> Value {
    let mut r = Rendered::default();
    for item in call["content"].as_array().into_iter().flatten() {
        r.tool_call_content(item);
    }
    if r.is_empty() {
        let raw = &call["rawOutput"];
        if let Some(blocks) = raw["result"]["content"].as_array() {
            for b in blocks {
                r.block(b);
            }
        }
        if r.is_empty() {
            match raw {
                Value::Null => {}
                Value::String(s) => r.texts.push(s.clone()),
                other => r.texts.push(other.to_string()),
            }
        }
    }
    r.into_content()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(data: &str) -> Value {
        json!({"type": "image", "mimeType": "image/png", "data": data})
    }

    #[test]
    fn renders_content_raw_output_and_fallbacks() {
        let cases = [
            ("text content", json!({"content": [{"type": "content", "content": {"type": "text", "text": "a"}}, {"type": "content", "content": {"type": "text", "text": "b"}}]}), json!("a\nb")),
            ("diff", json!({"content": [{"type": "diff", "path": "f.txt", "oldText": "x", "newText": "y\nz"}]}), json!("f.txt\n-x\n+y\n+z")),
            ("terminal", json!({"content": [{"type": "terminal", "terminalId": "t1"}]}), json!("[terminal t1]")),
            ("codex mcp result in rawOutput", json!({"rawOutput": {"result": {"content": [{"type": "text", "text": "pong"}], "structuredContent": null, "_meta": null}, "error": null}}), json!("pong")),
            ("empty mcp content keeps the error text", json!({"rawOutput": {"result": {"content": []}, "error": "boom"}}), json!(r#"{"result":{"content":[]},"error":"boom"}"#)),
            ("string rawOutput stays a string", json!({"rawOutput": "denied"}), json!("denied")),
            ("other rawOutput is stringified", json!({"rawOutput": {"type": "MCP", "output": {"OkayOutput": "pong"}}}), json!(r#"{"type":"MCP","output":{"OkayOutput":"pong"}}"#)),
            ("content wins over rawOutput", json!({"content": [{"type": "content", "content": {"type": "text", "text": "c"}}], "rawOutput": "r"}), json!("c")),
            ("nothing", json!({}), json!("")),
            ("text and image", json!({"rawOutput": {"result": {"content": [{"type": "text", "text": "shot"}, img("QUJD")]}}}),
                json!([{"type": "text", "text": "shot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}])),
        ];
        for (name, call, want) in cases {
            assert_eq!(tool_result_content(&call), want, "{name}");
        }
    }

    #[test]
    fn images_are_capped_and_oversized_ones_leave_a_placeholder() {
        let mut blocks: Vec<Value> = (0..5).map(|_| img("QQ==")).collect();
        blocks.push(img(&"A".repeat(MAX_IMAGE_BASE64 + 1)));
        let out = tool_result_content(&json!({"rawOutput": {"result": {"content": blocks}}}));
        let arr = out.as_array().unwrap();
        assert_eq!(arr[0], json!({"type": "text", "text": "[image]\n[image]"}));
        assert_eq!(arr.len(), 1 + MAX_IMAGES);
    }

    #[test]
    fn an_only_dropped_image_does_not_fall_back_to_raw_output() {
        let big = "A".repeat(MAX_IMAGE_BASE64 + 1);
        let out = tool_result_content(&json!({"content": [{"type": "content", "content": img(&big)}], "rawOutput": {"result": {"content": [img("QQ==")]}}}));
        assert_eq!(out, json!("[image]"));
    }
}
