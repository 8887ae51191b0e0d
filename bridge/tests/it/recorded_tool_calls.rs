//! Tool naming and results against the real recordings in `recordings/`
//! (every agent and version recorded so far): each tool call's frames are
//! merged as the core merges them, and what the panel would get is checked
//! against what the recording's own frames say.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acp_bridge::call::identity::{
    CallFields, claude_tool_name, merge_tool_call, permission_tool_call, tool_input,
};
use acp_bridge::call::result::{MAX_IMAGES, is_error, tool_result_content};
use serde_json::Value;

fn recordings() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The agent's frames of one recording that are about tool calls, in order:
/// (toolCallId, fields to merge, whether the frame is a permission request).
fn tool_frames(path: &Path) -> Vec<(String, CallFields, bool)> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let event: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
        if event["leg"] != "acp" || event["dir"] != "from_agent" {
            continue;
        }
        let Some(frame) = crate::support::recorded::raw(&event, path)
            .and_then(|r| serde_json::from_str::<Value>(&r).ok())
        else {
            continue;
        };
        match frame["method"].as_str() {
            Some("session/update") => {
                let u = &frame["params"]["update"];
                if matches!(
                    u["sessionUpdate"].as_str(),
                    Some("tool_call" | "tool_call_update")
                ) && let Some(id) = u["toolCallId"].as_str()
                {
                    out.push((id.to_string(), u.clone().into(), false));
                }
            }
            Some("session/request_permission") => {
                let tc = &frame["params"]["toolCall"];
                if let Some(id) = tc["toolCallId"].as_str() {
                    out.push((id.to_string(), permission_tool_call(tc), true));
                }
            }
            _ => {}
        }
    }
    out
}

fn texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => vec![],
    }
}

fn collect_images<'a>(v: &'a Value, out: &mut std::collections::BTreeSet<&'a str>) {
    match v {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("image")
                && let Some(data) = map.get("data").and_then(Value::as_str)
            {
                out.insert(data);
            }
            map.values().for_each(|x| collect_images(x, out));
        }
        Value::Array(items) => items.iter().for_each(|x| collect_images(x, out)),
        // Grok inlines images in its MCP output text as `data:image/...;base64,...` URIs
        Value::String(text) => {
            let mut rest = text.as_str();
            while let Some(at) = rest.find("data:image/") {
                rest = &rest[at..];
                let Some(comma) = rest.find(";base64,") else {
                    break;
                };
                let data = &rest[comma + ";base64,".len()..];
                let end = data
                    .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')))
                    .unwrap_or(data.len());
                out.insert(&data[..end]);
                rest = &data[end..];
            }
        }
        _ => {}
    }
}

/// A run of this many base64 characters in result text means an image leaked into it.
fn has_base64_run(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=') {
            run + 1
        } else {
            0
        };
        if run >= 200 {
            return true;
        }
    }
    false
}

fn recorded_mcp_calls_are_named_structurally_and_their_results_keep_images_as_blocks() {
    let files = recordings();
    assert!(!files.is_empty(), "no recordings found");
    let mut failures = Vec::new();
    let mut finished_calls = 0;
    let mut image_blocks = 0;
    for file in &files {
        let name = file
            .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
            .unwrap_or(file)
            .display()
            .to_string();
        let mut calls: BTreeMap<String, CallFields> = BTreeMap::new();
        for (id, fields, _) in tool_frames(file) {
            let fields_in = calls.entry(id.clone()).or_default();
            merge_tool_call(fields_in, &fields);
            let call = &*fields_in;
            let raw = call.own.raw_input();
            // every call whose rawInput names a server and tool is that MCP tool, with its arguments
            if let (Some(server), Some(tool)) = (raw["server"].as_str(), raw["tool"].as_str()) {
                let want = format!("mcp__{server}__{tool}");
                if claude_tool_name(call) != want {
                    failures.push(format!(
                        "  {name} {id}: named {}, want {want}",
                        claude_tool_name(call)
                    ));
                }
                if raw["arguments"].is_object() && tool_input(call) != raw["arguments"] {
                    failures.push(format!(
                        "  {name} {id}: input {} is not the arguments",
                        tool_input(call)
                    ));
                }
            }
            let status = fields.own.status.as_ref().map_or("", |s| s.as_str());
            if status != "completed" && status != "failed" {
                continue;
            }
            finished_calls += 1;
            let own = serde_json::to_value(&call.own).unwrap();
            let content = tool_result_content(&own);
            if texts(&content).iter().any(|t| has_base64_run(t)) {
                failures.push(format!("  {name} {id}: base64 landed in the result text"));
            }
            // distinct images anywhere in the call (codex 0.x sends each in content and rawOutput)
            let mut distinct = std::collections::BTreeSet::new();
            collect_images(&own, &mut distinct);
            let recorded_images = distinct.len();
            let images: Vec<&Value> = content
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "image")
                .collect();
            if images.len() != recorded_images.min(MAX_IMAGES) {
                failures.push(format!(
                    "  {name} {id}: {} image blocks for {recorded_images} recorded images",
                    images.len()
                ));
            }
            image_blocks += images.len();
            if images
                .iter()
                .any(|i| i["source"]["type"] != "base64" || !i["source"]["media_type"].is_string())
            {
                failures.push(format!(
                    "  {name} {id}: an image block is not an Anthropic base64 image"
                ));
            }
            if status == "failed" && !is_error(&own) {
                failures.push(format!(
                    "  {name} {id}: a failed call is not an error result"
                ));
            }
        }
    }
    assert!(
        finished_calls > 0,
        "the recordings hold no finished tool call"
    );
    assert!(
        image_blocks > 0,
        "no recorded result gave an image block (the screenshot recordings should)"
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(recorded_tool_calls: recorded_mcp_calls_are_named_structurally_and_their_results_keep_images_as_blocks)
}
