//! Every command that reads a profile refuses a corrupt one before doing
//! anything: exit 2, and an error naming the file, the line and the field.
//! Each corruption kind (a TOML syntax error, an empty file, an unknown key,
//! a value out of bounds) against each such command (bisect, record,
//! outdated, update, install).

use std::path::Path;
use std::process::{Command, Stdio};

struct Corruption {
    kind: &'static str,
    /// The profile text from the committed codex-acp profile.
    corrupt: fn(&str) -> String,
    /// What the error must say after `<file>:<line>: `.
    says: &'static str,
    /// The line named; 0: the line starting with `marker`.
    line: usize,
    marker: &'static str,
}

fn corruptions() -> Vec<Corruption> {
    vec![
        Corruption {
            kind: "toml syntax error",
            corrupt: |t| t.replacen("id = \"codex-acp\"", "id = \"codex-acp", 1),
            says: "(in `id`)",
            line: 10,
            marker: "",
        },
        Corruption {
            kind: "empty file",
            corrupt: |_| String::new(),
            says: "missing field `id`",
            line: 1,
            marker: "",
        },
        Corruption {
            kind: "unknown key",
            corrupt: |t| t.replacen("[stop]\n", "[stop]\ncolour = \"red\"\n", 1),
            says: "unknown field `colour`",
            line: 0,
            marker: "colour",
        },
        Corruption {
            kind: "install timeout out of bounds",
            corrupt: |t| t.replacen("[stop]\n", "[install]\ntimeout_secs = 0\n[stop]\n", 1),
            says: "[install] timeout_secs = 0: must be 1 to",
            line: 0,
            marker: "timeout_secs",
        },
    ]
}

const COMMANDS: &[&[&str]] = &[
    &[
        "bisect",
        "--agent",
        "codex-acp",
        "--scenario",
        "permission-denied",
        "--offline",
        "--color",
        "never",
    ],
    &["record", "--agent", "codex-acp", "--scenario", "text-only"],
    &["outdated", "--agent", "codex-acp", "--offline"],
    &[
        "update",
        "--agent",
        "codex-acp",
        "--version",
        "9.9.9",
        "--scenario",
        "text-only",
    ],
    &["install", "codex-acp"],
];

/// A root with the committed scenarios and codex-acp recordings and a
/// corrupt codex-acp profile.
fn root_with(profile: &str) -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::write(root.join("profiles/codex-acp.toml"), profile).unwrap();
    for sub in ["scenarios", "recordings/codex-acp/0.16.0"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
        for e in std::fs::read_dir(repo.join(sub)).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), root.join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    dir
}

fn a_corrupt_profile_is_exit_2_naming_file_line_and_field_for_every_command_that_reads_it() {
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/codex-acp.toml"),
    )
    .unwrap();
    for c in corruptions() {
        let text = (c.corrupt)(&good);
        assert_ne!(text, good, "{}: the corruption applies", c.kind);
        let line = if c.line == 0 {
            text.lines().position(|l| l.starts_with(c.marker)).unwrap() + 1
        } else {
            c.line
        };
        let dir = root_with(&text);
        for args in COMMANDS {
            let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
                .args(*args)
                .current_dir(dir.path())
                .env("XDG_CACHE_HOME", dir.path().join("cache"))
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("{} with a profile with a {}", args[0], c.kind);
            assert_eq!(out.status.code(), Some(2), "{what}: exit 2\n{stderr}");
            let at = format!("profiles/codex-acp.toml:{line}: ");
            assert!(
                stderr.contains(&at) && stderr.contains(c.says),
                "{what}: names {at}... {}\n{stderr}",
                c.says
            );
            assert!(
                String::from_utf8_lossy(&out.stdout).trim().is_empty(),
                "{what}: nothing done before the refusal"
            );
        }
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(corrupt_profiles: a_corrupt_profile_is_exit_2_naming_file_line_and_field_for_every_command_that_reads_it)
}
