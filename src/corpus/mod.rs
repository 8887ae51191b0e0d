//! The corpus as data: recordings, scenarios, agent profiles and the workspace fixtures both declare.

pub mod name;
pub mod profile;
pub mod recording;
pub mod scenario;
pub mod workspace_fixture;
