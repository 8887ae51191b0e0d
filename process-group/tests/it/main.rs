//! process-group's integration tests, one binary against real processes.
//! The binary is also the processes of the tree the tests end ([`tree`]),
//! and the sweep ([`descendants`]) ends every process below the test
//! process: the trials run one at a time, the sweep last.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
mod descendants;
mod tree;

fn main() -> ExitCode {
    if let Some(code) = tree::as_tree_process() {
        return code;
    }
    let mut args = libtest_mimic::Arguments::from_args();
    args.test_threads = Some(1);
    #[allow(unused_mut)]
    let mut trials = tree::trials();
    #[cfg(target_os = "linux")]
    trials.push(descendants::trial());
    libtest_mimic::run(&args, trials).exit_code()
}
