//! Known agent limitations (`recordings/<agent>/KNOWN_LIMITATIONS.toml`):
//! versions of an agent that cannot meet some expectations of a scenario for
//! a reason on the agent's side (not the bridge's). Such a recording is kept
//! in the corpus and judged **passing only while exactly the listed
//! expectations fail**: any other failure still fails, and a listed
//! expectation that now passes fails the trial so the entry gets removed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::judging::expect::Failure;

/// The file, per agent directory under `recordings/`.
pub const FILE_NAME: &str = "KNOWN_LIMITATIONS.toml";

/// One entry: which versions, which scenario, which expectations fail, why.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limitation {
    /// A semver range (`">=0.1.21, <0.24.0"`).
    pub versions: String,
    pub scenario: String,
    /// The failing expectations as the scenario describes them (what a
    /// failure prints between `[` and `]`); empty when the entry names only
    /// `contract` differences.
    pub failing: Vec<String>,
    pub reason: String,
    /// What in the recordings shows it.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The ACP revision the entry holds for (`2`: only recordings of a
    /// `<version>+acp2` directory; `1`: only the others); absent: both.
    #[serde(default)]
    pub protocol: Option<u64>,
    /// Keys of `contract compare` differences (`tool-result-structure`, ...)
    /// that follow from the same agent behaviour, so the comparison counts
    /// them as the agent's rather than the bridge's.
    #[serde(default)]
    pub contract: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    limitation: Vec<Limitation>,
}

#[derive(Debug, thiserror::Error)]
pub enum LimitationsError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a known-limitations file: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{}: entry {index} (scenario {scenario}): versions {range:?} is not a semver range: {message}", path.display())]
    BadRange {
        path: PathBuf,
        index: usize,
        scenario: String,
        range: String,
        message: String,
    },
    #[error("{}: entry {index} (scenario {scenario}) lists no failing expectation and no contract difference", path.display())]
    NothingListed {
        path: PathBuf,
        index: usize,
        scenario: String,
    },
    #[error("recording version {version:?} is not a semver version, so {} cannot cover it: {message}", path.display())]
    BadVersion {
        path: PathBuf,
        version: String,
        message: String,
    },
}

/// One agent's file, read and validated once: every entry's range parsed.
#[derive(Debug, Clone, Default)]
pub struct Limitations {
    file: PathBuf,
    entries: Vec<(semver::VersionReq, Limitation)>,
}

/// Reads and validates `file` (no file: no entries). An unreadable or
/// malformed file is an error naming the file and the entry.
pub fn load(file: &Path) -> Result<Limitations, LimitationsError> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Limitations {
                file: file.to_path_buf(),
                entries: Vec::new(),
            });
        }
        Err(source) => {
            return Err(LimitationsError::Read {
                path: file.to_path_buf(),
                source,
            });
        }
    };
    let parsed: File = toml::from_str(&text).map_err(|e| LimitationsError::Parse {
        path: file.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut entries = Vec::new();
    for (i, l) in parsed.limitation.into_iter().enumerate() {
        let range =
            semver::VersionReq::parse(&l.versions).map_err(|e| LimitationsError::BadRange {
                path: file.to_path_buf(),
                index: i + 1,
                scenario: l.scenario.clone(),
                range: l.versions.clone(),
                message: e.to_string(),
            })?;
        // an entry says what the agent's behaviour breaks: expectations,
        // or only contract differences when every expectation still holds
        if l.failing.is_empty() && l.contract.is_empty() {
            return Err(LimitationsError::NothingListed {
                path: file.to_path_buf(),
                index: i + 1,
                scenario: l.scenario,
            });
        }
        entries.push((range, l));
    }
    Ok(Limitations {
        file: file.to_path_buf(),
        entries,
    })
}

impl Limitations {
    /// The entry covering `version` x `scenario`, if any.
    pub fn find(
        &self,
        version: &str,
        scenario: &str,
    ) -> Result<Option<&Limitation>, LimitationsError> {
        let mut for_scenario = self
            .entries
            .iter()
            .filter(|(_, l)| l.scenario == scenario)
            .peekable();
        if for_scenario.peek().is_none() {
            return Ok(None);
        }
        let v = semver::Version::parse(version).map_err(|e| LimitationsError::BadVersion {
            path: self.file.clone(),
            version: version.to_string(),
            message: e.to_string(),
        })?;
        // the directory's build metadata names the revision (`+acp2`)
        let revision = if v.build.as_str() == crate::corpus::recording::REVISION_2_BUILD {
            2
        } else {
            1
        };
        Ok(for_scenario
            .find(|(range, l)| range.matches(&v) && l.protocol.is_none_or(|p| p == revision))
            .map(|(_, l)| l))
    }
}

/// The entry covering `version` x `scenario` in `file` (no file: none).
pub fn find(
    file: &Path,
    version: &str,
    scenario: &str,
) -> Result<Option<Limitation>, LimitationsError> {
    Ok(load(file)?.find(version, scenario)?.cloned())
}

/// How a covered recording's failures compare with its entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Listed, but passing now: the entry no longer holds.
    pub now_passing: Vec<String>,
    /// Failing, but not listed: a real failure.
    pub unlisted: Vec<String>,
}

impl Comparison {
    /// Exactly the listed expectations failed.
    pub fn holds(&self) -> bool {
        self.now_passing.is_empty() && self.unlisted.is_empty()
    }
}

