//! The HTML report in a real browser: `acp-harness report` over the
//! committed corpus, loaded by headless Chromium from the file (no server,
//! no network). The page must load without a console message (it logs
//! nothing, so any message is an error or a failed load), its script must
//! run to the end, and it must show one matrix cell and one detail section
//! per recording. `ACP_HARNESS_REPORT_PAGE=<index.html>` tests a page
//! already written (CI passes the one `check --report` wrote, so the corpus
//! is replayed once). Writes a screenshot (`ACP_HARNESS_UPDATE_SCREENSHOT=1`
//! also copies it to `docs/report.png`, the one the README shows).
//!
//! Chromium comes from Debian's `chromium` package (`.ci/run` installs it),
//! or `ACP_HARNESS_CHROMIUM=<path>`. Without it the test fails when `CI` or
//! `ACP_HARNESS_REQUIRE_BROWSER` is set (as `.ci/run` does), and otherwise
//! passes with a message saying it did not run.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(120);

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ACP_HARNESS_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Runs Chromium headless on `page` with `args`; returns (stdout, stderr).
/// Every run gets a fresh profile and ends within [`TIMEOUT`] (its process
/// group is killed otherwise).
fn run_chromium(browser: &Path, page: &Path, args: &[&str], work: &Path) -> (String, String) {
    let profile = tempfile::tempdir_in(work).unwrap();
    let out_path = work.join("chromium.stdout");
    let err_path = work.join("chromium.stderr");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            // SAFETY: killpg on the group we created for this child.
            unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
            let _ = child.wait();
            panic!("chromium did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // leftovers of the group (zygote, GPU process) end with it
    // SAFETY: killpg on the group we created for this child.
    unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(status.success(), "chromium failed ({status}):\n{stderr}");
    (stdout, stderr)
}

fn the_report_loads_in_chromium_without_console_errors_and_shows_one_cell_per_recording() {
    let Some(browser) = chromium() else {
        let msg = "chromium not found (apt-get install chromium, or set ACP_HARNESS_CHROMIUM): \
                   the HTML report was not tested in a browser";
        if std::env::var_os("CI").is_some()
            || std::env::var_os("ACP_HARNESS_REQUIRE_BROWSER").is_some()
        {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let page = match std::env::var_os("ACP_HARNESS_REPORT_PAGE") {
        Some(page) => PathBuf::from(page),
        None => {
            let out = work.join("report");
            let status = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
                .arg("report")
                .arg("--out")
                .arg(&out)
                .arg("--root")
                .arg(root)
                .status()
                .unwrap();
            assert_eq!(status.code(), Some(0), "report over the committed corpus");
            out.join("index.html")
        }
    };
    let page = page
        .canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let recordings = acp_harness::judging::judge::list_recordings(&root.join("recordings"))
        .unwrap()
        .len();

    let (dom, log) = run_chromium(&browser, &page, &["--dump-dom"], &work);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
    assert!(
        dom.contains("data-script=\"ok\""),
        "the page's script did not run to its end"
    );
    assert_eq!(
        dom.matches("<td class=\"cell ").count(),
        recordings,
        "cells"
    );
    assert_eq!(
        dom.matches("<section class=\"detail\" id=\"case-").count(),
        recordings,
        "detail sections"
    );
    // One ACP-schema row per agent matrix; claude-agent-acp 0.23.1's
    // `usage_update` with `"used": null` is a real agent-side violation.
    let agents = dom.matches("<table class=\"matrix\">").count();
    assert_eq!(
        dom.matches("<tr class=\"conformance\">").count(),
        agents,
        "conformance rows"
    );
    assert!(
        dom.contains("17 x session/update /params/update/used"),
        "claude-agent-acp 0.23.1's used: null is not shown in the conformance row"
    );

    let shot = work.join("report.png");
    run_chromium(
        &browser,
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,900",
            "--hide-scrollbars",
        ],
        &work,
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let info = decoder.read_info().unwrap().info().clone();
    assert_eq!((info.width, info.height), (1400, 900), "screenshot size");
    if std::env::var_os("ACP_HARNESS_UPDATE_SCREENSHOT").is_some() {
        std::fs::copy(&shot, root.join("docs/report.png")).unwrap();
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(report_browser: the_report_loads_in_chromium_without_console_errors_and_shows_one_cell_per_recording)
}
