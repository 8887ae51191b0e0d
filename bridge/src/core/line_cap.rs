//! A line over the host's line cap (`--max-line-bytes`): the host skips it
//! unread and tells the core as soon as the cap is passed. What the line
//! said is lost, so a running turn cannot be trusted to finish: it ends
//! `is_error` with a text naming the cap, the agent's prompt is cancelled
//! and its late answer dropped (as after an interrupt's grace). A panel line
//! lost with no turn running was most likely a prompt: it gets an `is_error`
//! result too, so the panel is not left waiting.

use std::time::Duration;

use super::{Bridge, Phase};
use crate::core::turn::Turn;

impl Bridge {
    /// A line from the agent grew past `cap` bytes and is being skipped.
    pub fn on_agent_line_over_cap(&mut self, cap: usize, now: Duration) -> crate::Output {
        self.diag(over_cap_text("the agent", cap));
        if self.turn.is_some() {
            self.end_turn_for_lost_line(over_cap_text("the agent", cap), now);
        }
        self.take()
    }

    /// A line from the panel grew past `cap` bytes and is being skipped.
    pub fn on_panel_line_over_cap(&mut self, cap: usize, now: Duration) -> crate::Output {
        self.announce_held_back();
        let why = over_cap_text("the panel", cap);
        self.diag(why.clone());
        if self.turn.is_some() {
            self.end_turn_for_lost_line(why, now);
        } else if matches!(self.phase, Phase::Ready | Phase::Failed) && !self.startup.has_deferred()
        {
            let mut t = Turn::new(now);
            t.fail(format!("{why}; if it was a prompt, it was not sent"));
            self.turn = Some(t);
            self.end_turn(now);
        }
        self.take()
    }

    fn end_turn_for_lost_line(&mut self, why: String, now: Duration) {
        if self.phase == Phase::Ready
            && let Some(sid) = self.session.id.clone()
        {
            self.send_cancel(&sid);
        }
        self.give_up_turn(
            format!("{why}; the turn was ended"),
            "the turn a skipped line ended",
            now,
        );
    }
}

fn over_cap_text(from: &str, cap: usize) -> String {
    format!(
        "a line from {from} was longer than the line cap of {cap} bytes (--max-line-bytes); \
         the bridge skipped it"
    )
}
