//! A profile's `[runtime]`: the runtime versions an agent needs, as data;
//! [`crate::packages::runtime`] provides them.

use serde::Deserialize;

/// Version ranges of the runtimes a recipe needs (semver ranges, e.g.
/// `>=22.19`); an absent key needs nothing of that runtime.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Node, installed from the npm registry and first on the agent's PATH.
    #[serde(default)]
    pub node: Option<String>,
    /// Python for the virtualenv of a PyPI recipe, found on the machine.
    #[serde(default)]
    pub python: Option<String>,
}

impl Requirements {
    /// These requirements with `base`'s filling the keys these leave out.
    pub fn over(&self, base: &Requirements) -> Requirements {
        Requirements {
            node: self.node.clone().or_else(|| base.node.clone()),
            python: self.python.clone().or_else(|| base.python.clone()),
        }
    }

    /// Each requirement that is not a semver range, as (key, value, why).
    pub fn invalid(&self) -> Vec<(&'static str, String, String)> {
        [("node", &self.node), ("python", &self.python)]
            .into_iter()
            .filter_map(|(key, value)| {
                let value = value.as_ref()?;
                parse_req(value)
                    .err()
                    .map(|why| (key, value.clone(), why.to_string()))
            })
            .collect()
    }
}

pub fn parse_req(text: &str) -> Result<semver::VersionReq, semver::Error> {
    semver::VersionReq::parse(text)
}
