//! The metamorphic suite: the bridge must recognise the panel's MCP calls
//! and their real arguments however an agent spells and places them. From
//! every committed recording whose golden shows an MCP, `Bash` or `Write` `tool_use`, each
//! variant of [`VARIANTS`] rewrites the agent's frames of those calls (the
//! identity re-spelled into another form and field, a generic title, another
//! kind, the arguments moved to a later frame, empty `_meta`-only chunks
//! added), replays the result, and requires the bridge's panel lines to equal
//! the recording's golden, ids aside. One trial per recording and variant:
//! `respelled/<agent>/<version>/<scenario>/<variant>`.
//!
//! Beside the spellings, variants model the shapes newer agents send: the
//! arguments only as a JSON content text (Qwen Code) or only after the
//! permission answer (Kilo; only inputs may then differ), a result's images
//! as OpenAI-style `image_url` parts inside a JSON text, and, for the
//! agent's own `Bash` calls, a first rawInput without the command
//! (`{"cwd": ...}`) or the arguments only as a JSON content text (compared
//! with key order aside), and for its `Write` calls a patch text as the only
//! argument (Cline's `apply_patch`; compared by name, path and text). Titles
//! decorated with the arguments are the `title-decorated` variants.
//! `agent-arguments-wrapped` wraps every call's rawInput in an envelope
//! (`{tool, arguments}`, `{name, input}`, `{args}`). A recording that
//! negotiated ACP v2 also gets v2's own spellings: messages sent whole
//! instead of chunked, and a call's content in `tool_call_content_chunk`s.
//!
//! The `*-bare-T` variants strip the server and leave only the tool's name
//! (the bridge is handed the tools stub-mcp offered, as a host lists them).
//!
//! The variants are data (a table of spellings, places and moves), applied
//! the same way to every agent: no variant knows which agent it rewrites.
//! A variant that needs what a recording lacks (a permission request, a
//! `tool_call` before it) is not generated for that recording.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use acp_harness::corpus::recording::{self, Dir, Event, Leg, Recording};
use acp_harness::corpus::scenario::{self, Scenario};
use acp_harness::judging::judge::golden::{self, RecordingId};
use acp_harness::judging::judge::{self, Corpus};
use acp_harness::judging::replay::normalise::Labeller;
use libtest_mimic::{Arguments, Failed, Trial};
use regex::Regex;
use serde_json::{Map, Value, json};

