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

/// A recording whose run did not end `ok` fails `check` with the outcome
/// named, golden or not: its frames stop or stray where the run went wrong.
/// One made from an older scenario file is counted in the summary, with
/// the command that re-records it.
fn check_judges_a_recording_by_how_its_run_ended_and_which_scenario_made_it() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = "recordings/kimi-code/2.1.0/text-only.jsonl";
    let recorded = std::fs::read_to_string(repo.join(rel)).unwrap();
    let (body, trailer) = recorded.trim_end().rsplit_once('\n').unwrap();
    assert!(trailer.contains(r#""outcome":"ok""#), "{trailer}");
    let sha = recorded
        .split(r#""scenario_sha256":""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    let cases = [
        ("the run as recorded", recorded.clone(), Some(0), ""),
        (
            // its transcript says so, which its golden did not
            "a run recorded from an older scenario file is counted stale",
            recorded.replacen(sha, &"0".repeat(sha.len()), 1),
            Some(1),
            "1 recorded from an older scenario file (re-record them: `record --agent <agent>@<version> --all --mode stale`; an imported one cannot be: ask for a new tap)",
        ),
        (
            "a run that went off script",
            format!(
                "{body}\n{}\n",
                trailer.replace(r#""outcome":"ok""#, r#""outcome":"off_script""#)
            ),
            Some(1),
            "the recording ended off_script, not ok",
        ),
        (
            "a run that left a scripted reply unasked",
            format!(
                "{body}\n{}\n",
                trailer.replace(r#""outcome":"ok""#, r#""outcome":"incomplete""#)
            ),
            Some(1),
            "the recording ended incomplete, not ok",
        ),
        (
            "a run cut off before its trailer",
            format!("{body}\n"),
            Some(1),
            "the recording is truncated",
        ),
    ];
    for (case, text, want_code, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["profiles", "scenarios"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
            for e in std::fs::read_dir(repo.join(sub)).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_file() {
                    std::fs::copy(e.path(), root.join(sub).join(e.file_name())).unwrap();
                }
            }
        }
        let snap = "tests/snapshots/replay__kimi-code__2.1.0__text-only.snap";
        std::fs::create_dir_all(root.join("tests/snapshots")).unwrap();
        std::fs::copy(repo.join(snap), root.join(snap)).unwrap();
        std::fs::create_dir_all(root.join("recordings/kimi-code/2.1.0")).unwrap();
        std::fs::write(root.join(rel), text).unwrap();
        let (code, out) = check(root);
        assert_eq!(code, want_code, "{case}: {out}");
        assert!(out.contains(want), "{case}: {want:?} not in:\n{out}");
    }
}

/// Runs `acp-harness <args>` from the repository root; exit code, stdout, stderr.
fn harness(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A character device like /dev/null (1, 3), made in `dir` so that nothing
/// of the machine's is at stake; None where devices cannot be made (not root).
fn char_device(dir: &Path) -> Option<std::path::PathBuf> {
    let path = dir.join("null");
    let c = std::ffi::CString::new(path.to_str()?).ok()?;
    // SAFETY: mknod with a valid C string.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    (made == 0).then_some(path)
}

fn outputs_that_are_not_files_are_written_in_place_and_symlinks_keep_their_link() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let check = |junit: &Path| {
        let junit = junit.to_str().unwrap();
        let args = [
            "check",
            "--filter",
            "grok/1.0.41/text-only",
            "--quiet",
            "--junit",
            junit,
        ];
        let (code, stdout, stderr) = harness(&args);
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {stderr}");
        stdout
    };
    let kind = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();

    // a character device stays one (as root, as CI runs)
    match char_device(dir.path()) {
        Some(dev) => {
            check(&dev);
            assert!(
                kind(&dev).is_char_device(),
                "{} was replaced",
                dev.display()
            );
            let dev_s = dev.to_str().unwrap();
            let (code, _, stderr) = harness(&[
                "drift",
                "--agent",
                "grok",
                "--from",
                "1.0.5",
                "--to",
                "1.0.41",
                "--scenario",
                "unity-call-allowed",
                "--out",
                dev_s,
            ]);
            assert!(matches!(code, Some(0 | 1)), "{stderr}");
            assert!(kind(&dev).is_char_device(), "drift --out replaced {dev_s}");
        }
        None => eprintln!("cannot make a character device here (not root): that case is not run"),
    }

    // a symlink: its target is replaced, the link stays
    let real = dir.path().join("real.xml");
    let link = dir.path().join("link.xml");
    std::fs::write(&real, "previous\n").unwrap();
    std::os::unix::fs::symlink("real.xml", &link).unwrap();
    check(&link);
    assert!(kind(&link).is_symlink());
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("<testsuite")
    );

    // a FIFO: streamed to whoever reads it, and still a FIFO
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    check(&fifo);
    assert!(reader.join().unwrap().contains("<testsuite"));
    assert!(kind(&fifo).is_fifo());

    // a file descriptor: what it is open to gets the file
    assert!(check(Path::new("/dev/fd/1")).contains("<testsuite"));

    // a directory: refused before the run (the report it also asked is never written)
    let report = dir.path().join("report");
    let (code, _, stderr) = harness(&[
        "check",
        "--filter",
        "grok/1.0.41/text-only",
        "--quiet",
        "--junit",
        dir.path().to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("is a directory"), "{stderr}");
    assert!(!report.join("index.html").exists());
}

fn a_recording_whose_header_names_a_path_is_an_error_and_reads_nothing_outside() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(repo.join("recordings/grok/1.0.41/text-only.jsonl")).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(header).unwrap();
    header["agent"] = "../../../../etc".into();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, format!("{header}\n{rest}")).unwrap();
    let (code, stdout, stderr) = harness(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("header agent = \"../../../../etc\" is not a name"),
        "{stdout}\n{stderr}"
    );
}

