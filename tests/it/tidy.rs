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

/// Non-test lines of `bridge/src` that name `serde_json::Value`: the
/// bridge reads ACP and writes Claude's lines as types, and raw JSON is
/// kept where a frame's content is passed on as it came. The bound only
/// comes down; lower it when the count does.
const MAX_VALUE_LINES: usize = 480;

/// The non-test lines of `file` naming `Value`: a `#[cfg(test)]` module
/// declared inline runs to the end of the file, by the workspace's habit.
fn lines_naming_value(source: &str) -> usize {
    let word = regex::Regex::new(r"\bValue\b").expect("a valid pattern");
    let mut lines = source.lines();
    let mut count = 0;
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines.next().unwrap_or_default().trim();
            if next.contains("mod ") && next.ends_with('{') {
                break;
            }
            continue;
        }
        count += usize::from(word.is_match(line));
    }
    count
}

/// The files of modules declared only for tests (`#[cfg(test)] mod x;`),
/// beside the `tests.rs` files.
fn test_only_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let declared =
        regex::Regex::new(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+);")
            .expect("a valid pattern");
    let mut test_only = Vec::new();
    for file in files {
        let Ok(source) = std::fs::read_to_string(file) else {
            continue;
        };
        let dir = match file.file_stem().and_then(|s| s.to_str()) {
            Some("mod" | "lib" | "main") => file.parent().map(Path::to_path_buf),
            Some(stem) => file.parent().map(|p| p.join(stem)),
            None => None,
        };
        for name in declared.captures_iter(&source) {
            if let Some(dir) = &dir {
                test_only.push(dir.join(format!("{}.rs", &name[1])));
                test_only.push(dir.join(&name[1]).join("mod.rs"));
            }
        }
    }
    test_only
}

fn the_bridge_names_value_in_no_more_non_test_lines_than_its_bound() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("bridge/src"), &mut files);
    let test_only = test_only_files(&files);
    let mut per_file: Vec<(usize, String)> = files
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs") && !test_only.contains(p))
        .filter_map(|p| {
            let n = lines_naming_value(&std::fs::read_to_string(p).ok()?);
            let name = p.strip_prefix(root).unwrap_or(p).display().to_string();
            (n > 0).then_some((n, name))
        })
        .collect();
    per_file.sort_by(|a, b| b.cmp(a));
    let total: usize = per_file.iter().map(|(n, _)| n).sum();
    let top: Vec<String> = per_file
        .iter()
        .take(10)
        .map(|(n, f)| format!("{n} {f}"))
        .collect();
    assert!(
        total <= MAX_VALUE_LINES,
        "{total} non-test lines of bridge/src name Value (at most {MAX_VALUE_LINES}); \
         read it as a type instead. Most:\n{}",
        top.join("\n")
    );
}

fn the_value_count_skips_test_modules_and_counts_whole_words() {
    let source = "use serde_json::Value;\nfn f(v: &Value) {}\nstruct ValueLike;\n\
        #[cfg(test)]\nmod helpers;\nlet x: Value;\n#[cfg(test)]\nmod tests {\n    use Value;\n}\n";
    assert_eq!(lines_naming_value(source), 3);
}

fn architecture_md_stays_a_map_of_at_most_450_lines() {
    page_of_at_most("ARCHITECTURE.md", ARCHITECTURE_MAX_LINES);
}

/// The text of `page` (from the workspace root), which must have at most
/// `max` lines: the detail belongs in a docs/ page it links.
fn page_of_at_most(page: &str, max: usize) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(page)).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= max,
        "{page} has {lines} lines (at most {max}): move the detail into docs/ and link it"
    );
    text
}

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

