//! ACP's protocol revisions as a client negotiates them: revision 1 and the
//! second revision (v2, in Preview). The client offers one in `initialize`;
//! the agent answers the revision it selected, at or below the offer.
//!
//! Decisions about what an agent can do are taken on one model, the v1
//! `initialize` answer: a v2 answer is read into that shape once
//! ([`v1_view`]), so every capability rule (HTTP MCP, images, additional
//! directories, resuming) is written once for both revisions.

use serde_json::{Map, Value, json};

use crate::acp::update_kind::UpdateKind;

/// A protocol revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Revision {
    #[default]
    V1,
    V2,
}

pub use crate::launch::Offer;

impl Offer {
    /// The revision the first `initialize` offers.
    pub fn first(self) -> Revision {
        match self {
            Offer::V1 => Revision::V1,
            Offer::V2 | Offer::Auto => Revision::V2,
        }
    }

    /// The revision to offer again after the agent refused `refused`
    /// (`None`: nothing left to offer).
    pub fn after_refusal(self, refused: Revision) -> Option<Revision> {
        match (self, refused) {
            (Offer::Auto, Revision::V2) => Some(Revision::V1),
            _ => None,
        }
    }
}

/// The client's name in a v2 `initialize` (`info`): the bridge, and the
/// recorder standing in for it (see [`crate::acp::request`]).
pub const CLIENT_NAME: &str = "acp-bridge";

impl Revision {
    /// Every revision this client speaks, oldest first.
    pub const ALL: [Revision; 2] = [Revision::V1, Revision::V2];

    /// The revision a `protocolVersion` number names (`None`: one this
    /// client does not speak).
    pub fn of_number(n: u64) -> Option<Revision> {
        match n {
            1 => Some(Revision::V1),
            2 => Some(Revision::V2),
            _ => None,
        }
    }

    pub const fn number(self) -> u64 {
        match self {
            Revision::V1 => 1,
            Revision::V2 => 2,
        }
    }

    /// The revision an answer to an offer of `offered` selected: one at or
    /// below the offer (`None`: a number not offered, or none).
    pub fn answering(offered: Revision, init_result: &Value) -> Option<Revision> {
        Revision::selected(init_result).filter(|s| s.number() <= offered.number())
    }

    /// The revision an `initialize` answer selected (`None`: a number this
    /// client does not speak, or none).
    pub fn selected(init_result: &Value) -> Option<Revision> {
        init_result["protocolVersion"]
            .as_u64()
            .and_then(Revision::of_number)
    }
}

/// The `initialize` exchange as a client negotiates a revision: what it
/// offers, what it offers again after a refusal, and what an answer means.
/// The bridge and the recorder both run it, so a recording's session is
/// the revision the bridge's would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Negotiation {
    offer: Offer,
    offered: Revision,
}

/// What an `initialize` answer means for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// The session goes on in `revision`; `note` says why it is not the
    /// one offered (the agent selected a lower one, or answered a number
    /// no revision names and is read as the offer).
    Selected {
        revision: Revision,
        note: Option<String>,
    },
    /// A v2 answer to a v1 offer: v1 frames would reach a v2 agent.
    Unusable(String),
}

impl Negotiation {
    pub fn start(offer: Offer) -> Negotiation {
        Negotiation {
            offer,
            offered: offer.first(),
        }
    }

    /// The revision the last `initialize` offered.
    pub fn offered(self) -> Revision {
        self.offered
    }

    /// The agent refused the offer: the revision to offer next (now the one
    /// offered), or `None` when nothing is left.
    pub fn refused(&mut self) -> Option<Revision> {
        let next = self.offer.after_refusal(self.offered)?;
        self.offered = next;
        Some(next)
    }

    /// What the agent's `initialize` answer selected.
    pub fn answered(self, init_result: &Value) -> Answered {
        let offered = self.offered;
        match Revision::answering(offered, init_result) {
            Some(selected) => Answered::Selected {
                revision: selected,
                note: (selected != offered).then(|| {
                    format!(
                        "ACP v{} offered, the agent selected v{}",
                        offered.number(),
                        selected.number()
                    )
                }),
            },
            None if Revision::selected(init_result) == Some(Revision::V2)
                && init_result.get("info").is_some()
                && init_result.get("agentCapabilities").is_none() =>
            {
                Answered::Unusable(
                    "the agent answered ACP v2 to a v1 offer; a v1 client cannot go on (try --acp-protocol auto)"
                        .into(),
                )
            }
            // a version no revision names (a v1 agent of old answers its
            // own number): read as the revision offered
            None => Answered::Selected {
                revision: offered,
                note: Some(format!(
                    "the agent answered protocol version {} (we offered {}); going on as v{}",
                    init_result["protocolVersion"],
                    offered.number(),
                    offered.number()
                )),
            },
        }
    }
}

