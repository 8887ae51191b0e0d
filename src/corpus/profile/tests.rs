use super::*;

#[test]
fn every_committed_profile_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let errors = validate_all(root).unwrap();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Each broken profile and the `file:line: message` its error starts with.
#[test]
fn broken_profiles_are_reported_with_file_and_line() {
    let good =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/grok.toml"))
            .unwrap();
    let line_of_text = |needle: &str| good.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let flavour = line_of_text("flavour = ");
    let versions = line_of_text("versions = ");
    let default = line_of_text("default_version = ");
    let cases = [
        (
            good.replace("flavour = ", "flavour == "),
            format!("broken.toml:{flavour}: "),
        ),
        (
            good.replace("flavour = ", "flavor = "),
            format!("broken.toml:{flavour}: unknown field `flavor`"),
        ),
        (
            good.replacen("versions = \"", "versions = \">>1.0 ", 1),
            format!("broken.toml:{versions}: recipe 1: `versions = "),
        ),
        (
            good.replace("default_version = \"1.0.41\"", "default_version = \"one\""),
            format!("broken.toml:{default}: default_version"),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(PROFILES_DIR)).unwrap();
    let file = dir.path().join(PROFILES_DIR).join("broken.toml");
    for (text, want) in cases {
        std::fs::write(&file, text).unwrap();
        let errors = validate_all(dir.path()).unwrap();
        assert_eq!(errors.len(), 1, "{want}: {errors:?}");
        let got = errors[0].to_string();
        let got = got.rsplit('/').next().unwrap();
        assert!(got.contains(&want), "{got:?} should contain {want:?}");
    }
}

fn codex() -> Profile {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    Profile::find(root, "codex-acp").unwrap()
}

/// (version, npm package, program ends with, eof grace ms, config mentions remote_models)
#[test]
fn codex_profile_chooses_package_and_recipe_by_version() {
    let cases = [
        (
            "0.4.4",
            "@zed-industries/codex-acp",
            "bin/codex-acp",
            10_000,
            false,
        ),
        (
            "0.9.2",
            "@zed-industries/codex-acp",
            "bin/codex-acp",
            10_000,
            true,
        ),
        (
            "0.11.1",
            "@zed-industries/codex-acp",
            "bin/codex-acp",
            10_000,
            false,
        ),
        (
            "0.16.0",
            "@zed-industries/codex-acp",
            "bin/codex-acp",
            500,
            false,
        ),
        (
            "1.0.0",
            "@agentclientprotocol/codex-acp",
            "node",
            10_000,
            false,
        ),
        (
            "2.6.0",
            "@agentclientprotocol/codex-acp",
            "node",
            10_000,
            false,
        ),
    ];
    let p = codex();
    for (version, package, program, grace, remote) in cases {
        let v = semver::Version::parse(version).unwrap();
        let r = p.recipe(&v).unwrap();
        assert_eq!(r.package, package, "{version}");
        assert!(r.program.ends_with(program), "{version}: {}", r.program);
        assert_eq!(
            p.stop_for(r).eof_grace,
            Duration::from_millis(grace),
            "{version}"
        );
        assert_eq!(
            r.files[0].content.contains("remote_models"),
            remote,
            "{version}"
        );
    }
    let err = p
        .recipe(&semver::Version::parse("0.3.1").unwrap())
        .unwrap_err();
    assert!(
        err.to_string().contains("no recipe covers version 0.3.1"),
        "{err}"
    );
}

#[test]
fn launch_fills_placeholders_in_argv_env_and_files() {
    let p = codex();
    let r = p.recipe(&semver::Version::new(2, 6, 0)).unwrap();
    let vars = Vars {
        home: "/h".into(),
        workspace: "/w".into(),
        package_dir: "/pkg".into(),
        packages: BTreeMap::new(),
        model_url: "http://127.0.0.1:9".into(),
        mcp_url: "http://127.0.0.1:8/mcp".into(),
        mcp_token: "t".into(),
        api_key: "k".into(),
        version: "2.6.0".into(),
    };
    let l = Launch::resolve(&p, r, &vars).unwrap();
    assert_eq!(
        l.args,
        ["/pkg/node_modules/@agentclientprotocol/codex-acp/dist/index.js"]
    );
    assert_eq!(l.env["CODEX_HOME"], "/h/.codex");
    assert_eq!(l.env["INITIAL_AGENT_MODE"], "read-only");
    assert_eq!(l.files[0].0, PathBuf::from("/h/.codex/config.toml"));
    assert!(
        l.files[0]
            .1
            .contains("base_url = \"http://127.0.0.1:9/v1\"")
    );
    let config: toml::Table = toml::from_str(&l.files[0].1).unwrap();
    assert_eq!(
        config["model_providers"]["mock"]["wire_api"].as_str(),
        Some("responses")
    );
}

#[test]
fn bad_profiles_name_file_and_line() {
    let cases = [
        (
            "id = \"x\"\ndefault_version = \"1.0.0\"\n[model]\nflavour = \"f\"\ntool_naming = {}\ncolour = 1\n[[recipe]]\nversions = \"*\"\npackage = \"p\"\nprogram = \"x\"\n",
            "p.toml:6: unknown field `colour`",
        ),
        (
            "id = \"x\"\ndefault_version = \"1.0.0\"\n[model]\nflavour = \"f\"\ntool_naming = {}\n[[recipe]]\nversions = \"soon\"\npackage = \"p\"\nprogram = \"x\"\n",
            "p.toml:7: recipe 1: `versions = \"soon\"` is not a semver range",
        ),
    ];
    for (text, expected) in cases {
        let err = Profile::parse(text, Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(expected),
            "{err:?} should start with {expected:?}"
        );
    }
    let err = Vars::default()
        .fill("{nope}", "args")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "unknown placeholder `{nope}` in args");
}