/// Every file or folder ARCHITECTURE.md names (a backticked name with a
/// file extension or a trailing `/`, `::item` aside) is one of the
/// repository's: the whole path, or the end of one (a code-map bullet names
/// a module's files relative to it).
fn every_path_architecture_md_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut known: Vec<String> = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| {
            !matches!(
                e.file_name().to_str(),
                Some("target" | ".git" | "node_modules")
            )
        })
        .filter_map(Result::ok)
    {
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        known.push(match entry.file_type().is_dir() {
            true => format!("/{rel}/"),
            false => format!("/{rel}"),
        });
    }
    const EXTENSIONS: [&str; 8] = [
        ".rs", ".md", ".toml", ".py", ".mjs", ".json", ".jsonl", ".yml",
    ];
    let missing: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|name| name.split("::").next().unwrap_or(name))
        .filter(|name| !name.contains(['*', '<', ' ']))
        .filter(|name| name.ends_with('/') || EXTENSIONS.iter().any(|x| name.ends_with(x)))
        .filter(|name| !known.iter().any(|k| k.ends_with(&format!("/{name}"))))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {missing:?}"
    );
}

/// Which units a unit imports (a unit is a module path cut at one depth).
type Edges = std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>;

/// One source tree whose module imports the layer table in ARCHITECTURE.md
/// governs: the folder, and the names its code uses for its own crate.
struct Tree {
    dir: &'static str,
    column: usize,
    crate_names: &'static [&'static str],
}

const LAYERED_TREES: &[Tree] = &[
    Tree {
        dir: "src",
        column: 1,
        crate_names: &["crate", "acp_harness"],
    },
    Tree {
        dir: "bridge/src",
        column: 2,
        crate_names: &["crate", "acp_bridge"],
    },
];

/// The layer table under `## Layers`: per tree column, each unit's layer
/// index (0 = the top). A unit is a top-level module, named in backticks.
fn layer_table(architecture: &str, column: usize) -> std::collections::BTreeMap<String, usize> {
    let section = architecture
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .expect("ARCHITECTURE.md has a `## Layers` section");
    let rows = section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| layer"));
    let mut table = std::collections::BTreeMap::new();
    for (index, row) in rows.enumerate() {
        let cell = row.split('|').nth(column + 1).unwrap_or("");
        for unit in cell.split('`').skip(1).step_by(2) {
            table.insert(unit.to_string(), index);
        }
    }
    table
}

