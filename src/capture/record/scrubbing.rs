//! The scrubber of one run: every value the run made up or the machine
//! said about itself, each with the placeholder a recording keeps instead.

use std::net::SocketAddr;
use std::path::Path;

use crate::corpus::recording::{REDACTED, Scrubber};
use crate::packages::install::Installed;

use super::DUMMY_API_KEY;

/// The placeholder names a recording uses, with what each stands for.
pub(super) const PLACEHOLDERS: &[(&str, &str)] = &[
    (
        "<workspace>",
        "the session's cwd, a fresh empty directory per run",
    ),
    ("<home>", "the agent's fresh HOME for this run"),
    ("<run>", "the run's temporary directory"),
    (
        "<package-dir>",
        "the install cache directory of package@version",
    ),
    (
        "<mcp-url>",
        "stub-mcp's Streamable HTTP URL (ephemeral port)",
    ),
    ("<mcp-addr>", "stub-mcp's host:port"),
    ("<mcp-token>", "the bearer token stub-mcp required this run"),
    (
        "<model-url>",
        "the scripted model server's base URL (ephemeral port)",
    ),
    ("<model-addr>", "the scripted model server's host:port"),
    (
        "<cache>",
        "the install cache (installs, venvs, runtimes) of the recording machine",
    ),
    (
        "<workspace-relative>",
        "the workspace path relative to / or, with its ../ run, to some other directory",
    ),
    (
        "<run-relative>",
        "the run's temporary directory, relative likewise",
    ),
    (REDACTED, "a secret (Authorization value, API key)"),
    (
        "<workspace-hash>",
        "a hex digest (sha256, sha1, md5, sha256's first 16) of the workspace path, as agents name directories",
    ),
    (
        "<temp-N>",
        "the Nth path under the system temp dir the run created (a socket, a file an agent wrote)",
    ),
    ("<hostname>", "the recording machine's hostname"),
    (
        "<kernel-release>",
        "the recording machine's kernel release (`uname -r`), as agents put it in system prompts",
    ),
    (
        "<workspace-slug>",
        "the workspace path with every non-alphanumeric character as `-` (Claude Code's project directory name)",
    ),
];

/// What one run made up, as the recorder knows it.
pub(super) struct RunValues<'a> {
    pub mcp_token: &'a str,
    pub mcp_url: &'a str,
    pub mcp_addr: SocketAddr,
    /// The scripted model server's URL and address (none when live).
    pub model: Option<(String, SocketAddr)>,
    pub workspace: &'a str,
    pub home: &'a Path,
    /// The run dir, canonical and as created.
    pub run_path: &'a Path,
    pub run_dir: &'a Path,
    pub run_started: std::time::SystemTime,
    pub installed: &'a Installed,
}

