//! The surface matrix (`contracts/sdk-surface/matrix.toml`): per control
//! request subtype and message type of the vendored SDK surfaces, what the
//! bridge does with it: `mapped` to an ACP counterpart (named), handled
//! `local`ly, or `unsupported` (a request answered `unsupported_request`
//! naming its subtype; a request or message the bridge never sends).
//! [`render`] makes `docs/sdk-surface.md` from it; [`Matrix::check`] finds
//! the surface entries no row covers and the rows no surface has.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

use super::Surface;

/// Where the matrix and the vendored surfaces live under the root.
pub const SURFACE_DIR: &str = "contracts/sdk-surface";
pub const MATRIX_PATH: &str = "contracts/sdk-surface/matrix.toml";
/// The generated page.
pub const DOC_PATH: &str = "docs/sdk-surface.md";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    #[serde(rename = "control")]
    pub controls: Vec<ControlRow>,
    #[serde(rename = "message")]
    pub messages: Vec<MessageRow>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlRow {
    pub subtype: String,
    /// Who sends the request: the SDK (to Claude Code, so to the bridge) or
    /// Claude Code (to the SDK, so the bridge would).
    pub sent_by: Side,
    pub bridge: Handling,
    /// The ACP counterpart, for `mapped` rows.
    #[serde(default)]
    pub acp: Option<String>,
    pub note: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageRow {
    /// `type`, or `system:<subtype>`.
    #[serde(rename = "type")]
    pub kind: String,
    pub bridge: Handling,
    #[serde(default)]
    pub acp: Option<String>,
    pub note: String,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    Sdk,
    Cli,
}

impl Side {
    fn word(self) -> &'static str {
        match self {
            Side::Sdk => "the SDK",
            Side::Cli => "Claude Code",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Handling {
    Mapped,
    Local,
    Unsupported,
}

impl Handling {
    fn word(self) -> &'static str {
        match self {
            Handling::Mapped => "mapped",
            Handling::Local => "local",
            Handling::Unsupported => "unsupported",
        }
    }
}

/// Counts of a table's rows by handling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: usize,
    pub mapped: usize,
    pub local: usize,
    pub unsupported: usize,
}

impl Counts {
    fn of(rows: impl Iterator<Item = Handling>) -> Counts {
        let mut c = Counts::default();
        for h in rows {
            c.total += 1;
            match h {
                Handling::Mapped => c.mapped += 1,
                Handling::Local => c.local += 1,
                Handling::Unsupported => c.unsupported += 1,
            }
        }
        c
    }

    fn sentence(self, what: &str) -> String {
        format!(
            "{} {what}: {} mapped to ACP, {} handled by the bridge, {} unsupported.",
            self.total, self.mapped, self.local, self.unsupported
        )
    }
}

impl Matrix {
    pub fn load(root: &Path) -> anyhow::Result<Matrix> {
        let path = root.join(MATRIX_PATH);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        Matrix::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses the matrix; a duplicate row, or a `mapped` row that names no
    /// ACP counterpart, is an error naming it.
    pub fn parse(text: &str) -> anyhow::Result<Matrix> {
        let m: Matrix = toml::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut seen = BTreeSet::new();
        for r in &m.controls {
            anyhow::ensure!(
                seen.insert(("control", r.subtype.as_str())),
                "control {:?} has two rows",
                r.subtype
            );
            anyhow::ensure!(
                r.bridge != Handling::Mapped || r.acp.is_some(),
                "control {:?} is mapped but names no acp counterpart",
                r.subtype
            );
        }
        for r in &m.messages {
            anyhow::ensure!(
                seen.insert(("message", r.kind.as_str())),
                "message {:?} has two rows",
                r.kind
            );
            anyhow::ensure!(
                r.bridge != Handling::Mapped || r.acp.is_some(),
                "message {:?} is mapped but names no acp counterpart",
                r.kind
            );
        }
        Ok(m)
    }

    pub fn control(&self, subtype: &str) -> Option<&ControlRow> {
        self.controls.iter().find(|r| r.subtype == subtype)
    }

    pub fn message(&self, kind: &str) -> Option<&MessageRow> {
        self.messages.iter().find(|r| r.kind == kind)
    }

    /// Control subtypes of `surface` that no row covers.
    pub fn uncovered_subtypes(&self, surface: &Surface) -> Vec<String> {
        surface
            .all_control_subtypes()
            .into_iter()
            .filter(|s| self.control(s).is_none())
            .collect()
    }

    /// Message types of `surface` (declared or in its runtime) that no row covers.
    pub fn uncovered_messages(&self, surface: &Surface) -> Vec<String> {
        surface
            .all_message_types()
            .into_iter()
            .filter(|s| self.message(s).is_none())
            .collect()
    }

    /// Every problem between the matrix and the vendored surfaces: an
    /// entry no row covers, a row no surface has.
    pub fn check(&self, surfaces: &[Surface]) -> Vec<String> {
        let mut out = Vec::new();
        for s in surfaces {
            for sub in self.uncovered_subtypes(s) {
                out.push(format!(
                    "{} {}: control subtype {sub:?} has no matrix row",
                    s.sdk, s.version
                ));
            }
            for m in self.uncovered_messages(s) {
                out.push(format!(
                    "{} {}: message type {m:?} has no matrix row",
                    s.sdk, s.version
                ));
            }
        }
        // each surface's entries, declared and runtime, gathered once
        let controls: Vec<_> = surfaces.iter().map(Surface::all_control_subtypes).collect();
        let messages: Vec<_> = surfaces.iter().map(Surface::all_message_types).collect();
        for r in &self.controls {
            if !controls.iter().any(|c| c.contains(&r.subtype)) {
                out.push(format!(
                    "control row {:?} is in no vendored surface",
                    r.subtype
                ));
            }
            // the runtime says who sends it: the row must agree
            for s in surfaces {
                let (sends, answers) = (
                    s.runtime_sends.contains(&r.subtype),
                    s.runtime_handles.contains(&r.subtype),
                );
                let wrong = match r.sent_by {
                    Side::Sdk => answers && !sends,
                    Side::Cli => sends && !answers,
                };
                if wrong {
                    out.push(format!(
                        "control row {:?} says it is sent by {}, but {} {}'s runtime {} it",
                        r.subtype,
                        r.sent_by.word(),
                        s.sdk,
                        s.version,
                        if sends { "sends" } else { "answers" }
                    ));
                }
            }
        }
        for r in &self.messages {
            if !messages.iter().any(|m| m.contains(&r.kind)) {
                out.push(format!(
                    "message row {:?} is in no vendored surface",
                    r.kind
                ));
            }
        }
        out
    }

    pub fn control_counts(&self) -> Counts {
        Counts::of(self.controls.iter().map(|r| r.bridge))
    }

    pub fn message_counts(&self) -> Counts {
        Counts::of(self.messages.iter().map(|r| r.bridge))
    }
}

/// The vendored surfaces named by the catalogue, in its order.
pub fn vendored_surfaces(root: &Path) -> anyhow::Result<Vec<Surface>> {
    let cat = crate::corpus::claude_side::Catalogue::load(root)?;
    cat.sdks()
        .map(|(_, src)| Surface::load(&root.join(&src.vendored)))
        .collect()
}

/// `docs/sdk-surface.md`.
pub fn render(matrix: &Matrix, surfaces: &[Surface]) -> String {
    let mut out = String::from(
        "# The Agent SDKs' stream-json surface\n\n\
         <!-- Generated by `acp-harness contract surface` from contracts/sdk-surface/; do not edit. -->\n\n\
         Every control request subtype and message type the Agent SDKs send or read, \
         taken from their published type definitions and from their runtime code \
         (the TypeScript SDK's bundle: what it really sends and answers; marked \
         `(runtime)` where the declarations do not have it), vendored as data in \
         `contracts/sdk-surface/` (see its README), and what `acp-bridge` does with each: \
         **mapped** to an ACP counterpart, handled **local**ly by the bridge, or \
         **unsupported**: a request the SDK sends is answered with a control error \
         `unsupported_request` whose text names the subtype; a request or message \
         Claude Code sends the SDK is never sent by the bridge. The rows are \
         `contracts/sdk-surface/matrix.toml`; `acp-harness update --claude-side` \
         reports a subtype a newer SDK adds that no row covers as `changed`.\n\n",
    );
    out.push_str("| SDK | package | version | files read (sha256) |\n|---|---|---|---|\n");
    for s in surfaces {
        let files: Vec<String> = s
            .files
            .iter()
            .map(|f| format!("`{}` ({})", f.path, &f.sha256[..f.sha256.len().min(12)]))
            .collect();
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} |",
            s.sdk,
            s.package,
            s.version,
            files.join("<br>")
        );
    }
    // an entry only the runtime has is marked so
    let mark = |s: &Surface, declared: bool, runtime: bool| match (declared, runtime) {
        (true, _) => short(&s.sdk).to_string(),
        (false, true) => format!("{} (runtime)", short(&s.sdk)),
        (false, false) => String::new(),
    };
    let _ = write!(
        out,
        "\n## Control requests\n\n{}\n\n\
         | subtype | sent by | in | the bridge | ACP counterpart | note |\n|---|---|---|---|---|---|\n",
        matrix.control_counts().sentence("subtypes")
    );
    let mut controls = matrix.controls.clone();
    controls.sort_by(|a, b| (a.bridge, &a.subtype).cmp(&(b.bridge, &b.subtype)));
    for r in &controls {
        let ins: Vec<String> = surfaces
            .iter()
            .map(|s| {
                let runtime =
                    s.runtime_sends.contains(&r.subtype) || s.runtime_handles.contains(&r.subtype);
                mark(s, s.control_subtypes.contains(&r.subtype), runtime)
            })
            .filter(|m| !m.is_empty())
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            r.subtype,
            match r.sent_by {
                Side::Sdk => "SDK",
                Side::Cli => "Claude Code",
            },
            ins.join(", "),
            r.bridge.word(),
            r.acp.as_deref().map_or("-".into(), cell),
            cell(&r.note)
        );
    }
    let _ = write!(
        out,
        "\n## Messages the SDKs read\n\n{}\n\n\
         | type | in | the bridge | ACP counterpart | note |\n|---|---|---|---|---|\n",
        matrix.message_counts().sentence("message types")
    );
    let mut messages = matrix.messages.clone();
    messages.sort_by(|a, b| (a.bridge, &a.kind).cmp(&(b.bridge, &b.kind)));
    for r in &messages {
        let ins: Vec<String> = surfaces
            .iter()
            .map(|s| {
                let runtime = s.runtime_message_types.contains(&r.kind);
                mark(s, s.message_types.contains(&r.kind), runtime)
            })
            .filter(|m| !m.is_empty())
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            r.kind,
            ins.join(", "),
            r.bridge.word(),
            r.acp.as_deref().map_or("-".into(), cell),
            cell(&r.note)
        );
    }
    out
}