/// The module path of a source file under its tree (`cli/check.rs` is
/// `["cli", "check"]`; `lib.rs` and `main.rs` are the roots `[]` and `["main"]`).
fn module_path(tree: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(tree).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The modules of the same crate that `source` names in code (comments and
/// the tests at a file's end left out), as full module paths. Paths through
/// `super` are resolved against `me`.
fn imports(source: &str, me: &[String], crate_names: &[&str]) -> Vec<Vec<String>> {
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    for line in code.lines().map(str::trim_start) {
        if line.starts_with("//") {
            continue;
        }
        let bytes = line.as_bytes();
        let mut at = 0;
        while at < line.len() {
            let start = at;
            while at < line.len()
                && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_' || bytes[at] == b':')
            {
                at += 1;
            }
            if at == start {
                at += 1;
                continue;
            }
            let before_ok = start == 0
                || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
            let token = &line[start..at];
            let path: Vec<&str> = token.split("::").filter(|s| !s.is_empty()).collect();
            // `use crate::{a, b::c}`: each name in the group is its own import
            let grouped = token.ends_with("::") && line[at..].starts_with('{');
            if !before_ok || (path.len() < 2 && !grouped) {
                continue;
            }
            let resolved: Option<Vec<String>> = if crate_names.contains(&path[0]) {
                Some(path[1..].iter().map(|s| s.to_string()).collect())
            } else if path[0] == "super" {
                // `super` of a module `a::b` is `a`; of a file-module the same
                let supers = path.iter().take_while(|p| **p == "super").count();
                (supers <= me.len()).then(|| {
                    let mut base = me[..me.len() - supers].to_vec();
                    base.extend(path[supers..].iter().map(|s| s.to_string()));
                    base
                })
            } else {
                None
            };
            // `use crate::{a, b::c}` groups: each name is its own import
            if let Some(r) = resolved {
                if grouped {
                    let group = line[at + 1..].split('}').next().unwrap_or("");
                    for item in group.split(',') {
                        let mut import = r.clone();
                        import.extend(
                            item.trim()
                                .split("::")
                                .filter(|s| !s.is_empty() && *s != "self" && !s.starts_with('{'))
                                .map(str::to_string),
                        );
                        if !import.is_empty() {
                            found.push(import);
                        }
                    }
                } else if !r.is_empty() {
                    found.push(r);
                }
            }
        }
    }
    found
}

/// Edges between units at `depth` (1: top-level modules; 2: the modules
/// inside one top-level folder; and so on down), from every non-test source file of `tree`.
fn unit_edges(root: &Path, tree: &Tree, depth: usize) -> Edges {
    let dir = root.join(tree.dir);
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    // only paths to modules are imports; an item the crate root re-exports
    // belongs to the root's facade, not to a module of its own
    let modules: std::collections::BTreeSet<Vec<String>> = files
        .iter()
        .map(|f| module_path(&dir, f))
        .filter(|m| m.len() >= depth)
        .map(|m| m[..depth].to_vec())
        .collect();
    let mut edges = Edges::new();
    for file in files
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
    {
        let me = module_path(&dir, file);
        if me.len() < depth {
            continue;
        }
        let unit = me[..depth].to_vec();
        let source = std::fs::read_to_string(file).unwrap();
        for import in imports(&source, &me, tree.crate_names) {
            if import.len() < depth || import[..depth - 1] != unit[..depth - 1] {
                continue;
            }
            let other = import[..depth].to_vec();
            if other != unit && modules.contains(&other) {
                edges.entry(unit.clone()).or_default().insert(other);
            }
        }
        edges.entry(unit).or_default();
    }
    edges
}

/// The length of the longest module path in `tree`: cycles are looked for
/// among the siblings of every folder, however deep.
fn deepest_module(root: &Path, tree: &Tree) -> usize {
    let dir = root.join(tree.dir);
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    files
        .iter()
        .map(|f| module_path(&dir, f).len())
        .max()
        .unwrap_or(1)
}

/// A cycle in `edges`, as the units on it, if there is one.
fn find_cycle(edges: &Edges) -> Option<Vec<Vec<String>>> {
    fn visit(
        node: &Vec<String>,
        edges: &Edges,
        state: &mut std::collections::BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    return Some(stack[from..].to_vec());
                }
                0 => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = Default::default();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut state, &mut Vec::new()))
}

