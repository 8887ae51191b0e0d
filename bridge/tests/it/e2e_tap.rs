//! End-to-end: `acp-bridge --tap` (and `ACP_BRIDGE_TAP`) over real pipes in
//! front of the scripted ACP peer (a test double). The tap must hold every
//! line of both legs in order, keep none of the user's paths or credentials,
//! never leave a half file at its path, and record an over-cap line as
//! skipped with its length.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use support::{Bridge, PEER, kill_pids, read_pids, scratch, script, wait_gone};

fn is(v: &Value, ty: &str) -> bool {
    v["type"] == ty
}

const INIT: &str =
    r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#;

fn prompt(text: &str) -> String {
    json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null,"session_id":"default"})
        .to_string()
}

/// A tap read back: every line parsed, the header first and the trailer last.
struct TapFile {
    text: String,
    header: Value,
    events: Vec<Value>,
    trailer: Value,
}

impl TapFile {
    fn read(path: &Path) -> TapFile {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read the tap {}: {e}", path.display()));
        let mut lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        assert!(
            lines.len() >= 2,
            "a tap has a header and a trailer:\n{text}"
        );
        let trailer = lines.pop().unwrap();
        let header = lines.remove(0);
        assert_eq!(header["type"], "header", "{header}");
        assert_eq!(trailer["type"], "trailer", "{trailer}");
        assert!(lines.iter().all(|l| l["type"] == "event"));
        TapFile {
            text,
            header,
            events: lines,
            trailer,
        }
    }

    /// The raw lines of one leg and direction, in order.
    fn raws(&self, leg: &str, dir: &str) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["leg"] == leg && e["dir"] == dir)
            .map(|e| e["raw"].as_str().unwrap().to_string())
            .collect()
    }

    /// The position of the first event of `leg`/`dir` whose raw satisfies `pred`.
    fn position(&self, leg: &str, dir: &str, pred: impl Fn(&Value) -> bool) -> usize {
        self.events
            .iter()
            .position(|e| {
                e["leg"] == leg
                    && e["dir"] == dir
                    && serde_json::from_str::<Value>(e["raw"].as_str().unwrap())
                        .is_ok_and(|v| pred(&v))
            })
            .unwrap_or_else(|| panic!("no {leg} {dir} event as wanted in\n{}", self.text))
    }
}

/// How the panel asks for the tap.
#[derive(Clone, Copy, Debug)]
enum Ask {
    /// `--tap <dir>/tap.jsonl`
    Flag,
    /// `ACP_BRIDGE_TAP=<dir>/taps/`: a new file in that directory.
    EnvDirectory,
}

/// The frames the scripted peer sends (replies as their `result`), in
/// order, and the methods it expects (a response as `response`).
fn peer_frames(script_name: &str) -> (Vec<Value>, Vec<String>) {
    let script: Value =
        serde_json::from_str(&std::fs::read_to_string(script(script_name)).unwrap()).unwrap();
    let (mut sends, mut expects) = (Vec::new(), Vec::new());
    for step in script["steps"].as_array().unwrap() {
        if let Some(method) = step["expect"].as_str() {
            expects.push(method.to_string());
            if let Some(reply) = step.get("reply") {
                sends.push(json!({"result": reply}));
            }
        } else if step.get("reply_to").is_some() {
            sends.push(json!({"result": step["result"]}));
        } else if let Some(frame) = step.get("send") {
            sends.push(frame.clone());
            if frame.get("id").is_some() {
                expects.push("response".into());
            }
        }
    }
    (sends, expects)
}

