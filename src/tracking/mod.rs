//! Following agents as they release: `update` records the versions not yet
//! recorded and judges each against the one before; `bisect` finds the
//! version where a scenario broke; `claude_side` judges newer Agent SDK
//! versions by their stream-json surface. They sit above capturing, judging and
//! packages, and use all three.

pub mod bisect;
pub mod claude_side;
pub mod update;
