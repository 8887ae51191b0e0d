//! Running `update`'s recording jobs, `--jobs N` at a time. Each job is a
//! child `acp-harness record --mode new` for one (agent, version, scenario),
//! so each gets its own loopback-only network namespace, model server and
//! stub-mcp (the recorder makes them per run) and its own process group,
//! ended by us at the job timeout. The child's output goes to a log file per
//! job; the terminal shows a progress display instead (one line per running
//! job with its elapsed time, one per finished job with its outcome).

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use process_group::{Pipes, RunError};

use super::plan::Job;
use crate::corpus::recording::{self, Outcome};

/// Where and how jobs run.
pub struct Runner {
    /// The harness executable (`record` runs as a child of it).
    pub exe: PathBuf,
    /// Repository root: profiles/, scenarios/, recordings/.
    pub root: PathBuf,
    /// One log per job, and recordings that ended badly, kept for inspection.
    pub log_dir: PathBuf,
    /// How long one recording may take before its process group is ended.
    pub timeout: Duration,
    /// How many recordings run at once.
    pub parallel: usize,
    /// Pass `--allow-network` to `record` (no namespaces on this machine).
    pub allow_network: bool,
}

/// What became of one job.
#[derive(Debug, Clone)]
pub enum JobResult {
    /// A recording that ended `ok`, in the corpus.
    Recorded(PathBuf),
    /// No usable recording, and why.
    Unrunnable(String),
}

/// A finished job.
#[derive(Debug, Clone)]
pub struct Done {
    pub job: Job,
    pub result: JobResult,
    pub elapsed: Duration,
    pub log: PathBuf,
}

