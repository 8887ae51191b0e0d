//! The Claude side of the bridge as data (`contracts/claude-side.toml`):
//! Claude Code, the reference CLI, and the Agent SDKs that speak its
//! stream-json, each with its package and pinned version. An SDK entry also
//! says which reader extracts its stream-json surface from which of its
//! published files, and where the vendored surface lives, so a new SDK
//! needs an entry here, not code.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Where the catalogue lives under the repository root.
pub const CATALOGUE_PATH: &str = "contracts/claude-side.toml";

/// The catalogue.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    #[serde(rename = "package")]
    pub packages: Vec<Package>,
}

/// One package of the Claude side.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Package {
    /// The name rows and reports use (`typescript-agent-sdk`).
    pub id: String,
    /// For people (`TypeScript Agent SDK`).
    pub title: String,
    /// `reference` (Claude Code, recorded through its profile) or `sdk`.
    pub role: Role,
    /// The package key: an npm name, or `pypi:<name>`.
    pub package: String,
    /// The version the repository pins (CI installs it; the vendored surface is its).
    #[serde(deserialize_with = "version_text")]
    pub pinned: semver::Version,
    /// The profile that records it (the reference only).
    #[serde(default)]
    pub profile: Option<String>,
    /// How its stream-json surface is extracted (SDKs only).
    #[serde(default)]
    pub surface: Option<SurfaceSource>,
    /// Packages that publish the same product (Claude Code's per-platform
    /// native packages): when one of them has versions past everything the
    /// package itself published, the package has stalled while the product
    /// goes on, and `outdated` says so.
    #[serde(default)]
    pub continues_as: Vec<String>,
}

fn version_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<semver::Version, D::Error> {
    let text = String::deserialize(d)?;
    semver::Version::parse(&text)
        .map_err(|e| serde::de::Error::custom(format!("{text:?} is not a version: {e}")))
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Reference,
    Sdk,
}

/// Where an SDK's surface comes from and where it is vendored.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SurfaceSource {
    /// Which reader understands the files.
    pub reader: Reader,
    /// The published files read, relative to the package's own directory
    /// (`sdk.d.ts`; `claude_agent_sdk/types.py`).
    pub files: Vec<String>,
    /// The runtime code read beside them (`sdk.mjs`): what the SDK really
    /// sends and reads, which its declarations may not say. The TypeScript
    /// reader reads a bundle; the Python reader's `files` are its runtime.
    #[serde(default)]
    pub runtime: Vec<String>,
    /// The vendored surface, relative to the repository root.
    pub vendored: PathBuf,
}

/// The readers of published type definitions.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Reader {
    /// TypeScript declarations (`.d.ts`): the `SDKControlRequestInner` and
    /// `StdoutMessage` unions.
    Typescript,
    /// Python sources: the control request `TypedDict`s, the requests the
    /// client sends and the message types its parser reads.
    Python,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("{path}: cannot read the Claude-side catalogue: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: package {id:?}: {why}")]
    Entry {
        path: String,
        id: String,
        why: String,
    },
}

