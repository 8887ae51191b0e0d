//! `record --mode`: what happens to a scenario whose recording already
//! exists, as vcr's record modes. `once` (the default) records only when
//! none of the asked recordings exists and never overwrites one; `new`
//! records the missing ones and leaves the others alone; `all` re-records
//! everything and says what changed (the `--check` comparison); `stale`
//! re-records only the recordings made from an older scenario file (what
//! `check` counts as stale) and records nothing new.

use std::path::{Path, PathBuf};

/// The record mode chosen on the command line.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Record only when no asked recording exists yet; never overwrite.
    #[default]
    Once,
    /// Record the scenarios that have no recording; keep the others.
    New,
    /// Re-record every scenario and report what changed.
    All,
    /// Re-record the recordings made from an older scenario file, and
    /// report what changed; keep the others, record no missing one.
    Stale,
}

/// What to do with one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// No recording yet: record it.
    Record,
    /// A recording exists and the mode keeps it.
    Keep,
    /// No recording exists and the mode records nothing new (`stale`).
    Skip,
    /// A recording exists and the mode replaces it; compare afterwards.
    Rerecord,
}

/// `once` found recordings it must not overwrite.
#[derive(Debug, thiserror::Error)]
#[error(
    "record --mode once never overwrites a recording, and these exist: {}; \
     use --mode new to record only the missing scenarios, or --mode all to re-record and see what changed",
    existing.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
)]
pub struct Refusal {
    pub existing: Vec<PathBuf>,
}

/// The action per target path, in order, or `once`'s refusal; `stale`
/// says whether an existing recording was made from an older scenario file.
pub fn plan(
    mode: Mode,
    targets: &[PathBuf],
    exists: impl Fn(&Path) -> bool,
    stale: impl Fn(&Path) -> bool,
) -> Result<Vec<Action>, Refusal> {
    let present: Vec<bool> = targets.iter().map(|p| exists(p)).collect();
    if mode == Mode::Once && present.iter().any(|e| *e) {
        return Err(Refusal {
            existing: targets
                .iter()
                .zip(&present)
                .filter(|(_, e)| **e)
                .map(|(p, _)| p.clone())
                .collect(),
        });
    }
    Ok(targets
        .iter()
        .zip(present)
        .map(|(path, e)| match (e, mode) {
            (false, Mode::Stale) => Action::Skip,
            (false, _) => Action::Record,
            (true, Mode::All) => Action::Rerecord,
            (true, Mode::Stale) if stale(path) => Action::Rerecord,
            (true, _) => Action::Keep,
        })
        .collect())
}

impl Action {
    /// Whether the run leaves this scenario alone.
    pub fn is_left_alone(self) -> bool {
        matches!(self, Action::Keep | Action::Skip)
    }

    /// Why `mode` leaves this scenario alone, for the progress line; `None`
    /// when it records.
    pub fn left_alone_because(self, mode: Mode) -> Option<&'static str> {
        match (self, mode) {
            (Action::Keep, Mode::Stale) => {
                Some("recorded from the current scenario file, kept (--mode stale)")
            }
            (Action::Keep, _) => Some("recorded already, kept (--mode new)"),
            (Action::Skip, _) => {
                Some("not recorded yet, left out (--mode stale records nothing new)")
            }
            (Action::Record | Action::Rerecord, _) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row: mode, which of three targets exist (`x`, or `s` for one
    /// made from an older scenario file), the expected actions (`R`
    /// record, `K` keep, `S` skip, `A` re-record) or `refuse`.
    #[test]
    fn each_mode_treats_existing_recordings_as_vcr_does() {
        let cases = [
            (Mode::Once, "---", "RRR"),
            (Mode::Once, "-x-", "refuse"),
            (Mode::Once, "xxx", "refuse"),
            (Mode::New, "---", "RRR"),
            (Mode::New, "-x-", "RKR"),
            (Mode::New, "xxx", "KKK"),
            (Mode::All, "---", "RRR"),
            (Mode::All, "-x-", "RAR"),
            (Mode::All, "xxx", "AAA"),
            (Mode::All, "-s-", "RAR"),
            (Mode::New, "xs-", "KKR"),
            (Mode::Stale, "---", "SSS"),
            (Mode::Stale, "xs-", "KAS"),
            (Mode::Stale, "sss", "AAA"),
        ];
        let targets: Vec<PathBuf> = ["a", "b", "c"].iter().map(PathBuf::from).collect();
        for (mode, present, want) in cases {
            let mark = |p: &Path| {
                let i = targets.iter().position(|t| t == p).unwrap();
                present.as_bytes()[i]
            };
            let exists = |p: &Path| mark(p) != b'-';
            let stale = |p: &Path| mark(p) == b's';
            let got = match plan(mode, &targets, exists, stale) {
                Err(refusal) => {
                    // the refusal names exactly the existing ones
                    let named: String = targets
                        .iter()
                        .map(|t| {
                            if refusal.existing.contains(t) {
                                'x'
                            } else {
                                '-'
                            }
                        })
                        .collect();
                    assert_eq!(named, present.replace('s', "x"), "{mode:?}");
                    "refuse".to_string()
                }
                Ok(actions) => actions
                    .iter()
                    .map(|a| match a {
                        Action::Record => 'R',
                        Action::Keep => 'K',
                        Action::Skip => 'S',
                        Action::Rerecord => 'A',
                    })
                    .collect(),
            };
            assert_eq!(got, want, "{mode:?} with {present}");
        }
    }
}
