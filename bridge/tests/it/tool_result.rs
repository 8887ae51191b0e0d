//! Tool results against `tests/data/tool_result/results.json`: the
//! cases and every rawOutput shape the agents send, plus the invariant that
//! base64 never lands in result text.

use std::path::PathBuf;

use acp_bridge::call::result::{is_error, tool_result_content};
use serde_json::Value;

/// Replaces each `@filler:<n>` inside strings with n base64 characters.
fn expand(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("@filler:") => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(at) = rest.find("@filler:") {
                out.push_str(&rest[..at]);
                let digits: String = rest[at + 8..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                let n: usize = digits.parse().expect("filler length");
                out.extend(std::iter::repeat_n('A', n));
                rest = &rest[at + 8 + digits.len()..];
            }
            out.push_str(rest);
            *s = out;
        }
        Value::Array(items) => items.iter_mut().for_each(expand),
        Value::Object(map) => map.values_mut().for_each(expand),
        _ => {}
    }
}

fn texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => vec![],
    }
}

fn results_match_what_claude_would_show_for_every_agent_shape() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tool_result/results.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let data: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
    let mut failures = Vec::new();
    for case in data["cases"].as_array().expect("cases") {
        let name = case["case"].as_str().expect("case name");
        let (mut call, mut want) = (case["call"].clone(), case["content"].clone());
        expand(&mut call);
        expand(&mut want);
        let got = tool_result_content(&call);
        if got != want {
            let show = |v: &Value| {
                let s = v.to_string();
                if s.len() > 400 {
                    format!("{}... ({} chars)", &s[..400], s.len())
                } else {
                    s
                }
            };
            failures.push(format!(
                "  {name}: content want {}, got {}",
                show(&want),
                show(&got)
            ));
        }
        if is_error(&call) != case["is_error"] {
            failures.push(format!("  {name}: is_error want {}", case["is_error"]));
        }
        // base64 never lands in text: no run of 64 base64 filler characters
        if texts(&got).iter().any(|t| t.contains(&"A".repeat(64))) {
            failures.push(format!("  {name}: base64 landed in the result text"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(tool_result: results_match_what_claude_would_show_for_every_agent_shape)
}
