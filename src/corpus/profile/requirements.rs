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
    /// System commands the agent runs inside the recording's namespace
    /// (a sandbox helper such as `bwrap`), each with the package that
    /// provides it: checked on PATH before anything is installed.
    #[serde(default)]
    pub commands: Vec<SystemCommand>,
}

/// One system command a profile needs: `{ command = "bwrap", package = "bubblewrap" }`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SystemCommand {
    pub command: String,
    /// The package that provides it (Debian's name), named in the error.
    pub package: String,
}

impl SystemCommand {
    /// Where the command is on `path` (a `PATH` value), if it is there as
    /// an executable file.
    pub fn find_on(&self, path: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
        std::env::split_paths(path)
            .map(|dir| dir.join(&self.command))
            .find(|p| is_executable(p))
    }
}

fn is_executable(p: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

impl Requirements {
    /// These requirements with `base`'s filling the keys these leave out.
    pub fn over(&self, base: &Requirements) -> Requirements {
        let mut commands = base.commands.clone();
        commands.extend(
            self.commands
                .iter()
                .filter(|c| !base.commands.iter().any(|b| b.command == c.command))
                .cloned(),
        );
        Requirements {
            node: self.node.clone().or_else(|| base.node.clone()),
            python: self.python.clone().or_else(|| base.python.clone()),
            commands,
        }
    }

    /// Each requirement that is not a semver range, or a command that is
    /// no bare command name, as (key, value, why).
    pub fn invalid(&self) -> Vec<(&'static str, String, String)> {
        let ranges = [("node", &self.node), ("python", &self.python)]
            .into_iter()
            .filter_map(|(key, value)| {
                let value = value.as_ref()?;
                parse_req(value)
                    .err()
                    .map(|why| (key, value.clone(), why.to_string()))
            });
        let commands = self.commands.iter().filter_map(|c| {
            let bare = !c.command.is_empty()
                && !c.command.contains(['/', '\\'])
                && !c.package.trim().is_empty();
            (!bare).then(|| {
                (
                    "commands",
                    c.command.clone(),
                    "a command is a bare name found on PATH, with the package that provides it"
                        .into(),
                )
            })
        });
        ranges.chain(commands).collect()
    }

    /// The first needed command not on `path`: the error names it and the
    /// package to install, before anything is fetched.
    pub fn missing_command(&self, path: &std::ffi::OsStr) -> Option<String> {
        self.commands.iter().find(|c| c.find_on(path).is_none()).map(|c| {
            format!(
                "the agent needs the system command `{}` (it runs it inside the recording's namespace), \
                 and it is not on PATH: install the package `{}` (Debian: `apt-get install {}`)",
                c.command, c.package, c.package
            )
        })
    }
}

pub fn parse_req(text: &str) -> Result<semver::VersionReq, semver::Error> {
    semver::VersionReq::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A needed command is looked up on PATH before anything is installed;
    /// a missing one is an error naming it and its package, and a command
    /// that is a path or lacks its package is no valid requirement.
    #[test]
    fn a_system_command_a_profile_needs_is_found_on_path_or_named_with_its_package() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("bwrap");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let needs: Requirements =
            toml::from_str(r#"commands = [{ command = "bwrap", package = "bubblewrap" }]"#)
                .unwrap();
        assert_eq!(needs.missing_command(dir.path().as_os_str()), None);
        let empty = tempfile::tempdir().unwrap();
        let missing = needs.missing_command(empty.path().as_os_str()).unwrap();
        assert!(
            missing.contains("`bwrap`") && missing.contains("apt-get install bubblewrap"),
            "{missing}"
        );
        let bad: Requirements = toml::from_str(
            r#"commands = [{ command = "/usr/bin/bwrap", package = "bubblewrap" }, { command = "x", package = "" }]"#,
        )
        .unwrap();
        assert_eq!(bad.invalid().len(), 2);
        // a recipe's commands join the profile's
        let base: Requirements =
            toml::from_str(r#"commands = [{ command = "git", package = "git" }]"#).unwrap();
        let both = needs.over(&base);
        assert_eq!(
            both.commands
                .iter()
                .map(|c| c.command.as_str())
                .collect::<Vec<_>>(),
            ["git", "bwrap"]
        );
    }
}
