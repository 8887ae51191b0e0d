//! Renders a finished ACP tool call as the `content` of a Claude
//! `tool_result`, the way real `claude` shapes it: a string when the result
//! is text only, else text and Anthropic image blocks
//! (`{"type":"image","source":{"type":"base64","media_type":...,"data":...}}`).
//!
//! Sources, in order (docs/bridge-behaviour.md, "Tool results"):
//! 1. ACP `content` (content blocks, diff, terminal);
//!    when it shows no image, the images of `rawOutput` (read as in 2.) join
//!    its text: an agent may put only an MCP result's text in `content`;
//! 2. only when that produced nothing and no image was seen, `rawOutput`, the
//!    MCP `CallToolResult` in whichever shape the agent sends it:
//!    - wrapped `{"result":{"content":[...]},"error":...}` (current
//!      codex-acp; `{"result":null,"error":{"message":...}}` on failure),
//!    - bare `{"content":[...],"isError":...}` (codex-acp 0.x),
//!    - Grok's `{"type":"MCP",...,"output":{"OkayOutput":"..."}}` (text that
//!      may inline images as `data:image/...;base64,...` URIs) and its
//!      `{"error":...,"message":...}` failures;
//!    - anything else holding MCP content blocks: the shallowest array of
//!      content blocks under any key, at any depth (found breadth-first), so
//!      an agent that nests its result differently still shows its images;
//!    - an error object (`message` with `code` and/or `data`, bare or under
//!      `error`) as readable error text;
//! 3. else `rawOutput` stringified (a string stays as it is, images inlined
//!    as data URIs become images), so an error text in an unknown shape is
//!    never lost.
//!
//! The same search reads an ACP `content` entry whose `content` is not one
//! block (an array of blocks, a whole `CallToolResult`, a plain string).
//!
//! **Linear in the frame size**: every string is visited once and base64 is
//! only measured, never scanned (a quadratic scan once froze a panel for
//! minutes on a 500 KB image). **Base64 never lands in text**: images become
//! image blocks or the `[image]` placeholder. The rendering borrows from the
//! call's fields ([`ToolResultContent`]), so the bridge serialises an image
//! straight from the frame it parsed, never from a copy.

mod embedded;
mod error;
mod image_check;
mod serialise;
mod terminal;

use std::borrow::Cow;

use crate::acp::json_field::field;
use crate::acp::tool_call::CallStatus;
use crate::call::fields::OwnFields;
use serde_json::{Value, json};

use crate::launch::Compat;
use image_check::Passed;

/// At most this many images per result; later ones leave `[image]`.
pub const MAX_IMAGES: usize = 4;
/// An image whose base64 is longer than this (or empty) is dropped, leaving `[image]`.
pub const MAX_IMAGE_BASE64: usize = 8 * 1024 * 1024;
/// The text a dropped image leaves behind.
pub const IMAGE_PLACEHOLDER: &str = "[image]";

pub use embedded::{BASE64_PLACEHOLDER, MAX_BASE64_RUN};
pub use error::is_error;
pub(crate) use error::is_error_of;
pub use terminal::{MAX_TERMINAL_OUTPUT, TERMINAL_OUTPUT_CUT, keep_terminal_output};

/// A finished call's `tool_result` content, borrowed from the call's ACP
/// fields: texts (joined by newlines) and kept images. Serialises as a
/// string when there is no image, else as `[text block?, image blocks...]`;
/// [`ToolResultContent::into_value`] is the same as a `Value`.
#[derive(Debug, Default)]
pub struct ToolResultContent<'a> {
    texts: Vec<Cow<'a, str>>,
    images: Vec<Image<'a>>,
    /// Images seen, kept or not: rawOutput is only read when none was (an
    /// update may resend the rawOutput of an image-only result).
    images_seen: usize,
    /// The output the call's frames streamed for its terminal, if any.
    terminal_output: Option<&'a str>,
    /// Why images became the marker instead of blocks (their base64 is no
    /// whole image of the declared type): the core's diagnostics.
    pub image_defects: Vec<String>,
}

/// A kept image: its MIME type and base64 data, and what its check
/// proved of the data.
#[derive(Debug)]
struct Image<'a> {
    mime: Cow<'a, str>,
    data: Cow<'a, str>,
    passed: Passed,
}

