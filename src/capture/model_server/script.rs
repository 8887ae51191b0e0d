//! The model script: which reply answers which model request.
//!
//! Selection reads only the request body, never the clock or the order of
//! arrival, so a retried or duplicated request cannot shift the script:
//! find the last user message that carries one of the scenario's prompt
//! texts, count the tool outputs that came back after it, and use that count
//! as the index into the turn's replies. A request the script cannot place
//! is [`Selection::OffScript`] with the reason; the recorder ends such a run
//! `off_script` unless the profile declared the request a side request
//! ([`super::side_requests`]).

use std::collections::BTreeSet;

use crate::corpus::scenario::{Decision, ModelReply, Scenario, Step};

/// All scripted turns of a scenario (prompt and steer steps, in order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelScript {
    pub turns: Vec<ScriptTurn>,
    /// Call unity-ops tools by name even where the profile maps an
    /// `mcp_call` meta-tool (the scenario's `mcp_calls = "direct"`).
    pub direct_mcp_calls: bool,
    /// Arguments every scripted unity-ops call carries beside the
    /// scenario's own (the profile's `[model] mcp_call_arguments`: an
    /// agent whose tool schema requires a field, e.g. `security_risk`).
    pub mcp_call_arguments: serde_json::Map<String, serde_json::Value>,
}

/// One turn: the prompt text that identifies it and the replies to its
/// model requests (reply `i` answers the request that carries `i` tool
/// outputs after the prompt).
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptTurn {
    pub prompt_text: String,
    pub replies: Vec<ModelReply>,
    /// The scenario cuts this turn short (an interrupt, a refused
    /// permission, a steering message while it runs): only its first reply
    /// must be asked for; the agent may end the turn there (as Claude Code
    /// does after a refusal) or fold the rest into the next turn.
    pub cut_short: bool,
}

impl ModelScript {
    pub fn from_scenario(scenario: &Scenario) -> ModelScript {
        let mut turns: Vec<ScriptTurn> = Vec::new();
        for step in &scenario.steps {
            let prompt = match step {
                Step::Prompt(p) => p,
                Step::Steer { prompt, .. } => {
                    if let Some(running) = turns.last_mut() {
                        running.cut_short = true;
                    }
                    prompt
                }
                Step::Interrupt { .. }
                | Step::Permission {
                    decision: Decision::Deny | Decision::Cancel,
                    ..
                } => {
                    if let Some(running) = turns.last_mut() {
                        running.cut_short = true;
                    }
                    continue;
                }
                _ => continue,
            };
            turns.push(ScriptTurn {
                prompt_text: prompt.text.clone(),
                replies: prompt.model.clone(),
                cut_short: false,
            });
        }
        ModelScript {
            turns,
            direct_mcp_calls: scenario.direct_mcp_calls,
            mcp_call_arguments: serde_json::Map::new(),
        }
    }

    /// The scripted replies that had to be asked for and were not, given
    /// the `(turn, reply)` pairs the server served (0-based), each named
    /// for people (`turn 2 ("Reply with...") reply 1: text "still-here"`).
    /// A run that leaves one unasked did not play its scenario.
    pub fn unrequested(&self, served: &BTreeSet<(usize, usize)>) -> Vec<String> {
        let mut out = Vec::new();
        for (t, turn) in self.turns.iter().enumerate() {
            let required = if turn.cut_short {
                turn.replies.len().min(1)
            } else {
                turn.replies.len()
            };
            for (r, reply) in turn.replies.iter().enumerate().take(required) {
                if !served.contains(&(t, r)) {
                    out.push(format!(
                        "turn {} ({}) reply {}: {}",
                        t + 1,
                        excerpt(std::slice::from_ref(&turn.prompt_text)),
                        r + 1,
                        describe_reply(reply)
                    ));
                }
            }
        }
        out
    }

    /// The agent-tool roles (`shell`, `write_file`) the script's calls use.
    pub fn agent_tool_roles(&self) -> BTreeSet<&str> {
        self.turns
            .iter()
            .flat_map(|t| &t.replies)
            .flat_map(|r| &r.tool_calls)
            .filter_map(|c| c.agent_tool.as_deref())
            .collect()
    }
}

