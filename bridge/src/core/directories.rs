//! The session's workspace roots beside `cwd`: `--add-dir` and the panel
//! `initialize`'s `additionalDirectories`, passed on as ACP's
//! `additionalDirectories` when the agent advertises it, and whether they
//! were (the `additional_directories_applied` Claude answers).

use std::path::Path;

use serde_json::{Value, json};

use crate::acp::client;

#[derive(Debug, Default)]
pub(super) struct Directories {
    /// The panel's, absolute, in the order asked.
    asked: Vec<String>,
    /// What went to the agent's `session/new` or `session/load`.
    sent: Vec<String>,
}

impl Directories {
    /// Takes the panel's directories (a relative one is against `cwd`, as
    /// ACP wants every root absolute).
    pub fn asked(&mut self, cwd: &str, directories: &[String]) {
        for dir in directories.iter().map(|d| absolute(cwd, d)) {
            if !self.asked.contains(&dir) {
                self.asked.push(dir);
            }
        }
    }

    /// Adds the roots to a `session/new` or `session/load` request: the
    /// launch's, then the panel's, each once; none when the agent does not
    /// take them. Returns a note when there were roots it could not pass.
    pub fn add_to(
        &mut self,
        params: &mut Value,
        launch: &[String],
        agent_init: &Value,
    ) -> Option<String> {
        let mut roots: Vec<String> = Vec::new();
        for dir in launch.iter().chain(&self.asked) {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        if roots.is_empty() {
            return None;
        }
        if !client::agent_supports_additional_directories(agent_init) {
            return Some(format!(
                "the agent does not advertise sessionCapabilities.additionalDirectories: \
                 {} not passed",
                roots.join(", ")
            ));
        }
        params["additionalDirectories"] = json!(roots);
        self.sent = roots;
        None
    }

    /// Whether each of `directories` went to the agent.
    pub fn were_sent(&self, cwd: &str, directories: &[String]) -> bool {
        directories
            .iter()
            .all(|d| self.sent.contains(&absolute(cwd, d)))
    }
}

fn absolute(cwd: &str, dir: &str) -> String {
    Path::new(cwd).join(dir).to_string_lossy().into_owned()
}