/// Where a variant puts the call's identity.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// The title of every frame of the call.
    Title,
    /// A key of the frames' `_meta`.
    Meta(&'static str),
    /// rawInput `server` + `tool`.
    RawServerTool,
    /// A rawInput key holding the spelled identity.
    RawField(&'static str),
    /// Only the permission request's `toolCall.title` (the call's own frames
    /// have no kind, so nothing names them before the request).
    PermissionTitle,
    /// Only an option name of the permission request (`Allow <identity>`).
    OptionName,
}

/// The title of the call's frames when the identity is elsewhere.
#[derive(Clone, Copy, Debug)]
enum Title {
    Label(&'static str),
    /// The arguments as JSON.
    ArgumentsJson,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Keep,
    Set(&'static str),
    Remove,
}

/// Where the arguments travel.
#[derive(Clone, Copy, Debug)]
enum Arguments_ {
    /// rawInput `arguments` on every frame that had rawInput (else the first).
    WithFrames,
    /// Only the identity's decoration (`<identity>: <arguments JSON>`).
    Decoration,
    /// Only a `tool_call_update` inserted right after the first frame.
    LaterUpdate,
    /// Only the permission request's `toolCall.rawInput`.
    PermissionOnly,
    /// Only a JSON object text in the content of the call's first frame
    /// that is no result (Qwen Code's and Gemini CLI's shape).
    ContentText,
    /// Only a frame after the permission request, which carries
    /// `rawInput: {}` (Kilo's shape): the panel saw the call before its
    /// arguments, so only the inputs may differ from the golden.
    AfterTheAnswer,
    /// In no frame at all (an MCP call whose frames never carry a rawInput):
    /// the call must still reach the panel (and an interrupt find it), so
    /// only the inputs may differ from the golden.
    Never,
}

/// What a variant does beside re-spelling the call.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Extra {
    None,
    /// Leave the calls alone; add empty `_meta`-only chunks.
    EmptyChunks,
    /// A result with images arrives as one text holding OpenAI-style
    /// content parts as JSON (`image_url` data URIs).
    ImagePartsAsJsonText,
    /// An agent `Bash` call first announced with its rawInput minus the
    /// command (`{"cwd": ...}`), the whole rawInput one update later.
    NonArgumentRawInputFirst,
    /// An agent `Bash` call whose arguments are only a JSON object text in
    /// its first frame's content.
    AgentArgumentsInContentText,
    /// An agent `Write` call made as an `apply_patch` call of kind `other`
    /// whose only argument is a patch adding the file (Cline's shape): no
    /// path field, location or diff says what it writes.
    WritesAsPatchTexts,
    /// Every call's non-empty rawInput wrapped in an envelope, the shape
    /// rotating from call to call: `{"tool": <label>, "arguments": ...}`,
    /// `{"name": <label>, "input": ...}`, `{"args": ...}`.
    ArgumentsWrapped,
    /// Every call's non-empty rawInput inside an action object:
    /// `{"data": ..., "kind": "ToolCallAction"}`.
    ArgumentsInActionObjects,
    /// Every permission request asked under one synthetic id for the whole
    /// session (`confirmation-<session>`), as some agents ask: each must
    /// still reach the call it is about, by its content.
    SharedPermissionId,
    /// ACP v2: every run of a message's chunks (one `messageId`, nothing
    /// between them) sent whole, as one `agent_message` / `agent_thought`
    /// upsert with the chunks' blocks, where the run's last chunk was.
    V2MessagesWhole,
    /// ACP v2: the content of every call update after the call's first
    /// (which announces it) sent ahead of it as `tool_call_content_chunk`s,
    /// one per block, the update without it.
    V2CallContentChunked,
}

#[derive(Clone, Copy, Debug)]
struct Variant {
    name: &'static str,
    place: Place,
    /// `{s}`, `{t}`, `{args}` stand for server, tool and arguments JSON.
    spelling: &'static str,
    title: Title,
    kind: Kind,
    arguments: Arguments_,
    extra: Extra,
}

const fn v(name: &'static str, place: Place, spelling: &'static str) -> Variant {
    Variant {
        name,
        place,
        spelling,
        title: Title::Label("ToolCall"),
        kind: Kind::Keep,
        arguments: Arguments_::WithFrames,
        extra: Extra::None,
    }
}

const fn extra(name: &'static str, extra: Extra) -> Variant {
    Variant {
        extra,
        ..v(name, Place::Title, "mcp__{s}__{t}")
    }
}

const fn generic(name: &'static str, title: Title, kind: Kind) -> Variant {
    Variant {
        title,
        kind,
        ..v(name, Place::Meta("toolName"), "mcp__{s}__{t}")
    }
}

const fn moved(name: &'static str, arguments: Arguments_, spelling: &'static str) -> Variant {
    Variant {
        arguments,
        ..v(name, Place::Title, spelling)
    }
}

/// (a) each spelling in the title and each field; (b) generic titles and
/// other kinds; (c) arguments moved; (d) empty chunks.
const VARIANTS: &[Variant] = &[
    v("title-mcp__S__T", Place::Title, "mcp__{s}__{t}"),
    v("title-S__T", Place::Title, "{s}__{t}"),
    v("title-S_T", Place::Title, "{s}_{t}"),
    v("title-S.T", Place::Title, "{s}.{t}"),
    v("title-mcp.S.T", Place::Title, "mcp.{s}.{t}"),
    v("title-S-slash-T", Place::Title, "{s}/{t}"),
    v("title-S-colon-T", Place::Title, "{s}:{t}"),
    v("title-Tool-S-slash-T", Place::Title, "Tool: {s}/{t}"),
    v("title-T-S-MCP-Server", Place::Title, "{t} ({s} MCP Server)"),
    v("title-decorated", Place::Title, "mcp__{s}__{t}: {args}"),
    v("title-S.T-decorated", Place::Title, "{s}.{t}: {args}"),
    moved(
        "title-decoration-only-arguments",
        Arguments_::Decoration,
        "{s}__{t}: {args}",
    ),
    v("meta-toolName", Place::Meta("toolName"), "mcp__{s}__{t}"),
    v("meta-tool_name", Place::Meta("tool_name"), "{s}__{t}"),
    v("meta-name", Place::Meta("name"), "{s}.{t}"),
    v("meta-name-S-colon-T", Place::Meta("name"), "{s}:{t}"),
    v("rawInput-server-tool", Place::RawServerTool, ""),
    v(
        "rawInput-tool_name",
        Place::RawField("tool_name"),
        "{s}_{t}",
    ),
    v("rawInput-name", Place::RawField("name"), "{s}/{t}"),
    v(
        "rawInput-name-T-S-MCP-Server",
        Place::RawField("name"),
        "{t} ({s} MCP Server)",
    ),
    v("permission-title", Place::PermissionTitle, "Tool: {s}/{t}"),
    v(
        "permission-title-mcp.S.T",
        Place::PermissionTitle,
        "mcp.{s}.{t}",
    ),
    v("permission-option-name", Place::OptionName, "mcp__{s}__{t}"),
    // the bare tool name, no server anywhere in the call: the one server
    // that lists the tool is its server
    v("title-bare-T", Place::Title, "{t}"),
    v("rawInput-tool-bare-T", Place::RawField("tool"), "{t}"),
    v("meta-toolName-bare-T", Place::Meta("toolName"), "{t}"),
    v("permission-title-bare-T", Place::PermissionTitle, "{t}"),
    // the bare name decorated with the arguments
    v("title-bare-T-decorated", Place::Title, "{t}: {args}"),
    moved(
        "title-bare-T-call-decoration-only-arguments",
        Arguments_::Decoration,
        "{t}({args})",
    ),
    // a dispatcher meta-tool whose arguments name the real call
    v(
        "rawInput-dispatcher-capability",
        Place::RawField("capability_id"),
        "mcp-tool:{s}/{t}",
    ),
    generic(
        "generic-ToolCall-other",
        Title::Label("ToolCall"),
        Kind::Set("other"),
    ),
    generic(
        "generic-ToolCall-read",
        Title::Label("ToolCall"),
        Kind::Set("read"),
    ),
    generic(
        "generic-ToolCall-execute",
        Title::Label("ToolCall"),
        Kind::Set("execute"),
    ),
    generic(
        "generic-ToolCall-no-kind",
        Title::Label("ToolCall"),
        Kind::Remove,
    ),
    generic(
        "generic-braces-other",
        Title::Label("{}"),
        Kind::Set("other"),
    ),
    generic("generic-braces-read", Title::Label("{}"), Kind::Set("read")),
    generic(
        "generic-braces-execute",
        Title::Label("{}"),
        Kind::Set("execute"),
    ),
    generic("generic-braces-no-kind", Title::Label("{}"), Kind::Remove),
    generic(
        "generic-arguments-other",
        Title::ArgumentsJson,
        Kind::Set("other"),
    ),
    generic(
        "generic-arguments-read",
        Title::ArgumentsJson,
        Kind::Set("read"),
    ),
    generic(
        "generic-arguments-execute",
        Title::ArgumentsJson,
        Kind::Set("execute"),
    ),
    generic(
        "generic-arguments-no-kind",
        Title::ArgumentsJson,
        Kind::Remove,
    ),
    moved(
        "arguments-in-a-later-update",
        Arguments_::LaterUpdate,
        "mcp__{s}__{t}",
    ),
    moved(
        "arguments-in-the-permission-request",
        Arguments_::PermissionOnly,
        "{s}__{t}",
    ),
    moved(
        "arguments-in-json-content-text",
        Arguments_::ContentText,
        "{s}__{t}",
    ),
    moved(
        "arguments-never-carried",
        Arguments_::Never,
        "mcp__{s}__{t}",
    ),
    moved(
        "arguments-only-after-the-permission-answer",
        Arguments_::AfterTheAnswer,
        "{s}_{t}",
    ),
    extra("image-parts-as-json-text", Extra::ImagePartsAsJsonText),
    extra(
        "agent-non-argument-rawInput-first",
        Extra::NonArgumentRawInputFirst,
    ),
    extra(
        "agent-arguments-in-json-content-text",
        Extra::AgentArgumentsInContentText,
    ),
    extra("agent-write-as-patch-text", Extra::WritesAsPatchTexts),
    extra("agent-arguments-wrapped", Extra::ArgumentsWrapped),
    extra(
        "agent-arguments-in-action-objects",
        Extra::ArgumentsInActionObjects,
    ),
    extra(
        "permission-requests-share-one-id",
        Extra::SharedPermissionId,
    ),
    extra("empty-meta-only-chunks", Extra::EmptyChunks),
    extra("v2-messages-sent-whole", Extra::V2MessagesWhole),
    extra("v2-call-content-in-chunks", Extra::V2CallContentChunked),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// An MCP call as the golden shows it: the agent's call id, its Claude name
/// split into server and tool, and its input.
#[derive(Clone, Debug)]
struct McpCall {
    server: String,
    tool: String,
    arguments: Value,
}

/// A recording prepared once for all its variants.
struct Base {
    recording: Recording,
    scenario: Scenario,
    golden_panel: Vec<String>,
    calls: HashMap<String, McpCall>,
    /// Calls with a permission request, and calls whose first frame is a
    /// `tool_call` (not the permission request).
    asked: HashSet<String>,
    reported_first: HashSet<String>,
    /// Calls whose first frame is no result (a permission request or a
    /// running update): a place for arguments before the call runs.
    opened: HashSet<String>,
    /// The agent's own `Bash` calls whose golden input has a command, by id.
    agent_calls: HashSet<String>,
    /// The agent's own `Write` calls whose golden input has a path and a
    /// text ending in a newline (what a patch can add), by id.
    write_calls: HashMap<String, (String, String)>,
    /// Of those, the ones whose first frame is a running `session/update`
    /// with the command in its rawInput.
    agent_raw_first: HashSet<String>,
    /// Calls whose finishing frame renders images.
    image_calls: HashSet<String>,
    /// Whether some call's frame has a rawInput to wrap (non-empty, not
    /// wrapped already).
    wrappable: bool,
    /// Whether the recording has permission requests and each is about a
    /// call an earlier `session/update` reported, with no arguments or
    /// arguments that agree with the call's (a request that opens its call,
    /// asks with another spelling of the command or with an approval form
    /// is known by its id alone).
    requests_follow_reports: bool,
    /// Size of the agent's ACP frames: what a replay costs.
    acp_bytes: usize,
}

/// How many variants a recording of an older version gets (the newest
/// version of each agent gets every variant; `RESPELLED_ALL=1` gives every
/// recording every variant). The choice rotates over the table from one
/// recording to the next, so every variant still meets every agent's
/// older dialects.
const SHARE: usize = 8;
/// The same for recordings whose agent frames are large (screenshots):
/// each replay of one costs as much as dozens of others.
const HEAVY_SHARE: usize = 3;
const HEAVY_BYTES: usize = 256 * 1024;

/// The key of an agent's protocol revision: the agent and its version's
/// build metadata (`+acp2`), so each revision has a newest version.
fn revision_key(id: &RecordingId) -> String {
    let build = semver::Version::parse(&id.version)
        .map(|v| v.build.to_string())
        .unwrap_or_default();
    format!("{}+{build}", id.agent)
}

/// The newest version of each agent's revision among the recordings, by semver.
fn newest_versions(
    bases: &[(PathBuf, RecordingId, Result<Base, String>)],
) -> HashMap<String, String> {
    let mut newest: HashMap<String, semver::Version> = HashMap::new();
    for (_, id, _) in bases {
        let Ok(v) = semver::Version::parse(&id.version) else {
            continue;
        };
        let slot = newest.entry(revision_key(id)).or_insert_with(|| v.clone());
        if v > *slot {
            *slot = v;
        }
    }
    newest
        .into_iter()
        .map(|(agent, v)| (agent, v.to_string()))
        .collect()
}

/// The variants' trials, named `respelled/<agent>/<version>/<scenario>/<variant>`.
/// Preparing them replays every recording with MCP calls (seconds), so a
/// run filtered to another suite (`<suite>::`) skips it.
pub(crate) fn trials(args: &Arguments) -> Vec<Trial> {
    let other_suite = args
        .filter
        .as_deref()
        .is_some_and(|f| f.contains("::") && !f.starts_with("respelled"));
    if other_suite {
        return Vec::new();
    }
    let corpus = Corpus::at(root());
    let mut jobs = Vec::new();
    for path in corpus.recordings().unwrap_or_default() {
        let id = corpus.id_of(&path, None);
        let Some(golden) = golden::read(&id.snapshot_path(&corpus.snapshots))
            .ok()
            .flatten()
        else {
            continue;
        };
        if golden.contains(r#""type":"tool_use","id":"#)
            && ["mcp__", "Bash\"", "Write\""]
                .iter()
                .any(|n| golden.contains(&format!("\"name\":\"{n}")))
        {
            jobs.push((path, id, golden));
        }
    }
    // prepared up front (in parallel), so a variant a recording cannot have
    // is never listed as a trial
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = jobs.len().div_ceil(threads).max(1);
    let bases: Vec<(PathBuf, RecordingId, Result<Base, String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                let corpus = &corpus;
                scope.spawn(move || {
                    part.iter()
                        .map(|(path, id, golden)| {
                            (path.clone(), id.clone(), prepare(corpus, path, golden))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("preparing a recording panicked"))
            .collect()
    });
    let newest = newest_versions(&bases);
    let all = std::env::var_os("RESPELLED_ALL").is_some();
    let mut trials = Vec::new();
    for (index, (_, id, base)) in bases.into_iter().enumerate() {
        let base = match base {
            Ok(b) => Arc::new(b),
            Err(e) => {
                let name = format!("respelled/{}", id.trial_name());
                trials.push(Trial::test(name, move || Err(Failed::from(e))));
                continue;
            }
        };
        let applicable: Vec<&'static Variant> =
            VARIANTS.iter().filter(|v| applies(&base, v)).collect();
        let take = if all || newest.get(&revision_key(&id)) == Some(&id.version) {
            applicable.len()
        } else if base.acp_bytes > HEAVY_BYTES {
            HEAVY_SHARE
        } else {
            SHARE
        };
        let picked = (0..take.min(applicable.len()))
            .map(|k| applicable[(index * SHARE + k) % applicable.len()]);
        for variant in picked {
            let (base, id) = (base.clone(), id.clone());
            let name = format!("respelled/{}/{}", id.trial_name(), variant.name);
            trials.push(Trial::test(name, move || run_variant(&base, &id, variant)));
        }
    }
    trials
}

/// Reads the recording and its scenario, and finds its MCP calls by
/// replaying it as recorded.
fn prepare(corpus: &Corpus, path: &Path, golden: &str) -> Result<Base, String> {
    let mut recording = recording::read(path).map_err(|e| e.to_string())?;
    // the HTTP legs (MCP and model bodies, screenshots among them) play no
    // part in a replay; leaving them out keeps each variant's copy small
    recording
        .events
        .retain(|e| !matches!(e.leg, Leg::Mcp | Leg::Model));
    let scenario =
        scenario::find(&corpus.scenarios, &recording.header.scenario).map_err(|e| e.to_string())?;
    let replay = judge::replay_with(&recording, &scenario);
    let mut calls = HashMap::new();
    let mut agent_calls = HashSet::new();
    let mut write_calls = HashMap::new();
    for line in &replay.panel_lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] != "tool_use" {
                continue;
            }
            let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                continue;
            };
            if name == "Bash" && block["input"]["command"].is_string() {
                agent_calls.insert(id.to_string());
            }
            if let ("Write", Some(path), Some(text)) = (
                name,
                block["input"]["file_path"].as_str(),
                block["input"]["content"].as_str(),
            ) && text.ends_with('\n')
            {
                write_calls.insert(id.to_string(), (path.to_string(), text.to_string()));
            }
            if let Some((server, tool)) =
                name.strip_prefix("mcp__").and_then(|r| r.split_once("__"))
            {
                calls.insert(
                    id.to_string(),
                    McpCall {
                        server: server.into(),
                        tool: tool.into(),
                        arguments: block["input"].clone(),
                    },
                );
            }
        }
    }
    let mut asked = HashSet::new();
    let mut seen = HashSet::new();
    let mut reported_first = HashSet::new();
    let mut opened = HashSet::new();
    let mut agent_raw_first = HashSet::new();
    let mut image_calls = HashSet::new();
    let mut agent_seen = HashSet::new();
    for e in agent_frames(&recording) {
        let Ok(v) = serde_json::from_str::<Value>(&e.raw) else {
            continue;
        };
        if let Some(id) = call_id(&v)
            && agent_calls.contains(&id)
            && agent_seen.insert(id.clone())
        {
            let u = &v["params"]["update"];
            if v["method"] == "session/update"
                && !is_final(u)
                && !u["rawInput"]["command"].is_null()
            {
                agent_raw_first.insert(id.clone());
            }
        }
        if let Some(id) = call_id(&v)
            && is_final(&v["params"]["update"])
            && calls.contains_key(&id)
            && renders_images(&v["params"]["update"])
        {
            image_calls.insert(id.clone());
        }
        if let Some(id) = call_id(&v) {
            if !seen.contains(&id) && calls.contains_key(&id) {
                let request = v["method"] == "session/request_permission";
                if request || !is_final(&v["params"]["update"]) {
                    opened.insert(id.clone());
                }
            }
            if !calls.contains_key(&id) || !seen.insert(id.clone()) {
                if v["method"] == "session/request_permission" {
                    asked.insert(id);
                }
                continue;
            }
            if v["method"] == "session/request_permission" {
                asked.insert(id);
            } else if !is_final(&v["params"]["update"]) {
                reported_first.insert(id);
            }
        }
    }
    let acp_bytes = agent_frames(&recording).map(|e| e.raw.len()).sum();
    let wrappable = agent_frames(&recording)
        .filter_map(|e| serde_json::from_str::<Value>(&e.raw).ok())
        .any(|v| call_id(&v).is_some() && wrappable_raw_input(&v).is_some());
    let requests_follow_reports = {
        let mut reported: HashMap<String, Map<String, Value>> = HashMap::new();
        let mut requests = 0;
        let mut all = true;
        let paths = ["file_path", "filePath", "filepath", "path"];
        for v in agent_frames(&recording).filter_map(|e| serde_json::from_str::<Value>(&e.raw).ok())
        {
            let Some(id) = call_id(&v) else { continue };
            let raw = call_frame(&v)["rawInput"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            if v["method"] == "session/request_permission" {
                requests += 1;
                // a request whose arguments contradict its call's, or share
                // no key with them (an approval form instead of arguments),
                // names its call by its id alone
                let contradicts = |call: &Map<String, Value>| {
                    raw.iter().any(|(k, x)| {
                        !paths.contains(&k.as_str()) && call.get(k).is_some_and(|y| y != x)
                    }) || (!raw.is_empty() && !raw.keys().any(|k| call.contains_key(k)))
                };
                all &= reported.get(&id).is_some_and(|call| !contradicts(call));
            } else {
                reported.entry(id).or_default().extend(raw);
            }
        }
        requests > 0 && all
    };
    Ok(Base {
        acp_bytes,
        golden_panel: panel_lines(golden),
        recording,
        scenario,
        calls,
        asked,
        reported_first,
        opened,
        agent_calls,
        write_calls,
        agent_raw_first,
        image_calls,
        wrappable,
        requests_follow_reports,
    })
}

/// Whether a finishing frame's result has image blocks.
fn renders_images(update: &Value) -> bool {
    acp_bridge::call::result::tool_result_content(update)
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "image"))
}

fn agent_frames(r: &Recording) -> impl Iterator<Item = &Event> {
    r.events
        .iter()
        .filter(|e| e.leg == Leg::Acp && e.dir == Dir::FromAgent)
}

/// The tool call a frame is about: a `tool_call` / `tool_call_update` or a
/// permission request.
fn call_id(v: &Value) -> Option<String> {
    match v["method"].as_str()? {
        "session/update" => {
            let u = &v["params"]["update"];
            matches!(
                u["sessionUpdate"].as_str(),
                Some("tool_call" | "tool_call_update")
            )
            .then(|| u["toolCallId"].as_str().map(str::to_string))
            .flatten()
        }
        "session/request_permission" => {
            frame_of(v, true)["toolCallId"].as_str().map(str::to_string)
        }
        _ => None,
    }
}

fn is_final(update: &Value) -> bool {
    matches!(update["status"].as_str(), Some("completed" | "failed"))
}

/// Whether the variant can be made from this recording's calls.
fn applies(base: &Base, variant: &Variant) -> bool {
    let needs_request = matches!(variant.place, Place::PermissionTitle | Place::OptionName)
        // arguments after the answer need a question to answer
        || matches!(
            variant.arguments,
            Arguments_::PermissionOnly | Arguments_::AfterTheAnswer
        );
    let needs_tool_call = matches!(variant.arguments, Arguments_::LaterUpdate);
    let needs_opened = matches!(variant.arguments, Arguments_::ContentText);
    match variant.extra {
        Extra::NonArgumentRawInputFirst => return !base.agent_raw_first.is_empty(),
        Extra::AgentArgumentsInContentText => return !base.agent_calls.is_empty(),
        Extra::ImagePartsAsJsonText => return !base.image_calls.is_empty(),
        Extra::WritesAsPatchTexts => return !base.write_calls.is_empty(),
        Extra::ArgumentsWrapped | Extra::ArgumentsInActionObjects => return base.wrappable,
        Extra::SharedPermissionId => return base.requests_follow_reports,
        // v2 spellings: only a recording that negotiated v2 is read as v2
        Extra::V2MessagesWhole | Extra::V2CallContentChunked => {
            return base.recording.header.protocol_version == 2;
        }
        Extra::None | Extra::EmptyChunks => {}
    }
    !base.calls.is_empty()
        && base.calls.keys().all(|id| {
            (!needs_request || base.asked.contains(id))
                && (!needs_tool_call || base.reported_first.contains(id))
                && (!needs_opened || base.opened.contains(id))
        })
}

fn run_variant(base: &Base, id: &RecordingId, variant: &Variant) -> Result<(), Failed> {
    let mut recording = base.recording.clone();
    recording.events = match variant.extra {
        Extra::NonArgumentRawInputFirst | Extra::AgentArgumentsInContentText => {
            rewrite_agent_calls(&base.recording, base, variant.extra)
        }
        Extra::WritesAsPatchTexts => writes_as_patches(&base.recording, &base.write_calls),
        Extra::ArgumentsWrapped => arguments_wrapped(&base.recording, |n, raw| match n % 3 {
            0 => json!({"tool": "agent_tool", "arguments": raw}),
            1 => json!({"name": "agent_tool", "input": raw}),
            _ => json!({"args": raw}),
        }),
        Extra::ArgumentsInActionObjects => arguments_wrapped(
            &base.recording,
            |_, raw| json!({"data": raw, "kind": "ToolCallAction"}),
        ),
        Extra::SharedPermissionId => shared_permission_id(&base.recording),
        Extra::V2MessagesWhole => v2_messages_whole(&base.recording),
        Extra::V2CallContentChunked => v2_call_content_chunked(&base.recording),
        _ => rewrite(&base.recording, &base.calls, variant),
    };
    let replay = judge::replay_with(&recording, &base.scenario);
    let mut got = normalised_panel_lines(&replay.panel_lines);
    let divergences = replay.divergences().count();
    let mut golden_panel = base.golden_panel.clone();
    if let Arguments_::AfterTheAnswer | Arguments_::Never = variant.arguments {
        // the panel saw the calls before their arguments: only inputs differ
        got = got.iter().map(|l| without_inputs(l)).collect();
        golden_panel = golden_panel.iter().map(|l| without_inputs(l)).collect();
    }
    if let Arguments_::Never = variant.arguments {
        // a call held for arguments that never come goes out after the
        // bounded wait, so a panel that waits for it acts later: the
        // turn's durations may differ, nothing else
        got = got.iter().map(|l| without_durations(l)).collect();
        golden_panel = golden_panel.iter().map(|l| without_durations(l)).collect();
    }
    if matches!(
        variant.extra,
        Extra::NonArgumentRawInputFirst | Extra::AgentArgumentsInContentText
    ) {
        // the same input may arrive in another key order
        got = got.iter().map(|l| sorted_keys(l)).collect();
        golden_panel = golden_panel.iter().map(|l| sorted_keys(l)).collect();
    }
    if variant.extra == Extra::WritesAsPatchTexts {
        // the panel sees the same Write: its name, path and text; the
        // patch and the agent's other keys are the agent's own, and the
        // patch names the file as the golden's tool_use did (a gate text
        // may have named it by the absolute path a later frame gave)
        let cut = |l: &String| sorted_keys(&write_fields_only(l)).replace("<workspace>/", "");
        got = got.iter().map(cut).collect();
        golden_panel = golden_panel.iter().map(cut).collect();
    }
    let base_golden = &golden_panel;
    if got == *base_golden && divergences == 0 {
        return Ok(());
    }
    let first = got
        .iter()
        .zip(base_golden)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(base_golden.len()));
    let show = |lines: &[String]| {
        lines
            .get(first)
            .map(|l| shorten(l))
            .unwrap_or_else(|| "(no line)".into())
    };
    Err(format!(
        "{} variant {}: the bridge's panel output differs from the golden ({} lines vs {}, {divergences} divergence(s)); first difference at panel line {}:\n  golden: {}\n  got:    {}",
        id.trial_name(),
        variant.name,
        got.len(),
        base_golden.len(),
        first + 1,
        show(base_golden),
        show(&got),
    )
    .into())
}

