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

/// What a patch text does, in Claude's terms (docs/bridge-behaviour.md,
/// "Tool identity"): a patch that adds one file is a `Write` of its text;
/// one that changes one file is an `Edit` of it, with the strings a single
/// hunk replaces; a patch over several files, or a move, is an `Edit` of its
/// first file. `None` for a text that writes no file.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchChange {
    Write {
        file_path: String,
        content: String,
    },
    Edit {
        file_path: String,
        /// `old_string` and `new_string`, when one hunk says them.
        strings: Option<(String, String)>,
    },
}

/// One file a patch names, as [`patch_change`] reads it.
#[derive(Default)]
struct PatchFile {
    path: String,
    added: bool,
    deleted: bool,
    moved: bool,
    /// Each hunk's old and new lines.
    hunks: Vec<(Vec<String>, Vec<String>)>,
}

/// [`PatchChange`] for `text`: the `apply_patch` grammar or a unified diff.
pub fn patch_change(text: &str) -> Option<PatchChange> {
    if patch_targets(text).is_empty() {
        return None;
    }
    let mut files: Vec<PatchFile> = Vec::new();
    let mut from_null = false;
    for line in text.lines().map(|l| l.trim_end_matches('\r')) {
        let header = |prefix: &str| line.strip_prefix(prefix).map(str::trim);
        if let Some(path) = header("*** Add File:") {
            files.push(PatchFile {
                path: path.into(),
                added: true,
                ..PatchFile::default()
            });
        } else if let Some(path) = header("*** Update File:") {
            files.push(PatchFile {
                path: path.into(),
                ..PatchFile::default()
            });
        } else if let Some(path) = header("*** Delete File:") {
            files.push(PatchFile {
                path: path.into(),
                deleted: true,
                ..PatchFile::default()
            });
        } else if header("*** Move to:").is_some() {
            if let Some(file) = files.last_mut() {
                file.moved = true;
            }
        } else if line.starts_with("*** ") {
            // `*** Begin Patch`, `*** End Patch`, `*** End of File`
        } else if let Some(path) = header("--- ") {
            from_null = path.split('\t').next() == Some("/dev/null");
        } else if let Some(path) = header("+++ ") {
            let path = path.split('\t').next().unwrap_or(path);
            files.push(PatchFile {
                path: path.strip_prefix("b/").unwrap_or(path).into(),
                added: from_null,
                deleted: path == "/dev/null",
                ..PatchFile::default()
            });
        } else if let Some(file) = files.last_mut() {
            if line.starts_with("@@") {
                // a first hunk from line 0 of no lines creates the file
                file.added |= file.hunks.is_empty() && line.starts_with("@@ -0,0 ");
                file.hunks.push((Vec::new(), Vec::new()));
                continue;
            }
            let (old, new) = match line.split_at_checked(1) {
                Some(("+", rest)) => (None, Some(rest)),
                Some(("-", rest)) => (Some(rest), None),
                Some((" ", rest)) => (Some(rest), Some(rest)),
                _ => continue,
            };
            if file.hunks.is_empty() {
                file.hunks.push((Vec::new(), Vec::new()));
            }
            let hunk = file.hunks.last_mut().expect("pushed above");
            hunk.0.extend(old.map(String::from));
            hunk.1.extend(new.map(String::from));
        }
    }
    // a header without a path names no file
    files.retain(|f| !f.path.is_empty());
    let written: Vec<&PatchFile> = files.iter().filter(|f| !f.deleted).collect();
    let first = written.first()?;
    let file_path = first.path.clone();
    if written.len() > 1 || files.len() > 1 || first.moved {
        return Some(PatchChange::Edit {
            file_path,
            strings: None,
        });
    }
    if first.added {
        let lines: Vec<&str> = first
            .hunks
            .iter()
            .flat_map(|h| &h.1)
            .map(String::as_str)
            .collect();
        let mut content = lines.join("\n");
        if !lines.is_empty() {
            content.push('\n');
        }
        return Some(PatchChange::Write { file_path, content });
    }
    let strings = match first.hunks.as_slice() {
        [(old, new)] => Some((old.join("\n"), new.join("\n"))),
        _ => None,
    };
    Some(PatchChange::Edit { file_path, strings })
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
    #[test]
    fn a_patch_is_a_write_or_an_edit_of_its_file() {
        let edit = |p: &str, s: Option<(&str, &str)>| PatchChange::Edit {
            file_path: p.into(),
            strings: s.map(|(o, n)| (o.into(), n.into())),
        };
        let cases = [
            (
                "one added file is a Write of its lines",
                "*** Begin Patch\n*** Add File: Assets/Editor/Foo.cs\n+public class Foo {}\n*** End Patch",
                Some(PatchChange::Write {
                    file_path: "Assets/Editor/Foo.cs".into(),
                    content: "public class Foo {}\n".into(),
                }),
            ),
            (
                "one hunk is an Edit of its strings",
                "*** Begin Patch\n*** Update File: a.txt\n@@ fn main\n keep\n-x\n+y\n*** End Patch",
                Some(edit("a.txt", Some(("keep\nx", "keep\ny")))),
            ),
            (
                "two hunks are an Edit of the file",
                "*** Update File: a.txt\n@@\n-x\n+y\n@@\n-z\n+w\n",
                Some(edit("a.txt", None)),
            ),
            (
                "a move is an Edit of the file it moves",
                "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n",
                Some(edit("a.txt", None)),
            ),
            (
                "several files are an Edit of the first",
                "*** Add File: a.cs\n+x\n*** Add File: b.cs\n+y\n",
                Some(edit("a.cs", None)),
            ),
            (
                "a unified diff from /dev/null is a Write",
                "--- /dev/null\n+++ b/Assets/C.cs\n@@ -0,0 +1 @@\n+class C {}\n",
                Some(PatchChange::Write {
                    file_path: "Assets/C.cs".into(),
                    content: "class C {}\n".into(),
                }),
            ),
            (
                "a unified diff whose first hunk starts at line 0 creates its file",
                "--- Assets/C.cs\n+++ Assets/C.cs\n@@ -0,0 +1,1 @@\n+class C {}\n",
                Some(PatchChange::Write {
                    file_path: "Assets/C.cs".into(),
                    content: "class C {}\n".into(),
                }),
            ),
            (
                "a unified diff hunk is an Edit",
                "--- a/C.cs\n+++ b/C.cs\n@@ -1 +1 @@\n-a\n+b\n",
                Some(edit("C.cs", Some(("a", "b")))),
            ),
            (
                "a deletion writes nothing",
                "*** Delete File: Assets/D.cs",
                None,
            ),
            (
                "a header without a path names no file",
                "*** Add File: \n+x\n*** Add File: b.cs\n+é\n",
                Some(PatchChange::Write {
                    file_path: "b.cs".into(),
                    content: "é\n".into(),
                }),
            ),
            ("text is no patch", "just text with +++ inside", None),
        ];
        for (case, text, want) in cases {
            assert_eq!(patch_change(text), want, "{case}");
        }
    }
}
