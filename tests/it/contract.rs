//! The stream-json contract against real bridge output: every committed ACP
//! recording replayed through the bridge meets the contract derived from
//! Claude Code's reference recordings, and removing a key Claude always sends
//! from one bridge line makes the check fail naming that line and key.

use sha2::Digest;
use std::path::Path;

use acp_harness::corpus::recording::{self, blobs};
use acp_harness::corpus::scenario;
use acp_harness::judging::contract::{self, Contract};
use acp_harness::judging::judge::{self, Corpus};
use acp_harness::judging::replay::replayer::panel_value;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn committed_contract() -> Contract {
    contract::for_root(root())
        .expect("contracts/ must load")
        .expect("contracts/claude-code.json is committed")
}

/// The bridge's panel lines for one committed recording.
fn bridge_lines(rel: &str) -> Vec<String> {
    let rec = recording::read(&root().join("recordings").join(rel)).expect("recording");
    let sc = scenario::find(root().join("scenarios"), &rec.header.scenario).expect("scenario");
    judge::replay_with(&rec, &sc).panel_lines
}

fn the_committed_contract_is_what_derive_makes_from_the_reference_recordings() {
    let recs = contract::reference_recordings(&root().join("recordings")).unwrap();
    let derived = Contract::derive(recs.iter().map(|(l, r)| (l.clone(), r)));
    let committed = std::fs::read_to_string(root().join(contract::CONTRACT_PATH)).unwrap();
    assert!(
        derived.to_json() == committed,
        "contracts/claude-code.json is stale: run `acp-harness contract derive` after re-recording Claude Code"
    );
}

fn every_committed_acp_replay_meets_the_contract() {
    // judge() loads the same contract; it must be there for this to mean anything.
    assert!(!committed_contract().kinds.is_empty());
    let corpus = Corpus::at(root());
    let mut broken = String::new();
    for path in corpus.recordings().unwrap() {
        let case = corpus.judge(&path);
        if let Some(report) = case.contract.filter(|r| r.fails()) {
            broken.push_str(&format!("{}:\n{}", path.display(), report.render()));
        }
    }
    assert!(broken.is_empty(), "{broken}");
}

/// (recording, kind of the line to damage, key path to remove, what the report must name)
const REMOVALS: &[(&str, &str, &str, &str)] = &[
    (
        "codex-acp/2.6.0/unity-call-allowed.jsonl",
        "result",
        "/session_id",
        "missing session_id",
    ),
    (
        "codex-acp/2.6.0/unity-call-allowed.jsonl",
        "result",
        "/num_turns",
        "missing num_turns",
    ),
    (
        "codex-acp/2.6.0/unity-call-allowed.jsonl",
        "system",
        "/tools",
        "missing tools",
    ),
    (
        "codex-acp/2.6.0/unity-call-allowed.jsonl",
        "control_request",
        "/request/tool_name",
        "missing request.tool_name",
    ),
    (
        "codex-acp/2.6.0/unity-call-allowed.jsonl",
        "assistant",
        "/message/role",
        "missing message.role",
    ),
    (
        "codex-acp/2.6.0/unity-call-allowed.jsonl",
        "stream_event",
        "/event/type",
        "missing event.type",
    ),
    (
        "codex-acp/2.6.0/screenshot.jsonl",
        "user",
        "/message/content/0/tool_use_id",
        "missing message.content[0].tool_use_id",
    ),
];

/// [`Contract::check`] over lines as text.
fn check(contract: &Contract, lines: &[String]) -> contract::Conformance {
    let parsed: Vec<_> = lines.iter().map(|l| panel_value(l)).collect();
    contract.check(&parsed)
}

fn remove(v: &mut Value, pointer: &str) -> bool {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(key).is_some(),
        _ => false,
    }
}

fn removing_a_required_key_from_a_bridge_line_fails_the_check_naming_line_and_key() {
    let contract = committed_contract();
    for (rel, ty, pointer, expect) in REMOVALS {
        let mut lines = bridge_lines(rel);
        let clean = check(&contract, &lines);
        assert!(
            !clean.fails(),
            "{rel} must meet the contract before damage:\n{}",
            clean.render()
        );
        let index = lines
            .iter()
            .position(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["type"] == *ty && v.pointer(pointer).is_some()
            })
            .unwrap_or_else(|| panic!("{rel}: no {ty} line with {pointer}"));
        let mut v: Value = serde_json::from_str(&lines[index]).unwrap();
        assert!(remove(&mut v, pointer));
        lines[index] = v.to_string();
        let report = check(&contract, &lines);
        assert!(
            report.fails(),
            "{rel}: removing {pointer} from line {} must fail",
            index + 1
        );
        let rendered = report.render();
        assert!(
            rendered.contains(&format!("bridge line {} ", index + 1)) && rendered.contains(expect),
            "{rel}: the report must name line {} and `{expect}`, got:\n{rendered}",
            index + 1
        );
    }
}