/// A `result` line with its durations zeroed; any other line as it is.
fn without_durations(line: &str) -> String {
    match serde_json::from_str::<Value>(line) {
        Ok(mut v) if v["type"] == "result" => {
            for k in ["duration_ms", "duration_api_ms"] {
                if v.get(k).is_some() {
                    v[k] = json!(0);
                }
            }
            v.to_string()
        }
        _ => line.to_string(),
    }
}

/// A panel line with every tool input (`input`, `updatedInput`,
/// `tool_input`) at any depth replaced by `{}`.
fn without_inputs(line: &str) -> String {
    with_inputs_mapped(line, |input| *input = json!({}))
}

/// A panel line with every tool input (`input`, `updatedInput`,
/// `tool_input`) at any depth cut down to the fields of Claude's `Write`.
fn write_fields_only(line: &str) -> String {
    with_inputs_mapped(line, |input| {
        if let Value::Object(map) = input {
            map.retain(|k, _| k == "file_path" || k == "content");
        }
    })
}

/// A panel line with `map` applied to every tool input (`input`,
/// `updatedInput`, `tool_input`) at any depth; a line that is no JSON
/// stays as it is.
fn with_inputs_mapped(line: &str, map: impl Fn(&mut Value) + Copy) -> String {
    fn walk(v: &mut Value, map: impl Fn(&mut Value) + Copy) {
        match v {
            Value::Object(fields) => {
                for (k, x) in fields.iter_mut() {
                    if matches!(k.as_str(), "input" | "updatedInput" | "tool_input") {
                        map(x);
                    } else {
                        walk(x, map);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, map)),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(line) {
        Ok(mut v) => {
            walk(&mut v, map);
            v.to_string()
        }
        Err(_) => line.to_string(),
    }
}

/// The recording with its agent `Write` calls (see [`Extra::WritesAsPatchTexts`])
/// made as `apply_patch` calls: every frame before the result carries the
/// patch as its only argument, kind `other`, no locations and no proposed
/// content (diffs, JSON texts); results stay as recorded.
fn writes_as_patches(r: &Recording, writes: &HashMap<String, (String, String)>) -> Vec<Event> {
    rewrite_agent_frames(r, |v| {
        let Some((path, text)) = call_id(v).and_then(|id| writes.get(&id)) else {
            return false;
        };
        let frame = call_frame_mut(v);
        if is_final(frame) {
            return false;
        }
        let added: String = text.lines().map(|l| format!("+{l}\n")).collect();
        let patch = format!("*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch");
        if let Some(map) = frame.as_object_mut() {
            map.insert("rawInput".into(), json!({"input": patch}));
            map.insert("kind".into(), json!("other"));
            map.insert("title".into(), json!("apply_patch"));
            map.remove("locations");
            map.remove("_meta");
            if let Some(Value::Array(content)) = map.get_mut("content") {
                content.clear();
            }
        }
        true
    })
}

/// The recording with each agent ACP frame `rewrite` changes (it returns
/// whether it did) written back; every other event as it was.
fn rewrite_agent_frames(r: &Recording, mut rewrite: impl FnMut(&mut Value) -> bool) -> Vec<Event> {
    r.events
        .iter()
        .map(|e| {
            let parsed = (e.leg == Leg::Acp && e.dir == Dir::FromAgent)
                .then(|| serde_json::from_str::<Value>(&e.raw).ok())
                .flatten();
            match parsed {
                Some(mut v) => {
                    if rewrite(&mut v) {
                        with_raw(e, v.to_string())
                    } else {
                        e.clone()
                    }
                }
                None => e.clone(),
            }
        })
        .collect()
}

/// A panel line with the keys of every object sorted.
fn sorted_keys(line: &str) -> String {
    fn sort(v: Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sort(v))).collect())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(sort).collect()),
            other => other,
        }
    }
    serde_json::from_str::<Value>(line).map_or_else(|_| line.to_string(), |v| sort(v).to_string())
}

