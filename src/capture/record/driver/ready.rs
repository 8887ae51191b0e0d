//! The driver's `[ready]` wait: the profile's conditions on the agent
//! process just started, then any settle the profile keeps.

use std::time::Duration;

use tokio::time::Instant;

use super::{Driver, Halt};
use crate::corpus::profile::readiness::Condition;

impl Driver<'_> {
    /// What the profile says to wait for before the first prompt: each
    /// condition for the session method (`load`: session/load) seen on this
    /// process, bounded by `timeout_ms` in all.
    pub(super) async fn wait_ready(&mut self, load: bool) -> Result<(), Halt> {
        let ready = self.setup.ready.clone();
        let timeout = Duration::from_millis(ready.timeout_ms);
        let started = Instant::now();
        for condition in self.setup.ready_conditions[usize::from(load)].clone() {
            let what = format!("{} before prompting", condition.describe());
            let left = timeout.saturating_sub(started.elapsed());
            self.wait_until(left, &what, |d| d.ready_holds(&condition))
                .await?;
        }
        if ready.settle_ms > 0 {
            let deadline = Instant::now() + Duration::from_millis(ready.settle_ms);
            loop {
                match self.pump(deadline, "settle").await {
                    Ok(()) => {}
                    Err(Halt::Timeout(_)) => break,
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(())
    }

    /// Whether a `[ready]` condition has happened on this agent process.
    fn ready_holds(&self, condition: &Condition) -> bool {
        match condition {
            Condition::Notification(m) => self.notifications_seen.contains(m),
            // v2 answers the session call with its first commands, where
            // v1 sends them as an update
            Condition::SessionUpdate(k) => {
                self.updates_seen.contains(k)
                    || (k == "available_commands_update"
                        && self.revision == acp_bridge::acp::revision::Revision::V2
                        && self.session_result.get("availableCommands").is_some())
            }
            Condition::McpRequest(m) => {
                let now = self.setup.mcp_methods.borrow().get(m).copied().unwrap_or(0);
                now > self.mcp_at_start.get(m).copied().unwrap_or(0)
            }
        }
    }
}