/// An `initialize` answer in the v1 shape the capability rules read: a v1
/// answer as it is; a v2 answer with `info` as `agentInfo` and
/// `capabilities.session` as `agentCapabilities` (`mcp` as
/// `mcpCapabilities` with `http: true` where HTTP is advertised, `prompt`'s
/// present kinds as booleans, `loadSession` since v2 resumes every session
/// through `session/resume`). Keys no rule reads are kept beside.
pub fn v1_view(init_result: &Value) -> Value {
    if Revision::selected(init_result) != Some(Revision::V2) {
        return init_result.clone();
    }
    let session = &init_result["capabilities"]["session"];
    let advertised = |v: &Value| !v.is_null();
    let mut caps = Map::new();
    caps.insert("loadSession".into(), true.into());
    let mcp = &session["mcp"];
    if mcp.is_object() {
        caps.insert(
            "mcpCapabilities".into(),
            json!({"http": advertised(&mcp["http"]), "stdio": advertised(&mcp["stdio"])}),
        );
    }
    let prompt = &session["prompt"];
    if prompt.is_object() {
        caps.insert(
            "promptCapabilities".into(),
            json!({
                "image": advertised(&prompt["image"]),
                "audio": advertised(&prompt["audio"]),
                "embeddedContext": advertised(&prompt["embeddedContext"]),
            }),
        );
    }
    if advertised(&session["additionalDirectories"]) {
        caps.insert(
            "sessionCapabilities".into(),
            json!({"additionalDirectories": session["additionalDirectories"].clone()}),
        );
    }
    let mut view = Map::new();
    view.insert("protocolVersion".into(), 2.into());
    view.insert("agentInfo".into(), init_result["info"].clone());
    view.insert("agentCapabilities".into(), caps.into());
    view.insert(
        "authMethods".into(),
        init_result
            .get("authMethods")
            .cloned()
            .unwrap_or_else(|| json!([])),
    );
    view.into()
}

/// Whether a `session/update` ends the foreground work of a v2 turn: a
/// `state_update` whose `state` is `idle`.
pub fn is_idle_update(update: &Value) -> bool {
    let kind = update["sessionUpdate"].as_str().unwrap_or_default();
    UpdateKind::parse(kind) == UpdateKind::State && update["state"] == "idle"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v2_answer_reads_as_the_v1_capabilities_it_advertises() {
        let v2 = json!({
            "protocolVersion": 2,
            "info": {"name": "agent", "version": "2.6.0"},
            "capabilities": {"session": {
                "mcp": {"http": {}},
                "prompt": {"image": {}, "embeddedContext": null},
                "additionalDirectories": {}
            }},
            "authMethods": [{"methodId": "key"}]
        });
        let view = v1_view(&v2);
        assert_eq!(view["agentInfo"]["version"], "2.6.0");
        let caps = crate::acp::capabilities::AgentCapabilities::read(&view);
        assert!(caps.http_mcp && caps.images && caps.load_session && caps.additional_directories);
        let bare = v1_view(&json!({"protocolVersion": 2, "info": {"name": "a", "version": "1"}}));
        let bare = crate::acp::capabilities::AgentCapabilities::read(&bare);
        assert!(!bare.http_mcp && !bare.images);
        // a v1 answer is its own view
        let v1 = json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": false}});
        assert_eq!(v1_view(&v1), v1);
    }

    #[test]
    fn a_negotiation_offers_again_after_a_refusal_only_under_auto_and_reads_each_answer() {
        let mut auto = Negotiation::start(Offer::Auto);
        assert_eq!(auto.offered(), Revision::V2);
        assert_eq!(auto.refused(), Some(Revision::V1));
        assert_eq!(auto.offered(), Revision::V1);
        assert_eq!(auto.refused(), None);
        assert_eq!(Negotiation::start(Offer::V2).refused(), None);
        let v2 = Negotiation::start(Offer::V2);
        assert_eq!(
            v2.answered(&json!({"protocolVersion": 1})),
            Answered::Selected {
                revision: Revision::V1,
                note: Some("ACP v2 offered, the agent selected v1".into())
            }
        );
        assert_eq!(
            v2.answered(&json!({"protocolVersion": 2})),
            Answered::Selected {
                revision: Revision::V2,
                note: None
            }
        );
        let v1 = Negotiation::start(Offer::V1);
        assert!(matches!(
            v1.answered(&json!({"protocolVersion": 2, "info": {"name": "a"}})),
            Answered::Unusable(_)
        ));
        assert_eq!(
            v1.answered(&json!({"protocolVersion": 7})),
            Answered::Selected {
                revision: Revision::V1,
                note: Some(
                    "the agent answered protocol version 7 (we offered 1); going on as v1".into()
                )
            }
        );
    }

    #[test]
    fn the_selected_revision_is_read_from_the_answer() {
        assert_eq!(
            Revision::selected(&json!({"protocolVersion": 2})),
            Some(Revision::V2)
        );
        assert_eq!(
            Revision::selected(&json!({"protocolVersion": 1})),
            Some(Revision::V1)
        );
        assert_eq!(Revision::selected(&json!({"protocolVersion": 3})), None);
        assert_eq!(Revision::selected(&json!({})), None);
        assert!(is_idle_update(
            &json!({"sessionUpdate": "state_update", "state": "idle"})
        ));
        assert!(!is_idle_update(
            &json!({"sessionUpdate": "state_update", "state": "running"})
        ));
    }
}
