//! Metamorphic cases: real MCP results from the recorded corpus, moved into
//! every nesting an agent might use (the codex-acp wrapper, a bare
//! `CallToolResult`, an array under a key of its own at some depth, the bare
//! array, ACP `content` entries holding arrays or whole results), must render
//! to the same panel `tool_result` as the recorded shape.

use std::path::PathBuf;

use acp_bridge::call::result::{is_error, tool_result_content};
use serde_json::{Value, json};

/// Recordings whose finished tool calls carry MCP results in `rawOutput`:
/// text, text + image, and failures.
const CORPUS: &[&str] = &[
    "codex-acp/2.6.0/screenshot.jsonl",
    "codex-acp/2.6.0/unity-call-allowed.jsonl",
    "codex-acp/2.6.0/mcp-rpc-error.jsonl",
    "codex-acp/0.16.0/screenshot.jsonl",
    "codex-acp/0.16.0/unity-call-direct.jsonl",
];

/// The finished tool calls (their final update) of one recording.
fn finished_calls(rel: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../recordings")
        .join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = Vec::new();
    for line in text.lines() {
        let event: Value = serde_json::from_str(line).expect("recording line");
        if event["leg"] != "acp" || event["dir"] != "from_agent" {
            continue;
        }
        let raw = crate::support::recorded::raw(&event, &path).unwrap_or_default();
        let Ok(frame) = serde_json::from_str::<Value>(&raw) else {
            continue;
        };
        let update = &frame["params"]["update"];
        if update["sessionUpdate"] == "tool_call_update"
            && matches!(update["status"].as_str(), Some("completed" | "failed"))
            && !update["rawOutput"].is_null()
        {
            out.push(update.clone());
        }
    }
    out
}

/// The MCP content blocks of a recorded result, in whichever of the two
/// recorded shapes it came.
fn blocks_of(raw: &Value) -> Option<Value> {
    raw["result"]["content"]
        .as_array()
        .or(raw["content"].as_array())
        .filter(|b| !b.is_empty())
        .map(|b| Value::Array(b.clone()))
}

/// Every nesting of `blocks` as (name, call fields).
fn nestings(blocks: &Value, status: &Value) -> Vec<(&'static str, Value)> {
    let each_wrapped: Vec<Value> = blocks
        .as_array()
        .unwrap()
        .iter()
        .map(|b| json!({"type": "content", "content": b}))
        .collect();
    vec![
        ("codex-acp wrapper", json!({"rawOutput": {"result": {"content": blocks, "structuredContent": null}, "error": null}})),
        ("bare CallToolResult", json!({"rawOutput": {"content": blocks, "isError": false}})),
        ("array under an unknown key", json!({"rawOutput": {"tool": "x", "output": {"items": blocks}}})),
        ("array inside an array of objects", json!({"rawOutput": {"results": [{"value": blocks}]}})),
        ("bare array", json!({"rawOutput": blocks})),
        ("content entry holding the array", json!({"content": [{"type": "content", "content": blocks}]})),
        ("content entry holding a whole result", json!({"content": [{"type": "content", "content": {"content": blocks, "isError": false}}]})),
        ("one content entry per block", json!({"content": each_wrapped})),
        ("bare blocks as content entries", json!({"content": blocks})),
    ]
    .into_iter()
    .map(|(name, mut call)| {
        call["status"] = status.clone();
        (name, call)
    })
    .collect()
}

fn real_mcp_results_render_the_same_in_every_nesting() {
    let mut checked = 0;
    let mut with_image = 0;
    let mut failures = Vec::new();
    for rel in CORPUS {
        for call in finished_calls(rel) {
            let Some(blocks) = blocks_of(&call["rawOutput"]) else {
                continue;
            };
            let want = tool_result_content(&call);
            with_image += usize::from(want.is_array());
            for (name, moved) in nestings(&blocks, &call["status"]) {
                let got = tool_result_content(&moved);
                if got != want {
                    let cut = |v: &Value| v.to_string().chars().take(300).collect::<String>();
                    failures.push(format!(
                        "  {rel} / {name}: want {}, got {}",
                        cut(&want),
                        cut(&got)
                    ));
                }
                if is_error(&moved) != is_error(&call) {
                    failures.push(format!("  {rel} / {name}: is_error differs"));
                }
                checked += 1;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= 9 * 3,
        "only {checked} moved results checked: the corpus lost its MCP results?"
    );
    assert!(
        with_image >= 1,
        "no recorded result with an image: the image path went untested"
    );
}

fn real_mcp_errors_render_the_same_under_error_with_or_without_result() {
    let mut checked = 0;
    for rel in CORPUS {
        for call in finished_calls(rel) {
            let raw = &call["rawOutput"];
            if !(raw["result"].is_null() && raw["error"]["message"].is_string()) {
                continue;
            }
            let want = tool_result_content(&call);
            let message = &raw["error"]["message"];
            for moved in [
                json!({"status": "completed", "rawOutput": {"error": {"message": message}}}),
                json!({"status": "completed", "rawOutput": {"error": {"message": message}, "result": null, "meta": {}}}),
                json!({"status": "failed", "content": [{"type": "content", "content": {"error": {"message": message}}}]}),
            ] {
                assert_eq!(tool_result_content(&moved), want, "{rel}: {moved}");
                assert!(is_error(&moved), "{rel}: {moved} is an error");
                checked += 1;
            }
        }
    }
    assert!(checked >= 3, "no recorded MCP error found in the corpus");
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(tool_result_nesting: real_mcp_results_render_the_same_in_every_nesting, real_mcp_errors_render_the_same_under_error_with_or_without_result)
}