impl<'a> ToolResultContent<'a> {
    fn image(&mut self, mime: Cow<'a, str>, data: impl Into<Cow<'a, str>>) {
        let data = data.into();
        self.images_seen += 1;
        let checked = (data.len() <= MAX_IMAGE_BASE64 && self.images.len() < MAX_IMAGES)
            .then(|| image_check::check(&mime, &data));
        match checked {
            // an image without data (withheld by the agent) is no image
            // block: the panel would get an invalid one
            Some(Ok(passed)) if !data.trim().is_empty() => {
                self.images.push(Image { mime, data, passed })
            }
            // the marker says what was there
            _ => {
                if let Some(Err(defect)) = checked {
                    self.image_defects.push(format!(
                        "{mime} image shown as {IMAGE_PLACEHOLDER}: {defect}"
                    ));
                }
                self.texts.push(Cow::Borrowed(IMAGE_PLACEHOLDER));
            }
        }
    }

    /// A text: **no text holds a base64 run of [`MAX_BASE64_RUN`] or
    /// more**; a run that starts like an image becomes one, any other
    /// leaves [`BASE64_PLACEHOLDER`].
    fn push_text(&mut self, text: Cow<'a, str>) {
        match text {
            Cow::Borrowed(s) => match embedded::base64_runs(s) {
                None => self.texts.push(Cow::Borrowed(s)),
                Some((runs, rest)) => {
                    for (before, run, mime) in runs {
                        self.push_piece(Cow::Borrowed(before), Cow::Borrowed(run), mime);
                    }
                    self.push_nonempty(Cow::Borrowed(rest));
                }
            },
            Cow::Owned(s) => match embedded::base64_runs(&s) {
                None => self.texts.push(Cow::Owned(s)),
                Some((runs, rest)) => {
                    let runs: Vec<(String, String, Option<&'static str>)> = runs
                        .into_iter()
                        .map(|(b, r, m)| (b.to_string(), r.to_string(), m))
                        .collect();
                    let rest = rest.to_string();
                    for (before, run, mime) in runs {
                        self.push_piece(Cow::Owned(before), Cow::Owned(run), mime);
                    }
                    self.push_nonempty(Cow::Owned(rest));
                }
            },
        }
    }

    /// The text before a base64 run, then the run as an image or the
    /// placeholder.
    fn push_piece(&mut self, before: Cow<'a, str>, run: Cow<'a, str>, mime: Option<&'static str>) {
        self.push_nonempty(before);
        match mime {
            Some(mime) => self.image(Cow::Borrowed(mime), run),
            None => self.texts.push(Cow::Borrowed(BASE64_PLACEHOLDER)),
        }
    }

    fn push_nonempty(&mut self, text: Cow<'a, str>) {
        if !text.trim().is_empty() {
            self.texts.push(Cow::Owned(text.trim().to_string()));
        }
    }

    /// One ACP / MCP content block (the two share this shape).
    fn block(&mut self, block: &'a Value) {
        match field(block, "type").as_str().unwrap_or("") {
            "text" => self.plain_text(field(block, "text").as_str().unwrap_or("")),
            "image" => self.image(
                Cow::Borrowed(field(block, "mimeType").as_str().unwrap_or("image/png")),
                field(block, "data").as_str().unwrap_or(""),
            ),
            "resource" => {
                let r = field(block, "resource");
                let text = field(r, "text")
                    .as_str()
                    .or(field(r, "uri").as_str())
                    .unwrap_or("");
                self.push_text(Cow::Borrowed(text));
            }
            "resource_link" => {
                let text = field(block, "uri")
                    .as_str()
                    .or(field(block, "name").as_str())
                    .unwrap_or("");
                self.texts.push(Cow::Borrowed(text));
            }
            other => match embedded::image_part(block) {
                // an OpenAI-style image part where a content block belongs
                Some(embedded::Part::Image { mime, data }) => self.image(Cow::Owned(mime), data),
                _ => self.texts.push(Cow::Owned(format!(
                    "[{}]",
                    if other.is_empty() { "content" } else { other }
                ))),
            },
        }
    }

    /// A list of content blocks; a plain string among them is text.
    fn blocks(&mut self, blocks: &'a [Value]) {
        for b in blocks {
            match b.as_str() {
                Some(s) => self.plain_text(s),
                None => self.block(b),
            }
        }
    }

    /// One entry of an ACP tool call's `content` list.
    fn tool_call_content(&mut self, item: &'a Value) {
        match field(item, "type").as_str().unwrap_or("") {
            "content" => self.nested(field(item, "content")),
            "diff" => self.texts.push(Cow::Owned(render_diff(item))),
            "terminal" => match self.terminal_output.filter(|o| !o.is_empty()) {
                Some(output) => self.push_text(Cow::Borrowed(output)),
                None => self.texts.push(Cow::Owned(format!(
                    "[terminal {}]",
                    field(item, "terminalId").as_str().unwrap_or("?")
                ))),
            },
            // a bare content block (or a plain string) where a wrapped one
            // belongs: read it anyway
            _ => self.nested(item),
        }
    }

    /// Whatever an ACP `content` entry carries: one block, an array of
    /// blocks, a plain string, or an object holding blocks somewhere.
    fn nested(&mut self, v: &'a Value) {
        match v {
            Value::String(s) => self.plain_text(s),
            Value::Array(items) => self.blocks(items),
            Value::Object(o) if !o.contains_key("type") => {
                if let Some(blocks) = find_blocks(v) {
                    self.blocks(blocks);
                } else if let Some(text) = error_of(v) {
                    self.texts.push(Cow::Owned(text));
                } else {
                    self.block(v);
                }
            }
            _ => self.block(v),
        }
    }

    /// A plain string: text, with any inlined image URIs turned into
    /// images; a JSON text of result parts or an error object is read as
    /// what it holds (see [`embedded`]).
    fn plain_text(&mut self, s: &'a str) {
        if let Some(parts) = embedded::json_parts(s) {
            for part in parts {
                match part {
                    embedded::Part::Text(t) => self.push_text(Cow::Owned(t)),
                    embedded::Part::Image { mime, data } => self.image(Cow::Owned(mime), data),
                }
            }
        } else if s.contains("data:image/") {
            self.text_with_data_uris(s);
        } else {
            self.push_text(Cow::Borrowed(s));
        }
    }

    /// Text that may inline images as `data:image/<type>;base64,<data>` URIs
    /// (Grok): each URI becomes an image (or `[image]`), the rest stays text.
    /// One pass: each search starts where the previous match ended.
    fn text_with_data_uris(&mut self, text: &'a str) {
        const PREFIX: &str = "data:image/";
        let mut rest = text;
        let mut kept = String::new();
        while let Some(at) = rest.find(PREFIX) {
            let after_prefix = &rest[at + PREFIX.len()..];
            let subtype_len = after_prefix
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
                .unwrap_or(after_prefix.len());
            let Some(data) = after_prefix[subtype_len..].strip_prefix(";base64,") else {
                // not a base64 image URI: keep it as text and go on after it
                kept.push_str(&rest[..at + PREFIX.len()]);
                rest = after_prefix;
                continue;
            };
            let data_len = base64_run(data.as_bytes());
            kept.push_str(&rest[..at]);
            let mime = format!("image/{}", &after_prefix[..subtype_len]);
            let before = self.images.len();
            self.image(Cow::Owned(mime), Cow::Borrowed(&data[..data_len]));
            if self.images.len() > before {
                // the image went to a block: no trace in the text
            } else {
                // `image` pushed the placeholder as its own line; keep order by moving it inline
                let placeholder = self.texts.pop().unwrap_or_default();
                kept.push_str(&placeholder);
            }
            rest = &data[data_len..];
        }
        kept.push_str(rest);
        let kept = kept.trim();
        if !kept.is_empty() {
            self.push_text(Cow::Owned(kept.to_string()));
        }
    }

    fn is_empty(&self) -> bool {
        self.texts.is_empty() && self.images_seen == 0
    }

    /// Whether the result says nothing: no image and no text but blanks.
    pub fn is_blank(&self) -> bool {
        self.images_seen == 0 && self.texts.iter().all(|t| t.trim().is_empty())
    }

    /// The texts joined by newlines (borrowed when there is only one).
    fn text(&self) -> Cow<'_, str> {
        match self.texts.as_slice() {
            [] => Cow::Borrowed(""),
            [one] => Cow::Borrowed(one),
            many => Cow::Owned(many.join("\n")),
        }
    }

