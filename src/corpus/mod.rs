//! The corpus as data: recordings, scenarios and agent profiles.

pub mod name;
pub mod profile;
pub mod recording;
pub mod scenario;
