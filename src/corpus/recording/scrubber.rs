//! The scrubber: machine-specific values out of every text a recording
//! keeps, before anything is written.

use super::{Http, REDACTED};
use recording_format::scrub::{escape_non_ascii, percent_encode};

/// Replaces machine-specific values (temporary paths, ephemeral URLs, tokens)
/// with placeholders and secrets with [`REDACTED`], in every raw string,
/// consistently, before anything is written.
#[derive(Clone, Debug, Default)]
pub struct Scrubber {
    /// (value, replacement), longest value first so a path is replaced
    /// before any of its prefixes.
    rules: Vec<(String, String)>,
    /// Finds whether any rule's value or temp root occurs at all, in one
    /// pass: most lines (and every base64 image) hold none, and then the
    /// rules, one scan each, are skipped.
    any_rule: Option<aho_corasick::AhoCorasick>,
    /// Paths under the system temp dir that the run created.
    run_temp: Option<RunTemp>,
    /// (hex digest, placeholder): any prefix of 8 or more of its digits that
    /// stands as a token of its own is replaced (`wd_workspace_<12 hex>`).
    digests: Vec<(String, String)>,
    /// (path relative to `/`, its placeholder): with a run of `../` in
    /// front (which depends on the directory it is relative to), the whole
    /// goes, before the absolute rules could take the `/...` part of it.
    relative: Vec<(String, String)>,
    /// (spelling of a path, its placeholder): a tail of it right after an
    /// ellipsis (an agent shortening a long path in a title) goes too.
    truncated: Vec<(String, String)>,
    /// The machine's hostname, and whether it is distinctive enough to be
    /// replaced wherever it stands as a token of its own.
    host: Option<(String, bool)>,
}

/// What the machine's hostname becomes.
pub const HOSTNAME: &str = "<hostname>";

/// How an agent marks a path it shortened at the front (also as a JSON
/// writer may escape the ellipsis character).
const ELLIPSES: [&str; 3] = ["...", "\u{2026}", "\\u2026"];

/// The shortest digest prefix that counts as a trace.
const DIGEST_PREFIX: usize = 8;

/// The placeholder of the `n`th path (from 1) under the system temp dir that
/// a run created: a socket, a file an agent wrote (named by pid or time).
pub fn temp_placeholder(n: usize) -> String {
    format!("<temp-{n}>")
}

/// Finds absolute paths under the system temp dir that did not exist before
/// the run (created or modified since it started) and numbers them by first
/// appearance, so a pid- or time-named path reads the same on every machine.
/// Paths that merely appear in text (an agent's prompt naming `/tmp/x`) exist
/// on no disk, or are older, and are left alone.
#[derive(Clone, Debug)]
struct RunTemp {
    roots: Vec<String>,
    since: std::time::SystemTime,
    /// Seen paths, in order; the placeholder is `<temp-{index+1}>`.
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl RunTemp {
    fn created_by_run(&self, path: &str) -> bool {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= self.since)
    }

    fn scrub(&self, mut out: String) -> String {
        for root in &self.roots {
            let prefix = format!("{root}/");
            let mut from = 0;
            while let Some(at) = out[from..].find(&prefix).map(|i| from + i) {
                let starts_token = at == 0 || path_delimiter(out[..at].chars().next_back());
                let len = out[at..]
                    .find(|c: char| path_delimiter(Some(c)))
                    .unwrap_or(out.len() - at);
                let path = out[at..at + len].trim_end_matches('.').to_string();
                if !starts_token || path.len() <= prefix.len() {
                    from = at + prefix.len();
                    continue;
                }
                let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                let index = match seen.iter().position(|p| *p == path) {
                    Some(i) => Some(i),
                    None if self.created_by_run(&path) => {
                        seen.push(path.clone());
                        Some(seen.len() - 1)
                    }
                    None => None,
                };
                drop(seen);
                match index {
                    Some(i) => {
                        let placeholder = temp_placeholder(i + 1);
                        out.replace_range(at..at + path.len(), &placeholder);
                        from = at + placeholder.len();
                    }
                    None => from = at + path.len(),
                }
            }
        }
        out
    }
}

