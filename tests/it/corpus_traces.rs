//! Every committed recording is the same on every machine: no absolute path
//! of the machine that recorded it survives outside the header's
//! placeholders (its temp dir, home, a socket named by pid, a file named by
//! time, a directory named after a hash of the workspace path).
//!
//! What counts as a machine path: an absolute path under a per-machine root
//! (`/tmp`, `/var/tmp`, `/var/folders`, `/private`, `/root`, `/home`,
//! `/Users`, `/run/user`), or a path segment that is a hex digest (32+ hex
//! characters, e.g. `<home>/.gemini/tmp/<sha256>`), or, in any text of any
//! leg (stderr included), a trace with no root: a relative form of the run's
//! directory (`tmp/acp-harness-run-.../workspace`, `../../tmp/...`), a
//! short digest named after the workspace (`wd_workspace_<12 hex>`), or an
//! install-cache path (`.cache/acp-harness/...`, an install's
//! `node_modules` or venv `site-packages` outside `<package-dir>`/`<cache>`). Example paths that agents
//! write into their own prompts are the same everywhere; they are listed in
//! [`AGENT_PROMPT_LITERALS`] and allowed.
//!
//! Also no other spelling of such a path (a `file://` URL, a percent-encoded
//! component), no tail of a run path an agent shortened behind an ellipsis
//! (`...rness-run-x1/workspace`), and no machine's hostname as the value of
//! a host-name key (`"hostname":"vm"`; `<hostname>` is the placeholder), in
//! the recordings and the goldens made from them.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

/// Example paths from the agents' built-in system prompts and tool
/// descriptions (identical on every machine, not run-time traces).
const AGENT_PROMPT_LITERALS: &[&str] = &[
    // Gemini CLI's prompt: examples of a project directory and its memory file
    "/tmp/workspace",
    "/tmp/workspace/memory/MEMORY.md",
    // Grok Build's prompt: scratch-file examples
    "/tmp/",
    "/tmp/pr.md",
    "/tmp/msg.txt",
    "/tmp/mcp-call.json",
    // Grok Build / codex tool descriptions: example file paths
    "/home/user/project/file.txt",
    "/Users/me/closeup.jpg",
    "/Users/me/photo.jpg",
    "/Users/me/wide_shot.jpg",
    "/Users/me/person.jpg",
    "/Users/me/product.jpg",
    "/Users/me/host.jpg",
    // Claude Code's Bash tool description (2.1.44 ... 2.1.83, run by its ACP
    // adapter): how to quote `cd "/Users/name/My Documents"`
    "/Users/name/My",
];

fn recordings() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    out.sort();
    out
}

/// The goldens made from the recordings (replay outputs).
fn goldens() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// The machine paths in one line of text (a JSON-escaped `\/` reads as `/`).
fn machine_paths(line: &str) -> Vec<String> {
    static ROOTED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?:^|[\s"'`(\[=:,])((?:/tmp|/var/tmp|/var/folders|/private|/root|/home|/Users|/run/user)/[^\s"'`\\)\],;]*)"#,
        )
        .unwrap()
    });
    static HASHED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"/([0-9a-f]{32,})(?:[/.\\]|$)").unwrap());
    // Traces without a per-machine root: the run directory's name, a short
    // workspace digest, the install cache.
    static UNROOTED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(acp-harness-run-[A-Za-z0-9]+|(?i:workspace)[_-][0-9a-f]{8,}\b|\.cache/acp-harness[^\s"'`\\)\],;]*|acp-harness/(?:agents|pypi|node)/[^\s"'`\\)\],;]*)"#,
        )
        .unwrap()
    });
    let (rooted, hashed) = (&*ROOTED, &*HASHED);
    let line = if line.contains("\\/") {
        std::borrow::Cow::Owned(line.replace("\\/", "/"))
    } else {
        std::borrow::Cow::Borrowed(line)
    };
    let mut found: Vec<String> = rooted
        .captures_iter(&line)
        .map(|c| c[1].trim_end_matches(['.', ':']).to_string())
        .filter(|p| !AGENT_PROMPT_LITERALS.contains(&p.as_str()))
        .collect();
    found.extend(
        hashed
            .captures_iter(&line)
            .map(|c| format!(".../{}", &c[1])),
    );
    found.extend(UNROOTED.captures_iter(&line).map(|c| c[1].to_string()));
    found.extend(other_spellings(&line));
    found
}

