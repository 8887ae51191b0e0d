//! The golden regression: one trial per committed recording under
//! `recordings/`, named `<agent>/<version>/<scenario>`, replaying it through
//! the bridge and checking the golden (`tests/snapshots/`, insta) and the
//! scenario's expectations; plus the replayer's own behaviour on bad input
//! and a proof that the goldens bite. The corpus trials are of kind
//! `corpus` (listed as `[corpus] <agent>/<version>/<scenario>`), so CI can
//! leave them to `acp-harness check` (`-- --skip '[corpus]'`) and replay
//! the corpus once.
//!
//! Bless new or changed goldens with `INSTA_UPDATE=always cargo test --test
//! replay` (or `cargo insta review` where cargo-insta is installed); CI never
//! writes (`CI=true` makes insta read-only).

use std::path::{Path, PathBuf};

use acp_harness::judging::judge::golden::{self, Comparison};
use acp_harness::judging::judge::{Case, Corpus, Status};
use libtest_mimic::{Failed, Trial};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

thread_local! {
    /// Set while insta asserts a golden: its panic is our verdict, not a crash to print.
    static IN_INSTA: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A behaviour trial: its name and body.
type BehaviourTrial = (&'static str, fn() -> Result<(), Failed>);

/// Keeps insta's panic (a golden that differs) out of the output: the
/// trial reports it.
pub(crate) fn quiet_insta_panics() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_INSTA.with(|f| f.get()) {
            default_hook(info);
        }
    }));
}

/// One trial per committed recording, and the replayer's behaviour trials.
pub(crate) fn trials() -> Vec<Trial> {
    let corpus = Corpus::at(root());
    let mut trials = Vec::new();
    let recordings = if corpus.recordings.exists() {
        corpus.recordings().unwrap_or_default()
    } else {
        Vec::new()
    };
    for path in &recordings {
        let id = corpus.id_of(path, None);
        let (corpus, path) = (corpus.clone(), path.clone());
        // kind `corpus`: `-- --skip [corpus]` leaves the corpus to `check`
        trials.push(
            Trial::test(id.trial_name(), move || recording_trial(&corpus, &path))
                .with_kind("corpus"),
        );
    }
    let behaviour: [BehaviourTrial; 9] = [
        (
            "fake_agent_serves_a_recording_on_stdio_with_ids_remapped",
            fake_agent_on_stdio,
        ),
        (
            "truncated_recording_replays_what_is_there_and_says_so",
            truncated_recording,
        ),
        (
            "malformed_line_is_reported_as_file_and_line",
            malformed_line,
        ),
        ("unknown_format_version_is_refused", unknown_format),
        (
            "replay_of_any_recording_ends_with_a_transcript_never_a_hang",
            synthetic_replay_ends,
        ),
        (
            "known_limitation_passes_when_exactly_the_listed_expectations_fail",
            known_limitation_holds,
        ),
        (
            "known_limitation_whose_expectation_passes_again_fails_the_trial",
            known_limitation_no_longer_holds,
        ),
        (
            "known_limitation_does_not_cover_an_unlisted_failure",
            known_limitation_extra_failure,
        ),
        (
            "every_error_of_a_case_is_kept",
            every_error_of_a_case_is_kept,
        ),
    ];
    for (name, f) in behaviour {
        trials.push(Trial::test(format!("replay-behaviour/{name}"), f));
    }
    let bite = first_recording_with_golden(&corpus, &recordings);
    trials.push(
        Trial::test(
            "replay-behaviour/goldens_bite_on_an_altered_agent_frame",
            move || goldens_bite(bite.as_ref().expect("trial is ignored without a recording")),
        )
        .with_ignored_flag(bite_ignored(&corpus, &recordings)),
    );
    trials
}

/// One recording: golden (bless through insta when asked) + expectations + no divergence.
fn recording_trial(corpus: &Corpus, path: &Path) -> Result<(), Failed> {
    let mut case = corpus.judge(path);
    if let Some(Comparison::Differs(_) | Comparison::Missing) = &case.golden
        && bless_through_insta(&case)
    {
        case.golden = Some(Comparison::Same);
    }
    if case.passed() {
        return Ok(());
    }
    let mut report = case.report();
    if matches!(
        case.golden,
        Some(Comparison::Differs(_) | Comparison::Missing)
    ) {
        report.push_str(&format!(
            "\nOutside CI, insta left the new transcript in {}.new for review; bless it with \
             `INSTA_UPDATE=always cargo test --test it -- <agent>/<version>/` (or `cargo insta review`).\n",
            case.id.snapshot_path(&corpus.snapshots).display()
        ));
    }
    Err(report.into())
}

