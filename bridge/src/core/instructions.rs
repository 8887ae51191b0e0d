//! The session's custom instructions: the launch's, those a panel
//! `initialize` gives, the ones the session call carried as its
//! `systemPrompt`, and the first prompt that carries them when the session
//! call did not. One owner, because where instructions go depends on all
//! three and on when each happened.

use serde_json::Value;

use crate::acp::json_field::json_kind;
use crate::launch::{LaunchSpec, join_instructions};

/// Where the session's instructions stand.
#[derive(Debug, Default)]
pub(super) struct Instructions {
    /// What the panel's `initialize` requests gave.
    panel: PanelInstructions,
    /// What the session call carried as its `systemPrompt`.
    carried: Option<SessionInstructions>,
    /// The session's first prompt went out: instructions come too late.
    first_prompt_sent: bool,
}

/// The instructions block of a session's first prompt, and a note when the
/// instructions moved there from where they were expected.
pub(super) struct FirstPrompt {
    pub custom: Option<String>,
    pub note: Option<&'static str>,
}

impl Instructions {
    /// Takes the instructions of a panel `initialize`; an error says why
    /// they come too late.
    pub(super) fn take_panel(&mut self, given: PanelInstructions) -> Result<(), &'static str> {
        if given.is_empty() {
            return Ok(());
        }
        if self.first_prompt_sent {
            return Err("custom instructions of a late panel initialize not sent: \
                 the session's first prompt already went out");
        }
        self.panel.update(given);
        Ok(())
    }

    /// The instructions in force under the launch spec `spec`.
    pub(super) fn in_force(&self, spec: &LaunchSpec) -> SessionInstructions {
        self.panel.apply_to(spec)
    }

    /// The session call went out, carrying `carried` as its `systemPrompt`
    /// (`None`: it carried none).
    pub(super) fn session_call_carried(&mut self, carried: Option<SessionInstructions>) {
        self.carried = carried;
    }

    /// A prompt goes out. The first one of a new session carries the custom
    /// instructions in force unless the session call carried them as its
    /// `systemPrompt`; instructions that changed after the session call went
    /// out (a panel `initialize` after it) come here, with a note.
    /// `takes_system_prompt`: the agent takes a session `systemPrompt`.
    pub(super) fn prompt_sent(
        &mut self,
        spec: &LaunchSpec,
        new_session: bool,
        takes_system_prompt: bool,
    ) -> Option<FirstPrompt> {
        let first = new_session && !self.first_prompt_sent;
        self.first_prompt_sent = true;
        if !first {
            return None;
        }
        let in_force = self.in_force(spec);
        Some(match &self.carried {
            Some(sent) if *sent == in_force => FirstPrompt {
                custom: None,
                note: None,
            },
            Some(_) => FirstPrompt {
                custom: in_force.joined(),
                note: Some(
                    "custom instructions changed after the session call carried them as systemPrompt: \
                     the first prompt carries the ones in force",
                ),
            },
            None => {
                let custom = in_force.joined();
                let note = (custom.is_some() && takes_system_prompt).then_some(
                    "custom instructions came after the session call went out without them: \
                     the first prompt carries them, not systemPrompt",
                );
                FirstPrompt { custom, note }
            }
        })
    }
}

/// The system prompt fields of the panel's `initialize` request: the
/// TypeScript Agent SDK sends its `systemPrompt` option there (not as a CLI
/// flag). Claude's semantics: `systemPrompt` replaces the launch spec's custom
/// instructions, `appendSystemPrompt` is appended to whichever is in force.
/// An empty `systemPrompt` (the TS SDK sends `""` when its user set none)
/// counts as not given, so the launch spec's instructions stay.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PanelInstructions {
    system_prompt: Option<String>,
    append: Option<String>,
}

impl PanelInstructions {
    /// Reads `request.systemPrompt` (a string, an array of strings joined by
    /// blank lines, or the `{"type":"preset","append":...}` form) and
    /// `request.appendSystemPrompt`; a field of another shape is an error
    /// naming it, as a malformed `mcpServers` is.
    pub fn read(req: &Value) -> Result<PanelInstructions, String> {
        let text = |field: &str, v: &Value| -> Result<Option<String>, String> {
            let joined = match v {
                Value::Null => return Ok(None),
                Value::String(s) => s.clone(),
                Value::Array(parts) => {
                    let mut texts = Vec::new();
                    for (i, p) in parts.iter().enumerate() {
                        match p.as_str() {
                            Some(s) if !s.is_empty() => texts.push(s),
                            Some(_) => {}
                            None => {
                                return Err(format!(
                                    "request.{field}[{i}] is {}, not a string",
                                    json_kind(p)
                                ));
                            }
                        }
                    }
                    texts.join("\n\n")
                }
                other => {
                    return Err(format!(
                        "request.{field} is {}, not a string or an array of strings",
                        json_kind(other)
                    ));
                }
            };
            Ok(Some(joined).filter(|s| !s.is_empty()))
        };
        let sp = &req["systemPrompt"];
        let (system_prompt, preset_append) = if sp["type"] == "preset" {
            (None, text("systemPrompt.append", &sp["append"])?)
        } else {
            (text("systemPrompt", sp)?, None)
        };
        let append = [
            preset_append,
            text("appendSystemPrompt", &req["appendSystemPrompt"])?,
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
        Ok(PanelInstructions {
            system_prompt,
            append: Some(append).filter(|a| !a.is_empty()),
        })
    }

    fn is_empty(&self) -> bool {
        self.system_prompt.is_none() && self.append.is_none()
    }

    /// A later `initialize` replaces the fields it carries.
    pub fn update(&mut self, later: PanelInstructions) {
        if later.system_prompt.is_some() {
            self.system_prompt = later.system_prompt;
        }
        if later.append.is_some() {
            self.append = later.append;
        }
    }

    /// The instructions in force, given the launch spec's, as Claude's two
    /// parts: the system prompt (the panel's, which drops the launch's
    /// appended text with its system prompt, else the launch's) and the
    /// text appended to it.
    pub fn apply_to(&self, spec: &LaunchSpec) -> SessionInstructions {
        let non_empty = |t: Option<&String>| t.filter(|t| !t.is_empty()).cloned();
        match &self.system_prompt {
            Some(panel) => SessionInstructions {
                system: Some(panel.clone()),
                append: self.append.clone(),
            },
            None => SessionInstructions {
                system: non_empty(spec.system_prompt.as_ref()),
                append: join_instructions(
                    spec.append_system_prompt.as_deref(),
                    self.append.as_deref(),
                ),
            },
        }
    }
}

/// A session's custom instructions: `system` replaces the agent's default
/// instructions, `append` follows them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SessionInstructions {
    pub system: Option<String>,
    pub append: Option<String>,
}

impl SessionInstructions {
    /// Both parts as one text, for the first prompt's block.
    fn joined(&self) -> Option<String> {
        join_instructions(self.system.as_deref(), self.append.as_deref())
    }
}
