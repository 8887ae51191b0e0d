//! The ACP agent the bridge benches run as their own child: it answers the
//! handshake the bridge sends and leaves the prompt to the bench.

use std::io::{BufRead, StdoutLock, Write};

use serde_json::{Value, json};

/// Answers `initialize` and `session/new` on stdin/stdout; on each
/// `session/prompt` runs `on_prompt` with stdout, whose `Some(result)`
/// answers the prompt and `None` ends the agent.
pub fn serve(mut on_prompt: impl FnMut(&mut StdoutLock<'static>) -> Option<Value>) {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let result = match v["method"].as_str() {
            Some("initialize") => {
                json!({"protocolVersion":1,"agentCapabilities":{},"authMethods":[]})
            }
            Some("session/new") => json!({"sessionId":"s1"}),
            Some("session/prompt") => match on_prompt(&mut out) {
                Some(result) => result,
                None => return,
            },
            _ => continue,
        };
        let line = json!({"jsonrpc":"2.0","id":v["id"],"result":result});
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
