//! The harness's integration tests, one binary: each module is one suite
//! (named for the behaviour it pins), so the crate's tests link once. The
//! harness is libtest-mimic, because the replay suite (`replay`: a trial per
//! committed recording) and the respelled corpus (`respelled`) make their
//! trials at run time: a suite's test functions are its trials, named
//! `<suite>::<function>` and listed by its `trials()` (a function it does
//! not list is dead code, which clippy refuses). `cargo test --test it
//! <suite>::` runs one suite, `-- <agent>/<version>/` one agent's replays.

/// A suite's test functions as trials named `<suite>::<function>`.
macro_rules! trials {
    ($suite:ident: $($(#[$attr:meta])* $name:ident),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut trials: Vec<libtest_mimic::Trial> = Vec::new();
        $(
            $(#[$attr])*
            trials.push(libtest_mimic::Trial::test(
                concat!(stringify!($suite), "::", stringify!($name)),
                || {
                    $name();
                    Ok(())
                },
            ));
        )*
        trials
    }};
}

/// A suite's async test functions as trials, each on a current-thread
/// tokio runtime of its own (as `#[tokio::test]` runs them).
macro_rules! async_trials {
    ($suite:ident: $($name:ident),* $(,)?) => {{
        vec![$(
            libtest_mimic::Trial::test(
                concat!(stringify!($suite), "::", stringify!($name)),
                || {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| format!("a tokio runtime: {e}"))?
                        .block_on($name());
                    Ok(())
                },
            ),
        )*]
    }};
}

mod support;

mod bisect_codex;
mod check_command;
mod cli;
mod contract;
mod corpus_model_script;
mod corpus_traces;
mod corrupt_profiles;
mod drift_codex;
mod import;
mod interrupted_runs;
mod judge_streams;
mod model_server_flavours;
mod model_server_responses;
mod record_bad_agents;
mod record_runtime;
mod record_scenario_doubles;
mod record_scrubbing;
mod recording_proves_its_run;
mod replay;
mod report_browser;
mod respelled;
mod revision_equivalence;
mod scenario_load;
mod sdk_surface;
mod tidy;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    replay::quiet_insta_panics();
    let suites = [
        bisect_codex::trials(),
        check_command::trials(),
        cli::trials(),
        contract::trials(),
        corpus_model_script::trials(),
        corpus_traces::trials(),
        corrupt_profiles::trials(),
        drift_codex::trials(),
        import::trials(),
        interrupted_runs::trials(),
        judge_streams::trials(),
        model_server_flavours::trials(),
        model_server_responses::trials(),
        record_bad_agents::trials(),
        record_runtime::trials(),
        record_scenario_doubles::trials(),
        record_scrubbing::trials(),
        recording_proves_its_run::trials(),
        report_browser::trials(),
        revision_equivalence::trials(),
        scenario_load::trials(),
        sdk_surface::trials(),
        tidy::trials(),
        replay::trials(),
        respelled::trials(&args),
    ];
    libtest_mimic::run(&args, suites.into_iter().flatten().collect()).exit();
}