/// A scripted reply in a few words, for notes.
fn describe_reply(reply: &ModelReply) -> String {
    if let Some(e) = &reply.error {
        return format!("API error {}", e.status);
    }
    let mut parts = Vec::new();
    for c in &reply.tool_calls {
        let name = c.agent_tool.as_deref().unwrap_or(&c.tool);
        parts.push(format!("call {name} ({})", c.id));
    }
    if let Some(text) = &reply.text {
        parts.push(format!("text {:?}", acp_bridge::shorten::shorten(text, 40)));
    } else if reply.thinking.is_some() {
        parts.push("thinking".to_owned());
    }
    if parts.is_empty() {
        "an empty reply".to_owned()
    } else {
        parts.join(", ")
    }
}

/// A flavour-neutral view of a request's conversation, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A user message (or the text blocks of one, where a message mixes
    /// them with tool outputs): the texts of its text parts, in order. Empty
    /// when it carries only images or files.
    User(Vec<String>),
    /// A tool output sent back to the model.
    ToolOutput,
    /// A user message with images right after a tool output: that output's
    /// media, attached as a user message where the API's tool messages hold
    /// no images (Chat Completions; "Attached media from tool result:").
    /// Its caption is neither a prompt nor a new user message.
    ToolMedia,
    /// An assistant message that calls no tool: a turn's final answer.
    Answer,
    /// Anything else (assistant messages, tool calls, reasoning...).
    Other,
}

/// What the script says about one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection<'a> {
    /// A scripted reply: `turn` and `reply` are 0-based indices. `quoted`:
    /// the prompt was found only inside other text of its message, not as a
    /// block of its own ([`quotes_prompt`]).
    Reply {
        turn: usize,
        reply: usize,
        model: &'a ModelReply,
        quoted: bool,
    },
    /// The script cannot place the request; `why` says what did not match.
    OffScript { why: String },
}

impl ModelScript {
    /// Choose the reply for a conversation. A user message belongs to a
    /// turn when one of its text parts holds the turn's prompt text as a
    /// block of its own ([`holds_prompt`]: on lines of its own, or joined to
    /// the text before it after a finished sentence or a closing tag; no
    /// prompt text contains another, the loader checks), or else quotes it
    /// inside framing text of the agent's own ([`quotes_prompt`]; the
    /// selection says `quoted`; only when no message holds one as a block).
    /// Searched from the end, so the newest turn wins. (The server places a
    /// request that only quotes a prompt and offers no tools on no turn:
    /// [`super::place`].) After the prompt, tool outputs count; user messages that
    /// are only images, only tagged reminders (`<system-reminder>...`), or a
    /// tool output's media ([`Entry::ToolMedia`]) are context the agent adds
    /// and do not hide the prompt; any other user
    /// message after it, or an answer after its last tool output, makes the
    /// request something else (a title or summary request about the
    /// conversation), off the script.
    pub fn select(&self, conversation: &[Entry]) -> Selection<'_> {
        // The newest message holding a prompt as a block of its own, else the
        // newest quoting one: a title request quoting the prompt after the
        // real one does not hide it.
        let find = |matches: fn(&str, &str) -> bool| {
            conversation
                .iter()
                .enumerate()
                .rev()
                .find_map(|(pos, entry)| {
                    let Entry::User(parts) = entry else {
                        return None;
                    };
                    // The latest turn the message holds: Claude Code puts a failed
                    // turn's prompt and the next prompt into one user message.
                    self.turns
                        .iter()
                        .rposition(|t| parts.iter().any(|p| matches(p, &t.prompt_text)))
                        .map(|turn| (pos, turn))
                })
        };
        let found = match find(holds_prompt) {
            Some((pos, turn)) => Some((pos, turn, false)),
            None => find(quotes_prompt).map(|(pos, turn)| (pos, turn, true)),
        };
        let Some((pos, turn, quoted)) = found else {
            let last = conversation.iter().rev().find_map(|e| match e {
                Entry::User(parts) if !parts.is_empty() => Some(parts),
                _ => None,
            });
            return Selection::OffScript {
                why: match last {
                    Some(parts) => format!(
                        "no user message holds a scripted prompt (the last one says {})",
                        excerpt(parts)
                    ),
                    None => "the request carries no user text at all".to_owned(),
                },
            };
        };
        let after = &conversation[pos + 1..];
        if let Some(parts) = after.iter().find_map(|e| match e {
            Entry::User(parts) if !parts.is_empty() && !is_reminder(parts) => Some(parts),
            _ => None,
        }) {
            return Selection::OffScript {
                why: format!(
                    "after turn {}'s prompt comes a user message that is neither a prompt, a tool output nor a tagged reminder: {}",
                    turn + 1,
                    excerpt(parts)
                ),
            };
        }
        // An answer after the last tool output: the turn is over, and the
        // request asks about it (a title, a summary, a dashboard line).
        let last_output = after.iter().rposition(|e| matches!(e, Entry::ToolOutput));
        if after[last_output.map_or(0, |i| i + 1)..]
            .iter()
            .any(|e| matches!(e, Entry::Answer))
        {
            return Selection::OffScript {
                why: format!(
                    "the conversation already holds turn {}'s answer after its last tool output: a request about the finished turn",
                    turn + 1
                ),
            };
        }
        let outputs = after
            .iter()
            .filter(|e| matches!(e, Entry::ToolOutput))
            .count();
        match self.turns[turn].replies.get(outputs) {
            Some(model) => Selection::Reply {
                turn,
                reply: outputs,
                model,
                quoted,
            },
            None => Selection::OffScript {
                why: format!(
                    "turn {} scripts {} repl{} but the request carries {outputs} tool output(s) after the prompt",
                    turn + 1,
                    self.turns[turn].replies.len(),
                    if self.turns[turn].replies.len() == 1 {
                        "y"
                    } else {
                        "ies"
                    },
                ),
            },
        }
    }
}

