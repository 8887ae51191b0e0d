use super::*;
use acp_bridge::McpEndpoint;

fn argv(s: &str) -> Vec<String> {
    shell_words::split(s).unwrap()
}

fn run(s: &str) -> HostConfig {
    match parse(&argv(s), Env::default(), &std::env::temp_dir()).unwrap() {
        Invocation::Run(c) => *c,
        other => panic!("expected Run for {s:?}, got {other:?}"),
    }
}

#[test]
fn python_sdk_command_line_yields_the_launch_spec() {
    let c = run(
        r#"--output-format stream-json --verbose --input-format stream-json --system-prompt "Be brief" --model gpt-5 --permission-mode acceptEdits --mcp-config '{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer t"}}}}' --resume s-1 --agent-cmd 'codex-acp -c "a b"'"#,
    );
    assert_eq!(c.agent_argv, vec!["codex-acp", "-c", "a b"]);
    assert_eq!(c.spec.model.as_deref(), Some("gpt-5"));
    assert_eq!(c.spec.permission_mode.as_deref(), Some("acceptEdits"));
    assert_eq!(c.spec.system_prompt.as_deref(), Some("Be brief"));
    assert_eq!(c.spec.resume_session_id.as_deref(), Some("s-1"));
    assert_eq!(
        c.spec.mcp,
        Some(McpEndpoint {
            name: "unity-ops".into(),
            url: "http://127.0.0.1:9/mcp".into(),
            authorization: Some("Bearer t".into()),
        })
    );
}

#[test]
fn typescript_sdk_command_line_yields_the_launch_spec() {
    // As the TypeScript Agent SDK builds it: `--flag=value`, bare booleans,
    // and --mcp-config with its JSON as the next token.
    let c = run(
        r#"--output-format stream-json --verbose --input-format stream-json --max-thinking-tokens=0 --model=m1 --permission-prompt-tool=stdio --continue --resume=s-9 --allowedTools=Read,Bash --tools=default --mcp-config '{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}' --setting-sources= --await-initialize --include-partial-messages --include-hook-events --permission-mode=plan --agent-cmd=x"#,
    );
    assert_eq!(c.spec.model.as_deref(), Some("m1"));
    assert_eq!(c.spec.resume_session_id.as_deref(), Some("s-9"));
    assert_eq!(c.spec.permission_mode.as_deref(), Some("plan"));
    assert_eq!(
        c.spec.mcp.map(|m| m.url).as_deref(),
        Some("http://127.0.0.1:9/mcp")
    );
    assert_eq!(c.agent_argv, vec!["x"]);
    assert!(c.spec.await_initialize);
    assert!(c.spec.mcp_servers.contains_key("unity-ops"));
    assert!(!run("--agent-cmd x").spec.await_initialize);
}

#[test]
fn equals_form_is_read_like_the_spaced_form() {
    let spaced =
        run("--model m --permission-mode plan --resume r --agent-cmd x --auth-method chatgpt");
    let equals =
        run("--model=m --permission-mode=plan --resume=r --agent-cmd=x --auth-method=chatgpt");
    assert_eq!(spaced.spec, equals.spec);
    assert_eq!(equals.spec.auth_method.as_deref(), Some("chatgpt"));
}

#[test]
fn unknown_flags_never_swallow_a_known_flag() {
    let cases = [
        ("--max-turns 5 --model m --agent-cmd x", "m"),
        ("--setting-sources --model m --agent-cmd x", "m"),
        ("--allowedTools=Read,Write --model m --agent-cmd x", "m"),
        (
            "--permission-prompt-tool stdio --include-partial-messages --model m --agent-cmd x",
            "m",
        ),
        ("--verbose --model=m --some-new-flag --agent-cmd x", "m"),
        ("-p --debug-to-stderr --model m --agent-cmd x", "m"),
    ];
    for (line, model) in cases {
        let c = run(line);
        assert_eq!(c.spec.model.as_deref(), Some(model), "for {line:?}");
        assert_eq!(c.agent_argv, vec!["x"], "for {line:?}");
    }
}

