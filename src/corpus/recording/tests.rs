//! The recording format's tests: writer, reader, scrubber.

use super::*;
use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Map;

/// Recording bytes as the reader reads them (bytes that need not be UTF-8).
fn parse(bytes: &[u8], path: &Path) -> Result<Recording, RecordingError> {
    Reader::new(bytes, path)?.into_recording()
}

fn header() -> Header {
    Header {
        format: FORMAT,
        agent: "codex-acp".into(),
        agent_info: serde_json::json!({"name": "codex-acp", "version": "2.6.0"}),
        package: "@agentclientprotocol/codex-acp@2.6.0".into(),
        argv: vec!["node".into()],
        scenario: "text-only".into(),
        scenario_sha256: "abc".into(),
        model_mode: "stub".into(),
        harness_version: "0.1.0".into(),
        client_capabilities: serde_json::json!({"fs": {"readTextFile": false}}),
        protocol_version: 1,
        acp_schema: None,
        build: None,
        date: "2026-11-29".into(),
        isolation: "netns-loopback".into(),
        synthetic: false,
        placeholders: BTreeMap::new(),
        session: Default::default(),
        extra: Map::new(),
    }
}

#[test]
fn written_recording_reads_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/x.jsonl");
    let mut w = RecordingWriter::create(&path, &header()).unwrap();
    w.event(0, Leg::Acp, Dir::ToAgent, 1, "{\"id\":0}".into(), None)
        .unwrap();
    w.event(
        3,
        Leg::Acp,
        Dir::FromAgent,
        1,
        "not json at all".into(),
        None,
    )
    .unwrap();
    let http = Http {
        method: Some("POST".into()),
        path: Some("/v1/responses".into()),
        ..Http::default()
    };
    w.event(
        4,
        Leg::Model,
        Dir::Request,
        1,
        "{}".into(),
        Some(http.clone()),
    )
    .unwrap();
    w.finish(
        9,
        Outcome::Ok,
        Exit {
            code: Some(0),
            signal: None,
        },
        vec![],
    )
    .unwrap()
    .commit()
    .unwrap();
    let rec = read(&path).unwrap();
    assert_eq!(rec.header, header());
    assert_eq!(rec.events.len(), 3);
    assert_eq!(rec.events[1].raw, "not json at all");
    assert_eq!(rec.events[2].http.as_ref(), Some(&http));
    assert_eq!(
        rec.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let t = rec.trailer.unwrap();
    assert_eq!((t.seq, t.outcome), (4, Outcome::Ok));
}

#[test]
fn a_recording_being_written_is_a_truncated_temp_file_and_never_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "previous\n").unwrap();
    let mut w = RecordingWriter::create(&path, &header()).unwrap();
    w.event(0, Leg::Harness, Dir::Note, 1, "started".into(), None)
        .unwrap();
    w.flush().unwrap();
    let temp = w.temp_path().to_path_buf();
    let rec = read(&temp).unwrap();
    assert!(rec.is_truncated());
    assert_eq!(rec.events.len(), 1);
    drop(w);
    assert!(!temp.exists(), "an abandoned recording leaves no temp file");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous\n");
}

#[test]
fn an_interrupted_recording_is_kept_beside_its_path_under_a_name_no_reader_takes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "previous\n").unwrap();
    let w = RecordingWriter::create(&path, &header()).unwrap();
    let kept = w
        .finish(1, Outcome::Interrupted, Exit::default(), vec![])
        .unwrap()
        .keep_interrupted()
        .unwrap();
    assert_eq!(kept, dir.path().join("x.jsonl.interrupted"));
    assert_eq!(
        read(&kept).unwrap().trailer.unwrap().outcome,
        Outcome::Interrupted
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous\n");
    assert_eq!(
        crate::judging::judge::list_recordings(dir.path()).unwrap(),
        vec![path.clone()]
    );
}

#[test]
fn a_run_refused_at_its_commit_is_kept_beside_saying_interrupted_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "previous\n").unwrap();
    let mut w = RecordingWriter::create(&path, &header()).unwrap();
    w.event(0, Leg::Harness, Dir::Note, 1, "played".into(), None)
        .unwrap();
    let finished = w
        .finish(1, Outcome::Ok, Exit::default(), vec!["a note".into()])
        .unwrap();
    let committed = finished
        .commit_unless(|| Some("interrupted: SIGTERM received".into()))
        .unwrap();
    assert_eq!(committed, None);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous\n");
    let kept = read(&dir.path().join("x.jsonl.interrupted")).unwrap();
    assert_eq!(kept.events.len(), 1);
    let t = kept.trailer.unwrap();
    assert_eq!((t.seq, t.outcome), (2, Outcome::Interrupted));
    assert_eq!(t.notes, ["a note", "interrupted: SIGTERM received"]);
    assert_eq!(
        crate::judging::judge::list_recordings(dir.path()).unwrap(),
        vec![path.clone()]
    );
}

