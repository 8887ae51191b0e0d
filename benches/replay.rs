//! Replay speed: judging each committed recording (read, replay through the
//! bridge, render, golden compare, expectations) and the whole corpus. Each
//! recording must stay in milliseconds so `cargo test` and `check` take
//! seconds. Run: `cargo bench -p acp-harness --bench replay`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_harness::judge::Corpus;
use criterion::{Criterion, criterion_group, criterion_main};

fn corpus() -> (Corpus, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = Corpus::at(root);
    let mut paths = if corpus.recordings.exists() {
        corpus.recordings().unwrap_or_default()
    } else {
        Vec::new()
    };
    if paths.is_empty() {
        // An empty corpus still measures the pipeline, on the synthetic fixture.
        paths.push(root.join("tests/fixtures/synthetic-text-only.jsonl"));
    }
    (corpus, paths)
}

fn bench(c: &mut Criterion) {
    let (corpus, paths) = corpus();
    let mut group = c.benchmark_group("replay");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for path in &paths {
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

criterion_group!(benches, bench);
criterion_main!(benches);