/// The first 120 characters of a message's text, quoted, for notes.
fn excerpt(parts: &[String]) -> String {
    let text = parts.join(" ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:?}", acp_bridge::shorten::shorten(&text, 120))
}

/// Whether every text of a user message is one tagged block
/// (`<system-reminder>...</system-reminder>`, `<turn_aborted>...`): context
/// an agent injects, whatever the tag is called.
fn is_reminder(parts: &[String]) -> bool {
    parts.iter().all(|p| {
        let p = p.trim();
        let Some(rest) = p.strip_prefix('<') else {
            return false;
        };
        let tag: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'))
            .collect();
        !tag.is_empty() && p.ends_with(&format!("</{tag}>"))
    })
}

/// Whether `part` holds `text` as a block of its own. After it, the rest
/// of its line is blank or a tag starts (`...</user_query>`, blocks joined
/// without a separator). Before it, the line is blank so far, or ends a
/// finished sentence (`.`, `!`, `?`, then a space or nothing: Grok Build
/// joins blocks with one space, other agents with nothing) or a tag (`>`).
/// A prompt quoted inside a sentence or glued to a word does not count.
pub fn holds_prompt(part: &str, text: &str) -> bool {
    let text = text.trim();
    if text.is_empty() {
        return false;
    }
    part.match_indices(text).any(|(at, m)| {
        let before = &part[..at];
        let after = &part[at + m.len()..];
        let line_before = before.rsplit('\n').next().unwrap_or_default();
        let line_after = after.split('\n').next().unwrap_or_default();
        let joined_before = line_before.trim_end().ends_with(['.', '!', '?', '>']);
        let starts_ok = line_before.trim().is_empty() || joined_before;
        let ends_ok = line_after.trim().is_empty() || line_after.trim_start().starts_with('<');
        starts_ok && ends_ok
    })
}

