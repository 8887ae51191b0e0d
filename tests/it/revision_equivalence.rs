//! The same session under either ACP revision: every scenario recorded under
//! both revisions of one agent version replays to the same panel output,
//! except where `contracts/revisions.toml` says why (an unjustified
//! difference fails, and so does a listed one no pair shows any more).

use std::path::Path;

use acp_harness::judging::revision_equivalence::{TABLE, compare, judge, load, pairs};

fn the_panel_sees_the_same_session_under_either_revision_or_the_table_says_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pairs = pairs(&root.join("recordings"));
    assert!(
        !pairs.is_empty(),
        "no scenario is recorded under both revisions"
    );
    let found: Vec<_> = pairs
        .into_iter()
        .map(|pair| {
            let differences = compare(&pair, &root.join("scenarios"))
                .unwrap_or_else(|e| panic!("{}: {e:#}", pair.v2.display()));
            (pair, differences)
        })
        .collect();
    if std::env::var_os("REVISIONS_DUMP").is_some() {
        for (pair, differences) in &found {
            eprintln!("{} {:?}", pair.scenario, differences);
        }
    }
    let table = load(&root.join(TABLE)).unwrap();
    let verdict = judge(&found, &table);
    assert!(
        verdict.unjustified.is_empty(),
        "differences {TABLE} does not justify:\n  {}",
        verdict.unjustified.join("\n  ")
    );
    assert!(
        verdict.stale.is_empty(),
        "listed in {TABLE} but shown by no pair (remove them):\n  {}",
        verdict.stale.join("\n  ")
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(revision_equivalence: the_panel_sees_the_same_session_under_either_revision_or_the_table_says_why)
}
