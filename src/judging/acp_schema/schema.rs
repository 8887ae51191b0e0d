//! The vendored ACP schemas (`schema/acp-v1/`, and the v2 draft's
//! `schema/acp-v2/`), each compiled once per process; a recording is judged
//! against the revision it negotiated.
//!
//! The schema's `$defs` carry `x-method` (the JSON-RPC method a definition
//! belongs to); `meta.json` says which side handles each method. Together they
//! name the definition a frame's `params` or `result` must match, so each
//! definition gets its own validator, a `$ref` into the registered root,
//! compiled the first time a frame needs it.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Registry, ValidationError, Validator};
use serde_json::{Value, json};

/// One vendored revision's files.
struct Vendored {
    dir: &'static str,
    schema: &'static str,
    meta: &'static str,
    version: &'static str,
    /// The root's name in the registry: the schema has no `$id` of its own.
    root_uri: &'static str,
}

const V1: Vendored = Vendored {
    dir: "acp-v1",
    schema: include_str!("../../../schema/acp-v1/schema.json"),
    meta: include_str!("../../../schema/acp-v1/meta.json"),
    version: include_str!("../../../schema/acp-v1/VERSION"),
    root_uri: "urn:acp-harness:acp-schema-v1",
};

const V2: Vendored = Vendored {
    dir: "acp-v2",
    schema: include_str!("../../../schema/acp-v2/schema.json"),
    meta: include_str!("../../../schema/acp-v2/meta.json"),
    version: include_str!("../../../schema/acp-v2/VERSION"),
    root_uri: "urn:acp-harness:acp-schema-v2",
};

/// The files of the revision a `protocol_version` names (v1 for any other).
fn vendored_for(protocol: u64) -> &'static Vendored {
    if protocol == 2 { &V2 } else { &V1 }
}

/// Which v1 schema is vendored (`schema/acp-v1/VERSION`: where it came
/// from and its version), so a verdict and a recording can name what they
/// were judged against.
pub fn version() -> &'static str {
    V1.version.trim()
}

/// Which schema a recording of `protocol` (its negotiated revision) is
/// judged against.
pub fn version_for(protocol: u64) -> &'static str {
    vendored_for(protocol).version.trim()
}

/// What a frame is in JSON-RPC terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Request,
    Response,
    Notification,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Request => "Request",
            Kind::Response => "Response",
            Kind::Notification => "Notification",
        }
    }
}

/// Which side handles a method (receives its requests and notifications).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Handler {
    Agent,
    Client,
    /// `$/...` methods either side may send.
    Either,
}

/// One schema violation: where in the frame, and the schema's complaint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// A JSON pointer into the whole frame (`/params/update/used`).
    pub pointer: String,
    pub message: String,
}

/// The schema, its method table and the validators compiled so far.
pub struct AcpSchema {
    root_uri: &'static str,
    registry: Registry<'static>,
    /// method -> which side handles it (from `meta.json`).
    handlers: HashMap<String, Handler>,
    /// (method, kind) -> `$defs` name.
    definitions: HashMap<(String, Kind), String>,
    validators: HashMap<String, OnceLock<Result<Validator, String>>>,
}

/// Why the vendored schema cannot be used (a broken vendoring, not bad input).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("schema/{dir}/{file}: {message}")]
    Vendored {
        dir: &'static str,
        file: &'static str,
        message: String,
    },
}

impl AcpSchema {
    /// The process-wide v1 schema; compiled on first use.
    pub fn get() -> Result<&'static AcpSchema, &'static SchemaError> {
        AcpSchema::for_protocol(1)
    }

    /// The process-wide schema of the revision `protocol` names (a
    /// recording header's `protocol_version`; v1 for any but 2).
    pub fn for_protocol(protocol: u64) -> Result<&'static AcpSchema, &'static SchemaError> {
        static SCHEMA_V1: OnceLock<Result<AcpSchema, SchemaError>> = OnceLock::new();
        static SCHEMA_V2: OnceLock<Result<AcpSchema, SchemaError>> = OnceLock::new();
        let slot = if protocol == 2 {
            &SCHEMA_V2
        } else {
            &SCHEMA_V1
        };
        slot.get_or_init(|| AcpSchema::load(vendored_for(protocol)))
            .as_ref()
    }