/// `check`, `replay`, `conformance` and `fake-agent` read a recording one
/// line at a time: a bad line deep in it is still an error naming the file
/// and the line, and never a panic.
fn a_bad_line_in_a_recording_is_an_error_naming_file_and_line_in_every_command_that_reads_it() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = repo.join("tests/cmd/golden-diff.in");
    let rel = "recordings/codex-acp/0.0.0-synthetic/text-only.jsonl";
    let good = std::fs::read(corpus.join(rel)).unwrap();
    let lines: Vec<&[u8]> = good.split(|b| *b == b'\n').collect();
    let with_line_5 = |bad: &[u8]| {
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            out.extend_from_slice(if i == 4 { bad } else { l });
            if i + 1 < lines.len() {
                out.push(b'\n');
            }
        }
        out
    };
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "not JSON",
            with_line_5(b"{\"type\":\"event\",\"seq\":"),
            "not a recording line",
        ),
        (
            "not UTF-8",
            with_line_5(b"{\"type\":\"event\xff\"}"),
            "not valid UTF-8",
        ),
        (
            "seq going back",
            with_line_5(
                &String::from_utf8_lossy(lines[4])
                    .replace("\"seq\":4,", "\"seq\":1,")
                    .into_bytes(),
            ),
            "seq 1 does not follow 3",
        ),
    ];
    for (what, text, want) in cases {
        let dir = synthetic_corpus_with(&text);
        let file = dir.path().join(rel);
        let root = dir.path().to_str().unwrap();
        let runs: [(&[&str], i32); 4] = [
            (&["check", "--color", "never", "--root", root], 1),
            (
                &[
                    "replay",
                    file.to_str().unwrap(),
                    "--color",
                    "never",
                    "--root",
                    root,
                ],
                1,
            ),
            (&["conformance", "--root", root], 0),
            (&["fake-agent", file.to_str().unwrap()], 2),
        ];
        for (args, code) in runs {
            let (got, stdout, stderr) = harness(args);
            let out = format!("{stdout}{stderr}");
            assert_eq!(got, Some(code), "{what}: {args:?}: {out}");
            assert!(
                out.contains(&format!("text-only.jsonl:5: {want}")),
                "{what}: {args:?}: no `text-only.jsonl:5: {want}` in:\n{out}"
            );
            assert!(!out.contains("panicked"), "{what}: {args:?}: {out}");
        }
    }
}

