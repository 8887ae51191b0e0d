//! The bridge's integration tests, one binary: each module is one suite
//! (named for the behaviour it pins), so the crate's tests link once. The
//! harness is libtest-mimic, because the core cases (`core_cases`) make a
//! trial per case at run time: a suite's test functions are its trials,
//! named `<suite>::<function>` and listed by its `trials()` (a function it
//! does not list is dead code, which clippy refuses). `cargo test -p
//! acp-bridge --test it <suite>::` runs one suite, `-- <file>/<case>` one
//! core case. The fault campaign is one trial, and this binary is also its
//! faulty agent (`--fault-agent <plan>`).

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

#[path = "../support/mod.rs"]
mod support;

mod core_cases;
mod core_robustness;
mod e2e_bare_tool_name;
mod e2e_lifecycle;
mod e2e_tap;
mod e2e_turn;
mod e2e_unknown_dialect;
mod fault_campaign;
mod permission_mode;
mod recorded_tool_calls;
mod script_gate;
mod script_gate_hook;
mod tool_name;
mod tool_result;
mod tool_result_nesting;

fn main() {
    if let Some(code) = fault_campaign::as_fault_agent() {
        std::process::exit(code);
    }
    let args = libtest_mimic::Arguments::from_args();
    let suites = [
        core_robustness::trials(),
        e2e_bare_tool_name::trials(),
        e2e_lifecycle::trials(),
        e2e_tap::trials(),
        e2e_turn::trials(),
        e2e_unknown_dialect::trials(),
        permission_mode::trials(),
        recorded_tool_calls::trials(),
        script_gate::trials(),
        script_gate_hook::trials(),
        tool_name::trials(),
        tool_result::trials(),
        tool_result_nesting::trials(),
        core_cases::trials(),
        vec![fault_campaign::trial()],
    ];
    let conclusion = libtest_mimic::run(&args, suites.into_iter().flatten().collect());
    if let Err(e) = core_cases::write_blessings() {
        eprintln!("{e}");
        std::process::exit(101);
    }
    conclusion.exit();
}
