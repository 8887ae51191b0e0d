//! The stream-json surface of the Agent SDKs: every control request
//! subtype and message type an SDK sends or reads, extracted from its
//! published type definitions and its runtime code ([`extract`]) and vendored with provenance
//! (`contracts/sdk-surface/<sdk>.json`: package, version, each file read and
//! its sha256), never the SDK itself. [`matrix`] says, per entry, what the
//! bridge does with it; [`diff`] says what a newer SDK version changed.

pub mod extract;
pub mod matrix;

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::corpus::claude_side::{Package, Reader, SurfaceSource};

/// An SDK's surface as vendored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surface {
    /// The catalogue id (`typescript-agent-sdk`).
    pub sdk: String,
    /// The package key (`pypi:` for PyPI).
    pub package: String,
    pub version: String,
    /// The files read, relative to the package directory, with their sha256.
    pub files: Vec<SourceFile>,
    /// How to make this file again.
    pub refresh: String,
    pub control_subtypes: BTreeSet<String>,
    pub message_types: BTreeSet<String>,
    /// What the runtime code sends, answers and reads
    /// ([`extract::typescript_runtime`]), whether declared or not.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub runtime_sends: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub runtime_handles: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub runtime_message_types: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub path: String,
    pub sha256: String,
}

impl Surface {
    /// Every control subtype, declared or in the runtime.
    pub fn all_control_subtypes(&self) -> BTreeSet<String> {
        let runtime = self.runtime_sends.iter().chain(&self.runtime_handles);
        self.control_subtypes
            .iter()
            .chain(runtime)
            .cloned()
            .collect()
    }

    /// Every message type, declared or in the runtime.
    pub fn all_message_types(&self) -> BTreeSet<String> {
        let runtime = self.runtime_message_types.iter();
        self.message_types.iter().chain(runtime).cloned().collect()
    }

    /// Reads a vendored surface.
    pub fn load(path: &Path) -> anyhow::Result<Surface> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the SDK surface {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not an SDK surface", path.display()))
    }

    /// The vendored file's text: pretty JSON, one entry a line, sorted.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a surface serialises");
        s.push('\n');
        s
    }

    /// Extracts the surface of `package` at `version` from its installed
    /// files under `dir` (the directory that holds `source.files`; see
    /// [`find_package_root`]).
    pub fn extract(
        package: &Package,
        source: &SurfaceSource,
        version: &semver::Version,
        dir: &Path,
    ) -> anyhow::Result<Surface> {
        let mut files = Vec::new();
        let mut texts = Vec::new();
        let mut runtime_texts = Vec::new();
        for rel in source.files.iter().chain(&source.runtime) {
            let path = dir.join(rel);
            let bytes = std::fs::read(&path)
                .with_context(|| format!("{} {version}: reading {}", package.id, path.display()))?;
            files.push(SourceFile {
                path: rel.clone(),
                sha256: crate::corpus::recording::blobs::sha256_hex(&bytes),
            });
            // the published declarations may end lines with CRLF
            let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
            if source.runtime.contains(rel) {
                runtime_texts.push(text);
            } else {
                texts.push((rel.clone(), text));
            }
        }
        let runtime = match (source.reader, runtime_texts.is_empty()) {
            (_, true) => extract::Runtime::default(),
            (Reader::Typescript, false) => {
                extract::typescript_runtime(&runtime_texts.join("\n"))
                    .map_err(|why| anyhow::anyhow!("{} {version}: {why}", package.id))?
            }
            (Reader::Python, false) => {
                anyhow::bail!(
                    "{} {version}: the python reader reads no bundle",
                    package.id
                )
            }
        };
        let found = match source.reader {
            Reader::Typescript => extract::typescript(
                &texts
                    .iter()
                    .map(|(_, t)| t.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Reader::Python => extract::python(&texts),
        }
        .map_err(|why| anyhow::anyhow!("{} {version}: {why}", package.id))?;
        Ok(Surface {
            sdk: package.id.clone(),
            package: package.package.clone(),
            version: version.to_string(),
            files,
            refresh: format!(
                "acp-harness contract surface --extract {} (installs the pinned version into the install cache, reads the files above, writes this file)",
                package.id
            ),
            control_subtypes: found.control_subtypes,
            message_types: found.message_types,
            runtime_sends: runtime.sends,
            runtime_handles: runtime.handles,
            runtime_message_types: runtime.message_types,
        })
    }
}

/// Where the files of an installed package start: npm installs it under
/// `node_modules/<name>`, PyPI into a virtualenv's `site-packages`; the
/// first directory below `install` holding `first_file`.
pub fn find_package_root(install: &Path, first_file: &str) -> Option<std::path::PathBuf> {
    walkdir::WalkDir::new(install)
        .follow_links(false)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_dir())
        .map(|e| e.into_path())
        .find(|d| d.join(first_file).is_file())
}

/// What a newer version changed in a surface.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    pub added_subtypes: Vec<String>,
    pub removed_subtypes: Vec<String>,
    pub added_messages: Vec<String>,
    pub removed_messages: Vec<String>,
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.added_subtypes.is_empty()
            && self.removed_subtypes.is_empty()
            && self.added_messages.is_empty()
            && self.removed_messages.is_empty()
    }
}

/// `new` against `old`.
pub fn diff(old: &Surface, new: &Surface) -> Diff {
    let minus = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.difference(b).cloned().collect();
    Diff {
        added_subtypes: minus(&new.all_control_subtypes(), &old.all_control_subtypes()),
        removed_subtypes: minus(&old.all_control_subtypes(), &new.all_control_subtypes()),
        added_messages: minus(&new.all_message_types(), &old.all_message_types()),
        removed_messages: minus(&old.all_message_types(), &new.all_message_types()),
    }
}