/// A failure's expectation as an entry lists it (without the brackets).
pub fn expectation_name(failure: &Failure) -> &str {
    let e = failure.expectation.trim();
    e.strip_prefix('[')
        .and_then(|e| e.strip_suffix(']'))
        .unwrap_or(e)
}

/// Compares the failures of a covered recording with its entry.
pub fn compare(limitation: &Limitation, failures: &[Failure]) -> Comparison {
    compare_names(limitation, failures.iter().map(expectation_name))
}

/// [`compare`] over failure names: expectations as [`expectation_name`]
/// gives them and broken invariants as `invariant <rule>` (an agent whose
/// own frames cannot meet an invariant lists it so).
pub fn compare_names<'a>(
    limitation: &Limitation,
    failing: impl Iterator<Item = &'a str>,
) -> Comparison {
    let listed: BTreeSet<&str> = limitation.failing.iter().map(|s| s.trim()).collect();
    let failing: BTreeSet<&str> = failing.collect();
    Comparison {
        now_passing: listed.difference(&failing).map(|s| s.to_string()).collect(),
        unlisted: failing.difference(&listed).map(|s| s.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(expectation: &str) -> Failure {
        Failure {
            line: 1,
            expectation: format!("[{expectation}]"),
            why: String::new(),
            expected: String::new(),
            came: String::new(),
            items: Vec::new(),
        }
    }

    fn entry(failing: &[&str]) -> Limitation {
        Limitation {
            versions: ">=0.1.21, <0.24.0".into(),
            scenario: "s".into(),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            reason: "r".into(),
            evidence: Vec::new(),
            protocol: None,
            contract: Vec::new(),
        }
    }

    #[test]
    fn exactly_the_listed_failures_hold() {
        let c = compare(&entry(&["a", "b"]), &[failure("b"), failure("a")]);
        assert!(c.holds(), "{c:?}");
    }

    #[test]
    fn a_listed_expectation_that_passes_means_the_entry_no_longer_holds() {
        let c = compare(&entry(&["a", "b"]), &[failure("a")]);
        assert_eq!(c.now_passing, ["b"]);
        assert!(!c.holds());
    }

    #[test]
    fn a_broken_invariant_is_listed_by_its_name_like_an_expectation() {
        let names = ["a", "invariant names are identifiers"];
        let c = compare_names(
            &entry(&["invariant names are identifiers", "a"]),
            names.into_iter(),
        );
        assert!(c.holds(), "{c:?}");
        let c = compare_names(&entry(&["a"]), names.into_iter());
        assert_eq!(c.unlisted, ["invariant names are identifiers"]);
    }

    #[test]
    fn an_unlisted_failure_is_still_a_failure() {
        let c = compare(&entry(&["a"]), &[failure("a"), failure("c")]);
        assert_eq!(c.unlisted, ["c"]);
        assert!(!c.holds());
    }

    #[test]
    fn entries_match_by_semver_range_and_scenario_and_bad_files_name_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        assert_eq!(
            find(&file, "0.2.2", "s").unwrap(),
            None,
            "no file: no entry"
        );
        std::fs::write(
            &file,
            "[[limitation]]\nversions = \">=0.1.21, <0.24.0\"\nscenario = \"s\"\nfailing = [\"a\"]\nreason = \"r\"\n",
        )
        .unwrap();
        assert!(find(&file, "0.22.4", "s").unwrap().is_some());
        assert!(find(&file, "0.1.21", "s").unwrap().is_some());
        assert_eq!(find(&file, "0.24.5", "s").unwrap(), None);
        assert_eq!(find(&file, "0.2.2", "other").unwrap(), None);
        std::fs::write(&file, "[[limitation]]\nversions = \"not a range\"\nscenario = \"s\"\nfailing = [\"a\"]\nreason = \"r\"\n")
            .unwrap();
        let e = find(&file, "0.2.2", "s").unwrap_err().to_string();
        assert!(e.contains("entry 1") && e.contains("not a range"), "{e}");
        let contract_only =
            "[[limitation]]\nversions = \"*\"\nscenario = \"s\"\nfailing = []\nreason = \"r\"\n";
        std::fs::write(&file, contract_only).unwrap();
        let e = find(&file, "0.2.2", "s").unwrap_err().to_string();
        assert!(
            e.contains("lists no failing expectation and no contract difference"),
            "{e}"
        );
        std::fs::write(
            &file,
            format!("{contract_only}contract = [\"tool-result-structure\"]\n"),
        )
        .unwrap();
        let l = find(&file, "0.2.2", "s").unwrap().unwrap();
        assert!(
            compare(&l, &[]).holds(),
            "nothing listed, nothing failing: it holds"
        );
        std::fs::write(&file, "[[limitation]]\nversion = \"1\"\n").unwrap();
        let e = find(&file, "0.2.2", "s").unwrap_err().to_string();
        assert!(e.contains(FILE_NAME), "{e}");
    }
}

#[cfg(test)]
mod revision_tests {
    use super::*;

    #[test]
    fn an_entry_for_one_revision_covers_only_that_revisions_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        std::fs::write(
            &file,
            "[[limitation]]\nversions = \"=2.6.0\"\nscenario = \"s\"\nfailing = [\"a\"]\nreason = \"r\"\nprotocol = 2\n",
        )
        .unwrap();
        // (version directory, covered)
        for (version, covered) in [
            ("2.6.0+acp2", true),
            ("2.6.0", false),
            ("2.6.1+acp2", false),
        ] {
            assert_eq!(
                find(&file, version, "s").unwrap().is_some(),
                covered,
                "{version}"
            );
        }
    }
}
