//! Permission requests between the agent (`session/request_permission`) and
//! the panel (`can_use_tool` / its `control_response`).
//!
//! Order rules (the recorder mirrors them): deny + interrupt = answer with
//! the reject option, then `session/cancel`; interrupt = `session/cancel`,
//! then every pending request answered `cancelled`.

use serde_json::Value;

use crate::acp::client::PermissionIntent;

/// How many permission requests may wait for the panel at once: a panel
/// shows one dialog at a time, and each keeps the call's input, so an agent
/// that asks without end must not grow the bridge. Past it a request is
/// answered `cancelled` with a diagnostic.
pub const MAX_PENDING: usize = 64;

/// The permission requests waiting for the panel, each under the id the
/// panel answers (`acp-perm-N`, numbered from 1 over the session).
#[derive(Debug, Default)]
pub(crate) struct PanelPermissions {
    waiting: Vec<PendingPermission>,
    asked: u64,
}

/// A request not put to the panel: [`MAX_PENDING`] wait already.
#[derive(Debug)]
pub(crate) struct Full;

impl PanelPermissions {
    /// The id the next request goes to the panel under, or [`Full`].
    pub fn next_id(&mut self) -> Result<String, Full> {
        if self.waiting.len() >= MAX_PENDING {
            return Err(Full);
        }
        self.asked += 1;
        Ok(format!("acp-perm-{}", self.asked))
    }

    /// A request put to the panel under the id [`PanelPermissions::next_id`] gave.
    pub fn asked(&mut self, permission: PendingPermission) {
        self.waiting.push(permission);
    }

    /// The request the panel answered, taken from those waiting.
    pub fn answered(&mut self, request_id: &str) -> Option<PendingPermission> {
        let pos = self
            .waiting
            .iter()
            .position(|p| p.request_id == request_id)?;
        Some(self.waiting.remove(pos))
    }

    /// Every request still waiting, taken (to answer them `cancelled`).
    pub fn take_all(&mut self) -> Vec<PendingPermission> {
        std::mem::take(&mut self.waiting)
    }

    /// Forgets every request (nobody is left to answer them).
    pub fn clear(&mut self) {
        self.waiting.clear();
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// A permission request the panel has not answered yet.
#[derive(Debug)]
pub(crate) struct PendingPermission {
    /// `acp-perm-N`, the id the panel answers.
    pub request_id: String,
    /// The agent's JSON-RPC id, echoed verbatim.
    pub rpc_id: crate::acp::message::RequestId,
    pub options: Vec<crate::acp::permission_option::PermissionOption>,
    pub tool_use_id: String,
    pub tool_name: String,
    pub input: Value,
}

/// The panel's answer to a `can_use_tool` request (public: the harness's tap
/// importer reads a tapped answer the same way).
#[derive(Debug, PartialEq, Eq)]
pub struct PanelAnswer {
    pub allow: bool,
    /// `updatedPermissions` holds an allow rule: the user chose "always allow".
    pub always: bool,
    pub interrupt: bool,
    /// A `setMode` update in `updatedPermissions` (e.g. "accept edits from
    /// now on"): the permission mode the panel switched to.
    pub set_mode: Option<String>,
}

impl PanelAnswer {
    /// Reads `response` of a panel `control_response`; an error answer or an
    /// unreadable one denies.
    pub fn parse(response: &Value) -> PanelAnswer {
        let body = &response["response"];
        let allow = response["subtype"] == "success" && body["behavior"] == "allow";
        // only an allow rule is "always allow"; other updates (setMode,
        // addDirectories, ...) do not widen this tool's grant
        let always = allow
            && body["updatedPermissions"].as_array().is_some_and(|a| {
                a.iter().any(|u| {
                    matches!(u["type"].as_str(), Some("addRules" | "replaceRules"))
                        && u["behavior"].as_str().unwrap_or("allow") == "allow"
                })
            });
        let interrupt = !allow && body["interrupt"].as_bool() == Some(true);
        let set_mode = body["updatedPermissions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|u| u["type"] == "setMode")
            .and_then(|u| u["mode"].as_str())
            .filter(|_| allow)
            .map(str::to_string);
        PanelAnswer {
            allow,
            always,
            interrupt,
            set_mode,
        }
    }

    pub fn intent(&self) -> PermissionIntent {
        match (self.allow, self.always) {
            (true, true) => PermissionIntent::AllowAlways,
            (true, false) => PermissionIntent::AllowOnce,
            (false, _) => PermissionIntent::Deny,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn panel_answers_map_to_intents() {
        let cases = [
            (
                json!({"subtype": "success", "response": {"behavior": "allow", "updatedInput": {}}}),
                PermissionIntent::AllowOnce,
                false,
            ),
            (
                json!({"subtype": "success", "response": {"behavior": "allow", "updatedInput": {}, "updatedPermissions": [{"type": "addRules"}]}}),
                PermissionIntent::AllowAlways,
                false,
            ),
            (
                json!({"subtype": "success", "response": {"behavior": "allow", "updatedPermissions": []}}),
                PermissionIntent::AllowOnce,
                false,
            ),
            (
                json!({"subtype": "success", "response": {"behavior": "deny", "message": "no"}}),
                PermissionIntent::Deny,
                false,
            ),
            (
                json!({"subtype": "success", "response": {"behavior": "deny", "message": "no", "interrupt": true}}),
                PermissionIntent::Deny,
                true,
            ),
            (
                json!({"subtype": "error", "error": "x"}),
                PermissionIntent::Deny,
                false,
            ),
            (
                json!({"subtype": "success", "response": {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]}}),
                PermissionIntent::AllowOnce,
                false,
            ),
            (
                json!({"subtype": "success", "response": {"behavior": "allow", "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "deny"}]}}),
                PermissionIntent::AllowOnce,
                false,
            ),
        ];
        for (resp, intent, interrupt) in cases {
            let a = PanelAnswer::parse(&resp);
            assert_eq!((a.intent(), a.interrupt), (intent, interrupt), "{resp}");
        }
    }
}
