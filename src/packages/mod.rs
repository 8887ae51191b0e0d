//! Agent packages and their versions: install, runtimes, npm/PyPI versions, the ACP registry and outdated.

pub mod acp_registry;
pub mod install;
pub mod install_source;
pub mod outdated;
pub mod package_cache;
pub mod python;
pub mod runtime;
pub mod versions;
