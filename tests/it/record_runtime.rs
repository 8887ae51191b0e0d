//! What a profile asks of the machine beyond its agent: runtimes
//! (`[runtime]`), and that nothing an agent starts outlives its run.
//!
//! The tests that need a package registry (a real Node from npm, a real
//! wheel from PyPI, each into a temporary install cache) run when `CI` or
//! `ACP_HARNESS_LIVE_REGISTRY` is set (as `.ci/run` does), and otherwise
//! pass saying they did not run. The others are offline test doubles.

use crate::support::record_run;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use acp_harness::corpus::recording::{self, Outcome};

const RUN_LIMIT: Duration = Duration::from_secs(120);

const MODEL: &str = r#"[model]
# the doubles answer by themselves, never asking a model
asks_model = false
flavour = "responses"
tool_naming = { form = "namespace", namespace = "mcp__unity_ops" }
[ready]
timeout_ms = 5000
handshake_timeout_ms = 5000
[stop]
eof_grace_ms = 500
term_grace_ms = 500
"#;

/// Whether registry tests run here; prints why not when they do not.
fn live_registry(test: &str) -> bool {
    if std::env::var_os("CI").is_some() || std::env::var_os("ACP_HARNESS_LIVE_REGISTRY").is_some() {
        return true;
    }
    eprintln!(
        "SKIPPED: {test} needs a package registry; set ACP_HARNESS_LIVE_REGISTRY=1 to run it"
    );
    false
}

/// A root holding one profile (`<id>.toml` with `text`) and the text-only scenario.
fn root_with_profile(dir: &Path, id: &str, text: &str) -> PathBuf {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::write(root.join("profiles").join(format!("{id}.toml")), text).unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/text-only.toml");
    std::fs::copy(scenario, root.join("scenarios/text-only.toml")).unwrap();
    root
}

/// Runs the harness with `args` and a private install cache under `dir`,
/// bounded by [`RUN_LIMIT`]; (exit code, stdout, stderr).
fn harness(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    harness_with(dir, args, &[])
}

/// [`harness`] with these environment variables set for it (an empty
/// value: unset).
fn harness_with(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (Option<i32>, String, String) {
    let out = dir.join("harness.stdout");
    let err = dir.join("harness.stderr");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-harness"));
    for (key, _) in env.iter().filter(|(_, v)| v.is_empty()) {
        cmd.env_remove(key);
    }
    let child = cmd
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("ACP_HARNESS_PYTHON")
        .envs(env.iter().filter(|(_, v)| !v.is_empty()).copied())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let code = record_run::wait_bounded(child, RUN_LIMIT);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (code, read(&out), read(&err))
}

/// Every process on this machine whose command line holds `needle`, with it.
fn processes_holding(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains(needle) {
            out.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    out
}

/// Every process on this machine in the network namespace `netns` (`net:[N]`).
fn processes_in_netns(netns: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path().join("ns/net")).is_ok_and(|l| l.to_string_lossy() == netns)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"test-double","version":"1.0.0"},"agentCapabilities":{"mcpCapabilities":{"http":true}}}}"#;

/// An agent that, on initialize, double-forks a daemon into its own session
/// with its stdio on /dev/null (the daemon writes its network namespace to
/// `<marker>.netns` once it is detached, which the agent waits for; `marker`
/// is in its command line), then plays one turn.
/// After `record` returns, nothing of it runs, its network namespace is
/// gone, and the trailer names the daemon's command line.
fn a_detached_daemon_an_agent_starts_does_not_outlive_record() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("acp-harness-test-daemon");
    let marker_s = marker.display().to_string();
    let script = format!(
        r#"while read -r line; do case "$line" in
*'"method":"initialize"'*) ( setsid bash -c 'readlink /proc/self/ns/net > "$0.netns"; while :; do sleep 1; done' '{marker_s}' </dev/null >/dev/null 2>&1 & ); for i in $(seq 1000); do [ -s '{marker_s}.netns' ] && break; sleep 0.01; done; echo '{INIT_RESULT}';;
*'"method":"session/new"'*) echo '{{"jsonrpc":"2.0","id":1,"result":{{"sessionId":"s"}}}}';;
*'"method":"session/prompt"'*) echo '{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"hello"}}}}}}}}'; echo '{{"jsonrpc":"2.0","id":2,"result":{{"stopReason":"end_turn"}}}}';;
esac; done"#
    );
    let id = "test-double-daemon";
    let profile = format!(
        "id = \"{id}\"\ndefault_version = \"1.0.0\"\n{MODEL}[[recipe]]\nversions = \"*\"\nprogram = \"bash\"\nargs = [\"-c\", '''{script}''']\n"
    );
    let root = root_with_profile(dir.path(), id, &profile);
    let out = dir.path().join("out");
    let (code, stderr) = record_run::run_record(
        &root,
        &out,
        id,
        "text-only",
        &[],
        &dir.path().join("record.stderr"),
        RUN_LIMIT,
    );
    let left = processes_holding(&marker_s);
    assert!(left.is_empty(), "the daemon outlived record: {left:?}");
    assert_eq!(code, Some(0), "{stderr}");
    let rec = recording::read(&out.join(id).join("1.0.0").join("text-only.jsonl")).unwrap();
    let trailer = rec.trailer.expect("a trailer");
    assert_eq!(trailer.outcome, Outcome::Ok, "{:?}", trailer.notes);
    assert!(
        trailer
            .notes
            .iter()
            .any(|n| n.contains("ended it") && n.contains("acp-harness-test-daemon")),
        "the trailer names the daemon: {:?}",
        trailer.notes
    );
    if rec.header.isolation == acp_harness::capture::isolation::NETNS_LOOPBACK {
        let netns = std::fs::read_to_string(format!("{marker_s}.netns")).unwrap();
        let netns = netns.trim();
        assert!(netns.starts_with("net:["), "{netns}");
        let held = processes_in_netns(netns);
        assert!(held.is_empty(), "{netns} is still held by {held:?}");
    }
}