#[test]
fn formats_other_than_stream_json_are_noted() {
    assert!(
        run("--output-format stream-json --input-format=stream-json --agent-cmd x")
            .notes
            .is_empty()
    );
    let notes = run("--output-format text --agent-cmd x").notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("--output-format text: only stream-json")),
        "{notes:?}"
    );
}

#[test]
fn print_mode_takes_the_positional_prompt() {
    let cases = [
        ("-p \"hello world\" --agent-cmd x", Some("hello world")),
        (
            "--print --model m --agent-cmd x -- ping the editor",
            Some("ping the editor"),
        ),
        ("--agent-cmd x hello", None),
        ("-p --agent-cmd x", None),
    ];
    for (line, want) in cases {
        assert_eq!(run(line).print_prompt.as_deref(), want, "{line}");
    }
}

#[test]
fn system_and_appended_prompts_stay_apart_and_join_in_order() {
    let c =
        run("--append-system-prompt B --system-prompt A --append-system-prompt=C --agent-cmd x");
    assert_eq!(c.spec.system_prompt.as_deref(), Some("A"));
    assert_eq!(c.spec.append_system_prompt.as_deref(), Some("B\n\nC"));
    assert_eq!(c.spec.custom_instructions().as_deref(), Some("A\n\nB\n\nC"));
    assert_eq!(run("--agent-cmd x").spec.custom_instructions(), None);
}

#[test]
fn bridge_flags_set_their_fields() {
    let c = run(
        "--agent-cmd x --script-gate --agent-grace-ms 150 --eof-drain-ms=900 --cancel-grace-ms 300",
    );
    assert!(c.spec.script_gate);
    assert_eq!(c.spec.cancel_grace, Some(Duration::from_millis(300)));
    assert_eq!(run("--agent-cmd x").spec.cancel_grace, None);
    assert_eq!(
        c.timing,
        Timing {
            grace: Duration::from_millis(150),
            eof_drain: Duration::from_millis(900)
        }
    );
    assert!(!run("--agent-cmd x --script-gate=false").spec.script_gate);
    assert_eq!(
        run("--agent-cmd x --dangerously-skip-permissions")
            .spec
            .permission_mode
            .as_deref(),
        Some("bypassPermissions")
    );
}

#[test]
fn relative_agent_program_is_anchored_at_the_start_directory() {
    #[cfg(unix)]
    let (start, cases) = (
        Path::new("/srv/panel"),
        [
            ("./bin/agent --acp", "/srv/panel/./bin/agent"),
            ("agent", "agent"),
            ("/opt/agent", "/opt/agent"),
        ],
    );
    #[cfg(windows)]
    let (start, cases) = (
        Path::new(r"C:\srv\panel"),
        [
            (r".\bin\agent.cmd --acp", r"C:\srv\panel\.\bin\agent.cmd"),
            ("agent", "agent"),
            (r"D:\opt\agent.exe", r"D:\opt\agent.exe"),
            (r"\\?\D:\opt\agent.exe", r"\\?\D:\opt\agent.exe"),
        ],
    );
    for (line, program) in cases {
        let args = vec![
            "--agent-cmd".to_string(),
            line.to_string(),
            "--cwd".into(),
            "/".into(),
        ];
        match parse(&args, Env::default(), start).unwrap() {
            Invocation::Run(c) => assert_eq!(c.agent_argv[0], program, "{line}"),
            other => panic!("{other:?}"),
        }
    }
}

/// Windows spellings of the traffic log's path: absolute (either slash,
/// either drive-letter case, verbatim) as given, relative under the
/// start directory.
#[cfg(windows)]
#[test]
fn bridge_log_takes_windows_paths() {
    let start = Path::new(r"C:\srv\panel");
    let cases = [
        (r"D:\logs\bridge.log", r"D:\logs\bridge.log"),
        ("d:/logs/bridge.log", "d:/logs/bridge.log"),
        (r"\\?\D:\logs\bridge.log", r"\\?\D:\logs\bridge.log"),
        (r"logs\bridge.log", r"C:\srv\panel\logs\bridge.log"),
    ];
    for (value, want) in cases {
        let args: Vec<String> = ["--agent-cmd", "x", "--cwd", "/", "--bridge-log", value]
            .map(String::from)
            .to_vec();
        match parse(&args, Env::default(), start).unwrap() {
            Invocation::Run(c) => {
                assert_eq!(c.bridge_log.as_deref(), Some(Path::new(want)), "{value}")
            }
            other => panic!("{other:?}"),
        }
    }
}

