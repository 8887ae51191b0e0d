//! The session's workspace roots beside `cwd`: `--add-dir` and the panel
//! `initialize`'s `additionalDirectories`, passed on as ACP's
//! `additionalDirectories` when the agent advertises it, and whether they
//! were (the `additional_directories_applied` Claude answers).

use crate::acp::client;

#[derive(Debug, Default)]
pub(super) struct Directories {
    /// The panel's, absolute, in the order asked.
    asked: Vec<String>,
    /// What went to the agent's `session/new` or `session/load`.
    sent: Vec<String>,
}

impl Directories {
    /// Takes the panel's directories (a relative one is against `cwd`, as
    /// ACP wants every root absolute).
    pub fn asked(&mut self, cwd: &str, directories: &[String]) {
        for dir in directories.iter().map(|d| absolute(cwd, d)) {
            if !self.asked.contains(&dir) {
                self.asked.push(dir);
            }
        }
    }

    /// Adds the roots to a `session/new` or `session/load` request: the
    /// launch's, then the panel's, each once; none when the agent does not
    /// take them. Returns a note when there were roots it could not pass.
    pub fn add_to(
        &mut self,
        setup: &mut client::SessionSetup,
        launch: &[String],
        agent: &client::AgentCapabilities,
    ) -> Option<String> {
        let mut roots: Vec<String> = Vec::new();
        for dir in launch.iter().chain(&self.asked) {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        if roots.is_empty() {
            return None;
        }
        if !agent.additional_directories {
            return Some(format!(
                "the agent does not advertise sessionCapabilities.additionalDirectories: \
                 {} not passed",
                roots.join(", ")
            ));
        }
        self.sent = roots.clone();
        setup.additional_directories = Some(roots);
        None
    }

    /// Whether each of `directories` went to the agent.
    pub fn were_sent(&self, cwd: &str, directories: &[String]) -> bool {
        directories
            .iter()
            .all(|d| self.sent.contains(&absolute(cwd, d)))
    }
}

/// `dir` against `cwd`, by the text alone: the core's output never depends
/// on the platform it runs on, so a relative root is joined with the
/// separator `cwd` itself uses (`\\` for a Windows cwd, else `/`).
fn absolute(cwd: &str, dir: &str) -> String {
    let bytes = dir.as_bytes();
    let drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    if drive || dir.starts_with(['/', '\\']) {
        return dir.to_string();
    }
    let separator = if cwd.contains('\\') && !cwd.contains('/') {
        '\\'
    } else {
        '/'
    };
    format!("{}{separator}{dir}", cwd.trim_end_matches(['/', '\\']))
}

#[cfg(test)]
mod tests {
    use super::absolute;

    #[test]
    fn a_relative_root_joins_cwd_with_its_own_separator_and_an_absolute_one_stays() {
        for (cwd, dir, want) in [
            ("/project", "rel/pkg", "/project/rel/pkg"),
            ("/project/", "rel", "/project/rel"),
            ("/", "rel", "/rel"),
            ("/project", "/abs", "/abs"),
            (
                r"C:\Users\me\Game",
                "Packages",
                r"C:\Users\me\Game\Packages",
            ),
            (r"C:\Users\me\Game", r"D:\lib", r"D:\lib"),
            (r"C:\Users\me\Game", "D:/lib", "D:/lib"),
            (r"C:\Users\me\Game", r"\\server\share", r"\\server\share"),
        ] {
            assert_eq!(absolute(cwd, dir), want, "{cwd} + {dir}");
        }
    }
}