/// Whether `part` contains `text` anywhere, whitespace runs read as one
/// space: the prompt inside framing text an agent wraps around it
/// (`The user says: "..." Answer briefly.`).
pub fn quotes_prompt(part: &str, text: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = squash(text);
    !text.is_empty() && squash(part).contains(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str) -> ModelReply {
        ModelReply {
            text: Some(text.into()),
            ..Default::default()
        }
    }

    fn script() -> ModelScript {
        ModelScript {
            turns: vec![
                ScriptTurn {
                    prompt_text: "Ping the editor.".into(),
                    replies: vec![reply("a0"), reply("a1")],
                    cut_short: false,
                },
                ScriptTurn {
                    prompt_text: "Say hello.".into(),
                    replies: vec![reply("b0")],
                    cut_short: false,
                },
            ],
            direct_mcp_calls: false,
            mcp_call_arguments: serde_json::Map::new(),
        }
    }

    fn user(t: &str) -> Entry {
        Entry::User(vec![t.into()])
    }

    fn chosen(sel: Selection<'_>) -> String {
        match sel {
            Selection::Reply {
                turn,
                reply,
                quoted: false,
                ..
            } => format!("reply {turn}.{reply}"),
            Selection::Reply { turn, reply, .. } => format!("reply {turn}.{reply} (quoted)"),
            Selection::OffScript { why } => format!("off script: {why}"),
        }
    }

    #[test]
    fn selection_follows_the_last_prompt_and_the_tool_outputs_after_it() {
        let s = script();
        let cases: &[(&str, Vec<Entry>, &str)] = &[
            (
                "first request of turn 1",
                vec![user("<env/>"), user("Ping the editor.")],
                "reply 0.0",
            ),
            (
                "after one tool output",
                vec![user("Ping the editor."), Entry::Other, Entry::ToolOutput],
                "reply 0.1",
            ),
            (
                "outputs of an earlier turn do not count",
                vec![
                    user("Ping the editor."),
                    Entry::ToolOutput,
                    Entry::Other,
                    user("Say hello."),
                ],
                "reply 1.0",
            ),
            (
                "replies used up",
                vec![
                    user("Ping the editor."),
                    Entry::ToolOutput,
                    Entry::ToolOutput,
                ],
                "off script: turn 1 scripts 2 replies but the request carries 2 tool output(s) after the prompt",
            ),
            (
                "custom instructions merged into the part",
                vec![user("Be brief.\n\nPing the editor.")],
                "reply 0.0",
            ),
            (
                "custom instructions joined to the prompt with a space (Grok)",
                vec![user(
                    "<user_query>\nBe brief. Ping the editor.\n</user_query>",
                )],
                "reply 0.0",
            ),
            (
                "blocks joined without a separator after a sentence",
                vec![user("Be brief.Ping the editor.")],
                "reply 0.0",
            ),
            (
                "blocks joined without a separator between tags",
                vec![user("<context>x</context>Ping the editor.</query>")],
                "reply 0.0",
            ),
            (
                "framing text around the prompt (Hermes-style wrapping)",
                vec![user(
                    "[Context: cwd is /w]\nThe user asks: \"Ping   the\neditor.\" Answer briefly.",
                )],
                "reply 0.0 (quoted)",
            ),
            (
                "a quote in a later message does not hide the prompt before it",
                vec![
                    user("Ping the editor."),
                    Entry::Answer,
                    user("Write a title for: Ping the editor."),
                ],
                "off script: after turn 1's prompt comes a user message that is neither a prompt, a tool output nor a tagged reminder: \"Write a title for: Ping the editor.\"",
            ),
            (
                "a block of its own wins over a quote of a later turn",
                vec![Entry::User(vec![
                    "Ping the editor.".into(),
                    "as in \"Say hello.\" earlier".into(),
                ])],
                "reply 0.0",
            ),
            (
                "quoted inside a sentence",
                vec![user("He said Ping the editor. Then left.")],
                "reply 0.0 (quoted)",
            ),
            (
                "glued to a word",
                vec![user("Be briefPing the editor.")],
                "reply 0.0 (quoted)",
            ),
            (
                "a reminder before the prompt does not hide it",
                vec![
                    user("<system-reminder>x</system-reminder>"),
                    user("Ping the editor."),
                ],
                "reply 0.0",
            ),
            (
                "a reminder after the prompt does not hide it",
                vec![
                    user("Ping the editor."),
                    user("<system-reminder>\nmind the tools\n</system-reminder>"),
                ],
                "reply 0.0",
            ),
            (
                "an image-only user message after a tool output does not hide the prompt",
                vec![
                    user("Ping the editor."),
                    Entry::Other,
                    Entry::ToolOutput,
                    Entry::User(vec![]),
                ],
                "reply 0.1",
            ),
            (
                "a tool output's images in a captioned user message after it do not hide the prompt",
                vec![
                    user("Ping the editor."),
                    Entry::Other,
                    Entry::ToolOutput,
                    Entry::ToolMedia,
                ],
                "reply 0.1",
            ),
            (
                "the next prompt beside the previous turn's tool output",
                vec![
                    user("Ping the editor."),
                    Entry::Other,
                    Entry::ToolOutput,
                    user("Say hello."),
                ],
                "reply 1.0",
            ),
            (
                "no prompt text at all",
                vec![user("Generate a title")],
                "off script: no user message holds a scripted prompt (the last one says \"Generate a title\")",
            ),
            (
                "wrapped on lines of its own (Grok)",
                vec![user("<user_query>\nPing the editor.\n</user_query>")],
                "reply 0.0",
            ),
            (
                "a user message after the prompt that is neither a prompt nor a reminder",
                vec![
                    user("<user_query>\nPing the editor.\n</user_query>"),
                    Entry::ToolOutput,
                    user("Write a dashboard line for the reply."),
                ],
                "off script: after turn 1's prompt comes a user message that is neither a prompt, a tool output nor a tagged reminder: \"Write a dashboard line for the reply.\"",
            ),
            (
                "a failed turn's prompt and the next in one message (Claude Code): the later turn",
                vec![Entry::User(vec![
                    "Ping the editor.\n".into(),
                    "Say hello.".into(),
                ])],
                "reply 1.0",
            ),
            (
                "a reminder after the turn's answer: a request about the finished turn",
                vec![
                    user("Ping the editor."),
                    Entry::Other,
                    Entry::ToolOutput,
                    Entry::Answer,
                    user("<system-reminder>Generate a session title.</system-reminder>"),
                ],
                "off script: the conversation already holds turn 1's answer after its last tool output: a request about the finished turn",
            ),
            (
                "an answer before a tool output is a reply with text and a call",
                vec![
                    user("Ping the editor."),
                    Entry::Answer,
                    Entry::Other,
                    Entry::ToolOutput,
                ],
                "reply 0.1",
            ),
            (
                "empty conversation",
                vec![],
                "off script: the request carries no user text at all",
            ),
        ];
        for (case, conversation, want) in cases {
            assert_eq!(chosen(s.select(conversation)), *want, "{case}");
        }
    }

    fn committed(name: &str) -> ModelScript {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        ModelScript::from_scenario(&crate::corpus::scenario::find(dir, name).unwrap())
    }

    #[test]
    fn a_run_must_ask_for_every_reply_except_after_the_point_that_cuts_a_turn_short() {
        /// (scenario, (turn, reply) pairs served, replies named as unasked)
        type Case = (
            &'static str,
            &'static [(usize, usize)],
            &'static [&'static str],
        );
        let cases: &[Case] = &[
            ("text-only", &[(0, 0)], &[]),
            (
                "text-only",
                &[],
                &["turn 1 (\"Reply with the single word: hello\") reply 1: text \"hello\""],
            ),
            (
                "unity-call-allowed",
                &[(0, 0)],
                &[
                    "turn 1 (\"Ping the Unity editor.\") reply 2: text \"The editor answered pong.\"",
                ],
            ),
            // an interrupt: the turn's later replies may go unasked, the next turn's may not
            ("interrupt-slow-tool", &[(0, 0), (1, 0)], &[]),
            (
                "interrupt-slow-tool",
                &[(0, 0)],
                &[
                    "turn 2 (\"Reply with the single word: still-here\") reply 1: text \"still-here\"",
                ],
            ),
            // a refusal: the agent may end the turn there
            ("permission-denied", &[(0, 0)], &[]),
            (
                "permission-denied",
                &[],
                &[
                    "turn 1 (\"Ping the Unity editor, if you are allowed to.\") reply 1: call uap_ping (call_ping_denied)",
                ],
            ),
            // a steering message: the turn's rest may be folded into it
            ("steering", &[(0, 0), (1, 0)], &[]),
            ("model-error", &[(0, 0), (1, 0)], &[]),
            (
                "model-error",
                &[(1, 0)],
                &["turn 1 (\"Reply with the single word: hello\") reply 1: API error 400"],
            ),
        ];
        for (scenario, served, want) in cases {
            let served = served.iter().copied().collect();
            let got = committed(scenario).unrequested(&served);
            assert_eq!(got, *want, "{scenario} served {served:?}");
        }
    }

    #[test]
    fn the_agent_tool_roles_are_those_the_script_calls() {
        let gate = committed("script-gate");
        let roles: Vec<&str> = gate.agent_tool_roles().into_iter().collect();
        assert_eq!(roles, ["shell", "write_file"]);
        assert!(
            committed("unity-call-allowed")
                .agent_tool_roles()
                .is_empty()
        );
    }
}
