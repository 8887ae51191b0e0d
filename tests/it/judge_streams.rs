//! The judge streams a replay: its transcript is rendered, written and
//! compared with the golden one line at a time, so a long recording is
//! judged without holding it, and a difference is still explained by its
//! first differing line with the lines around it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use acp_harness::judging::judge::golden::Comparison;
use acp_harness::judging::judge::{Corpus, Status, Verdict};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A corpus in `dir` with a synthetic text-only recording whose one answer
/// comes in `chunks` chunks (a test double: synthetic, no agent's evidence).
fn long_answer(dir: &Path, chunks: usize) -> (Corpus, PathBuf) {
    let recordings = dir.join("recordings");
    let path = recordings.join("codex-acp/0.0.0-synthetic/text-only.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(
        w,
        r#"{{"type":"header","format":1,"agent":"codex-acp","agent_info":{{"name":"codex-acp","version":"0.0.0-synthetic"}},"package":"test","argv":[],"scenario":"text-only","scenario_sha256":"","model_mode":"stub","harness_version":"0","client_capabilities":{{"fs":{{"readTextFile":false,"writeTextFile":false}},"terminal":false}},"protocol_version":1,"date":"2026-12-05","isolation":"none","synthetic":true,"placeholders":{{}}}}"#
    )
    .unwrap();
    let servers = r#"[{"type":"http","name":"unity-ops","url":"<mcp-url>","headers":[{"name":"Authorization","value":"Bearer <redacted>"}]}]"#;
    let mut frames = vec![
        ("to_agent", r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}"#.to_string()),
        ("from_agent", r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true,"sse":false}},"authMethods":[]}}"#.to_string()),
        ("to_agent", format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":"<workspace>","mcpServers":{servers}}}}}"#)),
        ("from_agent", r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}"#.to_string()),
        ("to_agent", r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"Reply with the single word: hello"}]}}"#.to_string()),
    ];
    for i in 0..chunks {
        let text = if i == 0 {
            "hello".to_string()
        } else {
            format!(" chunk {i}")
        };
        frames.push(("from_agent", format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#)));
    }
    frames.push((
        "from_agent",
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#.to_string(),
    ));
    for (i, (dir, raw)) in frames.iter().enumerate() {
        let event = serde_json::json!({"type":"event","seq":i + 1,"ms":i / 10,"leg":"acp","dir":dir,"proc":1,"raw":raw});
        writeln!(w, "{event}").unwrap();
    }
    writeln!(
        w,
        r#"{{"type":"trailer","seq":{},"ms":{},"outcome":"ok","exit":{{"code":0,"signal":null}}}}"#,
        frames.len() + 1,
        frames.len() / 10 + 1
    )
    .unwrap();
    w.flush().unwrap();
    let corpus = Corpus::at(root())
        .with_recordings(&recordings)
        .with_snapshots(&dir.join("snapshots"));
    (corpus, path)
}

/// Writes `transcript` as the golden of the recording at `path`, as insta would.
fn bless(corpus: &Corpus, path: &Path, transcript: &str) {
    let golden = corpus.id_of(path, None).snapshot_path(&corpus.snapshots);
    std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
    std::fs::write(
        golden,
        format!("---\nsource: tests/replay.rs\ndescription: test\n---\n{transcript}"),
    )
    .unwrap();
}

fn a_changed_line_of_a_small_golden_is_named_with_the_lines_around_it() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, path) = long_answer(dir.path(), 3);
    let case = corpus.judge(&path);
    assert_eq!(case.golden, Some(Comparison::Missing));
    let transcript = case.transcript.text();
    let lines: Vec<&str> = transcript.lines().collect();
    let at = lines.iter().position(|l| l.contains(" chunk 2")).unwrap();
    bless(&corpus, &path, &transcript);
    assert_eq!(corpus.judge(&path).statuses(), [Status::Pass]);

    bless(
        &corpus,
        &path,
        &transcript.replacen(" chunk 2", " chunk two", 1),
    );
    let case = corpus.judge(&path);
    let Some(Comparison::Differs(why)) = &case.golden else {
        panic!("{:?}", case.golden)
    };
    let line = at + 1;
    assert!(
        why.contains(&format!("first divergent event at transcript line {line}:")),
        "{why}"
    );
    assert!(
        why.contains("chunk two") && why.contains(lines[at - 1]),
        "{why}"
    );
    assert!(why.contains("tail of this replay's transcript:"), "{why}");
}

fn a_long_recording_is_judged_through_a_file_and_its_difference_explained_from_a_window() {
    let dir = tempfile::tempdir().unwrap();
    // about 14 MB of transcript: past what is kept in memory and what is diffed whole
    let (corpus, path) = long_answer(dir.path(), 25_000);
    let case = corpus.judge(&path);
    assert!(case.transcript.len() > 8 << 20, "{:?}", case.transcript);
    assert!(format!("{:?}", case.transcript).contains("in a file"));
    let transcript = case.transcript.text();
    bless(&corpus, &path, &transcript);
    let same = corpus.judge(&path);
    assert_eq!(same.statuses(), [Status::Pass], "{}", same.report());

    let lines: Vec<&str> = transcript.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(r#""text":" chunk 20000""#))
        .unwrap();
    bless(
        &corpus,
        &path,
        &transcript.replacen(" chunk 20000\"", " chunk 2e4\"", 1),
    );
    let case = corpus.judge(&path);
    let Some(Comparison::Differs(why)) = &case.golden else {
        panic!("{:?}", case.golden)
    };
    assert!(why.contains("too long to diff whole"), "{why}");
    assert!(
        why.contains(&format!(
            "first divergent event at transcript line {}:",
            at + 1
        )),
        "{}",
        &why[..why.len().min(2000)]
    );
    assert!(why.contains(&format!("@@ -{}", at + 1 - 3)), "{why}");
    let Verdict::Untestable(_) = case.verdict() else {
        panic!("a synthetic recording is no evidence")
    };
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(judge_streams: a_changed_line_of_a_small_golden_is_named_with_the_lines_around_it, a_long_recording_is_judged_through_a_file_and_its_difference_explained_from_a_window)
}
