//! The script gate (docs/bridge-behaviour.md, "Script gate") against its data files in
//! `tests/data/script_gate/`: every case runs and every mismatch is reported
//! by name, so one failing idiom does not hide the others.

use std::path::PathBuf;

use acp_bridge::script_gate::{
    COMMIT_TOOL, STAGING_FOLDER, deny_text, gated_target, hook_decision, is_gated_script_path,
    is_shell_tool_name, shell_write_targets, steering_text, unasked_write_text,
};
use serde_json::Value;

fn data(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/script_gate")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn cases(file: &Value) -> &Vec<Value> {
    file["case"]
        .as_array()
        .expect("data file has [[case]] entries")
}

fn str_field<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("case {case} lacks string field {key}"))
}

fn assert_no_failures(what: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{what}: {} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn shell_writes_into_assets_are_denied_naming_the_target() {
    let file = data("policy/shell_writes.toml");
    let mut failures = Vec::new();
    for case in cases(&file) {
        let name = str_field(case, "name");
        let got = gated_target(str_field(case, "tool"), &case["input"]);
        let want = str_field(case, "target");
        if got.as_deref() != Some(want) {
            failures.push(format!("  {name}: want deny of {want:?}, got {got:?}"));
        }
    }
    assert_no_failures("shell writes", failures);
}

fn at_least_15_powershell_idioms_and_every_bash_idiom_have_a_case() {
    let file = data("policy/shell_writes.toml");
    let count = |idiom: &str| cases(&file).iter().filter(|c| c["idiom"] == idiom).count();
    assert!(
        count("powershell") >= 15,
        "only {} PowerShell idioms",
        count("powershell")
    );
    let bash_idioms = [
        "redirect",
        "tee",
        "sed_in_place",
        "cp_destination",
        "mv_asmdef",
        "install_destination",
        "dd_of",
    ];
    for idiom in bash_idioms {
        assert!(
            cases(&file)
                .iter()
                .any(|c| c["idiom"] == "bash" && c["name"] == idiom),
            "bash idiom {idiom} has no case"
        );
    }
}

fn reads_non_scripts_staging_dynamic_code_and_unparsable_commands_are_allowed() {
    let file = data("policy/shell_allowed.toml");
    assert!(
        cases(&file).len() >= 7,
        "at least 7 allowed cases (reads, non-scripts, staging, dynamic code, unparsable)"
    );
    let mut failures = Vec::new();
    for case in cases(&file) {
        let name = str_field(case, "name");
        if let Some(target) = gated_target(str_field(case, "tool"), &case["input"]) {
            failures.push(format!("  {name}: want allow, got deny of {target:?}"));
        }
    }
    assert_no_failures("allowed commands", failures);
}

fn write_targets_come_from_named_parameters_positionals_and_operators() {
    let file = data("commands/write_targets.toml");
    let mut failures = Vec::new();
    for case in cases(&file) {
        let name = str_field(case, "name");
        let want: Vec<&str> = case["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| t.as_str().expect("target"))
            .collect();
        let got = shell_write_targets(str_field(case, "command"));
        if got != want {
            failures.push(format!("  {name}: want {want:?}, got {got:?}"));
        }
    }
    assert_no_failures("write targets", failures);
}

fn path_check_folds_dots_ignores_case_and_needs_an_assets_directory_and_script_extension() {
    let file = data("policy/paths.toml");
    let mut failures = Vec::new();
    for (key, want) in [("gated", true), ("allowed", false)] {
        for path in file[key].as_array().expect(key) {
            let path = path.as_str().expect("path");
            if is_gated_script_path(path) != want {
                failures.push(format!("  {path:?}: want gated={want}"));
            }
        }
    }
    assert_no_failures("path check", failures);
}

fn file_tools_are_judged_by_their_file_path() {
    let file = data("policy/file_tools.toml");
    let mut failures = Vec::new();
    for case in cases(&file) {
        let tool = str_field(case, "tool");
        let want = case["gated"].as_bool().expect("gated");
        let input: Value = serde_json::to_value(&case["input"]).expect("input");
        let got = gated_target(tool, &input);
        if got.is_some() != want {
            failures.push(format!("  {tool} {input}: want gated={want}, got {got:?}"));
        }
    }
    assert_no_failures("file tools", failures);
}

fn shell_tool_names_are_bash_powershell_and_shell_exactly() {
    for name in ["Bash", "PowerShell", "Shell"] {
        assert!(is_shell_tool_name(name), "{name}");
    }
    for name in ["bash", "Execute", "Tool", "mcp__unity-ops__uap_shell", ""] {
        assert!(!is_shell_tool_name(name), "{name}");
    }
}

fn hook_denies_gated_writes_with_the_deny_text_and_prints_nothing_otherwise() {
    let file = data("hook/hook.toml");
    let mut failures = Vec::new();
    for case in cases(&file) {
        let name = str_field(case, "name");
        let want_deny = case["deny"].as_bool().expect("deny");
        let got = hook_decision(str_field(case, "stdin"));
        match (&got, want_deny) {
            (None, false) => {}
            (Some(line), true) => {
                let v: Value = serde_json::from_str(line).expect("hook output is JSON");
                let out = &v["hookSpecificOutput"];
                let reason = out["permissionDecisionReason"].as_str().unwrap_or("");
                if out["hookEventName"] != "PreToolUse"
                    || out["permissionDecision"] != "deny"
                    || !reason.contains(STAGING_FOLDER)
                {
                    failures.push(format!("  {name}: malformed decision {line}"));
                }
                if line.contains('\n') {
                    failures.push(format!("  {name}: decision is not one line"));
                }
            }
            _ => failures.push(format!("  {name}: want deny={want_deny}, got {got:?}")),
        }
    }
    assert_no_failures("hook", failures);
}

fn steering_text_is_empty_when_off_and_at_most_three_lines_quoting_the_same_names_as_the_deny_texts_when_on()
 {
    assert_eq!(steering_text(false), "");
    let on = steering_text(true);
    assert!(!on.is_empty());
    assert!(
        on.lines().count() <= 3,
        "steering text has {} lines",
        on.lines().count()
    );
    let deny = deny_text("Assets/X.cs");
    let unasked = unasked_write_text("Assets/X.cs", "default", false);
    for must in [STAGING_FOLDER, COMMIT_TOOL, ".asmdef", "Assets/"] {
        assert!(on.contains(must), "steering text lacks {must:?}");
        assert!(deny.contains(must), "deny text lacks {must:?}");
        assert!(unasked.contains(must), "after-the-fact text lacks {must:?}");
    }
    assert!(
        on.contains("PowerShell"),
        "steering text must name the PowerShell route"
    );
    assert!(
        deny.contains("Assets/X.cs"),
        "deny text names the blocked path"
    );
}

fn hostile_commands_neither_panic_nor_hang_and_fail_open() {
    // deep nesting, unbalanced groups and quotes, and a long command: each is
    // judged (allowed or denied) without a stack overflow
    let deep = format!(
        "{}echo x > Assets/Foo.cs{}",
        "(".repeat(200_000),
        ")".repeat(200_000)
    );
    let unbalanced = "(".repeat(100_000);
    let long = "echo a; ".repeat(50_000) + "echo x > Assets/Foo.cs";
    let quotes = "'\"".repeat(50_000);
    for command in [deep.as_str(), unbalanced.as_str(), quotes.as_str()] {
        let _ = gated_target("Bash", &serde_json::json!({ "command": command }));
    }
    assert_eq!(
        gated_target("Bash", &serde_json::json!({ "command": long })).as_deref(),
        Some("Assets/Foo.cs"),
        "a write at the end of a long command is still found"
    );
    let shallow = format!("{}echo x > Assets/Foo.cs{}", "(".repeat(3), ")".repeat(3));
    assert!(gated_target("Bash", &serde_json::json!({ "command": shallow })).is_some());
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(script_gate: shell_writes_into_assets_are_denied_naming_the_target, at_least_15_powershell_idioms_and_every_bash_idiom_have_a_case, reads_non_scripts_staging_dynamic_code_and_unparsable_commands_are_allowed, write_targets_come_from_named_parameters_positionals_and_operators, path_check_folds_dots_ignores_case_and_needs_an_assets_directory_and_script_extension, file_tools_are_judged_by_their_file_path, shell_tool_names_are_bash_powershell_and_shell_exactly, hook_denies_gated_writes_with_the_deny_text_and_prints_nothing_otherwise, steering_text_is_empty_when_off_and_at_most_three_lines_quoting_the_same_names_as_the_deny_texts_when_on, hostile_commands_neither_panic_nor_hang_and_fail_open)
}
