//! Divergences: where the bridge did not do what the recording expects, and
//! the field-level JSON diff that explains them.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use super::normalise::is_uuid;

/// One differing field, addressed by a JSON pointer (RFC 6901).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDiff {
    pub pointer: String,
    /// `None`: the field is missing on that side.
    pub recorded: Option<Value>,
    pub sent: Option<Value>,
}

/// Pairs the variable values of two runs (session ids, tool-call ids, uuids)
/// one-to-one, so that `sess-A` in the recording and `sess-B` from the bridge
/// compare equal as long as they are used consistently.
#[derive(Debug, Default)]
pub struct VarEquivalence {
    recorded_to_sent: HashMap<String, String>,
    sent_to_recorded: HashMap<String, String>,
}

impl VarEquivalence {
    fn same(&mut self, recorded: &str, sent: &str) -> bool {
        match (
            self.recorded_to_sent.get(recorded),
            self.sent_to_recorded.get(sent),
        ) {
            (None, None) => {
                self.recorded_to_sent
                    .insert(recorded.to_string(), sent.to_string());
                self.sent_to_recorded
                    .insert(sent.to_string(), recorded.to_string());
                true
            }
            (Some(s), Some(r)) => s == sent && r == recorded,
            _ => false,
        }
    }
}

fn is_variable_key(key: &str) -> bool {
    matches!(
        key,
        "sessionId" | "session_id" | "toolCallId" | "tool_use_id"
    )
}

/// Field-level differences between a recorded frame and the one the bridge
/// sent, in document order. `skip` names top-level keys not to compare (the
/// JSON-RPC `id`, which is remapped).
pub fn diff_frames(
    recorded: &Value,
    sent: &Value,
    skip: &[&str],
    eq: &mut VarEquivalence,
) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    match (recorded, sent) {
        (Value::Object(r), Value::Object(s)) => {
            for (k, rv) in r {
                if skip.contains(&k.as_str()) {
                    continue;
                }
                let p = format!("/{}", escape(k));
                match s.get(k) {
                    Some(sv) => diff_at(&p, k, rv, sv, eq, &mut out),
                    None => out.push(FieldDiff {
                        pointer: p,
                        recorded: Some(rv.clone()),
                        sent: None,
                    }),
                }
            }
            for (k, sv) in s {
                if !skip.contains(&k.as_str()) && !r.contains_key(k) {
                    out.push(FieldDiff {
                        pointer: format!("/{}", escape(k)),
                        recorded: None,
                        sent: Some(sv.clone()),
                    });
                }
            }
        }
        _ => diff_at("", "", recorded, sent, eq, &mut out),
    }
    out
}

