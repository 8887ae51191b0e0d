//! The state machine (placeholder until the core lands).
use std::time::Duration;

use crate::{IdSource, LaunchSpec};

/// Lines produced by one input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    pub to_agent: Vec<String>,
    pub to_panel: Vec<String>,
    pub diagnostics: Vec<String>,
    pub close_agent_stdin: bool,
}

pub struct Bridge {
    #[allow(dead_code)]
    spec: LaunchSpec,
    #[allow(dead_code)]
    ids: Box<dyn IdSource + Send>,
}

impl Bridge {
    pub fn new(spec: LaunchSpec, ids: Box<dyn IdSource + Send>) -> Bridge {
        Bridge { spec, ids }
    }
    pub fn on_panel_line(&mut self, _line: &str, _now: Duration) -> Output {
        Output::default()
    }
    pub fn on_agent_line(&mut self, _line: &str, _now: Duration) -> Output {
        Output::default()
    }
    pub fn on_agent_exit(&mut self, _code: Option<i32>, _now: Duration) -> Output {
        Output::default()
    }
    pub fn on_panel_eof(&mut self, _now: Duration) -> Output {
        Output::default()
    }
    pub fn next_deadline(&self) -> Option<Duration> {
        None
    }
    pub fn on_tick(&mut self, _now: Duration) -> Output {
        Output::default()
    }
}
