//! The scripted model server: a loopback HTTP server that speaks a
//! provider's model API and answers from the scenario's model steps.
//!
//! Deterministic by construction: which reply answers a request is decided
//! from the request body alone ([`script`]), ids in the replies are counters,
//! tool call ids come from the script. Every request and response is
//! published as a [`ModelExchange`] for the model leg of the recording.
//!
//! Provider APIs are [`Flavour`]s; each lives in its own module and
//! implements [`ProviderApi`] (read a request into a flavour-neutral
//! [`RequestView`], render a [`ReplyPlan`] or an error). Chat Completions,
//! Gemini and Anthropic Messages came in that way after Responses; another
//! provider is one more module and `Flavour` variant, while the server, the
//! script and the tool naming stay as they are.
//!
//! **Only 127.0.0.1 is ever bound** (an ephemeral port); there is no way
//! to ask for another address.

pub mod agent_tools;
pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod naming;
pub mod reply_plan;
pub mod responses;
pub mod script;
pub mod side_requests;

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use agent_tools::{AgentTool, AgentToolError, AgentTools};
pub use naming::{OfferedTool, ToolNaming, ToolRef};
pub use reply_plan::{PlannedCall, ReplyPlan};
use reply_plan::{plan, unscripted};
pub use script::{Entry, ModelScript, ScriptTurn, Selection};
pub use side_requests::{SideRequest, SideRequestError, SideRequests};

use crate::corpus::scenario::{ApiError, ModelReply};

/// What replaces secret header values in published exchanges: the same
/// marker stub-mcp writes, so both HTTP legs of a recording read alike.
pub use stub_mcp::REDACTED;

/// The answer to a model request that the script does not cover (a
/// request past a turn's last reply, one that is not a scripted turn) and
/// the default answer to a declared side request. Short and neutral, so it
/// cannot steer the agent; an off-script use is published as a
/// [`ModelExchange::OffScript`], a side request as a [`ModelExchange::Note`].
pub const UNSCRIPTED_TEXT: &str = "OK.";

/// Largest request body accepted (requests carry whole conversations,
/// images included).
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// How long a request body may take to arrive.
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`Running::shutdown`] waits for open connections to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The provider APIs the server can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flavour {
    /// OpenAI Responses over SSE (`POST /v1/responses`), as codex uses it.
    Responses,
    /// OpenAI Chat Completions, streaming (`POST /v1/chat/completions`), as Grok Build uses it.
    ChatCompletions,
    /// Gemini `streamGenerateContent?alt=sse` (`/v1beta/models/<m>:...`), as Gemini CLI uses it.
    Gemini,
    /// Anthropic Messages over SSE (`POST /v1/messages`), as Claude Code uses it.
    Anthropic,
}

impl Flavour {
    fn api(self) -> Box<dyn ProviderApi> {
        match self {
            Flavour::Responses => Box::new(responses::Responses),
            Flavour::ChatCompletions => Box::new(chat::ChatCompletions),
            Flavour::Gemini => Box::new(gemini::Gemini),
            Flavour::Anthropic => Box::new(anthropic::Anthropic),
        }
    }
}

/// One half of an HTTP exchange with the model server, or a note about
/// how a request was answered. The halves are stub-mcp's own
/// [`stub_mcp::Exchange`], so the recorder writes both HTTP legs alike; `id`
/// pairs a response (and notes) with its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelExchange {
    /// A request (body as received, lossy UTF-8; secrets redacted) or its
    /// response (for SSE the whole stream text).
    Http(stub_mcp::Exchange),
    /// How the script placed request `id` when that is worth knowing (an
    /// unscripted answer, a tool-name fallback). For the recording's
    /// harness notes.
    Note {
        id: u64,
        text: String,
        at: SystemTime,
    },
    /// Request `id` is neither a scripted turn nor a declared side request:
    /// `text` names the request and why it did not match. The recorder ends
    /// the run `off_script`.
    OffScript {
        id: u64,
        text: String,
        at: SystemTime,
    },
}

impl ModelExchange {
    pub fn id(&self) -> u64 {
        match self {
            ModelExchange::Http(exchange) => exchange.id(),
            ModelExchange::Note { id, .. } | ModelExchange::OffScript { id, .. } => *id,
        }
    }

