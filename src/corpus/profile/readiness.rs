//! What the recorder waits for before the first prompt of an agent process
//! (a profile's `[ready]`): conditions, each seen on this process, with a
//! bound, never a fixed sleep.
//!
//! ```toml
//! [ready]
//! after = "session"          # session/new (or session/load) answered
//! timeout_ms = 60000         # the bound on every condition below
//! [[ready.wait]]             # then each of these, in any order:
//! mcp_request = "tools/list" #   stub-mcp received this request
//! [[ready.wait]]
//! session_update = "available_commands_update" # a session/update of this kind
//! [[ready.wait]]
//! notification = "_x.ai/mcp_initialized"        # a notification of this method
//! versions = ">=1.0.0"       # only for these agent versions (default: all)
//! on = "session/new"         # only after this method (default: session/new and session/load)
//! ```
//!
//! `settle_ms` (default 0) is extra quiet time after all of them; a profile
//! that keeps one says why in a comment.

use serde::Deserialize;

/// What to wait for before the first prompt.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ready {
    /// `session`: once session/new or session/load answered.
    #[serde(default = "default_after")]
    pub after: String,
    /// The conditions after that, each bounded by `timeout_ms`.
    #[serde(default)]
    pub wait: Vec<ReadyWait>,
    /// Extra time after the conditions, for agents whose readiness shows in
    /// nothing the recorder can see (say why in the profile).
    #[serde(default)]
    pub settle_ms: u64,
    #[serde(default = "default_ready_timeout")]
    pub timeout_ms: u64,
    /// How long initialize, session/new, session/load and set_mode may take.
    #[serde(default = "default_ready_timeout")]
    pub handshake_timeout_ms: u64,
    /// Start a resuming process only in a later wall-clock minute than the
    /// one the previous process ended in (Gemini CLI: a session/load in the
    /// minute the session was created finds no history).
    #[serde(default)]
    pub resume_in_new_minute: bool,
}

/// One condition of `[[ready.wait]]`: exactly one of `notification`,
/// `session_update`, `mcp_request`.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ReadyWait {
    /// An ACP notification method from the agent (`_x.ai/mcp_initialized`).
    #[serde(default)]
    pub notification: Option<String>,
    /// A `session/update` whose `sessionUpdate` is this kind.
    #[serde(default)]
    pub session_update: Option<String>,
    /// A JSON-RPC request method stub-mcp received (`tools/list`): the agent
    /// connected to unity-ops and listed its tools.
    #[serde(default)]
    pub mcp_request: Option<String>,
    /// The agent versions it applies to (a semver range; default all).
    #[serde(default)]
    pub versions: Option<String>,
    /// The session method it applies to: a condition only a new session
    /// shows (or only a resumed one) is not waited for after the other.
    /// Default both.
    #[serde(default)]
    pub on: Option<SessionMethod>,
}

/// The method that opened an agent process's session, which `[ready]` follows.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum SessionMethod {
    #[serde(rename = "session/new")]
    New,
    /// session/load: a resume or a reload.
    #[serde(rename = "session/load")]
    Load,
}

/// A condition resolved for one agent version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    Notification(String),
    SessionUpdate(String),
    McpRequest(String),
}

impl Condition {
    /// What the condition waits for, for timeout messages.
    pub fn describe(&self) -> String {
        match self {
            Condition::Notification(m) => format!("the {m} notification"),
            Condition::SessionUpdate(k) => format!("a session/update {k}"),
            Condition::McpRequest(m) => format!("stub-mcp to receive {m}"),
        }
    }
}

impl ReadyWait {
    /// The condition, or why the entry is not one.
    pub fn condition(&self) -> Result<Condition, String> {
        let given: Vec<Condition> = [
            self.notification.clone().map(Condition::Notification),
            self.session_update.clone().map(Condition::SessionUpdate),
            self.mcp_request.clone().map(Condition::McpRequest),
        ]
        .into_iter()
        .flatten()
        .collect();
        match <[Condition; 1]>::try_from(given) {
            Ok([c]) => Ok(c),
            Err(v) => Err(format!(
                "[[ready.wait]] needs exactly one of notification, session_update, mcp_request (got {})",
                v.len()
            )),
        }
    }
}