/// A PyPI recipe asking for a Python this machine does not have fails
/// before anything is fetched, naming the range and each interpreter it
/// tried (this machine's are asked, none is faked).
fn install_names_the_python_range_and_the_interpreters_it_tried() {
    let dir = tempfile::tempdir().unwrap();
    let id = "test-python-range";
    let profile = format!(
        "id = \"{id}\"\ndefault_version = \"0.12.1\"\n[runtime]\npython = \">=3.99\"\n{MODEL}[[recipe]]\nversions = \"*\"\nsource = \"pypi\"\npackage = \"agent-client-protocol\"\nprogram = \"{{install_dir}}/bin/python\"\n"
    );
    let root = root_with_profile(dir.path(), id, &profile);
    let root_s = root.display().to_string();
    let (code, _, stderr) = harness(dir.path(), &["install", id, "--root", &root_s]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("python = \">=3.99\": no Python on this machine matches"),
        "{stderr}"
    );
    assert!(stderr.contains("python3"), "names what it tried: {stderr}");
    assert!(
        !dir.path()
            .join("cache")
            .join("acp-harness")
            .join("agents")
            .join("pypi")
            .exists(),
        "nothing was installed"
    );
}

const NODE_AGENT: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: 1, agentInfo: { name: 'node-runtime-double', version: '1.0.0' }, agentCapabilities: {} } });
  else if (m.method === 'session/new') send({ jsonrpc: '2.0', id: m.id, result: { sessionId: 's' } });
  else if (m.method === 'session/prompt') {
    send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'running on node ' + process.version } } } });
    send({ jsonrpc: '2.0', id: m.id, result: { stopReason: 'end_turn' } });
  }
});
"#;

