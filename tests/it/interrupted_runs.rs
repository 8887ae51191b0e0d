//! Runs of the harness killed at random points (SIGKILL, SIGTERM, SIGINT):
//! a committed file stays byte-identical (or absent) unless the run
//! completed, nothing at a final path claims `ok` unless its run completed,
//! and an interrupted `record` exits non-zero. The points come from a
//! seeded RNG (`ACP_KILL_SEED`, printed) and start from a condition of the
//! run (a stderr line, the temp file existing), never a fixed sleep.
//!
//! The agent is `acp-harness fake-agent` serving a committed recording, so
//! no npm install is needed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use acp_harness::corpus::recording::{self, Outcome};

/// Any wait of this test (a run's exit, its processes gone) is bounded by this.
const LIMIT: Duration = Duration::from_secs(30);
const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGKILL, "SIGKILL"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGINT, "SIGINT"),
];
const BIN: &str = env!("CARGO_BIN_EXE_acp-harness");

/// xorshift64*, seeded from `ACP_KILL_SEED` (default 26), printed for a rerun.
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let seed = std::env::var("ACP_KILL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(26u64);
        eprintln!("ACP_KILL_SEED={seed}");
        Rng(seed.max(1))
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let started = Instant::now();
    while !cond() {
        assert!(started.elapsed() < LIMIT, "waited {LIMIT:?} for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether any process's command line mentions `marker` (this run's temp root).
fn processes_mention(marker: &str) -> bool {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        pid != me
            && std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
    })
}

/// How a killed run ended.
struct Ended {
    /// It exited on its own before the signal was sent.
    before_signal: bool,
    code: Option<i32>,
    stderr: String,
}

/// Sends `signal` to `child` `delay_ms` after `start` holds, then waits for
/// it and for every process it started (all mention `marker`) to be gone.
fn kill_at(
    mut child: Child,
    signal: i32,
    start: impl FnMut() -> bool,
    delay_ms: u64,
    marker: Option<&str>,
    stderr: &Path,
) -> Ended {
    let mut start = start;
    let mut exited = None;
    wait_for("the kill point", || {
        exited = child.try_wait().unwrap();
        exited.is_some() || start()
    });
    let until = Instant::now() + Duration::from_millis(delay_ms);
    while exited.is_none() && Instant::now() < until {
        exited = child.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let before_signal = exited.is_some();
    if !before_signal {
        // SAFETY: kill(2) of our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
    }
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    if let Some(marker) = marker {
        wait_for("the run's processes to end", || !processes_mention(marker));
    }
    Ended {
        before_signal,
        code: status.code(),
        stderr: std::fs::read_to_string(stderr).unwrap_or_default(),
    }
}

/// A root with one profile, `served`, whose agent is `fake-agent` serving
/// codex-acp 0.16.0's text-only recording, and the text-only scenario.
fn served_root() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("acp-harness-kill-")
        .tempdir()
        .unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = dir.path();
    std::fs::create_dir_all(root.join("profiles")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::copy(
        repo.join("scenarios/text-only.toml"),
        root.join("scenarios/text-only.toml"),
    )
    .unwrap();
    let served = root.join("served.jsonl");
    acp_harness::corpus::recording::blobs::copy_recording(
        &repo.join("recordings/codex-acp/0.16.0/text-only.jsonl"),
        &served,
        &acp_harness::corpus::recording::blobs::BlobStore::at(root.join("blobs")),
    )
    .unwrap();
    std::fs::write(
        root.join("profiles/served.toml"),
        format!(
            r#"id = "served"
default_version = "0.16.0"
[model]
# the double answers by itself, never asking a model
asks_model = false
flavour = "responses"
tool_naming = {{ form = "namespace", namespace = "mcp__unity_ops" }}
[ready]
after = "session"
settle_ms = 400
timeout_ms = 10000
handshake_timeout_ms = 10000
[stop]
eof_grace_ms = 300
term_grace_ms = 300
[[recipe]]
versions = "*"
program = "{BIN}"
args = ["fake-agent", "{}"]
"#,
            served.display()
        ),
    )
    .unwrap();
    dir
}

fn spawn(root: &Path, args: &[&str], stderr: &Path) -> Child {
    Command::new(BIN)
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

fn partial_exists(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".partial"))
    })
}

fn outcome_of(path: &Path) -> Option<Outcome> {
    recording::read(path).ok()?.trailer.map(|t| t.outcome)
}

