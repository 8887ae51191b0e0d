//! What the recording client negotiates beyond the scenario: the ACP
//! revision (`initialize`) and the profile's session config options, as the
//! bridge does them.

use serde_json::Value;

use super::{Driver, Halt, frames};
use acp_bridge::acp::revision::{self, Answered, Negotiation, Offer, Revision};

impl Driver<'_> {
    /// `initialize` offering the setup's revision; an agent that refuses a
    /// v2 offer is asked again with v1, as a real client falls back, and
    /// every answer is read as the bridge reads it ([`Negotiation`]). The
    /// answer as the capability rules read it ([`revision::v1_view`]).
    pub(super) async fn initialize(&mut self) -> Result<Value, Halt> {
        // the recorder negotiates as the bridge's `--acp-protocol auto` does
        let mut negotiation = Negotiation::start(match self.setup.offer {
            Revision::V1 => Offer::V1,
            Revision::V2 => Offer::Auto,
        });
        let mut init = self
            .call(
                frames::Request::Initialize {
                    offering: negotiation.offered(),
                },
                "the initialize response",
            )
            .await?;
        if let Some(error) = init.get("error").cloned() {
            let refused = negotiation.offered();
            if let Some(next) = negotiation.refused() {
                self.note(format!(
                    "the agent refused the ACP v{} offer ({error}); offering v{}",
                    refused.number(),
                    next.number()
                ));
                init = self
                    .call(
                        frames::Request::Initialize { offering: next },
                        "the initialize response",
                    )
                    .await?;
            }
        }
        let Some(result) = init.get("result").cloned() else {
            return Err(Halt::Error(anyhow::anyhow!("initialize failed: {init}")));
        };
        match negotiation.answered(&result) {
            Answered::Selected { revision, note } => {
                self.revision = revision;
                if let Some(note) = note.filter(|_| self.slot.proc == 1) {
                    self.note(note);
                }
            }
            Answered::Unusable(why) => return Err(Halt::Error(anyhow::anyhow!("{why}"))),
        }
        Ok(revision::v1_view(&result))
    }

    /// The profile's session config options, set as the bridge sets its
    /// `--acp-config` ones: right after the session opens, in order.
    pub(super) async fn set_config_options(&mut self) -> Result<(), Halt> {
        for (config_id, value) in self.setup.session.config_option_list() {
            let change = frames::ModeChange::SetConfigOption {
                config_id: config_id.clone(),
                value: value.clone(),
            };
            let request = frames::mode_change_request(&self.session_id, &change);
            let method = request.method(self.revision);
            let what = format!("the {method} response for {config_id}={value}");
            let response = self.call(request, &what).await?;
            if let Some(err) = response.get("error") {
                self.note(format!(
                    "the profile's config option {config_id}={value} was refused: {err}"
                ));
            }
        }
        Ok(())
    }
}