    pub fn at(&self) -> SystemTime {
        match self {
            ModelExchange::Http(exchange) => exchange.at(),
            ModelExchange::Note { at, .. } | ModelExchange::OffScript { at, .. } => *at,
        }
    }
}

/// A request as a flavour reads it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestView {
    /// The conversation, oldest first.
    pub conversation: Vec<Entry>,
    /// The tools the agent offered the model, in the agent's naming.
    pub offered_tools: Vec<OfferedTool>,
    /// Whether the request carries a tool list at all (an empty one too):
    /// a request that could act, as a turn is, even of an agent with no
    /// tools of its own.
    pub tool_list: bool,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// The model the request names, echoed back in replies.
    pub model: Option<String>,
    /// The system prompt's texts (`system`, `instructions`, system or
    /// developer messages, `systemInstruction`), for side-request matchers.
    pub system: Vec<String>,
}

impl RequestView {
    /// The view of a JSON body that names `stream` and `model` at its top
    /// level, as the OpenAI (Responses, Chat Completions) and Anthropic APIs
    /// do; Gemini puts both in the path instead.
    pub(crate) fn from_body(
        body: &Value,
        conversation: Vec<Entry>,
        offered_tools: Vec<OfferedTool>,
    ) -> Self {
        RequestView {
            conversation,
            offered_tools,
            tool_list: body.get("tools").is_some_and(Value::is_array),
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            system: Vec::new(),
        }
    }

    pub(crate) fn with_system(mut self, system: Vec<String>) -> Self {
        self.system = system;
        self
    }
}

/// The texts of an OpenAI-style message `content`: either one string or an
/// array of parts, of which those with a `text` count (Chat Completions and
/// Responses both allow either shape).
pub(crate) fn content_texts(content: Option<&Value>) -> Vec<String> {
    match content {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Split text into word-sized deltas (each keeps its trailing space), so an
/// agent streams several chunks and `chunks:N` points exist.
pub fn stream_chunks(text: &str) -> Vec<&str> {
    let v: Vec<&str> = text.split_inclusive(' ').collect();
    if v.is_empty() { vec![text] } else { v }
}

/// A deterministic `input_tokens` figure for request number `seq`.
pub fn input_tokens(seq: u64) -> u64 {
    100 * seq
}

/// An HTTP answer from a flavour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

/// One provider API: how to recognise its model requests, read them, and
/// render replies and errors.
pub trait ProviderApi: Send + Sync + 'static {
    /// Answer a request this API serves that is not a model turn (model
    /// lists, token counts, router calls); `None` = not such a request.
    fn serve_auxiliary(&self, _method: &Method, _path: &str, _body: &[u8]) -> Option<HttpReply> {
        None
    }
    /// Whether this is a model request of this API (else 404).
    fn is_model_request(&self, method: &Method, path: &str) -> bool;
    /// Read the conversation and the offered tools; `Err` is a message for a 400.
    fn read_request(&self, path: &str, body: &[u8]) -> Result<RequestView, String>;
    /// Render a reply; `seq` is the request's number (1-based) for ids.
    fn render_reply(&self, plan: &ReplyPlan, view: &RequestView, seq: u64) -> HttpReply;
    /// Render a scripted API error.
    fn render_error(&self, error: &ApiError) -> HttpReply;
    /// Render a protocol error of ours (bad request, unknown path).
    fn render_protocol_error(&self, status: u16, message: &str) -> HttpReply;
}

/// Failure to start the server.
#[derive(Debug, thiserror::Error)]
pub enum ModelServerError {
    #[error("model server: cannot bind 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
}

/// The scripted model server.
pub struct ModelServer;

impl ModelServer {
    /// Start serving on 127.0.0.1 with an ephemeral port. Must be called
    /// inside a tokio runtime.
    pub async fn start(
        flavour: Flavour,
        script: ModelScript,
        naming: ToolNaming,
    ) -> Result<Running, ModelServerError> {
        Self::start_with_agent_tools(flavour, script, naming, AgentTools::default()).await
    }

    /// [`ModelServer::start`] with the profile's table of the agent's own
    /// tools, for scripted calls of a role (`agent_tool = "shell"`).
    pub async fn start_with_agent_tools(
        flavour: Flavour,
        script: ModelScript,
        naming: ToolNaming,
        agent_tools: AgentTools,
    ) -> Result<Running, ModelServerError> {
        Self::start_with_profile(
            flavour,
            script,
            naming,
            agent_tools,
            SideRequests::default(),
        )
        .await
    }

    /// [`ModelServer::start_with_agent_tools`] with the profile's declared
    /// side requests (answered, not off script).
    pub async fn start_with_profile(
        flavour: Flavour,
        script: ModelScript,
        naming: ToolNaming,
        agent_tools: AgentTools,
        side_requests: SideRequests,
    ) -> Result<Running, ModelServerError> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .map_err(ModelServerError::Bind)?;
        let addr = listener.local_addr().map_err(ModelServerError::Bind)?;
        let (tx, rx) = unbounded_channel();
        let (script, agent_tools) = agent_tools.expand(script);
        let state = Arc::new(ServerState {
            api: flavour.api(),
            script,
            naming,
            agent_tools,
            side_requests,
            events: tx,
            next_id: AtomicU64::new(1),
            served: Mutex::new(BTreeSet::new()),
        });
        let app = axum::Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(state.clone());
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stop_rx.await;
                })
                .await;
        });
        Ok(Running {
            addr,
            state,
            events: Some(rx),
            stop: Some(stop_tx),
            task: Some(task),
        })
    }
}