/// The recording at `path` is `previous` unless the run committed a
/// complete one (said so on stderr) that ended `ok`; the corpus sees no
/// other recording beside it; a kept interrupted run never claims `ok`.
fn assert_recording_safe(path: &Path, previous: Option<&[u8]>, ended: &Ended, what: &str) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    let committed = ended
        .stderr
        .lines()
        .any(|l| l.starts_with("[record] ") && l.ends_with(&format!("{name}: ok")));
    eprintln!(
        "{what}: exit {:?}, ended before the signal: {}, committed: {committed}",
        ended.code, ended.before_signal
    );
    let now = std::fs::read(path).ok();
    if committed {
        assert_eq!(
            outcome_of(path),
            Some(Outcome::Ok),
            "{what}: committed run is ok"
        );
    } else {
        assert_eq!(
            now.as_deref(),
            previous,
            "{what}: the committed file changed\n{}",
            ended.stderr
        );
    }
    let dir = path.parent().unwrap();
    let listed = acp_harness::judging::judge::list_recordings(dir).unwrap_or_default();
    let expect: Vec<PathBuf> = now.iter().map(|_| path.to_path_buf()).collect();
    assert_eq!(listed, expect, "{what}: nothing else in the corpus");
    let kept = recording::interrupted_path(path);
    if kept.exists() {
        assert_ne!(
            outcome_of(&kept),
            Some(Outcome::Ok),
            "{what}: a kept interrupted run is not ok"
        );
    }
    committed
}

fn record_killed_at_any_point_leaves_the_committed_recording_whole() {
    let mut rng = Rng::seeded();
    let dir = served_root();
    let root = dir.path();
    let marker = root.display().to_string();
    let target = root.join("recordings/served/0.16.0/text-only.jsonl");
    let stderr = root.join("record.stderr");
    // every process of the run names the root (`--root`, the served recording)
    let record = [
        "record",
        "--agent",
        "served",
        "--scenario",
        "text-only",
        "--allow-network",
        "--root",
        &marker,
    ];
    let first = spawn(root, &record, &stderr);
    let ended = kill_at(first, 0, || false, 0, Some(&marker), &stderr);
    assert!(
        ended.before_signal && ended.code == Some(0),
        "{}",
        ended.stderr
    );
    assert_eq!(outcome_of(&target), Some(Outcome::Ok));

    let version_dir = target.parent().unwrap().to_path_buf();
    for (signal, name) in SIGNALS {
        for point in 0..3 {
            let previous = std::fs::read(&target).unwrap();
            let mut args = record.to_vec();
            args.extend(["--mode", "all"]);
            let child = spawn(root, &args, &stderr);
            let delay = rng.below(700);
            let what = format!(
                "record, {name} {delay} ms after {}",
                ["start", "the temp file", "the temp file"][point]
            );
            let ended = if point == 0 {
                kill_at(
                    child,
                    signal,
                    || std::fs::read_to_string(&stderr).is_ok_and(|s| s.contains("(1/1)")),
                    delay,
                    Some(&marker),
                    &stderr,
                )
            } else {
                kill_at(
                    child,
                    signal,
                    || partial_exists(&version_dir),
                    delay,
                    Some(&marker),
                    &stderr,
                )
            };
            let committed = assert_recording_safe(&target, Some(&previous), &ended, &what);
            // a signal that lands as the run completes finds nothing to interrupt
            if !ended.before_signal && !committed {
                assert_ne!(
                    ended.code,
                    Some(0),
                    "{what}: an interrupted record fails\n{}",
                    ended.stderr
                );
                if signal != libc::SIGKILL {
                    assert_eq!(ended.code, Some(2), "{what}\n{}", ended.stderr);
                }
            }
        }
    }
}

/// A root whose profile `slow-stop` serves the same recording through a
/// wrapper that, once the agent read end of file, marks `stopping` and
/// takes another second to exit: the agent's stop is a window a signal can
/// be aimed at. Returns the root and the marker's path.
fn slow_stop_root() -> (tempfile::TempDir, PathBuf) {
    let dir = served_root();
    let root = dir.path();
    let served = root.join("served.jsonl");
    let stopping = root.join("stopping");
    let script = format!(
        "'{BIN}' fake-agent '{}'; touch '{}'; sleep 1",
        served.display(),
        stopping.display()
    );
    std::fs::write(
        root.join("profiles/slow-stop.toml"),
        format!(
            r#"id = "slow-stop"
default_version = "0.16.0"
[model]
# the double answers by itself, never asking a model
asks_model = false
flavour = "responses"
tool_naming = {{ form = "namespace", namespace = "mcp__unity_ops" }}
[ready]
after = "session"
settle_ms = 100
timeout_ms = 10000
handshake_timeout_ms = 10000
[stop]
eof_grace_ms = 5000
term_grace_ms = 300
[[recipe]]
versions = "*"
program = "bash"
args = ["-c", '''{script}''']
"#
        ),
    )
    .unwrap();
    (dir, stopping)
}

