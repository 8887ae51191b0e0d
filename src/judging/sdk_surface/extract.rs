//! The readers of an Agent SDK's published type definitions: from the
//! TypeScript declarations the `SDKControlRequestInner` union (every
//! control request subtype) and the `StdoutMessage` union (every message
//! the SDK reads); from the Python sources the control request
//! `TypedDict`s, the requests its client sends and the message types its
//! parser and reader route. A message type is its `type`, with the
//! `subtype` for `system` messages (`system:init`).

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;

/// What one reader found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub control_subtypes: BTreeSet<String>,
    pub message_types: BTreeSet<String>,
}

/// Reads TypeScript declarations (all files given, concatenated).
/// An empty union, or a union member whose declaration names no
/// `subtype`/`type`, is an error naming it: the layout changed and the
/// reader must learn it, rather than report a surface that lost entries.
pub fn typescript(text: &str) -> Result<Found, String> {
    let decls = declarations(text);
    let mut found = Found::default();
    let inner = union_members(text, "SDKControlRequestInner")
        .ok_or("no `type SDKControlRequestInner = ...` union")?;
    for name in inner {
        let body = decls
            .get(name.as_str())
            .ok_or_else(|| format!("SDKControlRequestInner member {name} is not declared"))?;
        let subtypes = field_literals(body, "subtype");
        if subtypes.is_empty() {
            return Err(format!(
                "SDKControlRequestInner member {name} has no subtype"
            ));
        }
        found.control_subtypes.extend(subtypes);
    }
    let stdout =
        union_members(text, "StdoutMessage").ok_or("no `type StdoutMessage = ...` union")?;
    let mut todo: Vec<String> = stdout;
    let mut seen = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let body = decls
            .get(name.as_str())
            .ok_or_else(|| format!("StdoutMessage member {name} is not declared"))?;
        if let Some(members) = alias_union(body) {
            todo.extend(members);
            continue;
        }
        let types = field_literals(body, "type");
        let Some(kind) = types.first() else {
            return Err(format!("StdoutMessage member {name} has no type"));
        };
        if kind == "system" {
            for s in field_literals(body, "subtype") {
                found.message_types.insert(format!("system:{s}"));
            }
        } else {
            found.message_types.insert(kind.clone());
        }
    }
    Ok(found)
}

/// What an SDK's runtime code does, read from its bundle: the control
/// requests it sends, those it answers, and the system message subtypes
/// it acts on. The declarations say what the SDK may carry; the runtime,
/// what it really sends (TypeScript SDK 0.3.337 declares 41 subtypes and
/// sends 61).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runtime {
    pub sends: BTreeSet<String>,
    pub handles: BTreeSet<String>,
    pub message_types: BTreeSet<String>,
}