fn a_tap_holds_every_line_of_both_legs_in_order() {
    for ask in [Ask::Flag, Ask::EnvDirectory] {
        let dir = scratch(&format!("tap-order-{ask:?}"));
        let tap_dir = dir.join("taps/");
        let flag_path = dir.join("tap.jsonl");
        let pid_file = dir.join("pids");
        let peer = support::peer_cmd("tool_call_with_permission.json", &pid_file);
        let mcp = r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer test-token"}}}}"#;
        let mut args = vec![
            "--system-prompt",
            "Be terse.",
            "--mcp-config",
            mcp,
            "--agent-cmd",
            &peer,
            "--cwd",
            dir.to_str().unwrap(),
        ];
        let flag = flag_path.to_str().unwrap().to_string();
        let env_value = format!("{}/", tap_dir.to_str().unwrap().trim_end_matches('/'));
        let mut env = Vec::new();
        match ask {
            Ask::Flag => args.extend(["--tap", &flag]),
            Ask::EnvDirectory => env.push(("ACP_BRIDGE_TAP", env_value.as_str())),
        }
        let mut bridge = Bridge::start_with_env(&args, &env);
        let pids = read_pids(&pid_file);

        bridge.send(INIT);
        bridge.wait_for("system/init", |v| is(v, "system"));
        bridge.send(&prompt("list the files"));
        let ask_line = bridge.wait_for("can_use_tool", |v| {
            is(v, "control_request") && v["request"]["subtype"] == "can_use_tool"
        });
        bridge.send(
            &json!({"type":"control_response","response":{"subtype":"success",
                "request_id":ask_line["request_id"],
                "response":{"behavior":"allow","updatedInput":{"command":"ls"}}}})
            .to_string(),
        );
        bridge.wait_for("the result", |v| is(v, "result"));
        bridge.close_stdin();
        bridge.expect_clean_exit(&pids);

        let path = match ask {
            Ask::Flag => flag_path.clone(),
            Ask::EnvDirectory => {
                let files: Vec<PathBuf> = std::fs::read_dir(&tap_dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect();
                assert_eq!(files.len(), 1, "{ask:?}: one tap file, got {files:?}");
                let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
                assert!(
                    name.starts_with("acp-bridge-tap-") && name.ends_with(".jsonl"),
                    "{name}"
                );
                files[0].clone()
            }
        };
        let tap = TapFile::read(&path);
        let stderr = bridge.stderr();
        assert!(
            stderr.contains(&format!("tap written to {}", path.display())),
            "{stderr}"
        );

        // the header names the agent, the bridge and the launch
        let h = &tap.header;
        assert_eq!(h["format"], 1);
        assert_eq!(h["agent"], "scripted-acp-peer");
        assert_eq!(
            h["agent_info"],
            json!({"name":"scripted-acp-peer","version":"0.0.0"})
        );
        assert_eq!(h["bridge_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(h["protocol_version"], 1);
        assert!(
            h["date"].as_str().is_some_and(|d| d.len() == 10),
            "{}",
            h["date"]
        );
        assert_eq!(h["launch"]["system_prompt"], "Be terse.");
        assert_eq!(h["launch"]["append_system_prompt"], Value::Null);
        assert_eq!(h["launch"]["mcp"]["url"], "<mcp-url>");

        // the panel leg: exactly what the panel sent and read, in order
        assert_eq!(tap.raws("stream-json", "to_agent"), bridge.sent, "{ask:?}");
        // as it appears inside a JSON string (a Windows path's backslashes escaped)
        let workspace = json_inner(dir.to_str().unwrap());
        let seen: Vec<String> = bridge
            .seen
            .iter()
            .map(|l| l.replace(&workspace, "<workspace>"))
            .collect();
        assert_eq!(tap.raws("stream-json", "from_agent"), seen, "{ask:?}");

        // the agent leg: every frame the peer sent, and every one it expected
        let (sends, expects) = peer_frames("tool_call_with_permission.json");
        let from_agent: Vec<Value> = tap
            .raws("acp", "from_agent")
            .iter()
            .map(|r| serde_json::from_str(r).unwrap())
            .collect();
        assert_eq!(from_agent.len(), sends.len(), "{ask:?}: {from_agent:#?}");
        for (got, want) in from_agent.iter().zip(&sends) {
            match want.get("result") {
                Some(result) if want.get("jsonrpc").is_none() => {
                    assert_eq!(&got["result"], result)
                }
                _ => assert_eq!(got, want),
            }
        }
        let to_agent: Vec<String> = tap
            .raws("acp", "to_agent")
            .iter()
            .map(|r| {
                let v: Value = serde_json::from_str(r).unwrap();
                v["method"].as_str().unwrap_or("response").to_string()
            })
            .collect();
        assert_eq!(to_agent, expects, "{ask:?}");
        let session_new = &tap.raws("acp", "to_agent")[1];
        assert!(
            session_new.contains("Bearer <mcp-token>") && session_new.contains("<mcp-url>"),
            "{session_new}"
        );

        // one order over both legs: causes before their effects
        let panel_init = tap.position("stream-json", "to_agent", |v| v["request_id"] == "req_1");
        let agent_init = tap.position("acp", "to_agent", |v| v["method"] == "initialize");
        let asked = tap.position("acp", "from_agent", |v| {
            v["method"] == "session/request_permission"
        });
        let can_use = tap.position("stream-json", "from_agent", |v| {
            v["request"]["subtype"] == "can_use_tool"
        });
        let allowed = tap.position("stream-json", "to_agent", |v| is(v, "control_response"));
        let answered = tap.position("acp", "to_agent", |v| {
            v["id"] == 0 && v.get("result").is_some()
        });
        let result = tap.position("stream-json", "from_agent", |v| is(v, "result"));
        assert!(
            panel_init < agent_init && agent_init < asked && asked < can_use,
            "{}",
            tap.text
        );
        assert!(
            can_use < allowed && allowed < answered && answered < result,
            "{}",
            tap.text
        );
        let seqs: Vec<u64> = tap
            .events
            .iter()
            .map(|e| e["seq"].as_u64().unwrap())
            .collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
        let ms: Vec<u64> = tap
            .events
            .iter()
            .map(|e| e["ms"].as_u64().unwrap())
            .collect();
        assert!(ms.windows(2).all(|w| w[0] <= w[1]), "{ms:?}");

        let t = &tap.trailer;
        assert_eq!(t["outcome"], "ok", "{t}");
        assert_eq!(t["bridge_exit"], 0, "{t}");
        assert_eq!(t["exit"]["code"], 0, "{t}");
        assert!(t["scrubbed"]["mcp-token"].as_u64() >= Some(1), "{t}");
        assert!(t["scrubbed"]["workspace"].as_u64() >= Some(1), "{t}");
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".partial"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `s` between the quotes of a JSON string, every non-ASCII character as `\uXXXX`.
fn json_ascii(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap();
    let mut out = String::new();
    for c in quoted[1..quoted.len() - 1].chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

fn json_inner(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap();
    quoted[1..quoted.len() - 1].to_string()
}

/// Percent-encoding as in a `file://` URL; `/` kept or not.
fn percent(s: &str, keep_slash: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || (keep_slash && b == b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One thing planted in the session: the JSON string content the agent
/// sends it as, and the spellings that must not reach the tap.
struct Plant {
    what: &'static str,
    json_text: String,
    forbidden: Vec<String>,
}

/// A key the agent streams in pieces of 5 characters.
const STREAMED_KEY: &str = "key sk-ant-api03-Streamed0123456789abcdefXYZ end";

/// A value no credential shape matches, in a secret-named variable of the
/// bridge's environment (which the agent inherits).
const ENV_SECRET: &str = "zq9 planted env value";

fn a_tap_keeps_no_user_path_token_or_planted_secret() {
    let dir = scratch("tap-scrub");
    let home = dir.join("Zoë's home (ü) 家");
    let workspace = home.join("My Game ✓ 2");
    let temp = dir.join("tmp dir ü");
    for d in [&workspace, &temp] {
        std::fs::create_dir_all(d).unwrap();
    }
    let (home_s, ws_s, temp_s) = (
        home.to_str().unwrap().to_string(),
        workspace.to_str().unwrap().to_string(),
        temp.to_str().unwrap().to_string(),
    );
    let token = "tok-planted-1234567890";
    let other_header = "hdr-planted-value-98765";
    let keys = [
        ("sk-key", "sk-proj-Planted0123456789abcdefGHIJ"),
        ("github-token", "ghp_Planted0123456789abcdefghijABCDEFGH"),
        ("aws-access-key", "AKIAPLANTED012345678"),
        ("slack-token", "xoxb-planted-0123456789"),
        ("google-api-key", "AIzaPlanted0123456789abcdefghijABCDEFGH"),
        (
            "jwt",
            "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.plantedSignature123",
        ),
        ("stripe-key", "sk_live_Planted0123456789abcd"),
        ("npm-token", "npm_Planted0123456789abcdefghijABCDEFGHI"),
        ("gitlab-token", "glpat-Planted0123456789abcd"),
    ];
    let mut plants = vec![
        Plant {
            what: "workspace, plain",
            json_text: format!("open {}/Assets/a.cs", json_inner(&ws_s)),
            forbidden: vec![ws_s.clone()],
        },
        Plant {
            what: "workspace, \\u escapes",
            json_text: format!("open {}", json_ascii(&ws_s)),
            forbidden: vec![json_ascii(&ws_s)],
        },
        Plant {
            what: "workspace, \\/ escapes",
            json_text: json_inner(&ws_s).replace('/', "\\/"),
            forbidden: vec![json_inner(&ws_s).replace('/', "\\/")],
        },
        Plant {
            what: "home, file:// URL",
            json_text: format!("see file://{}/notes.md", percent(&home_s, true)),
            forbidden: vec![percent(&home_s, true)],
        },
        Plant {
            what: "workspace, percent-encoded slashes",
            json_text: format!("dir {}%2F.sessions", percent(&ws_s, false)),
            forbidden: vec![percent(&ws_s, false)],
        },
        Plant {
            what: "workspace, backslashes",
            json_text: json_inner(&ws_s.replace('/', "\\")),
            forbidden: vec![ws_s.replace('/', "\\")],
        },
        Plant {
            what: "temp, plain",
            json_text: format!("socket {}/agent-1.sock", json_inner(&temp_s)),
            forbidden: vec![temp_s.clone()],
        },
        Plant {
            what: "the MCP token",
            json_text: format!("token {token}"),
            forbidden: vec![token.into()],
        },
        Plant {
            what: "another MCP header value",
            json_text: format!("header {other_header}"),
            forbidden: vec![other_header.into()],
        },
        Plant {
            what: "a bearer token",
            json_text: "Authorization: Bearer plantedBearer0123456789".into(),
            forbidden: vec!["plantedBearer0123456789".into()],
        },
        Plant {
            what: "a key assignment",
            json_text: "OPENAI_API_KEY=plantedAssignment0123".into(),
            forbidden: vec!["plantedAssignment0123".into()],
        },
        Plant {
            what: "an AWS secret key assignment",
            json_text: "AWS_SECRET_ACCESS_KEY=plantedAwsSecret/0123456789".into(),
            forbidden: vec!["plantedAwsSecret/0123456789".into()],
        },
        Plant {
            what: "a URL's password",
            json_text: "postgres://app:plantedUrlPass@db:5432/x".into(),
            forbidden: vec!["plantedUrlPass".into()],
        },
        Plant {
            what: "a stdio MCP server's argument (--mcp-config)",
            json_text: "db postgres-db-planted-arg-4711".into(),
            forbidden: vec!["postgres-db-planted-arg-4711".into()],
        },
        Plant {
            what: "the URL of an MCP server not passed on",
            json_text: "see https://wiki.internal.example/mcp-planted".into(),
            forbidden: vec!["wiki.internal.example/mcp-planted".into()],
        },
        Plant {
            what: "a stdio MCP server's argument (the panel's initialize)",
            json_text: "run init-stdio-planted-arg-99".into(),
            forbidden: vec!["init-stdio-planted-arg-99".into()],
        },
        Plant {
            what: "the value of a secret-named environment variable, any shape",
            json_text: format!("echo {ENV_SECRET}"),
            forbidden: vec![ENV_SECRET.into()],
        },
    ];
    // the bridge reads it with uname (not on Windows, where a test under
    // wine would still find Linux's /proc)
    #[cfg(target_os = "linux")]
    if let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        let release = release.trim().to_string();
        plants.push(Plant {
            what: "the kernel release",
            json_text: format!("OS Version: Linux {release}"),
            forbidden: vec![release],
        });
    }
    for (kind, key) in keys {
        plants.push(Plant {
            what: kind,
            json_text: format!("line\\n{key} here"),
            forbidden: vec![key.into()],
        });
    }

    let mut steps = vec![
        json!({"expect":"initialize","reply":{"protocolVersion":1,"agentCapabilities":{},
            "authMethods":[],"agentInfo":{"name":"planted-peer","version":"1.0.0"}}}),
        json!({"expect":"session/new","reply":{"sessionId":"s-1"}}),
        json!({"expect":"session/prompt"}),
    ];
    for plant in &plants {
        steps.push(json!({"send_raw": format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{}"}}}}}}}}"#,
            plant.json_text)}));
        steps.push(json!({"stderr": format!("stderr {}", plant.json_text)}));
    }
    // a key streamed 5 characters at a time, as agents stream text
    for piece in STREAMED_KEY.as_bytes().chunks(5) {
        let piece = std::str::from_utf8(piece).unwrap();
        steps.push(json!({"send_raw": format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{piece}"}}}}}}}}"#)}));
    }
    steps.push(json!({"reply_to":"session/prompt","result":{"stopReason":"end_turn"}}));
    let script_path = dir.join("planted.json");
    std::fs::write(
        &script_path,
        json!({"steps": steps, "after": "exit_on_eof"}).to_string(),
    )
    .unwrap();
    let pid_file = dir.join("pids");
    let peer = support::join_command_line(&[
        PEER,
        script_path.to_str().unwrap(),
        "--pid-file",
        pid_file.to_str().unwrap(),
    ]);
    let mcp = json!({"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp",
        "headers":{"Authorization":format!("Bearer {token}"),"X-Other":other_header}},
        "notes":{"command":"/opt/tools/notes-server","args":["--db","postgres-db-planted-arg-4711"]},
        "wiki":{"type":"http","url":"https://wiki.internal.example/mcp-planted"}}})
    .to_string();
    let tap_path = dir.join("tap.jsonl");
    let mut bridge = Bridge::start_with_env(
        &[
            "--mcp-config",
            &mcp,
            "--agent-cmd",
            &peer,
            "--cwd",
            &ws_s,
            "--tap",
            tap_path.to_str().unwrap(),
        ],
        // the Unix and the Windows names of the home and temp directories
        &[
            ("HOME", &home_s),
            ("TMPDIR", &temp_s),
            ("USERPROFILE", &home_s),
            ("TMP", &temp_s),
            ("TEMP", &temp_s),
            ("DEPLOY_TOKEN", ENV_SECRET),
        ],
    );
    let pids = read_pids(&pid_file);
    // the TypeScript SDK gives its servers in initialize
    bridge.send(
        &json!({"type":"control_request","request_id":"init-1","request":{"subtype":"initialize",
            "mcpServers":{"init-notes":{"type":"stdio","command":"notes","args":["init-stdio-planted-arg-99"]}}}})
        .to_string(),
    );
    bridge.send(&prompt(&format!(
        "fix {ws_s}/Assets/a.cs with key {}",
        keys[0].1
    )));
    bridge.wait_for("the result", |v| is(v, "result"));
    bridge.close_stdin();
    bridge.expect_clean_exit(&pids);
    // the bridge passed the planted text on (the check below means something)
    let panel_text = bridge.seen.join("\n");
    assert!(panel_text.contains(keys[1].1), "{panel_text}");

    let tap = TapFile::read(&tap_path);
    let raws: Vec<&str> = tap
        .events
        .iter()
        .map(|e| e["raw"].as_str().unwrap())
        .collect();
    for plant in &plants {
        for needle in &plant.forbidden {
            assert!(
                !tap.text.contains(needle.as_str())
                    && !raws.iter().any(|r| r.contains(needle.as_str())),
                "{}: {needle:?} is in the tap:\n{}",
                plant.what,
                tap.text
            );
        }
    }
    // no 8 characters of the streamed key are left, on either leg
    let key_chars: Vec<char> = STREAMED_KEY.chars().skip(4).collect();
    for part in key_chars.windows(8) {
        let part: String = part.iter().collect();
        assert!(
            !tap.text.contains(&part),
            "{part:?} of the streamed key is in the tap"
        );
    }
    for path in [&home_s, &ws_s, &temp_s] {
        assert!(!tap.text.contains(path.as_str()), "{path}");
        assert!(!raws.iter().any(|r| r.contains(path.as_str())), "{path}");
    }
    let prompt_raw = &tap.raws("stream-json", "to_agent")[1];
    assert!(
        prompt_raw.contains("fix <workspace>/Assets/a.cs with key <redacted>"),
        "{prompt_raw}"
    );
    let scrubbed = &tap.trailer["scrubbed"];
    for kind in [
        "home",
        "workspace",
        "temp",
        "mcp-token",
        "mcp-header",
        "bearer-token",
        "secret-assignment",
        "url-password",
        "env-secret",
    ]
    .into_iter()
    .chain(keys.iter().map(|(k, _)| *k))
    {
        assert!(
            scrubbed[kind].as_u64() >= Some(1),
            "no {kind} in {scrubbed}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// When the bridge is killed.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// Before the agent answered initialize: the header is still held.
    Start,
    /// Waiting on the panel's permission answer, mid-turn.
    Permission,
}

fn sigkill_mid_session_leaves_no_file_at_the_tap_path() {
    for at in [KillAt::Start, KillAt::Permission] {
        let dir = scratch(&format!("tap-kill-{at:?}"));
        let tap_path = dir.join("tap.jsonl");
        let (mut bridge, pids) = Bridge::start_with_peer(
            &dir,
            "tool_call_with_permission.json",
            &[
                "--system-prompt",
                "Be terse.",
                "--mcp-config",
                r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer test-token"}}}}"#,
                "--tap",
                tap_path.to_str().unwrap(),
            ],
        );
        if let KillAt::Permission = at {
            bridge.send(INIT);
            bridge.send(&prompt("list the files"));
            bridge.wait_for("can_use_tool", |v| {
                is(v, "control_request") && v["request"]["subtype"] == "can_use_tool"
            });
        }
        bridge.kill();
        let status = bridge.wait_exit(Duration::from_secs(10));
        kill_pids(&wait_gone(&pids, Duration::from_secs(3)));
        assert!(!status.success(), "{at:?}");
        assert!(!tap_path.exists(), "{at:?}: a file at the tap path");
        let left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("tap"))
            .collect();
        assert!(
            left.len() == 1 && left[0].starts_with(".tap.jsonl.") && left[0].ends_with(".partial"),
            "{at:?}: one hidden temp file, got {left:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn lines_over_the_cap_are_recorded_as_skipped_with_their_length() {
    let dir = scratch("tap-over-cap");
    let script_path = dir.join("over_cap.json");
    let steps = json!({"steps":[
        {"expect":"initialize","reply":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}},
        {"expect":"session/new","reply":{"sessionId":"s-1"}},
        {"expect":"session/prompt"},
        {"send":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{
            "sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"filled"}}}},
         "fill":{"pointer":"/params/update/content/text","len":10000}},
        {"reply_to":"session/prompt","result":{"stopReason":"end_turn"}}
    ],"after":"exit_on_eof"});
    std::fs::write(&script_path, steps.to_string()).unwrap();
    let agent_line_len = {
        let mut frame = steps["steps"][3]["send"].clone();
        frame["params"]["update"]["content"]["text"] = Value::String("x".repeat(10000));
        frame.to_string().len() as u64
    };
    let pid_file = dir.join("pids");
    let peer = support::join_command_line(&[
        PEER,
        script_path.to_str().unwrap(),
        "--pid-file",
        pid_file.to_str().unwrap(),
    ]);
    let tap_path = dir.join("tap.jsonl");
    let mut bridge = Bridge::start(&[
        "--max-line-bytes",
        "4096",
        "--agent-cmd",
        &peer,
        "--cwd",
        dir.to_str().unwrap(),
        "--tap",
        tap_path.to_str().unwrap(),
    ]);
    let pids = read_pids(&pid_file);
    let long_panel_line = prompt(&"y".repeat(5000));
    bridge.send(INIT);
    bridge.wait_for("system/init", |v| is(v, "system"));
    bridge.send(&long_panel_line);
    bridge.send(&prompt("say something long"));
    bridge.wait_for("the result", |v| is(v, "result"));
    bridge.close_stdin();
    bridge.read_to_exit(&pids);

    let tap = TapFile::read(&tap_path);
    let skipped: Vec<Value> = tap
        .events
        .iter()
        .filter_map(|e| e.get("skipped").cloned())
        .collect();
    let cases = [
        ("stream-json", "to_agent", long_panel_line.len() as u64),
        ("acp", "from_agent", agent_line_len),
    ];
    for (leg, dir, bytes) in cases {
        assert!(
            skipped.contains(&json!({"leg": leg, "dir": dir, "bytes": bytes})),
            "no skipped {leg} {dir} line of {bytes} bytes in {skipped:?}"
        );
    }
    for e in &tap.events {
        let raw = e["raw"].as_str().unwrap();
        assert!(
            raw.len() < 4096,
            "a line over the cap is in the tap: {raw:.200}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One short turn with `tap_args` (and `env`) in front of the scripted peer;
/// the session must end clean. Returns the bridge's stderr.
fn short_tapped_session(dir: &Path, tap_args: &[&str], env: &[(&str, &str)]) -> String {
    let pid_file = dir.join("pids");
    let peer = support::peer_cmd("text_only_turn.json", &pid_file);
    let mut args = tap_args.to_vec();
    args.extend(["--agent-cmd", &peer, "--cwd", dir.to_str().unwrap()]);
    let mut bridge = Bridge::start_with_env(&args, env);
    let pids = read_pids(&pid_file);
    bridge.send(INIT);
    bridge.wait_for("system/init", |v| is(v, "system"));
    bridge.send(&prompt("ping the editor"));
    bridge.wait_for("the result", |v| is(v, "result"));
    bridge.close_stdin();
    bridge.expect_clean_exit(&pids);
    bridge.stderr()
}

/// A tap that cannot be opened (its directory is a file; `~/` with no
/// home) never stops the session: it runs untapped and says why.
fn a_tap_that_cannot_be_opened_leaves_the_session_running_untapped() {
    let dir = scratch("tap-cannot-open");
    std::fs::write(dir.join("a-file"), "not a directory\n").unwrap();
    let under_a_file = dir.join("a-file/tap.jsonl");
    let flag = under_a_file.to_str().unwrap().to_string();
    let env_dir = format!("{}/", dir.join("a-file/taps").to_str().unwrap());
    type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let cases: [Case; 3] = [
        ("--tap under a file", vec!["--tap", &flag], vec![]),
        (
            "ACP_BRIDGE_TAP under a file",
            vec![],
            vec![("ACP_BRIDGE_TAP", &env_dir)],
        ),
        (
            "--tap ~/ without HOME",
            vec!["--tap", "~/taps/"],
            vec![("HOME", "")],
        ),
    ];
    for (what, args, env) in cases {
        let stderr = short_tapped_session(&dir, &args, &env);
        assert!(
            stderr.contains("the session runs untapped"),
            "{what}: stderr says why the tap is off:\n{stderr}"
        );
        assert!(
            !under_a_file.exists() && !dir.join("taps").exists(),
            "{what}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tap is its user's alone: the file is 0600 and a directory made for
/// taps 0700, and no temp file is left beside it.
#[cfg(unix)]
fn a_tap_and_the_directory_made_for_it_are_readable_by_their_user_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("tap-private");
    let taps = dir.join("taps");
    let env_dir = format!("{}/", taps.to_str().unwrap());
    short_tapped_session(&dir, &[], &[("ACP_BRIDGE_TAP", &env_dir)]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&taps), 0o700);
    let files: Vec<PathBuf> = std::fs::read_dir(&taps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(mode(&files[0]), 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}

/// On Windows a tap path ending in `\\` names a directory, as `/` does
/// everywhere: `setx ACP_BRIDGE_TAP "%USERPROFILE%\\acp-taps\\"`.
#[cfg(windows)]
fn a_tap_path_ending_in_a_backslash_is_a_new_directory_on_windows() {
    let dir = scratch("tap-backslash");
    let taps = dir.join("taps");
    let env_dir = format!("{}\\", taps.to_str().unwrap());
    short_tapped_session(&dir, &[], &[("ACP_BRIDGE_TAP", &env_dir)]);
    let files: Vec<PathBuf> = std::fs::read_dir(&taps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tap onto something that is not a regular file is never replaced by
/// one: a FIFO gets the tap streamed into it (and stays a FIFO); a FIFO
/// nobody reads leaves the session untapped instead of waiting; a symlink
/// keeps its link and its target gets the tap.
#[cfg(unix)]
fn a_tap_onto_a_fifo_or_a_symlink_is_written_through_never_replaced() {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let dir = scratch("tap-not-a-file");
    let fifo = dir.join("tap.fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            // opened before the bridge starts, read once the bridge is gone
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
                .unwrap();
            let mut text = String::new();
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while !text.contains("\"type\":\"trailer\"") && std::time::Instant::now() < deadline {
                let mut chunk = String::new();
                match file.read_to_string(&mut chunk) {
                    Ok(_) => text.push_str(&chunk),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        text.push_str(&chunk);
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            text
        })
    };
    // the reader has the FIFO open before the bridge looks at it
    let opened = std::time::Instant::now() + Duration::from_secs(10);
    while !fifo_has_reader(&fifo) && std::time::Instant::now() < opened {
        std::thread::yield_now();
    }
    short_tapped_session(&dir, &["--tap", fifo.to_str().unwrap()], &[]);
    let streamed = reader.join().unwrap();
    assert!(
        streamed.starts_with("{\"type\":\"header\""),
        "{streamed:.200}"
    );
    assert!(streamed.contains("\"type\":\"trailer\""));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // nobody reads it now: the session runs untapped, never waits for a reader
    let stderr = short_tapped_session(&dir, &["--tap", fifo.to_str().unwrap()], &[]);
    assert!(stderr.contains("a FIFO nobody reads"), "{stderr}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    let target = dir.join("real-tap.jsonl");
    let link = dir.join("tap-link.jsonl");
    std::os::unix::fs::symlink("real-tap.jsonl", &link).unwrap();
    short_tapped_session(&dir, &["--tap", link.to_str().unwrap()], &[]);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let tapped = std::fs::read_to_string(&target).unwrap();
    assert!(tapped.starts_with("{\"type\":\"header\""));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether a writer opening `fifo` without waiting would find a reader.
#[cfg(unix)]
fn fifo_has_reader(fifo: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .is_ok()
}

/// A panel that closes stdin while the agent never ends its turn (and
/// ignores EOF and SIGTERM): the bridge waits for the turn no longer than
/// `--eof-drain-ms`, then ends the agent's whole tree, and the tap is
/// written whole with its trailer; nothing is left running. (The turn is
/// not cancelled at EOF itself: an SDK's one-shot query closes stdin right
/// after its prompt and waits for the answer.)
fn a_panel_gone_mid_turn_ends_a_hung_agent_within_the_drain_bound_and_the_tap_is_whole() {
    let dir = scratch("tap-hung-turn");
    let tap_path = dir.join("hung.jsonl");
    let (mut bridge, pids) = Bridge::start_with_peer(
        &dir,
        "never_ends_its_turn.json",
        &[
            "--tap",
            tap_path.to_str().unwrap(),
            "--eof-drain-ms",
            "300",
            "--agent-grace-ms",
            "200",
        ],
    );
    bridge.send(INIT);
    bridge.send(&prompt("ping the editor"));
    bridge.wait_for("the agent's text", |v| {
        v.to_string().contains("thinking forever")
    });
    let closed = std::time::Instant::now();
    bridge.close_stdin();
    let (_, left) = bridge.wait_exit_and_reap(&pids);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    assert!(
        closed.elapsed() < Duration::from_secs(10),
        "ended {:?} after the panel left",
        closed.elapsed()
    );
    let tap = TapFile::read(&tap_path);
    assert_eq!(tap.trailer["type"], "trailer", "{}", tap.text);
    assert!(tap.text.contains("thinking forever"), "{}", tap.text);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(e2e_tap: a_tap_holds_every_line_of_both_legs_in_order, a_tap_keeps_no_user_path_token_or_planted_secret, sigkill_mid_session_leaves_no_file_at_the_tap_path, lines_over_the_cap_are_recorded_as_skipped_with_their_length, a_tap_that_cannot_be_opened_leaves_the_session_running_untapped, #[cfg(unix)] a_tap_and_the_directory_made_for_it_are_readable_by_their_user_only, #[cfg(windows)] a_tap_path_ending_in_a_backslash_is_a_new_directory_on_windows, #[cfg(unix)] a_tap_onto_a_fifo_or_a_symlink_is_written_through_never_replaced, a_panel_gone_mid_turn_ends_a_hung_agent_within_the_drain_bound_and_the_tap_is_whole)
}