/// `[runtime] node` installs that Node from the npm registry into the
/// cache, pins it, puts it first on the agent's PATH (the agent says which
/// Node runs it) and names it in the header; a second install reuses the
/// pin and the cached Node; a range nothing published matches fails first.
fn a_node_runtime_is_installed_pinned_first_on_path_and_in_the_header() {
    if !live_registry("a_node_runtime_is_installed_pinned_first_on_path_and_in_the_header") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let id = "test-node-runtime";
    let profile = format!(
        "id = \"{id}\"\ndefault_version = \"1.0.0\"\n[runtime]\nnode = \"=22.19.0\"\n{MODEL}[[recipe]]\nversions = \"*\"\nprogram = \"node\"\nargs = [\"-e\", '''{NODE_AGENT}''']\n"
    );
    let root = root_with_profile(dir.path(), id, &profile);
    let root_s = root.display().to_string();
    let out = dir.path().join("out");
    let out_s = out.display().to_string();
    let (code, _, stderr) = harness(
        dir.path(),
        &[
            "record",
            "--agent",
            id,
            "--scenario",
            "text-only",
            "--allow-network",
            "--root",
            &root_s,
            "--out",
            &out_s,
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let rec = recording::read(&out.join(id).join("1.0.0").join("text-only.jsonl")).unwrap();
    assert_eq!(
        rec.header.extra.get("runtime"),
        Some(&serde_json::json!({"node": "22.19.0"})),
        "{:?}",
        rec.header.extra
    );
    assert!(
        rec.events
            .iter()
            .any(|e| e.raw.contains("running on node v22.19.0")),
        "the agent ran on the installed Node"
    );

    let (code, _, stderr) = harness(dir.path(), &["install", id, "--root", &root_s]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("22.19.0, pinned in"), "{stderr}");
    assert!(stderr.contains("cached in"), "{stderr}");

    std::fs::write(
        root.join("profiles").join(format!("{id}.toml")),
        profile.replace("=22.19.0", ">=999"),
    )
    .unwrap();
    let (code, _, stderr) = harness(dir.path(), &["install", id, "--root", &root_s]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("node = \">=999\": no published Node matches"),
        "{stderr}"
    );
}

/// A PyPI recipe with a pin override and an npm side package: the side
/// package lands beside it in the cache, the override stands in for the
/// package's own requirement (`pydantic>=2.7` becomes `==2.11.7`) in an
/// environment of its own (`<name>@<version>+<digest>`), and a program the
/// package does not ship is named with the console scripts it does ship.
fn pypi_overrides_side_packages_and_a_missing_console_script() {
    if !live_registry("pypi_overrides_side_packages_and_a_missing_console_script") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let id = "test-pypi-override";
    let profile = format!(
        "id = \"{id}\"\ndefault_version = \"0.12.1\"\noverrides = [\"pydantic==2.11.7\"]\n{MODEL}[[recipe]]\nversions = \"*\"\nsource = \"pypi\"\npackage = \"agent-client-protocol\"\nprogram = \"{{install_dir}}/bin/acp-agent\"\n[[recipe.packages]]\nas = \"semver\"\nname = \"semver\"\nversion = \"7.6.0\"\n"
    );
    let root = root_with_profile(dir.path(), id, &profile);
    let root_s = root.display().to_string();
    let (code, _, stderr) = harness(dir.path(), &["install", id, "--root", &root_s]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("has no console script `acp-agent` (it ships no console scripts)"),
        "{stderr}"
    );
    let agents = dir.path().join("cache").join("acp-harness").join("agents");
    assert!(
        agents
            .join("semver@7.6.0/node_modules/.bin/semver")
            .exists()
    );
    // an install with overrides is its own environment: `name@version+<digest>`
    let installs: Vec<PathBuf> = std::fs::read_dir(agents.join("pypi"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with("agent-client-protocol@0.12.1+")
            })
        })
        .collect();
    assert_eq!(installs.len(), 1, "{installs:?}");
    let venv = &installs[0];
    let out = Command::new(venv.join("bin").join("python"))
        .args([
            "-c",
            "from importlib.metadata import version; print(version('pydantic'))",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2.11.7");
}

/// A fake interpreter at `path` answering as Python `version`; with `pip`,
/// `-m pip index versions` lists 1.0.0 and 1.1.0, else pip is missing.
#[cfg(unix)]
fn fake_python(path: &Path, version: &str, pip: bool) {
    use std::os::unix::fs::PermissionsExt;
    let pip = if pip {
        "echo 'x (1.1.0)'; echo 'Available versions: 1.1.0, 1.0.0'"
    } else {
        "echo 'No module named pip' >&2; exit 1"
    };
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -c ]; then echo {version}; echo \"$0\"; exit 0; fi\n{pip}\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `outdated` asks PyPI with the Python the profile's `[runtime] python`
/// picks, as `install` would (here `python3.12` on PATH, past a `python3`
/// 3.10 without pip); without the range it asks `python3`, whose failure is
/// the row's error (exit 2). The interpreters are fakes; nothing leaves
/// the machine.
#[cfg(unix)]
fn outdated_asks_pypi_with_the_python_of_the_profiles_runtime() {
    // (the profile's [runtime] python, exit code, a part of stdout or stderr)
    let cases = [
        (Some(">=3.12"), Some(1), "1.1.0"),
        (None, Some(2), "No module named pip"),
    ];
    let none = std::ffi::OsStr::new("");
    for (python, want_code, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fake_python(&bin.join("python3"), "3.10.4", false);
        fake_python(&bin.join("python3.12"), "3.12.4", true);
        let id = "test-outdated-python";
        let runtime = python.map_or(String::new(), |r| format!("[runtime]\npython = \"{r}\"\n"));
        let profile = format!(
            "id = \"{id}\"\ndefault_version = \"1.0.0\"\n{runtime}{MODEL}[[recipe]]\nversions = \"*\"\nsource = \"pypi\"\npackage = \"fake-agent\"\nprogram = \"{{install_dir}}/bin/fake-agent\"\n"
        );
        let root = root_with_profile(dir.path(), id, &profile);
        let root_s = root.display().to_string();
        let (code, stdout, stderr) = harness_with(
            dir.path(),
            &["outdated", "--agent", id, "--root", &root_s],
            &[
                ("PATH", bin.as_os_str()),
                ("HOME", dir.path().join("home").as_os_str()),
                // no version manager of this machine is looked in
                ("PYENV_ROOT", none),
                ("MISE_DATA_DIR", none),
                ("ASDF_DATA_DIR", none),
                ("UV_PYTHON_INSTALL_DIR", none),
                ("XDG_DATA_HOME", none),
            ],
        );
        assert_eq!(code, want_code, "{python:?}: {stdout}{stderr}");
        assert!(
            stdout.contains(want) || stderr.contains(want),
            "{python:?}: {stdout}{stderr}"
        );
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(record_runtime: a_detached_daemon_an_agent_starts_does_not_outlive_record, install_names_the_python_range_and_the_interpreters_it_tried, a_node_runtime_is_installed_pinned_first_on_path_and_in_the_header, pypi_overrides_side_packages_and_a_missing_console_script, #[cfg(unix)] outdated_asks_pypi_with_the_python_of_the_profiles_runtime)
}