/// Every profile shipped in `profiles/` loads, and its default version
/// has a recipe (adding an agent is adding a file here).
#[test]
fn every_shipped_profile_loads_and_covers_its_default_version() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(PROFILES_DIR);
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let p = Profile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            Some(p.id.as_str()),
            path.file_stem().and_then(|s| s.to_str())
        );
        let v = semver::Version::parse(&p.default_version).unwrap();
        p.recipe(&v).unwrap_or_else(|e| panic!("{e}"));
        seen += 1;
    }
    assert!(
        seen >= 3,
        "expected the codex-acp, gemini-cli and grok profiles"
    );
}

#[test]
fn agent_spec_parses_optional_version() {
    assert_eq!(
        AgentSpec::parse("codex-acp@0.16.0").unwrap().version,
        Some(semver::Version::new(0, 16, 0))
    );
    assert_eq!(AgentSpec::parse("codex-acp").unwrap().version, None);
    assert!(AgentSpec::parse("codex-acp@latest").is_err());
}

const HEAD: &str = "id = \"x\"\ndefault_version = \"1.0.0\"\n";
const MODEL: &str = "[model]\nflavour = \"f\"\ntool_naming = {}\n";

/// A recipe with a Node runtime of its own over the profile's, a Python
/// range, a side package and PyPI overrides, each parsed as written.
#[test]
fn runtimes_side_packages_and_overrides_parse_and_merge() {
    let text = format!(
        "{HEAD}overrides = [\"foo==1.2.3.post1\", \"bar>=2\"]\n{MODEL}[runtime]\nnode = \">=20\"\npython = \">=3.12\"\n\
         [[recipe]]\nversions = \"*\"\npackage = \"adapter\"\nprogram = \"node\"\nargs = [\"{{package_dir}}/a.js\", \"{{package_dir:agent}}/b\"]\n\
         runtime = {{ node = \">=22.19\" }}\noverrides = [\"Foo==1.2.4\"]\n\
         [[recipe.packages]]\nas = \"agent\"\nname = \"@x/agent\"\nversion = \"0.5.1\"\n\
         [[recipe.packages]]\nas = \"tool\"\nname = \"tool\"\nversion = \"1.0.0\"\nsource = \"pypi\"\non_path = false\n"
    );
    let p = Profile::parse(&text, Path::new("p.toml")).unwrap();
    let r = &p.recipes[0];
    assert_eq!(
        r.runtime.over(&p.runtime),
        crate::corpus::profile::Requirements {
            node: Some(">=22.19".into()),
            python: Some(">=3.12".into()),
            ..Default::default()
        }
    );
    assert_eq!(p.overrides_for(r), ["bar>=2", "Foo==1.2.4"]);
    assert_eq!(
        r.packages
            .iter()
            .map(|s| (s.alias.as_str(), s.name.as_str(), s.source, s.on_path))
            .collect::<Vec<_>>(),
        [
            ("agent", "@x/agent", Source::Npm, true),
            ("tool", "tool", Source::Pypi, false)
        ]
    );
    let vars = Vars {
        package_dir: "/main".into(),
        packages: [("agent".to_string(), "/side".to_string())].into(),
        ..Vars::default()
    };
    let l = Launch::resolve(&p, r, &vars).unwrap();
    assert_eq!(l.args, ["/main/a.js", "/side/b"]);
    let err = vars.fill("{package_dir:nope}", "args").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown placeholder `{package_dir:nope}` in args"
    );
}

