//! The CLI as data: each `tests/cmd/*.toml` runs `acp-harness` with its
//! arguments and pins the exit status, stdout and stderr (`.stdout` /
//! `.stderr` beside it): help texts, exit codes (0 good, 1 found, 2 usage or
//! tool error) and the output formats. Most cases run against the committed
//! corpus from the repository root; `golden-diff.in/` is a corpus whose
//! golden is wrong on purpose. `TRYCMD=overwrite cargo test --test it cli::`
//! rewrites the expected files; read the diff before committing. README.md's
//! `console` blocks (the first ten minutes) run the same way, so they stay true.

fn cli_cases() {
    trycmd::TestCases::new()
        .case("tests/cmd/*.toml")
        .case("README.md");
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(cli: cli_cases)
}
