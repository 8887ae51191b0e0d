//! A tool call's own ACP fields, read once into a struct: the fields the
//! schema names are typed (`title`, `kind`, `status`, `locations`, ...),
//! the tool's raw input and output and the agent's `_meta` stay JSON (the
//! agent's own shapes), and every key no schema names is kept, in the
//! order it came.
//!
//! **A field is there when it holds a value of its type**: `null` is no
//! field (a later frame's `null` keeps the earlier value), and so is a
//! value of another type (a numeric `title` names nothing, and leaves the
//! title an earlier frame gave).

use serde::Serialize;
use serde_json::{Map, Value};

use super::ARGUMENT_KEYS;
use crate::acp::json_field::field;
use crate::acp::tool_call::{CallStatus, ToolKind};

/// A call's own fields, merged across its frames (see [`OwnFields::merge`]).
/// Serialised, they are an ACP object again: the schema's fields in its
/// order, then the others in theirs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnFields {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CallStatus>,
    /// ACP's `name` of the call, where the agent gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `rawInput`, as sent (any JSON; an object merges key by key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// `rawOutput`, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    /// `content`'s entries, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<Location>>,
    /// `_meta`, as sent.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// The output the call's frames streamed for a terminal (see
    /// [`crate::call::result::keep_terminal_output`]): the bridge's own, kept
    /// beside the agent's fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_output: Option<String>,
    /// `toolCallId`, where the fields come with it (a permission request's
    /// `toolCall`): the call's id, never merged into another call's fields.
    #[serde(skip)]
    pub tool_call_id: Option<String>,
    /// Every other key, in the order it came.
    #[serde(flatten, serialize_with = "pairs_as_map")]
    pub other: Vec<(String, Value)>,
}

/// A `locations` entry: the file a call touches.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Location {
    pub path: Option<String>,
}

fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, Value)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// Frames of more unnamed keys than this merge through a map's index: each
/// key looked up in a list would make a frame of very many keys quadratic.
pub(crate) const LISTED_MERGE_MAX: usize = 32;

/// The bridge's own key for [`OwnFields::terminal_output`] when sizes are
/// counted.
const TERMINAL_OUTPUT: &str = "terminalOutput";

static NULL: Value = Value::Null;

impl OwnFields {
    pub const fn new() -> OwnFields {
        OwnFields {
            title: None,
            kind: None,
            status: None,
            name: None,
            raw_input: None,
            raw_output: None,
            content: None,
            locations: None,
            meta: None,
            terminal_output: None,
            tool_call_id: None,
            other: Vec::new(),
        }
    }

    /// Reads one key of a frame into its field (see the module's rule).
    pub fn set(&mut self, key: &str, value: Value) {
        if value.is_null() {
            return;
        }
        let text = |v: Value| match v {
            Value::String(s) => Some(s),
            _ => None,
        };
        match key {
            "title" => self.title = text(value).or(self.title.take()),
            "name" => self.name = text(value).or(self.name.take()),
            "kind" => {
                if let Value::String(k) = value {
                    self.kind = Some(ToolKind::read(&k));
                }
            }
            "status" => {
                if let Value::String(s) = value {
                    self.status = Some(CallStatus::read(&s));
                }
            }
            "toolCallId" => self.tool_call_id = text(value).or(self.tool_call_id.take()),
            "rawInput" => self.raw_input = Some(value),
            "rawOutput" => self.raw_output = Some(value),
            "_meta" => self.meta = Some(value),
            "content" => {
                if let Value::Array(entries) = value {
                    self.content = Some(entries);
                }
            }
            "locations" => {
                if let Value::Array(entries) = value {
                    self.locations = Some(entries.iter().map(Location::read).collect());
                }
            }
            _ => match self.other.iter_mut().find(|(k, _)| k == key) {
                Some((_, slot)) => *slot = value,
                None => self.other.push((key.to_string(), value)),
            },
        }
    }

    /// The title, when it says something.
    pub fn title(&self) -> Option<&str> {
        self.title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }

    /// ACP's `name`, when it says something.
    pub fn name(&self) -> Option<&str> {
        self.name
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }

    /// `rawInput`, `Null` when there is none.
    pub fn raw_input(&self) -> &Value {
        self.raw_input.as_ref().unwrap_or(&NULL)
    }

