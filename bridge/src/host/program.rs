//! Which file the agent's program names. A program written as a relative
//! path means relative to where the bridge was started (not `--cwd`, and
//! not searched for). On Windows a bare name is looked up in `PATH` with
//! each extension of `PATHEXT`, as a Windows shell does, so npm's `.cmd`
//! shims (`gemini` is `gemini.cmd`) start; std alone only tries `.exe`, and
//! std still starts the `.cmd` it is given through `cmd.exe` with its
//! arguments quoted safely.

/// Extensions tried when `PATHEXT` is unset.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// Whether `program` is a relative path with a directory part (`tools/agent`,
/// `.\agent.cmd`), which is resolved against the starting directory.
pub fn is_relative_path(program: &str, windows: bool) -> bool {
    if windows {
        let bytes = program.as_bytes();
        let has_dir = program.contains(['/', '\\']);
        let rooted = bytes.first().is_some_and(|b| matches!(b, b'/' | b'\\'));
        let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
        has_dir && !rooted && !drive
    } else {
        program.contains('/') && !program.starts_with('/')
    }
}

/// Resolves `program` the Windows way: a relative path against `start_dir`,
/// a bare name in each `PATH` directory in order; without an extension, with
/// each `PATHEXT` extension appended. `None` when
/// nothing matches (the caller starts it as written and reports the error).
pub fn resolve_windows(
    program: &str,
    start_dir: &str,
    path: &str,
    pathext: Option<&str>,
    is_file: impl Fn(&str) -> bool,
) -> Option<String> {
    let pathext = pathext
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT);
    let exts: Vec<&str> = pathext
        .split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    // A name with an extension is tried as written, one without only with
    // each of PATHEXT's (npm puts a POSIX shell script beside each `.cmd`).
    let candidates = |base: &str| {
        let name = base.rsplit(['\\', '/']).next().unwrap_or(base);
        if name.contains('.') {
            vec![base.to_string()]
        } else {
            exts.iter()
                .map(|e| format!("{base}{}", e.to_ascii_lowercase()))
                .collect()
        }
    };
    let join = |dir: &str, name: &str| {
        let dir = dir.trim().trim_matches('"');
        if dir.ends_with(['\\', '/']) {
            format!("{dir}{name}")
        } else {
            format!("{dir}\\{name}")
        }
    };
    let has_dir = program.contains(['/', '\\']) || program.get(1..2) == Some(":");
    if has_dir {
        // cmd.exe, which runs a `.cmd`, reads a `/` in its path as a switch
        let program = program.replace('/', "\\");
        let base = if is_relative_path(&program, true) {
            join(start_dir, &program)
        } else {
            program
        };
        return candidates(&base).into_iter().find(|c| is_file(c));
    }
    path.split(';')
        .filter(|d| !d.trim().is_empty())
        .flat_map(|dir| candidates(&join(dir, program)))
        .find(|c| is_file(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str =
        r#"C:\Windows\system32;"C:\Program Files\nodejs";C:\Users\me\AppData\Roaming\npm\"#;
    const FILES: &[&str] = &[
        r"C:\Windows\system32\cmd.exe",
        r"C:\Users\me\AppData\Roaming\npm\gemini.cmd",
        r"C:\Users\me\AppData\Roaming\npm\gemini",
        r"C:\Program Files\nodejs\node.exe",
        r"C:\Program Files\nodejs\npx.cmd",
        r"C:\work\tools\agent.cmd",
        r"Z:\tools\agent.exe",
    ];

    /// A file system that, as Windows', ignores case.
    fn is_file(p: &str) -> bool {
        FILES.iter().any(|f| f.eq_ignore_ascii_case(p))
    }

    fn resolve(program: &str) -> Option<String> {
        resolve_windows(
            program,
            r"C:\work",
            PATH,
            Some(".COM;.EXE;.BAT;.CMD"),
            is_file,
        )
    }

    #[test]
    fn a_bare_name_is_found_in_path_with_pathext() {
        let cases: &[(&str, Option<&str>)] = &[
            // npm installs a shell script beside the .cmd: the .cmd is what starts
            (
                "gemini",
                Some(r"C:\Users\me\AppData\Roaming\npm\gemini.cmd"),
            ),
            ("node", Some(r"C:\Program Files\nodejs\node.exe")),
            ("npx.cmd", Some(r"C:\Program Files\nodejs\npx.cmd")),
            ("cmd", Some(r"C:\Windows\system32\cmd.exe")),
            ("codex-acp", None),
        ];
        for (program, want) in cases {
            assert_eq!(resolve(program).as_deref(), *want, "{program}");
        }
    }

    #[test]
    fn a_path_is_resolved_against_the_start_directory_not_searched() {
        let cases: &[(&str, Option<&str>)] = &[
            (r"tools\agent", Some(r"C:\work\tools\agent.cmd")),
            (r".\tools\agent.cmd", None),
            ("tools/agent.cmd", Some(r"C:\work\tools\agent.cmd")),
            ("z:/tools/agent", Some(r"z:\tools\agent.exe")),
            (r"Z:\tools\agent.exe", Some(r"Z:\tools\agent.exe")),
            (r"Z:\tools\agent", Some(r"Z:\tools\agent.exe")),
            (r"Z:\tools\gemini", None),
        ];
        for (program, want) in cases {
            assert_eq!(resolve(program).as_deref(), *want, "{program}");
        }
    }

    #[test]
    fn pathext_defaults_when_unset() {
        let found = resolve_windows("gemini", r"C:\", PATH, None, is_file);
        assert_eq!(
            found.as_deref(),
            Some(r"C:\Users\me\AppData\Roaming\npm\gemini.cmd")
        );
    }

    #[test]
    fn relative_paths_are_told_apart_on_both_platforms() {
        let cases = [
            (r"tools\agent.cmd", true, true),
            (r".\agent.cmd", true, true),
            (r"C:\agent.cmd", true, false),
            (r"c:/agent.cmd", true, false),
            (r"\\?\C:\agent.cmd", true, false),
            (r"\\server\share\a.cmd", true, false),
            ("agent", true, false),
            ("tools/agent", false, true),
            ("/usr/bin/agent", false, false),
            ("agent", false, false),
        ];
        for (program, windows, want) in cases {
            assert_eq!(
                is_relative_path(program, windows),
                want,
                "{program} windows={windows}"
            );
        }
    }
}