/// Hands the transcript to insta, which writes it when blessing is on
/// (`INSTA_UPDATE=always`) or leaves a `.snap.new` for review. Returns
/// whether insta accepted it.
fn bless_through_insta(case: &Case) -> bool {
    // the committed file name: `replay__<agent>__<version>__<scenario>.snap`
    let name = format!("{}__{}", golden::SNAPSHOT_PREFIX, case.id.snapshot_name());
    let transcript = case.transcript.text();
    let description = format!("replay of {}", case.id.trial_name());
    IN_INSTA.with(|f| f.set(true));
    let accepted = std::panic::catch_unwind(move || {
        let mut settings = insta::Settings::clone_current();
        settings.set_omit_expression(true);
        settings.set_snapshot_path(root().join("tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_description(description);
        settings.bind(|| insta::assert_snapshot!(name, transcript));
    })
    .is_ok();
    IN_INSTA.with(|f| f.set(false));
    accepted
}

fn fixture() -> PathBuf {
    root().join("tests/fixtures/synthetic-text-only.jsonl")
}

/// A corpus whose goldens live in an empty directory (behaviour trials judge
/// copies, not the committed corpus).
fn scratch_corpus(dir: &Path) -> Corpus {
    Corpus::at(root())
        .with_recordings(dir)
        .with_snapshots(&dir.join("snapshots"))
}

/// Writes `text` as a recording copy in a fresh directory; returns (dir, path).
fn copy_with(text: &str, name: &str) -> Result<(tempfile::TempDir, PathBuf), Failed> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(name);
    std::fs::write(&path, text)?;
    Ok((dir, path))
}

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(msg().into()) }
}

