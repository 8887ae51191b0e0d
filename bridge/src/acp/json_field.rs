//! A field of a JSON object read as `value["key"]` reads it, without hashing
//! the key: the objects of a frame hold a handful of keys, and comparing them
//! costs less than hashing the key (SipHash) and probing the index. Larger
//! objects are read through their index.

use serde_json::{Map, Value};

/// Objects of up to this many keys are scanned.
const SCAN_MAX: usize = 16;

static NULL: Value = Value::Null;

/// What a value is, for an error that says what a field holds instead of
/// what it should ("is an array, not an object").
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `v[key]`: the field's value, `Null` when `v` is no object or has no `key`.
pub(crate) fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    match v {
        Value::Object(map) => map_field(map, key),
        _ => &NULL,
    }
}

/// `map.get(key)`, scanning a small map.
fn map_get<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() > SCAN_MAX {
        return map.get(key);
    }
    map.iter().find(|(k, _)| k.as_str() == key).map(|(_, x)| x)
}

/// `map[key]`, scanning a small map: `Null` when it has no `key`.
pub(crate) fn map_field<'a>(map: &'a Map<String, Value>, key: &str) -> &'a Value {
    map_get(map, key).unwrap_or(&NULL)
}

/// `v.get(key)`: the field's value, `None` when `v` is no object or has no
/// `key` (a `null` value is `Some`).
pub(crate) fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_object().and_then(|map| map_get(map, key))
}

/// Whether `map` has `key` (its value may be `null`), scanning a small map.
pub(crate) fn has_key(map: &Map<String, Value>, key: &str) -> bool {
    map_get(map, key).is_some()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_as_indexing_and_map_lookups_do_for_small_large_and_non_objects() {
        let large: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
        let cases = [
            json!({"a": 1, "b": {"c": 2}}),
            Value::Object(large),
            json!([1, 2]),
            json!("text"),
            Value::Null,
        ];
        for v in &cases {
            for key in ["a", "b", "c", "k0", "k39", "k40", ""] {
                assert_eq!(field(v, key), &v[key], "{key} of {v}");
                assert_eq!(get(v, key), v.get(key), "{key} of {v}");
                if let Value::Object(map) = &mut v.clone() {
                    assert_eq!(has_key(map, key), map.contains_key(key), "{key} of {v}");
                }
            }
        }
    }
}