/// A running model server. Dropping it stops the server at once.
pub struct Running {
    addr: SocketAddr,
    state: Arc<ServerState>,
    events: Option<UnboundedReceiver<ModelExchange>>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Running {
    /// The base URL, `http://127.0.0.1:PORT` (no path; the agent profile
    /// appends `/v1` or whatever its provider expects).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The exchange stream; `None` after the first call.
    pub fn take_events(&mut self) -> Option<UnboundedReceiver<ModelExchange>> {
        self.events.take()
    }

    /// [`Running::shutdown`], then the scripted replies no request asked
    /// for ([`ModelScript::unrequested`]): empty when the run played every
    /// reply its scenario needs.
    pub async fn finish(self) -> Vec<String> {
        let state = self.state.clone();
        self.shutdown().await;
        let served = state.served.lock().unwrap_or_else(|e| e.into_inner());
        state.script.unrequested(&served)
    }

    /// Stop accepting, let open exchanges finish (bounded wait), then stop.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

struct ServerState {
    api: Box<dyn ProviderApi>,
    script: ModelScript,
    naming: ToolNaming,
    agent_tools: AgentTools,
    side_requests: SideRequests,
    events: UnboundedSender<ModelExchange>,
    next_id: AtomicU64,
    /// The `(turn, reply)` pairs some request was answered from.
    served: Mutex<BTreeSet<(usize, usize)>>,
}

impl ServerState {
    fn publish(&self, e: ModelExchange) {
        // Nobody listening is fine: the server keeps serving.
        let _ = self.events.send(e);
    }

    fn note(&self, id: u64, text: String) {
        self.publish(ModelExchange::Note {
            id,
            text,
            at: SystemTime::now(),
        });
    }
}

async fn handle(
    State(state): State<Arc<ServerState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    let path = redact_query(
        &uri.path_and_query()
            .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned()),
    );
    // Read the body here rather than through an extractor, so an oversized or
    // stalled body is answered (and recorded) like any other request.
    let (body, refused) =
        match tokio::time::timeout(BODY_READ_TIMEOUT, axum::body::to_bytes(body, BODY_LIMIT)).await
        {
            Ok(Ok(bytes)) => (bytes, None),
            Ok(Err(e)) => (
                Bytes::new(),
                Some((
                    413,
                    format!("request body unreadable or over {BODY_LIMIT} bytes: {e}"),
                )),
            ),
            Err(_) => (
                Bytes::new(),
                Some((
                    408,
                    format!("request body not complete within {BODY_READ_TIMEOUT:?}"),
                )),
            ),
        };
    state.publish(ModelExchange::Http(stub_mcp::Exchange::Request {
        id,
        method: method.as_str().to_owned(),
        path: path.clone(),
        headers: redact_headers(&headers),
        body: String::from_utf8_lossy(&body).into_owned(),
        at: SystemTime::now(),
    }));
    let (reply, pace) = match refused {
        Some((status, message)) => {
            state.note(id, format!("model server: {message} ({status})"));
            (state.api.render_protocol_error(status, &message), None)
        }
        None => answer(&state, id, &method, uri.path(), &body),
    };
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let sse = reply.content_type == "text/event-stream";
    let mut response = (status, [(header::CONTENT_TYPE, reply.content_type)]).into_response();
    if sse {
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            "no-cache".parse().expect("static header"),
        );
    }
    let headers = redact_headers(response.headers());
    match pace
        .filter(|_| sse)
        .map(|ms| Duration::from_millis(u64::from(ms)))
    {
        None => {
            *response.body_mut() = Body::from(reply.body.clone());
            state.publish(ModelExchange::Http(stub_mcp::Exchange::Response {
                id,
                status: reply.status,
                headers,
                body: reply.body,
                at: SystemTime::now(),
            }));
        }
        Some(pace) => {
            *response.body_mut() = Body::from_stream(paced(
                state.clone(),
                id,
                reply.status,
                headers,
                reply.body,
                pace,
            ));
        }
    }
    response
}