/// (the profile's tail after its model section, what its error says; the
/// case naming `{recipe}` alone has a bad top-level override)
#[test]
fn bad_runtimes_side_packages_and_overrides_are_named() {
    let recipe = "[[recipe]]\nversions = \"*\"\nprogram = \"x\"\n";
    let cases = [
        (
            format!("[runtime]\nnode = \"soon\"\n{recipe}"),
            "p.toml:7: [runtime] node = \"soon\" is not a semver range",
        ),
        (
            format!("[runtime]\nruby = \"3\"\n{recipe}"),
            "unknown field `ruby`",
        ),
        (
            recipe.to_string(),
            "p.toml:3: override \"foo\" is not `name==version`",
        ),
        (
            format!("{recipe}runtime = {{ python = \"three\" }}\n"),
            "p.toml: recipe 1: runtime python = \"three\" is not a semver range",
        ),
        (
            format!("{recipe}[[recipe.packages]]\nas = \"a\"\nname = \"n\"\nversion = \"^1\"\n"),
            "p.toml: recipe 1: package `n`: `version = \"^1\"` is not an exact version",
        ),
        (
            format!(
                "{recipe}[[recipe.packages]]\nas = \"a:b\"\nname = \"n\"\nversion = \"1.0.0\"\n"
            ),
            "p.toml: recipe 1: package `n`: `as = \"a:b\"` must be letters",
        ),
        (
            format!(
                "{recipe}[[recipe.packages]]\nas = \"a\"\nname = \"n\"\nversion = \"1.0.0\"\n[[recipe.packages]]\nas = \"a\"\nname = \"m\"\nversion = \"1.0.0\"\n"
            ),
            "p.toml: recipe 1: two packages are `as = \"a\"`",
        ),
        (
            format!("{recipe}package = \"old\"\nrenamed = {{ to = \"new\", from = \"soon\" }}\n"),
            "p.toml: recipe 1: `renamed.from = \"soon\"` is not a version",
        ),
        (
            format!("{recipe}package = \"old\"\nrenamed = {{ to = \"old\", from = \"1.0.0\" }}\n"),
            "p.toml: recipe 1: `renamed.to = \"old\"` must name another package",
        ),
        (
            format!("{recipe}package = \"old\"\nrenamed = {{ to = \"new\" }}\n"),
            "missing field `from`",
        ),
    ];
    for (tail, want) in cases {
        let top = if tail == recipe {
            "overrides = [\"foo\"]\n"
        } else {
            ""
        };
        let err = Profile::parse(&format!("{HEAD}{top}{MODEL}{tail}"), Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err:?} should contain {want:?}");
    }
}

