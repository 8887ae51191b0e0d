//! The MCP server behaviour: `tools/list` from the catalogue, `tools/call`
//! dispatch, and a legacy (initialize-lifecycle) protocol range.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    Implementation, InitializeResult, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::catalogue::ToolSpec;
use crate::screenshot::{self, Screenshot};
use crate::staging;

/// Longest `uap_slow` wait.
pub const SLOW_CAP_MS: u64 = 60_000;

/// Newest protocol revision the stub speaks: the unity-ops server it imitates
/// predates the `server/discover` lifecycle.
pub const NEWEST_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// State shared by every session.
#[derive(Debug)]
pub(crate) struct Tools {
    offered: Vec<&'static ToolSpec>,
    listed: Vec<Tool>,
    screenshot_base64_len: usize,
    screenshot: OnceLock<Screenshot>,
    workspace: String,
    staged: Vec<String>,
    in_flight: Arc<AtomicUsize>,
}

impl Tools {
    pub(crate) fn new(
        offered: Vec<&'static ToolSpec>,
        screenshot_base64_len: usize,
        workspace: String,
        staged: Vec<String>,
    ) -> Self {
        let listed = offered.iter().map(|spec| spec.to_tool()).collect();
        let in_flight = Arc::new(AtomicUsize::new(0));
        Tools {
            offered,
            listed,
            screenshot_base64_len,
            screenshot: OnceLock::new(),
            workspace,
            staged,
            in_flight,
        }
    }

    /// Counter of tool calls whose handler has not returned yet.
    pub(crate) fn in_flight(&self) -> Arc<AtomicUsize> {
        self.in_flight.clone()
    }

    fn screenshot(&self) -> &Screenshot {
        self.screenshot
            .get_or_init(|| screenshot::render(self.screenshot_base64_len))
    }
}

/// One handler per session (or per stateless request); all share [`Tools`].
#[derive(Debug, Clone)]
pub(crate) struct UnityOps {
    tools: Arc<Tools>,
}

impl UnityOps {
    pub(crate) fn new(tools: Arc<Tools>) -> Self {
        UnityOps { tools }
    }

    async fn dispatch(
        &self,
        name: &str,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        match name {
            "uap_ping" => Ok(CallToolResult::success(vec![ContentBlock::text("pong")])),
            "uap_editor_screenshot" => self.screenshot_tool(args),
            "uap_scripts_commit" => {
                let paths = match args.get("paths") {
                    None | Some(Value::Null) => self.tools.staged.clone(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.as_str()
                                .map(str::to_string)
                                .ok_or_else(|| bad_arg(name, &format!("paths[{i}]"), "a string", v))
                        })
                        .collect::<Result<_, _>>()?,
                    Some(other) => {
                        return Err(bad_arg(name, "paths", "an array of strings", other));
                    }
                };
                let outcome = staging::commit(&paths);
                let block = vec![ContentBlock::text(outcome.text)];
                Ok(if outcome.ok {
                    CallToolResult::success(block)
                } else {
                    CallToolResult::error(block)
                })
            }
            "uap_fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "uap_fail: the editor reported a failure (this tool always fails)",
            )])),
            "uap_rpc_error" => Err(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                "uap_rpc_error: the editor bridge raised an internal error (this tool always does)",
                Some(json!({"tool": "uap_rpc_error"})),
            )),
            "uap_slow" => {
                let ms = match args.get("ms") {
                    None | Some(Value::Null) => 1000,
                    Some(v) => v
                        .as_u64()
                        .or_else(|| {
                            v.as_f64()
                                .filter(|f| *f >= 0.0 && f.is_finite())
                                .map(|f| f as u64)
                        })
                        // Models sometimes quote numbers.
                        .or_else(|| v.as_str().and_then(|t| t.trim().parse::<u64>().ok()))
                        .ok_or_else(|| bad_arg(name, "ms", "a non-negative integer", v))?,
                }
                .min(SLOW_CAP_MS);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                        Ok(CallToolResult::success(vec![ContentBlock::text(format!("uap_slow: waited {ms} ms"))]))
                    }
                    _ = context.ct.cancelled() => {
                        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
                            "uap_slow: cancelled before {ms} ms had passed"
                        ))]);
                        result.meta = Some(meta(json!({"cancelled": true})));
                        Ok(result)
                    }
                }
            }
            "uap_structured" => {
                let value = json!({
                    "scene": "SampleScene",
                    "path": "Assets/Scenes/SampleScene.unity",
                    "rootObjects": ["Main Camera", "Directional Light", "Player"],
                    "dirty": false,
                });
                let mut result = CallToolResult::structured(value);
                result.meta = Some(meta(
                    json!({"unity-ops/editorVersion": "6000.0.23f1", "unity-ops/stub": true}),
                ));
                Ok(result)
            }
            other => Err(unknown_tool(other)),
        }
    }

    fn screenshot_tool(&self, args: &JsonObject) -> Result<CallToolResult, ErrorData> {
        const NAME: &str = "uap_editor_screenshot";
        let view = match args.get("view") {
            None | Some(Value::Null) => "scene".to_string(),
            Some(Value::String(s))
                if matches!(s.to_ascii_lowercase().as_str(), "scene" | "game") =>
            {
                s.to_ascii_lowercase()
            }
            Some(other) => return Err(bad_arg(NAME, "view", "\"scene\" or \"game\"", other)),
        };
        let return_image = match args.get("return_image") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(t)) if t.eq_ignore_ascii_case("true") => true,
            Some(Value::String(t)) if t.eq_ignore_ascii_case("false") => false,
            Some(other) => return Err(bad_arg(NAME, "return_image", "a boolean", other)),
        };
        let shot = self.tools.screenshot();
        let title = if view == "game" { "Game" } else { "Scene" };
        let text = format!(
            "Captured {title} view to {}/Temp/uap_{view}.png ({}x{})",
            self.tools.workspace, shot.width, shot.height
        );
        let mut content = vec![ContentBlock::text(text)];
        if return_image {
            content.push(ContentBlock::image(shot.base64.clone(), "image/png"));
        }
        Ok(CallToolResult::success(content))
    }
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject(JsonObject::new()),
    }
}

fn bad_arg(tool: &str, field: &str, expected: &str, got: &Value) -> ErrorData {
    ErrorData::invalid_params(
        format!("{tool}: argument {field} must be {expected}, got {got}"),
        None,
    )
}

fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {name}"), Some(json!({"tool": name})))
}

impl ServerHandler for UnityOps {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = NEWEST_PROTOCOL;
        let mut implementation = Implementation::new("unity-ops", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("unity-ops (stub-mcp)".to_string());
        info.server_info = implementation;
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&NEWEST_PROTOCOL))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.listed.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools
            .listed
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if !self.tools.offered.iter().any(|spec| spec.name == name) {
            return Err(unknown_tool(name));
        }
        let args = request.arguments.unwrap_or_default();
        let _running = InFlight::enter(&self.tools.in_flight);
        self.dispatch(name, &args, &context).await.map(Into::into)
    }
}

/// Counts a running tool call until dropped (also when the call is aborted).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