/// `host` by [`HOSTNAME`] where it stands as a host name (see
/// [`Scrubber::hostname`]).
fn scrub_host(mut out: String, host: &str, anywhere: bool) -> String {
    let glued = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    let mut from = 0;
    while let Some(at) = out[from..].find(host).map(|i| from + i) {
        let end = at + host.len();
        let before = out[..at].chars().next_back();
        let after = out[end..].chars().next();
        let stands = !glued(before)
            && !glued(after)
            && (anywhere
                || (before == Some('"') && out[end..].trim_start_matches('\\').starts_with('"'))
                || (before == Some('\'') && after == Some('\''))
                || before == Some('@')
                || out[..at].to_ascii_lowercase().ends_with("hostname="));
        if stands {
            out.replace_range(at..end, HOSTNAME);
            from = at + HOSTNAME.len();
        } else {
            from = end;
        }
    }
    out
}

/// The spellings of `value` that writers produce, each with the spelling
/// of `placeholder` that reads the same in its place: as is; with `/`
/// escaped as `\/` (once or inside a nested JSON string); with non-ASCII
/// characters as JSON `\uXXXX` escapes (lower or upper case hex, or inside a
/// nested string), as Python's `json` writes; percent-encoded as in a
/// `file://` URL (`/` kept) or a URL component (`/` as `%2F`, as Grok names
/// its session directory after the workspace path).
fn spellings(value: &str, placeholder: &str) -> Vec<(String, String)> {
    let mut bases = vec![value.to_string()];
    if !value.is_ascii() {
        for (prefix, upper) in [("\\u", false), ("\\u", true), ("\\\\u", false)] {
            bases.push(escape_non_ascii(value, prefix, upper));
        }
    }
    let mut out = Vec::new();
    for base in &bases {
        for slash in ["/", "\\/", "\\\\/"] {
            out.push((base.replace('/', slash), placeholder.replace('/', slash)));
        }
    }
    if value.contains('/') {
        out.push((value.replace('/', "%2F"), placeholder.replace('/', "%2F")));
    }
    for upper in [true, false] {
        out.push((percent_encode(value, "/", upper), placeholder.to_string()));
        out.push((
            percent_encode(value, "", upper),
            placeholder.replace('/', "%2F"),
        ));
    }
    out.retain(|(spelling, _)| !spelling.is_empty());
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// Whether `c` ends (or precedes) a path in free text or JSON.
fn path_delimiter(c: Option<char>) -> bool {
    c.is_none_or(|c| c.is_whitespace() || "\"'`\\()[]{}<>,;:=".contains(c))
}

impl Scrubber {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace `value` by `placeholder` everywhere. Empty values are ignored.
    pub fn placeholder(&mut self, value: impl Into<String>, placeholder: impl Into<String>) {
        let value = value.into();
        if value.is_empty() {
            return;
        }
        let placeholder = placeholder.into();
        self.rules.extend(spellings(&value, &placeholder));
        self.rules
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        self.rules.dedup_by(|a, b| a.0 == b.0);
        self.find_any();
    }

    fn find_any(&mut self) {
        let roots = self.run_temp.iter().flat_map(|t| &t.roots);
        let ellipses = if self.truncated.is_empty() {
            &[][..]
        } else {
            &ELLIPSES[..]
        };
        let needles = self
            .rules
            .iter()
            .map(|r| r.0.clone())
            .chain(self.host.iter().map(|h| h.0.clone()))
            .chain(ellipses.iter().map(|e| e.to_string()))
            .chain(roots.map(|r| format!("{r}/")))
            .chain(
                self.digests
                    .iter()
                    .map(|d| d.0[..DIGEST_PREFIX].to_string()),
            );
        // leftmost-first: only then does the search use its SIMD prefilter
        // (about ten times faster than one scan per rule on a base64 image)
        self.any_rule = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(needles)
            .ok();
    }

    /// Replaces the run's workspace path, its slug (every character but
    /// ASCII letters and digits as `-`, as agents name project directories)
    /// and its hex digests by `<workspace>`, `<workspace-slug>` and
    /// `<workspace-hash>`.
    pub fn workspace(&mut self, workspace: &str) {
        self.placeholder(workspace, "<workspace>");
        self.relative_forms(workspace, "<workspace-relative>");
        let slug: String = workspace
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.placeholder(slug, "<workspace-slug>");
        self.hashes_of(workspace, "<workspace-hash>");
    }

    /// Replaces the forms of absolute path `path` relative to `/` (no
    /// leading slash), also behind any run of `../` (relative to some other
    /// directory, such as the recorder's cwd or HOME), by `placeholder`.
    pub fn relative_forms(&mut self, path: &str, placeholder: &str) {
        let rel = path.trim_start_matches('/');
        if rel.is_empty() || rel == path {
            return;
        }
        self.placeholder(rel, placeholder);
        self.relative
            .push((rel.to_string(), placeholder.to_string()));
        let escaped = rel.replace('/', "\\/");
        if escaped != rel {
            self.relative.push((escaped, placeholder.to_string()));
        }
    }

    /// Replaces the hex digests of `value` (sha256, sha1, md5), whole or
    /// any prefix of 8 or more digits standing as a token of its own, as
    /// agents name directories after a hash of the workspace path, by
    /// `placeholder`.
    pub fn hashes_of(&mut self, value: &str, placeholder: &str) {
        use sha2::Digest as _;
        fn hex(bytes: &[u8]) -> String {
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
        let sha256 = hex(&sha2::Sha256::digest(value.as_bytes()));
        let digests = [
            hex(&sha1::Sha1::digest(value.as_bytes())),
            hex(&md5::Md5::digest(value.as_bytes())),
            sha256,
        ];
        for d in digests {
            self.digests.push((d.clone(), placeholder.to_string()));
            self.placeholder(d, placeholder);
        }
    }

    /// Digest prefixes (8+ digits, not glued to other letters or digits)
    /// by their placeholders.
    fn scrub_digests(&self, mut out: String) -> String {
        for (digest, placeholder) in &self.digests {
            let head = &digest[..DIGEST_PREFIX];
            let mut from = 0;
            while let Some(at) = out[from..].find(head).map(|i| from + i) {
                let len = out[at..]
                    .bytes()
                    .zip(digest.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                let glued_before = out[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric());
                let glued_after = out[at + len..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric());
                if glued_before || glued_after {
                    from = at + 1;
                    continue;
                }
                out.replace_range(at..at + len, placeholder);
                from = at + placeholder.len();
            }
        }
        out
    }

    /// `../../tmp/x/workspace` -> `<workspace-relative>` (also spelt `..\/`).
    fn collapse_parent_runs(&self, mut out: String) -> String {
        for (rel, placeholder) in &self.relative {
            let mut from = 0;
            while let Some(at) = out[from..].find(rel.as_str()).map(|i| from + i) {
                let mut start = at;
                while let Some(up) = ["../", "..\\/"]
                    .iter()
                    .find(|u| out[..start].ends_with(**u))
                {
                    start -= up.len();
                }
                if start == at {
                    from = at + rel.len();
                    continue;
                }
                out.replace_range(start..at + rel.len(), placeholder);
                from = start + placeholder.len();
            }
        }
        out
    }

    /// Also replaces absolute paths under `temp_roots` (the system temp dir)
    /// created since `since` by numbered [`temp_placeholder`]s.
    pub fn run_temp(&mut self, temp_roots: Vec<String>, since: std::time::SystemTime) {
        let mut roots: Vec<String> = temp_roots
            .into_iter()
            .map(|r| r.trim_end_matches('/').to_string())
            .filter(|r| !r.is_empty())
            .collect();
        roots.sort();
        roots.dedup();
        self.run_temp = Some(RunTemp {
            roots,
            since,
            seen: Default::default(),
        });
        self.find_any();
    }

    /// Also replaces a tail of `path` (any spelling [`Scrubber::placeholder`]
    /// knows) that follows an ellipsis and reaches into the path (a `/`
    /// follows it) or, at 4 characters or more, ends a token, by
    /// `placeholder`: agents shorten long paths in titles from the front.
    pub fn truncated_path(&mut self, path: &str, placeholder: &str) {
        self.truncated.extend(spellings(path, placeholder));
        self.truncated
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        self.truncated.dedup();
        self.find_any();
    }

    /// `...rness-run-x1/workspace` -> `...<run>/workspace`.
    fn scrub_truncated(&self, mut out: String) -> String {
        for ellipsis in ELLIPSES {
            let mut from = 0;
            while let Some(at) = out[from..]
                .find(ellipsis)
                .map(|i| from + i + ellipsis.len())
            {
                from = at;
                let rest = &out[at..];
                let found = self.truncated.iter().find_map(|(path, placeholder)| {
                    path.char_indices()
                        .map(|(i, _)| &path[i..])
                        .find(|tail| {
                            rest.starts_with(tail) && {
                                let next = rest[tail.len()..].chars().next();
                                matches!(next, Some('/' | '\\'))
                                    || (tail.chars().count() >= 4 && path_delimiter(next))
                            }
                        })
                        .map(|tail| (tail.len(), placeholder))
                });
                if let Some((len, placeholder)) = found {
                    out.replace_range(at..at + len, placeholder);
                    from = at + placeholder.len();
                }
            }
        }
        out
    }

    /// Also replaces the machine's hostname by [`HOSTNAME`]: where it stands
    /// as a token of its own when it is distinctive (8 characters or more,
    /// or with a digit), and a short one only where it is plainly a host
    /// name (a whole quoted string, after `@`, or `hostname=`), so that a
    /// host called `vm` leaves `node:vm` alone. `localhost` is no trace.
    pub fn hostname(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty() || name.eq_ignore_ascii_case("localhost") {
            return;
        }
        let anywhere = name.len() >= 8 || name.chars().any(|c| c.is_ascii_digit());
        self.host = Some((name.to_string(), anywhere));
        self.find_any();
    }

    /// Replace a secret value by [`REDACTED`].
    pub fn secret(&mut self, value: impl Into<String>) {
        self.placeholder(value, REDACTED);
    }

    pub fn scrub(&self, text: &str) -> String {
        self.scrub_owned(text.to_string())
    }

    /// [`Scrubber::scrub`] of a string it may keep: a line with nothing to
    /// replace is not copied.
    pub fn scrub_owned(&self, mut out: String) -> String {
        // With no rule value and no temp root in the text, the rules and
        // the temp paths change nothing.
        if self.any_rule.as_ref().is_some_and(|a| !a.is_match(&out)) {
            return out;
        }
        if !self.relative.is_empty() {
            out = self.collapse_parent_runs(out);
        }
        for (value, replacement) in &self.rules {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), replacement);
            }
        }
        if !self.digests.is_empty() {
            out = self.scrub_digests(out);
        }
        // after the whole paths: what is left of one is a shortened tail
        if !self.truncated.is_empty() {
            out = self.scrub_truncated(out);
        }
        if let Some((host, anywhere)) = &self.host {
            out = scrub_host(out, host, *anywhere);
        }
        // after the fixed rules: the run's own dirs under temp are <run> already
        match &self.run_temp {
            Some(t) => t.scrub(out),
            None => out,
        }
    }

    /// Scrubs header values and redacts credentials by header name.
    pub fn scrub_http(&self, mut http: Http) -> Http {
        http.path = http.path.map(|p| self.scrub(&p));
        http.headers = http
            .headers
            .into_iter()
            .map(|(name, value)| {
                let lower = name.to_ascii_lowercase();
                let secret = lower == "authorization"
                    || lower == "proxy-authorization"
                    || lower.contains("api-key")
                    || lower.contains("api_key")
                    || lower == "cookie";
                let value = if secret {
                    REDACTED.to_string()
                } else {
                    self.scrub(&value)
                };
                (lower, value)
            })
            .collect();
        http
    }
}