fn truncated_recording() -> Result<(), Failed> {
    let text = std::fs::read_to_string(fixture())?;
    let without_trailer: String = text
        .lines()
        .filter(|l| !l.contains(r#""type":"trailer""#))
        .map(|l| format!("{l}\n"))
        .collect();
    let (dir, path) = copy_with(&without_trailer, "truncated.jsonl")?;
    let case = scratch_corpus(dir.path()).judge(&path);
    ensure(case.errors.is_empty(), || {
        format!("a truncated recording must still replay: {:?}", case.errors)
    })?;
    ensure(case.trailer.is_none(), || "no trailer, no time".into())?;
    ensure(
        case.transcript
            .contains("recording is truncated (no trailer)"),
        || {
            format!(
                "the transcript must say the recording is truncated:\n{}",
                case.transcript
            )
        },
    )?;
    ensure(case.transcript.contains("trailer: missing"), || {
        case.transcript.text()
    })
}

/// A case collects every error it meets: an unreadable known-limitations
/// file does not hide that the run was cut off, nor the other way round.
fn every_error_of_a_case_is_kept() -> Result<(), Failed> {
    let text = std::fs::read_to_string(fixture())?.replacen(
        r#""synthetic":true"#,
        r#""synthetic":false"#,
        1,
    );
    let cut: String = text
        .lines()
        .filter(|l| !l.contains(r#""type":"trailer""#))
        .map(|l| format!("{l}\n"))
        .collect();
    let (dir, path) = copy_with(&cut, "cut.jsonl")?;
    let agent_dir = dir.path().join("codex-acp");
    std::fs::create_dir_all(&agent_dir)?;
    std::fs::write(
        agent_dir.join("KNOWN_LIMITATIONS.toml"),
        "this is [not toml",
    )?;
    let case = scratch_corpus(dir.path()).judge(&path);
    ensure(case.errors.len() == 2, || {
        format!(
            "want the limitations error and the cut-off run, got {:?}",
            case.errors
        )
    })?;
    ensure(case.errors[0].starts_with("known limitations:"), || {
        format!("{:?}", case.errors)
    })?;
    ensure(case.errors[1].contains("truncated"), || {
        format!("{:?}", case.errors)
    })
}

fn malformed_line() -> Result<(), Failed> {
    let text = std::fs::read_to_string(fixture())?;
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "{this is not json");
    let (dir, path) = copy_with(&(lines.join("\n") + "\n"), "malformed.jsonl")?;
    let case = scratch_corpus(dir.path()).judge(&path);
    let error = case.error().unwrap_or_default();
    ensure(error.contains("malformed.jsonl:4:"), || {
        format!("the error must name file:line, got {error:?}")
    })
}

fn unknown_format() -> Result<(), Failed> {
    let text = std::fs::read_to_string(fixture())?.replacen(r#""format":1"#, r#""format":99"#, 1);
    let (dir, path) = copy_with(&text, "future.jsonl")?;
    let case = scratch_corpus(dir.path()).judge(&path);
    let error = case.error().unwrap_or_default();
    ensure(error.contains("format 99 is not supported"), || {
        format!("must refuse format 99 clearly, got {error:?}")
    })
}

/// Whatever the bridge does with a recording, the replay finishes and says
/// where it stopped (the synthetic fixture is never evidence of agent behaviour).
fn synthetic_replay_ends() -> Result<(), Failed> {
    let corpus = scratch_corpus(&root().join("tests/fixtures"));
    let case = corpus.judge(&fixture());
    ensure(case.errors.is_empty(), || format!("{:?}", case.errors))?;
    // the trailer's time is how long the run took to record (update reports it)
    ensure(case.trailer.as_ref().map(|t| t.ms) == Some(106), || {
        format!("the case keeps the recording's trailer: {:?}", case.trailer)
    })?;
    ensure(case.synthetic, || {
        "the fixture's header says synthetic".into()
    })?;
    let t = &case.transcript.text();
    ensure(
        t.lines()
            .any(|l| l.starts_with("panel> ") && l.contains(r#""subtype":"initialize""#)),
        || t.clone(),
    )
}

fn first_recording_with_golden(corpus: &Corpus, recordings: &[PathBuf]) -> Option<PathBuf> {
    recordings
        .iter()
        .find(|p| alterable(corpus, p).is_some())
        .cloned()
}

fn bite_ignored(corpus: &Corpus, recordings: &[PathBuf]) -> bool {
    first_recording_with_golden(corpus, recordings).is_none()
}

/// A recording with a golden and an agent text chunk to alter: (line index, marker-bearing line).
fn alterable(corpus: &Corpus, path: &Path) -> Option<(usize, String)> {
    let id = corpus.id_of(path, None);
    golden::read(&id.snapshot_path(&corpus.snapshots)).ok()??;
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().enumerate().find_map(|(i, line)| {
        let event: serde_json::Value = serde_json::from_str(line).ok()?;
        if event["leg"] != "acp" || event["dir"] != "from_agent" {
            return None;
        }
        let mut frame: serde_json::Value = serde_json::from_str(event["raw"].as_str()?).ok()?;
        let update = frame.pointer_mut("/params/update")?;
        if update["sessionUpdate"] != "agent_message_chunk"
            || !update["content"]["text"].is_string()
        {
            return None;
        }
        update["content"]["text"] = serde_json::Value::String(BITE_MARKER.to_string());
        let mut event = event.clone();
        event["raw"] = serde_json::Value::String(frame.to_string());
        Some((i, event.to_string()))
    })
}

const BITE_MARKER: &str = "ALTERED-BY-THE-GOLDENS-BITE-TEST";

/// A copy of a committed recording with one agent text chunk changed must
/// fail its golden, and the explanation must point at the altered event.
fn goldens_bite(path: &Path) -> Result<(), Failed> {
    let corpus = Corpus::at(root());
    let (index, altered) = alterable(&corpus, path).ok_or("no agent text chunk to alter")?;
    let text = std::fs::read_to_string(path)?;
    let copy: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == index {
                altered.clone()
            } else {
                l.to_string()
            }
        })
        .collect();
    let id = corpus.id_of(path, None);
    let dir = tempfile::tempdir()?;
    let copy_path = dir
        .path()
        .join(&id.agent)
        .join(&id.version)
        .join(format!("{}.jsonl", id.scenario));
    std::fs::create_dir_all(copy_path.parent().unwrap())?;
    std::fs::write(&copy_path, copy.join("\n") + "\n")?;
    let scratch = corpus.clone().with_recordings(dir.path());
    let case = scratch.judge(&copy_path);
    let Some(Comparison::Differs(explanation)) = &case.golden else {
        return Err(format!(
            "the altered copy must fail its golden, got {:?}",
            case.golden
        )
        .into());
    };
    let first = explanation
        .lines()
        .skip_while(|l| !l.starts_with("first divergent event"))
        .nth(2)
        .unwrap_or("");
    ensure(
        first.starts_with("  replay: agent>bridge") && first.contains(BITE_MARKER),
        || format!("the first divergent event must be the altered agent frame:\n{explanation}"),
    )?;
    ensure(
        explanation
            .lines()
            .any(|l| l.starts_with("+bridge>panel") && l.contains(BITE_MARKER)),
        || format!("the bridge's panel output must show the altered text too:\n{explanation}"),
    )
}

/// `acp-harness fake-agent` as a process: a client's initialize (with its
/// own id) gets the recorded answer under that id; stdin EOF ends it, and
/// what the client never sent is reported on stderr with a failing exit.
fn fake_agent_on_stdio() -> Result<(), Failed> {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["fake-agent", "--idle-timeout-secs", "20"])
        .arg(fixture())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let outcome = (|| -> Result<(), Failed> {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":41,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{"fs":{{"readTextFile":false,"writeTextFile":false}},"terminal":false}}}}}}"#
        )?;
        stdin.flush()?;
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .map_err(|_| "no answer within 20 s")??;
        let answer: serde_json::Value = serde_json::from_str(&line)?;
        ensure(
            answer["id"] == 41 && answer["result"]["protocolVersion"] == 1,
            || {
                format!(
                    "the recorded initialize answer must come back under the client's id 41: {line}"
                )
            },
        )?;
        drop(stdin);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = child.try_wait()? {
                ensure(!status.success(), || {
                    "session/new and session/prompt were never sent: must exit non-zero".into()
                })?;
                break;
            }
            if std::time::Instant::now() > deadline {
                return Err("fake-agent did not exit within 20 s of stdin EOF".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().ok_or("no stderr")?, &mut stderr)?;
        ensure(
            stderr.contains("session/new") && stderr.contains("never sent"),
            || format!("stderr: {stderr}"),
        )
    })();
    // Whatever happened, the process we started is ended by us.
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

const PING_TOOL_USE: &str = "tool_use name=mcp__unity-ops__uap_ping count exactly 1";
const PING_RESULT: &str = r#"tool_result tool=mcp__unity-ops__uap_ping count exactly 1 is_error=false text_contains="pong""#;

/// Judges a copy of a committed gemini-cli recording of unity-call-allowed in
/// a scratch corpus whose gemini-cli known-limitations file has one entry
/// listing `failing` for that version.
fn judge_with_limitation(version: &str, failing: &[&str]) -> Result<Case, Failed> {
    let dir = tempfile::tempdir()?;
    let agent_dir = dir.path().join("gemini-cli");
    let version_dir = agent_dir.join(version);
    std::fs::create_dir_all(&version_dir)?;
    let path = version_dir.join("unity-call-allowed.jsonl");
    std::fs::copy(
        root()
            .join("recordings/gemini-cli")
            .join(version)
            .join("unity-call-allowed.jsonl"),
        &path,
    )?;
    let listed: Vec<String> = failing.iter().map(|f| format!("'{f}'")).collect();
    std::fs::write(
        agent_dir.join(acp_harness::judging::judge::known_limitations::FILE_NAME),
        format!(
            "[[limitation]]\nversions = \"={version}\"\nscenario = \"unity-call-allowed\"\nfailing = [{}]\nreason = \"test\"\n",
            listed.join(", ")
        ),
    )?;
    let case = scratch_corpus(dir.path()).judge(&path);
    ensure(case.errors.is_empty(), || {
        format!("the copy must replay: {:?}", case.errors)
    })?;
    ensure(case.limitation.is_some(), || {
        "the entry must cover the copy".into()
    })?;
    Ok(case)
}

fn known_limitation_holds() -> Result<(), Failed> {
    // 0.22.4 has no mcpCapabilities: both unity expectations fail
    let case = judge_with_limitation("0.22.4", &[PING_TOOL_USE, PING_RESULT])?;
    let statuses = case.statuses();
    ensure(
        statuses.contains(&Status::KnownLimitation)
            && !statuses.contains(&Status::ExpectationFailed),
        || format!("want known limitation, got {statuses:?}\n{}", case.report()),
    )?;
    let table = acp_harness::judging::report::table(std::slice::from_ref(&case));
    ensure(table.contains("known limitation"), || {
        format!("the check table must say so:\n{table}")
    })
}

fn known_limitation_no_longer_holds() -> Result<(), Failed> {
    // 0.24.5 reaches unity-ops: the listed expectation passes
    let case = judge_with_limitation("0.24.5", &[PING_TOOL_USE])?;
    let statuses = case.statuses();
    ensure(
        statuses.contains(&Status::LimitationNoLongerHolds)
            && !statuses.contains(&Status::KnownLimitation),
        || format!("want no-longer-holds, got {statuses:?}"),
    )?;
    ensure(!case.passed(), || {
        "a stale entry must fail the trial".into()
    })?;
    let report = case.report();
    ensure(
        report.contains("known limitation no longer holds: remove the entry"),
        || report.clone(),
    )
}

fn known_limitation_extra_failure() -> Result<(), Failed> {
    let case = judge_with_limitation("0.22.4", &[PING_TOOL_USE])?;
    let statuses = case.statuses();
    ensure(
        statuses.contains(&Status::ExpectationFailed)
            && !statuses.contains(&Status::KnownLimitation),
        || format!("an unlisted failure must fail, got {statuses:?}"),
    )?;
    ensure(!case.passed(), || {
        "an unlisted failure must fail the trial".into()
    })?;
    let report = case.report();
    ensure(report.contains(PING_RESULT), || {
        format!("the report must name the unlisted failure:\n{report}")
    })
}