    /// The content as a `Value` (copies the texts and images).
    pub fn into_value(self) -> Value {
        let text = self.text().into_owned();
        if self.images.is_empty() {
            return Value::String(text);
        }
        let mut blocks = Vec::with_capacity(self.images.len() + 1);
        if !text.is_empty() {
            blocks.push(json!({"type": "text", "text": text}));
        }
        blocks.extend(self.images.iter().map(|i| {
            json!({"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": i.data}})
        }));
        Value::Array(blocks)
    }
}

/// Whether `b` is a base64 character (standard alphabet and padding).
fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// How many leading bytes of `data` are base64. The hot loop of a multi-MiB
/// text: whole blocks are checked without an early exit, which the compiler
/// turns into vector compares (several times the speed of a byte loop);
/// only the block holding the end is walked byte by byte.
fn base64_run(data: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let mut len = 0;
    for block in data.chunks_exact(BLOCK) {
        if !block.iter().fold(true, |all, &b| all & is_base64(b)) {
            break;
        }
        len += BLOCK;
    }
    len + data[len..]
        .iter()
        .position(|&b| !is_base64(b))
        .unwrap_or(data.len() - len)
}

/// A `Write` input (`file_path`, `content`) as the diff of a new file (see
/// [`render_diff`]): the result of a write whose frames carry none.
pub fn new_file_text(input: &Value) -> Option<String> {
    let path = field(input, "file_path").as_str()?;
    let content = field(input, "content").as_str()?;
    Some(render_diff(
        &serde_json::json!({"path": path, "newText": content}),
    ))
}