fn a_replay_with_a_broken_line_is_judged_contract_broken() {
    // The hook in the replayer: Case::statuses says so and the report names the line.
    let contract = committed_contract();
    let mut lines = bridge_lines("codex-acp/2.6.0/text-only.jsonl");
    let i = lines
        .iter()
        .rposition(|l| l.contains("\"type\":\"result\""))
        .unwrap();
    let mut v: Value = serde_json::from_str(&lines[i]).unwrap();
    v.as_object_mut().unwrap().remove("session_id");
    lines[i] = v.to_string();
    let report = check(&contract, &lines);
    let corpus = Corpus::at(root());
    let mut case = corpus.judge(&root().join("recordings/codex-acp/2.6.0/text-only.jsonl"));
    assert!(case.passed(), "{}", case.report());
    case.contract = Some(report);
    assert_eq!(case.statuses(), [judge::Status::ContractBroken]);
    assert!(
        case.report().contains("missing session_id"),
        "{}",
        case.report()
    );
}

fn judge_only_tables_are_not_part_of_the_scenario_sha256() {
    // Editing an expectation or a justification changes no recorded frame,
    // so it must not make the scenario's recordings stale.
    let path = root().join("scenarios/text-only.toml");
    let file = std::fs::read_to_string(&path).unwrap();
    // The scenario up to its first judge-only table: prompt and steps.
    let steps = file.split("[[expect]]").next().unwrap().to_string();
    let plain = scenario::parse(&path, steps.as_bytes()).unwrap();
    let tables = [
        "[claude_comparison]\njustified = [\n  { key = \"results\", why = \"a test\" },\n]\n",
        "[[expect]]\nkind = \"result\"\ncount = 1\nwhy = \"a test\"\n",
        "[[expect]]\nkind = \"result\"\ncount = 1\nwhy = \"another reason\"\n",
    ];
    for table in tables {
        let with = scenario::parse(&path, format!("{steps}{table}").as_bytes()).unwrap();
        assert_eq!(plain.sha256, with.sha256, "{table}");
        assert!(!with.changed_since(&plain.sha256), "{table}");
    }
    let full = scenario::parse(&path, file.as_bytes()).unwrap();
    assert_eq!(plain.sha256, full.sha256);
    let changed = scenario::parse(&path, format!("{steps}\n# a comment\n").as_bytes()).unwrap();
    assert_ne!(
        plain.sha256, changed.sha256,
        "the rest of the file is still hashed"
    );
    assert!(full.changed_since(&changed.sha256));
}

