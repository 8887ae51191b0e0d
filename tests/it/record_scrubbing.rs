//! A recording made under a temp dir whose path has spaces and non-ASCII
//! characters keeps no spelling of the run's paths and not the machine's
//! hostname: a test double (a short Perl script, never a real agent) writes
//! them the ways agents do (raw, `\/`-escaped, JSON `\u` escapes as
//! Python's `json` writes, `file://` URLs, `%2F`-encoded, shortened behind
//! an ellipsis, `"hostname":...`).

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::record_run::wait_bounded;

/// Answers one prompt with every spelling of its cwd and the hostname;
/// writes the run dir's name to `NAME_FILE` so the test knows what to look for.
const DOUBLE: &str = r#"
use strict; use warnings; use JSON::PP; use Encode;
$| = 1;
my $ascii = JSON::PP->new->ascii->canonical;
my $cwd = "";
sub upd { print $ascii->encode({jsonrpc=>"2.0", method=>"session/update", params=>{sessionId=>"s", update=>$_[0]}}), "\n" }
sub pct { my ($s, $keep) = @_; join "", map { (/[A-Za-z0-9\-._~]/ || ($keep && $_ eq "/")) ? $_ : sprintf("%%%02X", ord) } split //, $s }
while (my $line = <STDIN>) {
  my ($id) = $line =~ /^\{"jsonrpc":"2.0","id":(\d+)/;
  if ($line =~ /"method":"initialize"/) {
    print qq({"jsonrpc":"2.0","id":$id,"result":{"protocolVersion":1,"agentInfo":{"name":"leaky-double","version":"1.0.0"}}}\n);
  } elsif ($line =~ /"method":"session\/new"/) {
    ($cwd) = $line =~ /"cwd":"([^"]*)"/;
    print qq({"jsonrpc":"2.0","id":$id,"result":{"sessionId":"s"}}\n);
  } elsif ($line =~ /"method":"session\/prompt"/) {
    my $path = decode("UTF-8", $cwd);
    (my $run = $path) =~ s{/workspace$}{};
    my $name = (split m{/}, $run)[-1];
    open(my $f, ">", "NAME_FILE") or die; print $f encode("UTF-8", $name); close $f;
    my $host = `cat /proc/sys/kernel/hostname`; chomp $host;
    my $url = "file://" . pct(encode("UTF-8", $path), 1);
    my $component = pct(encode("UTF-8", $path), 0);
    my $short = "..." . substr($name, -10) . "/workspace/Assets/Foo.cs";
    upd({sessionUpdate=>"agent_message_chunk", content=>{type=>"text", text=>"cwd $path url $url sessions/$component/x.json"}});
    upd({sessionUpdate=>"tool_call", toolCallId=>"c1", title=>"Creating $short", kind=>"edit", status=>"completed", rawInput=>{hostname=>$host, path=>"$path/Foo.cs"}});
    my $raw = JSON::PP->new->utf8->canonical->encode({sessionUpdate=>"agent_message_chunk", content=>{type=>"text", text=>"escaped $path"}});
    $raw =~ s{/}{\\/}g;
    print qq({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":$raw}}\n);
    print qq({"jsonrpc":"2.0","id":$id,"result":{"stopReason":"end_turn"}}\n);
  }
}
"#;

const SCENARIO: &str = r#"name = "leaky"
summary = "An agent that names its paths and host every way it can."
[[step]]
panel = "prompt"
text = "Where are you?"
  [[step.model]]
  text = "x"
"#;

fn a_run_under_a_temp_dir_with_spaces_and_non_ascii_leaves_no_spelling_of_its_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let temp = dir.path().join("tmp spaced é ü 😀");
    let name_file = dir.path().join("run-name");
    for d in [root.join("profiles"), root.join("scenarios"), temp.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    let script = DOUBLE.replace("NAME_FILE", &name_file.display().to_string());
    std::fs::write(
        root.join("profiles/test-double-leaky.toml"),
        crate::support::record_run::double_profile(
            "test-double-leaky",
            "",
            "# the double answers by itself, never asking a model\nasks_model = false\nflavour = \"responses\"\ntool_naming = { form = \"namespace\", namespace = \"mcp__unity_ops\" }",
            "/usr/bin/perl",
            &format!("[\"-e\", '''{script}''']"),
        ),
    )
    .unwrap();
    std::fs::write(root.join("scenarios/leaky.toml"), SCENARIO).unwrap();
    let out = dir.path().join("out");
    let stderr_path = dir.path().join("record.stderr");
    let child = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args([
            "record",
            "--agent",
            "test-double-leaky",
            "--scenario",
            "leaky",
        ])
        .arg("--allow-network")
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .env("TMPDIR", &temp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let code = wait_bounded(child, Duration::from_secs(40));
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert_eq!(code, Some(0), "record failed:\n{stderr}");
    let text = std::fs::read_to_string(out.join("test-double-leaky/1.0.0/leaky.jsonl")).unwrap();
    let name = std::fs::read_to_string(&name_file).expect("the double saw a prompt");
    assert!(name.starts_with("acp-harness-run-"), "{name}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let mut leaks: Vec<String> = [
        // the run dir's random part, in any spelling of the path
        name["acp-harness-run-".len()..].to_string(),
        // the temp dir's name, raw, percent-encoded or \u-escaped
        "tmp spaced".into(),
        "tmp%20spaced".into(),
        "\\u00e9".into(),
        "%C3%A9".into(),
        "é ü".into(),
        format!("\\\"{}\\\"", host.trim()),
    ]
    .into_iter()
    .filter(|leak| text.contains(leak.as_str()))
    .collect();
    leaks.sort();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| leaks.iter().any(|k| l.contains(k.as_str())))
        .collect();
    assert!(
        leaks.is_empty(),
        "leaked {leaks:?} in:\n{}",
        lines.join("\n")
    );
    for kept in [
        "cwd <workspace> url file://<workspace> sessions/<workspace>/x.json",
        "Creating ...<run>/workspace/Assets/Foo.cs",
        "\\\"hostname\\\":\\\"<hostname>\\\"",
        "escaped <workspace>",
    ] {
        assert!(text.contains(kept), "no {kept:?} in:\n{text}");
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(record_scrubbing: a_run_under_a_temp_dir_with_spaces_and_non_ascii_leaves_no_spelling_of_its_paths)
}