fn shorten(s: &str) -> String {
    if s.len() <= 600 {
        return s.to_string();
    }
    let mut end = 600;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// A replay's panel lines normalised as a transcript normalises them, then
/// relabelled (see [`panel_lines`]).
fn normalised_panel_lines(lines: &[String]) -> Vec<String> {
    let mut labels = Labeller::new();
    let text: String = lines
        .iter()
        .map(|l| format!("bridge>panel {}\n", labels.line(l)))
        .collect();
    panel_lines(&text)
}

/// The `bridge>panel` lines of a transcript, with the labels of ids
/// renumbered in order of first appearance among these lines alone, and of
/// one kind: a label's kind says where the transcript first saw the value,
/// which may be an agent line these lines leave out (a session id first
/// seen under `_meta.acpSessionId` is a `<uuid>` there, a `<session>` here).
fn panel_lines(transcript: &str) -> Vec<String> {
    static LABEL: OnceLock<Regex> = OnceLock::new();
    let label = LABEL.get_or_init(|| Regex::new(r"<(uuid|tool-call|session) \d+>").expect("regex"));
    let mut seen: HashMap<String, String> = HashMap::new();
    transcript
        .lines()
        .filter_map(|l| l.strip_prefix("bridge>panel "))
        .map(|l| {
            label
                .replace_all(l, |c: &regex::Captures| {
                    let next = seen.len() + 1;
                    seen.entry(c[0].to_string())
                        .or_insert_with(|| format!("<id {next}>"))
                        .clone()
                })
                .into_owned()
        })
        .collect()
}

/// The recording's events with the variant applied to its MCP calls.
fn rewrite(r: &Recording, calls: &HashMap<String, McpCall>, variant: &Variant) -> Vec<Event> {
    let mut out = Vec::with_capacity(r.events.len());
    let mut seen: HashSet<String> = HashSet::new();
    // calls whose permission request went by, and calls given their arguments
    let mut answered: HashSet<String> = HashSet::new();
    let mut given: HashSet<String> = HashSet::new();
    // calls that had rawInput in some frame: the arguments go where it was
    let had_raw: HashSet<String> = agent_frames(r)
        .filter_map(|e| serde_json::from_str::<Value>(&e.raw).ok())
        .filter_map(|v| {
            let id = call_id(&v)?;
            let has = !v["params"]["update"]["rawInput"].is_null()
                || !frame_of(&v, true)["rawInput"].is_null();
            has.then_some(id)
        })
        .collect();
    for e in &r.events {
        if e.leg != Leg::Acp || e.dir != Dir::FromAgent {
            out.push(e.clone());
            continue;
        }
        let Ok(mut v) = serde_json::from_str::<Value>(&e.raw) else {
            out.push(e.clone());
            continue;
        };
        if variant.extra == Extra::EmptyChunks {
            let chunk = v["params"]["update"]["sessionUpdate"] == "agent_message_chunk";
            out.push(e.clone());
            if chunk {
                let message_id = v["params"]["update"]["messageId"].as_str();
                out.push(with_raw(e, empty_chunk(&v, message_id)));
            }
            continue;
        }
        let Some(id) = call_id(&v) else {
            out.push(e.clone());
            continue;
        };
        let Some(call) = calls.get(&id) else {
            out.push(e.clone());
            continue;
        };
        let first = seen.insert(id.clone());
        let is_request = v["method"] == "session/request_permission";
        let frame = frame_of_mut(&mut v, is_request);
        let final_frame = is_final(frame);
        strip(frame, final_frame);
        if is_request {
            strip_options(&mut v["params"], call);
            if let Some(meta) = v["params"].as_object_mut() {
                meta.remove("_meta");
            }
        }
        let after_answer = answered.contains(&id);
        let args_here = match variant.arguments {
            Arguments_::WithFrames => {
                (had_raw.contains(&id) && !final_frame) || (!had_raw.contains(&id) && first)
            }
            Arguments_::PermissionOnly => is_request,
            Arguments_::ContentText => first && !final_frame,
            // the first frame after the answer, the result if nothing else
            Arguments_::AfterTheAnswer => after_answer && given.insert(id.clone()),
            Arguments_::Decoration | Arguments_::LaterUpdate | Arguments_::Never => false,
        };
        if is_request {
            answered.insert(id.clone());
        }
        place(&mut v, is_request, call, variant, args_here);
        if variant.extra == Extra::ImagePartsAsJsonText && final_frame {
            images_as_json_text(&mut v["params"]["update"]);
        }
        let later = matches!(variant.arguments, Arguments_::LaterUpdate) && first && !is_request;
        out.push(with_raw(e, v.to_string()));
        if later {
            let update = json!({
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": v["params"]["sessionId"],
                    "update": {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": id,
                        "rawInput": {"arguments": call.arguments}
                    }
                }
            });
            out.push(with_raw(e, update.to_string()));
        }
    }
    out
}

