//! A call's way through its stages, as rules on what the call knows:
//! whether its `tool_use` is held back, the name it goes out under, and
//! what a call the agent reported finished ends with. The core sequences
//! the stages and writes the lines; these say what goes in them.

use std::time::Duration;

use crate::call::identity::{self, RegisteredServers};
use crate::call::result as tool_result;
use crate::call::table::{Asked, ToolCall, UNNAMED_CALL_WAIT};

/// The result text of a failed call whose frames carry no text.
const FAILED_WITHOUT_TEXT: &str = "The tool call failed; the agent gave no details.";

/// The result text of a call that completed with no content and no
/// rawOutput: an empty string would read as a tool that printed nothing.
const COMPLETED_WITHOUT_OUTPUT: &str = "The tool call completed; the agent reported no output.";

/// Whether a call not yet announced is held back. Its `tool_use` waits
/// until its name and input are known: an MCP call until a frame carries
/// its arguments, a meta-tool call (`use_tool`) until the tool it calls is
/// named, any other call until a frame brings its kind (or an MCP identity)
/// and its rawInput, or a later frame says it runs; a running call that
/// nothing names (no kind, no identity) for the permission request that may
/// name it. **No call is hidden from the panel longer than
/// [`UNNAMED_CALL_WAIT`]** from the
/// frame that first held it (an agent may never send the arguments; the
/// panel must see, and be able to interrupt, a call that runs), and never
/// past anything that must follow it.
pub(crate) fn holds_back(
    call: &mut ToolCall,
    servers: &RegisteredServers,
    in_progress: bool,
    finished: bool,
    now: Duration,
) -> bool {
    if finished {
        return false;
    }
    let runs = call.frames > 1 && in_progress;
    let unnamed =
        !identity::has_kind(call.fields()) && identity::meta_builtin_name(call.fields()).is_none();
    let wants = if call.identity_pending(servers) {
        true
    } else if call.is_mcp(servers) {
        call.awaits_arguments(servers)
    } else {
        ((unnamed || call.awaits_arguments(servers)) && !runs)
            || (runs && unnamed && !call.was_asked())
            || call.lacks_required_fields(servers)
    };
    if !wants {
        return false;
    }
    let until = *call.held_until.get_or_insert(now + UNNAMED_CALL_WAIT);
    now < until
}

/// The name the call's `tool_use` goes out under: its Claude name, but a
/// file tool by its kind that carries no path is named by its title (see
/// [`crate::call::fields::pathless_file_tool_name`]). Only a file tool's
/// name depends on a path, so the input is worked out for nothing else.
pub(crate) fn announced_name(call: &ToolCall, servers: &RegisteredServers) -> String {
    let name = call.name(servers).to_string();
    if !matches!(name.as_str(), "Edit" | "Write") {
        return name;
    }
    let has_path = !crate::acp::json_field::field(call.input(servers), "file_path").is_null();
    crate::call::fields::pathless_file_tool_name(call.fields(), &name, has_path)
        .map_or(name, str::to_string)
}

/// What a call the agent reported finished ends with, besides its content.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finish {
    /// The result is an error: the call failed, or its result says the
    /// tool did (MCP `isError`, error shapes).
    pub is_error: bool,
    /// The text that stands in when the call's own result is blank: **every
    /// result says what happened**.
    pub stand_in: Option<String>,
    /// A gated script the call wrote without being asked about it.
    pub unasked_write: Option<UnaskedWrite>,
    /// It completed a call to the MCP server named `ours`.
    pub reached_ours: bool,
}

/// A gated script write the panel was not asked about: the agent wrote it
/// unasked (auto-approve), or asked about another target first (`late`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UnaskedWrite {
    pub target: String,
    pub late: bool,
}

/// Finishes a call the agent reported `completed` or failed: its content
/// loses what was no result (argument texts, a proposed diff), and the rest
/// of its ending is worked out. `script_gate`: whether the gate is on;
/// `ours`: the panel's MCP server.
pub(crate) fn finish(
    call: &mut ToolCall,
    servers: &RegisteredServers,
    completed: bool,
    script_gate: bool,
    ours: Option<&str>,
) -> Finish {
    let late = call.asked == Asked::GatePassed;
    // a refused call wrote nothing, whatever status the agent gives it
    let refused = call.gate_denial.is_some() || call.panel_denial.is_some();
    let unasked_write = (script_gate && completed && !refused && (!call.was_asked() || late))
        .then(|| {
            crate::call::input::gated_target_in_call(
                call.name(servers),
                call.input(servers),
                call.fields(),
            )
        })
        .flatten()
        .map(|target| UnaskedWrite { target, late });
    let reached_ours = completed && ours.is_some() && call.mcp_server(servers) == ours;
    call.drop_argument_texts();
    if call.content_is_proposal() {
        // a diff shown before the call ran is no result; its rawOutput is
        call.clear_content();
    }
    let is_error = tool_result::is_error_of((&call.fields().own).into());
    // a refused or failed call whose frames say nothing gets the refusal's
    // text, or a failure
    let stand_in = if is_error {
        Some(
            (call.gate_denial.clone())
                .or_else(|| call.panel_denial.clone())
                .unwrap_or_else(|| FAILED_WITHOUT_TEXT.to_string()),
        )
    } else if call.name(servers) == "Write" {
        // a write that completed saying nothing shows the file it wrote
        tool_result::new_file_text(call.input(servers))
    } else {
        (call.fields().own.raw_output.is_none()).then(|| COMPLETED_WITHOUT_OUTPUT.to_string())
    };
    Finish {
        is_error,
        stand_in,
        unasked_write,
        reached_ours,
    }
}
