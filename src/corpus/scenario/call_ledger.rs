//! The tool calls of a running turn, as the panel side learns of them, so a
//! permission step can tell "a request is still coming" from "this call
//! went ahead without asking". Agents differ in what they ask about (one
//! honours a tool's `readOnlyHint` and asks nothing), so a permission step
//! never waits for the turn's end: it is done when a call first seen after
//! the step began ran or finished without a permission request. The
//! recorder (ACP frames, stub-mcp calls) and the replay panel driver
//! (stream-json lines) both keep one, keyed by their own call ids.

/// One tool call of the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    id: String,
    asked: bool,
    ran: bool,
}

/// The turn's tool calls in the order they were first seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallLedger {
    calls: Vec<Call>,
}

impl CallLedger {
    fn entry(&mut self, id: &str) -> &mut Call {
        let at = match self.calls.iter().position(|c| c.id == id) {
            Some(at) => at,
            None => {
                self.calls.push(Call {
                    id: id.to_string(),
                    asked: false,
                    ran: false,
                });
                self.calls.len() - 1
            }
        };
        &mut self.calls[at]
    }

    /// The agent reported the call (a `tool_call`, a `tool_use` block).
    pub fn seen(&mut self, id: &str) {
        self.entry(id);
    }

    /// The agent asked permission for the call.
    pub fn asked(&mut self, id: &str) {
        self.entry(id).asked = true;
    }

    /// The call is running (its request reached the tool's server) or
    /// finished (completed or failed).
    pub fn ran(&mut self, id: &str) {
        self.entry(id).ran = true;
    }

    /// Every known call not asked about is running: a tool server saw a
    /// call, and only calls that needed no permission can have reached it.
    pub fn unasked_ran(&mut self) {
        for c in self.calls.iter_mut().filter(|c| !c.asked) {
            c.ran = true;
        }
    }

    /// A mark for [`CallLedger::unasked_since`]: calls seen from now on.
    pub fn mark(&self) -> usize {
        self.calls.len()
    }

    /// A call first seen at or after `mark` that ran without a permission
    /// request: the evidence that none is coming for it.
    pub fn unasked_since(&self, mark: usize) -> Option<&str> {
        self.calls
            .get(mark..)?
            .iter()
            .find(|c| c.ran && !c.asked)
            .map(|c| c.id.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_call_seen_after_the_mark_that_ran_unasked_is_evidence() {
        // (events, mark taken after this many events, want)
        type Event = (&'static str, &'static str);
        let cases: &[(&str, &[Event], usize, Option<&str>)] = &[
            ("nothing yet", &[], 0, None),
            ("seen, not run", &[("seen", "a")], 0, None),
            (
                "asked first",
                &[("seen", "a"), ("asked", "a"), ("ran", "a")],
                0,
                None,
            ),
            ("ran unasked", &[("seen", "a"), ("ran", "a")], 0, Some("a")),
            (
                "a server saw a call",
                &[("seen", "a"), ("server", "")],
                0,
                Some("a"),
            ),
            (
                "an earlier approved call running is no evidence",
                &[("seen", "a"), ("asked", "a"), ("ran", "a"), ("seen", "b")],
                1,
                None,
            ),
            (
                "an earlier unasked call is before the mark",
                &[("seen", "a"), ("ran", "a"), ("seen", "b")],
                1,
                None,
            ),
            (
                "announced only in the request (asks first)",
                &[("asked", "a"), ("server", "")],
                0,
                None,
            ),
        ];
        for (name, events, mark_after, want) in cases {
            let mut l = CallLedger::default();
            let mut mark = 0;
            for (k, (what, id)) in events.iter().enumerate() {
                if k == *mark_after {
                    mark = l.mark();
                }
                match *what {
                    "seen" => l.seen(id),
                    "asked" => l.asked(id),
                    "ran" => l.ran(id),
                    _ => l.unasked_ran(),
                }
            }
            if events.len() <= *mark_after {
                mark = l.mark();
            }
            assert_eq!(l.unasked_since(mark), *want, "{name}");
        }
    }
}