fn agent_env(agent: &str) -> Env {
    Env {
        agent: Some(agent.into()),
        ..Env::default()
    }
}

#[test]
fn the_line_cap_comes_from_the_flag_then_the_environment() {
    let cap = |args: &str, env: Option<&str>| {
        let env = Env {
            agent: None,
            max_line_bytes: env.map(String::from),
            ..Env::default()
        };
        match parse(&argv(args), env, &std::env::temp_dir()) {
            Ok(Invocation::Run(c)) => Ok(c.max_line_bytes),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(format!("{e:#}")),
        }
    };
    assert_eq!(cap("--agent-cmd x", None), Ok(128 << 20));
    assert_eq!(cap("--agent-cmd x", Some("4096")), Ok(4096));
    assert_eq!(
        cap("--agent-cmd x --max-line-bytes=1024", Some("4096")),
        Ok(1024)
    );
    let bad = cap("--agent-cmd x --max-line-bytes 0", None).unwrap_err();
    assert!(bad.contains("--max-line-bytes takes a positive"), "{bad}");
    let bad = cap("--agent-cmd x", Some("lots")).unwrap_err();
    assert!(
        bad.contains("ACP_BRIDGE_MAX_LINE_BYTES takes a positive"),
        "{bad}"
    );
}

#[test]
fn the_tap_path_comes_from_the_flag_then_the_environment() {
    let start = Path::new("/srv/panel");
    let tap = |args: &str, env: Option<&str>| {
        let env = Env {
            tap: env.map(String::from),
            ..Env::default()
        };
        match parse(&argv(&format!("{args} --cwd /")), env, start) {
            Ok(Invocation::Run(c)) => Ok(c.tap),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(format!("{e:#}")),
        }
    };
    let cases: &[(&str, Option<&str>, Option<&str>)] = &[
        ("--agent-cmd x", None, None),
        ("--agent-cmd x", Some("  "), None),
        ("--agent-cmd x", Some("taps/"), Some("/srv/panel/taps/")),
        (
            "--agent-cmd x --tap=/var/t.jsonl",
            Some("e.jsonl"),
            Some("/var/t.jsonl"),
        ),
        (
            "--agent-cmd x --tap t.jsonl",
            None,
            Some("/srv/panel/t.jsonl"),
        ),
    ];
    for (args, env, want) in cases {
        let want = want.map(PathBuf::from);
        assert_eq!(tap(args, *env), Ok(want), "{args} with {env:?}");
    }
    let bad = tap("--agent-cmd x --tap=", None).unwrap_err();
    assert!(
        bad.contains("--tap needs a file or directory path"),
        "{bad}"
    );
    // `~/` without a home: a note and no tap, never a refused session
    for (args, env) in [
        ("--agent-cmd x --tap ~/taps/", None),
        ("--agent-cmd x", Some("~/taps/")),
    ] {
        let parsed = parse(
            &argv(&format!("{args} --cwd /")),
            Env {
                tap: env.map(String::from),
                home: None,
                ..Env::default()
            },
            start,
        );
        let Ok(Invocation::Run(c)) = parsed else {
            panic!("{args} with {env:?}: {parsed:?}")
        };
        assert_eq!(c.tap, None, "{args} with {env:?}");
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("HOME is not set") && n.contains("untapped")),
            "{:?}",
            c.notes
        );
    }
    let home = Env {
        home: Some(PathBuf::from("/home/u")),
        ..Env::default()
    };
    match parse(&argv("--agent-cmd x --tap ~/t.jsonl --cwd /"), home, start) {
        Ok(Invocation::Run(c)) => assert_eq!(c.tap, Some(PathBuf::from("/home/u/t.jsonl"))),
        other => panic!("{other:?}"),
    }
    let bad = tap("--agent-cmd x --tap=", None).unwrap_err();
    assert!(
        bad.contains("--tap needs a file or directory path"),
        "{bad}"
    );
}

