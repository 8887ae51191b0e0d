//! The corpus: where recordings, scenarios, goldens and the contract live
//! under a root, and what every judgement reads from them (scenarios, the
//! stream-json contract with its waivers, each agent's known limitations),
//! loaded once and shared between clones and workers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::golden::{self, RecordingId};
use super::known_limitations::{self, Limitation, Limitations};
use crate::corpus::recording::Header;
use crate::corpus::regular_file;
use crate::corpus::scenario::{self, Scenario};
use crate::judging::contract::{self, Contract};

/// A corpus: where recordings, scenarios and goldens live, and what was
/// loaded from it so far. Clones share what was loaded.
#[derive(Clone)]
pub struct Corpus {
    /// The repository root (`contracts/` lives here).
    pub root: PathBuf,
    pub recordings: PathBuf,
    pub scenarios: PathBuf,
    pub snapshots: PathBuf,
    /// Judged cases keep every bridge line for the panel
    /// ([`super::Replayed::panel_lines`]): only `contract` reads them.
    pub keep_panel_lines: bool,
    loaded: Arc<Loaded>,
}

/// Everything read once per corpus. Errors are kept as text so every
/// recording that needs the broken piece names it.
#[derive(Default)]
struct Loaded {
    scenarios: Mutex<HashMap<String, Result<Arc<Scenario>, String>>>,
    contract: OnceLock<Result<Option<Arc<Contract>>, String>>,
    limitations: Mutex<HashMap<PathBuf, Result<Arc<Limitations>, String>>>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("root", &self.root)
            .field("recordings", &self.recordings)
            .field("scenarios", &self.scenarios)
            .field("snapshots", &self.snapshots)
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// The repository layout: `recordings/`, `scenarios/`, `tests/snapshots/`
    /// and `contracts/` under `root`.
    pub fn at(root: &Path) -> Corpus {
        Corpus {
            root: root.to_path_buf(),
            recordings: root.join("recordings"),
            scenarios: root.join("scenarios"),
            snapshots: root.join(golden::SNAPSHOT_DIR),
            keep_panel_lines: false,
            loaded: Arc::default(),
        }
    }

    /// The same corpus, its judged cases keeping every bridge line for the
    /// panel (a replay of a million lines then holds them all).
    pub fn keeping_panel_lines(mut self) -> Corpus {
        self.keep_panel_lines = true;
        self
    }

    /// The same corpus with its recordings (and their known limitations) in `dir`.
    pub fn with_recordings(mut self, dir: &Path) -> Corpus {
        self.recordings = dir.to_path_buf();
        self.loaded = Arc::default();
        self
    }

    /// The same corpus with its goldens in `dir`.
    pub fn with_snapshots(mut self, dir: &Path) -> Corpus {
        self.snapshots = dir.to_path_buf();
        self
    }

    /// Every `*.jsonl` under the recordings directory, sorted by path,
    /// once every recording and golden is known to be a regular file.
    pub fn recordings(&self) -> Result<Vec<PathBuf>, CheckError> {
        refuse_irregular_goldens(&self.snapshots)?;
        list_recordings(&self.recordings)
    }

    /// The scenario called `name`, loaded once.
    pub fn scenario(&self, name: &str) -> Result<Arc<Scenario>, String> {
        let mut cache = self
            .loaded
            .scenarios
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache
            .entry(name.to_string())
            .or_insert_with(|| {
                scenario::find(&self.scenarios, name)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The stream-json contract with its waivers (none when not derived), loaded once.
    pub fn contract(&self) -> Result<Option<Arc<Contract>>, String> {
        self.loaded
            .contract
            .get_or_init(|| {
                contract::for_root(&self.root)
                    .map(|c| c.map(Arc::new))
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The known-limitations entry covering `id`, reading its agent's file once.
    pub fn limitation(&self, id: &RecordingId) -> Result<Option<Limitation>, String> {
        let file = self
            .recordings
            .join(&id.agent)
            .join(known_limitations::FILE_NAME);
        let loaded = {
            let mut cache = self
                .loaded
                .limitations
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            cache
                .entry(file.clone())
                .or_insert_with(|| {
                    known_limitations::load(&file)
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })
                .clone()
        }?;
        loaded
            .find(&id.version, &id.scenario)
            .map(|l| l.cloned())
            .map_err(|e| e.to_string())
    }

    /// The id of a recording: from its path under the corpus, else its header.
    pub fn id_of(&self, path: &Path, header: Option<&Header>) -> RecordingId {
        if let Some(id) = RecordingId::from_path(&self.recordings, path) {
            return id;
        }
        match header {
            Some(h) => RecordingId {
                agent: h.agent.clone(),
                version: h.agent_version().unwrap_or("unknown").to_string(),
                scenario: h.scenario.clone(),
            },
            None => RecordingId {
                agent: "?".into(),
                version: "?".into(),
                scenario: path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("?")
                    .to_string(),
            },
        }
    }
}

/// Every `*.jsonl` under `dir` (or `dir` itself if it is a file), sorted.
pub fn list_recordings(dir: &Path) -> Result<Vec<PathBuf>, CheckError> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    if !dir.exists() {
        return Err(CheckError::NoSuchPath(dir.to_path_buf()));
    }
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| CheckError::Walk {
            dir: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        if entry.file_type().is_dir() || entry.path().extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        // a symlink, FIFO or device named like a recording is refused, not skipped
        regular_file::check(entry.path()).map_err(|e| CheckError::NotRegular(e.to_string()))?;
        if !contract::is_reference_recording(entry.path()) {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

/// Refuses the corpus when a golden under `snapshots` is no regular file
/// (a symlink out of the repository, a FIFO, a device).
pub fn refuse_irregular_goldens(snapshots: &Path) -> Result<(), CheckError> {
    let Ok(entries) = std::fs::read_dir(snapshots) else {
        return Ok(());
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
    {
        regular_file::check(path).map_err(|e| CheckError::NotRegular(e.to_string()))?;
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{}: no such file or directory", .0.display())]
    NoSuchPath(PathBuf),
    #[error("{}: cannot list recordings: {message}", dir.display())]
    Walk { dir: PathBuf, message: String },
    #[error("{0}")]
    NotRegular(String),
}