impl Runner {
    /// Runs every job and returns them finished, in job order.
    pub fn run(&self, jobs: Vec<Job>) -> Vec<Done> {
        let total = jobs.len();
        let queue = Mutex::new(VecDeque::from(jobs));
        let done = Mutex::new(Vec::with_capacity(total));
        let multi = MultiProgress::new();
        let overall = multi.add(ProgressBar::new(total as u64));
        overall.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} recordings  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        let spinner = ProgressStyle::with_template("  {spinner} {prefix}  {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let started = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..self.parallel.max(1) {
                scope.spawn(|| {
                    loop {
                        let Some(job) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                            return;
                        };
                        let bar = multi.insert_before(&overall, ProgressBar::new_spinner());
                        bar.set_style(spinner.clone());
                        bar.set_prefix(job.to_string());
                        bar.enable_steady_tick(Duration::from_millis(250));
                        if multi.is_hidden() {
                            eprintln!("[update] recording {job}");
                        }
                        let finished = self.run_one(job);
                        bar.finish_and_clear();
                        let line = describe(&finished);
                        if multi.is_hidden() {
                            eprintln!("{line}");
                        } else {
                            let _ = multi.println(line);
                        }
                        overall.inc(1);
                        if let Ok(mut d) = done.lock() {
                            d.push(finished);
                        }
                    }
                });
            }
        });
        overall.finish_and_clear();
        let mut out = done.into_inner().unwrap_or_default();
        out.sort_by(|a, b| a.job.cmp(&b.job));
        let secs = started.elapsed().as_secs_f64();
        let recorded = out
            .iter()
            .filter(|d| matches!(d.result, JobResult::Recorded(_)))
            .count();
        eprintln!(
            "[update] {} recording job(s) in {secs:.1} s, {} at a time: {recorded} recorded, {:.1} recordings per minute; logs in {}",
            out.len(),
            self.parallel.max(1),
            recorded as f64 * 60.0 / secs.max(0.001),
            self.log_dir.display()
        );
        out
    }

    fn run_one(&self, job: Job) -> Done {
        let started = Instant::now();
        let log = self.log_dir.join(format!(
            "{}-{}-{}.log",
            job.agent, job.version, job.scenario
        ));
        let result = match self.record(&job, &log) {
            Ok(()) => self.collect(&job),
            Err(why) => {
                // what the recording's trailer says comes first; a recording
                // it left behind is not usable either way
                let what = match self.target(&job).is_file().then(|| self.collect(&job)) {
                    Some(JobResult::Unrunnable(trailer)) => format!("{trailer} ({why})"),
                    _ => why,
                };
                self.set_aside(&job);
                JobResult::Unrunnable(what)
            }
        };
        Done {
            job,
            result,
            elapsed: started.elapsed(),
            log,
        }
    }

    /// Runs the child to its end (or the timeout); `Err` says why it failed.
    fn record(&self, job: &Job, log: &Path) -> Result<(), String> {
        let file = File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
        let err = file
            .try_clone()
            .map_err(|e| format!("creating {}: {e}", log.display()))?;
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.arg("record")
            .arg("--agent")
            .arg(format!("{}@{}", job.agent, job.version))
            .arg("--scenario")
            .arg(&job.scenario)
            .arg("--mode")
            .arg("new")
            .arg("--root")
            .arg(&self.root)
            .arg("--out")
            .arg(self.root.join("recordings"))
            .args(self.allow_network.then_some("--allow-network"))
            .stdout(file)
            .stderr(err);
        // its own process group, SIGTERM then SIGKILL to it at the timeout
        match process_group::output_blocking(cmd, self.timeout, Pipes::AsGiven) {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!(
                "record exited with {}: {}",
                out.status,
                last_words(log)
            )),
            Err(RunError::Timeout(_)) => Err(format!(
                "record took longer than {} s; its process group was ended",
                self.timeout.as_secs()
            )),
            Err(e) => Err(format!("{} record: {e}", self.exe.display())),
        }
    }

    fn target(&self, job: &Job) -> PathBuf {
        crate::capture::record::recording_path(
            &self.root.join("recordings"),
            &job.agent,
            &job.version,
            &job.scenario,
        )
    }

    /// A successful child: the recording must be there and have ended `ok`.
    fn collect(&self, job: &Job) -> JobResult {
        let path = self.target(job);
        if !path.is_file() {
            return JobResult::Unrunnable(format!(
                "record succeeded but wrote no {} (did the agent report another version?)",
                path.display()
            ));
        }
        match recording::read_trailer(&path) {
            Ok(trailer) => match trailer {
                Some(t) if t.outcome == Outcome::Ok => JobResult::Recorded(path),
                Some(t) => {
                    self.set_aside(job);
                    JobResult::Unrunnable(format!(
                        "the recording ended {}{}",
                        t.outcome.as_str(),
                        if t.notes.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", t.notes.join("; "))
                        }
                    ))
                }
                None => {
                    self.set_aside(job);
                    JobResult::Unrunnable("the recording has no trailer (truncated)".into())
                }
            },
            Err(e) => {
                self.set_aside(job);
                JobResult::Unrunnable(format!("unreadable recording: {e}"))
            }
        }
    }

    /// Moves a recording that cannot be used out of the corpus into the log
    /// directory (kept for inspection, never judged or committed).
    fn set_aside(&self, job: &Job) {
        let path = self.target(job);
        if path.is_file() {
            let kept = self.log_dir.join(format!(
                "{}-{}-{}.jsonl",
                job.agent, job.version, job.scenario
            ));
            if std::fs::rename(&path, &kept).is_err() && std::fs::copy(&path, &kept).is_ok() {
                let _ = std::fs::remove_file(&path);
            }
        }
        // an interrupted child keeps its run beside the path: it goes to the log too
        let interrupted = recording::interrupted_path(&path);
        if interrupted.is_file() {
            let kept = self.log_dir.join(format!(
                "{}-{}-{}.jsonl.interrupted",
                job.agent, job.version, job.scenario
            ));
            if std::fs::rename(&interrupted, &kept).is_err() {
                let _ = std::fs::remove_file(&interrupted);
            }
        }
        if let Some(dir) = path.parent() {
            // an empty version directory would count as a recorded version
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The line of a job log that says why it failed: the harness's own error
/// line when there is one, else the last line.
fn last_words(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("acp-harness: "))
        .or(lines.last())
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| "(no output)".into())
}

/// One finished-job line: outcome, job, elapsed, and the reason when unrunnable.
pub fn describe(done: &Done) -> String {
    match &done.result {
        JobResult::Recorded(_) => format!(
            "  recorded    {}  {:.1} s",
            done.job,
            done.elapsed.as_secs_f64()
        ),
        JobResult::Unrunnable(why) => format!(
            "  unrunnable  {}  {:.1} s: {why}",
            done.job,
            done.elapsed.as_secs_f64()
        ),
    }
}
