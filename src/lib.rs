//! The harness library: see ARCHITECTURE.md for the map.

pub mod acp_client;
pub mod agent_registry;
pub mod atomic_file;
pub mod bisect;
pub mod commands;
pub mod contract;
pub mod drift;
pub mod expect;
pub mod install;
pub mod install_source;
pub mod interrupt;
pub mod isolation;
pub mod judge;
pub mod model_server;
pub mod outdated;
pub mod profile;
pub mod readiness;
pub mod record;
pub mod recording;
pub mod registry;
pub mod replay;
pub mod runtime;
pub mod scenario;
pub mod update;
pub mod verdicts;
pub mod workspace_fixture;