impl Catalogue {
    /// Reads `root/contracts/claude-side.toml`.
    pub fn load(root: &Path) -> Result<Catalogue, CatalogueError> {
        let path = root.join(CATALOGUE_PATH);
        let text = std::fs::read_to_string(&path).map_err(|source| CatalogueError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Catalogue::parse(&text, &path)
    }

    /// [`Catalogue::load`], or an empty catalogue for a root that has none
    /// (a corpus of agents only).
    pub fn load_or_empty(root: &Path) -> Result<Catalogue, CatalogueError> {
        if !root.join(CATALOGUE_PATH).exists() {
            return Ok(Catalogue {
                packages: Vec::new(),
            });
        }
        Catalogue::load(root)
    }

    /// Parses a catalogue; `path` names it in errors (the TOML error says line and field).
    pub fn parse(text: &str, path: &Path) -> Result<Catalogue, CatalogueError> {
        let shown = path.display().to_string();
        let mut cat: Catalogue = toml::from_str(text).map_err(|e| CatalogueError::Parse {
            path: shown.clone(),
            message: e.to_string().trim_end().to_string(),
        })?;
        // a native build is named for the platform it runs on
        let platform = crate::corpus::profile::npm_platform();
        for p in &mut cat.packages {
            for name in std::iter::once(&mut p.package).chain(&mut p.continues_as) {
                *name = name.replace(crate::corpus::profile::NPM_PLATFORM, &platform);
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &cat.packages {
            let bad = |why: &str| CatalogueError::Entry {
                path: shown.clone(),
                id: p.id.clone(),
                why: why.to_string(),
            };
            if !seen.insert(p.id.as_str()) {
                return Err(bad("listed twice"));
            }
            match p.role {
                Role::Sdk if p.surface.is_none() => {
                    return Err(bad("an sdk needs a [package.surface] table"));
                }
                Role::Reference if p.profile.is_none() => {
                    return Err(bad("the reference needs the profile that records it"));
                }
                _ => {}
            }
            if p.surface.as_ref().is_some_and(|s| s.files.is_empty()) {
                return Err(bad("surface.files is empty"));
            }
            if p.surface
                .as_ref()
                .is_some_and(|s| s.reader == Reader::Python && !s.runtime.is_empty())
            {
                return Err(bad(
                    "surface.runtime is for a bundle (the typescript reader); list Python sources in surface.files",
                ));
            }
        }
        Ok(cat)
    }

    /// The SDKs (the entries with a surface).
    pub fn sdks(&self) -> impl Iterator<Item = (&Package, &SurfaceSource)> {
        self.packages
            .iter()
            .filter_map(|p| Some((p, p.surface.as_ref()?)))
    }

    pub fn get(&self, id: &str) -> Option<&Package> {
        self.packages.iter().find(|p| p.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bad catalogue, and the words its error must carry.
    #[test]
    fn bad_catalogues_are_refused_naming_file_package_and_field() {
        let cases = [
            (
                "[[package]]\nid = \"x\"\ntitle = \"X\"\nrole = \"sdk\"\npackage = \"x\"\npinned = \"1.0.0\"\n",
                &["cat.toml", "\"x\"", "[package.surface]"][..],
            ),
            (
                "[[package]]\nid = \"x\"\ntitle = \"X\"\nrole = \"sdk\"\npackage = \"x\"\npinned = \"one\"\n",
                &["cat.toml", "pinned"][..],
            ),
            (
                "[[package]]\nid = \"x\"\ntitle = \"X\"\nrole = \"reference\"\npackage = \"x\"\npinned = \"1.0.0\"\ncolour = 1\n",
                &["cat.toml", "colour"][..],
            ),
            (
                "[[package]]\nid = \"x\"\ntitle = \"X\"\nrole = \"reference\"\npackage = \"x\"\npinned = \"1.0.0\"\n",
                &["cat.toml", "profile"][..],
            ),
        ];
        for (text, words) in cases {
            let e = Catalogue::parse(text, Path::new("cat.toml"))
                .expect_err(text)
                .to_string();
            for w in words {
                assert!(e.contains(w), "{e:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn the_committed_catalogue_loads_with_both_sdks_and_the_reference() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cat = Catalogue::load(root).unwrap();
        assert_eq!(cat.sdks().count(), 2);
        let reference = cat
            .packages
            .iter()
            .find(|p| p.role == Role::Reference)
            .unwrap();
        // the reference's pin is its profile's default version
        let profile =
            crate::corpus::profile::Profile::find(root, reference.profile.as_deref().unwrap())
                .unwrap();
        assert_eq!(profile.default_version, reference.pinned.to_string());
        // and the profile installs it from the package tracked here
        let recipe = profile.recipe(&reference.pinned).unwrap();
        assert_eq!(recipe.package_key(), reference.package);
    }
}
