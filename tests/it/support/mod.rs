//! Shared by the scripted model server's tests.

#![allow(dead_code)]

pub mod record_run;

/// The two-turn scenario the model server tests answer from: the first
/// turn's first reply thinks, says "Pinging." and calls `uap_slow` (call id
/// `call_1`), its second reply says the editor answered pong; the second
/// turn's one reply is an API error with `status` and `message`. Each test
/// file picks its own error so a reply can be traced to the file's script.
pub fn ping_then_error_scenario(status: u16, message: &str) -> String {
    format!(
        r#"
name = "t"
summary = "model server test double scenario"
tools = ["uap_slow"]

[[step]]
panel = "prompt"
text = "Ping the Unity editor."
  [[step.model]]
  thinking = "I should ping."
  text = "Pinging."
  tool_calls = [{{ tool = "uap_slow", arguments = {{ ms = 1 }}, id = "call_1" }}]
  [[step.model]]
  text = "The editor answered pong."

[[step]]
panel = "prompt"
text = "Fail please."
  [[step.model]]
  error = {{ status = {status}, message = {message:?} }}
"#
    )
}
