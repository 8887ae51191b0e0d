//! The corpus with its payloads stored by content (format 2, as committed)
//! against the same corpus inline (every blob put back into its events, as
//! format 1 held it): bytes on disk, and the `acp-harness` binary's `check`
//! of each, paired and interleaved (peak RSS and wall time, medians).
//!
//! The inline copy is made in a temp dir (about 200 MB) beside links to the
//! repository's scenarios, goldens and profiles, and removed afterwards.
//!
//! Run: `cargo bench -p acp-harness --bench corpus_store` (prints the
//! table; `BENCH_REPORT=1` wraps it in report markers for `.ci/benchmarks`;
//! `CORPUS_STORE_RUNS=9` for more pairs, default 5).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use acp_harness::capture::migrate::to_inline;
use acp_harness::corpus::recording::blobs;

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs: usize = std::env::var("CORPUS_STORE_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("a temp dir");
    let inline_root = dir.path().join("inline");
    inline_copy(repo, &inline_root);

    let stored = Size::of(&repo.join("recordings"));
    let inline = Size::of(&inline_root.join("recordings"));
    let blob_store = Size::of(&repo.join("recordings").join(blobs::STORE));
    let (mut stored_runs, mut inline_runs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        stored_runs.push(check(repo));
        inline_runs.push(check(&inline_root));
    }
    let screenshots = screenshot_sizes(&repo.join("recordings"));

    let report = std::env::var_os("BENCH_REPORT").is_some();
    if report {
        println!("<!-- report:begin -->");
    }
    println!("## The corpus stored by content (`corpus_store`)");
    println!();
    println!("| corpus | files | MB on disk | `check`: wall s | `check`: peak RSS MiB |");
    println!("|---|---:|---:|---:|---:|");
    for (name, size, runs) in [
        ("inline (format 1)", &inline, &inline_runs),
        (
            "stored by content (format 2, as committed)",
            &stored,
            &stored_runs,
        ),
    ] {
        println!(
            "| {name} | {} | {:.1} | {:.3} | {:.1} |",
            size.files,
            size.bytes as f64 / 1e6,
            median(runs.iter().map(|r| r.0)),
            median(runs.iter().map(|r| r.1)),
        );
    }
    println!();
    println!(
        "The store: {} blobs, {:.1} MB. A screenshot recording ({} of them) now takes {:.0} KB at the median, {:.0} KB at most; {} of them under 100 KB. Medians of {runs} paired runs, `check --jobs 0`; both print the same table.",
        blob_store.files,
        blob_store.bytes as f64 / 1e6,
        screenshots.len(),
        median(screenshots.iter().map(|&b| b as f64)) / 1e3,
        screenshots.iter().max().copied().unwrap_or(0) as f64 / 1e3,
        screenshots.iter().filter(|&&b| b < 100_000).count(),
    );
    if report {
        println!("<!-- report:end -->");
    }
}

/// `root` with the repository's recordings inlined and every other entry a
/// link to the repository's.
fn inline_copy(repo: &Path, root: &Path) {
    std::fs::create_dir_all(root).expect("the inline root");
    for entry in std::fs::read_dir(repo).expect("the repository lists") {
        let entry = entry.expect("an entry");
        let name = entry.file_name();
        if name != "recordings" && name != "target" {
            std::os::unix::fs::symlink(entry.path(), root.join(&name)).expect("a link");
        }
    }
    let from = repo.join("recordings");
    for entry in walkdir::WalkDir::new(&from) {
        let entry = entry.expect("the corpus lists");
        let rel = entry.path().strip_prefix(&from).expect("under the corpus");
        if rel.starts_with(blobs::STORE) || !entry.file_type().is_file() {
            continue;
        }
        let to = root.join("recordings").join(rel);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("a directory");
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(entry.path()).expect("a recording reads");
            let inline = to_inline(&text, entry.path()).expect("a recording inlines");
            std::fs::write(&to, inline).expect("the inline copy writes");
        } else {
            std::fs::copy(entry.path(), &to).expect("a file copies");
        }
    }
}

struct Size {
    files: usize,
    bytes: u64,
}

impl Size {
    fn of(dir: &Path) -> Size {
        let mut size = Size { files: 0, bytes: 0 };
        for entry in walkdir::WalkDir::new(dir) {
            let entry = entry.expect("the corpus lists");
            if entry.file_type().is_file() {
                size.files += 1;
                size.bytes += entry.metadata().expect("a file's size").len();
            }
        }
        size
    }
}

fn screenshot_sizes(dir: &Path) -> Vec<u64> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "screenshot.jsonl")
        .map(|e| e.metadata().expect("a file's size").len())
        .collect()
}

/// One `check` of the corpus at `root`: (wall seconds, peak RSS MiB).
#[expect(
    clippy::zombie_processes,
    reason = "reaped by wait4, which also gives its peak memory"
)]
fn check(root: &Path) -> (f64, f64) {
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .args(["check", "--quiet", "--color", "never", "--root"])
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("acp-harness runs");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 writes only the status and the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut usage);
        usage
    };
    let took = started.elapsed().as_secs_f64();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "check of {} failed: {status}",
        root.display()
    );
    (took, usage.ru_maxrss as f64 / 1024.0)
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