/// A diff as text: the path, then removed lines with `-` and added ones with `+`.
fn render_diff(item: &Value) -> String {
    let path = field(item, "path").as_str().unwrap_or("");
    let mut out = String::from(path);
    for line in field(item, "oldText").as_str().unwrap_or("").lines() {
        out.push_str("\n-");
        out.push_str(line);
    }
    for line in field(item, "newText").as_str().unwrap_or("").lines() {
        out.push_str("\n+");
        out.push_str(line);
    }
    out
}

/// Reads `rawOutput` as an MCP result in any of the shapes agents send.
/// Leaves `r` empty when the shape is not one of them.
fn raw_output<'a>(r: &mut ToolResultContent<'a>, raw: &'a Value, compat: &Compat) {
    // wrapped CallToolResult (current codex-acp)
    if let Some(blocks) = field(field(raw, "result"), "content").as_array()
        && compat.mcp_raw_output_wrapper
    {
        r.blocks(blocks);
        return;
    }
    if compat.mcp_raw_output_wrapper
        && crate::acp::json_field::get(raw, "result").is_some_and(Value::is_null)
        && let Some(message) = field(field(raw, "error"), "message").as_str()
    {
        r.texts.push(Cow::Borrowed(message));
        return;
    }
    // bare CallToolResult (codex-acp 0.x)
    if let Some(blocks) = field(raw, "content").as_array() {
        r.blocks(blocks);
        return;
    }
    // Grok: {"type":"MCP", ..., "output": {"OkayOutput": "..."} | {"Error": "..."}}
    if field(raw, "type") == "MCP" {
        let output = field(raw, "output");
        if let Some(text) = field(output, "OkayOutput").as_str().or(output.as_str()) {
            r.text_with_data_uris(text);
        } else if let Some(text) = field(output, "Error").as_str() {
            r.texts.push(Cow::Borrowed(text));
        }
        return;
    }
    // Grok failure: {"error": "tool_execution_failed", "message": "..."}
    if field(raw, "error").is_string()
        && let Some(message) = field(raw, "message").as_str()
    {
        r.texts.push(Cow::Borrowed(message));
        return;
    }
    if !compat.mcp_raw_output_wrapper {
        return;
    }
    if let Some(blocks) = find_blocks(raw) {
        r.blocks(blocks);
    } else if let Some(text) = error_of(raw) {
        r.texts.push(Cow::Owned(text));
    }
}

/// How deep [`find_blocks`] looks: agents nest results a few levels at most,
/// and a bound keeps a hostile frame from costing more than one pass.
const MAX_NESTING: usize = 8;

/// Whether `v` is an MCP / ACP content block.
fn is_content_block(v: &Value) -> bool {
    match field(v, "type").as_str() {
        Some("text") => field(v, "text").is_string(),
        Some("image" | "audio") => field(v, "data").is_string(),
        Some("resource") => field(v, "resource").is_object(),
        Some("resource_link") => field(v, "uri").is_string(),
        _ => false,
    }
}

