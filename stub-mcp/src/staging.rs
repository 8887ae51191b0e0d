//! The fixed "compile" rule of `uap_scripts_commit`.
//!
//! The real tool compiles what the agent staged under `UapStaging/` and moves
//! it into `Assets/` only if it compiles (docs/bridge-behaviour.md, "Script gate"). The stub never touches
//! the disk: the outcome follows from the paths alone, so recordings repeat.
//!
//! Rule, per path (backslashes read as `/`):
//! - outside `UapStaging/`, containing a `..` segment, or not ending in `.cs`
//!   / `.asmdef` (any case): rejected (`error UAP0001`);
//! - file name containing `Broken`: two compile errors (`CS1002`, `CS0103`);
//! - otherwise it compiles and maps to `Assets/<same sub-path>`.
//!
//! Any rejection or compile error fails the whole commit and moves nothing.

/// What a commit produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitOutcome {
    pub ok: bool,
    /// The tool's text: a header line, then one line per file or error.
    pub text: String,
}

/// Apply the rule to `paths`.
pub fn commit(paths: &[String]) -> CommitOutcome {
    if paths.is_empty() {
        return CommitOutcome {
            ok: true,
            text: "Nothing staged under UapStaging/; nothing to commit.".to_string(),
        };
    }
    let mut errors = Vec::new();
    let mut moves = Vec::new();
    for raw in paths {
        let path = raw.replace('\\', "/");
        let path = path.trim_start_matches("./").to_string();
        let lower = path.to_ascii_lowercase();
        let file_name = path.rsplit('/').next().unwrap_or("");
        if !lower.starts_with("uapstaging/") || path.split('/').any(|seg| seg == "..") {
            errors.push(format!(
                "{path}: error UAP0001: not under UapStaging/; stage scripts there first"
            ));
        } else if !(lower.ends_with(".cs") || lower.ends_with(".asmdef")) {
            errors.push(format!(
                "{path}: error UAP0001: only .cs and .asmdef files are committed"
            ));
        } else if file_name.contains("Broken") {
            errors.push(format!("{path}(3,17): error CS1002: ; expected"));
            errors.push(format!("{path}(5,9): error CS0103: The name 'Undefined' does not exist in the current context"));
        } else {
            moves.push(format!("{path} -> Assets/{}", &path["UapStaging/".len()..]));
        }
    }
    if errors.is_empty() {
        let headline = format!(
            "Compiled {} staged file(s) and moved them into Assets/:",
            moves.len()
        );
        CommitOutcome::new(true, headline, &moves)
    } else {
        let headline = format!(
            "Compilation failed with {} error(s); nothing was moved into Assets/.",
            errors.len()
        );
        CommitOutcome::new(false, headline, &errors)
    }
}

impl CommitOutcome {
    /// The outcome whose text is `headline` followed by one line per entry
    /// (a move on success, a compiler error on failure).
    fn new(ok: bool, headline: String, lines: &[String]) -> Self {
        let mut text = headline;
        for line in lines {
            text.push('\n');
            text.push_str(line);
        }
        CommitOutcome { ok, text }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(paths: &[&str]) -> CommitOutcome {
        commit(&paths.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_rule_table_holds() {
        // (paths, ok, a line the text must contain)
        let cases: &[(&[&str], bool, &str)] = &[
            (&[], true, "Nothing staged"),
            (
                &["UapStaging/Editor/Foo.cs"],
                true,
                "UapStaging/Editor/Foo.cs -> Assets/Editor/Foo.cs",
            ),
            (
                &["UapStaging\\Editor\\Tool.asmdef"],
                true,
                "UapStaging/Editor/Tool.asmdef -> Assets/Editor/Tool.asmdef",
            ),
            (
                &["UapStaging/Editor/BrokenTool.cs"],
                false,
                "UapStaging/Editor/BrokenTool.cs(3,17): error CS1002: ; expected",
            ),
            (
                &["Assets/Editor/Foo.cs"],
                false,
                "Assets/Editor/Foo.cs: error UAP0001: not under UapStaging/",
            ),
            (
                &["UapStaging/../Assets/Foo.cs"],
                false,
                "error UAP0001: not under UapStaging/",
            ),
            (&["UapStaging/readme.txt"], false, "only .cs and .asmdef"),
            (
                &["UapStaging/A.cs", "UapStaging/BrokenB.cs"],
                false,
                "Compilation failed with 2 error(s)",
            ),
        ];
        for (paths, ok, needle) in cases {
            let out = run(paths);
            assert_eq!(out.ok, *ok, "{paths:?}: {}", out.text);
            assert!(out.text.contains(needle), "{paths:?}: {}", out.text);
        }
    }

    #[test]
    fn a_failed_commit_moves_nothing() {
        let out = run(&["UapStaging/A.cs", "UapStaging/BrokenB.cs"]);
        assert!(!out.text.contains("->"));
    }
}