fn modules_import_only_their_own_layer_or_below_and_never_in_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut problems = Vec::new();
    for tree in LAYERED_TREES {
        let table = layer_table(&architecture, tree.column);
        assert!(
            table.len() > 3,
            "{}: the layer table names too few modules",
            tree.dir
        );
        let top = unit_edges(root, tree, 1);
        for (unit, targets) in &top {
            let Some(&mine) = table.get(&unit[0]) else {
                problems.push(format!(
                    "{}: module `{}` is in no row of the layer table",
                    tree.dir, unit[0]
                ));
                continue;
            };
            for target in targets {
                match table.get(&target[0]) {
                    Some(&theirs) if theirs < mine => problems.push(format!(
                        "{}: `{}` imports `{}`, a layer above it",
                        tree.dir, unit[0], target[0]
                    )),
                    None => problems.push(format!(
                        "{}: module `{}` is in no row of the layer table",
                        tree.dir, target[0]
                    )),
                    _ => {}
                }
            }
        }
        for depth in 1..=deepest_module(root, tree) {
            if let Some(cycle) = find_cycle(&unit_edges(root, tree, depth)) {
                let names: Vec<String> = cycle.iter().map(|u| u.join("::")).collect();
                problems.push(format!("{}: import cycle {}", tree.dir, names.join(" -> ")));
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "layering (ARCHITECTURE.md, ## Layers):\n{}",
        problems.join("\n")
    );
}

/// The test above must see what it judges: a planted cycle and an upward
/// import are found.
fn the_layer_check_finds_an_upward_import_and_a_cycle() {
    let me = vec!["corpus".to_string(), "profile".to_string()];
    let found = imports(
        "use crate::{cli, judging::judge};\nuse super::recording::X;\n// crate::packages\nfn f() { acp_harness::tracking::run(); }\n#[cfg(test)]\nuse crate::capture;",
        &me,
        &["crate", "acp_harness"],
    );
    let tops: Vec<&str> = found.iter().map(|p| p[0].as_str()).collect();
    assert_eq!(tops, ["cli", "judging", "corpus", "tracking"]);
    let mut edges = std::collections::BTreeMap::new();
    let unit = |s: &str| vec![s.to_string()];
    edges.insert(unit("a"), [unit("b")].into_iter().collect());
    edges.insert(unit("b"), [unit("c")].into_iter().collect());
    edges.insert(unit("c"), [unit("a")].into_iter().collect());
    assert_eq!(find_cycle(&edges).map(|c| c.len()), Some(3));
    edges.insert(unit("c"), Default::default());
    assert_eq!(find_cycle(&edges), None);
}

/// README.md is the front door (what it is, the two commands, the first ten
/// minutes, where to go next); the manual is the book in docs/.
fn readme_stays_a_front_door_of_at_most_150_lines() {
    let readme = page_of_at_most("README.md", 150);
    for command in [
        "cargo run --release -p acp-harness -- check",
        "cargo test --workspace",
    ] {
        assert!(
            readme.contains(command),
            "README.md lost the command `{command}`"
        );
    }
}

/// docs/SUMMARY.md lists every page of the book once, and every page it
/// lists exists, so mdBook builds the whole manual and no page is orphaned.
/// Drift reports (`drift-*.md`, written by `update` and `drift --out`) may
/// be listed or not: a new one must not fail the suite.
fn the_docs_book_lists_every_page_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).unwrap();
    let mut listed: Vec<String> = summary
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .filter(|n| !n.starts_with("drift-"))
        .map(str::to_string)
        .collect();
    listed.sort();
    let twice: Vec<&String> = listed
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| &w[0])
        .collect();
    assert!(
        twice.is_empty(),
        "listed twice in docs/SUMMARY.md: {twice:?}"
    );
    let mut pages: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md" && !n.starts_with("drift-"))
        .collect();
    pages.sort();
    assert_eq!(listed, pages, "docs/SUMMARY.md against the pages in docs/");
}

/// Each shared dependency's features, as `cargo tree` resolves them for
/// `selection` (`name version` -> the feature sets it is built with).
fn resolved_features(
    selection: &[&str],
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--offline", "--locked", "-e", "normal,dev,build"])
        // the host platform: its crates are the ones a test build fetched
        .args(["-f", "{p} {f}", "--prefix", "none"])
        .args(selection)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {selection:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut features: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        let mut parts = line.splitn(3, ' ');
        let (Some(name), Some(version)) = (parts.next(), parts.next()) else {
            continue;
        };
        let feats = parts.next().unwrap_or("").to_string();
        // workspace members are named by path, not built with features
        if !feats.starts_with('(') {
            features
                .entry(format!("{name} {version}"))
                .or_default()
                .insert(feats);
        }
    }
    features
}

fn the_bridge_alone_builds_shared_dependencies_with_the_workspaces_features() {
    // what `workspace-hack` is for: `cargo test -p acp-bridge` after a
    // workspace build rebuilds nothing below the bridge
    let bridge = resolved_features(&["-p", "acp-bridge"]);
    let workspace = resolved_features(&["--workspace"]);
    let differ: Vec<String> = bridge
        .iter()
        .filter(|(k, f)| workspace.get(*k).is_some_and(|w| w != *f))
        .map(|(k, f)| format!("{k}: bridge {f:?}, workspace {:?}", workspace[k]))
        .collect();
    assert!(
        differ.is_empty(),
        "add these features to workspace-hack/Cargo.toml:\n{}",
        differ.join("\n")
    );
}