/// The SDK's short name in the table: `typescript-agent-sdk` -> `typescript`.
fn short(sdk: &str) -> &str {
    sdk.split('-').next().unwrap_or(sdk)
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(subtypes: &[&str], messages: &[&str]) -> Surface {
        Surface {
            sdk: "typescript-agent-sdk".into(),
            package: "x".into(),
            version: "1.0.0".into(),
            files: Vec::new(),
            refresh: String::new(),
            control_subtypes: subtypes.iter().map(|s| s.to_string()).collect(),
            message_types: messages.iter().map(|s| s.to_string()).collect(),
            ..Surface::default()
        }
    }

    const ROWS: &str = r#"
[[control]]
subtype = "interrupt"
sent_by = "sdk"
bridge = "mapped"
acp = "session/cancel"
note = ""

[[control]]
subtype = "gone"
sent_by = "sdk"
bridge = "unsupported"
note = ""

[[message]]
type = "result"
bridge = "mapped"
acp = "session/prompt response"
note = ""
"#;

    #[test]
    fn an_entry_without_a_row_and_a_row_without_an_entry_are_both_named() {
        let m = Matrix::parse(ROWS).unwrap();
        let problems = m.check(&[surface(
            &["interrupt", "rename_session"],
            &["result", "system:init"],
        )]);
        assert_eq!(
            problems,
            [
                "typescript-agent-sdk 1.0.0: control subtype \"rename_session\" has no matrix row",
                "typescript-agent-sdk 1.0.0: message type \"system:init\" has no matrix row",
                "control row \"gone\" is in no vendored surface",
            ]
        );
    }

    /// What only the runtime sends or answers needs a row as well, is
    /// marked `(runtime)` on the page, and its row's sender must be the one
    /// the runtime shows.
    #[test]
    fn a_runtime_only_entry_needs_a_row_whose_sender_the_runtime_agrees_with() {
        let m = Matrix::parse(ROWS).unwrap();
        let mut s = surface(&["interrupt"], &["result"]);
        s.runtime_sends = ["gone".to_string(), "end_session".to_string()].into();
        s.runtime_handles = ["interrupt".to_string()].into();
        assert_eq!(
            m.check(&[s.clone()]),
            [
                "typescript-agent-sdk 1.0.0: control subtype \"end_session\" has no matrix row",
                "control row \"interrupt\" says it is sent by the SDK, but typescript-agent-sdk 1.0.0's runtime answers it",
            ]
        );
        let page = render(&m, &[s]);
        assert!(
            page.contains("| `gone` | SDK | typescript (runtime) | unsupported |"),
            "{page}"
        );
    }

    #[test]
    fn a_mapped_row_names_its_acp_counterpart_and_rows_are_unique() {
        let e = Matrix::parse(&ROWS.replace("acp = \"session/cancel\"\n", ""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"interrupt\" is mapped but names no acp"),
            "{e}"
        );
        let twice = format!(
            "{ROWS}\n[[control]]\nsubtype = \"gone\"\nsent_by = \"cli\"\nbridge = \"local\"\nnote = \"\"\n"
        );
        let e = Matrix::parse(&twice).unwrap_err().to_string();
        assert!(e.contains("\"gone\" has two rows"), "{e}");
    }

    #[test]
    fn the_page_counts_rows_by_handling() {
        let m = Matrix::parse(ROWS).unwrap();
        let page = render(&m, &[surface(&["interrupt", "gone"], &["result"])]);
        assert!(
            page.contains("2 subtypes: 1 mapped to ACP, 0 handled by the bridge, 1 unsupported."),
            "{page}"
        );
        assert!(
            page.contains("| `interrupt` | SDK | typescript | mapped | session/cancel |"),
            "{page}"
        );
    }
}
