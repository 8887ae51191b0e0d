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
    Reply { turn: usize, reply: usize, model: &'a ModelReply },
    /// The turn is known but its replies are used up (`outputs` tool
    /// outputs came back; the script has fewer replies than that + 1).
    PastEnd { turn: usize, outputs: usize },
    /// No user message carries a prompt text: not a scripted turn.
    NotATurn,
}

impl ModelScript {
    /// Choose the reply for a conversation. A user message belongs to a
    /// turn when one of its text parts contains the turn's prompt text
    /// (custom instructions may share the part; no prompt text contains
    /// another, the loader checks). Searched from the end, so the newest
    /// turn wins.
    pub fn select(&self, conversation: &[Entry]) -> Selection<'_> {
        let found = conversation.iter().enumerate().rev().find_map(|(pos, entry)| {
            let Entry::User(parts) = entry else { return None };
            self.turns
                .iter()
                .position(|t| parts.iter().any(|p| p.contains(t.prompt_text.as_str())))
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
            Some(model) => Selection::Reply { turn, reply: outputs, model },
            None => Selection::PastEnd { turn, outputs },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str) -> ModelReply {
        ModelReply { text: Some(text.into()), ..Default::default() }
    }

    fn script() -> ModelScript {
        ModelScript {
            turns: vec![
                ScriptTurn { prompt_text: "Ping the editor.".into(), replies: vec![reply("a0"), reply("a1")] },
                ScriptTurn { prompt_text: "Say hello.".into(), replies: vec![reply("b0")] },
            ],
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
            ("first request of turn 1", vec![user("<env/>"), user("Ping the editor.")], "reply 0.0"),
            (
                "after one tool output",
                vec![user("Ping the editor."), Entry::Other, Entry::ToolOutput],
                "reply 0.1",
            ),
            (
                "outputs of an earlier turn do not count",
                vec![user("Ping the editor."), Entry::ToolOutput, Entry::Other, user("Say hello.")],
                "reply 1.0",
            ),
            (
                "replies used up",
                vec![user("Ping the editor."), Entry::ToolOutput, Entry::ToolOutput],
                "past end 0 after 2",
            ),
            (
                "custom instructions merged into the part",
                vec![user("Be brief.\n\nPing the editor.")],
                "reply 0.0",
            ),
            ("no prompt text at all", vec![user("Generate a title")], "not a turn"),
            ("empty conversation", vec![], "not a turn"),
        ];
        for (case, conversation, want) in cases {
            assert_eq!(chosen(s.select(conversation)), *want, "{case}");
        }
    }
}