/// Streams an SSE body one event at a time, `pace` apart. The response
/// event is published when the stream ends, or with what was sent when the
/// client goes away first (then with a note saying so).
fn paced(
    state: Arc<ServerState>,
    id: u64,
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    pace: Duration,
) -> impl futures::Stream<Item = Result<String, std::convert::Infallible>> {
    struct Publish {
        state: Arc<ServerState>,
        id: u64,
        status: u16,
        headers: Vec<(String, String)>,
        sent: String,
        events_sent: usize,
        events: usize,
    }
    impl Drop for Publish {
        fn drop(&mut self) {
            if self.events_sent < self.events {
                self.state.note(
                    self.id,
                    format!(
                        "model server: client went away after {} of {} events",
                        self.events_sent, self.events
                    ),
                );
            }
            self.state
                .publish(ModelExchange::Http(stub_mcp::Exchange::Response {
                    id: self.id,
                    status: self.status,
                    headers: std::mem::take(&mut self.headers),
                    body: std::mem::take(&mut self.sent),
                    at: SystemTime::now(),
                }));
        }
    }
    let events: Vec<String> = body.split_inclusive("\n\n").map(str::to_owned).collect();
    let publish = Publish {
        state,
        id,
        status,
        headers,
        sent: String::new(),
        events_sent: 0,
        events: events.len(),
    };
    futures::stream::unfold(
        (events.into_iter(), publish),
        move |(mut events, mut publish)| async move {
            let event = events.next()?;
            if publish.events_sent > 0 {
                tokio::time::sleep(pace).await;
            }
            publish.sent.push_str(&event);
            publish.events_sent += 1;
            Some((Ok(event), (events, publish)))
        },
    )
}

/// Where a request falls: what [`answer`] replies from, and what tests and
/// corpus checks read without a server.
#[derive(Debug)]
pub enum Placement<'a> {
    /// Not a model turn but an API endpoint the flavour answers itself.
    Auxiliary(HttpReply),
    /// No endpoint of this API.
    NoEndpoint,
    /// A model request whose body the flavour cannot read.
    Unreadable(String),
    /// A side request the profile declares.
    Side(&'a SideRequest, RequestView),
    /// A scripted turn's reply; `quoted` as in [`Selection::Reply`].
    Turn {
        turn: usize,
        reply: usize,
        model: &'a ModelReply,
        quoted: bool,
        view: RequestView,
    },
    /// Neither: `why` says what did not match.
    OffScript { why: String, view: RequestView },
}

/// Places a request (`path` without its query) against the script and the
/// profile's side requests; side requests are tried first, so one that
/// quotes the prompt is not taken for the turn. A request is placed by what
/// it holds, not by how many tools it offers: an agent with no tools of its
/// own sends its turn with an empty tool list (`"tools": []`). A request
/// with no tool list at all, or one that merely quotes a prompt inside
/// framing text of its own and offers no tools (a title, a summary, a
/// router check about the conversation) is taken for no turn: unless
/// declared, it is off the script, never served the turn's reply in silence.
pub fn place<'a>(
    flavour: Flavour,
    script: &'a ModelScript,
    side_requests: &'a SideRequests,
    method: &Method,
    path: &str,
    body: &[u8],
) -> Placement<'a> {
    place_with(
        flavour.api().as_ref(),
        script,
        side_requests,
        method,
        path,
        body,
    )
}