/// Runs the harness with `args`, killed if it has not ended within 60 s:
/// (exit code, stdout + stderr); `None` as the code when it hung.
fn harness_bounded(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    (status.and_then(|s| s.code()), text)
}

/// `check --color never --root <root>` and `more`, bounded as
/// [`harness_bounded`] is.
fn check_bounded(root: &Path, more: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "check".as_ref(),
        "--color".as_ref(),
        "never".as_ref(),
        "--root".as_ref(),
        root.as_os_str(),
    ];
    args.extend_from_slice(more);
    harness_bounded(&args)
}

/// A pull request's golden or recording that is a symlink (out of the
/// repository, to a device), a FIFO or a device is refused with exit 2
/// naming it: nothing it points at reaches the diff, the JUnit file or the
/// report, and nothing hangs. A regular golden whose header never ends in a
/// line is an error, read no further than its first 64 KiB.
#[cfg(unix)]
fn goldens_and_recordings_that_are_not_regular_files_are_refused_by_name() {
    use std::os::unix::fs::symlink;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = repo.join("tests/cmd/golden-diff.in");
    let golden_rel = "tests/snapshots/replay__codex-acp__0.0.0-synthetic__text-only.snap";
    let recording_rel = "recordings/codex-acp/0.0.0-synthetic/text-only.jsonl";
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        for entry in walkdir::WalkDir::new(&fixture) {
            let entry = entry.unwrap();
            let to = dir
                .path()
                .join(entry.path().strip_prefix(&fixture).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
        dir
    };
    let secret = "aws_secret_access_key = NOT-FOR-THE-REPORT";
    type Plant = fn(&Path, &Path);
    let cases: [(&str, &str, Plant); 5] = [
        (
            "a golden linked out of the repository",
            golden_rel,
            |at, outside| symlink(outside, at).unwrap(),
        ),
        ("a golden linked to /dev/zero", golden_rel, |at, _| {
            symlink("/dev/zero", at).unwrap()
        }),
        ("a golden that is a FIFO", golden_rel, |at, _| {
            assert!(Command::new("mkfifo").arg(at).status().unwrap().success())
        }),
        (
            "a recording linked out of the repository",
            recording_rel,
            |at, outside| symlink(outside, at).unwrap(),
        ),
        ("a recording that is a FIFO", recording_rel, |at, _| {
            assert!(Command::new("mkfifo").arg(at).status().unwrap().success())
        }),
    ];
    for (what, rel, plant) in cases {
        let dir = fresh();
        let outside = dir.path().join("outside-credentials");
        std::fs::write(&outside, format!("{secret}\n")).unwrap();
        let at = dir.path().join(rel);
        std::fs::remove_file(&at).unwrap();
        plant(&at, &outside);
        let report = dir.path().join("report");
        let junit = dir.path().join("junit.xml");
        let (code, text) = check_bounded(
            dir.path(),
            &[
                "--report".as_ref(),
                report.as_os_str(),
                "--junit".as_ref(),
                junit.as_os_str(),
            ],
        );
        assert_eq!(code, Some(2), "{what}: {text}");
        assert!(
            text.contains(&at.display().to_string()),
            "{what}: not named in {text}"
        );
        assert!(text.contains("regular files only"), "{what}: {text}");
        assert!(!text.contains(secret), "{what}: {text}");
        for out in [&report.join("index.html"), &junit] {
            let written = std::fs::read_to_string(out).unwrap_or_default();
            assert!(!written.contains(secret), "{what}: in {}", out.display());
        }
    }

    let dir = fresh();
    let golden = dir.path().join(golden_rel);
    std::fs::write(&golden, vec![b'-'; 4 * 1024 * 1024]).unwrap();
    let (code, text) = check_bounded(dir.path(), &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("a header line is over 64 KiB"), "{text}");
}

/// A recording whose payload is stored by content reads as the inline one;
/// a blob missing or corrupt is a tool error (exit 2) in every command that
/// reads it, naming the file, the line, the event and the hash, and never
/// other bytes replayed.
fn a_missing_or_corrupt_blob_is_a_tool_error_naming_recording_event_and_hash() {
    use acp_harness::corpus::recording::blobs;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = repo.join("tests/cmd/golden-diff.in");
    let rel = "recordings/codex-acp/0.0.0-synthetic/text-only.jsonl";
    let inline = std::fs::read_to_string(corpus.join(rel)).unwrap();
    let mut lines: Vec<String> = inline.lines().map(str::to_string).collect();
    lines[0] = lines[0].replacen(r#""format":1"#, r#""format":2"#, 1);
    let mut event: serde_json::Value = serde_json::from_str(&lines[4]).unwrap();
    let payload = event["raw"].as_str().unwrap().to_string();
    let hash = blobs::sha256_hex(payload.as_bytes());
    event["raw"] = blobs::marker(&hash).into();
    event["blobs"] = serde_json::json!([{"at": 0, "sha256": hash}]);
    lines[4] = event.to_string();
    let stored = lines.join("\n") + "\n";

    let root_with = |blob: Option<&str>, text: &str| {
        let dir = synthetic_corpus_with(text.as_bytes());
        let store = dir.path().join("recordings/blobs/sha256");
        std::fs::create_dir_all(&store).unwrap();
        if let Some(blob) = blob {
            std::fs::write(store.join(&hash), blob).unwrap();
        }
        dir
    };
    let check_of =
        |dir: &Path| harness(&["check", "--color", "never", "--root", dir.to_str().unwrap()]);
    // whole, the stored form judges as the inline one
    let (inline_root, stored_root) = (root_with(None, &inline), root_with(Some(&payload), &stored));
    let (a, b) = (check_of(inline_root.path()), check_of(stored_root.path()));
    assert_eq!((a.0, &a.1), (b.0, &b.1), "{}\n{}", a.2, b.2);

    for (what, blob, want) in [
        ("missing", None, "no such file"),
        ("corrupt", Some("other bytes"), "is corrupt"),
    ] {
        let dir = root_with(blob, &stored);
        let root = dir.path().to_str().unwrap();
        let file = dir.path().join(rel);
        let file = file.to_str().unwrap();
        for args in [
            &["check", "--color", "never", "--root", root][..],
            &["replay", file, "--color", "never", "--root", root],
            &["conformance", "--root", root],
            &["fake-agent", file],
        ] {
            let (code, stdout, stderr) = harness(args);
            let out = format!("{stdout}{stderr}");
            assert_eq!(code, Some(2), "{what}: {args:?}: {out}");
            assert!(
                out.contains(&format!("text-only.jsonl:5: event seq 4: sha256:{hash}")),
                "{what}: {args:?}: the recording, event and hash unnamed in:\n{out}"
            );
            assert!(out.to_lowercase().contains(want), "{what}: {args:?}: {out}");
            assert!(!out.contains("panicked"), "{what}: {args:?}: {out}");
        }
    }
}

/// A corpus in a temp dir holding the text-only scenario and, as the
/// synthetic codex-acp recording of `tests/cmd/golden-diff.in`, `text`.
fn synthetic_corpus_with(text: &[u8]) -> tempfile::TempDir {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmd/golden-diff.in");
    let dir = tempfile::tempdir().unwrap();
    for sub in [
        "profiles",
        "scenarios",
        "tests/snapshots",
        "recordings/codex-acp/0.0.0-synthetic",
    ] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::copy(
        fixture.join("scenarios/text-only.toml"),
        dir.path().join("scenarios/text-only.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.path()
            .join("recordings/codex-acp/0.0.0-synthetic/text-only.jsonl"),
        text,
    )
    .unwrap();
    dir
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(check_command: check_fails_on_a_broken_profile_naming_file_and_line, check_passes_the_committed_profiles, check_output_is_the_same_for_any_number_of_workers, check_judges_a_recording_by_how_its_run_ended_and_which_scenario_made_it, outputs_that_are_not_files_are_written_in_place_and_symlinks_keep_their_link, a_recording_whose_header_names_a_path_is_an_error_and_reads_nothing_outside, a_bad_line_in_a_recording_is_an_error_naming_file_and_line_in_every_command_that_reads_it, #[cfg(unix)] goldens_and_recordings_that_are_not_regular_files_are_refused_by_name, a_missing_or_corrupt_blob_is_a_tool_error_naming_recording_event_and_hash)
}
