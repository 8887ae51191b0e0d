//! Agent packages and their versions: install, runtimes, npm/PyPI versions, the ACP registry, outdated, update and bisect.

pub mod acp_registry;
pub mod bisect;
pub mod install;
pub mod install_source;
pub mod outdated;
pub mod runtime;
pub mod update;
pub mod versions;
