//! The tool catalogue as data: names, descriptions, schemas and annotations.
//!
//! Kept as plain data (not `#[tool]` macros) so a scenario can pick which tools
//! the server offers, and so the recorder can show what the agent was told.

use rmcp::model::Tool;
use serde_json::{Value, json};

/// MCP tool annotations (all are hints to the client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// One tool the stub can offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments, as JSON text.
    pub input_schema: &'static str,
    /// JSON Schema of `structuredContent`, as JSON text, for tools that return it.
    pub output_schema: Option<&'static str>,
    pub hints: Hints,
}

const NO_ARGS: &str = r#"{"type":"object","properties":{}}"#;

/// The hints of a tool that only reads the (pretend) editor: most of the
/// catalogue, so they are spelled once.
const READ_ONLY: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

static CATALOGUE: [ToolSpec; 7] = [
    ToolSpec {
        name: "uap_ping",
        title: "Ping the Unity editor",
        description: "Checks that the Unity editor bridge answers. Returns the text \"pong\".",
        input_schema: NO_ARGS,
        output_schema: None,
        // Not read-only on purpose: agents ask the user before calling it, which
        // is what permission scenarios need.
        hints: Hints {
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
    },
    ToolSpec {
        name: "uap_editor_screenshot",
        title: "Capture an editor view",
        description: "Captures the Scene or Game view of the Unity editor as a PNG. Returns one text \
line naming the saved file and its size, plus the image itself unless return_image is false.",
        input_schema: r#"{"type":"object","properties":{"view":{"type":"string","enum":["scene","game"],"default":"scene","description":"Which editor view to capture."},"return_image":{"type":"boolean","default":true,"description":"Also return the PNG as an image block."}}}"#,
        output_schema: None,
        hints: READ_ONLY,
    },
    ToolSpec {
        name: "uap_scripts_commit",
        title: "Compile and commit staged scripts",
        description: "Compiles the C# scripts staged under UapStaging/ and, only if they compile, \
moves them into Assets/ at the mirrored path (UapStaging/Editor/Foo.cs -> Assets/Editor/Foo.cs). \
Stub rule: a staged file whose name contains \"Broken\" fails to compile; files outside \
UapStaging/ or not ending in .cs or .asmdef are rejected. With no paths, the fixture list of \
staged files is used.",
        input_schema: r#"{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"},"description":"Staged files to commit, relative to the project root (UapStaging/...). Defaults to everything staged."}}}"#,
        output_schema: None,
        hints: Hints {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
        },
    },
    ToolSpec {
        name: "uap_fail",
        title: "Always fail",
        description: "Always fails: returns a tool result with isError true.",
        input_schema: NO_ARGS,
        output_schema: None,
        hints: READ_ONLY,
    },
    ToolSpec {
        name: "uap_rpc_error",
        title: "Always raise a protocol error",
        description: "Always answers with a JSON-RPC error instead of a tool result.",
        input_schema: NO_ARGS,
        output_schema: None,
        hints: READ_ONLY,
    },
    ToolSpec {
        name: "uap_slow",
        title: "Wait, then answer",
        description: "Waits ms milliseconds (at most 60000) and then answers. Stops early and says \
so when the request is cancelled.",
        input_schema: r#"{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":60000,"default":1000,"description":"How long to wait, in milliseconds."}}}"#,
        output_schema: None,
        hints: READ_ONLY,
    },
    ToolSpec {
        name: "uap_structured",
        title: "Describe the open scene",
        description: "Returns a summary of the open scene as structuredContent (and the same JSON \
as text), with _meta.",
        input_schema: NO_ARGS,
        output_schema: Some(
            r#"{"type":"object","properties":{"scene":{"type":"string"},"path":{"type":"string"},"rootObjects":{"type":"array","items":{"type":"string"}},"dirty":{"type":"boolean"}},"required":["scene","path","rootObjects","dirty"]}"#,
        ),
        hints: READ_ONLY,
    },
];

/// Every tool the stub knows, in the order `tools/list` gives them.
pub fn catalogue() -> &'static [ToolSpec] {
    &CATALOGUE
}

/// The catalogue entry named `name`.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    CATALOGUE.iter().find(|spec| spec.name == name)
}

impl ToolSpec {
    /// The tool as it appears in `tools/list`.
    pub fn to_json(&self) -> Value {
        let mut tool = json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": schema(self.input_schema),
        });
        if let Some(output) = self.output_schema {
            tool["outputSchema"] = schema(output);
        }
        tool["annotations"] = json!({
            "title": self.title,
            "readOnlyHint": self.hints.read_only,
            "destructiveHint": self.hints.destructive,
            "idempotentHint": self.hints.idempotent,
            "openWorldHint": self.hints.open_world,
        });
        tool
    }

    /// The tool as rmcp's model type.
    pub fn to_tool(&self) -> Tool {
        serde_json::from_value(self.to_json()).unwrap_or_else(|e| {
            panic!("catalogue entry {} is not a valid MCP tool: {e}", self.name)
        })
    }
}

fn schema(text: &str) -> Value {
    // The schemas are compile-time constants; a test parses every one of them.
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("catalogue schema is not JSON: {e}: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_converts_to_an_rmcp_tool_with_object_schemas() {
        for spec in catalogue() {
            let tool = spec.to_tool();
            assert_eq!(tool.name, spec.name);
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                spec.name
            );
            if let Some(output) = &tool.output_schema {
                assert_eq!(output.get("type"), Some(&json!("object")), "{}", spec.name);
            }
        }
    }

    #[test]
    fn names_are_unique_and_uap_prefixed() {
        let mut names: Vec<_> = catalogue().iter().map(|s| s.name).collect();
        assert!(names.iter().all(|n| n.starts_with("uap_")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), catalogue().len());
    }

    #[test]
    fn ping_asks_permission_and_screenshot_does_not() {
        assert!(!find("uap_ping").unwrap().hints.read_only);
        assert!(find("uap_editor_screenshot").unwrap().hints.read_only);
    }
}
