//! The Agent SDKs' stream-json surface matrix (`contracts/sdk-surface/`)
//! against what it describes: the vendored surfaces (every entry has a row,
//! every row an entry), the generated page (`docs/sdk-surface.md`), the
//! bridge (each request the SDK sends is answered as its row says) and CI
//! (it installs the pinned SDK versions).

use std::path::Path;
use std::time::Duration;

use acp_bridge::{Bridge, CounterIds, LaunchSpec, McpEndpoint};
use acp_harness::corpus::claude_side::{CATALOGUE_PATH, Catalogue};
use acp_harness::judging::sdk_surface::matrix::{self, Handling, Matrix, Side};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
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

#[test]
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
#[test]
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
#[test]
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
