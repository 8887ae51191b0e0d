//! Replay speed: judging each committed recording (read, replay through the
//! bridge, render, golden compare, expectations) and the whole corpus, on one
//! core and on every core (`check`'s `judge_each`). Each recording must stay
//! in milliseconds so `cargo test` and `check` take seconds.
//!
//! The scale part grows a corpus synthetically: every committed recording
//! below 128 KiB (the screenshot recordings would make x100 gigabytes of
//! temp files), copied x1, x10 and x100 into a temp dir under relabelled
//! versions (`<version>+synN`), each marked `"synthetic": true` in its
//! header, with its golden copied under the new name, and judged as `check`
//! judges (every core, cases lightened). Linear time means ms per recording
//! stays flat; bounded memory means the peak RSS does not grow with the copies.
//!
//! The phase table times the judge's steps one by one (read, replay,
//! render, expectations, contract, golden) on one core: where a recording's
//! milliseconds go.
//!
//! Run: `cargo bench -p acp-harness --bench replay` (criterion, per
//! recording), or with `BENCH_REPORT=1` (the quick mode `.ci/benchmarks`
//! uses: the paired table as markdown; `REPLAY_BENCH_SCALES=1,10` measures
//! only those scales).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acp_harness::judging::judge::golden::{self, RecordingId};
use acp_harness::judging::judge::{Case, Corpus};
use criterion::Criterion;

#[allow(dead_code)] // each bench uses a part of it
mod measure;
use measure::load;

/// The allocator the `acp-harness` binary runs `check` with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Base recordings for the scaled corpus are below this size.
const SCALE_BASE_MAX_BYTES: u64 = 128 * 1024;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn corpus() -> (Corpus, Vec<PathBuf>) {
    let corpus = Corpus::at(root());
    let mut paths = if corpus.recordings.exists() {
        corpus.recordings().unwrap_or_default()
    } else {
        Vec::new()
    };
    if paths.is_empty() {
        // An empty corpus still measures the pipeline, on the synthetic fixture.
        paths.push(root().join("tests/fixtures/synthetic-text-only.jsonl"));
    }
    (corpus, paths)
}

fn criterion_bench(c: &mut Criterion, corpus: &Corpus, paths: &[PathBuf]) {
    let mut group = c.benchmark_group("replay");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for path in paths {
        let name = corpus.id_of(path, None).trial_name();
        group.bench_function(name, |b| b.iter(|| corpus.judge(path)));
    }
    group.bench_function(format!("whole corpus ({} recordings)", paths.len()), |b| {
        b.iter(|| {
            paths
                .iter()
                .map(|p| corpus.judge(p))
                .filter(|c| c.passed())
                .count()
        })
    });
    group.finish();
}

/// Wall time of judging `paths` with `jobs` workers as `check` does, and how
/// many passed.
fn judge_corpus(corpus: &Corpus, paths: &[PathBuf], jobs: usize) -> (Duration, usize) {
    let start = Instant::now();
    let passed = corpus
        .judge_each(paths, jobs, Case::lightened)
        .iter()
        .filter(|c| c.passed())
        .count();
    (start.elapsed(), passed)
}

