//! The panel leg of a tap read as a scenario: the panel's prompts,
//! permission answers, interrupts and mode changes become its steps, each
//! placed at a point the replay's panel driver will see again (the counts
//! it keeps of the running turn: tool calls, permission requests, text
//! deltas), and the whole is written as a scenario file.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::corpus::recording::{Dir, Event, Leg};
use crate::corpus::scenario::{Decision, PanelMcpServer, Point};

/// One panel step as the scenario file writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum PanelStep {
    Prompt {
        text: String,
        images: Vec<Image>,
    },
    Steer {
        at: Point,
        text: String,
        images: Vec<Image>,
    },
    Permission {
        decision: Decision,
        tool: String,
        /// The input the panel sent back when it differs from the asked one.
        updated_input: Option<Value>,
    },
    Interrupt {
        at: Point,
    },
    SetMode {
        mode: String,
    },
    SetModel {
        model: String,
    },
}

/// An image of a panel prompt, as its base64 block carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub media_type: String,
    pub data: String,
}

/// What the panel leg holds: the steps, the Claude tool names the bridge
/// showed the panel, and what a scenario cannot say (told in the summary).
#[derive(Debug, Default)]
pub struct PanelLeg {
    pub steps: Vec<PanelStep>,
    pub tool_uses: Vec<String>,
    /// The `result` lines the panel was sent (one per turn).
    pub results: usize,
    /// The instructions the panel's `initialize` carried (the TypeScript
    /// Agent SDK sends its `systemPrompt` there), read as the bridge reads them.
    pub instructions: acp_bridge::PanelInstructions,
    pub notes: Vec<String>,
}

/// A panel line no scenario step can stand for, which would make the
/// replay something other than the tapped session: the import refuses it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tap line {line}: {what}")]
pub struct Unplaceable {
    /// 1-based line of the tap file.
    pub line: usize,
    pub what: String,
}

/// A mode or model change the panel asked for: what it names, what is
/// changed, and why a change without a value is left out.
struct Change<'a> {
    value: &'a Value,
    what: &'static str,
    missing: &'static str,
}

impl<'a> Change<'a> {
    fn of(value: &'a Value, what: &'static str, missing: &'static str) -> Change<'a> {
        Change {
            value,
            what,
            missing,
        }
    }

    /// The value the replay sets, or a note why none; a change made while a
    /// turn ran is noted too, since the replay makes it after the turn.
    fn read(&self, running: bool, line: usize, notes: &mut Vec<String>) -> Option<String> {
        let Some(value) = self.value.as_str().filter(|s| !s.is_empty()) else {
            notes.push(format!("tap line {line}: {}", self.missing));
            return None;
        };
        if running {
            notes.push(format!(
                "tap line {line}: the {} changed while a turn ran; the replay changes it after the turn",
                self.what
            ));
        }
        Some(value.to_string())
    }
}

/// What the panel has seen of the running turn (as `PanelDriver` counts it).
#[derive(Debug, Default)]
struct Turn {
    running: bool,
    tool_uses: usize,
    permissions: usize,
    text_deltas: u32,
}

impl Turn {
    /// The point of the running turn a step that came now is placed at: one
    /// the panel had passed, so the replay reaches it too.
    fn point(&self) -> Option<Point> {
        if self.permissions > 0 {
            Some(Point::Permission)
        } else if self.tool_uses > 0 {
            Some(Point::FirstToolCall)
        } else if self.text_deltas > 0 {
            Some(Point::Chunks(self.text_deltas))
        } else {
            None
        }
    }
}

/// Reads the `stream-json` events (`to_agent`: the panel's lines,
/// `from_agent`: the bridge's) in order. `line_of` gives an event's line in
/// the tap file, for messages.
pub fn read(events: &[Event], line_of: impl Fn(usize) -> usize) -> Result<PanelLeg, Unplaceable> {
    let mut r = LegReader::default();
    for (i, e) in events.iter().enumerate() {
        if e.leg != Leg::StreamJson {
            continue;
        }
        let line = line_of(i);
        let Ok(v) = serde_json::from_str::<Value>(&e.raw) else {
            r.leg.notes.push(format!(
                "tap line {line}: a panel-leg line that is not JSON is left out"
            ));
            continue;
        };
        if e.dir == Dir::FromAgent {
            r.bridge_line(&v);
        } else {
            r.panel_line(&v, line)?;
        }
    }
    for (subtype, n) in r.left_out {
        r.leg.notes.push(format!(
            "{n} `{subtype}` control request(s) of the panel have no scenario step; the replay does not send them (a frame the bridge then does not send the agent is a divergence)"
        ));
    }
    Ok(r.leg)
}

/// The panel leg as read so far, and what the panel had seen at this point.
#[derive(Default)]
struct LegReader {
    leg: PanelLeg,
    turn: Turn,
    /// open can_use_tool requests: request id -> (tool name, asked input)
    open: BTreeMap<String, (String, Value)>,
    /// control requests no step stands for, by subtype
    left_out: BTreeMap<String, usize>,
}

impl LegReader {
    /// A line the bridge sent the panel: what the turn has shown so far.
    fn bridge_line(&mut self, v: &Value) {
        let ty = v["type"].as_str().unwrap_or("");
        let subtype = v["request"]["subtype"].as_str().unwrap_or("");
        match ty {
            "control_request" if subtype == "can_use_tool" => {
                self.turn.permissions += 1;
                let id = v["request_id"].as_str().unwrap_or_default().to_string();
                let tool = v["request"]["tool_name"].as_str().unwrap_or("?");
                self.open
                    .insert(id, (tool.to_string(), v["request"]["input"].clone()));
            }
            "control_cancel_request" => {
                self.open
                    .remove(v["request_id"].as_str().unwrap_or_default());
            }
            "assistant" => {
                for b in blocks(v, "tool_use") {
                    self.turn.tool_uses += 1;
                    self.leg
                        .tool_uses
                        .push(b["name"].as_str().unwrap_or("?").to_string());
                }
            }
            "stream_event" if v["event"]["delta"]["type"] == "text_delta" => {
                self.turn.text_deltas += 1;
            }
            "result" => {
                self.leg.results += 1;
                self.turn = Turn::default();
                self.open.clear();
            }
            _ => {}
        }
    }