/// No committed recording names the machine it was recorded on by its
/// kernel release: the recorder writes `<kernel-release>`, and
/// `acp-harness record --migrate` mends files an older recorder wrote.
fn no_recording_holds_a_recording_machines_kernel_release() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let releases = acp_harness::capture::rescrub::kernel_releases(&text);
        if !releases.is_empty() {
            found.push(format!("{}: {releases:?}", entry.path().display()));
        }
    }
    assert!(
        found.is_empty(),
        "run `acp-harness record --migrate`:\n{}",
        found.join("\n")
    );
}

/// The corpus stores each large payload once: no committed recording holds
/// one inline, every blob a recording references is in the store, and the
/// store holds nothing no recording references (`acp-harness record --migrate`
/// mends all three from a recording an older recorder wrote).
fn large_payloads_are_stored_once_and_every_blob_is_referenced() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let audit = acp_harness::capture::migrate::audit(&root).unwrap();
    assert!(
        audit.inline.is_empty(),
        "payloads inline (run `acp-harness record --migrate`):\n{}",
        audit.inline.join("\n")
    );
    assert!(
        audit.missing.is_empty(),
        "blobs referenced but not in recordings/blobs:\n{}",
        audit.missing.join("\n")
    );
    assert!(
        audit.orphans.is_empty(),
        "blobs no recording references (run `acp-harness record --migrate`):\n{}",
        audit.orphans.join("\n")
    );
}

/// Byte-faithful: every recording that stores payloads reads back frame for
/// frame (sha256 of each raw) as its inline form does, and storing that
/// inline form again gives the committed file byte for byte.
fn every_recording_with_blobs_reads_back_the_frames_of_its_inline_form() {
    use acp_harness::capture::migrate::{to_inline, to_stored};
    use acp_harness::corpus::recording::{self, blobs};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let scratch = tempfile::tempdir().unwrap();
    let store = blobs::BlobStore::at(scratch.path().join(blobs::STORE));
    let digests = |r: &recording::Recording| -> Vec<String> {
        r.events
            .iter()
            .map(|e| blobs::sha256_hex(e.raw.as_bytes()))
            .collect()
    };
    let mut with_blobs = 0;
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let path = entry.path();
        let text = std::fs::read_to_string(path).unwrap();
        if !text.contains(r#""blobs":"#) {
            continue;
        }
        with_blobs += 1;
        let inline = to_inline(&text, path).unwrap();
        assert!(!inline.contains(r#""blobs":"#), "{}", path.display());
        let stored = recording::read(path).unwrap();
        let inlined = recording::parse_str(&inline, path).unwrap();
        assert_eq!(digests(&stored), digests(&inlined), "{}", path.display());
        assert!(
            to_stored(&inline, path, &store).unwrap() == text,
            "{}: storing its inline form again differs from the committed file",
            path.display()
        );
    }
    assert!(with_blobs > 0, "no recording stores a payload");
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(tidy: no_non_test_source_file_is_over_800_lines, the_bridge_names_value_in_no_more_non_test_lines_than_its_bound, the_value_count_skips_test_modules_and_counts_whole_words, architecture_md_stays_a_map_of_at_most_450_lines, every_doc_architecture_md_links_exists, every_path_architecture_md_names_exists, modules_import_only_their_own_layer_or_below_and_never_in_a_cycle, the_layer_check_finds_an_upward_import_and_a_cycle, readme_stays_a_front_door_of_at_most_150_lines, the_docs_book_lists_every_page_once, the_bridge_alone_builds_shared_dependencies_with_the_workspaces_features, no_recording_holds_a_recording_machines_kernel_release, large_payloads_are_stored_once_and_every_blob_is_referenced, every_recording_with_blobs_reads_back_the_frames_of_its_inline_form)
}
