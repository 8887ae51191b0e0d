//! Which recordings a judging command looks at: the corpus, narrowed by
//! `--filter`, judged and in the order every output shows them.

use anyhow::Context as _;

use super::exit::UsageError;
use crate::judge::{Case, Corpus};
use crate::verdicts;

/// Judges every recording under the corpus (those matching `filter`), sorted
/// by agent, version (semver) and scenario. A filter that matches nothing
/// is a usage error; an empty corpus is no error (`check` still validates
/// the profiles).
pub fn judged(corpus: &Corpus, filter: Option<&str>) -> anyhow::Result<Vec<Case>> {
    let paths = corpus
        .recordings()
        .context("the corpus (run from the repository root, or pass --root)")?;
    let mut cases: Vec<Case> = paths
        .iter()
        .filter(|p| filter.is_none_or(|f| corpus.id_of(p, None).trial_name().contains(f)))
        .map(|p| corpus.judge(p))
        .collect();
    if cases.is_empty()
        && let Some(f) = filter
    {
        return Err(UsageError(format!(
            "no recording under {} matches --filter {f:?}",
            corpus.recordings.display()
        ))
        .into());
    }
    verdicts::sort(&mut cases);
    Ok(cases)
}
