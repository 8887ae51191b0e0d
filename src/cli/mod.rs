//! The commands: one module per `acp-harness` subcommand, each owning its
//! clap arguments and turning the domain's answers into text and an exit
//! status ([`exit::Exit`]: 0 good, 1 a difference or regression found, 2
//! usage or tool error). They orchestrate; what they print comes from the
//! domain below them (`judging`, `capture`, `corpus`, `packages`).

pub mod bisect;
pub mod check;
pub mod conformance;
pub mod contract;
pub mod drift;
pub mod exit;
pub mod import;
pub mod install;
pub mod migrate;
pub mod outdated;
pub mod output;
pub mod record;
pub mod registry;
pub mod replay;
pub mod report;
pub mod sandbox;
pub mod selection;
pub mod update;