/// The shallowest array of content blocks in `v` (breadth-first, keys in
/// the agent's order): every item a block or a plain string, one at least a
/// block. Visits each value once.
fn find_blocks(v: &Value) -> Option<&Vec<Value>> {
    let mut level: Vec<&Value> = vec![v];
    for _ in 0..=MAX_NESTING {
        let mut next = Vec::new();
        for v in level {
            match v {
                Value::Array(items) => {
                    if items.iter().any(is_content_block)
                        && items.iter().all(|i| i.is_string() || is_content_block(i))
                    {
                        return Some(items);
                    }
                    next.extend(items.iter().filter(|i| i.is_object() || i.is_array()));
                }
                Value::Object(o) => {
                    next.extend(o.values().filter(|i| i.is_object() || i.is_array()))
                }
                _ => {}
            }
        }
        if next.is_empty() {
            return None;
        }
        level = next;
    }
    None
}

/// An error object (`message` with `code` and/or `data`, as JSON-RPC and MCP
/// shape them) as readable text: `message (code N)`, then `data` on its own
/// line. A bare `{message}` counts only under an `error` key, which the
/// caller passes in.
fn error_text(v: &Value) -> Option<String> {
    let message = field(v, "message").as_str()?;
    let code = match field(v, "code") {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let data = match field(v, "data") {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let mut out = message.to_string();
    if let Some(code) = code {
        out.push_str(&format!(" (code {code})"));
    }
    if let Some(data) = data {
        out.push('\n');
        out.push_str(&data);
    }
    Some(out)
}

/// The error text of `v` when it is an error object or holds one under `error`.
fn error_of(v: &Value) -> Option<String> {
    error_text(v)
        .filter(|_| is_error_object(v))
        .or_else(|| error_text(field(v, "error")))
}

/// Whether `v` is an error object on its own (not just any `{message}`).
pub(crate) fn is_error_object(v: &Value) -> bool {
    field(v, "message").is_string() && (!field(v, "code").is_null() || !field(v, "data").is_null())
}

/// The Claude `tool_result` content for a finished call. `call` holds the
/// call's ACP fields (`content`, `rawOutput`) as of its final update: a string
/// when the result is text only, else `[text block?, image blocks...]`.
pub fn tool_result_content(call: &Value) -> Value {
    render_fields(call.into(), &Compat::default()).into_value()
}

/// [`tool_result_content`] with some agent-shape handling switched off.
pub fn tool_result_content_with(call: &Value, compat: &Compat) -> Value {
    render(call, compat).into_value()
}

/// [`tool_result_content_with`] borrowed from `call`, to serialise without
/// copying the call's texts and images.
pub fn render<'a>(call: &'a Value, compat: &Compat) -> ToolResultContent<'a> {
    render_fields(call.into(), compat)
}

/// What a finished call's result is read from, borrowed: a call's own
/// fields, or a frame's JSON.
#[derive(Debug, Clone, Copy)]
pub struct ResultFields<'a> {
    /// The call's status says it failed.
    pub failed: bool,
    pub content: &'a [Value],
    pub raw_output: &'a Value,
    /// What the call's frames streamed for a terminal.
    pub terminal_output: Option<&'a str>,
}

impl<'a> From<&'a OwnFields> for ResultFields<'a> {
    fn from(own: &'a OwnFields) -> ResultFields<'a> {
        ResultFields {
            failed: own.status == Some(CallStatus::Failed),
            content: own.content(),
            raw_output: own.raw_output(),
            terminal_output: own.terminal_output.as_deref(),
        }
    }
}

/// A frame's fields as JSON (`status`, `content`, `rawOutput`).
impl<'a> From<&'a Value> for ResultFields<'a> {
    fn from(call: &'a Value) -> ResultFields<'a> {
        ResultFields {
            failed: field(call, "status") == "failed",
            content: field(call, "content").as_array().map_or(&[], Vec::as_slice),
            raw_output: field(call, "rawOutput"),
            terminal_output: None,
        }
    }
}