/// The run's scrubber, and the placeholders it adds to [`PLACEHOLDERS`]
/// (name, meaning).
pub(super) fn run_scrubber(v: &RunValues<'_>) -> (Scrubber, Vec<(String, String)>) {
    let mut scrubber = Scrubber::new();
    scrubber.secret(DUMMY_API_KEY);
    scrubber.placeholder(v.mcp_token, "<mcp-token>");
    scrubber.placeholder(v.mcp_url, "<mcp-url>");
    scrubber.placeholder(v.mcp_addr.to_string(), "<mcp-addr>");
    if let Some((url, addr)) = &v.model {
        scrubber.placeholder(url, "<model-url>");
        scrubber.placeholder(addr.to_string(), "<model-addr>");
    }
    // agents name directories after the workspace path's slug or hash
    scrubber.workspace(v.workspace);
    // sockets and files the run leaves under the system temp dir (pid- or time-named)
    scrubber.run_temp(temp_roots(), v.run_started);
    scrubber.placeholder(v.home.display().to_string(), "<home>");
    for run in [v.run_path, v.run_dir] {
        scrubber.placeholder(run.display().to_string(), "<run>");
        // an agent's title may keep only the end of a long path
        scrubber.truncated_path(&run.display().to_string(), "<run>");
    }
    if let Some(host) = hostname() {
        scrubber.hostname(&host);
    }
    if let Some(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .filter(|r| kernel_release_is_distinctive(r.trim()))
    {
        scrubber.placeholder(release.trim(), "<kernel-release>");
    }
    let mut run_placeholders = Vec::new();
    for (alias, p) in &v.installed.packages {
        let name = format!("<package-dir:{alias}>");
        scrubber.placeholder(p.dir.display().to_string(), &name);
        run_placeholders.push((name, format!("the install cache directory of {}", p.spec)));
    }
    if let Some(node) = &v.installed.node {
        scrubber.placeholder(node.dir.display().to_string(), "<runtime-dir:node>");
        run_placeholders.push((
            "<runtime-dir:node>".to_string(),
            format!("the install cache directory of Node {}", node.version),
        ));
    }
    if let Some(main) = &v.installed.main {
        scrubber.placeholder(main.display().to_string(), "<package-dir>");
        if let Ok(c) = main.canonicalize() {
            scrubber.placeholder(c.display().to_string(), "<package-dir>");
        }
    }
    let prefixes = python_prefixes(v.installed);
    for prefix in &prefixes {
        python_prefix(&mut scrubber, prefix);
    }
    if !prefixes.is_empty() {
        run_placeholders.push((
            PYTHON_PREFIX.to_string(),
            "the prefix of the Python that made the run's virtualenvs (its standard library and site-packages in tracebacks; of a system prefix such as /usr only its lib/python3* directories)".to_string(),
        ));
    }
    scrubber.relative_forms(&v.run_path.display().to_string(), "<run-relative>");
    // Installs, venvs and runtimes live in the install cache; agents and
    // their stderr name them, also by their canonical spelling.
    if let Some(cache) = crate::packages::package_cache::cache_root()
        .ok()
        .and_then(|a| a.parent().map(Path::to_path_buf))
    {
        if let Ok(c) = cache.canonicalize() {
            scrubber.placeholder(c.display().to_string(), "<cache>");
        }
        scrubber.placeholder(cache.display().to_string(), "<cache>");
    }
    (scrubber, run_placeholders)
}

/// The placeholder of the base interpreter's prefix.
const PYTHON_PREFIX: &str = "<python-prefix>";

/// The prefixes of the Pythons that made the run's virtualenvs (the main
/// package's and PyPI side packages'), once each.
fn python_prefixes(installed: &Installed) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = installed
        .main
        .iter()
        .chain(installed.packages.iter().map(|(_, p)| &p.dir))
        .filter_map(|venv| crate::packages::python::venv_base_prefix(venv))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Scrubs a Python prefix, as given and canonical, to `<python-prefix>`:
/// tracebacks name its standard library and site-packages
/// (`~/.pyenv/versions/3.12.4/lib/python3.12/asyncio/...`). A system
/// prefix (`/`, `/usr`, `/usr/local`) is shared by everything else on the
/// machine, so only its `lib/python3*` directories are.
fn python_prefix(scrubber: &mut Scrubber, prefix: &Path) {
    let mut spellings = vec![prefix.to_path_buf()];
    if let Ok(c) = prefix.canonicalize() {
        spellings.push(c);
    }
    for p in spellings {
        let p = p.display().to_string();
        let p = p.trim_end_matches('/');
        if matches!(p, "" | "/usr" | "/usr/local") {
            scrubber.placeholder(
                format!("{p}/lib/python3"),
                format!("{PYTHON_PREFIX}/lib/python3"),
            );
        } else {
            scrubber.placeholder(p, PYTHON_PREFIX);
        }
    }
}

/// The machine's hostname, as agents read it (`os.hostname()`).
fn hostname() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// A kernel release names this machine only with a build suffix
/// (`6.1.0-18-amd64`); a bare `6.8.0` is as likely a package's version,
/// which must stay.
pub fn kernel_release_is_distinctive(release: &str) -> bool {
    release.len() >= 6
        && release.starts_with(|c: char| c.is_ascii_digit())
        && release.contains(|c: char| c.is_ascii_alphabetic())
}

/// The system temp dir as agents spell it (as given and canonical, and
/// `/tmp`, where agents that ignore `TMPDIR` write).
fn temp_roots() -> Vec<String> {
    let temp = std::env::temp_dir();
    let mut roots = vec![temp.display().to_string(), "/tmp".to_string()];
    if let Ok(c) = temp.canonicalize() {
        roots.push(c.display().to_string());
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (the base prefix in pyvenv.cfg, a traceback line, as recorded): a
    /// version manager's prefix goes whole; of a system prefix only its
    /// Python directories, never the rest of /usr.
    #[test]
    fn python_prefix_paths_in_tracebacks_are_scrubbed() {
        let cases = [
            (
                "/opt/py/versions/3.12.4",
                r#"  File "/opt/py/versions/3.12.4/lib/python3.12/asyncio/base_events.py", line 691"#,
                r#"  File "<python-prefix>/lib/python3.12/asyncio/base_events.py", line 691"#,
            ),
            (
                "/opt/py/versions/3.12.4",
                "/opt/py/versions/3.12.4/lib/python3.12/site-packages/pip/__init__.py",
                "<python-prefix>/lib/python3.12/site-packages/pip/__init__.py",
            ),
            (
                "/usr",
                r#"  File "/usr/lib/python3.12/json/decoder.py", line 353, in raw_decode"#,
                r#"  File "<python-prefix>/lib/python3.12/json/decoder.py", line 353, in raw_decode"#,
            ),
            (
                "/usr",
                "/usr/lib/python3/dist-packages/yaml/__init__.py via /usr/bin/env",
                "<python-prefix>/lib/python3/dist-packages/yaml/__init__.py via /usr/bin/env",
            ),
            (
                "/usr/local",
                "/usr/local/lib/python3.13/traceback.py and /usr/local/bin/node",
                "<python-prefix>/lib/python3.13/traceback.py and /usr/local/bin/node",
            ),
        ];
        for (prefix, line, want) in cases {
            let venv = tempfile::tempdir().unwrap();
            std::fs::write(
                venv.path().join("pyvenv.cfg"),
                format!("home = {prefix}/bin\nversion = 3.12.4\n"),
            )
            .unwrap();
            let installed = Installed {
                main: Some(venv.path().to_path_buf()),
                ..Installed::default()
            };
            let prefixes = python_prefixes(&installed);
            assert_eq!(prefixes, [std::path::PathBuf::from(prefix)]);
            let mut scrubber = Scrubber::new();
            python_prefix(&mut scrubber, &prefixes[0]);
            assert_eq!(scrubber.scrub(line), want, "{prefix}");
        }
        assert!(python_prefixes(&Installed::default()).is_empty());
    }

    #[test]
    fn a_kernel_release_is_scrubbed_only_with_a_build_suffix() {
        for (release, scrubbed) in [
            ("6.18.44-fc-v1272", true),
            ("6.1.0-18-amd64", true),
            ("5.15.0-91-generic", true),
            ("6.8.0", false),
            ("6.8", false),
            ("", false),
            ("linux", false),
        ] {
            assert_eq!(
                super::kernel_release_is_distinctive(release),
                scrubbed,
                "{release}"
            );
        }
    }
}
