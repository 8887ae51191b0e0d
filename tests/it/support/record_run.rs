//! Running `acp-harness record` against test doubles, bounded in time.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A profile whose agent is a test double: `program` run with `args` (a
/// TOML array), short readiness and stop bounds, `model` as the body of its
/// `[model]` table and `before` (e.g. `[[workspace]]` entries) ahead of it.
pub fn double_profile(id: &str, before: &str, model: &str, program: &str, args: &str) -> String {
    format!(
        r#"id = "{id}"
default_version = "1.0.0"
{before}
[model]
{model}
[ready]
timeout_ms = 1500
handshake_timeout_ms = 1500
[stop]
eof_grace_ms = 300
term_grace_ms = 300
[[recipe]]
versions = "*"
program = "{program}"
args = {args}
"#
    )
}

/// Waits for `child` at most `limit`; its exit code, or None when we had to
/// kill it (a hang).
pub fn wait_bounded(mut child: Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `record --allow-network` of `scenario` for `agent` with `extra`
/// arguments into `out`, its stderr into `stderr_path`, bounded by `limit`;
/// returns its exit code (None = killed by us, i.e. a hang) and stderr.
pub fn run_record(
    root: &Path,
    out: &Path,
    agent: &str,
    scenario: &str,
    extra: &[&str],
    stderr_path: &Path,
    limit: Duration,
) -> (Option<i32>, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["record", "--agent", agent, "--scenario", scenario])
        .arg("--allow-network")
        .args(extra)
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr_path).unwrap())
        .spawn()
        .unwrap();
    let code = wait_bounded(child, limit);
    (
        code,
        std::fs::read_to_string(stderr_path).unwrap_or_default(),
    )
}