impl Ready {
    /// Checks every `[[ready.wait]]` entry (one condition, a semver range).
    pub fn check(&self) -> Result<(), String> {
        for (i, w) in self.wait.iter().enumerate() {
            w.condition()
                .map_err(|e| format!("{e} in entry {}", i + 1))?;
            if let Some(range) = &w.versions {
                semver::VersionReq::parse(range).map_err(|e| {
                    format!(
                        "[[ready.wait]] entry {}: `versions = {range:?}` is not a semver range: {e}",
                        i + 1
                    )
                })?;
            }
        }
        Ok(())
    }

    /// The conditions that apply to `version` after `method`, in the profile's order.
    pub fn conditions(&self, version: &semver::Version, method: SessionMethod) -> Vec<Condition> {
        self.wait
            .iter()
            .filter(|w| w.on.is_none_or(|on| on == method))
            .filter(|w| {
                w.versions.as_deref().is_none_or(|r| {
                    semver::VersionReq::parse(r).is_ok_and(|req| req.matches(version))
                })
            })
            .filter_map(|w| w.condition().ok())
            .collect()
    }
}

fn default_after() -> String {
    "session".into()
}

fn default_ready_timeout() -> u64 {
    60_000
}

impl Default for Ready {
    fn default() -> Self {
        Ready {
            after: default_after(),
            wait: Vec::new(),
            settle_ms: 0,
            timeout_ms: default_ready_timeout(),
            handshake_timeout_ms: default_ready_timeout(),
            resume_in_new_minute: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_apply_by_version_and_need_exactly_one_kind() {
        let ready: Ready = toml::from_str(
            r#"
[[wait]]
mcp_request = "tools/list"
[[wait]]
session_update = "available_commands_update"
versions = ">=0.33.0"
"#,
        )
        .unwrap();
        ready.check().unwrap();
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(
            ready.conditions(&v("0.61.0"), SessionMethod::New),
            vec![
                Condition::McpRequest("tools/list".into()),
                Condition::SessionUpdate("available_commands_update".into())
            ]
        );
        assert_eq!(
            ready.conditions(&v("0.30.1"), SessionMethod::New),
            vec![Condition::McpRequest("tools/list".into())]
        );
        let cases = [
            ("[[wait]]\n", "needs exactly one of"),
            (
                "[[wait]]\nnotification = \"a\"\nmcp_request = \"b\"\n",
                "(got 2) in entry 1",
            ),
            (
                "[[wait]]\nnotification = \"a\"\nversions = \"soon\"\n",
                "entry 1: `versions = \"soon\"` is not a semver range",
            ),
        ];
        for (text, want) in cases {
            let r: Ready = toml::from_str(text).unwrap();
            let err = r.check().unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    /// A condition scoped with `on` is waited for only after that session
    /// method: a resume (session/load) is not held to what only a new
    /// session shows.
    #[test]
    fn a_ready_wait_scoped_to_a_session_method_applies_only_after_it() {
        let ready: Ready = toml::from_str(
            r#"
[[wait]]
mcp_request = "tools/list"
on = "session/new"
[[wait]]
notification = "_x/resumed"
on = "session/load"
[[wait]]
session_update = "available_commands_update"
"#,
        )
        .unwrap();
        ready.check().unwrap();
        let v = semver::Version::new(1, 0, 0);
        let cases = [
            (
                SessionMethod::New,
                vec![
                    Condition::McpRequest("tools/list".into()),
                    Condition::SessionUpdate("available_commands_update".into()),
                ],
            ),
            (
                SessionMethod::Load,
                vec![
                    Condition::Notification("_x/resumed".into()),
                    Condition::SessionUpdate("available_commands_update".into()),
                ],
            ),
        ];
        for (method, want) in cases {
            assert_eq!(ready.conditions(&v, method), want, "{method:?}");
        }
        let err =
            toml::from_str::<Ready>("[[wait]]\nnotification = \"a\"\non = \"session/resume\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("session/resume") && err.contains("session/load"),
            "{err}"
        );
    }
}