    /// A line the panel sent: a prompt, a steer, a control request or a
    /// permission answer becomes a step, placed at the point of the turn the
    /// panel had reached.
    fn panel_line(&mut self, v: &Value, line: usize) -> Result<(), Unplaceable> {
        match v["type"].as_str().unwrap_or("") {
            "user" => {
                let (text, images) = prompt_content(v, line)?;
                if self.turn.running {
                    let at = self.turn.point().ok_or_else(|| Unplaceable {
                        line,
                        what: "a message sent while a turn ran, before anything of the turn reached the panel: no point of the turn places it".into(),
                    })?;
                    self.leg.steps.push(PanelStep::Steer { at, text, images });
                } else {
                    self.turn = Turn {
                        running: true,
                        ..Turn::default()
                    };
                    self.leg.steps.push(PanelStep::Prompt { text, images });
                }
            }
            "control_request" => self.control_request(v, line)?,
            "control_response" => self.control_response(v, line),
            _ => {}
        }
        Ok(())
    }

    fn control_request(&mut self, v: &Value, line: usize) -> Result<(), Unplaceable> {
        let notes = &mut self.leg.notes;
        match v["request"]["subtype"].as_str().unwrap_or("") {
            "initialize" => match acp_bridge::PanelInstructions::read(&v["request"]) {
                Ok(given) => self.leg.instructions.update(given),
                Err(e) => notes.push(format!(
                    "tap line {line}: the panel's initialize instructions are left out: {e}"
                )),
            },
            "interrupt" if self.turn.running => {
                let at = self.turn.point().ok_or_else(|| Unplaceable {
                    line,
                    what: "an interrupt before anything of its turn reached the panel: no point of the turn places it".into(),
                })?;
                self.leg.steps.push(PanelStep::Interrupt { at });
                // the next message is a new prompt, sent after the result
                self.turn.running = false;
            }
            "interrupt" => notes.push(format!(
                "tap line {line}: an interrupt with no turn running is left out"
            )),
            "set_permission_mode" => {
                let missing = "a set_permission_mode without a mode is left out";
                let change = Change::of(&v["request"]["mode"], "mode", missing);
                if let Some(mode) = change.read(self.turn.running, line, notes) {
                    self.leg.steps.push(PanelStep::SetMode { mode });
                }
            }
            "set_model" => {
                let missing = "a set_model back to the default model is left out (a scenario names the model)";
                let change = Change::of(&v["request"]["model"], "model", missing);
                if let Some(model) = change.read(self.turn.running, line, notes) {
                    self.leg.steps.push(PanelStep::SetModel { model });
                }
            }
            other => *self.left_out.entry(other.to_string()).or_default() += 1,
        }
        Ok(())
    }

