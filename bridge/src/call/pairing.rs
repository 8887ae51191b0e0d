//! The call a permission request is about. Some agents announce a call
//! under one id and ask under another (a synthetic id without arguments, a
//! second id for the same write), or ask every permission of a session
//! under one id: the request is paired with the open call it matches by
//! structure, or is a call of its own.

use serde_json::{Map, Value};

use crate::acp::json_field::field;
use crate::acp::tool_call::ToolKind;
use crate::call::fields::{ARGUMENT_KEYS, CallFields, IDENTITY_KEYS, OwnFields, wrapped_arguments};
use crate::call::identity::identity;
use crate::call::table::ToolCalls;

/// Which call a request is about, and how it was found when that is worth
/// a diagnostic.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pairing {
    /// The call's id: `""` when the request names none.
    pub call_id: String,
    pub note: Option<String>,
}

/// The call a permission request is about: its `toolCallId` when an agent
/// frame reported that call, else the pending call the request matches by
/// its own content, else a card of its own.
///
/// **A reused request id never carries an earlier pairing**: some agents
/// ask every permission of a session under one synthetic id
/// (`confirmation-<session>`); each such request is paired anew, and one
/// that pairs with no open call is its own card (`<id>#2` once the id has
/// been asked under), so a later write is never asked, or gated, as turn
/// 1's call.
pub(crate) fn asked_call(calls: &mut ToolCalls, request: &CallFields) -> Pairing {
    let call_id = request.own.tool_call_id.clone().unwrap_or_default();
    let found = |call_id: String| Pairing {
        call_id,
        note: None,
    };
    if call_id.is_empty() {
        return found(call_id);
    }
    // an alias is one request's pairing, never the next's
    calls.unalias(&call_id);
    if calls.get(&call_id).is_some_and(|c| c.reported) {
        return found(call_id);
    }
    // asked under an id no agent frame reported: the one pending call of
    // the MCP tool it names, else the pending call it matches
    if let Some(paired) = one_unasked_call_of_the_same_tool(calls, request)
        .or_else(|| paired_call(request, calls.unasked()).map(str::to_string))
    {
        calls.alias(&call_id, &paired);
        return Pairing {
            note: Some(format!(
                "permission request for unknown tool call {call_id:?} belongs to pending call {paired}"
            )),
            call_id: paired,
        };
    }
    match calls.get(&call_id) {
        // a second request under an id a request used: a card of its own
        Some(c) if c.was_asked() => {
            let fresh = calls.fresh_id(&call_id);
            Pairing {
                note: Some(format!(
                    "permission request reuses tool call id {call_id:?}, which pairs with no open call: asked as {fresh}"
                )),
                call_id: fresh,
            }
        }
        _ => found(call_id),
    }
}

/// The one call not yet asked about that invokes the MCP tool the request
/// names (server and tool, by the identity rule), if exactly one does.
fn one_unasked_call_of_the_same_tool(calls: &ToolCalls, request: &CallFields) -> Option<String> {
    let servers = &calls.servers;
    let (server, tool, _) = identity(request, servers)?;
    let mut same = calls.unasked().filter(|(_, own)| {
        let call = CallFields {
            own: (*own).clone(),
            ..CallFields::default()
        };
        identity(&call, servers).is_some_and(|(s, t, _)| s == server && t == tool)
    });
    let (first, _) = same.next()?;
    same.next().is_none().then(|| first.to_string())
}

/// The argument keys a file tool names its file by, however the agent
/// spells it.
const PATH_ARGUMENTS: [&str; 4] = ["file_path", "filePath", "filepath", "path"];