/// Whether a temp file of the recording in `dir` holds `text`.
fn partial_holds(dir: &Path, text: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name().to_string_lossy().ends_with(".partial")
                && std::fs::read_to_string(e.path()).is_ok_and(|s| s.contains(text))
        })
    })
}

fn record_signalled_at_any_moment_before_its_commit_leaves_the_committed_bytes() {
    let mut rng = Rng::seeded();
    let (dir, stopping) = slow_stop_root();
    let root = dir.path();
    let marker = root.display().to_string();
    let target = root.join("recordings/slow-stop/0.16.0/text-only.jsonl");
    let version_dir = target.parent().unwrap().to_path_buf();
    let stderr = root.join("record.stderr");
    let record = [
        "record",
        "--agent",
        "slow-stop",
        "--scenario",
        "text-only",
        "--allow-network",
        "--root",
        &marker,
    ];
    let first = spawn(root, &record, &stderr);
    let ended = kill_at(first, 0, || false, 0, Some(&marker), &stderr);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    assert_eq!(outcome_of(&target), Some(Outcome::Ok));
    let previous = std::fs::read(&target).unwrap();

    let moments = [
        "the namespace's entry",
        "the run's start",
        "the temp file",
        "the last turn's end",
        "the agent's stop",
    ];
    for (signal, name) in SIGNALS {
        for (point, moment) in moments.iter().enumerate() {
            let _ = std::fs::remove_file(&stopping);
            let _ = std::fs::remove_file(recording::interrupted_path(&target));
            let mut args = record.to_vec();
            args.extend(["--mode", "all"]);
            let child = spawn(root, &args, &stderr);
            // every moment plus its delay comes before the commit: the
            // agent's stop alone lasts a second
            let delay = rng.below(300);
            let what = format!("record, {name} {delay} ms after {moment}");
            let stderr_holds =
                |text: &str| std::fs::read_to_string(&stderr).is_ok_and(|s| s.contains(text));
            let start = || match point {
                0 => stderr_holds("entering a loopback-only network namespace"),
                1 => stderr_holds("(1/1)"),
                2 => partial_exists(&version_dir),
                3 => partial_holds(&version_dir, "stopReason"),
                _ => stopping.exists(),
            };
            let ended = kill_at(child, signal, start, delay, Some(&marker), &stderr);
            eprintln!("{what}: exit {:?}", ended.code);
            assert!(!ended.before_signal, "{what}: the run outlives the signal");
            assert!(
                std::fs::read(&target).unwrap() == previous,
                "{what}: the committed recording changed\n{}",
                ended.stderr
            );
            let listed = acp_harness::judging::judge::list_recordings(&version_dir).unwrap();
            assert_eq!(
                listed,
                vec![target.clone()],
                "{what}: nothing else in the corpus"
            );
            if signal != libc::SIGKILL {
                assert_eq!(ended.code, Some(2), "{what}\n{}", ended.stderr);
                if point > 1 {
                    assert_eq!(
                        outcome_of(&recording::interrupted_path(&target)),
                        Some(Outcome::Interrupted),
                        "{what}: the run is kept beside, as interrupted\n{}",
                        ended.stderr
                    );
                }
            }
        }
    }
}

fn update_killed_at_any_point_commits_only_whole_recordings_and_resumes() {
    let mut rng = Rng::seeded();
    let dir = served_root();
    let root = dir.path();
    let marker = root.display().to_string();
    let target = root.join("recordings/served/0.16.0/text-only.jsonl");
    let stderr = root.join("update.stderr");
    let logs = root.join("logs");
    let logs_arg = logs.display().to_string();
    let update = [
        "update",
        "--agent",
        "served",
        "--version",
        "0.16.0",
        "--scenario",
        "text-only",
        "--allow-network",
        "--log-dir",
        &logs_arg,
        // passed on to each child `record`, so every process names the root
        "--root",
        &marker,
    ];
    let version_dir = target.parent().unwrap().to_path_buf();
    for (signal, name) in SIGNALS {
        for point in 0..2 {
            let _ = std::fs::remove_file(&target);
            let child = spawn(root, &update, &stderr);
            let delay = rng.below(700);
            let what = format!(
                "update, {name} {delay} ms after {}",
                ["start", "the temp file"][point]
            );
            let ended = if point == 0 {
                kill_at(child, signal, || true, delay, Some(&marker), &stderr)
            } else {
                kill_at(
                    child,
                    signal,
                    || partial_exists(&version_dir),
                    delay,
                    Some(&marker),
                    &stderr,
                )
            };
            eprintln!(
                "{what}: exit {:?}, ended before the signal: {}, recorded: {}",
                ended.code,
                ended.before_signal,
                target.exists()
            );
            if target.exists() {
                assert_eq!(
                    outcome_of(&target),
                    Some(Outcome::Ok),
                    "{what}: a recording at its path is whole and ok\n{}",
                    ended.stderr
                );
            }
            let listed = acp_harness::judging::judge::list_recordings(&root.join("recordings"))
                .unwrap_or_default();
            let expect: Vec<PathBuf> = target
                .exists()
                .then(|| target.clone())
                .into_iter()
                .collect();
            assert_eq!(listed, expect, "{what}: nothing else in the corpus");
            if !target.exists() {
                // the next run resumes: it records what is missing
                let again = spawn(root, &update, &stderr);
                let ended = kill_at(again, 0, || false, 0, Some(&marker), &stderr);
                assert_eq!(
                    outcome_of(&target),
                    Some(Outcome::Ok),
                    "{what}: the next update records it\n{}",
                    ended.stderr
                );
            }
        }
    }
}

