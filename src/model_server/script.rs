//! The model script: which reply answers which model request.
//!
//! Selection reads only the request body, never the clock or the order of
//! arrival, so a retried, duplicated or out-of-band request (title
//! generation) cannot shift the script: find the last user message that
//! carries one of the scenario's prompt texts, count the tool outputs that
//! came back after it, and use that count as the index into the turn's
//! replies.

use crate::scenario::{ModelReply, Scenario};

/// All scripted turns of a scenario (prompt and steer steps, in order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelScript {
    pub turns: Vec<ScriptTurn>,
    /// Call unity-ops tools by name even where the profile maps an
    /// `mcp_call` meta-tool (the scenario's `mcp_calls = "direct"`).
    pub direct_mcp_calls: bool,
}

/// One turn: the prompt text that identifies it and the replies to its
/// model requests (reply `i` answers the request that carries `i` tool
/// outputs after the prompt).
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptTurn {
    pub prompt_text: String,
    pub replies: Vec<ModelReply>,
}

impl ModelScript {
    pub fn from_scenario(scenario: &Scenario) -> ModelScript {
        ModelScript {
            turns: scenario
                .prompts()
                .map(|p| ScriptTurn {
                    prompt_text: p.text.clone(),
                    replies: p.model.clone(),
                })
                .collect(),
            direct_mcp_calls: scenario.direct_mcp_calls,
        }
    }
}

/// A flavour-neutral view of a request's conversation, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A user message: the texts of its text parts.
    User(Vec<String>),
    /// A tool output sent back to the model.
    ToolOutput,
    /// Anything else (assistant messages, tool calls, reasoning...).
    Other,
}

/// What the script says about one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection<'a> {
    /// A scripted reply: `turn` and `reply` are 0-based indices.
    Reply {
        turn: usize,
        reply: usize,
        model: &'a ModelReply,
    },
    /// The turn is known but its replies are used up (`outputs` tool
    /// outputs came back; the script has fewer replies than that + 1).
    PastEnd { turn: usize, outputs: usize },
    /// No user message carries a prompt text: not a scripted turn.
    NotATurn,
}

impl ModelScript {
    /// Choose the reply for a conversation. A user message belongs to a
    /// turn when one of its text parts holds the turn's prompt text on lines
    /// of its own (agents wrap it, e.g. Grok's `<user_query>` lines, or put
    /// custom instructions before it; no prompt text contains another, the
    /// loader checks); a prompt quoted inside a sentence does not count.
    /// Searched from the end, so the newest turn wins. A request whose last
    /// entry is a user message holding no prompt is not a turn (Grok's
    /// dashboard-line request repeats the conversation and then asks).
    pub fn select(&self, conversation: &[Entry]) -> Selection<'_> {
        // A turn's request ends with its prompt or with tool outputs; one that
        // ends with some other user message is a side request (a title or
        // dashboard line about the conversation), whatever came before.
        if let Some(Entry::User(parts)) = conversation.last()
            && !self
                .turns
                .iter()
                .any(|t| parts.iter().any(|p| holds_as_lines(p, &t.prompt_text)))
        {
            return Selection::NotATurn;
        }
        let found = conversation
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
                    .rposition(|t| parts.iter().any(|p| holds_as_lines(p, &t.prompt_text)))
                    .map(|turn| (pos, turn))
            });
        let Some((pos, turn)) = found else {
            return Selection::NotATurn;
        };
        let outputs = conversation[pos + 1..]
            .iter()
            .filter(|e| matches!(e, Entry::ToolOutput))
            .count();
        match self.turns[turn].replies.get(outputs) {
            Some(model) => Selection::Reply {
                turn,
                reply: outputs,
                model,
            },
            None => Selection::PastEnd { turn, outputs },
        }
    }
}

/// Whether `text` occurs in `part` with nothing but whitespace after it on
/// its last line, and before it on its first line either nothing but
/// whitespace or a finished sentence and a space: Grok Build joins the
/// prompt's text blocks (custom instructions, then the prompt) with one
/// space. A prompt quoted inside a sentence still does not count.
fn holds_as_lines(part: &str, text: &str) -> bool {
    let text = text.trim();
    if text.is_empty() {
        return false;
    }
    part.match_indices(text).any(|(at, m)| {
        let before = &part[..at];
        let after = &part[at + m.len()..];
        let line_before = before.rsplit('\n').next().unwrap_or_default();
        let line_after = after.split('\n').next().unwrap_or_default();
        let after_sentence = line_before.ends_with(char::is_whitespace)
            && line_before.trim_end().ends_with(['.', '!', '?']);
        (line_before.trim().is_empty() || after_sentence) && line_after.trim().is_empty()
    })
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
                },
                ScriptTurn {
                    prompt_text: "Say hello.".into(),
                    replies: vec![reply("b0")],
                },
            ],
            direct_mcp_calls: false,
        }
    }

    fn user(t: &str) -> Entry {
        Entry::User(vec![t.into()])
    }

    fn chosen(sel: Selection<'_>) -> String {
        match sel {
            Selection::Reply { turn, reply, .. } => format!("reply {turn}.{reply}"),
            Selection::PastEnd { turn, outputs } => format!("past end {turn} after {outputs}"),
            Selection::NotATurn => "not a turn".into(),
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
                "past end 0 after 2",
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
                "quoted inside a sentence",
                vec![user("He said Ping the editor. Then left.")],
                "not a turn",
            ),
            (
                "glued to a word",
                vec![user("Be brief.Ping the editor.")],
                "not a turn",
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
                "no prompt text at all",
                vec![user("Generate a title")],
                "not a turn",
            ),
            (
                "wrapped on lines of its own (Grok)",
                vec![user("<user_query>\nPing the editor.\n</user_query>")],
                "reply 0.0",
            ),
            (
                "ends with a user message holding no prompt: a side request",
                vec![
                    user("<user_query>\nPing the editor.\n</user_query>"),
                    Entry::ToolOutput,
                    user(
                        "Write a dashboard line for the reply after \"user_query Ping the editor. /user_query\".",
                    ),
                ],
                "not a turn",
            ),
            (
                "a failed turn's prompt and the next in one message (Claude Code): the later turn",
                vec![Entry::User(vec![
                    "Ping the editor.\n".into(),
                    "Say hello.".into(),
                ])],
                "reply 1.0",
            ),
            ("empty conversation", vec![], "not a turn"),
        ];
        for (case, conversation, want) in cases {
            assert_eq!(chosen(s.select(conversation)), *want, "{case}");
        }
    }
}