#[test]
fn a_run_not_refused_at_its_commit_is_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "previous\n").unwrap();
    let w = RecordingWriter::create(&path, &header()).unwrap();
    let finished = w.finish(1, Outcome::Ok, Exit::default(), vec![]).unwrap();
    assert_eq!(finished.commit_unless(|| None).unwrap(), Some(path.clone()));
    assert_eq!(read(&path).unwrap().trailer.unwrap().outcome, Outcome::Ok);
}

#[test]
fn unknown_fields_and_outcomes_are_tolerated_and_kept() {
    let text = concat!(
        r#"{"type":"header","format":1,"agent":"a","package":"p@1","scenario":"s","model_mode":"stub","harness_version":"0","date":"d","isolation":"none","future":7}"#,
        "\n",
        r#"{"type":"event","seq":1,"ms":0,"leg":"acp","dir":"to_agent","proc":1,"raw":"{not json","colour":"red"}"#,
        "\n",
        r#"{"type":"trailer","seq":2,"ms":1,"outcome":"exploded","exit":{"code":null,"signal":9}}"#,
        "\n"
    );
    let rec = parse_str(text, Path::new("t.jsonl")).unwrap();
    assert_eq!(rec.header.extra["future"], 7);
    assert_eq!(rec.events[0].raw, "{not json");
    assert_eq!(rec.events[0].extra["colour"], "red");
    assert_eq!(rec.trailer.unwrap().outcome, Outcome::Other);
}

/// Each broken file and the `file:line: message` fragment its error must carry.
#[test]
fn the_trailer_read_alone_is_the_trailer_of_the_whole_read_and_a_bad_line_still_fails() {
    let h = r#"{"type":"header","format":1,"agent":"a","package":"p@1","scenario":"s","model_mode":"stub","harness_version":"0","date":"d","isolation":"none"}"#;
    let ev = r#"{"type":"event","seq":1,"ms":0,"leg":"acp","dir":"to_agent","proc":1,"raw":""}"#;
    let tr = r#"{"type":"trailer","seq":2,"ms":0,"outcome":"timeout"}"#;
    let dir = tempfile::tempdir().unwrap();
    for (text, trailer) in [
        (format!("{h}\n{ev}\n{tr}\n"), true),
        (format!("{h}\n{ev}\n"), false),
    ] {
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, text).unwrap();
        let alone = read_trailer(&path).unwrap();
        assert_eq!(alone, read(&path).unwrap().trailer);
        assert_eq!(alone.is_some(), trailer);
    }
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, format!("{h}\n{ev}\n{ev}\n{tr}\n")).unwrap();
    let e = read_trailer(&path).unwrap_err().to_string();
    assert!(e.contains("seq 1 does not follow 1"), "{e}");
}