/// The pending call a permission request under an unknown `toolCallId`
/// (or none) belongs to: some agents announce a call under one id and ask
/// under another (a synthetic id without arguments, a second id for the
/// same write). `request` is the request's fields
/// ([`crate::call::identity::permission_request_fields`]); `pending` the calls
/// still open and not asked about, oldest first, with their fields.
///
/// Strongest evidence first: arguments that agree (a key in common, none
/// that differs; an envelope such as `{tool, arguments}` read as what it
/// wraps; a command the call shows only in its `execute` title), the same
/// title, a file both name (in `locations`, a `diff`'s path, a path
/// argument, or a patch text among the arguments); then the one pending
/// call of the request's kind (one with no arguments and no file of its
/// own when the request brings arguments), else, for a request without
/// arguments, the only call pending. A call whose arguments differ from
/// the request's is never its call; no match is a call of its own.
pub(crate) fn paired_call<'a>(
    request: &CallFields,
    pending: impl IntoIterator<Item = (&'a str, &'a OwnFields)>,
) -> Option<&'a str> {
    // an envelope of no arguments (`{server, tool, arguments: {}}`) has none
    fn arguments(fields: &OwnFields) -> Option<&Map<String, Value>> {
        fields
            .raw_input()
            .as_object()
            .map(|raw| wrapped_arguments(raw).unwrap_or(raw))
            .filter(|m| {
                m.iter().any(|(k, v)| {
                    let empty_envelope = ARGUMENT_KEYS.contains(&k.as_str())
                        && v.as_object().is_some_and(Map::is_empty);
                    !IDENTITY_KEYS.contains(&k.as_str()) && !empty_envelope
                })
            })
    }
    // every file the fields name, however the agent says it (a patch text
    // among the arguments names the file it adds or changes): `own`, a
    // call's own fields, and `asked`, its permission request's content
    fn files(own: &OwnFields, asked: &[Value]) -> Vec<String> {
        let listed = (own.content().iter())
            .chain(asked)
            .filter(|item| item.get("type").is_none_or(|t| t == "diff"))
            .filter_map(|item| field(item, "path").as_str());
        let listed = own.location_paths().chain(listed);
        let args = arguments(own);
        let argued = args
            .into_iter()
            .flat_map(|args| PATH_ARGUMENTS.iter().filter_map(|k| args.get(*k)?.as_str()));
        let patched = args
            .into_iter()
            .flat_map(Map::values)
            .filter_map(Value::as_str)
            .flat_map(crate::script_gate::patch_targets);
        listed
            .chain(argued)
            .map(str::to_string)
            .chain(patched)
            .filter(|p| !p.trim().is_empty())
            .collect()
    }
    // a title or kind the request says something in, the call's own
    fn same(asked: Option<&str>, own: Option<&str>) -> bool {
        asked.is_some_and(|a| !a.trim().is_empty() && Some(a) == own)
    }
    // one file named relative to the workspace in one frame and absolute in
    // the other (`Assets/Foo.cs`, `/project/Assets/Foo.cs`) is one file
    fn same_path(key: &str, a: &Value, b: &Value) -> bool {
        let (Some(a), Some(b)) = (a.as_str(), b.as_str()) else {
            return false;
        };
        let within = |long: &str, short: &str| {
            !short.starts_with('/')
                && long
                    .strip_suffix(short)
                    .is_some_and(|head| head.ends_with('/'))
        };
        PATH_ARGUMENTS.contains(&key) && (within(a, b) || within(b, a))
    }
    let asked_with = arguments(&request.own);
    let differs = |fields: &OwnFields| match (asked_with, arguments(fields)) {
        (Some(a), Some(b)) => a
            .iter()
            .any(|(k, v)| b.get(k).is_some_and(|w| w != v && !same_path(k, v, w))),
        _ => false,
    };
    let fitting: Vec<(&str, &OwnFields)> =
        pending.into_iter().filter(|(_, f)| !differs(f)).collect();
    let find = |test: &dyn Fn(&OwnFields) -> bool| {
        fitting.iter().find(|(_, f)| test(f)).map(|(id, _)| *id)
    };
    // a call announced without arguments still shows its command in an
    // `execute` title (`terminal: rm -rf Build`): the request agrees when it
    // asks about that command
    let shown_command = |f: &OwnFields| {
        (arguments(f).is_none() && f.kind == Some(ToolKind::Execute))
            .then(|| {
                let call = CallFields {
                    own: f.clone(),
                    ..CallFields::default()
                };
                crate::call::input::claude_fields("Bash", &call, &[], |_| false)
            })
            .into_iter()
            .flatten()
            .find(|(key, _)| *key == "command")
            .map(|(_, command)| command)
    };
    let agree = |f: &OwnFields| {
        asked_with.is_some_and(|a| {
            arguments(f).is_some_and(|b| a.keys().any(|k| b.contains_key(k)))
                || shown_command(f).is_some_and(|c| a.get("command") == Some(&c))
        })
    };
    let asked_title = request.permission.title.as_deref();
    let title = |f: &OwnFields| same(asked_title, f.title.as_deref());
    let asked_about = files(&request.own, request.permission.content());
    let same_file = |f: &OwnFields| files(f, &[]).iter().any(|p| asked_about.contains(p));
    if let Some(id) = find(&agree)
        .or_else(|| find(&title))
        .or_else(|| find(&same_file))
    {
        return Some(id);
    }
    // a request with arguments of its own may bring them to a call that
    // has none yet (asked before its arguments came); not to one that has,
    // nor to one that names another file
    let open: Vec<(&str, &OwnFields)> = fitting
        .iter()
        .filter(|(_, f)| {
            asked_with.is_none() || (arguments(f).is_none() && files(f, &[]).is_empty())
        })
        .copied()
        .collect();
    let kind = request.permission.kind.as_ref().map(ToolKind::as_str);
    let of_kind: Vec<&str> = open
        .iter()
        .filter(|(_, f)| same(kind, f.kind.as_ref().map(ToolKind::as_str)))
        .map(|(id, _)| *id)
        .collect();
    match (of_kind.as_slice(), open.as_slice()) {
        ([id], _) => Some(id),
        // the only call pending takes a request that brings no arguments
        ([], [(id, _)]) if asked_with.is_none() => Some(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::identity::permission_request_fields;
    use serde_json::json;

    /// Which pending call a request under an unknown id is paired with,
    /// if any: the strongest evidence wins, differing arguments never pair,
    /// and a request without arguments pairs only when one call fits.
    #[test]
    fn requests_under_unknown_ids_pair_with_the_call_they_match() {
        let a = OwnFields::from(
            json!({"title": "Run", "kind": "execute", "rawInput": {"command": "ls"}}),
        );
        let b = OwnFields::from(
            json!({"title": "Write", "kind": "edit", "rawInput": {"path": "a.txt"}, "locations": [{"path": "a.txt"}]}),
        );
        let c = OwnFields::from(
            json!({"title": "Run", "kind": "execute", "rawInput": {"command": "pwd"}}),
        );
        let cases = [
            (
                json!({"rawInput": {"command": "ls", "commands": ["ls"]}}),
                Some("a"),
            ),
            (json!({"rawInput": {"command": "rm x"}}), None),
            (json!({"title": "Write"}), Some("b")),
            (json!({"locations": [{"path": "a.txt"}]}), Some("b")),
            (json!({"kind": "edit"}), Some("b")),
            // two pending calls of its kind and others: nothing says which
            (json!({"kind": "execute"}), None),
            (json!({}), None),
        ];
        // each request as its `toolCall` makes it
        let asked = |tool_call: &Value| crate::call::identity::permission_tool_call(tool_call);
        for (request, want) in cases {
            let pending = [("a", &a), ("b", &b), ("c", &c)];
            assert_eq!(paired_call(&asked(&request), pending), want, "{request}");
        }
        assert_eq!(
            paired_call(&asked(&json!({"title": "?"})), [("c", &c)]),
            Some("c")
        );
        assert_eq!(
            paired_call(&asked(&json!({"rawInput": {"command": "rm"}})), [("c", &c)]),
            None
        );
    }

    /// Hermes Agent 0.19.0 announces a write under one id with no
    /// arguments and asks under `edit-approval-N`, its arguments wrapped
    /// as `{tool, arguments}` and its file only in a diff: the file both
    /// name pairs them, and a pending call of another file does not take it
    /// (frames from recordings/hermes/0.19.0/script-gate.jsonl).
    #[test]
    fn a_request_pairs_with_the_call_that_names_the_same_file() {
        let write = |path: &str| {
            OwnFields::from(
                json!({"kind": "edit", "locations": [{"path": path}], "title": format!("write: {path}"),
                "content": [{"type": "content", "content": {"type": "text", "text": format!("Preparing write to {path}. Approval prompt shows the diff.")}}]}),
            )
        };
        let request = permission_request_fields(&json!({
            "options": [{"kind": "allow_once", "name": "Allow edit", "optionId": "allow_once"}, {"kind": "reject_once", "name": "Deny", "optionId": "deny"}],
            "sessionId": "s",
            "toolCall": {"content": [{"newText": "public class Foo {}\n", "path": "/w/Assets/Editor/Foo.cs", "type": "diff"}],
                "kind": "edit",
                "rawInput": {"tool": "write_file", "arguments": {"content": "public class Foo {}\n", "path": "/w/Assets/Editor/Foo.cs"}},
                "status": "pending", "title": "Approve edit: /w/Assets/Editor/Foo.cs", "toolCallId": "edit-approval-1"}
        }));
        let (foo, bar) = (
            write("/w/Assets/Editor/Foo.cs"),
            write("/w/Assets/Editor/Bar.cs"),
        );
        let shell = OwnFields::from(json!({"kind": "execute", "title": "terminal: ls"}));
        assert_eq!(
            paired_call(&request, [("bar", &bar), ("foo", &foo), ("shell", &shell)]),
            Some("foo")
        );
        assert_eq!(
            paired_call(&request, [("bar", &bar), ("shell", &shell)]),
            None
        );
        // the wrapped arguments are compared as what they wrap
        let other = OwnFields::from(
            json!({"rawInput": {"path": "/w/Assets/Editor/Foo.cs", "content": "x"}}),
        );
        assert_eq!(paired_call(&request, [("other", &other)]), None);
    }
}
