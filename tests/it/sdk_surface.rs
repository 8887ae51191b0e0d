//! The Agent SDKs' stream-json surface matrix (`contracts/sdk-surface/`)
//! against what it describes: the vendored surfaces (every entry has a row,
//! every row an entry), the generated page (`docs/sdk-surface.md`), the
//! bridge (each request the SDK sends is answered as its row says; a
//! message its row says is never sent is never emitted) and CI (it installs
//! the pinned SDK versions).

use std::path::Path;
use std::time::Duration;

use acp_bridge::{Bridge, CounterIds, LaunchSpec, McpEndpoint};
use acp_harness::corpus::claude_side::{CATALOGUE_PATH, Catalogue};
use acp_harness::judging::sdk_surface::matrix::{self, Handling, Matrix, Side};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn every_vendored_subtype_and_message_type_has_a_row_and_every_row_an_entry() {
    let m = Matrix::load(root()).unwrap();
    let surfaces = matrix::vendored_surfaces(root()).unwrap();
    assert!(!surfaces.is_empty());
    let problems = m.check(&surfaces);
    assert!(
        problems.is_empty(),
        "the matrix and the vendored surfaces disagree (edit contracts/sdk-surface/matrix.toml):\n{}",
        problems.join("\n")
    );
}

fn the_surface_page_is_what_contract_surface_generates() {
    let m = Matrix::load(root()).unwrap();
    let surfaces = matrix::vendored_surfaces(root()).unwrap();
    let want = matrix::render(&m, &surfaces);
    let have = std::fs::read_to_string(root().join(matrix::DOC_PATH)).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: run `acp-harness contract surface`",
        matrix::DOC_PATH
    );
}

/// Each control request an SDK sends, alone to a fresh bridge: an
/// `unsupported` row is answered `unsupported_request` naming the subtype,
/// any other row is not.
fn the_bridge_answers_each_sdk_request_as_its_row_says() {
    let m = Matrix::load(root()).unwrap();
    let mut wrong = Vec::new();
    for row in m.controls.iter().filter(|r| r.sent_by == Side::Sdk) {
        let spec = LaunchSpec {
            cwd: "/project".into(),
            mcp: Some(McpEndpoint {
                name: "unity-ops".into(),
                url: "http://127.0.0.1:7777/mcp".into(),
                authorization: None,
            }),
            ..LaunchSpec::default()
        };
        let mut b = Bridge::new(spec, Box::new(CounterIds::default()));
        let line = serde_json::json!({
            "type": "control_request",
            "request_id": "q1",
            "request": {"subtype": row.subtype},
        })
        .to_string();
        let out = b.on_panel_line(&line, Duration::ZERO);
        let unsupported = out.to_panel.iter().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["response"]["error_code"] == "unsupported_request"
                && v["response"]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains(&row.subtype))
        });
        if unsupported != (row.bridge == Handling::Unsupported) {
            wrong.push(format!(
                "{}: the row says {:?}, the bridge answered {:?}",
                row.subtype, row.bridge, out.to_panel
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// CI installs exactly the pinned SDK versions the surfaces are of.
fn ci_installs_the_pinned_sdk_versions_and_the_surfaces_are_theirs() {
    let cat = Catalogue::load(root()).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/sdk-e2e")).unwrap();
    for (p, source) in cat.sdks() {
        let spec = match p.package.strip_prefix("pypi:") {
            Some(name) => format!("{name}=={}", p.pinned),
            None => format!("{}@{}", p.package, p.pinned),
        };
        assert!(
            ci.contains(&spec),
            ".ci/sdk-e2e does not install {spec}, the version {CATALOGUE_PATH} pins"
        );
        let surface =
            acp_harness::judging::sdk_surface::Surface::load(&root().join(&source.vendored))
                .unwrap();
        assert_eq!(
            (surface.sdk.as_str(), surface.version.as_str()),
            (p.id.as_str(), p.pinned.to_string().as_str()),
            "{} is not the pinned version's surface: re-extract it with `acp-harness contract surface --extract {}`",
            source.vendored.display(),
            p.id
        );
    }
}

/// The kind of a panel line as the matrix names it: its `type`, and for a
/// `system` line `system:<subtype>`.
fn message_kind(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let kind = v["type"].as_str()?;
    Some(match (kind, v["subtype"].as_str()) {
        ("system", Some(sub)) => format!("system:{sub}"),
        _ => kind.to_string(),
    })
}

/// Every line the bridge gave the panel over the corpus (each replay's
/// golden) and in the core cases, by kind, with one place it was seen.
fn emitted_kinds() -> std::collections::BTreeMap<String, String> {
    let mut seen = std::collections::BTreeMap::new();
    let mut read = |path: &Path, prefixes: &[&str]| {
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = prefixes.iter().find_map(|p| line.strip_prefix(p)) else {
                continue;
            };
            if let Some(kind) = message_kind(rest) {
                let shown = path.strip_prefix(root()).unwrap_or(path);
                seen.entry(kind)
                    .or_insert_with(|| format!("{}:{}", shown.display(), n + 1));
            }
        }
    };
    let files = |dir: &Path, ext: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        v.sort();
        v
    };
    for golden in files(&root().join("tests/snapshots"), "snap") {
        read(&golden, &["bridge>panel "]);
    }
    for cases in files(&root().join("bridge/tests/data/core"), "cases") {
        read(&cases, &["to-panel: ", "to-panel=: "]);
    }
    seen
}

/// A message row that says the bridge never sends its message fails when
/// the bridge does: over every replay's golden and every core case.
fn no_message_the_matrix_says_is_never_sent_is_emitted_by_the_bridge() {
    let m = Matrix::load(root()).unwrap();
    let seen = emitted_kinds();
    assert!(
        seen.contains_key("system:init") && seen.contains_key("result"),
        "the goldens were not read: {seen:?}"
    );
    let wrong: Vec<String> = seen
        .iter()
        .filter(|(kind, _)| {
            m.message(kind)
                .is_some_and(|r| r.bridge == Handling::Unsupported)
        })
        .map(|(kind, at)| {
            format!("{kind}: its row says it is never sent, the bridge sent it ({at})")
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(sdk_surface: every_vendored_subtype_and_message_type_has_a_row_and_every_row_an_entry, the_surface_page_is_what_contract_surface_generates, the_bridge_answers_each_sdk_request_as_its_row_says, ci_installs_the_pinned_sdk_versions_and_the_surfaces_are_theirs, no_message_the_matrix_says_is_never_sent_is_emitted_by_the_bridge)
}
