//! The script gate (docs/bridge-behaviour.md, "Script gate"): agents must not write `*.cs` / `*.asmdef`
//! under `Assets/` directly. They stage scripts in [`STAGING_FOLDER`] and call
//! [`COMMIT_TOOL`], which moves them into `Assets/` only if they compile.
//!
//! One piece of code serves both layers that enforce it, so they can never
//! disagree: the bridge (`--script-gate`, answering permission requests) and
//! the Claude Code PreToolUse hook (`acp-bridge gate-hook`, see
//! [`hook_decision`]), which also fires when a user's "always allow" rule
//! means no permission request is ever asked.
//!
//! Everything here fails open: a command or input it cannot parse is allowed.
//! The gate is a guard rail for a cooperating agent, not a sandbox. Known
//! blind spots that stay so: dynamic-code tools (C# run inside the editor),
//! paths built in variables, interpreter one-liners (`python -c ...`).

mod commands;
mod hook;
mod lexer;
mod messages;
mod patch;

use serde_json::Value;

pub use commands::shell_write_targets;
pub use hook::{HOOK_INPUT_LIMIT, hook_decision, run_hook_on_stdio};
pub use messages::{deny_text, late_write_text, steering_text, unasked_write_text};
pub use patch::{PatchChange, patch_change, patch_targets, patch_targets_in};

/// The folder (project root, outside `Assets/`) where scripts are staged.
pub const STAGING_FOLDER: &str = "UapStaging/";
/// The unity-ops tool that compiles staged scripts and moves them into `Assets/`.
pub const COMMIT_TOOL: &str = "uap_scripts_commit";
/// Claude tool names that run a shell command (Windows CLIs say `PowerShell`).
pub const SHELL_TOOL_NAMES: [&str; 3] = ["Bash", "PowerShell", "Shell"];
/// Claude tool names that write one file named by `file_path`.
pub const FILE_TOOL_NAMES: [&str; 3] = ["Write", "Edit", "MultiEdit"];

/// Whether `name` is a shell tool whose command the gate reads.
pub fn is_shell_tool_name(name: &str) -> bool {
    SHELL_TOOL_NAMES.contains(&name)
}

/// The command text of a shell tool's input: `command`, else `script` (the
/// same order the panel's tool describer uses). An argv array (codex sends
/// `["bash", "-lc", "<script>"]`) yields the script after `-c`/`-lc`/
/// `-Command`, else the words joined by spaces. A string that is a
/// shell-quoted argv (codex-acp 2.x sends the script shell-quoted as one
/// word, e.g. `'mkdir -p "$(dirname '"'Assets/…`) is unquoted the same way
/// (see [`unquoted_script`]). An ACP `execute` call with neither (Gemini
/// CLI) yields its title.
pub fn shell_command(input: &Value) -> Option<String> {
    for key in ["command", "cmd", "script"] {
        match &input[key] {
            Value::String(s) if !s.trim().is_empty() => {
                return Some(unquoted_script(s).unwrap_or_else(|| s.clone()));
            }
            Value::Array(items) => return argv_command(items),
            _ => {}
        }
    }
    // a list of command lines (`{"commands": ["mkdir -p a", "echo > a/b"]}`)
    if let Some(lines) = input["commands"].as_array() {
        let lines: Vec<&str> = lines.iter().filter_map(Value::as_str).collect();
        if !lines.is_empty() {
            return Some(lines.join("\n"));
        }
    }
    // Gemini CLI sends no rawInput: the title of its shell call is the command
    // (plus ` [in <dir>]` / ` (<description>)`). Only ACP calls the bridge
    // relays carry `kind`; a Claude hook input never does.
    if input["kind"] == "execute" {
        return input["title"].as_str().map(str::to_string);
    }
    None
}

/// The command line of an argv (`["bash", "-lc", "..."]`): none unless every
/// item is a string.
pub fn argv_command(items: &[Value]) -> Option<String> {
    let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
    if words.len() != items.len() || words.is_empty() {
        return None;
    }
    Some(argv_script(&words))
}

/// The script an argv runs: the word after `-c`/`-lc`/`-ic`/`-Command`/`/c`
/// when it is the last but one, else the words joined by spaces.
fn argv_script(words: &[&str]) -> String {
    let n = words.len();
    if n >= 2
        && ["-c", "-lc", "-ic", "-command", "/c"]
            .iter()
            .any(|flag| words[n - 2].eq_ignore_ascii_case(flag))
    {
        return words[n - 1].to_string();
    }
    words.join(" ")
}

/// The script of a command string that is really a shell-quoted argv: one
/// quoted word (codex-acp 2.x quotes the script it runs under `bash -lc`)
/// is that word; a shell's argv ending in `-c <script>` is the script.
/// `None` (judge the string as it is) for an ordinary command line and for
/// anything shell-words cannot split (fail open: the string's own parse
/// decides).
pub fn unquoted_script(command: &str) -> Option<String> {
    let words = shell_words::split(command).ok()?;
    match words.as_slice() {
        [only] if only != command.trim() => Some(only.clone()),
        [shell, .., _] if is_shell_program(shell) => {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let script = argv_script(&words);
            (script != words.join(" ")).then_some(script)
        }
        _ => None,
    }
}

/// Whether `program` (a path or a bare name) is a shell that runs `-c`.
fn is_shell_program(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    matches!(
        name,
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" | "pwsh" | "powershell" | "cmd"
    )
}

/// The first `Assets/` script this tool call would write, or `None` when the
/// gate lets it through. Shell tools are judged by the write targets of their
/// command; `Write` / `Edit` / `MultiEdit` by `file_path` (else `path`, which
/// the bridge fills from ACP locations).
pub fn gated_target(tool_name: &str, input: &Value) -> Option<String> {
    // **the gate sees every target**: a patch text writes its files,
    // whatever the tool is called
    if let Some(target) = patch_targets_in(input)
        .into_iter()
        .find(|t| is_gated_script_path(t))
    {
        return Some(target);
    }
    if is_shell_tool_name(tool_name) {
        let command = shell_command(input)?;
        return shell_write_targets(&command)
            .into_iter()
            .find(|t| is_gated_script_path(t));
    }
    if FILE_TOOL_NAMES.contains(&tool_name) {
        return PATH_KEYS
            .iter()
            .filter_map(|k| input[*k].as_str())
            .find(|p| is_gated_script_path(p))
            .map(str::to_string);
    }
    None
}

/// The input keys a file tool names its file by, however the agent spells it.
const PATH_KEYS: [&str; 4] = ["file_path", "filePath", "filepath", "path"];

/// Whether writing `path` is a direct write of a script into `Assets/`:
/// after folding `.` and `..`, case-insensitively, some directory segment is
/// `Assets` (and no `UapStaging` segment comes before it) and the file ends in
/// `.cs` or `.asmdef`. Both `/` and `\` separate segments.
pub fn is_gated_script_path(path: &str) -> bool {
    let lower = path.trim().to_ascii_lowercase();
    let mut segments: Vec<&str> = Vec::new();
    for seg in lower.split(['/', '\\']) {
        match seg {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let Some((file, dirs)) = segments.split_last() else {
        return false;
    };
    if !(file.ends_with(".cs") || file.ends_with(".asmdef")) {
        return false;
    }
    let staging = STAGING_FOLDER.trim_end_matches('/').to_ascii_lowercase();
    for dir in dirs {
        if *dir == staging {
            return false;
        }
        if *dir == "assets" {
            return true;
        }
    }
    false
}
