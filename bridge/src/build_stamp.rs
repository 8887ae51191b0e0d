//! Which build this is: the version, the commit it was built from (and
//! whether the tree had uncommitted changes), the target triple, and the
//! ACP revisions and schema it speaks. `--version`, the tap header and every
//! recording header carry it, so a bug report names the build that made it.
//!
//! The commit and target come from the package's build script (`build.rs`,
//! via vergen); a build outside a git checkout has no commit.

use serde_json::{Value, json};

use crate::acp::revision::Revision;

/// The ACP protocol revisions the bridge and the recorder speak, by number.
pub const ACP_PROTOCOLS: [u64; Revision::ALL.len()] = {
    let mut numbers = [0; Revision::ALL.len()];
    let mut i = 0;
    while i < numbers.len() {
        numbers[i] = Revision::ALL[i].number();
        i += 1;
    }
    numbers
};

/// The ACP schema the frames are written against: the harness vendors it
/// (`schema/acp-v1/VERSION`), and a harness test holds the two equal.
pub const ACP_SCHEMA: &str = "agent-client-protocol-schema 1.20.0";

/// What vergen writes in place of a value it could not read (no git).
const UNKNOWN: &str = "VERGEN_IDEMPOTENT_OUTPUT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildStamp {
    /// The binary's name: `acp-bridge`, `acp-harness`.
    pub name: &'static str,
    pub version: &'static str,
    /// The full commit hash; `None` when built outside a git checkout.
    pub commit: Option<&'static str>,
    /// Tracked files differed from the commit when the package was built.
    pub dirty: bool,
    pub target: &'static str,
}

/// The bridge's own build.
pub const BRIDGE: BuildStamp = BuildStamp::new(
    "acp-bridge",
    env!("CARGO_PKG_VERSION"),
    env!("VERGEN_GIT_SHA"),
    env!("VERGEN_GIT_DIRTY"),
    env!("VERGEN_CARGO_TARGET_TRIPLE"),
);

impl BuildStamp {
    /// Builds a stamp from what a build script emitted (`VERGEN_GIT_SHA`,
    /// `VERGEN_GIT_DIRTY`, `VERGEN_CARGO_TARGET_TRIPLE`).
    pub const fn new(
        name: &'static str,
        version: &'static str,
        sha: &'static str,
        dirty: &'static str,
        target: &'static str,
    ) -> BuildStamp {
        let known = !sha.is_empty() && !const_eq(sha, UNKNOWN);
        BuildStamp {
            name,
            version,
            commit: if known { Some(sha) } else { None },
            dirty: known && const_eq(dirty, "true"),
            target,
        }
    }

    /// What `--version` prints. The first line is `<version> (<name>)`, the
    /// shape the Agent SDKs read a version from; the rest says which build.
    pub fn version_text(&self) -> String {
        let commit = match self.commit {
            Some(c) if self.dirty => format!("{c} (with uncommitted changes)"),
            Some(c) => c.to_string(),
            None => "unknown (not built from a git checkout)".to_string(),
        };
        let protocols: Vec<String> = ACP_PROTOCOLS.iter().map(u64::to_string).collect();
        format!(
            "{} ({})\ncommit: {commit}\ntarget: {}\nacp protocol: {}\nacp schema: {ACP_SCHEMA}\n",
            self.version,
            self.name,
            self.target,
            protocols.join(", "),
        )
    }

    /// `--version` without its first line: commit, target, ACP revisions.
    pub fn details(&self) -> String {
        let text = self.version_text();
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    }

    /// The header field `build`: the same facts as `--version`, as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "version": self.version,
            "commit": self.commit,
            "dirty": self.dirty,
            "target": self.target,
            "acp_protocols": ACP_PROTOCOLS,
            "acp_schema": ACP_SCHEMA,
        })
    }
}

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_text_starts_with_the_line_the_sdks_parse() {
        let s = BuildStamp::new(
            "acp-bridge",
            "1.2.3",
            "abc",
            "false",
            "x86_64-unknown-linux-gnu",
        );
        let text = s.version_text();
        assert_eq!(text.lines().next(), Some("1.2.3 (acp-bridge)"));
        assert!(text.contains("\ncommit: abc\n"), "{text}");
        assert!(
            text.contains("\ntarget: x86_64-unknown-linux-gnu\n"),
            "{text}"
        );
        assert!(text.contains("\nacp protocol: 1, 2\n"), "{text}");
    }

    #[test]
    fn a_build_without_git_says_so_and_is_never_dirty() {
        for sha in ["", UNKNOWN] {
            let s = BuildStamp::new("acp-bridge", "1.2.3", sha, "true", "t");
            assert_eq!(s.commit, None);
            assert!(!s.dirty);
            assert!(s.version_text().contains("commit: unknown"));
            assert_eq!(s.to_json()["commit"], Value::Null);
        }
    }

    #[test]
    fn a_dirty_tree_is_named() {
        let s = BuildStamp::new("acp-harness", "1.2.3", "abc", "true", "t");
        assert!(
            s.version_text()
                .contains("commit: abc (with uncommitted changes)")
        );
        assert_eq!(s.to_json()["dirty"], true);
    }
}