    fn load(files: &'static Vendored) -> Result<AcpSchema, SchemaError> {
        let vendored = |file: &'static str, message: &dyn ToString| SchemaError::Vendored {
            dir: files.dir,
            file,
            message: message.to_string(),
        };
        let root: Value =
            serde_json::from_str(files.schema).map_err(|e| vendored("schema.json", &e))?;
        let meta: Value =
            serde_json::from_str(files.meta).map_err(|e| vendored("meta.json", &e))?;
        let mut handlers = HashMap::new();
        for (table, handler) in [
            ("agentMethods", Handler::Agent),
            ("clientMethods", Handler::Client),
            ("protocolMethods", Handler::Either),
        ] {
            let methods = meta
                .get(table)
                .and_then(Value::as_object)
                .ok_or_else(|| vendored("meta.json", &format!("no `{table}` object")))?;
            for method in methods.values().filter_map(Value::as_str) {
                handlers.insert(method.to_string(), handler);
            }
        }
        let defs = root
            .get("$defs")
            .and_then(Value::as_object)
            .ok_or_else(|| vendored("schema.json", &"no `$defs` object"))?;
        let mut definitions = HashMap::new();
        for (name, def) in defs {
            let Some(method) = def.get("x-method").and_then(Value::as_str) else {
                continue;
            };
            for kind in [Kind::Request, Kind::Response, Kind::Notification] {
                if name.ends_with(kind.suffix()) {
                    definitions.insert((method.to_string(), kind), name.clone());
                }
            }
        }
        let mut validators: HashMap<String, OnceLock<_>> = definitions
            .values()
            .map(|name| (name.clone(), OnceLock::new()))
            .collect();
        validators.insert("Error".to_string(), OnceLock::new());
        let registry = Registry::new()
            .add(files.root_uri, root)
            .and_then(|b| b.prepare())
            .map_err(|e| vendored("schema.json", &e))?;
        Ok(AcpSchema {
            root_uri: files.root_uri,
            registry,
            handlers,
            definitions,
            validators,
        })
    }

    /// Which side handles `method`, `None` for a method outside the schema.
    pub fn handler(&self, method: &str) -> Option<Handler> {
        self.handlers.get(method).copied()
    }

    /// The `$defs` entry for `method`'s frame of `kind`.
    pub fn definition(&self, method: &str, kind: Kind) -> Option<&str> {
        self.definitions
            .get(&(method.to_string(), kind))
            .map(String::as_str)
    }

    /// Every method `meta.json` names, with its handler.
    pub fn methods(&self) -> BTreeMap<&str, Handler> {
        self.handlers
            .iter()
            .map(|(m, h)| (m.as_str(), *h))
            .collect()
    }

    /// `value` (found at `at`, a pointer into the frame) against `$defs/<definition>`.
    pub fn validate(
        &self,
        definition: &str,
        value: &Value,
        at: &str,
    ) -> Result<Vec<Violation>, String> {
        let slot = self
            .validators
            .get(definition)
            .ok_or_else(|| format!("the schema has no definition `{definition}`"))?;
        let validator = slot
            .get_or_init(|| {
                jsonschema::options()
                    .with_draft(Draft::Draft202012)
                    .with_registry(&self.registry)
                    .build(&json!({ "$ref": format!("{}#/$defs/{definition}", self.root_uri) }))
                    .map_err(|e| format!("cannot compile `{definition}`: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let mut out = Vec::new();
        for error in validator.iter_errors(value) {
            violations_of(&error, at, &mut out);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// `error` as violations people can act on. A failed `oneOf` / `anyOf` over
/// a tagged union says only that no branch matched; the branch meant is the
/// one whose tag (`const`) matched, so its errors are reported instead, and
/// every message leaves the instance out (the pointer says where it is).
fn violations_of(error: &ValidationError<'_>, at: &str, out: &mut Vec<Violation>) {
    let branches = match error.kind() {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            Some(context)
        }
        _ => None,
    };
    let meant = branches.and_then(|branches| {
        let tagged: Vec<_> = branches
            .iter()
            .filter(|b| {
                !b.is_empty()
                    && !b
                        .iter()
                        .any(|e| matches!(e.kind(), ValidationErrorKind::Constant { .. }))
            })
            .collect();
        // the meant branch only when exactly one branch's tag matched
        match tagged.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    });
    match meant {
        Some(branch) => {
            for e in branch {
                violations_of(e, at, out);
            }
        }
        None => out.push(Violation {
            pointer: format!("{at}{}", error.instance_path()),
            message: error.masked().to_string(),
        }),
    }
}
