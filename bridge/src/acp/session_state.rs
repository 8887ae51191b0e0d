//! The session an agent answered `session/new` or `session/load` with, read
//! once into typed state: its modes, its models and its config options
//! (both revisions' spellings of an option's id), kept current from the
//! agent's `current_mode_update` and `config_option_update`. The panel's
//! mode and model changes resolve against this ([`crate::acp::client`],
//! [`crate::acp::permission_mode`]). Tolerant: an entry without an id, or a
//! field of another type, reads as absent.

use serde_json::Value;

/// The session's modes, models and config options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionState {
    /// `modes`, when the agent offers modes.
    pub modes: Option<Offered>,
    /// `models.availableModels`, when it is a list (an empty one too: then
    /// the agent offers no models, whatever its config options say).
    pub models: Option<Vec<Offer>>,
    /// `models.currentModelId`.
    pub current_model: Option<String>,
    /// `configOptions`, in the agent's order.
    pub config_options: Vec<ConfigOption>,
}

/// A list the agent offers (modes, models) and the current one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Offered {
    pub current: Option<String>,
    pub available: Vec<Offer>,
}

/// One mode, model or config value: its id, and its name and description
/// when the agent gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    pub id: String,
    pub name: Option<String>,
    pub description: Option<String>,
}

impl Offer {
    /// The name, else the id.
    pub fn name_or_id(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }
}

/// One config option.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigOption {
    /// `id` (ACP v1), `configId` (v2).
    pub id: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
    /// `mode`, `model`, `thought_level`, ...
    pub category: Option<String>,
    /// `type`: `select`, `boolean`, ...
    pub kind: Option<String>,
    pub current: Current,
    /// A select's values, groups flattened, in order.
    pub values: Vec<Offer>,
}

/// An option's `currentValue`.
#[derive(Debug, Clone, PartialEq)]
pub enum Current {
    Text(String),
    Bool(bool),
    /// Missing, or of another type.
    None,
}

impl ConfigOption {
    fn read(o: &Value) -> ConfigOption {
        let values = o["options"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|v| match v["options"].as_array() {
                Some(group) => group.iter().collect::<Vec<_>>(),
                None => vec![v],
            })
            .filter_map(|v| offer(v, "value"))
            .collect();
        ConfigOption {
            id: text(o, "id").or_else(|| text(o, "configId")),
            name: text(o, "name"),
            description: text(o, "description"),
            category: text(o, "category"),
            kind: text(o, "type"),
            current: match &o["currentValue"] {
                Value::String(s) => Current::Text(s.clone()),
                Value::Bool(b) => Current::Bool(*b),
                _ => Current::None,
            },
            values,
        }
    }

    /// A boolean option: typed so, or holding a boolean.
    pub fn is_bool(&self) -> bool {
        self.kind.as_deref() == Some("boolean") || matches!(self.current, Current::Bool(_))
    }

    /// The current value when it is text.
    pub fn current_text(&self) -> Option<&str> {
        match &self.current {
            Current::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl SessionState {
    /// Reads a `session/new` or `session/load` result.
    pub fn read(result: &Value) -> SessionState {
        let offers = |list: &Value, id_key: &str| -> Option<Vec<Offer>> {
            Some(
                list.as_array()?
                    .iter()
                    .filter_map(|v| offer(v, id_key))
                    .collect(),
            )
        };
        let modes = &result["modes"];
        SessionState {
            modes: modes.is_object().then(|| Offered {
                current: text(modes, "currentModeId"),
                available: offers(&modes["availableModes"], "id").unwrap_or_default(),
            }),
            models: offers(&result["models"]["availableModels"], "modelId"),
            current_model: text(&result["models"], "currentModelId"),
            config_options: config_options(&result["configOptions"]).unwrap_or_default(),
        }
    }

    /// The first config option of `category`.
    pub fn option_of_category(&self, category: &str) -> Option<&ConfigOption> {
        self.config_options
            .iter()
            .find(|o| o.category.as_deref() == Some(category))
    }

    /// Where the agent's mode stands: its current mode and its mode option's
    /// value, to tell later whether the agent moved it.
    pub fn mode_marks(&self) -> (Option<String>, Option<String>) {
        let mode = self.modes.as_ref().and_then(|m| m.current.clone());
        let option = self.option_of_category("mode");
        (
            mode,
            option.and_then(|o| o.current_text().map(str::to_string)),
        )
    }

    /// A `current_mode_update`: the current mode, when the session has modes.
    pub fn set_current_mode(&mut self, id: &str) {
        if let Some(modes) = self.modes.as_mut() {
            modes.current = Some(id.to_string());
        }
    }

    /// A `config_option_update`'s options: they replace the session's.
    pub fn set_config_options(&mut self, options: Vec<ConfigOption>) {
        self.config_options = options;
    }
}

/// A list of config options; `None` when `list` is no list.
pub fn config_options(list: &Value) -> Option<Vec<ConfigOption>> {
    Some(list.as_array()?.iter().map(ConfigOption::read).collect())
}

fn text(v: &Value, key: &str) -> Option<String> {
    v[key].as_str().map(str::to_string)
}

/// An offer whose id is the string at `id_key`.
fn offer(v: &Value, id_key: &str) -> Option<Offer> {
    Some(Offer {
        id: v[id_key].as_str()?.to_string(),
        name: text(v, "name"),
        description: text(v, "description"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn modes_models_and_options_read_in_both_spellings_and_updates_keep_them_current() {
        let result = json!({
            "sessionId": "s",
            "modes": {"currentModeId": "ask", "availableModes": [
                {"id": "ask", "name": "Ask"}, {"name": "no id"}, {"id": "code", "description": "Edits"}]},
            "models": {"currentModelId": "m1", "availableModels": [{"modelId": "m1", "name": "One"}]},
            "configOptions": [
                {"id": "mode", "category": "mode", "type": "select", "currentValue": "ask",
                 "options": [{"value": "ask"}, {"group": "g", "options": [{"value": "code", "name": "Code"}]}]},
                {"configId": "yolo", "type": "boolean", "currentValue": false},
                {"id": "x", "currentValue": 3}
            ]
        });
        let mut s = SessionState::read(&result);
        let modes = s.modes.as_ref().unwrap();
        assert_eq!(modes.current.as_deref(), Some("ask"));
        let ids: Vec<&str> = modes.available.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["ask", "code"]);
        assert_eq!(s.models.as_ref().unwrap()[0].name_or_id(), "One");
        assert_eq!(s.current_model.as_deref(), Some("m1"));
        let mode = s.option_of_category("mode").unwrap();
        let values: Vec<&str> = mode.values.iter().map(|v| v.id.as_str()).collect();
        assert_eq!(values, ["ask", "code"]);
        assert_eq!(s.config_options[1].id.as_deref(), Some("yolo"));
        assert!(s.config_options[1].is_bool());
        assert_eq!(s.config_options[2].current, Current::None);

        s.set_current_mode("code");
        assert_eq!(s.modes.as_ref().unwrap().current.as_deref(), Some("code"));
        assert_eq!(config_options(&json!("not a list")), None);
        s.set_config_options(config_options(&json!([])).unwrap());
        assert!(s.config_options.is_empty());

        // no modes: a mode update changes nothing; models without a list are none
        let mut bare = SessionState::read(&json!({"models": {"currentModelId": "m"}}));
        bare.set_current_mode("x");
        assert_eq!((bare.modes, bare.models), (None, None));
        assert_eq!(bare.current_model.as_deref(), Some("m"));
    }
}
