//! The harness library: see ARCHITECTURE.md for the map.

pub mod capture;
pub mod cli;
pub mod corpus;
pub mod judging;
pub mod packages;
pub mod text_table;
pub mod tracking;
