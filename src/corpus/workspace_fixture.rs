//! Workspace fixtures: directories and files laid out in the session's
//! workspace before the agent starts, declared by a scenario (what it needs,
//! e.g. a Unity `Assets/` tree) or a profile (what an agent needs). Paths
//! are relative to the workspace and never leave it.

use std::path::{Component, Path};

use anyhow::Context;
use serde::Deserialize;

/// One directory (`dir = "Assets/Scripts"`) or file (`file = "a/b.txt"`,
/// `content = "..."`, default empty); parents are made as needed.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceEntry {
    #[serde(default)]
    pub dir: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
}

impl WorkspaceEntry {
    /// The entry's path, or why the entry is not one: exactly one of `dir`
    /// and `file`, `content` only with `file`, a relative path inside the
    /// workspace.
    pub fn check(&self) -> Result<&str, String> {
        let path = match (&self.dir, &self.file) {
            (Some(d), None) if self.content.is_none() => d,
            (Some(_), None) => return Err("`content` goes with `file`, not `dir`".into()),
            (None, Some(f)) => f,
            (Some(_), Some(_)) => return Err("give `dir` or `file`, not both".into()),
            (None, None) => return Err("give `dir = \"...\"` or `file = \"...\"`".into()),
        };
        let p = Path::new(path);
        if path.is_empty()
            || !p
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(format!(
                "`{path}` is not a relative path inside the workspace (no `/` at the start, no `..`)"
            ));
        }
        Ok(path)
    }
}

/// Checks every entry; the first bad one as `<what>[i]: why`.
pub fn check_all(entries: &[WorkspaceEntry], what: &str) -> Result<(), String> {
    for (i, e) in entries.iter().enumerate() {
        e.check().map_err(|why| format!("{what}[{i}]: {why}"))?;
    }
    Ok(())
}

/// Lays out `entries` under `workspace`, in order.
pub fn lay_out(workspace: &Path, entries: &[WorkspaceEntry]) -> anyhow::Result<()> {
    for e in entries {
        let rel = e.check().map_err(anyhow::Error::msg)?;
        let path = workspace.join(rel);
        if e.dir.is_some() {
            std::fs::create_dir_all(&path)
                .with_context(|| format!("workspace fixture: creating {rel}/"))?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("workspace fixture: creating the parent of {rel}"))?;
            }
            std::fs::write(&path, e.content.as_deref().unwrap_or(""))
                .with_context(|| format!("workspace fixture: writing {rel}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: Option<&str>, file: Option<&str>, content: Option<&str>) -> WorkspaceEntry {
        WorkspaceEntry {
            dir: dir.map(Into::into),
            file: file.map(Into::into),
            content: content.map(Into::into),
        }
    }

    #[test]
    fn entries_are_one_relative_dir_or_file() {
        let cases = [
            (
                entry(Some("Assets/Scripts"), None, None),
                Ok("Assets/Scripts"),
            ),
            (
                entry(None, Some("UapStaging/a.txt"), Some("x")),
                Ok("UapStaging/a.txt"),
            ),
            (entry(None, None, None), Err("give")),
            (entry(Some("a"), Some("b"), None), Err("not both")),
            (entry(Some("a"), None, Some("x")), Err("goes with `file`")),
            (entry(Some("/etc"), None, None), Err("not a relative path")),
            (
                entry(None, Some("../out.txt"), None),
                Err("not a relative path"),
            ),
            (entry(Some(""), None, None), Err("not a relative path")),
        ];
        for (e, want) in cases {
            match (e.check(), want) {
                (Ok(p), Ok(w)) => assert_eq!(p, w),
                (Err(why), Err(w)) => assert!(why.contains(w), "{e:?}: {why}"),
                (got, want) => panic!("{e:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn lay_out_makes_dirs_files_and_their_parents() {
        let dir = tempfile::tempdir().unwrap();
        lay_out(
            dir.path(),
            &[
                entry(Some("Assets/Scripts"), None, None),
                entry(None, Some("UapStaging/Editor/x.cs"), Some("// x")),
            ],
        )
        .unwrap();
        assert!(dir.path().join("Assets/Scripts").is_dir());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("UapStaging/Editor/x.cs")).unwrap(),
            "// x"
        );
    }
}