fn diff_at(
    pointer: &str,
    key: &str,
    r: &Value,
    s: &Value,
    eq: &mut VarEquivalence,
    out: &mut Vec<FieldDiff>,
) {
    match (r, s) {
        (Value::Object(rm), Value::Object(sm)) => {
            for (k, rv) in rm {
                let p = format!("{pointer}/{}", escape(k));
                match sm.get(k) {
                    Some(sv) => diff_at(&p, k, rv, sv, eq, out),
                    None => out.push(FieldDiff {
                        pointer: p,
                        recorded: Some(rv.clone()),
                        sent: None,
                    }),
                }
            }
            for (k, sv) in sm {
                if !rm.contains_key(k) {
                    out.push(FieldDiff {
                        pointer: format!("{pointer}/{}", escape(k)),
                        recorded: None,
                        sent: Some(sv.clone()),
                    });
                }
            }
        }
        (Value::Array(ra), Value::Array(sa)) => {
            for i in 0..ra.len().max(sa.len()) {
                let p = format!("{pointer}/{i}");
                match (ra.get(i), sa.get(i)) {
                    (Some(rv), Some(sv)) => diff_at(&p, "", rv, sv, eq, out),
                    (rv, sv) => out.push(FieldDiff {
                        pointer: p,
                        recorded: rv.cloned(),
                        sent: sv.cloned(),
                    }),
                }
            }
        }
        (Value::String(rs), Value::String(ss)) => {
            let variable = is_variable_key(key) || (is_uuid(rs) && is_uuid(ss));
            let same = if variable { eq.same(rs, ss) } else { rs == ss };
            if !same {
                out.push(FieldDiff {
                    pointer: pointer.to_string(),
                    recorded: Some(r.clone()),
                    sent: Some(s.clone()),
                });
            }
        }
        _ => {
            if r != s {
                out.push(FieldDiff {
                    pointer: pointer.to_string(),
                    recorded: Some(r.clone()),
                    sent: Some(s.clone()),
                });
            }
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Where the bridge and the recording parted ways.
#[derive(Debug, Clone, PartialEq)]
pub enum Divergence {
    /// The bridge sent a frame whose recorded counterpart has different fields.
    Differs {
        what: String,
        recorded_seq: u64,
        diffs: Vec<FieldDiff>,
    },
    /// The bridge sent a frame with no recorded counterpart left.
    Unmatched {
        what: String,
        closest: Option<Closest>,
    },
    /// The bridge sent a line that is not JSON-RPC.
    NotJsonRpc { line: String, why: String },
    /// A recorded client frame the bridge never sent.
    NeverSent { what: String, recorded_seq: u64 },
    /// A released agent response answers a request the bridge never sent.
    OrphanResponse {
        recorded_seq: u64,
        recorded_id: Value,
    },
    /// The panel driver waited for something that never came.
    Stalled {
        step: usize,
        step_kind: String,
        waiting_for: String,
    },
}

/// The recorded frame most like an unmatched one, with the fields that differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    pub what: String,
    pub recorded_seq: u64,
    pub diffs: Vec<FieldDiff>,
}

impl Divergence {
    /// A one-line headline (the diff lines come from [`Divergence::details`]).
    pub fn headline(&self) -> String {
        match self {
            Divergence::Differs {
                what,
                recorded_seq,
                diffs,
            } => {
                format!(
                    "{what} differs from recorded seq {recorded_seq} in {} field(s)",
                    diffs.len()
                )
            }
            Divergence::Unmatched {
                what,
                closest: Some(c),
            } => format!(
                "{what} has no recorded counterpart; closest is {} at seq {} ({} field(s) differ)",
                c.what,
                c.recorded_seq,
                c.diffs.len()
            ),
            Divergence::Unmatched {
                what,
                closest: None,
            } => {
                format!(
                    "{what} has no recorded counterpart and the recording has no client frame like it"
                )
            }
            Divergence::NotJsonRpc { line, why } => format!(
                "bridge sent a line that is not JSON-RPC ({why}): {}",
                shorten(line, 120)
            ),
            Divergence::NeverSent { what, recorded_seq } => {
                format!("recorded {what} (seq {recorded_seq}) was never sent by the bridge")
            }
            Divergence::OrphanResponse {
                recorded_seq,
                recorded_id,
            } => format!(
                "recorded agent response seq {recorded_seq} answers request id {recorded_id}, which the bridge never sent; passed through unchanged"
            ),
            Divergence::Stalled {
                step,
                step_kind,
                waiting_for,
            } => {
                format!("stalled at step {step} ({step_kind}) waiting for {waiting_for}")
            }
        }
    }

    /// The field diffs behind the headline, if any.
    pub fn details(&self) -> &[FieldDiff] {
        match self {
            Divergence::Differs { diffs, .. } => diffs,
            Divergence::Unmatched {
                closest: Some(c), ..
            } => &c.diffs,
            _ => &[],
        }
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.headline())?;
        for d in self.details() {
            write!(
                f,
                "\n  {}",
                render_diff(d, &mut |v| shorten(&v.to_string(), 120))
            )?;
        }
        Ok(())
    }
}

/// `pointer: recorded X, sent Y` with values rendered by `show`.
pub fn render_diff(d: &FieldDiff, show: &mut dyn FnMut(&Value) -> String) -> String {
    let side = |v: &Option<Value>, show: &mut dyn FnMut(&Value) -> String| match v {
        Some(v) => show(v),
        None => "(absent)".to_string(),
    };
    let r = side(&d.recorded, show);
    let s = side(&d.sent, show);
    format!(
        "{}: recorded {r}, sent {s}",
        if d.pointer.is_empty() {
            "/"
        } else {
            &d.pointer
        }
    )
}

pub use acp_bridge::shorten::shorten;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differing_leaf_fields_are_reported_as_json_pointers() {
        let rec = json!({"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"<workspace>","mcpServers":[{"name":"unity-ops","url":"<mcp-url>"}]}});
        let sent = json!({"jsonrpc":"2.0","id":0,"method":"session/new","params":{"cwd":"/x","mcpServers":[{"name":"unity-ops","url":"<mcp-url>","extra":1}]}});
        let diffs = diff_frames(&rec, &sent, &["id"], &mut VarEquivalence::default());
        let pointers: Vec<&str> = diffs.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(pointers, ["/params/cwd", "/params/mcpServers/0/extra"]);
        assert_eq!(diffs[1].recorded, None);
    }

    #[test]
    fn session_ids_compare_equal_when_used_consistently_and_differ_when_not() {
        let mut eq = VarEquivalence::default();
        let a = diff_frames(
            &json!({"sessionId":"rec-1"}),
            &json!({"sessionId":"sent-1"}),
            &[],
            &mut eq,
        );
        assert!(a.is_empty());
        let b = diff_frames(
            &json!({"sessionId":"rec-1"}),
            &json!({"sessionId":"sent-1"}),
            &[],
            &mut eq,
        );
        assert!(b.is_empty());
        let c = diff_frames(
            &json!({"sessionId":"rec-1"}),
            &json!({"sessionId":"sent-2"}),
            &[],
            &mut eq,
        );
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn a_missing_array_element_is_a_diff() {
        let diffs = diff_frames(
            &json!({"a":[1,2]}),
            &json!({"a":[1]}),
            &[],
            &mut VarEquivalence::default(),
        );
        assert_eq!(
            diffs,
            vec![FieldDiff {
                pointer: "/a/1".into(),
                recorded: Some(json!(2)),
                sent: None
            }]
        );
    }
}