/// A finishing frame whose result has images rewritten so the result is one
/// text holding OpenAI-style content parts as JSON (the shape an agent
/// forwarding a Chat Completions tool result sends).
fn images_as_json_text(update: &mut Value) {
    let Value::Array(blocks) = acp_bridge::call::result::tool_result_content(update) else {
        return;
    };
    let parts: Vec<Value> = blocks
        .iter()
        .map(|b| match b["type"].as_str() {
            Some("image") => json!({
                "type": "image_url",
                "imageUrl": {"url": format!(
                    "data:{};base64,{}",
                    b["source"]["media_type"].as_str().unwrap_or("image/png"),
                    b["source"]["data"].as_str().unwrap_or("")
                )}
            }),
            _ => json!({"type": "text", "text": b["text"]}),
        })
        .collect();
    if let Some(map) = update.as_object_mut() {
        map.remove("rawOutput");
        map.insert(
            "content".into(),
            json!([{"type": "content", "content": {"type": "text", "text": Value::Array(parts).to_string()}}]),
        );
    }
}

/// The recording with its agent `Bash` calls' arguments moved (see
/// [`Extra`]): MCP calls are left as they are.
fn rewrite_agent_calls(r: &Recording, base: &Base, extra: Extra) -> Vec<Event> {
    let mut out = Vec::with_capacity(r.events.len() + 4);
    let mut seen: HashSet<String> = HashSet::new();
    // the whole rawInput each call's frames carried before its result
    let mut raw_inputs: HashMap<String, Map<String, Value>> = HashMap::new();
    for v in agent_frames(r).filter_map(|e| serde_json::from_str::<Value>(&e.raw).ok()) {
        let Some(id) = call_id(&v).filter(|id| base.agent_calls.contains(id)) else {
            continue;
        };
        let frame = call_frame(&v);
        if let (false, Some(raw)) = (is_final(frame), frame["rawInput"].as_object()) {
            // the first frame's value of each key: what the tool_use showed
            let known = raw_inputs.entry(id).or_default();
            for (k, v) in raw {
                known.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    for e in &r.events {
        let parsed = (e.leg == Leg::Acp && e.dir == Dir::FromAgent)
            .then(|| serde_json::from_str::<Value>(&e.raw).ok())
            .flatten();
        let Some(mut v) = parsed else {
            out.push(e.clone());
            continue;
        };
        let Some(id) = call_id(&v).filter(|id| base.agent_calls.contains(id)) else {
            out.push(e.clone());
            continue;
        };
        let first = seen.insert(id.clone());
        let is_request = v["method"] == "session/request_permission";
        match extra {
            Extra::NonArgumentRawInputFirst if first && base.agent_raw_first.contains(&id) => {
                let whole = v["params"]["update"]["rawInput"].clone();
                if let Some(raw) = v["params"]["update"]["rawInput"].as_object_mut() {
                    raw.remove("command");
                }
                out.push(with_raw(e, v.to_string()));
                let update = json!({
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": v["params"]["sessionId"],
                        "update": {"sessionUpdate": "tool_call_update", "toolCallId": id, "rawInput": whole}
                    }
                });
                out.push(with_raw(e, update.to_string()));
            }
            Extra::AgentArgumentsInContentText => {
                let frame = frame_of_mut(&mut v, is_request);
                let final_frame = is_final(frame);
                if let Some(map) = frame.as_object_mut() {
                    // each frame's own arguments, else (first) all of them
                    let own = map.remove("rawInput").and_then(|r| match r {
                        Value::Object(m) => Some(m),
                        _ => None,
                    });
                    let args =
                        own.or_else(|| first.then(|| raw_inputs.get(&id).cloned()).flatten());
                    if let (Some(args), false) = (args, final_frame) {
                        let text = json!({"type": "content", "content": {"type": "text", "text": Value::Object(args).to_string()}});
                        match map.get_mut("content") {
                            Some(Value::Array(content)) => content.push(text),
                            _ => {
                                map.insert("content".into(), json!([text]));
                            }
                        }
                    }
                }
                out.push(with_raw(e, v.to_string()));
            }
            _ => out.push(e.clone()),
        }
    }
    out
}

/// A frame's rawInput (its update's or its request's `toolCall`'s) when it
/// is a non-empty object no envelope wraps yet.
fn wrappable_raw_input(v: &Value) -> Option<&Map<String, Value>> {
    call_frame(v)["rawInput"]
        .as_object()
        .filter(|m| !m.is_empty() && !wraps(m))
}

/// Whether a rawInput holds its arguments under a wrapper key already
/// (codex's `{server, tool, arguments}`, an empty `{"tool_input": {}}`).
fn wraps(raw: &Map<String, Value>) -> bool {
    [
        "arguments",
        "tool_input",
        "input",
        "args",
        "params",
        "parameters",
    ]
    .iter()
    .any(|k| raw.get(*k).is_some_and(Value::is_object))
}

/// The recording with every call's rawInput wrapped (see
/// [`Extra::ArgumentsWrapped`]): the n-th call's in `envelope(n, rawInput)`.
fn arguments_wrapped(r: &Recording, envelope: impl Fn(usize, Value) -> Value) -> Vec<Event> {
    // a call some frame of which wraps its arguments already keeps its shape
    let wrapped_already: HashSet<String> = agent_frames(r)
        .filter_map(|e| serde_json::from_str::<Value>(&e.raw).ok())
        .filter(|v| call_frame(v)["rawInput"].as_object().is_some_and(wraps))
        .filter_map(|v| call_id(&v))
        .collect();
    let mut order: HashMap<String, usize> = HashMap::new();
    r.events
        .iter()
        .map(|e| {
            let parsed = (e.leg == Leg::Acp && e.dir == Dir::FromAgent)
                .then(|| serde_json::from_str::<Value>(&e.raw).ok())
                .flatten();
            let Some(mut v) = parsed else {
                return e.clone();
            };
            let (Some(id), Some(raw)) = (call_id(&v), wrappable_raw_input(&v).cloned()) else {
                return e.clone();
            };
            if wrapped_already.contains(&id) {
                return e.clone();
            }
            let next = order.len();
            let wrapped = envelope(*order.entry(id).or_insert(next), Value::Object(raw));
            let frame = call_frame_mut(&mut v);
            frame["rawInput"] = wrapped;
            with_raw(e, v.to_string())
        })
        .collect()
}

/// The agent frame of `e` when it is a `session/update` of one of `kinds`.
fn update_of(e: &Event, kinds: &[&str]) -> Option<Value> {
    if e.leg != Leg::Acp || e.dir != Dir::FromAgent {
        return None;
    }
    let v: Value = serde_json::from_str(&e.raw).ok()?;
    let kind = v["params"]["update"]["sessionUpdate"].as_str()?;
    (v["method"] == "session/update" && kinds.contains(&kind)).then_some(v)
}

/// The recording with each run of a message's chunks sent whole (see
/// [`Extra::V2MessagesWhole`]).
fn v2_messages_whole(r: &Recording) -> Vec<Event> {
    const CHUNKS: &[&str] = &["agent_message_chunk", "agent_thought_chunk"];
    let mut out: Vec<Event> = Vec::with_capacity(r.events.len());
    // the run so far: its key (kind, messageId), its blocks, its last event
    let mut run: Option<((String, String), Vec<Value>, Event)> = None;
    let flush = |run: &mut Option<((String, String), Vec<Value>, Event)>, out: &mut Vec<Event>| {
        if let Some(((kind, id), blocks, last)) = run.take() {
            let mut v: Value = serde_json::from_str(&last.raw).expect("a parsed chunk");
            v["params"]["update"] = json!({
                "sessionUpdate": kind.trim_end_matches("_chunk"),
                "messageId": id,
                "content": blocks,
            });
            out.push(with_raw(&last, v.to_string()));
        }
    };
    for e in &r.events {
        let chunk = update_of(e, CHUNKS).and_then(|v| {
            let u = &v["params"]["update"];
            let key = (
                u["sessionUpdate"].as_str()?.to_string(),
                u["messageId"].as_str()?.to_string(),
            );
            Some((key, u["content"].clone()))
        });
        match chunk {
            Some((key, block)) => {
                if run.as_ref().is_some_and(|(k, _, _)| *k != key) {
                    flush(&mut run, &mut out);
                }
                let entry = run.get_or_insert_with(|| (key, Vec::new(), e.clone()));
                entry.1.push(block);
                entry.2 = e.clone();
            }
            // only the agent's own frames break a run: the other legs
            // (model, MCP, notes) interleave as they were recorded
            None if e.leg == Leg::Acp => {
                flush(&mut run, &mut out);
                out.push(e.clone());
            }
            None => out.push(e.clone()),
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The recording with every call update's content sent ahead of it in
/// chunks (see [`Extra::V2CallContentChunked`]).
fn v2_call_content_chunked(r: &Recording) -> Vec<Event> {
    let mut out = Vec::with_capacity(r.events.len());
    let mut announced = HashSet::new();
    for e in &r.events {
        let Some(mut v) = update_of(e, &["tool_call_update"]) else {
            out.push(e.clone());
            continue;
        };
        let update = &mut v["params"]["update"];
        let id = update["toolCallId"].clone();
        let first = announced.insert(id.to_string());
        let blocks = match update.get("content").and_then(Value::as_array) {
            Some(blocks) if !blocks.is_empty() && !first => blocks.clone(),
            _ => {
                out.push(e.clone());
                continue;
            }
        };
        for block in blocks {
            let mut chunk = v.clone();
            chunk["params"]["update"] = json!({
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": id,
                "content": block,
            });
            out.push(with_raw(e, chunk.to_string()));
        }
        if let Some(u) = v["params"]["update"].as_object_mut() {
            u.remove("content");
        }
        out.push(with_raw(e, v.to_string()));
    }
    out
}

/// The recording with every permission request asked under one id (see
/// [`Extra::SharedPermissionId`]).
fn shared_permission_id(r: &Recording) -> Vec<Event> {
    rewrite_agent_frames(r, |v| {
        if v["method"] != "session/request_permission" {
            return false;
        }
        let session = v["params"]["sessionId"].as_str().unwrap_or("").to_string();
        frame_of_mut(v, true)["toolCallId"] = json!(format!("confirmation-{session}"));
        true
    })
}

fn with_raw(e: &Event, raw: String) -> Event {
    let mut e = e.clone();
    e.raw = raw;
    e
}

/// A chunk with empty text that carries only `_meta`.
fn empty_chunk(like: &Value, message_id: Option<&str>) -> String {
    let mut update = json!({
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": ""},
        "_meta": {"eventId": "respelled-empty-chunk"}
    });
    if let Some(id) = message_id {
        update["messageId"] = json!(id);
    }
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": like["params"]["sessionId"], "update": update}
    })
    .to_string()
}

/// Removes every place a call's identity or arguments may sit in one frame:
/// title, `_meta`, rawInput, and (outside its result) JSON text blocks.
fn strip(frame: &mut Value, final_frame: bool) {
    let Some(map) = frame.as_object_mut() else {
        return;
    };
    for key in ["title", "_meta", "rawInput"] {
        map.remove(key);
    }
    if !final_frame && let Some(Value::Array(content)) = map.get_mut("content") {
        content.retain(|item| {
            let block = if item["type"] == "content" {
                &item["content"]
            } else {
                item
            };
            block["text"]
                .as_str()
                .is_none_or(|t| serde_json::from_str::<Map<String, Value>>(t).is_err())
        });
    }
}

/// Option names that name the call's server or tool lose that word.
fn strip_options(params: &mut Value, call: &McpCall) {
    for option in params["options"].as_array_mut().into_iter().flatten() {
        let Some(name) = option["name"].as_str() else {
            continue;
        };
        let words: Vec<&str> = name
            .split_whitespace()
            .filter(|w| !w.contains(&call.server) && !w.contains(&call.tool))
            .collect();
        option["name"] = json!(words.join(" "));
    }
}

fn spell(template: &str, call: &McpCall) -> String {
    template
        .replace("{s}", &call.server)
        .replace("{t}", &call.tool)
        .replace("{args}", &call.arguments.to_string())
}

/// Puts the variant's identity, title, kind and arguments into one frame.
fn place(v: &mut Value, is_request: bool, call: &McpCall, variant: &Variant, args_here: bool) {
    let identity = spell(variant.spelling, call);
    let on_request_only = matches!(variant.place, Place::PermissionTitle | Place::OptionName);
    if is_request && let Place::OptionName = variant.place {
        let options = v["params"]["options"].as_array_mut();
        if let Some(option) = options.and_then(|o| o.iter_mut().find(|o| o["kind"] == "allow_once"))
        {
            option["name"] = json!(format!("Allow {identity}"));
        }
    }
    let frame = frame_of_mut(v, is_request);
    let Some(map) = frame.as_object_mut() else {
        return;
    };
    let title = match (variant.place, variant.title) {
        (Place::Title, _) => identity.clone(),
        (Place::PermissionTitle, _) if is_request => identity.clone(),
        (_, Title::Label(label)) => label.to_string(),
        (_, Title::ArgumentsJson) => call.arguments.to_string(),
    };
    map.insert("title".into(), json!(title));
    match variant.kind {
        _ if on_request_only && !is_request => {
            map.remove("kind");
        }
        Kind::Keep => {}
        Kind::Set(k) => {
            map.insert("kind".into(), json!(k));
        }
        Kind::Remove => {
            map.remove("kind");
        }
    }
    if let Place::Meta(key) = variant.place {
        map.insert("_meta".into(), json!({ key: identity }));
    }
    let mut raw = Map::new();
    match variant.place {
        Place::RawServerTool => {
            raw.insert("server".into(), json!(call.server));
            raw.insert("tool".into(), json!(call.tool));
        }
        Place::RawField(key) => {
            raw.insert(key.into(), json!(identity));
        }
        _ => {}
    }
    match variant.arguments {
        Arguments_::ContentText if args_here => {
            let text = json!({"type": "content", "content": {"type": "text", "text": call.arguments.to_string()}});
            match map.get_mut("content") {
                Some(Value::Array(content)) => content.push(text),
                _ => {
                    map.insert("content".into(), json!([text]));
                }
            }
        }
        _ if args_here => {
            raw.insert("arguments".into(), call.arguments.clone());
        }
        _ => {}
    }
    // Kilo's placeholder: an empty rawInput until the arguments come
    let placeholder = matches!(variant.arguments, Arguments_::AfterTheAnswer)
        && !is_final(frame_of(v, is_request));
    let map = frame_of_mut(v, is_request)
        .as_object_mut()
        .expect("an object above");
    if !raw.is_empty() || placeholder {
        map.insert("rawInput".into(), Value::Object(raw));
    }
}

/// The object of a frame that describes its call: a permission request's
/// `toolCall`, an update's `update`.
fn call_frame(v: &Value) -> &Value {
    frame_of(v, v["method"] == "session/request_permission")
}

fn call_frame_mut(v: &mut Value) -> &mut Value {
    let is_request = v["method"] == "session/request_permission";
    frame_of_mut(v, is_request)
}

/// A frame's call: a `session/update`'s update, or the call a permission
/// request names (v1's `toolCall`, v2's `subject.toolCall`).
fn frame_of(v: &Value, is_request: bool) -> &Value {
    match (is_request, v["params"].get("toolCall")) {
        (false, _) => &v["params"]["update"],
        (true, Some(call)) => call,
        (true, None) => &v["params"]["subject"]["toolCall"],
    }
}

fn frame_of_mut(v: &mut Value, is_request: bool) -> &mut Value {
    if !is_request {
        return &mut v["params"]["update"];
    }
    if v["params"].get("toolCall").is_some() {
        &mut v["params"]["toolCall"]
    } else {
        &mut v["params"]["subject"]["toolCall"]
    }
}