#[test]
fn agent_command_falls_back_to_the_environment() {
    let parsed = parse(
        &argv("--model m"),
        agent_env("gemini --experimental-acp"),
        &std::env::temp_dir(),
    );
    match parsed.unwrap() {
        Invocation::Run(c) => assert_eq!(c.agent_argv, vec!["gemini", "--experimental-acp"]),
        other => panic!("{other:?}"),
    }
    // The flag wins over the environment.
    match parse(
        &argv("--agent-cmd a"),
        agent_env("b"),
        &std::env::temp_dir(),
    )
    .unwrap()
    {
        Invocation::Run(c) => assert_eq!(c.agent_argv, vec!["a"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn version_and_help_are_recognised_anywhere() {
    for line in ["--version", "-v", "--verbose -v", "--model m --version"] {
        assert!(
            matches!(
                parse(&argv(line), Env::default(), Path::new(".")).unwrap(),
                Invocation::Version
            ),
            "{line}"
        );
    }
    assert!(matches!(
        parse(&argv("--help"), Env::default(), Path::new(".")).unwrap(),
        Invocation::Help
    ));
}

#[test]
fn bad_command_lines_name_what_is_wrong() {
    let cases = [
        ("--model m", None, "no agent command"),
        ("--agent-cmd", None, "--agent-cmd needs a value"),
        (
            "--agent-cmd 'codex \"unclosed'",
            None,
            "cannot split the agent command line from --agent-cmd",
        ),
        ("", Some("   "), "no agent command"),
        (
            "--agent-cmd x --agent-grace-ms soon",
            None,
            "--agent-grace-ms takes a whole number",
        ),
        (
            "--agent-cmd x --script-gate=maybe",
            None,
            "--script-gate takes true or false",
        ),
        (
            "--agent-cmd x --cwd /definitely/not/here",
            None,
            "not a directory",
        ),
        (
            "--agent-cmd x --mcp-config '{not json'",
            None,
            "--mcp-config",
        ),
    ];
    for (line, env, want) in cases {
        let env = Env {
            agent: env.map(String::from),
            ..Env::default()
        };
        let err = parse(&argv(line), env, &std::env::temp_dir()).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains(want), "{line:?}: {text:?} lacks {want:?}");
    }
}

/// `--add-dir` as Claude takes it: repeated, several values up to the next
/// flag, or `=value`; each made absolute against the start directory.
#[test]
fn add_dir_values_are_taken_in_every_spelling_and_made_absolute() {
    let start = Path::new("/srv/panel");
    let dirs = |args: &str| match parse(
        &argv(&format!("--agent-cmd x {args} --cwd /")),
        Env::default(),
        start,
    ) {
        // as paths: on Windows the joined part is separated by `\\`
        Ok(Invocation::Run(c)) => Ok(c
            .spec
            .additional_directories
            .iter()
            .map(PathBuf::from)
            .collect::<Vec<_>>()),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(format!("{e:#}")),
    };
    let cases: &[(&str, &[&str])] = &[
        ("", &[]),
        ("--add-dir /a", &["/a"]),
        ("--add-dir=/a --add-dir rel", &["/a", "/srv/panel/rel"]),
        ("--add-dir /a /b --model m", &["/a", "/b"]),
    ];
    for (args, want) in cases {
        let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
        assert_eq!(dirs(args), Ok(want), "{args}");
    }
    let bad = dirs("--add-dir --model m").unwrap_err();
    assert!(bad.contains("--add-dir needs a directory"), "{bad}");
}

/// Every flag the bridge reads means the same written `--flag value` or
/// `--flag=value` (the Python Agent SDK sends most options the second way);
/// a flag added to the list without a row here fails this test.
#[test]
fn every_value_flag_reads_the_same_in_both_spellings() {
    let dir = std::env::temp_dir().join(format!("acp-bridge-args-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prompt_file = dir.join("prompt.txt");
    std::fs::write(&prompt_file, "from a file").unwrap();
    let prompt_file = prompt_file.to_string_lossy().into_owned();
    let root = dir.to_string_lossy().into_owned();
    let rows: Vec<(&str, &str)> = vec![
        ("--model", "m"),
        ("--permission-mode", "plan"),
        (
            "--mcp-config",
            r#"{"mcpServers":{"u":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}"#,
        ),
        ("--system-prompt", "be terse"),
        ("--append-system-prompt", "and kind"),
        ("--system-prompt-file", &prompt_file),
        ("--append-system-prompt-file", &prompt_file),
        ("--resume", "s1"),
        ("--agent-cmd", "agent --acp"),
        ("--cwd", &root),
        ("--auth-method", "key"),
        ("--bridge-log", "log.txt"),
        ("--tap", "tap.jsonl"),
        ("--agent-grace-ms", "5"),
        ("--eof-drain-ms", "6"),
        ("--cancel-grace-ms", "7"),
        ("--max-line-bytes", "1048576"),
        ("--acp-config", "mode=auto"),
        ("--acp-protocol", "auto"),
        ("--add-dir", "/extra"),
        ("--output-format", "stream-json"),
        ("--input-format", "stream-json"),
    ];
    for flag in VALUE_FLAGS.iter().filter(|f| f.starts_with("--")) {
        assert!(
            rows.iter().any(|(f, _)| f == flag),
            "{flag} has no row in this test"
        );
    }
    let start = Path::new("/srv/panel");
    for (flag, value) in &rows {
        let base = if *flag == "--agent-cmd" {
            vec![]
        } else {
            vec!["--agent-cmd".to_string(), "x".to_string()]
        };
        let read = |words: Vec<String>| {
            let mut all = base.clone();
            all.extend(words);
            if *flag != "--cwd" {
                all.extend(["--cwd".to_string(), root.clone()]);
            }
            format!("{:?}", parse(&all, Env::default(), start))
        };
        let spaced = read(vec![flag.to_string(), value.to_string()]);
        let joined = read(vec![format!("{flag}={value}")]);
        assert!(spaced.starts_with("Ok("), "{flag} {value}: {spaced}");
        assert_eq!(spaced, joined, "{flag}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tap records which flags the bridge got, and the values of those that
/// say how the session ran; every other value is dropped, wherever the
/// flag's value was (`--flag v`, `--flag=v`, several `--add-dir` values),
/// and a flag after a dropped value is still named.
#[test]
fn the_tapped_argv_keeps_flags_and_drops_values_that_may_be_secrets() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--model", "opus", "--permission-mode=plan", "--verbose"],
            &["--model", "opus", "--permission-mode=plan", "--verbose"],
        ),
        (
            &["--settings", r#"{"env":{"TOKEN":"s3cr3t"}}"#, "--print"],
            &["--settings", "<dropped>", "--print"],
        ),
        (
            &[
                "--mcp-config",
                r#"{"mcpServers":{"x":{"command":"x","args":["--key","k"]}}}"#,
            ],
            &["--mcp-config", "<dropped>"],
        ),
        (
            &["--agent-cmd=gemini --api-key k", "--cwd", "/srv/p"],
            &["--agent-cmd=<dropped>", "--cwd", "<dropped>"],
        ),
        (
            &["--add-dir", "/a", "/b", "--resume", "s-1"],
            &["--add-dir", "<dropped>", "<dropped>", "--resume", "s-1"],
        ),
        (
            &["--unknown", "--verbose", "-p", "a prompt"],
            &["--unknown", "--verbose", "-p", "a prompt"],
        ),
    ];
    for (given, want) in cases {
        let given: Vec<String> = given.iter().map(|s| s.to_string()).collect();
        assert_eq!(tap_argv(&given), *want, "{given:?}");
    }
}

#[test]
fn an_ignored_flags_value_is_not_repeated_in_the_notes() {
    let config = run("--agent-cmd x --settings {\"env\":{\"K\":\"s3cr3t\"}} --foo=bar");
    let notes = config.notes.join("\n");
    assert!(notes.contains("--settings (and its value)"), "{notes}");
    assert!(notes.contains("--foo (and its value)"), "{notes}");
    assert!(
        !notes.contains("s3cr3t") && !notes.contains("bar"),
        "{notes}"
    );
}

#[test]
fn session_config_options_and_unadvertised_mcp_come_from_flags_then_the_environment() {
    let launch = |args: &str, config: Option<&str>, unadvertised: Option<&str>| {
        let env = Env {
            config: config.map(String::from),
            mcp_unadvertised: unadvertised.map(String::from),
            ..Env::default()
        };
        match parse(
            &argv(&format!("--agent-cmd x --cwd / {args}")),
            env,
            Path::new("/"),
        ) {
            Ok(Invocation::Run(c)) => Ok((c.spec.config_options, c.spec.mcp_unadvertised)),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(format!("{e:#}")),
        }
    };
    let pair = |id: &str, value: &str| (id.to_string(), value.to_string());
    assert_eq!(launch("", None, None), Ok((vec![], false)));
    assert_eq!(
        launch(
            "--acp-config mode=auto --acp-config=effort=high",
            Some("x=y"),
            None
        ),
        Ok((vec![pair("mode", "auto"), pair("effort", "high")], false))
    );
    assert_eq!(
        launch("", Some(" mode=auto, effort = high ,"), Some("1")),
        Ok((vec![pair("mode", "auto"), pair("effort", "high")], true))
    );
    assert_eq!(
        launch("--acp-mcp-unadvertised", None, Some("0")),
        Ok((vec![], true))
    );
    let bad = launch("--acp-config mode", None, None).unwrap_err();
    assert!(bad.contains("--acp-config takes <id>=<value>"), "{bad}");
    let bad = launch("", Some("=auto"), None).unwrap_err();
    assert!(
        bad.contains("ACP_BRIDGE_CONFIG takes <id>=<value>"),
        "{bad}"
    );
    let bad = launch("", None, Some("yes please")).unwrap_err();
    assert!(
        bad.contains("ACP_BRIDGE_MCP_UNADVERTISED takes 1 or 0"),
        "{bad}"
    );
}

#[test]
fn the_acp_revision_offered_comes_from_the_flag_then_the_environment() {
    let offer = |args: &str, env: Option<&str>| {
        let env = Env {
            acp_protocol: env.map(String::from),
            ..Env::default()
        };
        match parse(
            &argv(&format!("--agent-cmd x --cwd / {args}")),
            env,
            Path::new("/"),
        ) {
            Ok(Invocation::Run(c)) => Ok(c.spec.acp_protocol),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(format!("{e:#}")),
        }
    };
    assert_eq!(offer("", None), Ok(Offer::V1));
    assert_eq!(offer("", Some(" ")), Ok(Offer::V1));
    assert_eq!(offer("", Some("auto")), Ok(Offer::Auto));
    assert_eq!(offer("--acp-protocol=2", Some("auto")), Ok(Offer::V2));
    assert_eq!(offer("--acp-protocol 1", Some("2")), Ok(Offer::V1));
    let bad = offer("--acp-protocol 3", None).unwrap_err();
    assert!(
        bad.contains("--acp-protocol takes 1, 2 or auto, got \"3\""),
        "{bad}"
    );
    let bad = offer("", Some("v2")).unwrap_err();
    assert!(
        bad.contains("ACP_BRIDGE_ACP_PROTOCOL takes 1, 2 or auto"),
        "{bad}"
    );
}

#[test]
fn session_state_lines_are_for_whom_the_environment_asks() {
    let lines = |emit: Option<&str>, sdk: Option<&str>| {
        let env = Env {
            emit_session_state: emit.map(String::from),
            sdk_reads_session_state: sdk.map(String::from),
            ..Env::default()
        };
        match parse(&argv("--agent-cmd x --cwd /"), env, Path::new("/")) {
            Ok(Invocation::Run(c)) => c.spec.session_state_lines,
            other => panic!("{other:?}"),
        }
    };
    use acp_bridge::SessionStateLines::*;
    // (CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS, CLAUDE_CODE_SDK_READS_SESSION_STATE, lines)
    let cases = [
        (None, None, Off),
        (None, Some("0"), Off),
        (None, Some("1"), HostOnly),
        (None, Some("true"), HostOnly),
        (Some("1"), Some("1"), Emitted),
        (Some("1"), None, Emitted),
        (Some("no"), Some("1"), HostOnly),
    ];
    for (emit, sdk, want) in cases {
        assert_eq!(lines(emit, sdk), want, "{emit:?} {sdk:?}");
    }
}
