//! What the gate says: to the agent when it refuses a write, to the panel
//! when it could only report one, and ahead of the first prompt so the agent
//! knows the rule before it tries. All quote the same folder and tool.

use super::{COMMIT_TOOL, STAGING_FOLDER};

/// What the agent reads when the gate refuses a write (as the permission
/// denial or the hook's reason). Quotes the same folder and tool as
/// [`steering_text`].
pub fn deny_text(target: &str) -> String {
    format!(
        "Script gate: {target} is a script under Assets/; *.cs and *.asmdef files must not be written \
         into Assets/ directly. Write it into {STAGING_FOLDER} (project root, outside Assets) at the same \
         sub-path it should have under Assets/ ({STAGING_FOLDER}Editor/Foo.cs -> Assets/Editor/Foo.cs), \
         then call {COMMIT_TOOL}: it moves the staged files into Assets/ only if they compile and \
         returns the errors otherwise."
    )
}

/// What the panel is told when the agent wrote a script into `Assets/`
/// without asking, so the gate could only report it, and who let it run:
/// the panel's auto-approving mode (`panel_mode`, `panel_approves`), or the
/// agent's own approval setting while the panel's mode asks. Quotes the
/// same folder and tool as [`deny_text`].
pub fn unasked_write_text(target: &str, panel_mode: &str, panel_approves: bool) -> String {
    let who = if panel_approves {
        format!("auto-approved by the panel's {panel_mode} mode")
    } else {
        format!(
            "the agent ran it unasked under its own approval setting, though the panel's mode is {panel_mode}"
        )
    };
    format!(
        "Script gate: {target} was written into Assets/ without a permission request ({who}), so the \
         gate could not stop it. *.cs and *.asmdef files belong in {STAGING_FOLDER} at the sub-path they should \
         have under Assets/, then {COMMIT_TOOL} moves them into Assets/ only if they compile."
    )
}

/// What the panel is told when the agent asked permission for a call but
/// named the script it wrote only after the answer, so the gate could not
/// stop it. Quotes the same folder and tool as [`deny_text`].
pub fn late_write_text(target: &str) -> String {
    format!(
        "Script gate: {target} was written into Assets/ by a call whose permission request did not name it, so \
         the gate could not stop it. *.cs and *.asmdef files belong in {STAGING_FOLDER} at the sub-path they \
         should have under Assets/, then {COMMIT_TOOL} moves them into Assets/ only if they compile."
    )
}

/// The lines joined to the custom instructions so the agent knows the rule
/// before it tries: empty when the gate is off (no rule nobody enforces), at
/// most three lines when on.
pub fn steering_text(gate_enabled: bool) -> String {
    if !gate_enabled {
        return String::new();
    }
    format!(
        "- Never write *.cs / *.asmdef files into Assets/ directly: the script gate denies Write/Edit and shell \
         writes (Bash / PowerShell redirection, tee, cp/mv, Set-Content, Out-File, Copy-Item, ...). Do not \
         create them with dynamic-code tools either.\n\
         - Put them in {STAGING_FOLDER} (project root, outside Assets) at the sub-path they should have under \
         Assets/ ({STAGING_FOLDER}Editor/Foo.cs -> Assets/Editor/Foo.cs) and call {COMMIT_TOOL}: it moves them \
         into Assets/ only if they compile and returns the errors otherwise. Do not start compiles or \
         refreshes yourself for staged scripts."
    )
}