/// Peak resident set size of this process so far, in MiB.
fn peak_rss_mib() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Copies the small recordings `copies` times into `dir` (recordings and
/// goldens), relabelled and marked synthetic; returns the corpus over them.
fn synthetic_corpus(corpus: &Corpus, base: &[PathBuf], copies: usize, dir: &Path) -> Corpus {
    let recordings = dir.join("recordings");
    let snapshots = dir.join("snapshots");
    std::fs::create_dir_all(&snapshots).expect("temp dir");
    for path in base {
        let id = corpus.id_of(path, None);
        let text = std::fs::read_to_string(path).expect("a committed recording");
        let (header, rest) = text.split_once('\n').unwrap_or((&text, ""));
        let mut header: serde_json::Value = serde_json::from_str(header).expect("a header");
        header["synthetic"] = serde_json::Value::Bool(true);
        let text = format!("{header}\n{rest}");
        let golden = std::fs::read(id.snapshot_path(&corpus.snapshots)).ok();
        let limitations = path
            .parent()
            .and_then(Path::parent)
            .map(|agent| agent.join("KNOWN_LIMITATIONS.toml"))
            .filter(|f| f.exists());
        for k in 0..copies {
            let copy = RecordingId {
                agent: id.agent.clone(),
                version: format!("{}+syn{k}", id.version),
                scenario: id.scenario.clone(),
            };
            let agent_dir = recordings.join(&copy.agent);
            let file = agent_dir
                .join(&copy.version)
                .join(format!("{}.jsonl", copy.scenario));
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("temp dir");
            std::fs::write(&file, &text).expect("temp file");
            if let Some(g) = &golden {
                // the golden as blessing would write it for the copy: its
                // first line names the file and says synthetic
                let label = |id: &RecordingId| {
                    format!(
                        "# replay of {}/{}/{}.jsonl (",
                        id.agent, id.version, id.scenario
                    )
                };
                let g = String::from_utf8_lossy(g).replacen(&label(&id), &label(&copy), 1);
                let g = match g.split_once(", synthetic: false, ") {
                    Some((a, b)) => format!("{a}, synthetic: true, {b}"),
                    None => g,
                };
                std::fs::write(copy.snapshot_path(&snapshots), g).expect("temp file");
            }
            if let Some(l) = &limitations {
                let _ = std::fs::copy(l, agent_dir.join("KNOWN_LIMITATIONS.toml"));
            }
        }
    }
    Corpus::at(&corpus.root)
        .with_recordings(&recordings)
        .with_snapshots(&snapshots)
}

/// Seconds each phase of the judge takes over `paths` on one core, judged
/// phase by phase as `Corpus::judge` does: read, replay, expectations,
/// contract, render (normalise), golden (read and compare).
fn phases(corpus: &Corpus, paths: &[PathBuf]) -> [(&'static str, Duration); 6] {
    let mut t = [Duration::ZERO; 6];
    let mut lap = |i: usize, start: &mut Instant| {
        let now = Instant::now();
        t[i] += now - *start;
        *start = now;
    };
    let contract = corpus.contract().ok().flatten();
    for path in paths {
        let mut at = Instant::now();
        let acp = acp_harness::corpus::recording::Leg::Acp;
        let Ok(recording) = acp_harness::corpus::recording::read(path) else {
            continue;
        };
        lap(0, &mut at);
        let Ok(scenario) = corpus.scenario(&recording.header.scenario) else {
            continue;
        };
        if !recording.leg(acp).any(|e| e.proc == 1) {
            continue;
        }
        let mut replay = acp_harness::judging::replay::replayer::replay(&recording, &scenario);
        lap(1, &mut at);
        std::hint::black_box(acp_harness::judging::expect::evaluate(
            &scenario.expect,
            &replay.panel_values,
        ));
        lap(3, &mut at);
        if let Some(c) = &contract {
            std::hint::black_box(c.check(&replay.panel_values));
        }
        lap(4, &mut at);
        // last, as in the judge: the render takes the parsed lines
        let transcript = acp_harness::judging::judge::render(path, &recording, &mut replay);
        lap(2, &mut at);
        let id = corpus.id_of(path, Some(&recording.header));
        let golden = golden::read(&id.snapshot_path(&corpus.snapshots))
            .ok()
            .flatten();
        std::hint::black_box(golden::compare(golden.as_deref(), &transcript));
        lap(5, &mut at);
    }
    let names = [
        "read the recording",
        "replay through the bridge",
        "render the transcript (normalise)",
        "expectations",
        "stream-json contract",
        "golden: read and compare",
    ];
    std::array::from_fn(|i| (names[i], t[i]))
}

/// Seconds the floors under the judge take over `paths` on one core: the
/// least any replay of this corpus does. Reading every file from the page
/// cache; that plus one serde_json pass over every line (scanning only, and
/// building a `Value`); and one `Value` parse + serialise of every agent
/// frame, the work the translate bench holds the bridge against.
fn floors(paths: &[PathBuf]) -> [(&'static str, Duration); 4] {
    use acp_harness::corpus::recording::{Dir, Leg};
    let mut t = [Duration::ZERO; 4];
    for path in paths {
        let start = Instant::now();
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let read = start.elapsed();
        t[0] += read;
        let start = Instant::now();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let _ = std::hint::black_box(serde_json::from_slice::<serde::de::IgnoredAny>(line));
        }
        t[1] += read + start.elapsed();
        let start = Instant::now();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let _ = std::hint::black_box(serde_json::from_slice::<serde_json::Value>(line));
        }
        t[2] += read + start.elapsed();
        drop(bytes);
        let Ok(recording) = acp_harness::corpus::recording::read(path) else {
            continue;
        };
        let start = Instant::now();
        for e in recording.leg(Leg::Acp).filter(|e| e.dir == Dir::FromAgent) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&e.raw) {
                std::hint::black_box(serde_json::to_string(&v).ok());
            }
        }
        t[3] += start.elapsed();
    }
    let names = [
        "floor: read every file (page cache)",
        "floor: read + scan every line once (serde_json, IgnoredAny)",
        "floor: read + parse every line once (serde_json::Value)",
        "floor: Value parse + serialise of every agent frame (the bridge's floor)",
    ];
    std::array::from_fn(|i| (names[i], t[i]))
}

