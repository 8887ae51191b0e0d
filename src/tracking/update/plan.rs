//! What `update` will record: one job per (agent, version, scenario) not yet
//! recorded, split into shards by a stable partition, and which recorded
//! version a new one is judged against. Pure: no disk, no network.

use std::fmt;
use std::str::FromStr;

use semver::Version;
use sha2::{Digest, Sha256};

/// One recording to make.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Job {
    pub agent: String,
    pub version: Version,
    pub scenario: String,
}

impl Job {
    /// `<agent>/<version>/<scenario>`: the key the shard partition hashes.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.agent, self.version, self.scenario)
    }
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{} {}", self.agent, self.version, self.scenario)
    }
}

/// `--shard K/N`: this worker takes shard K (1-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s:?}: expected K/N with 1 <= K <= N, e.g. 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether `job` belongs to this shard. The partition depends only on the
    /// job's own key (sha256, first 8 bytes, modulo N), so a job stays in its
    /// shard when versions or scenarios are added or removed elsewhere, and
    /// every machine computes the same split.
    pub fn takes(&self, job: &Job) -> bool {
        shard_of(&job.key(), self.count) == self.index
    }
}

/// The 1-based shard of `key` among `count`.
pub fn shard_of(key: &str, count: u32) -> u32 {
    let digest = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % u64::from(count.max(1))) as u32 + 1
}

/// Which versions to update, from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// Exactly these (recorded or not: their missing scenarios are recorded).
    Versions(Vec<Version>),
    /// The newest published version, if not recorded.
    Latest,
    /// Every published version newer than the newest recorded.
    Newer,
}

/// The versions to record for one agent. `published` are the registry's
/// (already filtered for pre-releases), `recorded` those with recordings.
pub fn versions_to_update(
    pick: &Pick,
    published: &[Version],
    recorded: &[Version],
) -> Vec<Version> {
    let newest = recorded.iter().max();
    let mut out: Vec<Version> = match pick {
        Pick::Versions(v) => v.clone(),
        Pick::Latest => published.iter().max().into_iter().cloned().collect(),
        Pick::Newer => published
            .iter()
            .filter(|v| newest.is_none_or(|n| *v > n))
            .cloned()
            .collect(),
    };
    out.sort();
    out.dedup();
    out
}

/// Jobs for `versions` x `scenarios`, less those already recorded, in
/// agent, version, scenario order, kept to `shard` when given.
pub fn jobs(
    agent: &str,
    versions: &[Version],
    scenarios: &[String],
    is_recorded: impl Fn(&Version, &str) -> bool,
    shard: Option<Shard>,
) -> Vec<Job> {
    let mut out: Vec<Job> = versions
        .iter()
        .flat_map(|v| {
            scenarios.iter().map(move |s| Job {
                agent: agent.to_string(),
                version: v.clone(),
                scenario: s.clone(),
            })
        })
        .filter(|j| !is_recorded(&j.version, &j.scenario))
        .filter(|j| shard.is_none_or(|s| s.takes(j)))
        .collect();
    out.sort();
    out
}