    /// The panel's answer to a permission request of the running turn.
    fn control_response(&mut self, v: &Value, line: usize) {
        let id = v["response"]["request_id"].as_str().unwrap_or_default();
        let Some((tool, asked)) = self.open.remove(id) else {
            return;
        };
        let decision = decision(&v["response"]);
        if let Some(mode) = acp_bridge::PanelAnswer::parse(&v["response"]).set_mode {
            self.leg.notes.push(format!(
                "tap line {line}: the answer also switched the permission mode to {mode} (setMode); a permission step cannot say so, and the replay answers without it"
            ));
        }
        let sent = &v["response"]["response"]["updatedInput"];
        let updated_input = (matches!(decision, Decision::Allow | Decision::AllowAlways)
            && sent.is_object()
            && *sent != asked)
            .then(|| sent.clone());
        if self.turn.running {
            self.leg.steps.push(PanelStep::Permission {
                decision,
                tool,
                updated_input,
            });
            if decision == Decision::Cancel {
                self.turn.running = false;
            }
        } else {
            self.leg.notes.push(format!(
                "tap line {line}: a permission answer after its turn ended is left out"
            ));
        }
    }
}

/// The text and images of a panel `user` line: a string, or one text block
/// followed by base64 image blocks (the order a scenario prompt sends).
fn prompt_content(v: &Value, line: usize) -> Result<(String, Vec<Image>), Unplaceable> {
    let refuse = |what: &str| Unplaceable {
        line,
        what: what.to_string(),
    };
    let content = &v["message"]["content"];
    if let Some(text) = content.as_str() {
        let text = non_empty(text).ok_or_else(|| refuse("a user message without text"))?;
        return Ok((text, Vec::new()));
    }
    let blocks = content
        .as_array()
        .ok_or_else(|| refuse("a user message whose content is neither text nor blocks"))?;
    let Some((first, rest)) = blocks.split_first().filter(|(f, _)| f["type"] == "text") else {
        return Err(refuse(
            "a user message that does not start with its text: a scenario prompt sends its text, then its images",
        ));
    };
    let text = non_empty(first["text"].as_str().unwrap_or_default())
        .ok_or_else(|| refuse("a user message without text"))?;
    let mut images = Vec::new();
    for b in rest {
        let source = &b["source"];
        match (b["type"].as_str(), source["type"].as_str()) {
            (Some("image"), Some("base64")) => images.push(Image {
                media_type: source["media_type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                data: source["data"].as_str().unwrap_or_default().to_string(),
            }),
            (Some("text"), _) => {
                return Err(refuse(
                    "a user message of several text blocks: a scenario prompt is one block",
                ));
            }
            _ => {
                return Err(refuse(
                    "a user message with a block that is neither text nor a base64 image: a scenario prompt cannot carry it",
                ));
            }
        }
    }
    if images
        .iter()
        .any(|i| i.media_type.is_empty() || i.data.is_empty())
    {
        return Err(refuse(
            "a user message with an image without media_type or data",
        ));
    }
    Ok((text, images))
}

fn non_empty(text: &str) -> Option<String> {
    (!text.trim().is_empty()).then(|| text.to_string())
}

/// A `can_use_tool` answer as the bridge reads it.
fn decision(response: &Value) -> Decision {
    let answer = acp_bridge::PanelAnswer::parse(response);
    match (answer.allow, answer.always) {
        (true, true) => Decision::AllowAlways,
        (true, false) => Decision::Allow,
        (false, _) if answer.interrupt => Decision::Cancel,
        (false, _) => Decision::Deny,
    }
}

fn blocks<'v>(v: &'v Value, ty: &'v str) -> impl Iterator<Item = &'v Value> + 'v {
    v["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |b| b["type"] == ty)
}

/// The head of the scenario file: what it is and what it runs with.
pub struct ScenarioHead<'a> {
    pub name: &'a str,
    pub summary: &'a str,
    pub source: &'a str,
    pub tools: &'a [String],
    pub system_prompt: Option<&'a str>,
    pub append_system_prompt: Option<&'a str>,
    /// `--model`, `--permission-mode`, `--resume` of the tapped launch.
    pub model: Option<&'a str>,
    pub permission_mode: Option<&'a str>,
    pub resume_session: Option<&'a str>,
    /// The MCP server the tapped panel gave (written when not unity-ops
    /// with a token).
    pub mcp_server: &'a PanelMcpServer,
    pub script_gate: bool,
    /// The `result` lines the tapped panel got: the first expectation.
    pub results: usize,
}

/// The scenario file's text: the head, the steps, and room for `[[expect]]`s.
pub fn scenario_text(head: &ScenarioHead, steps: &[PanelStep]) -> String {
    let mut out = String::new();
    for line in head.source.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(&format!("name = {}\n", quote(head.name)));
    out.push_str(&format!("summary = {}\n", quote(head.summary)));
    out.push_str("imported = true\n");
    let tools: Vec<String> = head.tools.iter().map(|t| quote(t)).collect();
    out.push_str(&format!("tools = [{}]\n", tools.join(", ")));
    if let Some(sp) = head.system_prompt {
        out.push_str(&format!("system_prompt = {}\n", quote(sp)));
    }
    if let Some(ap) = head.append_system_prompt {
        out.push_str(&format!("append_system_prompt = {}\n", quote(ap)));
    }
    if head.script_gate {
        out.push_str("script_gate = true\n");
    }
    let mut launch: Vec<(&str, String)> = [
        ("model", head.model),
        ("permission_mode", head.permission_mode),
        ("resume_session", head.resume_session),
    ]
    .into_iter()
    .filter_map(|(key, v)| v.map(|v| (key, quote(v))))
    .collect();
    match head.mcp_server {
        server if *server == PanelMcpServer::default() => {}
        PanelMcpServer::Given {
            name,
            authorization,
        } => {
            launch.push(("mcp_server", quote(name)));
            if !authorization {
                launch.push(("mcp_authorization", "false".into()));
            }
        }
        PanelMcpServer::NotGiven => launch.push(("mcp_server", "false".into())),
    }
    if !launch.is_empty() {
        out.push_str("\n[launch]\n");
        for (key, value) in launch {
            out.push_str(&format!("{key} = {value}\n"));
        }
    }
    for step in steps {
        out.push_str("\n[[step]]\n");
        match step {
            PanelStep::Prompt { text, images } => {
                out.push_str(&format!("panel = \"prompt\"\ntext = {}\n", quote(text)));
                push_images(&mut out, images);
            }
            PanelStep::Steer { at, text, images } => {
                out.push_str(&format!(
                    "panel = \"steer\"\nat = \"{at}\"\ntext = {}\n",
                    quote(text)
                ));
                push_images(&mut out, images);
            }
            PanelStep::Permission {
                decision,
                tool,
                updated_input,
            } => {
                out.push_str(&format!(
                    "panel = \"permission\"\ndecision = \"{decision}\"   # {tool}\n"
                ));
                if let Some(input) = updated_input {
                    out.push_str(&format!(
                        "updated_input = {}   # the panel edited the input\n",
                        quote(&input.to_string())
                    ));
                }
            }
            PanelStep::Interrupt { at } => {
                out.push_str(&format!("panel = \"interrupt\"\nat = \"{at}\"\n"));
            }
            PanelStep::SetMode { mode } => {
                out.push_str(&format!("panel = \"set_mode\"\nmode = {}\n", quote(mode)));
            }
            PanelStep::SetModel { model } => {
                out.push_str(&format!(
                    "panel = \"set_model\"\nmodel_id = {}\n",
                    quote(model)
                ));
            }
        }
    }
    // an expectation first, so what a user adds below it is in the tables
    // the recording's hash leaves out, blank lines and all
    out.push_str(&format!(
        "\n# The bridge's output-side invariants are always checked. Add `[[expect]]`\n\
         # entries below (scenarios/README.md) for what must hold of this session.\n\
         [[expect]]\nkind = \"result\"\ncount = {}\n\
         why = \"Each turn of the tapped session ended with exactly one result, so the panel left its busy state.\"\n",
        head.results
    ));
    out
}

/// A prompt's images, inline (`images = [{ media_type, data }]`).
fn push_images(out: &mut String, images: &[Image]) {
    if images.is_empty() {
        return;
    }
    let list: Vec<String> = images
        .iter()
        .map(|i| {
            format!(
                "{{ media_type = {}, data = {} }}",
                quote(&i.media_type),
                quote(&i.data)
            )
        })
        .collect();
    out.push_str(&format!("images = [{}]\n", list.join(", ")));
}

/// `text` as a TOML basic string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