/// Spellings of a machine path or name that [`machine_paths`]' plain path
/// patterns do not see.
fn other_spellings(line: &str) -> Vec<String> {
    static PATTERNS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            // a file:// URL or a percent-encoded component under a machine root
            r#"(file://(?:/tmp|/var|/private|/root|/home|/Users|/run/user)/[^\s"'`\\)\],;]*"#,
            r#"|(?i:%2F(?:tmp|var|private|root|home|Users|run)%2F)[^\s"'`\\)\],;]*"#,
            // a run path's tail behind an ellipsis
            r#"|(?:\.\.\.|\x{2026}|\\u2026)[A-Za-z0-9-]{1,24}(?:/|\\/)(?:workspace|home)\b"#,
            // a host-name key with a value that is not a placeholder
            r#"|(?i:host_?name|computer_?name|machine_?name|nodename)\\*"\s*:\s*\\*"[^"\\<][^"\\]*)"#,
        ))
        .unwrap()
    });
    PATTERNS
        .captures_iter(line)
        .map(|c| c[1].to_string())
        .collect()
}

fn machine_path_detection_finds_traces_and_spares_prompt_literals() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#""messaging_socket_path":"/tmp/cc-socks/5819.sock""#,
            &["/tmp/cc-socks/5819.sock"],
        ),
        (
            "Error report written to /tmp/gemini-client-error-2026-11-29T17-49-49-941Z.json.",
            &["/tmp/gemini-client-error-2026-11-29T17-49-49-941Z.json"],
        ),
        (
            "<home>/.gemini/tmp/7935193d8e3d19a3bdab2437e9333957eea0fe8096e1a16b4eebf5b71488c70c/out.log",
            &[".../7935193d8e3d19a3bdab2437e9333957eea0fe8096e1a16b4eebf5b71488c70c"],
        ),
        (r#""cwd":"\/home\/alice\/w""#, &["/home/alice/w"]),
        ("write to /tmp/pr.md first", &[]),
        (
            "<home>/.gemini/tmp/<workspace-hash>/out.log and <temp-1>",
            &[],
        ),
        ("see https://example.com/tmp/x", &[]),
        (
            "cd ../../tmp/acp-harness-run-Ab12/workspace",
            &["acp-harness-run-Ab12"],
        ),
        (
            "mkdir wd_workspace_3f2a9c81d0e4",
            &["workspace_3f2a9c81d0e4"],
        ),
        (
            "at ../.cache/acp-harness/agents/x@1/node_modules/y.js:1",
            &[".cache/acp-harness/agents/x@1/node_modules/y.js:1"],
        ),
        ("<cache>/agents/x@1 and <workspace-relative>", &[]),
        (
            "open file:///tmp/a%20b/workspace/x.cs",
            &["file:///tmp/a%20b/workspace/x.cs"],
        ),
        (
            "sessions/%2Ftmp%2Fr1%2Fworkspace/s.json",
            &["%2Ftmp%2Fr1%2Fworkspace/s.json"],
        ),
        (
            "Creating ...rness-run-YFhviP/workspace/Assets/Editor/Foo.cs",
            &["...rness-run-YFhviP/workspace"],
        ),
        (r#"{\"hostname\":\"vm\",\"x\":1}"#, &[r#"hostname\":\"vm"#]),
        (r#""hostName": "build-7""#, &[r#"hostName": "build-7"#]),
        (
            r#"{"hostname":"<hostname>"} and ...<run>/workspace and file://<run>/x"#,
            &[],
        ),
        ("a `node:vm` sandbox, a valid hostname (e.g.", &[]),
    ];
    for (line, want) in cases {
        assert_eq!(machine_paths(line), *want, "{line}");
    }
}

fn no_recording_carries_a_machine_path_outside_the_placeholders() {
    let mut problems = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = recordings();
    assert!(!files.is_empty(), "no recordings found");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            for path in machine_paths(line) {
                problems.push(format!(
                    "{}:{}: {path}",
                    file.strip_prefix(root).unwrap_or(file).display(),
                    i + 1
                ));
            }
        }
    }
    problems.dedup();
    assert!(
        problems.is_empty(),
        "{} machine path(s) in recordings (re-record them: the recorder now scrubs these):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn no_golden_carries_a_hostname_or_another_spelling_of_a_machine_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = goldens();
    assert!(!files.is_empty(), "no goldens found");
    let mut problems = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            for trace in other_spellings(&line.replace("\\/", "/")) {
                problems.push(format!(
                    "{}:{}: {trace}",
                    file.strip_prefix(root).unwrap_or(file).display(),
                    i + 1
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} trace(s) in goldens (re-record their recordings, then re-bless):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(corpus_traces: machine_path_detection_finds_traces_and_spares_prompt_literals, no_recording_carries_a_machine_path_outside_the_placeholders, no_golden_carries_a_hostname_or_another_spelling_of_a_machine_path)
}