#[test]
fn recipe_files_land_inside_home_or_workspace_or_are_refused() {
    let vars = Vars {
        home: "/run/home".into(),
        workspace: "/run/workspace".into(),
        ..Vars::default()
    };
    let cases: &[(&str, Option<&str>)] = &[
        (
            "{home}/.codex/config.toml",
            Some("/run/home/.codex/config.toml"),
        ),
        ("{home}/./a/../b.json", Some("/run/home/b.json")),
        ("{workspace}/.agent/x", Some("/run/workspace/.agent/x")),
        ("{home}/../../../../x", None),
        ("{home}/../workspace2/x", None),
        ("{home}", None),
        ("/etc/x", None),
        ("relative/x", None),
    ];
    for (path, want) in cases {
        let text = format!(
            "id = \"f\"\ndefault_version = \"1.0.0\"\n[model]\nflavour = \"responses\"\ntool_naming = {{ form = \"plain\" }}\n[[recipe]]\nversions = \"*\"\nprogram = \"x\"\n[[recipe.files]]\npath = {path:?}\ncontent = \"c\"\n"
        );
        let p = Profile::parse(&text, Path::new("profiles/f.toml")).unwrap();
        let got = Launch::resolve(&p, &p.recipes[0], &vars);
        match (got, want) {
            (Ok(l), Some(w)) => assert_eq!(l.files[0].0, PathBuf::from(w), "{path}"),
            (Err(e), None) => {
                let e = e.to_string();
                assert!(e.contains("[[recipe.files]] path"), "{path}: {e}");
                assert!(e.contains(path), "{path}: {e}");
            }
            (got, want) => panic!("{path}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn profile_ids_and_agent_names_are_names() {
    let text = "id = \"../../x\"\ndefault_version = \"1.0.0\"\n[model]\nflavour = \"responses\"\ntool_naming = { form = \"plain\" }\n[[recipe]]\nversions = \"*\"\nprogram = \"x\"\n";
    let err = Profile::parse(text, Path::new("profiles/x.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("profiles/x.toml:1: id = \"../../x\" is not a name"),
        "{err}"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for agent in ["../../x", "/etc/passwd", "a/b"] {
        let err = Profile::find(root, agent).unwrap_err().to_string();
        assert!(err.contains("is not a name"), "{agent}: {err}");
        let err = AgentSpec::parse(agent).unwrap_err().to_string();
        assert!(err.contains("is not a name"), "{agent}: {err}");
    }
    let long = format!("codex-acp@1.0.0-{}", "a".repeat(300));
    let err = AgentSpec::parse(&long).unwrap_err().to_string();
    assert!(
        err.contains("--agent version") && err.contains("too long"),
        "{err}"
    );
}

/// `[install] timeout_secs` bounds each install step; absent it is the
/// default, and 0 or more than a day is refused naming the field and line.
#[test]
fn the_install_timeout_is_the_profiles_within_bounds_else_named() {
    let recipe = "[[recipe]]\nversions = \"*\"\nprogram = \"x\"\n";
    let cases: [(&str, Result<u64, &str>); 5] = [
        ("", Ok(DEFAULT_INSTALL_TIMEOUT_SECS)),
        ("[install]\ntimeout_secs = 1\n", Ok(1)),
        ("[install]\ntimeout_secs = 3600\n", Ok(3600)),
        (
            "[install]\ntimeout_secs = 0\n",
            Err("p.toml:7: [install] timeout_secs = 0: must be 1 to 86400 seconds"),
        ),
        (
            "[install]\ntimeout_secs = 86401\n",
            Err("p.toml:7: [install] timeout_secs = 86401: must be 1 to 86400 seconds"),
        ),
    ];
    for (section, want) in cases {
        let text = format!("{HEAD}{MODEL}{section}{recipe}");
        match (Profile::parse(&text, Path::new("p.toml")), want) {
            (Ok(p), Ok(secs)) => assert_eq!(
                p.install.timeout(),
                std::time::Duration::from_secs(secs),
                "{section:?}"
            ),
            (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{section:?}: {e}"),
            (got, _) => panic!("{section:?}: {got:?}"),
        }
    }
}

/// A side package with `into = "main"` goes into the main package's
/// virtualenv, so it and the recipe's package must both come from PyPI.
#[test]
fn a_side_package_into_the_main_virtualenv_needs_pypi_on_both_sides() {
    let side = |source: &str| {
        format!(
            "[[recipe.packages]]\nas = \"dep\"\nname = \"dep\"\nversion = \"1.0.0\"\nsource = \"{source}\"\ninto = \"main\"\n"
        )
    };
    let pypi_recipe = "[[recipe]]\nversions = \"*\"\nsource = \"pypi\"\npackage = \"agent\"\nprogram = \"{install_dir}/bin/agent\"\n";
    let npm_recipe = "[[recipe]]\nversions = \"*\"\npackage = \"agent\"\nprogram = \"node\"\n";
    let bare_recipe = "[[recipe]]\nversions = \"*\"\nsource = \"pypi\"\nprogram = \"x\"\n";
    let needs = "`into = \"main\"` needs it and the recipe's package both from PyPI";
    let cases = [
        (format!("{pypi_recipe}{}", side("pypi")), Ok(true)),
        (format!("{pypi_recipe}{}", side("npm")), Err(needs)),
        (format!("{npm_recipe}{}", side("pypi")), Err(needs)),
        (format!("{bare_recipe}{}", side("pypi")), Err(needs)),
        (
            format!(
                "{pypi_recipe}{}",
                side("pypi").replace("\"main\"", "\"other\"")
            ),
            Err("unknown variant `other`"),
        ),
    ];
    for (tail, want) in cases {
        let text = format!("{HEAD}{MODEL}{tail}");
        match (Profile::parse(&text, Path::new("p.toml")), want) {
            (Ok(p), Ok(into)) => assert_eq!(p.recipes[0].packages[0].into_main(), into, "{tail}"),
            (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{tail}: {e}"),
            (got, _) => panic!("{tail}: {got:?}"),
        }
    }
}

/// (text, filled or the unknown placeholder's error): `{{` and the `}}`
/// that closes it are literal braces; JSON's own braces and `}}` stay as
/// written; an unknown `{name}` is still an error naming it.
#[test]
fn doubled_braces_are_literal_braces_and_unknown_placeholders_still_fail() {
    let vars = Vars {
        home: "/h".into(),
        version: "1.2.3".into(),
        ..Vars::default()
    };
    let cases = [
        ("{home}/x", Ok("/h/x")),
        ("{{home}}", Ok("{home}")),
        ("{{{home}}}", Ok("{/h}")),
        ("{{model}} is {version}", Ok("{model} is 1.2.3")),
        ("{{}}", Ok("{}")),
        (r#"{{"a":{{"b":"{home}"}}}}"#, Ok(r#"{"a":{"b":"/h"}}"#)),
        (r#"{"a":{"b":"{home}"}}"#, Ok(r#"{"a":{"b":"/h"}}"#)),
        ("a } b }} c", Ok("a } b }} c")),
        ("open { only", Ok("open { only")),
        ("{nope}", Err("unknown placeholder `{nope}` in args")),
        ("{{ok}} {nope}", Err("unknown placeholder `{nope}` in args")),
    ];
    for (text, want) in cases {
        let got = vars.fill(text, "args").map_err(|e| e.to_string());
        assert_eq!(got, want.map(String::from).map_err(String::from), "{text}");
    }
}

/// Claude Code moved to per-platform native builds at 2.1.333: the recipe
/// for a version names the package and program of this machine's build
/// (`{npm_platform}` filled in when the profile is read), the one before
/// still the JavaScript package.
#[test]
fn claude_code_follows_its_native_build_for_this_platform() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = Profile::find(root, "claude-code").unwrap();
    let platform = npm_platform();
    let native = format!("@anthropic-ai/claude-code-{platform}");
    // (version, package, the program's tail)
    let cases = [
        (
            "2.1.332",
            "@anthropic-ai/claude-code".to_string(),
            "bin/claude.exe".to_string(),
        ),
        ("2.1.333", native.clone(), format!("{native}/claude")),
        ("2.1.337", native.clone(), format!("{native}/claude")),
    ];
    for (version, package, program) in cases {
        let r = p.recipe(&semver::Version::parse(version).unwrap()).unwrap();
        assert_eq!(r.package, package, "{version}");
        assert!(r.program.ends_with(&program), "{version}: {}", r.program);
        assert!(!r.program.contains(NPM_PLATFORM), "{version}");
    }
    let expected = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x64",
        ("linux", "aarch64") => "linux-arm64",
        ("macos", "aarch64") => "darwin-arm64",
        ("macos", "x86_64") => "darwin-x64",
        ("windows", "x86_64") => "win32-x64",
        _ => return,
    };
    assert_eq!(platform, expected);
}