fn a_recording_hashed_with_its_expectations_is_still_made_from_the_scenario() {
    // Recordings made while the hash still covered `[[expect]]` hold the
    // hash of the file without its `[claude_comparison]` table alone.
    let path = root().join("scenarios/text-only.toml");
    let file = std::fs::read_to_string(&path).unwrap();
    let without_comparison = file.split("[claude_comparison]").next().unwrap();
    let legacy: String = sha2::Sha256::digest(without_comparison.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let scenario = scenario::parse(&path, file.as_bytes()).unwrap();
    assert_ne!(legacy, scenario.sha256);
    assert!(!scenario.changed_since(&legacy));
    assert!(!scenario.changed_since(""), "no hash: never stale");
    assert!(scenario.changed_since(&"0".repeat(64)));
}

fn a_justification_without_a_reason_is_an_error_naming_the_file_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    let cases = [
        (
            "[claude_comparison]\njustified = [{ key = \"results\" }]\n",
            "justified[0].why is missing",
        ),
        (
            "[claude_comparison]\njustified = [{ why = \"x\" }]\n",
            "justified[0].key is missing",
        ),
        (
            "[claude_comparison]\nexcused = []\n",
            "unknown key `excused`",
        ),
        (
            "[claude_comparison]\njustified = [{ key = \"tool-use-names\", why = \"x\" }]\n",
            "justified[0]: `tool-use-names` is justified by value: add `values",
        ),
        (
            "[claude_comparison]\njustified = [{ key = \"results\", why = \"x\", values = \"(\" }]\n",
            "justified[0].values: regex parse error",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(&path, text).unwrap();
        let err = contract::compare::justified(&path).unwrap_err().to_string();
        assert!(
            err.contains("s.toml") && err.contains(want),
            "{err:?} should name the file and {want:?}"
        );
    }
    std::fs::write(
        &path,
        "[claude_comparison]\njustified = [{ key = \"kind-missing:*\", why = \"inherent\" }]\n",
    )
    .unwrap();
    let keys: Vec<String> = contract::compare::justified(&path)
        .unwrap()
        .into_iter()
        .map(|j| j.key)
        .collect();
    assert_eq!(keys, ["kind-missing:*"]);
}

/// The unjustified differences docs/contract.md lists for the bridge to decide
/// (scenario, key). A new one fails the test below; a fixed one may go.
/// None left: the interrupted and API-error `result`s now match Claude Code.
const KNOWN_UNJUSTIFIED: &[(&str, &str)] = &[];

fn the_bridge_differs_from_claude_code_only_where_justified_or_listed_in_the_contract_page() {
    let rows = contract::compare::newest_versions(
        acp_harness::cli::contract::rows(&Corpus::at(root())).unwrap(),
    );
    assert!(
        rows.iter().any(|r| r.scenario == "unity-call-allowed"),
        "no comparison rows"
    );
    let mut new = String::new();
    for r in &rows {
        if let Some(e) = &r.error {
            new.push_str(&format!("{} / {}: {e}\n", r.scenario, r.agent));
        }
        for d in &r.unjustified {
            if !KNOWN_UNJUSTIFIED.contains(&(r.scenario.as_str(), d.key.as_str())) {
                new.push_str(&format!(
                    "{} / {}: `{}`: {}\n",
                    r.scenario, r.agent, d.key, d.detail
                ));
            }
        }
    }
    assert!(
        new.is_empty(),
        "differences from Claude Code that are neither justified in the scenario's [claude_comparison] nor listed:\n{new}"
    );
}

fn the_round_trip_through_the_claude_code_adapter_differs_from_claude_only_where_justified() {
    let outcome = acp_harness::cli::contract::roundtrip_outcome(&Corpus::at(root())).unwrap();
    assert!(
        outcome.rows.len() >= 14 * 3,
        "expected 14 scenarios of at least 3 adapter versions, got {} recordings",
        outcome.rows.len()
    );
    assert!(
        outcome.holds(),
        "{}",
        contract::roundtrip::render(&outcome, false)
    );
}

fn a_round_trip_justification_that_covers_no_difference_or_names_a_missing_frame_fails() {
    let dir = tempfile::tempdir().unwrap();
    let src = root();
    // a copy of the pieces the round trip reads, with one extra entry
    let mut dirs = vec!["scenarios".to_string()];
    for agent in ["claude-code", "claude-agent-acp"] {
        for e in std::fs::read_dir(src.join("recordings").join(agent)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                dirs.push(format!(
                    "recordings/{agent}/{}",
                    e.file_name().to_string_lossy()
                ));
            }
        }
    }
    for sub in &dirs {
        let to = dir.path().join(sub);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                let store = blobs::BlobStore::at(dir.path().join("recordings/blobs"));
                blobs::copy_recording(&e.path(), &to.join(e.file_name()), &store).unwrap();
            }
        }
    }
    std::fs::create_dir_all(dir.path().join("contracts")).unwrap();
    let justified = std::fs::read_to_string(src.join(contract::roundtrip::JUSTIFIED_PATH)).unwrap();
    let stale = "\n[[difference]]\nagent = \"claude-agent-acp\"\nscenario = \"text-only\"\nkey = \"sequence\"\nside = \"adapter\"\nwhy = \"never differs\"\nevidence = [\"claude-agent-acp/0.23.1/text-only.jsonl#1\"]\n";
    let path = dir.path().join(contract::roundtrip::JUSTIFIED_PATH);
    std::fs::write(&path, format!("{justified}{stale}")).unwrap();
    let outcome = acp_harness::cli::contract::roundtrip_outcome(&Corpus::at(dir.path())).unwrap();
    assert!(!outcome.holds());
    assert_eq!(outcome.unjustified(), 0);
    assert_eq!(outcome.stale.len(), 1);
    assert_eq!(outcome.stale[0].scenario, "text-only");
    let missing = stale.replace("text-only.jsonl#1", "text-only.jsonl#100000");
    std::fs::write(&path, format!("{justified}{missing}")).unwrap();
    let err = acp_harness::cli::contract::roundtrip_outcome(&Corpus::at(dir.path()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no event with seq 100000"), "{err}");
}

/// docs/contract.md shows the comparison table `acp-harness contract compare`
/// prints for the committed corpus, so the page cannot go stale unnoticed.
fn the_contract_page_shows_the_current_comparison_table() {
    let rows = contract::compare::newest_versions(
        acp_harness::cli::contract::rows(&Corpus::at(root())).unwrap(),
    );
    let want = contract::compare::table(&rows);
    let page = std::fs::read_to_string(root().join("docs/contract.md")).unwrap();
    let start = page
        .find("<!-- generated: ")
        .and_then(|i| page[i..].find('\n').map(|j| i + j + 1))
        .expect("docs/contract.md marks its generated table");
    let end = page
        .find("<!-- end of generated table -->")
        .expect("the table's end marker");
    assert!(
        page[start..end] == want,
        "docs/contract.md's table is stale: replace it with the output of `acp-harness contract compare`"
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(contract: the_committed_contract_is_what_derive_makes_from_the_reference_recordings, every_committed_acp_replay_meets_the_contract, removing_a_required_key_from_a_bridge_line_fails_the_check_naming_line_and_key, a_replay_with_a_broken_line_is_judged_contract_broken, judge_only_tables_are_not_part_of_the_scenario_sha256, a_recording_hashed_with_its_expectations_is_still_made_from_the_scenario, a_justification_without_a_reason_is_an_error_naming_the_file_and_entry, the_bridge_differs_from_claude_code_only_where_justified_or_listed_in_the_contract_page, the_round_trip_through_the_claude_code_adapter_differs_from_claude_only_where_justified, a_round_trip_justification_that_covers_no_difference_or_names_a_missing_frame_fails, the_contract_page_shows_the_current_comparison_table)
}