/// Runs `args` (from the repository root) to its end; how long it took.
fn run_whole(args: &[&str], stderr: &Path) -> Duration {
    let started = Instant::now();
    let child = spawn(Path::new(env!("CARGO_MANIFEST_DIR")), args, stderr);
    let ended = kill_at(child, 0, || false, 0, None, stderr);
    assert!(
        matches!(ended.code, Some(0 | 1)),
        "{args:?} runs: {}",
        ended.stderr
    );
    started.elapsed()
}

fn drift_and_report_files_killed_at_any_point_are_the_previous_or_the_whole_file() {
    let mut rng = Rng::seeded();
    let dir = tempfile::Builder::new()
        .prefix("acp-harness-kill-")
        .tempdir()
        .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let stderr = dir.path().join("run.stderr");
    let drift = out.join("drift.md");
    let junit = out.join("check.xml");
    let html_dir = out.join("html");
    let html = html_dir.join("index.html");
    let check_dir = out.join("check-html");
    let check_html = check_dir.join("index.html");
    let [drift_s, junit_s, html_s, check_s] =
        [&drift, &junit, &html_dir, &check_dir].map(|p| p.display().to_string());
    let check = |extra: [&'static str; 2], value: &str| -> Vec<String> {
        ["check", "--filter", "grok/1.0.41/text-only", "--quiet"]
            .into_iter()
            .chain(extra.into_iter().take(1))
            .map(String::from)
            .chain([value.to_string()])
            .collect()
    };
    let drift_args: Vec<String> = [
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
    ]
    .into_iter()
    .map(String::from)
    .chain([drift_s])
    .collect();
    let report_args: Vec<String> = ["report", "--filter", "grok/1.0.41/text-only", "--out"]
        .into_iter()
        .map(String::from)
        .chain([html_s])
        .collect();
    let cases: Vec<(&str, Vec<String>, &Path)> = vec![
        ("drift --out", drift_args, &drift),
        ("report", report_args, &html),
        ("check --junit", check(["--junit", ""], &junit_s), &junit),
        (
            "check --report",
            check(["--report", ""], &check_s),
            &check_html,
        ),
    ];
    for (name, args, file) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let args = &args;
        let took = run_whole(args, &stderr);
        let whole = std::fs::read(file).unwrap();
        for (signal, sig_name) in SIGNALS {
            for _ in 0..2 {
                std::fs::write(file, "previous\n").unwrap();
                let delay = rng.below(took.as_millis() as u64 + 20);
                let what = format!("{name}, {sig_name} {delay} ms after start");
                let child = spawn(Path::new(env!("CARGO_MANIFEST_DIR")), args, &stderr);
                let ended = kill_at(child, signal, || true, delay, None, &stderr);
                let now = std::fs::read(file).unwrap();
                eprintln!(
                    "{what}: exit {:?}, ended before the signal: {}, replaced: {}",
                    ended.code,
                    ended.before_signal,
                    now != b"previous\n"
                );
                assert!(
                    now == b"previous\n" || now == whole,
                    "{what}: {} is the previous or the whole file",
                    file.display()
                );
                let visible: Vec<String> = std::fs::read_dir(file.parent().unwrap())
                    .unwrap()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !(n.starts_with('.') && n.ends_with(".partial")))
                    .collect();
                assert!(
                    visible.iter().all(|n| [
                        "drift.md",
                        "check.xml",
                        "html",
                        "check-html",
                        "index.html"
                    ]
                    .contains(&n.as_str())),
                    "{what}: only finished files and hidden temp files: {visible:?}"
                );
            }
        }
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(interrupted_runs: record_killed_at_any_point_leaves_the_committed_recording_whole, record_signalled_at_any_moment_before_its_commit_leaves_the_committed_bytes, update_killed_at_any_point_commits_only_whole_recordings_and_resumes, drift_and_report_files_killed_at_any_point_are_the_previous_or_the_whole_file)
}
