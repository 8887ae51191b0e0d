use super::*;

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn profiles() -> Vec<Profile> {
    crate::packages::outdated::agents(root(), &[])
        .unwrap()
        .iter()
        .map(|a| Profile::find(root(), a).unwrap())
        .collect()
}

/// The fixture is the official format, and the distribution kinds the
/// vendored schema names are the ones this module reads (a new kind in an
/// updated schema fails here).
#[test]
fn the_fixture_reads_and_the_schema_names_exactly_the_distribution_kinds_read() {
    let (index, _) = fixture();
    assert_eq!(index.version, "1.0.0");
    let ids: Vec<&str> = index.agents.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "claude-acp",
            "cline",
            "codex-acp",
            "fast-agent",
            "gemini",
            "kimi",
            "opencode",
            "qwen-code"
        ]
    );
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/agent-registry/agent.schema.json"))
            .unwrap(),
    )
    .unwrap();
    let kinds: Vec<&str> = schema["properties"]["distribution"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(kinds, DISTRIBUTION_KINDS);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(
        required,
        ["id", "name", "version", "description", "distribution"]
    );
}

/// (spec, name, version) for npm and PyPI specs as registry entries write them.
#[test]
fn package_specs_split_into_name_and_version() {
    let npm = [
        (
            "@agentclientprotocol/claude-agent-acp@0.85.1",
            "@agentclientprotocol/claude-agent-acp",
            Some("0.85.1"),
        ),
        ("@google/gemini-cli", "@google/gemini-cli", None),
        ("cline@3.0.4", "cline", Some("3.0.4")),
        ("cline", "cline", None),
    ];
    for (spec, name, version) in npm {
        assert_eq!(split_npm_spec(spec), (name, version), "{spec}");
    }
    let pypi = [
        ("fast-agent-acp==0.10.1", "fast-agent-acp", Some("0.10.1")),
        ("fast-agent-acp@0.10.1", "fast-agent-acp", Some("0.10.1")),
        ("fast-agent-acp>=0.10", "fast-agent-acp", None),
        ("fast-agent-acp", "fast-agent-acp", None),
    ];
    for (spec, name, version) in pypi {
        assert_eq!(split_pypi_spec(spec), (name, version), "{spec}");
    }
}

/// Every fixture agent's starter profile fails to load until its provider
/// placeholders are filled (the error names the `[model]` field), then
/// loads, and its recipe for the registry's version launches what the
/// registry does: the comparison with its own entry finds nothing but the
/// binary-only note.
#[test]
fn starter_profiles_parse_once_their_placeholders_are_filled() {
    let (index, from) = fixture();
    for entry in &index.agents {
        let text = starter_profile(entry, &from);
        let path = Path::new("starter.toml");
        let err = Profile::parse(&text, path).unwrap_err().to_string();
        assert!(err.contains("flavour"), "{}: {err}", entry.id);
        let filled = fill_placeholders(&text);
        let profile =
            Profile::parse(&filled, path).unwrap_or_else(|e| panic!("{}: {e}\n{filled}", entry.id));
        assert_eq!(profile.id, entry.id);
        let version = semver::Version::parse(&entry.version).unwrap();
        let recipe = profile.recipe(&version).unwrap();
        let c = compare(&profile, entry, None);
        assert!(c.newer_than_recorded, "{}", entry.id);
        match entry.package() {
            Some(p) => {
                assert_eq!(recipe.package_key(), p.key(), "{}", entry.id);
                assert_eq!(recipe.args, p.args, "{}", entry.id);
                assert_eq!(recipe.env, p.env, "{}", entry.id);
                assert!(c.mismatches.is_empty(), "{}: {:?}", entry.id, c.mismatches);
            }
            None => {
                assert_eq!(recipe.package, "", "{}", entry.id);
                assert!(text.contains("not installable from a package"), "{text}");
                assert_eq!(recipe.program, "./kimi");
                assert_eq!(recipe.args, ["acp"]);
                assert_eq!(c.mismatches.len(), 1, "{:?}", c.mismatches);
            }
        }
    }
}

/// (registry id, the profile here that runs it): by package (also across a
/// declared rename), else by id.
#[test]
fn registry_agents_are_matched_to_profiles_by_package_then_id() {
    let (index, _) = fixture();
    let profiles = profiles();
    let cases = [
        ("claude-acp", Some("claude-agent-acp")),
        ("cline", Some("cline")),
        ("codex-acp", Some("codex-acp")),
        ("fast-agent", None),
        ("gemini", Some("gemini-cli")),
        ("kimi", None),
        ("opencode", Some("opencode")),
        ("qwen-code", Some("qwen-code")),
    ];
    for (id, want) in cases {
        let entry = index.agent(id, "fixture").unwrap();
        let got = profile_of(&profiles, entry).map(|p| p.id.as_str());
        assert_eq!(got, want, "{id}");
    }
}

/// (profile, its newest recorded version, the registry newer, the
/// mismatches' texts): the committed profiles against the fixture.
#[test]
fn the_registry_comparison_names_a_newer_version_and_launch_differences() {
    let (index, _) = fixture();
    let cases: [(&str, &str, bool, &[&str]); 6] = [
        ("claude-agent-acp", "0.23.1", true, &[]),
        ("cline", "3.0.65", false, &[]),
        ("codex-acp", "2.6.0", false, &[]),
        ("gemini-cli", "0.61.0", false, &[]),
        (
            "opencode",
            "1.18.33",
            true,
            &[
                "the registry installs @opencode/cli 2.0.23; the recipe for 2.0.23 installs opencode-ai",
            ],
        ),
        (
            "qwen-code",
            "0.24.4",
            false,
            &[
                "the registry starts 0.21.14 with --acp --experimental-skills; the recipe for 0.21.14 passes --acp --auth-type openai",
            ],
        ),
    ];
    for (agent, recorded, newer, mismatches) in cases {
        let profile = Profile::find(root(), agent).unwrap();
        let entry = entry_of(&index, &profile).unwrap();
        let c = compare(
            &profile,
            entry,
            Some(&semver::Version::parse(recorded).unwrap()),
        );
        assert_eq!(c.newer_than_recorded, newer, "{agent}");
        assert_eq!(
            c.mismatches.len(),
            mismatches.len(),
            "{agent}: {:?}",
            c.mismatches
        );
        for (got, want) in c.mismatches.iter().zip(mismatches) {
            assert!(
                got.starts_with(want),
                "{agent}: {got:?} should start {want:?}"
            );
        }
    }
}

/// Bad input names where: a file that is not there, JSON that is not an
/// index (line and column), an id the registry does not list (with the ones it does).
#[test]
fn bad_registry_input_is_named_with_where() {
    let err = load("/nonexistent/registry.json").unwrap_err().to_string();
    assert!(err.starts_with("/nonexistent/registry.json: "), "{err}");
    let err = parse(
        "{\n  \"version\": \"1.0.0\",\n  \"agents\": [{\"id\": 3}]\n}",
        "r.json",
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("r.json:3:"), "{err}");
    let err = parse("{\"version\": \"1.0.0\"}", "r.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `agents`"), "{err}");
    let (index, _) = fixture();
    let err = index.agent("nope", "r.json").unwrap_err().to_string();
    assert_eq!(
        err,
        "no agent `nope` in the registry r.json (it lists: claude-acp, cline, codex-acp, fast-agent, gemini, kimi, opencode, qwen-code)"
    );
}
