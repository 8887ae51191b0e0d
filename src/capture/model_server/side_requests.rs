//! Model requests an agent sends beside its turns (session titles, routing
//! calls, summaries), as the agent's profile declares them.
//!
//! The script answers only the scenario's turns; any other model request
//! ends the recording `off_script` unless a declaration here matches it. A
//! declaration is a generic matcher over the request, every given criterion
//! must hold, and it is tried before the script (a title request quoting the
//! prompt must not be taken for the turn):
//!
//! ```toml
//! [[model.side_requests]]
//! name = "session title"                 # for notes
//! no_tools = true                        # the request offers no tools
//! last_user_matches = "(?i)session title" # regex on the last user message's text
//! system_matches = "Task Routing"        # regex on the system prompt's text
//! path_matches = ":generateContent$"     # regex on the request path (no query)
//! stream = false                         # whether the client asked for a stream
//! reply = "A title"                      # the answer's text (default "OK.")
//! ```

use regex::Regex;
use serde::Deserialize;

use super::{Entry, RequestView, UNSCRIPTED_TEXT};

/// A profile's side-request declarations, compiled.
#[derive(Debug, Clone, Default)]
pub struct SideRequests(Vec<SideRequest>);

/// One declared side request.
#[derive(Debug, Clone)]
pub struct SideRequest {
    pub name: String,
    path: Option<Regex>,
    no_tools: Option<bool>,
    system: Option<Regex>,
    last_user: Option<Regex>,
    stream: Option<bool>,
    /// The text the request is answered with.
    pub reply: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Declared {
    name: String,
    #[serde(default)]
    path_matches: Option<String>,
    #[serde(default)]
    no_tools: Option<bool>,
    #[serde(default)]
    system_matches: Option<String>,
    #[serde(default)]
    last_user_matches: Option<String>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    reply: Option<String>,
}

/// A declaration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SideRequestError {
    #[error("[[model.side_requests]] is not an array of tables: {0}")]
    Shape(String),
    #[error("[[model.side_requests]] #{index}: {message}")]
    Entry { index: usize, message: String },
}

impl TryFrom<Vec<toml::Value>> for SideRequests {
    type Error = SideRequestError;

    fn try_from(values: Vec<toml::Value>) -> Result<Self, Self::Error> {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| compile(i + 1, v))
            .collect::<Result<Vec<_>, _>>()
            .map(SideRequests)
    }
}

fn compile(index: usize, value: toml::Value) -> Result<SideRequest, SideRequestError> {
    let entry = |message: String| SideRequestError::Entry { index, message };
    let d: Declared = value.try_into().map_err(|e| entry(e.to_string()))?;
    let regex = |key: &str, pattern: Option<String>| {
        pattern
            .map(|p| Regex::new(&p).map_err(|e| entry(format!("`{}` {key}: {e}", d.name))))
            .transpose()
    };
    let path = regex("path_matches", d.path_matches.clone())?;
    let system = regex("system_matches", d.system_matches.clone())?;
    let last_user = regex("last_user_matches", d.last_user_matches.clone())?;
    if path.is_none()
        && system.is_none()
        && last_user.is_none()
        && d.no_tools.is_none()
        && d.stream.is_none()
    {
        return Err(entry(format!(
            "`{}` has no criterion (path_matches, no_tools, system_matches, last_user_matches, stream): it would match every request",
            d.name
        )));
    }
    Ok(SideRequest {
        name: d.name,
        path,
        no_tools: d.no_tools,
        system,
        last_user,
        stream: d.stream,
        reply: d.reply.unwrap_or_else(|| UNSCRIPTED_TEXT.to_owned()),
    })
}

impl SideRequests {
    /// The first declaration that matches a request at `path` (no query).
    pub fn matching(&self, path: &str, view: &RequestView) -> Option<&SideRequest> {
        self.0.iter().find(|s| s.matches(path, view))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl SideRequest {
    fn matches(&self, path: &str, view: &RequestView) -> bool {
        let last_user = view
            .conversation
            .iter()
            .rev()
            .find_map(|e| match e {
                Entry::User(parts) if !parts.is_empty() => Some(parts.join("\n")),
                _ => None,
            })
            .unwrap_or_default();
        self.path.as_ref().is_none_or(|r| r.is_match(path))
            && self
                .no_tools
                .is_none_or(|want| want == view.offered_tools.is_empty())
            && self.stream.is_none_or(|want| want == view.stream)
            && self
                .system
                .as_ref()
                .is_none_or(|r| r.is_match(&view.system.join("\n")))
            && self
                .last_user
                .as_ref()
                .is_none_or(|r| r.is_match(&last_user))
    }
}