#[test]
fn malformed_files_are_reported_with_file_and_line() {
    let h = r#"{"type":"header","format":1,"agent":"a","package":"p@1","scenario":"s","model_mode":"stub","harness_version":"0","date":"d","isolation":"none"}"#;
    let ev = |seq: u64| {
        format!(
            r#"{{"type":"event","seq":{seq},"ms":0,"leg":"acp","dir":"to_agent","proc":1,"raw":""}}"#
        )
    };
    let tr = r#"{"type":"trailer","seq":9,"ms":0,"outcome":"ok"}"#;
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{h}\n{{oops\n"),
            "bad.jsonl:2: not a recording line",
        ),
        (
            format!("{}\n{h}\n", ev(1)),
            "bad.jsonl:1: event before the header",
        ),
        (
            format!("{h}\n{}\n{}\n", ev(2), ev(2)),
            "bad.jsonl:3: seq 2 does not follow 2",
        ),
        (
            format!("{h}\n{tr}\n{}\n", ev(1)),
            "bad.jsonl:3: line after the trailer",
        ),
        (
            format!("{h}\n{h}\n"),
            "bad.jsonl:2: header is not the first line",
        ),
        (
            h.replace("\"format\":1", "\"format\":3"),
            "bad.jsonl:1: format 3 is not supported",
        ),
        (
            format!(
                "{h}\n{}\n",
                ev(1).replace(
                    "\"raw\":\"\"",
                    &format!(
                        "\"raw\":\"\",\"blobs\":[{{\"at\":0,\"sha256\":\"{}\"}}]",
                        "a".repeat(64)
                    )
                )
            ),
            "bad.jsonl:2: blob references in a format 1 recording",
        ),
        (
            format!(
                "{}\n{}\n",
                h.replace("\"format\":1", "\"format\":2"),
                ev(1).replace("\"raw\":\"\"", "\"raw\":\"\",\"blobs\":7")
            ),
            "bad.jsonl:2: `blobs` is not a list of references",
        ),
        (
            format!(
                "{}\n{}\n",
                h.replace("\"format\":1", "\"format\":2"),
                ev(1).replace(
                    "\"raw\":\"\"",
                    &format!(
                        "\"raw\":\"<blob:sha256:{0}>\",\"blobs\":[{{\"at\":0,\"sha256\":\"{0}\"}}]",
                        "a".repeat(64)
                    )
                )
            ),
            "bad.jsonl:2: event seq 1: sha256:aaaaaaaa",
        ),
        (String::new(), "bad.jsonl: empty file"),
        (
            format!("{h}\n{}\n", ev(1).replace("to_agent", "sideways")),
            "bad.jsonl:2: not a recording line: unknown variant `sideways`",
        ),
        (
            format!("{h}\n{}\n", ev(1).replace("\"acp\"", "\"telepathy\"")),
            "bad.jsonl:2: not a recording line: unknown variant `telepathy`",
        ),
        (
            format!("{h}\n{}\n", ev(1).replace("\"to_agent\"", "\"note\"")),
            "bad.jsonl:2: leg Acp has no direction Note",
        ),
        (
            format!("{h}\n{}\n", ev(1).replace("\"proc\":1", "\"proc\":\"1\"")),
            "bad.jsonl:2: not a recording line: invalid type: string \"1\"",
        ),
        (
            format!("{h}\n{}\n", ev(1).replace("\"ms\":0", "\"ms\":-3")),
            "bad.jsonl:2: not a recording line: invalid value: integer `-3`",
        ),
        (
            format!(
                "{h}\n{}\n",
                ev(1).replace("\"raw\":\"\"", "\"raw\":\"\",\"http\":{\"status\":\"ok\"}")
            ),
            "bad.jsonl:2: not a recording line: invalid type: string \"ok\"",
        ),
        (
            format!("{h}\n{}\n", ev(1).replace("\"event\"", "\"evnet\"")),
            "bad.jsonl:2: not a recording line: unknown variant `evnet`",
        ),
    ];
    let mut invalid_utf8 = format!("{h}\n{}\n", ev(1)).into_bytes();
    invalid_utf8.extend_from_slice(b"{\"type\":\"event\",\"raw\":\"\xff\xfe\"}\n");
    let err = parse(invalid_utf8.as_slice(), Path::new("bad.jsonl"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("bad.jsonl:3: not valid UTF-8 (invalid byte at column 24)"),
        "{err:?}"
    );
    // the first bad line is the one named, whichever way it is bad
    let bad_line = b"{\"type\":\"event\",\"raw\":\"\xff\"}\n";
    let mut earlier_error =
        format!("{h}\n{}\n", ev(1).replace("\"ms\":0", "\"ms\":-3")).into_bytes();
    earlier_error.extend_from_slice(bad_line);
    let mut first_line = b"\xef".to_vec();
    first_line.extend_from_slice(format!("{h}\n").as_bytes());
    for (bytes, expected) in [
        (
            earlier_error,
            "bad.jsonl:2: not a recording line: invalid value",
        ),
        (
            first_line,
            "bad.jsonl:1: not valid UTF-8 (invalid byte at column 1)",
        ),
    ] {
        let err = parse(&bytes, Path::new("bad.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(expected),
            "{err:?} should start with {expected:?}"
        );
    }
    for (text, expected) in cases {
        let err = parse_str(&text, Path::new("bad.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(expected),
            "{err:?} should start with {expected:?}"
        );
    }
}

#[test]
fn scrubber_replaces_longest_values_first_and_redacts_credentials() {
    let mut s = Scrubber::new();
    s.placeholder("/tmp/run1", "<home>");
    s.placeholder("/tmp/run1/workspace", "<workspace>");
    s.placeholder("http://127.0.0.1:4312", "<mcp-url>");
    s.secret("tok-123");
    let text = r#"{"cwd":"/tmp/run1/workspace","home":"/tmp/run1/.codex","url":"http:\/\/127.0.0.1:4312/mcp","h":"Bearer tok-123"}"#;
    assert_eq!(
        s.scrub(text),
        r#"{"cwd":"<workspace>","home":"<home>/.codex","url":"<mcp-url>/mcp","h":"Bearer <redacted>"}"#
    );
    let http = Http {
        headers: [
            ("Authorization".to_string(), "Bearer anything".to_string()),
            ("Host".to_string(), "127.0.0.1:4312".to_string()),
        ]
        .into(),
        ..Http::default()
    };
    let out = s.scrub_http(http);
    assert_eq!(out.headers["authorization"], REDACTED);
    assert_eq!(out.headers["host"], "127.0.0.1:4312");
}

#[test]
fn scrubber_replaces_the_common_hashes_of_the_workspace_path() {
    let mut s = Scrubber::new();
    s.hashes_of("/tmp/run1/workspace", "<workspace-hash>");
    use sha2::Digest as _;
    let sha256: String = sha2::Sha256::digest(b"/tmp/run1/workspace")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let md5: String = md5::Md5::digest(b"/tmp/run1/workspace")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        s.scrub(&format!(
            "<home>/.gemini/tmp/{sha256}/out.log {md5} {}",
            &sha256[..16]
        )),
        "<home>/.gemini/tmp/<workspace-hash>/out.log <workspace-hash> <workspace-hash>"
    );
}

#[test]
fn scrubber_replaces_digest_prefixes_of_eight_or_more_digits_standing_alone() {
    let mut s = Scrubber::new();
    s.hashes_of("/tmp/run1/workspace", "<workspace-hash>");
    use sha2::Digest as _;
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let sha256 = hex(&sha2::Sha256::digest(b"/tmp/run1/workspace"));
    let sha1 = hex(&sha1::Sha1::digest(b"/tmp/run1/workspace"));
    let md5 = hex(&md5::Md5::digest(b"/tmp/run1/workspace"));
    let cases = [
        (
            format!("wd_workspace_{}", &sha256[..12]),
            "wd_workspace_<workspace-hash>".to_string(),
        ),
        (
            format!("/x/{}/y", &sha1[..8]),
            "/x/<workspace-hash>/y".into(),
        ),
        (format!("\"{}\"", &md5[..20]), "\"<workspace-hash>\"".into()),
        // too short, or glued to other digits and letters: left alone
        (format!("_{}_", &sha256[..7]), format!("_{}_", &sha256[..7])),
        (format!("Q{}", &sha256[..12]), format!("Q{}", &sha256[..12])),
        (
            format!("{}9z", &sha256[..12]),
            format!("{}9z", &sha256[..12]),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(s.scrub(&text), want, "{text}");
    }
}

#[test]
fn scrubber_replaces_relative_forms_of_the_workspace_path() {
    let mut s = Scrubber::new();
    s.workspace("/tmp/acp-harness-run-x1/workspace");
    let cases = [
        (
            "cwd /tmp/acp-harness-run-x1/workspace/a",
            "cwd <workspace>/a",
        ),
        (
            "rel tmp/acp-harness-run-x1/workspace/a",
            "rel <workspace-relative>/a",
        ),
        (
            "from cwd ../../../tmp/acp-harness-run-x1/workspace",
            "from cwd <workspace-relative>",
        ),
        (
            "escaped tmp\\/acp-harness-run-x1\\/workspace",
            "escaped <workspace-relative>",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(s.scrub(text), want, "{text}");
    }
}

#[test]
fn scrubber_numbers_paths_the_run_created_under_temp_and_leaves_others() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().display().to_string();
    let old = temp.path().join("old.txt");
    std::fs::write(&old, "x").unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(past)
        .unwrap();
    let since = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::create_dir(temp.path().join("socks")).unwrap();
    std::fs::write(temp.path().join("socks/4242.sock"), "").unwrap();
    std::fs::write(temp.path().join("error-2026-11-29T17-49.json"), "").unwrap();
    let mut s = Scrubber::new();
    s.run_temp(vec![root.clone()], since);
    let text = format!(
        r#"{{"sock":"{root}/socks/4242.sock","again":"{root}/socks/4242.sock"}} see {root}/error-2026-11-29T17-49.json. and {root}/old.txt, {root}/never-there"#
    );
    assert_eq!(
        s.scrub(&text),
        format!(
            r#"{{"sock":"<temp-1>","again":"<temp-1>"}} see <temp-2>. and {root}/old.txt, {root}/never-there"#
        )
    );
    // a later line finds the same numbers, even once the file is gone
    std::fs::remove_file(temp.path().join("socks/4242.sock")).unwrap();
    assert_eq!(s.scrub(&format!("{root}/socks/4242.sock")), "<temp-1>");
}

#[test]
fn scrubber_replaces_a_percent_encoded_path() {
    let mut s = Scrubber::new();
    s.placeholder("/tmp/run1/workspace", "<workspace>");
    assert_eq!(
        s.scrub("sessions/%2Ftmp%2Frun1%2Fworkspace/x.json"),
        "sessions/<workspace>/x.json"
    );
}

#[test]
fn buffered_lines_reach_the_file_at_each_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    let mut w = RecordingWriter::create(&path, &header()).unwrap();
    w.event(0, Leg::Harness, Dir::Note, 1, "one".into(), None)
        .unwrap();
    w.flush().unwrap();
    let rec = read(w.temp_path()).unwrap();
    assert_eq!((rec.events.len(), rec.is_truncated()), (1, true));
}

#[test]
fn scrubber_replaces_every_spelling_of_a_path_with_spaces_and_non_ascii() {
    let mut s = Scrubber::new();
    s.placeholder("/tmp/a b/é😀/run", "<run>");
    let cases = [
        "/tmp/a b/é😀/run/x",
        "\\/tmp\\/a b\\/é😀\\/run\\/x",
        "/tmp/a b/\\u00e9\\ud83d\\ude00/run/x",
        "/tmp/a b/\\u00E9\\uD83D\\uDE00/run/x",
        "\\/tmp\\/a b\\/\\u00e9\\ud83d\\ude00\\/run\\/x",
        "/tmp/a b/\\\\u00e9\\\\ud83d\\\\ude00/run/x",
        "file:///tmp/a%20b/%C3%A9%F0%9F%98%80/run/x",
        "file:///tmp/a%20b/%c3%a9%f0%9f%98%80/run/x",
        "%2Ftmp%2Fa%20b%2F%C3%A9%F0%9F%98%80%2Frun/x",
    ];
    for text in cases {
        let out = s.scrub(text);
        assert!(
            out.starts_with("<run>") || out.starts_with("\\/") || out.starts_with("file://<run>"),
            "{text} -> {out}"
        );
        assert!(!out.contains("tmp"), "{text} -> {out}");
    }
}

#[test]
fn scrubber_replaces_the_tail_of_a_run_path_after_an_ellipsis() {
    let mut s = Scrubber::new();
    s.placeholder("/tmp/acp-harness-run-YFhviP", "<run>");
    s.truncated_path("/tmp/acp-harness-run-YFhviP", "<run>");
    let cases = [
        (
            "Creating ...rness-run-YFhviP/workspace/Assets/Foo.cs",
            "Creating ...<run>/workspace/Assets/Foo.cs",
        ),
        ("…P/workspace", "…<run>/workspace"),
        ("\\u2026hviP\\/workspace", "\\u2026<run>\\/workspace"),
        ("see ...-run-YFhviP\"", "see ...<run>\""),
        // no ellipsis, or not a tail of the path: left alone
        ("run-YFhviP/workspace", "run-YFhviP/workspace"),
        ("Loading...P", "Loading...P"),
        ("...kspace/Assets", "...kspace/Assets"),
    ];
    for (text, want) in cases {
        assert_eq!(s.scrub(text), want, "{text}");
    }
}

#[test]
fn scrubber_replaces_the_hostname_where_it_stands_as_one() {
    let mut s = Scrubber::new();
    s.hostname("vm");
    let cases = [
        (r#"{"hostname":"vm"}"#, r#"{"hostname":"<hostname>"}"#),
        (
            r#"{\"hostname\":\"vm\"}"#,
            r#"{\"hostname\":\"<hostname>\"}"#,
        ),
        ("root@vm:~#", "root@<hostname>:~#"),
        ("HOSTNAME=vm", "HOSTNAME=<hostname>"),
        // a short name elsewhere is a word, not the host
        ("a `node:vm` sandbox", "a `node:vm` sandbox"),
        ("the vm is up", "the vm is up"),
        ("\"vms\"", "\"vms\""),
    ];
    for (text, want) in cases {
        assert_eq!(s.scrub(text), want, "{text}");
    }
    let mut s = Scrubber::new();
    s.hostname("build-host-7");
    assert_eq!(
        s.scrub("on build-host-7 and build-host-77"),
        "on <hostname> and build-host-77"
    );
    let mut s = Scrubber::new();
    s.hostname("localhost");
    assert_eq!(s.scrub("\"localhost\""), "\"localhost\"");
}
