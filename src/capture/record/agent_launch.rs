//! What a run starts besides the agent, and the agent's launch, the same for
//! `record` and `sandbox`: stub-mcp serving the scenario's unity-ops tools,
//! and the profile's launch resolved with the run's values.

use anyhow::Context;

use crate::corpus::profile::{Launch, Profile, Recipe, Vars};
use crate::corpus::scenario::Scenario;
use crate::packages::install::Installed;

/// stub-mcp for one run: the scenario's tools, the run's workspace, and a
/// fresh bearer token (returned with it).
pub(crate) async fn serve_unity_ops(
    scenario: &Scenario,
    workspace: &str,
) -> anyhow::Result<(stub_mcp::Running, String)> {
    let token = uuid::Uuid::new_v4().simple().to_string();
    let mcp = stub_mcp::serve(stub_mcp::Config {
        token: Some(token.clone()),
        tools: Some(scenario.tools.clone()),
        workspace: workspace.to_string(),
        ..stub_mcp::Config::default()
    })
    .await
    .context("starting stub-mcp")?;
    Ok((mcp, token))
}

/// The run's values a profile's launch is written in.
pub(crate) struct RunValues<'a> {
    pub installed: &'a Installed,
    pub home: &'a std::path::Path,
    pub workspace: &'a str,
    pub model_url: String,
    pub mcp_url: &'a str,
    pub mcp_token: &'a str,
    pub version: &'a semver::Version,
}

impl RunValues<'_> {
    pub(crate) fn vars(&self) -> Vars {
        Vars {
            home: self.home.display().to_string(),
            workspace: self.workspace.to_string(),
            package_dir: self
                .installed
                .main
                .clone()
                .unwrap_or_default()
                .display()
                .to_string(),
            packages: self.installed.package_dirs(),
            model_url: self.model_url.clone(),
            mcp_url: self.mcp_url.to_string(),
            mcp_token: self.mcp_token.to_string(),
            api_key: super::DUMMY_API_KEY.to_string(),
            version: self.version.to_string(),
        }
    }
}

/// The agent's launch: `launch` (the profile's, resolved) with the
/// runtime's and side packages' programs first on its PATH, and its files
/// written into the run's home and workspace.
pub(crate) fn prepared(mut launch: Launch, installed: &Installed) -> anyhow::Result<Launch> {
    let base_path = match launch.env.get("PATH") {
        Some(p) => p.clone(),
        None => std::env::var("PATH").unwrap_or_default(),
    };
    if let Some(path) = installed.path_with_prefix(&base_path) {
        launch.env.insert("PATH".into(), path);
    }
    for (path, content) in &launch.files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(launch)
}

/// The profile's launch resolved with the run's values.
pub(crate) fn resolved(
    profile: &Profile,
    recipe: &Recipe,
    values: &RunValues<'_>,
) -> anyhow::Result<Launch> {
    prepared(
        Launch::resolve(profile, recipe, &values.vars())?,
        values.installed,
    )
}
