//! The files a patch text writes: the `apply_patch` grammar (`*** Add File:`,
//! `*** Update File:`, `*** Move to:`) and unified diff headers (`+++ b/...`).
//! A tool that takes a patch (any name: `apply_patch`, an `edit` kind, a
//! shell heredoc) writes those files, so the gate judges them.

use serde_json::Value;

/// How deep [`patch_targets_in`] looks into a tool input.
const MAX_DEPTH: usize = 4;

/// The files `text` writes as a patch, in order; empty for any other text.
pub fn patch_targets(text: &str) -> Vec<String> {
    if !(text.contains("*** ") || text.contains("+++ ")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let target = ["*** Add File:", "*** Update File:", "*** Move to:"]
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .or_else(|| {
                let path = line.strip_prefix("+++ ")?;
                // `+++ b/path<TAB>date`; `/dev/null` is a deletion
                let path = path.split('\t').next().unwrap_or(path);
                (path.trim() != "/dev/null").then(|| path.strip_prefix("b/").unwrap_or(path))
            });
        if let Some(target) = target.map(str::trim).filter(|t| !t.is_empty()) {
            out.push(target.to_string());
        }
    }
    out
}

/// The files every patch text among the string values of `input` writes.
pub fn patch_targets_in(input: &Value) -> Vec<String> {
    fn walk(v: &Value, depth: usize, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.extend(patch_targets(s)),
            Value::Array(items) if depth > 0 => {
                items.iter().for_each(|i| walk(i, depth - 1, out));
            }
            Value::Object(map) if depth > 0 => {
                map.values().for_each(|i| walk(i, depth - 1, out));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(input, MAX_DEPTH, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_texts_name_the_files_they_write() {
        let cases = [
            (
                "*** Begin Patch\n*** Add File: Assets/Editor/Foo.cs\n+public class Foo {}\n*** End Patch",
                vec!["Assets/Editor/Foo.cs"],
            ),
            (
                "*** Begin Patch\n*** Update File: a.txt\n*** Move to: Assets/B.cs\n@@\n-x\n+y\n*** End Patch",
                vec!["a.txt", "Assets/B.cs"],
            ),
            (
                "--- a/Assets/C.cs\n+++ b/Assets/C.cs\t2026-01-01\n@@ -1 +1 @@\n-a\n+b\n",
                vec!["Assets/C.cs"],
            ),
            ("--- a/x.cs\n+++ /dev/null\n", vec![]),
            ("*** Delete File: Assets/D.cs", vec![]),
            ("just text with +++ inside", vec![]),
        ];
        for (text, want) in cases {
            assert_eq!(patch_targets(text), want, "{text}");
        }
    }
}
