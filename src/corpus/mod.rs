//! The corpus as data: recordings, scenarios, agent profiles, the Claude-side catalogue and the workspace fixtures both declare.

pub mod claude_side;
pub mod name;
pub mod profile;
pub mod recording;
pub use recording_format::regular_file;
pub mod scenario;
pub mod workspace_fixture;
