//! The bridge's integration tests, one binary: each module is one suite
//! (named for the behaviour it pins), so the crate's tests link once instead
//! of once per file. `cargo test -p acp-bridge --test it <module>::` runs one
//! suite. The core cases (`tests/core_cases.rs`) and the fault campaign
//! (`tests/fault_campaign.rs`) keep binaries of their own: they make their
//! trials at run time (libtest-mimic), and the campaign's binary doubles as
//! its faulty agent.

#[path = "../support/mod.rs"]
mod support;

mod core_robustness;
mod e2e_bare_tool_name;
mod e2e_lifecycle;
mod e2e_tap;
mod e2e_turn;
mod e2e_unknown_dialect;
mod permission_mode;
mod recorded_tool_calls;
mod script_gate;
mod script_gate_hook;
mod tool_name;
mod tool_result;
mod tool_result_nesting;
