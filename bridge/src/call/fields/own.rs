//! A tool call's own ACP fields (`title`, `kind`, `status`, `rawInput`,
//! `content`, `rawOutput`, ...) as a short list of keys and values in the
//! order they came, instead of a JSON object: a call has a handful of
//! fields, so finding one by comparing keys costs less than hashing it, and
//! the well-known keys are static strings, not one allocation per key per
//! frame. It keeps what a JSON object keeps: every key the agent sent, in
//! its order (a replaced value stays where its key was).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::acp::json_field::Fields;

/// A field's key: static for the keys of the ACP schema, owned for the rest.
pub type Key = Cow<'static, str>;

/// `key` as a [`Key`]: static when the schema names it.
pub fn key(key: Cow<'_, str>) -> Key {
    Cow::Borrowed(match key.as_ref() {
        "title" => "title",
        "kind" => "kind",
        "status" => "status",
        "rawInput" => "rawInput",
        "content" => "content",
        "rawOutput" => "rawOutput",
        "locations" => "locations",
        "_meta" => "_meta",
        "name" => "name",
        _ => return Cow::Owned(key.into_owned()),
    })
}

/// How many fields a call's list has room for from the start: a call's
/// first frame and the result its last one adds mostly fit.
const USUAL_FIELDS: usize = 8;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnFields(Vec<(Key, Value)>);

impl OwnFields {
    pub const fn new() -> OwnFields {
        OwnFields(Vec::new())
    }

    /// No fields yet, with room for a call's usual number.
    pub fn with_usual_capacity() -> OwnFields {
        OwnFields(Vec::with_capacity(USUAL_FIELDS))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The value of `key`, `None` when there is no such key (a `null` value
    /// is `Some`).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Adds `key`, which the fields do not have yet, after the others.
    pub fn push_new(&mut self, key: Key, value: Value) {
        debug_assert!(self.get(&key).is_none(), "{key} is there already");
        self.0.push((key, value));
    }

    /// Sets `key`: in place when the call has it, else after the others.
    pub fn insert(&mut self, key: Key, value: Value) {
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.0.push((key, value)),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
    }

    /// The fields as a JSON object, keys in their order.
    pub fn to_value(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    /// The fields as a JSON object's map, moved.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v))
            .collect()
    }
}

impl IntoIterator for OwnFields {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// An object's fields in its order; a value that is no object has none.
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
        OwnFields(
            map.into_iter()
                .map(|(k, v)| (key(Cow::Owned(k)), v))
                .collect(),
        )
    }
}

impl Fields for OwnFields {
    fn get_field(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_keys_and_order_as_a_json_object_does() {
        let mut own = OwnFields::from(json!({"title": "t", "x-custom": 1, "status": "pending"}));
        let mut object = own.to_value();
        for (k, v) in [
            ("status", json!("completed")),
            ("extra", json!([1])),
            ("title", json!(null)),
        ] {
            own.insert(key(Cow::Borrowed(k)), v.clone());
            object[k] = v;
        }
        assert_eq!(own.to_value(), object);
        assert_eq!(
            serde_json::to_string(&own.to_value()).unwrap(),
            serde_json::to_string(&object).unwrap()
        );
        assert_eq!(own.get("x-custom"), Some(&json!(1)));
        assert_eq!(own.get("missing"), None);
        assert_eq!(OwnFields::from(json!([1])), OwnFields::new());
    }
}