/// Reads a minified TypeScript SDK bundle (`sdk.mjs`): `request({subtype:"x"`
/// and `return{subtype:"x"` are requests it sends; `.request.subtype==="x"`
/// requests it answers; any other `<name>.subtype==="x"` (neither a control
/// subtype nor a response's `success`/`error`) and `type:"system",subtype:"x"`
/// are the system messages it reads or makes (`system:x`). Finding no
/// request sent is an error: the bundle's layout changed and the reader
/// must learn it.
pub fn typescript_runtime(text: &str) -> Result<Runtime, String> {
    let sent = Regex::new(r#"(?:request\(|return)\{subtype:"([a-z_]+)""#).unwrap();
    let answered = Regex::new(r#"\.request\.subtype==="([a-z_]+)""#).unwrap();
    let compared = Regex::new(r#"([A-Za-z_$][A-Za-z0-9_$]*)\.subtype==="([a-z_]+)""#).unwrap();
    let made = Regex::new(r#"type:"system",subtype:"([a-z_]+)""#).unwrap();
    let mut r = Runtime::default();
    r.sends
        .extend(sent.captures_iter(text).map(|c| c[1].to_string()));
    if r.sends.is_empty() {
        return Err("no `request({subtype:\"...\"` in the bundle".into());
    }
    r.handles
        .extend(answered.captures_iter(text).map(|c| c[1].to_string()));
    for c in compared.captures_iter(text) {
        let sub = &c[2];
        let control = r.sends.contains(sub) || r.handles.contains(sub);
        if &c[1] != "request" && !control && !matches!(sub, "success" | "error") {
            r.message_types.insert(format!("system:{sub}"));
        }
    }
    r.message_types.extend(
        made.captures_iter(text)
            .map(|c| format!("system:{}", &c[1])),
    );
    Ok(r)
}

/// Each `declare type NAME = ...` with its text up to the end of the
/// declaration (a `;` line end at depth 0).
fn declarations(text: &str) -> BTreeMap<&str, &str> {
    let head = Regex::new(r"(?m)^(?:export )?declare type (\w+)(?:<[^=]*>)? = ").unwrap();
    let mut out = BTreeMap::new();
    for c in head.captures_iter(text) {
        let whole = c.get(0).unwrap();
        let rest = &text[whole.end()..];
        out.insert(c.get(1).unwrap().as_str(), &rest[..declaration_end(rest)]);
    }
    out
}

/// Where a declaration's body ends: the first `;` outside braces,
/// brackets and parentheses at a line end.
fn declaration_end(rest: &str) -> usize {
    let mut depth = 0i32;
    let bytes = rest.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth -= 1,
            b';' if depth <= 0 && bytes.get(i + 1).is_none_or(|n| *n == b'\n') => return i,
            _ => {}
        }
    }
    rest.len()
}

/// The member names of `type NAME = A | B | ns.C;`.
fn union_members(text: &str, name: &str) -> Option<Vec<String>> {
    let decls = declarations(text);
    alias_union(decls.get(name)?)
}

/// A body that is a union (or a single alias) of type names, their names
/// (a namespace prefix dropped); `None` for an object or other type.
fn alias_union(body: &str) -> Option<Vec<String>> {
    let ident = Regex::new(r"^(?:\w+\.)?(\w+)$").unwrap();
    let mut out = Vec::new();
    for part in body.split('|') {
        let c = ident.captures(part.trim())?;
        out.push(c[1].to_string());
    }
    (!out.is_empty()).then_some(out)
}

/// The string literals of a top-level field (four spaces in) of an object
/// type: `subtype: 'a' | 'b';` gives `a`, `b`.
fn field_literals(body: &str, field: &str) -> Vec<String> {
    let line = Regex::new(&format!(r"(?m)^    {field}\??: ([^;\n]+);")).unwrap();
    let lit = Regex::new(r"'([^']+)'").unwrap();
    let Some(c) = line.captures(body) else {
        return Vec::new();
    };
    lit.captures_iter(&c[1]).map(|l| l[1].to_string()).collect()
}

/// Reads Python sources (each file by its path in the package): the
/// `subtype: Literal["x"]` of every `TypedDict` named `...Request`, the
/// `"subtype": "x"` of every `_send_control_request({...})`, the `case
/// "x":` of the message parser's `match` on the type (and on a system
/// message's subtype), and the `msg_type == "x"` routes of the reader.
pub fn python(files: &[(String, String)]) -> Result<Found, String> {
    let mut found = Found::default();
    let class = Regex::new(r"(?m)^class (\w+Request)\(TypedDict\):").unwrap();
    let subtype_lit = Regex::new(r#"^\s+subtype: Literal\["([^"]+)"\]"#).unwrap();
    let sent = Regex::new(r#"_send_control_request\(\s*\{\s*"subtype":\s*"([^"]+)""#).unwrap();
    let routed = Regex::new(r#"msg_type == "([^"]+)""#).unwrap();
    for (path, text) in files {
        for c in class.captures_iter(text) {
            let body = &text[c.get(0).unwrap().end()..];
            let end = body
                .find("\nclass ")
                .or_else(|| body.find("\n\n\n"))
                .unwrap_or(body.len());
            if let Some(s) = body[..end].lines().find_map(|l| subtype_lit.captures(l)) {
                found.control_subtypes.insert(s[1].to_string());
            }
        }
        for c in sent.captures_iter(text) {
            found.control_subtypes.insert(c[1].to_string());
        }
        for c in routed.captures_iter(text) {
            found.message_types.insert(c[1].to_string());
        }
        if path.ends_with("message_parser.py") {
            let types = parser_cases(text);
            if types.is_empty() {
                return Err(format!(
                    "{path}: no `case \"user\":` of a match on the message type"
                ));
            }
            found.message_types.extend(types);
        }
    }
    if found.control_subtypes.is_empty() {
        return Err("no control request subtype found".into());
    }
    // the reader's `msg_type == "system"` is every system message; they
    // count by subtype
    found.message_types.remove("system");
    Ok(found)
}

/// The message parser's cases: those at the indentation of `case "user":`,
/// and inside `case "system":` those of its `match subtype:`.
fn parser_cases(text: &str) -> Vec<String> {
    let case = Regex::new(r#"^(\s*)case "([^"]+)":"#).unwrap();
    let Some(top) = text
        .lines()
        .find_map(|l| case.captures(l).filter(|c| &c[2] == "user"))
        .map(|c| c[1].len())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut system_sub: Option<Option<usize>> = None;
    for l in text.lines() {
        let indent = l.len() - l.trim_start().len();
        if l.trim_start().starts_with("match subtype") {
            if let Some(None) = system_sub {
                system_sub = Some(Some(indent + 4));
            }
            continue;
        }
        let Some(c) = case.captures(l) else {
            continue;
        };
        if indent == top {
            system_sub = (&c[2] == "system").then_some(None);
            if &c[2] != "system" {
                out.push(c[2].to_string());
            }
        } else if system_sub == Some(Some(indent)) {
            out.push(format!("system:{}", &c[2]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: &str = "\
declare type SDKControlInterruptRequest = {
    subtype: 'interrupt';
};

declare type SDKControlSetModelRequest = {
    subtype: 'set_model';
    model?: string;
};

declare type SDKControlRequestInner = SDKControlInterruptRequest | SDKControlSetModelRequest;

export declare type SDKAssistantMessage = {
    type: 'assistant';
    message: {
        type: 'ignored';
    };
};

export declare type SDKSystemMessage = {
    type: 'system';
    subtype: 'init';
};

export declare type SDKResultMessage = SDKResultSuccess | SDKResultError;

export declare type SDKResultSuccess = {
    type: 'result';
    subtype: 'success';
};

export declare type SDKResultError = {
    type: 'result';
    subtype: 'error_max_turns' | 'error_during_execution';
};

export declare type SDKMessage = SDKAssistantMessage | SDKSystemMessage | SDKResultMessage;

declare type StdoutMessage = coreTypes.SDKMessage | SDKKeepAlive;

declare type SDKKeepAlive = {
    type: 'keep_alive';
};
";

    #[test]
    fn typescript_unions_give_subtypes_and_message_types_through_aliases() {
        let f = typescript(TS).unwrap();
        assert_eq!(
            f.control_subtypes.iter().collect::<Vec<_>>(),
            ["interrupt", "set_model"]
        );
        assert_eq!(
            f.message_types.iter().collect::<Vec<_>>(),
            ["assistant", "keep_alive", "result", "system:init"]
        );
    }

    #[test]
    fn typescript_member_without_a_subtype_is_an_error_naming_it() {
        let text = TS.replace("    subtype: 'interrupt';\n", "");
        let e = typescript(&text).unwrap_err();
        assert!(e.contains("SDKControlInterruptRequest"), "{e}");
        let e = typescript("declare type X = {\n};\n").unwrap_err();
        assert!(e.contains("SDKControlRequestInner"), "{e}");
    }

    #[test]
    fn a_bundle_gives_the_requests_sent_and_answered_and_the_system_messages_read() {
        let bundle = r#"async stopTask(e){await this.request({subtype:"stop_task",task_id:e})}
            build(){return{subtype:"initialize",hooks:1}}
            if(e.request.subtype==="can_use_tool"){}else if(e.request.subtype==="ui_view"){}
            if(e.type==="system"&&(e.subtype==="post_turn_summary"||e.subtype==="task_summary")){}
            if(n.subtype==="initialize"||r.subtype==="success"){}
            let o={type:"system",subtype:"mirror_error",error:t};
            let p={type:"control_response",response:{subtype:"success",request_id:1}};"#;
        let r = typescript_runtime(bundle).unwrap();
        let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
        assert_eq!(list(&r.sends), ["initialize", "stop_task"]);
        assert_eq!(list(&r.handles), ["can_use_tool", "ui_view"]);
        assert_eq!(
            list(&r.message_types),
            [
                "system:mirror_error",
                "system:post_turn_summary",
                "system:task_summary"
            ]
        );
        let e = typescript_runtime("export {}").unwrap_err();
        assert!(e.contains("request({subtype"), "{e}");
    }

    #[test]
    fn python_typed_dicts_sends_routes_and_parser_cases_are_read() {
        let types = "\
class SDKControlInterruptRequest(TypedDict):
    subtype: Literal[\"interrupt\"]


class SDKControlPermissionRequest(TypedDict):
    subtype: Literal[\"can_use_tool\"]
    tool_name: str


class ControlResponse(TypedDict):
    subtype: Literal[\"success\"]
";
        let query = "\
        return await self._send_control_request({\"subtype\": \"mcp_status\"})
            await self._send_control_request(
                {
                    \"subtype\": \"set_model\",
                }
            )
            if msg_type == \"control_response\":
";
        let parser = "\
    match message_type:
        case \"user\":
            match block:
                case \"text\":
                    pass
        case \"system\":
            subtype = data[\"subtype\"]
            match subtype:
                case \"task_started\":
                    pass
        case \"result\":
            pass
";
        let f = python(&[
            ("pkg/types.py".into(), types.into()),
            ("pkg/_internal/query.py".into(), query.into()),
            ("pkg/_internal/message_parser.py".into(), parser.into()),
        ])
        .unwrap();
        assert_eq!(
            f.control_subtypes.iter().collect::<Vec<_>>(),
            ["can_use_tool", "interrupt", "mcp_status", "set_model"]
        );
        assert_eq!(
            f.message_types.iter().collect::<Vec<_>>(),
            ["control_response", "result", "system:task_started", "user"]
        );
    }
}