fn place_with<'a>(
    api: &dyn ProviderApi,
    script: &'a ModelScript,
    side_requests: &'a SideRequests,
    method: &Method,
    path: &str,
    body: &[u8],
) -> Placement<'a> {
    if let Some(reply) = api.serve_auxiliary(method, path, body) {
        return Placement::Auxiliary(reply);
    }
    if !api.is_model_request(method, path) {
        return Placement::NoEndpoint;
    }
    let view = match api.read_request(path, body) {
        Ok(view) => view,
        Err(message) => return Placement::Unreadable(message),
    };
    if let Some(side) = side_requests.matching(path, &view) {
        return Placement::Side(side, view);
    }
    match script.select(&view.conversation) {
        Selection::Reply { turn, quoted, .. }
            if view.offered_tools.is_empty() && (quoted || !view.tool_list) =>
        {
            Placement::OffScript {
                why: format!(
                    "it quotes turn {}'s prompt but offers no tools: a request about the conversation (a session title, a summary), not the turn",
                    turn + 1
                ),
                view,
            }
        }
        Selection::Reply {
            turn,
            reply,
            model,
            quoted,
        } => Placement::Turn {
            turn,
            reply,
            model,
            quoted,
            view,
        },
        Selection::OffScript { why } => Placement::OffScript { why, view },
    }
}

/// The reply to one request, and the pace to stream it at (ms between
/// events) when the script asks for one.
fn answer(
    state: &ServerState,
    id: u64,
    method: &Method,
    path: &str,
    body: &[u8],
) -> (HttpReply, Option<u32>) {
    let api = state.api.as_ref();
    match place_with(api, &state.script, &state.side_requests, method, path, body) {
        Placement::Auxiliary(reply) => (reply, None),
        Placement::NoEndpoint => {
            state.note(
                id,
                format!("model server: no such endpoint: {method} {path} (404)"),
            );
            (
                api.render_protocol_error(404, &format!("no such endpoint: {method} {path}")),
                None,
            )
        }
        Placement::Unreadable(message) => {
            state.note(
                id,
                format!("model server: unreadable request: {message} (400)"),
            );
            (api.render_protocol_error(400, &message), None)
        }
        Placement::Side(side, view) => {
            state.note(
                id,
                format!(
                    "model server: side request `{}` (declared in the profile); answered {:?}",
                    side.name,
                    acp_bridge::shorten::shorten(&side.reply, 60)
                ),
            );
            let plan = ReplyPlan {
                text: Some(side.reply.clone()),
                ..Default::default()
            };
            (api.render_reply(&plan, &view, id), None)
        }
        Placement::Turn {
            turn,
            reply,
            model,
            quoted,
            view,
        } => {
            if quoted {
                state.note(
                    id,
                    format!(
                        "model server: turn {}'s prompt found inside framing text of the agent's own",
                        turn + 1
                    ),
                );
            }
            state
                .served
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((turn, reply));
            if let Some(error) = &model.error {
                return (api.render_error(error), None);
            }
            let plan = plan(state, id, model, &view.offered_tools, turn, reply);
            (api.render_reply(&plan, &view, id), model.pace_ms)
        }
        Placement::OffScript { why, view } => {
            state.publish(ModelExchange::OffScript {
                id,
                text: format!(
                    "model request {id} ({method} {path}) is off script: {why}; no [[model.side_requests]] of the profile matches it; answered {UNSCRIPTED_TEXT:?}"
                ),
                at: SystemTime::now(),
            });
            (api.render_reply(&unscripted(), &view, id), None)
        }
    }
}

/// The agent-tool role through which an agent's model reaches MCP tools,
/// when the profile maps one (`{tool}`: the unity-ops tool name,
/// `{arguments}`: the call's arguments object).
pub const MCP_CALL_ROLE: &str = "mcp_call";

/// Header names whose values are secrets.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "authorization"
        || name == "proxy-authorization"
        || name == "cookie"
        || name.contains("api-key")
        || name.contains("api_key")
        || name.contains("token")
}

/// The path with secret query parameters (`key=`, as Gemini sends its API
/// key) redacted.
pub fn redact_query(path: &str) -> String {
    let Some((base, query)) = path.split_once('?') else {
        return path.to_owned();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if k == "key" || is_secret_header(k) => format!("{k}={REDACTED}"),
            _ => kv.to_owned(),
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

fn redact_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    stub_mcp::redact_headers_where(headers, is_secret_header)
}
