//! The fresh directory one agent run lives in: a temp dir holding the
//! agent's home and its workspace, with the profile's and the scenario's
//! workspace fixtures laid out. Removed when dropped.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::corpus::profile::Profile;
use crate::corpus::scenario::Scenario;

pub(crate) struct RunDir {
    /// Holds the directory; dropping it removes everything.
    pub dir: tempfile::TempDir,
    /// The directory's canonical path (agents report paths resolved).
    pub path: PathBuf,
    pub home: PathBuf,
    pub workspace: PathBuf,
}

impl RunDir {
    pub fn create(profile: &Profile, scenario: &Scenario) -> Result<RunDir> {
        let dir = tempfile::Builder::new()
            .prefix("acp-harness-run-")
            .tempdir()
            .context("creating the run's temp dir")?;
        let path = dir.path().canonicalize()?;
        let home = path.join("home");
        let workspace = path.join("workspace");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&workspace)?;
        crate::corpus::workspace_fixture::lay_out(&workspace, &profile.workspace)
            .context("the profile's workspace fixtures")?;
        crate::corpus::workspace_fixture::lay_out(&workspace, &scenario.workspace)
            .context("the scenario's workspace fixtures")?;
        Ok(RunDir {
            dir,
            path,
            home,
            workspace,
        })
    }
}
