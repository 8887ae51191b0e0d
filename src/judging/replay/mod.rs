//! The replayer: a recording plays the agent to the bridge and the scenario
//! plays the panel. What comes out (the panel lines, a normalised transcript,
//! divergences from what the recorded client sent) is judged elsewhere
//! (`crate::judging::judge`).

pub mod divergence;
pub mod fake_agent;
pub mod line_value;
pub mod normalise;
pub mod replayer;
pub mod source;
pub mod stdio;
pub mod transcript;