/// [`render`] of a call's result fields.
pub(crate) fn render_fields<'a>(call: ResultFields<'a>, compat: &Compat) -> ToolResultContent<'a> {
    let mut r = ToolResultContent {
        terminal_output: call.terminal_output,
        ..ToolResultContent::default()
    };
    for item in call.content {
        r.tool_call_content(item);
    }
    let raw = call.raw_output;
    if r.is_empty() {
        raw_output(&mut r, raw, compat);
        if r.is_empty() {
            match raw {
                Value::Null => {}
                Value::String(s) => r.plain_text(s),
                other => r.push_text(Cow::Owned(other.to_string())),
            }
        }
    } else if r.images_seen == 0 && raw.is_object() {
        // **no image is lost**: an agent whose content is only the text of
        // an MCP result keeps its images in rawOutput (pi); they join the
        // content's text, which the rawOutput's own texts would repeat
        let mut extra = ToolResultContent::default();
        raw_output(&mut extra, raw, compat);
        if extra.images_seen > 0 {
            r.images_seen = extra.images_seen;
            let dropped = extra.images_seen > extra.images.len();
            r.images = extra.images;
            if dropped {
                r.texts.push(Cow::Borrowed(IMAGE_PLACEHOLDER));
            }
        }
    }
    r
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
            (
                "text content",
                json!({"content": [{"type": "content", "content": {"type": "text", "text": "a"}}, {"type": "content", "content": {"type": "text", "text": "b"}}]}),
                json!("a\nb"),
            ),
            (
                "diff",
                json!({"content": [{"type": "diff", "path": "f.txt", "oldText": "x", "newText": "y\nz"}]}),
                json!("f.txt\n-x\n+y\n+z"),
            ),
            (
                "terminal",
                json!({"content": [{"type": "terminal", "terminalId": "t1"}]}),
                json!("[terminal t1]"),
            ),
            (
                "codex mcp result in rawOutput",
                json!({"rawOutput": {"result": {"content": [{"type": "text", "text": "pong"}], "structuredContent": null, "_meta": null}, "error": null}}),
                json!("pong"),
            ),
            (
                "empty mcp content keeps the error text",
                json!({"rawOutput": {"result": {"content": []}, "error": "boom"}}),
                json!(r#"{"result":{"content":[]},"error":"boom"}"#),
            ),
            (
                "string rawOutput stays a string",
                json!({"rawOutput": "denied"}),
                json!("denied"),
            ),
            (
                "other rawOutput is stringified",
                json!({"rawOutput": {"kind": "unknown", "value": {"x": 1}}}),
                json!(r#"{"kind":"unknown","value":{"x":1}}"#),
            ),
            (
                "a text-only content takes rawOutput's images, not its texts",
                json!({"content": [{"type": "content", "content": {"type": "text", "text": "shot"}}], "rawOutput": {"content": [{"type": "text", "text": "shot"}, img("QUJD")]}}),
                json!([{"type": "text", "text": "shot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}]),
            ),
            (
                "content wins over rawOutput",
                json!({"content": [{"type": "content", "content": {"type": "text", "text": "c"}}], "rawOutput": "r"}),
                json!("c"),
            ),
            ("nothing", json!({}), json!("")),
            (
                "text and image",
                json!({"rawOutput": {"result": {"content": [{"type": "text", "text": "shot"}, img("QUJD")]}}}),
                json!([{"type": "text", "text": "shot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}]),
            ),
        ];
        for (name, call, want) in cases {
            assert_eq!(tool_result_content(&call), want, "{name}");
            assert_serialises_as_its_value(&call);
        }
        // a terminal shows the output its frames streamed, which the call
        // keeps beside its ACP fields
        let mut own =
            OwnFields::from(json!({"content": [{"type": "terminal", "terminalId": "t1"}]}));
        own.terminal_output = Some("hello\n".into());
        let rendered = render_fields((&own).into(), &Compat::default());
        assert_eq!(rendered.into_value(), json!("hello\n"));
    }

    /// The borrowed rendering the core serialises, and the bytes it writes
    /// into a panel line, are those of the `Value`.
    fn assert_serialises_as_its_value(call: &Value) {
        let rendered = render(call, &Compat::default());
        let typed = serde_json::to_string(&rendered).unwrap();
        let want = tool_result_content(call).to_string();
        assert_eq!(typed, want, "{call}");
        let mut written = Vec::new();
        crate::stream_json::ResultContent::write_to(&rendered, &mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), want, "{call}");
    }

    #[test]
    fn borrowed_rendering_has_the_bytes_of_the_value_form() {
        let uri = |data: &str| format!("data:image/png;base64,{data}");
        let calls = [
            json!({"rawOutput": {"result": {"content": [img("QUJD"), img("REVG")]}}}),
            // a type the check does not know: its data is written escaped
            json!({"rawOutput": {"content": [{"type": "image", "mimeType": "image/x-\"raw\"", "data": "a\"b\\c\n\u{e9}\u{1}"}, img("QQ==")]}}),
            json!({"rawOutput": {"result": {"content": [{"type": "text", "text": "a \"q\" \\ é\n"}, {"type": "text", "text": "b"}, img("QUJD")]}}}),
            json!({"rawOutput": {"type": "MCP", "output": {"OkayOutput": format!("shot\n{}\nsaved", uri("QUJD"))}}}),
            json!({"rawOutput": {"type": "MCP", "output": {"OkayOutput": uri("QUJD")}}}),
            json!({"rawOutput": {"type": "MCP", "output": {"OkayOutput": format!("{} and {}", uri(""), uri("QQ=="))}}}),
            json!({"content": [{"type": "content", "content": img("")}]}),
            json!({"content": [{"type": "diff", "path": "p", "oldText": "a", "newText": "b"}, {"type": "terminal", "terminalId": "t"}]}),
            json!({"rawOutput": {"error": {"message": "boom", "code": -32000, "data": {"x": 1}}}}),
            json!({"rawOutput": [1, 2]}),
            json!({"rawOutput": null}),
            json!({"content": []}),
        ];
        for call in &calls {
            assert_serialises_as_its_value(call);
        }
    }

    #[test]
    fn base64_run_stops_at_the_first_non_base64_byte_in_any_block_position() {
        let body: String = (0..200).map(|i| b"AZaz09+/="[i % 9] as char).collect();
        for end in [0, 1, 63, 64, 65, 127, 128, 199, 200] {
            for stop in ["\n", "\"", " ", ",", "-", "_", "é"] {
                let text = format!("{}{stop}QUJD", &body[..end]);
                assert_eq!(base64_run(text.as_bytes()), end, "end {end}, stop {stop:?}");
            }
            assert_eq!(
                base64_run(&body.as_bytes()[..end]),
                end,
                "end {end} at the end"
            );
        }
    }

    #[test]
    fn images_are_capped_and_oversized_ones_leave_a_placeholder() {
        let mut blocks: Vec<Value> = (0..5).map(|_| img("QQ==")).collect();
        blocks.push(img(&"A".repeat(MAX_IMAGE_BASE64 + 1)));
        let call = json!({"rawOutput": {"result": {"content": blocks}}});
        assert_serialises_as_its_value(&call);
        let out = tool_result_content(&call);
        let arr = out.as_array().unwrap();
        assert_eq!(arr[0], json!({"type": "text", "text": "[image]\n[image]"}));
        assert_eq!(arr.len(), 1 + MAX_IMAGES);
    }

    #[test]
    fn an_only_dropped_image_does_not_fall_back_to_raw_output() {
        let big = "A".repeat(MAX_IMAGE_BASE64 + 1);
        let out = tool_result_content(
            &json!({"content": [{"type": "content", "content": img(&big)}], "rawOutput": {"result": {"content": [img("QQ==")]}}}),
        );
        assert_eq!(out, json!("[image]"));
    }
}

#[cfg(test)]
mod compat_tests {
    use super::*;

    #[test]
    fn without_wrapper_support_a_wrapped_mcp_result_is_stringified_and_a_bare_one_still_read() {
        let off = Compat {
            mcp_raw_output_wrapper: false,
            ..Compat::default()
        };
        let wrapped = json!({"rawOutput": {"result": {"content": [{"type": "text", "text": "pong"}]}, "error": null}});
        assert_eq!(tool_result_content(&wrapped), json!("pong"));
        let degraded = tool_result_content_with(&wrapped, &off);
        assert_ne!(degraded, json!("pong"));
        assert!(
            degraded
                .as_str()
                .unwrap()
                .contains("\"result\":{\"content\""),
            "{degraded}"
        );
        let bare =
            json!({"rawOutput": {"content": [{"type": "text", "text": "pong"}], "isError": false}});
        assert_eq!(tool_result_content_with(&bare, &off), json!("pong"));
    }
}