/// The version a new recording of `scenario` is judged against: the newest
/// older version with a golden for it, else (a version filling a gap below
/// the newest) the oldest newer one with a golden. `has_golden` answers for
/// a (version, scenario).
pub fn baseline(
    version: &Version,
    scenario: &str,
    recorded: &[Version],
    has_golden: impl Fn(&Version, &str) -> bool,
) -> Option<Version> {
    let mut older: Vec<&Version> = recorded.iter().filter(|v| *v < version).collect();
    older.sort();
    if let Some(v) = older.iter().rev().find(|v| has_golden(v, scenario)) {
        return Some((*v).clone());
    }
    let mut newer: Vec<&Version> = recorded.iter().filter(|v| *v > version).collect();
    newer.sort();
    newer.into_iter().find(|v| has_golden(v, scenario)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn vs(list: &str) -> Vec<Version> {
        list.split_whitespace().map(v).collect()
    }

    fn job(agent: &str, version: &str, scenario: &str) -> Job {
        Job {
            agent: agent.into(),
            version: v(version),
            scenario: scenario.into(),
        }
    }

    #[test]
    fn shard_specs_parse_one_based_and_bad_ones_name_the_form() {
        for (spec, want) in [
            ("1/1", Some((1, 1))),
            ("2/4", Some((2, 4))),
            (" 3 / 3 ", Some((3, 3))),
            ("0/4", None),
            ("5/4", None),
            ("1/0", None),
            ("1", None),
            ("a/b", None),
        ] {
            let got = spec.parse::<Shard>();
            match want {
                Some((index, count)) => assert_eq!(got, Ok(Shard { index, count }), "{spec}"),
                None => assert!(got.unwrap_err().contains("K/N"), "{spec}"),
            }
        }
    }

    /// The partition is a pure function of the job key: pinned values catch
    /// a change of hash or arithmetic (which would reshuffle every CI shard).
    #[test]
    fn the_shard_of_a_job_is_pinned_by_its_key() {
        for (key, count, want) in [
            ("gemini-cli/0.60.0/text-only", 1, 1),
            (
                "gemini-cli/0.60.0/text-only",
                4,
                shard_of("gemini-cli/0.60.0/text-only", 4),
            ),
            (
                "codex-acp/2.6.0/screenshot",
                3,
                shard_of("codex-acp/2.6.0/screenshot", 3),
            ),
        ] {
            assert_eq!(shard_of(key, count), want);
            assert!((1..=count).contains(&shard_of(key, count)));
        }
        let pinned: Vec<u32> = [
            "a/1.0.0/s",
            "a/1.0.1/s",
            "b/2.0.0/t",
            "gemini-cli/0.60.0/text-only",
        ]
        .iter()
        .map(|k| shard_of(k, 4))
        .collect();
        assert_eq!(pinned, PINNED_SHARDS_OF_4);
    }

    /// `shard_of(k, 4)` for the keys of the test above.
    const PINNED_SHARDS_OF_4: [u32; 4] = [2, 3, 1, 2];

    #[test]
    fn shards_cover_every_job_exactly_once_and_keep_jobs_when_others_are_added() {
        let scenarios: Vec<String> = [
            "text-only",
            "screenshot",
            "steering",
            "set-mode",
            "resume-session",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let few = vs("0.58.0 0.59.0 0.60.0");
        let more = vs("0.57.0 0.58.0 0.59.0 0.60.0 0.61.0 0.62.0");
        for count in 1..=5 {
            let all = jobs("gemini-cli", &few, &scenarios, |_, _| false, None);
            let mut union = Vec::new();
            for index in 1..=count {
                let shard = Shard { index, count };
                let part = jobs("gemini-cli", &few, &scenarios, |_, _| false, Some(shard));
                // the same shard of a larger matrix keeps every job it had
                let bigger = jobs("gemini-cli", &more, &scenarios, |_, _| false, Some(shard));
                assert!(part.iter().all(|j| bigger.contains(j)), "{index}/{count}");
                union.extend(part);
            }
            union.sort();
            assert_eq!(union, all, "shards of {count} must partition the jobs");
        }
        // with 4 shards over 15 jobs no shard is empty (the hash spreads)
        for index in 1..=4 {
            let part = jobs(
                "gemini-cli",
                &few,
                &scenarios,
                |_, _| false,
                Some(Shard { index, count: 4 }),
            );
            assert!(!part.is_empty(), "shard {index}/4 is empty");
        }
    }

    #[test]
    fn jobs_skip_what_is_recorded_and_come_in_order() {
        let scenarios = vec!["b".to_string(), "a".to_string()];
        let got = jobs(
            "x",
            &vs("1.1.0 1.0.0"),
            &scenarios,
            |ver, s| *ver == v("1.0.0") && s == "a",
            None,
        );
        assert_eq!(
            got,
            [
                job("x", "1.0.0", "b"),
                job("x", "1.1.0", "a"),
                job("x", "1.1.0", "b")
            ]
        );
    }

    #[test]
    fn picks_choose_versions_from_the_registry_answer() {
        let published = vs("0.58.0 0.59.0 0.60.0 0.61.0 0.62.0");
        let recorded = vs("0.58.0 0.61.0");
        for (pick, want) in [
            (Pick::Newer, "0.62.0"),
            (Pick::Latest, "0.62.0"),
            (Pick::Versions(vs("0.60.0 0.59.0 0.60.0")), "0.59.0 0.60.0"),
        ] {
            let got = versions_to_update(&pick, &published, &recorded);
            assert_eq!(got, vs(want), "{pick:?}");
        }
        assert_eq!(versions_to_update(&Pick::Newer, &published, &[]), published);
        assert!(versions_to_update(&Pick::Newer, &vs("0.58.0"), &recorded).is_empty());
    }

    #[test]
    fn a_new_version_is_judged_against_the_nearest_older_golden_else_the_nearest_newer() {
        let recorded = vs("0.43.0 0.58.0 0.61.0");
        // 0.58.0 has goldens for three scenarios, 0.61.0 for all, 0.43.0 for one
        let has = |v: &Version, s: &str| match v.to_string().as_str() {
            "0.43.0" => s == "text-only",
            "0.58.0" => ["screenshot", "unity-call-allowed"].contains(&s),
            "0.61.0" => true,
            _ => false,
        };
        for (version, scenario, want) in [
            ("0.60.0", "screenshot", Some("0.58.0")),
            ("0.60.0", "text-only", Some("0.43.0")),
            ("0.60.0", "steering", Some("0.61.0")),
            ("0.62.0", "steering", Some("0.61.0")),
            ("0.40.0", "steering", Some("0.61.0")),
            ("0.62.0", "nothing-has-it", None),
        ] {
            let got = baseline(&v(version), scenario, &recorded, |v, s| {
                has(v, s) && s != "nothing-has-it"
            });
            assert_eq!(
                got.map(|v| v.to_string()).as_deref(),
                want,
                "{version} {scenario}"
            );
        }
    }
}