fn report(corpus: &Corpus, paths: &[PathBuf]) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Warm the shared loads (scenarios, contract) and the page cache.
    judge_corpus(corpus, paths, 0);
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        one.push(judge_corpus(corpus, paths, 1).0);
        all.push(judge_corpus(corpus, paths, 0).0);
    }
    let (one, all) = (median(one), median(all));
    let per = |d: Duration, n: usize| d.as_secs_f64() * 1e3 / n as f64;
    println!("<!-- report:begin -->");
    println!("## Replay (`check`'s judge)\n");
    println!(
        "| corpus | recordings | MiB | 1 core: s | ms/recording | {cores} cores: s | ms/recording (wall) | speed-up |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mib = |ps: &[PathBuf]| {
        ps.iter()
            .filter_map(|p| p.metadata().ok())
            .map(|m| m.len())
            .sum::<u64>() as f64
            / (1024.0 * 1024.0)
    };
    let passed = judge_corpus(corpus, paths, 0).1;
    println!(
        "| committed | {} ({passed} passed) | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2}x |",
        paths.len(),
        mib(paths),
        one.as_secs_f64(),
        per(one, paths.len()),
        all.as_secs_f64(),
        per(all, paths.len()),
        one.as_secs_f64() / all.as_secs_f64()
    );
    println!(
        "\nMedians of 3 runs each, interleaved; load average after: {}.\n",
        load()
    );
    let runs: Vec<_> = (0..3).map(|_| phases(corpus, paths)).collect();
    println!("### Where the time goes (committed corpus, one core)\n");
    println!("| phase | ms/recording | share |");
    println!("|---|---:|---:|");
    let medians: Vec<(&str, Duration)> = (0..6)
        .map(|i| (runs[0][i].0, median(runs.iter().map(|r| r[i].1).collect())))
        .collect();
    let total: Duration = medians.iter().map(|(_, d)| *d).sum();
    for (name, d) in &medians {
        println!(
            "| {name} | {:.3} | {:.0} % |",
            per(*d, paths.len()),
            100.0 * d.as_secs_f64() / total.as_secs_f64()
        );
    }
    println!(
        "| sum | {:.3} | |\n\nMedians of 3 runs, each phase timed per recording.\n",
        per(total, paths.len())
    );
    let runs: Vec<_> = (0..3).map(|_| floors(paths)).collect();
    println!("### The floor: reading at the speed of reading (committed corpus, one core)\n");
    println!("| floor | ms/recording |");
    println!("|---|---:|");
    for i in 0..runs[0].len() {
        let d = median(runs.iter().map(|r| r[i].1).collect());
        println!("| {} | {:.3} |", runs[0][i].0, per(d, paths.len()));
    }
    println!("\nMedians of 3 runs; load average after: {}.\n", load());

    let base: Vec<PathBuf> = paths
        .iter()
        .filter(|p| p.metadata().is_ok_and(|m| m.len() < SCALE_BASE_MAX_BYTES))
        .cloned()
        .collect();
    println!(
        "### Scaled corpus (synthetic copies of the {} recordings below {} KiB)\n",
        base.len(),
        SCALE_BASE_MAX_BYTES / 1024
    );
    println!(
        "| scale | recordings | passed | MiB | {cores} cores: s | ms/recording (wall) | 1 core: ms/recording | peak RSS MiB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    // REPLAY_BENCH_SCALES="1,10" measures fewer scales (an empty list: none)
    let scales: Vec<usize> = std::env::var("REPLAY_BENCH_SCALES")
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|_| vec![1, 10, 100]);
    for copies in scales {
        let dir = tempfile::tempdir().expect("a temp dir");
        let scaled = synthetic_corpus(corpus, &base, copies, dir.path());
        let scaled_paths = scaled.recordings().expect("the synthetic corpus");
        judge_corpus(
            &scaled,
            &scaled_paths[..scaled_paths.len().min(base.len())],
            0,
        );
        let (wall, passed) = judge_corpus(&scaled, &scaled_paths, 0);
        // One core on the first x1 share only: the per-recording cost, not the wall.
        let share = &scaled_paths[..scaled_paths.len().min(base.len())];
        let (single, _) = judge_corpus(&scaled, share, 1);
        println!(
            "| x{copies} | {} | {passed} | {:.1} | {:.2} | {:.3} | {:.3} | {:.0} |",
            scaled_paths.len(),
            mib(&scaled_paths),
            wall.as_secs_f64(),
            per(wall, scaled_paths.len()),
            per(single, share.len()),
            peak_rss_mib()
        );
    }
    println!(
        "\nPeak RSS is the process's high-water mark so far (it includes the committed corpus runs above); \
         load average after: {}.",
        load()
    );
    println!("<!-- report:end -->");
}

fn main() {
    let (corpus, paths) = corpus();
    if std::env::var_os("BENCH_REPORT").is_some() {
        report(&corpus, &paths);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    criterion_bench(&mut c, &corpus, &paths);
    c.final_summary();
}
