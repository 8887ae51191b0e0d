//! `acp-harness check` validates every profile it finds, without npm: a
//! profile with a syntax error, an unknown key or a bad recipe range fails
//! the check with `file:line`, even when no recording uses it.

use std::path::Path;
use std::process::Command;

fn check(root: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["check", "--root"])
        .arg(root)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn check_fails_on_a_broken_profile_naming_file_and_line() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let good = std::fs::read_to_string(repo.join("profiles/grok.toml")).unwrap();
    let line = |needle: &str| good.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let cases = [
        (
            good.replace("flavour = ", "flavour == "),
            format!("broken.toml:{}: ", line("flavour = ")),
        ),
        (
            good.replace("timeout_ms = ", "timeout_msec = "),
            format!(
                "broken.toml:{}: unknown field `timeout_msec`",
                line("timeout_ms = ")
            ),
        ),
        (
            good.replacen("versions = \"", "versions = \"~~", 1),
            format!("broken.toml:{}: recipe 1", line("versions = ")),
        ),
    ];
    for (text, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
        std::fs::create_dir_all(dir.path().join("recordings")).unwrap();
        std::fs::write(dir.path().join("profiles/grok.toml"), &good).unwrap();
        std::fs::write(dir.path().join("profiles/broken.toml"), text).unwrap();
        let (code, out) = check(dir.path());
        assert_eq!(code, Some(1), "{want}: {out}");
        assert!(
            out.contains("profile error: ") && out.contains(&want),
            "{want:?} not in:\n{out}"
        );
        assert!(
            !out.contains("grok.toml:"),
            "the good profile passes: {out}"
        );
    }
}

#[test]
fn check_passes_the_committed_profiles() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("recordings")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    for e in std::fs::read_dir(repo.join("profiles")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join("profiles").join(e.file_name())).unwrap();
    }
    let (code, out) = check(dir.path());
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn check_output_is_the_same_for_any_number_of_workers() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |jobs: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
            .args(["check", "--color", "never", "--format", "json"])
            .args(["--filter", "gemini-cli/0.61.0", "--jobs", jobs, "--root"])
            .arg(repo)
            .output()
            .unwrap();
        (out.status.code(), out.stdout)
    };
    let (one_code, one) = run("1");
    let (three_code, three) = run("3");
    assert_eq!(one_code, three_code);
    assert!(!one.is_empty(), "check printed nothing");
    assert!(
        one == three,
        "--jobs 1 and --jobs 3 differ:\n{}\n---\n{}",
        String::from_utf8_lossy(&one),
        String::from_utf8_lossy(&three)
    );
}
