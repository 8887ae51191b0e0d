//! Which recordings a judging command looks at: the corpus, narrowed by
//! `--filter`, judged and in the order every output shows them.

use std::path::PathBuf;

use anyhow::Context as _;

use super::exit::UsageError;
use crate::judging::judge::{Case, Corpus};
use crate::judging::report;

/// Judges every recording under the corpus (those matching `filter`), sorted
/// by agent, version (semver) and scenario. A filter that matches nothing
/// is a usage error; an empty corpus is no error (`check` still validates
/// the profiles).
pub fn judged(corpus: &Corpus, filter: Option<&str>) -> anyhow::Result<Vec<Case>> {
    judged_with(corpus, filter, 0, |c| c)
}

/// [`judged`] with `jobs` workers (0: one per core), keeping of each case
/// what `keep` returns (`Case::lightened` when nothing reads a passed
/// case's transcript).
pub fn judged_with(
    corpus: &Corpus,
    filter: Option<&str>,
    jobs: usize,
    keep: impl Fn(Case) -> Case + Sync,
) -> anyhow::Result<Vec<Case>> {
    let paths = corpus
        .recordings()
        .context("the corpus (run from the repository root, or pass --root)")?;
    let paths: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| filter.is_none_or(|f| corpus.id_of(p, None).trial_name().contains(f)))
        .collect();
    let mut cases: Vec<Case> = corpus.judge_each(&paths, jobs, keep);
    if cases.is_empty()
        && let Some(f) = filter
    {
        return Err(UsageError(format!(
            "no recording under {} matches --filter {f:?}",
            corpus.recordings.display()
        ))
        .into());
    }
    report::sort(&mut cases);
    Ok(cases)
}
