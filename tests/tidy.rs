//! Tidy checks over the workspace's own source, run as tests so CI and a
//! local `cargo test --workspace` enforce them alike.

use std::path::{Path, PathBuf};

/// A source file longer than this wants to be a folder.
const MAX_LINES: usize = 800;

/// Where non-test source lives, from the workspace root.
const SOURCE_DIRS: &[&str] = &[
    "src",
    "benches",
    "bridge/src",
    "bridge/benches",
    "process-group/src",
    "stub-mcp/src",
    "stub-mcp/benches",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_non_test_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut long: Vec<String> = files
        .iter()
        // a module's tests in their own file (`foo/tests.rs`) are test source
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).ok()?.lines().count();
            (lines > MAX_LINES).then(|| {
                format!(
                    "{}: {lines} lines",
                    p.strip_prefix(root).unwrap_or(p).display()
                )
            })
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines (split them into a folder of modules):\n{}",
        long.join("\n")
    );
}

/// ARCHITECTURE.md is a map a newcomer reads in ten minutes; the rules it
/// points at live in docs/.
const ARCHITECTURE_MAX_LINES: usize = 450;

#[test]
fn architecture_md_stays_a_map_of_at_most_450_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= ARCHITECTURE_MAX_LINES,
        "ARCHITECTURE.md has {lines} lines (at most {ARCHITECTURE_MAX_LINES}): \
         move the detail into docs/ and link it"
    );
}

#[test]
fn every_doc_architecture_md_links_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let missing: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("docs/") && s.ends_with(".md"))
        .filter(|s| !root.join(s).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names missing pages: {missing:?}"
    );
}