    /// `rawOutput`, `Null` when there is none.
    pub fn raw_output(&self) -> &Value {
        self.raw_output.as_ref().unwrap_or(&NULL)
    }

    /// `_meta`, `Null` when there is none.
    pub fn meta(&self) -> &Value {
        self.meta.as_ref().unwrap_or(&NULL)
    }

    /// A key no schema names.
    fn other(&self, key: &str) -> Option<&Value> {
        self.other.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether the fields have `key` (a schema field holding its type, or
    /// an unnamed key): a field there has a size.
    pub fn has(&self, key: &str) -> bool {
        self.size_of(key) != 0
    }

    /// Merges a later frame's fields: each field it has replaces the one
    /// these have, but `rawInput` objects merge key by key (an agent's
    /// retitling update may carry `variant` and `tool_name` but leave out
    /// `tool_input`), and an unnamed key is replaced where it was. The
    /// frame's `sessionUpdate` and `toolCallId` are no fields of the call.
    pub fn merge(&mut self, later: OwnFields) {
        let OwnFields {
            title,
            kind,
            status,
            name,
            raw_input,
            raw_output,
            content,
            locations,
            meta,
            terminal_output: _,
            tool_call_id: _,
            other,
        } = later;
        fn take<T>(slot: &mut Option<T>, later: Option<T>) {
            if later.is_some() {
                *slot = later;
            }
        }
        take(&mut self.title, title);
        take(&mut self.kind, kind);
        take(&mut self.status, status);
        take(&mut self.name, name);
        take(&mut self.raw_output, raw_output);
        take(&mut self.content, content);
        take(&mut self.locations, locations);
        take(&mut self.meta, meta);
        match (self.raw_input.as_mut(), raw_input) {
            (Some(Value::Object(old)), Some(Value::Object(new))) => merge_raw_input(old, new),
            (_, later) => take(&mut self.raw_input, later),
        }
        let other: Vec<(String, Value)> = other
            .into_iter()
            .filter(|(k, _)| k != "sessionUpdate")
            .collect();
        if other.len() <= LISTED_MERGE_MAX {
            for (key, value) in other {
                match self.other.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, slot)) => *slot = value,
                    None => self.other.push((key, value)),
                }
            }
        } else {
            let mut map: Map<String, Value> = std::mem::take(&mut self.other).into_iter().collect();
            map.extend(other);
            self.other = map.into_iter().collect();
        }
    }

    /// The first `locations` entry's path.
    pub fn first_location(&self) -> Option<&str> {
        self.locations.as_deref()?.first()?.path.as_deref()
    }

    /// Every `locations` entry's path.
    pub fn location_paths(&self) -> impl Iterator<Item = &str> {
        self.locations
            .iter()
            .flatten()
            .filter_map(|l| l.path.as_deref())
    }

    /// `content`'s entries (none when it has none).
    pub fn content(&self) -> &[Value] {
        self.content.as_deref().unwrap_or_default()
    }

    /// The streamed terminal output delta a frame carries in its `_meta`
    /// (Zed's `terminal_output.data`).
    pub fn terminal_output_delta(&self) -> Option<&str> {
        field(field(self.meta(), "terminal_output"), "data").as_str()
    }

    /// About the JSON size of each field there is, by its key: the key, its
    /// quotes and colon, and the value (see [`held_bytes`]).
    pub fn sizes(&self) -> impl Iterator<Item = (&str, usize)> {
        let (text, json) = (text_bytes, json_bytes);
        let named = [
            ("title", text(&self.title)),
            ("kind", self.kind.as_ref().map(|k| k.as_str().len() + 2)),
            ("status", self.status.as_ref().map(|s| s.as_str().len() + 2)),
            ("name", text(&self.name)),
            ("rawInput", json(&self.raw_input)),
            ("rawOutput", json(&self.raw_output)),
            ("content", self.content.as_deref().map(list_bytes)),
            ("locations", self.locations.as_deref().map(locations_bytes)),
            ("_meta", json(&self.meta)),
            (TERMINAL_OUTPUT, text(&self.terminal_output)),
        ];
        let named = named.into_iter().filter_map(|(k, size)| Some((k, size?)));
        let other = self.other.iter().map(|(k, v)| (k.as_str(), held_bytes(v)));
        named.chain(other).map(|(k, size)| (k, k.len() + 3 + size))
    }

    /// The size [`OwnFields::sizes`] gives `key`, `0` when there is none.
    pub fn size_of(&self, key: &str) -> usize {
        let (text, json) = (text_bytes, json_bytes);
        let size = match key {
            "title" => text(&self.title),
            "kind" => self.kind.as_ref().map(|k| k.as_str().len() + 2),
            "status" => self.status.as_ref().map(|s| s.as_str().len() + 2),
            "name" => text(&self.name),
            "rawInput" => json(&self.raw_input),
            "rawOutput" => json(&self.raw_output),
            "content" => self.content.as_deref().map(list_bytes),
            "locations" => self.locations.as_deref().map(locations_bytes),
            "_meta" => json(&self.meta),
            TERMINAL_OUTPUT => text(&self.terminal_output),
            _ => self.other(key).map(held_bytes),
        };
        size.map_or(0, |s| key.len() + 3 + s)
    }

    /// About the JSON size of the fields as an object.
    pub fn held_bytes(&self) -> usize {
        self.sizes().map(|(_, s)| s).sum::<usize>() + 2
    }
}

