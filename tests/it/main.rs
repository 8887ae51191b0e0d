//! The harness's integration tests, one binary: each module is one suite
//! (named for the behaviour it pins), so the workspace links this crate's
//! tests once instead of once per file. `cargo test --test it <module>::`
//! runs one suite. The replay suite (`tests/replay.rs`) and the respelled
//! corpus (`tests/respelled.rs`) keep binaries of their own: they make
//! their trials at run time (libtest-mimic).

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
mod report_browser;
mod revision_equivalence;
mod scenario_load;
mod sdk_surface;
mod tidy;