/// rawInput objects merge key by key, and so do arguments in an envelope
/// (or an action object's `data`).
fn merge_raw_input(old: &mut Map<String, Value>, new: Map<String, Value>) {
    for (k, v) in new {
        match (old.get_mut(&k), v) {
            (Some(Value::Object(inner)), Value::Object(more))
                if ARGUMENT_KEYS.contains(&k.as_str()) || k == "data" =>
            {
                inner.extend(more);
            }
            (_, v) => {
                old.insert(k, v);
            }
        }
    }
}

impl Location {
    fn read(entry: &Value) -> Location {
        Location {
            path: field(entry, "path").as_str().map(str::to_string),
        }
    }
}

/// About the JSON size of `v`: its strings' bytes and a few bytes per
/// value, walked by node (a string's length is known), so a frame costs
/// its node count, not its bytes.
pub fn held_bytes(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 4,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => list_bytes(items),
        Value::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + 3 + held_bytes(v))
                .sum::<usize>()
                + 2
        }
    }
}

/// About the JSON size of a text field's value.
fn text_bytes(text: &Option<String>) -> Option<usize> {
    text.as_ref().map(|t| t.len() + 2)
}

/// [`held_bytes`] of a JSON field's value.
fn json_bytes(json: &Option<Value>) -> Option<usize> {
    json.as_ref().map(held_bytes)
}

/// About the JSON size of `locations` entries (`{"path": ...}` each).
fn locations_bytes(locations: &[Location]) -> usize {
    let entries = locations
        .iter()
        .map(|l| l.path.as_ref().map_or(2, |p| p.len() + 12));
    entries.sum::<usize>() + 2
}

/// [`held_bytes`] of an array of `items`.
pub fn list_bytes(items: &[Value]) -> usize {
    items.iter().map(held_bytes).sum::<usize>() + 2
}

/// An object's fields; a value that is no object has none.
impl From<Value> for OwnFields {
    fn from(v: Value) -> OwnFields {
        match v {
            Value::Object(map) => OwnFields::from(map),
            _ => OwnFields::new(),
        }
    }
}

impl From<Map<String, Value>> for OwnFields {
    fn from(map: Map<String, Value>) -> OwnFields {
        let mut own = OwnFields::new();
        for (k, v) in map {
            own.set(&k, v);
        }
        own
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_field_of_another_type_or_null_is_no_field() {
        let mut own = OwnFields::from(json!({"title": "t", "x-custom": 1, "status": "pending"}));
        own.merge(OwnFields::from(json!({
            "title": 5, "status": null, "kind": "browse", "content": "text", "x-custom": 2,
            "extra": [1], "toolCallId": "c"
        })));
        assert_eq!(own.title.as_deref(), Some("t"));
        assert_eq!(own.status, Some(CallStatus::Pending));
        assert_eq!(own.kind, Some(ToolKind::Unknown("browse".into())));
        assert_eq!(own.content, None);
        assert_eq!(
            own.other,
            vec![
                ("x-custom".to_string(), json!(2)),
                ("extra".into(), json!([1]))
            ]
        );
        assert!(own.has("extra") && own.has("title") && !own.has("content"));
        assert_eq!(OwnFields::from(json!([1])), OwnFields::new());
    }
}
